"""Step agents: write an agent as ``step(observation) -> AgentOutput``, the core runs the loop.

A step agent does not own a ``run(task)`` loop. Its config (a
:class:`StepAgentConfig`) builds it with :meth:`StepAgentConfig.make` from the
action set the core offers; the core's :class:`StepAgentAdapter` (an ordinary
:class:`agentrig.Agent`) drives it under the checkpoint lifecycle:

1. the first observation holds the checkpoint's task text and facts about the
   workspace; later ones the results of the previous step's actions;
2. ``step`` returns :class:`AgentOutput`: ``actions`` to run, the
   ``llm_calls`` it made (each recorded with its tag, cost and tokens) and its
   ``thoughts``;
3. the actions run as tools in the session's runtime (``bash``,
   ``read_file``, ``write_file``), in order;
4. no action, or the ``stop`` action, ends the checkpoint; so do the limits
   (``max_steps``, ``cost_limits``). An exception in ``step`` is recorded as an
   ``error`` step (after everything before it is saved) and ends the
   checkpoint as an error.

A plugin declares a step agent with the adapter as its ``agent``::

    agentrig.AgentSpec(name="my_step", description="...",
                       config="my_pkg.agent:MyStepConfig",
                       agent="agentrig.agents.step:StepAgentAdapter")
"""

from __future__ import annotations

import shlex
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentrig.agents.interface import Agent, AgentConfigBase, AgentContext
from agentrig.boundary import Seconds
from agentrig.errors import AgentSetupError, AgentStepError
from agentrig.runtime.interface import Invocation
from agentrig.trajectory import ErrorStep, LLMCall, ThinkingStep, ToolUseStep, UserStep

if TYPE_CHECKING:
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.llm.interface import ChatModel
    from agentrig.model_definition import ModelDefinition, ThinkingPreset

#: The action that ends the checkpoint; its ``answer`` argument is the agent's answer.
STOP_ACTION = "stop"


class ActionSchema(BaseModel):
    """One action the agent may take: a name, what it does, a JSON schema of its arguments.

    The shape of a tool in the providers' APIs: :meth:`as_tool` gives the
    :class:`agentrig.llm.interface.ToolSpec` to offer a model.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def as_tool(self) -> Any:
        """The :class:`~agentrig.llm.interface.ToolSpec` of this action."""
        from agentrig.llm.interface import ToolSpec

        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)


class Action(BaseModel):
    """An action the agent chose: which one, with what arguments (``id`` pairs it with its result)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ActionResult(BaseModel):
    """What running one action gave: its output, exit code and whether it failed."""

    model_config = ConfigDict(extra="forbid")

    action_id: str | None
    name: str
    output: str
    exit_code: int | None = None
    is_error: bool = False


class WorkspaceFacts(BaseModel):
    """The workspace as the agent's commands see it: its path and the files at its top."""

    model_config = ConfigDict(extra="forbid")

    path: str
    files: list[str] = Field(default_factory=list, description="Top-level entries, directories ending in '/'.")


class Observation(BaseModel):
    """What the agent sees before a step.

    ``task`` is the checkpoint's task text on the first step of a checkpoint
    (``None`` after); ``results`` the results of the previous step's actions;
    ``step`` counts the steps of this checkpoint from 0.
    """

    model_config = ConfigDict(extra="forbid")

    step: int
    task: str | None = None
    results: list[ActionResult] = Field(default_factory=list)
    workspace: WorkspaceFacts


class AgentOutput(BaseModel):
    """What one step produced: the ``actions`` to run, the ``llm_calls`` made, the ``thoughts``."""

    model_config = ConfigDict(extra="forbid")

    actions: list[Action] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    thoughts: str | None = None


