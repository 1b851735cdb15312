"""``cond`` rewrites after which the module would raise are refused or unsafe, never safe.

torch.cond traces both branches and requires one dtype, one rank and one device for
each output, and no side effects on outer state.  For each hazard below the static
part checks the fix's applicability (no torch needed); the torch part applies the fix
(``--unsafe-fixes``), runs the rewritten module and shows torch 2.13 raising, so the
verdict rests on what torch.cond does, not on belief.  A compatible control case is
rewritten as safe and gives the original's results.
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection
from test_fix import fix as apply_fix

SETTINGS = LintSettings(enabled=resolve_selection(), assume_compiled=True)
HEADER = "import torch\nimport torch.nn as nn\n\n\n"


def module(body: str, pre: str = "") -> str:
    return HEADER + textwrap.dedent(pre).lstrip("\n") + "class M(nn.Module):\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"


def cond_fix(src: str):
    diags = lint_source(src, "m.py", SETTINGS, fix_names=lambda d: ["cond"]).diagnostics
    fixes = [d.fix for d in diags if d.fix is not None and d.fix.name == "cond"]
    assert fixes, [(d.code, d.message) for d in diags]
    return fixes[0]


# (id, source, expected applicability, words of the reason)
HAZARDS = [
    ("rank", module("if x.sum() > 0:\n    y = x.sum()\nelse:\n    y = x * 2\nreturn y"), Applicability.UNSAFE, "0-d"),
    ("rank-return", module("if x.sum() > 0:\n    return x.sum()\nreturn x * 2"), Applicability.UNSAFE, "0-d"),
    ("rank-0-vs-1", module("if x.sum() > 0:\n    y = x.mean()\nelse:\n    y = x.flatten()\nreturn y"), Applicability.DISPLAY_ONLY, "one rank"),
    ("int32-int64", module("if x.sum() > 0:\n    y = x.int()\nelse:\n    y = x.long()\nreturn y"), Applicability.DISPLAY_ONLY, "dtype int32 in one branch and int64"),
    ("int-times-float", module("if x.sum() > 0:\n    y = x.long()\nelse:\n    y = x * 0.5\nreturn y"), Applicability.DISPLAY_ONLY, "dtype float in one branch and int64"),
    ("long-times-2", module("if x.sum() > 0:\n    y = x.long() * 2\nelse:\n    y = x * 2\nreturn y"), Applicability.DISPLAY_ONLY, "int64 in one branch and keeps its input's dtype"),
    ("device", module("if x.sum() > 0:\n    y = x.to('meta') * 2\nelse:\n    y = x * 2\nreturn y"), Applicability.UNSAFE, "moved to meta"),
    ("two-devices", module("if x.sum() > 0:\n    y = x.cpu()\nelse:\n    y = x.to('meta')\nreturn y"), Applicability.DISPLAY_ONLY, "one device"),
    # ranks relative to an input: a reduction over one dimension, an added dimension, an index
    ("rank-dim-reduction", module("if x.sum() > 0:\n    y = x.sum(dim=0)\nelse:\n    y = x * 2\nreturn y"), Applicability.DISPLAY_ONLY, "rank `x.dim()` - 1"),
    ("rank-unsqueeze", module("if x.sum() > 0:\n    x = x.unsqueeze(0)\nreturn x"), Applicability.DISPLAY_ONLY, "rank `x.dim()` + 1"),
    ("rank-index", module("if x.sum() > 0:\n    x = x[0]\nreturn x"), Applicability.DISPLAY_ONLY, "one rank"),
    # through functions and submodules of the file
    ("helper-cast", module("if x.sum() > 0:\n    y = to_half(x)\nelse:\n    y = x.float()\nreturn y",
        pre="def to_half(t):\n    return t.half()\n\n\n"), Applicability.DISPLAY_ONLY, "dtype float16 in one branch and float32"),
    ("helper-reduction", module("if x.sum() > 0:\n    y = total(x)\nelse:\n    y = x.flatten()\nreturn y",
        pre="def total(t):\n    return t.sum()\n\n\n"), Applicability.DISPLAY_ONLY, "rank 0 in one branch and 1"),
    ("helper-device", module("if x.sum() > 0:\n    y = move(x)\nelse:\n    y = x.cpu()\nreturn y",
        pre="def move(t):\n    out = t.to('meta')\n    return out\n\n\n"), Applicability.DISPLAY_ONLY, "on cpu in one branch and on meta"),
    # without an `else` the value from before the `if` is the other branch's output
    ("passthrough-bool", module("y = x * 2\nif x.sum() > 0:\n    y = y > 0\nreturn y"), Applicability.DISPLAY_ONLY, "dtype bool in one branch and num"),
    ("passthrough-int", module("y = x.long()\nif x.sum() > 0:\n    y = y * 0.5\nreturn y"), Applicability.DISPLAY_ONLY, "dtype float in one branch and int64"),
    ("passthrough-rank", module("y = x.sum()\nif x.sum() > 0:\n    y = x * 2\nreturn y"), Applicability.UNSAFE, "0-d"),
    ("helper-appends-global", module(
        "if x.sum() > 0:\n    y = helper(x)\nelse:\n    y = x * 2\nreturn y",
        pre="CACHE = []\n\n\ndef helper(t):\n    CACHE.append(t)\n    return t * 3\n\n\n"), Applicability.DISPLAY_ONLY, "`CACHE.append()`"),
    ("helper-writes-global-item", module(
        "if x.sum() > 0:\n    y = helper(x)\nelse:\n    y = x * 2\nreturn y",
        pre="STATS = {'calls': 0}\n\n\ndef helper(t):\n    STATS['calls'] += 1\n    return t * 3\n\n\n"), Applicability.DISPLAY_ONLY, "module-level container `STATS`"),
    ("helper-writes-global-tensor", module(
        "if x.sum() > 0:\n    y = helper(x)\nelse:\n    y = x * 2\nreturn y",
        pre="TOTAL = torch.zeros(4)\n\n\ndef helper(t):\n    TOTAL.add_(t)\n    return t * 3\n\n\n"), Applicability.DISPLAY_ONLY, "did not create"),
    ("helper-writes-closure", HEADER + textwrap.dedent(
        """
        class M(nn.Module):
            def forward(self, x):
                seen = [0]

                def helper(t):
                    seen[0] = 1
                    return t * 3

                if x.sum() > 0:
                    y = helper(x)
                else:
                    y = x * 2
                return y + seen[0]
        """).lstrip("\n"), Applicability.DISPLAY_ONLY, "`seen[...]`"),
    ("helper-appends-closure", HEADER + textwrap.dedent(
        """
        class M(nn.Module):
            def forward(self, x):
                seen = []

                def helper(t):
                    seen.append(t)
                    return t * 3

                if x.sum() > 0:
                    y = helper(x)
                else:
                    y = x * 2
                return y
        """).lstrip("\n"), Applicability.DISPLAY_ONLY, "`seen.append()`"),
]


@pytest.mark.parametrize("src, applicability, reason", [pytest.param(*h[1:], id=h[0]) for h in HAZARDS])
def test_hazardous_cond_rewrites_are_refused_or_unsafe(src, applicability, reason):
    f = cond_fix(src)
    assert f.applicability is applicability, f.message
    assert reason in f.message, f.message
    assert apply_fix(src, "cond", unsafe=False) == src  # never applied by default


CONTROL = module("if x.sum() > 0:\n    y = x.float() * 2\nelse:\n    y = x.float() - 1\nreturn y")
HELPER_OK = module(
    "if x.sum() > 0:\n    y = helper(x)\nelse:\n    y = x * 2\nreturn y",
    pre="def helper(t):\n    out = []\n    out.append(t * 3)\n    acc = t.clone()\n    acc[0] = 0\n    return out[0] + acc\n\n\n",
)


PASSTHROUGH_OK = [
    module("if x.sum() > 0:\n    x = x.mean(-1, keepdim=True) * x\nreturn x"),
    module("if x.sum() > 0:\n    y = to_half(x)\nelse:\n    y = to_half(x * 2)\nreturn y", pre="def to_half(t):\n    return t.half()\n\n\n"),
    module("y = x.float()\nif x.sum() > 0:\n    y = y * 2\nreturn y"),
    module("y = x.sum()\nif x.sum() > 0:\n    y = y * 2\nreturn y"),
    module("y = x.long()\nx = x.float()\nif x.sum() > 0:\n    y = y + 1\nreturn y"),
]


@pytest.mark.parametrize(
    "src", [CONTROL, *PASSTHROUGH_OK[2:]],
    ids=["casts-agree", "passthrough-cast", "passthrough-0d", "passthrough-earlier-name"],
)
def test_compatible_branches_stay_safe(src):
    assert cond_fix(src).applicability is Applicability.SAFE


@pytest.mark.parametrize("src", [HELPER_OK, *PASSTHROUGH_OK[:2]], ids=["helper-writes-only-its-own", "keepdim", "same-helper"])
def test_compatible_but_unproven_branches_are_offered_unsafe(src):
    # helpers and `dim` reductions are outside what pt2lint.fixes.cond_proof proves
    f = cond_fix(src)
    assert f.applicability is Applicability.UNSAFE and "not proven safe" in f.message, f.message


# ------------------------------------------------------------------ ground truth (torch 2.13)

def _run(src: str, x):
    scope: dict = {}
    exec(compile(src, "m.py", "exec"), scope)
    return scope["M"]()(x)


@pytest.mark.parametrize(
    "case", ["rank", "int32-int64", "int-times-float", "long-times-2", "device", "helper-appends-global", "helper-writes-closure", "passthrough-rank",
             "rank-dim-reduction", "helper-cast", "helper-device"]
)
def test_the_hazards_are_real_torch_cond_raises_on_the_rewrite(case):
    torch = pytest.importorskip("torch")
    src = next(h[1] for h in HAZARDS if h[0] == case)
    rewritten = _rewrite_anyway(src)
    assert "torch.cond(" in rewritten
    x = torch.arange(1.0, 5.0)
    _run(src, x)  # the original runs
    with pytest.raises(Exception):
        _run(rewritten, x)


def test_the_compatible_control_runs_and_matches():
    torch = pytest.importorskip("torch")
    out = apply_fix(CONTROL, "cond", unsafe=False)
    assert "torch.cond(" in out
    for x in (torch.arange(1.0, 5.0), -torch.arange(1.0, 5.0)):
        torch.testing.assert_close(_run(out, x), _run(CONTROL, x))


def _rewrite_anyway(src: str) -> str:
    """The torch.cond rewrite of ``src``: pt2lint's own (with ``--unsafe-fixes``) when it makes one,
    else (a refused case) the same shape built by hand from the two one-line branches
    (output ``y``, operand ``x``), as the codemod would write it."""
    out = apply_fix(src, "cond", unsafe=True)
    if "torch.cond(" in out:
        return out
    lines = src.splitlines()
    i = next(k for k, line in enumerate(lines) if line.strip().startswith("if x.sum() > 0:"))
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    true_line = lines[i + 1].strip()
    false_line = lines[i + 3].strip()
    block = [
        f"{indent}def _true_fn(x):", f"{indent}    {true_line}", f"{indent}    return y",
        f"{indent}def _false_fn(x):", f"{indent}    {false_line}", f"{indent}    return y",
        f"{indent}y = torch.cond(x.sum() > 0, _true_fn, _false_fn, (x,))",
    ]
    return "\n".join(lines[:i] + block + lines[i + 4:]) + "\n"
