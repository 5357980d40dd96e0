"""Running a checkpoint's tests on a copy of the workspace and building its :class:`EvaluationRecord`.

A :class:`TestCommand` says what to run: the command, the files to put into
the copy first (the problem's tests), setup commands, the report the command
writes and how to read it, how to group tests, and the pass policy. The
engine copies the workspace (through the runtime, so a container's copy is
made inside it), runs everything there, saves the raw report into the
checkpoint's ``evaluation/`` directory, parses it and decides ``passed``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.atomic import write_bytes_atomic
from agentrig.boundary import BoundaryError, shorten
from agentrig.evaluation.parsers import REPORT_KINDS, ReportError, parse_junit_xml_run, parse_pytest_json_run, parse_reward
from agentrig.evaluation.policy import PassPolicy, deciding_policy
from agentrig.evaluation.records import DEFAULT_GROUP, EvaluationRecord, TestCounts, TestResult, utcnow
from agentrig.runtime.interface import Invocation

if TYPE_CHECKING:
    from agentrig.runtime.interface import Runtime, RuntimeProcess, RuntimeResult, WorkspaceCopy

OUTPUT_TAIL = 4000
#: Seconds a test command may take when neither it nor the run sets a limit and it does not time each test itself.
DEFAULT_TEST_TIMEOUT = 600.0
#: After a test command's time is up: how long it has, once interrupted (``SIGINT``, as Ctrl-C), to write its
#: report of what ran before its process tree is killed.
INTERRUPT_GRACE = 10.0

#: pytest's exit codes that mean the runner itself failed (interrupted, internal error, usage error).
PYTEST_INFRASTRUCTURE_EXIT_CODES = frozenset({2, 3, 4})


@dataclass(frozen=True)
class ReportSpec:
    """A report the test command writes: ``kind`` (``pytest-json``, ``junit`` or ``reward``)
    and ``path``, relative to the workspace copy or absolute (as commands see it)."""

    kind: str
    path: str

    def __post_init__(self) -> None:
        if self.kind not in REPORT_KINDS:
            raise ValueError(f"report kind '{self.kind}': expected one of {', '.join(REPORT_KINDS)}")
        if not self.path:
            raise ValueError("report path: empty")

    @classmethod
    def parse(cls, text: str) -> ReportSpec:
        """``KIND:PATH`` (``pytest-json:.report.json``); raises ``ValueError`` naming what is wrong."""
        kind, sep, path = text.partition(":")
        if not sep:
            raise ValueError(f"report '{text}': expected KIND:PATH with KIND one of {', '.join(REPORT_KINDS)}")
        return cls(kind=kind.strip(), path=path.strip())


@dataclass
class TestCommand:
    """One evaluation to run.

    ``command`` runs with the copy as its working directory (a string through
    ``sh -c``, a list without a shell). ``files`` are ``(host path, relative
    path)`` pairs put into the copy before anything runs, ``generated`` maps
    relative paths to text written there (a generated ``pytest.ini``). ``setup`` commands
    run first in the copy (a failing one is an infrastructure failure).
    ``report`` names the report to read (none: the exit code decides).
    ``group`` maps a parsed test to its group (default ``Core``). ``policy``
    is the format's or problem's pass policy (the run's ``--pass-policy``
    wins over it). ``in_copy=False`` runs in the workspace itself (for
    formats whose tests must see the agent's environment as it is).
    ``infrastructure_exit_codes`` are exit codes that mean the test runner
    itself failed; ``check_output`` may name one more such failure from the
    command's full result (e.g. pytest never printed ``collected N items``).

    Time: ``timeout`` bounds the test command (``None``: the run's
    ``--test-timeout``, default :data:`DEFAULT_TEST_TIMEOUT`). A command its
    benchmark runs with no limit as a whole (its runner times each test, e.g.
    pytest-timeout's ``--timeout``, or nothing at all, as SlopCodeBench runs its
    tests) says so with ``session_unbounded``: it then has no limit but its own
    ``timeout``. The run's ``--test-session-timeout`` (opt-in) caps every test
    command. A command whose time is up is interrupted (``SIGINT``) and given
    :data:`INTERRUPT_GRACE` seconds to write its report before it is killed;
    the tests it finished are kept.
    """

    __test__ = False

    command: str | list[str]
    files: list[tuple[Path, str]] = field(default_factory=list)
    generated: dict[str, str] = field(default_factory=dict)
    setup: list[str] = field(default_factory=list)
    report: ReportSpec | None = None
    timeout: float | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    group: Callable[[TestResult], str] | None = None
    policy: PassPolicy | None = None
    in_copy: bool = True
    infrastructure_exit_codes: frozenset[int] = frozenset()
    check_output: Callable[[RuntimeResult], str | None] | None = None
    session_unbounded: bool = False

    def session_limit(self, default: float, cap: float | None = None) -> float | None:
        """Seconds the whole test command may take: its own ``timeout``, else ``default`` (the run's
        ``--test-timeout``), except for a command its benchmark runs unbounded (``session_unbounded``),
        which has only its own; never more than ``cap`` (the run's ``--test-session-timeout``). ``None``: no limit."""
        own = self.timeout if self.session_unbounded else (self.timeout or default)
        limits = [limit for limit in (own, cap) if limit is not None]
        return min(limits) if limits else None


def tail(text: str, limit: int = OUTPUT_TAIL) -> str:
    """The last ``limit`` characters of ``text``, marked when cut."""
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


def _output(result: RuntimeResult) -> str:
    output = result.stdout
    if result.stderr:
        output += ("" if not output or output.endswith("\n") else "\n") + result.stderr
    return output


def _describe(command: str | list[str]) -> str:
    if isinstance(command, str):
        return command
    import shlex

    return " ".join(shlex.quote(part) for part in command)


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def report_file_name(spec: ReportSpec) -> str:
    """The name the raw report is saved under in ``evaluation/``."""
    return _UNSAFE.sub("_", Path(spec.path).name) or "report"


def finish(record: EvaluationRecord, tests: list[TestResult], score: float | None, policy: PassPolicy) -> EvaluationRecord:
    """Fill in counts, groups, score and the verdict of ``record`` from its tests (or given score).

    Used by the engine; a format that runs its tests its own way (a reward
    file read from a container) calls it to build the same record.
    """
    attach_tests(record, tests)
    record.score = _score(record, score)
    record.policy = str(policy)
    record.passed = policy.decide(record)
    return record


def attach_tests(record: EvaluationRecord, tests: list[TestResult]) -> EvaluationRecord:
    """Record ``tests`` with their counts and groups; the verdict is not touched (:func:`finish` decides
    from them; a format whose verdict is a reward attaches its report's tests after deciding)."""
    record.tests = tests
    if tests:
        record.counts = TestCounts.of(tests)
        groups: dict[str, TestCounts] = {}
        for test in tests:
            groups.setdefault(test.group, TestCounts()).add(test.outcome)
        record.groups = dict(sorted(groups.items()))
    return record


def _score(record: EvaluationRecord, given: float | None) -> float | None:
    """The checkpoint's score, decided here once for every record (``results.jsonl`` copies it): the reward
    given; else the fraction of the tests that passed, tests that never finished (``not_run``) counted as not
    passed; ``None`` when the evaluation gave no result (an infrastructure failure, or a timeout before any
    test result or reward: there is nothing to grade, and every total counts it as failed); else 1 or 0 by
    the exit code."""
    if given is not None:
        return given
    if record.infrastructure_failure:
        return None
    if record.counts is not None and record.counts.total:
        return record.counts.passed / (record.counts.total + (record.not_run or 0))
    if record.timed_out:
        return None
    return 1.0 if record.exit_code == 0 else 0.0


def run_test_command(
    runtime: Runtime,
    test: TestCommand,
    *,
    report_dir: Path | None = None,
    default_timeout: float = DEFAULT_TEST_TIMEOUT,
    policy: PassPolicy | None = None,
    session_timeout: float | None = None,
) -> EvaluationRecord:
    """Run ``test`` in ``runtime`` on a copy of its workspace and return the structured record.

    ``report_dir`` receives the raw report (created when there is one);
    ``default_timeout`` is the run's ``--test-timeout`` and ``session_timeout`` its
    ``--test-session-timeout`` (see :meth:`TestCommand.session_limit`); ``policy``
    (the run's) wins over ``test.policy``, which wins over ``all``. Never raises
    for a failure of the tests or the runtime: those are recorded.
    """
    from contextlib import nullcontext

    from agentrig.runtime.interface import WorkspaceCopy

    decided_by = deciding_policy(policy, test.policy)
    started = utcnow()
    clock = time.monotonic()
    record = EvaluationRecord(command=_describe(test.command), started=started)
    run = _TestRun(runtime, test, record)
    try:
        scratch = runtime.workspace_copy() if test.in_copy else nullcontext(WorkspaceCopy(path=runtime.workdir))
        with scratch as copy:
            run.put_files(copy)
            if not run.set_up(copy, test.timeout or default_timeout):
                return _finish(record, [], None, decided_by, clock)
            result, timed_out = run.run(copy, test.session_limit(default_timeout, session_timeout))
            if test.report is not None:
                run.read_report(copy, test.report, report_dir, result.exit_code, timed_out)
            run.check_runner(result, timed_out)
    except Exception as exc:  # the runtime failed: no verdict on the agent's work
        record.infrastructure_failure = True
        record.error = f"{type(exc).__name__}: {shorten(' '.join(str(exc).split()), 500)}"
    for item in run.tests:
        item.group = (test.group(item) if test.group is not None else None) or DEFAULT_GROUP
    return _finish(record, run.tests, run.score, decided_by, clock)


class _TestRun:
    """One run of a test command on a workspace copy: the record being filled, the tests and score found."""

    def __init__(self, runtime: Runtime, test: TestCommand, record: EvaluationRecord) -> None:
        self.runtime = runtime
        self.test = test
        self.record = record
        self.tests: list[TestResult] = []
        self.score: float | None = None

    def put_files(self, copy: WorkspaceCopy) -> None:
        """The test's files (the problem's tests) and generated files into the copy."""
        if copy.host is None:
            _unlink_on_the_way(self.runtime, copy.path, [*(relative for _, relative in self.test.files), *self.test.generated])
        for source, relative in self.test.files:
            if copy.host is not None:
                _copy_host(source, copy.host, relative)
            else:
                self.runtime.upload(source, f"{copy.path}/{relative}")
        _write_generated(self.runtime, copy, self.test.generated)

    def set_up(self, copy: WorkspaceCopy, timeout: float) -> bool:
        """The setup commands in order; False (the record says which failed) at the first that fails."""
        record = self.record
        for command in self.test.setup:
            done = self.runtime.exec(Invocation(command, cwd=copy.path, env=self.test.env, timeout=timeout))
            if done.exit_code != 0 or done.timed_out:
                record.exit_code = done.exit_code
                record.output_tail = tail(_output(done))
                record.infrastructure_failure = True
                why = "timed out" if done.timed_out else f"exited with {done.exit_code}"
                record.error = f"setup command '{command}' {why}"
                return False
        return True

    def run(self, copy: WorkspaceCopy, limit: float | None) -> tuple[RuntimeResult, bool]:
        """The test command, within ``limit`` seconds; its exit code and output's tail recorded."""
        record = self.record
        result, timed_out = run_limited(self.runtime, self.test.command, cwd=copy.path, env=dict(self.test.env), limit=limit)
        record.exit_code = result.exit_code
        record.timed_out = timed_out
        record.test_elapsed = result.elapsed
        record.output_tail = tail(_output(result))
        if timed_out and limit is not None:
            record.output_tail = tail(record.output_tail + f"\n[agentrig: the test command's {limit:g} s were up: stopped]\n")
        return result, timed_out

    def read_report(
        self, copy: WorkspaceCopy, spec: ReportSpec, report_dir: Path | None, exit_code: int | None, timed_out: bool
    ) -> None:
        """The report the command wrote: saved raw into ``report_dir``, parsed into tests or a score. A
        report missing, refused or unreadable is an infrastructure failure, unless the time was up (a
        report cut short by the timeout is no result)."""
        record = self.record
        try:
            raw = _read_report(self.runtime, copy, spec)
        except BoundaryError as exc:  # a link out of the copy, or a runaway report: no verdict from it
            record.infrastructure_failure = True
            record.error = str(exc)
            return
        if raw is None:
            if not timed_out:
                record.infrastructure_failure = True
                record.error = f"the test command wrote no report '{spec.path}' (exit code {exit_code})"
            return
        name = report_file_name(spec)
        if report_dir is not None:
            write_bytes_atomic(report_dir / name, raw)
            record.report = name
        try:
            if spec.kind == "reward":
                self.score = parse_reward(raw, Path(spec.path).name)
            else:
                parse = parse_junit_xml_run if spec.kind == "junit" else parse_pytest_json_run
                self.tests, not_run = parse(raw, Path(spec.path).name)
                record.not_run = not_run or None
        except ReportError as exc:
            self.tests, self.score = [], None
            if not timed_out:  # cut short by the timeout, a report may be half written: no result
                record.infrastructure_failure = True
                record.error = str(exc)

    def check_runner(self, result: RuntimeResult, timed_out: bool) -> None:
        """Whether the test runner itself failed: its output says so (``check_output``), or its exit code
        does and no test result says otherwise."""
        record, test = self.record, self.test
        if test.check_output is not None and not timed_out:
            problem = test.check_output(result)
            if problem:  # the runner's own failure explains a missing report best
                record.infrastructure_failure = True
                record.error = problem
        runner_failed = result.exit_code in test.infrastructure_exit_codes and not record.infrastructure_failure and not timed_out
        if runner_failed and (not self.tests or all(t.outcome == "error" for t in self.tests)):
            record.infrastructure_failure = True
            record.error = f"the test runner failed (exit code {result.exit_code})"


def run_limited(
    runtime: Runtime,
    command: str | list[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    limit: float | None,
    grace: float = INTERRUPT_GRACE,
) -> tuple[RuntimeResult, bool]:
    """Run ``command`` for at most ``limit`` seconds (``None``: no limit); returns its result and whether
    its time was up. When it is, the command is interrupted first (``SIGINT`` to its own processes, as
    Ctrl-C: pytest then writes the report of the tests it finished) and killed with its whole tree if it
    has not ended ``grace`` seconds later."""
    if limit is None:
        result = runtime.exec(Invocation(command, cwd=cwd, env=env))
        return result, result.timed_out
    # the runtime's own limit is the backstop: the tree dies at limit + grace whatever happens here
    process = runtime.start(Invocation(command, cwd=cwd, env=env, timeout=limit + grace))
    try:
        result = _wait(process, limit)
        if result is not None:
            return result, result.timed_out
        if process.interrupt():
            result = _wait(process, grace)
        if result is None:
            process.kill()
            result = process.wait()
        return result, True
    finally:
        if process.poll() is None:  # Ctrl-C here: nothing outlives the evaluation
            process.kill()


def _wait(process: RuntimeProcess, seconds: float) -> RuntimeResult | None:
    """``process``'s result once it has ended, or ``None`` when it still runs after ``seconds``."""
    from agentrig.runtime.process import SupervisedProcess

    if isinstance(process, SupervisedProcess):
        try:
            return process.wait(seconds)
        except TimeoutError:
            return None
    deadline = time.monotonic() + seconds
    while (result := process.poll()) is None:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(0.05, left))
    return result


def _finish(
    record: EvaluationRecord, tests: list[TestResult], score: float | None, policy: PassPolicy, clock: float
) -> EvaluationRecord:
    record = finish(record, tests, score, policy)
    record.elapsed = time.monotonic() - clock
    return record


def _write_generated(runtime: Runtime, copy: WorkspaceCopy, generated: Mapping[str, str]) -> None:
    if not generated:
        return
    host = copy.host
    if host is not None:
        from agentrig.boundary import write_under

        for relative, text in generated.items():
            write_under(host, relative, text.encode("utf-8"), f"generated file '{shorten(relative)}'", replace_links=True)
        return
    from agentrig.scratch import temporary_directory

    with temporary_directory("agentrig-generated-") as scratch:
        for relative, text in generated.items():
            (Path(scratch) / relative).parent.mkdir(parents=True, exist_ok=True)
            (Path(scratch) / relative).write_text(text, encoding="utf-8")
        runtime.upload(Path(scratch), copy.path)


def _copy_host(source: Path, copy: Path, relative: str) -> None:
    """``source`` (the problem's tests) to ``relative`` in the workspace copy ``copy``, whose contents are the
    agent's: a symbolic link it left on the way (``tests -> /tmp/elsewhere``) is replaced, never followed
    (:func:`~agentrig.boundary.copy_under`), so the tests land in the copy and nowhere else."""
    from agentrig.boundary import copy_under

    copy_under(copy, relative, source, f"test files '{shorten(relative)}'", replace_links=True)


def _unlink_on_the_way(runtime: Runtime, copy: str, relatives: list[str]) -> None:
    """Every symbolic link on the way to each of ``relatives`` in the copy ``copy`` (a path in the runtime: a
    container's) removed, in one command, as :func:`_copy_host` replaces them on the host: a link the agent left
    (``tests -> /elsewhere``) neither carries the tests elsewhere nor makes their upload fail."""
    from agentrig.boundary import check_relative

    if not relatives:
        return
    for relative in relatives:
        check_relative(relative, f"test files '{shorten(relative)}'")
    script = (
        'set -f; base="$1"; shift; for rel in "$@"; do p="$base"; IFS=/; for c in $rel; do '
        '[ -n "$c" ] || continue; p="$p/$c"; if [ -L "$p" ]; then rm -f "$p"; fi; done; unset IFS; done'
    )
    runtime.exec(Invocation(["sh", "-c", script, "sh", copy, *relatives], timeout=600))


def _read_report(runtime: Runtime, copy: WorkspaceCopy, spec: ReportSpec) -> bytes | None:
    """The report ``spec`` names, at most :func:`~agentrig.boundary.report_limit` bytes; ``None``
    when it was not written. A relative path in a copy on the host is opened one component at a
    time without following symbolic links (:func:`~agentrig.boundary.read_under`): a link the
    agent planted in its workspace (``report.json -> /proc/self/environ``) is refused, never read.
    Raises :class:`~agentrig.boundary.BoundaryError` (one line) for such a report or one too large."""
    from agentrig.boundary import BoundaryError, check_relative, read_under, report_limit, shorten

    limit = report_limit()
    host = copy.host
    path = spec.path
    where = f"report '{shorten(spec.path)}'"
    if not path.startswith("/"):
        check_relative(path, where)
        if host is not None:
            try:
                return read_under(host, path, where, limit)
            except FileNotFoundError:
                return None
        path = f"{copy.path}/{path}"
    data = runtime.read_file(path)
    if data is not None and len(data) > limit:
        raise BoundaryError(f"{where}: larger than {limit} bytes; not read")
    return data
