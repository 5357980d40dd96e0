"""The run plan: built once by one builder, values kept parsed, across process boundaries without secrets."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from agentrig.evaluation.policy import ALL, PassPolicy, deciding_policy
from agentrig.model_definition import ThinkingPreset
from agentrig.run.job import ProblemJob
from agentrig.run.plan import PlanError, RunPlan, build_plan
from agentrig.run.records import RunSettings

SECRET = "sk-plan-test-secret-1234567890"


def _oracle() -> object:
    from agentrig.plugins import get_agent_config_cls

    return get_agent_config_cls("oracle")(type="oracle")


def _react() -> object:
    from agentrig.plugins import get_agent_config_cls

    return get_agent_config_cls("react")(type="react")


def test_the_plan_keeps_parsed_values_and_resolves_the_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    plan = build_plan(
        _react(), model="openai/gpt-4o-mini", pass_policy=" SCORE >= 0.50 ", thinking="high", thinking_max_tokens=4096,
        attempts=3, test_session_timeout=30.0, verifier_allow_env=["OPENAI_API_KEY"],
    )
    assert plan.pass_policy == PassPolicy(kind="score", threshold=0.5) and str(plan.pass_policy) == "score>=0.5"
    assert plan.thinking is ThinkingPreset.HIGH and plan.thinking_max_tokens == 4096
    assert (plan.model.provider, plan.model.name, plan.model_id) == ("openai", "gpt-4o-mini", "openai/gpt-4o-mini")
    assert plan.credential is not None and plan.credential.secret() == SECRET
    assert plan.agent_config["type"] == "react" and plan.verifier.allow_env == ["OPENAI_API_KEY"]
    assert plan.settings() == RunSettings(reset_context=False, thinking="high", thinking_max_tokens=4096, attempts=3)
    context = plan.agent_context("hello/attempt_2")
    assert (context.model, context.credential, context.problem_name) == (plan.model, plan.credential, "hello/attempt_2")
    assert (context.thinking_preset, context.thinking_max_tokens, context.image) == (ThinkingPreset.HIGH, 4096, None)
    with pytest.raises(ValueError, match="frozen"):
        plan.attempts = 1


def test_a_job_crosses_a_process_boundary_without_its_credential(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    plan = build_plan(_react(), model="openai/gpt-4o-mini", pass_policy="core", thinking="low")
    job = ProblemJob(plan=plan, problem_path="/p", problem_name="p", output_dir=str(tmp_path))
    text = job.model_dump_json()  # what the --jobs pool and the Ray executor send
    assert SECRET not in text and "credential" not in text
    arrived = ProblemJob.model_validate_json(text)
    assert arrived.plan.pass_policy == PassPolicy(kind="core") and arrived.plan.thinking is ThinkingPreset.LOW
    assert arrived.plan.model == plan.model and arrived.plan.credential is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-worker-s-own")
    assert arrived.plan.credential_here().secret() == "sk-the-worker-s-own"  # read where the problem runs
    assert plan.credential_here().secret() == SECRET  # in the process that built it: the plan's own
    assert pickle.loads(pickle.dumps(job)).plan == plan


def test_plan_errors_name_the_option_on_the_command_line_and_the_argument_in_python() -> None:
    with pytest.raises(PlanError) as bad_policy:
        build_plan(_oracle(), needs_model=False, pass_policy="most")
    assert str(bad_policy.value) == (
        "--pass-policy: pass policy 'most': expected 'all', 'core' or 'score>=X' with X between 0 and 1"
    )
    with pytest.raises(PlanError) as bad_thinking:
        build_plan(_oracle(), needs_model=False, thinking="lots")
    assert bad_thinking.value.python_text() == "thinking='lots': one of none, low, medium, high"
    with pytest.raises(PlanError, match=r"^--thinking-max-tokens 100: must be at least 1024$"):
        build_plan(_oracle(), needs_model=False, thinking="high", thinking_max_tokens=100)
    with pytest.raises(PlanError, match=r"^--model is required by agent 'react'"):
        build_plan(_react())
    with pytest.raises(PlanError) as unknown:
        build_plan(_react(), model="replay/nowhere.jsonl")
    assert unknown.value.python_text().startswith("model='replay/nowhere.jsonl': ")
    assert str(unknown.value).startswith("--model replay/nowhere.jsonl: ")
    with pytest.raises(PlanError, match=r"^--test-session-timeout .*: must be a finite number above 0, at most 604800 seconds \(7 days\)$"):
        build_plan(_oracle(), needs_model=False, test_session_timeout=float("nan"))


def test_a_model_less_agent_has_no_model_unless_given() -> None:
    plan = build_plan(_oracle(), needs_model=False)
    assert (plan.model, plan.model_id, plan.credential_here()) == (None, None, None)
    assert plan.agent_context("p").model is None


def test_one_rule_decides_which_policy_wins() -> None:
    run, own = PassPolicy(kind="core"), PassPolicy(kind="score", threshold=0.5)
    assert deciding_policy(run, own) is run
    assert deciding_policy(None, own) is own
    assert deciding_policy(None, None) is ALL and deciding_policy(None) is ALL


def test_the_plan_refuses_unknown_fields() -> None:
    with pytest.raises(ValueError, match="extra"):
        RunPlan(agent_config={"type": "oracle"}, pass_policy_text="all")
