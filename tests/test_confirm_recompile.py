"""Confirm mode counts graphs for recompile findings, end to end on torch (CPU).

One ``pt2lint confirm`` run over three small files (one child process each, two at a
time): a global step counter (PTC503: flagged, and confirmed by a recompile on every
call), a cache filled once (silent, and at most two graphs over the calls with the
example's shapes), and a dict keyed by the batch size (PTC504: confirmed by a new graph
for each new batch size).
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest

torch = pytest.importorskip("torch")

from pt2lint.cli import cli  # noqa: E402
from clitools import cli_runner as _runner  # noqa: E402

COUNTER = '''
import torch
from torch import nn

STEP = 0


class Counted(nn.Module):
    def forward(self, x):
        global STEP
        STEP += 1
        return x + 1


def make_model():
    return Counted()


def example_inputs():
    return (torch.randn(4, 8),)
'''

FILL_ONCE = '''
import torch
from torch import nn


class Memo(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        key = "ones"
        if key not in self.cache:
            self.cache[key] = torch.ones(8)
        return x + self.cache[key]


def make_model():
    return Memo()


def example_inputs():
    return (torch.randn(4, 8),)
'''

SIZE_KEYED = '''
import torch
from torch import nn


class Scaled(nn.Module):
    def forward(self, x):
        scales = {x.shape[0]: 2.0}
        return x * scales[x.shape[0]]


def make_model():
    return Scaled()


def example_inputs():
    return (torch.randn(4, 8),)
'''


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("recompile")
    paths = {}
    for name, code in (("counter", COUNTER), ("fill_once", FILL_ONCE), ("size_keyed", SIZE_KEYED)):
        paths[name] = root / f"{name}.py"
        paths[name].write_text(textwrap.dedent(code).lstrip("\n"))
    args = ["confirm", "--no-cache", "--isolated", "--jobs", "2", "--select", "PTC5", "--extend-select", "PTC091"]
    files = [str(p) for p in paths.values()]
    as_json = _runner().invoke(cli, [*args, "--output-format", "json", *files], catch_exceptions=False)
    assert as_json.exit_code in (0, 1), as_json.stderr
    findings = json.loads(as_json.stdout)
    return paths, findings


def _of(findings, path):
    return [f for f in findings if f["filename"] == str(path)]


def test_global_counter_is_flagged_and_confirmed_to_recompile(run):
    paths, findings = run
    (flagged,) = [f for f in _of(findings, paths["counter"]) if f["code"] == "PTC503"]
    assert flagged["location"]["row"] == 10
    confirm = flagged["confirm"]
    assert confirm["status"] == "confirmed", confirm
    assert "G['STEP']" in confirm["detail"]
    graphs = confirm["evidence"]["graphs"]
    assert len(graphs) >= 4 and graphs[1] > graphs[0] and graphs[-1] > graphs[-2], graphs  # a graph per call
    # the limit probe then finds the recompile limit: a PTC091 finding names it
    assert [f["confirm"]["failure"] for f in _of(findings, paths["counter"]) if f["code"] == "PTC091"] == ["recompile-limit"]


def test_fill_once_cache_is_silent_and_compiles_at_most_two_graphs(run, tmp_path):
    paths, findings = run
    assert _of(findings, paths["fill_once"]) == []
    # the text summary lists the graphs compiled after each call
    text = _runner().invoke(
        cli, ["confirm", "--no-cache", "--isolated", "--select", "PTC5", str(paths["fill_once"])], catch_exceptions=False
    )
    assert text.exit_code == 0, text.stderr
    assert "0 recompiling, 0 failed" in text.stderr, text.stderr
    m = re.search(r"^  \S*fill_once\.py.*?: ([\d, ]+)$", text.stderr, re.M)
    assert m, text.stderr
    graphs = [int(g) for g in m.group(1).split(", ")]
    # calls 1-2 have the example's shapes: one graph, and the one the cache's fill costs;
    # a new batch size then costs the one recompile automatic dynamic shapes need, no more
    assert graphs[1] <= 2, graphs
    assert graphs[-1] <= 3 and graphs[-1] == graphs[2], graphs


def test_size_keyed_dict_is_confirmed_by_graphs_growing_with_batch_sizes(run):
    paths, findings = run
    (flagged,) = [f for f in _of(findings, paths["size_keyed"]) if f["code"] == "PTC504"]
    confirm = flagged["confirm"]
    assert confirm["status"] == "confirmed", confirm
    graphs = confirm["evidence"]["graphs"]
    assert graphs[4] > graphs[3] > graphs[2], graphs  # each new batch size after the first: a new graph
