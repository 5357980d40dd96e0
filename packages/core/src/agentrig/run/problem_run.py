"""The per-problem run loop: one problem, every checkpoint, every artifact on disk as it appears.

For each checkpoint: write ``prompt.txt``, let the format prepare the
checkpoint (``prepare_checkpoint``; a failure there is the checkpoint's
infrastructure failure and its agent does not run), fire the lifecycle hooks around
``run_checkpoint`` (the trajectory is appended step by step meanwhile), write
``inference_result.json``, run the test, save the agent's artifacts, snapshot
the workspace with its ``diff.json``, emit the ``checkpoint_end`` event carrying
the checkpoint's ``results.jsonl`` line (the dispatcher records it: the commit
point ``--resume`` trusts), then ``finish_checkpoint``. When the format says
the later checkpoints must not run (``stop_after``: a Harbor step below its
``min_reward``), or the net cost limit is reached, each later checkpoint is
recorded as ``skipped`` with the reason as its ``stop_reason``; a resumed run
asks again about the last finished checkpoint, so an interruption between
the two changes nothing. At the end the format may give the problem a score
of its own (``problem_score``), kept in the problem's record.

Everything a run needs comes from its :class:`ProblemJob`, including which
checkpoints are finished (``job.finished``): nothing here reads state of the
dispatcher, and nothing here writes ``results.jsonl``, ``run.json`` or
``problem.json`` (the dispatcher's alone), so any executor can run it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.agents import lifecycle
from agentrig.atomic import append_line, truncate_torn_tail
from agentrig.run.diffs import diff_record
from agentrig.run.evaluation import REPORT_DIR, evaluate_checkpoint
from agentrig.run.fork import checkpoints_run
from agentrig.run.job import ProblemJob
from agentrig.run.layout import WORKSPACES_DIR, CheckpointPaths, RunDirectory, RunDirectoryError
from agentrig.run.progress import EventKind, EventSink, ProgressEvent
from agentrig.run.records import (
    CheckpointResultLine,
    CheckpointStatus,
    EvaluationRecord,
    ProblemRecord,
    Totals,
    TriesSpent,
    unit_name,
    utcnow,
)
from agentrig.run.signals import deferred_interrupts
from agentrig.runtime.interface import Invocation

if TYPE_CHECKING:
    from datetime import datetime

    from agentrig.agents.interface import Agent, CheckpointInferenceResult
    from agentrig.formats.interface import CheckpointStop
    from agentrig.llm.run_paths import RunPaths
    from agentrig.problem import Checkpoint, Problem
    from agentrig.workspace import Snapshot, Workspace

log = logging.getLogger(__name__)


def is_session_of(directory: str, session_name: str) -> bool:
    """Whether ``directory`` (a name under ``.workspaces``) is a session, or a session's environment
    scratch, of the unit whose session name is ``session_name``: ``agentrig-<name>-XXXXXXXX`` or
    ``agentrig-<name>-environment-XXXXXXXX`` exactly, so problem ``a`` never matches problem ``a-b``'s."""
    return re.fullmatch(rf"agentrig-{re.escape(session_name)}-(?:environment-)?[A-Za-z0-9_]{{8}}", directory) is not None


class ProblemRunError(RuntimeError):
    """The problem could not run at all (bad model, runtime, agent setup); one line."""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _status(result: CheckpointInferenceResult, evaluation: EvaluationRecord) -> CheckpointStatus:
    # An agent that raised ended the checkpoint in an error, whatever its tests then said of the
    # workspace it left (``passed`` keeps that): so the totals, `--retry-errors`, `replay` and the
    # exit status all count it as the error it is (the oracle without a solution is one).
    if evaluation.error is not None or evaluation.infrastructure_failure or result.had_error:
        return "error"
    if evaluation.passed is None:
        return "not_evaluated"
    return "passed" if evaluation.passed else "failed"


