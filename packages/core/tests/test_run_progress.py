"""Progress display: a live redraw on a terminal, plain log lines otherwise, --quiet and --verbose."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from agentrig.run.progress import ProgressDisplay, ProgressEvent

REPO = Path(__file__).resolve().parents[3]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _events() -> list[ProgressEvent]:
    return [
        ProgressEvent(kind="problem_start", problem="calc"),
        ProgressEvent(kind="checkpoint_start", problem="calc", checkpoint="add", index=0, total=2),
        ProgressEvent(kind="step", problem="calc", checkpoint="add", steps=1, tokens=1500, cost=0.01, message="bash"),
        ProgressEvent(kind="step", problem="calc", checkpoint="add", steps=2, tokens=3200, cost=0.02, message="submit"),
        ProgressEvent(kind="checkpoint_end", problem="calc", checkpoint="add", steps=2, tokens=3200, cost=0.02,
                      status="passed"),
        ProgressEvent(kind="log", problem="calc", checkpoint="mul", status="error", message="save_artifacts failed"),
        ProgressEvent(kind="problem_end", problem="calc", status="completed"),
    ]


def test_live_display_redraws_problem_checkpoint_steps_tokens_cost_elapsed():
    screen = Terminal()
    display = ProgressDisplay(screen)
    assert display.live
    for event in _events()[:3]:
        display(event)
    display.tick()
    out = screen.getvalue()
    row = out.rstrip("\n").splitlines()[-1]
    assert re.search(r"calc\s+add\s+1/2\s+running\s+steps\s+1\s+tokens\s+1\.5k\s+cost\s+\$0\.0100\s+0:0\d", row), row
    assert "\x1b[1F\x1b[J" in out  # the previous frame is erased before each redraw
    for event in _events()[3:]:
        display(event)
    display.close()
    final = screen.getvalue().split("\x1b[J")[-1]
    assert "completed" in final and "$0.0200" in final
    assert "calc: save_artifacts failed\n" in screen.getvalue()  # errors stay above the live rows


def test_plain_lines_when_not_a_terminal():
    stream = io.StringIO()
    display = ProgressDisplay(stream)
    assert not display.live
    for event in _events():
        display(event)
    assert stream.getvalue().splitlines() == [
        "calc: started",
        "calc/add: checkpoint 1/2 started",
        "calc/add: passed - steps 2, tokens 3.2k, cost $0.0200",
        "calc/mul: save_artifacts failed",
        "calc: completed",
    ]
    assert "\x1b" not in stream.getvalue()


def test_verbose_adds_a_line_per_step_and_quiet_keeps_only_errors():
    verbose, quiet = io.StringIO(), io.StringIO()
    for stream, verbosity in ((verbose, 2), (quiet, 0)):
        display = ProgressDisplay(stream, verbosity=verbosity)
        for event in _events():
            display(event)
    assert "calc/add: step 1: bash - checkpoint so far: steps 1, tokens 1.5k, cost $0.0100" in verbose.getvalue()
    assert quiet.getvalue() == "calc/mul: save_artifacts failed\n"
    assert not ProgressDisplay(Terminal(), verbosity=0).live


def test_agentrig_run_on_a_terminal_draws_live(tmp_path):
    """The real CLI under a pseudo-terminal: the live display, not log lines."""
    agentrig = Path(sys.executable).with_name("agentrig")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(agentrig), "run", "examples/greeter", "--agent", "react",
         "--model", "replay/examples/greeter/replay.jsonl", "--output", str(tmp_path / "run")],
        cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower,
    )
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    stdout, _ = proc.communicate(timeout=60)
    os.close(leader)
    assert proc.returncode == 0
    text = seen.decode()
    assert "\x1b[" in text and "checkpoint 1/2 started" not in text
    assert re.search(r"greeter\s+command_line\s+2/2\s+completed\s+steps\s+3", text), text[-500:]
    assert b"2 checkpoints: 2 passed" in stdout


def test_a_verbose_step_line_says_what_the_step_was() -> None:
    """``-v``: each step labelled (a model call with its tokens, a tool with its exit code), never unlabelled."""
    from agentrig.run.step_labels import step_label
    from agentrig.trajectory import ErrorStep, LLMCall, ThinkingStep, ToolUseStep
    from agentrig.usage import TokenUsage

    call = LLMCall(model="m", usage=TokenUsage(input=1234, output=56))
    assert step_label(call) == "model call (act: 1,234 in, 56 out)"
    assert step_label(call.model_copy(update={"cache_hit": True, "tag": "summary"})) == (
        "model call (summary: 1,234 in, 56 out, from the cache)"
    )
    assert step_label(ToolUseStep(tool="bash", exit_code=2)) == "tool bash (exit 2)"
    assert step_label(ToolUseStep(tool="read_file", is_error=True)) == "tool read_file (error)"
    assert step_label(ThinkingStep(content="secret reasoning")) == "thinking"  # never the content
    assert step_label(ErrorStep(message="boom", error_type="format_error")) == "error (format_error)"
    stream = io.StringIO()
    display = ProgressDisplay(stream, verbosity=2)
    display(ProgressEvent(kind="step", problem="p", checkpoint="c", steps=1, tokens=1290, cost=0.0, message=step_label(call)))
    assert stream.getvalue() == (
        "p/c: step 1: model call (act: 1,234 in, 56 out) - checkpoint so far: steps 1, tokens 1.3k, cost $0.0000\n"
    )
