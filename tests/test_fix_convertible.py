"""Shapes of ordinary model code that the codemods now rewrite, each with the near miss they must not.

Found by ``bench/convertible`` (cases written without looking at the codemods): a Python
number stored on ``self`` and read in one branch, a branch output made floating by a
reduction of a floating tensor, ...  Each test checks the applicability the fix gets and,
for the near miss, that it keeps the reason.
"""

from __future__ import annotations

import textwrap

from pt2lint.diagnostics import Applicability
from pt2lint.fixes.cond import number_attributes
from test_fix_cond_safety import cond_fix

import libcst as cst
import pytest

HEADER = "import torch\nimport torch.nn as nn\n\n\n"


def module(init_sig: str, init: str, forward: str, args: str = "x") -> str:
    return HEADER + "class M(nn.Module):\n" + f"    def __init__(self{init_sig}):\n        super().__init__()\n" + textwrap.indent(
        textwrap.dedent(init).strip("\n"), " " * 8
    ) + f"\n\n    def forward(self, {args}):\n" + textwrap.indent(textwrap.dedent(forward).strip("\n"), " " * 8) + "\n"


CLIP = """
h = self.fc(x)
peak = h.abs().amax()
if peak > self.limit:
    return h * (self.limit / peak)
return h
"""


def test_number_attribute_in_one_branch_is_not_a_parameter():
    text = module(", dim: int = 4, limit: float = 1.0", "self.fc = nn.Linear(dim, dim)\nself.limit = limit", CLIP)
    f = cond_fix(text)
    assert f.applicability is Applicability.SAFE, f.message
    assert "used in some branches only" not in f.message


def test_number_literal_attribute_is_not_a_parameter():
    text = module("", "self.fc = nn.Linear(4, 4)\nself.limit = 1.0", CLIP)
    assert cond_fix(text).applicability is Applicability.SAFE


def test_unannotated_or_tensor_attribute_stays_unsafe():
    # a parameter without an annotation could be passed an nn.Parameter
    text = module(", limit=1.0", "self.fc = nn.Linear(4, 4)\nself.limit = limit", CLIP)
    f = cond_fix(text)
    assert f.applicability is Applicability.UNSAFE and "`self.limit` is used in some branches only" in f.message
    # a parameter, and a number attribute later replaced by a tensor (read in the branch only)
    scale = "h = self.fc(x)\nif h.abs().amax() > 1.0:\n    return h * self.limit\nreturn h"
    assert cond_fix(module("", "self.fc = nn.Linear(4, 4)\nself.limit = 0.5", scale)).applicability is Applicability.SAFE
    for init in (
        "self.fc = nn.Linear(4, 4)\nself.limit = nn.Parameter(torch.ones(()))",
        "self.fc = nn.Linear(4, 4)\nself.limit = 1.0\nself.limit = nn.Parameter(torch.ones(()))",
    ):
        f = cond_fix(module("", init, scale))
        assert f.applicability is Applicability.UNSAFE and "`self.limit` is used in some branches only" in f.message, init


def test_number_attributes_helper():
    cls = cst.parse_module(textwrap.dedent("""
        class M:
            def __init__(self, a: float, b, c: int = 2):
                self.a = a
                self.b = b
                self.c = c
                self.d = -1e-6
                self.e = 0
                self.t = torch.zeros(())
                self.n, self.m = 1, 2
            def step(self):
                self.e += 1
                self.c = self.c * 2
    """)).body[0]
    assert number_attributes(cls) == {"a", "d", "e"}
    # a computed setattr may write any attribute
    dyn = cst.parse_module("class M:\n    def __init__(self):\n        self.a = 1\n        setattr(self, 'a', None)\n").body[0]
    assert number_attributes(dyn) == set()


MAX_NORM = """
h = self.proj(x)
if h.norm() > self.max_norm:
    h = h * (self.max_norm / (h.norm() + 1e-6))
return h
"""


