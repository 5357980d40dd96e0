"""A task's image: its Dockerfile and build context built once, cached by content.

The tag is ``agentrig-task/<task>:<first 16 hex of the build key>``; the image
also carries the full key as a label. The key is a SHA-256 over every file of
the build context (path, executable bit, content), the Dockerfile, and the local
id of every image the Dockerfile builds on (its ``FROM`` lines, with the
Dockerfile's ``ARG`` defaults substituted, and ``COPY --from`` images; not its own
stages): an unchanged task on unchanged bases never builds again, while a changed
task, or a base image rebuilt under the same name (``FROM ubuntu:24.04`` after
``docker build -t ubuntu:24.04``), gets a new tag, as Docker's own layer cache
(what Harbor's ``docker compose build`` relies on) would miss. ``rebuild``
(``agentrig run --rebuild``) builds again without the layer cache, once per
invocation. Builds use the engine's BuildKit through Docker Compose, as Compose and
Harbor build (:mod:`agentrig.runtime.buildkit`; ``COPY a b .``, ``COPY --chmod``,
``RUN --mount``), or the engine's classic builder through the SDK where Compose v2 is
not installed; they never pull (an absent base image is an error naming it), and on
a daemon without a bridge network run ``RUN`` steps on the host network. A failed build raises
:class:`ImageBuildError` in one line with the failing step.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from agentrig.runtime.errors import ImageBuildError, ImageNotFoundError
from agentrig.runtime.images import build_network

if TYPE_CHECKING:
    import docker

log = logging.getLogger(__name__)

#: The variable choosing the builder of task images: ``buildkit`` (default, through Compose v2) or ``classic``.
BUILDER_ENV = "AGENTRIG_IMAGE_BUILDER"
LABEL_BUILD_KEY = "agentrig.task-build-sha256"
LABEL_TASK = "agentrig.task"
LABEL_REBUILD = "agentrig.task-rebuild"
TAG_REPOSITORY = "agentrig-task"
_TAG_CHARS = re.compile(r"[^a-z0-9_.-]+")
_IGNORED = {".git", "__pycache__", ".DS_Store"}
_FROM = re.compile(r"^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$", re.IGNORECASE)
_ARG = re.compile(r"^ARG\s+(.+)$", re.IGNORECASE)
_COPY_FROM = re.compile(r"^(?:COPY|ADD)\s.*?--from=(\S+)", re.IGNORECASE)
_ESCAPE_DIRECTIVE = re.compile(r"^#\s*escape\s*=\s*(\S)\s*$", re.IGNORECASE)
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


class TaskImage(BaseModel):
    """The image a task runs in, and what the runtime needs to know of it."""

    tag: str
    built: bool = Field(description="True when this call built it; False when it was already there.")
    workdir: str = Field(description="The image's working directory (WORKDIR), '/' when it sets none.")
    user: str = Field(default="", description="The image's USER ('' = root).")


def context_hash(context: Path, dockerfile: Path) -> str:
    """SHA-256 over the build context's files (relative path, executable bit, content) and the Dockerfile."""
    digest = hashlib.sha256()
    files: list[Path] = []
    for root, dirs, names in os.walk(context):
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED)
        files.extend(Path(root) / n for n in names if n not in _IGNORED)
    for path in sorted(files, key=lambda p: p.relative_to(context).as_posix()):
        rel = path.relative_to(context).as_posix()
        if path.is_symlink():
            digest.update(f"L {rel} -> {os.readlink(path)}\n".encode())
            continue
        executable = os.access(path, os.X_OK)
        digest.update(f"F {rel} {'x' if executable else '-'} {path.stat().st_size}\n".encode())
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 16), b""):
                digest.update(block)
    digest.update(b"DOCKERFILE\n")
    digest.update(dockerfile.read_bytes())
    return digest.hexdigest()


def task_image_tag(task: str, digest: str) -> str:
    """``agentrig-task/<task>:<hash16>``."""
    name = _TAG_CHARS.sub("-", task.lower()).strip("-.") or "task"
    return f"{TAG_REPOSITORY}/{name[:100]}:{digest[:16]}"


def _describe(client: docker.DockerClient, tag: str, built: bool) -> TaskImage:
    config = client.images.get(tag).attrs.get("Config") or {}
    return TaskImage(tag=tag, built=built, workdir=config.get("WorkingDir") or "/", user=config.get("User") or "")


def describe_image(client: docker.DockerClient, tag: str) -> TaskImage:
    """A prebuilt image (``docker_image``) as a :class:`TaskImage`; it must be present (nothing is pulled)."""
    import docker.errors

    try:
        return _describe(client, tag, False)
    except docker.errors.ImageNotFound:
        raise ImageNotFoundError(
            f"image '{tag}' (docker_image of the task) is not present locally and agentrig never pulls: "
            f"build or load it (`docker build -t {tag} .` / `docker load -i FILE`), then retry"
        ) from None


