"""A ``forward`` input used as a mapping (``cache["k"]``): its entries are the caller's tensors.

No tensor takes a string index, so a parameter read with one is a mapping, and what it holds is
of unknown kind -- but it is the caller's object: an in-place method on an entry
(``cache["k"].add_(1)``) or a store into one with an index only an array takes
(``ck[:, 0:3] = x``) writes the input.  Storing a new entry (``cache["v"] = x``), rebinding an
entry's name (``h = h * 2``), a copy (``.clone()``) and a plain slice store into what may be a list
write nothing of the caller's.  Expectations follow the dispatch-mode watcher on torch 2.13.
"""

from __future__ import annotations

import pytest

from linttools import found, watched_mutations

WRITES = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, cache, state):
        ck = cache["k"]
        ck[:, 0:3] = x
        state["s"].add_(1)
        return ck.sum()
"""

NEAR_MISSES = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, cache, state):
        ck = cache["k"].clone()
        ck[:, 0:3] = x
        cache["v"] = x
        n = cache["n"]
        n += 1
        lst = cache["list"]
        lst[0:2] = [1, 2]
        h = state["h"]
        h = h * 2
        h[:, 0] = 1
        return ck.sum() + n + h.sum()
"""


def _args(torch, _mod):
    cache = {"k": torch.zeros(2, 8, 4), "n": 1, "list": [0, 0, 0]}
    state = {"s": torch.zeros(3), "h": torch.ones(2, 3)}
    return (torch.randn(2, 3, 4), cache, state)


def test_writes_into_entries_of_an_input_mapping_are_input_mutations():
    assert found(WRITES, codes={"PTC401"}) == [(8, "PTC401"), (9, "PTC401")]


def test_near_misses_write_nothing_of_the_callers():
    assert found(NEAR_MISSES, codes={"PTC401"}) == []


def test_watcher_agrees(tmp_path):
    pytest.importorskip("torch")
    assert sorted({m.lineno for m in watched_mutations(tmp_path, "mapping_writes", WRITES, _args)}) == [8, 9]
    assert watched_mutations(tmp_path, "mapping_near", NEAR_MISSES, _args) == []
