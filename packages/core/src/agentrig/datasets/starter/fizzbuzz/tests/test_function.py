import sys

sys.path.insert(0, ".")  # the workspace, where the test runs

from fizzbuzz import fizzbuzz

expected = {1: "1", 3: "Fizz", 5: "Buzz", 9: "Fizz", 10: "Buzz", 15: "FizzBuzz", 22: "22", 30: "FizzBuzz"}
for n, want in expected.items():
    got = fizzbuzz(n)
    assert got == want, f"fizzbuzz({n}) returned {got!r}, expected {want!r}"
print("function: ok")