def test_reduction_of_a_floating_tensor_is_floating():
    text = module(", max_norm: float = 2.0", "self.proj = nn.Linear(4, 4)\nself.max_norm = max_norm", MAX_NORM)
    f = cond_fix(text)
    assert f.applicability is Applicability.SAFE, f.message
    # `torch.relu(self.fc(x)) + 0.01` vs the tensor: floating in both
    relu = "h = torch.relu(self.fc(x))\nif not (h > 0).any():\n    h = h + 0.01\nreturn h"
    assert cond_fix(module("", "self.fc = nn.Linear(4, 4)", relu)).applicability is Applicability.SAFE


def test_reduction_of_an_input_or_with_a_dtype_stays_unsafe():
    # `x` is an input of unknown dtype: `x * 0.5` is float32 for an int64 `x`, which the
    # other branch keeps
    on_input = "if x.norm() > self.max_norm:\n    x = x * (self.max_norm / (x.norm() + 1e-6))\nreturn x"
    f = cond_fix(module(", max_norm: float = 2.0", "self.max_norm = max_norm", on_input))
    assert f.applicability is Applicability.UNSAFE and "is floating in one branch" in f.message
    # `sum(dtype=torch.long)` of a floating tensor is not floating
    cast = "h = self.proj(x)\nif h.sum() > 0:\n    h = h.sum(dtype=torch.long, dim=-1, keepdim=True) + 0.5\nreturn h"
    f = cond_fix(module("", "self.proj = nn.Linear(4, 4)", cast))
    assert f.applicability is not Applicability.SAFE, f.message


# ------------------------------------------------------------------ check: eager mode keeps the raise

VALIDATE = HEADER + '''class M(nn.Module):
    def forward(self, x):
        if (x < 0).any():
            raise ValueError(f"negative input of shape {tuple(x.shape)}")
        return x.log1p()
'''


def check_fixed(text: str) -> str:
    from pt2lint.engine import lint_source
    from test_fix_check import SETTINGS, fixed

    assert any(d.code == "PTC104" for d in lint_source(text, "m.py", SETTINGS).diagnostics)
    return fixed(text)


def test_validation_keeps_the_eager_raise_and_compiles_without_a_break():
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo
    from pt2lint.engine import lint_source
    from test_fix_check import SETTINGS, check_fixes

    out = check_fixed(VALIDATE)
    assert "if torch.compiler.is_compiling():\n            torch._assert_async(" in out
    assert '        elif (x < 0).any():\n            raise ValueError(f"negative input of shape {tuple(x.shape)}")' in out
    from test_fix_check import fixed

    assert fixed(out) == out  # idempotent
    assert not [d for d in lint_source(out, "m.py", SETTINGS).diagnostics if d.code.startswith("PTC1")]
    (fix,) = check_fixes(VALIDATE)
    assert fix.applicability is Applicability.UNSAFE and "instead of ValueError" in fix.message

    ns: dict = {}
    exec(compile(out, "m.py", "exec"), ns)
    m = ns["M"]()
    good, bad = torch.rand(3), -torch.rand(3) - 0.1
    with pytest.raises(ValueError, match=r"^negative input of shape \(3,\)$"):
        m(bad)  # eager: the original exception, its f-string evaluated
    dynamo.reset()
    assert dynamo.explain(m)(good).graph_break_count == 0
    dynamo.reset()
    compiled = torch.compile(m, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(good), good.log1p())
    with pytest.raises(RuntimeError, match="negative input of shape"):
        compiled(bad)
    exported = torch.export.export(ns["M"](), (good,)).module()
    with pytest.raises(RuntimeError, match="negative input of shape"):
        exported(bad)


def test_a_constant_message_gets_the_custom_op_check():
    # the near miss of the f-string: a constant message is written into a module-level op, which
    # compiled code calls (pt2lint/fixes/check_op.py); eager mode keeps the `if`/`raise`
    text = VALIDATE.replace('ValueError(f"negative input of shape {tuple(x.shape)}")', 'RuntimeError("negative input")')
    out = check_fixed(text)
    assert "_assert_async" not in out and out.count('raise RuntimeError("negative input")') == 2
    assert "if torch.compiler.is_compiling():\n            _pt2lint_check_M_forward_" in out


