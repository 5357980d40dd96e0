"""Configuration of the ``opencode`` agent."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from agentrig.agents.cli_config import CliAgentConfig

DEFAULT_CLI_VERSION = "1.18.33"

#: A Dockerfile template for the agent's image: exactly the configured CLI version from npm (its
#: platform binary comes as an optional dependency of ``opencode-ai``, from the registry alone) and
#: Debian's ripgrep, which OpenCode's grep and glob tools would otherwise download from GitHub.
DOCKER_TEMPLATE = """\
FROM {{ base_image }}
RUN apt-get update -qq \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ripgrep >/dev/null \\
 && rm -rf /var/lib/apt/lists/*
RUN npm install --global --no-audit --no-fund opencode-ai@{{ version }} \\
 && npm cache clean --force \\
 && test "$(opencode --version)" = "{{ version }}"
"""

#: The variable the CLI reads the key from (``{env:...}`` in the provider config agentrig writes).
KEY_ENV = "OPENAI_API_KEY"

#: Variables agentrig sets itself; a config's ``env`` may not replace them (secrets go through credentials).
RESERVED_ENV = frozenset(
    {
        KEY_ENV,
        "OPENAI_BASE_URL",
        "HOME",
        "TMPDIR",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "OPENCODE_CONFIG",
        "OPENCODE_CONFIG_CONTENT",
        "OPENCODE_CONFIG_DIR",
        "OPENCODE_DB",
        "OPENCODE_PERMISSION",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_SHARE",
        "OPENCODE_DISABLE_LSP_DOWNLOAD",
        "OPENCODE_DISABLE_PROJECT_CONFIG",
        "OPENCODE_DISABLE_CLAUDE_CODE",
        "OPENCODE_AUTO_SHARE",
        "npm_config_offline",
    }
)

#: Flags agentrig passes itself; ``extra_args`` may not repeat them.
RESERVED_FLAGS = frozenset(
    {
        "--format",
        "-m",
        "--model",
        "-s",
        "--session",
        "-c",
        "--continue",
        "--fork",
        "--title",
        "--thinking",
        "--attach",
        "--dir",
        "--port",
        "--share",
        "--variant",
        "--auto",
        "--yolo",
        "--dangerously-skip-permissions",
        "-i",
        "--interactive",
        "-p",
        "--password",
    }
)

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]


class OpenCodeConfig(CliAgentConfig):
    """How to launch OpenCode (``opencode run --format json``).

    ``version`` is the npm version of ``opencode-ai``: a binary reporting
    another version is refused at setup (``version: null`` accepts any). The
    model is an OpenAI-compatible provider written into OpenCode's own config
    file in an isolated state directory (its key read from ``OPENAI_API_KEY``
    in the environment, never an argument or a file). Cost, token and step
    limits and timeouts are enforced while the CLI runs by killing its process tree.
    """

    type: Literal["opencode"] = "opencode"
    reserved_env: ClassVar[frozenset[str]] = RESERVED_ENV
    reserved_flags: ClassVar[frozenset[str]] = RESERVED_FLAGS
    #: ``mcp_servers`` become entries of the ``mcp`` section of the CLI's ``opencode.json`` (0600, in its state directory).
    supports_mcp: ClassVar[bool] = True
    version: str | None = Field(default=DEFAULT_CLI_VERSION, description="npm version of opencode-ai.")
    docker_template: str | None = Field(
        default=DOCKER_TEMPLATE,
        description="Dockerfile template of the agent's image ({{ base_image }}, {{ version }}); npm-installs the CLI.",
    )
    base_url: str | None = Field(
        default=None, description="The OpenAI-compatible base URL (…/v1); overrides the model's and OPENAI_BASE_URL."
    )
    reasoning_effort: ReasoningEffort | None = Field(
        default=None, description="The model's reasoningEffort option; none: from the thinking preset, else OpenCode's default."
    )
    context_window: int | None = Field(
        default=None, gt=0, description="The model's context size OpenCode is told (it compacts near it); none: the model's."
    )
    max_output_tokens: int | None = Field(
        default=None, gt=0, description="The output limit OpenCode asks for (max_tokens); none: the model's."
    )
    stream_parser: str = Field(
        default="opencode-run-json",
        description="The stream parser (agentrig_stream_parsers) reading `opencode run --format json`.",
    )
