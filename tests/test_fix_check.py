"""The ``check`` codemod: ``if <tensor test>: raise E("msg")`` -> ``torch._assert_async``.

Text-level tests (no torch): the rewrite, its idempotence, that the finding goes, the
refusals.  With torch: the measurements the codemod relies on (which ``torch._check*``
form takes a tensor condition without a graph break, what eager users then see), and the
fixture ``fixtures/fix/check/validate_inputs.py`` run before and after the fix.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from pt2lint.commands.fix import RuleSelection, fix_one
from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.fixes.apply import fix_text
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "fix" / "check" / "validate_inputs.py"
HEADER = "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"


def module(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", " " * 8)


def fixed(text: str) -> str:
    def select(d):
        return d.fix is not None and d.fix.name == "check" and d.fix.applicability is not Applicability.DISPLAY_ONLY

    return fix_text(text, "m.py", SETTINGS, select_fix=select, names_for=lambda d: ["check"]).text


def check_fixes(text: str):
    return [d.fix for d in lint_source(text, "m.py", SETTINGS, fix_names=lambda d: ["check"]).diagnostics if d.fix is not None]


def op_block(name: str, raise_text: str, qual: str = "M.forward", path: str = "m.py") -> str:
    """The op definition the codemod writes (see pt2lint/fixes/check_op.py), with its blank lines."""
    from pt2lint.fixes.check_op import check_op_source, op_namespace

    return "\n\n" + check_op_source("torch", op_namespace(path), name, qual, raise_text)


def with_ops(body_module: str, *blocks: str) -> str:
    head, rest = body_module.split("\n\n\nclass M", 1)
    return head + "\n" + "".join(blocks) + "\n\nclass M" + rest


def test_raise_becomes_a_custom_op_check_keeping_message_and_comments():
    src = module(
        """
        # validate
        if (x < 0).any():  # values
            raise ValueError("negative " "input")
        return x
        """
    )
    out = fixed(src)
    assert out == with_ops(
        module(
            """
            # validate
            # values
            if torch.compiler.is_compiling():
                _pt2lint_check_M_forward_8((x < 0).any())
            elif (x < 0).any():
                raise ValueError("negative " "input")
            return x
            """
        ),
        op_block("check_M_forward_8", 'raise ValueError("negative input")'),
    )
    assert fixed(out) == out  # idempotent
    assert not [d for d in lint_source(out, "m.py", SETTINGS).diagnostics if d.code.startswith("PTC1")]
    (fix,) = check_fixes(src)
    assert fix.applicability is Applicability.SAFE, fix.message
    assert "raise the same ValueError and message" in fix.message and "under 1 us per call" in fix.message


def test_two_validations_in_one_function_get_two_ops_and_a_negated_test_is_not_negated_twice():
    src = module(
        """
        if not torch.isfinite(x).all():
            raise RuntimeError("non-finite")
        if not x.sum():
            raise RuntimeError("zero")
        return x
        """
    )
    out = fixed(src)
    assert out == with_ops(
        module(
            """
            if torch.compiler.is_compiling():
                _pt2lint_check_M_forward_7(torch.logical_not(torch.isfinite(x).all()))
            elif not torch.isfinite(x).all():
                raise RuntimeError("non-finite")
            if torch.compiler.is_compiling():
                _pt2lint_check_M_forward_9(torch.logical_not(x.sum() != 0))
            elif not x.sum():
                raise RuntimeError("zero")
            return x
            """
        ),
        op_block("check_M_forward_7", 'raise RuntimeError("non-finite")'),
        op_block("check_M_forward_9", 'raise RuntimeError("zero")'),
    )
    assert fixed(out) == out
    assert all(f.applicability is Applicability.SAFE for f in check_fixes(src))


def test_op_names_never_collide_and_depend_on_the_module_path():
    from pt2lint.fixes.check_op import op_name, op_namespace

    assert op_name("M.forward", 13, {"_pt2lint_check_M_forward_13"}) == "check_M_forward_13_2"
    assert op_name("M.forward", 13, {"_pt2lint_check_M_forward_13", "_pt2lint_check_M_forward_13_2_fake"}) == "check_M_forward_13_3"
    a, b = op_namespace("pkg/a-b.py"), op_namespace("pkg/a_b.py")
    assert a != b and a.isidentifier() and b.isidentifier() and a.startswith("pt2lint_pkg_a_b_")
    assert op_namespace("models/1st model.py").isidentifier()


def test_the_fix_is_byte_identical_under_any_hash_seed(tmp_path):
    import os
    import subprocess

    src = module(
        """
        if (x < 0).any():
            raise ValueError("negative")
        if torch.isnan(x).any():
            raise ValueError("nan")
        return x
        """
    )
    script = (
        "import sys; sys.path.insert(0, %r); import test_fix_check as t; sys.stdout.write(t.fixed(open(%r).read()))"
        % (str(Path(__file__).resolve().parent), str(tmp_path / "m.py"))
    )
    (tmp_path / "m.py").write_text(src)
    outs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout)
    assert len(outs) == 1 and outs.pop() == fixed(src)


def test_a_leading_python_test_stays_a_python_if_around_the_check():
    src = HEADER.replace("def forward(self, x):", "def forward(self, x, labels=None):") + textwrap.indent(
        textwrap.dedent(
            """
            if labels is not None and x.dim() == 2 and labels.max() >= 10:
                raise ValueError("label out of range")
            return x
            """
        ).strip("\n") + "\n",
        " " * 8,
    )
    out = fixed(src)
    assert out.endswith(
        "        if labels is not None and x.dim() == 2:\n"
        "            if torch.compiler.is_compiling():\n"
        "                _pt2lint_check_M_forward_7(labels.max() >= 10)\n"
        "            elif labels.max() >= 10:\n"
        '                raise ValueError("label out of range")\n'
        "        return x\n"
    ), out
    assert fixed(out) == out


def test_else_body_follows_the_check_and_item_test_is_compared_in_float64():
    src = module(
        """
        if x.sum().item() > 1e9:
            raise RuntimeError
        else:
            x = x + 1
        return x
        """
    )
    assert fixed(src) == with_ops(
        module(
            """
            if torch.compiler.is_compiling():
                _pt2lint_check_M_forward_7(x.sum().double() > 1e9)
            elif x.sum().item() > 1e9:
                raise RuntimeError
            x = x + 1
            return x
            """
        ),
        op_block("check_M_forward_7", "raise RuntimeError"),
    )


def test_an_f_string_message_keeps_its_fields_as_text_and_says_so():
    src = module(
        """
        if (x < 0).any():
            raise ValueError(f"negative input of shape {tuple(x.shape)}: \\"{{x}}\\"")
        return x
        """
    )
    (fix,) = check_fixes(src)
    assert fix.applicability is Applicability.UNSAFE and "keeps its `{...}` fields as text" in fix.message
    assert "no custom-op check: the message is an f-string" in fix.message
    out = fixed(src)
    assert "torch._assert_async(torch.logical_not((x < 0).any()), 'negative input of shape {tuple(x.shape)}: \"{x}\"')" in out
    assert fixed(out) == out


@pytest.mark.parametrize(
    "body, reason",
    [
        ('if (x < 0).any():\n    raise ValueError("bad %s" % x)\nreturn x', "computed at run time"),
        ("if (x < 0).any():\n    raise ValueError('a') from None\nreturn x", "cause"),
        ("if (x < 0).any():\n    raise ValueError('a', 1)\nreturn x", "more than one"),
        ("if x < 0:\n    raise ValueError('a')\nreturn x", "not provably a single value"),
        ("try:\n    if (x < 0).any():\n        raise ValueError('a')\nexcept ValueError:\n    x = x.abs()\nreturn x", "enclosing `try`"),
    ],
)
def test_refusals_say_why_and_leave_the_code(body, reason):
    src = module(body)
    fixes = check_fixes(src)
    assert fixes and all(f.applicability is Applicability.DISPLAY_ONLY for f in fixes), fixes
    assert reason in fixes[0].message
    assert fixed(src) == src


@pytest.mark.parametrize(
    "body, reason",
    [
        # the raised object is a runtime value of the function: module-level code cannot name it
        ("err = ValueError('bad')\nif (x < 0).any():\n    raise err\nreturn x", "the local name `err` of `forward`"),
        # a message computed from a tensor: only a constant message is written into the op
        ('if (x < 0).any():\n    raise ValueError(f"bad sum {x.sum()}")\nreturn x', "only a constant message"),
        # Inductor may run the loss kernel (with its own bounds check) before the check op
        (
            "if (x >= 4).any():\n    raise IndexError('label out of range')\nreturn torch.nn.functional.cross_entropy(x.float(), x)",
            "calls `torch.nn.functional.cross_entropy`",
        ),
        ("if (x < 0).any():\n    raise ValueError('neg')\nreturn x[x.argmax()]", "indexes with `x.argmax()`"),
        ("if (x < 0).any():\n    raise ValueError('neg')\nreturn x // 2", "`//` or `%`"),
        # a write before the check is lost when the check fails in compiled code
        ("x.add_(1)\nif (x < 0).any():\n    raise ValueError('neg')\nreturn x", "writes made earlier in the same graph are not applied"),
    ],
)
def test_near_misses_of_the_op_form_are_not_safe_and_say_why(body, reason):
    fixes = [f for f in check_fixes(module(body)) if f.name == "check"]
    assert fixes and all(f.applicability is not Applicability.SAFE for f in fixes), fixes
    assert any(reason in f.message for f in fixes), [f.message for f in fixes]


def test_without_torch_imported_before_the_classes_the_assert_async_form_stays():
    src = "import torch.nn as nn\nimport torch\n\n\nclass M(nn.Module):\n    def forward(self, x):\n" + textwrap.indent(
        "if (x < 0).any():\n    raise ValueError('neg')\nreturn x\n", " " * 8
    )
    (fix,) = check_fixes(src)
    assert fix.applicability is Applicability.SAFE  # `torch` is bound by the second import
    late = "import torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n" + textwrap.indent(
        "if (x < 0).any():\n    raise ValueError('neg')\nreturn x\n", " " * 8
    ) + "\n\nimport torch\n"
    (fix,) = check_fixes(late)
    assert fix.applicability is Applicability.UNSAFE and "_assert_async" in fix.message
    assert "not imported at module level before the first definition" in fix.message


def test_not_applied_to_an_if_that_does_more_than_raise_or_to_an_elif():
    near_misses = [
        "if (x < 0).any():\n    x = x.abs()\n    raise ValueError('a')\nreturn x",
        "if x.sum() > 0:\n    x = x + 1\nelif (x < 0).any():\n    raise ValueError('a')\nreturn x",
    ]
    for body in near_misses:
        src = module(body)
        assert not [f for f in check_fixes(src) if f.name == "check"], body


EXPORT = LintSettings(enabled=resolve_selection(target="export"), target="export")


def test_export_assert_becomes_assert_async_and_computed_messages_are_refused():
    src = module(
        """
        assert (x >= 0).all(), "negative"  # keep
        assert x.sum() > 0
        assert torch.isfinite(x).all(), "bad {}".format(x)
        return x
        """
    )

    def select(d):
        return d.fix is not None and d.fix.name == "check" and d.fix.applicability is not Applicability.DISPLAY_ONLY

    out = fix_text(src, "m.py", EXPORT, select_fix=select, names_for=lambda d: ["check"])
    assert out.text == module(
        """
        torch._assert_async((x >= 0).all(), "negative")  # keep
        torch._assert_async(x.sum() > 0, "")
        assert torch.isfinite(x).all(), "bad {}".format(x)
        return x
        """
    )
    left = [d for d in out.remaining if d.code == "PTC602"]
    assert len(left) == 1 and "computed at run time" in left[0].fix.message
    assert all("python -O" in f.message for f in out.applied)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_measured_check_forms_on_torch():
    """Why ``torch._assert_async``: the other ``torch._check*`` forms reject a tensor or break the graph."""
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    def assert_async(x):
        torch._assert_async(torch.logical_not((x < 0).any()), "negative input")
        return x * 2

    def check_tensor_all_with(x):
        torch._check_tensor_all_with(ValueError, torch.logical_not((x < 0).any()), lambda: "negative input")
        return x * 2

    # the CUDA behaviour the fix message states comes from torch's own documentation of the function
    assert "later CUDA kernel" in torch._assert_async.__doc__ and "CUDA" in torch._assert_async.__doc__.split("trash your")[1]
    good, bad = torch.ones(4), torch.tensor([1.0, -1.0, 2.0, 3.0])
    for check in (torch._check, torch._check_value):
        with pytest.raises(TypeError, match="must be a bool"):
            check(torch.logical_not((good < 0).any()), lambda: "negative input")
    with pytest.raises(TypeError, match="must be a bool"):
        torch._check_with(ValueError, torch.logical_not((good < 0).any()), lambda: "negative input")

    dynamo.reset()
    assert dynamo.explain(assert_async)(good).graph_break_count == 0
    dynamo.reset()
    assert dynamo.explain(check_tensor_all_with)(good).graph_break_count == 1
    with pytest.raises(RuntimeError, match="^negative input$"):
        assert_async(bad)
    dynamo.reset()
    compiled = torch.compile(assert_async, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(good), good * 2)
    with pytest.raises(RuntimeError, match="^negative input$"):
        compiled(bad)

    def computed_message(x):  # why an f-string message is kept as text
        torch._assert_async(torch.logical_not((x < 0).any()), f"negative input of shape {tuple(x.shape)}")
        return x * 2

    dynamo.reset()
    with pytest.raises(Exception, match="Failed to convert args/kwargs to proxy"):
        torch.compile(computed_message, fullgraph=True, backend="eager", dynamic=True)(good)

    class Checked(torch.nn.Module):
        def forward(self, x):
            return assert_async(x)

    exported = torch.export.export(Checked(), (good,)).module()
    torch.testing.assert_close(exported(good), good * 2)
    with pytest.raises(RuntimeError, match="negative input"):
        exported(bad)


def test_fixture_is_equivalent_and_raises_the_original_exception_eager_and_compiled():
    """Four validations in one forward: four ops, and compiled code (Inductor, fullgraph=True) raises
    each original exception type with its message, as eager mode does."""
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    result = fix_one(str(FIXTURE), FIXTURE.name, SETTINGS, RuleSelection(names=frozenset({"check"})), unsafe=False)
    assert result.error is None and result.changed
    assert "_assert_async" not in result.text
    assert result.text.count("torch.library.custom_op(") == 4 and result.text.count("has_side_effect(") == 4
    assert not [d for d in lint_source(result.text, "f.py", SETTINGS).diagnostics if d.code in ("PTC104", "PTC101", "PTC103")]
    fixed_path = Path(pytest.importorskip("tempfile").mkdtemp()) / "validate_inputs_fixed.py"
    fixed_path.write_text(result.text)
    again = fix_one(str(fixed_path), fixed_path.name, SETTINGS, RuleSelection(names=frozenset({"check"})), unsafe=True)
    assert again.error is None and not again.changed

    orig = _load(FIXTURE, "_check_orig")
    new = _load(fixed_path, "_check_new")
    m1, m2 = orig.make_model(), new.make_model()
    m2.load_state_dict(m1.state_dict())
    for inp in orig.good_inputs():
        torch.testing.assert_close(m2(*inp), m1(*inp))
    for inp, exc, msg in orig.bad_inputs():
        with pytest.raises(exc, match=f"^{msg}$"):
            m1(*inp)
        with pytest.raises(exc, match=f"^{msg}$"):  # eager mode keeps the original raise
            m2(*inp)
    dynamo.reset()
    explained = dynamo.explain(m2)(*orig.good_inputs()[0])
    assert explained.graph_break_count == 0, [str(r.reason) for r in explained.break_reasons]
    dynamo.reset()
    compiled = torch.compile(m2, fullgraph=True)  # Inductor, on CPU
    for inp in orig.good_inputs():
        torch.testing.assert_close(compiled(*inp), m1(*inp))
    for inp, exc, msg in orig.bad_inputs():
        with pytest.raises(exc, match=f"^{msg}$"):
            compiled(*inp)
    dynamo.reset()


def test_c04_like_module_raises_value_error_eager_compiled_and_exported(tmp_path):
    """The fix of bench/convertible's c04: same outputs and gradients, and ValueError(msg) in eager mode,
    under Inductor with fullgraph=True and in torch.export."""
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    case = FIXTURE.parent.parent.parent.parent / "bench" / "convertible" / "cases" / "c04_validate_negative.py"
    out = fixed(case.read_text())
    assert out.count("torch.library.custom_op(") == 1 and fixed(out) == out
    path = tmp_path / "c04_fixed.py"
    path.write_text(out)
    orig, new = _load(case, "_c04_orig"), _load(path, "_c04_new")
    m1, m2 = orig.make_model(), new.make_model()
    m2.load_state_dict(m1.state_dict())
    good = torch.rand(4, 8, requires_grad=True)
    bad = torch.rand(4, 8)
    bad[2, 3] = -0.25
    dynamo.reset()
    compiled = torch.compile(m2, fullgraph=True)
    for run in (m2, compiled):
        a, b = good.detach().clone().requires_grad_(), good.detach().clone().requires_grad_()
        m1.zero_grad()
        m2.zero_grad()
        y1, y2 = m1(a), run(b)
        torch.testing.assert_close(y2, y1)
        y1.sum().backward()
        y2.sum().backward()
        torch.testing.assert_close(b.grad, a.grad)
        torch.testing.assert_close(m2.out.weight.grad, m1.out.weight.grad)
        with pytest.raises(ValueError, match="^rates must be non-negative$"):
            run(bad)
    exported = torch.export.export(m2, (good.detach(),)).module()
    torch.testing.assert_close(exported(good.detach()), m1(good.detach()))
    with pytest.raises(ValueError, match="^rates must be non-negative$"):
        exported(bad)
    dynamo.reset()


def test_measured_inductor_runs_a_later_kernel_before_the_check_op():
    """Why the op form needs the code after the check to be value-total: a check op that the loss does
    not depend on runs after the loss kernel under Inductor (torch 2.13, CPU), whose bounds check then
    raises instead of the check."""
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo
    from torch.nn import functional as F

    # an explicit schema: this file's `from __future__ import annotations` makes annotations strings,
    # which infer_schema resolves in the module's globals, where `torch` is not bound
    @torch.library.custom_op("pt2lint_test_order::check_labels", mutates_args=(), schema="(Tensor failed) -> ()")
    def check_labels(failed):
        if failed:
            raise IndexError("label out of range")

    @check_labels.register_fake
    def _(failed):
        return None

    torch.fx.node.has_side_effect(torch.ops.pt2lint_test_order.check_labels.default)

    def loss(logits, labels):
        check_labels((labels >= 4).any())
        return F.cross_entropy(logits, labels)

    logits, labels = torch.randn(4, 4), torch.tensor([0, 1, 2, 3])
    with pytest.raises(IndexError, match="label out of range"):
        loss(logits, labels + 100)
    dynamo.reset()
    compiled = torch.compile(loss, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(logits, labels), loss(logits, labels))
    with pytest.raises(IndexError, match="label out of range"):
        compiled(logits, labels + 100)
    dynamo.reset()
    compiled = torch.compile(loss, fullgraph=True)
    with pytest.raises(RuntimeError, match="index out of bounds"):
        compiled(logits, labels + 100)
    dynamo.reset()


#: Twelve validations in three compiled functions: more than ``MAX_ROUNDS`` fix rounds would reach
#: if every generated op, all written at one point after the imports, took a round of its own.
TWELVE = "import torch\nimport torch.nn as nn\n" + "".join(
    f"""

