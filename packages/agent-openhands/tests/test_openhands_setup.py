"""What the agent refuses before OpenHands runs, and what needs no OpenHands environment."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agentrig import AgentSetupError
from agentrig.testing.cli_agents import build_cli_agent
from agentrig_openhands.config import OpenHandsConfig


def test_a_python_older_than_3_12_is_refused_in_one_line(session: Any, model_def: Any, credential: Any) -> None:
    """agentrig's own interpreter (3.10 or 3.11 here) cannot run OpenHands' current releases."""
    if sys.version_info >= (3, 12):
        pytest.skip("the test interpreter is 3.12 or later")
    agent = build_cli_agent(OpenHandsConfig(binary=sys.executable), model=model_def, credential=credential, problem_name="t")
    with pytest.raises(AgentSetupError) as caught:
        agent.setup(session)
    message = str(caught.value)
    assert "\n" not in message
    assert re.search(r"is 3\.1[01]\.\d+; OpenHands needs Python 3\.12 or later", message), message
    assert "openhands-sdk==1.58.2 openhands-tools==1.58.2" in message and "set 'binary'" in message
    agent.cleanup()


def test_a_missing_python_is_refused_in_one_line(session: Any, model_def: Any, credential: Any, tmp_path: Path) -> None:
    agent = build_cli_agent(OpenHandsConfig(binary=str(tmp_path / "nope" / "python")), model=model_def,
                            credential=credential, problem_name="t")
    with pytest.raises(AgentSetupError, match="cannot run in the local runtime"):
        agent.setup(session)
    agent.cleanup()


@pytest.mark.parametrize("name", ["LLM_API_KEY", "LLM_BASE_URL", "HOME", "LMNR_PROJECT_API_KEY"])
def test_env_may_not_set_what_agentrig_sets(name: str) -> None:
    with pytest.raises(ValidationError, match=f"env may not set {name}"):
        OpenHandsConfig(env={name: "x"})


def test_extra_args_are_refused() -> None:
    with pytest.raises(ValidationError, match="takes no extra arguments"):
        OpenHandsConfig(extra_args=["--verbose"])


def test_listing_agents_imports_no_openhands_code() -> None:
    """``agentrig agents list`` shows the agent without importing the agent, the parser or the SDK."""
    probe = (
        "import sys, json\n"
        "from agentrig.registry import get_registry\n"
        "names = [a.name for a in get_registry().agents()]\n"
        "assert 'openhands' in names, names\n"
        "bad = [m for m in sys.modules if m.startswith(('openhands', 'litellm', 'agentrig_openhands.agent',"
        " 'agentrig_openhands.events'))]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
