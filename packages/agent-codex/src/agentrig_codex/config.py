"""Configuration of the ``codex`` agent."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from agentrig.agents.cli_config import CliAgentConfig

DEFAULT_CLI_VERSION = "0.169.0"

#: A Dockerfile template for the agent's image: Node and exactly the configured CLI version.
DOCKER_TEMPLATE = """\
FROM {{ base_image }}
RUN npm install --global --no-audit --no-fund @openai/codex@{{ version }} \\
 && npm cache clean --force \\
 && test "$(codex --version | cut -d' ' -f2)" = "{{ version }}"
"""

#: The variable the CLI reads the key from (named in the provider config agentrig writes).
KEY_ENV = "OPENAI_API_KEY"

#: Variables agentrig sets itself; a config's ``env`` may not replace them (secrets go through credentials).
RESERVED_ENV = frozenset({KEY_ENV, "OPENAI_BASE_URL", "CODEX_HOME", "HOME", "CODEX_API_KEY"})

#: Flags agentrig passes itself; ``extra_args`` may not repeat them.
RESERVED_FLAGS = frozenset(
    {
        "--json",
        "--experimental-json",
        "-m",
        "--model",
        "-C",
        "--cd",
        "-s",
        "--sandbox",
        "--dangerously-bypass-approvals-and-sandbox",
        "--skip-git-repo-check",
        "-c",
        "--config",
        "-p",
        "--profile",
        "--oss",
    }
)

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]


class CodexConfig(CliAgentConfig):
    """How to launch the ``codex`` CLI (``codex exec --json``).

    ``version`` is the npm version of ``@openai/codex``: a binary reporting
    another version is refused at setup (``version: null`` accepts any). The
    model provider is written into the CLI's own ``config.toml`` in an isolated
    ``CODEX_HOME`` (``wire_api = "responses"``, the key read from
    ``OPENAI_API_KEY`` in the environment, never an argument). Cost and step
    limits and timeouts are enforced while the CLI runs by killing its process tree.
    """

    type: Literal["codex"] = "codex"
    #: ``mcp_servers`` become ``[mcp_servers.NAME]`` tables of the CLI's ``config.toml`` (0600, in its CODEX_HOME).
    supports_mcp: ClassVar[bool] = True
    reserved_env: ClassVar[frozenset[str]] = RESERVED_ENV
    reserved_flags: ClassVar[frozenset[str]] = RESERVED_FLAGS
    version: str | None = Field(default=DEFAULT_CLI_VERSION, description="npm version of @openai/codex.")
    docker_template: str | None = Field(
        default=DOCKER_TEMPLATE,
        description="Dockerfile template of the agent's image ({{ base_image }}, {{ version }}); npm-installs the CLI.",
    )
    base_url: str | None = Field(
        default=None, description="The Responses API base URL (…/v1); overrides the model's and OPENAI_BASE_URL."
    )
    reasoning_effort: ReasoningEffort | None = Field(
        default=None, description="model_reasoning_effort; none: from the thinking preset, else the CLI's default."
    )
    sandbox: Literal["danger-full-access", "workspace-write", "read-only"] = Field(
        default="danger-full-access",
        description="--sandbox of model commands; the workspace is agentrig's runtime (Docker or bubblewrap).",
    )
    request_max_retries: int | None = Field(
        default=None, ge=0, description="The provider's request_max_retries; none: the CLI's default."
    )
    stream_max_retries: int | None = Field(
        default=None, ge=0, description="The provider's stream_max_retries; none: the CLI's default."
    )
    stream_parser: str = Field(
        default="codex-exec-json", description="The stream parser (agentrig_stream_parsers) reading `codex exec --json`."
    )
