"""The ``aider`` agent: the real aider (PyPI ``aider-chat``, pinned), run in the session's runtime.

aider runs from an environment of its own (it pins exact versions of LiteLLM, openai and many
more, which would clash with other agents' in one environment): one process per checkpoint,
started through agentrig's launcher (:mod:`agentrig_aider.launcher`) with the Python beside the
``aider`` executable. The launcher reports every model call with its usage on standard output;
the ``aider-events`` parser turns that into steps as it arrives, usage is live, and a cost, step
or time limit kills the process tree the moment it is passed. With ``reset_context`` false the
next checkpoint restores aider's chat history (``--restore-chat-history``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.agents.cli_agent import CliAgent, CliLaunch
from agentrig.errors import AgentStepError
from agentrig_aider.command import StateFiles, build_argv, build_env, workspace_chat_files
from agentrig_aider.config import AiderConfig
from agentrig_aider.events import AiderEventsParser, AiderOutcome

if TYPE_CHECKING:
    from agentrig.agents.interface import AgentContext
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition

#: aider's state directory in the runtime's home (its HOME too: ~/.aider caches stay in it).
STATE_DIR_NAME = ".agentrig-aider"

ARTIFACT_OUTCOME = "aider_outcome.json"
ARTIFACT_LAUNCH = "aider_launch.json"
ARTIFACT_CHAT_HISTORY = "aider.chat.history.md"


class AiderLaunch(CliLaunch):
    """How a checkpoint's aider was launched (``aider_launch.json``; the environment's values are not kept)."""

    chat_files: list[str]
    restored_history: bool = False


class AiderAgent(CliAgent):
    """Runs aider on each checkpoint; see the module docstring."""

    agent_type = "aider"
    cli_name = "aider"
    npm_package = ""
    runs_on_node = False
    config_class = AiderConfig
    config: AiderConfig
    outcome: AiderOutcome | None
    launch: AiderLaunch | None

    def __init__(
        self,
        config: AiderConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool,
    ) -> None:
        """An agent for ``model`` with ``credential``; nothing runs until :meth:`setup`."""
        super().__init__("aider", config, model, credential, problem_name, verbose, default_binary="aider")
        self._files: StateFiles | None = None
        #: Whether an earlier checkpoint's chat is in the history file (continued while reset_context is false).
        self._has_history = False
        self._reset_checkpoint_state()

    @classmethod
    def _context_options(cls, context: AgentContext) -> dict[str, Any]:
        """No thinking preset: aider's reasoning settings are its own (``extra_args``)."""
        return {}

    def _install_hint(self, version: str) -> str:
        """aider's own environment: a virtual environment with the pinned ``aider-chat``."""
        return (
            f"`python3 -m venv .cache/aider-venv && .cache/aider-venv/bin/pip install aider-chat=={version}`, "
            "then -c binary=.cache/aider-venv/bin/aider"
        )

    # -- per-checkpoint state ---------------------------------------------------

    def _forget_session(self) -> None:
        """The next checkpoint starts a fresh chat: the history file goes."""
        self._has_history = False
        if self._state_dir_host is not None:
            (self._state_dir_host / "chat.history.md").unlink(missing_ok=True)
            (self._state_dir_host / "input.history").unlink(missing_ok=True)

    # -- setup ------------------------------------------------------------------

    def preflight(self) -> None:
        """Check that the model can be reached through the chat-completions API: endpoint, credential, parser."""
        self._refuse_replay()
        self._require_openai_endpoint("the OpenAI chat-completions API", "an OpenAI-compatible server")
        self._check_stream_parser()

    def setup(self, session: Session) -> None:
        """Check the endpoint and aider's version in ``session``'s runtime; write the launcher into its state directory."""
        from agentrig.atomic import write_text_atomic

        self.preflight()
        base_url = self._openai_base_url()
        assert base_url is not None
        self._session = session
        self._runtime = runtime = session.runtime
        state_dir = self._setup_state_dir(session, STATE_DIR_NAME, "agentrig-aider-home-")
        assert self._state_dir_host is not None
        self._files = StateFiles(state_dir)
        launcher = resources.files("agentrig_aider").joinpath("launcher.py").read_text(encoding="utf-8")
        write_text_atomic(self._state_dir_host / "launcher.py", launcher)
        self._env = build_env(credential=self.credential, base_url=base_url, home=state_dir, extra=self.config.env)
        self.cli_version = self._probe_version(runtime)

    # -- a checkpoint -------------------------------------------------------------

    def _chat_files(self) -> list[str]:
        if self.config.chat_files == "none" or self._session is None:
            return []
        root = Path(self._session.workspace.path)
        return workspace_chat_files(root, limit=self.config.max_chat_files, max_bytes=self.config.max_chat_file_bytes,
                                    total_bytes=self.config.max_chat_bytes)

    def run(self, task: str) -> None:
        """Run aider on ``task`` until it ends, a limit kills it, or it fails."""
        from agentrig.boundary import write_under

        runtime = self._begin_checkpoint(task)
        assert self._files is not None and self._state_dir_host is not None
        # the state directory lies in the runtime's home, where the agent's commands write too: a link left
        # there (the directory swapped for one to the host's /etc) is refused, never written through
        state = self._state_dir_host
        write_under(state.parent, f"{state.name}/message.md", task.encode("utf-8"), "aider's task file")
        chat_files = self._chat_files()
        restore = self._has_history
        argv = build_argv(
            self.config, binary=self._binary, model=self.model.name, files=self._files, chat_files=chat_files,
            restore_history=restore,
        )
        self.launch = AiderLaunch(
            argv=argv, env_names=sorted(self._env), runtime=runtime.name, cwd=runtime.workdir,
            chat_files=chat_files, restored_history=restore,
        )
        self._start_scratch("agentrig-aider-run-")
        parser = self._make_parser(AiderEventsParser, "aider-events")
        self._run_cli(argv, "", parser)
        self.outcome = outcome = parser.outcome
        if outcome.model_calls:
            self._has_history = True
        self._conclude(outcome)

    def _conclude(self, outcome: AiderOutcome) -> None:
        """Turn how aider ended into a stop reason, a limit or an error."""
        self._conclude_kill(outcome.timeout_kind)
        if not outcome.started:
            self.stop_reason = "error"
            raise AgentStepError(
                f"aider did not start (exit status {outcome.exit_code}): {self._stderr_tail()}"
            )
        if outcome.last_call_failed:
            self.stop_reason = "api_error"
            raise AgentStepError(f"aider's model call failed: {self._scrub(outcome.model_errors[-1])}")
        if outcome.exit_code != 0 or outcome.exit_event not in (None, 0):
            self.stop_reason = "error"
            raise AgentStepError(f"aider exited with status {outcome.exit_code}: {self._stderr_tail()}")
        self.stop_reason = "completed"

    # -- artifacts and teardown -----------------------------------------------------

    def save_artifacts(self, path: Path) -> None:
        """Write the events stream, aider's output (stderr), its chat history, the trajectory, the outcome
        and the launch."""
        from agentrig.atomic import write_text_atomic

        path = Path(path)
        self._save_common_artifacts(path, None)
        if self._state_dir_host is not None:
            text = self._read_state_file(self._state_dir_host / "chat.history.md")
            if text is not None:
                write_text_atomic(path / ARTIFACT_CHAT_HISTORY, self._scrub(text))
        self._save_record(path, ARTIFACT_OUTCOME, self.outcome)
        self._save_record(path, ARTIFACT_LAUNCH, self.launch)
