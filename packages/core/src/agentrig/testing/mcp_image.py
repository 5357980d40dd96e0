"""The test kit's MCP server inside a Docker image: an agent image plus the server, built offline.

A CLI agent under ``--runtime docker`` starts its stdio MCP servers inside the
session's container, so a test of it needs :mod:`agentrig.testing.mcp_server`
there. :func:`ensure_mcp_server_image` builds, over any image with a Python of
the host's minor version (the Debian + Node test image and the agent images
over it have Debian's ``python3``), one layer holding:

- ``/opt/agentrig-test-mcp``: the modules the server imports, copied from the
  host's environment (the official ``mcp`` SDK, its dependencies and
  ``agentrig``), found by starting the server on the host and listing what it
  imported; compiled extensions (``pydantic_core``) work because the host and
  the image share the C library's ABI and Python's minor version;
- ``/usr/local/bin/agentrig-test-mcp-server`` (:data:`LAUNCHER`): the server's
  command, taking the arguments of ``python -m agentrig.testing.mcp_server``.

Nothing is pulled and no ``RUN`` step runs (no network needed). The tag holds a
hash of the base image's id and of the copied files, so an unchanged build is
found and reused; :func:`mcp_image_fixture` is the module-scoped fixture.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import docker

#: The server's command inside the image (on ``PATH``).
LAUNCHER = "agentrig-test-mcp-server"
#: Where the server's modules are, inside the image.
SITE = "/opt/agentrig-test-mcp"
#: The repository of the images built.
REPOSITORY = "agentrig-test/mcp-server"
#: The label every such image carries (value: its base image's id).
LABEL = "agentrig-test.mcp-server-base"

_LAUNCHER_SCRIPT = f"""#!/usr/bin/python3 -I
# The test kit's MCP server (agentrig.testing.mcp_server), with its modules from {SITE}.
import sys
sys.path.insert(0, {SITE!r})
from agentrig.testing.mcp_server import main
sys.exit(main())
"""

# Started on the host with closed input: the stdio server comes up, sees its input end and exits; at exit it
# writes the top-level modules it imported (outside the standard library) and where each is to argv[1]: its
# file, or the directories of a namespace package (opentelemetry: no __init__.py, no __file__), and the
# .dist-info directories of their distributions.
_PROBE = """
import atexit, json, sys, tempfile
def dump():
    found = {}
    for name in list(sys.modules):
        top = name.partition(".")[0]
        module = sys.modules.get(top)
        if top in found or top in sys.stdlib_module_names or module is None:
            continue
        file = getattr(module, "__file__", None)
        places = [file] if file else [p + "/__init__.py" for p in getattr(module, "__path__", [])]
        if places:
            found[top] = places
    # the metadata of their distributions too: some read their own version at import (httpx2)
    import importlib.metadata as metadata
    owners = metadata.packages_distributions()
    for top in list(found):
        for dist_name in owners.get(top, []):
            dist = metadata.distribution(dist_name)
            for record in dist.files or []:
                if record.name == "METADATA":
                    info = str(dist.locate_file(record).parent)
                    found[info.rsplit("/", 1)[-1]] = [info]
    with open(sys.argv[1], "w") as out:
        json.dump(found, out)
