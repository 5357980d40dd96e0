"""aider in Docker: the agent's own image, built by ``ensure_agent_image`` from the package's template over
the Debian + Node test image (``python3-venv`` from Debian, ``aider-chat`` from PyPI, nothing pulled from a
registry), runs the launcher in the session's container against the fake chat-completions server on the host
(network mode ``host``, so 127.0.0.1 is the host's).

The image build happens once (uv installs aider's 112 packages; with pip it took about 16 minutes on a loaded
2-core machine), 1.08 GB; later runs find it unchanged and skip it. The first test's setup builds it: the
module's timeout leaves that build room on a fresh, loaded CI machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig import Agent, AgentContext, AgentCostLimits
from agentrig.runtime.images import LABEL_VERSION, agent_image_tag
from agentrig_aider.config import DEFAULT_AIDER_VERSION, AiderConfig
from agentrig_aider.testing import replace_block

# One worker builds the agent image (module fixture) and runs every test that uses it.
pytestmark = [pytest.mark.docker, pytest.mark.aider_cli, pytest.mark.xdist_group("aider_image"), pytest.mark.timeout(1200)]


def test_image_holds_exactly_the_pinned_aider(docker_engine: Any, node_test_image: str, aider_image: str) -> None:
    assert aider_image == agent_image_tag("aider", DEFAULT_AIDER_VERSION, node_test_image)
    assert docker_engine.images.get(aider_image).labels[LABEL_VERSION] == DEFAULT_AIDER_VERSION
    output = docker_engine.containers.run(aider_image, ["aider", "--version"], remove=True, network_mode="none")
    assert output.decode().split()[-1] == DEFAULT_AIDER_VERSION


def test_a_cost_limit_kills_aider_in_its_container_and_no_container_is_left(
    aider_image: str, tmp_path: Path, fake_openai_server: Any, docker_engine: Any, model_def: Any, credential: Any
) -> None:
    from agentrig.agents import lifecycle
    from agentrig.agents.session import Session
    from agentrig.problem import Checkpoint
    from agentrig.runtime.owners import LABEL_SESSION

    server = fake_openai_server
    # the first answer's edit does not apply (aider would send the error back), and it costs USD 2 (GPT-4.1 prices)
    server.add_reply("A miss.\n\n" + replace_block("names.txt", "nobody\n", "x\n"), usage={"input": 1_000_000, "output": 10})
    server.add_reply("Never.\n\n" + replace_block("greetings.txt", "", "Hello, Ada!\n"), delay=60)
    config = AiderConfig(base_url=server.base_url, cost_limits=AgentCostLimits(cost_limit=1.0), edit_format="diff")
    context = AgentContext(model=model_def, credential=credential, problem_name="docker-e2e", image=aider_image)
    agent = Agent.from_config(config, context)
    options = {"image": aider_image, "network": "host"}
    with Session.create(runtime="docker", base_dir=tmp_path, runtime_options=options) as session:
        session_id = session.runtime.session_id
        (session.workspace.path / "names.txt").write_text("Ada\n")
        lifecycle.setup_agent(agent, session)
        try:
            result = lifecycle.run_checkpoint(agent, Checkpoint(name="c1", prompt="c1.md"), "Greet Ada.", session.runtime)
            attrs = docker_engine.api.inspect_container(session.runtime.container_id)
            execs = [docker_engine.api.exec_inspect(e) for e in attrs.get("ExecIDs") or []]
            assert credential.secret() not in json.dumps([attrs, execs])
            # the launcher's tree died with the kill; the container itself lives on until the session closes
            top = docker_engine.api.top(session.runtime.container_id, ps_args="-eo pid,args")
            assert [p for p in top["Processes"] if "launcher.py" in " ".join(p)] == [], top
            launch = json.loads(agent.launch.model_dump_json()) if agent.launch else {}
        finally:
            lifecycle.cleanup_agent(agent)
        # aider's state went to the session's home, mounted from the host
        assert (session.home / ".agentrig-aider" / "launcher.py").is_file()
    assert result.stop_reason == "cost_limit" and not result.had_error, result.error_message
    assert result.usage.steps == 1 and result.usage.cost == pytest.approx(2.0 + 10 * 8e-6)
    assert launch["runtime"] == "docker" and credential.secret() not in json.dumps(launch)
    assert not (session.workspace.path / "greetings.txt").exists()
    mine = [c.name for c in docker_engine.containers.list(all=True, filters={"label": f"{LABEL_SESSION}={session_id}"},
                                                           ignore_removed=True)]
    assert mine == [], f"the session's container is left: {mine}"
