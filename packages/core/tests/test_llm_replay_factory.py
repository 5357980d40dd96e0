"""ReplayModel, RecordingChatModel and create_chat_model's provider, endpoint and option handling."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from agentrig.catalog import resolve_model
from agentrig.credentials import ProviderCredential
from agentrig.llm import (
    AnthropicChat,
    ChatMessage,
    ChatResponse,
    OpenAIChat,
    RecordingChatModel,
    ReplayModel,
    ToolCall,
    create_chat_model,
    resolve_base_url,
)
from agentrig.llm.errors import AuthenticationError, ConfigurationError, ReplayExhaustedError
from agentrig.model_definition import ModelDefinition
from agentrig.testing.fake_openai import FakeOpenAIServer
from agentrig.trajectory import AgentTextStep, ThinkingStep, ToolUseStep, UserStep
from agentrig.usage import TokenUsage

HI = [ChatMessage(role="user", content="hi")]


def response(text: str, *, calls: list[ToolCall] | None = None, cost: float | None = 0.01) -> ChatResponse:
    return ChatResponse(
        message=ChatMessage(role="assistant", content=text, tool_calls=calls or []),
        model="recorded-model",
        usage=TokenUsage(input=10, output=5),
        cost=cost,
        stop_reason="end_turn",
    )


def write_replay(path: Path, responses: list[ChatResponse]) -> Path:
    path.write_text("".join(r.model_dump_json() + "\n" for r in responses))
    return path


def test_replay_file_through_the_catalog_and_factory(tmp_path: Path) -> None:
    calls = [ToolCall(id="c1", name="bash", arguments={"command": "ls"})]
    path = write_replay(tmp_path / "replay.jsonl", [response("first", calls=calls), response("second", cost=None)])
    model = create_chat_model(resolve_model(f"replay/{path}"), None)
    assert isinstance(model, ReplayModel) and model.remaining == 2
    first = model.complete(HI)
    assert first.message.tool_calls == calls and first.cost == 0.01 and first.usage.input == 10
    second = model.complete(HI)
    assert second.message.content == "second" and second.cost is None
    with pytest.raises(ReplayExhaustedError, match="holds 2 responses; call 3 has none"):
        model.complete(HI)
    assert len(model.requests) == 2


def test_replayed_responses_are_copies(tmp_path: Path) -> None:
    model = ReplayModel([response("a")])
    got = model.complete(HI)
    got.message.content = "changed"
    assert model.responses[0].message.content == "a"


@pytest.mark.parametrize(("content", "match"), [("{not json}\n", r"replay\.jsonl:1: not a ChatResponse"),
                                                ('{"model": "m"}\n', r"replay\.jsonl:1: not a ChatResponse \(message")])
def test_bad_replay_files_name_the_line(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "replay.jsonl"
    path.write_text(content)
    with pytest.raises(ConfigurationError, match=match):
        ReplayModel.from_file(path)
    with pytest.raises(ConfigurationError, match="cannot read replay file"):
        ReplayModel.from_file(tmp_path / "absent.jsonl")


def test_recording_then_replaying_gives_the_same_responses(fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai_server.add_tool_call("bash", {"command": "ls"}, usage={"input": 3, "output": 4})
    fake_openai_server.add_reply("done", usage={"input": 5, "output": 6})
    live = create_chat_model(resolve_model("openai/gpt-4o"), None, base_url=fake_openai_server.base_url)
    recorder = RecordingChatModel(live, tmp_path / "out" / "replay.jsonl")
    recorded = [recorder.complete(HI), recorder.complete(HI)]
    replay = ReplayModel.from_file(tmp_path / "out" / "replay.jsonl")
    same = {"latency"}  # each replayed call takes its own time (test_a_replayed_call_takes_its_own_time)
    assert [replay.complete(HI).model_dump(exclude=same) for _ in recorded] == [r.model_dump(exclude=same) for r in recorded]


def test_a_replayed_call_takes_its_own_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replayed call's latency is what it took in this run, not the recorded call's: the model time of a
    replayed run is its own (a checkpoint that took 0.3 s in all showed "model 0.7s")."""
    import agentrig.llm.replay

    ticks = iter([100.0, 100.25, 200.0, 200.5])  # the replay's clock: each call reads it when it starts and ends

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return next(ticks)

    monkeypatch.setattr(agentrig.llm.replay, "time", Clock)
    recorded = response("slow").model_copy(update={"latency": 5.0})
    replay = ReplayModel([recorded, recorded])
    first, second = replay.complete(HI), replay.complete(HI)
    assert (first.latency, second.latency) == (0.25, 0.5)
    assert replay.responses[0].latency == 5.0  # the recording itself is unchanged
    assert first.to_llm_call("act").latency == first.latency


