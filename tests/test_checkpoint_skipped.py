"""``torch.utils.checkpoint``: ``checkpoint_sequential`` is skipped, ``checkpoint`` is traced.

Measured on torch 2.13 (``graph_breaks`` log, eager backend, and ``fullgraph=True``):
``trace_rules.lookup`` gives ``SkipFunctionVariable`` for both, but Dynamo traces
``checkpoint(fn, x, use_reentrant=False)`` as a higher-order op (no break, ``fullgraph=True``
compiles) while ``checkpoint_sequential(seq, 2, x, use_reentrant=False)`` breaks at the call
with "Attempted to call function marked as skipped" (GB0007).  The fact comes from the
shipped table (tools/gen_dynamo_facts.py probes it), not from a hand list.
"""

from __future__ import annotations

import textwrap

from pt2lint.analysis import dynamo_facts
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def findings(code: str):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    return sorted((d.start.line, d.code) for d in result.diagnostics if d.severity != "info")


def test_table_has_the_probed_fact():
    assert dynamo_facts.skipped_function("torch.utils.checkpoint.checkpoint_sequential") == "GB0007"
    assert dynamo_facts.skipped_function("torch.utils.checkpoint.checkpoint") is None


def test_checkpoint_sequential_in_forward_is_flagged_at_the_call():
    code = """
    import torch
    from torch import nn
    import torch.utils.checkpoint as cp


    class Deep(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))

        def forward(self, x):
            y = x + 1
            y = cp.checkpoint_sequential(self.blocks, 2, y, use_reentrant=False)
            return y * 2
    """
    assert findings(code) == [(13, "PTC307")]


def test_checkpoint_is_traced_and_its_function_followed():
    """The near miss: ``checkpoint`` is a higher-order op; a break inside the function it runs
    is still found (the analysis follows into it)."""
    code = """
    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint


    class Deep(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))

        def body(self, x):
            return self.blocks(x)

        def forward(self, x):
            y = checkpoint(self.blocks, x, use_reentrant=False)
            return checkpoint(self.body, y, use_reentrant=False)
    """
    assert findings(code) == []
