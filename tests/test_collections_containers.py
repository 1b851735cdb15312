"""``collections.deque`` and ``collections.OrderedDict`` are containers like a list and a dict.

``self.hist = collections.deque(maxlen=4)`` in ``__init__`` and ``self.hist.append(...)`` in
``forward``: the length Dynamo guards on grows from call to call, so it recompiles (measured
below, ``test_recompiles_are_what_dynamo_does``).  Before, a deque was an object of unknown
kind and its mutation was not reported.  The near misses: a deque emptied before ``forward``
returns, and one made in ``forward``.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_frame_counts, found

SOURCE = """\
import collections

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hist = collections.{factory}

    def forward(self, x):
{body}
        return x * 2
"""

CASES = {
    "a deque appended to in forward": ("deque(maxlen=4)", "        self.hist.append(x.detach())", [(13, "PTC501")]),
    "an ordered dict filled in forward": ("OrderedDict()", "        self.hist[len(self.hist)] = x.detach()", [(13, "PTC501")]),
    "a deque emptied before forward returns": ("deque(maxlen=4)", "        self.hist.append(x.detach())\n        self.hist.clear()", []),
    "a deque made in forward": ("deque(maxlen=4)", "        hist = collections.deque(maxlen=4)\n        hist.append(x)", []),
}


def _source(factory: str, body: str) -> str:
    return SOURCE.format(factory=factory, body=body)


@pytest.mark.parametrize("name", sorted(CASES))
def test_collections_containers(name):
    factory, body, expected = CASES[name]
    assert found(_source(factory, body), codes={"PTC501"}) == expected


def test_recompiles_are_what_dynamo_does():
    pytest.importorskip("torch")
    cases = [(_source(factory, body), "Net()", "torch.randn(2, 4)") for factory, body, _ in CASES.values()]
    recompiled = [count > 1 for count in dynamo_frame_counts(cases)]
    assert recompiled == [bool(expected) for _, _, expected in CASES.values()]
