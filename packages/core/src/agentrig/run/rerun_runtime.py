"""Where ``agentrig replay`` and ``agentrig evaluate`` run a run directory's code.

A run directory read back may come from someone else (``docs/security.md``): ``replay`` runs the
commands its recorded model replies ask for, ``evaluate`` runs its snapshots' code through the
tests. Neither runs them on this machine unsandboxed unless the user says so:

- ``--trust``: the runtime and the options ``run.json`` recorded, as the run had them (``--runtime``,
  ``--image`` and ``-c runtime.KEY=VALUE`` still override);
- ``--runtime NAME`` given: that runtime, with only the options given (``--runtime local`` without
  ``-c runtime.sandbox=bwrap`` is the user's word for "unsandboxed");
- neither: the recorded runtime when it is a sandbox agentrig knows, ``docker`` (with only the
  recorded options that cannot widen the container: limits, working directory, the read-only mounts
  of agentrig's own agent bundles), or ``local`` under
  bubblewrap (``sandbox: bwrap``, no network); when bubblewrap cannot run here, or the run names a
  plugin's runtime, :class:`RerunRuntimeError` says in one line what to pass.

The recorded options that are left out (a host directory bound into the container, the host's network,
another user, host variables passed through) are named in :attr:`RerunRuntime.line`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig.boundary import shorten
from agentrig.run.records import RuntimeRecord

#: Recorded ``docker`` options taken without ``--trust``: none of them widens what the container reaches.
DOCKER_SAFE_OPTIONS = frozenset({"workdir", "mem_limit", "cpus", "pids_limit", "init", "max_output"})


class RerunRuntimeError(ValueError):
    """No sandbox for a run directory's code, and the user did not allow running it without one (one line)."""


class RerunRuntime(BaseModel):
    """The runtime a replay or re-evaluation runs in, decided by :func:`choose_runtime`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    image: str | None = None
    options: dict[str, Any] = {}
    #: Whether the code runs in a sandbox (a container, bubblewrap), not on this machine as the user.
    sandboxed: bool
    #: The one line saying what runs where (printed before anything runs).
    line: str


class RerunRequest(BaseModel):
    """What the user asked for: ``--runtime``, ``--image``, ``-c runtime.KEY=VALUE``, ``--trust``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runtime: str | None = None
    image: str | None = None
    options: dict[str, Any] = {}
    trust: bool = False


def choose_runtime(
    recorded: RuntimeRecord, request: RerunRequest, *, what: str, recorded_image: str | None = None
) -> RerunRuntime:
    """The runtime to run ``what`` (``"replay of RUN (the recorded model's commands, then the tests)"``) in, as
    ``request`` asks (see the module's docstring); ``recorded_image`` is the image the run's sessions ran in
    (default: ``recorded.image``). :class:`RerunRuntimeError` when there is no sandbox and the user did not
    say to run without one."""
    runtime, image, options, trust = request.runtime, request.image, request.options, request.trust
    given = dict(options or {})
    name = runtime or recorded.name
    same = name == recorded.name
    chosen_image = image or ((recorded_image or recorded.image) if same else None)
    left_out: list[str] = []
    if trust:
        merged = {**(recorded.options if same else {}), **given}
    elif same:
        kept = {k: v for k, v in recorded.options.items() if name == "docker" and k in DOCKER_SAFE_OPTIONS}
        bundles = _bundle_mounts(recorded.options.get("mounts")) if name == "docker" else []
        if bundles:
            kept["mounts"] = bundles
        partly = {"mounts"} if bundles and bundles != recorded.options.get("mounts") else set()
        left_out = sorted((set(recorded.options) - set(kept) | partly) - set(given))
        merged = {**kept, **given}
    else:
        merged = given
    if name == "local":
        chosen_image = None
        if runtime is None and not trust and "sandbox" not in given:
            merged["sandbox"] = "bwrap"
            _need_bwrap(what)
    elif name != "docker" and runtime is None and not trust:
        raise RerunRuntimeError(
            f"{what}: the run names runtime '{shorten(name)}', which agentrig cannot tell is a sandbox: pass --runtime docker, "
            f"or --runtime {shorten(name)} (or --trust) to run it there anyway"
        )
    _check_options(name, merged, chosen_image, what)
    sandboxed = name == "docker" or (name == "local" and merged.get("sandbox") == "bwrap")
    return RerunRuntime(
        name=name, image=chosen_image, options=merged, sandboxed=sandboxed,
        line=_line(what, name, chosen_image, merged, sandboxed=sandboxed, left_out=left_out,
                   why="--trust" if trust else ("--runtime local" if runtime else "-c runtime.sandbox=none")),
    )


def _bundle_mounts(mounts: object) -> list[Any]:
    """The recorded mounts that are agentrig's own agent bundles (read-only, from its bundle cache), which a
    replay of a CLI agent run in a task's own image needs; every other recorded mount is left out."""
    import os

    from agentrig.agents.bundles import bundles_dir
    from agentrig.boundary import is_inside

    if not isinstance(mounts, list):
        return []
    root = bundles_dir()
    kept: list[Any] = []
    for mount in mounts:
        source = mount.get("source") if isinstance(mount, dict) else None
        if (isinstance(source, str) and os.path.isabs(source) and mount.get("read_only", True) is True
                and is_inside(root, Path(source))):
            kept.append(mount)
    return kept


def _check_options(name: str, options: dict[str, Any], image: str | None, what: str) -> None:
    """The options checked by the runtime's own model before anything starts (a recorded or given one may be bad)."""
    from agentrig.errors import UnknownPluginError
    from agentrig.runtime.errors import RuntimeSetupError
    from agentrig.runtime.resolve import check_runtime_options

    try:
        check_runtime_options(name, {**options, **({"image": image} if image else {})})
    except UnknownPluginError as exc:
        raise RerunRuntimeError(f"{what}: {exc}") from None
    except RuntimeSetupError as exc:
        if "'image': Field required" not in str(exc):  # a task's format brings its image when the session opens
            raise RerunRuntimeError(f"{what}: {exc}") from None


def _need_bwrap(what: str) -> None:
    from agentrig.runtime.sandbox import bwrap_problem

    problem = bwrap_problem()
    if problem is not None:
        raise RerunRuntimeError(
            f"{what}: no sandbox to run it in ({problem}): pass --runtime docker, or --runtime local (or --trust) to run "
            "it on this machine unsandboxed"
        )


def _line(what: str, name: str, image: str | None, options: dict[str, Any], *, sandboxed: bool, why: str,
          left_out: list[str]) -> str:
    if name == "local" and sandboxed:
        network = options.get("network") or "none"
        where = f"on this machine in a bubblewrap sandbox (the workspace writable, the rest read-only; network: {network})"
    elif name == "local":
        where = f"on this machine WITHOUT a sandbox, with your rights ({why})"
    elif name == "docker":
        details = [f"image {shorten(image)}"] if image else []
        details += [f"network: {shorten(options['network'])}"] if options.get("network") else []
        where = "in a docker container" + (f" ({', '.join(details)})" if details else "")
    else:
        where = f"in runtime '{shorten(name)}' (not known to agentrig as a sandbox)"
    line = f"{what} runs {where}"
    if left_out:
        line += f"; the run's recorded runtime options {', '.join(shorten(k) for k in left_out)} are left out (--trust takes them)"
    return line


__all__ = ["DOCKER_SAFE_OPTIONS", "RerunRequest", "RerunRuntime", "RerunRuntimeError", "choose_runtime"]
