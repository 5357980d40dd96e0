"""The pinned OpenCode CLI is a native executable: ``--runtime local`` needs no Node on the host, so the
host-Node check lets it through with an old Node or none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig import Agent, AgentContext
from agentrig.testing.cli_agents import CliAgentKit
from agentrig.testing.fake_node import fake_node_dir, first_on_path, path_without_node

pytestmark = pytest.mark.opencode_cli


def test_the_native_cli_passes_preflight_with_an_old_node_or_none(
    cli_kit: CliAgentKit, opencode_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open(os.path.realpath(opencode_bin), "rb") as handle:
        assert handle.read(4) == b"\x7fELF"  # what this test is about: the pinned CLI needs no node
    config = cli_kit.config_class()(binary=opencode_bin, base_url="http://127.0.0.1:9/v1")
    context = AgentContext(model=cli_kit.model_definition(), credential=cli_kit.credential(), problem_name="greeter",
                           runtime="local")
    for path in (first_on_path(fake_node_dir(tmp_path, "v16.20.2")), path_without_node(tmp_path)):
        monkeypatch.setenv("PATH", path)
        Agent.from_config(config, context).preflight()
