import sys

sys.path.insert(0, ".")  # the workspace, where the test runs

import subprocess
import sys

out = subprocess.run([sys.executable, "fizzbuzz.py", "15"], capture_output=True, text=True, check=True).stdout
lines = out.split()
assert len(lines) == 15, f"expected 15 lines, got {len(lines)}"
assert lines[2] == "Fizz" and lines[4] == "Buzz" and lines[14] == "FizzBuzz", lines
from fizzbuzz import fizzbuzz  # noqa: E402 - the function still works

assert fizzbuzz(6) == "Fizz"
print("command_line: ok")
