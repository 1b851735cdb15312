"""A top-level model's ``forward`` takes what the module's own calls of its instances pass.

A module class that no other module class builds is analysed as a model compiled on its own, its
unannotated ``forward`` parameters guessed to be tensors.  When the same file builds it in an
inference wrapper or a script and calls the instance (``self.text_embedding = TextEmbedding(...)``
then ``self.text_embedding(tokens, lengths[i])`` with ``lengths: List[int]``; ``net = Net()`` then
``net(x, 3)``), those calls say what the parameters are: ``Module.__call__`` passes its arguments
to ``forward``.  f5-tts' TRT-LLM wrapper had ``text[:, :seq_len]`` reported as a tensor slice
bound.  ``test_dynamo_agrees`` compiles each model and calls it as its caller does.
"""

from __future__ import annotations

import textwrap

import pytest

from linttools import dynamo_break_lines_many, found

EMBEDDING = """
import torch
from torch import nn
from typing import List


class TextEmbedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)

    def forward(self, text, seq_len):
        text = text[:, :seq_len]
        if seq_len > 3:
            text = text.flip(1)
        return self.embed(text)


class Synthesizer:
    def __init__(self, device):
        self.text_embedding = TextEmbedding().to(device)

    def sample(self, tokens: torch.Tensor, lengths: List[int]):
        return [self.text_embedding(tokens[i : i + 1], lengths[i]) for i in range(len(lengths))]
"""

SCRIPT = """
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x, count):
        for _ in range(count):
            x = x * 2
        return x


def main():
    net = Net()
    return net(torch.randn(2, 3), 3)
"""


def _lines(code: str):
    return [line for line, _ in found(textwrap.dedent(code).lstrip("\n"), codes=None)]


def test_wrapper_passes_list_elements():
    assert _lines(EMBEDDING) == []


def test_script_passes_an_int():
    assert _lines(SCRIPT) == []


def test_tensor_argument_keeps_the_guess():
    # near miss: the caller passes an element of a tensor, a 0-d tensor: the slice bound breaks
    code = EMBEDDING.replace("lengths: List[int]", "lengths: torch.Tensor")
    assert _lines(code)[0] == 12


def test_rebound_parameter_loses_its_annotation():
    # near miss: ``lengths`` is rebound to a tensor before the call, its elements are 0-d tensors
    code = EMBEDDING.replace(
        "        return [self.text_embedding(",
        "        lengths = torch.tensor(lengths)\n        return [self.text_embedding(",
    )
    assert _lines(code)[0] == 12


def test_attribute_holding_something_else_says_nothing():
    # near miss: ``self.text_embedding`` is also given another object, so its calls are not
    # this class's
    code = EMBEDDING.replace(
        "        self.text_embedding = TextEmbedding().to(device)\n",
        "        self.text_embedding = TextEmbedding().to(device)\n        self.text_embedding = lambda t, n: t\n",
    )
    assert _lines(code)[0] == 12


def test_unread_callers_keep_the_guess():
    # near miss: no call of the instance in the file, or one that passes ``*args``; ``count`` is
    # also used as a tensor (used only in ``range()`` it would be a weak guess: param_uses)
    code = SCRIPT.replace("return net(torch.randn(2, 3), 3)", "return net(*[torch.randn(2, 3), torch.tensor(3)])")
    assert _lines(code.replace("x = x * 2", "x = x * count.float()")) == [7]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [
        (textwrap.dedent(EMBEDDING).lstrip("\n"), 'm = torch.compile(TextEmbedding(), backend="eager")\nm(torch.randint(0, 10, (1, 6)), 5)\nm(torch.randint(0, 10, (1, 6)), 2)'),
        (textwrap.dedent(SCRIPT).lstrip("\n"), 'torch.compile(Net(), backend="eager")(torch.randn(2, 3), 3)'),
        (textwrap.dedent(EMBEDDING).lstrip("\n"), 'torch.compile(TextEmbedding(), backend="eager")(torch.randint(0, 10, (1, 6)), torch.tensor([5, 2])[0])'),
    ]
    assert dynamo_break_lines_many(cases) == [[], [], [12]]