# ------------------------------------------------------------------ --verify: inputs that reach validation branches


def test_verify_variants_reach_nan_inf_and_integer_range_tests():
    torch = pytest.importorskip("torch")
    from pt2lint.confirm.verify import VARIANTS, _variant

    kinds = [k for _, k in VARIANTS]
    # the new variants come last: they run only while a branch is still not taken
    assert kinds[-6:] == ["nan", "inf", "int+100", "intneg", "params-zeros", "params-neg"]
    x, labels, mask = torch.rand(2, 3), torch.tensor([0, 3]), torch.ones(2, dtype=torch.bool)
    (a, l, m), _ = _variant("nan", (x, labels, mask), {})
    assert torch.isnan(a).sum() == 1 and torch.isnan(a).view(-1)[0] and torch.equal(a.view(-1)[1:], x.view(-1)[1:])
    assert torch.equal(l, labels) and torch.equal(m, mask) and not torch.isnan(x).any()  # the input is not modified
    (a, _, _), _ = _variant("inf", (x, labels, mask), {})
    assert torch.isposinf(a).sum() == 1
    (a, l, m), _ = _variant("int+100", (x, labels, mask), {})
    assert torch.equal(a, x) and l.tolist() == [100, 103] and torch.equal(m, mask)
    (_, l, _), _ = _variant("intneg", (x, labels, mask), {})
    assert l.tolist() == [0, -3]
    # nothing to perturb: no such tensor
    assert _variant("int+100", (x,), {}) is None and _variant("nan", (labels,), {}) is None
    assert _variant("nan", (torch.zeros(0),), {}) is None


# ------------------------------------------------------------------ mask-index: masks of elementwise functions of x


def test_mask_of_an_elementwise_function_of_x_is_rewritten():
    torch = pytest.importorskip("torch")
    from test_fix_mask_index import fixed as mask_fixed, mask_fixes, module as mask_module

    cases = {
        "return x[x.abs() > 1.0].sum()": "torch.where(x.abs() > 1.0, x, 0).sum()",
        "return torch.sum(x[(x - x.mean()).abs() > 2 * x.std()])": "torch.where((x - x.mean()).abs() > 2 * x.std(), x, 0).sum()",
        "return x[torch.sigmoid(-x) < 0.5].sum()": "torch.where(torch.sigmoid(-x) < 0.5, x, 0).sum()",
    }
    for body, rewrite in cases.items():
        src = mask_module(body)
        (fix,) = [f for f in mask_fixes(src) if f.name == "mask-index"]
        assert fix.applicability is Applicability.SAFE, (body, fix.message)
        out = mask_fixed(src, unsafe=False)
        assert rewrite in out, out
        assert mask_fixed(out) == out
        ns: dict = {}
        exec(compile(src, "a.py", "exec"), ns)
        ns2: dict = {}
        exec(compile(out, "b.py", "exec"), ns2)
        for x in (torch.randn(4, 5), torch.zeros(4, 5), torch.randn(3) * 5, torch.tensor(2.0)):
            torch.testing.assert_close(ns2["M"]()(x, None, None), ns["M"]()(x, None, None))


def test_mask_of_a_reduction_or_another_tensor_is_left_alone():
    from test_fix_mask_index import mask_fixes, module as mask_module

    for body in (
        "return x[x.sum(dim=1) > 0].sum()",  # a row mask: torch.where would broadcast it from the right
        "return x[y.abs() > 0].sum()",  # another tensor of unknown shape
        "return x[x.abs() > y].sum()",  # compared with a tensor that may be larger
        "return x[x @ y > 0].sum()",  # matmul changes the shape
    ):
        fixes = [f for f in mask_fixes(mask_module(body)) if f.name == "mask-index"]
        assert fixes and all(f.applicability is Applicability.DISPLAY_ONLY for f in fixes), (body, [f.message for f in fixes])


# ------------------------------------------------------------------ item-branch: a computed number read by several tests

ELIF = """
s = self.a(x).mean().item()
if s > 0.5:
    y = x * 0.25
elif s > -0.5:
    y = x * 1.0
else:
    y = x * 4.0
return y
"""


