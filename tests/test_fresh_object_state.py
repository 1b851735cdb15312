"""State of an object built inside the compiled call is not guarded across calls.

``p = Pipeline(keys)`` in ``forward`` (or a helper it calls), whose ``__init__`` runs
``self.items.append(k)`` and ``len(self.items)``: the object is new at every call, so Dynamo has
nothing to guard on from one call to the next (measured on torch 2.13: one frame over three
calls).  Before, the append was reported as module state (PTC501) and the ``len`` as a growing
container (PTC506).  Near miss: the same pipeline built in ``__init__`` and grown by ``forward``
recompiles, and is reported.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_frame_counts, found

SOURCE = """\
import torch
from torch import nn


class Pipeline:
    def __init__(self, keys):
        self.items = []
        self.index = {{}}
        for k in keys:
            self.add(k)

    def add(self, key):
        self.index[key] = len(self.items)
        self.items.append(key)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.pipe = Pipeline(["a"])

    def forward(self, x):
{body}
"""

FRESH = "        p = Pipeline([\"wav\", \"len\"])\n        return self.lin(x) * len(p.items)"
HELD = "        self.pipe.add(\"k\")\n        return self.lin(x) * len(self.pipe.items)"


def test_an_object_built_in_the_call():
    assert found(SOURCE.format(body=FRESH), codes=None) == []


def test_an_object_held_by_the_module_and_grown():
    assert {code for _, code in found(SOURCE.format(body=HELD), codes=None)} == {"PTC501", "PTC506"}


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [(SOURCE.format(body=body), "Net()", "torch.randn(2, 4)") for body in (FRESH, HELD)]
    fresh, held = dynamo_frame_counts(cases, calls=3)
    assert fresh == 1 and held > 1
