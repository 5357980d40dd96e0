"""The report in a browser: ``agentrig view``.

:mod:`~agentrig.view.pages` turns runs read by :mod:`agentrig.report` into
what the pages show; :mod:`~agentrig.view.render` renders them with the
package's Jinja templates (``templates/``) and names every page and asset
(``static/``: the stylesheet, the script, uPlot for the plots; nothing is
fetched from elsewhere); :mod:`~agentrig.view.server` serves them on
127.0.0.1 and :mod:`~agentrig.view.site` writes them as static files. Both
go through the same :class:`~agentrig.view.render.Report`. Beside them:
:mod:`~agentrig.view.problem_page` (every checkpoint of a problem run),
:mod:`~agentrig.view.steps` (each trajectory embedded as read, for
``static/trajectory.js`` to read and ``static/app.js`` to draw),
:mod:`~agentrig.view.subagents` (subagent trajectories under their call) and
:mod:`~agentrig.view.search` (the shards ``static/search.js`` searches).
"""
