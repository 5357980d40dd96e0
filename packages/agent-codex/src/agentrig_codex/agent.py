"""The ``codex`` agent: the real Codex CLI (``codex exec --json``), run in the session's runtime.

One CLI process per checkpoint, task on standard input. Its stream goes
through the ``codex-exec-json`` parser as it arrives, and the CLI's session
log is read alongside it for the usage of each model call: steps are emitted
live, usage is live, and a cost, step or time limit kills the process tree the
moment it is passed. With ``reset_context`` false the next checkpoint resumes
the same Codex thread (``codex exec resume``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.agents.bundles import BundleRecipe, BundleSource
from agentrig.agents.cli_agent import (
    ARTIFACT_SESSION as ARTIFACT_SESSION,
    ARTIFACT_STDERR as ARTIFACT_STDERR,
    ARTIFACT_STDOUT as ARTIFACT_STDOUT,
    ARTIFACT_TRAJECTORY as ARTIFACT_TRAJECTORY,
    CliAgent,
    CliLaunch,
)
from agentrig.errors import AgentSetupError, AgentStepError
from agentrig.usage import TokenUsage
from agentrig_codex.command import OPENAI_BASE_URL, build_argv, build_env, config_toml
from agentrig_codex.config import CodexConfig
from agentrig_codex.outcome import CodexOutcome
from agentrig_codex.session_log import SessionLogTail

if TYPE_CHECKING:
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition, ThinkingPreset

CODEX_HOME_NAME = ".codex"

ARTIFACT_OUTCOME = "codex_outcome.json"
ARTIFACT_LAUNCH = "codex_launch.json"


class CodexLaunch(CliLaunch):
    """How a checkpoint's CLI was launched (``codex_launch.json``; the environment's values are not kept)."""

    resumed_thread: str | None = None


class CodexAgent(CliAgent):
    """Runs the Codex CLI on each checkpoint; see the module docstring."""

    agent_type = "codex"
    cli_name = "Codex CLI"
    npm_package = "@openai/codex"
    #: The bundle run in a task's own container: Codex's static musl build, which runs in any container of its architecture.
    bundle_recipe = BundleRecipe(
        cli="codex",
        sources={
            f"linux-{arch}-static": BundleSource(
                package=f"@openai/codex@{{version}}-linux-{arch}", entry=f"vendor/{triple}-unknown-linux-musl/bin/codex"
            )
            for arch, triple in (("x64", "x86_64"), ("arm64", "aarch64"))
        },
    )
    #: Node.js the CLI needs when its package.json names no ``engines.node`` (@openai/codex 0.169.0 says >=16).
    node_fallback = "16"
    config_class = CodexConfig
    config: CodexConfig
    outcome: CodexOutcome | None
    launch: CodexLaunch | None
    _log_tail: SessionLogTail | None

    def __init__(
        self,
        config: CodexConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool,
        *,
        thinking_preset: ThinkingPreset | None = None,
    ) -> None:
        """An agent for ``model`` with ``credential``; nothing runs until :meth:`setup`."""
        super().__init__("codex", config, model, credential, problem_name, verbose, default_binary="codex")
        self.reasoning_effort = config.reasoning_effort or (thinking_preset.value if thinking_preset is not None else None)
        # the Codex thread continued across checkpoints while reset_context is false
        self.thread_id: str | None = None
        self._thread_usage = TokenUsage()
        self._reset_checkpoint_state()

    # -- per-checkpoint state ---------------------------------------------------

    def _forget_session(self) -> None:
        """The next checkpoint starts a fresh Codex thread."""
        self.thread_id = None
        self._thread_usage = TokenUsage()

    # -- setup ------------------------------------------------------------------

    def _base_url(self) -> str | None:
        from agentrig.llm.factory import resolve_base_url

        base_url = resolve_base_url(self.model, self.config.base_url)
        if base_url is None and self.model.provider == "openai":
            return OPENAI_BASE_URL
        return base_url

    def preflight(self) -> None:
        """Check that the model can be reached through the Responses API: endpoint, credential, parser."""
        self._refuse_replay()
        if self._base_url() is None:
            raise AgentSetupError(
                f"the codex agent speaks OpenAI's Responses API; model provider '{self.model.provider}' has no "
                "endpoint: use an openai/... model or set 'base_url' to a Responses-compatible server"
            )
        if self.credential is None:
            raise AgentSetupError("the codex agent needs a credential: set OPENAI_API_KEY")
        self._check_stream_parser()
        self._mcp_servers()  # an unset ${VAR} of an MCP server is a usage error
        self._check_host_node()  # --runtime local: a Node-script CLI needs the host's node, new enough

    def setup(self, session: Session) -> None:
        """Check the endpoint and the CLI's version in ``session``'s runtime; write its isolated config."""
        from agentrig.agents.mcp import write_private_file

        self.preflight()
        base_url = self._base_url()
        assert base_url is not None
        self._session = session
        self._runtime = runtime = session.runtime
        home = getattr(runtime, "home", None)
        codex_home = self._setup_state_dir(session, CODEX_HOME_NAME, "agentrig-codex-home-")
        assert self._state_dir_host is not None
        text = config_toml(
            model=self.model.name,
            base_url=base_url,
            reasoning_effort=self.reasoning_effort,
            request_max_retries=self.config.request_max_retries,
            stream_max_retries=self.config.stream_max_retries,
            mcp_servers=self._mcp_servers(),
            mcp_cwd=runtime.workdir,
        )
        # owner-only: with MCP servers it holds their env and header values
        write_private_file(self._state_dir_host / "config.toml", text)
        self._log_tail = SessionLogTail(self._state_dir_host / "sessions")
        self._env = build_env(self.config, credential=self.credential, codex_home=codex_home, home=home)
        self.cli_version = self._probe_version(runtime)

    # -- a checkpoint -------------------------------------------------------------

    def run(self, task: str) -> None:
        """Run the CLI on ``task`` until it ends, a limit kills it, or it fails."""
        runtime = self._begin_checkpoint(task)
        resume = self.thread_id
        argv = build_argv(self.config, binary=self._binary, model=self.model.name, resume=resume)
        self.launch = CodexLaunch(
            argv=argv, env_names=sorted(self._env), runtime=runtime.name, cwd=runtime.workdir,
            resumed_thread=resume,
        )
        self._start_scratch("agentrig-codex-run-")
        outcome = self._stream(argv, task)
        self.outcome = outcome
        if outcome.thread_id and outcome.turn_completed:
            self.thread_id = outcome.thread_id
            self._thread_usage = self._thread_usage + (outcome.cli_usage or TokenUsage())
        self._conclude(outcome)

    def _stream(self, argv: list[str], task: str) -> CodexOutcome:
        from agentrig_codex.exec_json import CodexExecParser

        # the agent hands it the session log's usage records (the core's side log): its kind is needed
        prior = self._thread_usage if self.thread_id else None
        parser = self._make_parser(CodexExecParser, "codex-exec-json", prior_thread_usage=prior)
        self._run_cli(argv, task, parser)
        return parser.outcome

    def _conclude(self, outcome: CodexOutcome) -> None:
        """Turn how the CLI ended into a stop reason, a limit or an error."""
        self._conclude_kill(outcome.timeout_kind)
        if outcome.turn_failed or (outcome.errors and not outcome.turn_completed):
            self.stop_reason = "api_error"
            detail = outcome.turn_failed or "; ".join(outcome.errors)
            raise AgentStepError(f"Codex reported an error: {self._scrub(detail)}")
        if not outcome.turn_completed:
            self.stop_reason = "error"
            raise AgentStepError(
                f"the Codex CLI exited with status {outcome.exit_code} without completing its turn: {self._stderr_tail()}"
            )
        self.stop_reason = "completed"

    # -- artifacts and teardown -----------------------------------------------------

    def save_artifacts(self, path: Path) -> None:
        """Write the raw stream, stderr, the CLI's session log, the trajectory, the outcome and the launch."""
        path = Path(path)
        thread = self.outcome.thread_id if self.outcome is not None else None
        log = self._log_tail.find(thread) if self._log_tail is not None and thread else None
        self._save_common_artifacts(path, log)
        self._save_record(path, ARTIFACT_OUTCOME, self.outcome)
        self._save_record(path, ARTIFACT_LAUNCH, self.launch)
