"""Methods compiled on their own: ``@torch.compile`` on a method, ``torch.compile(model.log_prob)``,
``self._step = torch.compile(self._step)``.  Dynamo traces the bound method with the instance as
``self``, as it traces ``forward``; ``test_dynamo_agrees`` compiles each and reads the
graph_breaks log."""

from __future__ import annotations

import subprocess
import sys

import pytest

from linttools import found

_CLASS = """\
import torch
from torch import nn


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)

    {decorator}def log_prob(self, x):
        z = self.lin(x)
        if z.sum() > 0:
            z = z * 2
        return z.sum(-1)
{tail}"""

CASES = {
    "decorated method": (_CLASS.format(decorator="@torch.compile\n    ", tail=""), "flow.log_prob"),
    "bound method of a module-level instance": (
        _CLASS.format(decorator="", tail="\n\nflow = Flow()\nlog_prob = torch.compile(flow.log_prob)\n"),
        "log_prob",
    ),
    "method compiled by its own class": (
        _CLASS.format(decorator="", tail="")
        + "\n\nclass Trainer:\n    def __init__(self):\n        self.flow = Flow()\n        self.step = torch.compile(self.flow_step)\n\n"
        "    def flow_step(self, x):\n        z = self.flow(x)\n        if z.sum() > 0:\n            z = z * 2\n        return z\n",
        "Trainer().step",
    ),
}
_EXPECTED = {
    "decorated method": [(16, "PTC104")],
    "bound method of a module-level instance": [(15, "PTC104")],
    # forward is not compiled here; the compiled method's own `if` is
    "method compiled by its own class": [(27, "PTC104")],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_method_is_a_region(name):
    src, _ = CASES[name]
    assert found(src) == _EXPECTED[name]


def test_an_uncompiled_method_is_not_a_region():
    src = _CLASS.format(decorator="", tail="\n\nflow = Flow()\nlog_prob = flow.log_prob\n")
    assert found(src) == []


_DYNAMO = r"""
import logging, re, sys
import torch
import torch._dynamo.symbolic_convert
src, target = sys.stdin.read().split("\0")
lines = []
class H(logging.Handler):
    def emit(self, rec):
        m = re.search(r"Graph break in user code at (\S+):(\d+)", rec.getMessage())
        if m and m.group(1) == "m.py":
            lines.append(int(m.group(2)))
torch._logging.set_logs(graph_breaks=True)
for n in [n for n in logging.root.manager.loggerDict if n.endswith("__graph_breaks")]:
    lg = logging.getLogger(n)
    for h in list(lg.handlers):
        lg.removeHandler(h)
    lg.addHandler(H())
    lg.propagate = False
ns = {"__name__": "m"}
exec(compile(src, "m.py", "exec"), ns)
if target == "flow.log_prob":
    fn = ns["Flow"]().log_prob
else:
    fn = eval(target, ns)
fn(torch.ones(2, 4))
print(sorted(set(lines)))
"""


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamo_agrees(name):
    pytest.importorskip("torch")
    src, target = CASES[name]
    proc = subprocess.run([sys.executable, "-c", _DYNAMO], input=src + "\0" + target, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert eval(proc.stdout.strip().splitlines()[-1]) == [line for line, _ in _EXPECTED[name]]
