"""Errors a runtime raises when it cannot be set up; each message is one line naming what to fix."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

_M = TypeVar("_M", bound=BaseModel)


class RuntimeSetupError(Exception):
    """A runtime could not start (engine unreachable, image missing, bad mount, bad option)."""


class DockerUnavailableError(RuntimeSetupError):
    """The Docker engine does not answer (or the ``docker`` package is missing)."""


class ImageNotFoundError(RuntimeSetupError):
    """The image a runtime needs is not present locally (nothing is ever pulled)."""


class ImageBuildError(RuntimeSetupError):
    """Building an agent image failed; the message holds the failing build step."""


def parse_options(model: type[_M], options: object, runtime: str) -> _M:
    """Validate a runtime's options; an invalid one raises :class:`RuntimeSetupError` naming it."""
    from pydantic import ValidationError

    if isinstance(options, model):
        return options
    try:
        return model.model_validate(options or {})
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "options"
        raise RuntimeSetupError(f"runtime '{runtime}' option '{field}': {error['msg']}") from None
