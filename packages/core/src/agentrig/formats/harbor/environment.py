"""The container a Harbor task runs in: its image, working directory, resources and starting files.

Before the task's session opens, its image is built from the Dockerfile
(once: cached by content, see :mod:`agentrig.formats.harbor.image`) or taken
as the prebuilt ``[environment] docker_image``. The image's working directory
(``WORKDIR``, e.g. ``/app``) is copied to the host, where it seeds the
workspace; the Docker runtime mounts the workspace back at that path and runs
every command there, so the agent finds the files the image put there and
the run's snapshots and diffs show what the agent changed. ``cpus`` and
``memory_mb`` become the container's limits (the run's own ``-c
runtime.cpus`` / ``runtime.mem_limit`` win; cpus never above the host's). The
network of the agent phase and of the verifier phase follow the task's policy
(:func:`agentrig.formats.harbor.network.network_policy`: the network by default,
none where the task forbids it, the run's ``-c runtime.network`` in between).

A multi-container task (``environment/docker-compose.yaml``) also gets the
runtime's ``compose`` option: the ``main`` container is started by Docker
Compose beside the task's services, on the project's network (internal when
the task forbids internet); see :mod:`agentrig.formats.harbor.compose`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.formats.harbor.task import HarborTask

FALLBACK_WORKDIR = "/workspace"


class TaskEnvironment(BaseModel):
    """How a task's session must be opened: image, runtime options and the seed of its workspace."""

    model_config = ConfigDict(extra="forbid")

    image: str
    runtime_options: dict[str, Any] = Field(default_factory=dict)
    seed: Path | None = None
    built: bool = False
    notices: list[str] = Field(default_factory=list)


def runtime_options(task: HarborTask, workdir: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """The docker runtime's options for ``task``: the run's ``options`` over the task's own,
    the networks as :func:`~agentrig.formats.harbor.network.network_policy` decides."""
    from agentrig.formats.harbor.network import network_policy

    env = task.config.environment
    merged: dict[str, Any] = {"workdir": workdir, "cpus": min(float(env.cpus), float(os.cpu_count() or 1))}
    merged["mem_limit"] = f"{env.memory_mb}m"
    merged.update(options or {})
    merged["workdir"] = workdir  # where the image keeps its files: not the run's to move
    merged.update(network_policy(task, options).runtime_options())
    return merged


def prepare_environment(
    task: HarborTask,
    runtime: str,
    options: dict[str, Any] | None,
    scratch: Path,
    *,
    on_build: Any = None,
    rebuild: str | None = None,
) -> TaskEnvironment:
    """Build (or find) the task's image and extract its working directory under ``scratch``.

    ``rebuild`` (``agentrig run --rebuild``: a token of that invocation) builds the image
    again unless this invocation built it already. Raises :class:`~agentrig.runtime.errors.RuntimeSetupError` (one line) when
    the runtime is not ``docker`` or the image cannot be had.
    """
    from agentrig.formats.harbor.container import extract_image_directory
    from agentrig.runtime.docker import connect
    from agentrig.runtime.errors import RuntimeSetupError

    if runtime != "docker":
        raise RuntimeSetupError(
            f"task '{task.name}' ({task.kind} format) runs in a container built from its Dockerfile: pass --runtime docker"
        )
    client = connect()
    try:
        image = _image(task, client, on_build, rebuild)
        # an image without a WORKDIR runs commands in /, which cannot be the mount point
        own_workdir = image.workdir not in ("", "/")
        workdir = image.workdir if own_workdir else FALLBACK_WORKDIR
        extracted = scratch / "image-workdir"
        seed = extracted if own_workdir and extract_image_directory(client, image.tag, workdir, extracted) else None
        merged = runtime_options(task, workdir, options)
        if task.compose_file is not None:
            merged["compose"] = compose_option(task, client, image.tag, on_build, rebuild)
    finally:
        client.close()
    from agentrig.formats.harbor.network import network_policy

    return TaskEnvironment(
        image=image.tag, runtime_options=merged, seed=seed, built=image.built, notices=network_policy(task, options).notices
    )


def _image(task: HarborTask, client: Any, on_build: Any = None, rebuild: str | None = None) -> Any:
    """The task's :class:`~agentrig.formats.harbor.image.TaskImage`: its prebuilt ``docker_image``, or built
    from its Dockerfile unless an identical image exists."""
    from agentrig.formats.harbor.image import build_task_image, describe_image

    env = task.config.environment
    if env.docker_image:
        return describe_image(client, env.docker_image)
    assert task.dockerfile is not None and task.build_context is not None
    return build_task_image(
        client,
        task=task.name,
        context=task.path / task.build_context,
        dockerfile=task.path / task.dockerfile,
        timeout=env.build_timeout_sec,
        on_build=on_build,
        rebuild=rebuild,
    )


def task_image(task: HarborTask) -> str:
    """The tag of the task's image (built now unless an identical one exists); raises
    :class:`~agentrig.runtime.errors.RuntimeSetupError` (one line) when it cannot be had."""
    from agentrig.runtime.docker import connect

    client = connect()
    try:
        return str(_image(task, client).tag)
    finally:
        client.close()


def compose_option(
    task: HarborTask, client: Any, main_image: str, on_build: Any = None, rebuild: str | None = None
) -> dict[str, Any]:
    """The docker runtime's ``compose`` option of a multi-container task (``environment/docker-compose.yaml``):
    its services' images built or found, its project's files (:mod:`agentrig.formats.harbor.compose`)."""
    from agentrig.formats.harbor.compose import compose_runtime_option

    return compose_runtime_option(
        task_name=task.name,
        task_dir=task.path,
        config=task.config,
        client=client,
        main_image=main_image,
        on_build=on_build,
        rebuild=rebuild,
    )
