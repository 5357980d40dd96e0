"""agentrig-ray: an agentrig executor that runs problems on warm worker actors of a Ray cluster."""

__version__ = "0.1.0"
