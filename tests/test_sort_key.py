"""PTC322 reads a ``key=lambda ...`` written in the sort call.

Measured on torch 2.13 (the spec's examples run through Dynamo in
tests/test_spec_evidence.py): a key that returns a tensor breaks with "sort with
non-constant keys" (GB0207); a key that returns a shape int or a string does not.
"""

from __future__ import annotations

import textwrap

import pytest
from linttools import dynamo_break_lines

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def lines(code: str, rule: str = "PTC322"):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    return sorted(d.start.line for d in result.diagnostics if d.code == rule)


def test_key_lambda_returning_tensor_over_split_pieces():
    code = """
    import torch
    from torch import nn

    class Readout(nn.Module):
        def forward(self, x, sizes: list[int]):
            out = []
            for g in torch.split(x, sizes):
                keep = sorted(range(g.size(0)), key=lambda i: g[i, -1], reverse=True)[:2]
                out.append(g[keep])
            return out
    """
    assert lines(code) == [8]


def test_list_sort_with_tensor_key_on_unbound_rows():
    code = """
    import torch
    from torch import nn

    class Rank(nn.Module):
        def forward(self, x):
            rows = list(x.unbind(0))
            rows.sort(key=lambda r: r.norm())
            return torch.stack(rows)
    """
    assert lines(code) == [7]


def test_key_returning_shape_or_name_is_not_flagged():
    code = """
    import torch
    from torch import nn

    class ByWidth(nn.Module):
        def forward(self, x, feats: dict):
            parts = list(x.split([1, 2, 3], dim=1))
            by_width = sorted(parts, key=lambda p: p.shape[1])
            named = sorted(feats.items(), key=lambda kv: kv[0])
            by_len = sorted(parts, key=len)
            return torch.cat(by_width, 1), named, by_len
    """
    assert lines(code) == []


def test_key_lambda_bound_elsewhere_or_unknown_items_not_guessed():
    # a lambda bound to a name is not evaluated (its closure may not be this frame),
    # and a key over values of unknown kind returns an unknown: not a tensor
    code = """
    import torch
    from torch import nn

    def score(item):
        return item

    class Pick(nn.Module):
        def forward(self, x, items):
            key = lambda t: t.sum()
            a = sorted(items, key=key)
            b = sorted(items, key=lambda it: it.priority)
            return x, a, b
    """
    assert lines(code) == []


def test_key_returning_python_number_from_item_is_not_a_sort_break():
    # `.item()` in the key is its own break (PTC101's business); the key's value is a
    # Python number, so the sort itself is not reported
    code = """
    import torch
    from torch import nn

    class Rank(nn.Module):
        def forward(self, x):
            rows = list(x.unbind(0))
            return sorted(rows, key=lambda r: r.sum().item())
    """
    assert lines(code) == []


def test_sorting_items_whose_values_are_objects():
    # torch 2.13: a module or a plain-class instance among the values breaks like a
    # tensor does (GB0207); numbers, strings, None and tuples of them sort in the graph
    code = """
    import torch
    from torch import nn

    class Obj:
        pass

    def helper(x, **kw):
        for name, val in sorted(kw.items()):
            pass
        return x + 1

    def consts(x, **kw):
        for name, val in sorted(kw.items()):
            pass
        return x + 1

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(3, 3)

        def forward(self, x):
            d = {"a": Obj(), "b": 1}
            order = sorted(d.items())
            y = helper(x, kernel=self.l, flag=False)
            return consts(y, a=1, flag=False, s="q", t=(1, 2), n=None), order
    """
    assert lines(code) == [8, 24]


SORTED_TENSOR = """
import torch
from torch import nn

class Ranked(nn.Module):
    def forward(self, x):
        ranked = sorted(x[0])
        widths = sorted(x.shape)
        return torch.stack(ranked) * widths[0]
"""


def test_sorting_a_tensor_sorts_tensors():
    # iterating a tensor gives tensors: its sort keys are not Python constants; a shape is
    assert lines(SORTED_TENSOR) == [6]


def test_sorting_a_tensor_breaks_in_dynamo():
    pytest.importorskip("torch")
    source = textwrap.dedent(SORTED_TENSOR).lstrip("\n")
    call = 'torch.compile(Ranked(), backend="eager")(torch.randn(4, 5))'
    assert dynamo_break_lines(source, call) == [6]
