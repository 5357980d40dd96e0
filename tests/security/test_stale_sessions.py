"""A resumed problem sweeps only its own stale sessions: problem ``a``'s sweep once matched ``agentrig-a-*``
and so deleted the live workspace of problem ``a-b`` running beside it (``--jobs 2``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from agentrig.run.problem_run import is_session_of


def test_a_problems_sweep_spares_the_live_session_of_a_problem_whose_name_extends_it(tmp_path: Path) -> None:
    own = Path(tempfile.mkdtemp(prefix="agentrig-a-", dir=tmp_path)).name
    environment = Path(tempfile.mkdtemp(prefix="agentrig-a-environment-", dir=tmp_path)).name
    other = Path(tempfile.mkdtemp(prefix="agentrig-a-b-", dir=tmp_path)).name
    attempt = Path(tempfile.mkdtemp(prefix="agentrig-a-attempt_2-", dir=tmp_path)).name
    assert is_session_of(own, "a") and is_session_of(environment, "a")
    assert not is_session_of(other, "a") and not is_session_of(attempt, "a")
    assert is_session_of(other, "a-b") and is_session_of(attempt, "a-attempt_2")
    assert not is_session_of("agentrig-a-../..", "a") and not is_session_of("precious", "a")
