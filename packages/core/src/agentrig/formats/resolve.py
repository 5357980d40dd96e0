"""Finding problem formats through the ``agentrig_problem_formats`` hook, detecting a
directory's format, and walking dataset directories.

A dataset is a directory holding many problems (at any depth): every
directory some format detects is a problem (and is not searched further);
other directories are searched. Hidden directories and ``runs`` are skipped.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.datasets.resolve import find_dataset, is_dataset_ref
from agentrig.errors import UnknownPluginError
from agentrig.problem import Problem, ProblemError

if TYPE_CHECKING:
    from agentrig.formats.interface import ProblemFormat
    from agentrig.registry import PluginRegistry

#: How deep a dataset's problems may lie below the directory given.
MAX_DEPTH = 6
_SKIP = {"runs", "node_modules", "__pycache__", "site-packages"}


class UnknownFormatError(UnknownPluginError, ProblemError):
    """``--format NAME`` names no installed format (the registry's one error type, still a
    :class:`ProblemError` for code written against the older error)."""

    noun = "problem format"


def _registry(registry: PluginRegistry | None) -> PluginRegistry:
    from agentrig.registry import get_registry

    return registry or get_registry()


def available_formats(registry: PluginRegistry | None = None) -> list[str]:
    """The names of the installed problem formats, in detection order (the core's first)."""
    return list(_registry(registry).problem_format_specs())


def get_format(name: str, registry: PluginRegistry | None = None) -> ProblemFormat:
    """The format called ``name`` (one instance per registry); :class:`UnknownFormatError` if none."""
    from agentrig.formats.interface import ProblemFormat
    from agentrig.specs import import_object

    reg = _registry(registry)
    cache: dict[str, ProblemFormat] = reg.__dict__.setdefault("_problem_formats", {})
    found = cache.get(name)
    if found is not None:
        return found
    specs = reg.problem_format_specs()
    spec = specs.get(name)
    if spec is None:  # the formats in detection order, as `agentrig problems list` shows them
        raise reg.unknown("problem_formats", name, specs, source=f"--format {name}", error=UnknownFormatError)
    try:
        factory = import_object(spec.loader)
        instance = factory()
    except Exception as exc:
        raise ProblemError(f"problem format '{name}': cannot load '{spec.loader}': {type(exc).__name__}: {exc}") from exc
    if not isinstance(instance, ProblemFormat):
        raise ProblemError(f"problem format '{name}': '{spec.loader}' did not make an agentrig ProblemFormat")
    if type(instance).name != name:
        instance.name = name  # type: ignore[misc]  # ClassVar set on the instance: it answers to the name users type
    cache[name] = instance
    return instance


def _formats(registry: PluginRegistry | None, only: str | None) -> list[ProblemFormat]:
    names = [only] if only else available_formats(registry)
    return [get_format(name, registry) for name in names]


def _detect(formats: Sequence[ProblemFormat], directory: Path) -> ProblemFormat | None:
    for fmt in formats:
        try:
            if fmt.detect(directory):
                return fmt
        except Exception:  # a format's detection must not stop the others
            continue
    return None


def _tried(formats: Sequence[ProblemFormat]) -> str:
    return ", ".join(f"{f.name} ({' + '.join(f.marker_files)})" if f.marker_files else f.name for f in formats)


def detect_format(path: Path, registry: PluginRegistry | None = None) -> ProblemFormat | None:
    """The first installed format that recognises the directory ``path``, or ``None``."""
    return _detect(_formats(registry, None), Path(path))


@dataclass(frozen=True)
class ProblemLocation:
    """A problem found in a directory, before it is loaded: where, which format, and its
    path relative to the directory searched (``.`` for the directory itself)."""

    path: Path
    format: str
    relative: str

    @property
    def name(self) -> str:
        """The directory's name (the problem name of most formats)."""
        return self.path.name


def _not_found(path: Path) -> ProblemError:
    if not path.exists():
        return ProblemError(f"problem directory '{path}' does not exist")
    return ProblemError(f"'{path}' is not a problem directory")


def find_problems(
    path: str | Path,
    *,
    format: str | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    registry: PluginRegistry | None = None,
) -> list[ProblemLocation]:
    """The problems at ``path``: the directory itself when a format detects it, else every
    problem below it (a dataset), sorted by relative path.

    ``path`` may be ``dataset:NAME[@VERSION]`` (an installed dataset, whose spec may force a
    format). ``format`` forces one format; ``include`` / ``exclude`` are globs matched
    against a problem's directory name and its relative path (``--problem`` /
    ``-x``). Raises :class:`ProblemError` when nothing is found (naming the
    formats tried) or the filters leave nothing.
    """
    if is_dataset_ref(path):  # dataset:NAME[@VERSION], installed with a distribution
        dataset = find_dataset(str(path), registry)
        path, format = dataset.path or path, format or dataset.spec.format
    root = Path(path)
    if root.is_file() and root.name in ("problem.yaml", "problem.yml"):
        root = root.parent
        format = format or "agentrig"
    if not root.is_dir():
        raise _not_found(root)
    formats = _formats(registry, format)
    found: list[ProblemLocation] = []
    own = _detect(formats, root)
    if own is not None:
        found.append(ProblemLocation(root.resolve(), own.name, "."))
    else:
        _walk(root, root, formats, found, 0)
    if not found:
        if format is not None:
            load_with(formats[0], root)  # the format's own message says what is missing
        raise ProblemError(f"'{root}': no problem found here or below it (formats tried: {_tried(formats)})")
    selected = [
        p for p in found
        if (not include or any(_matches(p, g) for g in include)) and not any(_matches(p, g) for g in exclude)
    ]
    if not selected:
        shown = ", ".join(p.relative for p in found[:5]) + (", ..." if len(found) > 5 else "")
        what = " ".join([*(f"--problem {g}" for g in include), *(f"-x {g}" for g in exclude)])
        raise ProblemError(f"{what}: no problem of '{root}' is selected (its {len(found)} problems: {shown})")
    return selected


def _matches(location: ProblemLocation, pattern: str) -> bool:
    return fnmatch.fnmatchcase(location.name, pattern) or fnmatch.fnmatchcase(location.relative, pattern)


def _walk(root: Path, directory: Path, formats: Sequence[ProblemFormat], found: list[ProblemLocation], depth: int) -> None:
    if depth >= MAX_DEPTH:
        return
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _SKIP or not entry.is_dir():
            continue
        child = Path(entry.path)
        fmt = _detect(formats, child)
        if fmt is not None:
            found.append(ProblemLocation(child.resolve(), fmt.name, child.relative_to(root).as_posix()))
        else:
            _walk(root, child, formats, found, depth + 1)


@dataclass(frozen=True)
class UnloadableProblem:
    """A problem found in a directory that its format cannot load: where, and the one-line reason.

    ``requested`` says the user asked for it by itself (its directory given as the path, or its
    name given as an exact ``--problem NAME``), so a run must refuse rather than leave it out.
    """

    location: ProblemLocation
    error: str
    requested: bool


def _requested(location: ProblemLocation, include: Sequence[str]) -> bool:
    if location.relative == ".":
        return True
    literal = [g for g in include if not any(ch in g for ch in "*?[")]
    return any(g in (location.name, location.relative) for g in literal)


def load_found(
    locations: Sequence[ProblemLocation],
    include: Sequence[str] = (),
    registry: PluginRegistry | None = None,
) -> tuple[list[Problem], list[UnloadableProblem]]:
    """Load every problem of ``locations`` (:func:`find_problems`' answer, found with ``include``);
    one that cannot be loaded never stops the others: it is returned apart with its reason."""
    problems: list[Problem] = []
    unloadable: list[UnloadableProblem] = []
    for location in locations:
        try:
            problems.append(load_with(get_format(location.format, registry), location.path))
        except ProblemError as exc:
            unloadable.append(UnloadableProblem(location, " ".join(str(exc).split()), _requested(location, include)))
    return problems, unloadable


def load_problem(path: str | Path, format: str | None = None, registry: PluginRegistry | None = None) -> Problem:
    """Load the one problem at ``path`` (detecting its format unless ``format`` names it)."""
    root = Path(path)
    if root.is_file() and root.name in ("problem.yaml", "problem.yml"):
        return load_with(get_format(format or "agentrig", registry), root)
    if not root.is_dir():
        raise _not_found(root)
    if format is not None:
        return load_with(get_format(format, registry), root)
    fmt = detect_format(root, registry)
    if fmt is None:
        formats = _formats(registry, None)
        raise ProblemError(f"'{root}': not a problem of any installed format (tried: {_tried(formats)})")
    return load_with(fmt, root)


def load_with(fmt: ProblemFormat, path: Path) -> Problem:
    """``fmt.load(path)``, then what holds for every format whatever its own checks: the problem's and
    checkpoints' names are valid path components (:func:`agentrig.boundary.check_name`) and none of
    the run directory's own (:func:`agentrig.run.layout.reserved_name`), every prompt
    lies inside the problem directory and reads as UTF-8 text within the size cap. A
    :class:`~agentrig.boundary.BoundaryError` of the format becomes a :class:`ProblemError`."""
    from agentrig.boundary import BoundaryError, check_name
    from agentrig.run.layout import reserved_name

    try:
        problem = fmt.load(path)
        check_name(problem.name, f"{path}: problem name")
        for checkpoint in problem.checkpoints:
            check_name(checkpoint.name, f"{path}: problem '{problem.name}': checkpoint name")
    except BoundaryError as exc:
        raise ProblemError(str(exc)) from None
    if (why := reserved_name(problem.name, "problem")) is not None:
        raise ProblemError(f"{path}: problem name: {why}")
    for checkpoint in problem.checkpoints:
        if (why := reserved_name(checkpoint.name, "checkpoint")) is not None:
            raise ProblemError(f"{path}: problem '{problem.name}': checkpoint name: {why}")
    return _check_prompts(problem)


def _check_prompts(problem: Problem) -> Problem:
    """Every checkpoint's prompt reads as text now, not when its checkpoint starts mid-run."""
    for checkpoint in problem.checkpoints:
        try:
            problem.prompt_text(checkpoint)
        except UnicodeDecodeError as exc:
            raise ProblemError(
                f"{problem.path / checkpoint.prompt}: the prompt of checkpoint '{checkpoint.name}' is not UTF-8 text"
                f" (byte {exc.start}: {exc.object[exc.start:exc.start + 1]!r}); save it as UTF-8"
            ) from None
    return problem
