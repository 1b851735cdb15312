"""``out-of-place`` is refused when a view (or other name) of the written input is read later.

``y = x.view(-1); x.add_(1); return y``: ``y`` shares ``x``'s storage, so the caller sees
the write through ``y``; ``x = x.add(1)`` would leave ``y`` unchanged (torch shows it).
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.diagnostics import Applicability
from test_fix import HEADER, fix, fix_of


def module(body: str) -> str:
    return HEADER + "class M(nn.Module):\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"


VIEW_READ_LATER = [
    "y = x.view(-1)\nx.add_(1)\nreturn y",
    "y = x.view(-1)\nx += 1\nreturn x + y",
    "y = x[0]\nx.mul_(2)\nreturn y",
    "y = x.transpose(0, 1)\nx.clamp_(min=0)\nreturn y.sum()",
]


@pytest.mark.parametrize("body", VIEW_READ_LATER)
def test_out_of_place_is_refused_when_a_view_of_the_input_is_read_later(body):
    src = module(body)
    f = fix_of(src, "PTC401")
    assert f.applicability is Applicability.DISPLAY_ONLY and "`y` shares storage" in f.message, f.message
    assert fix(src, "out-of-place") == src


@pytest.mark.parametrize("body", [
    "h = x * 2\nx.add_(1)\nreturn h",          # a new tensor, not a view
    "x.add_(1)\ny = x.view(-1)\nreturn y",      # the view is taken after the write
    "y = x.view(-1)\nx.add_(1)\nreturn x",      # the view is never read again
])
def test_out_of_place_stays_an_unsafe_fix_without_a_live_view(body):
    assert fix_of(module(body), "PTC401").applicability is Applicability.UNSAFE


def test_the_view_really_sees_the_write():
    torch = pytest.importorskip("torch")
    original = module(VIEW_READ_LATER[0])
    rewritten = original.replace("x.add_(1)", "x = x.add(1)")
    outs = []
    for src in (original, rewritten):
        scope: dict = {}
        exec(compile(src, "m.py", "exec"), scope)
        outs.append(scope["M"]()(torch.zeros(2, 2)))
    assert torch.equal(outs[0], torch.ones(4)) and torch.equal(outs[1], torch.zeros(4))


# ---------------------------------------------------------------- other references to the input
# Each: the body, and the written statement with its out-of-place form.  The input is also
# reachable through a container, an attribute, a closure, a default, a global or a call that
# keeps it, so the in-place write is seen there and the rewrite's would not be.
ESCAPES = [
    ("keep = [x]\nx += 1\nreturn keep[0] * 1", "x += 1", "x = x + 1", "`keep` shares storage"),
    ("self.saved = x\nx.add_(1)\nreturn self.saved * 1", "x.add_(1)", "x = x.add(1)", "`self.saved = x` stores the input"),
    ("d = {'a': x.view(-1)}\nx.mul_(2)\nreturn d['a'] * 1", "x.mul_(2)", "x = x.mul(2)", "`d` shares storage"),
    ("self.saved = x.detach()\nx.add_(1)\nreturn self.saved * 1", "x.add_(1)", "x = x.add(1)", "`self.saved = x.detach()` stores"),
    ("self.cache.append(x)\nx.add_(1)\nreturn self.cache[-1] * 1", "x.add_(1)", "x = x.add(1)", "puts the input in a container"),
    ("a, b = x, 1\nx.add_(1)\nreturn a * b", "x.add_(1)", "x = x.add(1)", "`a` shares storage"),
    ("y = x[0]\nf = lambda: y * 1\nx.add_(1)\nreturn f()", "x.add_(1)", "x = x.add(1)", "a closure captures `y`"),
    ("g = lambda t=x: t * 1\nx.add_(1)\nreturn g()", "x.add_(1)", "x = x.add(1)", "as a default value"),
    ("global SAVED\nSAVED = x\nx.add_(1)\nreturn SAVED * 1", "x.add_(1)", "x = x.add(1)", "`global`/`nonlocal`"),
    ("self.keeper(x)\nx.add_(1)\nreturn self.keeper.last * 1", "x.add_(1)", "x = x.add(1)", "which may keep it"),
    ("h = helper(x.view(-1))\nx.add_(1)\nreturn h * 1", "x.add_(1)", "x = x.add(1)", "`h` shares storage"),  # returns its argument
    ("h = self.drop(x)\nx.add_(1)\nreturn h * 1", "x.add_(1)", "x = x.add(1)", "`h` shares storage"),
    ("ys = []\nfor i in range(2):\n    ys.append(x)\n    x.add_(1)\nreturn ys[0] * 1", "x.add_(1)", "x = x.add(1)", "puts the input in a container"),
    ("ys = []\nfor i in range(2):\n    x.add_(1)\n    ys.append(x)\nreturn ys[0] * 1", "x.add_(1)", "x = x.add(1)", "puts the input in a container"),
    ("x += self.keeper(x)\nreturn x", None, None, "`self.keeper(x)` passes the input to `self.keeper`, which may keep it"),
    ("x += unknown(x)\nreturn x", None, None, "`unknown(x)` passes the input to a call that may keep it"),
]
# The input is written but nothing else reaches it: the rewrite returns the same values.
NO_ESCAPE = [
    ("keep = [x]\nx += 1\nreturn x * 1", "x += 1", "x = x + 1"),  # the list is never read again
    ("x += 1\nreturn x * 1", "x += 1", "x = x + 1"),
    ("self.shape = x.shape\nx.add_(1)\nreturn x * 1", "x.add_(1)", "x = x.add(1)"),
    ("self.saved = x.clone()\nx.add_(1)\nreturn self.saved * x", "x.add_(1)", "x = x.add(1)"),  # a copy
    ("n = len(x)\nx.add_(1)\nreturn x * n", "x.add_(1)", "x = x.add(1)"),
    ("h = self.lin(x)\nx.add_(1)\nreturn h + x", "x.add_(1)", "x = x.add(1)"),
    ("x += self.block(x)\nreturn x * 1", "x += self.block(x)", "x = x + self.block(x)"),
    ("x += helper(x)\nreturn x * 1", "x += helper(x)", "x = x + helper(x)"),  # returns, does not keep
    ("print(x)\nx.add_(1)\nreturn x * 1", "x.add_(1)", "x = x.add(1)"),
    ("for i in range(2):\n    x.add_(1)\nreturn x * 1", "x.add_(1)", "x = x.add(1)"),
    ("f = lambda: x * 1\nx.add_(1)\nreturn f()", "x.add_(1)", "x = x.add(1)"),  # a closure over `x` sees the rebinding
]

CLASSES = '''
SAVED = None


def helper(t):
    return t


class Keeper(nn.Module):
    def forward(self, t):
        self.last = t
        return t.sum() * 0


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, t):
        return self.lin(t) * 2


'''


def escape_module(body: str) -> str:
    return HEADER + CLASSES + (
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.lin = nn.Linear(2, 2)\n        self.block = Block()\n        self.keeper = Keeper()\n"
        "        self.drop = nn.Dropout(0.0)\n        self.cache = []\n\n"
        "    def forward(self, x):\n" + textwrap.indent(body, " " * 8) + "\n"
    )


@pytest.mark.parametrize("body,old,new,reason", ESCAPES)
def test_out_of_place_is_refused_when_the_input_is_reachable_otherwise(body, old, new, reason):
    src = escape_module(body)
    f = fix_of(src, "PTC401")
    assert f.applicability is Applicability.DISPLAY_ONLY and reason in f.message, f.message
    assert fix(src, "out-of-place") == src


@pytest.mark.parametrize("body,old,new", NO_ESCAPE)
def test_out_of_place_stays_an_unsafe_fix_when_nothing_else_reaches_the_input(body, old, new):
    src = escape_module(body)
    f = fix_of(src, "PTC401")
    assert f.applicability is Applicability.UNSAFE, f.message
    assert fix(src, "out-of-place") == src.replace(old, new, 1)


def test_the_other_references_really_see_the_write():
    """torch 2.13, eager: each refused rewrite changes the returned value; each kept one does not."""
    torch = pytest.importorskip("torch")

    def run(src):
        scope: dict = {}
        exec(compile(src, "m.py", "exec"), scope)
        torch.manual_seed(0)
        return scope["M"]()(torch.ones(2))

    differs = {}
    for body, old, new, *_ in ESCAPES + NO_ESCAPE:
        if old is None:
            continue
        src = escape_module(body)
        assert old in src
        a, b = run(src), run(src.replace(old, new, 1))
        differs[body] = not torch.equal(a, b)
    assert [b for b, d in differs.items() if not d and any(b == e[0] for e in ESCAPES)] == []
    assert [b for b, d in differs.items() if d and any(b == e[0] for e in NO_ESCAPE)] == []


def test_the_iterable_of_the_loop_is_not_read_again_after_the_write():
    # each element is written once; the list is evaluated once, before the loop
    src = HEADER + textwrap.dedent(
        """
        class M(nn.Module):
            def forward(self, feats):
                outs = []
                for f in feats:
                    f.div_(2)
                    outs.append(f * 1)
                return outs
        """
    )
    assert fix_of(src, "PTC401").applicability is Applicability.UNSAFE
    reread = src.replace("outs.append(f * 1)", "outs.append(feats[0] * 1)")
    assert fix_of(reread, "PTC401").applicability is Applicability.DISPLAY_ONLY


def test_unpacked_loop_targets_take_only_their_own_part():
    # `m` takes the modules, not the inputs: reading it after the write reads no alias
    src = HEADER + textwrap.dedent(
        """
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.lins = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])

            def forward(self, feats):
                outs = []
                for i, (f, m) in enumerate(zip(feats, self.lins)):
                    f.mul_(2)
                    outs.append(m(f))
                return outs
        """
    )
    assert fix_of(src, "PTC401").applicability is Applicability.UNSAFE
    keeps = src.replace("outs.append(m(f))", "outs.append(m(f))\n            last = f")
    assert fix_of(keeps, "PTC401").applicability is Applicability.UNSAFE  # rebinding a name in the loop is no store
    stored = src.replace("outs.append(m(f))", "outs.append(f)")
    assert fix_of(stored, "PTC401").applicability is Applicability.DISPLAY_ONLY
