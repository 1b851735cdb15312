"""A ``collections.defaultdict`` held on the module is a dict Dynamo guards on.

``self.stats = defaultdict(int)`` in ``__init__`` and ``self.stats["seen"] += n`` in
``forward`` is the running-statistics idiom of a plain dict counter: measured on torch 2.13
(``CompileCounter``, four calls of one shape) Dynamo compiled the frame on every call (the guard
``not self.stats``, then the entry's value), exactly as for ``self.stats = {"seen": 0}``.  The
near misses compile once: a defaultdict built inside ``forward`` (no state outlives the call),
one emptied before ``forward`` returns (every call finds it empty), and one only read in
``forward`` (``self.table["k"]`` of a filled table, no store).  An entry of a container held on
the module changed in place (``self.lists["a"].append(1)``) recompiles as the container does.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_frame_counts, found

SOURCE = '''
from collections import defaultdict

import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.stats = defaultdict({factory})
        self.table = defaultdict(float, {{"k": 2.0}})

    def forward(self, x):
{body}
        return x * 2
'''

CASES = {
    "counter on the module": ("int", '        self.stats["seen"] += x.shape[0]', True),
    "list per key on the module": ("list", '        self.stats["shapes"].append(x.shape[0])', True),
    "list per key emptied before return": (
        "list", '        self.stats["shapes"].append(x.shape[0])\n        x = x + len(self.stats["shapes"])\n        self.stats.clear()', False,
    ),
    "defaultdict built in the call": ("int", '        local = defaultdict(int)\n        local["seen"] += x.shape[0]', False),
    "filled table only read": ("int", '        x = x * self.table["k"]', False),
}


def _source(factory: str, body: str) -> str:
    return SOURCE.format(factory=factory, body=body)


@pytest.mark.parametrize("name", list(CASES))
def test_a_defaultdict_on_the_module_mutated_in_forward(name):
    factory, body, recompiles = CASES[name]
    src = _source(factory, body)
    line = next(i for i, text in enumerate(src.splitlines()[1:], 1) if text == body.splitlines()[0])
    assert found(src, codes={"PTC501"}) == ([(line, "PTC501")] if recompiles else [])


def test_recompiles_are_what_dynamo_does():
    pytest.importorskip("torch")
    cases = [(_source(factory, body), "M()", "torch.randn(2, 4)") for factory, body, _ in CASES.values()]
    recompiled = [count > 1 for count in dynamo_frame_counts(cases, calls=4)]
    assert recompiled == [expected for _, _, expected in CASES.values()]


ENTRIES = '''
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lists = {{"a": []}}
        self.feats = {{"a": torch.zeros(4)}}

    def forward(self, x):
{body}
        return x * 2
'''

ENTRY_CASES = {
    "a list entry of a plain dict appended": ('        self.lists["a"].append(1)', True),
    "a tensor entry's out-of-place add": ('        x = x + self.feats["a"].add(1)', False),
    "a list entry only read": ('        x = x * len(self.lists["a"])', False),
}


@pytest.mark.parametrize("name", list(ENTRY_CASES))
def test_an_entry_of_a_container_on_the_module_changed_in_place(name):
    body, recompiles = ENTRY_CASES[name]
    src = ENTRIES.format(body=body)
    line = next(i for i, text in enumerate(src.splitlines()[1:], 1) if text == body)
    assert found(src, codes={"PTC501"}) == ([(line, "PTC501")] if recompiles else [])


def test_entry_recompiles_are_what_dynamo_does():
    pytest.importorskip("torch")
    cases = [(ENTRIES.format(body=body), "M()", "torch.randn(2, 4)") for body, _ in ENTRY_CASES.values()]
    recompiled = [count > 1 for count in dynamo_frame_counts(cases, calls=4)]
    assert recompiled == [expected for _, expected in ENTRY_CASES.values()]