def core_action_set(description_overrides: dict[str, str] | None = None) -> list[ActionSchema]:
    """The actions the core runs: ``bash``, ``read_file``, ``write_file``, ``stop``.

    ``description_overrides`` replaces descriptions by action name; an
    unknown name raises :class:`ValueError` naming the known ones.
    """
    actions = [
        ActionSchema(
            name="bash",
            description="Run a shell command in the workspace; returns its output and exit code.",
            parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        ),
        ActionSchema(
            name="read_file",
            description="Read a text file of the workspace (path relative to it).",
            parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        ),
        ActionSchema(
            name="write_file",
            description="Write a text file in the workspace (path relative to it), creating directories.",
            parameters={
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        ),
        ActionSchema(
            name=STOP_ACTION,
            description="End the task; 'answer' says what was done.",
            parameters={"type": "object", "properties": {"answer": {"type": "string"}}},
        ),
    ]
    overrides = dict(description_overrides or {})
    names = [a.name for a in actions]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise ValueError(f"description_overrides: unknown action(s) {', '.join(unknown)} (actions: {', '.join(names)})")
    return [a.model_copy(update={"description": overrides[a.name]}) if a.name in overrides else a for a in actions]


class StepAgent(ABC):
    """An agent written as one step at a time; built by :meth:`StepAgentConfig.make`.

    ``model`` is the chat client for the run's ``--model`` (``None`` for a
    model-less run); call it, and return every call in ``AgentOutput.llm_calls``
    (``response.to_llm_call(tag)``) so that its cost is counted.
    """

    def __init__(self, config: StepAgentConfig, action_set: list[ActionSchema], model: ChatModel | None = None) -> None:
        """Keep the config, the actions offered and the model client."""
        self.config = config
        self.action_set = action_set
        self.model = model

    @abstractmethod
    def step(self, observation: Observation) -> AgentOutput:
        """Look at ``observation`` and say what to do next."""

    def reset(self) -> None:
        """Forget the conversation (a new checkpoint with a fresh context); the default keeps nothing."""

    def close(self) -> None:
        """Release what the agent holds; called once at the end."""


class StepAgentConfig(AgentConfigBase):
    """Configuration of a step agent; subclasses narrow ``type`` and implement :meth:`make`."""

    max_steps: int = Field(default=50, ge=1, description="Steps per checkpoint before the agent is stopped.")
    description_overrides: dict[str, str] = Field(
        default_factory=dict, description="Action name to replacement description (bash, read_file, write_file, stop)."
    )
    command_timeout: Seconds = Field(default=120.0, description="Seconds before a bash action is killed.")
    max_output_chars: int = Field(default=20_000, ge=200, description="Action output kept (head and tail).")
    base_url: str | None = Field(default=None, description="Model endpoint; overrides the provider's env var.")

    @model_validator(mode="after")
    def _known_actions(self) -> StepAgentConfig:
        core_action_set(self.description_overrides)  # raises on an unknown action name
        return self

    def make(self, action_set: list[ActionSchema], model: ChatModel | None = None) -> StepAgent:
        """Build the step agent offered ``action_set``, calling ``model``."""
        raise NotImplementedError(f"{type(self).__name__} must implement make(action_set, model)")


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters cut ...]\n{text[-half:]}"


