"""PTC307 for the ``torch.nn.utils.rnn`` functions Dynamo marks as skipped.

``pack_padded_sequence`` and ``pad_packed_sequence`` are ``SkipFunctionVariable`` in
``torch._dynamo.trace_rules.manual_torch_name_rule_map``; the shipped facts table
(tools/gen_dynamo_facts.py) probed both to break with GB0007 on torch 2.13, and
``pad_sequence`` (inlined) to trace.
"""

from __future__ import annotations

import textwrap

from pt2lint.analysis import dynamo_facts
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def lines(code: str, rule: str = "PTC307"):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    return sorted(d.start.line for d in result.diagnostics if d.code == rule)


def test_table_has_the_probed_facts():
    assert dynamo_facts.skipped_function("torch.nn.utils.rnn.pack_padded_sequence") == "GB0007"
    assert dynamo_facts.skipped_function("torch.nn.utils.rnn.pad_packed_sequence") == "GB0007"
    assert dynamo_facts.traces("torch.nn.utils.rnn.pad_sequence")


def test_packing_in_forward_is_flagged_padding_a_list_is_not():
    code = """
    import torch
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x, lengths, pieces: list[torch.Tensor]):
            padded = pad_sequence(pieces, batch_first=True)
            packed = pack_padded_sequence(self.proj(x), lengths, batch_first=True, enforce_sorted=False)
            out, _ = pad_packed_sequence(packed, batch_first=True)
            return out, padded
    """
    assert lines(code) == [12, 13]
