"""Repository-level pytest configuration."""

collect_ignore = ["src/orchestrace/__main__.py"]
