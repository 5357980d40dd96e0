"""The plugin layer stays light: neither minisweagent nor litellm is imported to list or configure the agent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentrig_miniswe.config import MiniSweConfig
from agentrig_miniswe.plugin import agentrig_agents

_PROBE = """
import json, sys
import {module}
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('minisweagent', 'litellm', 'openai', 'anthropic'))
print(json.dumps(heavy))
"""


@pytest.mark.parametrize("module", ["agentrig_miniswe.plugin", "agentrig_miniswe.config", "agentrig_miniswe.agent"])
def test_module_imports_neither_minisweagent_nor_litellm(module: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_listing_agents_loads_no_agent_code() -> None:
    probe = (
        "import json, sys\n"
        "from agentrig.plugins import get_agent_config_cls, available_agent_types\n"
        "assert 'miniswe' in available_agent_types()\n"
        "get_agent_config_cls('miniswe').model_json_schema()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('minisweagent', 'litellm'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_plugin_declares_the_miniswe_agent() -> None:
    (spec,) = agentrig_agents()
    assert spec.name == "miniswe"
    assert spec.config == "agentrig_miniswe.config:MiniSweConfig"
    assert spec.agent == "agentrig_miniswe.agent:MiniSweAgent"


def test_config_rejects_unknown_keys_and_bad_values() -> None:
    with pytest.raises(ValueError, match="config_fil"):
        MiniSweConfig.model_validate({"config_fil": "mini.yaml"})
    with pytest.raises(ValueError, match="model_backend"):
        MiniSweConfig.model_validate({"model_backend": "ollama"})
    with pytest.raises(ValueError, match="trajectory_name"):
        MiniSweConfig.model_validate({"trajectory_name": "../escape.json"})
    assert MiniSweConfig().config_file == "mini.yaml"