class {name}(nn.Module):
    def forward(self, x):
        if (x < {k}).any():
            raise ValueError("below {k}")
        if torch.isnan(x).any():
            raise ValueError("nan in {name}")
        if not torch.isfinite(x).all():
            raise RuntimeError("inf in {name}")
        if (x > {100 + k}).any():
            raise IndexError("above {100 + k}")
        return x * 2
"""
    for k, name in enumerate(("A", "B", "C"))
)


def _op_names(text: str):
    from pt2lint.fixes.check_op import recognise_check_ops

    return [op.op for op in recognise_check_ops(text)]


def test_twelve_validations_in_three_functions_are_all_fixed_in_one_round():
    """Every op insertion at the point after the imports goes in at once, in the order of the
    validations' lines, so one round fixes all twelve; a second run changes nothing."""
    from pt2lint.fixes.apply import MAX_ROUNDS

    assert MAX_ROUNDS < 12
    outcome = fix_text(
        TWELVE, "m.py", SETTINGS,
        select_fix=lambda d: d.fix is not None and d.fix.name == "check" and d.fix.applicability is Applicability.SAFE,
        names_for=lambda d: ["check"],
    )
    out = outcome.text
    assert outcome.rounds == 2  # one that applies everything, one that finds nothing left
    assert len({id(f) for f in outcome.applied}) == 12
    compile(out, "m.py", "exec")
    assert out.count("torch.library.custom_op(") == 12 and out.count("raise ") == 24
    assert not [d for d in lint_source(out, "m.py", SETTINGS).diagnostics if d.code.startswith("PTC1")]
    # the ops follow the validations: names from the original lines, in increasing line order
    lines = [i + 1 for i, ln in enumerate(TWELVE.splitlines()) if ln.strip().startswith("if ")]
    names = _op_names(out)
    assert names == [f"check_{c}_forward_{n}" for c, n in zip("AAAABBBBCCCC", lines)]
    for name in names:  # each op is defined once and called once
        assert out.count(f"def _pt2lint_{name}(") == 1 and out.count(f"_pt2lint_{name}((") + out.count(f"_pt2lint_{name}(torch") == 1
    assert "\n\n\n\n" not in out  # two blank lines between the blocks, as one op per round gives
    assert fixed(out) == out


