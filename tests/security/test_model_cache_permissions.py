"""Threat: the model-call cache's ``model-calls/`` and its entries were 0755/0644 under umask 022 (the template
cache is 0700): any user of the machine could read every cached reply, which may hold what a tool printed
(issue 32, section 5). The directories the cache makes are 0700 and its entries 0600, whatever the umask.

An entry is keyed by neither endpoint nor key (docs/security.md says so): the same provider, model and request
are answered from one entry on any endpoint; pinned here so that a change to the key is a change on purpose."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.llm.cache import ModelCallCache
from agentrig.llm.interface import ChatMessage, ChatResponse


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def reply(text: str) -> ChatResponse:
    return ChatResponse(message=ChatMessage(role="assistant", content=text), model="gpt-5")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_cache_directories_and_entries_are_private(tmp_path: Path) -> None:
    cache = ModelCallCache(directory=tmp_path / "user-cache" / "agentrig" / "model-calls")
    key = cache.key("openai", "gpt-5", {"messages": [{"role": "user", "content": "hi"}]})
    assert cache.put(key, "openai", reply("OPENAI_API_KEY=... printed by a tool"))
    entry = cache.directory / key[:2] / f"{key}.json"
    assert mode(cache.directory) == 0o700 and mode(entry.parent) == 0o700 and mode(entry) == 0o600
    # another entry in the same shard, and one replaced: private too
    assert cache.put(key, "openai", reply("again"))
    assert mode(entry) == 0o600
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # no temporary file left behind


def test_an_entry_answers_the_same_request_on_any_endpoint(tmp_path: Path) -> None:
    cache = ModelCallCache(directory=tmp_path / "model-calls")
    request = {"messages": [{"role": "user", "content": "hi"}]}
    key = cache.key("openai", "gpt-5", request)
    assert cache.put(key, "openai", reply("from the first endpoint"))
    # the key has no endpoint in it: a run against another endpoint asks for the same entry
    assert cache.key("openai", "gpt-5", dict(request)) == key
    hit = cache.get(key)
    assert hit is not None and hit.message.content == "from the first endpoint"
