"""The ``openhands`` agent: OpenHands' SDK (``Agent`` + ``Conversation``, headless) run in the session's runtime.

OpenHands needs Python 3.12 or later, so it runs as the CLI agents run their
npm CLIs: in an environment of its own (``binary``: that environment's Python),
as a child process in the session's runtime. agentrig's driver script
(:mod:`agentrig_openhands.driver`) is copied into the agent's private state
directory and started once per checkpoint with the task on standard input and
the workspace as its working directory; it writes JSON lines that the
``openhands-jsonl`` parser turns into steps as they arrive. Usage is live, and a
cost, step, token or time limit kills the process tree the moment it is passed,
also while a tool runs. With ``reset_context`` false the next checkpoint
continues the same conversation (the SDK's persistence directory, in the state
directory, under the same conversation id).
"""

from __future__ import annotations

import uuid
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agentrig.agents.cli_agent import CliAgent, CliLaunch
from agentrig.errors import AgentSetupError, AgentStepError
from agentrig_openhands.config import BASE_URL_ENV, KEY_ENV, OpenHandsConfig
from agentrig_openhands.outcome import OpenHandsOutcome

if TYPE_CHECKING:
    from agentrig.agents.mcp import McpHttpServer, McpStdioServer
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition, ThinkingPreset
    from agentrig.runtime.interface import Runtime

#: The agent's state directory in the runtime's home: the driver, the run files, the SDK's conversations.
STATE_DIR_NAME = ".agentrig-openhands"
DRIVER_NAME = "agentrig_openhands_driver.py"
RUN_FILE_NAME = "run.json"
CONVERSATIONS_DIR = "conversations"
#: Where the driver's ``--version`` answer names the SDK and the Python.
_VERSION_LINE = "openhands-sdk "
_MIN_PYTHON = (3, 12)

ARTIFACT_OUTCOME = "openhands_outcome.json"
ARTIFACT_LAUNCH = "openhands_launch.json"
ARTIFACT_RUN = "openhands_run.json"

INSTALL_HINT = (
    "make a Python 3.12+ environment with the pinned SDK (`python3.12 -m venv VENV && VENV/bin/pip install "
    "openhands-sdk=={version} openhands-tools=={version}`) and set 'binary' to VENV/bin/python"
)


class OpenHandsLaunch(CliLaunch):
    """How a checkpoint's driver was launched (``openhands_launch.json``; the environment's values are not kept)."""

    conversation_id: str
    continued: bool


class OpenHandsRun(BaseModel):
    """The driver's run file (``run.json`` in the state directory, owner-only: it holds the MCP servers' values)."""

    model: str
    conversation_id: str
    persistence_dir: str
    num_retries: int | None = None
    input_cost_per_token: float | None = None
    output_cost_per_token: float | None = None
    max_iterations: int | None = None
    stuck_detection: bool = True
    reasoning_effort: str | None = None
    mcp_config: dict[str, dict[str, Any]] = {}


def mcp_config(servers: dict[str, McpStdioServer | McpHttpServer], cwd: str | None) -> dict[str, dict[str, Any]]:
    """The SDK's ``mcp_config`` (fastmcp's server entries) of agentrig's resolved MCP servers."""
    config: dict[str, dict[str, Any]] = {}
    for name, server in servers.items():
        if server.type == "stdio":
            entry: dict[str, Any] = {"command": server.command, "args": server.args, "env": server.env}
            if cwd:
                entry["cwd"] = cwd
            config[name] = entry
        else:
            config[name] = {"url": server.url, "headers": server.headers, "transport": "http"}
    return config


def driver_source() -> str:
    """The driver script's text (package data of this distribution)."""
    return files("agentrig_openhands").joinpath("driver.py").read_text(encoding="utf-8")


