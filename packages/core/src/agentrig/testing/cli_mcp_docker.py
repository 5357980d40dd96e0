"""Test kit: a CLI agent under ``--runtime docker`` starting the test kit's stdio MCP server in its container.

Every CLI agent's ``test_*_mcp_docker.py`` plays the same scenario: the real pinned CLI runs in the session's
container (an image layer over the agent's image carrying the server, :mod:`agentrig.testing.mcp_image`) and
starts the probe server there; scripted by a fake model server on the host, the model calls the server's
``write_file`` and ``env_digest``. :func:`probe_server_in_docker` runs it and checks what is the same for
every CLI: the file the server wrote is in the host's workspace, owned by the test's user; the secret given
to the server is in no argv, container definition or model request; the server is gone once the CLI ended.
The agent's test scripts its CLI's tool calls and checks its own names and steps on the :class:`DockerMcpRun`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from agentrig.testing.cli_agents import CliAgentKit, live_processes, record_steps
from agentrig.testing.mcp_image import LAUNCHER, stdio_server_in_image

if TYPE_CHECKING:
    import pytest

    from agentrig.agents.cli_agent import CliAgent
    from agentrig.agents.interface import AgentConfigBase
    from agentrig.agents.result import CheckpointInferenceResult
    from agentrig.trajectory import TrajectoryStep

#: The file the scripted model has the server write, relative to the workspace.
WRITTEN = "out/from_mcp.txt"


class DockerMcpRun(NamedTuple):
    """The checkpoint run in the container: what the agent's test checks further."""

    agent: CliAgent
    result: CheckpointInferenceResult
    #: Every step the agent emitted.
    steps: list[TrajectoryStep]
    #: The session's workspace on the host.
    workspace: Path
    container_id: str


def wait_until_none(marker: str, within: float = 15.0) -> list[str]:
    """The live processes holding ``marker`` once none is left, or those still there after ``within`` seconds."""
    deadline = time.monotonic() + within
    while (found := live_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


@contextmanager
def probe_server_in_docker(
    config_type: Callable[..., AgentConfigBase], *, kit: CliAgentKit, image: str, server: Any, docker_engine: Any,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str, variable: str, content: str,
) -> Iterator[DockerMcpRun]:
    """Run one checkpoint of the agent of ``config_type`` in a Docker session of ``image``, the probe server its
    ``probe`` MCP server; ``server`` (the fake model, scripted by the caller) has it write ``content`` to
    :data:`WRITTEN`. ``secret`` reaches the server as ``PROBE_SECRET`` through ``${variable}``. Yields inside the
    session, once the agent is cleaned up; the common checks follow the caller's."""
    from agentrig.agents import lifecycle
    from agentrig.agents.cli_agent import CliAgent
    from agentrig.agents.interface import Agent, AgentContext
    from agentrig.agents.session import Session
    from agentrig.runtime.docker import DockerRuntime

    assert shutil.which(LAUNCHER) is None  # the server's command exists only in the image
    monkeypatch.setenv(variable, secret)
    marker = f"/tmp/mcp-{uuid.uuid4().hex}.pid"  # names this test's server among the machine's processes
    entry = stdio_server_in_image("--pid-file", marker, env={"PROBE_SECRET": "${" + variable + "}"})
    config = config_type(base_url=server.base_url, mcp_servers={"probe": entry})
    context = AgentContext(model=kit.model_definition(), credential=kit.credential(), problem_name="docker-mcp",
                           image=image)
    agent = Agent.from_config(config, context)
    assert isinstance(agent, CliAgent)
    steps = record_steps(agent)
    with Session.create(runtime="docker", base_dir=tmp_path, runtime_options={"image": image, "network": "host"}) as session:
        lifecycle.setup_agent(agent, session)
        try:
            result = agent.run_checkpoint(f"Write {WRITTEN} with the probe server.")
            assert not result.had_error, result.error_message
            assert isinstance(session.runtime, DockerRuntime)
            container_id = session.runtime.container_id
            inspected = json.dumps(docker_engine.api.inspect_container(container_id))
        finally:
            lifecycle.cleanup_agent(agent)
        # the server wrote under its working directory, the container's /workspace: the host's workspace
        written = session.workspace.path / WRITTEN
        assert written.read_text() == content
        assert (written.stat().st_uid, written.stat().st_gid) == (os.getuid(), os.getgid())
        yield DockerMcpRun(agent, result, steps, session.workspace.path, container_id)
        # the secret reached the server (in the container) through the CLI's 0600 config file, nowhere else
        assert agent.launch is not None and all(secret not in arg for arg in agent.launch.argv)
        assert secret not in inspected and all(secret not in r.raw_body for r in server.model_requests)
        # the CLI stopped its server when it ended: nothing of it is left on the machine
        assert wait_until_none(marker) == []
