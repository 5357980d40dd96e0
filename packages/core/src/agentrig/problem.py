"""The core's problem model: a problem, its checkpoints, and what is wrong with one.

Every problem format (see :mod:`agentrig.formats`) loads its directories into
these models; ``problem.yaml`` (the ``agentrig`` format) is written in them
directly. A format may subclass :class:`Problem` and :class:`Checkpoint` to
carry what only it needs (its evaluation reads it back); the run loop uses
only the fields declared here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from agentrig.boundary import NAME_RULE, Seconds, is_safe_name, shorten


class ProblemError(ValueError):
    """A problem directory is invalid or cannot be found; the message names the file and field to fix."""


def _valid_name(value: str) -> str:
    if not is_safe_name(value):
        raise PydanticCustomError("name", "'{name}' is not a valid name ({rule})", {"name": shorten(value), "rule": NAME_RULE})
    return value


#: A problem's or checkpoint's name: one path component of the run directory
#: (:func:`agentrig.boundary.is_safe_name`: letters, digits, ``_``, ``-``, inner dots; never ``.``/``..``).
Name = Annotated[str, AfterValidator(_valid_name)]


class Checkpoint(BaseModel):
    """One checkpoint of a problem.

    ``prompt`` is a path relative to the problem directory (a format may
    render the task text differently, see :meth:`Problem.prompt_text`);
    ``test`` is a shell command run on a copy of the workspace after the agent
    (exit 0 = pass, unless ``report`` names a test report to read);
    ``timeout`` the seconds it may take (default: the run's ``--test-timeout``);
    ``solution`` a directory (relative to the problem) holding the reference
    solution's files, which the ``oracle`` agent copies over the workspace;
    ``report`` the test report the command writes, as ``KIND:PATH`` with KIND
    one of ``pytest-json``, ``junit``, ``reward`` and PATH relative to the
    workspace copy; ``pass_policy`` decides ``passed`` from the results
    (``all``, ``core``, ``score>=X``; default: the problem's).
    """

    model_config = ConfigDict(extra="forbid")

    name: Name
    prompt: str
    test: str | None = None
    timeout: Seconds | None = None
    solution: str | None = None
    report: str | None = None
    pass_policy: str | None = None


class Problem(BaseModel):
    """A whole problem; ``path`` is its directory and ``format`` the name of the format that loaded it.

    ``setup`` are shell commands run once in the fresh workspace before the
    first checkpoint (dependencies an agent and the tests need); a failing one
    fails the problem with its output. ``pass_policy`` is the default of every
    checkpoint (``all`` when unset).
    """

    model_config = ConfigDict(extra="forbid")

    name: Name
    workspace: str | None = None
    tests: str = Field(
        default="tests",
        description="Directory (in the problem) whose files are put into the workspace copy only while a test runs.",
    )
    setup: list[str] = Field(default_factory=list)
    pass_policy: str | None = None
    checkpoints: list[Checkpoint] = Field(min_length=1)
    path: Path = Field(default=Path("."), exclude=True)
    format: str = Field(default="agentrig", exclude=True)

    def prompt_text(self, checkpoint: Checkpoint) -> str:
        """The task text of ``checkpoint``, read from its prompt file (a format may render it).

        The file must lie inside the problem directory (symbolic links included) and be at most
        the problem-file cap (:func:`agentrig.boundary.problem_file_limit`); else :class:`ProblemError`.
        """
        return read_prompt(self.path, checkpoint)

    def checkpoint(self, name: str) -> Checkpoint:
        """The checkpoint called ``name``; ``KeyError`` when there is none."""
        for checkpoint in self.checkpoints:
            if checkpoint.name == name:
                return checkpoint
        raise KeyError(name)


def read_prompt(root: Path, checkpoint: Checkpoint) -> str:
    """The text of ``checkpoint``'s prompt file under ``root``: inside it (symbolic links
    included), a regular file of at most the problem-file cap; else :class:`ProblemError` naming it.
    ``UnicodeDecodeError`` passes through (the caller names the byte)."""
    from agentrig.boundary import BoundaryError, read_problem_text, resolve_inside

    where = f"{root}: checkpoint '{checkpoint.name}' prompt"
    try:
        return read_problem_text(resolve_inside(root, checkpoint.prompt, where), "prompt file")
    except BoundaryError as exc:
        raise ProblemError(str(exc)) from None
    except OSError as exc:
        raise ProblemError(f"{where}: '{shorten(checkpoint.prompt)}': {exc.strerror or exc}") from None
