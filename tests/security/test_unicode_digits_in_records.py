"""Issue 32, section 4: a recorded problem ``greeter/attempt_²`` crashed ``show``, ``compare``, ``view``,
``export``, ``evaluate`` and ``replay`` (``ValueError: invalid literal for int()``, exit 3):
``str.isdigit`` accepts ``²``, which ``int`` refuses. Numbers parsed from a record or a name read back
are ASCII digits only (:func:`agentrig.boundary.ascii_number`): such a problem is a name that is not
valid, left out with one warning by the commands that show a run, refused in one line by those that
need it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentrig.boundary import ascii_number
from agentrig.cli import main
from agentrig.run.records import is_safe_unit, split_unit

CRAFTED = "greeter/attempt_\u00b2"


def test_only_ascii_digits_are_numbers() -> None:
    assert ascii_number("12") == 12
    assert ascii_number("\u00b2") is None and ascii_number("\u0663") is None and ascii_number("") is None
    assert split_unit(CRAFTED) == (CRAFTED, None) and not is_safe_unit(CRAFTED)
    assert split_unit("greeter/attempt_\u0663") == ("greeter/attempt_\u0663", None)  # not attempt 3


@pytest.mark.parametrize("command", ["show", "compare", "view", "export", "evaluate", "replay"])
def test_a_problem_named_with_a_superscript_digit_does_not_crash_a_reader(
    greeter_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    run = tmp_path / "sent"
    shutil.copytree(greeter_run, run, symlinks=True)
    record = json.loads((run / "run.json").read_text())
    record["problems"][CRAFTED] = record["problems"]["greeter"]
    (run / "run.json").write_text(json.dumps(record))
    args = {
        "show": ["show", str(run)],
        "compare": ["compare", str(run), str(greeter_run)],
        "view": ["view", str(run), "--out", str(tmp_path / "report")],
        "export": ["export", str(run), "--format", "jsonl", "-o", str(tmp_path / "export.jsonl")],
        "evaluate": ["evaluate", str(run)],
        "replay": ["replay", str(run)],
    }[command]

    status = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "ValueError" not in err and "invalid literal" not in err, err
    named = [line for line in err.splitlines() if CRAFTED in line]
    assert named and "is not a valid" in named[0], err
    if command in ("evaluate", "replay"):  # they need the record: refused in one line, nothing run
        assert status == 2 and named[0].startswith("agentrig: error: ") and len(err.strip().splitlines()) == 1, err
    else:  # the rest of the run is shown
        assert status == 0 and named[0].startswith("agentrig: warning: "), err
