"""The ``claude_code`` agent: the real Claude Code CLI, run in the session's runtime.

One CLI process per checkpoint, ``claude --print --output-format stream-json``,
task on standard input. Its stream goes through
:class:`~agentrig_claude_code.stream_json.ClaudeStreamParser` as it arrives:
steps are emitted live, usage is live, and a cost limit kills the process
tree the moment it is passed. With ``reset_context`` false the next
checkpoint resumes the same Claude session (``--resume``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.agents.bundles import BundleRecipe, BundleSource
from agentrig.agents.cli_agent import (
    ARTIFACT_SESSION as ARTIFACT_SESSION,
    ARTIFACT_STDERR as ARTIFACT_STDERR,
    ARTIFACT_STDOUT as ARTIFACT_STDOUT,
    ARTIFACT_TRAJECTORY as ARTIFACT_TRAJECTORY,
    CliAgent,
    CliLaunch,
)
from agentrig.agents.interface import AgentContext
from agentrig.errors import AgentSetupError, AgentStepError
from agentrig.runtime.interface import Invocation
from agentrig_claude_code.command import build_argv, build_env, mcp_config_json, mcp_timeout_env
from agentrig_claude_code.config import ClaudeCodeConfig
from agentrig_claude_code.outcome import ClaudeStreamOutcome

if TYPE_CHECKING:
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition, ThinkingPreset
    from agentrig.runtime.interface import Runtime

#: Providers whose API the CLI speaks without an explicit endpoint.
ANTHROPIC_PROVIDERS = frozenset({"anthropic"})
CONFIG_DIR_NAME = ".claude"
#: The ``--mcp-config`` file in the CLI's private config directory (0600: it holds the servers' secrets).
MCP_CONFIG_NAME = "agentrig-mcp.json"

ARTIFACT_OUTCOME = "claude_outcome.json"
ARTIFACT_LAUNCH = "claude_launch.json"


class ClaudeLaunch(CliLaunch):
    """How a checkpoint's CLI was launched (``claude_launch.json``; the environment's values are not kept)."""

    resumed_session: str | None = None


class ClaudeCodeAgent(CliAgent):
    """Runs the Claude Code CLI on each checkpoint; see the module docstring."""

    agent_type = "claude_code"
    cli_name = "Claude Code CLI"
    npm_package = "@anthropic-ai/claude-code"
    #: The bundle run in a task's own container: Claude Code's native build for the container's C library.
    bundle_recipe = BundleRecipe(
        cli="claude",
        sources={
            f"linux-{arch}-{libc}": BundleSource(
                package=f"@anthropic-ai/claude-code-linux-{arch}{'-musl' if libc == 'musl' else ''}@{{version}}", entry="claude"
            )
            for arch in ("x64", "arm64")
            for libc in ("glibc", "musl")
        },
    )
    #: Node.js the CLI needs when its package.json names no ``engines.node``: the pinned 2.1.330 is a native
    #: executable (not checked); the releases that ran on Node asked for >=18.
    node_fallback = "18"
    config_class = ClaudeCodeConfig
    config: ClaudeCodeConfig
    outcome: ClaudeStreamOutcome | None
    launch: ClaudeLaunch | None

    def __init__(
        self,
        config: ClaudeCodeConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool,
        *,
        thinking_preset: ThinkingPreset | None = None,
        thinking_max_tokens: int | None = None,
    ) -> None:
        """An agent for ``model`` with ``credential``; nothing runs until :meth:`setup`."""
        super().__init__("claude_code", config, model, credential, problem_name, verbose, default_binary="claude")
        self.max_thinking_tokens = _thinking_budget(model, thinking_preset, thinking_max_tokens)
        # the Claude session continued across checkpoints while reset_context is false
        self.claude_session_id: str | None = None
        self._claude_session_cost = 0.0
        #: The ``--mcp-config`` path as the CLI sees it (``None``: no MCP server configured).
        self._mcp_config: str | None = None
        self._reset_checkpoint_state()

    @classmethod
    def _context_options(cls, context: AgentContext) -> dict[str, Any]:
        return {"thinking_preset": context.thinking_preset, "thinking_max_tokens": context.thinking_max_tokens}

    # -- per-checkpoint state ---------------------------------------------------

    def _forget_session(self) -> None:
        """The next checkpoint starts a fresh Claude session."""
        self.claude_session_id = None
        self._claude_session_cost = 0.0

    # -- setup ------------------------------------------------------------------

    def preflight(self) -> None:
        """Check that the model can be reached through the Anthropic API: endpoint and credential."""
        from agentrig.llm.factory import resolve_base_url

        self._refuse_replay()
        base_url = resolve_base_url(self.model, self.config.base_url)
        if self.model.provider not in ANTHROPIC_PROVIDERS and not base_url:
            raise AgentSetupError(
                f"the claude_code agent speaks the Anthropic Messages API; model provider '{self.model.provider}' "
                "has no endpoint: use an anthropic/... model or set 'base_url' to an Anthropic-compatible server"
            )
        if self.credential is None:
            raise AgentSetupError(
                "the claude_code agent needs a credential: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"
            )
        self._check_stream_parser()
        self._mcp_servers()  # an unset ${VAR} of an MCP server is a usage error
        self._check_host_node()  # --runtime local: a Node-script CLI needs the host's node, new enough

    def setup(self, session: Session) -> None:
        """Check the model endpoint, the CLI and its version in ``session``'s runtime; isolate its state."""
        from agentrig.llm.factory import resolve_base_url

        self.preflight()
        base_url = resolve_base_url(self.model, self.config.base_url)
        self._session = session
        self._runtime = runtime = session.runtime
        home = getattr(runtime, "home", None)
        config_dir = self._setup_state_dir(session, CONFIG_DIR_NAME, "agentrig-claude-config-")
        as_root = self._probe_uid(runtime) == 0
        self._env = build_env(
            self.config,
            credential=self.credential,
            base_url=base_url,
            home=home,
            config_dir=config_dir,
            as_root=as_root,
            max_thinking_tokens=self.max_thinking_tokens,
        )
        self._write_mcp_config(config_dir)
        self.cli_version = self._probe_version(runtime)

    def _write_mcp_config(self, config_dir: str) -> None:
        """Give the CLI the MCP servers: a 0600 ``--mcp-config`` file in its private config directory, and
        their timeouts; nothing without servers."""
        from agentrig.agents.mcp import write_private_file

        servers = self._mcp_servers()
        if not servers or self._state_dir_host is None:
            return
        write_private_file(self._state_dir_host / MCP_CONFIG_NAME, mcp_config_json(servers))
        self._mcp_config = f"{config_dir.rstrip('/')}/{MCP_CONFIG_NAME}"
        self._env.update(mcp_timeout_env(servers))

    def _probe_uid(self, runtime: Runtime) -> int | None:
        result = runtime.exec(Invocation(["id", "-u"], timeout=30))
        text = result.stdout.strip()
        return int(text) if result.exit_code == 0 and text.isascii() and text.isdigit() else None

    # -- a checkpoint -------------------------------------------------------------

    def run(self, task: str) -> None:
        """Run the CLI on ``task`` until it ends, a limit kills it, or it fails."""
        runtime = self._begin_checkpoint(task)
        max_turns = None
        if self.cost_limits.step_limit:
            max_turns = self.cost_limits.step_limit - self.usage.steps
        resume = self.claude_session_id
        argv = build_argv(
            self.config, binary=self._binary, model=self.model.name, max_turns=max_turns, resume=resume,
            mcp_config=self._mcp_config, mcp_servers=list(self.config.mcp_servers),
        )
        self.launch = ClaudeLaunch(
            argv=argv,
            env_names=sorted(self._env),
            runtime=runtime.name,
            cwd=runtime.workdir,
            resumed_session=resume,
        )
        self._start_scratch("agentrig-claude-run-")
        outcome = self._stream(argv, task, resume)
        self.outcome = outcome
        # resume only a session the CLI saved: one killed early has an id but no transcript
        self.claude_session_id = outcome.session_id if self._transcript(outcome.session_id) is not None else None
        if outcome.session_id and self.claude_session_id is None:
            self.log.warning("Claude session %s was not saved: the next checkpoint starts a new one", outcome.session_id)
        if outcome.result is not None and outcome.result.total_cost_usd is not None:
            self._claude_session_cost = outcome.result.total_cost_usd
        self._conclude(outcome)

    def _stream(self, argv: list[str], task: str, resume: str | None) -> ClaudeStreamOutcome:
        from agentrig.agents.stream import create_stream_parser

        assert self._runtime is not None and self._scratch is not None
        # through the registry, as any agent reads a stream: `-c stream_parser=NAME` picks another
        # plugin's parser of the CLI's stream-json (one whose `outcome` is a ClaudeStreamOutcome)
        parser: Any = create_stream_parser(
            self.config.stream_parser,
            pricing=self.pricing,
            model=self.model.name,
            usage=self.usage,
            prior_session_cost=self._claude_session_cost if resume else 0.0,
        )
        process = self._runtime.start(
            Invocation(argv, env=self._env, timeout=self.config.timeout, idle_timeout=self.config.idle_timeout, stdin=task)
        )
        self._process = process
        with self._open_streams() as (out, err):
            for event in process.events():
                self._record(event, out, err)
                parser.consume(event)
                for step in parser.drain_steps():
                    self._emit(step)
                if self._limit_hit is None and event.kind == "stdout":
                    self._kill_at_limit(process, self._live_limit())
            for step in parser.finish():
                self._emit(step)
        self._process = None
        return parser.outcome

    def _live_limit(self) -> str | None:
        # the step limit is the CLI's own --max-turns: it stops cleanly between turns
        limits = self.cost_limits
        if limits.cost_limit and self.usage.cost >= limits.cost_limit:
            return "cost_limit"
        if limits.net_cost_limit and self.usage.cost + self.prior_cost >= limits.net_cost_limit:
            return "net_cost_limit"
        return None

    def _conclude(self, outcome: ClaudeStreamOutcome) -> None:
        """Turn how the CLI ended into a stop reason, a limit or an error."""
        self._conclude_kill(outcome.timeout_kind)
        result = outcome.result
        if result is None:
            self.stop_reason = "error"
            raise AgentStepError(
                f"the Claude Code CLI exited with status {outcome.exit_code} without a result: {self._stderr_tail()}"
            )
        if result.subtype == "error_max_turns":
            self.stop_reason = "step_limit"
            return
        if result.is_error:
            detail = self._scrub(result.result or "; ".join(str(e) for e in result.errors or []) or self._stderr_tail())
            # its cause says whether another try may do better (a 5xx, 529, 429 or dropped connection), as the
            # core's model clients say for theirs: `--retries` reads it
            cause = result.llm_error(detail)
            self.stop_reason = "api_error" if cause is not None else "error"
            status = f", API status {result.api_error_status}" if result.api_error_status else ""
            raise AgentStepError(f"Claude Code reported an error ({result.subtype}{status}): {detail}") from cause
        self.stop_reason = "completed"

    # -- artifacts and teardown -----------------------------------------------------

    def save_artifacts(self, path: Path) -> None:
        """Write the raw stream, stderr, the CLI's session transcript, the trajectory and the outcome."""
        path = Path(path)
        self._save_common_artifacts(path, self._transcript(self.outcome.session_id if self.outcome is not None else None))
        self._save_record(path, ARTIFACT_OUTCOME, self.outcome, by_alias=True)
        self._save_record(path, ARTIFACT_LAUNCH, self.launch)

    def _transcript(self, session_id: str | None = None) -> Path | None:
        """The CLI's own transcript of a Claude session (default: the current one) in the isolated config directory."""
        session_id = session_id or self.claude_session_id
        if self._state_dir_host is None or not session_id:
            return None
        found = sorted((self._state_dir_host / "projects").glob(f"*/{session_id}.jsonl"))
        return found[0] if found else None


def _thinking_budget(
    model: ModelDefinition, preset: ThinkingPreset | None, max_tokens: int | None
) -> int | None:
    """``MAX_THINKING_TOKENS``: an explicit budget, else the preset's (the model's default when it thinks)."""
    if max_tokens is not None:
        return max_tokens
    if preset is None and model.supports_thinking:
        preset = model.default_thinking
    return preset.budget_tokens() if preset is not None else None

