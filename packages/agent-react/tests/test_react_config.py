"""The react config: defaults, validation errors that name the field, discovery through the plugin."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentrig.plugins import get_agent_cls, get_agent_config_cls
from agentrig_react.agent import ReactAgent
from agentrig_react.config import BUILTIN_TOOL_NAMES, ReactConfig


def test_defaults() -> None:
    config = ReactConfig()
    assert config.type == "react" and config.native_tools and not config.parallel_tool_calls
    assert config.max_steps == 50 and config.max_format_errors == 3 and config.max_consecutive_repeats == 3
    assert BUILTIN_TOOL_NAMES == ("bash", "read_file", "write_file", "edit_file", "list_dir", "submit")


def test_override_of_an_unknown_tool_is_a_config_error() -> None:
    with pytest.raises(ValidationError, match=r"description_overrides: unknown tool\(s\) grep \(tools: bash, read_file"):
        ReactConfig(description_overrides={"grep": "Search.", "bash": "Run."})


def test_override_of_a_subagent_tool_is_allowed() -> None:
    config = ReactConfig(
        subagents=[{"name": "helper", "description": "Help.", "agent": {"type": "react"}}],
        description_overrides={"helper": "Ask the helper."},
    )
    assert config.subagents[0].subdirectory == "subagents/helper"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"max_steps": 0}, "max_steps"),
        ({"compaction_threshold": 1.5}, "compaction_threshold"),
        ({"max_consecutive_repeats": 1}, "max_consecutive_repeats"),
        ({"unknown_field": 1}, "unknown_field"),
    ],
)
def test_bad_values_name_the_field(data: dict, field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        ReactConfig(**data)


def test_found_through_the_plugin() -> None:
    assert get_agent_cls("react") is ReactAgent
    config = get_agent_config_cls("react").model_validate({"type": "react", "parallel_tool_calls": True})
    assert isinstance(config, ReactConfig) and config.parallel_tool_calls
