"""The model is shown as ``provider/name``, a replay file as ``replay:/path/replay.jsonl``: never with the
double slash ``replay//path`` the recorded id has, in every place a run is read back, exports included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.model_definition import ModelDefinition, model_label
from agentrig.run.records import ModelRecord

GREETER = Path(__file__).resolve().parents[1] / "examples" / "greeter"
REPLAY = GREETER / "replay.jsonl"
LABEL = f"replay:{REPLAY}"


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("label") / "run"
    assert main(["run", str(GREETER), "--agent", "react", "--model", f"replay/{REPLAY}", "--output", str(out), "-q"]) == 0
    return out


def test_the_label_is_built_from_provider_and_name() -> None:
    assert model_label("openai", "gpt-4o-mini") == "openai/gpt-4o-mini"
    assert model_label("replay", "/tmp/x/replay.jsonl") == "replay:/tmp/x/replay.jsonl"
    record = ModelRecord(id="replay//tmp/x/replay.jsonl", provider="replay", name="/tmp/x/replay.jsonl")
    assert record.label == "replay:/tmp/x/replay.jsonl"
    assert ModelDefinition(provider="openai", name="gpt-4o").label == "openai/gpt-4o"


def test_run_json_keeps_the_model_as_given(replayed: Path) -> None:
    # --resume compares it and gives it back to --model: the id is the `--model` form
    model = json.loads((replayed / "run.json").read_text())["identity"]["model"]
    assert model == {"id": f"replay/{REPLAY}", "provider": "replay", "name": str(REPLAY)}


def test_show_and_compare_print_the_label(replayed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(replayed)]) == 0
    text = capsys.readouterr().out
    assert f"model {LABEL}," in text and "replay//" not in text
    assert main(["show", str(replayed), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == LABEL
    assert main(["compare", str(replayed), str(replayed)]) == 0
    text = capsys.readouterr().out
    assert f"model {LABEL}, completed" in text and "replay//" not in text


def test_the_viewer_shows_the_label(replayed: Path, tmp_path: Path) -> None:
    assert main(["view", str(replayed), "--out", str(tmp_path / "report")]) == 0
    pages = [p for p in (tmp_path / "report").rglob("*") if p.suffix in (".html", ".json", ".js") and p.is_file()]
    written = {p: p.read_text() for p in pages}
    assert not [p for p, text in written.items() if "replay//" in text]
    assert any(LABEL in text for p, text in written.items() if p.name == "index.html")
    assert any(LABEL in text for p, text in written.items() if "greet_function" in str(p))


def test_the_jsonl_export_keeps_the_model_as_given(replayed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(replayed), "--format", "jsonl", "-o", "-"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["model"] for r in records} == {LABEL}  # what --model takes, spelt as show spells it (docs/exports.md)
