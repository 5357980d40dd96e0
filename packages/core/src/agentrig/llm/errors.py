"""Why a model call failed, classified so a run can record why it stopped.

Every client raises an :class:`LLMError` subclass, never an SDK exception:
``kind`` is a short machine-readable token (``rate_limit``, ``overloaded``,
``auth``, ``context_length``, ``network``, ...), ``retryable`` says whether
the client's retry loop retries it, and the message is one line with secrets
redacted. SDK exceptions are not chained (``__cause__`` and ``__context__``
stay empty) because their text may carry an API key.
"""

from __future__ import annotations


class LLMError(Exception):
    """A model call failed.

    ``provider``: the provider key; ``status``: the HTTP status, when there
    was one; ``request_id``: the provider's id of the failed request;
    ``attempts``: how many requests were made in total (retries included);
    ``retry_after``: seconds the provider asked to wait, when it said.
    """

    kind: str = "error"
    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status: int | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.request_id = request_id
        self.retry_after = retry_after
        self.attempts = attempts

    def __str__(self) -> str:
        where = f"{self.provider}: " if self.provider else ""
        status = f" (HTTP {self.status})" if self.status else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{where}{self.kind}{status}{tries}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"


class TransientLLMError(LLMError):
    """A failure worth retrying: the same request may succeed later."""

    retryable = True


class RateLimitError(TransientLLMError):
    """HTTP 429: too many requests or tokens for the account's limits."""

    kind = "rate_limit"


class OverloadedError(TransientLLMError):
    """The provider is overloaded (Anthropic's 529, or 503)."""

    kind = "overloaded"


class ServerError(TransientLLMError):
    """HTTP 5xx from the provider."""

    kind = "server_error"


class NetworkError(TransientLLMError):
    """The connection failed or dropped before a complete response arrived."""

    kind = "network"


class LLMTimeoutError(NetworkError):
    """The request or the stream timed out."""

    kind = "timeout"


class PermanentLLMError(LLMError):
    """A failure that the same request will hit again: never retried."""


class AuthenticationError(PermanentLLMError):
    """HTTP 401: the API key or token is missing, wrong or revoked."""

    kind = "auth"


class PermissionDeniedError(PermanentLLMError):
    """HTTP 403: the key may not use this model or endpoint."""

    kind = "permission"


class NotFoundError(PermanentLLMError):
    """HTTP 404: unknown model or wrong base URL."""

    kind = "not_found"


class ContextLengthError(PermanentLLMError):
    """The conversation no longer fits the model's context window."""

    kind = "context_length"


class BadRequestError(PermanentLLMError):
    """HTTP 400/422 (other than context length): the request is malformed."""

    kind = "bad_request"


class InvalidResponseError(TransientLLMError):
    """The provider answered something the client cannot read (invalid JSON, a reply
    without choices): a garbled answer from a proxy or an overloaded server, retried."""

    kind = "invalid_response"


class ReplayExhaustedError(PermanentLLMError):
    """A replay model was asked for more responses than were recorded."""

    kind = "replay_exhausted"


class MissingDependencyError(PermanentLLMError):
    """The provider's SDK is not installed (install the extra it names)."""

    kind = "missing_dependency"


class ConfigurationError(PermanentLLMError):
    """The model cannot be set up as configured (no base URL, unknown provider, ...)."""

    kind = "configuration"


__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ConfigurationError",
    "ContextLengthError",
    "InvalidResponseError",
    "LLMError",
    "LLMTimeoutError",
    "MissingDependencyError",
    "NetworkError",
    "NotFoundError",
    "OverloadedError",
    "PermanentLLMError",
    "PermissionDeniedError",
    "RateLimitError",
    "ReplayExhaustedError",
    "ServerError",
    "TransientLLMError",
]
