"""Where the suite's time goes, by test file: the sum of its tests' times from pytest's JUnit XML.

    python3 .ci/durations.py .cache/junit.xml [TOP]

The per-test list (`--durations`) shows the slowest tests; this shows the files whose many tests add up.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def main(path: str, top: int = 30) -> int:
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for case in ET.parse(path).getroot().iter("testcase"):
        name = (case.get("classname") or "?").split(".Test")[0].replace(".", "/") + ".py"
        totals[name] += float(case.get("time") or 0)
        counts[name] += 1
    overall = sum(totals.values())
    print(f"{overall / 60:.1f} worker-minutes in {sum(counts.values())} tests; the {top} files that take most:")
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1])[:top]:
        print(f"{seconds:8.1f} s {100 * seconds / overall:5.1f} % {counts[name]:4d} tests  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], *(int(a) for a in sys.argv[2:3])))