def _instructions(dockerfile: str) -> list[str]:
    """The Dockerfile's instructions, one string each: comments dropped, continued lines joined."""
    escape = "\\"
    lines = dockerfile.splitlines()
    for line in lines:  # parser directives come first, before any other line
        directive = _ESCAPE_DIRECTIVE.match(line.strip())
        if directive is None:
            break
        escape = directive.group(1)
    instructions: list[str] = []
    current = ""
    for raw in lines:
        line = raw.strip()
        if line.startswith("#") and not current:
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith(escape):
            current += line[: -len(escape)] + " "
            continue
        current += line
        if current.strip():
            instructions.append(current.strip())
        current = ""
    if current.strip():
        instructions.append(current.strip())
    return instructions


def _substitute(text: str, values: dict[str, str]) -> str:
    """``$NAME``, ``${NAME}``, ``${NAME:-default}`` and ``${NAME:+alternative}`` as the builder expands them."""

    def expand(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(4)
        value = values.get(name, "")
        if match.group(2) == "-":
            return value or match.group(3)
        if match.group(2) == "+":
            return match.group(3) if value else ""
        return value

    return _VARIABLE.sub(expand, text)


def _global_args(instruction: str, values: dict[str, str]) -> None:
    """The defaults an ``ARG`` before the first ``FROM`` gives (``ARG A=1 B``): what ``FROM`` lines may use."""
    import shlex

    match = _ARG.match(instruction)
    if match is None:
        return
    try:
        words = shlex.split(match.group(1))
    except ValueError:
        words = match.group(1).split()
    for word in words:
        name, sep, default = word.partition("=")
        if sep:
            values[name] = _substitute(default, values)
        else:
            values.setdefault(name, "")


def base_images(dockerfile: str) -> list[str]:
    """The images a Dockerfile builds on: its ``FROM`` lines' (the global ``ARG`` defaults substituted) and
    those ``COPY --from`` names, not ``scratch`` nor its own stages (by name or index); in order, once each."""
    values: dict[str, str] = {}
    stages: set[str] = set()
    images: list[str] = []
    seen_from = False
    for instruction in _instructions(dockerfile):
        keyword = instruction.split(None, 1)[0].upper()
        if keyword == "ARG" and not seen_from:
            _global_args(instruction, values)
            continue
        match = _FROM.match(instruction) if keyword == "FROM" else None
        if match is not None:
            seen_from = True
            image = _substitute(match.group(1), values)
            if image and image.lower() != "scratch" and image.lower() not in stages and image not in images:
                images.append(image)
            if match.group(2):
                stages.add(match.group(2).lower())
            continue
        copied = _COPY_FROM.match(instruction) if keyword in ("COPY", "ADD") else None
        if copied is not None:
            image = copied.group(1)
            if not image.isdigit() and image.lower() not in stages and "$" not in image and image not in images:
                images.append(image)
    return images


def base_image_ids(client: docker.DockerClient, task: str, dockerfile: Path) -> list[tuple[str, str]]:
    """``(name, local image id)`` of every image the Dockerfile builds on (:func:`base_images`);
    :class:`ImageNotFoundError` naming the first one absent (the classic builder would try a
    registry for it even with ``pull=False``; agentrig never pulls)."""
    import docker.errors

    ids: list[tuple[str, str]] = []
    for image in base_images(dockerfile.read_text(encoding="utf-8", errors="replace")):
        try:
            ids.append((image, str(client.images.get(image).id)))
        except docker.errors.ImageNotFound:
            raise ImageNotFoundError(
                f"base image '{image}' of task '{task}' ({dockerfile}) is not present locally and agentrig never pulls: "
                f"build or load it (`docker build -t {image} .` / `docker load -i FILE`), then retry"
            ) from None
        except docker.errors.APIError as exc:  # a name the engine cannot parse: the build says what is wrong
            log.debug("base image %s of %s not resolved: %s", image, task, exc)
    return ids


def build_key(context_digest: str, bases: list[tuple[str, str]]) -> str:
    """The cache key of a task image: the context's hash and each base image's name and id."""
    digest = hashlib.sha256(f"CONTEXT {context_digest}\n".encode())
    for name, image_id in bases:
        digest.update(f"BASE {name} {image_id}\n".encode())
    return digest.hexdigest()


def build_task_image(
    client: docker.DockerClient,
    *,
    task: str,
    context: Path,
    dockerfile: Path,
    timeout: float = 600.0,
    on_build: Callable[[str], None] | None = None,
    rebuild: str | None = None,
) -> TaskImage:
    """The task's image, built from ``dockerfile`` over ``context`` unless an identical one exists
    (same context, Dockerfile and base images: :func:`build_key`).

    ``rebuild`` (a token of the ``agentrig run --rebuild`` invocation) builds it again without
    the layer cache unless an image built under the same token is there. ``on_build(tag)`` is
    called just before a real build. Raises :class:`ImageBuildError` naming the task and the
    failing step, :class:`ImageNotFoundError` when a base image is missing (nothing is ever pulled).
    """
    import docker.errors

    from agentrig.runtime.images import remove_replaced_image

    context, dockerfile = context.resolve(), dockerfile.resolve()
    digest = build_key(context_hash(context, dockerfile), base_image_ids(client, task, dockerfile))
    tag = task_image_tag(task, digest)
    previous_id: str | None = None
    try:
        existing = client.images.get(tag)
        existing_labels = existing.labels or {}
        previous_id = existing.id
        if existing_labels.get(LABEL_BUILD_KEY) == digest and (
            rebuild is None or existing_labels.get(LABEL_REBUILD) == rebuild
        ):
            return _describe(client, tag, False)
    except docker.errors.ImageNotFound:
        pass
    if on_build is not None:
        on_build(tag)
    try:
        relative = dockerfile.relative_to(context).as_posix()
    except ValueError:
        raise ImageBuildError(f"task '{task}': the Dockerfile {dockerfile} is outside its build context {context}") from None
    where = f"building the image of task '{task}' ({dockerfile})"
    labels = {LABEL_BUILD_KEY: digest, LABEL_TASK: task, **({LABEL_REBUILD: rebuild} if rebuild else {})}
    command = _buildkit_command()
    if command is not None:
        from agentrig.runtime import buildkit
        from agentrig.runtime.compose import build_env
        from agentrig.runtime.images import RequiredImage, missing_images

        frontend = buildkit.syntax_image(dockerfile.read_text(encoding="utf-8", errors="replace"))
        if frontend is not None and missing_images(client, [RequiredImage(image=frontend, named_by="# syntax=")]):
            raise buildkit.missing_frontend(where, frontend)
        buildkit.compose_build(
            command, context=context, dockerfile=relative, tag=tag, labels=labels, no_cache=rebuild is not None,
            network=build_network(client), timeout=timeout, where=where, env=build_env(),
        )
    else:
        _classic_build(client, context=context, dockerfile=relative, tag=tag, labels=labels,
                       no_cache=rebuild is not None, timeout=timeout, where=where)
    if previous_id is not None:
        remove_replaced_image(client, previous_id, tag)
    return _describe(client, tag, True)


def _buildkit_command() -> list[str] | None:
    """``docker compose`` (v2.17+) when it is installed: builds then go through the engine's BuildKit, as
    Compose and Harbor build; ``None``: the engine's classic builder (through the SDK), also when
    ``AGENTRIG_IMAGE_BUILDER=classic`` asks for it."""
    from agentrig.runtime.compose import compose_command
    from agentrig.runtime.errors import RuntimeSetupError

    chosen = os.environ.get(BUILDER_ENV, "").strip().lower()
    if chosen == "classic":
        return None
    if chosen not in ("", "buildkit"):
        raise ImageBuildError(f"{BUILDER_ENV}={chosen!r}: say 'buildkit' (the default where Compose v2 is) or 'classic'")
    try:
        return compose_command()
    except RuntimeSetupError as exc:
        log.debug("task images built with the classic builder: %s", exc)
        return None


def _classic_build(
    client: docker.DockerClient, *, context: Path, dockerfile: str, tag: str, labels: dict[str, str], no_cache: bool,
    timeout: float, where: str,
) -> None:
    """The engine's classic builder through the SDK (no Compose v2 here); :class:`ImageBuildError` in one line."""
    import docker.errors

    last_lines: list[str] = []
    try:
        stream = client.api.build(
            path=str(context),
            dockerfile=dockerfile,
            tag=tag,
            labels=labels,
            rm=True,
            forcerm=True,
            pull=False,
            nocache=no_cache,
            decode=True,
            network_mode=build_network(client),
            timeout=int(timeout),
        )
        for chunk in stream:
            if "error" in chunk:
                detail = " ".join(str(chunk.get("errorDetail", {}).get("message") or chunk["error"]).split())
                tail = " | ".join(last_lines[-3:])
                raise ImageBuildError(f"{where} failed: {detail}" + (f" (last output: {tail})" if tail else ""))
            text = str(chunk.get("stream", "")).strip()
            if text:
                last_lines.append(" ".join(text.split())[:200])
                log.debug("build %s: %s", tag, text)
    except docker.errors.APIError as exc:
        raise ImageBuildError(f"{where} failed: {' '.join(str(exc.explanation or exc).split())}") from None
    except (TimeoutError, OSError) as exc:
        if "timed out" in str(exc).lower():
            raise ImageBuildError(f"{where} took longer than build_timeout_sec ({timeout:g} s)") from None
        raise ImageBuildError(f"{where} failed: {exc}") from None
    except Exception as exc:
        if type(exc).__name__ in ("ReadTimeout", "ReadTimeoutError", "ConnectionError") and "timed out" in str(exc).lower():
            raise ImageBuildError(f"{where} took longer than build_timeout_sec ({timeout:g} s)") from None
        raise
