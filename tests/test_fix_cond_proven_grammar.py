"""A ``cond`` rewrite that nothing refutes is safe only when :mod:`pt2lint.fixes.cond_proof` proves it:
straight-line elementwise arithmetic over the same leaves in every branch, one output, no ``with``
around the ``if``, and one promotion of dtypes.  Each case below broke a rewrite that had been
labelled safe (a helper writing state, a parameter read through a helper, a branch without the
parameters, two outputs under inductor's backward, ``.to(dtype)``, autocast, ``nn.Identity``,
``F.pad``, chained targets); each near miss stays safe."""

from __future__ import annotations

import pytest

from pt2lint.diagnostics import Applicability
from test_fix_cond_safety import branches, cond_fix, src

_INIT = "self.lin = nn.Linear(4, 4)\nself.out = nn.Linear(4, 4)\nself.drop = nn.Identity()\nself.dt = torch.float64"
_PRE = '''\
STATE = {"log": []}


def note(t):
    log = STATE["log"]
    log += ["positive"]
    return t * 2


def scale(t, m):
    return t * m.lin.weight.sum()


'''

UNPROVEN = {
    "helper writes state": branches("y = note(h)", "y = h * 3"),
    "parameter through a helper": branches("y = scale(h, self)", "y = h * 3"),
    "branch without the parameters": branches("y = x * 2", "y = h * 3"),
    "dtype by .to()": branches("y = h.to(self.dt)", "y = h * 3"),
    "integer where": branches("y = torch.where(h > 0, 1, 0)", "y = h * 3"),
    "submodule returning its input": branches("y = self.drop(h)", "y = h * 3"),
    "pad changes the size": branches("y = torch.nn.functional.pad(h, (1, 1))", "y = h * 3"),
    "keepdim reduction": branches("y = h.mean(-1, keepdim=True)", "y = h * 3"),
    "chained target": branches("y = z = h * 2", "y = h * 3"),
    "einsum changes the rank": branches('y = torch.einsum("ij,ij->i", h, h)', "y = h * 3"),
}


def _module(body: str) -> str:
    return src("h = self.lin(x)\n" + body, init=_INIT, pre=_PRE)


@pytest.mark.parametrize("name", sorted(UNPROVEN))
def test_unproven_rewrites_are_not_safe(name):
    f = cond_fix(_module(UNPROVEN[name]))
    assert f.applicability is not Applicability.SAFE, (name, f.message)


def test_two_outputs_are_not_safe():
    body = "if h.sum() > 0:\n    y, z = h * 2, h * 3\nelse:\n    y, z = h * 4, h * 5\nreturn y + z"
    assert cond_fix(_module(body)).applicability is not Applicability.SAFE


def test_autocast_around_the_if_is_not_safe():
    body = (
        'with torch.autocast("cpu", dtype=torch.bfloat16):\n'
        "    if h.sum() > 0:\n        y = torch.matmul(h, h)\n    else:\n        y = h * 3\nreturn y"
    )
    f = cond_fix(_module(body))
    assert f.applicability is not Applicability.SAFE, f.message


NEAR_MISSES = {
    "same submodule, scaled": branches("y = x + self.out(h)", "y = x - 0.5 * self.out(h)"),
    "elementwise of a floating name": branches("y = torch.relu(h)", "y = h * 0.5"),
    "pass-through and clamp": branches("y = h.clamp(max=1.0)", "y = h"),
    "normalised by its own norm": branches("y = h * (2.0 / (h.norm() + 1e-6))", "y = h"),
}


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_proven_rewrites_stay_safe(name):
    f = cond_fix(_module(NEAR_MISSES[name]))
    assert f.applicability is Applicability.SAFE, (name, f.message)


def test_the_reason_is_in_the_message():
    f = cond_fix(_module(UNPROVEN["branch without the parameters"]))
    assert "not proven safe" in f.message and "different tensors, parameters or submodules" in f.message
