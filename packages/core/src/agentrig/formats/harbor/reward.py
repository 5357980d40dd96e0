"""Reading a Harbor verifier's reward: ``/logs/verifier/reward.txt`` or ``reward.json``.

As Harbor reads them: ``reward.txt`` first (one integer or float), else
``reward.json`` (an object of numeric metrics; other values are ignored).
The score of a ``reward.json`` is its ``reward`` key, or its only metric.
A missing, empty or unparsable reward file is not a failed test: the verifier
itself broke, and :class:`RewardError` says so in one line naming the file.
"""

from __future__ import annotations

import json
import math

from agentrig.boundary import REWARD_MAX_BYTES, shorten

from pydantic import BaseModel, Field

REWARD_TXT = "reward.txt"
REWARD_JSON = "reward.json"


class RewardError(ValueError):
    """The verifier left no usable reward file; the message names the file and what is wrong."""


class Reward(BaseModel):
    """A verifier's reward: every numeric metric it wrote and the one used as the score."""

    source: str = Field(description="The file the reward was read from (reward.txt or reward.json).")
    rewards: dict[str, float] = Field(description="Every numeric metric, by name (reward.txt gives 'reward').")
    score: float = Field(description="The metric used as the checkpoint's score.")


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _capped(data: bytes, where: str) -> bytes:
    if len(data) > REWARD_MAX_BYTES:
        raise RewardError(
            f"{where} holds {len(data)} bytes, more than a reward file may ({REWARD_MAX_BYTES}): not read"
        )
    return data


def parse_reward_text(data: bytes, where: str = REWARD_TXT) -> Reward:
    """A ``reward.txt``: one finite number (surrounding whitespace allowed), at most
    :data:`~agentrig.boundary.REWARD_MAX_BYTES` bytes; error messages quote at most 40 characters."""
    text = _capped(data, where).decode("utf-8", errors="replace").strip()
    if not text:
        raise RewardError(f"{where} is empty: the test script must write a number (e.g. 1 or 0.5) into it")
    try:
        value = float(text)
    except ValueError:
        raise RewardError(
            f"{where} holds '{shorten(text, 40)}', not a number: the test script must write e.g. 1 or 0.5"
        ) from None
    if not math.isfinite(value):
        raise RewardError(f"{where} holds '{shorten(text, 40)}', not a finite number")
    return Reward(source=REWARD_TXT, rewards={"reward": value}, score=value)


def parse_reward_json(data: bytes, where: str = REWARD_JSON) -> Reward:
    """A ``reward.json``: an object of numeric metrics; the score is ``reward`` or the only metric."""
    if not _capped(data, where).strip():
        raise RewardError(f"{where} is empty: the test script must write a JSON object of numbers into it")
    try:
        parsed = json.loads(data)
    except ValueError as exc:
        raise RewardError(f"{where} is not valid JSON ({shorten(str(exc))})") from None
    except RecursionError:
        raise RewardError(f"{where} is nested too deeply to read") from None
    if not isinstance(parsed, dict):
        raise RewardError(f"{where} must hold a JSON object of numbers, e.g. {{\"reward\": 1}}, not {type(parsed).__name__}")
    rewards = {str(k): n for k, v in parsed.items() if (n := _number(v)) is not None}
    if "reward" in rewards:
        score = rewards["reward"]
    elif len(rewards) == 1:
        score = next(iter(rewards.values()))
    elif not rewards:
        raise RewardError(f"{where} holds no numeric metric: write e.g. {{\"reward\": 1}}")
    else:
        names = shorten(", ".join(sorted(rewards)))
        raise RewardError(f"{where} holds several metrics ({names}) and no 'reward' key to score by")
    return Reward(source=REWARD_JSON, rewards=rewards, score=score)


def parse_reward(files: dict[str, bytes], where: str = "/logs/verifier") -> Reward:
    """The reward among a verifier directory's ``files`` (name to content): ``reward.txt`` first."""
    if REWARD_TXT in files:
        return parse_reward_text(files[REWARD_TXT], f"{where}/{REWARD_TXT}")
    if REWARD_JSON in files:
        return parse_reward_json(files[REWARD_JSON], f"{where}/{REWARD_JSON}")
    raise RewardError(f"the test script wrote no reward: neither {where}/{REWARD_TXT} nor {where}/{REWARD_JSON} exists")
