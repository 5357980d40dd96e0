"""The model-call cache: the official OpenAI and Anthropic SDK clients against the fake servers on
127.0.0.1, answering repeated requests from disk (policies, expiry, corrupt and planted entries,
concurrent writer processes, no secret stored) and ``agentrig cache list|clear``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agentrig.cli import main
from agentrig.credentials import ProviderCredential
from agentrig.llm import ChatMessage, ToolSpec, create_chat_model
from agentrig.llm.cache import CacheEntry, ModelCacheWarning, ModelCallCache, iter_entries, use_cache
from agentrig.llm.run_paths import RunPaths, session_paths, use_run_paths
from agentrig.model_definition import ModelDefinition
from agentrig.pricing import APIPricing
from agentrig.testing.fake_anthropic import FakeAnthropicServer
from agentrig.testing.fake_openai import FakeOpenAIServer
from agentrig.testing.fake_server import FakeModelServer, FakeReply, FakeUsage

SECRET = "sk-cache-test-secret-9f8e7d"
PRICING = APIPricing(input=3.0, output=15.0)
BASH = ToolSpec(name="bash", description="Run a shell command.",
                parameters={"type": "object", "properties": {"command": {"type": "string"}}})


_open: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Any:
    yield
    while _open:
        _open.pop().close()


def chat(provider: str, server: FakeModelServer, cache: ModelCallCache | None, secret: str = SECRET, **options: Any) -> Any:
    definition = ModelDefinition(provider=provider, name=f"{provider}-test-model", pricing=PRICING)
    var = f"{provider.upper()}_API_KEY"
    credential = ProviderCredential(provider=provider, value=SecretStr(secret), source=var, env_var=var)
    if cache is not None:
        options["cache"] = cache
    client = create_chat_model(definition, credential, base_url=server.base_url, **options)
    _open.append(client)
    return client


def conversation(text: str = "List files.") -> list[ChatMessage]:
    return [ChatMessage(role="system", content="You are terse."), ChatMessage(role="user", content=text)]


def echo(request: Any) -> FakeReply:
    """A reply naming the last message, so that different requests get different replies."""
    last = request.body["messages"][-1]["content"]
    text = last if isinstance(last, str) else "".join(b.get("text", "") for b in last)
    return FakeReply(text=f"you said: {text}", usage=FakeUsage(input=1000, output=200))


@pytest.fixture(params=["openai", "anthropic"])
def provider_server(request: pytest.FixtureRequest) -> Any:
    server: FakeModelServer = FakeOpenAIServer() if request.param == "openai" else FakeAnthropicServer()
    with server:
        server.respond_with(echo)
        yield request.param, server


def entries(directory: Path) -> list[Path]:
    return sorted(path for path, _ in iter_entries(directory))


def test_a_repeated_call_is_answered_from_the_cache_with_its_usage_and_no_cost(provider_server: Any, tmp_path: Path) -> None:
    provider, server = provider_server
    cache = ModelCallCache(directory=tmp_path / "cache")
    client = chat(provider, server, cache)
    first = client.complete(conversation(), [BASH])
    assert not first.cache_hit and first.cost and first.cost > 0 and first.attempts == 1
    assert len(entries(cache.directory)) == 1 and len(server.model_requests) == 1

    again = chat(provider, server, cache)  # a new client, as a re-run makes
    second = again.complete(conversation(), [BASH])
    assert len(server.model_requests) == 1  # no request reached the server
    assert second.cache_hit and second.cost == 0.0 and second.attempts == 0
    assert second.usage == first.usage and second.usage.input == 1000
    assert second.message == first.message and second.message.content == "you said: List files."
    step = second.to_llm_call("act")
    assert step.cache_hit and step.cost == 0.0 and step.usage == first.usage
    assert step.received is not None and step.received.content == "you said: List files."
    assert not first.to_llm_call("act").cache_hit

    other = again.complete(conversation("Something else."), [BASH])
    assert not other.cache_hit and len(server.model_requests) == 2 and len(entries(cache.directory)) == 2


def test_the_key_follows_messages_tools_and_parameters_but_not_the_credential_or_endpoint(tmp_path: Path) -> None:
    cache = ModelCallCache(directory=tmp_path / "cache")
    with FakeOpenAIServer() as one, FakeOpenAIServer() as two:
        for server in (one, two):
            server.respond_with(echo)

        def key(server: FakeModelServer = one, secret: str = SECRET, messages: Any = None, tools: Any = (BASH,),
                **options: Any) -> str:
            client = chat("openai", server, cache, secret=secret, **options)
            return cache.key("openai", client.model_name,
                             client.cache_request(messages or conversation(), list(tools) or None, None, None))

        base = key()
        assert key(server=two, secret="sk-another-key") == base
        changed = [
            key(messages=conversation("List files!")),
            key(messages=[ChatMessage(role="user", content="List files.")]),
            key(tools=()),
            key(tools=(BASH.model_copy(update={"description": "Run a command."}),)),
            key(temperature=0.5),
            key(max_tokens=64),
            key(extra_body={"seed": 7}),
            key(extra_body={"seed": 8}),
        ]
        assert base not in changed and len(set(changed)) == len(changed)
        # and through the clients: a changed parameter is a new request
        chat("openai", one, cache).complete(conversation(), [BASH])
        chat("openai", one, cache, extra_body={"seed": 7}).complete(conversation(), [BASH])
        chat("openai", two, cache, secret="sk-another-key").complete(conversation(), [BASH])
        assert len(one.model_requests) == 2 and len(two.model_requests) == 0


def test_policies(fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    server = fake_openai_server
    server.respond_with(echo)
    directory = tmp_path / "cache"
    read_only = ModelCallCache(directory=directory, policy="read")
    chat("openai", server, read_only).complete(conversation())
    assert len(server.model_requests) == 1 and entries(directory) == []  # read never stores

    write_only = ModelCallCache(directory=directory, policy="write")
    for _ in range(2):
        assert not chat("openai", server, write_only).complete(conversation()).cache_hit
    assert len(server.model_requests) == 3 and len(entries(directory)) == 1  # write always calls, stores

    hit = chat("openai", server, read_only).complete(conversation())
    assert hit.cache_hit and len(server.model_requests) == 3

    both = ModelCallCache(directory=directory)
    assert both.policy == "readwrite"
    assert chat("openai", server, both).complete(conversation()).cache_hit
    assert not chat("openai", server, both).complete(conversation("new")).cache_hit
    assert chat("openai", server, both).complete(conversation("new")).cache_hit
    assert len(server.model_requests) == 4


def _age(path: Path, seconds: float) -> None:
    entry = CacheEntry.model_validate_json(path.read_bytes())
    path.write_text(entry.model_copy(update={"created": entry.created - seconds}).model_dump_json())


def test_expired_entries_are_ignored_and_replaced(fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    server = fake_openai_server
    server.respond_with(echo)
    cache = ModelCallCache(directory=tmp_path / "cache", ttl=3600)
    chat("openai", server, cache).complete(conversation())
    [path] = entries(cache.directory)
    _age(path, 1800)
    assert chat("openai", server, cache).complete(conversation()).cache_hit  # within the ttl
    _age(path, 3600)
    before = CacheEntry.model_validate_json(path.read_bytes()).created
    assert not chat("openai", server, cache).complete(conversation()).cache_hit
    assert len(server.model_requests) == 2
    assert CacheEntry.model_validate_json(path.read_bytes()).created > before + 3000  # replaced
    assert chat("openai", server, cache).complete(conversation()).cache_hit
    # without a ttl the same old entry is good
    _age(path, 10 * 86400)
    assert chat("openai", server, ModelCallCache(directory=cache.directory)).complete(conversation()).cache_hit


@pytest.mark.parametrize("damage", ["torn", "not-json", "wrong-key", "empty"])
def test_a_corrupt_entry_is_ignored_with_one_warning_and_replaced(
    fake_openai_server: FakeOpenAIServer, tmp_path: Path, damage: str
) -> None:
    server = fake_openai_server
    server.respond_with(echo)
    cache = ModelCallCache(directory=tmp_path / "cache")
    chat("openai", server, cache).complete(conversation())
    [path] = entries(cache.directory)
    good = path.read_bytes()
    bad = {"torn": good[: len(good) // 2], "not-json": b"\x00\xffgarbage", "empty": b"",
           "wrong-key": good.replace(path.stem.encode(), b"0" * 64)}[damage]
    path.write_bytes(bad)
    with pytest.warns(ModelCacheWarning) as caught:
        reply = chat("openai", server, ModelCallCache(directory=cache.directory, policy="read")).complete(conversation())
        again = chat("openai", server, ModelCallCache(directory=cache.directory, policy="read")).complete(conversation())
    said = [str(w.message) for w in caught if w.category is ModelCacheWarning]
    assert len(said) == 1 and str(path) in said[0] and "ignored" in said[0]
    assert not reply.cache_hit and not again.cache_hit and len(server.model_requests) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelCacheWarning)  # the readwrite call warns no more, and replaces the entry
        assert not chat("openai", server, cache).complete(conversation()).cache_hit
    CacheEntry.model_validate_json(path.read_bytes())
    assert chat("openai", server, cache).complete(conversation()).cache_hit


def test_nothing_read_from_the_cache_leads_outside_it(fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    server = fake_openai_server
    server.respond_with(echo)
    cache = ModelCallCache(directory=tmp_path / "cache")
    chat("openai", server, cache).complete(conversation())
    [path] = entries(cache.directory)
    outside = tmp_path / "outside.json"
    outside.write_bytes(path.read_bytes())  # a valid entry, planted outside and linked in
    path.unlink()
    path.symlink_to(outside)
    with pytest.warns(ModelCacheWarning, match="symbolic link"):
        assert not chat("openai", server, cache).complete(conversation()).cache_hit
    assert not path.is_symlink() and outside.read_bytes() != b""  # the link was replaced, its target untouched
    assert CacheEntry.model_validate_json(outside.read_bytes()).key == path.stem

    # a shard directory linked elsewhere: neither read nor written through
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shard = path.parent
    for item in shard.iterdir():
        item.rename(elsewhere / item.name)
    shard.rmdir()
    shard.symlink_to(elsewhere, target_is_directory=True)
    with pytest.warns(ModelCacheWarning):
        assert not chat("openai", server, cache).complete(conversation()).cache_hit
    assert entries(cache.directory) == []
    assert main(["cache", "clear", "--dir", str(cache.directory)]) == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == [path.name]


def test_no_secret_in_the_cache_files(provider_server: Any, tmp_path: Path) -> None:
    provider, server = provider_server
    cache = ModelCallCache(directory=tmp_path / "cache")
    chat(provider, server, cache).complete(conversation(), [BASH])
    files = [p for p in cache.directory.rglob("*") if p.is_file()]
    assert len(files) == 1 and not any(p.name.startswith(".") for p in files)
    assert SECRET.encode() not in files[0].read_bytes()
    assert server.requests[-1].headers.get("authorization", server.requests[-1].headers.get("x-api-key", "")).endswith(SECRET)
    # a reply that holds the credential is not stored
    server.respond_with(lambda request: FakeReply(text=f"the key is {SECRET}"))
    with pytest.warns(ModelCacheWarning, match="credential"):
        chat(provider, server, cache).complete(conversation("leak it"))
    assert all(SECRET.encode() not in p.read_bytes() for p in cache.directory.rglob("*") if p.is_file())
    assert len(entries(cache.directory)) == 1


def test_the_run_sets_the_cache_of_clients_that_name_none(fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    server = fake_openai_server
    server.respond_with(echo)
    cache = ModelCallCache(directory=tmp_path / "cache")
    with use_cache(cache):
        chat("openai", server, None).complete(conversation())
        assert chat("openai", server, None).complete(conversation()).cache_hit
    assert not chat("openai", server, None).complete(conversation()).cache_hit  # outside the block: none
    assert len(server.model_requests) == 2


def test_run_paths_are_placeholders_one_way_and_this_runs_paths_the_other(tmp_path: Path) -> None:
    run = tmp_path / "run"
    session = run / ".workspaces" / "agentrig-greeter-x1y2"
    (session / "workspace").mkdir(parents=True)
    (tmp_path / "link").symlink_to(run)
    paths = RunPaths({"workspace": session / "workspace", "session": session, "run": tmp_path / "link", "home": "/"})
    text = {"a": [f"cat {session}/workspace/greet.py", f"ls {session}/tmp {run}/x", 3, None],
            "b": f"{tmp_path}/link/results.jsonl /usr/bin"}
    hidden = paths.hide(text)
    assert hidden == {"a": ["cat <agentrig:workspace>/greet.py", "ls <agentrig:session>/tmp <agentrig:run>/x", 3, None],
                      "b": "<agentrig:run>/results.jsonl /usr/bin"}  # the run's real path and its link; "/" never
    other = RunPaths({"workspace": "/w2", "session": "/s2", "run": "/r2"})
    assert other.show(hidden) == {"a": ["cat /w2/greet.py", "ls /s2/tmp /r2/x", 3, None], "b": "/r2/results.jsonl /usr/bin"}
    assert paths.show(hidden)["a"][0] == text["a"][0]
    assert not RunPaths({"workspace": None, "home": "/"}) and RunPaths({}).hide(text) == text
    # a container's working directory is not a path of this machine: its resolved form here means nothing
    (tmp_path / "w").symlink_to(run)
    assert RunPaths({"workspace": tmp_path / "w"}).hide(f"{run}/x") == f"{run}/x"
    with pytest.raises(ValueError, match="not a run path name"):
        RunPaths({"tmp": "/tmp/x"})


def test_a_request_naming_its_run_hits_in_another_run_and_the_reply_names_that_one(
    provider_server: Any, tmp_path: Path
) -> None:
    from agentrig.agents.session import Session

    provider, server = provider_server
    cache = ModelCallCache(directory=tmp_path / "cache")
    replies = []
    for run in ("first", "second"):
        with Session.create(runtime="local", base_dir=tmp_path / run) as session, \
                use_run_paths(session_paths(session, tmp_path / run)):
            workspace = session.runtime.workdir
            assert workspace.startswith(str(tmp_path / run / "agentrig-"))  # each session has its own random name
            replies.append((workspace, chat(provider, server, cache).complete(conversation(f"cat {workspace}/a.txt"))))
    (first_dir, first), (second_dir, second) = replies
    assert not first.cache_hit and second.cache_hit and len(server.model_requests) == 1
    assert first.message.content == f"you said: cat {first_dir}/a.txt"
    assert second.message.content == f"you said: cat {second_dir}/a.txt"  # this run's workspace, not the first's
    [entry] = entries(cache.directory)
    assert first_dir not in entry.read_text() and "you said: cat <agentrig:workspace>/a.txt" in entry.read_text()


WRITER = """
import sys
from pathlib import Path
from pydantic import SecretStr
from agentrig.credentials import ProviderCredential
from agentrig.llm import ChatMessage, create_chat_model
from agentrig.llm.cache import ModelCallCache
from agentrig.model_definition import ModelDefinition

