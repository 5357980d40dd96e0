"""Pytest fixtures for tests that need a Docker engine (the real one, never a mock).

- Tests marked ``@pytest.mark.docker`` need an engine: without one they are
  skipped, except when the environment variable ``CI`` is set, where they
  FAIL (a CI machine without an engine is a broken CI machine).
- ``docker_engine``: a client of the engine, under the same rule.
- ``docker_test_image``: a tiny busybox image built from nothing with
  ``docker import`` (no registry); ``.ci/build-test-image.sh`` builds the same
  image. Its name comes from ``AGENTRIG_TEST_IMAGE`` (default
  ``agentrig-test/busybox:latest``).
- ``node_test_image``: a Debian image with Node.js and npm, the base of
  Node-based agents' images (``claude_code``). It takes a minute to build
  (``.ci/build-node-image.sh``, debootstrap + ``docker import``), so it is
  never built here: missing, it skips the test, or fails it under ``CI``.
  Its name comes from ``AGENTRIG_TEST_NODE_IMAGE`` (default
  ``agentrig-test/node:bookworm``).
- ``debian_test_image``: plain Debian bookworm minbase (no Node.js, no agent CLI: a task image
  CLI agents run in through their bundles), imported by the same script before it adds Node.js;
  ``AGENTRIG_TEST_DEBIAN_IMAGE`` (default ``agentrig-test/debian:bookworm``).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import docker

TEST_IMAGE = "agentrig-test/busybox:latest"
NODE_TEST_IMAGE = "agentrig-test/node:bookworm"
DEBIAN_TEST_IMAGE = "agentrig-test/debian:bookworm"
_engine_error: list[str] = []
_engine_checked: list[bool] = []


def _engine_problem() -> str | None:
    """Why no engine answers (``None`` when one does); checked once per test session."""
    if not _engine_checked:
        _engine_checked.append(True)
        from agentrig.runtime.docker import connect
        from agentrig.runtime.errors import RuntimeSetupError

        try:
            connect().close()
        except RuntimeSetupError as exc:
            _engine_error.append(str(exc))
    return _engine_error[0] if _engine_error else None


def require_docker_engine() -> None:
    """Fail (when ``CI`` is set) or skip the current test if no Docker engine answers."""
    from agentrig.testing.prerequisites import require

    problem = _engine_problem()
    require(None if problem is None else f"no Docker engine: {problem}", "no Docker engine answers")


def require_runsc() -> None:
    """Fail (when ``CI`` is set) or skip the current test unless the Docker engine runs containers under
    gVisor's ``runsc`` (registered as an OCI runtime: see :data:`agentrig.runtime.oci.RUNSC_SETUP`)."""
    from agentrig.runtime.docker import oci_runtime_problem
    from agentrig.testing.prerequisites import require

    require_docker_engine()
    require(oci_runtime_problem("runsc"), "the Docker engine has no gVisor (runsc)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Enforce the engine rule for every test marked ``docker``, and gVisor's for those marked ``runsc``."""
    if item.get_closest_marker("docker") is not None:
        require_docker_engine()
    if item.get_closest_marker("runsc") is not None:
        require_runsc()


@pytest.fixture(scope="session")
def docker_engine() -> docker.DockerClient:
    """A client of the Docker engine (skips, or fails under ``CI``, without one)."""
    require_docker_engine()
    from agentrig.runtime.docker import connect

    return connect()


def _busybox_binary() -> str | None:
    path = os.environ.get("BUSYBOX") or shutil.which("busybox")
    return path if path and os.access(path, os.X_OK) else None


def build_busybox_image(client: docker.DockerClient, tag: str, busybox: str) -> None:
    """Import an image holding only a static ``busybox`` (one symlink per applet) as ``tag``."""
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=True).stdout.split()
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:

        def add_dir(name: str, mode: int = 0o755) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)

        def add_file(name: str, content: bytes, mode: int = 0o644) -> None:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(content), mode
            tar.addfile(info, io.BytesIO(content))

        for name in ("bin", "etc", "workspace", "root", "proc", "dev", "sys"):
            add_dir(name)
        add_dir("tmp", 0o1777)
        add_dir("home", 0o1777)
        with open(busybox, "rb") as handle:
            add_file("bin/busybox", handle.read(), 0o755)
        for applet in applets:
            if applet != "busybox":
                link = tarfile.TarInfo(f"bin/{applet}")
                link.type, link.linkname = tarfile.SYMTYPE, "busybox"
                tar.addfile(link)
        add_file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
        add_file("etc/group", b"root:x:0:\nnogroup:x:65534:\n")
    repository, _, version = tag.rpartition(":")
    client.api.import_image_from_data(
        data.getvalue(),
        repository=repository,
        tag=version,
        changes=["ENV PATH=/bin", "WORKDIR /workspace", 'CMD ["/bin/sh"]'],
    )


@pytest.fixture(scope="session")
def docker_test_image(docker_engine: docker.DockerClient) -> str:
    """The busybox test image's name, built on first use if the engine lacks it."""
    import docker.errors

    tag = os.environ.get("AGENTRIG_TEST_IMAGE", TEST_IMAGE)
    try:
        docker_engine.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    busybox = _busybox_binary()
    if busybox is None:
        message = f"test image '{tag}' is missing and no busybox is installed: run .ci/build-test-image.sh"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    build_busybox_image(docker_engine, tag, busybox)
    return tag


def _built_image(engine: docker.DockerClient, tag: str, what: str, build: str) -> str:
    """``tag`` when the engine has it; else skips (fails under ``CI``) saying how to build it (``build``)."""
    import docker.errors

    try:
        engine.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    message = f"test image '{tag}' ({what}) is missing: build it with {build}"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def node_test_image(docker_engine: docker.DockerClient) -> str:
    """The Debian + Node.js test image's name; skips (fails under ``CI``) with the command to build it."""
    tag = os.environ.get("AGENTRIG_TEST_NODE_IMAGE", NODE_TEST_IMAGE)
    build = f"`apt-get install -y --no-install-recommends debootstrap && .ci/build-node-image.sh {tag}` (about a minute)"
    return _built_image(docker_engine, tag, "Debian with Node.js and npm", build)


@pytest.fixture(scope="session")
def debian_test_image(docker_engine: docker.DockerClient) -> str:
    """The plain Debian test image's name (minbase: no Node.js, no agent CLI), which ``.ci/build-node-image.sh``
    imports before it adds Node.js; skips (fails under ``CI``) with the command to build it."""
    tag = os.environ.get("AGENTRIG_TEST_DEBIAN_IMAGE", DEBIAN_TEST_IMAGE)
    build = "`apt-get install -y --no-install-recommends debootstrap && .ci/build-node-image.sh` (a few minutes)"
    return _built_image(docker_engine, tag, "plain Debian, no Node.js", build)
