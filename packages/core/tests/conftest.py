"""Fixtures of the core's tests: fake plugin distributions on a temporary sys.path."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from agentrig.plugins import PluginRegistry


class FakeDistributions:
    """Writes real ``*.dist-info`` directories and plugin modules under a temp dir.

    Entry points are then read by ``importlib.metadata`` from those files, the
    same seam the installed plugins go through.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: list[str] = []

    def add(self, dist: str, version: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
        """Add distribution ``dist`` with ``agentrig`` entry points and module sources."""
        info = self.root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        lines = ["[agentrig]"] + [f"{name} = {value}" for name, value in entry_points.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        for module, source in modules.items():
            path = self.root.joinpath(*module.split(".")).with_suffix(".py")
            path.parent.mkdir(parents=True, exist_ok=True)
            for parent in path.parents:
                if parent == self.root:
                    break
                (parent / "__init__.py").touch()
            path.write_text(textwrap.dedent(source))
            self.modules.append(module)

    def entry_points(self) -> list[metadata.EntryPoint]:
        """The ``agentrig`` entry points of the fake distributions only."""
        return [
            ep
            for dist in metadata.distributions(path=[str(self.root)])
            for ep in dist.entry_points
            if ep.group == "agentrig"
        ]

    def registry(self, **environ: str) -> PluginRegistry:
        """A registry over these distributions with the given environment."""
        return PluginRegistry(entry_points=self.entry_points(), environ=environ)


@pytest.fixture
def fake_dists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDistributions]:
    """Fake plugin distributions importable for the duration of one test."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    dists = FakeDistributions(root)
    yield dists
    for name in list(sys.modules):
        if any(name == m or name.startswith(m.split(".")[0] + ".") or name == m.split(".")[0] for m in dists.modules):
            del sys.modules[name]


AGENT_MODULE = '''
from typing import Literal
from pathlib import Path
import agentrig


class Config(agentrig.AgentConfigBase):
    type: Literal["{name}"] = "{name}"
    greeting: str = "hello"


class ScriptedAgent(agentrig.Agent):
    @classmethod
    def _from_config(cls, config, context):
        agent = cls("{name}", context.problem_name, config.cost_limits, context.model.pricing, context.verbose)
        agent.config = config
        return agent

    def setup(self, session):
        self.session = session

    def run(self, task):
        self.usage.step(agentrig.TokenUsage(input=10, output=5), 0.5)

    def reset(self):
        pass

    def save_artifacts(self, path: Path):
        pass

    def cleanup(self):
        pass
'''


def plugin_source(name: str, module: str, description: str = "A test agent.") -> str:
    """Source of a plugin module declaring agent ``name`` implemented in ``module``."""
    return f'''
import agentrig

@agentrig.hookimpl
def agentrig_agents():
    return [agentrig.AgentSpec(name="{name}", description="{description}",
                               config="{module}:Config", agent="{module}:ScriptedAgent")]
'''


@pytest.fixture
def make_agent_dist(fake_dists: FakeDistributions) -> Callable[..., None]:
    """Add a healthy distribution ``dist`` declaring one scripted agent ``name``."""

    def make(dist: str, name: str, version: str = "1.0") -> None:
        package = dist.replace("-", "_")
        fake_dists.add(
            dist,
            version,
            {name: f"{package}.plugin"},
            {
                f"{package}.plugin": plugin_source(name, f"{package}.impl"),
                f"{package}.impl": AGENT_MODULE.replace("{name}", name),
            },
        )

    return make


@pytest.fixture
def make_docker_runtime(tmp_path: Path, docker_test_image: str) -> Iterator[Callable[..., Any]]:
    """A factory of docker runtimes on the test image, each on a workspace of its own; all cleaned up after the test."""
    from agentrig.runtime.docker import DockerRuntime

    runtimes: list[DockerRuntime] = []

    def make(**options: Any) -> DockerRuntime:
        workspace = tmp_path / f"ws{len(runtimes)}"
        workspace.mkdir()
        runtime = DockerRuntime(workspace, config={"image": docker_test_image, **options})
        runtimes.append(runtime)
        return runtime

    yield make
    for runtime in runtimes:
        runtime.cleanup()


@pytest.fixture
def removed_images(docker_engine: Any) -> Iterator[list[str]]:
    """Tags a test appends here are removed from the engine after it (images it built)."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        try:
            docker_engine.images.remove(tag, force=True)
        except Exception:
            pass
