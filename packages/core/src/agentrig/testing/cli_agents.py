"""Test kit of the agents that drive a pinned CLI: finding the CLI, the fixtures, e2e helpers.

The tests of such an agent run the real CLI (installed with npm under
``<repo>/.cache/``) against a fake model server on 127.0.0.1. A missing CLI
skips them locally and fails them under ``CI`` (:func:`agentrig.testing.prerequisites.require`).

An agent's ``tests/conftest.py`` describes its CLI once, as a :class:`CliAgentKit`,
and takes the fixtures every such suite uses from :func:`cli_agent_fixtures`::

    KIT = CliAgentKit(agent="codex", config="agentrig_codex.config:CodexConfig", ...)
    cli_kit, codex_bin, session, credential, model_def, make_agent = cli_agent_fixtures(KIT, binary="codex_bin")
    codex_image = agent_image_fixture(KIT, name="codex_image")
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from agentrig.pricing import APIPricing

if TYPE_CHECKING:
    import docker

    from agentrig.agents.cli_config import CliAgentConfig
    from agentrig.agents.interface import Agent
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.model_definition import ModelDefinition
    from agentrig.trajectory import TrajectoryStep


def find_cli_binary(*, env_var: str, default: Path, cli_name: str, install: str) -> str:
    """The pinned CLI at ``$env_var`` or ``default``; a missing one skips the test (fails it under CI).

    ``install`` is the command that installs it (named in the skip message).
    """
    from agentrig.testing.prerequisites import require

    path = os.environ.get(env_var) or str(default)
    problem = None
    if not Path(path).exists():
        problem = f"{cli_name} not found at {path}: {install} (or set {env_var})"
    require(problem, f"the pinned {cli_name} is missing")
    return path


class CliAgentKit(BaseModel):
    """What the tests of one CLI agent need to know: its CLI, its provider and the fake server it talks to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The agent type (``codex``).
    agent: str
    #: Import path of the agent's config class (``agentrig_codex.config:CodexConfig``).
    config: str
    #: How messages name the CLI (``Codex CLI``).
    cli_name: str
    #: The npm package and the pinned version the tests expect.
    npm_package: str
    version: str
    #: The executable npm installs (``codex``) and the directory under ``<repo>/.cache`` it is installed into.
    executable: str
    cache_dir: str
    #: The variable that names another binary (``AGENTRIG_TEST_CODEX_BIN``).
    binary_env: str
    #: The model's provider, the variable its key is read from, the (fake) key, the model and its prices.
    provider: str
    key_env: str
    api_key: str
    model: str
    pricing: APIPricing
    #: The fixture serving the fake model API the CLI speaks (``fake_openai_server``).
    server_fixture: str

    def config_class(self) -> type[CliAgentConfig]:
        """The agent's config class (imported on use)."""
        from agentrig.specs import import_object

        cls: type[CliAgentConfig] = import_object(self.config)
        return cls

    def install_command(self) -> str:
        """The command that installs the pinned CLI where the tests look for it."""
        return f"npm install --prefix .cache/{self.cache_dir} {self.npm_package}@{self.version}"

    def find_binary(self, repo: Path) -> str:
        """The pinned CLI (``$binary_env`` or ``<repo>/.cache/<cache_dir>``); skips, or fails under CI, when missing."""
        default = repo / ".cache" / self.cache_dir / "node_modules" / ".bin" / self.executable
        return find_cli_binary(env_var=self.binary_env, default=default, cli_name=self.cli_name, install=self.install_command())

    def credential(self) -> ProviderCredential:
        """The credential the CLI gets; its value must reach no argv, artifact or message."""
        from pydantic import SecretStr

        from agentrig.credentials import ProviderCredential

        return ProviderCredential(provider=self.provider, value=SecretStr(self.api_key), source="test", env_var=self.key_env)

    def model_definition(self) -> ModelDefinition:
        """The priced model the agent is built for."""
        from agentrig.model_definition import ModelDefinition

        return ModelDefinition(provider=self.provider, name=self.model, pricing=self.pricing)

    def preflight_agent(self, binary: str, runtime: str | None, base_url: str = "http://127.0.0.1:9") -> Agent:
        """The agent for ``binary`` as ``agentrig run --runtime RUNTIME`` builds it for its preflight (``base_url``:
        where it would call the model; nothing is called before the checks)."""
        from agentrig import Agent as AgentClass, AgentContext

        context = AgentContext(model=self.model_definition(), credential=self.credential(), problem_name="greeter",
                               runtime=runtime)
        return AgentClass.from_config(self.config_class().model_validate({"binary": binary, "base_url": base_url}), context)

    def image(self, client: docker.DockerClient, base_image: str) -> str:
        """The agent's Docker image from its config's default template over ``base_image`` (built unless present)."""
        from agentrig.runtime.images import ensure_agent_image

        config = self.config_class().model_validate({})  # the defaults: the pinned version and the package's template
        template = getattr(config, "docker_template", None)
        return ensure_agent_image(self.agent, config.version, template, base_image, client=client)


