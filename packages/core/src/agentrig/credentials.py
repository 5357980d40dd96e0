"""A resolved secret for talking to a model provider."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, SecretStr


class ProviderCredential(BaseModel):
    """An API key or token and where it came from.

    ``value`` is a :class:`pydantic.SecretStr`: reprs, logs and
    ``model_dump_json`` show ``**********``, never the secret. ``source`` names
    the environment variable or file it was read from, so messages can point
    at it without revealing it. ``env_var`` is the variable a child process
    expects it in (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, ...).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: str
    value: SecretStr
    source: str
    env_var: str

    def secret(self) -> str:
        """The secret itself: hand it to an SDK or a child's environment only."""
        return self.value.get_secret_value()

    def __str__(self) -> str:
        return f"<credential for {self.provider} from {self.source}>"
