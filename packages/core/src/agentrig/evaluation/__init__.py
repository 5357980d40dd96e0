"""Structured evaluation of a checkpoint: per-test results, groups, score and the pass policy.

:mod:`~agentrig.evaluation.records` holds what ``evaluation.json`` is made of,
:mod:`~agentrig.evaluation.policy` the pass policies (``all``, ``core``,
``score>=X``), :mod:`~agentrig.evaluation.parsers` the readers of test
reports (pytest's JSON report, JUnit XML, reward files) and
:mod:`~agentrig.evaluation.engine` the runner of a :class:`TestCommand` on a
copy of the agent's workspace. Problem formats build on these (see
:mod:`agentrig.formats.interface`).
"""