atexit.register(dump)
from agentrig.testing.mcp_server import main
main(["--root", tempfile.gettempdir()])
"""


def server_modules(python: str | None = None) -> dict[str, list[Path]]:
    """The top-level modules the stdio server imports, outside the standard library: name -> its package
    directory, module file or (a namespace package) directories. ``RuntimeError`` naming the server's stderr
    when it cannot start."""
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    with tempfile.TemporaryDirectory(prefix="agentrig-mcp-probe-") as scratch:
        listing = Path(scratch) / "modules.json"
        done = subprocess.run(
            [python or sys.executable, "-c", _PROBE, str(listing)],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, cwd=scratch,
        )
        if done.returncode != 0 or not listing.exists():
            raise RuntimeError(f"the MCP test server did not start on the host: {done.stderr.strip()[-500:]}")
        found: dict[str, list[str]] = json.loads(listing.read_text())
    modules: dict[str, list[Path]] = {}
    for name, files in sorted(found.items()):
        paths = [Path(file).resolve() for file in files]
        if any(path.is_relative_to(stdlib) for path in paths):  # pyenv's _sysconfigdata and the like
            continue
        modules[name] = [path.parent if path.name == "__init__.py" else path for path in paths]
    return modules


def _files(modules: dict[str, list[Path]]) -> list[tuple[Path, str]]:
    """Every file to copy, as (host path, path inside :data:`SITE`), in a stable order (the directories of a
    namespace package merged; the first of two files of one name wins)."""
    files: dict[str, Path] = {}
    for name, paths in sorted(modules.items()):
        for path in paths:
            if path.is_dir():
                for found in sorted(path.rglob("*")):
                    if found.is_file():
                        files.setdefault(f"{name}/{found.relative_to(path).as_posix()}", found)
            else:
                files.setdefault(path.name, path)
    return [(host, inside) for inside, host in sorted(files.items())]


def _digest(base_id: str, files: list[tuple[Path, str]]) -> str:
    """What identifies a build: the base image, the launcher and each file's name, size and modification time."""
    digest = hashlib.sha256(f"{base_id}\n{_LAUNCHER_SCRIPT}".encode())
    for host, inside in files:
        info = host.stat()
        digest.update(f"{inside}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def _context(base_image: str, base_id: str, files: list[tuple[Path, str]]) -> io.BytesIO:
    """The build context: the Dockerfile, the launcher and the modules (as a tar archive)."""
    dockerfile = (
        f"FROM {base_image}\nLABEL {LABEL}={base_id}\n"
        f"COPY site {SITE}\nCOPY launcher /usr/local/bin/{LAUNCHER}\n"
    )
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        for name, text, mode in (("Dockerfile", dockerfile, 0o644), ("launcher", _LAUNCHER_SCRIPT, 0o755)):
            member = tarfile.TarInfo(name)
            encoded = text.encode()
            member.size, member.mode = len(encoded), mode
            archive.addfile(member, io.BytesIO(encoded))
        for host, inside in files:
            member = archive.gettarinfo(str(host), arcname=f"site/{inside}")
            member.uid = member.gid = 0
            member.uname = member.gname = "root"
            member.mode = 0o755 if member.mode & 0o111 else 0o644
            with open(host, "rb") as handle:
                archive.addfile(member, handle)
    data.seek(0)
    return data


def ensure_mcp_server_image(client: docker.DockerClient, base_image: str) -> str:
    """The tag of ``base_image`` plus the MCP test server (:data:`LAUNCHER`), built unless it exists."""
    import docker.errors

    base_id = str(client.images.get(base_image).id)
    files = _files(server_modules())
    tag = f"{REPOSITORY}:{_digest(base_id, files)}"
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    client.images.build(fileobj=_context(base_image, base_id, files), custom_context=True, tag=tag, rm=True, pull=False)
    return tag


def stdio_server_in_image(*extra_args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``mcp_servers`` entry starting the server inside the image (over stdio, in the workspace)."""
    entry: dict[str, Any] = {"command": LAUNCHER, "args": list(extra_args)}
    if env:
        entry["env"] = dict(env)
    return entry


def mcp_image_fixture(*, base: str, name: str) -> Any:
    """A module-scoped fixture ``name``: the image of the fixture ``base`` (an agent image) plus the server."""
    import pytest

    @pytest.fixture(name=name, scope="module")
    def image_fixture(request: pytest.FixtureRequest, docker_engine: docker.DockerClient) -> str:
        import time

        started = time.monotonic()
        tag = ensure_mcp_server_image(docker_engine, request.getfixturevalue(base))
        print(f"MCP server image {tag}: ready in {time.monotonic() - started:.1f}s")
        return tag

    return image_fixture
