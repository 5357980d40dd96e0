"""The agent conformance suite: one import checks an agent against the contract.

An agent package subclasses :class:`AgentConformance` in its tests and
provides one fixture, ``build_agent``: a function that takes a
:class:`ConformancePlan` and returns a fresh agent whose model follows the
plan's script. The suite then runs the agent on a sample problem (in a fresh
session, through :mod:`agentrig.agents.lifecycle`, as ``agentrig run`` does) and
checks lifecycle order and hooks, reset semantics, usage and cost
accumulation across checkpoints (``prior_cost``), limits, artifacts, errors
captured in the result with their traceback, secrets kept out of every
output, and that no process outlives ``cleanup``::

    import pytest
    from agentrig import AgentContext
    from agentrig.testing.conformance import AgentConformance, ConformancePlan

    class TestMyAgentConformance(AgentConformance):
        @pytest.fixture
        def build_agent(self, fake_openai_server):
            def build(plan: ConformancePlan):
                fake_openai_server.enqueue(*plan.fake_script())
                model = plan.model_definition("openai", base_url=fake_openai_server.base_url)
                config = MyAgentConfig(cost_limits=plan.cost_limits, reset_context=plan.reset_context)
                credential = plan.credential("openai", "OPENAI_API_KEY")
                context = AgentContext(model=model, credential=credential, problem_name=plan.problem.name)
                return MyAgent.from_config(config, context)
            return build

        @pytest.fixture
        def model_requests(self, fake_openai_server):
            return lambda: [r.raw_body for r in fake_openai_server.model_requests]

The plan's script: for each checkpoint, one model reply per solution command
of the sample problem (a call of the ``bash`` tool with ``{"command": ...}``),
then a reply with text and no tool call (the agent's cue that it is done).
With ``plan.failure`` the model endpoint fails permanently on the first call
(:meth:`ConformancePlan.fake_script` scripts an HTTP 401). An agent whose
shell tool has another name or argument passes ``tool_name`` / ``argument``.
An agent whose model calls no shell tool at all (aider, which edits files from the text of its
replies) enqueues a script of its own and overrides :meth:`AgentConformance.scripted_turns` with
the calls that script makes.

``model_requests`` (optional) returns the text of every request the model
endpoint received, in order; with it the suite checks that a reset forgets
the conversation and that ``reset_context=False`` keeps it.

Class attributes tune the suite: ``sample_problem`` (default ``greetings``),
``runtime`` (``local``), ``expects_cost`` (the script's usage must be priced
into a non-zero cost), ``share_runs`` (default true: the checks of one class
that ask for the same plan read one run of it, so the agent runs the sample
problem four times, not thirteen; ``test_no_process_outlives_cleanup`` always
runs its own). Under pytest-xdist's ``--dist loadgroup`` a class's checks are
kept on one worker (``agentrig.testing.pytest_plugin``), so they share there too. A check that does not apply to an agent is turned off
by overriding its test method with one that calls ``pytest.skip(reason)``.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import sys
import time
import traceback
import weakref
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from agentrig.agents.interface import Agent, CheckpointInferenceResult, get_agent_cls, get_agent_config_cls
from agentrig.credentials import ProviderCredential
from agentrig.markers import hookimpl
from agentrig.model_definition import ModelDefinition
from agentrig.pricing import APIPricing
from agentrig.testing.problem_runner import ProblemRun, run_agent_on_problem
from agentrig.testing.problems import SampleProblem, load_sample_problem
from agentrig.usage import AgentCostLimits, TokenUsage, UsageTracker

if TYPE_CHECKING:
    from agentrig.llm.interface import ChatResponse
    from agentrig.problem import Checkpoint, Problem
    from agentrig.registry import AgentInfo
    from agentrig.testing.fake_server import FakeReply, Fault

__all__ = [
    "AgentConformance",
    "AgentFactory",
    "ConformancePlan",
    "ConformanceRun",
    "LifecycleEvent",
    "ScriptedToolCall",
    "ScriptedTurn",
]

#: The model name scripted replies carry.
CONFORMANCE_MODEL = "conformance-model"
#: Prices of the conformance model: every scripted call costs a known, non-zero amount.
CONFORMANCE_PRICING = APIPricing(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
#: Heavy modules a plugin module must not import (listing agents imports every plugin module).
HEAVY_MODULES = ("openai", "anthropic", "docker", "litellm", "minisweagent", "httpx", "requests")


class ScriptedToolCall(BaseModel):
    """A tool call the scripted model makes."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    arguments: dict[str, Any]


