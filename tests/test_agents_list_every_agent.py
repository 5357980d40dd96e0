"""``agentrig agents list`` from built wheels, for every agent package of the repository, whatever their number:
each ``packages/agent-*`` distribution is listed, and listing imports nothing of any of them but the
plugin module its entry point names (and the package that holds it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.testing.packaging import venv_bin

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the packages' floor is 3.10
    import tomli as tomllib

# The wheels and the venv are session fixtures: built once on the one worker that runs these.
pytestmark = pytest.mark.xdist_group("wheelhouse")

REPO = Path(__file__).resolve().parents[1]


def agent_packages() -> dict[str, list[str]]:
    """Each ``packages/agent-*`` distribution and the modules of its ``agentrig`` entry points."""
    found: dict[str, list[str]] = {}
    for pyproject in sorted(REPO.glob("packages/agent-*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text())["project"]
        found[project["name"]] = [value.split(":")[0] for value in project["entry-points"]["agentrig"].values()]
    return found


def test_every_agent_package_is_listed_and_only_its_plugin_module_imported(fresh_venv: Path) -> None:
    packages = agent_packages()
    assert {"agentrig-claude-code", "agentrig-codex", "agentrig-openhands"} <= set(packages)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    listed = subprocess.run([str(venv_bin(fresh_venv, "agentrig")), "agents", "list", "--json"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert listed.returncode == 0, listed.stderr
    distributions = {agent["distribution"] for agent in json.loads(listed.stdout)}
    missing = sorted(set(packages) - distributions)
    assert missing == [], f"agent packages not listed (add them to OUR_PACKAGES in tests/conftest.py): {missing}"
    probe = (
        "import sys, io, contextlib\n"
        "from agentrig.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['agents', 'list'])\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run([str(fresh_venv), "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    imported = set(result.stdout.split())
    allowed = {name for modules in packages.values() for module in modules
               for name in (module, module.split(".")[0])}
    ours = {name.split(".")[0] for modules in packages.values() for name in modules}
    extra = sorted(m for m in imported if m.split(".")[0] in ours and m not in allowed)
    assert extra == [], f"listing imported agent modules beyond their plugin modules: {extra}"
