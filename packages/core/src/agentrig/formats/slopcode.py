"""The ``slopcode`` format: SlopCodeBench problems, run as published.

A problem directory holds ``config.yaml`` (``name``, ``entry_file``,
``timeout`` per test, ``test_dependencies``, ``static_assets``, ``markers``,
``checkpoints: {checkpoint_N: {version, order, state, timeout,
include_prior_tests}}``), ``checkpoint_N.md`` specifications, ``tests/``
(``conftest.py`` taking ``--entrypoint`` and ``--checkpoint``,
``test_checkpoint_N.py``, data) and ``solutions/checkpoint_N/``.

As SlopCodeBench's own runner does:

- the prompt is its ``just-solve`` template around the specification, whose
  canary comment is stripped and whose ``%%%ENTRYPOINT:entry_file%%%`` /
  ``%%%ENTRYPOINT:entry_command%%%`` placeholders become ``X.py`` /
  ``python X.py``; the first checkpoint asks for a virtual environment and a
  ``requirements.txt``, later ones to keep using them;
- the static assets are copied into the agent's workspace at their ``save_path`` before the first
  checkpoint (``Workspace.materialize_assets`` of its agent session), and again before a checkpoint
  whose workspace lacks one (a resumed run's); the snapshots leave them out, as the benchmark's do;
- the ``oracle`` makes the workspace equal each checkpoint's ``solutions/checkpoint_N/`` (the
  benchmark's reference snapshot), the static assets put back beside it;
- tests run on a copy of the workspace laid out as its ``PytestRunner`` lays out the submission
  it evaluates (``src/slop_code/evaluation/pytest_runner.py``): what its snapshots leave out is
  removed first (``venv/``, ``.venv/``, ``.evaluation_tests/``, ``tests/assets``, every ``*.pyc``,
  each static asset's ``save_path``); the problem's tests go to ``.evaluation_tests/``
  (``conftest.py``, helper files and directories, ``test_checkpoint_K.py`` for K up to the current
  checkpoint in ``order``, only the current one when ``include_prior_tests`` is false); static
  assets to ``.evaluation_tests/assets/NAME`` (``SCBENCH_ASSETS_DIR``, ``SCBENCH_ASSET_NAME``);
  a generated ``pytest.ini`` at the top registers the markers (it replaces the workspace's own);
- ``uv init`` / ``uv add -r requirements.txt`` prepare the copy (a failure of either is no
  verdict: the tests then run as they can; ``uv init --no-workspace``, so that a copy made under
  a uv project of the user's stays a project of its own, as the benchmark's copy in the
  temporary directory is), then ``uvx --with=pytest,pytest-json-ctrf,
  pytest-json-report,pytest-timeout,jsonschema,deepdiff,... pytest [--timeout=T]
  --entrypoint="uv run X.py" --checkpoint=checkpoint_N ... -vv .evaluation_tests`` runs in the
  copy's top directory: only ``.evaluation_tests/`` is collected, so the workspace's own
  ``tests/`` is neither graded nor in scope; pytest takes the generated ``pytest.ini`` as its
  configuration (rootdir: the top), so a ``[tool.pytest]`` of ``pyproject.toml`` there is
  ignored, while a top-level ``conftest.py`` is loaded, exactly as in the benchmark's own run;
- test ids are pytest's node ids, ``.evaluation_tests/test_checkpoint_K.py::...``; groups: a test
  of an earlier checkpoint's file is ``Regression``; else marker ``error`` → ``Error``,
  ``regression`` → ``Regression``, a marker of the problem's ``markers`` → its group,
  ``functionality`` → ``Functionality``, none → ``Core``;
- ``--timeout`` (pytest-timeout, per test) is the checkpoint's ``timeout``, else the problem's;
  without either the tests run with no per-test timeout;
- pytest exiting 2, 3, 4 or 5, or never printing ``collected N items``, is an
  infrastructure failure; a checkpoint is solved at pass rate 1.0, as the benchmark's reporting
  decides (``agent_runner/reporting.py``): pass policy ``score>=1``, under which a skipped test
  is not a passed one (``--pass-policy core`` asks only for the Core tests).

``AGENTRIG_SLOPCODE_PYTHON=/path/to/python`` runs the tests and the entry
file with that interpreter instead of ``uv`` (its environment must hold
pytest, pytest-json-report, pytest-timeout and the test dependencies; the CTRF report is not
asked for): for machines that prepare the environment themselves. pytest is started as its
console script starts it (the working directory is not put on ``sys.path``).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentrig.boundary import (
    BoundaryError,
    Seconds,
    check_name,
    check_relative,
    check_tree,
    read_problem_text,
    resolve_inside,
    shorten,
)
from agentrig.evaluation.engine import ReportSpec, TestCommand
from agentrig.evaluation.policy import PassPolicy
from agentrig.evaluation.records import TestResult
from agentrig.formats.interface import (
    CheckpointSetupError,
    EvaluationContext,
    ProblemEnvironment,
    ProblemFormat,
    SolutionError,
    parse_policy,
)
from agentrig.problem import Checkpoint, Problem, ProblemError
from agentrig.runtime.interface import Invocation

if TYPE_CHECKING:
    from agentrig.runtime.interface import Runtime

CONFIG_FILE = "config.yaml"
#: Where SlopCodeBench's runner puts its tests in the submission (``WORKSPACE_TEST_DIR``).
TEST_DIR = ".evaluation_tests"
REPORT_PATH = ".scbench/pytest-report.json"
CTRF_PATH = ".scbench/ctrf-report.json"
PYTHON_ENV = "AGENTRIG_SLOPCODE_PYTHON"

#: The packages SlopCodeBench's runner gives every test run (``PytestRunner.TEST_DEPENDENCIES``).
TEST_DEPENDENCIES = ("pytest", "pytest-json-ctrf", "pytest-json-report", "pytest-timeout", "jsonschema", "deepdiff")
#: What SlopCodeBench's snapshot of a submission leaves out (``SnapshotConfig.ignore_globs`` and
#: ``EnvironmentSpec.get_ignore_globs``): top-level paths, plus every ``*.pyc``.
SNAPSHOT_EXCLUDES = ("venv", ".venv", TEST_DIR, "tests/assets")
#: pytest started as its console script is (``-c`` puts the working directory first on ``sys.path``).
PYTEST_MAIN = "import sys; sys.path[:1] == [''] and sys.path.pop(0); import pytest; sys.exit(pytest.main())"
BUILTIN_MARKERS = {
    "error": ("error-handling / edge-case tests", "Error"),
    "functionality": ("non-core / nice-to-have tests", "Functionality"),
    "regression": ("regression tests from prior checkpoints", "Regression"),
}
#: The benchmark's verdict: solved when the pass rate (passed / collected) is 1.0.
SOLVED = PassPolicy.parse("score>=1")
#: pytest's exit codes for "the runner failed": interrupted, internal error, usage error, no tests.
INFRASTRUCTURE_EXIT_CODES = frozenset({2, 3, 4, 5})

_GROUPS = {"CORE": "Core", "FUNCTIONALITY": "Functionality", "ERROR": "Error", "REGRESSION": "Regression"}
_CANARY = re.compile(r"^<!-- [\s\S]+? -->\n?")
_COLLECTED = re.compile(r"collected (\d+) items?")
_CHECKPOINT_NAME = re.compile(r"^checkpoint_\d+$")

PROMPT_HEAD = "Implement a program that 100% solves the specification. That is all you need to do.\n"
PROMPT_FIRST = (
    "Use a virtual environment and ensure that a `requirements.txt` is present with any dependencies you need"
    " to solve the problem.\n"
)
PROMPT_CONTINUATION = (
    "Keep using the same virtual environment you started with, update `requirements.txt` with any new"
    " dependencies you need.\n"
)


class MarkerConfig(BaseModel):
    """A custom marker of ``config.yaml``: its description and the group its tests count in."""

    model_config = ConfigDict(extra="ignore")

    description: str = ""
    group: Literal["Core", "Functionality", "Error", "Regression"]

    @field_validator("group", mode="before")
    @classmethod
    def _group_name(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().upper() in _GROUPS:
            return _GROUPS[value.strip().upper()]
        return value


class StaticAsset(BaseModel):
    """A file or directory of the problem made available to the tests; ``save_path`` is where the
    agent's workspace holds it (default: ``path``), left out of the submission the tests see."""

    model_config = ConfigDict(extra="ignore")

    path: str
    save_path: str | None = None


