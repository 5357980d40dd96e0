import re
from collections import Counter


def top_words(path: str, k: int) -> list[tuple[str, int]]:
    with open(path, encoding="utf-8") as handle:
        words = re.findall(r"[a-z]+", handle.read().lower())
    return sorted(Counter(words).items(), key=lambda item: (-item[1], item[0]))[:k]
