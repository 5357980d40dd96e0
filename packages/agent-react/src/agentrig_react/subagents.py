"""Subagents: any agentrig agent offered to a react agent as a tool.

Each call builds a fresh agent (its own memory), sets it up in a session of
its own directory (``subagents/<name>/<NNN>/`` per call by default, so calls
running in parallel never share one), with its commands confined to that
directory as strongly as the runtime allows (see :mod:`agentrig_react.confinement`),
runs it on the task rendered from the tool's pydantic input model plus the
delegation context (:mod:`agentrig_react.delegation`), adds its usage to the
parent's, and returns how it ended. A failure comes back as one error tool
result whose ``metadata`` says ``status: unavailable``, never a traceback.
The subagent's steps stay out of the parent's trajectory and out of the
``agentrig_step`` hook (they go to ``agentrig_subagent_step``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from agentrig.atomic import write_model_atomic, write_text_atomic
from agentrig_react.confinement import ConfinementError, ConfinementKind, ConfineMode, confine, confinement_kind
from agentrig_react.context import ToolContext, ToolError
from agentrig_react.delegation import DelegationConfig, DelegationContext, latest_text, recent_events, share_paths
from agentrig_react.registry import Tool, ToolDefinitionError, ToolOutput

if TYPE_CHECKING:
    from agentrig.agents.interface import Agent, CheckpointInferenceResult
    from agentrig.trajectory import TrajectoryStep


class DelegateInput(BaseModel):
    """The default input of a subagent tool: the task to hand over."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, description="The task for the subagent, complete and self-contained.")
    paths: list[str] = Field(
        default_factory=list,
        description="Workspace files or directories the subagent should look at (copied into its directory).",
    )


Isolation = Literal["per_call", "shared"]


class ConfinedSession:
    """What a subagent gets as its session: its directory as the workspace, a runtime confined to it."""

    def __init__(self, parent: Any, subdirectory: str, mode: ConfineMode = "strict") -> None:
        """A session over ``parent``'s ``subdirectory`` (created if missing); raises ``ConfinementError``."""
        from agentrig.boundary import BoundaryError, make_dirs_under
        from agentrig.workspace import Workspace

        base = Path(parent.workspace.path).resolve()
        try:
            # made one component at a time: a symlink planted where the directory goes would hand the subagent
            # another directory, and making it through that link would write outside the workspace
            root = make_dirs_under(base, subdirectory, f"the subagent directory '{subdirectory}'")
        except BoundaryError as exc:
            raise ConfinementError(f"{exc}: a link there leads outside the workspace") from None
        self.parent = parent
        self.workspace = Workspace(root, owned=False)
        self.runtime, self.confinement = confine(parent.runtime, root, mode)
        self.home = None

    def close(self) -> None:
        """End the subagent's processes (and its container); the workspace and the parent's runtime stay."""
        self.runtime.cleanup()

    def __getattr__(self, name: str) -> Any:
        # the problem, the checkpoint and other session facts are the parent's
        if name == "parent":
            raise AttributeError(name)
        return getattr(self.parent, name)


class SubagentRun:
    """One subagent call: what it was asked, how it ended, the steps it emitted."""

    def __init__(self, tool: str, index: int, task: str, subdirectory: str) -> None:
        """Start the record of call number ``index`` of subagent tool ``tool``."""
        self.tool = tool
        self.index = index
        self.task = task
        self.subdirectory = subdirectory
        self.result: CheckpointInferenceResult | None = None
        self.error: str | None = None
        self.steps: list[TrajectoryStep] = []
        self.context: DelegationContext | None = None
        self.confinement: ConfinementKind | None = None

    @property
    def label(self) -> str:
        """``NNN-TOOL``: the name of this call's artifacts directory."""
        return f"{self.index:03d}-{self.tool}"


AgentFactory = Callable[[], "Agent"]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "unknown error"


