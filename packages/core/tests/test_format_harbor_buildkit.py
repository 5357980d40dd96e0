"""Task images built as Docker Compose and Harbor build them: the engine's BuildKit (through ``docker compose
build``), on the real engine. Dockerfiles the classic builder refuses build; what this engine's BuildKit cannot
read offline is one line naming why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.formats.harbor.image import build_task_image
from agentrig.runtime import buildkit
from agentrig.runtime.errors import ImageBuildError, ImageNotFoundError

pytestmark = pytest.mark.docker


def _context(root: Path, dockerfile: str, files: dict[str, str] | None = None) -> Path:
    context = root / "environment"
    context.mkdir(parents=True)
    (context / "Dockerfile").write_text(dockerfile)
    for name, text in (files or {"server.py": "print('serving')\n", "persona.md": "# persona\n"}).items():
        (context / name).write_text(text)
    return context


def test_buildkit_only_dockerfiles_build(tmp_path: Path, docker_engine: Any, debian_test_image: str, removed_images: list[str]) -> None:
    """Several sources into a directory without a trailing '/', COPY --chmod and RUN --mount: the classic
    builder refuses each; Compose (BuildKit) builds them, and so does agentrig."""
    context = _context(tmp_path, (
        f"FROM {debian_test_image}\n"
        "WORKDIR /app\n"
        "COPY server.py persona.md .\n"
        "COPY --chmod=755 server.py /app/run.py\n"
        "RUN --mount=type=cache,target=/root/.cache echo cached > /root/.cache/c && cp /root/.cache/c /app/c.txt\n"
    ))
    image = build_task_image(docker_engine, task="buildkit-forms", context=context, dockerfile=context / "Dockerfile")
    removed_images.append(image.tag)
    assert image.built and image.workdir == "/app"
    listing = docker_engine.containers.run(
        image.tag, ["sh", "-c", "stat -c '%n %a' server.py persona.md run.py; cat c.txt"], remove=True, network_mode="none"
    ).decode()
    assert listing.split("\n")[:4] == ["server.py 644", "persona.md 644", "run.py 755", "cached"]
    again = build_task_image(docker_engine, task="buildkit-forms", context=context, dockerfile=context / "Dockerfile")
    assert (again.tag, again.built) == (image.tag, False)  # the cache key as before


def test_a_failing_step_is_one_line_with_its_last_output(tmp_path: Path, docker_engine: Any, debian_test_image: str) -> None:
    context = _context(tmp_path, f"FROM {debian_test_image}\nRUN echo going wrong && exit 7\n")
    with pytest.raises(ImageBuildError) as info:
        build_task_image(docker_engine, task="broken", context=context, dockerfile=context / "Dockerfile")
    message = str(info.value)
    assert "\n" not in message and message.startswith("building the image of task 'broken'")
    assert "exit code: 7" in message and "going wrong" in message


def test_dockerfile_1_4_syntax_this_engine_lacks_is_named(tmp_path: Path, docker_engine: Any, debian_test_image: str) -> None:
    """A heredoc: Debian bookworm's Docker 20.10 has an older built-in frontend; the line says so and what reads it."""
    context = _context(tmp_path, f"FROM {debian_test_image}\nRUN <<EOT\necho heredoc > /h.txt\nEOT\n")
    try:
        image = build_task_image(docker_engine, task="heredoc", context=context, dockerfile=context / "Dockerfile")
    except ImageBuildError as exc:
        message = str(exc)
        assert "\n" not in message and "heredocs" in message and "Docker Engine 23.0 or later" in message
    else:  # a newer engine reads heredocs itself
        docker_engine.images.remove(image.tag, force=True)
        assert int(docker_engine.version()["Version"].split(".")[0]) >= 23


def test_a_syntax_frontend_that_is_not_here_is_one_line(tmp_path: Path, docker_engine: Any, debian_test_image: str) -> None:
    context = _context(tmp_path, f"# syntax=agentrig-test/no-such-frontend:1\nFROM {debian_test_image}\nRUN true\n")
    with pytest.raises(ImageNotFoundError) as info:
        build_task_image(docker_engine, task="frontend", context=context, dockerfile=context / "Dockerfile")
    message = str(info.value)
    assert "\n" not in message and "'agentrig-test/no-such-frontend:1' (# syntax=)" in message and "never pulls" in message


def test_parser_directives_and_heredocs_are_read() -> None:
    assert buildkit.syntax_image("# syntax=docker/dockerfile:1.7\nFROM x\n") == "docker/dockerfile:1.7"
    assert buildkit.syntax_image("# escape=`\n#syntax = a/b:1\nFROM x\n") == "a/b:1"
    assert buildkit.syntax_image("FROM x\n# syntax=late/ignored\n") is None
    assert buildkit.uses_heredocs("FROM x\nRUN <<EOF\necho\nEOF\n")
    assert buildkit.uses_heredocs("FROM x\nCOPY <<-'END' /a\nhi\nEND\n")
    assert not buildkit.uses_heredocs("FROM x\nRUN cat <in.txt >out.txt\n")


def test_the_classic_builder_on_request_refuses_what_only_buildkit_reads(
    tmp_path: Path, docker_engine: Any, debian_test_image: str, monkeypatch: pytest.MonkeyPatch, removed_images: list[str]
) -> None:
    """``AGENTRIG_IMAGE_BUILDER=classic``: the engine's classic builder (also what runs where Compose v2 is not)."""
    monkeypatch.setenv("AGENTRIG_IMAGE_BUILDER", "classic")
    plain = _context(tmp_path / "plain", f"FROM {debian_test_image}\nWORKDIR /app\nCOPY server.py persona.md /app/\n")
    image = build_task_image(docker_engine, task="classic-plain", context=plain, dockerfile=plain / "Dockerfile")
    removed_images.append(image.tag)
    assert image.built and image.workdir == "/app"
    several = _context(tmp_path / "several", f"FROM {debian_test_image}\nWORKDIR /app\nCOPY server.py persona.md .\n")
    with pytest.raises(ImageBuildError, match="must be a directory and end with a /"):
        build_task_image(docker_engine, task="classic-several", context=several, dockerfile=several / "Dockerfile")
    monkeypatch.setenv("AGENTRIG_IMAGE_BUILDER", "kaniko")
    with pytest.raises(ImageBuildError, match="AGENTRIG_IMAGE_BUILDER='kaniko': say 'buildkit'"):
        build_task_image(docker_engine, task="classic-plain", context=several, dockerfile=several / "Dockerfile")
