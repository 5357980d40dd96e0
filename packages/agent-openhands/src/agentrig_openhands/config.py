"""Configuration of the ``openhands`` agent."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from agentrig.agents.cli_config import CliAgentConfig

#: The pinned PyPI version of ``openhands-sdk`` (and of ``openhands-tools``, released with it): the newest
#: release on the index when the agent was written. It needs Python 3.12 or later.
DEFAULT_SDK_VERSION = "1.58.2"

#: The variables the driver reads the model's key and endpoint from (never the command line).
KEY_ENV = "LLM_API_KEY"
BASE_URL_ENV = "LLM_BASE_URL"

#: Variables agentrig sets itself, or that would send data elsewhere (Laminar tracing, OpenTelemetry);
#: a config's ``env`` may not set them.
RESERVED_ENV = frozenset(
    {
        KEY_ENV,
        BASE_URL_ENV,
        "HOME",
        "LITELLM_LOCAL_MODEL_COST_MAP",
        "OPENHANDS_SUPPRESS_BANNER",
        "LMNR_PROJECT_API_KEY",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    }
)


class OpenHandsConfig(CliAgentConfig):
    """How to run OpenHands: the SDK's ``Agent`` and ``Conversation``, headless, through agentrig's driver.

    OpenHands needs Python 3.12 or later, so it runs in an environment of its own:
    ``binary`` is the Python of a virtual environment holding ``openhands-sdk`` and
    ``openhands-tools`` at ``version`` (a different version is refused at setup;
    ``version: null`` accepts any). agentrig copies its driver script into the agent's
    private state directory and runs it with that Python in the session's runtime,
    the workspace as its working directory: OpenHands' own terminal (a subprocess
    shell) and file editor work there. The key reaches it only as ``LLM_API_KEY`` in
    its environment, the endpoint as ``LLM_BASE_URL``; LiteLLM's price list is read
    from the package (no download) and no tracing is configured. ``mcp_servers`` become
    the SDK's ``mcp_config``. Cost, step and token limits and timeouts are enforced
    while it runs by killing its process tree.
    """

    type: Literal["openhands"] = "openhands"
    #: ``mcp_servers`` become the SDK agent's ``mcp_config`` (in the owner-only run file).
    supports_mcp: ClassVar[bool] = True
    reserved_env: ClassVar[frozenset[str]] = RESERVED_ENV
    version: str | None = Field(default=DEFAULT_SDK_VERSION, description="PyPI version of openhands-sdk (and openhands-tools).")
    binary: str | None = Field(
        default=None,
        description="The Python (3.12 or later) of the environment holding openhands-sdk and openhands-tools, as the "
        "runtime sees it; none: 'python3' on PATH.",
    )
    base_url: str | None = Field(
        default=None,
        description="The model's endpoint (LLM_BASE_URL); overrides the provider's environment variable and the model's.",
    )
    litellm_model: str | None = Field(
        default=None,
        description="The model as LiteLLM names it; none: PROVIDER/NAME of the model ('openai/NAME' with a base_url "
        "for a provider LiteLLM does not know).",
    )
    num_retries: int | None = Field(default=None, ge=0, description="Tries of a failed model call (the SDK's default: 5).")
    max_iterations: int | None = Field(
        default=None, ge=1, description="OpenHands' own step cap per checkpoint (max_iteration_per_run; default 500)."
    )
    stuck_detection: bool = Field(default=True, description="OpenHands' stuck detector (ends a run that repeats itself).")
    stream_parser: str = Field(
        default="openhands-jsonl", description="The stream parser (agentrig_stream_parsers) reading the driver's JSON lines."
    )

    @field_validator("extra_args")
    @classmethod
    def _no_extra_args(cls, value: list[str]) -> list[str]:
        if value:
            raise ValueError("the OpenHands driver takes no extra arguments: set the agent's own fields instead")
        return value
