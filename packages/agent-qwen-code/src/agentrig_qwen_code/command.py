"""The ``qwen`` command line, its environment and its ``settings.json``.

The task text is not an argument: it reaches the CLI on standard input, which is
then closed (with no prompt argument and no terminal, the CLI runs headless on what
standard input holds). The CLI's state and settings live in an isolated
``QWEN_HOME``; the key is only ever in the environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agents.mcp_settings import SettingsMcpServer, settings_mcp_servers
from agentrig_qwen_code.config import BASE_URL_ENV, KEY_ENV

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentrig.agents.mcp import McpHttpServer, McpStdioServer
    from agentrig.credentials import ProviderCredential
    from agentrig_qwen_code.config import QwenCodeConfig

#: The CLI's auth type reading ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` (its ``security.auth.selectedType``).
AUTH_TYPE = "openai"
#: The settings format 0.24.x writes (``$version``). A file without it is migrated at start and written again
#: with the process's default mode: 0644, which would expose the MCP servers' secrets an 0600 file holds.
SETTINGS_VERSION = 4


def build_argv(config: QwenCodeConfig, *, binary: str, model: str, resume: str | None = None) -> list[str]:
    """The argument vector (no shell); the task comes on standard input."""
    argv = [binary, "--output-format", "stream-json", "--model", model, "--approval-mode", config.approval_mode]
    argv += config.extra_args
    if resume:
        argv += ["--resume", resume]
    return argv


def build_env(
    config: QwenCodeConfig, *, credential: ProviderCredential | None, base_url: str, qwen_home: str, home: str | None
) -> dict[str, str]:
    """The environment added to the runtime's for the CLI: credential, endpoint, isolated state."""
    env = dict(config.env)
    if credential is not None:
        env[KEY_ENV] = credential.secret()
    env[BASE_URL_ENV] = base_url
    env["QWEN_HOME"] = qwen_home
    # one process: the CLI otherwise starts itself again as a child
    env["QWEN_CODE_NO_RELAUNCH"] = "true"
    # agentrig's runtime is the sandbox the warning asks for
    env["QWEN_CODE_SUPPRESS_YOLO_WARNING"] = "1"
    if home:
        env["HOME"] = home
    return env


class _Auth(BaseModel):
    selectedType: str = AUTH_TYPE  # noqa: N815  # the CLI's own key


class _Security(BaseModel):
    auth: _Auth = Field(default_factory=_Auth)


class _Privacy(BaseModel):
    usageStatisticsEnabled: bool = False  # noqa: N815


class _Telemetry(BaseModel):
    enabled: bool = False


class _GitCoAuthor(BaseModel):
    commit: bool = False
    pr: bool = False


class _General(BaseModel):
    enableAutoUpdate: bool = False  # noqa: N815
    preventSystemSleep: bool = False  # noqa: N815
    terminalBell: bool = False  # noqa: N815
    gitCoAuthor: _GitCoAuthor = Field(default_factory=_GitCoAuthor)  # noqa: N815


class _Memory(BaseModel):
    enableManagedAutoMemory: bool = False  # noqa: N815
    enableManagedAutoDream: bool = False  # noqa: N815


class _Experimental(BaseModel):
    emitToolUseSummaries: bool = False  # noqa: N815


class _Tools(BaseModel):
    useBuiltinRipgrep: bool = False  # noqa: N815


class QwenSettings(BaseModel):
    """The CLI's user ``settings.json`` agentrig writes (``QWEN_HOME/settings.json``).

    OpenAI-compatible auth (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``); usage statistics
    (Aliyun RUM, ``*.rum.aliyuncs.com``), telemetry and update checks off, so the CLI
    calls nothing but the model's endpoint; no background model calls of its own (memory
    extraction and consolidation, tool-batch summaries), no sleep inhibitor process, no
    co-author trailer or git notes on the task's commits; the package's ripgrep (installed
    without its executable bit) not tried; the MCP servers. ``$version`` is the CLI's current
    format, so that it never rewrites the file (see :data:`SETTINGS_VERSION`).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    settings_version: int = Field(default=SETTINGS_VERSION, alias="$version")
    security: _Security = Field(default_factory=_Security)
    privacy: _Privacy = Field(default_factory=_Privacy)
    telemetry: _Telemetry = Field(default_factory=_Telemetry)
    general: _General = Field(default_factory=_General)
    memory: _Memory = Field(default_factory=_Memory)
    experimental: _Experimental = Field(default_factory=_Experimental)
    tools: _Tools = Field(default_factory=_Tools)
    mcpServers: dict[str, SettingsMcpServer] | None = None  # noqa: N815

    @classmethod
    def build(
        cls, *, mcp_servers: Mapping[str, McpStdioServer | McpHttpServer] | None = None, mcp_cwd: str | None = None
    ) -> QwenSettings:
        """The settings of a run (with ``mcp_servers`` resolved: the file then holds their secrets)."""
        return cls(mcpServers=settings_mcp_servers(mcp_servers, mcp_cwd))

    def to_json(self) -> str:
        """The file's text (unset fields left out: the CLI's defaults apply)."""
        return self.model_dump_json(indent=2, exclude_none=True, by_alias=True) + "\n"
