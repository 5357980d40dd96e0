"""Small arithmetic helpers."""


def add(a, b):
    """The sum of a and b."""
    return a - b


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    return add(sum(values), 0) / len(values)
