"""Datasets shipped as pip distributions, declared through ``agentrig_datasets()``.

A dataset is a directory of problems inside an installed package::

    my_bench/                      the package (import name)
        plugin.py                  @hookimpl agentrig_datasets() -> [DatasetSpec(..., path="my_bench:data/v1")]
        data/v1/                   the dataset directory named by the spec
            problem-a/             one problem per directory, of any installed format
            problem-b/             (problem.yaml, a SlopCodeBench config.yaml, a Harbor task.toml, ...)

``agentrig run dataset:NAME[@VERSION]`` runs every problem of it (``--problem`` /
``-x`` select), offline: the files come with the distribution. Without a version
the newest installed one is taken. :mod:`agentrig.datasets.resolve` finds them.
"""
