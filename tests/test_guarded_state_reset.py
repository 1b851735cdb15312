"""A reset of module state behind a compile-time guard, as the entry-state analysis sees it.

``clear_state()`` -> ``_reset()`` with ``if is_exporting(): return`` before ``self.mats = []``
(kornia's augmentation containers) resets the list on every call under ``torch.compile``:
``is_exporting()`` is False while Dynamo traces, so the ``return`` never runs and the later
``self.mats.append(m)`` never reads the state the call found.  Measured on torch 2.13
(``CompileCounter``, four calls of one shape): one frame compiled.  The near misses recompile
and stay flagged: the reset behind ``if is_compiling(): return`` (True while Dynamo traces, so
the list grows on every call) and behind a flag the analysis cannot decide
(``if self.keep: return`` with ``keep`` a constructor argument; the model is built with it
set, so the list grows).  A version shim (``_f = getattr(torch.compiler, "is_exporting", None)``,
then ``if _f is not None: return bool(_f())`` ahead of a fallback) is the guard it names when the
facts know that guard (it exists in torch 2.13), and undecided otherwise (here the fallback,
``is_compiling()``, runs: the list grows).

A generator method ``forward`` calls (``for name, m in self._pick(): ...``) runs when it is
iterated; one that leaves the list alone reads nothing of it, so the reset still comes first
(same measurement: one frame), where the analysis used to count any generator call as a read.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_frame_counts, found

SOURCE = '''
import torch
from torch import nn


def is_exporting():
    return torch.compiler.is_exporting()


def is_compiling():
    return torch.compiler.is_compiling()


_torch_is_exporting = getattr(torch.compiler, "is_exporting", None)
_torch_is_exporting_next = getattr(torch.compiler, "is_exporting_next", None)


def shim_exporting() -> bool:
    if torch.jit.is_scripting():
        return False
    if _torch_is_exporting is not None:
        return bool(_torch_is_exporting())
    return is_compiling()


def shim_unknown() -> bool:
    if _torch_is_exporting_next is not None:
        return bool(_torch_is_exporting_next())
    return is_compiling()


class M(nn.Module):
    def __init__(self, keep=True):
        super().__init__()
        self.keep = keep
        self.mats = []
        self.lin = nn.Linear(4, 4)

    def _reset(self):
        if {guard}:
            return
        self.mats = []

    def clear_state(self):
        self._reset()

    def _record(self, m):
        self.mats.append(m)  # the write

    def forward(self, x):
        self.clear_state()
        for _ in range(2):
            x = self.lin(x)
            self._record(x)
        return x
'''

CASES = {
    "is_exporting() helper": ("is_exporting()", False),
    "torch.compiler.is_exporting()": ("torch.compiler.is_exporting()", False),
    "a constant False": ("False", False),
    "a version shim of is_exporting()": ("shim_exporting()", False),
    "is_compiling() helper": ("is_compiling()", True),
    "an undecided flag": ("self.keep", True),
    "a shim of a guard the facts do not know": ("shim_unknown()", True),
}


def _source(guard: str) -> str:
    return SOURCE.format(guard=guard)


@pytest.mark.parametrize("name", list(CASES))
def test_a_reset_behind_a_guard(name):
    guard, recompiles = CASES[name]
    src = _source(guard)
    line = next(i for i, text in enumerate(src.splitlines()[1:], 1) if text.endswith("# the write"))
    assert found(src, codes={"PTC501"}) == ([(line, "PTC501")] if recompiles else [])


def test_recompiles_are_what_dynamo_does():
    pytest.importorskip("torch")
    cases = [(_source(guard), "M()", "torch.randn(2, 4)") for guard, _ in CASES.values()]
    recompiled = [count > 1 for count in dynamo_frame_counts(cases, calls=4)]
    assert recompiled == [expected for _, expected in CASES.values()]


LOOPS = '''
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.mats = []
        self.lin = nn.Linear(4, 4)

    def _pick(self):
        for name, m in self.named_children():
            yield name, m

    def _count(self):
        for m in self.mats:
            yield m

    def _record(self, m):
        self.mats.append(m * 2)  # the write

    def forward(self, x):
{before}
        self.mats = []
        for _name, m in self._pick():
            x = m(x)
{body}
        return x
'''

LOOP_CASES = {
    "a generator that leaves the list alone, before the reset": (
        "        x = x * len(list(self._pick()))", "        self._record(x)", False,
    ),
    "a loop of writes after it": ("        pass", "        for i in range(2):\n            self._record(x)", False),
    "a generator that reads the list before the reset": (
        "        x = x + len(list(self._count()))", "        self._record(x)", True,
    ),
}


@pytest.mark.parametrize("name", list(LOOP_CASES))
def test_a_generator_method_before_the_write(name):
    before, body, recompiles = LOOP_CASES[name]
    src = LOOPS.format(before=before, body=body)
    line = next(i for i, text in enumerate(src.splitlines()[1:], 1) if text.endswith("# the write"))
    assert found(src, codes={"PTC501"}) == ([(line, "PTC501")] if recompiles else [])


def test_a_generator_method_before_the_write_matches_dynamo():
    pytest.importorskip("torch")
    cases = [(LOOPS.format(before=before, body=body), "M()", "torch.randn(2, 4)") for before, body, _ in LOOP_CASES.values()]
    recompiled = [count > 1 for count in dynamo_frame_counts(cases, calls=4)]
    assert recompiled == [expected for _, _, expected in LOOP_CASES.values()]
