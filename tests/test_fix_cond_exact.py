"""The ``cond`` codemod's rewrite of a ``.item()`` comparison gives Python's answer for every dtype.

``if t.item() > -1`` compares the Python number read from ``t`` exactly; the rewritten
``torch.cond`` predicate compares tensors, where torch converts a Python int to the tensor's
own dtype (``uint8`` wraps -1 to 255, ``int8`` wraps 200 to -56) and a Python float promotes an
integer tensor to float32.  The table below runs every rewritten predicate on tensors of every
real dtype at its extreme values and next to the literal, and compares with Python (torch 2.13).
"""

from __future__ import annotations

import re

import pytest

from pt2lint.fixes.predicate import exact_in_every_dtype
from test_fix import fix as apply_fix

LITERALS = ["-1", "0", "1", "127", "128", "200", "255", "256", "-129", "2049", "-1.0", "0.5", "2.5", "16777216.5", "1e10", "-0.0"]
OPS = [">", ">=", "<", "<=", "==", "!="]


def _source(op: str, lit: str) -> str:
    return (
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        f"        if x.max().item() {op} {lit}:\n            y = x * 2\n        else:\n            y = x * 3\n        return y\n"
    )


def _predicate(op: str, lit: str) -> str:
    out = apply_fix(_source(op, lit), "cond", unsafe=False)
    m = re.search(r"torch\.cond\((.*), _true_fn, _false_fn", out)
    assert m, out
    return m.group(1)


def test_small_literals_only_are_left_uncast():
    assert exact_in_every_dtype(0, integer=True) and exact_in_every_dtype(127, integer=True)
    assert not exact_in_every_dtype(-1, integer=True)  # uint8 wraps it
    assert not exact_in_every_dtype(128, integer=True)  # int8 wraps it
    assert exact_in_every_dtype(-1.0) and exact_in_every_dtype(0.5)
    assert not exact_in_every_dtype(2049.0)  # not a float16
    assert "double()" in _predicate(">", "-1") and "double()" in _predicate(">", "200")
    assert "double()" not in _predicate(">", "0")


def test_rewritten_item_comparisons_agree_with_python_for_every_dtype():
    torch = pytest.importorskip("torch")
    dtypes = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
              torch.float16, torch.bfloat16, torch.float32, torch.float64]
    predicates = {(op, lit): _predicate(op, lit) for op in OPS for lit in LITERALS}
    wrong = []
    for dt in dtypes:
        if dt is torch.bool:
            values = [False, True]
        elif dt.is_floating_point:
            info = torch.finfo(dt)
            values = [info.min, info.max, -1.0, 0.0, 0.5, 1.0, 127.0, 128.0, 200.0, 2048.0, 16777216.0]
        else:
            info = torch.iinfo(dt)
            values = sorted({info.min, info.max, 0, 1, 127, min(info.max, 128), min(info.max, 200), min(info.max, 255), min(info.max, 16777217)})
        for v in values:
            x = torch.tensor([v], dtype=dt)
            for (op, lit), pred in predicates.items():
                expected = eval(f"x.max().item() {op} {lit}", {"x": x})
                got = bool(eval(pred, {"torch": torch, "x": x}))
                if got != expected:
                    wrong.append((str(dt), v, op, lit, pred))
    assert not wrong, wrong[:10]
