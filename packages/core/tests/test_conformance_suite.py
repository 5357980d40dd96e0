"""The conformance suite, run by pytest (pytester) against a scripted agent that
keeps the contract and against agents that break it one way each: the good
agent passes every check, and each bad agent fails exactly the checks about
the promise it breaks."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent

# Everything the inner runs use is imported out here, once: pytester drops the
# modules an inner run imports, and a re-import would make new classes that
# differ from those already cached (agentrig's lazy exports, the registry).
sys.path.insert(0, str(HERE))
import conformance_subjects  # noqa: E402

# PyYAML too: its C extension (yaml._yaml) outlives a dropped `yaml` and would build nodes of the
# first import's classes, which a re-imported constructor does not know ("could not determine a
# constructor for the tag None" in every later YAML load of the process).
import yaml  # noqa: E402,F401

import agentrig.agents.session  # noqa: E402
import agentrig.runtime.local  # noqa: E402,F401
from agentrig.testing.conformance import AgentConformance  # noqa: E402

ALL_CHECKS = {
    "test_builds_the_agent_its_plugin_declares",
    "test_plugin_module_imports_cheaply",
    "test_lifecycle_hooks_fire_in_order",
    "test_lifecycle_methods_called_in_order",
    "test_steps_only_inside_checkpoints",
    "test_solves_the_sample_problem_in_the_session",
    "test_usage_and_model_calls_recorded",
    "test_cost_accumulates_across_checkpoints",
    "test_reset_forgets_the_conversation",
    "test_continued_context_keeps_the_conversation",
    "test_errors_captured_in_the_result",
    "test_limits_stop_the_agent",
    "test_artifacts_written_without_secrets",
    "test_result_round_trips_as_json",
    "test_no_process_outlives_cleanup",
    "test_cleanup_without_setup",
}

# What each broken agent must fail, and nothing else.
EXPECTED_FAILURES = {
    "ScriptedAgent": set(),
    "ForgetsNothing": {"test_reset_forgets_the_conversation"},
    "ResetsInRun": {"test_lifecycle_methods_called_in_order", "test_continued_context_keeps_the_conversation"},
    "SwallowsErrors": {"test_errors_captured_in_the_result"},
    "NoTraceback": {"test_errors_captured_in_the_result"},
    "Unpriced": {"test_usage_and_model_calls_recorded", "test_cost_accumulates_across_checkpoints"},
    "NoLLMCalls": {"test_usage_and_model_calls_recorded"},
    "LosesPriorCost": {"test_cost_accumulates_across_checkpoints"},
    "IgnoresLimits": {"test_limits_stop_the_agent"},
    "NoArtifacts": {"test_artifacts_written_without_secrets"},
    "LogsSecret": {"test_artifacts_written_without_secrets"},
    "LeaksProcess": {"test_no_process_outlives_cleanup"},
    "StrayStep": {"test_steps_only_inside_checkpoints"},
    "CleanupNeedsSetup": {"test_cleanup_without_setup"},
    "WorksElsewhere": {"test_solves_the_sample_problem_in_the_session"},
    "FiresHooksItself": {"test_lifecycle_hooks_fire_in_order"},
    "Undeclared": {"test_builds_the_agent_its_plugin_declares"},
}

SUITE_MODULE = '''
import pytest
import conformance_subjects as subjects
from agentrig.plugins import get_registry
from agentrig.testing.conformance import AgentConformance


@pytest.fixture(autouse=True)
def subjects_plugin():
    registry = get_registry()
    name = registry.register(subjects.SubjectsPlugin(), name="conformance-subjects")
    yield
    registry.unregister(name)


class Subject(AgentConformance):
    agent_cls = subjects.ScriptedAgent
    process_grace = 0.3

    @pytest.fixture
    def requests_log(self):
        return []

    @pytest.fixture
    def build_agent(self, requests_log):
        return lambda plan: self.agent_cls.for_plan(plan, requests_log)

    @pytest.fixture
    def model_requests(self, requests_log):
        return lambda: list(requests_log)
'''


def _suite_source(names: list[str]) -> str:
    classes = [f"\n\nclass Test{name}(Subject):\n    agent_cls = subjects.{name}\n" for name in names]
    return SUITE_MODULE + "".join(classes)


@pytest.fixture
def run_suite(pytester: pytest.Pytester):
    """Run the conformance suite against the named subjects; returns {class: {test: outcome}}."""
    pytester.syspathinsert(HERE)

    def run(names: list[str]) -> dict[str, dict[str, str]]:
        pytester.makepyfile(test_subjects=_suite_source(names))
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
        outcomes: dict[str, dict[str, str]] = {name: {} for name in names}
        for report in result.reprec.getreports("pytest_runtest_logreport"):
            if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
                continue
            _, cls, test = report.nodeid.split("::")
            outcomes[cls.removeprefix("Test")][test] = report.outcome
        return outcomes

    yield run
    for process in conformance_subjects.LEAKED:
        process.kill()
        process.wait()
    conformance_subjects.LEAKED.clear()



def test_every_check_is_listed():
    assert {n for n in dir(AgentConformance) if n.startswith("test_")} == ALL_CHECKS


def test_suite_passes_a_conforming_agent_and_catches_each_violation(run_suite):
    outcomes = run_suite(list(EXPECTED_FAILURES))
    for name, expected in EXPECTED_FAILURES.items():
        got = outcomes[name]
        assert set(got) == ALL_CHECKS, f"{name}: checks that did not run: {ALL_CHECKS - set(got)}"
        failed = {test for test, outcome in got.items() if outcome == "failed"}
        skipped = {test for test, outcome in got.items() if outcome == "skipped"}
        # an in-process plugin has no module to import in a fresh interpreter
        assert skipped == {"test_plugin_module_imports_cheaply"}, f"{name}: skipped {skipped}"
        assert failed == expected, f"{name}: failed {sorted(failed)}, expected {sorted(expected)}"


def test_a_subclass_without_build_agent_fails_with_a_clear_message(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_missing=textwrap.dedent(
            """
            from agentrig.testing.conformance import AgentConformance

            class TestMissing(AgentConformance):
                pass
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "-k", "cleanup_without_setup")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*TestMissing must override the 'build_agent' fixture*"])


