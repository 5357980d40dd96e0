"""The Harbor format's files: task.toml / task.yaml models and their errors (reward files: test_format_harbor_reward.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.formats.harbor.config import (
    TaskConfigError,
    read_task_toml,
    read_task_yaml,
    resolve_env,
)

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "harbor-tasks"


def test_fixture_task_toml_fields() -> None:
    config = read_task_toml(FIXTURES / "word-count" / "task.toml")
    assert config.version == "1.0"
    assert config.metadata["difficulty"] == "easy"
    assert config.verifier.timeout_sec == 60.0 and config.verifier.env == {"EXPECTED_WORDS": "4"}
    assert config.agent.timeout_sec == 120.0
    env = config.environment
    assert (env.build_timeout_sec, env.cpus, env.memory_mb, env.allow_internet, env.docker_image) == (300.0, 1, 512, False, None)


def test_defaults_and_prebuilt_image() -> None:
    config = read_task_toml(FIXTURES / "greeting" / "task.toml")
    assert config.environment.docker_image == "agentrig-test/node:bookworm"
    assert config.environment.memory_mb == 2048 and config.environment.cpus == 1
    assert config.verifier.env == {} and config.solution.env == {}


def test_deprecated_sizes_and_unknown_fields(tmp_path: Path) -> None:
    path = tmp_path / "task.toml"
    path.write_text('schema_version = "1.1"\n[environment]\nmemory = "4G"\nstorage = "512M"\nfuture_field = 1\n[newsection]\nx = 1\n')
    config = read_task_toml(path)
    assert config.version == "1.1"
    assert (config.environment.memory_mb, config.environment.storage_mb) == (4096, 512)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[environment]\ncpus = "two"\n', "field `environment.cpus`: Input should be a valid number"),
        ("[verifier]\ntimeout_sec = -1\n", "field `verifier.timeout_sec`: -1.0 is not a time limit: must be a finite number above 0"),
        ("[verifier]\nenv = { KEY = 3 }\n", "field `verifier.env.KEY`: Input should be a valid string"),
        ('[environment]\nallow_internet = "maybe"\n', "field `environment.allow_internet`"),
        ('[environment]\nmemory = "lots"\n', "field `environment`: Value error, invalid size 'lots'"),
        ("[agent\ntimeout_sec = 1\n", "invalid TOML"),
    ],
)
def test_malformed_task_toml_names_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "task.toml"
    path.write_text(text)
    with pytest.raises(TaskConfigError) as info:
        read_task_toml(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message


def test_task_yaml_fixture_and_errors(tmp_path: Path) -> None:
    config = read_task_yaml(FIXTURES / "tb-reverse" / "task.yaml")
    assert config.instruction.startswith("Write `reversed.txt`")
    assert (config.max_agent_timeout_sec, config.max_test_timeout_sec, config.parser_name) == (120.0, 60.0, "pytest")
    path = tmp_path / "task.yaml"
    path.write_text("descriptions:\n  - key: base\n    description: Do it.\n  - key: hard\n    description: Do more.\n")
    assert read_task_yaml(path).instruction == "Do it."
    path.write_text("author_email: a@b\n")
    with pytest.raises(TaskConfigError, match=r"task\.yaml: field `instruction`: Field required"):
        read_task_yaml(path)
    path.write_text("instruction: x\nmax_test_timeout_sec: soon\n")
    with pytest.raises(TaskConfigError, match=r"field `max_test_timeout_sec`: Input should be a valid number.*'soon'"):
        read_task_yaml(path)
    path.write_text("instruction: [unclosed\n")
    with pytest.raises(TaskConfigError, match=r"task\.yaml: invalid YAML at line 2"):
        read_task_yaml(path)


def test_env_templates() -> None:
    env = {"A": "${HOST_A}", "B": "x-${MISSING:-dflt}-y", "C": "plain"}
    assert resolve_env(env, "t [verifier] env", {"HOST_A": "1"}) == {"A": "1", "B": "x-dflt-y", "C": "plain"}
    with pytest.raises(TaskConfigError, match=r"t \[verifier\] env\.A: host environment variable HOST_A is not set"):
        resolve_env({"A": "${HOST_A}"}, "t [verifier] env", {})


def test_base_images_of_a_dockerfile() -> None:
    from agentrig.formats.harbor.image import base_images

    text = (
        "ARG V=1\nFROM --platform=linux/amd64 python:3.12 AS build\nRUN x\n"
        "from build\nFROM scratch\nFROM debian:${V}\nFROM agentrig-test/busybox:latest as final\n"
    )
    # the global ARG's default reaches FROM, as the builder substitutes it
    assert base_images(text) == ["python:3.12", "debian:1", "agentrig-test/busybox:latest"]


def test_a_terminal_bench_solution_yaml_is_read_through_the_yaml_loader(tmp_path: Path) -> None:
    from agentrig.formats.harbor.task import load_terminal_bench_task
    from agentrig.formats.harbor.verifier import solution_bundle

    task_dir = tmp_path / "tb1"
    task_dir.mkdir()
    (task_dir / "task.yaml").write_text("instruction: hi\n")
    (task_dir / "Dockerfile").write_text("FROM agentrig-test/node:bookworm\n")
    (task_dir / "run-tests.sh").write_text("true\n")
    (task_dir / "solution.yaml").write_text("- command: echo one\n- {command: echo two}\n")
    staging = tmp_path / "staging"
    staging.mkdir()
    bundle = solution_bundle(load_terminal_bench_task(task_dir), staging)
    assert (bundle / "solve.sh").read_text() == "#!/bin/bash\necho one\necho two\n"
    (task_dir / "solution.yaml").write_text("- command: " + "[" * 30_000 + "]" * 30_000 + "\n")
    with pytest.raises(ValueError) as caught:
        solution_bundle(load_terminal_bench_task(task_dir), staging)
    assert str(caught.value) == f"{task_dir / 'solution.yaml'}: line 1: nested more than 100 levels deep; not read"
