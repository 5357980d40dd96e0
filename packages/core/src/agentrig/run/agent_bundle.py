"""A CLI agent in the problems' own containers: its bundle checked, prepared and bound, before the run.

With ``--runtime docker`` a CLI agent whose problems bring their own image (a Harbor or
Terminal-Bench task), or that is told to use its bundle over ``--image`` (``-c docker_template=``,
``-c bundle=PATH``), runs the bundle of :mod:`agentrig.agents.bundles` in each problem's container.
Before the run directory is made, every image the problems run in is probed in a throwaway container
(architecture, C library, a shell): an image the bundle cannot run in is one line naming the fix;
the bundles of the platforms found are prepared on the host (once: cached). The run's runtime options
then bind the agent version's bundles read-only at ``/opt/agentrig/agents/<agent>-<version>``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import docker

    from agentrig.agents.bundles import BundleRecipe, ContainerPlatform
    from agentrig.agents.cli_config import CliAgentConfig

log = logging.getLogger(__name__)


class AgentBundleError(Exception):
    """The agent's bundle cannot run in a problem's image, or cannot be had; one line naming the fix."""


def recipe_of(agent_type: str) -> BundleRecipe | None:
    """The bundle recipe of ``agent_type``'s class (``None``: the agent has no bundle)."""
    from agentrig.agents.interface import get_agent_cls

    return getattr(get_agent_cls(agent_type), "bundle_recipe", None)


def bundle_mount(
    config: CliAgentConfig,
    recipe: BundleRecipe,
    images: list[str],
    *,
    notify: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The docker runtime's ``mounts`` entry binding the agent's bundles, after checking that they run in
    every one of ``images`` and preparing those they need; raises :class:`AgentBundleError` (one line)."""
    from agentrig.agents import bundles

    agent = config.type
    if config.bundle is not None:
        own = Path(config.bundle).expanduser().resolve()
        if not os.access(own / bundles.launcher(recipe.cli), os.X_OK):
            raise AgentBundleError(f"-c bundle={config.bundle}: no executable {bundles.launcher(recipe.cli)} in it")
        for image in images:
            probe_image(agent, image)  # a shell, at least
        return {"source": str(own), "target": bundles.container_dir(agent, bundles.OWN), "read_only": True}
    if not config.version:
        raise AgentBundleError(f"agent '{agent}' runs its bundle in the task's container: set 'version' in the agent config")
    platforms: dict[str, str] = {}
    for image in dict.fromkeys(images):
        platform = probe_image(agent, image)
        chosen = bundles.choose_platform(recipe, platform)
        if chosen is None:
            raise AgentBundleError(bundles.unfit_message(agent, f"image '{image}'", platform, recipe))
        platforms.setdefault(chosen, image)
    root = bundles.bundles_dir()
    for platform_name in platforms:
        target = root / bundles.bundle_name(agent, config.version) / platform_name
        if not bundles.is_ready(target) and notify is not None:
            notify(f"preparing the {agent} {config.version} bundle for {platform_name} in {target} (once: later runs reuse it)")
        try:
            bundles.prepare_bundle(agent, config.version, platform_name, recipe, root=root)
        except bundles.BundleError as exc:
            raise AgentBundleError(str(exc)) from None
    source = root / bundles.bundle_name(agent, config.version)
    source.mkdir(parents=True, exist_ok=True)
    return {"source": str(source), "target": bundles.container_dir(agent, config.version), "read_only": True}


def probe_image(agent: str, image: str) -> ContainerPlatform:
    """The platform of ``image``, probed in a throwaway container (no network, removed after);
    :class:`AgentBundleError` when it has no shell or is not there."""
    from agentrig.agents import bundles
    from agentrig.runtime.docker import connect
    from agentrig.runtime.errors import RuntimeSetupError

    try:
        client = connect()
    except RuntimeSetupError as exc:
        raise AgentBundleError(str(exc)) from None
    try:
        return bundles.parse_probe(_run_probe(client, agent, image))
    finally:
        client.close()


def _owner_labels() -> dict[str, str]:
    """The labels that let the next docker runtime's sweep remove a probe container this process left (killed)."""
    import socket

    from agentrig.runtime.owners import LABEL, LABEL_HOST, LABEL_PID, LABEL_START
    from agentrig.runtime.proctree import process_start_time

    pid = os.getpid()
    return {LABEL: "1", LABEL_HOST: socket.gethostname(), LABEL_PID: str(pid), LABEL_START: process_start_time(pid)}


def _run_probe(client: docker.DockerClient, agent: str, image: str) -> str:
    import docker.errors

    from agentrig.agents import bundles

    try:
        container = client.containers.create(
            image, entrypoint=bundles.probe_command(), network_mode="none", user="0:0", labels=_owner_labels()
        )
    except docker.errors.ImageNotFound:
        raise AgentBundleError(
            f"image '{image}' is not present locally and agentrig never pulls: build or load it, then retry"
        ) from None
    try:
        try:
            container.start()
        except docker.errors.APIError as exc:
            detail = " ".join(str(exc.explanation or exc).split())[-160:]
            raise AgentBundleError(bundles.no_shell_message(agent, f"image '{image}'", detail)) from None
        status = container.wait(timeout=120)
        output = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        if status.get("StatusCode") != 0:
            raise AgentBundleError(bundles.no_shell_message(agent, f"image '{image}'", f"exit {status.get('StatusCode')}"))
        return output
    finally:
        container.remove(force=True)
