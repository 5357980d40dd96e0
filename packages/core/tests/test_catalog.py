"""The model catalog: shipped data, user and --models-dir layers, --model resolution."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from agentrig.catalog import (
    CatalogError,
    ModelResolutionError,
    UnknownModelWarning,
    load_catalog,
    resolve_model,
    user_models_dir,
)


@pytest.fixture(autouse=True)
def _no_user_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real ~/.config must not leak into these tests.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_shipped_catalog_prices_current_models() -> None:
    catalog = load_catalog()
    ids = {m.id for m in catalog}
    assert {"anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-5", "anthropic/claude-haiku-4-5"} <= ids
    assert {"openai/gpt-5", "openai/gpt-5-mini", "openai/gpt-4.1", "openai/gpt-4o"} <= ids
    for model in catalog:
        assert model.pricing is not None, model.id
        assert model.pricing.output >= model.pricing.input > 0, model.id
        assert model.context_window and model.max_output_tokens, model.id
    assert {"gemini/gemini-2.5-pro", "gemini/gemini-2.5-flash", "gemini/gemini-3-pro-preview"} <= ids
    flash = catalog.models["gemini/gemini-2.5-flash"]  # the gemini_cli agent's models are priced
    assert flash.pricing is not None and (flash.pricing.input, flash.pricing.output, flash.pricing.cache_read) == (0.3, 2.5, 0.03)
    sonnet = catalog.models["anthropic/claude-sonnet-4-5"]
    assert sonnet.pricing is not None and (sonnet.pricing.cache_read, sonnet.pricing.cache_write) == (0.3, 3.75)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        ("sonnet", "anthropic/claude-sonnet-4-5"),
        ("SONNET", "anthropic/claude-sonnet-4-5"),
        ("claude-haiku-4-5", "anthropic/claude-haiku-4-5"),
        ("gpt-5-mini", "openai/gpt-5-mini"),
        ("claude-opus-4-5-20251101", "anthropic/claude-opus-4-5"),
        # A dated snapshot named with its provider is sent as written, priced as its entry.
        ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5-20250929"),
    ],
)
def test_resolve_ids_aliases_and_names(spec: str, expected: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = resolve_model(spec)
    assert model.id == expected
    assert model.pricing is not None


def test_unknown_provider_name_resolves_with_unknown_cost_and_a_warning() -> None:
    with pytest.warns(UnknownModelWarning, match="cost is unknown"):
        model = resolve_model("openai/gpt-99-experimental")
    assert (model.provider, model.name, model.pricing) == ("openai", "gpt-99-experimental", None)


def test_model_names_with_slashes_keep_them() -> None:
    with pytest.warns(UnknownModelWarning):
        model = resolve_model("openrouter/anthropic/claude-3.7")
    assert (model.provider, model.name) == ("openrouter", "anthropic/claude-3.7")


@pytest.mark.parametrize(("spec", "match"), [("", "empty model"), ("   ", "empty model"), ("sonet", "did you mean 'sonnet'"),
                                             ("nonsense", "PROVIDER/NAME")])
def test_unresolvable_specs_are_one_line_errors(spec: str, match: str) -> None:
    with pytest.raises(ModelResolutionError, match=match) as caught:
        resolve_model(spec)
    assert "\n" not in str(caught.value)


def test_replay_provider(tmp_path: Path) -> None:
    replay = tmp_path / "calls.jsonl"
    replay.write_text("")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = resolve_model(f"replay/{replay}")
    assert model.provider == "replay" and Path(model.name) == replay and model.pricing is None
    with pytest.raises(ModelResolutionError, match="replay file not found"):
        resolve_model(f"replay/{tmp_path / 'missing.jsonl'}")
    with pytest.raises(ModelResolutionError, match="replay needs a file"):
        resolve_model("replay/")


def test_user_dir_and_models_dir_layers_override_in_order(tmp_path: Path) -> None:
    user = user_models_dir()
    user.mkdir(parents=True)
    (user / "mine.yaml").write_text(
        "models:\n"
        "  - provider: anthropic\n    name: claude-sonnet-4-5\n    aliases: [s45]\n"
        "    pricing: {input: 1, output: 2}\n"
        "  - provider: vllm\n    name: Qwen/Qwen3-Coder\n    aliases: [qwen]\n"
        "    base_url: http://127.0.0.1:8000/v1\n    pricing: {input: 0, output: 0}\n"
        "    agent_specific: {react: {max_steps: 12}}\n"
    )
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "override.yml").write_text("models:\n  - provider: vllm\n    name: Qwen/Qwen3-Coder\n    pricing: {input: 0.5, output: 1}\n")
    sonnet = resolve_model("s45")
    assert sonnet.pricing is not None and sonnet.pricing.input == 1
    # The user's entry replaced the built-in one, built-in aliases included.
    with pytest.raises(ModelResolutionError):
        resolve_model("sonnet")
    qwen = resolve_model("qwen")
    assert qwen.base_url == "http://127.0.0.1:8000/v1" and qwen.settings_for("react") == {"max_steps": 12}
    overridden = resolve_model("vllm/Qwen/Qwen3-Coder", models_dir=extra)
    assert overridden.pricing is not None and overridden.pricing.input == 0.5
    assert load_catalog(extra).sources["vllm/Qwen/Qwen3-Coder"] == str(extra / "override.yml")


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("models: [", "bad.yaml: invalid YAML at line 1, column 10: expected the node content"),
        ("- a\n- b\n", "expected a mapping"),
        ("models:\n  - provider: x\n    name: y\n    pricing: {input: -1, output: 1}\n", r"models\.0\.pricing\.input"),
        ("models:\n  - provider: x\n    name: y\n    colour: red\n", r"models\.0\.colour: Extra inputs"),
        ("models:\n  - name: y\n", r"models\.0\.provider: Field required"),
    ],
)
def test_bad_catalog_files_name_file_and_field(tmp_path: Path, content: str, match: str) -> None:
    (tmp_path / "bad.yaml").write_text(content)
    with pytest.raises(CatalogError, match=match) as caught:
        load_catalog(tmp_path)
    assert str(tmp_path / "bad.yaml") in str(caught.value)


def test_missing_models_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match=r"--models-dir .* is not a directory"):
        resolve_model("sonnet", models_dir=tmp_path / "nope")


def test_catalog_records_round_trip_as_json() -> None:
    model = resolve_model("opus")
    assert type(model).model_validate(json.loads(model.model_dump_json())) == model
