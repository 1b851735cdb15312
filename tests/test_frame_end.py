"""Breaks Dynamo never reaches because an earlier one ends the frame, and helpers that are
true while Dynamo traces.

Ground truth (torch 2.13, ``graph_breaks`` log, eager backend): after a graph break inside a
``for``/``while`` body or a ``try`` body Dynamo skips the rest of the frame, so a later break in
that frame is not logged until the first is fixed; after a break at the top level of the
function, or inside ``with torch.no_grad()``, it resumes and logs the later one too.  The
last test runs every case here through Dynamo and compares.
"""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())

CASES = '''
import numpy as np
import torch
from torch import nn


def tracing(t=None) -> bool:
    flag = is_compiling_now() or torch.jit.is_tracing()
    if t is not None:
        flag |= isinstance(t, torch.fx.Proxy)
    return flag


def is_compiling_now() -> bool:
    try:
        return torch.compiler.is_compiling()
    except Exception:
        return False


def scripting() -> bool:
    return torch.jit.is_scripting()


class LoopThenLater(nn.Module):
    def forward(self, x):
        y = x + 1
        for i in range(2):
            print("step", i)
            y = y * 2
        if y.sum() > 0:
            y = y + 1
        return y


class TopThenLater(nn.Module):
    def forward(self, x):
        y = x + 1
        print("step")
        if y.sum() > 0:
            y = y + 1
        return y


class TryThenLater(nn.Module):
    def forward(self, x):
        try:
            v = x.sum().item()
        finally:
            pass
        if x.sum() > 0:
            x = x + v
        return x


class NoGradThenLater(nn.Module):
    def forward(self, x):
        with torch.no_grad():
            print("step")
            y = x * 2
        if y.sum() > 0:
            y = y + 1
        return y


class MaskDraw(nn.Module):
    def forward(self, x):
        eps = np.random.rand(1).item()
        picked = []
        for n in [4, 4]:
            idx = np.random.choice(np.arange(n), 2, replace=False)
            picked.append(idx)
        idxs = np.array(picked)
        if idxs.max() > 2:
            x = x * 2
        return x * eps


class TracingGuard(nn.Module):
    def forward(self, x):
        mask = x > 0
        if not tracing(mask) and torch.all(mask):
            x = x * 2
        if not scripting() and torch.all(mask):
            x = x * 3
        return x
'''

# (class, line) of every graph break in CASES, as Dynamo logs it
LOOP, LOOP_LATER = 29, 31
TOP, TOP_LATER = 39, 40
TRY, TRY_LATER = 48, 51
NOGRAD, NOGRAD_LATER = 59, 61
DRAW, CHOICE, CHOICE_LATER = 68, 71, 74
GUARD, SCRIPTING = 82, 84


def lint():
    result = lint_source(CASES, "cases.py", SETTINGS)
    return [d for d in result.diagnostics if d.is_graph_break]


def lines(diags):
    return sorted({d.start.line for d in diags})


def test_a_break_in_a_loop_hides_the_later_ones_and_names_them():
    diags = lint()
    found = lines(diags)
    assert LOOP in found and LOOP_LATER not in found
    first = next(d for d in diags if d.start.line == LOOP)
    assert f"reached once it is fixed: line {LOOP_LATER} (PTC104)" in first.message


def test_a_break_at_the_top_level_or_under_no_grad_does_not_hide_the_next():
    found = lines(lint())
    assert {TOP, TOP_LATER, NOGRAD, NOGRAD_LATER} <= set(found)


def test_a_break_in_a_try_body_hides_the_later_ones():
    diags = lint()
    assert TRY in lines(diags) and TRY_LATER not in lines(diags)
    first = next(d for d in diags if d.start.line == TRY)
    assert f"line {TRY_LATER} (PTC104)" in first.message


def test_numpy_choice_breaks_and_ends_the_loop_frame():
    found = lines(lint())
    assert DRAW in found and CHOICE in found and CHOICE_LATER not in found


def test_a_helper_true_under_compile_short_circuits_and():
    found = lines(lint())
    assert GUARD not in found  # not tracing(...) is False while Dynamo traces
    assert SCRIPTING in found  # not is_scripting() is True: torch.all(...) is tested


