"""Loading mini-swe-agent's configs, overrides, and the limits mapped both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig import AgentCostLimits, AgentSetupError
from agentrig_miniswe.config import MiniSweConfig
from agentrig_miniswe.mini_config import (
    apply_limits,
    detect_action_format,
    load_mini_config,
    shipped_config_names,
    stop_reason_for,
)
from agentrig_miniswe.upstream import load_upstream


@pytest.fixture(scope="module")
def up():
    return load_upstream()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("default.yaml", "text"),
        ("mini.yaml", "toolcall"),
        ("mini_textbased.yaml", "text"),
        ("benchmarks/swebench.yaml", "toolcall"),
        ("benchmarks/swebench_backticks.yaml", "text"),
        ("benchmarks/swebench_xml.yaml", "text"),
    ],
)
def test_shipped_configs_load_with_their_action_format(up, name: str, expected: str) -> None:
    resolved = load_mini_config(MiniSweConfig(config_file=name), up)
    assert resolved.action_format == expected
    assert "system_template" in resolved.agent and "instance_template" in resolved.agent
    # The CLI's interactive settings and mini's own container settings are not DefaultAgent's.
    assert "mode" not in resolved.agent
    assert "environment_class" not in resolved.environment and "cwd" not in resolved.environment


def test_shipped_names_include_the_cli_default(up) -> None:
    names = shipped_config_names(up)
    assert "mini.yaml" in names and "default.yaml" in names


def test_templates_come_verbatim_from_the_shipped_file(up) -> None:
    import yaml

    raw = yaml.safe_load((Path(up.builtin_config_dir) / "mini.yaml").read_text())
    resolved = load_mini_config(MiniSweConfig(config_file="mini.yaml"), up)
    assert resolved.agent["instance_template"] == raw["agent"]["instance_template"]
    assert resolved.model["observation_template"] == raw["model"]["observation_template"]
    assert resolved.environment["env"] == raw["environment"]["env"]


def test_a_path_and_overrides(up, tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "agent:\n  system_template: 'sys'\n  instance_template: 'Do: {{task}}'\n  step_limit: 7\n"
        "environment:\n  timeout: 9\n  env: {A: '1'}\nmodel:\n  model_class: litellm_textbased\n"
    )
    config = MiniSweConfig(
        config_file=str(path),
        agent_overrides={"system_template": "other"},
        environment_overrides={"env": {"B": "2"}},
        command_timeout=4,
        wall_clock_limit=60,
    )
    resolved = load_mini_config(config, up)
    assert resolved.agent["system_template"] == "other"
    assert resolved.agent["step_limit"] == 7
    assert resolved.agent["wall_time_limit_seconds"] == 60
    assert resolved.environment == {"timeout": 4, "env": {"A": "1", "B": "2"}}
    assert resolved.action_format == "text"


def test_a_missing_config_file_names_the_field_and_the_choices(up) -> None:
    with pytest.raises(AgentSetupError, match=r"config_file 'nope\.yaml' not found: .*mini\.yaml"):
        load_mini_config(MiniSweConfig(config_file="nope.yaml"), up)


def test_a_broken_config_file_is_one_clear_line(up, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent: [unclosed\n")
    with pytest.raises(AgentSetupError, match=r"config_file '.*bad\.yaml' cannot be read"):
        load_mini_config(MiniSweConfig(config_file=str(bad)), up)
    empty = tmp_path / "empty.yaml"
    empty.write_text("agent: {}\n")
    with pytest.raises(AgentSetupError, match=r"has no agent\.system_template"):
        load_mini_config(MiniSweConfig(config_file=str(empty)), up)


def test_an_unknown_agent_override_is_refused(up) -> None:
    with pytest.raises(AgentSetupError, match=r"agent_overrides\.step_limt is not a mini-swe-agent agent setting"):
        load_mini_config(MiniSweConfig(agent_overrides={"step_limt": 3}), up)


def test_action_format_can_be_forced() -> None:
    assert detect_action_format("toolcall", {"system_template": "```mswea_bash_command"}, {}) == "toolcall"
    assert detect_action_format("auto", {}, {"action_regex": "x"}) == "text"


def test_agentrig_limits_replace_the_configs() -> None:
    agent = {"step_limit": 250, "cost_limit": 3.0}
    assert apply_limits(agent, AgentCostLimits(), 0.0) == agent  # unset: mini's own limits stay
    mapped = apply_limits(agent, AgentCostLimits(step_limit=5, cost_limit=0.5), 0.0)
    assert mapped == {"step_limit": 5, "cost_limit": 0.5}
    # The problem's budget left over becomes this checkpoint's when tighter.
    assert apply_limits(agent, AgentCostLimits(cost_limit=0.5, net_cost_limit=1.0), 0.8)["cost_limit"] == pytest.approx(0.2)
    assert apply_limits(agent, AgentCostLimits(net_cost_limit=1.0), 2.0)["cost_limit"] > 0


def test_exit_statuses_map_to_stop_reasons() -> None:
    assert stop_reason_for("Submitted", agentrig_limit=None, n_calls=3, step_limit=0) == "submitted"
    assert stop_reason_for("RepeatedFormatError", agentrig_limit=None, n_calls=3, step_limit=0) == "format_errors"
    assert stop_reason_for("TimeExceeded", agentrig_limit=None, n_calls=3, step_limit=0) == "wall_clock_limit"
    assert stop_reason_for("LimitsExceeded", agentrig_limit="net_cost_limit", n_calls=3, step_limit=0) == "net_cost_limit"
    assert stop_reason_for("LimitsExceeded", agentrig_limit=None, n_calls=3, step_limit=3) == "step_limit"
    assert stop_reason_for("LimitsExceeded", agentrig_limit=None, n_calls=2, step_limit=3) == "cost_limit"
    assert stop_reason_for("RuntimeError", agentrig_limit=None, n_calls=1, step_limit=0) == "error"


@pytest.mark.parametrize("loader", ["libyaml", "pure-python"])
def test_a_deeply_nested_config_file_is_one_line_with_either_yaml_loader(
        up, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: str) -> None:
    import yaml

    if loader == "pure-python":
        monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    deep = tmp_path / "deep.yaml"
    deep.write_text("agent:\n  step_limit: " + "[" * 30_000 + "]" * 30_000 + "\n")
    with pytest.raises(AgentSetupError) as caught:
        load_mini_config(MiniSweConfig(config_file=str(deep)), up)
    assert str(caught.value) == f"miniswe config_file '{deep}' cannot be read: {deep}: line 2: nested more than 100 levels deep; not read"
