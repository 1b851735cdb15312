"""``next()`` on an iterator built outside the compiled region: PTC331 (a graph break) for the
iterator types Dynamo wraps as opaque objects, PTC501/PTC503 (a recompile on every call) for the
ones it tracks with a guard on their position.  Which is which comes from the facts table's
``iterator_objects`` probes; the Dynamo runs below check the claims on these models (torch 2.13).
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, dynamo_frame_counts, found

from pt2lint.analysis import dynamo_facts

BREAKS = """\
import itertools
import torch

SCHEDULE = iter([0.1, 0.2, 0.3, 0.4])


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.it = iter([1, 2, 3, 4, 5, 6, 7, 8])
        self.cyc = itertools.cycle([0.5, 2.0])
        self.gen = (i for i in range(100))
        self.pairs = zip([1, 2, 3, 4], [5, 6, 7, 8])
        self.keys = iter({"a": 1, "b": 2, "c": 3})

    def forward(self, x):
        a = next(self.it)
        b = next(self.cyc, 1.0)
        c = next(self.gen)
        d, e = next(self.pairs)
        k = next(self.keys)
        s = next(SCHEDULE)
        return x * a * b * c * d * e * s + len(k)
"""

COUNTED = """\
import itertools
import torch

TICKS = itertools.count()


class Ids(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ids = itertools.count(start=1)

    def forward(self, x):
        return x * next(self.ids)


class Steps(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = iter(range(1000))

    def forward(self, x):
        return x + next(self.steps)


class Ticks(torch.nn.Module):
    def forward(self, x):
        return x - next(TICKS)
"""

NEAR_MISSES = """\
import itertools
import torch


class Counter:
    def __init__(self):
        self.c = itertools.count()

    def step(self):
        return next(self.c)


class M(torch.nn.Module):
    def __init__(self, values):
        super().__init__()
        self.items = [1.0, 2.0, 3.0]
        self.first = next(iter(self.items))
        self.given = iter(values)

    def forward(self, x):
        it = iter(self.items)
        a = next(it)
        self.cur = iter([4.0, 5.0])
        b = next(self.cur)
        c = next(iter(self.items))
        d = Counter().step()
        return x * a * b * c * self.first + d
"""


def test_iterators_dynamo_cannot_step_are_graph_breaks():
    assert found(BREAKS) == [(17, "PTC331"), (18, "PTC331"), (19, "PTC331"), (20, "PTC331"), (21, "PTC331"), (22, "PTC331")]


def test_iterators_dynamo_guards_by_position_recompile():
    assert found(COUNTED) == [(13, "PTC501"), (22, "PTC501"), (27, "PTC503")]


def test_iterators_the_region_builds_or_does_not_know_are_not_reported():
    # a local iterator, one ``forward`` assigns before stepping it, a fresh ``iter()``, an object
    # built in the region, ``next()`` in ``__init__``, and ``iter()`` of a value of unknown type
    assert found(NEAR_MISSES) == []


def test_the_facts_name_the_constructors():
    assert dynamo_facts.iterator_next("builtins.iter:list") == ("breaks", "GB4347")
    assert dynamo_facts.iterator_next("itertools.cycle") == ("breaks", "GB4347")
    assert dynamo_facts.iterator_next("generator") == ("breaks", "GB4347")
    assert dynamo_facts.iterator_next("itertools.count") == ("recompiles", None)
    assert dynamo_facts.iterator_next("builtins.iter:tuple") == ("recompiles", None)
    assert dynamo_facts.iterator_next("builtins.iter:range") == ("recompiles", None)
    assert dynamo_facts.iterator_type("builtins.iter:list") == "list_iterator"
    for unknown in ("builtins.iter", "builtins.iter:object", "itertools.tee", None):
        assert dynamo_facts.iterator_next(unknown) is None


def test_dynamo_agrees():
    pytest.importorskip("torch")
    breaks = dynamo_break_lines_many([
        (BREAKS, 'torch.compile(M(), backend="eager")(torch.randn(2, 4))'),
        (NEAR_MISSES, 'torch.compile(M([1.0, 2.0]), backend="eager")(torch.randn(2, 4))'),
        (COUNTED, 'f = torch.compile(Ids(), backend="eager"); f(torch.randn(2, 4)); f(torch.randn(2, 4))'),
    ])
    assert breaks == [[17, 18, 19, 20, 21, 22], [], []]
    counts = dynamo_frame_counts([
        (COUNTED, "Ids()", "torch.randn(2, 4)"),
        (COUNTED, "Steps()", "torch.randn(2, 4)"),
        (COUNTED, "Ticks()", "torch.randn(2, 4)"),
        (NEAR_MISSES, "M([1.0, 2.0])", "torch.randn(2, 4)"),
    ])
    assert counts == [3, 3, 3, 1]


def test_every_iterator_the_table_records_is_reported_by_its_rule():
    # each constructor of the facts table, built in ``__init__`` as its probe built it and stepped
    # in forward: the breaking ones are PTC331, the ones Dynamo guards by position PTC501
    import json
    from pathlib import Path

    table = json.loads((Path(dynamo_facts.__file__).parent.parent / "data" / "dynamo_facts.json").read_text(encoding="utf-8"))
    entries = table["iterator_objects"]
    assert len(entries) >= 25
    for key, entry in entries.items():
        if not entry["confirmed"]:
            continue
        src = (
            "import itertools\nimport torch\n\n\nclass M(torch.nn.Module):\n    def __init__(self):\n"
            f"        super().__init__()\n        self.it = {entry['built']}\n\n    def forward(self, x):\n"
            "        r = next(self.it)\n        return x + 1\n"
        )
        want = {"breaks": "PTC331", "recompiles": "PTC501"}[entry["outcome"]]
        assert found(src, codes={"PTC331", "PTC501"}) == [(11, want)], key


REBUILT = """\
import itertools
import torch


class Base(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.it = iter([1.0, 2.0, 3.0])


class Rebuilds(Base):
    def forward(self, x):
        self.it = iter([4.0, 5.0])
        return x * next(self.it)


class Resets(Base):
    def reset(self):
        self.it = iter([6.0, 7.0])

    def forward(self, x):
        self.reset()
        return x * next(self.it)
"""


def test_an_iterator_a_method_rebuilds_is_not_reported():
    # ``__init__`` builds one, but ``forward`` (or a ``reset()`` it calls) builds the one ``next()``
    # meets: Dynamo knows its items
    assert found(REBUILT) == []


def test_dynamo_agrees_on_rebuilt_iterators():
    pytest.importorskip("torch")
    calls = 'x = torch.randn(2, 4)\nfor M in (Rebuilds, Resets):\n    f = torch.compile(M(), backend="eager")\n    f(x); f(x); f(x)'
    assert dynamo_break_lines_many([(REBUILT, calls)]) == [[]]
    assert dynamo_frame_counts([(REBUILT, "Rebuilds()", "torch.randn(2, 4)"), (REBUILT, "Resets()", "torch.randn(2, 4)")]) == [1, 1]