class CliAgentFixtures(NamedTuple):
    """The fixtures :func:`cli_agent_fixtures` makes; assign them to names in a ``conftest.py``."""

    cli_kit: Any
    binary: Any
    session: Any
    credential: Any
    model_def: Any
    make_agent: Any


def cli_agent_fixtures(kit: CliAgentKit, *, binary: str) -> CliAgentFixtures:
    """The fixtures of a CLI agent's tests: ``cli_kit`` (``kit``), ``binary`` (the pinned CLI's path, the
    fixture named by ``binary``), ``session`` (a fresh local session), ``credential``, ``model_def`` and
    ``make_agent`` (``make_agent(**config_fields)``: an agent running the CLI against ``kit.server_fixture``)."""
    import pytest

    @pytest.fixture(name="cli_kit")
    def kit_fixture() -> CliAgentKit:
        return kit

    @pytest.fixture(name=binary)
    def binary_fixture(request: pytest.FixtureRequest) -> str:
        return kit.find_binary(Path(request.config.rootpath))

    @pytest.fixture(name="session")
    def session_fixture(tmp_path: Path) -> Iterator[Session]:
        with local_session(tmp_path) as created:
            yield created

    @pytest.fixture(name="credential")
    def credential_fixture() -> ProviderCredential:
        return kit.credential()

    @pytest.fixture(name="model_def")
    def model_fixture() -> ModelDefinition:
        return kit.model_definition()

    @pytest.fixture(name="make_agent")
    def make_agent_fixture(
        request: pytest.FixtureRequest, model_def: ModelDefinition, credential: ProviderCredential
    ) -> Callable[..., Agent]:
        server = request.getfixturevalue(kit.server_fixture)
        path = request.getfixturevalue(binary)
        return cli_agent_factory(kit.config_class(), binary=path, base_url=server.base_url, model=model_def, credential=credential)

    return CliAgentFixtures(kit_fixture, binary_fixture, session_fixture, credential_fixture, model_fixture, make_agent_fixture)


def agent_image_fixture(kit: CliAgentKit, *, name: str) -> Any:
    """A module-scoped fixture ``name``: the agent's image over the Debian + Node test image, built once.

    Mark the tests using it ``xdist_group``-ed together: one worker builds it and runs them all.
    """
    import pytest

    @pytest.fixture(name=name, scope="module")
    def image_fixture(docker_engine: docker.DockerClient, node_test_image: str) -> str:
        import time

        started = time.monotonic()
        tag = kit.image(docker_engine, node_test_image)
        print(f"{kit.agent} image {tag}: ready in {time.monotonic() - started:.1f}s")
        return tag

    return image_fixture


