"""The ``claude`` command line and environment of one checkpoint.

The task text is not an argument: it reaches the CLI on standard input, which
is then closed (no shell ever sees it, no length limit of an argument applies,
and ``ps`` does not show it). Secrets are only ever in the environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentrig.agents.mcp import McpHttpServer, McpStdioServer
    from agentrig.credentials import ProviderCredential
    from agentrig_claude_code.config import ClaudeCodeConfig

#: Keep the CLI from talking to anything but the model endpoint.
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


class LaunchPlan(BaseModel):
    """What one CLI run needs besides the task: its argv and its added environment."""

    model_config = ConfigDict(extra="forbid")

    argv: list[str]
    env: dict[str, str]


def build_argv(
    config: ClaudeCodeConfig,
    *,
    binary: str,
    model: str,
    max_turns: int | None = None,
    resume: str | None = None,
    mcp_config: str | None = None,
    mcp_servers: list[str] | None = None,
) -> list[str]:
    """The argument vector (no shell); the task comes on standard input.

    ``mcp_config`` is the path (as the CLI sees it) of the file naming the MCP
    servers (:func:`mcp_config_json`), and ``mcp_servers`` their names: the CLI
    gets ``--mcp-config PATH --strict-mcp-config`` (no other MCP server, not one
    a workspace's ``.mcp.json`` names) and their tools (``mcp__NAME``) are allowed.
    """
    argv = [binary, "--print", "--output-format", "stream-json", "--verbose", "--model", model]
    if config.include_partial_messages:
        argv.append("--include-partial-messages")
    if max_turns:
        argv += ["--max-turns", str(max_turns)]
    argv += ["--permission-mode", config.permission_mode]
    if config.append_system_prompt:
        argv += ["--append-system-prompt", config.append_system_prompt]
    if mcp_config:
        argv += ["--mcp-config", mcp_config, "--strict-mcp-config"]
    allowed = [*config.allowed_tools, *(f"mcp__{name}" for name in mcp_servers or [])]
    if allowed:
        argv += ["--allowedTools", ",".join(allowed)]
    if config.disallowed_tools:
        argv += ["--disallowedTools", ",".join(config.disallowed_tools)]
    if resume:
        argv += ["--resume", resume]
    argv += config.extra_args
    return argv


def credential_env_var(credential: ProviderCredential) -> str:
    """The variable the CLI reads this credential from: the credential's own when it is one of
    ``ANTHROPIC_API_KEY``/``ANTHROPIC_AUTH_TOKEN``, else ``ANTHROPIC_API_KEY``."""
    return credential.env_var if credential.env_var in CREDENTIAL_VARS else "ANTHROPIC_API_KEY"


def build_env(
    config: ClaudeCodeConfig,
    *,
    credential: ProviderCredential | None,
    base_url: str | None,
    home: str | None,
    config_dir: str,
    as_root: bool,
    max_thinking_tokens: int | None,
) -> dict[str, str]:
    """The environment added to the runtime's for the CLI: credential, endpoint, isolation, quiet."""
    env = dict(QUIET_ENV)
    env.update(config.env)
    if credential is not None:
        env[credential_env_var(credential)] = credential.secret()
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    if home:
        env["HOME"] = home
    env["CLAUDE_CONFIG_DIR"] = config_dir
    if as_root:
        # the CLI refuses to skip permission prompts as root outside a declared sandbox
        env["IS_SANDBOX"] = "1"
    if max_thinking_tokens is not None:
        env["MAX_THINKING_TOKENS"] = str(max_thinking_tokens)
    return env



def mcp_config_json(servers: Mapping[str, McpStdioServer | McpHttpServer]) -> str:
    """The ``--mcp-config`` file of ``servers`` (resolved: it holds their secrets, so it is written 0600 into the
    CLI's private config directory), in the CLI's own ``{"mcpServers": {NAME: ...}}`` form."""
    import json

    entries: dict[str, dict[str, object]] = {}
    for name, server in servers.items():
        if server.type == "stdio":
            entries[name] = {"type": "stdio", "command": server.command, "args": list(server.args), "env": dict(server.env)}
        else:
            entries[name] = {"type": "http", "url": server.url, "headers": dict(server.headers)}
    return json.dumps({"mcpServers": entries}, indent=2) + "\n"


def mcp_timeout_env(servers: Mapping[str, McpStdioServer | McpHttpServer]) -> dict[str, str]:
    """The CLI's MCP timeouts (milliseconds) from the servers' own: the longest of each, as one setting covers all."""
    if not servers:
        return {}
    startup = max(server.startup_timeout for server in servers.values())
    tool = max(server.tool_timeout for server in servers.values())
    return {"MCP_TIMEOUT": str(int(startup * 1000)), "MCP_TOOL_TIMEOUT": str(int(tool * 1000))}
