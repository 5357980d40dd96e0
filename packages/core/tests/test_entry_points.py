"""The fast entry-point scanner agrees with importlib.metadata."""

from __future__ import annotations

import sys
import zipfile
from importlib import metadata
from pathlib import Path

from agentrig.entry_points import DeclaredEntryPoint, from_metadata, installed_entry_points


def _as_set(eps: list[DeclaredEntryPoint]) -> set[tuple]:
    return {(e.name, e.value, e.distribution, e.version) for e in eps}


def test_agrees_with_importlib_metadata_on_this_environment():
    for group in ("agentrig", "console_scripts", "pytest11"):
        ours = installed_entry_points(group)
        theirs = from_metadata(metadata.entry_points(group=group))
        assert _as_set(ours) == _as_set(theirs), group
    assert {e.name for e in installed_entry_points("agentrig")} >= {"core", "react", "miniswe", "claude_code"}


def _dist(root: Path, dirname: str, name: str, version: str, entry_points: str) -> None:
    info = root / dirname
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nName: not-this\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_first_distribution_of_a_name_wins_and_sections_are_respected(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    _dist(first, "my_plugin-2.0.dist-info", "My-Plugin", "2.0", "[agentrig]\nmine = my_plugin.plugin\n")
    _dist(second, "my.plugin-1.0.dist-info", "my.plugin", "1.0", "[agentrig]\nold = my_plugin.old\n")
    _dist(second, "other-3.egg-info", "other", "3", "# comment\n[console_scripts]\nx = y:z\n\n[agentrig]\n  spaced  =  pkg.mod:attr \n")
    found = installed_entry_points("agentrig", [str(first), str(second), str(tmp_path / "missing")])
    assert _as_set(found) == {("mine", "my_plugin.plugin", "My-Plugin", "2.0"), ("spaced", "pkg.mod:attr", "other", "3")}


def test_zipped_path_entries_defer_to_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped_agent-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped-agent\nVersion: 1.0\n")
        zf.writestr("zipped_agent-1.0.dist-info/entry_points.txt", "[agentrig]\nzipped = zipped_agent.plugin\n")
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    assert ("zipped", "zipped_agent.plugin", "zipped-agent", "1.0") in _as_set(installed_entry_points("agentrig"))


def test_load_imports_module_and_attribute():
    assert DeclaredEntryPoint("x", "json").load().__name__ == "json"
    assert DeclaredEntryPoint("x", "json:JSONDecoder.decode").load().__qualname__ == "JSONDecoder.decode"
