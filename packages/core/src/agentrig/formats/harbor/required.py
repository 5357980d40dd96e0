"""The images a Harbor task needs present locally before its run: its ``docker_image``, or the bases its
Dockerfile builds on, and those of its compose services (read from the files; nothing is built here)."""

from __future__ import annotations

from pathlib import Path

from agentrig.formats.harbor.task import HarborTask
from agentrig.runtime.images import RequiredImage


def _dockerfile_bases(dockerfile: Path, named_by: str) -> list[RequiredImage]:
    from agentrig.formats.harbor.image import base_images

    try:
        text = dockerfile.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []  # the build names what is wrong with it
    return [RequiredImage(image=image, named_by=named_by) for image in base_images(text)]


def required_images(task: HarborTask) -> list[RequiredImage]:
    """Every image ``task`` needs and no build of agentrig's makes: the prebuilt ``[environment] docker_image``
    or the ``FROM`` images of its Dockerfile, and of its compose services, the images they name or build on."""
    from agentrig.formats.harbor.compose import MAIN_SERVICE, check_compose_file

    images: list[RequiredImage] = []
    docker_image = task.config.environment.docker_image
    if docker_image:
        images.append(RequiredImage(image=docker_image, named_by=f"docker_image of task '{task.name}'"))
    elif task.dockerfile is not None:
        dockerfile = task.path / task.dockerfile
        images += _dockerfile_bases(dockerfile, f"base image of task '{task.name}', {dockerfile}")
    if task.compose_file is None:
        return images
    spec = check_compose_file(task.path, task.config)  # checked when the task loaded
    if spec is None:
        return images
    environment = task.path / "environment"
    for service in spec.services:
        if service.name == MAIN_SERVICE:
            continue
        if service.context is not None and service.dockerfile is not None:
            dockerfile = environment / service.dockerfile
            images += _dockerfile_bases(dockerfile, f"base image of service '{service.name}' of task '{task.name}', {dockerfile}")
        elif service.image and "$" not in service.image:
            images.append(RequiredImage(image=service.image, named_by=f"image of service '{service.name}' of task '{task.name}'"))
    return images
