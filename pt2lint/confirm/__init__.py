"""Dynamic confirmation: run user code under torch to measure what Dynamo really does.

This subpackage is the only part of pt2lint that imports torch, and it does so
lazily, inside functions, so that importing it never requires torch.

- :mod:`~pt2lint.confirm.dynamo`: the measuring harness (graph breaks from the
  ``graph_breaks`` log, input mutations, recompiles, ``torch.export`` failures).
- :mod:`~pt2lint.confirm.settings`: ``[tool.pt2lint.confirm]`` and the command-line options.
- :mod:`~pt2lint.confirm.plan`: which modules each file has and how to build them (no imports).
- :mod:`~pt2lint.confirm.runner`: one child process per module, with a timeout.
- :mod:`~pt2lint.confirm.child`: what runs in the child (``python -m pt2lint.confirm.child``).
- :mod:`~pt2lint.confirm.inputs`: example inputs (normalised, synthesised, re-shaped).
- :mod:`~pt2lint.confirm.outcome`: failure classes and the next diagnostic for each.
- :mod:`~pt2lint.confirm.join`: static findings + measurements -> statuses, PTC090, PTC091.
"""