class ScriptedTurn(BaseModel):
    """One scripted model reply: text, tool calls and the usage the endpoint reports."""

    model_config = ConfigDict(extra="forbid")

    checkpoint: str
    text: str = ""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    usage: TokenUsage


#: Seconds a step-limited plan's later replies wait before they start (:meth:`ConformancePlan.fake_script`).
LATER_REPLY_DELAY = 2.0


class ConformancePlan(BaseModel):
    """What one conformance test asks of the agent it builds.

    The factory must give the agent ``cost_limits`` and ``reset_context``,
    a model priced with ``pricing`` (see :meth:`model_definition`) whose
    replies follow :meth:`turns`, and the credential :meth:`credential`
    (its value is a canary the suite looks for in every output).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    sample: SampleProblem
    reset_context: bool = True
    cost_limits: AgentCostLimits = Field(default_factory=AgentCostLimits)
    failure: bool = Field(default=False, description="The model endpoint fails permanently on the first call.")
    pricing: APIPricing = CONFORMANCE_PRICING
    model_name: str = CONFORMANCE_MODEL
    secret: SecretStr = Field(default_factory=lambda: SecretStr(f"sk-conformance-canary-{secrets.token_hex(12)}"))
    checkpoints: int | None = Field(default=None, description="Run only the first N checkpoints.")

    @property
    def problem(self) -> Problem:
        """The sample problem the agent runs on."""
        return self.sample.problem

    def selected_checkpoints(self) -> list[Checkpoint]:
        """The checkpoints this plan runs."""
        return self.problem.checkpoints[: self.checkpoints] if self.checkpoints else list(self.problem.checkpoints)

    def turns(self, tool_name: str = "bash", argument: str = "command") -> list[ScriptedTurn]:
        """Every scripted reply in call order (empty with ``failure``)."""
        if self.failure:
            return []
        turns: list[ScriptedTurn] = []
        for checkpoint in self.selected_checkpoints():
            for index, command in enumerate(self.sample.solution(checkpoint)):
                turns.append(
                    ScriptedTurn(
                        checkpoint=checkpoint.name,
                        text=f"Running step {index + 1}.",
                        tool_calls=[
                            ScriptedToolCall(
                                id=f"call_{checkpoint.name}_{index + 1}", name=tool_name, arguments={argument: command}
                            )
                        ],
                        usage=TokenUsage(input=200 + 50 * index, output=40, cache_read=100),
                    )
                )
            turns.append(
                ScriptedTurn(
                    checkpoint=checkpoint.name,
                    text=f"Done with {checkpoint.name}.",
                    usage=TokenUsage(input=300, output=20, cache_read=100),
                )
            )
        return turns

    def cost_of(self, usage: TokenUsage) -> float:
        """What ``usage`` costs at the plan's prices."""
        return self.pricing.get_cost(usage)

    def model_definition(self, provider: str, *, base_url: str | None = None) -> ModelDefinition:
        """The priced model definition to give the agent (provider of your choice)."""
        return ModelDefinition(provider=provider, name=self.model_name, pricing=self.pricing, base_url=base_url)

    def credential(self, provider: str, env_var: str = "API_KEY") -> ProviderCredential:
        """The credential to give the agent: its value is a canary that must reach no output."""
        return ProviderCredential(provider=provider, value=self.secret, source="conformance plan", env_var=env_var)

    def chat_responses(self, tool_name: str = "bash", argument: str = "command") -> list[ChatResponse]:
        """The script as :class:`agentrig.llm.ChatResponse` objects (a replay file holds one per line)."""
        from agentrig.llm.interface import ChatMessage, ChatResponse, ToolCall

        return [
            ChatResponse(
                message=ChatMessage(
                    role="assistant",
                    content=turn.text,
                    tool_calls=[
                        ToolCall(id=c.id, name=c.name, arguments=c.arguments, raw_arguments=json.dumps(c.arguments))
                        for c in turn.tool_calls
                    ],
                ),
                model=self.model_name,
                usage=turn.usage,
                cost=self.cost_of(turn.usage),
                stop_reason="tool_use" if turn.tool_calls else "end_turn",
            )
            for turn in self.turns(tool_name, argument)
        ]

    def fake_script(self, tool_name: str = "bash", argument: str = "command") -> list[FakeReply | Fault]:
        """The script for a fake model server (``server.enqueue(*plan.fake_script())``).

        With ``failure`` it is one permanent error (HTTP 401), which clients do not retry. Under a step
        limit, every reply after the first takes :data:`LATER_REPLY_DELAY` seconds to start, as a real
        model's does: an agent driving a CLI that asks for its next call at once (OpenCode) is stopped
        while that call waits, not after a loaded machine let the answer through first.
        """
        from agentrig.testing.fake_server import FakeReply, FakeToolCall, FakeUsage, Fault

        if self.failure:
            return [Fault(status=401, error_type="authentication_error", message="conformance: invalid API key")]
        later = LATER_REPLY_DELAY if self.cost_limits.step_limit else 0.0
        return [
            FakeReply(
                text=turn.text,
                tool_calls=[FakeToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in turn.tool_calls],
                usage=FakeUsage(**turn.usage.model_dump()),
                model=self.model_name,
                delay=later if index else 0.0,
            )
            for index, turn in enumerate(self.turns(tool_name, argument))
        ]


