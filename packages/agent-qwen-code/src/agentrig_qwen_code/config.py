"""Configuration of the ``qwen_code`` agent."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from agentrig.agents.cli_config import CliAgentConfig

#: The pinned npm version of ``@qwen-code/qwen-code``: the newest release on the registry when the
#: agent was written (its stream JSON is what the parser is built on).
DEFAULT_CLI_VERSION = "0.24.4"

#: The lowest Node.js major the CLI runs on (its package.json: ``engines.node >=22.0.0``).
NODE_MAJOR = 22
#: The Node.js the agent's image installs when its base has an older one (npm's ``node`` package).
NODE_VERSION = "22.23.3"

#: A Dockerfile template for the agent's image: Node.js 22 or later, and exactly the configured CLI version.
#: Debian bookworm's Node.js is 18: then Node.js comes from npm's ``node`` package (the official binaries,
#: from the npm registry like the CLI itself), trusting the system's certificate authorities as Debian's
#: build does. The CLI's own ripgrep is not used (``tools.useBuiltinRipgrep`` is off): npm leaves it
#: without its executable bit, and the CLI falls back to its built-in grep.
DOCKER_TEMPLATE = f"""\
FROM {{{{ base_image }}}}
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= {NODE_MAJOR} ? 0 : 1)'; then \\
      npm install --global --no-audit --no-fund node@{NODE_VERSION} && npm cache clean --force; \\
    fi
RUN node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= {NODE_MAJOR} ? 0 : 1)' \\
 && npm install --global --no-audit --no-fund @qwen-code/qwen-code@{{{{ version }}}} \\
 && npm cache clean --force \\
 && test "$(qwen --version)" = "{{{{ version }}}}"
"""

#: The variable the CLI reads the OpenAI-compatible API key from.
KEY_ENV = "OPENAI_API_KEY"
#: The variable the CLI reads the OpenAI-compatible endpoint from.
BASE_URL_ENV = "OPENAI_BASE_URL"
#: The endpoint of models of the ``openai`` provider that name none.
OPENAI_BASE_URL = "https://api.openai.com/v1"

#: Variables agentrig sets itself, or that would switch the CLI to another account, endpoint, model or
#: settings file; a config's ``env`` may not set them (secrets go through credentials).
RESERVED_ENV = frozenset(
    {
        KEY_ENV,
        BASE_URL_ENV,
        "OPENAI_MODEL",
        "QWEN_MODEL",
        "DASHSCOPE_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "QWEN_HOME",
        "QWEN_CODE_NO_RELAUNCH",
        "QWEN_CODE_SYSTEM_SETTINGS_PATH",
        "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
        "QWEN_USAGE_STATISTICS_ENABLED",
        "HOME",
    }
)

#: Flags agentrig passes itself, or that would put a secret on the command line or switch the
#: endpoint, account or session; ``extra_args`` may not contain them.
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
        "-c",
        "--continue",
        "--session-id",
        "-y",
        "--yolo",
        "--approval-mode",
        "--auth-type",
        "--openai-api-key",
        "--openai-base-url",
        "--telemetry",
        "--telemetry-target",
        "--telemetry-otlp-endpoint",
    }
)

ApprovalMode = Literal["yolo", "auto-edit", "auto", "default", "plan"]


class QwenCodeConfig(CliAgentConfig):
    """How to launch the ``qwen`` CLI (``qwen --output-format stream-json``, the task on standard input).

    ``version`` is the npm version of ``@qwen-code/qwen-code``: a binary reporting another
    version is refused at setup (``version: null`` accepts any). The CLI keeps its state and
    settings in an isolated ``QWEN_HOME``; agentrig writes its ``settings.json`` (OpenAI-compatible
    auth, usage statistics, telemetry, update checks, background memory agents and git attribution
    off, the MCP servers). The key reaches it only as ``OPENAI_API_KEY`` in its environment, the
    endpoint as ``OPENAI_BASE_URL``. Cost, step and token limits and timeouts are enforced while the
    CLI runs by killing its process tree.
    """

    type: Literal["qwen_code"] = "qwen_code"
    #: ``mcp_servers`` become the CLI's settings ``mcpServers`` (0600, in its private QWEN_HOME).
    supports_mcp: ClassVar[bool] = True
    reserved_env: ClassVar[frozenset[str]] = RESERVED_ENV
    reserved_flags: ClassVar[frozenset[str]] = RESERVED_FLAGS
    version: str | None = Field(default=DEFAULT_CLI_VERSION, description="npm version of @qwen-code/qwen-code.")
    docker_template: str | None = Field(
        default=DOCKER_TEMPLATE,
        description="Dockerfile template of the agent's image ({{ base_image }}, {{ version }}); npm-installs the CLI.",
    )
    base_url: str | None = Field(
        default=None,
        description="The OpenAI-compatible API's base URL (OPENAI_BASE_URL); overrides the environment's and the model's.",
    )
    approval_mode: ApprovalMode = Field(
        default="yolo",
        description="--approval-mode: yolo runs every tool unasked (agentrig's runtime is the sandbox); the CLI's "
        "other modes leave the tools needing approval out of a headless run.",
    )
    stream_parser: str = Field(
        default="qwen-stream-json", description="The stream parser (agentrig_stream_parsers) reading the CLI's stream JSON."
    )
