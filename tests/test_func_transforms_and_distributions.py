"""What ``torch.func`` transforms and ``torch.distributions`` objects give are tensors: ``vmap(f)(x)``,
``grad(f)(x)``, ``jacrev(f)(x)``, ``Categorical(logits=l).sample()``, ``Normal(m, s).log_prob(x)``,
``.entropy()``, ``.mean``.  Reading one into Python (``.item()``) or branching on one breaks like
any tensor; using them in tensor arithmetic, or the distribution's ``batch_shape``, does not.
``test_cases_match_dynamo`` runs every body on torch 2.13 and reads the ``graph_breaks`` log."""

from __future__ import annotations

import textwrap

import pytest

from linttools import dynamo_break_lines_many, found

# (forward body, breaks); ``x = torch.randn(2, 4)``.  A break must be on the body's first line.
CASES = [
    ("a = vmap(self.f)(x).sum().item()\nx = x * a", True),
    ("a = torch.vmap(self.f)(x).sum().item()\nx = x * a", True),
    ("a = grad(lambda t: self.f(t).sum())(x[0]).sum().item()\nx = x * a", True),
    ("a = jacrev(self.f)(x[0]).sum().item()\nx = x * a", True),
    ("if jacfwd(self.f)(x[0]).sum() > 0:\n    x = x * 2", True),
    ("a = Categorical(logits=self.f(x)).sample()[0].item()\nx = x * a", True),
    ("if Categorical(logits=self.f(x)).entropy().mean() < 0.5:\n    x = x * 2", True),
    ("a = Normal(x, 1.0).log_prob(x).sum().item()\nx = x * a", True),
    ("if Normal(x, 1.0).mean.sum() > 0:\n    x = x * 2", True),
    # near misses: kept as tensors they trace
    ("x = x + vmap(self.f)(x)", False),
    ("x = x + jacrev(self.f)(x[0]).sum()", False),
    ("x = x + Normal(x, 1.0).log_prob(x)", False),
    ("d = Normal(x, 1.0)\nx = x + d.rsample() * d.stddev", False),
    ("if Normal(x, 1.0).batch_shape[0] > 1:\n    x = x * 2", False),
]

_MODULE = """\
import torch
from torch import nn
from torch.distributions import Categorical, Normal
from torch.func import grad, jacfwd, jacrev, vmap


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Linear(4, 4)

    def forward(self, x):
{body}
        return x
"""
_FIRST_LINE = 13


def _source(body: str) -> str:
    return _MODULE.format(body=textwrap.indent(body, " " * 8))


@pytest.mark.parametrize("body,breaks", CASES)
def test_flagged_exactly_where_dynamo_breaks(body, breaks):
    lines = sorted({line for line, code in found(_source(body)) if code[:4] in ("PTC1", "PTC2", "PTC3")})
    assert lines == ([_FIRST_LINE] if breaks else []), lines


def test_cases_match_dynamo():
    pytest.importorskip("torch")
    call = 'torch.compile(M(), backend="eager")(torch.randn(2, 4))'
    measured = dynamo_break_lines_many([(_source(body), call) for body, _ in CASES])
    assert measured == [[_FIRST_LINE] if breaks else [] for _, breaks in CASES], list(zip(CASES, measured))