class OpenHandsAgent(CliAgent):
    """Runs OpenHands' SDK on each checkpoint; see the module docstring."""

    agent_type = "openhands"
    cli_name = "OpenHands SDK"
    npm_package = ""
    config_class = OpenHandsConfig
    config: OpenHandsConfig
    outcome: OpenHandsOutcome | None
    launch: OpenHandsLaunch | None

    def __init__(
        self,
        config: OpenHandsConfig,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        problem_name: str,
        verbose: bool,
        *,
        thinking_preset: ThinkingPreset | None = None,
    ) -> None:
        """An agent for ``model`` with ``credential``; nothing runs until :meth:`setup`."""
        super().__init__("openhands", config, model, credential, problem_name, verbose, default_binary="python3")
        self.thinking_preset = thinking_preset
        #: The conversation continued across checkpoints while reset_context is false.
        self.conversation_id: str | None = None
        self._state_dir: str | None = None
        self._run_file: OpenHandsRun | None = None
        self._reset_checkpoint_state()

    # -- per-checkpoint state ---------------------------------------------------

    def _forget_session(self) -> None:
        """The next checkpoint starts a new conversation."""
        self.conversation_id = None

    # -- setup ------------------------------------------------------------------

    def _base_url(self) -> str | None:
        """The config's ``base_url``, else the provider's variable (``OPENAI_BASE_URL``, ...), else the model's."""
        from agentrig.llm.factory import resolve_base_url

        return resolve_base_url(self.model, self.config.base_url)

    def _litellm_model(self) -> str:
        """The model as LiteLLM names it: the config's, else ``PROVIDER/NAME`` (``openai/NAME`` at a ``base_url``
        of a provider LiteLLM does not route itself)."""
        if self.config.litellm_model:
            return self.config.litellm_model
        provider = self.model.provider
        if provider not in ("openai", "anthropic", "gemini", "openrouter", "deepseek", "mistral", "groq", "xai"):
            provider = "openai"  # an OpenAI-compatible server (vLLM, Ollama, a test fake)
        return f"{provider}/{self.model.name}"

    def preflight(self) -> None:
        """Check what can be checked before anything runs: not a replay model, the parser, the MCP servers."""
        self._refuse_replay()
        self._check_stream_parser()
        self._mcp_servers()  # an unset ${VAR} of an MCP server is a usage error

    def setup(self, session: Session) -> None:
        """Copy the driver into the agent's state directory and check the SDK's version in ``session``'s runtime."""
        from agentrig.atomic import write_text_atomic

        self.preflight()
        self._session = session
        self._runtime = runtime = session.runtime
        self._state_dir = self._setup_state_dir(session, STATE_DIR_NAME, "agentrig-openhands-home-")
        assert self._state_dir_host is not None
        write_text_atomic(self._state_dir_host / DRIVER_NAME, driver_source())
        env = dict(self.config.env)
        if self.credential is not None:
            env[KEY_ENV] = self.credential.secret()
        base_url = self._base_url()
        if base_url:
            env[BASE_URL_ENV] = base_url
        # OpenHands keeps ~/.openhands and the shell's history in HOME: the private state directory
        env["HOME"] = self._state_dir
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM's price list from the package, not the internet
        env["OPENHANDS_SUPPRESS_BANNER"] = "1"
        self._env = env
        self.cli_version = self._probe_version(runtime)

    def _driver(self) -> str:
        assert self._state_dir is not None
        return f"{self._state_dir.rstrip('/')}/{DRIVER_NAME}"

    def _probe_version(self, runtime: Runtime) -> str:
        """The SDK version the driver reports with ``binary``; refuse a Python that cannot run it or another version."""
        from agentrig.runtime.interface import Invocation

        wanted = self.config.version or "<version>"
        result = runtime.exec(Invocation([self._binary, self._driver(), "--version"], env=self._env, timeout=120))
        line = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        if result.exit_code != 0 or not line:
            raise AgentSetupError(
                f"the Python '{self._binary}' for OpenHands cannot run in the {runtime.name} runtime "
                f"(exit {result.exit_code}: {self._scrub(result.stderr.strip())[-300:] or 'no output'}): "
                + INSTALL_HINT.format(version=wanted)
            )
        python = line.rsplit(" python ", 1)[-1] if " python " in line else ""
        if tuple(int(part) for part in python.split(".")[:2] if part.isdigit()) < _MIN_PYTHON:
            raise AgentSetupError(
                f"the Python '{self._binary}' is {python or 'unknown'}; OpenHands needs Python 3.12 or later: "
                + INSTALL_HINT.format(version=wanted)
            )
        if not line.startswith(_VERSION_LINE):
            raise AgentSetupError(
                f"the Python '{self._binary}' has no OpenHands SDK ({line}): " + INSTALL_HINT.format(version=wanted)
            )
        found = line[len(_VERSION_LINE):].split(" ", 1)[0]
        if self.config.version and found != self.config.version:
            raise AgentSetupError(
                f"the OpenHands SDK of '{self._binary}' is version {found}, the agent config pins {self.config.version}: "
                "install the pinned version, or set 'version' to the one you have (null accepts any)"
            )
        return found

    # -- a checkpoint -------------------------------------------------------------

    def _write_run_file(self, conversation_id: str) -> str:
        """Write the driver's run file for this checkpoint (owner-only); return its path in the runtime."""
        from agentrig.agents.mcp import write_private_file

        assert self._state_dir is not None and self._state_dir_host is not None and self._runtime is not None
        pricing = self.pricing
        reasoning = self.thinking_preset.value if self.thinking_preset is not None else None
        self._run_file = OpenHandsRun(
            model=self._litellm_model(),
            conversation_id=conversation_id,
            persistence_dir=f"{self._state_dir.rstrip('/')}/{CONVERSATIONS_DIR}",
            num_retries=self.config.num_retries,
            # the catalog's prices: OpenHands' own cost then prices input and output as agentrig does
            input_cost_per_token=pricing.input / 1e6 if pricing is not None else None,
            output_cost_per_token=pricing.output / 1e6 if pricing is not None else None,
            max_iterations=self.config.max_iterations,
            stuck_detection=self.config.stuck_detection,
            reasoning_effort=reasoning if reasoning in ("low", "medium", "high") else None,
            mcp_config=mcp_config(self._mcp_servers(), self._runtime.workdir),
        )
        write_private_file(self._state_dir_host / RUN_FILE_NAME, self._run_file.model_dump_json(indent=2))
        return f"{self._state_dir.rstrip('/')}/{RUN_FILE_NAME}"

    def run(self, task: str) -> None:
        """Run OpenHands on ``task`` until its conversation ends, a limit kills it, or it fails."""
        from agentrig_openhands.events import OpenHandsStreamParser

        runtime = self._begin_checkpoint(task)
        continued = self.conversation_id is not None
        conversation_id = self.conversation_id or str(uuid.uuid4())
        argv = [self._binary, self._driver(), self._write_run_file(conversation_id)]
        self.launch = OpenHandsLaunch(
            argv=argv, env_names=sorted(self._env), runtime=runtime.name, cwd=runtime.workdir,
            conversation_id=conversation_id, continued=continued,
        )
        self._start_scratch("agentrig-openhands-run-")
        parser = self._make_parser(OpenHandsStreamParser, "openhands-jsonl")
        self._run_cli(argv, task, parser)
        outcome = self.outcome = parser.outcome
        if outcome.status is not None:
            self.conversation_id = conversation_id  # the conversation exists: the next checkpoint may continue it
        self._conclude(outcome)

    def _conclude(self, outcome: OpenHandsOutcome) -> None:
        """Turn how the driver ended into a stop reason, a limit or an error."""
        self._conclude_kill(outcome.timeout_kind)
        if outcome.error is not None or outcome.status == "error":
            self.stop_reason = "api_error" if outcome.errors else "error"
            detail = outcome.error or "; ".join(outcome.errors) or "the conversation ended in an error"
            raise AgentStepError(f"OpenHands reported an error: {self._scrub(detail)}")
        if outcome.status is None:
            self.stop_reason = "error"
            raise AgentStepError(
                f"the OpenHands driver exited with status {outcome.exit_code} without a result: {self._stderr_tail()}"
            )
        self.stop_reason = "completed" if outcome.status == "finished" else outcome.status

    # -- artifacts ----------------------------------------------------------------

    def save_artifacts(self, path: Path) -> None:
        """Write the driver's JSON lines, stderr, the trajectory, the outcome, the launch and the run file."""
        path = Path(path)
        self._save_common_artifacts(path, None)
        self._save_record(path, ARTIFACT_OUTCOME, self.outcome)
        self._save_record(path, ARTIFACT_LAUNCH, self.launch)
        if self.launch is not None and self._run_file is not None:  # MCP servers' env and header values scrubbed
            self._save_record(path, ARTIFACT_RUN, self._run_file)

    def describe(self) -> dict[str, Any]:
        """Agent, problem, model and the SDK version found at setup."""
        return {**super().describe(), "sdk_version": self.cli_version}

