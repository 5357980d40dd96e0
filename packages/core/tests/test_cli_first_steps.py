"""What tripped a new user in the first hour (issue 37, item 7), each through the real CLI in-process:
problems that share a name are said to be refused in ``problems list``, ``--reduce`` on a run without
attempts is a usage error, ``agents show`` lists the fields inside ``cost_limits``, and a misspelt option
is named first, with the closest one, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.cli.exits import ExitStatus

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exited:  # argparse's own errors
        status = int(exited.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _problem(root: Path, directory: str, name: str) -> Path:
    path = root / directory
    path.mkdir(parents=True)
    (path / "c1.md").write_text("write out.txt\n")
    (path / "sol").mkdir()
    (path / "sol" / "out.txt").write_text("right\n")
    (path / "problem.yaml").write_text(
        f"name: {name}\ncheckpoints:\n  - name: c1\n    prompt: c1.md\n    test: grep -qx right out.txt\n    solution: sol\n"
    )
    return path


def test_problems_list_says_why_a_run_refuses_problems_that_share_a_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "set"
    _problem(data, "v1/reverse", "reverse")
    _problem(data, "v2/reverse", "reverse")
    _problem(data, "other", "other")
    status, out, err = _cli(capsys, "problems", "list", str(data))
    assert status == ExitStatus.OK and out.count("reverse") == 4  # two rows, name and path each
    warnings = [line for line in err.splitlines() if line.strip()]
    assert warnings == [(
        "agentrig: warning: 2 problems are named 'reverse' (v1/reverse, v2/reverse): `agentrig run` takes one of them"
        " at a time (names must be unique within a run): choose with --problem PATH or -x PATH, e.g. -x v1/reverse"
    )]
    # the way the warning names works
    status, out, err = _cli(capsys, "run", str(data), "--agent", "oracle", "-x", "v1/reverse", "-o", str(tmp_path / "r"), "-q")
    assert status == ExitStatus.OK, err
    status, _, err = _cli(capsys, "run", str(data), "--agent", "oracle", "-o", str(tmp_path / "r2"), "-q")
    assert status == ExitStatus.USAGE and "2 problems are named 'reverse'" in err and "--problem GLOB or -x GLOB" in err
    assert not (tmp_path / "r2").exists()


def test_the_example_directory_warns_of_its_two_reverse_problems(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _cli(capsys, "problems", "list", str(EXAMPLES))
    assert status == ExitStatus.OK and "2 problems are named 'reverse'" in err


def test_reduce_on_a_run_without_attempts_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "set"
    _problem(data, "one", "one")
    runs = []
    for name in ("a", "b"):
        status, _, err = _cli(capsys, "run", str(data), "--agent", "oracle", "-o", str(tmp_path / name), "-q")
        assert status == ExitStatus.OK, err
        runs.append(str(tmp_path / name))
    status, out, err = _cli(capsys, "show", runs[0], "--reduce", "mean")
    assert status == ExitStatus.USAGE and out == ""
    assert err.strip() == (
        "agentrig: error: --reduce mean: the run was not run with --attempts K: there are no attempts to reduce"
        " (drop --reduce, or run again with --attempts 5)"
    )
    status, _, err = _cli(capsys, "compare", *runs, "--reduce", "max")
    assert status == ExitStatus.USAGE and "--reduce max: none of the runs was run with --attempts K" in err
    assert _cli(capsys, "show", runs[0])[0] == ExitStatus.OK


def test_agents_show_lists_the_fields_inside_cost_limits(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _cli(capsys, "agents", "show", "react")
    assert status == ExitStatus.OK
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for field in ("cost_limit", "net_cost_limit", "step_limit", "time_limit", "token_limit"):
        assert f"cost_limits.{field}" in rows, out
        assert "0: no limit" in rows[f"cost_limits.{field}"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "x", "--agnet", "react"], "agentrig run: error: unknown option --agnet; did you mean --agent?"),
        (["run", "x", "--agent", "react", "--outptu", "o"], "agentrig run: error: unknown option --outptu; did you mean --output?"),
        (["show", "--jsn", "r"], "agentrig show: error: unknown option --jsn; did you mean --json?"),
        (["run", "x", "--zzzzzz"], "agentrig run: error: unknown option --zzzzzz (agentrig run --help"),
        (["run", "x"], "agentrig run: error: the following arguments are required: --agent"),
    ],
)
def test_a_misspelt_option_is_named_first_in_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    status, out, err = _cli(capsys, *argv)
    assert status == ExitStatus.USAGE and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith(expected), err
    assert err.rstrip().endswith("--help lists the options)")


REPLAY = EXAMPLES / "greeter" / "replay.jsonl"


def test_a_replay_model_is_spelt_one_way_in_show_export_and_the_resume_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from agentrig.agents.interface import get_agent_config_cls
    from agentrig.cli import build_parser
    from agentrig.cli.run import _resume_command
    from agentrig.run.plan import build_plan

    monkeypatch.chdir(EXAMPLES)
    out = tmp_path / "run"
    status, _, err = _cli(capsys, "run", "greeter", "--agent", "react", "--model", "replay/greeter/replay.jsonl", "-o", str(out), "-q")
    assert status == ExitStatus.OK, err
    spelt = f"replay:{REPLAY}"
    assert json.loads((out / "run.json").read_text())["identity"]["model"]["id"] == f"replay/{REPLAY}"  # as recorded
    status, text, _ = _cli(capsys, "show", str(out))
    assert f"model {spelt}," in text and "replay//" not in text
    status, _, _ = _cli(capsys, "export", str(out), "--format", "jsonl")
    first = json.loads((out / "exports" / "steps.jsonl").read_text().splitlines()[0])
    assert first["model"] == spelt
    # the spelling `show` prints is one `--model` takes: the same run, resumed
    status, _, err = _cli(capsys, "run", "greeter", "--agent", "react", "--model", spelt, "-o", str(out), "--resume")
    assert status == ExitStatus.OK and "nothing to resume" in err, err
    args = build_parser(plugin_commands=False).parse_args(["run", "greeter", "--agent", "react", "--model", spelt])
    plan = build_plan(get_agent_config_cls("react")(type="react"), model=args.model)
    command = _resume_command(args, plan, out)
    assert f"--model {spelt} " in command and "replay//" not in command


def test_new_agent_goes_where_the_readme_says_and_says_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = " ".join((EXAMPLES.parent / "README.md").read_text().split())
    assert "as ./agentrig-NAME (DIR/agentrig-NAME)" in readme
    monkeypatch.chdir(tmp_path)
    status, out, _ = _cli(capsys, "new", "agent", "my_bot")
    assert status == ExitStatus.OK
    assert [p.name for p in tmp_path.iterdir()] == ["agentrig-my-bot"]
    assert f"in {tmp_path.resolve() / 'agentrig-my-bot'}:" in out.splitlines()[0]  # absolute: no guessing where