class SubagentTool:
    """An agent offered as a tool: a name, a description, an input model, and how to build the agent.

    ``render_task`` turns the validated input into the subagent's task text
    (default: the ``task`` field, or the input as JSON); the delegation
    ``context`` is added after it. ``confine`` is ``strict`` (refuse to run
    when the runtime cannot confine commands to the directory) or
    ``best_effort``. ``isolation`` ``per_call`` gives every call a directory
    of its own (``<subdirectory>/<NNN>``); ``shared`` runs calls one at a
    time in ``subdirectory``. ``on_finish`` is called with every
    :class:`SubagentRun` (the parent adds its usage there).

    Raises :class:`ToolDefinitionError` naming the field when ``input_model``
    cannot be built from arguments a model writes (see :func:`probe_input_model`).
    """

    def __init__(
        self,
        name: str,
        description: str,
        build_agent: AgentFactory,
        *,
        input_model: type[BaseModel] = DelegateInput,
        subdirectory: str | None = None,
        render_task: Callable[[BaseModel], str] | None = None,
        confine: ConfineMode = "strict",
        isolation: Isolation = "per_call",
        context: DelegationConfig | None = None,
    ) -> None:
        """Describe the subagent tool; nothing is built until it is called."""
        try:
            probe_input_model(input_model)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"subagent tool '{name}': {exc}") from None
        self.name = name
        self.description = description
        self.build_agent = build_agent
        self.input_model = input_model
        self.subdirectory = subdirectory or f"subagents/{name}"
        self.render_task = render_task or _default_task
        self.confine = confine
        self.isolation = isolation
        self.context = context or DelegationConfig()
        self.tools: list[str] | None = None
        """The subagent's tool allow-list, when its config has one (stated in its safety flags)."""
        self.session: Any = None
        self.parent: Agent | None = None
        self.parent_steps: Callable[[], list[TrajectoryStep]] = list
        self.artifacts_root: Path | None = None
        self.on_finish: Callable[[SubagentRun], None] | None = None
        self._count = 0
        self._lock = threading.Lock()
        self._shared_lock = threading.Lock()

    def as_tool(self) -> Tool:
        """The :class:`Tool` the registry holds."""
        return Tool(self.name, self.description, self.input_model, self._call)

    def check(self, session: Any) -> ConfinementKind:
        """How the calls will be confined in ``session``; raises ``ConfinementError`` when ``strict`` cannot hold."""
        return confinement_kind(session.runtime, self.confine)

    def _call(self, context: ToolContext, arguments: BaseModel) -> ToolOutput:
        if self.session is None:
            raise ToolError(f"subagent {self.name} has no session: the parent agent is not set up")
        # The directory is checked like any path a tool touches: it must stay inside the parent's root.
        context.resolve(self.subdirectory)
        with self._lock:
            self._count += 1
            index = self._count
        subdirectory = self.subdirectory if self.isolation == "shared" else f"{self.subdirectory}/{index:03d}"
        record = SubagentRun(tool=self.name, index=index, task="", subdirectory=subdirectory)
        try:
            if self.isolation == "shared":
                with self._shared_lock:
                    output = self._run(context, arguments, record)
            else:
                output = self._run(context, arguments, record)
        finally:
            if self.on_finish is not None:
                self.on_finish(record)
        output.metadata = {
            "subagent": self.name,
            "call": index,
            "directory": subdirectory,
            "confinement": record.confinement,
            **(output.metadata or {}),
        }
        return output

    def _unavailable(self, record: SubagentRun, reason: str, prefix: str = "failed:") -> ToolOutput:
        record.error = _last_line(reason)
        return ToolOutput(
            content=f"subagent {self.name} {prefix} {record.error}",
            is_error=True,
            metadata={"status": "unavailable", "reason": record.error},
        )

    def _delegation(self, context: ToolContext, arguments: BaseModel, directory: Path, kind: ConfinementKind) -> DelegationContext:
        config = self.context
        steps = self.parent_steps()
        paths = [*config.paths, *(getattr(arguments, "paths", None) or [])]
        flags = [_CONFINEMENT_FLAGS[kind]]
        if self.tools is not None:
            flags.append(f"tools: only {', '.join(self.tools) or 'none'}")
        flags += config.safety_flags
        return DelegationContext(
            recent_events=recent_events(steps, config.recent_steps, config.max_event_chars),
            workspace_pointers=share_paths(context.root, paths, directory) if paths else [],
            safety_flags=flags,
            preview=latest_text(steps) if config.preview else None,
        )

    def _run(self, context: ToolContext, arguments: BaseModel, record: SubagentRun) -> ToolOutput:
        try:
            agent = self.build_agent()
        except Exception as exc:
            return self._unavailable(record, f"could not be built: {exc}", prefix="unavailable:")
        agent.parent_agent = self.parent
        agent.add_step_listener(record.steps.append)
        try:
            session = ConfinedSession(self.session, record.subdirectory, self.confine)
        except Exception as exc:  # ConfinementError, or a container that would not start
            return self._unavailable(record, f"could not start: {exc}", prefix="unavailable:")
        record.confinement = session.confinement
        try:
            try:
                delegation = self._delegation(context, arguments, Path(session.workspace.path), session.confinement)
            except (ValueError, OSError) as exc:
                return self._unavailable(record, f"cannot share files: {exc}", prefix="unavailable:")
            record.context = delegation
            record.task = delegation.render(self.render_task(arguments))
            try:
                agent.setup(session)  # type: ignore[arg-type]  # a ConfinedSession stands in for the parent's Session
            except Exception as exc:
                return self._unavailable(record, f"could not start: {exc}", prefix="unavailable:")
            result: CheckpointInferenceResult = agent.run_checkpoint(record.task)
            record.result = result
            self._save(agent, record)
            if result.had_error:
                return self._unavailable(record, result.error_message or "")
            answer = getattr(agent, "submission", None)
            files = _list_files(Path(session.workspace.path))
            summary = (
                f"subagent {self.name} finished (stop reason: {result.stop_reason or 'unknown'}, "
                f"{result.usage.steps} model calls, ${result.usage.cost:.4f}); it worked in {record.subdirectory}/"
            )
            parts = [summary]
            if answer:
                parts.append(f"Its answer:\n{answer}")
            parts.append("Files in its directory:\n" + ("\n".join(files) if files else "(none)"))
            return ToolOutput(
                content="\n\n".join(parts),
                metadata={"status": "ok", "stop_reason": result.stop_reason, "cost": result.usage.cost},
            )
        finally:
            try:
                agent.cleanup()
            except Exception as exc:  # cleanup trouble must not hide the result
                record.error = record.error or f"cleanup failed: {exc}"
            session.close()

    def _save(self, agent: Agent, record: SubagentRun) -> None:
        if self.artifacts_root is None:
            return
        directory = self.artifacts_root / record.label
        directory.mkdir(parents=True, exist_ok=True)
        if record.context is not None:
            write_model_atomic(directory / "delegation.json", record.context)
        try:
            agent.save_artifacts(directory)
        except Exception as exc:  # the subagent's artifacts are a bonus; its result matters more
            write_text_atomic(directory / "save_artifacts_error.txt", f"{type(exc).__name__}: {exc}\n")


