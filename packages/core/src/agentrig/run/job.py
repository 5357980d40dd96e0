"""A problem run as a self-contained unit of work: what goes in, what comes out.

A :class:`ProblemJob` carries everything a worker needs (no live objects), so
any executor (this process, a process pool, a Ray cluster) can run it with
:func:`agentrig.run.problem_run.run_problem`; the result is the finished
problem directory plus its :class:`~agentrig.run.records.ProblemRecord`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig.run.evaluation import DEFAULT_TEST_TIMEOUT


class ProblemJob(BaseModel):
    """One problem to run: problem directory, agent config, model, runtime, output directory.

    With ``--attempts K`` (K > 1) each attempt is a job of its own: ``attempt`` is
    its number (1..K) and ``problem_name`` the unit's name, ``<problem>/attempt_<i>``
    (:func:`~agentrig.run.records.unit_name`). Executors key jobs by
    ``problem_name`` and need not know about attempts.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    problem_path: str
    problem_name: str
    problem_format: str | None = None  # None: detected again from the directory
    agent_config: dict[str, Any]
    model: str | None = None  # None: an agent that needs no model
    runtime: str = "local"
    image: str | None = None  # what the session runs: the agent's own image when it has one, else --image
    runtime_options: dict[str, Any] = {}
    models_dir: str | None = None
    output_dir: str
    verbose: bool = False
    test_timeout: float = DEFAULT_TEST_TIMEOUT
    reset_context: bool = False  # the run's setting; an agent config's own reset_context wins
    thinking: str | None = None  # a ThinkingPreset value (--thinking)
    thinking_max_tokens: int | None = None
    pass_policy: str | None = None  # the run's --pass-policy, over the format's and the problem's
    attempt: int | None = None  # 1..K with --attempts K (K > 1); None: the run has one attempt