class CheckpointConfig(BaseModel):
    """A checkpoint of ``config.yaml``."""

    model_config = ConfigDict(extra="ignore")

    version: int = 1
    order: int
    state: str | None = None
    timeout: Seconds | None = None
    include_prior_tests: bool = True
    env: dict[str, str] = Field(default_factory=dict)


class ProblemConfig(BaseModel):
    """``config.yaml`` of a SlopCodeBench problem (fields agentrig does not use are kept out)."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1)
    entry_file: str = Field(min_length=1)
    timeout: Seconds | None = None
    env: dict[str, str] = Field(default_factory=dict)
    test_dependencies: list[str] = Field(default_factory=list)
    static_assets: dict[str, StaticAsset] = Field(default_factory=dict)
    markers: dict[str, MarkerConfig] = Field(default_factory=dict)
    checkpoints: dict[str, CheckpointConfig] = Field(min_length=1)


class SlopCheckpoint(Checkpoint):
    """A SlopCodeBench checkpoint: its test files and per-test timeout."""

    order: int
    test_timeout: float | None = None
    include_prior_tests: bool = True
    test_files: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)


class SlopProblem(Problem):
    """A SlopCodeBench problem in the core's model, with what its evaluation needs."""

    entry_file: str
    test_dependencies: list[str] = Field(default_factory=list)
    static_assets: dict[str, str] = Field(default_factory=dict)
    asset_save_paths: list[str] = Field(default_factory=list)
    markers: dict[str, MarkerConfig] = Field(default_factory=dict)

    @property
    def entry_path(self) -> str:
        """The entry file's name (``entry_file`` with ``.py``)."""
        return self.entry_file if self.entry_file.endswith(".py") else f"{self.entry_file}.py"

    def prompt_text(self, checkpoint: Checkpoint) -> str:
        """The benchmark's ``just-solve`` prompt around the checkpoint's specification."""
        spec = super().prompt_text(checkpoint)
        spec = _CANARY.sub("", spec, count=1)
        spec = spec.replace("%%%ENTRYPOINT:entry_file%%%", self.entry_path)
        spec = spec.replace("%%%ENTRYPOINT:entry_command%%%", f"python {self.entry_path}")
        first = self.checkpoints.index(checkpoint) == 0
        return PROMPT_HEAD + (PROMPT_FIRST if first else PROMPT_CONTINUATION) + "Your task is:\n" + spec.strip()


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}: {first['msg']}{more}"


