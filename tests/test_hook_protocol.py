"""Forward hooks run with the arguments ``nn.Module.__call__`` gives them.

A pre-hook gets ``(module, args)``, one registered ``with_kwargs=True`` also the dict of keyword
inputs, a forward hook the module's output last.  ``args`` holds the caller's tensors (a write
through ``args[0]`` writes the forward input, and a test on its values is data-dependent);
``kwargs`` is a dict, so storing a key into it writes no tensor.  Before, every hook parameter
was taken for a tensor, and ``kwargs[name] = t`` was reported as an in-place write to a forward
input (PTC401); the input's version counter does not move (``test_inputs_are_what_torch_says``).
"""

from __future__ import annotations

import pytest

from linttools import found

SOURCE = """\
import torch
from torch import nn


class Recv(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, extra=None):
        return self.lin(x) + (0 if extra is None else extra)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.recv = Recv()
        self.side = {{"extra": torch.ones(4)}}
        self.recv.register_forward_pre_hook(self._hook{kw})

    def _hook(self, module, {params}):
{body}

    def forward(self, x):
        return self.recv(x)
"""

HOOK_LINE = 22

CASES = {
    # a key stored into the keyword-input dict: no tensor written
    "a key stored into kwargs": ("args, kwargs", ", with_kwargs=True", '        for key in self.side:\n            kwargs[key] = self.side[key]\n        return args, kwargs', []),
    # the near misses: the positional inputs are the caller's tensors
    "a write through args": ("args", "", "        args[0].sub_(1)", [(HOOK_LINE, "PTC401")]),
    "a test on an input's values": ("args", "", "        if torch.isnan(args[0]).any():\n            print('nan')", [(HOOK_LINE, "PTC104"), (HOOK_LINE + 1, "PTC301")]),
}


def _source(params: str, kw: str, body: str) -> str:
    return SOURCE.format(params=params, kw=kw, body=body)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hook_parameters_follow_the_hook_protocol(name):
    params, kw, body, expected = CASES[name]
    assert found(_source(params, kw, body), codes=None) == expected


def test_inputs_are_what_torch_says():
    torch = pytest.importorskip("torch")
    versions = {}
    for name in ("a key stored into kwargs", "a write through args"):
        params, kw, body, _ = CASES[name]
        ns: dict = {}
        exec(compile(_source(params, kw, body), "m.py", "exec"), ns)
        x = torch.randn(2, 4)
        before = x._version
        torch.compile(ns["Net"](), backend="eager")(x)
        versions[name] = x._version - before
    assert versions == {"a key stored into kwargs": 0, "a write through args": 1}
