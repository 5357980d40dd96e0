"""The shared half of the agents that drive a pinned command-line agent (Claude Code, Codex, ...).

Such an agent starts one CLI process per checkpoint in the session's runtime,
writes its output to scratch files as it arrives (every secret scrubbed),
reads it through a stream parser and turns how the process ended into a stop
reason. :class:`CliAgent` holds what does not depend on the CLI: the state
directory the CLI keeps in the runtime's home, the version probe against the
pinned npm version, the stream parser of the agent's kind, the raw streams, the
log the CLI writes besides its stream, secret scrubbing, the kill at a limit or
a timeout, the artifacts common to all and the teardown. A subclass launches
its own CLI and reads its own outcome.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from agentrig.agents.interface import Agent, AgentConfigBase, AgentContext
from agentrig.errors import AgentLimitError, AgentSetupError, AgentStepError
from agentrig.scratch import temp_dir
from agentrig.scrub import REDACTED as _REDACTED

if TYPE_CHECKING:
    from agentrig.agents.bundles import BundleRecipe
    from agentrig.agents.cli_config import CliAgentConfig
    from agentrig.agents.cli_log import LogTail
    from agentrig.agents.mcp import McpHttpServer, McpStdioServer
    from agentrig.agents.session import Session
    from agentrig.agents.stream import StreamParser
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition
    from agentrig.runtime.interface import Runtime, RuntimeEvent, RuntimeProcess
    from agentrig.trajectory import TrajectoryStep

#: The raw standard output of a checkpoint's CLI, as written (scrubbed).
ARTIFACT_STDOUT = "stdout.jsonl"
#: The CLI's standard error (scrubbed).
ARTIFACT_STDERR = "stderr.log"
#: The CLI's own record of its session, copied from its state directory (scrubbed).
ARTIFACT_SESSION = "session.jsonl"
#: The checkpoint's trajectory steps, one JSON object a line.
ARTIFACT_TRAJECTORY = "trajectory.jsonl"
#: OpenAI's own endpoint: where an ``openai/...`` model goes when nothing names another.
OPENAI_BASE_URL = "https://api.openai.com/v1"
#: What replaces a secret in anything the CLI wrote (:mod:`agentrig.scrub`'s marker).
REDACTED = _REDACTED

_VERSION = re.compile(r"(\d+\.\d+\.\d+\S*)")
_STDERR_TAIL = 1500


_AgentT = TypeVar("_AgentT", bound="CliAgent")
_ParserT = TypeVar("_ParserT")


@runtime_checkable
class SideLogReader(Protocol):
    """A stream parser that also reads the log its CLI writes besides the stream (its session log)."""

    def consume_session_line(self, line: str) -> None:
        """Take one complete line of the side log."""


class CliLaunch(BaseModel):
    """How a checkpoint's CLI was launched (the environment's names only, never its values)."""

    argv: list[str]
    env_names: list[str]
    runtime: str
    cwd: str


class CliAgent(Agent):
    """An agent running a pinned npm CLI in the session's runtime; see the module docstring.

    Subclasses set :attr:`cli_name` and :attr:`npm_package`, call
    :meth:`_setup_state_dir` and :meth:`_probe_version` in ``setup``, stream
    the CLI through :meth:`_open_streams` and :meth:`_record` (or run it
    whole with :meth:`_run_cli` on a parser from :meth:`_make_parser`), and
    start :meth:`_conclude` with :meth:`_conclude_kill`. A CLI that logs what
    its stream lacks in a file of its own gets a :class:`~agentrig.agents.cli_log.LogTail`
    of it as :attr:`_log_tail` in ``setup``: :meth:`_run_cli` hands that log's
    new lines to a parser that is a :class:`SideLogReader` while the CLI runs.
    """

    #: How messages name the CLI ("the Codex CLI").
    cli_name: ClassVar[str] = "CLI"
    #: The npm package that installs the CLI (named in the install hint).
    npm_package: ClassVar[str] = ""
    #: The agent's config model: :meth:`_from_config` validates a plain config into it.
    config_class: ClassVar[type[CliAgentConfig]]
    #: Seconds between reads of the CLI's side log (:meth:`_read_side_log`) while it runs.
    side_log_poll: ClassVar[float] = 0.1
    #: The lowest Node.js the CLI runs on when it is a Node script whose package.json names no
    #: ``engines.node`` (:mod:`agentrig.agents.node_requirement`); an agent's README documents its own.
    node_fallback: ClassVar[str] = "18"
    #: How the agent's bundle is made (:mod:`agentrig.agents.bundles`): the CLI run in a task's own container
    #: (--runtime docker); ``None``: the agent has no bundle.
    bundle_recipe: ClassVar[BundleRecipe | None] = None
    #: Whether the CLI is a Node.js program (its host ``node`` is checked in the ``local`` runtime).
    runs_on_node: ClassVar[bool] = True

    def __init__(
        self,
        agent_type: str,
        config: CliAgentConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool,
        *,
        default_binary: str,
    ) -> None:
        """The shared state of a CLI agent for ``model``; nothing runs until ``setup``."""
        super().__init__(agent_type, problem_name, config.cost_limits, model.pricing, verbose)
        self.config = config
        self.model = model
        self.credential = credential
        self._session: Session | None = None
        self._runtime: Runtime | None = None
        self._env: dict[str, str] = {}
        self._binary = config.binary or default_binary
        self._state_dir_host: Path | None = None
        self._own_state_dir = False
        self._scratch: Path | None = None
        self._limit_hit: str | None = None
        self._process: RuntimeProcess | None = None
        self._checkpoint_steps: list[TrajectoryStep] = []
        self.add_step_listener(self._keep_step)  # the steps as delivered: scrubbed (:meth:`Agent.emit_step`)
        #: The version the CLI reported at setup.
        self.cli_version: str | None = None
        #: The runtime the agent's sessions run in (``AgentContext.runtime``), ``None`` when not known.
        self.runtime_name: str | None = None
        self._mcp: dict[str, McpStdioServer | McpHttpServer] | None = None
        #: The log the CLI writes besides its stream (set in ``setup`` by an agent whose CLI has one).
        self._log_tail: LogTail | None = None
        #: How the last checkpoint's CLI ended (its parser's outcome) and how it was launched.
        self.outcome: BaseModel | None = None
        self.launch: CliLaunch | None = None

    @classmethod
    def _from_config(cls: type[_AgentT], config: AgentConfigBase, context: AgentContext) -> _AgentT:
        """Build the agent from its :attr:`config_class` (validated from a plain config) and ``context``."""
        if not isinstance(config, cls.config_class):
            config = cls.config_class.model_validate(config.model_dump() if isinstance(config, BaseModel) else config)
        make: Callable[..., _AgentT] = cls
        agent = make(
            config,
            context.require_model(str(cls.agent_type)),
            context.credential,
            context.problem_name,
            context.verbose,
            **cls._context_options(context),
        )
        agent.runtime_name = context.runtime
        return agent

    @classmethod
    def _context_options(cls, context: AgentContext) -> dict[str, Any]:
        """The keyword arguments of the constructor read from ``context``; by default the thinking preset."""
        return {"thinking_preset": context.thinking_preset}

    # -- per-checkpoint state ---------------------------------------------------

    def _reset_checkpoint_state(self) -> None:
        """Forget what one checkpoint's run left: its outcome, launch, kill reason, process, steps and scratch files."""
        self.outcome = None
        self.launch = None
        self._limit_hit = None
        self._process = None
        self._checkpoint_steps = []
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
        self._scratch = None

    def reset(self) -> None:
        """Start the next checkpoint in a fresh CLI session: nothing of this one's run, no session to resume."""
        self._reset_checkpoint_state()
        self._forget_session()

    def _forget_session(self) -> None:
        """Forget the CLI session continued across checkpoints (and what it had counted); by default nothing."""

    # -- setup ------------------------------------------------------------------

    def _refuse_replay(self) -> None:
        """Refuse a replay model: the CLI calls a real endpoint."""
        if self.model.provider == "replay":
            raise AgentSetupError(
                f"the {self.agent_name} agent runs the real CLI and cannot use a replay model: pick a model"
            )

    def _openai_base_url(self) -> str | None:
        """The endpoint of a CLI speaking an OpenAI API: the config's ``base_url``, else ``OPENAI_BASE_URL`` or
        the model's (:func:`agentrig.llm.factory.resolve_base_url`), else OpenAI's own for an ``openai/...``
        model; ``None`` when the model has none."""
        from agentrig.llm.factory import resolve_base_url

        base_url = resolve_base_url(self.model, getattr(self.config, "base_url", None))
        if base_url is None and self.model.provider == "openai":
            return OPENAI_BASE_URL
        return base_url

    def _require_openai_endpoint(self, api: str, server: str) -> str:
        """:meth:`_openai_base_url`, and a credential: else :class:`AgentSetupError` in one line naming the
        ``api`` the CLI speaks and the kind of ``server`` 'base_url' may name instead (call it in ``preflight``)."""
        base_url = self._openai_base_url()
        if base_url is None:
            raise AgentSetupError(
                f"the {self.agent_name} agent speaks {api}; model provider '{self.model.provider}' has no "
                f"endpoint: use an openai/... model or set 'base_url' to {server}"
            )
        if self.credential is None:
            raise AgentSetupError(f"the {self.agent_name} agent needs a credential: set OPENAI_API_KEY")
        return base_url

    def _check_stream_parser(self) -> None:
        """Refuse a ``stream_parser`` no plugin declares, before the CLI starts."""
        from agentrig.errors import UnknownPluginError
        from agentrig.registry import get_registry

        source = f"{self.agent_name} config: stream_parser"
        try:
            get_registry().lookup("stream_parsers", self.config.stream_parser, source=source)
        except UnknownPluginError as exc:
            raise AgentSetupError(str(exc)) from None

    def _mcp_servers(self) -> dict[str, McpStdioServer | McpHttpServer]:
        """The config's MCP servers with their ``${VAR}`` values read from this process's environment (once);
        :class:`AgentSetupError` naming the server, field and variable when one is unset (call it in ``preflight``)."""
        if self._mcp is None:
            from agentrig.agents.mcp import McpConfigError, resolve_servers, server_secrets

            try:
                self._mcp = resolve_servers(self.config.mcp_servers, os.environ)
            except McpConfigError as exc:
                raise AgentSetupError(f"{self.agent_name} config: {exc}") from None
            self.secrets.add(*server_secrets(self._mcp))
        return self._mcp

    def _check_host_node(self, runtime_name: str | None = None, path: str | None = None) -> None:
        """In the ``local`` runtime (``runtime_name``, default :attr:`runtime_name`), refuse a CLI that runs on
        Node when the host's ``node`` is missing or older than the CLI needs: one line (call it in ``preflight``).
        ``path``: the ``PATH`` the CLI is started with (default: this process's). Other runtimes bring their own."""
        if (runtime_name or self.runtime_name) != "local" or not self.runs_on_node:
            return
        from agentrig.agents.node_requirement import check_host_node

        check_host_node(agent=self.agent_name, cli_name=self.cli_name, binary=self._binary, fallback=self.node_fallback, path=path)

    def _setup_state_dir(self, session: Session, name: str, private_prefix: str) -> str:
        """Give the CLI its own state directory ``name`` in the runtime's home; return its path there.

        A runtime without an isolated home (local only) gets a private
        directory of ours (named ``private_prefix...``) instead, removed at :meth:`cleanup`.
        """
        home = getattr(session.runtime, "home", None)
        host_home = getattr(session, "home", None)
        if home and host_home is not None:
            in_runtime = f"{home.rstrip('/')}/{name}"
            self._state_dir_host = Path(host_home) / name
        else:
            self._state_dir_host = temp_dir(private_prefix, session=session)
            self._own_state_dir = True
            in_runtime = str(self._state_dir_host)
        self._state_dir_host.mkdir(parents=True, exist_ok=True)
        os.chmod(self._state_dir_host, 0o700)  # the CLI's state (config with MCP secrets, shell snapshots): private
        return in_runtime

    def _probe_version(self, runtime: Runtime) -> str:
        """The version ``<binary> --version`` reports; refuse a CLI that cannot run or is not the pinned one."""
        from agentrig.runtime.interface import Invocation

        self._use_bundle(runtime)
        if runtime.name == "local" and self.runtime_name != "local":  # preflight did not know (a context made by hand)
            environment = {**getattr(runtime, "environment", {}), **self._env}
            self._check_host_node("local", environment.get("PATH"))
        result = runtime.exec(Invocation([self._binary, "--version"], env=self._env, timeout=60))
        if result.exit_code in (126, 127) or (result.exit_code != 0 and not result.stdout.strip()):
            wanted = self.config.version or "<version>"
            raise AgentSetupError(
                f"the {self.cli_name} '{self._binary}' cannot run in the {runtime.name} runtime "
                f"(exit {result.exit_code}: {self._scrub(result.stderr.strip())[-300:] or 'no output'}): "
                f"install it ({self._install_hint(wanted)}) or set 'binary' in the agent config"
            )
        match = _VERSION.search(result.stdout)
        found = match.group(1) if match else result.stdout.strip()
        if self.config.version and found != self.config.version:
            raise AgentSetupError(
                f"the {self.cli_name} '{self._binary}' is version {found}, the agent config pins {self.config.version}: "
                "install the pinned version, or set 'version' to the one you have (null accepts any)"
            )
        return found

    def _use_bundle(self, runtime: Runtime) -> None:
        """Run the agent's bundle where the runtime binds it (the docker runtime's ``mounts``): one's own
        (``bundle``), else the prepared bundle of the container's platform, probed here and prepared on the
        host if it is not yet. Nothing when no bundle is bound or the config names a ``binary``."""
        from agentrig.agents import bundles
        from agentrig.runtime.interface import Invocation

        recipe = self.bundle_recipe
        mounts = {m.target: m for m in getattr(getattr(runtime, "config", None), "mounts", None) or []}
        if recipe is None or self.config.binary is not None or not mounts:
            return
        own = bundles.container_dir(str(self.agent_type), bundles.OWN)
        if own in mounts:
            self._binary = f"{own}/{bundles.launcher(recipe.cli)}"
            return
        where = bundles.container_dir(str(self.agent_type), self.config.version or "")
        mount = mounts.get(where)
        if mount is None or not self.config.version:
            return
        probe = runtime.exec(Invocation(bundles.probe_command(), timeout=60))
        image = f"the container of image '{getattr(runtime.config, 'image', '?')}'"  # type: ignore[attr-defined]
        if probe.exit_code != 0:
            raise AgentSetupError(bundles.no_shell_message(str(self.agent_type), image, f"exit {probe.exit_code}"))
        platform = bundles.parse_probe(probe.stdout)
        chosen = bundles.choose_platform(recipe, platform)
        if chosen is None:
            raise AgentSetupError(bundles.unfit_message(str(self.agent_type), image, platform, recipe))
        try:
            bundles.prepare_bundle(str(self.agent_type), self.config.version, chosen, recipe, root=Path(mount.source).parent)
        except bundles.BundleError as exc:
            raise AgentSetupError(str(exc)) from None
        self._binary = f"{where}/{chosen}/{bundles.launcher(recipe.cli)}"
        if recipe.tools:  # the commands the CLI looks for on PATH (it would download them otherwise)
            self._env["PATH"] = f"{where}/{chosen}/bin:{self._env.get('PATH') or platform.path}"
    def _install_hint(self, version: str) -> str:
        """How to install the CLI at ``version``, for a message (``npm install PACKAGE@VERSION``)."""
        return f"`npm install {self.npm_package}@{version}`"

    # -- a checkpoint -------------------------------------------------------------

    def _make_parser(self, kind: type[_ParserT], kind_name: str, **options: Any) -> _ParserT:
        """A new parser of the config's ``stream_parser`` (priced, counting into :attr:`usage`, given ``options``);
        :class:`AgentSetupError` unless it is a ``kind``: the agent reads that kind's outcome (and hands it its
        side log). ``kind_name`` names the stream parser of that kind in the message."""
        from agentrig.agents.stream import create_stream_parser

        parser = create_stream_parser(
            self.config.stream_parser, pricing=self.pricing, model=self.model.name, usage=self.usage, **options
        )
        if not isinstance(parser, kind):
            raise AgentSetupError(
                f"stream_parser {self.config.stream_parser!r} makes a {type(parser).__name__}; the {self.agent_name} agent"
                f" needs a parser of the {kind_name} kind (a subclass of {kind.__module__}.{kind.__qualname__})"
            )
        return parser

    def _begin_checkpoint(self, task: str) -> Runtime:
        """Start a checkpoint's run on ``task``: its state reset, the task emitted, the limits checked first."""
        from agentrig.trajectory import UserStep

        if self._runtime is None:
            raise AgentStepError("run() before setup(): the agent has no session")
        self._reset_checkpoint_state()
        self._emit(UserStep(content=task))
        self.check_limits()
        return self._runtime

    def _start_scratch(self, prefix: str) -> None:
        """A fresh scratch directory ``prefix...`` (under the run directory) for this checkpoint's raw streams."""
        self._scratch = temp_dir(prefix, session=self._session)

    @contextmanager
    def _open_streams(self) -> Iterator[tuple[IO[str], IO[str]]]:
        """Open the scratch files the CLI's standard output and error are written to."""
        assert self._scratch is not None
        with open(self._scratch / ARTIFACT_STDOUT, "w", encoding="utf-8") as out, open(
            self._scratch / ARTIFACT_STDERR, "w", encoding="utf-8"
        ) as err:
            yield out, err

    def _record(self, event: RuntimeEvent, out: IO[str], err: IO[str]) -> None:
        """Write a stdout or stderr event, scrubbed, to its file; other events are not text."""
        handle = out if event.kind == "stdout" else err if event.kind == "stderr" else None
        if handle is not None:
            handle.write(self._scrub(event.text))
            handle.flush()  # the stream on disk keeps up with the CLI: a crash loses nothing written

    def _run_cli(self, argv: list[str], stdin: str, parser: StreamParser) -> None:
        """Run ``argv`` in the session's runtime with ``stdin``, through :meth:`_pump`; no CLI outlives it."""
        from agentrig.runtime.interface import Invocation

        assert self._runtime is not None
        if self._log_tail is not None:
            self._log_tail.mark()  # what earlier checkpoints logged is theirs
        process = self._runtime.start(
            Invocation(argv, env=self._env, timeout=self.config.timeout, idle_timeout=self.config.idle_timeout, stdin=stdin)
        )
        self._process = process
        try:
            self._pump(process, parser)
        finally:
            if process.poll() is None:  # a listener raised (a stop asked by the runner): no orphan CLI
                process.kill()
                process.wait()
            self._process = None

    def _read_side_log(self, parser: StreamParser) -> None:
        """Hand the lines the CLI wrote to its side log (:attr:`_log_tail`) since the last call to ``parser``,
        when it is a :class:`SideLogReader`; without a side log, nothing."""
        if self._log_tail is None or not isinstance(parser, SideLogReader):
            return
        for line in self._log_tail.read_new():
            parser.consume_session_line(line)

    def _pump(self, process: RuntimeProcess, parser: StreamParser) -> None:
        """Feed the CLI's stream and its side log to ``parser``, emit the steps, kill the CLI at a limit.

        A CLI that logs a model call's usage in a file of its own does so while the tool that
        call asked for runs and its stream is silent: a watcher thread also reads the side log
        every :attr:`side_log_poll` seconds, so a limit ends that tool then, not when it is done.
        """
        import threading

        lock = threading.Lock()
        done = threading.Event()

        def watch() -> None:
            while not done.wait(self.side_log_poll):
                with lock:
                    self._read_side_log(parser)
                    self._check_live_limit(process)

        watcher = threading.Thread(target=watch, name=f"{self.agent_name}-side-log", daemon=True)
        watcher.start()
        try:
            with self._open_streams() as (out, err):
                for event in process.events():
                    self._record(event, out, err)
                    with lock:
                        self._read_side_log(parser)
                        parser.consume(event)
                        steps = list(parser.drain_steps())
                        if event.kind != "finished":
                            self._check_live_limit(process)
                    for step in steps:
                        self._emit(step)
        finally:
            done.set()
            watcher.join()
        self._read_side_log(parser)
        for step in parser.finish():
            self._emit(step)

    def _check_live_limit(self, process: RuntimeProcess) -> None:
        """Kill the CLI for the first limit its usage so far reaches."""
        if self._limit_hit is None:
            self._kill_at_limit(process, self.limit_reached())

    def _kill_at_limit(self, process: RuntimeProcess, reason: str | None) -> None:
        """Keep the first limit reached (``reason``) and kill the CLI's process tree for it."""
        if self._limit_hit is None and reason is not None:
            self._limit_hit = reason
            self.log.info("%s reached while the CLI runs: killing it", reason)
            process.kill()

    def _conclude_kill(self, timeout_kind: str | None) -> None:
        """Raise for a CLI killed at a limit or a timeout, with its stop reason set; else return."""
        if self._limit_hit is not None:
            self.stop_reason = self._limit_hit
            raise AgentLimitError(self._limit_hit, f"the CLI was killed: {self._limit_hit} reached")
        if timeout_kind == "wall":
            self.stop_reason = "wall_clock_limit"
            raise AgentLimitError("wall_clock_limit", f"the CLI ran longer than {self.config.timeout} s and was killed")
        if timeout_kind == "idle":
            self.stop_reason = "idle_timeout"
            raise AgentStepError(f"the CLI wrote nothing for {self.config.idle_timeout} s and was killed")

    def _stderr_tail(self) -> str:
        """The end of the CLI's standard error on one line (for an error message)."""
        if self._scratch is None or not (self._scratch / ARTIFACT_STDERR).exists():
            return "no stderr"
        text = (self._scratch / ARTIFACT_STDERR).read_text(encoding="utf-8", errors="replace").strip()
        return " ".join(text[-_STDERR_TAIL:].split()) or "no stderr"

    def _emit(self, step: TrajectoryStep) -> None:
        """Emit ``step`` to the listeners (scrubbed on the way: :meth:`Agent.emit_step`); :meth:`_keep_step`
        keeps it for this checkpoint's trajectory artifact."""
        self.emit_step(step)

    def _keep_step(self, step: TrajectoryStep) -> None:
        """The step listener keeping what this checkpoint emitted, as delivered."""
        self._checkpoint_steps.append(step)

    def _scrub(self, text: str) -> str:
        """``text`` without the secrets the agent holds (:attr:`Agent.secrets`: the credential, the MCP servers'
        env and header values, the run's verifier-allowed variables): nothing the CLI prints reaches disk unchecked."""
        if self.credential is not None:
            self.secrets.add(self.credential)  # an agent built by hand, not through Agent.from_config
        return self.secrets.text(text)

    # -- artifacts and teardown -----------------------------------------------------

    def _save_common_artifacts(self, path: Path, session_log: Path | None) -> None:
        """Write the raw streams, the CLI's own session log (when found) and the trajectory into ``path``."""
        from agentrig.atomic import copy_file_atomic, write_text_atomic

        path.mkdir(parents=True, exist_ok=True)
        if self._scratch is not None:
            for name in (ARTIFACT_STDOUT, ARTIFACT_STDERR):
                source = self._scratch / name
                if source.exists():
                    copy_file_atomic(source, path / name)  # scrubbed as it was written
        if session_log is not None and (text := self._read_state_file(session_log)) is not None:
            write_text_atomic(path / ARTIFACT_SESSION, self._scrub(text))
        steps = "".join(step.model_dump_json() + "\n" for step in self._checkpoint_steps)
        write_text_atomic(path / ARTIFACT_TRAJECTORY, steps)

    def _read_state_file(self, file: Path) -> str | None:
        """The text of ``file``, a file the CLI keeps in its state directory (a session log, a chat history), or
        ``None`` when it is missing or leads out of that directory: the directory lies in the runtime's home,
        where the agent's commands write too, and a link planted there (``session.jsonl -> ~/.ssh/id_rsa``)
        must not copy a host file into the run directory (:func:`agentrig.boundary.read_inside`)."""
        from agentrig.boundary import BoundaryError, read_inside

        root = self._state_dir_host if self._state_dir_host is not None else file.parent
        try:
            return read_inside(root, file).decode("utf-8", errors="replace")
        except (BoundaryError, OSError):
            return None

    def _save_record(self, path: Path, name: str, record: BaseModel | None, **dump: Any) -> None:
        """Write ``record`` (an outcome, a launch) as scrubbed indented JSON to ``path/name``; none: nothing."""
        from agentrig.atomic import write_text_atomic

        if record is not None:
            write_text_atomic(path / name, self._scrub(record.model_dump_json(indent=2, **dump)) + "\n")

    def cleanup(self) -> None:
        """Kill a CLI still running and remove the agent's scratch files; safe without setup."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        self._process = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        if self._own_state_dir and self._state_dir_host is not None:
            shutil.rmtree(self._state_dir_host, ignore_errors=True)

    def describe(self) -> dict[str, Any]:
        """Agent, problem, model and the CLI version found at setup."""
        return {**super().describe(), "model": self.model.name, "cli_version": self.cli_version}