class SlopCodeFormat(ProblemFormat):
    """SlopCodeBench problems (``config.yaml`` + ``checkpoint_N.md`` + ``tests/``)."""

    name = "slopcode"
    marker_files = (CONFIG_FILE, "checkpoint_1.md")

    def detect(self, path: Path) -> bool:
        """A directory holding ``config.yaml`` and ``checkpoint_1.md``."""
        return (path / CONFIG_FILE).is_file() and (path / "checkpoint_1.md").is_file()

    def load(self, path: Path) -> Problem:
        """Read ``config.yaml``; checkpoints in their ``order``, each with its spec file.

        Every name that becomes a file name (the problem's, a static asset's) is a valid name and
        every path (specifications, ``tests/``, ``solutions/``, static assets, ``entry_file``) stays
        inside the problem directory, symbolic links included; else one line naming file and field.
        """
        try:
            return self._load(Path(path))
        except BoundaryError as exc:
            raise ProblemError(str(exc)) from None

    def _load(self, directory: Path) -> Problem:
        from agentrig.formats.native import read_yaml

        file = directory / CONFIG_FILE
        if not file.is_file():
            raise ProblemError(f"{file}: not found (a SlopCodeBench problem holds {CONFIG_FILE})")
        resolve_inside(directory, CONFIG_FILE, str(file))
        data = read_yaml(file)
        if not isinstance(data, dict):
            raise ProblemError(f"{file}: expected a mapping with 'name', 'entry_file' and 'checkpoints'")
        try:
            config = ProblemConfig.model_validate(data)
        except ValidationError as exc:
            raise ProblemError(f"{file}: {_describe(exc)}") from None
        check_name(config.name, f"{file}: name")
        root = directory.resolve()
        check_relative(config.entry_file, f"{file}: entry_file")
        orders: dict[int, str] = {}
        for name, checkpoint in config.checkpoints.items():
            if not _CHECKPOINT_NAME.match(name):
                raise ProblemError(f"{file}: checkpoints.{name}: checkpoint names are checkpoint_N")
            if checkpoint.order in orders:
                raise ProblemError(
                    f"{file}: checkpoints.{name}.order: {checkpoint.order} is also the order of {orders[checkpoint.order]}"
                )
            orders[checkpoint.order] = name
            if not resolve_inside(root, f"{name}.md", f"{file}: checkpoints.{name}: specification").is_file():
                raise ProblemError(f"{file}: checkpoints.{name}: its specification '{name}.md' does not exist")
        for asset_name, asset in config.static_assets.items():
            check_name(asset_name, f"{file}: static_assets key")
            where = f"{file}: static_assets.{asset_name}.path"
            if not check_tree(root, asset.path, where).exists():
                raise ProblemError(f"{where}: '{shorten(asset.path)}' does not exist")
            saved = check_relative(asset.save_path or asset.path, f"{file}: static_assets.{asset_name}.save_path")
            if posixpath.normpath(saved.replace("\\", "/")) == ".":
                raise ProblemError(
                    f"{file}: static_assets.{asset_name}.save_path: '{shorten(saved)}' is the whole workspace;"
                    " name a file or directory inside it"
                )
        check_tree(root, "tests", f"{file}: tests/")
        check_tree(root, "solutions", f"{file}: solutions/")
        # the benchmark's iterate_checkpoint_items: by order, then name
        ordered = [name for _, name in sorted(orders.items())]
        tests_dir = directory / "tests"
        checkpoints: list[Checkpoint] = []
        for index, name in enumerate(ordered):
            settings = config.checkpoints[name]
            wanted = ordered[: index + 1] if settings.include_prior_tests else [name]
            checkpoints.append(
                SlopCheckpoint(
                    name=name,
                    prompt=f"{name}.md",
                    test="pytest",
                    order=settings.order,
                    test_timeout=settings.timeout if settings.timeout is not None else config.timeout,
                    include_prior_tests=settings.include_prior_tests,
                    test_files=[f"test_{w}.py" for w in wanted if (tests_dir / f"test_{w}.py").is_file()],
                    env={**config.env, **settings.env},  # the problem's defaults, the checkpoint's win
                    solution=f"solutions/{name}" if (directory / "solutions" / name).is_dir() else None,
                )
            )
        return SlopProblem(
            name=config.name,
            path=directory.resolve(),
            format=self.name,
            tests="tests",
            checkpoints=checkpoints,
            entry_file=config.entry_file,
            test_dependencies=config.test_dependencies,
            static_assets={n: a.path for n, a in config.static_assets.items()},
            asset_save_paths=[a.save_path or a.path for a in config.static_assets.values()],
            markers=config.markers,
        )

    def required_tools(self, problem: Problem, runtime: str) -> dict[str, str]:
        """``uv`` and ``uvx`` under the local runtime (the tests run through them), unless
        ``AGENTRIG_SLOPCODE_PYTHON`` names the interpreter that runs them; an image brings its own."""
        if runtime != "local" or os.environ.get(PYTHON_ENV):
            return {}
        fix = f"pip install uv (or set {PYTHON_ENV} to a Python holding pytest and the test dependencies)"
        return {"uv": fix, "uvx": fix}

    # -- evaluation ---------------------------------------------------------------

    def test_command(self, problem: Problem, checkpoint: Checkpoint, context: EvaluationContext) -> TestCommand | None:
        """The benchmark's pytest run for ``checkpoint`` (see the module docstring).

        The tests, assets and ``pytest.ini`` are first put under a directory of a random name in
        the copy (nothing the agent left there can be in the way or link elsewhere); the first
        setup command removes what the benchmark's snapshot leaves out and moves them in place.
        """
        import secrets

        assert isinstance(problem, SlopProblem) and isinstance(checkpoint, SlopCheckpoint)
        stage = f".agentrig-stage-{secrets.token_hex(8)}"
        files = [(source, f"{stage}/{relative}") for source, relative in self.evaluation_files(problem, checkpoint)]
        env = dict(checkpoint.env)
        if problem.static_assets:
            env["SCBENCH_ASSETS_DIR"] = f"{TEST_DIR}/assets"
            for name in problem.static_assets:
                env[f"SCBENCH_ASSET_{name.upper()}"] = f"{TEST_DIR}/assets/{name}"
        python = os.environ.get(PYTHON_ENV)
        setup = [_arrange(stage, problem.asset_save_paths)]
        if python:
            entrypoint = f"{python} {problem.entry_path}"
            runner = [python, "-c", PYTEST_MAIN, "-p", "no:randomly"]
            reports: list[str] = []
        else:
            entrypoint = f"uv run {problem.entry_path}"
            deps = [*TEST_DEPENDENCIES, *problem.test_dependencies]
            runner = ["uvx", *(f"--with={d}" for d in deps), "pytest"]
            reports = [f"--ctrf={CTRF_PATH}"]
            # the benchmark's eval_commands; it only logs their failures
            setup += ["uv init --no-workspace >/dev/null 2>&1 || true", "uv add -r requirements.txt >/dev/null 2>&1 || true"]
        timeout = [] if checkpoint.test_timeout is None else [f"--timeout={int(checkpoint.test_timeout)}"]
        command = [
            *runner,
            *timeout,
            f"--entrypoint={entrypoint}",
            f"--checkpoint={checkpoint.name}",
            *reports,
            "--json-report",
            f"--json-report-file={REPORT_PATH}",
            "--json-report-omit=traceback",
            "--json-report-omit=streams",
            "--json-report-omit=log",
            "--json-report-omit=collectors",
            "--json-report-omit=warnings",
            "-vv",
            TEST_DIR,
        ]
        policy = parse_policy(problem.pass_policy, f"{problem.path}: pass_policy") or SOLVED
        return TestCommand(
            command=" ".join(shlex.quote(part) for part in command),
            files=files,
            generated={f"{stage}/pytest.ini": pytest_ini(problem)},
            setup=setup,
            report=ReportSpec(kind="pytest-json", path=REPORT_PATH),
            # SlopCodeBench sets no session limit (its pytest_runner.py runs pytest with timeout None):
            # pytest-timeout bounds each test when the problem declares a timeout, nothing bounds the
            # session unless the run sets --test-session-timeout
            timeout=None,
            session_unbounded=True,
            env=env,
            group=lambda test: group_of(test, checkpoint.name, problem.markers),
            policy=policy,
            check_output=_pytest_ran,
        )

    def evaluation_files(self, problem: Problem, checkpoint: Checkpoint) -> list[tuple[Path, str]]:
        """``(problem path, relative path)`` of what the benchmark puts into the submission for
        ``checkpoint``, relative to its top: ``tests/X`` to ``.evaluation_tests/X`` (every file and
        directory but ``__pycache__`` and the test files of other checkpoints:
        ``_copy_tests_from_problem``), then each static asset to ``.evaluation_tests/assets/NAME``
        (``materialize_static_assets_for_tests``)."""
        assert isinstance(problem, SlopProblem) and isinstance(checkpoint, SlopCheckpoint)
        tests_dir = problem.path / "tests"
        files: list[tuple[Path, str]] = []
        if tests_dir.is_dir():
            for item in sorted(tests_dir.iterdir()):
                if item.name == "__pycache__" and item.is_dir():
                    continue
                is_test_file = item.is_file() and item.name.startswith("test_") and item.name.endswith(".py")
                if is_test_file and item.name not in checkpoint.test_files:
                    continue
                files.append((item, f"{TEST_DIR}/{item.name}"))
        for name, relative in problem.static_assets.items():
            files.append((problem.path / relative, f"{TEST_DIR}/assets/{name}"))
        return files

    def count_tests(self, problem: Problem, checkpoint: Checkpoint) -> int | None:
        """The test cases pytest collects for ``checkpoint`` from the benchmark's tests, read from
        their source (:mod:`agentrig.formats.pytest_cases`: parametrize lists written in the files
        expanded); ``None`` when only running the collection can tell (cases loaded from data
        files, a collection hook in a ``conftest.py``)."""
        from agentrig.formats.pytest_cases import changes_collection, count_cases

        total = 0
        for source, _ in self.evaluation_files(problem, checkpoint):
            found = _collected_files(source)
            if found is None:
                return None
            for path, is_conftest in found:
                try:
                    text = read_problem_text(path, "test file")
                except (OSError, ValueError):
                    return None
                if is_conftest:
                    if changes_collection(text):
                        return None
                    continue
                cases = count_cases(text)
                if cases is None:
                    return None
                total += cases
        return total

    # -- the agent's workspace ------------------------------------------------------------

    def prepare_environment(
        self, problem: Problem, runtime: str, options: dict[str, Any] | None, scratch: Path, *, rebuild: str | None = None
    ) -> ProblemEnvironment | None:
        """The run's own runtime and image; the checkpoints' snapshots leave each static asset's
        ``save_path`` out, as the benchmark's snapshots do (``EnvironmentSpec.get_ignore_globs``)."""
        assert isinstance(problem, SlopProblem)
        if not problem.asset_save_paths:
            return None
        return ProblemEnvironment(runtime_options=dict(options or {}), snapshot_ignore=list(problem.asset_save_paths))

    def prepare_checkpoint(self, problem: Problem, checkpoint: Checkpoint, runtime: Runtime, workspace: Path) -> None:
        """Put the static assets into the agent's workspace at their ``save_path``, as the benchmark's
        agent session does (``Workspace.materialize_assets``): before the first checkpoint, and
        before a later one whose workspace lacks one (a resumed run's, restored from a snapshot that
        leaves them out); what the agent did to them meanwhile is otherwise kept."""
        assert isinstance(problem, SlopProblem)
        first = problem.checkpoints.index(checkpoint) == 0
        materialize_assets(problem, runtime, workspace, only_missing=not first)

    # -- the reference solution -------------------------------------------------------

    def apply_solution(self, problem: Problem, checkpoint: Checkpoint, runtime: Runtime, workspace: Path) -> None:
        """Make the workspace equal ``solutions/checkpoint_N/``, as the benchmark's reference snapshot
        of the checkpoint is (nothing of an earlier checkpoint's solution stays), with the static
        assets where the agent's workspace holds them (the snapshot leaves them out)."""
        if checkpoint.solution is None:
            raise SolutionError(
                f"{problem.path / 'solutions' / checkpoint.name}: no reference solution for checkpoint '{checkpoint.name}'"
            )
        cleared = runtime.exec(
            Invocation(["sh", "-c", 'find "$1" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +', "sh", runtime.workdir],
                       timeout=600)
        )
        if cleared.exit_code != 0:
            why = " ".join((cleared.stderr or cleared.stdout or "").split())[-300:]
            raise SolutionError(f"cannot empty the workspace for the solution of '{checkpoint.name}': {why}")
        super().apply_solution(problem, checkpoint, runtime, workspace)
        assert isinstance(problem, SlopProblem)
        materialize_assets(problem, runtime, workspace, only_missing=False)


