"""A field of a config object passed to a submodule's constructor takes the value the model reads.

``Model.__init__(self, cfg: Config)`` builds ``Block(cfg.dim, causal=cfg.causal)``: the analysis
reads ``self.cfg.causal`` in ``Model.forward`` as the dataclass field's default (joined with
what the project's own ``Config(...)`` calls in the checked files pass), and now the block gets
the same value, so ``if self.causal:`` in ``Block.forward`` is decided the same way.  Before,
the block's flag was of unknown value and the ``print`` under it was reported while the one
under ``if self.cfg.causal:`` was not.  The same for the package, each of its files alone; a
``Config(causal=True)`` in the file makes both undecided; a config class whose fields are set by
its ``__init__`` decides neither.
"""

from __future__ import annotations

import os

import pytest

from clitools import json_findings
from linttools import dynamo_break_lines_many

MODEL = """\
from dataclasses import dataclass
import torch
from torch import nn


@dataclass
class Config:
    dim: int = 4
    causal: bool = False


class Block(nn.Module):
    def __init__(self, dim, causal):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.causal = causal

    def forward(self, x):
        if self.causal:
            print("causal")
        return self.proj(x)


class Model(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.block = Block(cfg.dim, causal=cfg.causal)

    def forward(self, x):
        if self.cfg.causal:
            print("causal model")
        return self.block(x)
"""
BLOCK_PRINT, MODEL_PRINT = 20, 32

PLAIN_CONFIG = MODEL.replace(
    "@dataclass\nclass Config:\n    dim: int = 4\n    causal: bool = False\n",
    "class Config:\n    def __init__(self, dim=4, causal=False):\n        self.dim = dim\n        self.causal = causal\n",
)


def _check(root, *paths):
    return sorted((os.path.relpath(d["filename"], root).replace(os.sep, "/"), d["location"]["row"]) for d in json_findings(root, *paths))


@pytest.mark.parametrize(
    "source, lines",
    [
        (MODEL, []),
        (MODEL + "\n\nmodel = Model(Config(causal=True))\n", [BLOCK_PRINT, MODEL_PRINT]),
        (PLAIN_CONFIG, [BLOCK_PRINT, MODEL_PRINT]),
    ],
    ids=["field default", "a site sets the field", "config class with an __init__"],
)
def test_the_block_reads_the_field_the_model_reads(tmp_path, source, lines):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "model.py").write_text(source)
    assert _check(tmp_path, "model.py") == [("model.py", line) for line in lines]


def test_across_modules(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    pkg = tmp_path / "net"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "config.py").write_text("from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    dim: int = 4\n    causal: bool = False\n")
    block = MODEL[MODEL.index("class Block"):MODEL.index("class Model")].rstrip() + "\n"
    (pkg / "layers.py").write_text("from torch import nn\n\n\n" + block)
    model = MODEL[MODEL.index("class Model"):]
    (pkg / "model.py").write_text("from torch import nn\n\nfrom .config import Config\nfrom .layers import Block\n\n\n" + model)
    for paths in (["net"], ["net/model.py"], ["net/layers.py"]):
        assert _check(tmp_path, *paths) == [], paths
    (tmp_path / "train.py").write_text("from net.config import Config\nfrom net.model import Model\n\nmodel = Model(Config(causal=True))\n")
    assert _check(tmp_path, "net", "train.py") == [("net/layers.py", 12), ("net/model.py", 15)]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Model({cfg}), backend="eager")(torch.ones(2, 4))'
    measured = dynamo_break_lines_many([(MODEL, call.format(cfg="Config()")), (MODEL, call.format(cfg="Config(causal=True)"))])
    assert measured == [[], [BLOCK_PRINT, MODEL_PRINT]]
