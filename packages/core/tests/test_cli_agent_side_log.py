"""What the CLI agents' base gives an agent whose CLI logs besides its stream (Codex, the Gemini CLI): its
parser made and checked by kind, and the side log's new lines handed to it while the CLI runs, a limit
killing the CLI on what that log says even while its stream is silent.

A third party's CLI agent (a shell script as its CLI, in the real local runtime) writes nothing of its
own for that: it sets ``_log_tail`` in ``setup`` and makes its parser with ``_make_parser``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

import agentrig
from agentrig.agents.cli_agent import CliAgent
from agentrig.agents.cli_config import CliAgentConfig
from agentrig.agents.cli_log import LogTail
from agentrig.errors import AgentSetupError
from agentrig.model_definition import ModelDefinition
from agentrig.runtime.interface import RuntimeEvent
from agentrig.testing.cli_agents import live_processes, local_session
from agentrig.trajectory import TrajectoryStep
from agentrig.usage import AgentCostLimits, TokenUsage, UsageTracker


class PlainParser:
    """A parser of another CLI's stream (no side log): a :class:`StreamParser`, not of the demo agent's kind."""

    def __init__(self, *, pricing: Any = None, model: str = "", usage: UsageTracker | None = None) -> None:
        self._usage = usage if usage is not None else UsageTracker()

    @property
    def usage(self) -> UsageTracker:
        return self._usage

    def consume(self, event: RuntimeEvent) -> None:
        pass

    def drain_steps(self) -> Iterator[TrajectoryStep]:
        return iter(())

    def finish(self) -> Iterator[TrajectoryStep]:
        return iter(())


class SideLogParser(PlainParser):
    """A parser of the demo CLI: its stream says nothing; each line of its side log is one model call."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.session_lines: list[str] = []

    def consume_session_line(self, line: str) -> None:
        self.session_lines.append(line)
        self._usage.step(TokenUsage(input=10, output=1), 0.0)


class _Parsers:
    @agentrig.hookimpl
    def agentrig_stream_parsers(self) -> list[agentrig.StreamParserSpec]:
        return [
            agentrig.StreamParserSpec(name="demo-side-log", parser=f"{__name__}:SideLogParser"),
            agentrig.StreamParserSpec(name="demo-plain", parser=f"{__name__}:PlainParser"),
        ]


class DemoConfig(CliAgentConfig):
    type: Literal["demo_side_log"] = "demo_side_log"
    stream_parser: str = "demo-side-log"


class DemoAgent(CliAgent):
    """Runs ``script`` (a shell command: the demo CLI) with its side log ``log``."""

    config_class = DemoConfig

    def __init__(self, config: DemoConfig, log: Path, script: str, limits: AgentCostLimits) -> None:
        model = ModelDefinition(provider="demo", name="demo-model")
        super().__init__("demo_side_log", config.model_copy(update={"cost_limits": limits}), model, None, "p", False,
                         default_binary="sh")
        self.log_path, self.script = log, script
        self.parser: SideLogParser | None = None

    def setup(self, session: Any) -> None:
        self._session, self._runtime = session, session.runtime
        self._log_tail = LogTail(self.log_path.parent, self.log_path.name)

    def run(self, task: str) -> None:
        self._begin_checkpoint(task)
        self._start_scratch("agentrig-demo-run-")
        self.parser = self._make_parser(SideLogParser, "demo-side-log")
        self._run_cli(["sh", "-c", self.script], task, self.parser)
        self._conclude_kill(None)
        self.stop_reason = "completed"

    def save_artifacts(self, path: Path) -> None:
        self._save_common_artifacts(path, None)


def test_the_side_log_is_read_while_the_cli_runs_and_a_limit_kills_it_on_what_it_says(
    plugin_registry: Any, tmp_path: Path
) -> None:
    agentrig.plugins.register(_Parsers(), name="demo-parsers")
    log = tmp_path / "logs" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("an earlier checkpoint's call\n")
    tag = f"DEMO-SIDE-LOG-{time.monotonic_ns()}"
    # two model calls logged, then a tool that runs for a minute while the stream is silent
    script = (f"echo working; printf 'call 1\\ncall 2\\n' >> {log}; python3 -c 'import time; time.sleep(60)' {tag}"
              " && echo late > late.txt")
    with local_session(tmp_path / "session") as session:
        agent = DemoAgent(DemoConfig(), log, script, AgentCostLimits(step_limit=2))
        agent.setup(session)
        try:
            result = agent.run_checkpoint("go")
            assert result.stop_reason == "step_limit" and not result.had_error, result.error_message
            assert not (session.workspace.path / "late.txt").exists(), "the CLI was not killed while its tool ran"
            assert agent.parser is not None and agent.parser.session_lines == ["call 1", "call 2"]
            assert result.usage.steps == 2
            time.sleep(0.3)
            assert live_processes(tag) == [], "the killed CLI's tool survives"
        finally:
            agent.cleanup()


def test_a_stream_parser_of_another_kind_is_refused_in_one_line(plugin_registry: Any, tmp_path: Path) -> None:
    agentrig.plugins.register(_Parsers(), name="demo-parsers")
    log = tmp_path / "session.jsonl"
    with local_session(tmp_path / "session") as session:
        agent = DemoAgent(DemoConfig(stream_parser="demo-plain"), log, "echo never > ran.txt", AgentCostLimits())
        agent.setup(session)
        try:
            with pytest.raises(AgentSetupError) as raised:
                agent.run("go")
            assert str(raised.value) == (
                "stream_parser 'demo-plain' makes a PlainParser; the demo_side_log agent needs a parser of the demo-side-log "
                f"kind (a subclass of {__name__}.SideLogParser)"
            )
            assert not (session.workspace.path / "ran.txt").exists()  # refused before the CLI started
        finally:
            agent.cleanup()