def materialize_assets(problem: SlopProblem, runtime: Runtime, workspace: Path, *, only_missing: bool) -> None:
    """Copy each static asset to its ``save_path`` in the workspace (a directory merged over what is
    there, as ``shutil.copytree(..., dirs_exist_ok=True)`` does); with ``only_missing``, only those
    absent. A ``save_path`` reached through a symbolic link the agent left is refused
    (:class:`CheckpointSetupError`): nothing is written outside the workspace."""
    for (name, relative), saved in zip(problem.static_assets.items(), problem.asset_save_paths, strict=True):
        target = posixpath.normpath(saved.replace("\\", "/"))
        parts = target.split("/")
        for depth in range(1, len(parts) + 1):
            if (workspace / "/".join(parts[:depth])).is_symlink():
                raise CheckpointSetupError(
                    f"static asset '{name}': '{'/'.join(parts[:depth])}' in the workspace is a symbolic link;"
                    f" the asset is not copied through it"
                )
        if only_missing and os.path.lexists(workspace / target):
            continue
        runtime.upload(problem.path / relative, posixpath.join(runtime.workdir, target))


def group_of(test: TestResult, current: str, markers: dict[str, MarkerConfig]) -> str:
    """The SlopCodeBench group of ``test`` when evaluating checkpoint ``current``
    (``PytestRunner._convert_pytest_report_test_to_result`` and ``_determine_group_type``).

    The checkpoint is read from the node id's file part (``.evaluation_tests/test_checkpoint_K.py``,
    the part before the first ``::``); an id without ``::`` or a file not named ``test_X.py`` is
    the current checkpoint's. Only markers the problem knows (built-in and ``markers``) count, and
    they are all ``test.markers`` keeps.
    """
    known = set(BUILTIN_MARKERS) | set(markers)
    present = [m for m in test.markers if m in known]
    test.markers = present
    file = test.id.split("::", 1)[0] if "::" in test.id else ""
    match = re.search(r"test_([^/]+)\.py", file)
    if match and match.group(1) != current:
        return "Regression"
    if "error" in present:
        return "Error"
    if "regression" in present:
        return "Regression"
    for marker in present:
        if marker in markers:
            return markers[marker].group
    if "functionality" in present:
        return "Functionality"
    return "Core"


