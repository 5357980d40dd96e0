"""The ``gemini_cli`` agent: the real Gemini CLI (``gemini --output-format stream-json``), run in the session's runtime.

One CLI process per checkpoint, task on standard input. Its stream goes
through the ``gemini-stream-json`` parser as it arrives, and the CLI's session
log is read alongside it for the usage of each model call: steps are emitted
live, usage is live, and a cost, step, token or time limit kills the process
tree the moment it is passed, also while a tool runs. With ``reset_context``
false the next checkpoint resumes the same session (``--resume SESSION``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.agents.bundles import BundleRecipe, BundleSource
from agentrig.agents.cli_agent import CliAgent, CliLaunch
from agentrig.errors import AgentSetupError, AgentStepError
from agentrig_gemini_cli.command import GeminiSettings, build_argv, build_env, thinking_config
from agentrig_gemini_cli.config import BASE_URL_ENV, KEY_ENV, GeminiCliConfig
from agentrig_gemini_cli.outcome import GeminiOutcome
from agentrig_gemini_cli.session_log import ChatLogTail

if TYPE_CHECKING:
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition, ThinkingPreset

#: ``GEMINI_CLI_HOME`` in the runtime's home: the CLI keeps ``.gemini/`` (settings, sessions) under it.
CLI_HOME_NAME = ".gemini-cli"
#: The providers whose models the CLI reaches without a ``base_url`` (Google's Gemini API).
GOOGLE_PROVIDERS = frozenset({"gemini", "google"})

ARTIFACT_OUTCOME = "gemini_outcome.json"
ARTIFACT_LAUNCH = "gemini_launch.json"
ARTIFACT_SETTINGS = "gemini_settings.json"


#: The Node.js (npm's node-linux-<arch>) the CLI's bundle runs on in a task's container: an LTS it supports (>=20).
BUNDLE_NODE_VERSION = "22.23.3"


class GeminiLaunch(CliLaunch):
    """How a checkpoint's CLI was launched (``gemini_launch.json``; the environment's values are not kept)."""

    resumed_session: str | None = None


class GeminiCliAgent(CliAgent):
    """Runs the Gemini CLI on each checkpoint; see the module docstring."""

    agent_type = "gemini_cli"
    cli_name = "Gemini CLI"
    npm_package = "@google/gemini-cli"
    #: The bundle run in a task's own container: the CLI's JavaScript bundle on Node.js from npm
    #: (``node-linux-<arch>``, glibc builds only: no musl container).
    bundle_recipe = BundleRecipe(
        cli="gemini",
        sources={
            f"linux-{arch}-glibc": BundleSource(package="@google/gemini-cli@{version}", entry="bundle/gemini.js")
            for arch in ("x64", "arm64")
        },
        node=BUNDLE_NODE_VERSION,
    )
    #: Node.js the CLI needs when its package.json names no ``engines.node`` (@google/gemini-cli 0.61.0 says >=20).
    node_fallback = "20"
    config_class = GeminiCliConfig
    config: GeminiCliConfig
    outcome: GeminiOutcome | None
    launch: GeminiLaunch | None
    _log_tail: ChatLogTail | None

    def __init__(
        self,
        config: GeminiCliConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool,
        *,
        thinking_preset: ThinkingPreset | None = None,
    ) -> None:
        """An agent for ``model`` with ``credential``; nothing runs until :meth:`setup`."""
        super().__init__("gemini_cli", config, model, credential, problem_name, verbose, default_binary="gemini")
        self.thinking = thinking_config(
            model.name, budget=config.thinking_budget, level=config.thinking_level, preset=thinking_preset
        )
        self.settings = GeminiSettings.build(model=model.name, thinking=self.thinking, max_attempts=config.max_attempts)
        # the CLI session continued across checkpoints while reset_context is false
        self.session_id: str | None = None
        self._reset_checkpoint_state()

    # -- per-checkpoint state ---------------------------------------------------

    def _forget_session(self) -> None:
        """The next checkpoint starts a fresh CLI session."""
        self.session_id = None

    # -- setup ------------------------------------------------------------------

    def _base_url(self) -> str | None:
        """The config's ``base_url``, else ``GOOGLE_GEMINI_BASE_URL``, else the model's; ``None``: Google's API."""
        return self.config.base_url or os.environ.get(BASE_URL_ENV) or self.model.base_url or None

    def preflight(self) -> None:
        """Check that the model can be reached through the Gemini API: endpoint, credential, parser."""
        self._refuse_replay()
        if self._base_url() is None and self.model.provider not in GOOGLE_PROVIDERS:
            raise AgentSetupError(
                f"the gemini_cli agent speaks the Gemini API; model provider '{self.model.provider}' is not Google's: "
                f"use a gemini/... model, or set 'base_url' (or {BASE_URL_ENV}) to a server speaking the Gemini API"
            )
        if self.credential is None:
            raise AgentSetupError(f"the gemini_cli agent needs a credential: set {KEY_ENV}")
        self._check_stream_parser()
        self._mcp_servers()  # an unset ${VAR} of an MCP server is a usage error
        self._check_host_node()  # --runtime local: a Node-script CLI needs the host's node, new enough

    def setup(self, session: Session) -> None:
        """Check the endpoint and the CLI's version in ``session``'s runtime; write its isolated settings."""
        from agentrig.agents.mcp import write_private_file

        self.preflight()
        self._session = session
        self._runtime = runtime = session.runtime
        cli_home = self._setup_state_dir(session, CLI_HOME_NAME, "agentrig-gemini-home-")
        assert self._state_dir_host is not None
        gemini_dir = self._state_dir_host / ".gemini"
        gemini_dir.mkdir(parents=True, exist_ok=True)
        self.settings = GeminiSettings.build(
            model=self.model.name, thinking=self.thinking, max_attempts=self.config.max_attempts,
            mcp_servers=self._mcp_servers(), mcp_cwd=runtime.workdir,
        )
        # owner-only: with MCP servers it holds their env and header values
        write_private_file(gemini_dir / "settings.json", self.settings.to_json())
        self._log_tail = ChatLogTail(gemini_dir / "tmp")
        self._env = build_env(
            self.config, credential=self.credential, base_url=self._base_url(), cli_home=cli_home,
            home=getattr(runtime, "home", None),
        )
        self.cli_version = self._probe_version(runtime)

    # -- a checkpoint -------------------------------------------------------------

    def run(self, task: str) -> None:
        """Run the CLI on ``task`` until it ends, a limit kills it, or it fails."""
        runtime = self._begin_checkpoint(task)
        resume = self.session_id
        argv = build_argv(self.config, binary=self._binary, model=self.model.name, resume=resume)
        self.launch = GeminiLaunch(
            argv=argv, env_names=sorted(self._env), runtime=runtime.name, cwd=runtime.workdir,
            resumed_session=resume,
        )
        self._start_scratch("agentrig-gemini-run-")
        outcome = self._stream(argv, task)
        self.outcome = outcome
        if outcome.session_id and outcome.status == "success":
            self.session_id = outcome.session_id
        self._conclude(outcome)

    def _stream(self, argv: list[str], task: str) -> GeminiOutcome:
        from agentrig_gemini_cli.stream_json import GeminiStreamParser

        # the agent hands it the session log's records (the core's side log): its kind is needed
        parser = self._make_parser(GeminiStreamParser, "gemini-stream-json")
        self._run_cli(argv, task, parser)
        return parser.outcome

    def _conclude(self, outcome: GeminiOutcome) -> None:
        """Turn how the CLI ended into a stop reason, a limit or an error."""
        self._conclude_kill(outcome.timeout_kind)
        if outcome.status == "error" or (outcome.errors and outcome.status is None):
            self.stop_reason = "api_error" if outcome.error is not None or outcome.errors else "error"
            detail = (outcome.error.message if outcome.error is not None else "") or "; ".join(outcome.errors)
            raise AgentStepError(f"the Gemini CLI reported an error: {self._scrub(detail)}")
        if outcome.status is None:
            self.stop_reason = "error"
            raise AgentStepError(
                f"the Gemini CLI exited with status {outcome.exit_code} without a result: {self._stderr_tail()}"
            )
        self.stop_reason = "completed"

    # -- artifacts ----------------------------------------------------------------

    def save_artifacts(self, path: Path) -> None:
        """Write the raw stream, stderr, the CLI's session log, the trajectory, the outcome, the launch and the settings."""
        from agentrig.atomic import write_text_atomic

        path = Path(path)
        session_id = self.outcome.session_id if self.outcome is not None else None
        log = self._log_tail.find(session_id) if self._log_tail is not None and session_id else None
        self._save_common_artifacts(path, log)
        self._save_record(path, ARTIFACT_OUTCOME, self.outcome)
        self._save_record(path, ARTIFACT_LAUNCH, self.launch)
        if self.launch is not None:  # MCP servers' env and header values scrubbed
            write_text_atomic(path / ARTIFACT_SETTINGS, self._scrub(self.settings.to_json()))
