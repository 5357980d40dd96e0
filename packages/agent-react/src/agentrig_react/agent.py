"""The ``react`` agent: call the model with the tools, run the calls it makes, repeat.

One turn: check the limits, compact the history if it outgrew its share of
the context window, call the model (tag ``act``), run the tool calls of the
reply (native ones, or ones written in text and repaired), append their
results. The run stops on ``submit``, on a reply without tool calls, or on
a limit, each recorded as ``stop_reason``. Every step is emitted as it
happens.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig import Agent, AgentConfigBase, AgentContext, AgentError, AgentSetupError, AgentStepError, CheckpointInferenceResult
from agentrig.atomic import write_model_atomic, write_text_atomic
from agentrig.llm.interface import ChatMessage, ChatModel, ChatResponse, ToolCall
from agentrig.scratch import temp_dir
from agentrig.trajectory import AgentTextStep, ErrorStep, ThinkingStep, ToolUseStep, UserStep, parse_step
from agentrig_react import compaction, prompts
from agentrig_react.builtin_tools import builtin_tools
from agentrig_react.config import ReactConfig, SubagentConfig
from agentrig_react.context import ToolContext
from agentrig_react.json_repair import JSONRepairError, loads_lenient
from agentrig_react.loop_detection import RepeatDetector, RepeatVerdict
from agentrig_react.planning import PlanRecord, PlanRunner
from agentrig_react.registry import Tool, ToolDefinitionError, ToolOutput, ToolRegistry
from agentrig_react.subagents import DelegateInput, SubagentRun, SubagentTool
from agentrig_react.text_calls import ToolCallParseError, parse_tool_calls

if TYPE_CHECKING:
    from pydantic import BaseModel

    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition, ThinkingPreset
    from agentrig.trajectory import TrajectoryStep
    from agentrig_react.mcp_tools import McpConnections


class _RunStopped(Exception):
    """A limit ended the run (``stop_reason`` is set); unwinds to :meth:`ReactAgent.run`."""


@dataclass
class _PlannedCall:
    """A tool call read from a reply, before it runs."""

    id: str | None
    name: str
    arguments: dict[str, Any]
    error: str | None = None
    warn: bool = False
    output: ToolOutput | None = None
    skipped: bool = field(default=False)


class ReactAgent(Agent):
    """A tool-calling ReAct loop over any agentrig chat model (OpenAI, Anthropic, replay).

    Tools beyond the built-in ones can be added with :meth:`add_tool` and
    :meth:`add_subagent` before :meth:`setup`. ``submission`` holds what the
    last ``submit`` call said.
    """

    #: A fork (``--from ... --keep-context``) takes up the conversation another run recorded.
    restores_context = True

    def __init__(
        self,
        config: ReactConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool = False,
        image: str | None = None,
        thinking_preset: ThinkingPreset | None = None,
        thinking_max_tokens: int | None = None,
    ) -> None:
        """Prepare the agent; nothing connects or runs until :meth:`setup`."""
        super().__init__("react", problem_name, config.cost_limits, model.pricing, verbose)
        self.config = config
        self.model_definition = model
        self.credential = credential
        self.image = image
        self.thinking_preset = thinking_preset
        self.thinking_max_tokens = thinking_max_tokens
        self.chat_model: ChatModel | None = None
        self.session: Session | None = None
        self.registry = ToolRegistry(builtin_tools())
        self.context: ToolContext | None = None
        self.messages: list[ChatMessage] = []
        self.submission: str | None = None
        self.subagent_runs: list[SubagentRun] = []
        self._subagents: list[SubagentTool] = []
        self._python_tools: list[str] = []
        self._trajectory: list[TrajectoryStep] = []
        self._responses: list[ChatResponse] = []
        self._repeats = RepeatDetector(config.max_consecutive_repeats)
        self._format_errors = 0
        self._nudges = 0
        self._current_task: str | None = None
        self._context_base = 0
        self._context_base_len = 0
        self._scratch: Path | None = None
        self._usage_lock = threading.Lock()
        self._calls = 0
        self._plan_record: PlanRecord | None = None
        self._mcp: McpConnections | None = None
        #: The resolved values of the MCP servers' env and headers: scrubbed from their saved stderr.
        self._mcp_secrets: list[str] = []

    @classmethod
    def _from_config(cls, config: AgentConfigBase, context: AgentContext) -> ReactAgent:
        if not isinstance(config, ReactConfig):
            config = ReactConfig.model_validate(config.model_dump())
        return cls(
            config, context.require_model("react"), context.credential, context.problem_name, context.verbose, context.image,
            context.thinking_preset, context.thinking_max_tokens,
        )

    def subagent_context(self, problem_name: str) -> AgentContext:
        """The :class:`~agentrig.AgentContext` of a subagent of this agent: its model, credential, image,
        thinking and verbosity, working on ``problem_name``."""
        return AgentContext(
            model=self.model_definition, credential=self.credential, problem_name=problem_name, verbose=self.verbose,
            image=self.image, thinking_preset=self.thinking_preset, thinking_max_tokens=self.thinking_max_tokens,
        )

    # -- tools --------------------------------------------------------------

    def add_tool(self, tool: Tool) -> None:
        """Offer another tool (before :meth:`setup`); it is offered even when ``tools`` lists others."""
        self.registry.add(tool)
        self._python_tools.append(tool.name)

    def add_subagent(self, subagent: SubagentTool) -> None:
        """Offer an agent as a tool (before :meth:`setup`)."""
        subagent.on_finish = self._subagent_finished
        subagent.parent = self
        subagent.parent_steps = lambda: list(self._trajectory)
        self._subagents.append(subagent)
        self.registry.add(subagent.as_tool())

    def tool_specs(self) -> list[Any]:
        """The tools the model is offered: after :meth:`setup` exactly those; before it, the same
        (built-in and added tools, subagents, the config's ``tools`` allow-list and description overrides)."""
        if self.session is not None:
            return self.registry.specs()
        registry = ToolRegistry(self.registry)
        try:
            for sub in self.config.subagents:
                if sub.name not in registry:
                    registry.add(self._subagent_from_config(sub).as_tool())
            if self.config.tools is not None:
                registry.keep(self.config.tools, also=self._python_tools)
            registry.override_descriptions(self.config.description_overrides)
        except ToolDefinitionError as exc:
            raise AgentSetupError(f"react config: {exc}") from None
        return registry.specs()

    def _subagent_from_config(self, sub: SubagentConfig) -> SubagentTool:
        from agentrig.plugins import get_agent_config_cls

        where = f"react config: subagents '{sub.name}'"
        try:
            config_cls = get_agent_config_cls(sub.agent["type"])
        except Exception as exc:
            raise AgentSetupError(f"{where}: {_one_line(exc)}") from None
        agent_config = dict(sub.agent)
        if sub.tools is not None:
            if "tools" not in config_cls.model_fields:
                raise AgentSetupError(f"{where}: tools: agent type '{sub.agent['type']}' takes no tool allow-list")
            agent_config["tools"] = sub.tools
            agent_config = self._inherit_mcp_servers(agent_config, sub.tools)
        try:
            sub_config = config_cls.model_validate(agent_config)
        except Exception as exc:
            raise AgentSetupError(f"{where}: {_one_line(exc)}") from None
        input_model: Any = DelegateInput
        if sub.input is not None:
            try:
                input_model = _import_object(sub.input)
            except Exception as exc:
                raise AgentSetupError(f"{where}: input: cannot import '{sub.input}': {_one_line(exc)}") from None

        def build() -> Agent:
            return Agent.from_config(sub_config, self.subagent_context(f"{self.problem_name}/{sub.name}"))

        try:
            made = SubagentTool(
                sub.name,
                sub.description,
                build,
                input_model=input_model,
                subdirectory=sub.subdirectory,
                confine=sub.confine,
                isolation=sub.isolation,
                context=sub.context,
            )
        except ToolDefinitionError as exc:
            raise AgentSetupError(f"{where}: {exc}") from None
        made.tools = sub.tools
        return made

    def _inherit_mcp_servers(self, agent_config: dict[str, Any], tools: list[str]) -> dict[str, Any]:
        """``agent_config`` with the parent's MCP servers its allow-list names (``mcp__S``, ``mcp__S__T``)
        added to its own ``mcp_servers``; a server it configures itself under the same name wins."""
        from agentrig_react.mcp_tools import server_of

        named = [server for server in dict.fromkeys(server_of(t) for t in tools) if server in self.config.mcp_servers]
        if not named:
            return agent_config
        own = dict(agent_config.get("mcp_servers") or {})
        for server in named:
            own.setdefault(server, self.config.mcp_servers[server].model_dump(mode="json"))
        return {**agent_config, "mcp_servers": own}

    def _subagent_finished(self, run: SubagentRun) -> None:
        with self._usage_lock:
            self.subagent_runs.append(run)
            if run.result is not None:
                self.usage.add(run.result.usage)

    # -- lifecycle ----------------------------------------------------------

    def setup(self, session: Session) -> None:
        """Connect the model client, build the tools and their context over ``session``."""
        from agentrig_react.confinement import ConfinementError

        self.session = session
        for sub in self.config.subagents:
            self.add_subagent(self._subagent_from_config(sub))
        for subagent in self._subagents:
            try:
                subagent.check(session)
            except ConfinementError as exc:
                raise AgentSetupError(f"react config: subagents '{subagent.name}': {exc}") from None
        # in the session's directory (under the run directory in `agentrig run`): nothing left in /tmp by a kill -9
        if self._scratch is None:
            self._scratch = temp_dir("agentrig-react-", session=session)
        self._start_mcp(session)
        try:
            if self.config.tools is not None:
                self.registry.keep(self._expand_allow_list(self.config.tools), also=self._python_tools)
            self.registry.override_descriptions(self.config.description_overrides)
        except ToolDefinitionError as exc:
            raise AgentSetupError(f"react config: {exc}") from None
        if self.chat_model is None:
            self.chat_model = self._make_chat_model()
        for subagent in self._subagents:
            subagent.session = session
            subagent.artifacts_root = self._scratch / "subagents"
        self.context = ToolContext(
            root=Path(session.workspace.path),
            workdir=session.runtime.workdir,
            runtime=session.runtime,
            command_timeout=self.config.command_timeout,
            max_output_chars=self.config.max_output_chars,
        )

    def _mcp_servers(self) -> dict[str, Any]:
        """The MCP servers with their ``${VAR}`` values from this process's environment; one line when one is unset."""
        import os

        from agentrig.agents.mcp import McpConfigError, resolve_servers

        try:
            return resolve_servers(self.config.mcp_servers, os.environ)
        except McpConfigError as exc:
            raise AgentSetupError(f"react config: {exc}") from None

    def _start_mcp(self, session: Session) -> None:
        """Start the MCP servers (stdio ones on the host, in the workspace; in the runtime's bubblewrap sandbox
        under ``sandbox: bwrap``) and offer their tools; the run's teardown stops them on SIGINT/SIGTERM,
        :meth:`cleanup` otherwise."""
        if not self.config.mcp_servers or self._mcp is not None:
            return
        from agentrig.agents.mcp import server_secrets
        from agentrig.runtime import teardown
        from agentrig.runtime.local import LocalRuntime
        from agentrig_react.mcp_tools import McpConnections, McpStartError

        assert self._scratch is not None
        runtime = session.runtime
        sandbox = runtime.sandbox_spec() if isinstance(runtime, LocalRuntime) and runtime.config.sandbox == "bwrap" else None
        servers = self._mcp_servers()
        self._mcp_secrets = server_secrets(servers)
        connections = McpConnections(servers, Path(session.workspace.path), self._scratch / "mcp", sandbox=sandbox)
        try:
            tools = connections.open()
        except McpStartError as exc:
            raise AgentSetupError(f"react config: {exc}") from None
        self._mcp = connections
        teardown.track(connections)
        for made in tools:
            self.registry.add(made)

    def _expand_allow_list(self, tools: list[str]) -> list[str]:
        """``tools`` with each ``mcp__SERVER`` entry replaced by the names of that server's tools."""
        servers = {name: [t.name for t in self._mcp or [] if t.server == name] for name in self.config.mcp_servers}
        expanded: list[str] = []
        for name in tools:
            expanded.extend(servers.get(name.removeprefix("mcp__"), [name]) if name.startswith("mcp__") else [name])
        return expanded

    def _model_options(self) -> dict[str, Any]:
        options: dict[str, Any] = dict(self.config.model_options)
        if self.thinking_preset is not None:
            options.setdefault("thinking", self.thinking_preset)
        if self.thinking_max_tokens is not None:
            options.setdefault("thinking_budget", self.thinking_max_tokens)
        return options

    def preflight(self) -> None:
        """Check the model's endpoint, credential and ``model_options`` without calling it."""
        from agentrig.llm.errors import LLMError
        from agentrig.llm.factory import check_chat_model

        try:
            check_chat_model(self.model_definition, self.credential, base_url=self.config.base_url, **self._model_options())
        except LLMError as exc:
            raise AgentSetupError(f"model {self.model_definition.id}: {exc.message}") from None
        self._mcp_servers()

    def _make_chat_model(self) -> ChatModel:
        from agentrig.llm.errors import LLMError
        from agentrig.llm.factory import create_chat_model

        try:
            return create_chat_model(
                self.model_definition, self.credential, base_url=self.config.base_url, **self._model_options()
            )
        except LLMError as exc:
            raise AgentSetupError(f"model {self.model_definition.id}: {exc.message}") from None

    def reset(self) -> None:
        """Forget the conversation (usage stays)."""
        self.messages = []
        self._repeats.reset()
        self._format_errors = 0
        self._nudges = 0
        self._current_task = None
        self._context_base = 0
        self._context_base_len = 0

    def cleanup(self) -> None:
        """Stop the MCP servers, close the model client and drop scratch files; idempotent."""
        connections, self._mcp = self._mcp, None
        if connections is not None:
            from agentrig.runtime import teardown

            connections.close()
            teardown.untrack(connections)
        model, self.chat_model = self.chat_model, None
        if model is not None:
            try:
                model.close()
            except Exception as exc:  # closing connections must not fail a finished run
                self.log.warning("closing the model client failed: %s", exc)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    # -- artifacts ----------------------------------------------------------

    def save_artifacts(self, path: Path) -> None:
        """Write ``messages.jsonl``, ``trajectory.jsonl``, ``replay.jsonl`` (the model's replies) and subagents'."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        records: dict[str, Sequence[BaseModel]] = {
            "messages.jsonl": self.messages, "trajectory.jsonl": self._trajectory, "replay.jsonl": self._responses
        }
        for name, lines in records.items():
            write_text_atomic(path / name, "".join(line.model_dump_json() + "\n" for line in lines))
        if self._plan_record is not None:
            write_model_atomic(path / "plan.json", self._plan_record)
        if self._scratch is not None and (self._scratch / "subagents").is_dir():
            shutil.copytree(self._scratch / "subagents", path / "subagents", dirs_exist_ok=True)
        if self._scratch is not None and self.config.mcp_servers:
            self._save_mcp_logs(self._scratch / "mcp", path)

    def _save_mcp_logs(self, logs: Path, path: Path) -> None:
        """Each MCP server's stderr so far into ``path/mcp/``, its secrets and the model's key scrubbed."""
        from agentrig_react.mcp_tools import save_stderr_logs

        key = self.credential.secret() if self.credential is not None else None
        save_stderr_logs(logs, path, [*self._mcp_secrets, *([key] if key else [])])

    def restore_context(self, artifacts: Path) -> None:
        """Take up the conversation of ``artifacts/messages.jsonl`` (another run's checkpoint): the next
        checkpoint's task is appended to it, as when the conversation had never stopped."""
        from agentrig_react.conversation import read_messages

        self.reset()
        self.messages = read_messages(artifacts)

    # -- steps --------------------------------------------------------------

    def _emit(self, step: TrajectoryStep) -> None:
        self._trajectory.append(step)
        if self.verbose:
            self.log.info("%s", step.model_dump_json(exclude={"timestamp"})[:500])
        self.emit_step(step)

    def _stop(self, reason: str, message: str | None = None) -> None:
        self.stop_reason = reason
        if message:
            self._emit(ErrorStep(message=message, error_type=reason))

    # -- the loop -----------------------------------------------------------

    def _ready(self) -> tuple[ChatModel, ToolContext]:
        if self.chat_model is None or self.context is None:
            raise AgentSetupError("the react agent is not set up: call setup(session) first")
        return self.chat_model, self.context

    def run(self, task: str) -> None:
        """Work on ``task`` until the model submits, stops calling tools, or a limit is hit."""
        model, context = self._ready()
        self._trajectory = []
        self._responses = []
        self.submission = None
        self.stop_reason = None
        limit = self.config.wall_clock_limit
        context.deadline = time.monotonic() + limit if limit else None
        specs = self.registry.specs()
        if not self.messages:
            system = prompts.system_prompt(
                context.workdir, self.config.system_prompt, specs, native_tools=self.config.native_tools
            )
            self.messages.append(ChatMessage(role="system", content=system))
        self.messages.append(ChatMessage(role="user", content=task))
        self._current_task = task
        self._emit(UserStep(content=task))
        self._repeats.reset()
        self._format_errors = 0
        self._nudges = 0
        self._calls = 0
        self._plan_record = None
        tools = specs if self.config.native_tools else None
        try:
            if self.config.planning and self._run_planned(model, context, task):
                return
            while True:
                self._check_running(context)
                self.check_limits()
                self._maybe_compact(model)
                self.check_limits()
                response = self._call(model, tools, "act")
                if self._handle_reply(response.message, context):
                    return
        except _RunStopped:
            return

    def _check_running(self, context: ToolContext) -> None:
        """Stop (``_RunStopped``) when the wall-clock limit or ``max_steps`` model calls are reached."""
        limit = self.config.wall_clock_limit
        if context.deadline is not None and time.monotonic() >= context.deadline:
            self._stop("wall_clock_limit", f"wall-clock limit of {limit:g} s reached")
            raise _RunStopped
        if self._calls >= self.config.max_steps:
            self._stop("step_limit", f"max_steps ({self.config.max_steps}) model calls reached")
            raise _RunStopped

    def _run_planned(self, model: ChatModel, context: ToolContext, task: str) -> bool:
        """Plan -> execute -> replan (see :mod:`agentrig_react.planning`); ``False``: go on in the ReAct loop."""
        record = self._plan_record = PlanRecord(task=task)

        def call(tag: str) -> ChatMessage:
            self._check_running(context)
            self.check_limits()
            self._maybe_compact(model)
            self.check_limits()
            message = self._call(model, None, tag).message
            if message.tool_calls:
                # a plan is text: tool calls made anyway are read as the plan's steps
                message = message.model_copy(
                    update={
                        "content": json.dumps([{"tool": c.name, "arguments": c.arguments} for c in message.tool_calls]),
                        "tool_calls": [],
                    }
                )
            self.messages.append(message)
            if message.thinking:
                self._emit(ThinkingStep(content=message.thinking))
            if message.content:
                self._emit(AgentTextStep(content=message.content))
            return message

        try:
            return PlanRunner(self, record).run(model, context, call)
        finally:
            if record.stop_reason is None and self.stop_reason is not None:
                record.stop_reason = self.stop_reason

    def _plan_format_error(self, reason: str) -> bool:
        """An unreadable plan: say so to the model; ``True`` when the format-error limit is reached."""
        self._emit(ErrorStep(message=f"format error: {reason}", error_type="format_error"))
        self.messages.append(
            ChatMessage(
                role="user",
                content=f"Format error: {reason}.\n\nReply with only the plan: a JSON array of "
                '{"tool": ..., "arguments": {...}} steps, or [] to work step by step.',
            )
        )
        return self._count_format_error(reason)

    def _call(self, model: ChatModel, tools: Sequence[Any] | None, tag: str, retried: bool = False) -> ChatResponse:
        from agentrig.llm.errors import ContextLengthError, LLMError

        sent = len(self.messages)
        try:
            response = model.complete(
                self.messages, tools, max_tokens=self.config.max_tokens, temperature=self.config.temperature
            )
        except ContextLengthError as exc:
            # The estimate missed: compact now and try once more before giving up.
            if not retried and self._compact(model):
                return self._call(model, tools, tag, retried=True)
            self._stop("context_length", f"model call failed: {exc}")
            raise AgentStepError(f"the conversation no longer fits the model's context: {exc}") from None
        except LLMError as exc:
            self._stop("model_error", f"model call failed: {exc}")
            raise AgentStepError(f"model call failed: {exc}") from None
        self._record(response, tag)
        if tag != "summary":
            self._calls += 1
        self._context_base = response.usage.context
        self._context_base_len = sent
        return response

    def _record(self, response: ChatResponse, tag: str) -> None:
        self._responses.append(response)
        with self._usage_lock:
            self.usage.step(response.usage, response.cost or 0.0, count_step=tag != "summary")
        self._emit(response.to_llm_call(tag))

    def _handle_reply(self, message: ChatMessage, context: ToolContext) -> bool:
        """Take in one reply; ``True`` when the run is over."""
        calls, parse_error = self._read_calls(message)
        self.messages.append(message)
        if message.thinking:
            self._emit(ThinkingStep(content=message.thinking))
        if message.content:
            self._emit(AgentTextStep(content=message.content))
        if parse_error is not None:
            return self._format_error(parse_error)
        if not calls:
            return self._no_tool_calls()
        self._nudges = 0
        stop = self._run_calls(calls, context, native=bool(message.tool_calls))
        if all(call.error for call in calls):
            return self._count_format_error("the arguments of every tool call were unreadable")
        self._format_errors = 0
        if stop is not None:
            self._stop(stop)
            return True
        return False

    def _read_calls(self, message: ChatMessage) -> tuple[list[_PlannedCall], str | None]:
        if message.tool_calls:
            planned = []
            for index, call in enumerate(message.tool_calls):
                arguments, error = _native_arguments(call)
                if error is None and call.arguments != arguments:
                    # Send the repaired arguments back: the provider may reject the broken text.
                    message.tool_calls[index] = call.model_copy(
                        update={"arguments": arguments, "raw_arguments": json.dumps(arguments)}
                    )
                planned.append(_PlannedCall(call.id, call.name, arguments, error))
            return planned, None
        parameters = {tool.name: list(tool.input_model.model_fields) for tool in self.registry}
        try:
            found = parse_tool_calls(message.content, parameters)
        except ToolCallParseError as exc:
            return [], str(exc)
        return [_PlannedCall(None, call.name, call.arguments) for call in found], None

    def _no_tool_calls(self) -> bool:
        """A reply without a tool call: remind the model (``nudge``) or stop; ``True`` when the run is over."""
        if self.config.on_no_tool_calls == "stop" or self._nudges >= self.config.max_nudges:
            self._stop("no_tool_calls")
            return True
        self._nudges += 1
        reminder = prompts.no_tool_calls(native_tools=self.config.native_tools)
        self.messages.append(ChatMessage(role="user", content=reminder))
        self._emit(UserStep(content=reminder))
        return False

    def _format_error(self, reason: str) -> bool:
        self._emit(ErrorStep(message=f"format error: {reason}", error_type="format_error"))
        self.messages.append(
            ChatMessage(role="user", content=prompts.format_error(reason, native_tools=self.config.native_tools))
        )
        return self._count_format_error(reason)

    def _count_format_error(self, reason: str) -> bool:
        self._format_errors += 1
        if self._format_errors >= self.config.max_format_errors:
            self._stop("format_errors", f"{self._format_errors} unreadable replies in a row; last: {reason}")
            return True
        return False

    def _run_calls(self, calls: list[_PlannedCall], context: ToolContext, *, native: bool) -> str | None:
        """Run the calls of one reply, append their results in call order; the stop reason, if any."""
        stop: str | None = None
        runnable: list[_PlannedCall] = []
        for call in calls:
            if stop is not None:
                why = "the task was submitted" if stop == "submitted" else f"the agent stopped ({stop})"
                call.output = ToolOutput(content=f"not run: {why}", is_error=True)
                call.skipped = True
                continue
            if call.error is not None:
                call.output = ToolOutput(content=call.error, is_error=True)
                continue
            verdict = self._repeats.observe(call.name, call.arguments)
            if verdict is RepeatVerdict.STOP:
                stop = "repeated_tool_call"
                call.output = ToolOutput(content="not run: the same call was repeated too often", is_error=True)
                call.skipped = True
                self._emit(
                    ErrorStep(
                        message=f"{call.name} called with the same arguments {self._repeats.count} times in a row",
                        error_type="repeated_tool_call",
                    )
                )
                continue
            call.warn = verdict is RepeatVerdict.WARN
            runnable.append(call)
            if call.name == "submit":
                stop = "submitted"
        if self.config.parallel_tool_calls and len(runnable) > 1:
            workers = min(self.config.max_parallel_tools, len(runnable))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="react-tool") as pool:
                outputs = list(pool.map(lambda c: self.registry.invoke(context, c.name, c.arguments), runnable))
            for call, output in zip(runnable, outputs, strict=True):
                call.output = output
        else:
            for call in runnable:
                call.output = self.registry.invoke(context, call.name, call.arguments)
        text_results: list[str] = []
        for index, call in enumerate(calls):
            output = call.output
            assert output is not None
            content = output.content
            if call.warn:
                content = f"{content}\n\n{self._repeats.warning(call.name)}"
            if output.submitted:
                self.submission = output.content
            call_id = call.id if native else None
            if not call.skipped:
                self._emit(
                    ToolUseStep(
                        tool=call.name,
                        arguments=call.arguments,
                        tool_call_id=call_id,
                        result=content,
                        is_error=output.is_error,
                        exit_code=output.exit_code,
                        elapsed=output.elapsed,
                        metadata=output.metadata,
                    )
                )
            if native:
                self.messages.append(
                    ChatMessage(role="tool", tool_call_id=call.id or f"call_{index}", content=content, is_error=output.is_error)
                )
            else:
                text_results.append(prompts.text_tool_result(call.name, content, is_error=output.is_error))
        if text_results:
            self.messages.append(ChatMessage(role="user", content="\n\n".join(text_results)))
        return stop

    # -- compaction ---------------------------------------------------------

    def _context_window(self) -> int | None:
        return self.config.context_window or self.model_definition.context_window

    def _context_tokens(self) -> int:
        if self._context_base and self._context_base_len <= len(self.messages):
            return self._context_base + compaction.estimate_tokens(self.messages[self._context_base_len :])
        return compaction.estimate_tokens(self.messages)

    def _maybe_compact(self, model: ChatModel) -> None:
        window = self._context_window()
        if compaction.should_compact(self._context_tokens(), window, self.config.compaction_threshold):
            self._compact(model)

    def _compact(self, model: ChatModel) -> bool:
        """Summarise the older part of the conversation; ``False`` when there is nothing to summarise."""
        from agentrig.llm.errors import LLMError

        window = self._context_window() or compaction.estimate_tokens(self.messages)
        split = compaction.split_point(self.messages, int(window * self.config.compaction_keep_share))
        if split is None:
            return False
        self.check_limits()
        older = self.messages[compaction.head_length(self.messages) : split]
        try:
            response = model.complete(compaction.summary_request(older), None, max_tokens=self.config.max_tokens)
        except LLMError as exc:
            self._emit(ErrorStep(message=f"compaction failed: {exc}", error_type="compaction"))
            return False
        self._record(response, "summary")
        summary = response.message.content.strip() or "(the summariser returned nothing)"
        self._emit(AgentTextStep(content=summary))
        self.messages = compaction.rebuild(self.messages, split, summary, self._current_task)
        self._context_base = 0
        self._context_base_len = 0
        return True

    # -- replay -------------------------------------------------------------

    def supports_replay(self) -> bool:
        """The react agent re-runs a recorded trajectory's tool calls without a model."""
        return True

    def run_replay(self, path: Path) -> CheckpointInferenceResult:
        """Re-execute the tool calls of ``path`` (a ``trajectory.jsonl`` or a checkpoint directory holding one).

        Subagent calls are not re-run (they need a model). ``stop_reason`` is
        ``submitted`` when the recording submitted, else ``replayed``;
        results that differ from the recorded ones are counted in the log.
        """
        started = datetime.now(timezone.utc)
        self._trajectory = []
        error: str | None = None
        reason = "replayed"
        try:
            context = self.context
            if context is None:
                raise AgentSetupError("the react agent is not set up: call setup(session) first")
            steps = _load_trajectory(Path(path))
            subagent_names = {s.name for s in self._subagents}
            differing = 0
            for step in steps:
                if not isinstance(step, ToolUseStep) or step.tool in subagent_names:
                    if isinstance(step, UserStep):
                        self._emit(step)
                    continue
                arguments = step.arguments if isinstance(step.arguments, dict) else _lenient_object(step.arguments)
                output = self.registry.invoke(context, step.tool, arguments)
                if step.result is not None and output.content != step.result.split("\n\n[warning: ")[0]:
                    differing += 1
                self._emit(
                    ToolUseStep(
                        tool=step.tool,
                        arguments=arguments,
                        tool_call_id=step.tool_call_id,
                        result=output.content,
                        is_error=output.is_error,
                        exit_code=output.exit_code,
                        elapsed=output.elapsed,
                    )
                )
                if output.submitted:
                    self.submission = output.content
                    reason = "submitted"
                    break
            if differing:
                self.log.info("replay: %d tool results differ from the recording", differing)
        except AgentError as exc:
            error = str(exc)
            reason = "error"
        self.stop_reason = reason
        return self.checkpoint_result(started, had_error=error is not None, error_message=error)


def _native_arguments(call: ToolCall) -> tuple[dict[str, Any], str | None]:
    """A native call's arguments, repaired when the client could not parse them."""
    raw = (call.raw_arguments or "").strip()
    if call.arguments or not raw or raw == "{}":
        return dict(call.arguments), None
    try:
        value = loads_lenient(raw)
    except JSONRepairError as exc:
        return {}, f"the arguments of {call.name} are not valid JSON ({exc}); send the call again with a JSON object"
    if not isinstance(value, dict):
        return {}, f"the arguments of {call.name} must be a JSON object, got {type(value).__name__}"
    return value, None


def _lenient_object(text: str) -> dict[str, Any]:
    try:
        value = loads_lenient(text)
    except JSONRepairError:
        return {}
    return value if isinstance(value, dict) else {}


def _load_trajectory(path: Path) -> list[TrajectoryStep]:
    file = path / "trajectory.jsonl" if path.is_dir() else path
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AgentError(f"cannot read trajectory {file}: {exc.strerror}") from None
    steps = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            steps.append(parse_step(line))
        except ValueError:
            raise AgentError(f"{file}:{number}: not a trajectory step") from None
    return steps


def _import_object(path: str) -> Any:
    import importlib

    module, _, name = path.partition(":")
    if not module or not name:
        raise ValueError("expected 'package.module:Name'")
    return getattr(importlib.import_module(module), name)


def _one_line(exc: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        return f"{where}: {message}" if where else message
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