def test_a_computed_number_read_by_several_tests_binds_the_tensor():
    torch = pytest.importorskip("torch")
    from test_fix_item_branch import fixed as item_fixed, item_fixes, module as item_module

    src = item_module(ELIF)
    (fix,) = item_fixes(src)
    assert fix.edits and "bind the tensor to `s` instead of `self.a(x).mean().item()`" in fix.message, fix.message
    out = item_fixed(src, unsafe=True)
    assert "        s = self.a(x).mean()\n" in out and ".item()" not in out and "torch.cond(s > 0.5" in out, out
    assert item_fixed(out, unsafe=True) == out
    ns: dict = {}
    exec(compile(src, "a.py", "exec"), ns)
    ns2: dict = {}
    exec(compile(out, "b.py", "exec"), ns2)
    torch.manual_seed(0)  # the weights decide which branches the scales below take
    m1 = ns["M"]()
    m2 = ns2["M"]()
    m2.load_state_dict(m1.state_dict())
    taken = set()
    for scale in (0.0, 1.0, -1.0, 30.0, -30.0):
        x = torch.full((2, 4), scale)
        level = m1.a(x).mean().item()
        taken.add((level > 0.5, level > -0.5))
        torch.testing.assert_close(m2(x, None), m1(x, None))
    assert len(taken) == 3  # every branch of the chain was compared


def test_a_computed_number_read_elsewhere_or_after_other_statements_is_refused():
    from test_fix_item_branch import item_fixes, module as item_module

    for body, reason in (
        (ELIF.replace("return y", "return y * s"), "also used as a Python number"),
        (ELIF.replace("if s > 0.5:", "x = x + 1\nif s > 0.5:"), "statements run between the read and the `if`"),
    ):
        fixes = item_fixes(item_module(body))
        assert fixes and all(f.applicability is Applicability.DISPLAY_ONLY for f in fixes), body
        assert reason in fixes[0].message, fixes[0].message


# ------------------------------------------------------------------ cond: an input read by a floating-only reduction

CENTER = """
m = x.mean()
if m > 0:
    y = (x - m) * 0.5
else:
    y = x
return y
"""


def test_an_input_reduced_by_mean_before_the_if_is_floating():
    f = cond_fix(HEADER + "class M(nn.Module):\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(CENTER).strip("\n"), " " * 8) + "\n")
    assert f.applicability is Applicability.SAFE, f.message


def test_floating_by_use_needs_an_unconditional_reduction_of_the_same_tensor():
    torch = pytest.importorskip("torch")
    for dtype in (torch.int64, torch.int32, torch.uint8, torch.bool):  # the fact the proof rests on
        for op in ("mean", "std", "var", "norm"):
            with pytest.raises(RuntimeError):
                getattr(torch.ones(3, dtype=dtype), op)()
    for pre in (
        "m = x.amax()",  # works on integers
        "m = x.sum() * 0.0\nif False:\n    x.mean()",  # not on every path
        "m = x.sum() if x.dim() else x.mean()",
        "m = x.mean()\nx = x.long()",  # rebound
    ):
        body = CENTER.replace("m = x.mean()", pre)
        f = cond_fix(HEADER + "class M(nn.Module):\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n")
        assert f.applicability is not Applicability.SAFE, (pre, f.message)


def test_floating_by_use_helper(monkeypatch):
    import pt2lint.fixes.cond as cond_mod

    def qualname(ctx, node):  # `torch.<f>(...)` only; a method call has no qualified name
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "torch":
            return "torch." + func.attr.value
        return None

    monkeypatch.setattr(cond_mod, "call_qualname", qualname)
    module = cst.parse_module(textwrap.dedent("""
        a = x.mean() + torch.std(y, 0) + z.norm(dim=1).sum()
        b = w.mean(dtype=torch.float32) + (lambda: v.mean())() + (u.var() if c else 0) + (k and k.mean())
        if True:
            q.mean()
        r.mean()
    """))
    assert cond_mod.floating_by_use(None, list(module.body), rebound={"r"}) == {"x", "y", "z"}
