"""The ``opencode`` agent: the real OpenCode CLI (``opencode run --format json``), run in the session's runtime.

One CLI process per checkpoint, task on standard input. Its stream goes
through the ``opencode-run-json`` parser as it arrives: steps are emitted
live, each model call's usage and cost is counted the moment OpenCode reports
it, and a cost, token, step or time limit kills the process tree as soon as it
is passed (a watcher thread checks the clock and the runner's stop requests
while a tool runs and the CLI writes nothing). With ``reset_context`` false
the next checkpoint continues the same OpenCode session (``--session``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.agents.bundles import BundleRecipe, BundleSource, BundleTool
from agentrig.agents.cli_agent import CliAgent, CliLaunch
from agentrig.errors import AgentSetupError, AgentStepError
from agentrig_opencode.command import (
    CONFIG_FILE,
    DEFAULT_CONTEXT,
    DEFAULT_OUTPUT,
    OPENAI_BASE_URL,
    build_argv,
    build_env,
    opencode_file,
)
from agentrig_opencode.config import OpenCodeConfig
from agentrig_opencode.outcome import OpenCodeOutcome

if TYPE_CHECKING:
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition, ThinkingPreset

STATE_DIR_NAME = ".agentrig-opencode"
#: The state directory's parts: OpenCode's XDG directories and its temporary files.
STATE_PARTS = ("config", "data", "cache", "state", "tmp")

ARTIFACT_OUTCOME = "opencode_outcome.json"
ARTIFACT_LAUNCH = "opencode_launch.json"
ARTIFACT_CONFIG = "opencode_config.json"


class OpenCodeLaunch(CliLaunch):
    """How a checkpoint's CLI was launched (``opencode_launch.json``; the environment's values are not kept)."""

    continued_session: str | None = None


class OpenCodeAgent(CliAgent):
    """Runs OpenCode on each checkpoint; see the module docstring."""

    agent_type = "opencode"
    cli_name = "OpenCode CLI"
    npm_package = "opencode-ai"
    #: The bundle run in a task's own container: OpenCode's native build for the container's C library.
    bundle_recipe = BundleRecipe(
        cli="opencode",
        sources={
            f"linux-{arch}-{libc}": BundleSource(
                package=f"opencode-linux-{arch}{'-musl' if libc == 'musl' else ''}@{{version}}", entry="bin/opencode"
            )
            for arch in ("x64", "arm64")
            for libc in ("glibc", "musl")
        },
        # OpenCode downloads ripgrep from GitHub when `rg` is not on PATH: the static musl rg that Codex's
        # pinned npm package ships goes in the bundle instead
        tools=[
            BundleTool(
                name="rg", package="@openai/codex@0.169.0-linux-{arch}", entry="vendor/{triple}-unknown-linux-musl/codex-path/rg"
            )
        ],
    )
    #: Node.js the CLI needs when its package.json names no ``engines.node``: the pinned 1.18.33 is a native
    #: executable (not checked).
    node_fallback = "18"
    config_class = OpenCodeConfig
    config: OpenCodeConfig
    outcome: OpenCodeOutcome | None
    launch: OpenCodeLaunch | None

    def __init__(
        self,
        config: OpenCodeConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool,
        *,
        thinking_preset: ThinkingPreset | None = None,
    ) -> None:
        """An agent for ``model`` with ``credential``; nothing runs until :meth:`setup`."""
        super().__init__("opencode", config, model, credential, problem_name, verbose, default_binary="opencode")
        self.reasoning_effort = config.reasoning_effort or (thinking_preset.value if thinking_preset is not None else None)
        # the OpenCode session continued across checkpoints while reset_context is false
        self.session_id: str | None = None
        self._config_text = ""
        self._reset_checkpoint_state()

    # -- per-checkpoint state ---------------------------------------------------

    def _forget_session(self) -> None:
        """The next checkpoint starts a fresh OpenCode session."""
        self.session_id = None

    # -- setup ------------------------------------------------------------------

    def _base_url(self) -> str | None:
        from agentrig.llm.factory import resolve_base_url

        base_url = resolve_base_url(self.model, self.config.base_url)
        if base_url is None and self.model.provider == "openai":
            return OPENAI_BASE_URL
        return base_url

    def preflight(self) -> None:
        """Check that the model can be reached through an OpenAI-compatible endpoint, with a credential and a parser."""
        self._refuse_replay()
        if self._base_url() is None:
            raise AgentSetupError(
                f"the opencode agent speaks the OpenAI chat-completions API; model provider '{self.model.provider}' has "
                "no endpoint: use an openai/... model or set 'base_url' to an OpenAI-compatible server"
            )
        if self.credential is None:
            raise AgentSetupError("the opencode agent needs a credential: set OPENAI_API_KEY")
        self._check_stream_parser()
        self._check_mcp_servers()
        self._check_host_node()  # --runtime local: a Node-script CLI needs the host's node, new enough

    def _check_mcp_servers(self) -> None:
        """Resolve the MCP servers (an unset ``${VAR}`` is a usage error) and refuse a value OpenCode would rewrite."""
        from agentrig_opencode.command import substitution_in

        where = substitution_in(self._mcp_servers())
        if where is not None:
            raise AgentSetupError(
                f"opencode config: {where} contains '{{env:' or '{{file:', which OpenCode replaces in its config "
                "(another variable's value or a file's content would reach the server): remove it from the value"
            )

    def setup(self, session: Session) -> None:
        """Check the endpoint and the CLI's version in ``session``'s runtime; write its isolated config."""
        from agentrig.agents.mcp import write_private_file

        self.preflight()
        base_url = self._base_url()
        assert base_url is not None
        self._session = session
        self._runtime = runtime = session.runtime
        state_dir = self._setup_state_dir(session, STATE_DIR_NAME, "agentrig-opencode-home-")
        assert self._state_dir_host is not None
        for part in STATE_PARTS:
            (self._state_dir_host / part).mkdir(exist_ok=True)
        config_file = opencode_file(
            model=self.model.name,
            base_url=base_url,
            pricing=self.pricing,
            reasoning_effort=self.reasoning_effort,
            context=self.config.context_window or self.model.context_window or DEFAULT_CONTEXT,
            output=self.config.max_output_tokens or self.model.max_output_tokens or DEFAULT_OUTPUT,
            mcp_servers=self._mcp_servers(),
            mcp_cwd=runtime.workdir,
        )
        self._config_text = config_file.to_json()
        # owner-only: with MCP servers it holds their environment and header values
        write_private_file(self._state_dir_host / CONFIG_FILE, self._config_text)
        home = getattr(runtime, "home", None)
        self._env = build_env(self.config, credential=self.credential, state_dir=state_dir, home=home)
        self.cli_version = self._probe_version(runtime)

    # -- a checkpoint -------------------------------------------------------------

    def run(self, task: str) -> None:
        """Run the CLI on ``task`` until it ends, a limit kills it, or it fails."""
        runtime = self._begin_checkpoint(task)
        continued = self.session_id
        argv = build_argv(
            self.config, binary=self._binary, model=self.model.name, title=f"agentrig {self.problem_name}", session=continued
        )
        self.launch = OpenCodeLaunch(
            argv=argv, env_names=sorted(self._env), runtime=runtime.name, cwd=runtime.workdir,
            continued_session=continued,
        )
        self._start_scratch("agentrig-opencode-run-")
        outcome = self._stream(argv, task)
        self.outcome = outcome
        if outcome.session_id:
            self.session_id = outcome.session_id
        self._conclude(outcome)

    def _stream(self, argv: list[str], task: str) -> OpenCodeOutcome:
        from agentrig_opencode.run_json import OpenCodeRunParser

        parser = self._make_parser(OpenCodeRunParser, "opencode-run-json")  # the agent reads its outcome: its kind is needed
        # the core's pump: a watcher also checks the limits while a tool runs and the CLI writes nothing
        self._run_cli(argv, task, parser)
        return parser.outcome

    def _conclude(self, outcome: OpenCodeOutcome) -> None:
        """Turn how the CLI ended into a stop reason, a limit or an error."""
        self._conclude_kill(outcome.timeout_kind)
        if outcome.errors:
            self.stop_reason = "api_error"
            raise AgentStepError(f"OpenCode reported an error: {self._scrub('; '.join(outcome.errors))}")
        if not outcome.completed:
            self.stop_reason = "error"
            raise AgentStepError(
                f"the OpenCode CLI exited with status {outcome.exit_code} after {outcome.model_calls} model call(s): "
                f"{self._stderr_tail()}"
            )
        self.stop_reason = "completed"

    # -- artifacts --------------------------------------------------------------------

    def save_artifacts(self, path: Path) -> None:
        """Write the raw stream, stderr, the trajectory, the outcome, the launch and the CLI's config."""
        from agentrig.atomic import write_text_atomic

        path = Path(path)
        self._save_common_artifacts(path, None)
        self._save_record(path, ARTIFACT_OUTCOME, self.outcome)
        self._save_record(path, ARTIFACT_LAUNCH, self.launch)
        if self._config_text:
            write_text_atomic(path / ARTIFACT_CONFIG, self._scrub(self._config_text))