def test_without_model_requests_the_context_checks_skip(pytester: pytest.Pytester):
    pytester.syspathinsert(HERE)
    pytester.makepyfile(
        test_no_requests=SUITE_MODULE.replace("    @pytest.fixture\n    def model_requests", "    def _unused")
        + "\n\nclass TestQuiet(Subject):\n    pass\n"
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "-rs", "-k", "conversation")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*'model_requests' fixture is not provided*"])


COUNTING_SUITE = SUITE_MODULE + '''

class CountingAgent(subjects.ScriptedAgent):
    def setup(self, session):
        super().setup(session)
        import os
        with open(os.environ["AGENTRIG_RUNS_OUT"], "a") as log:
            log.write(f"{type(self).__name__} {os.environ.get('PYTEST_XDIST_WORKER', '-')}\\n")


class TestCounting(Subject):
    agent_cls = CountingAgent

    def test_builds_the_agent_its_plugin_declares(self):
        pytest.skip("declared by no plugin")


class CountingAloneAgent(CountingAgent):
    pass


class TestCountingAlone(TestCounting):
    agent_cls = CountingAloneAgent
    share_runs = False
'''


def test_a_classs_checks_share_their_runs_on_one_worker(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thirteen checks that run the agent ask for four plans: the agent runs four times plus the
    process check's own run, all on one worker under ``--dist loadgroup``; ``share_runs = False`` runs
    each check's plan anew."""
    pytester.makepyfile(test_counting=COUNTING_SUITE)
    out = tmp_path / "runs.txt"
    monkeypatch.setenv("AGENTRIG_RUNS_OUT", str(out))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), *sys.path]))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-n", "2", "--dist", "loadgroup")
    result.assert_outcomes(passed=28, skipped=4)
    runs = [line.split() for line in out.read_text().splitlines()]
    shared = [worker for name, worker in runs if name == "CountingAgent"]
    alone = [worker for name, worker in runs if name == "CountingAloneAgent"]
    assert len(shared) == 5, f"the sharing class ran the agent {len(shared)} times: {runs}"
    assert len(set(shared)) == 1, f"the sharing class's checks ran on {sorted(set(shared))}"
    assert len(alone) == 13, f"the class that does not share ran the agent {len(alone)} times: {runs}"
