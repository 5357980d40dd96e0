"""Agent images: a Dockerfile template rendered with the base image and the
agent's version, built through the SDK, tagged ``agentrig/<agent>-<version>:<base-tag>``.

Templates use ``{{ base_image }}`` and ``{{ version }}`` (spaces inside the
braces optional), a syntax that never clashes with a Dockerfile's own
``${VAR}``/``$VAR``. Every other ``{{ ... }}`` is an error naming it. The
built image carries a label with the hash of the rendered Dockerfile and of
the base image's id, so building an unchanged template on an unchanged base
again is a no-op, and a base image rebuilt under the same tag builds the agent's
image again. Nothing is ever pulled: the base image must be present locally.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import tarfile
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from agentrig.runtime.errors import ImageBuildError, ImageNotFoundError

if TYPE_CHECKING:
    from collections.abc import Callable

    import docker

log = logging.getLogger(__name__)

LABEL_TEMPLATE_HASH = "agentrig.template-sha256"
LABEL_AGENT = "agentrig.agent"
LABEL_VERSION = "agentrig.agent-version"
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_TAG_CHARS = re.compile(r"[^a-z0-9_.-]+")


class RequiredImage(BaseModel):
    """An image a run needs present locally, and what names it (``--image``, a task's ``docker_image``, ...)."""

    model_config = ConfigDict(frozen=True)

    image: str
    named_by: str


def missing_images(client: docker.DockerClient, required: list[RequiredImage]) -> list[RequiredImage]:
    """The images of ``required`` the engine does not have (each once, in order); a name the engine
    cannot parse counts as missing."""
    import docker.errors

    missing: list[RequiredImage] = []
    seen: set[str] = set()
    for item in required:
        if item.image in seen:
            continue
        seen.add(item.image)
        try:
            client.images.get(item.image)
        except (docker.errors.ImageNotFound, docker.errors.APIError):
            missing.append(item)
    return missing


def check_images_present(required: list[RequiredImage], client: docker.DockerClient | None = None) -> None:
    """Raise :class:`ImageNotFoundError` (one line naming every absent image, what names it, and how to get
    it without a registry) unless every image of ``required`` is present locally: agentrig never pulls."""
    if not required:
        return
    from agentrig.runtime.docker import connect

    own = client is None
    engine = client or connect()
    try:
        missing = missing_images(engine, required)
    finally:
        if own:
            engine.close()
    if not missing:
        return
    names = ", ".join(f"'{item.image}' ({item.named_by})" for item in missing)
    first = missing[0].image
    verb = "is" if len(missing) == 1 else "are"
    raise ImageNotFoundError(
        f"image{'s' if len(missing) > 1 else ''} {names} {verb} not present locally and agentrig never pulls: "
        f"load {'it' if len(missing) == 1 else 'each'} offline (`docker save {first} -o FILE` where it exists, then "
        f"`docker load -i FILE` here) or build it (`docker build -t {first} DIR`), then retry"
    )


class TemplateError(ValueError):
    """A Dockerfile template uses a placeholder agentrig does not know."""


def render_template(template: str, *, base_image: str, version: str) -> str:
    """The Dockerfile: ``{{ base_image }}`` and ``{{ version }}`` replaced, the rest untouched."""
    values = {"base_image": base_image, "version": version}

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise TemplateError(
                f"docker_template uses unknown placeholder '{{{{ {name} }}}}' (known: {{{{ base_image }}}}, {{{{ version }}}})"
            )
        return values[name]

    return _PLACEHOLDER.sub(replace, template)


def _tag_part(text: str, limit: int) -> str:
    part = _TAG_CHARS.sub("-", text.lower()).strip("-.") or "x"
    return part[:limit]


def agent_image_tag(agent: str, version: str, base_image: str) -> str:
    """``agentrig/<agent>-<version>:<base-tag>``, e.g. ``agentrig/claude_code-2.1.3:python-3.12-slim``."""
    base = base_image.rsplit("/", 1)[-1]  # the registry and namespace add nothing but length
    base_tag = _tag_part(base.replace(":", "-").replace("@", "-"), 128)
    return f"agentrig/{_tag_part(agent, 60)}-{_tag_part(version, 60)}:{base_tag}"


def template_hash(dockerfile: str, base_id: str = "") -> str:
    """SHA-256 of a rendered Dockerfile and its base image's id (what decides whether a rebuild is needed)."""
    digest = hashlib.sha256(dockerfile.encode("utf-8"))
    if base_id:
        digest.update(f"\nBASE {base_id}\n".encode())
    return digest.hexdigest()


def _context(dockerfile: str) -> io.BytesIO:
    data = dockerfile.encode("utf-8")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def build_network(client: docker.DockerClient) -> str | None:
    """The network ``RUN`` steps of a build use: the default, or ``host`` on a daemon
    started with ``--bridge=none`` (which has no default network for them)."""
    from agentrig.runtime.networks import has_default_bridge

    return None if has_default_bridge(client) else "host"


def build_agent_image(
    client: docker.DockerClient,
    *,
    agent: str,
    version: str,
    template: str,
    base_image: str,
    force: bool = False,
    on_build: Callable[[str], None] | None = None,
) -> tuple[str, bool]:
    """Build the agent's image unless an identical one exists; returns ``(tag, built)``.

    ``on_build(tag)`` is called once a real build is about to start (not for a no-op);
    ``force`` builds even an identical image, without the layer cache (``--rebuild``).

    Raises :class:`ImageNotFoundError` when ``base_image`` is not present
    locally, :class:`ImageBuildError` (with the failing step's message) when
    the build fails, :class:`TemplateError` for an unknown placeholder.
    """
    import docker.errors

    dockerfile = render_template(template, base_image=base_image, version=version)
    try:
        base_id: str = client.images.get(base_image).attrs["Id"]
    except docker.errors.ImageNotFound:
        raise ImageNotFoundError(
            f"base image '{base_image}' of agent '{agent}' is not present locally and agentrig never pulls: "
            f"build or load it (`docker build -t {base_image} .` / `docker load -i FILE`), then retry"
        ) from None
    digest = template_hash(dockerfile, base_id)
    tag = agent_image_tag(agent, version, base_image)
    previous_id: str | None = None
    try:
        existing = client.images.get(tag)
        previous_id = existing.id
        if not force and (existing.labels or {}).get(LABEL_TEMPLATE_HASH) == digest:
            return tag, False
    except docker.errors.ImageNotFound:
        pass
    labels = {LABEL_TEMPLATE_HASH: digest, LABEL_AGENT: agent, LABEL_VERSION: version}
    if on_build is not None:
        on_build(tag)
    last_lines: list[str] = []
    try:
        for chunk in client.api.build(
            fileobj=_context(dockerfile),
            custom_context=True,
            tag=tag,
            labels=labels,
            rm=True,
            forcerm=True,
            pull=False,
            nocache=force,
            decode=True,
            network_mode=build_network(client),
        ):
            if "error" in chunk:
                detail = chunk.get("errorDetail", {}).get("message") or chunk["error"]
                tail = " | ".join(last_lines[-3:])
                raise ImageBuildError(
                    f"building image '{tag}' for agent '{agent}' failed: {' '.join(str(detail).split())}"
                    + (f" (last output: {tail})" if tail else "")
                )
            text = str(chunk.get("stream", "")).strip()
            if text:
                last_lines.append(" ".join(text.split())[:200])
                log.debug("build %s: %s", tag, text)
    except docker.errors.APIError as exc:
        raise ImageBuildError(f"building image '{tag}' for agent '{agent}' failed: {exc.explanation or exc}") from None
    if previous_id is not None:
        remove_replaced_image(client, previous_id, tag)
    return tag, True


def remove_replaced_image(client: docker.DockerClient, image_id: str, tag: str) -> None:
    """Remove the image a build under the same ``tag`` replaced (untagged, it would only take space),
    unless another tag still names it or a container uses it."""
    import docker.errors

    try:
        if client.images.get(image_id).tags:
            return  # the build produced the same image, or another tag still names it
        client.images.remove(image_id)
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.APIError as exc:  # a container still uses it: leave it
        log.debug("keeping the image %s replaced by %s: %s", image_id[:19], tag, exc)


def ensure_agent_image(
    agent: str,
    version: str | None,
    template: str | None,
    base_image: str,
    client: docker.DockerClient | None = None,
) -> str:
    """The image an agent's commands should run in: its own (built if needed) when it
    has a ``docker_template``, else ``base_image``."""
    if template is None:
        return base_image
    if not (version or "").strip():
        raise TemplateError(f"agent '{agent}' has a docker_template but no 'version': set 'version' in the agent config")
    from agentrig.runtime.docker import connect

    tag, _ = build_agent_image(
        client or connect(), agent=agent, version=str(version), template=template, base_image=base_image
    )
    return tag
