"""The Harbor format's Docker pieces on the real engine: task images built once and cached by
content, build errors in one line, files into and out of a container, a runtime in the image's WORKDIR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.formats.harbor.container import extract_image_directory, make_directories, put_directory, read_directory
from agentrig.formats.harbor.image import LABEL_BUILD_KEY, build_task_image, describe_image
from agentrig.runtime.docker import DockerRuntime
from agentrig.runtime.errors import ImageBuildError, ImageNotFoundError

pytestmark = pytest.mark.docker


def _context(root: Path, base: str, run: str = "echo built > /app/.marker") -> Path:
    context = root / "environment"
    context.mkdir(parents=True, exist_ok=True)
    (context / "Dockerfile").write_text(f"FROM {base}\nWORKDIR /app\nCOPY data.txt /app/data.txt\nRUN {run}\n")
    (context / "data.txt").write_text("1 2 3\n")
    return context


def test_image_is_built_once_and_rebuilt_when_the_context_changes(
    tmp_path: Path, docker_engine: Any, docker_test_image: str, removed_images: list[str]
) -> None:
    context = _context(tmp_path, docker_test_image)
    builds: list[str] = []
    first = build_task_image(docker_engine, task="Cache Test", context=context, dockerfile=context / "Dockerfile", on_build=builds.append)
    removed_images.append(first.tag)
    assert first.built and builds == [first.tag] and first.workdir == "/app"
    assert first.tag.startswith("agentrig-task/cache-test:")
    again = build_task_image(docker_engine, task="Cache Test", context=context, dockerfile=context / "Dockerfile", on_build=builds.append)
    assert (again.tag, again.built, len(builds)) == (first.tag, False, 1)
    (context / "data.txt").write_text("4 5 6\n")
    changed = build_task_image(docker_engine, task="Cache Test", context=context, dockerfile=context / "Dockerfile")
    removed_images.append(changed.tag)
    assert changed.built and changed.tag != first.tag
    labels = docker_engine.images.get(changed.tag).labels
    assert len(labels[LABEL_BUILD_KEY]) == 64 and changed.tag.endswith(labels[LABEL_BUILD_KEY][:16])


def test_failed_build_and_missing_base_are_one_line(tmp_path: Path, docker_engine: Any, docker_test_image: str) -> None:
    context = _context(tmp_path / "a", docker_test_image, run="echo going wrong && exit 7")
    with pytest.raises(ImageBuildError) as info:
        build_task_image(docker_engine, task="broken", context=context, dockerfile=context / "Dockerfile")
    message = str(info.value)
    assert "task 'broken'" in message and ("returned a non-zero code: 7" in message or "exit code: 7" in message)
    assert "\n" not in message
    context = _context(tmp_path / "b", "agentrig-test/no-such-base:1")
    with pytest.raises(ImageNotFoundError) as missing:
        build_task_image(docker_engine, task="nobase", context=context, dockerfile=context / "Dockerfile")
    assert "never pulls" in str(missing.value) and "\n" not in str(missing.value)
    with pytest.raises(ImageNotFoundError, match=r"agentrig-test/absent:1.*not present locally"):
        describe_image(docker_engine, "agentrig-test/absent:1")


def test_files_in_and_out_and_a_runtime_in_the_image_workdir(
    tmp_path: Path, docker_engine: Any, docker_test_image: str, removed_images: list[str]
) -> None:
    context = _context(tmp_path, docker_test_image)
    image = build_task_image(docker_engine, task="files", context=context, dockerfile=context / "Dockerfile")
    removed_images.append(image.tag)
    seed = tmp_path / "seed"
    assert extract_image_directory(docker_engine, image.tag, image.workdir, seed)
    assert sorted(p.name for p in seed.iterdir()) == [".marker", "data.txt"]
    assert not extract_image_directory(docker_engine, image.tag, "/nowhere", tmp_path / "none")

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "data.txt").write_text("from the host\n")
    runtime = DockerRuntime(workspace, config={"image": image.tag, "workdir": image.workdir})
    try:
        assert runtime.workdir == "/app"
        assert runtime.exec("pwd; cat data.txt").stdout == "/app\nfrom the host\n"
        tests = tmp_path / "tests"
        (tests / "sub").mkdir(parents=True)
        (tests / "test.sh").write_text("echo 0.5 > /logs/verifier/reward.txt\n")
        (tests / "sub" / "x.txt").write_text("x")
        put_directory(runtime.container, tests, "/tests", user=runtime.user)
        make_directories(runtime.container, "/logs/verifier", "/logs/agent")
        assert runtime.exec("sh /tests/test.sh && cat /tests/sub/x.txt").exit_code == 0
        assert read_directory(runtime.container, "/logs/verifier") == {"reward.txt": b"0.5\n"}
        assert read_directory(runtime.container, "/logs/absent") == {}
        assert not (workspace / "tests").exists()  # uploaded into the container, never into the workspace
    finally:
        runtime.cleanup()