def test_each_check_fix_in_json_is_still_valid_alone(tmp_path):
    """``check --output-format json`` offers one fix per finding, each with its own op insertion:
    applied alone, each gives a module that parses and defines exactly that finding's op."""
    import json

    from clitools import cli_runner
    from pt2lint.cli import cli
    from pt2lint.diagnostics import Edit, Position
    from pt2lint.fixes.edits import apply_edits

    path = tmp_path / "m.py"
    path.write_text(TWELVE)
    res = cli_runner().invoke(cli, ["check", "--isolated", "--no-cache", "--output-format", "json", str(path)])
    found = [d for d in json.loads(res.stdout) if d["fix"] is not None and d["fix"]["edits"]]
    assert len(found) == 12
    ops = set()
    for d in found:
        edits = [
            Edit(Position(e["location"]["row"], e["location"]["column"]), Position(e["end_location"]["row"], e["end_location"]["column"]), e["content"])
            for e in d["fix"]["edits"]
        ]
        alone = apply_edits(TWELVE, edits)
        compile(alone, "m.py", "exec")
        (op,) = _op_names(alone)
        ops.add(op)
    assert len(ops) == 12


def test_fix_cli_writes_all_twelve_ops_identically_under_seeds_and_jobs_and_diff_shows_it(tmp_path):
    import os
    import subprocess

    from clitools import repo_pythonpath
    from pt2lint.commands.fix import unified_diff

    repo = Path(__file__).resolve().parent.parent

    def run(args, cwd, seed):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=repo_pythonpath(str(repo)))
        env.pop("PT2LINT_CACHE_DIR", None)
        return subprocess.run([sys.executable, "-m", "pt2lint", "fix", "--isolated", "--no-cache", *args], cwd=cwd, env=env, capture_output=True, timeout=300)

    outs, diffs = set(), set()
    for seed, jobs in (("0", "1"), ("1", "2"), ("2", "1")):
        work = tmp_path / f"s{seed}j{jobs}"
        work.mkdir()
        (work / "m.py").write_text(TWELVE)
        (work / "n.py").write_text(TWELVE)  # a second file, so two jobs have work to share
        diff = run(["--diff", "-j", jobs, "."], work, seed)
        assert diff.returncode == 1, diff.stderr.decode()
        assert (work / "m.py").read_text() == TWELVE
        res = run(["-j", jobs, "."], work, seed)
        assert res.returncode == 0, res.stderr.decode()
        assert b"Fixed 24 findings in 2 files; nothing left" in res.stderr, res.stderr.decode()
        written = (work / "m.py").read_text()
        assert written.count("torch.library.custom_op(") == 12
        shown = "".join(unified_diff(n, TWELVE, (work / n).read_text()) for n in ("m.py", "n.py"))
        assert diff.stdout.decode() == shown
        again = run(["-j", jobs, "."], work, seed)
        assert again.returncode == 0 and b"Fixed 0 findings" in again.stderr
        assert (work / "m.py").read_text() == written
        outs.add(written)
        diffs.add(diff.stdout)
    assert len(outs) == 1 and len(diffs) == 1


