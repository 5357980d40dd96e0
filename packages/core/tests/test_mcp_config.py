"""``mcp_servers`` in agent configs: the model, ``-c`` overrides, the capability flag, ``${VAR}`` and redaction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar, Literal

import pytest
from pydantic import ValidationError

from agentrig.agents.interface import AgentConfigBase
from agentrig.agents.mcp import (
    REDACTED,
    McpConfigError,
    McpHttpServer,
    McpStdioServer,
    redact_mcp_servers,
    resolve_servers,
    server_secrets,
    write_private_file,
)
from agentrig.agents.oracle import OracleConfig
from agentrig.run.agent_config import AgentConfigError, build_agent_config


class McpCapableConfig(AgentConfigBase):
    """An agent config that takes MCP servers."""

    type: Literal["capable"] = "capable"
    supports_mcp: ClassVar[bool] = True


def build(*overrides: str, agent: str = "capable") -> AgentConfigBase:
    classes = {"capable": McpCapableConfig, "oracle": OracleConfig}
    return build_agent_config(agent, list(overrides), classes.__getitem__)


def test_stdio_and_http_servers_are_told_apart_by_command_or_url() -> None:
    config = McpCapableConfig.model_validate(
        {
            "mcp_servers": {
                "files": {"command": "python3", "args": ["-m", "srv"], "env": {"TOKEN": "${GH_TOKEN}"}},
                "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${T}"}},
                "typed": {"type": "http", "url": "https://example.test/mcp"},
            }
        }
    )
    files, remote, typed = (config.mcp_servers[n] for n in ("files", "remote", "typed"))
    assert isinstance(files, McpStdioServer) and files.args == ["-m", "srv"] and files.type == "stdio"
    assert isinstance(remote, McpHttpServer) and remote.headers == {"Authorization": "Bearer ${T}"}
    assert isinstance(typed, McpHttpServer) and typed.type == "http"


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ({"x": {"args": ["a"]}}, "needs 'command' (stdio) or 'url' (streamable HTTP)"),
        ({"x": {"type": "sse", "url": "http://h/"}}, "needs 'command' (stdio) or 'url'"),
        ({"x": {"type": "stdio", "url": "http://h/"}}, "command\n  Field required"),
        ({"x": {"url": "ftp://h/x"}}, "String should match pattern"),
        ({"x": {"command": ""}}, "at least 1 character"),
        ({"x": {"command": "a", "env": {"BAD NAME": "v"}}}, "invalid environment variable name 'BAD NAME'"),
        ({"x": {"command": "a", "cwd": "/"}}, "Extra inputs are not permitted"),
        ({"bad/name": {"command": "a"}}, "MCP server name 'bad/name' must be letters"),
        ({"x": {"command": "a", "tool_timeout": 0}}, "is not a time limit: must be a finite number above 0"),
    ],
)
def test_bad_servers_are_refused_naming_the_field(servers: dict[str, object], expected: str) -> None:
    with pytest.raises(ValidationError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        McpCapableConfig.model_validate({"mcp_servers": servers})


def test_a_config_without_servers_dumps_as_before() -> None:
    assert "mcp_servers" not in McpCapableConfig().model_dump(mode="json")
    dumped = McpCapableConfig.model_validate({"mcp_servers": {"s": {"command": "c"}}}).model_dump(mode="json")
    assert dumped["mcp_servers"]["s"]["command"] == "c"
    assert McpCapableConfig.model_validate(dumped) == McpCapableConfig.model_validate(dumped)  # round trip


def test_an_agent_without_mcp_support_refuses_servers_in_one_line() -> None:
    with pytest.raises(AgentConfigError) as caught:
        build("mcp_servers={files: {command: python3}}", agent="oracle")
    message = str(caught.value)
    assert message == (
        "agent config (--agent oracle with -c overrides): field 'mcp_servers': "
        "oracle has no MCP support: remove mcp_servers (or pick an agent that has)"
    )
    assert build("mcp_servers=", agent="oracle").mcp_servers == {}  # empty is fine, `-c mcp_servers=` clears


def test_servers_come_from_c_overrides_whole_or_by_dotted_key() -> None:
    whole = build("mcp_servers={files: {command: python3, args: [-m, srv]}, web: {url: 'http://127.0.0.1:1/mcp'}}")
    assert set(whole.mcp_servers) == {"files", "web"}
    dotted = build("mcp_servers.web.url=http://127.0.0.1:2/mcp", "mcp_servers.web.headers={X-Key: '${K}'}")
    web = dotted.mcp_servers["web"]
    assert isinstance(web, McpHttpServer) and web.url.endswith(":2/mcp") and web.headers == {"X-Key": "${K}"}


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("mcp_servers=[a, b]", "field 'mcp_servers': Input should be a valid dictionary"),
        ("mcp_servers={f: {args: [x]}}", "field 'mcp_servers.f': an MCP server needs 'command'"),
        ("mcp_servers.f.comand=x", "field 'mcp_servers.f': an MCP server needs 'command'"),
        ("mcp_servers.f.command=x", None),
    ],
)
def test_bad_c_values_are_one_line_config_errors(override: str, expected: str | None) -> None:
    if expected is None:
        assert build(override).mcp_servers["f"].type == "stdio"
        return
    with pytest.raises(AgentConfigError) as caught:
        build(override)
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_references_resolve_from_the_environment_and_an_unset_one_is_named() -> None:
    config = McpCapableConfig.model_validate(
        {
            "mcp_servers": {
                "s": {"command": "c", "env": {"TOKEN": "${SECRET_A}", "PLAIN": "v"}},
                "h": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${SECRET_B}"}},
            }
        }
    )
    resolved = resolve_servers(config.mcp_servers, {"SECRET_A": "alpha-1", "SECRET_B": "beta-22"})
    stdio, http = resolved["s"], resolved["h"]
    assert isinstance(stdio, McpStdioServer) and stdio.env == {"TOKEN": "alpha-1", "PLAIN": "v"}
    assert isinstance(http, McpHttpServer) and http.headers == {"Authorization": "Bearer beta-22"}
    assert server_secrets(resolved) == ["Bearer beta-22", "alpha-1"]  # longest first; "v" too short to scrub
    with pytest.raises(McpConfigError, match=r"^mcp_servers.h.headers.Authorization: environment variable SECRET_B is not set"):
        resolve_servers(config.mcp_servers, {"SECRET_A": "x"})


def test_literal_values_are_redacted_in_what_a_run_records_and_references_kept() -> None:
    config = McpCapableConfig.model_validate(
        {
            "mcp_servers": {
                "s": {"command": "c", "args": ["--flag"], "env": {"TOKEN": "literal-secret-1", "REF": "${X}"}},
                "h": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer literal-secret-2"}},
            }
        }
    )
    recorded = redact_mcp_servers(config.model_dump(mode="json"))
    text = json.dumps(recorded)
    assert "literal-secret" not in text
    assert recorded["mcp_servers"]["s"]["env"] == {"TOKEN": REDACTED, "REF": "${X}"}
    assert recorded["mcp_servers"]["s"]["args"] == ["--flag"] and recorded["mcp_servers"]["h"]["url"] == "http://h/mcp"
    assert redact_mcp_servers({"type": "x"}) == {"type": "x"}


def test_private_files_are_owner_only_from_the_start_and_replaced_whole(tmp_path: Path) -> None:
    import os
    import stat

    target = tmp_path / "state" / "mcp.json"
    write_private_file(target, '{"a": 1}')
    write_private_file(target, '{"b": 2}')
    assert target.read_text() == '{"b": 2}'
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["mcp.json"]  # no temporary file left
