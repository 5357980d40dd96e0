import sys

sys.path.insert(0, ".")  # the workspace, where the test runs

from roman import to_roman

for n, want in {1: "I", 4: "IV", 9: "IX", 14: "XIV", 40: "XL", 1994: "MCMXCIV", 3999: "MMMCMXCIX"}.items():
    assert to_roman(n) == want, f"to_roman({n}) returned {to_roman(n)!r}, expected {want!r}"
print("to_roman: ok")
