"""Image builds with BuildKit, as Docker Compose (and so Harbor) builds a task's image.

The engine's classic builder (what the Docker SDK's ``client.api.build`` drives) refuses
Dockerfiles that Compose builds: several sources copied into a directory without a trailing
``/`` (``COPY a.py b.md .``), ``COPY --chmod``/``--link``, ``RUN --mount``. Compose builds
through the engine's own BuildKit (no ``buildx`` plugin needed), so agentrig hands a build to
``docker compose build`` with a one-service compose file written for it: the same builder, the
same Dockerfile semantics, nothing pulled (``pull`` is never asked, and the caller checks the
base images are present first).

What the engine's built-in BuildKit cannot do offline stays one line: a ``# syntax=`` frontend
image that is not present locally (BuildKit would fetch it from a registry), and the Dockerfile
1.4 syntax (heredocs such as ``RUN <<EOF``, ``COPY --link``), which needs a newer frontend than
some engines carry (Debian bookworm's Docker 20.10 among them).
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import tempfile
from pathlib import Path

from agentrig.runtime.errors import ImageBuildError, ImageNotFoundError

log = logging.getLogger(__name__)

_SYNTAX = re.compile(r"^#\s*syntax\s*=\s*(\S+)\s*$", re.IGNORECASE)
_DIRECTIVE = re.compile(r"^#\s*[a-zA-Z]+\s*=")
_HEREDOC = re.compile(r"^\s*(?:RUN|COPY|ADD)\b[^\n]*<<-?\s*[\"']?[A-Za-z_]", re.IGNORECASE | re.MULTILINE)
_NOISE = re.compile(r"rpc error: code = \w+ desc = |failed to solve with frontend dockerfile\.v0: ")


def syntax_image(dockerfile: str) -> str | None:
    """The frontend image a ``# syntax=`` parser directive asks for (``None`` without one)."""
    for line in dockerfile.splitlines():
        stripped = line.strip()
        match = _SYNTAX.match(stripped)
        if match is not None:
            return match.group(1)
        if not _DIRECTIVE.match(stripped):
            return None  # directives come first, before any other line
    return None


def uses_heredocs(dockerfile: str) -> bool:
    """Whether a ``RUN``, ``COPY`` or ``ADD`` instruction takes a heredoc (``<<EOF``)."""
    return _HEREDOC.search(dockerfile) is not None


def missing_frontend(where: str, image: str) -> ImageNotFoundError:
    """The one-line error for a ``# syntax=`` frontend ``image`` that is not present locally."""
    return ImageNotFoundError(
        f"{where}: its Dockerfile asks for the frontend image '{image}' (# syntax=), which is not present "
        f"locally and agentrig never pulls: load it (`docker load -i FILE`) or remove that line (the "
        "engine's built-in frontend then reads the Dockerfile)"
    )


def compose_build(
    command: list[str],
    *,
    context: Path,
    dockerfile: str,
    tag: str,
    labels: dict[str, str],
    no_cache: bool,
    network: str | None,
    timeout: float,
    where: str,
    env: dict[str, str],
) -> None:
    """Build ``tag`` from ``dockerfile`` (relative to ``context``) with ``command`` (``docker compose``).

    Raises :class:`ImageBuildError` in one line: the failing step and what it printed last, or the time
    limit ``timeout`` passed.
    """
    build: dict[str, object] = {"context": str(context), "dockerfile": dockerfile, "labels": labels}
    if network:
        build["network"] = network
    document = {"services": {"image": {"build": build, "image": tag}}}
    with tempfile.TemporaryDirectory(prefix="agentrig-build-") as scratch:
        file = Path(scratch) / "compose.json"
        file.write_text(json.dumps(document), encoding="utf-8")
        project = "agentrig-build-" + re.sub(r"[^a-z0-9]+", "-", tag.lower()).strip("-")[-40:]
        argv = [*command, "--progress", "plain", "-f", str(file), "-p", project, "build"]
        if no_cache:
            argv.append("--no-cache")
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, errors="replace", timeout=timeout, env=env,
                stdin=subprocess.DEVNULL, cwd=scratch,
            )
        except subprocess.TimeoutExpired:
            raise ImageBuildError(f"{where} took longer than build_timeout_sec ({timeout:g} s)") from None
        except OSError as exc:
            raise ImageBuildError(f"{where} failed: {exc}") from None
    output = done.stdout + "\n" + done.stderr
    for line in output.splitlines():
        log.debug("build %s: %s", tag, line)
    if done.returncode != 0:
        raise ImageBuildError(f"{where} failed: {failure_line(output, dockerfile_text(context, dockerfile))}")


def dockerfile_text(context: Path, dockerfile: str) -> str:
    """The Dockerfile's text ('' when unreadable)."""
    try:
        return (context / dockerfile).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def failure_line(output: str, dockerfile: str) -> str:
    """What BuildKit's plain output says went wrong, in one line: the error, and the step's last output."""
    lines = [" ".join(line.split()) for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("failed to solve", "ERROR", "error")) or "failed to solve:" in line]
    error = _NOISE.sub("", errors[-1] if errors else (lines[-1] if lines else "no output"))
    error = error.removeprefix("failed to solve: ")
    step_output = [line.split(" ", 2)[2] for line in lines if re.match(r"^#\d+ \d+\.\d+ ", line)]
    detail = error[:400]
    if step_output:
        detail += f" (last output: {' | '.join(step_output[-3:])[:300]})"
    if "dockerfile parse error" in error.lower():
        used = "heredocs" if uses_heredocs(dockerfile) else "syntax"
        detail += (
            f" (this engine's built-in Dockerfile frontend predates the {used} the Dockerfile uses, e.g. heredocs"
            " or COPY --link of Dockerfile 1.4: Docker Engine 23.0 or later reads them)"
        )
    return detail