def test_insertions_at_one_point_compose_only_when_they_are_distinct_check_ops():
    """Near misses: two plain insertions at one point (such as two ``import torch`` edits) still
    conflict, and so do two op blocks that define the same function; distinct ops compose."""
    from pt2lint.diagnostics import Edit, Fix, Position
    from pt2lint.fixes.check_op import check_op_source, join_insertions
    from pt2lint.fixes.edits import apply_fixes

    at = Position(2, 1)  # after the imports, before code: each insertion ends with two newlines
    text = "import torch\nclass M:\n    pass\n"

    def op_fix(op, msg):
        src = "\n\n" + check_op_source("torch", "pt2lint_m_0", op, "M.forward", f'raise ValueError("{msg}")') + "\n\n"
        return Fix("op", Applicability.SAFE, (Edit(at, at, src),), "check")

    imports = [Fix("i", Applicability.SAFE, (Edit(at, at, "import os\n"),), "x"), Fix("j", Applicability.SAFE, (Edit(at, at, "import re\n"),), "y")]
    _, chosen = apply_fixes(text, imports, join=join_insertions)
    assert len(chosen) == 1
    _, chosen = apply_fixes(text, [op_fix("check_M_forward_7", "a"), op_fix("check_M_forward_7", "b")], join=join_insertions)
    assert len(chosen) == 1
    _, chosen = apply_fixes(text, [op_fix("check_M_forward_7", "a"), imports[0]], join=join_insertions)
    assert len(chosen) == 1
    out, chosen = apply_fixes(text, [op_fix("check_M_forward_9", "b"), op_fix("check_M_forward_7", "a")], join=join_insertions)
    assert len(chosen) == 2
    assert _op_names(out) == ["check_M_forward_9", "check_M_forward_7"]  # the order the fixes were given
    compile(out, "m.py", "exec")
    assert "\n\n\n\n" not in out
    assert apply_fixes(text, [op_fix("check_M_forward_9", "b"), op_fix("check_M_forward_7", "a")])[1][1:] == []  # no join: one


