"""``hasattr(torch, name)`` decided from the attribute names torch 2.13 has.

Ground truth (torch 2.13, ``graph_breaks`` log and ``fullgraph=True``, eager backend): Dynamo
folds ``hasattr`` on a module or class (``torch``, ``torch.nn.functional``, ``torch.Tensor``,
``torch.nn.Module``, ``torch.backends``) to a constant, with no graph break, and traces only
the branch it selects.  A fallback under ``else`` (torchdiffeq's ``_nextafter`` falls back to
NumPy with a ``warnings.warn`` when ``torch.nextafter`` is missing) is dead code: it must not be
reported, and the break it would cause must not hide the breaks after it in a loop frame.
The last test runs every case here through Dynamo and compares.
"""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from pt2lint.analysis import dynamo_facts
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())

CASES = '''
import warnings

import torch
import torch.nn.functional as F
from torch import nn


def np_nextafter(x1, x2):
    warnings.warn("torch.nextafter is missing: falling back to NumPy")
    return torch.tensor(x1.detach().cpu().numpy()).to(x1)


def nextafter(x1, x2):
    with torch.no_grad():
        if hasattr(torch, "nextafter"):
            out = torch.nextafter(x1, x2)
        else:
            out = np_nextafter(x1, x2)
    return out


class NextafterInALoop(nn.Module):
    def forward(self, t, ys):
        for y in ys:
            t = nextafter(t, t + 1)
            if t > y:
                t = t - 1
        return t


class NotHasattr(nn.Module):
    def forward(self, t, ys):
        if not hasattr(torch.Tensor, "nextafter"):
            print("old torch")
        return t + ys


class FunctionalAlias(nn.Module):
    def forward(self, t, ys):
        q = ys.reshape(1, 1, -1, 1)
        if hasattr(F, "scaled_dot_product_attention"):
            out = F.scaled_dot_product_attention(q, q, q)
        else:
            print("manual attention")
            out = q
        use = hasattr(nn.Module, "register_forward_hook")
        return out.sum() + t if use else t.item()
'''


def lint(code: str = CASES):
    return lint_source(textwrap.dedent(code).lstrip("\n"), "cases.py", SETTINGS)


def lines(result, codes=None):
    return sorted({d.start.line for d in result.diagnostics if d.severity != "info" and (codes is None or d.code in codes)})


def _line(text: str) -> int:
    return textwrap.dedent(CASES).lstrip("\n").splitlines().index(text) + 1


def test_the_table_lists_what_torch_has():
    assert dynamo_facts.has_attribute("torch", "nextafter") is True
    assert dynamo_facts.has_attribute("torch.nn.functional", "scaled_dot_product_attention") is True
    assert dynamo_facts.has_attribute("torch.Tensor", "nextafter") is True
    # absent is not False: an out-of-tree backend (torch_npu) adds torch.npu when imported
    assert dynamo_facts.has_attribute("torch", "npu") is None
    assert dynamo_facts.has_attribute("torch.not_listed", "x") is None


def test_a_fallback_for_an_older_torch_is_dead_and_hides_nothing():
    result = lint()
    # the break after the helper in the loop is reported; the fallback's warn is not
    assert lines(result) == [_line("            if t > y:")]
    assert [d.code for d in result.diagnostics if d.severity != "info"] == ["PTC104"]


def test_hasattr_on_anything_else_keeps_both_branches():
    """A name the table lacks, a computed name or an object of the project: undecided."""
    code = '''
    import warnings
    import torch
    from torch import nn


    class M(nn.Module):
        def forward(self, x, name: str):
            if hasattr(torch, "npu"):
                warnings.warn("npu")
            if hasattr(torch, name):
                warnings.warn("computed")
            if hasattr(self, "nextafter"):
                warnings.warn("object")
            return x
    '''
    assert lines(lint(code), {"PTC303"}) == [9, 11, 13]


def test_a_local_named_torch_is_not_the_module():
    code = '''
    import warnings
    from torch import nn


    class M(nn.Module):
        def forward(self, x, torch):
            if not hasattr(torch, "nextafter"):
                warnings.warn("not the module")
            return x
    '''
    assert lines(lint(code), {"PTC303"}) == [8]


def test_every_case_matches_dynamo(tmp_path):
    """Each class's breaks, as the installed torch logs them, are the flagged lines."""
    pytest.importorskip("torch")
    import torch

    from pt2lint.confirm.dynamo import graph_breaks

    path = tmp_path / "cases.py"
    path.write_text(textwrap.dedent(CASES).lstrip("\n"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("hasattr_cases", path)
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    seen = set()
    for name in ("NextafterInALoop", "NotHasattr", "FunctionalAlias"):
        args = (torch.tensor(0.5), torch.tensor([0.25, 1.0, 0.75]))
        seen |= {b.lineno for b in graph_breaks(getattr(cases, name)(), args) if b.filename == str(path)}
    assert sorted(seen) == lines(lint())
