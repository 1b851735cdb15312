"""The ``guard`` codemod is safe only when the guarded call's arguments have no side effects.

Under ``torch.compile`` the statement under ``if not torch.compiler.is_compiling():`` is
skipped whole, arguments included: ``print(x.add_(1).sum())`` guarded skips the in-place
add in compiled code (measured below on torch 2.13: ``[2., 2., 2.]`` instead of
``[4., 4., 4.]``).  A proven effect refuses the fix; an argument not proven free of side
effects makes it unsafe; arguments proven free keep it safe.
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.diagnostics import Applicability
from test_fix import HEADER, fix, fix_of


def module(body: str, params: str = "x") -> str:
    return (
        HEADER + "import sys\nimport torch.nn.functional as F\n\n\nclass M(nn.Module):\n"
        f"    def forward(self, {params}):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n        return x * 2\n"
    )


def guard_fix(body: str):
    return fix_of(module(body), "PTC301", rule="guard")


PROVEN_EFFECTS = [
    ("print(x.add_(1).sum())", "writes `x` in place"),
    ("print(x.mul_(2))", "writes `x` in place"),
    ("print(torch.relu_(x))", "in-place function"),
    ("print(F.relu(x, inplace=True))", "inplace="),
    ("print(F.relu(x, True))", "inplace"),
    ("print(torch.add(x, 1, out=x))", "out="),
    ("print((s := x.sum()))", "assigns a name"),
    ("print(torch.randn(3))", "random"),
    ("print(x.normal_())", "writes `x` in place"),
    ("print(self.cache.pop())", "changes `self.cache`"),
    ("print(x.requires_grad_())", "changes the tensor's state"),
    ("it = iter([x])\nprint(next(it))", "next()"),
    ("print(torch.manual_seed(0))", "global state"),
    ("print(torch.set_printoptions(precision=2))", "global state"),
    ("print([t.add_(1) for t in [x]])", "writes `t` in place"),
    ("print(f'{x.add_(1)}')", "writes `x` in place"),
    # the in-place operators' methods and item stores, called by name, write their receiver
    ("x = x.clone()\nprint(x.__imul__(2))", "writes `x` in place"),
    ("x = x.clone()\nprint(x.__iadd__(1))", "writes `x` in place"),
    ("x = x.clone()\nprint(x.__setitem__(0, 1.0))", "writes `x` in place"),
    ("xs = [x]\nprint(xs.__iadd__([x]))", "writes `xs` in place"),
    ("d = {}\nprint(d.__ior__({'a': x}))", "writes `d` in place"),
    ("x = x.clone()\nprint(x.add_.__call__(1))", "writes `x` in place"),
]


@pytest.mark.parametrize("body,reason", PROVEN_EFFECTS)
def test_guard_is_refused_when_an_argument_has_a_side_effect(body, reason):
    f = guard_fix(body)
    assert f.applicability is Applicability.DISPLAY_ONLY and f.message.startswith("not guarded:") and reason in f.message, f.message
    assert fix(module(body), "guard") == module(body)


NOT_PROVEN = [
    ("print(helper(x))", "helper(x)"),                                    # an unresolved function
    ("print(self.lin(x))", "self.lin(x)"),                                # a module call
    ("gen = (t for t in [x])\nprint(list(gen))", "may consume an iterator"),
    ("gen = (t for t in [x])\nprint(*gen)", "may consume an iterator"),
    ("gen = (t for t in [x])\nprint([t for t in gen])", "may consume an iterator"),
    ("gen = (t for t in [x])\nprint(list(zip(gen, [1])))", "may consume an iterator"),
    ("print(torch.cuda.synchronize())", "torch.cuda.synchronize"),
]


@pytest.mark.parametrize("body,reason", NOT_PROVEN)
def test_guard_is_unsafe_when_an_argument_is_not_proven_free_of_side_effects(body, reason):
    f = guard_fix(body)
    assert f.applicability is Applicability.UNSAFE and reason in f.message and "unsafe:" in f.message, f.message
    assert "is_compiling()" in fix(module(body), "guard")
    assert fix(module(body), "guard", unsafe=False) == module(body)


SAFE = [
    "print(x.sum())",
    "print('shape', x.shape, x.dtype, x.mean().item())",
    "print(f'{x.sum()=} {x.norm():.3f}')",
    "print(torch.relu(x), F.softmax(x, dim=-1))",
    "print(x.mean(), file=sys.stderr)",
    "print(len(x), [1, 2][0], max([1, 2]), 'a'.join(['b']))",
    "print(list(range(3)), [t * 2 for t in x], sorted([3, 1]))",
    "print(x.numel() + 1, x.size(0), x.tolist())",
    "print(F.relu(x, inplace=False))",
    "print(lambda: x.add_(1))",  # a lambda is not called
    "d = {'a': x}\nprint({k: v.sum() for k, v in d.items()}, 'a b'.split())",
]


@pytest.mark.parametrize("body", SAFE)
def test_guard_stays_safe_when_every_argument_is_free_of_side_effects(body):
    f = guard_fix(body)
    assert f.applicability is Applicability.SAFE, f.message
    assert "unsafe" not in f.message
    assert "if not torch.compiler.is_compiling():" in fix(module(body), "guard", unsafe=False)


def test_statements_with_effects_do_not_join_a_safe_guard():
    body = "print(x.sum())\nprint(helper(x))\nprint(x.add_(1))\nprint(x.mean())"
    out = fix(module(body), "guard")
    assert out == module(
        "if not torch.compiler.is_compiling():\n    print(x.sum())\n"
        "if not torch.compiler.is_compiling():\n    print(helper(x))\n"
        "print(x.add_(1))\n"
        "if not torch.compiler.is_compiling():\n    print(x.mean())"
    ), out
    # safe only: the unsafe one is left alone and does not join its neighbours
    assert fix(module(body), "guard", unsafe=False) == module(
        "if not torch.compiler.is_compiling():\n    print(x.sum())\n"
        "print(helper(x))\nprint(x.add_(1))\n"
        "if not torch.compiler.is_compiling():\n    print(x.mean())"
    )


def test_logger_receiver_and_arguments_are_checked():
    src = HEADER + textwrap.dedent(
        """
        import logging

        logger = logging.getLogger(__name__)


        class M(nn.Module):
            def forward(self, x):
                logger.info("mean %s", x.mean())
                logger.info("added %s", x.add_(1))
                return x
        """
    )
    fixes = [d.fix for d in __import__("pt2lint.engine", fromlist=["lint_source"]).lint_source(
        src, "m.py", __import__("test_fix").SETTINGS, fix_names=lambda d: ["guard"]).diagnostics if d.code == "PTC302"]
    assert [f.applicability for f in fixes] == [Applicability.SAFE, Applicability.DISPLAY_ONLY]


def test_guarding_a_side_effecting_argument_changes_compiled_output():
    """The measurement behind the refusal: Dynamo skips the guarded statement, arguments and all."""
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    cases = {
        # body -> the original's compiled output equals its eager one; guarding it does not
        "print(x.add_(1).sum())": False,
        "print(x.sum())": True,
    }
    for body, same in cases.items():
        original = module(body)
        guarded = module(f"if not torch.compiler.is_compiling():\n    {body}")
        outs = {}
        for name, src in (("original", original), ("guarded", guarded)):
            scope: dict = {}
            exec(compile(src, f"{name}.py", "exec"), scope)
            dynamo.reset()
            outs[name] = torch.compile(scope["M"](), backend="eager")(torch.ones(3))
        dynamo.reset()
        assert torch.equal(outs["original"], torch.full((3,), 4.0 if "add_" in body else 2.0)), body
        assert torch.equal(outs["original"], outs["guarded"]) is same, (body, outs)
        # and the codemod applies exactly where guarding keeps the compiled output
        assert (fix(original, "guard", unsafe=False) != original) is same, body


def test_a_form_feed_before_the_first_indented_line_is_not_indented_twice():
    # LibCST's default indent is then "\f    "; a block indented by it again sits, for CPython
    # (which resets the column at a form feed), at its header's column: IndentationError
    src = "import torch\n\n\n@torch.compile\ndef f(x):\n\x0c    print('step')\n    return x + 1\n"
    out = fix(src, rule="guard")
    compile(out, "m.py", "exec")
    # the form feed stays where it was, once; the block inside the new ``if`` is indented by
    # spaces alone (the engine hands LibCST the text without form feeds in indentation)
    assert "\x0c    if not torch.compiler.is_compiling():\n        print('step')\n" in out, repr(out)
    assert out.count("\x0c") == 1, repr(out)