def test_replay_from_a_trajectory(tmp_path: Path) -> None:
    steps = [
        UserStep(content="task"),
        response("", calls=None).to_llm_call("act"),
        ThinkingStep(content="plan"),
        AgentTextStep(content="Running ls."),
        ToolUseStep(tool="bash", arguments={"command": "ls"}, tool_call_id="t1", result="a.py"),
        response("", cost=0.02).to_llm_call("act"),
        AgentTextStep(content="Done."),
    ]
    path = tmp_path / "trajectory.jsonl"
    path.write_text("".join(s.model_dump_json() + "\n" for s in steps))
    model = ReplayModel.from_trajectory(path)
    first, second = model.complete(HI), model.complete(HI)
    assert (first.message.content, first.message.thinking) == ("Running ls.", "plan")
    assert first.message.tool_calls == [ToolCall(id="t1", name="bash", arguments={"command": "ls"})]
    assert second.message.content == "Done." and second.cost == 0.02 and not second.message.tool_calls


def test_endpoint_precedence_config_then_env_then_catalog() -> None:
    catalog = ModelDefinition(provider="openai", name="m", base_url="http://catalog/v1")
    env = {"OPENAI_BASE_URL": "http://env/v1"}
    assert resolve_base_url(catalog, "http://config/v1", environ=env) == "http://config/v1"
    assert resolve_base_url(catalog, None, environ=env) == "http://env/v1"
    assert resolve_base_url(catalog, None, environ={}) == "http://catalog/v1"
    assert resolve_base_url(ModelDefinition(provider="openai", name="m"), None, environ={}) is None
    assert resolve_base_url(ModelDefinition(provider="anthropic", name="m"), None,
                            environ={"ANTHROPIC_BASE_URL": "http://a"}) == "http://a"
    assert resolve_base_url(ModelDefinition(provider="vllm", name="m"), None, environ={"VLLM_BASE_URL": "http://v/v1"}) == "http://v/v1"


def test_env_base_url_reaches_the_fake_server(fake_openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai_server.base_url)
    fake_openai_server.add_reply("via env")
    chat = create_chat_model(resolve_model("gpt-4o-mini"), None)
    assert isinstance(chat, OpenAIChat) and chat.complete(HI).message.content == "via env"


def test_factory_picks_the_client_by_provider() -> None:
    cred = ProviderCredential(provider="anthropic", value=SecretStr("k" * 10), source="X", env_var="ANTHROPIC_API_KEY")
    assert isinstance(create_chat_model(resolve_model("sonnet"), cred, environ={}), AnthropicChat)
    assert isinstance(create_chat_model(ModelDefinition(provider="ollama", name="llama3"), None,
                                        base_url="http://127.0.0.1:11434/v1"), OpenAIChat)


def test_factory_errors_are_one_line_and_name_the_fix() -> None:
    with pytest.raises(AuthenticationError, match="set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"):
        create_chat_model(resolve_model("sonnet"), None, environ={})
    with pytest.raises(AuthenticationError, match="set OPENAI_API_KEY"):
        create_chat_model(resolve_model("gpt-5"), None, environ={})
    with pytest.raises(ConfigurationError, match="needs an endpoint: set VLLM_BASE_URL"):
        create_chat_model(ModelDefinition(provider="vllm", name="q"), None, environ={})
    with pytest.raises(ConfigurationError, match=r"unknown model option 'strem' \(known: .*stream"):
        create_chat_model(ModelDefinition(provider="vllm", name="q"), None, base_url="http://x/v1", strem=True)
    with pytest.raises(ConfigurationError, match=r"model option 'timeout': -1\.0 is not a time limit: must be a finite number above 0"):
        create_chat_model(ModelDefinition(provider="vllm", name="q"), None, base_url="http://x/v1", timeout=-1)
