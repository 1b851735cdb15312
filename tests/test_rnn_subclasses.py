"""A project subclass of ``nn.LSTM``/``nn.GRU``/``nn.RNN`` is refused like the torch class.

Dynamo decides on the instance (``isinstance(module, torch.nn.RNNBase)``), so reading a submodule of
a subclass breaks where it is read ("Dynamo does not support RNN, GRU, or LSTM", GB0014), and the
subclass's own ``forward``, compiled as a frame of its own once the caller runs eagerly, breaks
again at ``super().forward(...)``.  Before, both were missed (the submodule's class is the
project's, not ``torch.nn.LSTM``).  Near misses: a subclass of another torch module
(``nn.Linear``), and ``allow_rnn=True``.  ``test_dynamo_agrees`` runs the model.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found
from pt2lint.settings import LintSettings, resolve_selection

SOURCE = """\
import torch
from torch import nn


class MyLSTM(nn.LSTM):
    def forward(self, x, hx=None):
        out, state = super().forward(x, hx)
        return out, state


class MyLinear(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = MyLinear(4, 4)
        self.enc = MyLSTM(4, 8, batch_first=True)

    def forward(self, x):
        h = self.proj(x)
        a, _ = self.enc(h)
        return a
"""


def test_subclass_reads_and_super_forward_break():
    assert found(SOURCE, codes=None) == [(7, "PTC311"), (24, "PTC311")]


def test_allow_rnn_traces_them():
    assert found(SOURCE, LintSettings(enabled=resolve_selection(), allow_rnn=True), codes=None) == []


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(M(), backend="eager")(torch.randn(2, 3, 4))'
    assert dynamo_break_lines(SOURCE, call) == [7, 24]