AgentFactory = Callable[[ConformancePlan], Agent]
"""What the ``build_agent`` fixture returns: a plan in, a fresh agent out."""

EventKind = Literal[
    "setup", "run", "reset", "save_artifacts", "finish_checkpoint", "cleanup",
    "hook:agent_setup", "hook:checkpoint_start", "hook:step", "hook:checkpoint_end", "hook:agent_cleanup",
]


class LifecycleEvent(BaseModel):
    """A method call on the agent, or a lifecycle hook fired, as the suite saw it."""

    model_config = ConfigDict(extra="forbid")

    kind: EventKind
    checkpoint: str | None = None
    step_kind: str | None = None
    same_agent: bool = True


class _Recorder:
    """Records lifecycle hooks (as an in-process plugin) and the agent's method calls."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.events: list[LifecycleEvent] = []
        self.hook_results: list[CheckpointInferenceResult] = []
        self._instrument(agent)

    def _instrument(self, agent: Agent) -> None:
        # Wrapping on the instance: the base class's own calls (finish_checkpoint
        # -> reset) go through the wrappers too.
        methods: tuple[EventKind, ...] = ("setup", "run", "reset", "save_artifacts", "finish_checkpoint", "cleanup")
        for name in methods:
            original = getattr(agent, name)

            def wrapper(*args: Any, __name: EventKind = name, __original: Any = original, **kwargs: Any) -> Any:
                self.events.append(LifecycleEvent(kind=__name))
                return __original(*args, **kwargs)

            setattr(agent, name, wrapper)

    def _hook(self, kind: EventKind, agent: Agent, **fields: Any) -> None:
        self.events.append(LifecycleEvent(kind=kind, same_agent=agent is self.agent, **fields))

    @hookimpl
    def agentrig_agent_setup(self, agent: Agent, session: Any) -> None:
        self._hook("hook:agent_setup", agent)

    @hookimpl
    def agentrig_checkpoint_start(self, agent: Agent, checkpoint: Checkpoint) -> None:
        self._hook("hook:checkpoint_start", agent, checkpoint=checkpoint.name)

    @hookimpl
    def agentrig_step(self, agent: Agent, step: Any) -> None:
        self._hook("hook:step", agent, step_kind=getattr(step, "kind", type(step).__name__))

    @hookimpl
    def agentrig_checkpoint_end(self, agent: Agent, checkpoint: Checkpoint, result: CheckpointInferenceResult) -> None:
        self._hook("hook:checkpoint_end", agent, checkpoint=checkpoint.name)
        self.hook_results.append(result)

    @hookimpl
    def agentrig_agent_cleanup(self, agent: Agent) -> None:
        self._hook("hook:agent_cleanup", agent)


class ConformanceRun(BaseModel):
    """One conformance run: the plan, the agent, what it produced and what the suite saw."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    plan: ConformancePlan
    agent: Agent
    run: ProblemRun | None = None
    error: str | None = Field(default=None, description="Traceback of an exception that escaped the run.")
    events: list[LifecycleEvent] = Field(default_factory=list)
    hook_results: list[CheckpointInferenceResult] = Field(default_factory=list)
    requests: list[str] | None = None
    log_text: str = ""

    def finished(self) -> ProblemRun:
        """The problem run; fails the test with the traceback when an exception escaped."""
        if self.run is None:
            pytest.fail(
                "an exception escaped the agent's lifecycle (setup, save_artifacts or cleanup must not raise;"
                f" run errors belong in the result):\n{self.error}"
            )
        return self.run

    def method_calls(self) -> list[str]:
        """The agent's lifecycle methods in the order they were called."""
        return [e.kind for e in self.events if not e.kind.startswith("hook:")]


