"""The agentrig plugin of example-bench: declares its datasets, imports nothing heavy."""

import agentrig


@agentrig.hookimpl
def agentrig_datasets() -> list[agentrig.DatasetSpec]:
    """Both versions of the dataset; ``agentrig run dataset:example-bench`` takes the newest."""
    return [
        agentrig.DatasetSpec(
            name="example-bench",
            version="1.0",
            description="One string problem.",
            path="example_bench:data/1.0",
        ),
        agentrig.DatasetSpec(
            name="example-bench",
            version="2.0",
            description="Two string problems (2.0 adds palindrome).",
            path="example_bench:data/2.0",
        ),
    ]
