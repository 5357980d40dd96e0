"""Every image a ``--runtime docker`` run needs is checked before anything is made (issue 37): ``--image``, a
Harbor task's ``docker_image``, the base images its Dockerfile and its compose services build on. One line
names each absent image and how to get it without a registry, exit 2, no run directory (nothing is pulled)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.cli.exits import ExitStatus
from agentrig.formats.resolve import get_format, load_problem

ROOT = Path(__file__).resolve().parents[3]
GREETER = ROOT / "examples" / "greeter"
HARBOR = ROOT / "tests" / "fixtures" / "harbor-tasks"

pytestmark = pytest.mark.docker


def _absent() -> str:
    return f"agentrig-test/absent-{uuid.uuid4().hex[:12]}:v1"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.err


def _error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "ImageNotFoundError" not in err
    return lines[0]


def test_an_absent_image_stops_the_run_before_its_directory_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], docker_engine: Any
) -> None:
    image = _absent()
    out = tmp_path / "run"
    status, err = _run(capsys, "run", str(GREETER), "--agent", "oracle", "--runtime", "docker", "--image", image, "-o", str(out))
    assert status == ExitStatus.USAGE
    line = _error_line(err)
    assert f"'{image}' (--image) is not present locally" in line
    assert "docker load -i FILE" in line and f"docker save {image}" in line
    assert not out.exists()


def test_a_present_image_passes_the_check(tmp_path: Path, docker_engine: Any, docker_test_image: str) -> None:
    from agentrig.runtime.images import RequiredImage, check_images_present

    check_images_present([RequiredImage(image=docker_test_image, named_by="--image")])


def test_a_harbor_tasks_docker_image_is_checked_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], docker_engine: Any
) -> None:
    image = _absent()
    task = tmp_path / "greeting"
    shutil.copytree(HARBOR / "greeting", task)
    toml = (task / "task.toml").read_text().replace('"agentrig-test/node:bookworm"', f'"{image}"')
    (task / "task.toml").write_text(toml)
    out = tmp_path / "run"
    status, err = _run(capsys, "run", str(task), "--agent", "oracle", "--runtime", "docker", "-o", str(out), "-q")
    assert status == ExitStatus.USAGE
    assert f"'{image}' (docker_image of task 'greeting') is not present locally" in _error_line(err)
    assert not out.exists()


def test_the_base_images_of_a_tasks_dockerfile_are_checked_and_each_absent_one_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], docker_engine: Any, docker_test_image: str
) -> None:
    first, second = _absent(), _absent()
    task = tmp_path / "word-count"
    shutil.copytree(HARBOR / "word-count", task)
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(
        f"FROM {first} AS one\nFROM {docker_test_image}\nCOPY --from={second} /x /x\n"
        + dockerfile.read_text().split("\n", 1)[1]
    )
    problem = load_problem(task)
    names = [item.image for item in get_format(problem.format).required_images(problem)]
    assert names == [first, docker_test_image, second]
    out = tmp_path / "run"
    status, err = _run(capsys, "run", str(task), "--agent", "oracle", "--runtime", "docker", "-o", str(out), "-q")
    assert status == ExitStatus.USAGE
    line = _error_line(err)
    assert f"images '{first}' (base image of task 'word-count', {dockerfile})" in line
    assert f"'{second}' (base image of task 'word-count'" in line
    assert docker_test_image not in line.split("not present")[0]
    assert not out.exists()