def _apply_lsp_edits(text: str, edits) -> str:
    """``text`` with LSP ``TextEdit`` dicts applied (ASCII text: UTF-16 units are characters)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def at(pos):
        return starts[pos["line"]] + pos["character"]

    spans = sorted(((at(e["range"]["start"]), at(e["range"]["end"]), i, e["newText"]) for i, e in enumerate(edits)), reverse=True)
    for a, b, _, new in spans:
        text = text[:a] + new + text[b:]
    return text


def test_the_editor_apply_all_action_writes_every_op_as_fix_does():
    """``source.fixAll`` (:func:`pt2lint.lsp.safe_fix_edits`) composes the op insertions as
    ``pt2lint fix`` does: one request writes all twelve checks, the same text as ``fix``; the
    diagnostics' own edits are left as they were (each still valid alone)."""
    import copy

    from pt2lint.lsp import safe_fix_edits, to_lsp_diagnostics

    diags = lint_source(TWELVE, "m.py", SETTINGS).diagnostics
    payload = to_lsp_diagnostics(diags, TWELVE, "utf-16")
    before = copy.deepcopy(payload)
    edits = safe_fix_edits(payload)
    assert payload == before
    out = _apply_lsp_edits(TWELVE, edits)
    compile(out, "m.py", "exec")
    assert out.count("torch.library.custom_op(") == 12
    expected = fix_text(
        TWELVE, "m.py", SETTINGS,
        select_fix=lambda d: d.fix is not None and d.fix.applicability is Applicability.SAFE,
    ).text
    assert out == expected