_CONFINEMENT_FLAGS: dict[str, str] = {
    "container": "confinement: you run in a container holding only your directory",
    "bwrap": "confinement: you run in a sandbox holding only your directory and the system's programs; no network",
    "landlock": "confinement: files outside your directory and TCP connections are refused (Landlock)",
    "cwd": "confinement: none beyond starting in your directory; do not touch files outside it",
}

_PROBED: weakref.WeakSet[type[BaseModel]] = weakref.WeakSet()


def probe_input_model(model: Any) -> None:
    """Check, once per model class, that ``model`` can be built from arguments a model writes.

    Every field needs a default, or a type with a JSON schema from which a
    sample value validates. Raises :class:`ToolDefinitionError` naming the field.
    """
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ToolDefinitionError(f"the input model must be a pydantic BaseModel class, not {model!r}")
    if model in _PROBED:
        return
    try:
        schema = model.model_json_schema()
    except Exception as exc:
        for name, field in model.model_fields.items():
            if field.annotation is None:
                continue
            try:
                TypeAdapter(field.annotation).json_schema()
            except Exception as field_exc:
                raise ToolDefinitionError(
                    f"input model {model.__name__}: field '{name}' has a type no JSON schema describes "
                    f"({_last_line(str(field_exc))}); give it a JSON-compatible type"
                ) from None
        raise ToolDefinitionError(f"input model {model.__name__} has no JSON schema: {_last_line(str(exc))}") from None
    properties = schema.get("properties", {})
    sample: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if field.is_required():
            key = field.alias or name
            sample[key] = _sample(properties.get(key, {}), schema.get("$defs", {}))
    try:
        model.model_validate(sample)
    except ValidationError as exc:
        for error in exc.errors():
            if error["type"] == "string_pattern_mismatch":
                continue  # a pattern no generic sample can match says nothing about the model
            where = ".".join(str(part) for part in error["loc"]) or "(model)"
            raise ToolDefinitionError(
                f"input model {model.__name__}: field '{where}' cannot be built from model-written arguments "
                f"({error['msg']}); give it a default or a type a model can fill"
            ) from None
    except Exception as exc:  # a validator that raises something else
        raise ToolDefinitionError(
            f"input model {model.__name__} cannot be built: {type(exc).__name__}: {_last_line(str(exc))}"
        ) from None
    _PROBED.add(model)


def _sample(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    """A value of JSON ``schema`` that satisfies its simple constraints."""
    if depth > 8:
        return None
    if "$ref" in schema:
        return _sample(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs, depth + 1)
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _sample(schema[key][0], defs, depth + 1)
    kind = schema.get("type")
    if kind == "string":
        return "x" * max(1, int(schema.get("minLength", 1)))
    if kind in ("integer", "number"):
        value = schema.get("minimum", schema.get("exclusiveMinimum", 0) + (1 if "exclusiveMinimum" in schema else 0))
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    if kind == "array":
        return [_sample(schema.get("items", {}), defs, depth + 1) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "object":
        required = schema.get("required", [])
        props = schema.get("properties", {})
        return {key: _sample(props.get(key, {}), defs, depth + 1) for key in required}
    if kind == "null":
        return None
    return "x"

def _default_task(arguments: BaseModel) -> str:
    task = getattr(arguments, "task", None)
    return task if isinstance(task, str) else arguments.model_dump_json(indent=2)


def _list_files(root: Path, limit: int = 50) -> list[str]:
    found: list[str] = []

    def walk(directory: Path) -> Iterator[Path]:
        for entry in sorted(directory.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                yield from walk(entry)
            else:
                yield entry

    for path in walk(root):
        if len(found) >= limit:
            found.append("...")
            break
        found.append(path.relative_to(root).as_posix())
    return found