class StepAgentAdapter(Agent):
    """Drives a :class:`StepAgent` as an :class:`agentrig.Agent` (name it as a step agent's ``agent``)."""

    def __init__(
        self,
        config: StepAgentConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool = False,
        thinking_preset: ThinkingPreset | None = None,
        thinking_max_tokens: int | None = None,
    ) -> None:
        """Prepare; the step agent is made at :meth:`setup`."""
        super().__init__(config.type, problem_name, config.cost_limits, model.pricing, verbose)
        self.config = config
        self.model_definition = model
        self.credential = credential
        self.thinking_preset = thinking_preset
        self.thinking_max_tokens = thinking_max_tokens
        self.chat_model: ChatModel | None = None
        self.step_agent: StepAgent | None = None
        self.session: Session | None = None
        self.answer: str | None = None
        self.outputs: list[AgentOutput] = []

    @classmethod
    def _from_config(cls, config: AgentConfigBase, context: AgentContext) -> StepAgentAdapter:
        if not isinstance(config, StepAgentConfig):
            raise AgentSetupError(
                f"agent '{config.type}': StepAgentAdapter needs a config deriving from agentrig.StepAgentConfig"
            )
        if context.model is None:
            raise AgentSetupError(f"agent '{config.type}' needs a model: pass --model PROVIDER/MODEL")
        return cls(
            config, context.model, context.credential, context.problem_name, context.verbose,
            context.thinking_preset, context.thinking_max_tokens,
        )

    def tool_specs(self) -> list[Any]:
        """The action set, as tools (descriptions overridden)."""
        return [action.as_tool() for action in core_action_set(self.config.description_overrides)]

    # -- lifecycle ----------------------------------------------------------

    def setup(self, session: Session) -> None:
        """Open the model client and make the step agent over the core's action set."""
        self.session = session
        self.chat_model = self._make_chat_model()
        actions = core_action_set(self.config.description_overrides)
        agent = self.config.make(actions, self.chat_model)
        if not isinstance(agent, StepAgent):
            raise AgentSetupError(f"{type(self.config).__name__}.make returned {type(agent).__name__}, not a StepAgent")
        self.step_agent = agent

    def _make_chat_model(self) -> ChatModel | None:
        if self.model_definition.provider in ("none", ""):
            return None
        from agentrig.llm.errors import LLMError
        from agentrig.llm.factory import create_chat_model

        options: dict[str, Any] = {}
        if self.thinking_preset is not None:
            options["thinking"] = self.thinking_preset
        if self.thinking_max_tokens is not None:
            options["thinking_budget"] = self.thinking_max_tokens
        try:
            return create_chat_model(self.model_definition, self.credential, base_url=self.config.base_url, **options)
        except LLMError as exc:
            raise AgentSetupError(f"model {self.model_definition.id}: {exc.message}") from None

    def reset(self) -> None:
        """Let the step agent forget its conversation."""
        if self.step_agent is not None:
            self.step_agent.reset()

    def save_artifacts(self, path: Path) -> None:
        """``steps.jsonl``: every ``AgentOutput`` of the checkpoint, one per line."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        from agentrig.atomic import write_text_atomic

        write_text_atomic(path / "steps.jsonl", "".join(o.model_dump_json() + "\n" for o in self.outputs))

    def cleanup(self) -> None:
        """Close the step agent and the model client; idempotent."""
        agent, self.step_agent = self.step_agent, None
        model, self.chat_model = self.chat_model, None
        try:
            if agent is not None:
                agent.close()
        finally:
            if model is not None:
                model.close()

    # -- the loop -----------------------------------------------------------

    def run(self, task: str) -> None:
        """Step until no action, ``stop``, ``max_steps`` or a limit."""
        if self.step_agent is None or self.session is None:
            raise AgentSetupError("the step agent is not set up: call setup(session) first")
        self.outputs = []
        self.answer = None
        self.stop_reason = None
        self.emit_step(UserStep(content=task))
        observation = Observation(step=0, task=task, workspace=self._facts())
        for index in range(self.config.max_steps):
            self.check_limits()
            try:
                output = self.step_agent.step(observation)
                if not isinstance(output, AgentOutput):
                    raise TypeError(f"step() returned {type(output).__name__}, not an AgentOutput")
            except Exception as exc:
                self.stop_reason = "error"
                self.emit_step(ErrorStep(message=f"step {index} failed: {type(exc).__name__}: {exc}", error_type="step_error"))
                raise AgentStepError(f"step {index} of {self.agent_name} failed: {type(exc).__name__}: {exc}") from exc
            self.outputs.append(output)
            self._record(output)
            if not output.actions:
                self.stop_reason = "no_actions"
                return
            results = []
            for action in output.actions:
                if action.name == STOP_ACTION:
                    self.answer = str(action.arguments.get("answer", "")) or None
                    self.emit_step(ToolUseStep(tool=STOP_ACTION, arguments=action.arguments, tool_call_id=action.id,
                                               result=self.answer))
                    self.stop_reason = "submitted"
                    return
                results.append(self._act(action))
            observation = Observation(step=index + 1, results=results, workspace=self._facts())
        self.stop_reason = "step_limit"

    def _record(self, output: AgentOutput) -> None:
        for call in output.llm_calls:
            self.usage.step(call.usage, call.cost or 0.0, count_step=False)
            self.emit_step(call)
        self.usage.steps += 1
        if output.thoughts:
            self.emit_step(ThinkingStep(content=output.thoughts))

    def _facts(self) -> WorkspaceFacts:
        assert self.session is not None
        root = Path(self.session.workspace.path)
        try:
            entries = sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir())
        except OSError:
            entries = []
        return WorkspaceFacts(path=self.session.runtime.workdir, files=entries[:200])

    def _act(self, action: Action) -> ActionResult:
        """Run one action in the session's runtime and record it."""
        assert self.session is not None
        runtime = self.session.runtime
        clock = time.monotonic()
        args = action.arguments
        exit_code: int | None = None
        try:
            if action.name == "bash":
                result = runtime.exec(Invocation(str(args["command"]), timeout=self.config.command_timeout))
                output, exit_code = result.stdout + result.stderr, result.exit_code
                if result.timed_out:
                    output += f"\n[killed after {self.config.command_timeout:g} s]"
            elif action.name == "read_file":
                result = runtime.exec(Invocation(["cat", "--", str(args["path"])], timeout=self.config.command_timeout))
                output, exit_code = (result.stdout if result.exit_code == 0 else result.stderr), result.exit_code
            elif action.name == "write_file":
                path = str(args["path"])
                script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
                result = runtime.exec(
                    Invocation(["sh", "-c", script, "sh", path], stdin=str(args["content"]), timeout=self.config.command_timeout)
                )
                exit_code = result.exit_code
                output = f"wrote {path}" if exit_code == 0 else result.stderr
            else:
                known = ", ".join(a.name for a in core_action_set())
                output, exit_code = f"unknown action '{action.name}' (actions: {known})", None
        except KeyError as exc:
            output = f"action '{action.name}' is missing the argument {exc} (arguments: {shlex.quote(str(args))})"
        is_error = exit_code != 0
        output = _clip(output, self.config.max_output_chars)
        self.emit_step(ToolUseStep(tool=action.name, arguments=args, tool_call_id=action.id, result=output,
                                   is_error=is_error, exit_code=exit_code, elapsed=time.monotonic() - clock))
        return ActionResult(action_id=action.id, name=action.name, output=output, exit_code=exit_code, is_error=is_error)
