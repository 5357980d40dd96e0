"""A task's image: its Dockerfile and build context built once, cached by content.

The tag is ``agentrig-task/<task>:<first 16 hex of the context's SHA-256>``;
the image also carries the full hash as a label. The hash covers every file
of the build context (path, executable bit, content) and the Dockerfile, so an
unchanged task never builds again and a changed one gets a new tag. Builds use
the engine's classic builder through the SDK, never pull, and on a daemon
without a bridge network run ``RUN`` steps on the host network. A failed
build raises :class:`ImageBuildError` in one line with the failing step.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from agentrig.runtime.errors import ImageBuildError, ImageNotFoundError
from agentrig.runtime.images import build_network

if TYPE_CHECKING:
    import docker

log = logging.getLogger(__name__)

LABEL_CONTEXT_HASH = "agentrig.task-context-sha256"
LABEL_TASK = "agentrig.task"
TAG_REPOSITORY = "agentrig-task"
_TAG_CHARS = re.compile(r"[^a-z0-9_.-]+")
_IGNORED = {".git", "__pycache__", ".DS_Store"}
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$", re.IGNORECASE)


class TaskImage(BaseModel):
    """The image a task runs in, and what the runtime needs to know of it."""

    tag: str
    built: bool = Field(description="True when this call built it; False when it was already there.")
    workdir: str = Field(description="The image's working directory (WORKDIR), '/' when it sets none.")
    user: str = Field(default="", description="The image's USER ('' = root).")


def context_hash(context: Path, dockerfile: Path) -> str:
    """SHA-256 over the build context's files (relative path, executable bit, content) and the Dockerfile."""
    digest = hashlib.sha256()
    files: list[Path] = []
    for root, dirs, names in os.walk(context):
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED)
        files.extend(Path(root) / n for n in names if n not in _IGNORED)
    for path in sorted(files, key=lambda p: p.relative_to(context).as_posix()):
        rel = path.relative_to(context).as_posix()
        if path.is_symlink():
            digest.update(f"L {rel} -> {os.readlink(path)}\n".encode())
            continue
        executable = os.access(path, os.X_OK)
        digest.update(f"F {rel} {'x' if executable else '-'} {path.stat().st_size}\n".encode())
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 16), b""):
                digest.update(block)
    digest.update(b"DOCKERFILE\n")
    digest.update(dockerfile.read_bytes())
    return digest.hexdigest()


def task_image_tag(task: str, digest: str) -> str:
    """``agentrig-task/<task>:<hash16>``."""
    name = _TAG_CHARS.sub("-", task.lower()).strip("-.") or "task"
    return f"{TAG_REPOSITORY}/{name[:100]}:{digest[:16]}"


def _describe(client: docker.DockerClient, tag: str, built: bool) -> TaskImage:
    config = client.images.get(tag).attrs.get("Config") or {}
    return TaskImage(tag=tag, built=built, workdir=config.get("WorkingDir") or "/", user=config.get("User") or "")


def describe_image(client: docker.DockerClient, tag: str) -> TaskImage:
    """A prebuilt image (``docker_image``) as a :class:`TaskImage`; it must be present (nothing is pulled)."""
    import docker.errors

    try:
        return _describe(client, tag, False)
    except docker.errors.ImageNotFound:
        raise ImageNotFoundError(
            f"image '{tag}' (docker_image of the task) is not present locally and agentrig never pulls: "
            f"build or load it (`docker build -t {tag} .` / `docker load -i FILE`), then retry"
        ) from None


def base_images(dockerfile: str) -> list[str]:
    """The images a Dockerfile's ``FROM`` lines name (not ``scratch``, earlier stages or ``$ARG`` names)."""
    stages: set[str] = set()
    images: list[str] = []
    for line in dockerfile.splitlines():
        match = _FROM.match(line)
        if match is None:
            continue
        image, stage = match.group(1), match.group(2)
        if image.lower() != "scratch" and image.lower() not in stages and "$" not in image and image not in images:
            images.append(image)
        if stage:
            stages.add(stage.lower())
    return images


def _check_bases(client: docker.DockerClient, task: str, dockerfile: Path) -> None:
    # the classic builder would try a registry for a missing base even with pull=False
    import docker.errors

    for image in base_images(dockerfile.read_text(encoding="utf-8", errors="replace")):
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            raise ImageNotFoundError(
                f"base image '{image}' of task '{task}' ({dockerfile}) is not present locally and agentrig never pulls: "
                f"build or load it (`docker build -t {image} .` / `docker load -i FILE`), then retry"
            ) from None


def build_task_image(
    client: docker.DockerClient,
    *,
    task: str,
    context: Path,
    dockerfile: Path,
    timeout: float = 600.0,
    on_build: Callable[[str], None] | None = None,
) -> TaskImage:
    """The task's image, built from ``dockerfile`` over ``context`` unless an identical one exists.

    ``on_build(tag)`` is called just before a real build. Raises
    :class:`ImageBuildError` naming the task and the failing step,
    :class:`ImageNotFoundError` when the Dockerfile's base image is missing
    (nothing is ever pulled).
    """
    import docker.errors

    context, dockerfile = context.resolve(), dockerfile.resolve()
    digest = context_hash(context, dockerfile)
    tag = task_image_tag(task, digest)
    try:
        existing = client.images.get(tag)
        if (existing.labels or {}).get(LABEL_CONTEXT_HASH) == digest:
            return _describe(client, tag, False)
    except docker.errors.ImageNotFound:
        pass
    _check_bases(client, task, dockerfile)
    if on_build is not None:
        on_build(tag)
    try:
        relative = dockerfile.relative_to(context).as_posix()
    except ValueError:
        raise ImageBuildError(f"task '{task}': the Dockerfile {dockerfile} is outside its build context {context}") from None
    last_lines: list[str] = []
    where = f"building the image of task '{task}' ({dockerfile})"
    try:
        stream = client.api.build(
            path=str(context),
            dockerfile=relative,
            tag=tag,
            labels={LABEL_CONTEXT_HASH: digest, LABEL_TASK: task},
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
            network_mode=build_network(client),
            timeout=int(timeout),
        )
        for chunk in stream:
            if "error" in chunk:
                detail = " ".join(str(chunk.get("errorDetail", {}).get("message") or chunk["error"]).split())
                tail = " | ".join(last_lines[-3:])
                raise ImageBuildError(f"{where} failed: {detail}" + (f" (last output: {tail})" if tail else ""))
            text = str(chunk.get("stream", "")).strip()
            if text:
                last_lines.append(" ".join(text.split())[:200])
                log.debug("build %s: %s", tag, text)
    except docker.errors.APIError as exc:
        raise ImageBuildError(f"{where} failed: {' '.join(str(exc.explanation or exc).split())}") from None
    except (TimeoutError, OSError) as exc:
        if "timed out" in str(exc).lower():
            raise ImageBuildError(f"{where} took longer than build_timeout_sec ({timeout:g} s)") from None
        raise ImageBuildError(f"{where} failed: {exc}") from None
    except Exception as exc:
        if type(exc).__name__ in ("ReadTimeout", "ReadTimeoutError", "ConnectionError") and "timed out" in str(exc).lower():
            raise ImageBuildError(f"{where} took longer than build_timeout_sec ({timeout:g} s)") from None
        raise
    return _describe(client, tag, True)