@contextmanager
def local_session(base_dir: Path) -> Iterator[Session]:
    """A fresh session in the ``local`` runtime under ``base_dir``, closed at the end."""
    from agentrig.agents.session import Session

    with Session.create(runtime="local", base_dir=base_dir) as created:
        yield created


def cli_agent_factory(
    config_cls: type[CliAgentConfig],
    *,
    binary: str,
    base_url: str,
    model: ModelDefinition,
    credential: ProviderCredential | None,
    problem_name: str = "e2e",
) -> Callable[..., Agent]:
    """``make(**config_fields)``: an agent of ``config_cls`` running ``binary`` against the server at ``base_url``."""

    def make(**fields: Any) -> Agent:
        fields.setdefault("binary", binary)
        fields.setdefault("base_url", base_url)
        return build_cli_agent(config_cls(**fields), model=model, credential=credential, problem_name=problem_name)

    return make


def build_cli_agent(
    config: CliAgentConfig, *, model: ModelDefinition, credential: ProviderCredential | None, problem_name: str
) -> Agent:
    """The agent ``config`` names, for ``model`` with ``credential``, through the public factory."""
    from agentrig.agents.interface import Agent, AgentContext

    context = AgentContext(model=model, credential=credential, problem_name=problem_name)
    return Agent.from_config(config, context)


# -- helpers of the end-to-end tests ---------------------------------------------------------

_GREET = 'def greet(name):\n    return f"Hello, {name}!"\n'
_GREET_MAIN = (
    '\n\nif __name__ == "__main__":\n    import sys\n    args = sys.argv[1:]\n'
    '    shout = "--shout" in args\n    for name in [a for a in args if a != "--shout"]:\n'
    "        line = greet(name)\n        print(line.upper() if shout else line)\n"
)
#: The greeter example's two checkpoints solved: ``greet.py`` after each (what a scripted model writes).
GREETER_SOLUTION = (_GREET, _GREET + _GREET_MAIN)


def write_file_command(path: str, text: str) -> str:
    """A shell command writing ``text`` to ``path`` (a quoted here-document: nothing in it expands)."""
    return f"cat > {path} <<'EOF'\n{text}EOF"


def sleeper_command(tag: str, seconds: int = 60) -> str:
    """A command that waits ``seconds``, then writes ``late.txt``; ``tag`` names its process for
    :func:`live_processes`. The wait is in Python: CLIs' shell tools may refuse a bare long ``sleep``."""
    return f"python3 -c 'import time; time.sleep({seconds})' {tag} && echo late > late.txt"


def live_processes(marker: str) -> list[str]:
    """Command lines of live (not zombie) processes of this machine holding ``marker`` (containers' included)."""
    found: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        if marker in argv and stat[stat.rfind(b")") + 2 :][:1] != b"Z":
            found.append(argv.strip())
    return found


def record_steps(agent: Agent) -> list[TrajectoryStep]:
    """A list that receives every step ``agent`` emits from now on."""
    steps: list[TrajectoryStep] = []
    agent.add_step_listener(steps.append)
    return steps


def agentrig_executable() -> str:
    """The ``agentrig`` command of the environment the tests run in."""
    return str(Path(sys.executable).with_name("agentrig"))


def cli_run_env(*drop_prefixes: str, **values: str) -> dict[str, str]:
    """This process's environment without variables starting with ``AGENTRIG_`` or ``drop_prefixes``, plus ``values``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTRIG_", *drop_prefixes))}
    env.update(values)
    return env


def containers_of_process(client: docker.DockerClient, pid: int) -> list[str]:
    """Names of the containers (running or not) an agentrig process ``pid`` of this host made."""
    import socket

    from agentrig.runtime.owners import LABEL_HOST, LABEL_PID

    filters: dict[str, str | list[str] | bool] = {"label": [f"{LABEL_PID}={pid}", f"{LABEL_HOST}={socket.gethostname()}"]}
    return [str(c.name) for c in client.containers.list(all=True, filters=filters, ignore_removed=True)]
