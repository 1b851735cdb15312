"""Minimal import stand-in for torchvision, used only by bench/realmodels.

torchvision is not installed in the benchmark environment (installing it would
pull a different torch build).  timm imports a few names from it at import
time; this stub provides just enough for ``import timm`` and
``timm.create_model`` to work.  None of the benchmarked models use these names
in their forward pass.
"""

__version__ = "0.0.0+stub"
