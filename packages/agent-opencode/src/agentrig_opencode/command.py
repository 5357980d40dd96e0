"""The ``opencode run`` command line, its environment and its config file (``opencode.json``).

The task text is not an argument: it reaches the CLI on standard input, which
OpenCode reads when it is not a terminal. The model is an OpenAI-compatible
provider (``@ai-sdk/openai-compatible``, bundled in the CLI) declared in a
config file in the agent's isolated state directory; its ``apiKey`` is the
reference ``{env:OPENAI_API_KEY}``, so the key itself is only ever in the
environment. The model's prices are declared too: the cost OpenCode reports
for each model call is then agentrig's own figure.

What keeps OpenCode off the network and inside its state directory (found in
the CLI 1.18.33's source): ``OPENCODE_DISABLE_MODELS_FETCH`` (no models.dev
catalog), ``OPENCODE_DISABLE_AUTOUPDATE``, ``OPENCODE_DISABLE_SHARE`` and
``share: disabled``, ``OPENCODE_DISABLE_LSP_DOWNLOAD``, ``npm_config_offline``
(OpenCode npm-installs ``@opencode-ai/plugin`` into every config directory it
reads; offline, that install fails at once and is only logged),
``OPENCODE_DISABLE_PROJECT_CONFIG`` (a workspace's own ``opencode.json`` is
task input, not configuration) and ``OPENCODE_DISABLE_CLAUDE_CODE`` (no
``~/.claude`` prompts or skills); ``HOME``, the XDG directories and ``TMPDIR``
all point into the state directory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig_opencode.config import KEY_ENV

if TYPE_CHECKING:
    from agentrig.agents.mcp import McpHttpServer, McpStdioServer
    from agentrig.credentials import ProviderCredential
    from agentrig.pricing import APIPricing
    from agentrig_opencode.config import OpenCodeConfig

#: The provider agentrig declares in OpenCode's config.
PROVIDER_ID = "agentrig"
OPENAI_BASE_URL = "https://api.openai.com/v1"
#: The config file's name in the state directory.
CONFIG_FILE = "opencode.json"
#: Defaults of the model's limits when neither the agent config nor the model names them.
DEFAULT_CONTEXT = 200_000
DEFAULT_OUTPUT = 32_000

#: Switches that keep the CLI off the network and away from configuration it did not get from agentrig.
QUIET_ENV = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "npm_config_offline": "true",
}


class ModelCost(BaseModel):
    """A model's prices in OpenCode's config (USD per million tokens)."""

    input: float
    output: float
    cache_read: float
    cache_write: float


class ModelLimit(BaseModel):
    """A model's context and output limits in OpenCode's config."""

    context: int
    output: int


class ProviderModel(BaseModel):
    """One model of a provider in OpenCode's config."""

    name: str
    tool_call: bool = True
    reasoning: bool = True
    cost: ModelCost | None = None
    limit: ModelLimit
    options: dict[str, Any] = Field(default_factory=dict)


class ProviderOptions(BaseModel):
    """The provider's endpoint and the reference to its key in the environment."""

    model_config = ConfigDict(populate_by_name=True)

    base_url: str = Field(alias="baseURL")
    api_key: str = Field(default="{env:" + KEY_ENV + "}", alias="apiKey")


class Provider(BaseModel):
    """An OpenAI-compatible provider in OpenCode's config."""

    npm: str = "@ai-sdk/openai-compatible"
    name: str = PROVIDER_ID
    options: ProviderOptions
    models: dict[str, ProviderModel]


class McpLocal(BaseModel):
    """A stdio MCP server in OpenCode's config (``type: local``): the command and its arguments as one array."""

    type: Literal["local"] = "local"
    command: list[str]
    cwd: str | None = None
    environment: dict[str, str] | None = None
    # milliseconds; OpenCode's one timeout: connecting, listing the tools and each tool call
    timeout: int


class McpRemote(BaseModel):
    """A streamable-HTTP MCP server in OpenCode's config (``type: remote``)."""

    type: Literal["remote"] = "remote"
    url: str
    headers: dict[str, str] | None = None
    # no OAuth discovery: it would start a callback server and ask for a browser login
    oauth: Literal[False] = False
    timeout: int


#: What OpenCode replaces in its config's text before reading it (the variable's value, the file's content).
_SUBSTITUTION = re.compile(r"\{(env|file):", re.IGNORECASE)


def substitution_in(servers: Mapping[str, McpStdioServer | McpHttpServer]) -> str | None:
    """Where a (resolved) server value holds ``{env:`` or ``{file:`` (``mcp_servers.NAME.FIELD``), else ``None``.

    OpenCode substitutes both in its config file, so such a value would reach
    the server as another variable's value (agentrig's own key among them) or
    a file's content: the agent refuses it rather than write it.
    """
    for name, server in servers.items():
        if server.type == "stdio":
            fields = {"command": server.command, **{f"args[{i}]": a for i, a in enumerate(server.args)}}
            fields |= {f"env.{key}": value for key, value in server.env.items()}
        else:
            fields = {"url": server.url, **{f"headers.{key}": value for key, value in server.headers.items()}}
        for field, value in fields.items():
            if _SUBSTITUTION.search(value):
                return f"mcp_servers.{name}.{field}"
    return None


