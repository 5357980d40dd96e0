"""Problem formats."""
