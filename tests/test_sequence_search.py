"""PTC106 reports a search of a sequence of tensors that cannot end at an element by identity.

Measured on torch 2.13 (the spec's examples run through Dynamo in
tests/test_spec_evidence.py; the ``sequence_searches`` probes of the facts table): ``index``
over tensors breaks with GB0170 unless the searched value is the element itself; ``count``
and ``in`` trace.
"""

from __future__ import annotations

import textwrap

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def lines(body: str):
    code = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    result = lint_source(code, "m.py", DEFAULT)
    return sorted(d.start.line for d in result.diagnostics if d.code == "PTC106")


def test_the_table_says_which_searches_break():
    assert facts.sequence_search_break("index") == "GB0170"
    assert facts.sequence_search_break("count") is None  # Dynamo sums the comparisons
    assert facts.sequence_search_break("append") is None  # not a search
    assert facts.sequence_search_break(None) is None


def test_index_of_max_through_a_local_name():
    assert lines("""
    def forward(self, x):
        scores = [x.sum(), x.mean()]
        best = max(scores)
        return x * scores.index(best)
    """) == [10]  # the return line


def test_index_of_an_element_or_of_a_parameter_is_not_reported():
    # ``vals[0]``/``first`` may be the element itself (identity ends the search without ``==``);
    # ``v`` is a parameter, so whatever the caller passes
    assert lines("""
    def forward(self, x, v):
        vals = [x.sum(), x.mean()]
        first = vals[0]
        return x * (vals.index(vals[0]) + vals.index(first) + vals.index(v))
    """) == []


def test_a_name_also_bound_to_an_element_is_not_reported():
    assert lines("""
    def forward(self, x):
        vals = [x.sum(), x.mean()]
        m = x.max()
        if x.shape[0] > 2:
            m = vals[1]
        return x * vals.index(m)
    """) == []


def test_searches_of_numbers_and_sizes_are_not_reported_and_list_remove_is():
    # measured on torch 2.13: one break, at ``vals.remove(x.max())`` ("Data-dependent branching",
    # GB0170: ``x.sum() == x.max()`` is asked its truth); ``count`` and the searches of Python
    # numbers trace.  (``{x.sum(), x.max()}.remove(x.max())`` raises KeyError without
    # torch.compile: a tensor's hash is its identity.)
    assert lines("""
    def forward(self, x):
        sizes = list(x.shape)
        widths = [1, 2, 3]
        vals = [x.sum(), x.max()]
        vals.remove(x.max())
        return x.sum(dim=sizes.index(max(sizes))) * widths.index(2) * vals.count(x.max())
    """) == [11]


def test_in_init_is_not_reported():
    assert lines("""
    def __init__(self):
        super().__init__()
        w = [torch.ones(1), torch.zeros(1)]
        self.i = w.index(max(w))

    def forward(self, x):
        return x * self.i
    """) == []