def pytest_ini(problem: SlopProblem) -> str:
    """The ``pytest.ini`` the benchmark writes at the top of the submission
    (``_generate_pytest_ini``: ``testpaths = tests``, then the built-in markers and the problem's)."""
    lines = [f"    {name}: {description}" for name, (description, _) in BUILTIN_MARKERS.items()]
    lines += [f"    {name}: {marker.description}" for name, marker in problem.markers.items() if name not in BUILTIN_MARKERS]
    return "[pytest]\ntestpaths = tests\nmarkers =\n" + "\n".join(lines) + "\n"


#: Removes a relative path unless a directory on its way is a symbolic link (``rm`` would follow it).
_DROP = (
    'drop() { p=; rest=$1; while case $rest in */*) true;; *) false;; esac; do '
    'p=$p${rest%%/*}; rest=${rest#*/}; [ -L "$p" ] && return 0; p=$p/; done; rm -rf -- "$1"; }'
)


def _arrange(stage: str, save_paths: list[str]) -> str:
    """The shell command that turns the copy into the submission the benchmark tests: what its
    snapshot leaves out removed (never through a link the agent left), stale reports removed
    (a report the run does not write must not be read), the staged tests and ``pytest.ini`` moved in."""
    drops = [*SNAPSHOT_EXCLUDES, *(posixpath.normpath(p) for p in save_paths), "pytest.ini"]
    return "; ".join([
        "set -e",
        _DROP,
        *(f"drop {shlex.quote(path)}" for path in drops),
        f"find . -path ./{stage} -prune -o -name '*.pyc' -prune -exec rm -rf -- {{}} +",
        "if [ -L .scbench ]; then rm -f .scbench; fi",
        f"rm -f {REPORT_PATH} {CTRF_PATH} 2>/dev/null || true",
        f"mv {stage}/{TEST_DIR} {TEST_DIR}",
        f"mv {stage}/pytest.ini pytest.ini",
        f"rmdir {stage}",
    ])