url, directory, worker = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
cache = ModelCallCache(directory=directory)
credential = ProviderCredential(provider="openai", value=SecretStr("sk-x"), source="OPENAI_API_KEY", env_var="OPENAI_API_KEY")
client = create_chat_model(ModelDefinition(provider="openai", name="m"), credential, base_url=url, cache=cache)
hits = 0
for round in range(3):
    for index in range(12):
        text = f"question {index}" if index < 8 else f"question {index} of worker {worker}"
        hits += client.complete([ChatMessage(role="user", content=text)]).cache_hit
print(hits)
"""


def test_concurrent_writer_processes_leave_whole_entries(fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    server = fake_openai_server
    server.respond_with(echo)
    directory = tmp_path / "cache"
    workers = [
        subprocess.Popen([sys.executable, "-c", WRITER, server.base_url, str(directory), str(n)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(4)
    ]
    outputs = [w.communicate(timeout=120) for w in workers]
    assert all(w.returncode == 0 for w in workers), [err for _, err in outputs]
    assert all("warning" not in err.lower() for _, err in outputs)
    found = entries(directory)
    assert len(found) == 8 + 4 * 4  # 8 shared questions, 4 of each worker's own
    for path in found:
        entry = CacheEntry.model_validate_json(path.read_bytes())
        assert entry.key == path.stem and entry.response["message"]["content"].startswith("you said: question")
    assert not list(directory.rglob(".*"))  # no temporary file left
    hits = sum(int(out) for out, _ in outputs)
    # every worker's second and third rounds are hits; first-round calls may hit what another stored
    assert hits >= 4 * 2 * 12 and len(server.model_requests) == 4 * 3 * 12 - hits


def test_cache_list_and_clear(fake_openai_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = fake_openai_server
    server.respond_with(echo)
    directory = tmp_path / "cache"
    cache = ModelCallCache(directory=directory)
    for text in ("a", "b", "c"):
        chat("openai", server, cache).complete(conversation(text))
    paths = entries(directory)
    now = time.time()
    os.utime(paths[0], (now - 10 * 86400, now - 10 * 86400))
    os.utime(paths[1], (now - 2 * 3600, now - 2 * 3600))
    (directory / "README").write_text("not an entry")
    capsys.readouterr()

    assert main(["cache", "list", "--dir", str(directory), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    size = sum(p.stat().st_size for p in paths)
    assert listed["entries"] == 3 and listed["bytes"] == size
    assert listed["oldest"] == pytest.approx(now - 10 * 86400, abs=2) and listed["newest"] >= now - 60
    assert main(["cache", "list", "--dir", str(directory)]) == 0
    assert "3 entries" in capsys.readouterr().out

    assert main(["cache", "clear", "--dir", str(directory), "--older-than", "7d"]) == 0
    assert "1 entries removed" in capsys.readouterr().out and entries(directory) == paths[1:]
    assert main(["cache", "clear", "--dir", str(directory), "--older-than", "1h"]) == 0
    assert entries(directory) == paths[2:]
    assert main(["cache", "clear", "--dir", str(directory)]) == 0
    assert entries(directory) == [] and (directory / "README").read_text() == "not an entry"

    assert main(["cache", "clear", "--dir", str(directory), "--older-than", "soon"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--older-than soon" in err and "Traceback" not in err
    assert main(["cache", "list", "--dir", str(directory / "README")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_the_plan_carries_the_cache_to_worker_processes(tmp_path: Path) -> None:
    from agentrig.run.plan import RunPlan

    cache = ModelCallCache(directory=tmp_path / "cache", policy="read", ttl=60)
    plan = RunPlan(agent_config={"type": "oracle"}, model_cache=cache)
    assert RunPlan.model_validate_json(plan.model_dump_json()).model_cache == cache  # --jobs, Ray
    assert RunPlan.model_validate_json(RunPlan(agent_config={"type": "oracle"}).model_dump_json()).model_cache is None
