"""Problem formats: how a directory of a benchmark becomes problems agentrig can run.

The interface a format implements lives in :mod:`agentrig.formats.interface`;
formats are found through the ``agentrig_problem_formats`` hook
(:mod:`agentrig.formats.resolve` looks them up, detects a directory's format
and walks datasets). The core's own formats, ``agentrig`` (``problem.yaml``,
:mod:`agentrig.formats.native`) and ``slopcode``
(:mod:`agentrig.formats.slopcode`), are declared through the same hook as a
third party's, and imported only when used.
"""
