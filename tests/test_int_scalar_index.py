"""Indexing with a 0-d integer tensor computed in the graph (PTC103).

Measured on torch 2.13 (``graph_breaks`` log, eager backend): ``x[i]``, ``x[i, 0]``,
``x[0, i]``, ``x[None, i]``, ``x[..., i]``, ``x.narrow(0, i, 1)`` and ``x.select(0, i)`` with
``i = t.argmax()`` (or ``torch.argmin(t)``, ``(m > 0).sum()``) break with "Data dependent
operator" (GB0033: ``aten._local_scalar_dense`` reads the index as a SymInt); ``x[:i]``
breaks with GB0124 (``__index__``, the slice-bound case); the store ``y[i] = v`` breaks with GB0033
as the read does, while ``y[k] = v`` with a 1-element ``k``, ``y[2] = v`` and ``y[mask] = v`` trace.  Traced without a break:
``x[idx]`` with a 1-d index tensor, ``x[i]`` with ``i = t.argmax(dim=0, keepdim=True)``
(a 1-element tensor), ``x[2]``, ``x[x.shape[0] - 1]`` and ``torch.index_select(x, 0, i.view(1))``.
``x[i]`` with ``i = idx.sum()`` of an input whose dtype is unknown is flagged too: a floating 0-d
index raises ``IndexError`` in eager mode, so in working code it is an integer or bool one, and
both are read into Python (``tests/test_zero_d_index.py`` measures it with an integer input).
The last test runs every case through Dynamo and compares.
"""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())

CASES = """import torch
from torch import nn


class Argmax(nn.Module):
    def forward(self, x, t, m):
        i = t.argmax()
        return x[i]


class MaskCount(nn.Module):
    def forward(self, x, t, m):
        n = (m > 0).sum()
        return x[n, 0] + x[..., 0][n]


class Narrow(nn.Module):
    def forward(self, x, t, m):
        i = torch.argmin(t)
        return x.narrow(0, i, 1) + x.select(0, i) + x[None, i]


class Slice(nn.Module):
    def forward(self, x, t, m):
        i = t.argmax()
        return x[:i]


class Store(nn.Module):
    def forward(self, x, t, m):
        y = x.clone()
        i = t.argmax()
        y[i] = 0.0
        return y


class StoreNearMisses(nn.Module):
    def forward(self, x, t, m):
        y = x.clone()
        k = t.argmax(dim=0, keepdim=True)
        y[k] = 0.0
        y[2] = 1.0
        y[m > 0] = 2.0
        return y


class NearMisses(nn.Module):
    def forward(self, x, t, m):
        idx = (m > 0).long()
        k = t.argmax(dim=0, keepdim=True)
        i = t.argmax()
        return x[idx] + x[k] + x[2] + x[x.shape[0] - 1] + torch.index_select(x, 0, i.view(1))
"""


def lint():
    return lint_source(CASES, "cases.py", SETTINGS)


def flagged(result, code="PTC103"):
    return sorted({d.start.line for d in result.diagnostics if d.code == code})


def _line(text: str) -> int:
    return CASES.splitlines().index(text) + 1


def test_integer_index_forms_are_flagged_and_near_misses_are_not():
    assert flagged(lint()) == [
        _line("        return x[i]"),
        _line("        return x[n, 0] + x[..., 0][n]"),
        _line("        return x.narrow(0, i, 1) + x.select(0, i) + x[None, i]"),
        _line("        return x[:i]"),
        _line("        y[i] = 0.0"),
    ]


def test_each_form_is_reported_at_its_index():
    result = lint()
    line = _line("        return x.narrow(0, i, 1) + x.select(0, i) + x[None, i]")
    assert len([d for d in result.diagnostics if d.code == "PTC103" and d.start.line == line]) == 3


def test_a_reduction_of_an_input_of_unknown_dtype_is_a_0d_index():
    code = textwrap.dedent('''
    from torch import nn


    class M(nn.Module):
        def forward(self, x, idx):
            i = idx.sum()
            return x[i]
    ''').lstrip("\n")
    assert flagged(lint_source(code, "m.py", SETTINGS)) == [7]


def test_every_case_matches_dynamo(tmp_path):
    pytest.importorskip("torch")
    import torch

    from pt2lint.confirm.dynamo import graph_breaks

    path = tmp_path / "cases.py"
    path.write_text(CASES, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("int_scalar_cases", path)
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    args = (torch.randn(5, 3), torch.randn(5), torch.tensor([1.0, -1.0, 2.0, 0.5, -0.5]))
    seen = set()
    for name in ("Argmax", "MaskCount", "Narrow", "Slice", "Store", "StoreNearMisses", "NearMisses"):
        seen |= {b.lineno for b in graph_breaks(getattr(cases, name)(), args) if b.filename == str(path)}
    assert sorted(seen) == flagged(lint())
