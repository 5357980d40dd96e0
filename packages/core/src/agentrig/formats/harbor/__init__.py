"""The Harbor task format (``task.toml``) and Terminal-Bench's older ``task.yaml`` tasks."""
