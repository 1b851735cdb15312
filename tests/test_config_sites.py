"""Config dataclasses built by the project: a field a script sets is not read as its default.

The analysis reads ``self.cfg.quantize`` of a config dataclass as the field's class default, so
the code under ``if self.cfg.quantize:`` is dead when the default is ``False``.  A project whose
training script builds ``Config(quantize=True)`` runs that code, and Dynamo breaks in it
(measured on torch 2.13: ``x.abs().max().item()`` breaks with GB0124 when the model below is
compiled with ``quantize=True``; with the defaults it compiles to one graph).
"""

from __future__ import annotations

import os
import textwrap

import pytest

from pt2lint.analysis.code_config import ConfigSite, annotated_init_classes, class_definitions, scan_source, site_overrides

from clitools import json_findings

CONFIG = """
from dataclasses import dataclass


@dataclass
class Cfg:
    dim: int = 8
    debug: bool = False
    quantize: bool = False
"""

MODEL = """
import torch
from torch import nn

from .config import Cfg


class Net(nn.Module):
    def __init__(self, cfg: Cfg):
        super().__init__()
        self.cfg = cfg
        self.proj = nn.Linear(cfg.dim, cfg.dim)

    def forward(self, x):
        if self.cfg.debug:
            print(x.sum())
        if self.cfg.quantize:
            scale = x.abs().max().item()
            x = x / scale
        return self.proj(x)
"""

TRAIN = """
import torch

from .config import Cfg
from .model import Net


def main():
    cfg = Cfg({args})
    model = torch.compile(Net(cfg))
    return model(torch.randn(2, 8))
"""


def _project(tmp_path, args: str):
    files = {"pyproject.toml": "[project]\nname = 'demo'\n", "pkg/__init__.py": "", "pkg/config.py": CONFIG,
             "pkg/model.py": MODEL, "pkg/train.py": TRAIN.format(args=args)}
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def _check(tmp_path, *paths):
    found = json_findings(tmp_path, *paths)
    return sorted((d["filename"].replace(os.sep, "/").split("pkg/")[-1], d["location"]["row"], d["code"]) for d in found)


@pytest.mark.parametrize(
    "args, expected",
    [
        ("quantize=True", [("model.py", 17, "PTC101")]),  # the script turns it on
        ("dim=16, quantize=use_quant()", [("model.py", 17, "PTC101")]),  # a value computed at run time: either
        ("16, False, True", [("model.py", 17, "PTC101")]),  # positional, in field order
        ("debug=True", [("model.py", 15, "PTC301")]),
        ("quantize=False", []),  # the default, spelled out
        ("dim=16", []),  # the flags keep their defaults
    ],
)
def test_a_field_the_project_sets_is_read_as_either_value(tmp_path, args, expected):
    _project(tmp_path, args)
    got = [g for g in _check(tmp_path, "pkg/") if g[2] != "PTC702"]
    assert got == expected


def test_the_site_counts_when_the_config_file_is_not_linted(tmp_path):
    # the script imports the dataclass from its own package: its construction site is read
    _project(tmp_path, "quantize=True")
    assert [g for g in _check(tmp_path, "pkg/model.py", "pkg/train.py") if g[2] != "PTC702"] == [("model.py", 17, "PTC101")]


def test_without_a_construction_site_the_defaults_hold(tmp_path):
    _project(tmp_path, "quantize=True")
    assert _check(tmp_path, "pkg/model.py") == []


def test_a_dataclass_built_inside_a_method_is_no_config_site():
    # output records built in ``forward`` set their fields at the call; they say nothing of configs
    text = textwrap.dedent(
        """
        from dataclasses import dataclass

        @dataclass
        class Out:
            loss: object = None

        class M:
            def __init__(self, out: Out):
                self.out = out

            def forward(self, x):
                return Out(loss=x)

            @classmethod
            def build(cls):
                return Out(loss=1)

        def make():
            return Out(loss=2)
        """
    )
    sites = scan_source(text, "m.py", "m").sites
    assert [(s.callee, s.keywords) for s in sites] == [("m.Out", (("loss", True, 1),)), ("m.Out", (("loss", True, 2),))]


def test_site_overrides_bind_positional_keyword_and_open_calls():
    sites = (
        ConfigSite("pkg.config.Cfg", ((True, 16),), (("quantize", False, None),)),
        ConfigSite("pkg.other.Cfg", (), (("debug", True, True),)),  # another class of the same name
        ConfigSite("Cfg", (), (), open=True),  # ``Cfg(**kw)`` read by its simple name
    )
    got = site_overrides(sites, "pkg.config.Cfg", ["dim", "debug", "quantize"])
    assert got == {
        "dim": [(True, 16), (False, None)],
        "quantize": [(False, None), (False, None)],
        "debug": [(False, None)],
    }


def test_candidates_are_classes_annotating_an_init_parameter_and_dataclasses_are_told_apart():
    text = textwrap.dedent(
        """
        @dataclass(frozen=True)
        @register
        class Cfg:
            dim: int = 8

        class Plain:
            pass

        class Net(nn.Module):
            def __init__(self, cfg: Cfg, other: Optional["Plain"] = None,
                         n: int = 3, mod: cfgs.Extra = None):
                super().__init__()

            def forward(self, x: Tensor):
                return x
        """
    )
    assert annotated_init_classes(text) == frozenset({"Cfg", "Plain", "Extra"})
    assert class_definitions(text) == (frozenset({"Cfg"}), frozenset({"Plain", "Net"}))


def test_a_file_linted_alone_reads_its_own_construction_sites():
    # the language server and ``lint_source`` scan the file itself
    from pt2lint.engine import lint_source
    from pt2lint.settings import LintSettings, resolve_selection

    src = textwrap.dedent(
        """
        from dataclasses import dataclass

        import torch
        from torch import nn


        @dataclass
        class Cfg:
            quantize: bool = False


        class Net(nn.Module):
            def __init__(self, cfg: Cfg):
                super().__init__()
                self.cfg = cfg

            def forward(self, x):
                if self.cfg.quantize:
                    x = x / x.abs().max().item()
                return x


        def build():
            return torch.compile(Net(Cfg({args})))
        """
    ).lstrip("\n")
    settings = LintSettings(enabled=resolve_selection())
    on = lint_source(src.format(args="quantize=True"), "single.py", settings).diagnostics
    off = lint_source(src.format(args=""), "single.py", settings).diagnostics
    assert [(d.start.line, d.code) for d in on] == [(19, "PTC101")]
    assert [d.code for d in off] == []
