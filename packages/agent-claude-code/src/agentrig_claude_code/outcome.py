"""Records of what a Claude Code CLI run reported: its session, retries, final result.

These are what :class:`~agentrig_claude_code.stream_json.ClaudeStreamParser`
gathers from a ``stream-json`` stream besides trajectory steps. The CLI's
field sets grow between versions, so the models keep fields they do not
name (``extra="allow"``) instead of failing on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig.usage import TokenUsage

if TYPE_CHECKING:
    from agentrig.llm.errors import LLMError

#: Words of the result's ``api_error`` code when no HTTP status came back (``connection_failed``): the
#: connection failed, dropped or timed out, after the CLI's own retries.
_TRANSPORT_CODES = ("connection", "network", "socket", "timeout", "timed_out")


class ApiRetry(BaseModel):
    """A ``system/api_retry`` event: the CLI retries a failed model call after a delay."""

    model_config = ConfigDict(extra="allow")

    attempt: int | None = None
    max_retries: int | None = None
    retry_delay_ms: float | None = None
    error_status: int | None = None
    error: str | None = None


class PermissionDenial(BaseModel):
    """A tool call the CLI refused for lack of permission (``result.permission_denials``)."""

    model_config = ConfigDict(extra="allow")

    tool_name: str | None = None
    tool_use_id: str | None = None
    tool_input: Any = None


class ClaudeResult(BaseModel):
    """The final ``result`` event, with the fields agentrig reads named.

    An API failure can end with ``subtype: "success"`` and ``is_error: true``:
    read ``is_error`` and ``api_error_status``, never ``subtype`` alone.
    ``model_usage`` and ``total_cost_usd`` cover the whole Claude session
    (every resumed run so far); ``model_usage_since_last_result`` and
    ``usage`` only this run.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    subtype: str | None = None
    is_error: bool = False
    api_error_status: int | None = None
    num_turns: int | None = None
    result: str | None = None
    errors: list[Any] | None = None
    stop_reason: str | None = None
    terminal_reason: str | None = None
    session_id: str | None = None
    total_cost_usd: float | None = None
    duration_ms: float | None = None
    duration_api_ms: float | None = None
    usage: dict[str, Any] = Field(default_factory=dict)
    model_usage: dict[str, dict[str, Any]] = Field(default_factory=dict, alias="modelUsage")
    model_usage_since_last_result: dict[str, dict[str, Any]] | None = None
    permission_denials: list[PermissionDenial] = Field(default_factory=list)

    def llm_error(self, message: str) -> LLMError | None:
        """The API failure the CLI ended with (after its own retries), classified as the core's model clients
        classify theirs (:func:`agentrig.llm.classify.classify_status`: 5xx, 529 and 429 are transient, 4xx
        permanent), a dropped or timed-out connection a :class:`~agentrig.llm.errors.NetworkError`; ``None``
        when the result is no API failure. ``message``: the failure's text, scrubbed by the caller."""
        from agentrig.llm import errors
        from agentrig.llm.classify import classify_status

        extra = self.model_extra or {}
        kind, code = extra.get("api_error_type"), extra.get("api_error")
        kind = kind if isinstance(kind, str) else None
        code = code if isinstance(code, str) else None
        if not self.is_error or (self.api_error_status is None and kind is None and code is None):
            return None
        if self.api_error_status is None and code is not None and any(word in code for word in _TRANSPORT_CODES):
            cls = errors.LLMTimeoutError if "time" in code else errors.NetworkError
            return cls(f"{code}: {message}", provider="anthropic")
        body = {"error": {"type": kind, "code": code, "message": message}}
        return classify_status(self.api_error_status, body, provider="anthropic", fallback_message=message)


CostSource = Literal["pricing", "cli", "mixed"]
"""Where a checkpoint's cost came from: agentrig's pricing, the CLI's own figure, or both (several models)."""


class ClaudeStreamOutcome(BaseModel):
    """Everything a stream told besides its steps, written as ``claude_outcome.json``.

    ``reported_usage``/``reported_cost`` are this run's totals from the final
    result (what the live usage was reconciled to); ``cost_source`` says how
    the cost was priced: ``pricing`` (agentrig's model pricing), ``cli`` (the
    CLI's own prices) or ``mixed``. ``exit_code``/``killed``/``timeout_kind``
    come from the process's end when the stream saw it.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str | None = None
    model: str | None = None
    cli_version: str | None = None
    cwd: str | None = None
    tools: list[str] = Field(default_factory=list)
    messages: int = 0
    api_retries: list[ApiRetry] = Field(default_factory=list)
    api_errors: list[str] = Field(default_factory=list)
    result: ClaudeResult | None = None
    live_usage: TokenUsage = Field(default_factory=TokenUsage)
    live_cost: float = 0.0
    reported_usage: TokenUsage | None = None
    reported_cost: float | None = None
    cost_source: CostSource | None = None
    unknown_events: list[dict[str, Any]] = Field(
        default_factory=list, description="Events of types this parser does not know (first ones kept, raw)."
    )
    unknown_event_count: int = 0
    invalid_lines: list[str] = Field(default_factory=list, description="stdout lines that were not JSON (truncated).")
    exit_code: int | None = None
    killed: bool = False
    timeout_kind: Literal["wall", "idle"] | None = None
    finished: bool = False

    @property
    def is_error(self) -> bool:
        """Whether the CLI itself reported failure in its result."""
        return self.result is not None and self.result.is_error
