"""Configuration of the ``gemini_cli`` agent."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from agentrig.agents.cli_config import CliAgentConfig

#: The pinned npm version of ``@google/gemini-cli``: the newest release on the registry when the
#: agent was written (its stream JSON and session log are what the parser is built on).
DEFAULT_CLI_VERSION = "0.61.0"

#: The Node.js the agent's image installs when its base has one older than the CLI needs (20).
NODE_VERSION = "22.23.3"

#: A Dockerfile template for the agent's image: Node.js 20 or later, and exactly the configured CLI version.
#: Debian bookworm's Node.js is 18, on which the CLI does not start (its bundle uses newer regular
#: expression syntax): then Node.js comes from npm's ``node`` package (the official binaries, from
#: the npm registry like the CLI itself), and trusts the system's certificate authorities as
#: Debian's build does.
DOCKER_TEMPLATE = f"""\
FROM {{{{ base_image }}}}
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then \\
      npm install --global --no-audit --no-fund node@{NODE_VERSION} && npm cache clean --force; \\
    fi
RUN node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \\
 && npm install --global --no-audit --no-fund @google/gemini-cli@{{{{ version }}}} \\
 && npm cache clean --force \\
 && test "$(gemini --version)" = "{{{{ version }}}}"
"""

#: The variable the CLI reads the Gemini API key from.
KEY_ENV = "GEMINI_API_KEY"
#: The variable the CLI (its ``@google/genai`` SDK) reads the Gemini API's endpoint from.
BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"

#: Variables agentrig sets itself, or that would switch the CLI to another account or endpoint;
#: a config's ``env`` may not set them (secrets go through credentials).
RESERVED_ENV = frozenset(
    {
        KEY_ENV,
        BASE_URL_ENV,
        "GOOGLE_API_KEY",
        "GOOGLE_VERTEX_BASE_URL",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GEMINI_CLI_HOME",
        "GEMINI_CLI_NO_RELAUNCH",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
        "GEMINI_MODEL",
        "HOME",
    }
)

#: Flags agentrig passes itself; ``extra_args`` may not repeat them.
RESERVED_FLAGS = frozenset(
    {
        "-o",
        "--output-format",
        "-m",
        "--model",
        "-p",
        "--prompt",
        "-i",
        "--prompt-interactive",
        "-r",
        "--resume",
        "-y",
        "--yolo",
        "--approval-mode",
        "--skip-trust",
    }
)

ApprovalMode = Literal["yolo", "auto_edit", "default", "plan"]
ThinkingLevel = Literal["MINIMAL", "LOW", "MEDIUM", "HIGH"]


class GeminiCliConfig(CliAgentConfig):
    """How to launch the ``gemini`` CLI (``gemini --output-format stream-json``, the task on standard input).

    ``version`` is the npm version of ``@google/gemini-cli``: a binary reporting
    another version is refused at setup (``version: null`` accepts any). The CLI
    keeps its state and settings in an isolated ``GEMINI_CLI_HOME``; agentrig writes
    its ``settings.json`` (API-key auth, usage statistics, telemetry and update
    checks off, the thinking setting). The key reaches it only as ``GEMINI_API_KEY``
    in its environment, the endpoint as ``GOOGLE_GEMINI_BASE_URL``. ``mcp_servers``
    become the settings' ``mcpServers`` (the file is then owner-only). Cost, step and
    token limits and timeouts are enforced while the CLI runs by killing its process tree.
    """

    type: Literal["gemini_cli"] = "gemini_cli"
    #: ``mcp_servers`` become the CLI's settings ``mcpServers`` (0600, in its private GEMINI_CLI_HOME).
    supports_mcp: ClassVar[bool] = True
    reserved_env: ClassVar[frozenset[str]] = RESERVED_ENV
    reserved_flags: ClassVar[frozenset[str]] = RESERVED_FLAGS
    version: str | None = Field(default=DEFAULT_CLI_VERSION, description="npm version of @google/gemini-cli.")
    docker_template: str | None = Field(
        default=DOCKER_TEMPLATE,
        description="Dockerfile template of the agent's image ({{ base_image }}, {{ version }}); npm-installs the CLI.",
    )
    base_url: str | None = Field(
        default=None,
        description="The Gemini API's base URL (GOOGLE_GEMINI_BASE_URL); overrides the environment's and the model's.",
    )
    approval_mode: ApprovalMode = Field(
        default="yolo",
        description="--approval-mode: yolo runs every tool unasked (agentrig's runtime is the sandbox); the CLI's "
        "other modes leave the tools needing approval out of a headless run.",
    )
    thinking_budget: int | None = Field(
        default=None, ge=-1,
        description="thinkingConfig.thinkingBudget (tokens; -1 dynamic, 0 off); none: from the thinking preset.",
    )
    thinking_level: ThinkingLevel | None = Field(
        default=None, description="thinkingConfig.thinkingLevel (Gemini 3 models); none: from the thinking preset."
    )
    max_attempts: int | None = Field(
        default=None, ge=1, le=10,
        description="general.maxAttempts: tries of each model request (the CLI retries 429 and 5xx); none: its default (10).",
    )
    stream_parser: str = Field(
        default="gemini-stream-json", description="The stream parser (agentrig_stream_parsers) reading the CLI's stream JSON."
    )
