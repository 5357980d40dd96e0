"""agentrig-ray: an agentrig executor that runs each problem as a task on a Ray cluster."""

__version__ = "0.1.0"