class _ProblemRun:
    def __init__(self, job: ProblemJob, emit: EventSink) -> None:
        from agentrig.run.problems import load_problem

        self.job = job
        self.emit = emit
        self.problem: Problem = load_problem(job.problem_path, job.problem_format)
        #: Where this run writes its files: the run directory, or a worker's own directory
        #: whose files are shipped to it (``job.work_dir``); paths recorded in artifacts name the run directory.
        self.run_dir = RunDirectory(Path(job.work_dir or job.output_dir))
        self.published = RunDirectory(Path(job.output_dir))
        #: The problem run's name in the run directory, run.json and progress: the problem's, or
        #: ``<problem>/attempt_<i>`` (what the executor keys the job by).
        self.unit = unit_name(self.problem.name, job.attempt)
        self.record = ProblemRecord(
            name=self.unit,
            path=str(self.problem.path),
            format=self.problem.format,
            checkpoints=[c.name for c in checkpoints_run(self.problem, job.plan.fork)],  # a fork's: after its fork point
        )
        self.agent: Agent | None = None
        self.session: Any = None
        self.plan = job.plan
        self.workspace: Workspace | None = None
        #: Every result line of this problem run: the finished ones handed in, then each committed here.
        self._lines: dict[str, CheckpointResultLine] = {}

    def run_paths(self) -> RunPaths:
        """This run's own paths, for the model-call cache: the current session's and the run directory's."""
        from agentrig.llm.run_paths import session_paths

        return session_paths(self.session, self.run_dir.root, self.published.root)

    # -- events ------------------------------------------------------------------

    def event(self, kind: EventKind, **fields: Any) -> None:
        fields.setdefault("total", len(self.problem.checkpoints))
        try:
            self.emit(ProgressEvent(kind=kind, problem=self.unit, time=time.time(), **fields))
        except Exception:  # a broken display must never break a run
            log.debug("progress sink failed", exc_info=True)

    # -- the run -------------------------------------------------------------------

    def run(self) -> ProblemRecord:
        record = self.record
        finished = {line.checkpoint: line for line in self.job.finished if line.unit == self.unit}
        self._lines = dict(finished)
        first = self.plan.fork.start if self.plan.fork is not None else 0  # a fork inherits the checkpoints before
        todo = [i for i, c in enumerate(self.problem.checkpoints) if c.name not in finished and i >= first]
        record.started = self.job.started or utcnow()
        record.totals = Totals.of(list(finished.values()))
        record.finished = len(finished)
        if not todo:
            record.status = "completed"
            record.ended = utcnow()
            record.score = self._problem_score()
            self.event("problem_end", status="completed", message="already finished")
            return record
        start = todo[0]
        record.status = "running"
        try:  # an interrupt from the first event on is answered by a problem_end
            self.event("problem_start", message=f"resuming at checkpoint {start + 1}" if finished else None)
            previous = self._prepare_workspace(start, finished)
            self._open(sum(line.spent or 0.0 for line in finished.values()), start)  # failed tries' money too
            net_limit_hit = self._net_limit_reached()
            stop = self._stop_before(start)
            for index in todo:
                checkpoint = self.problem.checkpoints[index]
                if net_limit_hit:
                    self._skip(index, checkpoint, "net_cost_limit", "net cost limit reached")
                    continue
                if stop is not None:
                    self._skip(index, checkpoint, stop.reason, stop.message)
                    continue
                previous, net_limit_hit, stop = self._checkpoint(index, checkpoint, previous)
            record.status = "completed"
            record.score = self._problem_score()
        except KeyboardInterrupt:
            record.status = "interrupted"  # the status says it all: no error line repeating it
            raise
        except Exception as exc:
            record.status = "failed"
            record.error = _one_line(exc)
            log.debug("problem %s failed", self.problem.name, exc_info=True)
        finally:
            with deferred_interrupts():
                self._close()
                record.ended = utcnow()
                self.event("problem_end", status=record.status, message=record.error)
        return record

    def _prepare_workspace(self, start: int, finished: dict[str, CheckpointResultLine]) -> Snapshot | None:
        """Open the session on a fresh workspace: the problem's files, or the last finished snapshot."""
        from agentrig.run.sessions import open_session
        from agentrig.workspace import Snapshot, WorkspaceError

        base = self.run_dir.root / WORKSPACES_DIR
        session_name = self.unit.replace("/", "-")  # hello-attempt_2: never a prefix of another attempt's
        self.run_dir.problem_dir(self.unit)  # a name that is not a plain one is refused before anything is touched
        stale_sessions = [p for p in base.iterdir() if is_session_of(p.name, session_name)] if base.is_dir() else []
        for stale in stale_sessions:
            try:  # left by a killed run: the snapshots are the truth
                self.run_dir.remove(stale)
            except OSError:
                log.debug("could not remove the stale session %s", stale, exc_info=True)
        seed = self.problem.path / self.problem.workspace if self.problem.workspace else None
        self.session = open_session(
            self.plan.runtime, self.plan.session_image, seed, session_name, base, self.plan.runtime_options, problem=self.problem,
            env=_run_marker(self.job), rebuild=self.job.rebuild,
        )
        self._record_network()
        seed = self.session.seed  # a format may seed the workspace itself (a Harbor task: its image's files)
        self.workspace = self.session.workspace
        self.session.problem = self.problem
        self._run_setup()
        previous: Snapshot | None = None
        for checkpoint in reversed(self.problem.checkpoints[:start]):
            snapshot_dir = self.run_dir.checkpoint(self.unit, checkpoint.name).snapshot
            if finished.get(checkpoint.name) is not None and snapshot_dir.is_dir():
                try:
                    previous = self.session.restore(self.run_dir.read_snapshot(snapshot_dir, f"cannot resume {self.unit}"))
                except RunDirectoryError as exc:
                    raise ProblemRunError(str(exc)) from None
                except WorkspaceError as exc:
                    raise ProblemRunError(f"cannot resume {self.unit}: {exc}") from None
                break
        if previous is None and self.plan.fork is not None:
            previous = self._restore_fork()
        if previous is None and seed is not None:
            # diff.json of the first checkpoint compares with the problem's own files,
            # hashed while the session copied them in (read again only if it did not)
            manifest = getattr(self.workspace, "seed_manifest", None) or _manifest_of(seed, self.workspace.ignore)
            previous = Snapshot(seed, manifest)
        # an unfinished checkpoint is redone from scratch: drop its partial artifacts (its earlier tries stay)
        for checkpoint in self.problem.checkpoints[start:]:
            if checkpoint.name not in finished:
                self.run_dir.clear_checkpoint(self.run_dir.checkpoint(self.unit, checkpoint.name))
        return previous

    def _restore_fork(self) -> Snapshot:
        """A fork's workspace: the snapshot of the checkpoint it was forked from, in another run."""
        from agentrig.run.fork import ForkError, restore_fork

        assert self.plan.fork is not None
        try:
            return restore_fork(self.session, self.plan.fork)
        except ForkError as exc:
            raise ProblemRunError(str(exc)) from None

    def _record_network(self) -> None:
        """The container's networks in the problem's record; what it could not have said once, as a warning."""
        from agentrig.run.records import NetworkRecord

        runtime = self.session.runtime
        notices = list(getattr(self.session, "notices", []))
        network = getattr(runtime, "network", None)
        if isinstance(network, str):
            notice = getattr(runtime, "network_notice", None)
            notices += [notice] if notice else []
            verifier = getattr(runtime, "verifier_network", network)
            bridge = getattr(runtime, "bridge_network", None)
            kind = {bridge: "bridge"} if bridge else {}  # what the network is, beside which network it was
            self.record.network = NetworkRecord(
                agent=kind.get(network, network), verifier=kind.get(verifier, verifier), bridge_network=bridge, notices=notices
            )
        for notice in notices:
            self.event("log", status="warning", message=notice)

    def _replies_used(self, start: int) -> int:
        """The model replies the checkpoints before ``start`` received: their trajectories' ``llm_call`` steps."""
        from agentrig.atomic import read_jsonl_lines

        used = 0
        for checkpoint in self.problem.checkpoints[:start]:
            path = self.run_dir.checkpoint(self.unit, checkpoint.name).trajectory
            for text in read_jsonl_lines(path, containing='"llm_call"', read=self.run_dir.read_bytes):
                try:
                    used += json.loads(text).get("kind") == "llm_call"
                except ValueError:
                    continue
        return used

    def _run_setup(self) -> None:
        """The problem's setup commands, in the fresh workspace; a failing one fails the problem."""
        for command in self.problem.setup:
            result = self.session.runtime.exec(Invocation(command, timeout=self.plan.test_timeout))
            if result.exit_code != 0 or result.timed_out:
                output = " ".join((result.stderr or result.stdout).split())[-300:]
                why = "timed out" if result.timed_out else f"exited with {result.exit_code}"
                raise ProblemRunError(f"setup command '{command}' {why}" + (f": {output}" if output else ""))

    def _open(self, prior_cost: float, start: int) -> None:
        from agentrig.agents.interface import Agent

        self.config = self.plan.agent_config_model()
        model = self.plan.model  # resolved once, where the plan was built
        if model is not None and model.provider == "replay" and start:
            # A resumed replay goes on with the replies of the checkpoint it resumes at.
            model = model.model_copy(update={"replay_start": self._replies_used(start)})
        # the agent config's own reset_context overrides the run's setting
        if self.config.reset_context is None:
            self.config = self.config.model_copy(update={"reset_context": self.plan.reset_context})
        self.agent = Agent.from_config(self.config, self.plan.agent_context(self.problem.name, model))
        self.agent.prior_cost = prior_cost
        # a task's verifier may take these from the host: what the agent's code prints of them is recorded nowhere
        self.agent.secrets.add(*(os.environ.get(name) for name in self.plan.verifier.allow_env))
        self.agent.add_step_listener(self._on_step)
        lifecycle.setup_agent(self.agent, self.session)
        fork = self.plan.fork
        if fork is not None and fork.context_dir is not None and start == fork.start:  # the fork's first checkpoint
            self.agent.restore_context(Path(fork.context_dir))

    def _net_limit_reached(self) -> bool:
        assert self.agent is not None
        return self.agent.hit_net_rate_limit()

    def _close(self) -> None:
        agent, self.agent = self.agent, None
        if agent is not None:
            try:
                lifecycle.cleanup_agent(agent)
            except Exception as exc:
                log.warning("%s: agent cleanup failed: %s", self.problem.name, _one_line(exc))
        session, self.session = self.session, None
        if session is not None:
            try:
                session.close()
            except Exception as exc:
                log.warning("%s: closing the session failed: %s", self.problem.name, _one_line(exc))
        self.workspace = None

    # -- one checkpoint ----------------------------------------------------------

    def _on_step(self, step: Any) -> None:
        append_line(self._trajectory, step.model_dump_json())
        if getattr(step, "kind", "") == "llm_call" and step.cost is None:
            self._cost_unknown = True  # a call without a price: the checkpoint's cost is a lower bound
        agent = self.agent
        if agent is None:
            return
        from agentrig.run.step_labels import step_label

        kind = getattr(step, "kind", "")
        message = step_label(step)
        if kind in ("llm_call", "tool_use") or self.plan.verbose:
            self.event(
                "step",
                checkpoint=self._current,
                index=self._index,
                steps=agent.usage.steps,
                tokens=agent.usage.net_tokens.total,
                cost=None if self._cost_unknown else agent.usage.cost,
                message=message,
            )

    def _stop_before(self, start: int) -> CheckpointStop | None:
        """Whether the checkpoints from ``start`` on are not run because of the finished one before it
        (a resumed run): its line says it was skipped (the reason goes on), or the format's
        ``stop_after`` says so of its recorded evaluation."""
        from agentrig.evaluation.records import EvaluationRecord
        from agentrig.formats.interface import CheckpointStop
        from agentrig.formats.resolve import get_format

        if start == 0:
            return None
        before = self.problem.checkpoints[start - 1]
        line = self._lines.get(before.name)
        if line is None:
            return None
        if line.status == "skipped":
            return CheckpointStop(line.stop_reason or "skipped", f"checkpoint '{before.name}' was not run")
        paths = self.run_dir.checkpoint(self.unit, before.name)
        try:
            evaluation = EvaluationRecord.model_validate_json(self.run_dir.read_bytes(paths.evaluation))
        except (OSError, ValueError):
            return None  # no record to ask about: the checkpoints run (what an older run did)
        return get_format(self.problem.format).stop_after(self.problem, before, evaluation, paths.root / REPORT_DIR)

    def _problem_score(self) -> Any:
        """The problem's own score from its result lines, when its format defines one (never fails the problem)."""
        from agentrig.formats.resolve import get_format

        lines = [self._lines[c.name] for c in self.problem.checkpoints if c.name in self._lines]
        try:
            return get_format(self.problem.format).problem_score(self.problem, lines)
        except Exception as exc:
            log.warning("%s: the problem's score could not be computed: %s", self.problem.name, _one_line(exc))
            return None

    def _prepare_checkpoint(self, checkpoint: Checkpoint) -> str | None:
        """The format's preparation of ``checkpoint`` before its agent; the one-line reason it failed, or ``None``."""
        from agentrig.formats.interface import CheckpointSetupError
        from agentrig.formats.resolve import get_format

        assert self.workspace is not None
        try:
            get_format(self.problem.format).prepare_checkpoint(self.problem, checkpoint, self.session.runtime, self.workspace.path)
        except CheckpointSetupError as exc:
            return " ".join(str(exc).split()) or type(exc).__name__
        return None

    def _not_run(self, why: str, prior_cost: float) -> tuple[CheckpointInferenceResult, EvaluationRecord]:
        """The records of a checkpoint whose preparation failed: the agent did not run, the
        evaluation is an infrastructure failure saying why."""
        from agentrig.agents.interface import CheckpointInferenceResult
        from agentrig.usage import UsageTracker

        now = utcnow()
        result = CheckpointInferenceResult(
            started=now, completed=now, elapsed=0.0, usage=UsageTracker(), had_error=False,
            stop_reason="setup_failed", prior_cost=prior_cost,
        )
        evaluation = EvaluationRecord(
            command=None, passed=False, started=now, elapsed=0.0, infrastructure_failure=True,
            error=f"before the agent: {why}",
        )
        return result, evaluation

    def _apply_time_limit(self, agent: Agent, checkpoint: Checkpoint) -> None:
        """The format's own limit on the agent (a Harbor task's ``[agent] timeout_sec``) as
        ``cost_limits.time_limit``, unless the agent config sets one (the config wins)."""
        if self.config.cost_limits.time_limit:
            return
        from agentrig.formats.resolve import get_format

        limit = get_format(self.problem.format).agent_time_limit(self.problem, checkpoint)
        agent.cost_limits = agent.cost_limits.model_copy(update={"time_limit": limit or 0.0})

    def _checkpoint(
        self, index: int, checkpoint: Checkpoint, previous: Snapshot | None
    ) -> tuple[Snapshot, bool, CheckpointStop | None]:
        """One checkpoint, its records written in order; the snapshot, whether the net cost limit was hit,
        and the format's word on the checkpoints after it."""
        assert self.agent is not None
        agent = self.agent
        paths: CheckpointPaths = self.run_dir.checkpoint(self.unit, checkpoint.name)
        task = self._begin(index, checkpoint, paths)
        started = utcnow()
        clock = time.monotonic()
        result, not_run = self._run_agent(checkpoint, task, paths)
        report_dir = self.run_dir.guard(paths.root / REPORT_DIR)
        evaluation = not_run if not_run is not None else self._evaluate(checkpoint, report_dir)
        evaluation = agent.secrets.model(evaluation)  # the tests ran the agent's code: its output is the agent's too
        if evaluation.left_out:
            self.event("log", checkpoint=checkpoint.name, status="warning", message=evaluation.left_out)
        self.run_dir.write_model(paths.evaluation, evaluation)
        stop = self._stop_after(checkpoint, evaluation, report_dir)
        self._save_artifacts(checkpoint, paths)
        snapshot = self._snapshot(index, paths, previous)
        self._quality(index, paths)
        line = self._result_line(index, checkpoint, result, evaluation, started, clock)
        retry = self._retry_wait(line, result, evaluation)
        if retry is not None:
            return self._try_again(index, checkpoint, paths, line, *retry)
        detail = result.stop_reason if result.stop_reason not in (None, "submitted", "no_tool_calls") else None
        self._commit(
            line,
            checkpoint=checkpoint.name,
            index=index,
            status=line.status,
            steps=line.steps,
            tokens=line.tokens.total,
            cost=line.cost,
            message=detail,
        )
        net_limit_hit = result.stop_reason == "net_cost_limit" or agent.hit_net_rate_limit()
        agent.finish_checkpoint(reset_context=bool(self.config.reset_context))
        return snapshot, net_limit_hit, stop

    def _begin(self, index: int, checkpoint: Checkpoint, paths: CheckpointPaths) -> str:
        """The checkpoint's directory, ``prompt.txt`` and trajectory file (a torn last line cut), its start
        announced; returns the task text."""
        self.run_dir.make_dir(paths.root)
        self._kept = self.run_dir.kept_tries(paths)
        self._try_number = max((kept.number for kept in self._kept), default=0) + 1
        task = self.problem.prompt_text(checkpoint)
        self.run_dir.write_text(paths.prompt, task)
        self._trajectory = self.run_dir.guard(paths.trajectory)  # appended step by step: checked once here
        truncate_torn_tail(self._trajectory)
        self._current, self._index = checkpoint.name, index
        self._cost_unknown = False
        self.event("checkpoint_start", checkpoint=checkpoint.name, index=index)
        return task

    def _run_agent(
        self, checkpoint: Checkpoint, task: str, paths: CheckpointPaths
    ) -> tuple[CheckpointInferenceResult, EvaluationRecord | None]:
        """The format prepares the checkpoint, then the agent runs it through the lifecycle; its
        ``inference_result.json`` is written. When the preparation failed the agent does not run: the
        evaluation saying why comes back too (else ``None``)."""
        assert self.agent is not None
        self.session.checkpoint = checkpoint
        not_ready = self._prepare_checkpoint(checkpoint)
        not_run: EvaluationRecord | None = None
        if not_ready is None:
            self._apply_time_limit(self.agent, checkpoint)
            result = lifecycle.run_checkpoint(self.agent, checkpoint, task, self.session.runtime)
        else:
            self.event("log", checkpoint=checkpoint.name, status="error", message=not_ready)
            result, not_run = self._not_run(not_ready, self.agent.prior_cost)
        published = self.published.checkpoint(self.unit, checkpoint.name)
        result.checkpoint_path = published.root
        result.snapshot_dir = published.snapshot
        result.artifacts_dir = published.agent
        self.run_dir.write_model(paths.inference_result, result)
        return result, not_run

    def _evaluate(self, checkpoint: Checkpoint, report_dir: Path) -> EvaluationRecord:
        """The checkpoint's tests on the workspace as the agent left it, with the run's settings."""
        assert self.workspace is not None
        return evaluate_checkpoint(
            self.session.runtime,
            self.workspace.path,
            self.problem,
            checkpoint,
            report_dir=report_dir,
            timeout=self.plan.test_timeout,
            policy=self.plan.pass_policy,
            allow_env=self.plan.verifier.allow_env,
            session_timeout=self.plan.test_session_timeout,
            readback=self.plan.readback,
        )

    def _save_artifacts(self, checkpoint: Checkpoint, paths: CheckpointPaths) -> None:
        """The agent's own artifacts in ``agent/``; its failure is logged beside them, never the checkpoint's.
        They and the tests' reports are then scrubbed of every secret the agent holds (:attr:`Agent.secrets`)."""
        assert self.agent is not None
        self.run_dir.make_dir(paths.agent)
        try:
            self.agent.save_artifacts(paths.agent)
        except Exception as exc:  # the checkpoint's other records are still worth keeping
            self.run_dir.write_text(paths.agent / "save_artifacts_error.txt", self.agent.secrets.text(traceback.format_exc()))
            message = f"save_artifacts failed: {self.agent.secrets.text(_one_line(exc))}"
            self.event("log", checkpoint=checkpoint.name, status="error", message=message)
        for directory in (paths.agent, paths.root / REPORT_DIR):
            self.agent.secrets.tree(self.run_dir.guard(directory))

    def _snapshot(self, index: int, paths: CheckpointPaths, previous: Snapshot | None) -> Snapshot:
        """The workspace's ``snapshot/`` (unchanged files linked, not copied) and ``diff.json`` against the previous one."""
        assert self.workspace is not None
        snapshot = self.workspace.snapshot(self.run_dir.guard(paths.snapshot), previous, self.plan.readback)
        if snapshot.manifest.left_out:
            self.event("log", checkpoint=self.problem.checkpoints[index].name, status="warning", message=snapshot.manifest.left_out)
        base = self.problem.checkpoints[index - 1].name if index and previous is not None else "initial"
        self.run_dir.write_model(paths.diff, diff_record(base, previous, snapshot))
        return snapshot

    def _quality(self, index: int, paths: CheckpointPaths) -> None:
        """``quality.json`` beside the snapshot when metrics are asked for; off the agent's path (a failing
        metric is recorded in it, and even a failure to record is one log line, never the run's)."""
        names = self.plan.metrics_for(self.problem.format)
        if not names:
            return
        from agentrig.metrics.record import record_quality

        before = self.run_dir.checkpoint(self.unit, self.problem.checkpoints[index - 1].name).root if index else None
        try:
            record_quality(self.run_dir.root, paths.root, names, before)
        except Exception as exc:
            self.event("log", checkpoint=paths.root.name, status="error", message=f"metrics: {_one_line(exc)}")

    def _result_line(
        self,
        index: int,
        checkpoint: Checkpoint,
        result: CheckpointInferenceResult,
        evaluation: EvaluationRecord,
        started: datetime,
        clock: float,
    ) -> CheckpointResultLine:
        """The checkpoint's ``results.jsonl`` line; ``clock``: the monotonic time it started. An unknown cost
        is never zero; the score is the evaluation's (decided once, ``evaluation.json`` holds the same)."""
        return CheckpointResultLine(
            problem=self.problem.name,
            attempt=self.job.attempt,
            checkpoint=checkpoint.name,
            index=index,
            status=_status(result, evaluation),
            passed=evaluation.passed,
            exit_code=evaluation.exit_code,
            had_error=result.had_error,
            stop_reason=result.stop_reason,
            cost=None if self._cost_unknown else result.usage.cost,
            cost_known=not self._cost_unknown,
            prior_cost=result.prior_cost,
            steps=result.usage.steps,
            tokens=result.usage.net_tokens,
            agent_elapsed=result.elapsed,
            evaluation_elapsed=evaluation.elapsed,
            elapsed=time.monotonic() - clock,
            started=started,
            completed=utcnow(),
            score=evaluation.score,
            policy=evaluation.policy,
            infrastructure_failure=evaluation.infrastructure_failure,
            timed_out=evaluation.timed_out,
            not_run=evaluation.not_run,
            tries=self._try_number if self._try_number > 1 else None,
            tries_spent=TriesSpent.of([kept.result for kept in self._kept]),  # a failed try's money is spent
            tests=evaluation.counts,
            groups=evaluation.groups,
            metrics=evaluation.metrics,
        )

    def _retry_wait(
        self, line: CheckpointResultLine, result: CheckpointInferenceResult, evaluation: EvaluationRecord
    ) -> tuple[str, float] | None:
        """Why this try is worth another and how long to wait first (:mod:`agentrig.run.retries`), or ``None``:
        a verdict, a limit, an error not worth it, or ``--retries`` used up (automatic retries already kept count)."""
        from agentrig.run.retries import retry_cause

        policy = self.plan.retry
        used = sum(kept.reason == "retries" for kept in self._kept)
        if used >= policy.retries:
            return None
        error = self.agent.checkpoint_error if self.agent is not None else None
        cause = retry_cause(line.status, result, evaluation, error)
        return None if cause is None else (cause, policy.delay(used + 1))

    def _try_again(
        self, index: int, checkpoint: Checkpoint, paths: CheckpointPaths, line: CheckpointResultLine, cause: str, delay: float
    ) -> tuple[Snapshot, bool, CheckpointStop | None]:
        """Keep the failed try in ``tries/<n>/``, wait, then run the checkpoint again as ``--resume`` would start
        it: a fresh session from the previous checkpoint's snapshot, a fresh agent (its earlier conversation is not kept)."""
        from agentrig.run.records import TryRecord

        used = sum(kept.reason == "retries" for kept in self._kept) + 1
        self.event(
            "log", checkpoint=checkpoint.name, index=index, status="warning",
            message=f"try {self._try_number} ended in {cause}; trying again in {delay:.1f} s (retry {used} of {self.plan.retry.retries})",
        )
        record = TryRecord(number=self._try_number, reason="retries", cause=cause, result=line, delay=delay)
        self.run_dir.keep_try(paths, record)
        self._close()
        time.sleep(delay)
        previous = self._prepare_workspace(index, self._lines)
        self._open(sum(done.spent or 0.0 for done in self._lines.values()) + (line.spent or 0.0), index)
        return self._checkpoint(index, checkpoint, previous)

    def _stop_after(self, checkpoint: Checkpoint, evaluation: EvaluationRecord, report_dir: Path) -> CheckpointStop | None:
        """The format's word on the checkpoints after ``checkpoint`` (a format's bug never stops them)."""
        from agentrig.formats.resolve import get_format

        try:
            return get_format(self.problem.format).stop_after(self.problem, checkpoint, evaluation, report_dir)
        except Exception as exc:
            log.warning("%s: stop_after failed: %s", self.problem.name, _one_line(exc))
            return None

    def _skip(self, index: int, checkpoint: Checkpoint, reason: str, message: str) -> None:
        """Record ``checkpoint`` as not run, ``reason`` its ``stop_reason`` (``net_cost_limit``, ``min_reward``, ...)."""
        now = utcnow()
        line = CheckpointResultLine(
            problem=self.problem.name,
            attempt=self.job.attempt,
            checkpoint=checkpoint.name,
            index=index,
            status="skipped",
            stop_reason=reason,
            prior_cost=self.agent.prior_cost if self.agent is not None else 0.0,
            started=now,
            completed=now,
        )
        self._commit(line, checkpoint=checkpoint.name, index=index, status="skipped", message=message)

    def _commit(self, line: CheckpointResultLine, **fields: Any) -> None:
        """Hand the finished checkpoint's line to the dispatcher with its ``checkpoint_end`` event.

        Every artifact of the checkpoint is written before: the dispatcher
        records the line (``results.jsonl``) on receipt, which commits the
        checkpoint. Unlike other events a failure to send it is the problem's failure.
        """
        self.emit(
            ProgressEvent(
                kind="checkpoint_end", problem=self.unit, time=time.time(), total=len(self.problem.checkpoints),
                result=line, **fields,
            )
        )
        self.record.finished += 1
        self.record.totals.add(line)
        self._lines[line.checkpoint] = line


