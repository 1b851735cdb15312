"""Flags computed from ``torch.__version__`` take the target torch's value.

``WITH_PT21 = WITH_PT20 and int(torch.__version__.split('.')[1]) >= 1`` at module level (PyG's
``torch_geometric.typing``) and ``if not WITH_PT21: <fallback>`` in ``forward``: on torch 2.13
the fallback never runs, and Dynamo, which reads the flag as a constant, never traces it.
Before, ``torch.__version__`` was a string of unknown value and the fallback's breaks were
reported.  The version is the one the facts table was generated with (its public part).
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn

WITH_PT20 = int(torch.__version__.split('.')[0]) >= 2
WITH_PT21 = WITH_PT20 and int(torch.__version__.split('.')[1]) >= 1
WITH_PT99 = int(torch.__version__.split('.')[0]) >= 99
MAJOR, MINOR = (int(p) for p in torch.__version__.split('.')[:2])


class Net(nn.Module):
    def forward(self, x):
        if not WITH_PT21:
            print("old torch")
        if WITH_PT99:
            x = x[x > 0]
        if torch.__version__.startswith("1."):
            x = x.nonzero()
        if WITH_PT20:
            print("new torch")
        return x
"""


def test_version_flags_are_decided():
    assert found(SOURCE, codes=None) == [(19, "PTC301")]


def test_dynamo_agrees():
    torch = pytest.importorskip("torch")
    if not torch.__version__.startswith("2.13"):
        pytest.skip("the flags are computed for torch 2.13")
    call = 'torch.compile(Net(), backend="eager")(torch.ones(2, 3))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[19]]


VERSIONS = """\
import warnings

import torch
from packaging import version
from torch import nn


class Net(nn.Module):
    def forward(self, x, release):
        if "1.5.0" in torch.__version__:
            warnings.warn("BRISQUE does not support torch 1.5.0")
        if "2.13" not in torch.__version__:
            x = x.nonzero()
        if version.parse(torch.__version__) < version.parse("1.8"):
            warnings.warn("old torch")
        if version.parse(torch.__version__) >= version.parse("2.13"):
            print("new torch")
        if version.Version("2.13.0") != version.parse("2.13"):
            x = x[x > 0]
        if version.parse(release) < version.parse("2.0"):
            print("release unknown")
        return x
"""


def test_substring_tests_and_version_objects_of_known_strings_are_decided():
    # ``"1.5.0" in torch.__version__`` (piq's BRISQUE) and packaging's version objects made from
    # known strings ("2.13" equals "2.13.0" as PEP 440 orders releases); a version parsed from
    # an unknown string (a parameter) decides nothing
    assert found(VERSIONS, codes=None) == [(17, "PTC301"), (21, "PTC301")]


def test_dynamo_agrees_on_version_objects():
    torch = pytest.importorskip("torch")
    pytest.importorskip("packaging")
    if not torch.__version__.startswith("2.13"):
        pytest.skip("the tests are decided for torch 2.13")
    call = 'torch.compile(Net(), backend="eager")(torch.ones(2, 3), "1.0")'
    assert dynamo_break_lines_many([(VERSIONS, call)]) == [[17, 21]]
