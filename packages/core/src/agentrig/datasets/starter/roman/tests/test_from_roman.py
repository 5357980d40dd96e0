import sys

sys.path.insert(0, ".")  # the workspace, where the test runs

from roman import from_roman, to_roman

for n in range(1, 4000):
    assert from_roman(to_roman(n)) == n, f"from_roman(to_roman({n})) returned {from_roman(to_roman(n))}"
print("from_roman: ok")
