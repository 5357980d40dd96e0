import sys

sys.path.insert(0, ".")  # the workspace, where the test runs

from count import top_words

got = top_words("text.txt", 3)
assert got == [("the", 5), ("a", 2), ("cat", 2)], got
print("count: ok")
