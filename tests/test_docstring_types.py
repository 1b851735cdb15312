"""Parameters whose docstring declares a Python scalar type are not taken for tensors.

``forward(self, input, target_is_real)`` with ``target_is_real (bool): ...`` in the docstring
(basicsr's GAN loss), ``S : int`` under a NumPy-style ``Arguments`` heading (speechbrain), ``:param
int n:`` (Sphinx): the analysis took every unannotated ``forward`` parameter for a tensor and
reported ``if target_is_real:`` as a data-dependent branch; called as documented, Dynamo traces
it (measured on torch 2.13: one graph).  A type naming a tensor, or a union with one, changes
nothing: ``if hc.sum() > 0:`` is still reported.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found
from pt2lint.analysis.docstrings import _parse, scalar_type

SOURCE = '''\
import torch
from torch import nn


class GANLoss(nn.Module):
    def forward(self, input, target_is_real, weight=None):
        """
        Args:
            input (Tensor): The prediction.
            target_is_real (bool): Whether the target is real or fake.
            weight (float, optional): A weight.

        Returns:
            Tensor: the loss.
        """
        if target_is_real:
            input = -input
        if weight is not None and weight > 1:
            input = input * weight
        return input.mean()


class MemLSTM(nn.Module):
    def forward(self, hc, S):
        """Memory step.

        Arguments
        ---------
        hc : torch.Tensor
            hidden states, shape: (d, B*S, H)
        S : int
            number of chunks

        Returns
        -------
        out : torch.Tensor
        """
        if S > 1:
            hc = hc * 2
        if hc.sum() > 0:
            hc = hc + 1
        return hc


class Tagged(nn.Module):
    def forward(self, x, n, m):
        """Scale.

        :param Tensor x: input
        :param int n: repeats
        :type m: bool or Tensor
        """
        if n > 2:
            x = x * 2
        if m:
            x = x + 1
        return x
'''


def test_documented_scalars_are_not_tensors():
    # ``m`` ("bool or Tensor") is no documented scalar, and the body only tests it: a weak guess
    # (param_uses), where ``hc`` (documented a Tensor, ``hc.sum()``) keeps its finding
    assert found(SOURCE, codes=None) == [(40, "PTC104")]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("bool", ("bool", False)),
        ("int, optional", ("int", True)),
        ("Optional[float]", ("float", True)),
        ("str or None", ("str", True)),
        ("int | None", ("int", True)),
        ("int, default 3", ("int", False)),
        ("Tensor", None),
        ("bool or Tensor", None),
        ("int or float", None),
        ("torch.Tensor", None),
        ("list of int", None),
    ],
)
def test_scalar_type(text, expected):
    assert scalar_type(text) == expected


def test_sections_end_where_the_next_one_starts():
    doc = "Run.\n\nArgs:\n    n (int): count\n\nReturns:\n    out (bool): flag\n"
    assert _parse(doc) == {"n": ("int", False)}
    numpy_doc = "Run.\n\nParameters\n----------\nn : int\n    count: the number\n\nReturns\n-------\nflag : bool\n"
    assert _parse(numpy_doc) == {"n": ("int", False)}


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [
        (SOURCE, 'torch.compile(GANLoss(), backend="eager")(torch.ones(2, 3), True, 2.0)'),
        (SOURCE, 'torch.compile(MemLSTM(), backend="eager")(torch.ones(2, 3), 2)'),
        (SOURCE, 'torch.compile(Tagged(), backend="eager")(torch.ones(2, 3), 3, torch.ones(()))'),
    ]
    assert dynamo_break_lines_many(cases) == [[], [40], [55]]


TESTED = '''\
import torch
from torch import nn


class Jpeg(nn.Module):
    def forward(self, x, quality):
        """
        Args:
            x (Tensor): image.
            quality (float): quality factor.
        """
        factor = quality
        if isinstance(factor, (int, float)):
            return x * factor
        factor.clamp_(0, 100)
        return x * factor
'''


def test_a_parameter_whose_type_the_code_tests_keeps_its_guess():
    # the body checks ``isinstance(factor, (int, float))`` on a copy of ``quality``: it takes a tensor
    # too, whatever the docstring says, so the in-place write on the other path is still an input write
    assert found(TESTED, codes=None) == [(15, "PTC401")]


PLAIN = '''\
import torch
from torch import nn


class ISTFT(nn.Module):
    def forward(self, real, imag, length, scale):
        """Inverse STFT.

        Args:
            real: (batch, frames)
            imag: float tensor of the imaginary part
            length: int
            scale: float. Multiplies the output
                weight: int (a continuation line, not an entry)

        Returns:
            y: (batch, length)
        """
        y = real + imag
        if length > 4:
            y = y * 2
        if imag.sum() > 0:
            y = y * scale
        return y[:, :length]
'''


def test_a_google_entry_whose_description_is_a_type_types_the_parameter():
    # ``length: int`` (torchlibrosa's ISTFT.forward): the author's type, as ``length (int):`` is;
    # a description that only starts with a type word (``float tensor of ...``) says nothing, and
    # so does a deeper-indented continuation line
    assert _parse(PLAIN.split('"""')[1]) == {"length": ("int", False), "scale": ("float", False)}
    assert found(PLAIN) == [(22, "PTC104")]


def test_dynamo_agrees_on_the_plain_google_entry():
    pytest.importorskip("torch")
    call = 'torch.compile(ISTFT(), backend="eager")(torch.ones(2, 8), torch.ones(2, 8), 6, 2.0)'
    assert dynamo_break_lines_many([(PLAIN, call)]) == [[22]]
