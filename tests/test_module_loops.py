"""A loop over a module container runs its body: after ``h = x; for blk in self.blocks: h = blk(h)``,
``h`` is the last block's output, not possibly ``x``.

Before, the analysis joined the state after the loop with the state before it (the loop might
run zero times), so an in-place ``h += r`` after a stack of blocks was reported as a write to
the forward input ``x`` (PTC401), which Dynamo's run of the same model (three blocks) does not
record.  The same holds through ``enumerate``/``zip`` (beside a list of known elements) and for
``range(len(self.blocks))``.  Near misses that stay reported: a loop over a list built from an
input, a ``range`` of a number the model keeps, a module loop with a ``break`` or a ``continue``,
and a ``zip`` with an input list (each may leave ``h`` bound to ``x``).
``test_watcher_agrees`` runs the models and records their input writes.
"""

from __future__ import annotations

import pytest

from linttools import found, watched_mutations

MODULE_LOOPS = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.encoders = nn.ModuleList()
        for _ in range(depth):
            self.encoders.append(nn.Linear(4, 4))
        self.blocks = nn.Sequential(*[nn.Linear(4, 4) for _ in range(depth)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 4)})

    def forward(self, x, r):
        z = x
        for i, encoder in enumerate(self.encoders):
            z = encoder(z)
        z += r
        y = x
        for blk in self.blocks:
            y = blk(y)
        y.add_(r)
        w = x
        for enc, blk in zip(self.encoders, self.blocks):
            w = blk(enc(w))
        w.mul_(2)
        v = x
        for head in self.heads.values():
            v = head(v)
        v.sub_(1)
        u = x
        for i, (blk, d) in enumerate(zip(self.blocks, [1, 2, 3])):
            u = blk(u) * d
        u.div_(2)
        t = x
        for i in range(len(self.encoders)):
            t = self.encoders[i](t)
        t.add_(1)
        return z + y + w + v + u + t
"""

NEAR_MISSES = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self, n=0):
        super().__init__()
        self.n = n
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x, ys):
        h = x
        for y in [y * 2 for y in ys]:
            h = h + y
        h += 1
        g = x
        for _ in range(self.n):
            g = g * 2
        g += 1
        f = x
        for blk in self.blocks:
            if f.shape[0] > 2:
                break
            f = blk(f)
        f += 1
        e = x
        for blk, y in zip(self.blocks, ys):
            e = blk(e) + y
        e += 1
        c = x
        for blk in self.blocks:
            if c.shape[0] > 2:
                continue
            c = blk(c)
        c += 1
        return h, g, f, e, c
"""


def test_module_container_loops_bind():
    assert found(MODULE_LOOPS, codes=["PTC401"]) == []


def test_loops_that_may_not_bind_stay_reported():
    assert found(NEAR_MISSES, codes=["PTC401"]) == [(15, "PTC401"), (19, "PTC401"), (25, "PTC401"), (29, "PTC401"), (35, "PTC401")]


def test_watcher_agrees(tmp_path):
    pytest.importorskip("torch")
    assert watched_mutations(tmp_path, "module_loops", MODULE_LOOPS, lambda torch, m: (torch.randn(2, 4), torch.randn(2, 4))) == []
    writes = watched_mutations(tmp_path, "loop_near_misses", NEAR_MISSES, lambda torch, m: (torch.randn(3, 4), []))
    assert sorted({w.lineno for w in writes}) == [15, 19, 25, 29, 35]
