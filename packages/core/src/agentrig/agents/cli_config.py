"""Configuration fields shared by the agents that drive a pinned command-line agent (Claude Code, Codex, ...)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from agentrig.agents.interface import AgentConfigBase
from agentrig.boundary import Seconds


class CliAgentConfig(AgentConfigBase):
    """The launch fields of a CLI agent: timeouts, extra environment and extra arguments.

    A subclass gives ``stream_parser`` its default and names what agentrig itself passes to its CLI in
    :attr:`reserved_env` (variables: credentials, endpoint, state directories)
    and :attr:`reserved_flags` (arguments): ``env`` and ``extra_args`` may not
    set them, so a config can neither leak a secret onto the command line nor
    undo what the agent relies on.
    """

    #: Environment variables agentrig sets for the CLI; ``env`` may not name them.
    reserved_env: ClassVar[frozenset[str]] = frozenset()
    #: Flags agentrig passes to the CLI; ``extra_args`` may not contain them.
    reserved_flags: ClassVar[frozenset[str]] = frozenset()

    binary: str | None = Field(
        default=None, description="Path of the CLI's executable (as the runtime sees it); none: its usual name on PATH."
    )
    bundle: str | None = Field(
        default=None,
        description="Host path of an agent bundle of one's own (a directory holding bin/<cli>), bound read-only into "
        "a task's container (--runtime docker) instead of the bundle agentrig prepares from npm.",
    )
    stream_parser: str = Field(description="The stream parser (agentrig_stream_parsers) reading the CLI's output.")
    timeout: Seconds | None = Field(default=None, description="Wall-clock seconds per checkpoint.")
    idle_timeout: Seconds | None = Field(default=None, description="Seconds without output before the CLI is killed.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment of the CLI; no secrets.")
    extra_args: list[str] = Field(
        default_factory=list, description="More CLI arguments (they are visible on the command line: no secrets)."
    )

    @field_validator("env")
    @classmethod
    def _no_reserved_env(cls, value: dict[str, str]) -> dict[str, str]:
        reserved = sorted(cls.reserved_env & set(value))
        if reserved:
            raise ValueError(
                f"env may not set {', '.join(reserved)}: agentrig sets it (credentials come from the environment or "
                "the credential store, the endpoint from 'base_url')"
            )
        return value

    @field_validator("extra_args")
    @classmethod
    def _no_reserved_flags(cls, value: list[str]) -> list[str]:
        for arg in value:
            flag = arg.split("=", 1)[0]
            if flag in cls.reserved_flags:
                raise ValueError(f"extra_args may not contain '{flag}': agentrig passes it (see the agent's own fields)")
        return value
