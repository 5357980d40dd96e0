"""Threat: a model has the agent's shell tool print the environment (``env | grep -i api_key``) and the key it
finds lands in the run's records: ``trajectory.jsonl``, ``agent/trajectory.jsonl``, ``export --format jsonl``
and the viewer's search shards (issue 32, section 2).

Every agent, run by ``agentrig run`` with a canary secret as its key against the test kit's fake model servers
(the real pinned CLIs): the canary is in no file of the run directory, not in the export, not in the static
report. The CLI agents hand the key to their CLI, whose shell tool inherits it: the scripted model runs
``env | grep -i api_key`` and the tool output recorded holds ``[redacted]`` instead. react and mini-swe-agent
never give the key to a command, and aider has no shell tool: their model writes the key itself (one that
learned it elsewhere), and it is scrubbed the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentrig.scrub import REDACTED

sys.path.insert(0, str(Path(__file__).parent))

from secret_canary import CASES, PRINT_ENV, agent_params, canary, leaks, run_agent, run_env

pytestmark = pytest.mark.timeout(900)


def script(agent: str, server: Any, key: str) -> None:
    """The model's replies: print the key through the agent's tool, finish the task, stop."""
    case = CASES[agent]
    if agent == "aider":
        from agentrig_aider.testing import replace_block

        server.add_reply(f"The key is {case.key_env}={key}.\n\n" + replace_block("done.txt", "", "done\n"))
        return
    assert case.shell is not None
    command = PRINT_ENV if agent not in ("react", "miniswe") else f"echo {case.key_env}={key}; echo done > done.txt"
    server.add_reply("Looking around.", tool_calls=[case.shell(command)])
    if agent == "react":
        server.add_reply("Done.", tool_calls=[{"name": "submit", "arguments": {"answer": "done"}}])
    elif agent == "miniswe":
        server.add_reply("Done.", tool_calls=[case.shell("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")])
    else:
        server.add_reply("Done.")


@pytest.mark.parametrize("agent", agent_params())
def test_a_key_the_agent_prints_reaches_no_record(agent: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    case = CASES[agent]
    server = request.getfixturevalue(case.server_fixture)
    key = canary(agent)
    script(agent, server, key)
    env = run_env(case, key)
    result = run_agent(case, server, tmp_path, env)
    assert result.returncode == 0, result.stdout + result.stderr
    run_dir = tmp_path / "run"
    assert leaks(run_dir, key, env, tmp_path) == []
    trajectory = (run_dir / "leak" / "probe" / "trajectory.jsonl").read_text()
    # the key was printed (the test is not vacuous): its place in the records says [redacted]
    assert f"_API_KEY={REDACTED}" in trajectory, trajectory[-3000:]  # OpenHands hands its key on as LLM_API_KEY
    assert key not in result.stdout + result.stderr
