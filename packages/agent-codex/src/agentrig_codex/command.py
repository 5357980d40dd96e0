"""The ``codex exec`` command line, its environment and its ``config.toml``.

The task text is not an argument: it reaches the CLI on standard input
(``-``), which is then closed. The model provider (endpoint, wire API, the
name of the key's variable) is in the CLI's own config file in an isolated
``CODEX_HOME``; the key itself is only ever in the environment.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agentrig_codex.config import KEY_ENV

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentrig.agents.mcp import McpHttpServer, McpStdioServer
    from agentrig.credentials import ProviderCredential
    from agentrig_codex.config import CodexConfig

#: The provider agentrig declares in the CLI's config.
PROVIDER_ID = "agentrig"
OPENAI_BASE_URL = "https://api.openai.com/v1"


def build_argv(config: CodexConfig, *, binary: str, model: str, resume: str | None = None) -> list[str]:
    """The argument vector (no shell); the task comes on standard input."""
    argv = [binary, "exec", "--json", "--skip-git-repo-check", "--model", model]
    if config.sandbox == "danger-full-access":
        # agentrig's runtime is the sandbox; the CLI's own (Landlock/seccomp) would refuse inside containers
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        argv += ["--sandbox", config.sandbox]
    argv += config.extra_args
    if resume:
        argv += ["resume", resume]
    argv.append("-")
    return argv


def _toml_string(value: str) -> str:
    # a JSON string is a valid TOML basic string (same escapes)
    return json.dumps(value)


def config_toml(
    *,
    model: str,
    base_url: str,
    reasoning_effort: str | None,
    request_max_retries: int | None = None,
    stream_max_retries: int | None = None,
    mcp_servers: Mapping[str, McpStdioServer | McpHttpServer] | None = None,
    mcp_cwd: str | None = None,
) -> str:
    """The CLI's ``config.toml``: one provider speaking the Responses API at ``base_url``, and a
    ``[mcp_servers.NAME]`` table per MCP server (resolved: the file then holds their secrets, 0600)."""
    lines = [
        "# written by agentrig for one run; the key is read from the environment",
        f"model = {_toml_string(model)}",
        f"model_provider = {_toml_string(PROVIDER_ID)}",
    ]
    if reasoning_effort is not None:
        lines.append(f"model_reasoning_effort = {_toml_string(reasoning_effort)}")
    lines += [
        "",
        f"[model_providers.{PROVIDER_ID}]",
        f"name = {_toml_string(PROVIDER_ID)}",
        f"base_url = {_toml_string(base_url)}",
        f"env_key = {_toml_string(KEY_ENV)}",
        'wire_api = "responses"',
    ]
    if request_max_retries is not None:
        lines.append(f"request_max_retries = {int(request_max_retries)}")
    if stream_max_retries is not None:
        lines.append(f"stream_max_retries = {int(stream_max_retries)}")
    for name, server in (mcp_servers or {}).items():
        lines += ["", *mcp_server_toml(name, server, mcp_cwd)]
    lines.append("")
    return "\n".join(lines)


def _toml_table(values: Mapping[str, str]) -> str:
    return "{ " + ", ".join(f"{_toml_string(k)} = {_toml_string(v)}" for k, v in values.items()) + " }"


def mcp_server_toml(name: str, server: McpStdioServer | McpHttpServer, cwd: str | None) -> list[str]:
    """The ``[mcp_servers.NAME]`` table of one server, in the CLI's own keys (stdio servers start in ``cwd``)."""
    lines = [f"[mcp_servers.{name}]"]
    if server.type == "stdio":
        lines.append(f"command = {_toml_string(server.command)}")
        lines.append("args = [" + ", ".join(_toml_string(arg) for arg in server.args) + "]")
        if server.env:
            lines.append(f"env = {_toml_table(server.env)}")
        if cwd:
            lines.append(f"cwd = {_toml_string(cwd)}")
    else:
        lines.append(f"url = {_toml_string(server.url)}")
        if server.headers:
            lines.append(f"http_headers = {_toml_table(server.headers)}")
    # required: the CLI waits for the server before its first model call, and fails when it cannot start
    lines.append("required = true")
    lines.append(f"startup_timeout_sec = {float(server.startup_timeout)}")
    lines.append(f"tool_timeout_sec = {float(server.tool_timeout)}")
    return lines


def build_env(
    config: CodexConfig, *, credential: ProviderCredential | None, codex_home: str, home: str | None
) -> dict[str, str]:
    """The environment added to the runtime's for the CLI: credential, isolated state."""
    env = dict(config.env)
    if credential is not None:
        env[KEY_ENV] = credential.secret()
    env["CODEX_HOME"] = codex_home
    if home:
        env["HOME"] = home
    return env
