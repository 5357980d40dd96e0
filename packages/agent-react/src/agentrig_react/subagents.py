"""Subagents: any agentrig agent offered to a react agent as a tool.

Each call builds a fresh agent (its own memory), sets it up in a session
confined to a subdirectory of the workspace (its file tools cannot leave it
and its commands start in it), runs it on the task rendered from the tool's
pydantic input model, adds its usage to the parent's, and returns how it
ended. A failure comes back as an error tool result of one line, never a
traceback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.runtime.interface import Command, Runtime, RuntimeProcess
from agentrig_react.context import ToolContext, ToolError
from agentrig_react.registry import Tool, ToolOutput

if TYPE_CHECKING:
    from agentrig.agent import Agent, CheckpointInferenceResult
    from agentrig.trajectory import TrajectoryStep


class DelegateInput(BaseModel):
    """The default input of a subagent tool: the task to hand over."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, description="The task for the subagent, complete and self-contained.")


class ConfinedRuntime(Runtime):
    """A view of a runtime whose commands start in a subdirectory of the workspace.

    Commands run in the parent runtime (same container or host); ``kill`` and
    ``cleanup`` end only the processes started through this view.
    """

    def __init__(self, parent: Runtime, subdirectory: str) -> None:
        """Wrap ``parent``; ``subdirectory`` is relative to its workdir (POSIX)."""
        self.parent = parent
        self.subdirectory = subdirectory
        self.name = f"{parent.name}:{subdirectory}"
        self._processes: list[RuntimeProcess] = []
        self._lock = threading.Lock()

    @property
    def workdir(self) -> str:
        """The subdirectory as commands see it."""
        return str(PurePosixPath(self.parent.workdir) / self.subdirectory)

    def _cwd(self, cwd: str | None) -> str:
        if cwd is None:
            return self.workdir
        return cwd if cwd.startswith("/") else str(PurePosixPath(self.workdir) / cwd)

    def start(
        self,
        command: Command,
        *,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        idle_timeout: float | None = None,
        stdin: str | bytes | None = None,
        cwd: str | None = None,
    ) -> RuntimeProcess:
        """Start ``command`` in the parent runtime, in the subdirectory unless ``cwd`` says otherwise."""
        process = self.parent.start(
            command, env=env, timeout=timeout, idle_timeout=idle_timeout, stdin=stdin, cwd=self._cwd(cwd)
        )
        with self._lock:
            self._processes.append(process)
        return process

    def kill(self) -> None:
        """Kill the processes started through this view."""
        with self._lock:
            processes, self._processes = self._processes, []
        for process in processes:
            if process.poll() is None:
                process.kill()

    def cleanup(self) -> None:
        """Kill what this view started; the parent runtime keeps running."""
        self.kill()

    def __getattr__(self, name: str) -> Any:
        # Runtime-specific extras (home, environment, image) come from the parent.
        return getattr(self.parent, name)


class ConfinedSession:
    """What a subagent gets as its session: a subdirectory as its workspace, a confined runtime."""

    def __init__(self, parent: Any, subdirectory: str) -> None:
        """A session over ``parent``'s ``subdirectory`` (created if missing)."""
        from agentrig.workspace import Workspace

        root = Path(parent.workspace.path) / subdirectory
        root.mkdir(parents=True, exist_ok=True)
        self.parent = parent
        self.workspace = Workspace(root, owned=False)
        self.runtime = ConfinedRuntime(parent.runtime, subdirectory)
        self.home = getattr(parent, "home", None)

    def close(self) -> None:
        """End the subagent's processes; the workspace and the parent's runtime stay."""
        self.runtime.cleanup()


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
    (default: the ``task`` field, or the input as JSON). ``on_finish`` is
    called with every :class:`SubagentRun` (the parent adds its usage there).
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
    ) -> None:
        """Describe the subagent tool; nothing is built until it is called."""
        self.name = name
        self.description = description
        self.build_agent = build_agent
        self.input_model = input_model
        self.subdirectory = subdirectory or f"subagents/{name}"
        self.render_task = render_task or _default_task
        self.session: Any = None
        self.artifacts_root: Path | None = None
        self.on_finish: Callable[[SubagentRun], None] | None = None
        self._count = 0
        self._lock = threading.Lock()

    def as_tool(self) -> Tool:
        """The :class:`Tool` the registry holds."""
        return Tool(self.name, self.description, self.input_model, self._call)

    def _call(self, context: ToolContext, arguments: BaseModel) -> ToolOutput:
        if self.session is None:
            raise ToolError(f"subagent {self.name} has no session: the parent agent is not set up")
        # The subdirectory is checked like any path a tool touches: it must stay inside the parent's root.
        context.resolve(self.subdirectory)
        with self._lock:
            self._count += 1
            index = self._count
        task = self.render_task(arguments)
        record = SubagentRun(tool=self.name, index=index, task=task, subdirectory=self.subdirectory)
        try:
            output = self._run(task, record)
        finally:
            if self.on_finish is not None:
                self.on_finish(record)
        return output

    def _run(self, task: str, record: SubagentRun) -> ToolOutput:
        try:
            agent = self.build_agent()
        except Exception as exc:
            record.error = f"could not be built: {exc}"
            return ToolOutput(content=f"subagent {self.name} {record.error}", is_error=True)
        agent.add_step_listener(record.steps.append)
        session = ConfinedSession(self.session, self.subdirectory)
        try:
            try:
                agent.setup(session)  # type: ignore[arg-type]
            except Exception as exc:
                record.error = f"could not start: {_last_line(str(exc))}"
                return ToolOutput(content=f"subagent {self.name} {record.error}", is_error=True)
            result: CheckpointInferenceResult = agent.run_checkpoint(task)
            record.result = result
            self._save(agent, record)
            if result.had_error:
                record.error = _last_line(result.error_message or "")
                return ToolOutput(content=f"subagent {self.name} failed: {record.error}", is_error=True)
            answer = getattr(agent, "submission", None)
            files = _list_files(Path(session.workspace.path))
            summary = (
                f"subagent {self.name} finished (stop reason: {result.stop_reason or 'unknown'}, "
                f"{result.usage.steps} model calls, ${result.usage.cost:.4f}); it worked in {self.subdirectory}/"
            )
            parts = [summary]
            if answer:
                parts.append(f"Its answer:\n{answer}")
            parts.append("Files in its directory:\n" + ("\n".join(files) if files else "(none)"))
            return ToolOutput(content="\n\n".join(parts))
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
        try:
            agent.save_artifacts(directory)
        except Exception as exc:  # the subagent's artifacts are a bonus; its result matters more
            (directory / "save_artifacts_error.txt").write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")


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
