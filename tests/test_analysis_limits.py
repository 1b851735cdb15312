"""Analysis limits are findings (PTC004), never silence.

The interpreter stops following calls at three limits (call-chain depth, argument
signatures per function, analyses per file); each call it does not follow is
reported where the analysis stopped, saying which limit was reached.  The depth limit
is high enough for real code: a graph break 30 helpers deep is found.
"""

from __future__ import annotations

import pytest

from pt2lint.analysis import interp
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())
HEADER = "import torch\nfrom torch import nn\n\n\n"


def _chain(n: int) -> str:
    """``forward -> h1 -> ... -> hn``, with ``.item()`` (PTC101) in ``hn``."""
    helpers = "".join(f"def h{i}(x):\n    return h{i + 1}(x) + 1\n\n\n" for i in range(1, n))
    return HEADER + helpers + f"def h{n}(x):\n    return x * x.sum().item()\n\n\nclass Deep(nn.Module):\n    def forward(self, x):\n        return h1(x)\n"


def _line_of(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def _found(src: str):
    return [(d.code, d.start.line, d.message) for d in lint_source(src, "m.py", SETTINGS).diagnostics]


def test_a_break_thirty_helpers_deep_is_found():
    src = _chain(30)
    found = _found(src)
    assert [(c, line) for c, line, _ in found] == [("PTC101", _line_of(src, "x.sum().item()"))], found


def test_a_chain_deeper_than_the_limit_is_reported_where_the_analysis_stopped():
    n = interp.MAX_DEPTH + 6
    src = _chain(n)
    found = _found(src)
    stop = interp.MAX_DEPTH  # forward is the first frame: h<MAX_DEPTH> is the first call not followed
    assert [(c, line) for c, line, _ in found] == [("PTC004", _line_of(src, f"return h{stop}(x)"))], found
    message = found[0][2]
    assert f"`h{stop}` was not analysed" in message and f"{interp.MAX_DEPTH} calls deep" in message


def test_calls_past_the_signature_limit_are_analysed_with_the_joined_kinds():
    # six calls with int factors, a seventh with a tensor: the seventh is analysed with the join of
    # every kind seen (a widening step), so the break it causes in the helper is found
    calls = "".join(f"        y{i} = scale(x, {i})\n" for i in range(1, interp.MAX_SIGNATURES_PER_FUNCTION + 1))
    calls += "        y = scale(x, x.sum())\n"
    src = HEADER + "def scale(x, k):\n    return x * int(k)\n\n\nclass Mix(nn.Module):\n    def forward(self, x):\n" + calls + "        return x\n"
    assert [(c, line) for c, line, _ in _found(src)] == [("PTC103", _line_of(src, "return x * int(k)"))]
    # the same signature again and again is analysed once: no limit, no finding
    again = HEADER + "def scale(x, k):\n    return x * k\n\n\nclass Mix(nn.Module):\n    def forward(self, x):\n"
    again += "        x = scale(x, 2)\n" * 9 + "        return x\n"
    assert _found(again) == []


def test_the_signature_limit_is_reported_once_when_widening_runs_out(monkeypatch):
    monkeypatch.setattr(interp, "MAX_SIGNATURES_PER_FUNCTION", 1)
    monkeypatch.setattr(interp, "MAX_SIGNATURES_PER_SMALL_FUNCTION", 1)
    monkeypatch.setattr(interp, "MAX_WIDENINGS", 1)
    # kinds that keep growing the join: an int, a shape, a tensor, a list
    calls = "        a = pick(1)\n        b = pick(x.shape[0])\n        c = pick(x)\n        d = pick([x])\n"
    src = HEADER + "def pick(v):\n    return v\n\n\nclass Mix(nn.Module):\n    def forward(self, x):\n" + calls + "        return x\n"
    found = _found(src)
    assert [(c, line) for c, line, _ in found] == [("PTC004", _line_of(src, "c = pick(x)"))], found
    assert "argument kinds" in found[0][2] and "join" in found[0][2]
    assert "analysed with 1 different argument kinds" in found[0][2]  # the limit that applied


def test_the_per_file_budget_is_reported_once_at_the_first_call_not_analysed(monkeypatch):
    monkeypatch.setattr(interp, "MAX_ANALYSES_PER_FILE", 5)
    helpers = "".join(f"def f{i}(x):\n    return x * x.sum().item()\n\n\n" for i in range(8))
    calls = "".join(f"        x = f{i}(x)\n" for i in range(8))
    src = HEADER + helpers + "class Many(nn.Module):\n    def forward(self, x):\n" + calls + "        return x\n"
    found = _found(src)
    limits = [(line, m) for c, line, m in found if c == "PTC004"]
    # forward and f0..f3 are the 5 analyses; f4 is the first call that is not followed
    assert [line for line, _ in limits] == [_line_of(src, "x = f4(x)")], found
    assert "every later call in this file" in limits[0][1]
    assert sorted(line for c, line, _ in found if c == "PTC101") == [_line_of(src, f"def f{i}(") + 1 for i in range(4)]


def test_recursion_is_not_a_limit():
    src = HEADER + "def down(x, n):\n    if n == 0:\n        return x\n    return down(x * 2, n - 1)\n\n\nclass R(nn.Module):\n    def forward(self, x):\n        return down(x, 3)\n"
    assert _found(src) == []


@pytest.mark.parametrize("ignored", ["PTC004", "analysis-limit"])
def test_the_limit_finding_can_be_ignored(ignored):
    settings = LintSettings(enabled=resolve_selection(ignore=[ignored]))
    codes = [d.code for d in lint_source(_chain(interp.MAX_DEPTH + 2), "m.py", settings).diagnostics]
    assert codes == []


def test_an_identity_test_helper_is_analysed_past_the_limit():
    # ``exists(v): return v is not None`` cannot break for any argument kind (``is`` compares
    # identity), so calls past the limit are analysed, not reported as skipped
    calls = "".join(f"        y{i} = exists(k{i})\n" for i in range(interp.MAX_SIGNATURES_PER_FUNCTION + 3))
    args = ", ".join(f"k{i}=None" if i % 2 else f"k{i}={i}" for i in range(interp.MAX_SIGNATURES_PER_FUNCTION + 3))
    kinds = "        k0 = x; k2 = x.shape; k4 = [x]; k6 = 'a'; k8 = x.sum()\n"
    src = (
        HEADER + 'def exists(val):\n    """Whether val is given."""\n    return val is not None\n\n\n'
        + f"class Mix(nn.Module):\n    def forward(self, x, {args}):\n" + kinds + calls + "        return x\n"
    )
    assert [c for c, _, _ in _found(src)] == []
    # a helper that does more than an identity test is limited too, and the calls past the limit
    # are analysed with the join of the kinds seen: its break on a tensor argument is found, and
    # nothing is reported as skipped
    near = src.replace("return val is not None", "return val is not None and bool(val)")
    codes = [c for c, _, _ in _found(near)]
    assert "PTC103" in codes and "PTC004" not in codes


# The base case of a recursion, in a branch the outer activation's constant arguments
# make dead: Dynamo (torch 2.13) inlines g(x, 3), h(x, 2), g(x, 1)... and breaks on the
# `.item()` ("Unsupported Tensor.item() call with capture_scalar_outputs=False").
RECURSIONS = {
    "cycle through a second helper": (
        "def g(x, n):\n    return h(x, n - 1) if n else x.sum().item()\n\n\n"
        "def h(x, n):\n    return g(x, n)\n\n\n"
        "class M(nn.Module):\n    def forward(self, x):\n        return g(x, 3)\n"
    ),
    "a method calling itself": (
        "class M(nn.Module):\n    def r(self, x, n):\n        if n:\n            return self.r(x, n - 1)\n"
        "        return x.sum().item()\n\n    def forward(self, x):\n        return self.r(x, 4)\n"
    ),
    "a flag turned off by the recursive call": (
        "def g(x, first=True):\n    if first:\n        return g(x, False)\n    return x.sum().item()\n\n\n"
        "class M(nn.Module):\n    def forward(self, x):\n        return g(x)\n"
    ),
}


@pytest.mark.parametrize("body", list(RECURSIONS.values()), ids=list(RECURSIONS))
def test_the_base_case_of_a_recursion_is_analysed(body):
    src = HEADER + body
    found = _found(src)
    assert [(c, line) for c, line, _ in found] == [("PTC101", _line_of(src, ".item()"))], found


def test_a_recursion_whose_calls_never_reach_the_breaking_branch_stays_clean():
    # g(x, "fast") -> g(x, "slow") -> x: Dynamo never runs the "debug" branch (no break)
    src = HEADER + (
        "def g(x, mode):\n    if mode == 'fast':\n        return g(x, 'slow') * 2\n"
        "    if mode == 'debug':\n        return x.sum().item()\n    return x\n\n\n"
        "class M(nn.Module):\n    def forward(self, x):\n        return g(x, 'fast')\n"
    )
    assert _found(src) == []


def test_widening_a_helper_given_self_of_many_classes_does_not_crash():
    # ``helper(self, x)`` from the forward of eight classes: past the limit the argument kinds are
    # joined, and instances of different classes join to a value of unknown class (not a crash);
    # the helper's own break is still found
    classes = "".join(
        f"class B{i}(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.scale = {i}\n\n"
        f"    def forward(self, x):\n        return helper(self, x)\n\n\n"
        for i in range(interp.MAX_SIGNATURES_PER_FUNCTION + 2)
    )
    src = HEADER + "def helper(block, x):\n    print(block.scale)\n    return x * block.scale\n\n\n" + classes
    found = _found(src)
    assert ("PTC301", _line_of(src, "print(block.scale)")) in [(c, line) for c, line, _ in found], found


# A validation helper of a few statements, called from many sites with a shape condition and
# messages of several kinds (strings, None, a lambda) and ``raises=False`` (under the general
# limit each new kind past the sixth signature widens the join, and the fourth widening is not
# analysed), last with a tensor condition.  Dynamo (torch 2.13) inlines every call and breaks on
# ``if not cond:`` for the tensor one (checked below).
_CHECKS = (
    "def check(cond, msg=None, raises=True):\n"
    '    """Whether cond holds; raise ValueError(msg) when it does not and raises is set."""\n'
    "    if not cond:\n"
    "        if raises:\n"
    "            raise ValueError(msg)\n"
    "        return False\n"
    "    return True\n\n\n"
    "class Checked(nn.Module):\n"
    "    def forward(self, x):\n"
    + "".join(f"        check(x.dim() > 0, 'message {i}')\n" for i in range(1, 9))
    + "        check(x.dim() > 0)\n"
    + "        check(x.dim() > 0, lambda: 'built on failure')\n"
    + "        check(x.dim() > 0, 'soft', raises=False)\n"
    + "        check((x > -100).all(), 'finite')\n"
    + "        return x * 2\n"
)


def test_a_small_helper_is_analysed_with_the_kinds_of_every_call_site():
    # twelve signatures of a five-statement helper: each call is analysed with its own
    # arguments (the small-function limit), so the tensor condition's break is found where Dynamo
    # breaks, and nothing is reported as not analysed
    src = HEADER + _CHECKS
    found = _found(src)
    assert [(c, line) for c, line, _ in found] == [("PTC104", _line_of(src, "if not cond:"))], found
    assert interp._small_body(_function(src, "check"))


def test_a_helper_with_a_loop_keeps_the_general_limit():
    src = HEADER + _CHECKS.replace("    if not cond:\n", "    for _ in range(1):\n        pass\n    if not cond:\n")
    assert not interp._small_body(_function(src, "check"))
    assert not interp._small_body(_function(HEADER + "def f(x):\n" + "    x = x + 1\n" * 9 + "    return x\n", "f"))
    assert interp._small_body(_function(HEADER + "def f(x):\n" + "    x = x + 1\n" * 7 + "    return x\n", "f"))
    # statements in nested blocks count: an if/else of 4 + 4 and the if itself is 9
    nested = "def f(x):\n    if x:\n" + "        x = x + 1\n" * 4 + "    else:\n" + "        x = x - 1\n" * 4
    assert not interp._small_body(_function(HEADER + nested, "f"))


def _function(src: str, name: str):
    import libcst as cst

    return next(s for s in cst.parse_module(src).body if isinstance(s, cst.FunctionDef) and s.name.value == name)


def test_dynamo_breaks_in_the_small_helper_on_the_tensor_condition():
    pytest.importorskip("torch")
    from linttools import dynamo_break_lines

    src = HEADER + _CHECKS
    lines = dynamo_break_lines(src, 'torch.compile(Checked(), backend="eager")(torch.randn(3, 4))')
    assert lines == [_line_of(src, "if not cond:")]
