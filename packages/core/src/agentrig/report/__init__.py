"""Reading finished and running runs back: ``agentrig show``, ``compare``, ``export`` and the viewer.

Modules, one job each: :mod:`~agentrig.report.tolerant` (records of older and
newer agentrig versions), :mod:`~agentrig.report.reader` (the run directory's
layout, read back; the one place that knows where a checkpoint's files are),
:mod:`~agentrig.report.summary` (the rows and totals of a run),
:mod:`~agentrig.report.compare` (runs side by side),
:mod:`~agentrig.report.text` (a checkpoint as readable text),
:mod:`~agentrig.report.atif` and :mod:`~agentrig.report.flat` (exports).
Nothing here imports the viewer, templating or plotting.
"""
