"""Hooks of the monorepo's own test run (``hatch test``); nothing here ships in a package.

- Parallel: ``hatch test`` runs pytest-xdist (``parallel = true`` in hatch.toml: ``-n logical``,
  ``--dist loadgroup``). The suite waits on subprocesses, containers, model servers and installs a
  good part of the time, so it runs one worker more than there are CPUs (at least 2, at most 8);
  more starve the end-to-end tests' subprocesses on a 2-core machine. ``AGENTRIG_TEST_WORKERS=N``
  sets the number, ``hatch test -- -n 0`` runs serially.
- Tests that share something only one worker should hold are kept on one worker with
  ``pytest.mark.xdist_group(NAME)``: ``wheelhouse`` (the wheels and the venv built once per worker),
  ``claude_image`` (the claude_code agent image built by its module), ``codex_image`` (the codex agent
  image, built by its tests' module fixture), ``aider_image`` (the aider agent image, built by its
  tests' module fixture: pip installs aider-chat in it, minutes), ``chromium`` (one browser),
  ``ray_cluster`` (the local Ray cluster of agentrig-ray's tests), ``cli_bundles_<agent>`` (a CLI agent's
  bundle, packed once per worker, in tests/test_run_cli_bundles.py).
  Every other shared resource is made unique per test (temporary directories, ports chosen by the
  OS, image versions, container names), and no test asserts a duration tight enough to need the
  machine to itself.
- The ``real_model`` tier is collected last: ``.ci/run`` starts the suite while the server's environment
  still compiles (``AGENTRIG_TEST_LLAMA_BUILD_STATUS``), and the tier waits for that build; last, it holds
  one worker only once the rest has been handed out.
- Skips are summarised once per reason (``SKIPPED [28] <reason>``), not once per test.
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

_MAX_WORKERS = 8


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for ``-n auto`` / ``-n logical``: ``AGENTRIG_TEST_WORKERS``, else the CPUs plus one (2..8)."""
    wanted = os.environ.get("AGENTRIG_TEST_WORKERS", "").strip()
    if wanted:
        try:
            return max(0, int(wanted))
        except ValueError:
            raise pytest.UsageError(f"AGENTRIG_TEST_WORKERS must be a whole number, not {wanted!r}") from None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(_MAX_WORKERS, max(2, cpus + 1))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``real_model`` tests after every other test (in their order): see the module docstring."""
    last = [item for item in items if item.get_closest_marker("real_model") is not None]
    if last:
        items[:] = [item for item in items if item.get_closest_marker("real_model") is None] + last


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per distinct skip reason, with how many tests it skipped and one of them."""
    reports = [r for r in terminalreporter.stats.get("skipped", []) if getattr(r, "skipped", False)]
    if not reports:
        return
    grouped: dict[str, list[str]] = defaultdict(list)
    for report in reports:
        grouped[_skip_reason(report)].append(report.nodeid)
    terminalreporter.write_sep("=", f"{len(reports)} skipped, by reason")
    for reason, nodeids in sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0])):
        example = nodeids[0] + (f" and {len(nodeids) - 1} more" if len(nodeids) > 1 else "")
        terminalreporter.write_line(f"SKIPPED [{len(nodeids)}] {reason}  ({example})")
