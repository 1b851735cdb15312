"""A forward hook registered by a method the constructor does not call is not part of every call.

``enable_input_require_grads()`` (a base class's opt-in for adapter fine-tuning) registers a hook
that calls ``output.requires_grad_(True)``; a model built and compiled without calling it runs
no hook, and Dynamo traces its forward in one graph (measured below, torch 2.13).  Before, every
hook any method of the class registered was analysed as compiled code of each call, and the
opt-in hook's line was reported for every model that inherits it.  The near miss: the same
method called by ``__init__`` registers the hook whenever the model is built, and its graph break
stays reported (Dynamo breaks there).
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(4, 4)
        self.out = nn.Linear(4, 4)
        {init}

    def enable_input_stats(self):
        def hook(module, args, output):
            print(output.mean().item())

        self._stats_hook = self.emb.register_forward_hook(hook)

    def forward(self, x):
        return self.out(self.emb(x).relu())
"""

OPT_IN = SOURCE.format(init="self.ready = True")
ALWAYS = SOURCE.format(init="self.enable_input_stats()")
CALL = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'


def test_a_hook_only_an_opt_in_method_registers_is_not_reported():
    assert found(OPT_IN) == []


def test_a_hook_the_constructor_registers_is_reported():
    assert [line for line, _ in found(ALWAYS)] == [14, 14]


def test_what_dynamo_does():
    pytest.importorskip("torch")
    assert dynamo_break_lines_many([(OPT_IN, CALL), (ALWAYS, CALL)]) == [[], [14]]
