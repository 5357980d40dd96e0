"""The one door to the installed mini-swe-agent: environment set-up, import and API check.

Every other module of this package reaches ``minisweagent`` through
:func:`load_upstream`, so an upstream release that renames or drops a name
we build on fails at set-up with one line naming the installed version,
instead of an ``ImportError`` deep inside a run.
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agentrig import AgentSetupError
from agentrig.scratch import temp_dir

if TYPE_CHECKING:
    from minisweagent import exceptions as upstream_exceptions
    from minisweagent.agents.default import AgentConfig, DefaultAgent
    from minisweagent.environments.local import LocalEnvironment, LocalEnvironmentConfig

SUPPORTED_MAJOR = 2
"""The mini-swe-agent major version this package is written against (its v2 API)."""

REQUIREMENT = "mini-swe-agent>=2.4.6,<3"
"""What to install when the check fails."""

# module -> names it must export. These are exactly the names this package uses.
REQUIRED_API: dict[str, tuple[str, ...]] = {
    "minisweagent": ("__version__",),
    "minisweagent.agents.default": ("DefaultAgent", "AgentConfig"),
    "minisweagent.environments.local": ("LocalEnvironment", "LocalEnvironmentConfig"),
    "minisweagent.exceptions": (
        "InterruptAgentFlow",
        "Submitted",
        "LimitsExceeded",
        "TimeExceeded",
        "FormatError",
    ),
    "minisweagent.config": ("get_config_from_spec", "get_config_path", "builtin_config_dir"),
    "minisweagent.models": ("GLOBAL_MODEL_STATS", "get_model"),
    "minisweagent.models.utils.actions_toolcall": (
        "BASH_TOOL",
        "parse_toolcall_actions",
        "format_toolcall_observation_messages",
    ),
    "minisweagent.models.utils.actions_text": ("parse_regex_actions", "format_observation_messages"),
    "minisweagent.utils.serialize": ("recursive_merge",),
}

# Methods of upstream classes that we call or override: a rename would make
# our override dead code without any error, so they are checked too.
REQUIRED_METHODS: dict[tuple[str, str], tuple[str, ...]] = {
    ("minisweagent.agents.default", "DefaultAgent"): (
        "run",
        "step",
        "query",
        "execute_actions",
        "add_messages",
        "serialize",
        "save",
    ),
    ("minisweagent.environments.local", "LocalEnvironment"): (
        "execute",
        "_check_finished",
        "get_template_vars",
        "serialize",
    ),
}


@dataclass(frozen=True)
class Upstream:
    """The mini-swe-agent names this package builds on, checked to exist."""

    version: str
    DefaultAgent: type[DefaultAgent]
    AgentConfig: type[AgentConfig]
    LocalEnvironment: type[LocalEnvironment]
    LocalEnvironmentConfig: type[LocalEnvironmentConfig]
    InterruptAgentFlow: type[upstream_exceptions.InterruptAgentFlow]
    Submitted: type[upstream_exceptions.Submitted]
    LimitsExceeded: type[upstream_exceptions.LimitsExceeded]
    TimeExceeded: type[upstream_exceptions.TimeExceeded]
    FormatError: type[upstream_exceptions.FormatError]
    get_config_from_spec: Any
    get_config_path: Any
    builtin_config_dir: Any
    GLOBAL_MODEL_STATS: Any
    get_model: Any
    BASH_TOOL: dict[str, Any]
    parse_toolcall_actions: Any
    format_toolcall_observation_messages: Any
    parse_regex_actions: Any
    format_observation_messages: Any
    recursive_merge: Any


_config_dir: str | None = None


def prepare_process_environment() -> None:
    """Set what mini-swe-agent and LiteLLM read at import time, before importing them.

    - ``LITELLM_LOCAL_MODEL_COST_MAP``: LiteLLM would otherwise fetch its price
      list from the internet when imported.
    - ``MSWEA_GLOBAL_CONFIG_DIR``: mini-swe-agent loads ``.env`` from the user's
      config directory into ``os.environ``; a run must not depend on (or leak)
      a developer's personal settings, so it points at an empty private directory.
    - ``MSWEA_SILENT_STARTUP``: no banner on stdout (agentrig's output is its own).

    Values the user set already are kept.
    """
    global _config_dir
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    if "MSWEA_GLOBAL_CONFIG_DIR" not in os.environ:
        if _config_dir is None:
            _config_dir = str(temp_dir("agentrig-mswea-config-"))  # named after this process: swept once it is gone
            atexit.register(shutil.rmtree, _config_dir, True)
        os.environ["MSWEA_GLOBAL_CONFIG_DIR"] = _config_dir


def check_api(modules: dict[str, ModuleType], version: str) -> None:
    """Raise :class:`AgentSetupError` naming ``version`` if a required name is missing."""
    major = version.split(".", 1)[0]
    if not major.isdigit() or int(major) != SUPPORTED_MAJOR:
        raise AgentSetupError(
            f"mini-swe-agent {version} is installed but agentrig-miniswe supports its "
            f"v{SUPPORTED_MAJOR} API only: install '{REQUIREMENT}'"
        )
    for module_name, names in REQUIRED_API.items():
        module = modules[module_name]
        for name in names:
            if not hasattr(module, name):
                raise AgentSetupError(
                    f"mini-swe-agent {version} is installed but lacks {module_name}.{name}, which "
                    f"agentrig-miniswe needs: install '{REQUIREMENT}'"
                )
    for (module_name, class_name), methods in REQUIRED_METHODS.items():
        cls = getattr(modules[module_name], class_name)
        for method in methods:
            if not callable(getattr(cls, method, None)):
                raise AgentSetupError(
                    f"mini-swe-agent {version} is installed but {module_name}.{class_name}.{method} is "
                    f"missing, which agentrig-miniswe needs: install '{REQUIREMENT}'"
                )


@lru_cache(maxsize=1)
def load_upstream() -> Upstream:
    """Import mini-swe-agent (without LiteLLM), check its API and return the names we use."""
    prepare_process_environment()
    modules: dict[str, ModuleType] = {}
    try:
        for module_name in REQUIRED_API:
            modules[module_name] = importlib.import_module(module_name)
    except ImportError as exc:
        version = _installed_version()
        raise AgentSetupError(
            f"mini-swe-agent {version} cannot be imported ({exc}); agentrig-miniswe needs '{REQUIREMENT}'"
        ) from exc
    version = str(modules["minisweagent"].__version__)
    check_api(modules, version)
    names: dict[str, Any] = {}
    for module_name, exported in REQUIRED_API.items():
        for name in exported:
            if name != "__version__":
                names[name] = getattr(modules[module_name], name)
    return Upstream(version=version, **names)


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mini-swe-agent")
    except PackageNotFoundError:
        return "(not installed)"
