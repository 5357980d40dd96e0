"""The shared pieces of CLI agents: the reserved env/flag validators and the pinned-CLI finder's skip/fail rule."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import pytest
from pydantic import ValidationError

from agentrig.agents.cli_config import CliAgentConfig
from agentrig.testing.cli_agents import find_cli_binary


class _DemoConfig(CliAgentConfig):
    type: Literal["demo_cli"] = "demo_cli"
    reserved_env: ClassVar[frozenset[str]] = frozenset({"DEMO_API_KEY", "HOME"})
    reserved_flags: ClassVar[frozenset[str]] = frozenset({"--model", "-m"})
    stream_parser: str = "demo-json"


def test_a_subclass_reserved_env_and_flags_are_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="env may not set DEMO_API_KEY, HOME: agentrig sets it"):
        _DemoConfig(env={"HOME": "/x", "DEMO_API_KEY": "k", "OTHER": "ok"})
    with pytest.raises(ValidationError, match="extra_args may not contain '--model'"):
        _DemoConfig(extra_args=["--verbose", "--model=gpt"])
    config = _DemoConfig(env={"OTHER": "ok"}, extra_args=["--verbose"], binary="/opt/demo")
    assert config.env == {"OTHER": "ok"} and config.binary == "/opt/demo" and config.timeout is None


def test_the_base_reserves_nothing() -> None:
    class Open(CliAgentConfig):
        type: Literal["open_cli"] = "open_cli"
        stream_parser: str = "x"

    assert Open(env={"HOME": "/h"}, extra_args=["--model", "m"]).env == {"HOME": "/h"}


def test_find_cli_binary_returns_the_env_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = tmp_path / "demo"
    cli.write_text("#!/bin/sh\n")
    monkeypatch.setenv("AGENTRIG_TEST_DEMO_BIN", str(cli))
    found = find_cli_binary(env_var="AGENTRIG_TEST_DEMO_BIN", default=tmp_path / "nope", cli_name="Demo CLI", install="npm i demo")
    assert found == str(cli)


def test_a_missing_cli_skips_locally_and_fails_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTRIG_TEST_DEMO_BIN", raising=False)
    kwargs = {"env_var": "AGENTRIG_TEST_DEMO_BIN", "default": tmp_path / "nope", "cli_name": "Demo CLI", "install": "npm i demo"}
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"Demo CLI not found at .*nope: npm i demo \(or set AGENTRIG_TEST_DEMO_BIN\)"):
        find_cli_binary(**kwargs)
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI is set but the pinned Demo CLI is missing"):
        find_cli_binary(**kwargs)


def test_log_tail_hands_over_whole_new_lines_of_matching_files(tmp_path: Path) -> None:
    from agentrig.agents.cli_log import LogTail

    logs = tmp_path / "logs"
    (logs / "a").mkdir(parents=True)
    old = logs / "a" / "session-1.jsonl"
    old.write_text("before\n")
    (logs / "a" / "other.txt").write_text("not a log\n")
    tail = LogTail(logs, "session-*.jsonl")
    tail.mark()
    assert tail.read_new() == []
    with open(old, "a") as handle:
        handle.write("one\ntw")  # an unfinished line waits for its newline
    new = logs / "b" / "session-2.jsonl"
    new.parent.mkdir()
    new.write_text("first\n")
    (logs / "b" / "session-3.jsonl").symlink_to(old)  # not followed: the directory is the CLI's
    assert tail.read_new() == ["one", "first"]
    with open(old, "a") as handle:
        handle.write("o\n")
    assert tail.read_new() == ["two"]
    assert tail.logs() == [old, new]
    assert LogTail(tmp_path / "missing", "*.jsonl").read_new() == []