def _manifest_of(root: Path, ignore: tuple[str, ...]) -> Any:
    """The manifest of the files under ``root`` as they are now (hashes only, no copy)."""
    from agentrig.workspace import FileRecord, SnapshotManifest, hash_file, iter_files

    records = []
    for rel, path in iter_files(root, ignore):
        if path.is_symlink():
            import os

            records.append(FileRecord(path=rel, kind="symlink", target=os.readlink(path), mode=0o777))
        else:
            info = path.stat()
            records.append(FileRecord(path=rel, size=info.st_size, sha256=hash_file(path), mode=info.st_mode & 0o7777))
    return SnapshotManifest(created=utcnow(), ignore=list(ignore), files=records, total_size=sum(r.size for r in records))


def _run_marker(job: ProblemJob) -> dict[str, str] | None:
    """The run's marker for every command (``AGENTRIG_RUN_ID``), swept by ``--resume`` after a ``kill -9``."""
    from agentrig.scratch import RUN_ENV

    return {RUN_ENV: job.run_id} if job.run_id else None


def run_problem(job: ProblemJob, emit: EventSink) -> ProblemRecord:
    """Run every unfinished checkpoint of ``job``'s problem; return its record.

    A failure of the problem (model, runtime, agent setup, a crash) is recorded
    in the returned record, not raised; ``KeyboardInterrupt`` (Ctrl-C, SIGTERM)
    is raised after the agent is cleaned up and what exists is written.
    """
    from agentrig.llm.cache import use_cache
    from agentrig.llm.run_paths import use_run_paths

    run = _ProblemRun(job, emit)
    # in the process that runs the problem, from its plan; the cache keys its requests without the run's paths
    with use_cache(job.plan.model_cache), use_run_paths(run.run_paths):
        return run.run()
