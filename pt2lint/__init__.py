"""pt2lint: a static linter for torch.compile readiness of PyTorch model code.

The static path (``pt2lint check``) parses code with LibCST and never imports
user code or torch; ``pt2lint.confirm`` is the only place that imports torch.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