def mcp_entry(server: McpStdioServer | McpHttpServer, cwd: str | None) -> McpLocal | McpRemote:
    """One server of ``mcp_servers`` in OpenCode's own form (stdio servers start in ``cwd``, the workspace).

    OpenCode has a single timeout per server, for its start and for every
    request: the longer of ``startup_timeout`` and ``tool_timeout``.
    """
    timeout = int(max(server.startup_timeout, server.tool_timeout) * 1000)
    if server.type == "stdio":
        return McpLocal(command=[server.command, *server.args], cwd=cwd, environment=dict(server.env) or None, timeout=timeout)
    return McpRemote(url=server.url, headers=dict(server.headers) or None, timeout=timeout)


class OpenCodeFile(BaseModel):
    """The ``opencode.json`` agentrig writes for a run (``OPENCODE_CONFIG`` names it)."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default="https://opencode.ai/config.json", alias="$schema")
    model: str
    small_model: str
    provider: dict[str, Provider]
    # only agentrig's provider: none of those OpenCode would detect from the environment
    enabled_providers: list[str] = Field(default_factory=lambda: [PROVIDER_ID])
    autoupdate: bool = False
    share: str = "disabled"
    snapshot: bool = False
    # agentrig's runtime is the sandbox: nothing is asked, nothing is refused by OpenCode itself
    permission: dict[str, str] = Field(default_factory=lambda: {"*": "allow"})
    mcp: dict[str, McpLocal | McpRemote] | None = None

    def to_json(self) -> str:
        """The file's text (aliases as OpenCode spells them)."""
        return self.model_dump_json(by_alias=True, exclude_none=True, indent=2) + "\n"


def model_ref(model: str) -> str:
    """The ``provider/model`` OpenCode's ``--model`` takes."""
    return f"{PROVIDER_ID}/{model}"


def opencode_file(
    *,
    model: str,
    base_url: str,
    pricing: APIPricing | None,
    reasoning_effort: str | None,
    context: int,
    output: int,
    mcp_servers: Mapping[str, McpStdioServer | McpHttpServer] | None = None,
    mcp_cwd: str | None = None,
) -> OpenCodeFile:
    """OpenCode's config: one OpenAI-compatible provider with one priced model, every model call on it, and
    an ``mcp`` entry per MCP server (resolved: the file then holds their secrets and is written 0600)."""
    cost = None
    if pricing is not None:
        cost = ModelCost(
            input=pricing.input,
            output=pricing.output,
            cache_read=pricing.input if pricing.cache_read is None else pricing.cache_read,
            cache_write=pricing.input if pricing.cache_write is None else pricing.cache_write,
        )
    options = {"reasoningEffort": reasoning_effort} if reasoning_effort is not None else {}
    entry = ProviderModel(name=model, cost=cost, limit=ModelLimit(context=context, output=output), options=options)
    provider = Provider(options=ProviderOptions(base_url=base_url), models={model: entry})
    mcp = {name: mcp_entry(server, mcp_cwd) for name, server in (mcp_servers or {}).items()} or None
    return OpenCodeFile(model=model_ref(model), small_model=model_ref(model), provider={PROVIDER_ID: provider}, mcp=mcp)


def build_argv(config: OpenCodeConfig, *, binary: str, model: str, title: str, session: str | None = None) -> list[str]:
    """The argument vector (no shell); the task comes on standard input.

    ``--title`` names the session: without it OpenCode asks the model for a
    title first, a model call of its own. ``--thinking`` puts the model's
    reasoning into the stream.
    """
    argv = [binary, "run", "--format", "json", "--model", model_ref(model), "--title", title, "--thinking"]
    if session:
        argv += ["--session", session]
    argv += config.extra_args
    return argv


def build_env(
    config: OpenCodeConfig, *, credential: ProviderCredential | None, state_dir: str, home: str | None
) -> dict[str, str]:
    """The environment added to the runtime's for the CLI: credential, isolation, no network but the model's."""
    env = dict(config.env)
    env.update(QUIET_ENV)
    if credential is not None:
        env[KEY_ENV] = credential.secret()
    env.update(
        HOME=home or state_dir,
        XDG_CONFIG_HOME=f"{state_dir}/config",
        XDG_DATA_HOME=f"{state_dir}/data",
        XDG_CACHE_HOME=f"{state_dir}/cache",
        XDG_STATE_HOME=f"{state_dir}/state",
        TMPDIR=f"{state_dir}/tmp",
        OPENCODE_CONFIG=f"{state_dir}/{CONFIG_FILE}",
    )
    return env