def _imported(tmp_path, name: str, source: str):
    """``(path, module)``: ``source`` written to ``tmp_path/<name>.py`` and imported from there
    (Dynamo's break records name that file)."""
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"frame_end_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def test_every_case_matches_dynamo(tmp_path):
    """Each class's breaks, as torch 2.13 logs them, are the flagged lines (no more, no fewer)."""
    pytest.importorskip("torch")
    import torch

    from pt2lint.confirm.dynamo import graph_breaks

    path, cases = _imported(tmp_path, "cases", CASES)
    seen = set()
    for name in ("LoopThenLater", "TopThenLater", "TryThenLater", "NoGradThenLater", "MaskDraw", "TracingGuard"):
        seen |= {b.lineno for b in graph_breaks(getattr(cases, name)(), (torch.ones(4),)) if b.filename == str(path)}
    assert sorted(seen) == lines(lint())
    assert textwrap.dedent(CASES) == CASES


ARMS = '''
import torch
from torch import nn


class OptionalLoop(nn.Module):
    def forward(self, x, opt=None):
        y = x * 2
        if opt is not None:
            for i in range(2):
                y = y + opt[i].item()  # break: arm
        idx = (y > 0).nonzero()  # break: after
        return y.sum() + idx.shape[0]


class BothArmsLoop(nn.Module):
    def forward(self, x, opt=None):
        y = x * 2
        if opt is not None:
            for i in range(2):
                y = y + opt[i].item()  # break: both arms
        else:
            for i in range(2):
                y = y + x[i].item()  # break: else
        idx = (y > 0).nonzero()  # hidden
        return y.sum() + idx.shape[0]


class ReturningArm(nn.Module):
    def forward(self, x, opt=None):
        y = x * 2
        if opt is None:
            for i in range(2):
                y = y + x[i].item()  # break: returning
            return y
        idx = (y > 0).nonzero()  # break: after return
        return y.sum() + idx.shape[0]


class FlagLoop(nn.Module):
    def __init__(self, use_loop: bool):
        super().__init__()
        self.use_loop = use_loop

    def forward(self, x):
        y = x * 2
        if self.use_loop:
            for i in range(2):
                y = y + x[i].item()  # break: flag
        idx = (y > 0).nonzero()  # hidden by the flag
        return y.sum() + idx.shape[0]
'''


def _marked(src: str, marker: str) -> int:
    """The line of ``src`` carrying the comment ``marker``."""
    return next(i for i, line in enumerate(src.splitlines(), 1) if line.rstrip().endswith(f"# {marker}"))


def test_a_loop_break_in_one_arm_hides_nothing_after_the_if():
    """A break in a loop under ``if opt is not None:`` skips the frame only when the arm runs:
    in a call without ``opt`` the break after the ``if`` is Dynamo's first, so it is reported on
    its own (also after an arm that returns).  When every arm that goes on skips the frame, or
    the test is on a flag no default decides, the later break stays hidden (named)."""
    result = lint_source(ARMS, "arms.py", SETTINGS)
    diags = [d for d in result.diagnostics if d.is_graph_break]
    found = lines(diags)
    assert _marked(ARMS, "break: after") in found
    assert _marked(ARMS, "break: after return") in found
    assert _marked(ARMS, "hidden") not in found
    assert _marked(ARMS, "hidden by the flag") not in found
    flag = next(d for d in diags if d.start.line == _marked(ARMS, "break: flag"))
    assert f"line {_marked(ARMS, 'hidden by the flag')} (PTC202)" in flag.message
    # (named by the break of the arm a call without ``opt`` runs)
    both = next(d for d in diags if d.start.line == _marked(ARMS, "break: else"))
    assert f"line {_marked(ARMS, 'hidden')} (PTC202)" in both.message
    alone = next(d for d in diags if d.start.line == _marked(ARMS, "break: arm"))
    assert "reached once it is fixed" not in alone.message


def test_the_arms_cases_match_dynamo(tmp_path):
    """Each class compiled with and without ``opt``: the union of the breaks torch 2.13 logs is
    the flagged lines."""
    pytest.importorskip("torch")
    import torch

    from pt2lint.confirm.dynamo import graph_breaks

    path, cases = _imported(tmp_path, "arms", ARMS)
    seen = set()
    for name in ("OptionalLoop", "BothArmsLoop", "ReturningArm"):
        for args in ((torch.ones(4),), (torch.ones(4), torch.ones(4))):
            seen |= {b.lineno for b in graph_breaks(getattr(cases, name)(), args) if b.filename == str(path)}
    # the flag that turns the loop on: Dynamo skips the frame at the loop, the later break unlogged
    seen |= {b.lineno for b in graph_breaks(cases.FlagLoop(True), (torch.ones(4),)) if b.filename == str(path)}
    assert _marked(ARMS, "hidden by the flag") not in seen
    result = lint_source(ARMS, "arms.py", SETTINGS)
    assert sorted(seen) == lines([d for d in result.diagnostics if d.is_graph_break])
