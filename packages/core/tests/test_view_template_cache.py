"""The report's templates compiled once, then read from the user's cache directory (issue 25, item 13): the
same pages from a damaged entry, an unusable directory, a directory others may write (not used)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.runs import outcome_run
from agentrig.view.render import Report
from agentrig.view.template_cache import TEMPLATES_DIR, TemplateCache

PAGES = ("index.html", "runs/1/alpha.html", "runs/1/alpha/first.html", "search.html")


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return outcome_run(tmp_path / "run")


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def _pages(report: Report) -> dict[str, bytes]:
    out = {}
    for path in PAGES:
        page = report.render(path)
        assert page is not None, path
        out[path] = page.body
    return out


def _compiled(report: Report, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The templates ``report``'s environment compiles from now on (Jinja's own compiler, counted)."""
    names: list[str] = []
    compile_source = report.env.compile

    def counting(source: Any, name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        names.append(str(name))
        return compile_source(source, name, *args, **kwargs)

    monkeypatch.setattr(report.env, "compile", counting)
    return names


def _entries(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "agentrig" / TEMPLATES_DIR).glob("*.cache"))


def test_templates_are_compiled_once_then_read_from_the_cache(run: Path, cache_home: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    first = Report([run])
    compiled = _compiled(first, monkeypatch)
    pages = _pages(first)
    assert "checkpoint.html" in compiled and "base.html" in compiled
    assert len(_entries(cache_home)) == len(set(compiled))
    directory = cache_home / "agentrig" / TEMPLATES_DIR
    assert directory.stat().st_mode & 0o077 == 0  # the user's own: its entries are code this process runs

    second = Report([run])
    again = _compiled(second, monkeypatch)
    assert _pages(second) == pages
    assert again == []  # every template from the cache


def test_a_damaged_entry_is_compiled_again(run: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pages = _pages(Report([run]))
    entries = _entries(cache_home)
    for entry in entries:  # Jinja's header kept, the rest cut: its pickled checksum cannot be read
        entry.write_bytes(entry.read_bytes()[:12])
    report = Report([run])
    compiled = _compiled(report, monkeypatch)
    assert _pages(report) == pages
    assert compiled and len(compiled) == len(entries)
    assert all(entry.stat().st_size > 12 for entry in entries)  # written again, whole


def test_an_unusable_cache_directory_changes_nothing(run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cached"))
    pages = _pages(Report([run]))
    not_a_directory = tmp_path / "a-file"
    not_a_directory.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(not_a_directory))
    report = Report([run])
    assert report.env.bytecode_cache is None
    assert _pages(report) == pages


def test_no_home_directory_changes_nothing(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pages = _pages(Report([run]))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)

    def no_home() -> Path:  # what Path.home() raises when neither HOME nor the password database names one
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    report = Report([run])
    assert report.env.bytecode_cache is None
    assert _pages(report) == pages


def test_a_cache_directory_others_may_write_is_not_used(run: Path, cache_home: Path) -> None:
    directory = cache_home / "agentrig" / TEMPLATES_DIR
    directory.mkdir(parents=True)
    os.chmod(directory, 0o777)
    report = Report([run])
    assert report.env.bytecode_cache is None
    _pages(report)
    assert _entries(cache_home) == []


def test_an_entry_is_told_apart_by_how_and_by_what_it_was_compiled(run: Path, tmp_path: Path) -> None:
    from jinja2 import Environment

    from agentrig.view.render import AUTOESCAPED
    from agentrig.view.template_cache import compile_settings

    env = Report([run]).env
    settings = compile_settings(env, AUTOESCAPED)
    assert settings != compile_settings(env, ())
    assert settings != compile_settings(Environment(trim_blocks=True), AUTOESCAPED)  # lstrip_blocks not set
    assert settings != compile_settings(Environment(trim_blocks=True, lstrip_blocks=True, optimized=False), AUTOESCAPED)
    plain, other = TemplateCache(tmp_path, settings), TemplateCache(tmp_path, compile_settings(env, ()))
    key = plain.get_cache_key("base.html", "/x/base.html")
    assert key != other.get_cache_key("base.html", "/x/base.html")
    assert key != plain.get_cache_key("base.html", "/y/base.html")
    assert key != plain.get_cache_key("index.html", "/x/base.html")