def _child_pids(pid: int, skip: frozenset[int] = frozenset()) -> set[int]:
    """Live (non-zombie) descendants of ``pid`` (Linux ``/proc``), not counting the processes in
    ``skip`` nor anything below them (what other tests of the same process started, e.g. a
    browser that spawns helper processes of its own while this test runs)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found and child not in skip and _state(child) not in ("Z", "X", None):
                    found.add(child)
                    todo.append(child)
    return found


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def _describe(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def _declaring_agent(cls: type[Agent]) -> AgentInfo | None:
    """The installed agent type whose agent class is ``cls``."""
    from agentrig.registry import get_registry

    registry = get_registry()
    agents = registry.agents()
    path = f"{cls.__module__}:{cls.__qualname__}"
    for info in agents:
        if info.agent == path:
            return info
    for info in agents:  # declared through a re-export: import to compare (broken agents are not it)
        try:
            if get_agent_cls(info.name, registry) is cls:
                return info
        except Exception:
            continue
    return None


#: Runs shared by the checks of one conformance class: plan key -> run (``AgentConformance.share_runs``).
_SHARED_RUNS: weakref.WeakKeyDictionary[type, dict[str, ConformanceRun]] = weakref.WeakKeyDictionary()


def _plan_key(plan: ConformancePlan) -> str:
    """What makes two plans ask the same run of an agent (the canary secret aside)."""
    return plan.model_dump_json(exclude={"sample", "secret"})


class AgentConformance:
    """Base class of an agent package's conformance tests; subclass it and
    provide the ``build_agent`` fixture (see the module's docstring)."""

    sample_problem: ClassVar[str] = "greetings"
    runtime: ClassVar[str] = "local"
    expects_cost: ClassVar[bool] = True
    #: How long processes may take to go away after cleanup before they count as leaked.
    process_grace: ClassVar[float] = 3.0
    #: Checks asking for the same plan read one run of it (see the module's docstring).
    share_runs: ClassVar[bool] = True

    # -- fixtures the subclass provides -------------------------------------

    @pytest.fixture
    def build_agent(self) -> AgentFactory:
        """Override: return a function building a fresh agent for a :class:`ConformancePlan`."""
        pytest.fail(f"{type(self).__name__} must override the 'build_agent' fixture (see agentrig.testing.conformance)")

    @pytest.fixture
    def model_requests(self) -> Callable[[], list[str]] | None:
        """Override (optional): return a function giving the text of every model request so far."""
        return None

    def scripted_turns(self, plan: ConformancePlan) -> list[ScriptedTurn]:
        """Override (optional): the model calls ``build_agent``'s script makes, in order (the usage checks
        count them); by default :meth:`ConformancePlan.turns`. An agent whose model calls no shell tool
        (aider edits files from the text of its replies) scripts its own calls and says so here."""
        return plan.turns()

    # -- the suite's own machinery ------------------------------------------

    @pytest.fixture
    def conformance(
        self,
        build_agent: AgentFactory,
        model_requests: Callable[[], list[str]] | None,
        tmp_path_factory: pytest.TempPathFactory,
        caplog: pytest.LogCaptureFixture,
    ) -> Callable[..., ConformanceRun]:
        """A function running one plan (keyword overrides of :class:`ConformancePlan`) end to end.

        With ``share_runs`` a plan this class has already run gives that run back (``fresh=True``: always
        a new run)."""
        sample = load_sample_problem(self.sample_problem)
        caplog.set_level(logging.DEBUG)
        shared = _SHARED_RUNS.setdefault(type(self), {}) if self.share_runs else None

        def run(*, fresh: bool = False, **overrides: Any) -> ConformanceRun:
            plan = ConformancePlan(sample=sample, **overrides)
            key = _plan_key(plan)
            if shared is not None and not fresh and key in shared:
                return shared[key]
            outcome = _run_plan(plan)
            if shared is not None:
                shared[key] = outcome
            return outcome

        def _run_plan(plan: ConformancePlan) -> ConformanceRun:
            from agentrig.registry import get_registry

            agent = build_agent(plan)
            assert isinstance(agent, Agent), f"build_agent returned {type(agent).__name__}, not an agentrig.Agent"
            recorder = _Recorder(agent)
            registry = get_registry()
            name = registry.register(recorder, name=f"conformance-recorder-{id(recorder)}")
            outcome = ConformanceRun(plan=plan, agent=agent)
            try:
                outcome.run = run_agent_on_problem(
                    agent,
                    sample,
                    tmp_path_factory.mktemp("conformance"),
                    runtime=self.runtime,
                    reset_context=plan.reset_context,
                    checkpoints=plan.checkpoints,
                )
            except Exception:
                outcome.error = traceback.format_exc()
            finally:
                registry.unregister(name)
            outcome.events = recorder.events
            outcome.hook_results = recorder.hook_results
            outcome.requests = model_requests() if model_requests is not None else None
            outcome.log_text = "\n".join(r.getMessage() for r in caplog.records)
            return outcome

        return run

    # -- the checks ----------------------------------------------------------

    def test_builds_the_agent_its_plugin_declares(
        self, build_agent: AgentFactory, tmp_path: Path
    ) -> None:
        """The built agent's class is the one an installed (or registered) plugin declares."""
        from agentrig.registry import get_registry

        agent = build_agent(ConformancePlan(sample=load_sample_problem(self.sample_problem)))
        info = _declaring_agent(type(agent))
        assert info is not None, (
            f"{type(agent).__module__}.{type(agent).__qualname__} is declared by no plugin (installed agent"
            f" types: {get_registry().available_agent_types()}); is the package's entry point installed?"
        )
        config_cls = get_agent_config_cls(info.name)
        try:
            config_cls.model_validate({"type": info.name})
        except Exception as exc:  # `agentrig run --agent NAME` builds the config from its type alone
            pytest.fail(f"config {config_cls.__qualname__} cannot be built from type '{info.name}' alone: {exc}")

    def test_plugin_module_imports_cheaply(self, build_agent: AgentFactory) -> None:
        """Importing the agent's plugin module imports neither the agent nor any SDK."""
        from agentrig.registry import get_registry

        agent = build_agent(ConformancePlan(sample=load_sample_problem(self.sample_problem)))
        info = _declaring_agent(type(agent))
        plugin = next((p for p in get_registry().plugins() if info is not None and p.name == info.plugin), None)
        if plugin is None or plugin.entry_point is None:
            pytest.skip("the agent's plugin is registered in-process, not through an entry point")
        assert info is not None
        module = plugin.entry_point.partition(":")[0]
        watched = sorted({info.agent.partition(":")[0], info.config.partition(":")[0], *HEAVY_MODULES} - {module})
        probe = (
            "import importlib, json, sys\n"
            f"importlib.import_module({module!r})\n"
            f"print(json.dumps([m for m in {watched!r} if m in sys.modules]))\n"
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, f"importing plugin module {module} failed: {done.stderr.strip()[-2000:]}"
        assert json.loads(done.stdout) == [], f"importing plugin module {module} imports {done.stdout.strip()}"

    def test_lifecycle_hooks_fire_in_order(self, conformance: Callable[..., ConformanceRun]) -> None:
        """Hooks fire once each, in lifecycle order, with this agent; checkpoint_end gets the result."""
        outcome = conformance()
        run = outcome.finished()
        hooks = [(e.kind, e.checkpoint) for e in outcome.events if e.kind.startswith("hook:") and e.kind != "hook:step"]
        expected: list[tuple[str, str | None]] = [("hook:agent_setup", None)]
        for checkpoint in run.checkpoints:
            expected += [("hook:checkpoint_start", checkpoint.name), ("hook:checkpoint_end", checkpoint.name)]
        expected.append(("hook:agent_cleanup", None))
        assert hooks == expected
        assert all(e.same_agent for e in outcome.events), "a lifecycle hook was given another agent object"
        assert [r.model_dump() for r in outcome.hook_results] == [c.result.model_dump() for c in run.checkpoints]

    def test_lifecycle_methods_called_in_order(self, conformance: Callable[..., ConformanceRun]) -> None:
        """The agent calls none of its own lifecycle methods (``run`` never resets, cleans up, ...)."""
        outcome = conformance()
        run = outcome.finished()
        calls = outcome.method_calls()
        # Initialising through reset() inside setup is fine; anything else out of order is not.
        setup_end = calls.index("run") if "run" in calls else len(calls)
        calls = [c for i, c in enumerate(calls) if not (c == "reset" and 0 < i < setup_end)]
        expected = ["setup"]
        for _ in run.checkpoints:
            expected += ["run", "save_artifacts", "finish_checkpoint", "reset"]
        expected.append("cleanup")
        assert calls == expected

    def test_steps_only_inside_checkpoints(self, conformance: Callable[..., ConformanceRun]) -> None:
        """Every step is emitted between its checkpoint's start and end (none leaks out of ``run``)."""
        outcome = conformance()
        run = outcome.finished()
        inside = False
        stray: list[str] = []
        per_checkpoint: list[int] = []
        for event in outcome.events:
            if event.kind == "hook:checkpoint_start":
                inside = True
                per_checkpoint.append(0)
            elif event.kind == "hook:checkpoint_end":
                inside = False
            elif event.kind == "hook:step":
                if inside:
                    per_checkpoint[-1] += 1
                else:
                    stray.append(event.step_kind or "?")
        assert stray == [], f"steps emitted outside a checkpoint (lost from every trajectory): {stray}"
        assert all(n > 0 for n in per_checkpoint), f"a checkpoint emitted no step: {per_checkpoint}"
        assert [len(c.steps) for c in run.checkpoints] == per_checkpoint, "listeners and the step hook disagree"

    def test_solves_the_sample_problem_in_the_session(self, conformance: Callable[..., ConformanceRun]) -> None:
        """Following the scripted model, the agent's commands run in the session's workspace."""
        run = conformance().finished()
        for checkpoint in run.checkpoints:
            assert not checkpoint.result.had_error, checkpoint.result.error_message
            assert checkpoint.passed, (
                f"{checkpoint.name}: the checkpoint's test failed after the scripted solution"
                f" (exit {checkpoint.test_exit_code}): {checkpoint.test_output[-1000:]}"
            )

    def test_usage_and_model_calls_recorded(self, conformance: Callable[..., ConformanceRun]) -> None:
        """Each model call is an ``LLMCall`` step and counted in usage; costs agree."""
        outcome = conformance()
        run = outcome.finished()
        turns = self.scripted_turns(outcome.plan)
        for checkpoint in run.checkpoints:
            scripted = [t for t in turns if t.checkpoint == checkpoint.name]
            usage = checkpoint.result.usage
            calls = checkpoint.llm_calls()
            assert usage.steps == len(scripted), f"{checkpoint.name}: usage.steps {usage.steps}, made {len(scripted)} calls"
            assert len(calls) == len(scripted), f"{checkpoint.name}: {len(calls)} LLMCall steps for {len(scripted)} calls"
            expected_tokens = sum((t.usage for t in scripted), TokenUsage())
            assert usage.net_tokens.output == expected_tokens.output
            if self.expects_cost:
                expected_cost = sum(outcome.plan.cost_of(t.usage) for t in scripted)
                assert usage.cost == pytest.approx(expected_cost, rel=1e-6), f"{checkpoint.name}: cost {usage.cost}"
                assert sum(c.cost or 0.0 for c in calls) == pytest.approx(usage.cost, rel=1e-6)

    def test_cost_accumulates_across_checkpoints(self, conformance: Callable[..., ConformanceRun]) -> None:
        """Each checkpoint's ``prior_cost`` is what the earlier ones cost; usage restarts at zero."""
        outcome = conformance()
        run = outcome.finished()
        assert len(run.checkpoints) >= 2, f"sample problem '{self.sample_problem}' needs two checkpoints"
        spent = 0.0
        for checkpoint in run.checkpoints:
            assert checkpoint.result.prior_cost == pytest.approx(spent, abs=1e-12), checkpoint.name
            spent += checkpoint.result.usage.cost
        if self.expects_cost:
            assert all(c.result.usage.cost > 0 for c in run.checkpoints)
        assert outcome.agent.prior_cost == pytest.approx(spent, abs=1e-12)
        assert outcome.agent.usage.model_dump() == UsageTracker().model_dump()
        assert outcome.agent.stop_reason is None

    def test_reset_forgets_the_conversation(self, conformance: Callable[..., ConformanceRun]) -> None:
        """With ``reset_context`` the next checkpoint's first model request holds no earlier prompt."""
        outcome = conformance(reset_context=True)
        outcome.finished()
        first, second = self._first_requests(outcome)
        assert outcome.plan.sample.marker(outcome.plan.problem.checkpoints[0]) not in second, (
            "after a reset, the second checkpoint's first model request still carries the first checkpoint's prompt"
        )
        assert first != second

    def test_continued_context_keeps_the_conversation(self, conformance: Callable[..., ConformanceRun]) -> None:
        """With ``reset_context=False`` the next checkpoint continues the conversation."""
        outcome = conformance(reset_context=False)
        run = outcome.finished()
        assert len(run.checkpoints) >= 2
        assert "reset" not in outcome.method_calls(), "reset() was called although reset_context=False"
        _, second = self._first_requests(outcome)
        assert outcome.plan.sample.marker(outcome.plan.problem.checkpoints[0]) in second, (
            "with reset_context=False, the second checkpoint's first model request lost the first checkpoint's prompt"
        )

    def _first_requests(self, outcome: ConformanceRun) -> tuple[str, str]:
        if outcome.requests is None:
            pytest.skip("the 'model_requests' fixture is not provided")
        checkpoints = outcome.plan.problem.checkpoints
        markers = [outcome.plan.sample.marker(c) for c in checkpoints[:2]]
        found = []
        for marker in markers:
            matching = [r for r in outcome.requests if marker in r]
            assert matching, f"no model request carries the prompt of a checkpoint (looked for {marker!r})"
            found.append(matching[0])
        return found[0], found[1]

    def test_errors_captured_in_the_result(self, conformance: Callable[..., ConformanceRun]) -> None:
        """A failing model makes ``had_error`` with a traceback; nothing escapes, cleanup still runs."""
        outcome = conformance(failure=True, checkpoints=1)
        run = outcome.finished()
        result = run.checkpoints[0].result
        assert result.had_error, f"a permanently failing model did not set had_error (stop_reason={result.stop_reason})"
        assert result.error_message and "Traceback (most recent call last)" in result.error_message, (
            f"error_message must hold the traceback, got: {result.error_message!r}"
        )
        assert result.stop_reason, "stop_reason must say why the agent stopped"
        assert outcome.method_calls()[-1] == "cleanup"
        assert outcome.events[-1].kind == "hook:agent_cleanup"
        assert outcome.plan.secret.get_secret_value() not in result.error_message

    def test_limits_stop_the_agent(self, conformance: Callable[..., ConformanceRun]) -> None:
        """A step limit stops the agent before its next model call, as a stop reason, not an error."""
        outcome = conformance(cost_limits=AgentCostLimits(step_limit=1), checkpoints=1)
        result = outcome.finished().checkpoints[0].result
        assert not result.had_error, result.error_message
        assert result.stop_reason == "step_limit"
        assert result.usage.steps == 1

    def test_artifacts_written_without_secrets(self, conformance: Callable[..., ConformanceRun]) -> None:
        """Each checkpoint leaves non-empty artifacts; the credential reaches no output or log."""
        outcome = conformance()
        run = outcome.finished()
        secret = outcome.plan.secret.get_secret_value()
        for checkpoint in run.checkpoints:
            files = [p for p in checkpoint.artifacts_dir.rglob("*") if p.is_file()]
            assert files, f"{checkpoint.name}: save_artifacts wrote nothing into {checkpoint.artifacts_dir}"
            assert any(p.stat().st_size for p in files), f"{checkpoint.name}: every artifact is empty"
            for path in files:
                assert secret.encode() not in path.read_bytes(), f"the credential leaked into artifact {path.name}"
            assert secret not in checkpoint.result.model_dump_json()
            assert all(secret not in s.model_dump_json() for s in checkpoint.steps), "the credential is in a step"
        assert secret not in outcome.log_text, "the credential reached a log record"

    def test_result_round_trips_as_json(self, conformance: Callable[..., ConformanceRun]) -> None:
        """The result is a consistent record: times ordered, JSON round trip exact."""
        run = conformance().finished()
        for checkpoint in run.checkpoints:
            result = checkpoint.result
            assert isinstance(result.started, datetime) and result.started.tzinfo is not None
            assert result.completed >= result.started
            assert result.elapsed == pytest.approx((result.completed - result.started).total_seconds(), abs=1e-3)
            again = CheckpointInferenceResult.model_validate_json(result.model_dump_json())
            assert again == result

    def test_no_process_outlives_cleanup(self, conformance: Callable[..., ConformanceRun]) -> None:
        """After cleanup no process the agent started is still running."""
        before = frozenset(_child_pids(os.getpid()))
        conformance(fresh=True).finished()
        deadline = time.monotonic() + self.process_grace
        while True:
            leaked = _child_pids(os.getpid(), skip=before)
            if not leaked or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert not leaked, f"processes outlived cleanup: {[(p, _describe(p)) for p in sorted(leaked)]}"

    def test_cleanup_without_setup(self, build_agent: AgentFactory) -> None:
        """``cleanup`` works on an agent whose ``setup`` never ran (the runner cleans up after a failed setup)."""
        from agentrig.agents import lifecycle

        agent = build_agent(ConformancePlan(sample=load_sample_problem(self.sample_problem)))
        lifecycle.cleanup_agent(agent)