#: Directories pytest does not enter (``norecursedirs``' default).
_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
#: Test files pytest collects (``python_files``' default).
_PYTHON_FILES = ("test_*.py", "*_test.py")
#: At most this many entries are looked at under one copied directory before the count gives up.
_WALK_LIMIT = 20_000


def _collected_files(source: Path) -> list[tuple[Path, bool]] | None:
    """The files under ``source`` (a file or directory put into ``.evaluation_tests``) that pytest
    imports while collecting: ``(path, is a conftest.py)``; ``None`` when there are too many entries."""
    from fnmatch import fnmatch

    def wanted(name: str) -> int:
        if name == "conftest.py":
            return 2
        return 1 if any(fnmatch(name, pattern) for pattern in _PYTHON_FILES) else 0

    if not source.is_dir():
        kind = wanted(source.name)
        return [(source, kind == 2)] if kind and source.is_file() else []
    found: list[tuple[Path, bool]] = []
    stack, seen = [source], 0
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        seen += len(entries)
        if seen > _WALK_LIMIT:
            return None
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__" and not any(fnmatch(entry.name, p) for p in _NORECURSE):
                    stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and (kind := wanted(entry.name)):
                found.append((Path(entry.path), kind == 2))
    return found


def _pytest_ran(result: Any) -> str | None:
    if result.exit_code in INFRASTRUCTURE_EXIT_CODES:
        meaning = {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"}[result.exit_code]
        return f"pytest failed to run the tests (exit code {result.exit_code}: {meaning})"
    if result.output_truncated:
        return None  # the collection line was at the start of an output kept only in part
    match = _COLLECTED.search(result.stdout or "")
    if match is None or int(match.group(1)) == 0:
        return "pytest collected no tests (no 'collected N items' line in its output)"
    return None
