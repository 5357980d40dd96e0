"""The ``qwen_code`` agent: the real Qwen Code CLI (``qwen --output-format stream-json``), run in the session's runtime.

One CLI process per checkpoint, task on standard input. Its stream goes through
the ``qwen-stream-json`` parser as it arrives: steps are emitted live, usage is
counted per model call as each call's message arrives (before the tools it asks
for run), and a cost, step, token or time limit kills the process tree the
moment it is passed, also while a tool runs. With ``reset_context`` false the
next checkpoint resumes the same session (``--resume SESSION``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.agents.bundles import BundleRecipe, BundleSource
from agentrig.agents.cli_agent import CliAgent, CliLaunch
from agentrig.errors import AgentSetupError, AgentStepError
from agentrig.usage import TokenUsage
from agentrig_qwen_code.command import QwenSettings, build_argv, build_env
from agentrig_qwen_code.config import BASE_URL_ENV, KEY_ENV, NODE_MAJOR, NODE_VERSION, OPENAI_BASE_URL, QwenCodeConfig
from agentrig_qwen_code.outcome import QwenOutcome
from agentrig_qwen_code.stream_json import API_ERROR_PREFIX

if TYPE_CHECKING:
    from agentrig.agents.interface import AgentContext
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition

#: ``QWEN_HOME`` in the runtime's home: the CLI keeps its settings and sessions there.
QWEN_HOME_NAME = ".qwen"

ARTIFACT_OUTCOME = "qwen_outcome.json"
ARTIFACT_LAUNCH = "qwen_launch.json"
ARTIFACT_SETTINGS = "qwen_settings.json"


class QwenLaunch(CliLaunch):
    """How a checkpoint's CLI was launched (``qwen_launch.json``; the environment's values are not kept)."""

    resumed_session: str | None = None


class QwenCodeAgent(CliAgent):
    """Runs the Qwen Code CLI on each checkpoint; see the module docstring."""

    agent_type = "qwen_code"
    cli_name = "Qwen Code CLI"
    npm_package = "@qwen-code/qwen-code"
    #: The bundle run in a task's own container: the CLI's JavaScript bundle (no required dependency: its
    #: optional ones are a terminal, the clipboard and image resizing, none used headless) on Node.js 22 from
    #: npm (``node-linux-<arch>``, glibc builds only: no musl container).
    bundle_recipe = BundleRecipe(
        cli="qwen",
        sources={
            f"linux-{arch}-glibc": BundleSource(package="@qwen-code/qwen-code@{version}", entry="cli-entry.js")
            for arch in ("x64", "arm64")
        },
        node=NODE_VERSION,
    )
    #: Node.js the CLI needs when its package.json names no ``engines.node`` (@qwen-code/qwen-code 0.24.4 says >=22).
    node_fallback = str(NODE_MAJOR)
    config_class = QwenCodeConfig
    config: QwenCodeConfig
    outcome: QwenOutcome | None
    launch: QwenLaunch | None

    def __init__(
        self,
        config: QwenCodeConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool,
    ) -> None:
        """An agent for ``model`` with ``credential``; nothing runs until :meth:`setup`."""
        super().__init__("qwen_code", config, model, credential, problem_name, verbose, default_binary="qwen")
        self.settings = QwenSettings.build()
        # the CLI session continued across checkpoints while reset_context is false, and what it has counted
        self.session_id: str | None = None
        self._session_usage = TokenUsage()
        self._reset_checkpoint_state()

    @classmethod
    def _context_options(cls, context: AgentContext) -> dict[str, Any]:
        """No options from the context: the CLI takes no thinking preset (see the README)."""
        return {}

    # -- per-checkpoint state ---------------------------------------------------

    def _forget_session(self) -> None:
        """The next checkpoint starts a fresh CLI session."""
        self.session_id = None
        self._session_usage = TokenUsage()

    # -- setup ------------------------------------------------------------------

    def _base_url(self) -> str | None:
        """The config's ``base_url``, else ``OPENAI_BASE_URL``, else the model's, else OpenAI's for an ``openai`` model."""
        url = self.config.base_url or os.environ.get(BASE_URL_ENV) or self.model.base_url
        return url or (OPENAI_BASE_URL if self.model.provider == "openai" else None)

    def preflight(self) -> None:
        """Check that the model can be reached through an OpenAI-compatible API: endpoint, credential, parser."""
        self._refuse_replay()
        if self._base_url() is None:
            raise AgentSetupError(
                f"the qwen_code agent speaks the OpenAI chat-completions API; model provider '{self.model.provider}' "
                f"names no endpoint: use an openai/... model, or set 'base_url' (or {BASE_URL_ENV}) to an "
                "OpenAI-compatible server"
            )
        if self.credential is None:
            from agentrig.credentials import env_vars_for

            variable = next(iter(env_vars_for(self.model.provider)), KEY_ENV)
            raise AgentSetupError(f"the qwen_code agent needs a credential for provider '{self.model.provider}': set {variable}")
        self._check_stream_parser()
        self._mcp_servers()  # an unset ${VAR} of an MCP server is a usage error
        self._check_host_node()  # --runtime local: a Node-script CLI needs the host's node, new enough

    def setup(self, session: Session) -> None:
        """Check the endpoint and the CLI's version in ``session``'s runtime; write its isolated settings."""
        from agentrig.agents.mcp import write_private_file

        self.preflight()
        self._session = session
        self._runtime = runtime = session.runtime
        qwen_home = self._setup_state_dir(session, QWEN_HOME_NAME, "agentrig-qwen-home-")
        assert self._state_dir_host is not None
        self.settings = QwenSettings.build(mcp_servers=self._mcp_servers(), mcp_cwd=runtime.workdir)
        # owner-only: with MCP servers it holds their env and header values
        write_private_file(self._state_dir_host / "settings.json", self.settings.to_json())
        base_url = self._base_url()
        assert base_url is not None  # preflight refused a model without one
        self._env = build_env(
            self.config, credential=self.credential, base_url=base_url, qwen_home=qwen_home,
            home=getattr(runtime, "home", None),
        )
        self.cli_version = self._probe_version(runtime)

    # -- a checkpoint -------------------------------------------------------------

    def run(self, task: str) -> None:
        """Run the CLI on ``task`` until it ends, a limit kills it, or it fails."""
        runtime = self._begin_checkpoint(task)
        resume = self.session_id
        argv = build_argv(self.config, binary=self._binary, model=self.model.name, resume=resume)
        self.launch = QwenLaunch(
            argv=argv, env_names=sorted(self._env), runtime=runtime.name, cwd=runtime.workdir, resumed_session=resume,
        )
        self._start_scratch("agentrig-qwen-run-")
        before = self._session_usage if resume else TokenUsage()
        outcome = self._stream(argv, task, before)
        self.outcome = outcome
        if outcome.session_id and outcome.status == "success":
            self.session_id = outcome.session_id
        if self.session_id is not None and (resume or outcome.status == "success"):
            # what the session has counted: the next resumed run's result includes it (a run killed
            # before its result: what agentrig counted of it live)
            self._session_usage = outcome.session_usage or before + outcome.live_usage
        self._conclude(outcome)

    def _stream(self, argv: list[str], task: str, before: TokenUsage) -> QwenOutcome:
        from agentrig_qwen_code.stream_json import QwenStreamParser

        # the agent hands it what the resumed session counted before: its kind is needed
        parser = self._make_parser(QwenStreamParser, "qwen-stream-json", session_usage_before=before)
        self._run_cli(argv, task, parser)
        return parser.outcome

    def _conclude(self, outcome: QwenOutcome) -> None:
        """Turn how the CLI ended into a stop reason, a limit or an error."""
        self._conclude_kill(outcome.timeout_kind)
        if outcome.status == "error":
            detail = outcome.error or outcome.subtype or "error"
            self.stop_reason = "api_error" if detail.startswith(API_ERROR_PREFIX) else "error"
            raise AgentStepError(f"the Qwen Code CLI reported an error: {self._scrub(detail)}")
        if outcome.status is None:
            self.stop_reason = "error"
            raise AgentStepError(
                f"the Qwen Code CLI exited with status {outcome.exit_code} without a result: {self._stderr_tail()}"
            )
        self.stop_reason = "completed"

    # -- artifacts ----------------------------------------------------------------

    def save_artifacts(self, path: Path) -> None:
        """Write the raw stream, stderr, the CLI's session log, the trajectory, the outcome, the launch and the settings."""
        from agentrig.atomic import write_text_atomic
        from agentrig_qwen_code.session_log import find_session_log

        path = Path(path)
        session_id = self.outcome.session_id if self.outcome is not None else None
        log = find_session_log(self._state_dir_host, session_id) if self._state_dir_host is not None and session_id else None
        self._save_common_artifacts(path, log)
        self._save_record(path, ARTIFACT_OUTCOME, self.outcome)
        self._save_record(path, ARTIFACT_LAUNCH, self.launch)
        if self.launch is not None:  # MCP servers' env and header values scrubbed
            write_text_atomic(path / ARTIFACT_SETTINGS, self._scrub(self.settings.to_json()))
