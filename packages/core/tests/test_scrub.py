"""agentrig.scrub: the secrets an agent holds, removed from steps, records and files; and Agent.emit_step as the
one place every agent's steps pass through it (listeners, hooks, subagents)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from agentrig.credentials import ProviderCredential
from agentrig.scrub import REDACTED, SecretScrubber
from agentrig.trajectory import LLMCall, RecordedMessage, ToolUseStep, TrajectoryStep

KEY = "sk-unit-secret-0123456789"


def test_text_data_and_models_lose_every_secret_longest_first() -> None:
    credential = ProviderCredential(provider="openai", value=SecretStr(KEY), source="test", env_var="OPENAI_API_KEY")
    scrubber = SecretScrubber([credential, None, "", "abc", f"{KEY}-longer"])
    assert scrubber.values == (f"{KEY}-longer", KEY)  # "abc" is too short to scrub: it would erase words
    assert scrubber.text(f"a {KEY}-longer b {KEY}") == f"a {REDACTED} b {REDACTED}"
    step = LLMCall(model="m", sent=[RecordedMessage(role="tool", content=f"OPENAI_API_KEY={KEY}")],
                   received=RecordedMessage(role="assistant", content="ok"))
    scrubbed = scrubber.model(step)
    assert KEY not in scrubbed.model_dump_json() and scrubbed.sent is not None
    assert scrubbed.sent[0].content == f"OPENAI_API_KEY={REDACTED}" and scrubbed.timestamp == step.timestamp
    clean = ToolUseStep(tool="bash", arguments={"command": "ls"}, result="a.txt")
    assert scrubber.model(clean) is clean  # nothing to remove: the same object


def test_files_are_rewritten_without_secrets_keeping_their_mode_and_never_following_links(tmp_path: Path) -> None:
    scrubber = SecretScrubber([KEY, "clé-secrète-ü"])
    root = tmp_path / "agent"
    (root / "sub").mkdir(parents=True)
    big = root / "sub" / "stdout.jsonl"
    # the key straddles the reader's 1 MiB chunks
    big.write_bytes(b"x" * ((1 << 20) - 5) + KEY.encode() + b"\n" + b"y" * 10)
    os.chmod(big, 0o640)
    escaped = root / "record.json"
    escaped.write_text(json.dumps({"v": "clé-secrète-ü"}))  # ensure_ascii: \u escapes
    outside = tmp_path / "outside.txt"
    outside.write_text(KEY)
    (root / "link").symlink_to(outside)
    clean = root / "clean.txt"
    clean.write_text("nothing here")
    before = clean.stat().st_ino

    assert scrubber.tree(root) == 2
    assert KEY.encode() not in big.read_bytes() and big.read_bytes().endswith(REDACTED.encode() + b"\n" + b"y" * 10)
    assert stat.S_IMODE(big.stat().st_mode) == 0o640
    assert json.loads(escaped.read_text()) == {"v": REDACTED}
    assert outside.read_text() == KEY  # a link is not followed
    assert clean.stat().st_ino == before  # a file without secrets is not rewritten
    assert sorted(p.name for p in root.rglob("*")) == ["clean.txt", "link", "record.json", "stdout.jsonl", "sub"]


def test_emit_step_scrubs_for_listeners_hooks_and_subagents(plugin_registry: Any) -> None:
    import agentrig
    from agentrig.agents.oracle import OracleAgent  # any concrete agent

    seen: list[TrajectoryStep] = []
    hooked: list[TrajectoryStep] = []

    class Observer:
        @agentrig.hookimpl
        def agentrig_step(self, agent: Any, step: TrajectoryStep) -> None:
            hooked.append(step)

        @agentrig.hookimpl
        def agentrig_subagent_step(self, parent: Any, agent: Any, step: TrajectoryStep) -> None:
            hooked.append(step)

    plugin_registry.register(Observer())
    parent = OracleAgent.__new__(OracleAgent)
    agentrig.Agent.__init__(parent, "oracle", "p", agentrig.AgentCostLimits(), None, False)
    parent.secrets.add(KEY)
    child = OracleAgent.__new__(OracleAgent)
    agentrig.Agent.__init__(child, "oracle", "p", agentrig.AgentCostLimits(), None, False)
    child.parent_agent = parent
    child.secrets.add("child-only-secret")
    for agent in (parent, child):
        agent.add_step_listener(seen.append)
        agent.emit_step(ToolUseStep(tool="bash", result=f"{KEY} child-only-secret"))
    assert [s.result for s in seen] == [f"{REDACTED} child-only-secret", f"{REDACTED} {REDACTED}"]  # type: ignore[union-attr]
    assert [s.result for s in hooked] == [s.result for s in seen]  # type: ignore[union-attr]
