"""Greets people."""


def greet(name):
    raise NotImplementedError
