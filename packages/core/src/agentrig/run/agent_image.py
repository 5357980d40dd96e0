"""The agent's own image for a Docker run: built once per run from ``--image``.

An agent config carrying a ``docker_template`` (and its ``version``) runs in
the image :func:`agentrig.runtime.images.ensure_agent_image` builds from the
run's base image (``--image``); every problem of the run uses that tag. An
unchanged template is a no-op, so ``--resume`` and later runs reuse the image.
Only the ``docker`` runtime builds images; others ignore the template.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from agentrig.runtime.errors import RuntimeSetupError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)

#: The runtime whose images agentrig builds (through the docker SDK).
IMAGE_RUNTIME = "docker"


class AgentImageError(RuntimeSetupError):
    """The agent's image cannot be had (no base image, bad template, a failed build); one line."""


def agent_image_for(
    agent_config: Mapping[str, Any],
    runtime: str,
    base_image: str | None,
    *,
    on_build: Callable[[str], None] | None = None,
    force: bool = False,
) -> str | None:
    """The tag of the agent's image for this run, building it if needed; ``None`` when the
    agent has no ``docker_template`` or the runtime is not ``docker``.

    ``on_build(tag)`` is called just before a build that is not a no-op (a
    build can take minutes: the caller may say so); ``force`` (``--rebuild``)
    builds even when an identical image exists. Raises
    :class:`AgentImageError` whose message names the agent, its template and
    the base image.
    """
    template = agent_config.get("docker_template")
    if runtime != IMAGE_RUNTIME or not template:  # `-c docker_template=`: none
        return None
    agent = str(agent_config.get("type") or "agent")
    if not base_image:
        raise AgentImageError(
            f"agent '{agent}' has a docker_template: pass its base image with --image IMAGE "
            "(the image the template's FROM {{ base_image }} names)"
        )
    from agentrig.runtime.images import TemplateError, build_agent_image

    where = f"agent '{agent}' (its docker_template over base image '{base_image}')"
    version = agent_config.get("version")
    if not str(version or "").strip():
        raise AgentImageError(f"{where}: the config has no 'version': set 'version' in the agent config")
    try:
        from agentrig.runtime.docker import connect

        client = connect()
        try:
            tag, built = build_agent_image(
                client,
                agent=agent,
                version=str(version),
                template=str(template),
                base_image=base_image,
                force=force,
                on_build=on_build,
            )
        finally:
            client.close()
    except (RuntimeSetupError, TemplateError) as exc:
        raise AgentImageError(f"image of {where}: {' '.join(str(exc).split())}") from None
    log.info("agent image %s %s", tag, "built" if built else "up to date")
    return tag
