"""The ``gemini`` command line, its environment and its ``settings.json``.

The task text is not an argument: it reaches the CLI on standard input, which
is then closed (without ``--prompt`` and with no terminal, the CLI runs headless
on what standard input holds). The CLI's state and settings live in an isolated
``GEMINI_CLI_HOME``; the key is only ever in the environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agents.mcp_settings import SettingsMcpServer as GeminiMcpServer, settings_mcp_servers
from agentrig_gemini_cli.config import BASE_URL_ENV, KEY_ENV

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentrig.agents.mcp import McpHttpServer, McpStdioServer
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ThinkingPreset
    from agentrig_gemini_cli.config import GeminiCliConfig

#: The CLI's auth type reading ``GEMINI_API_KEY`` (its ``security.auth.selectedType``).
AUTH_TYPE = "gemini-api-key"
#: ``thinkingLevel`` per thinking preset, for the models that take a level rather than a budget (Gemini 3).
THINKING_LEVELS = {"none": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}


def build_argv(config: GeminiCliConfig, *, binary: str, model: str, resume: str | None = None) -> list[str]:
    """The argument vector (no shell); the task comes on standard input."""
    argv = [binary, "--output-format", "stream-json", "--model", model, "--skip-trust", "--approval-mode", config.approval_mode]
    argv += config.extra_args
    if resume:
        argv += ["--resume", resume]
    return argv


def build_env(
    config: GeminiCliConfig, *, credential: ProviderCredential | None, base_url: str | None, cli_home: str, home: str | None
) -> dict[str, str]:
    """The environment added to the runtime's for the CLI: credential, endpoint, isolated state."""
    env = dict(config.env)
    if credential is not None:
        env[KEY_ENV] = credential.secret()
    if base_url:
        env[BASE_URL_ENV] = base_url
    env["GEMINI_CLI_HOME"] = cli_home
    # one process: the CLI otherwise starts itself again as a child with a larger heap (1.4 s more per run)
    env["GEMINI_CLI_NO_RELAUNCH"] = "true"
    if home:
        env["HOME"] = home
    return env


def thinking_config(
    model: str, *, budget: int | None, level: str | None, preset: ThinkingPreset | None
) -> dict[str, Any] | None:
    """``thinkingConfig`` for ``model``: the config's own budget or level, else the preset's
    (a level for Gemini 3 models, a budget in tokens for the others); ``None``: the CLI's default."""
    if budget is not None or level is not None:
        explicit: dict[str, Any] = {}
        if budget is not None:
            explicit["thinkingBudget"] = budget
        if level is not None:
            explicit["thinkingLevel"] = level
        return explicit
    if preset is None:
        return None
    if model.startswith("gemini-3"):
        return {"thinkingLevel": THINKING_LEVELS[preset.value]}
    return {"thinkingBudget": preset.budget_tokens()}


class _Auth(BaseModel):
    selectedType: str = AUTH_TYPE  # noqa: N815  # the CLI's own key


class _Security(BaseModel):
    auth: _Auth = Field(default_factory=_Auth)


class _Privacy(BaseModel):
    usageStatisticsEnabled: bool = False  # noqa: N815


class _Telemetry(BaseModel):
    enabled: bool = False


class _General(BaseModel):
    enableAutoUpdate: bool = False  # noqa: N815
    enableAutoUpdateNotification: bool = False  # noqa: N815
    maxAttempts: int | None = None  # noqa: N815


class _ModelOverride(BaseModel):
    match: dict[str, str]
    modelConfig: dict[str, Any]  # noqa: N815


class _ModelConfigs(BaseModel):
    overrides: list[_ModelOverride] = Field(default_factory=list)


class GeminiSettings(BaseModel):
    """The CLI's user ``settings.json`` agentrig writes (``GEMINI_CLI_HOME/.gemini/settings.json``).

    API-key auth (``GEMINI_API_KEY``); usage statistics (Clearcut, to
    ``play.googleapis.com``), telemetry and update checks off, so the CLI calls
    nothing but the model's endpoint; the retries of a model request; the thinking
    setting as an override of the model's generation config; the MCP servers.
    """

    model_config = ConfigDict(extra="forbid")

    security: _Security = Field(default_factory=_Security)
    privacy: _Privacy = Field(default_factory=_Privacy)
    telemetry: _Telemetry = Field(default_factory=_Telemetry)
    general: _General = Field(default_factory=_General)
    modelConfigs: _ModelConfigs | None = None  # noqa: N815
    mcpServers: dict[str, GeminiMcpServer] | None = None  # noqa: N815

    @classmethod
    def build(
        cls,
        *,
        model: str,
        thinking: dict[str, Any] | None,
        max_attempts: int | None,
        mcp_servers: Mapping[str, McpStdioServer | McpHttpServer] | None = None,
        mcp_cwd: str | None = None,
    ) -> GeminiSettings:
        """The settings of a run of ``model`` (with ``mcp_servers`` resolved: the file then holds their secrets)."""
        configs = None
        if thinking is not None:
            override = _ModelOverride(match={"model": model}, modelConfig={"generateContentConfig": {"thinkingConfig": thinking}})
            configs = _ModelConfigs(overrides=[override])
        return cls(general=_General(maxAttempts=max_attempts), modelConfigs=configs,
                   mcpServers=settings_mcp_servers(mcp_servers, mcp_cwd))

    def to_json(self) -> str:
        """The file's text (unset fields left out: the CLI's defaults apply)."""
        return self.model_dump_json(indent=2, exclude_none=True) + "\n"
