"""Configuration of the ``claude_code`` agent."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from agentrig.agents.cli_config import CliAgentConfig

DEFAULT_CLI_VERSION = "2.1.330"

#: A Dockerfile template for the agent's image: Node and exactly the configured CLI version
#: (the build fails if the installed CLI reports another; npm's cache, ~330 MB, is dropped).
#: The base image must provide ``npm`` (and run as a user that may install globally).
DOCKER_TEMPLATE = """\
FROM {{ base_image }}
RUN npm install --global --no-audit --no-fund @anthropic-ai/claude-code@{{ version }} \\
 && npm cache clean --force \\
 && test "$(claude --version | cut -d' ' -f1)" = "{{ version }}"
"""

PermissionMode = Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "manual", "plan"]

#: Variables agentrig sets itself; a config's ``env`` may not replace them (secrets go through credentials).
RESERVED_ENV = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CONFIG_DIR",
        "HOME",
        "IS_SANDBOX",
        "MAX_THINKING_TOKENS",
        "MCP_TIMEOUT",
        "MCP_TOOL_TIMEOUT",
    }
)

#: Flags agentrig passes itself; ``extra_args`` may not repeat them.
RESERVED_FLAGS = frozenset(
    {
        "-p",
        "--print",
        "--output-format",
        "--verbose",
        "--model",
        "--max-turns",
        "--resume",
        "-r",
        "--continue",
        "-c",
        "--session-id",
        "--include-partial-messages",
        "--input-format",
        "--permission-mode",
        "--append-system-prompt",
        "--allowedTools",
        "--allowed-tools",
        "--disallowedTools",
        "--disallowed-tools",
        "--mcp-config",
        "--strict-mcp-config",
    }
)


class ClaudeCodeConfig(CliAgentConfig):
    """How to launch the ``claude`` CLI and what to allow it.

    ``version`` is the npm version of ``@anthropic-ai/claude-code``: the Docker
    image installs exactly it, and a local binary reporting another version is
    refused at setup (``version: null`` accepts any). The step limit becomes
    ``--max-turns``; cost limits and timeouts are enforced while the CLI runs
    by killing its process tree.
    """

    type: Literal["claude_code"] = "claude_code"
    #: ``mcp_servers`` reach the CLI through ``--mcp-config`` (a 0600 file in its private config directory).
    supports_mcp: ClassVar[bool] = True
    reserved_env: ClassVar[frozenset[str]] = RESERVED_ENV
    reserved_flags: ClassVar[frozenset[str]] = RESERVED_FLAGS
    version: str | None = Field(default=DEFAULT_CLI_VERSION, description="npm version of @anthropic-ai/claude-code.")
    docker_template: str | None = Field(
        default=DOCKER_TEMPLATE,
        description="Dockerfile template of the agent's image ({{ base_image }}, {{ version }}); npm-installs the CLI.",
    )
    base_url: str | None = Field(default=None, description="ANTHROPIC_BASE_URL; overrides the model's and the environment's.")
    append_system_prompt: str | None = Field(default=None, description="Text added to the CLI's system prompt.")
    allowed_tools: list[str] = Field(default_factory=list, description="--allowedTools entries, e.g. 'Bash(git:*)'.")
    disallowed_tools: list[str] = Field(default_factory=list, description="--disallowedTools entries.")
    permission_mode: PermissionMode = Field(default="bypassPermissions", description="--permission-mode.")
    include_partial_messages: bool = Field(
        default=True,
        description="Ask for raw message events: exact live token counts (for cost limits) and output while the model writes.",
    )
    stream_parser: str = Field(
        default="claude-stream-json",
        description="The stream parser (agentrig_stream_parsers) reading the CLI's stream-json output.",
    )

    @field_validator("allowed_tools", "disallowed_tools")
    @classmethod
    def _no_empty_tools(cls, value: list[str]) -> list[str]:
        if any(not tool.strip() or tool.startswith("-") for tool in value):
            raise ValueError("tool names must be non-empty and may not start with '-'")
        return value
