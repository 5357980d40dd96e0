"""mini-swe-agent's environment, with its commands run in the agentrig session's runtime.

:class:`RuntimeEnvironment` is mini-swe-agent's own ``LocalEnvironment`` with
only the process launch replaced: the command goes to the session's
:class:`~agentrig.runtime.interface.Runtime` (local or Docker). What the agent
sees is unchanged: stdout and stderr interleaved in one output, the same
``returncode``/``exception_info`` dict, the same timeout report, and upstream's
own submission check (``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` on the first
line of a command that exits 0 raises ``Submitted``).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.boundary import WholeSeconds
from agentrig.runtime.interface import Invocation
from agentrig_miniswe.upstream import load_upstream

if TYPE_CHECKING:
    from agentrig.runtime.interface import Runtime

_UP = load_upstream()

if TYPE_CHECKING:  # the class checked against; at run time the one load_upstream() found and checked
    from minisweagent.environments.local import LocalEnvironment as _LocalEnvironment
else:
    _LocalEnvironment = _UP.LocalEnvironment

# Runs the interpreter with stderr joined to stdout in the same pipe, so output
# keeps the order the command wrote it in, as subprocess's stderr=STDOUT does
# for mini's LocalEnvironment. ``exec`` leaves no wrapper shell behind and
# keeps the interpreter's own error messages (``/bin/sh: 1: ...``) unchanged.
_JOIN_STDERR = 'exec "$@" 2>&1'


class RuntimeEnvironmentConfig(BaseModel):
    """The environment settings mini-swe-agent's configs hold, for an agentrig runtime.

    ``cwd`` empty means the runtime's workspace; ``interpreter`` is the argv
    prefix a command is appended to (mini's LocalEnvironment uses ``/bin/sh -c``).
    """

    model_config = ConfigDict(extra="forbid")

    cwd: str = ""
    env: dict[str, str] = Field(default_factory=dict)
    timeout: WholeSeconds = 30
    interpreter: list[str] = Field(default_factory=lambda: ["/bin/sh", "-c"], min_length=1)


class CommandRecord(BaseModel):
    """One command the environment ran, with what mini-swe-agent was told about it."""

    model_config = ConfigDict(extra="forbid")

    command: str
    tool_call_id: str | None = None
    output: str
    returncode: int
    exception_info: str = ""
    elapsed: float
    timed_out: bool = False


CommandListener = Callable[[CommandRecord], None]


class RuntimeEnvironment(_LocalEnvironment):
    """mini-swe-agent's ``LocalEnvironment`` whose commands run in an agentrig runtime."""

    def __init__(self, runtime: Runtime, on_command: CommandListener | None = None, **kwargs: Any) -> None:
        """``kwargs`` are :class:`RuntimeEnvironmentConfig` fields; ``on_command`` hears every command."""
        super().__init__(config_class=RuntimeEnvironmentConfig, **kwargs)
        self.runtime = runtime
        self.on_command = on_command

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        """Run ``action["command"]`` in the runtime; raise ``Submitted`` as upstream does."""
        command = action.get("command", "")
        cwd = cwd or self.config.cwd or self.runtime.workdir
        limit = timeout or self.config.timeout
        argv = ["/bin/sh", "-c", _JOIN_STDERR, "mswea", *self.config.interpreter, command]
        started = time.monotonic()
        timed_out = False
        try:
            result = self.runtime.exec(Invocation(argv, env=self.config.env, timeout=limit, cwd=cwd))
            text = result.stdout + result.stderr  # stderr holds only what the runtime itself reported
            if result.timed_out:
                timed_out = True
                # The very exception mini's LocalEnvironment reports, so the observation reads the same.
                raise subprocess.TimeoutExpired(command, limit, output=text)
            returncode = -1 if result.exit_code is None else result.exit_code
            output: dict[str, Any] = {"output": text, "returncode": returncode, "exception_info": ""}
        except Exception as e:  # mirrors upstream: any failure becomes an observation, not a crash
            raw_output = getattr(e, "output", None)
            raw_output = (
                raw_output.decode("utf-8", errors="replace") if isinstance(raw_output, bytes) else (raw_output or "")
            )
            output = {
                "output": raw_output,
                "returncode": -1,
                "exception_info": f"An error occurred while executing the command: {e}",
                "extra": {"exception_type": type(e).__name__, "exception": str(e)},
            }
        if self.on_command is not None:
            self.on_command(
                CommandRecord(
                    command=command,
                    tool_call_id=action.get("tool_call_id"),
                    output=output["output"],
                    returncode=output["returncode"],
                    exception_info=output["exception_info"],
                    elapsed=time.monotonic() - started,
                    timed_out=timed_out,
                )
            )
        self._check_finished(output)
        return output

    def serialize(self) -> dict:
        """Config and type, as mini-swe-agent's environments report them, plus the runtime's name."""
        return {
            "info": {
                "config": {
                    "environment": self.config.model_dump(mode="json"),
                    "environment_type": f"{type(self).__module__}.{type(self).__name__}",
                    "runtime": getattr(self.runtime, "name", type(self.runtime).__name__),
                }
            }
        }
