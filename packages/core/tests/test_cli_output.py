"""How the CLI talks: help for a bare command, quiet broken pipes, cells cut only on a terminal, amounts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.cli.output import print_table
from agentrig.formatting import money, tokens_text
from agentrig.run.progress import ProgressDisplay, ProgressEvent
from agentrig.run.records import CheckpointResultLine, Totals

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))


def test_bare_agentrig_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: agentrig") and "agents" in captured.out and "run" in captured.out
    assert captured.err == ""


def test_a_closed_pipe_ends_listing_quietly() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written, as with `| head -0`
    try:
        proc = subprocess.run([AGENTRIG, "agents", "list", "--json"], stdout=write, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write)
    assert proc.returncode == 141  # 128 + SIGPIPE, what a Unix tool killed by the pipe reports
    assert proc.stderr == b""


def test_long_cells_are_cut_only_on_a_terminal(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = "word " * 30
    print_table(["name", "description"], [["a", text]])
    assert text.strip() in capsys.readouterr().out  # piped: whole
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    print_table(["name", "description"], [["a", text]])
    out = capsys.readouterr().out
    assert "…" in out and text.strip() not in out


def test_token_counts_and_money() -> None:
    assert [tokens_text(n) for n in (950, 5600, 999_949, 999_950, 5_052_000)] == ["950", "5.6k", "999.9k", "1.0M", "5.1M"]
    assert money(None) == "n/a" and money(0.0) == "$0.0000"


def test_unknown_cost_is_never_zero_in_totals_or_progress() -> None:
    known = CheckpointResultLine(problem="p", checkpoint="a", index=0, status="passed", cost=0.5)
    unknown = CheckpointResultLine(problem="p", checkpoint="b", index=1, status="passed", cost=None, cost_known=False)
    older = CheckpointResultLine(problem="p", checkpoint="c", index=2, status="passed", cost=0.0, cost_known=False)
    assert Totals.of([known]).cost == 0.5
    assert Totals.of([known, unknown]).cost is None and Totals.of([older]).cost is None
    run = Totals()
    run.merge(Totals.of([known]))
    run.merge(Totals.of([unknown]))
    assert run.cost is None

    class Sink:
        text = ""

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    sink = Sink()
    display = ProgressDisplay(sink, live=False, verbosity=2)
    display(ProgressEvent(kind="step", problem="p", checkpoint="b", steps=1, tokens=5_052_000, cost=None))
    display(ProgressEvent(kind="checkpoint_end", problem="p", checkpoint="b", status="passed", steps=1, tokens=10, cost=None))
    assert "tokens 5.1M, cost n/a\n" in sink.text and sink.text.rstrip().endswith("cost n/a") and "$0.0000" not in sink.text
