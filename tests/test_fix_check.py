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


def test_raise_becomes_assert_async_keeping_message_and_comments():
    src = module(
        """
        # validate
        if (x < 0).any():  # values
            raise ValueError("negative " "input")
        return x
        """
    )
    out = fixed(src)
    assert out == module(
        """
        # validate
        # values
        if torch.compiler.is_compiling():
            torch._assert_async(torch.logical_not((x < 0).any()), "negative " "input")
        elif (x < 0).any():
            raise ValueError("negative " "input")
        return x
        """
    )
    assert fixed(out) == out  # idempotent
    assert not [d for d in lint_source(out, "m.py", SETTINGS).diagnostics if d.code.startswith("PTC1")]
    (fix,) = check_fixes(src)
    assert fix.applicability is Applicability.UNSAFE
    assert "compiled and exported code raises RuntimeError(msg) instead of ValueError" in fix.message
    assert "eager mode raises as before" in fix.message and "CUDA context" in fix.message


def test_a_negated_test_is_not_negated_twice():
    src = module(
        """
        if not torch.isfinite(x).all():
            raise RuntimeError("non-finite")
        if not x.sum():
            raise RuntimeError("zero")
        return x
        """
    )
    assert fixed(src) == module(
        """
        torch._assert_async(torch.isfinite(x).all(), "non-finite")
        torch._assert_async(x.sum() != 0, "zero")
        return x
        """
    )


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
        '                torch._assert_async(torch.logical_not(labels.max() >= 10), "label out of range")\n'
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
    assert fixed(src) == module(
        """
        torch._assert_async(torch.logical_not(x.sum().double() > 1e9), "")
        x = x + 1
        return x
        """
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


def test_fixture_is_equivalent_on_valid_inputs_and_raises_runtime_error_with_the_message():
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    result = fix_one(str(FIXTURE), FIXTURE.name, SETTINGS, RuleSelection(names=frozenset({"check"})), unsafe=True)
    assert result.error is None and result.changed
    assert result.text.count("torch._assert_async(") == 4
    assert result.text.count("torch.compiler.is_compiling()") == result.text.split("def forward")[1].split("def make_model")[0].count("raise")
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
    compiled = torch.compile(m2, fullgraph=True, backend="eager")
    for inp in orig.good_inputs():
        torch.testing.assert_close(compiled(*inp), m1(*inp))
    for inp, _, msg in orig.bad_inputs():
        with pytest.raises(RuntimeError, match=f"^{msg}$"):
            compiled(*inp)
