"""The ``print-hop`` codemod and the Dynamo logging knobs the README recommends.

Text-level tests (no torch) pin the rewrite, its place after ``guard`` in the preference
order, and the refusals.  With torch (one process, CPU): the fixed code prints the same
text in eager mode and compiled with ``fullgraph=True``; and what
``torch._dynamo.config.ignore_logger_methods`` / ``reorderable_logging_functions`` do
to ``logger.info`` and ``print`` on torch 2.13 (the README's config-level fix).
"""

from __future__ import annotations

import contextlib
import io
import logging
import textwrap

import pytest

from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.fixes.apply import fix_text
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())
HEADER = "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"


def module(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", " " * 8)


def fixed(text: str, names) -> str:
    def select(d):
        return d.fix is not None and d.fix.name in names and d.fix.applicability is not Applicability.DISPLAY_ONLY

    return fix_text(text, "m.py", SETTINGS, select_fix=select, names_for=lambda d: list(names)).text


def fixes_of(text: str, names=None):
    diags = lint_source(text, "m.py", SETTINGS, fix_names=(lambda d: list(names)) if names else None).diagnostics
    return [d.fix for d in diags if d.code == "PTC301" and d.fix is not None]


SRC = module(
    """
    y = x + 1
    print("after {add}", y.sum(), 3)  # trace
    print(y, "done")
    return y
    """
)


def test_print_of_tensors_becomes_the_print_operator_only_when_chosen():
    out = fixed(SRC, ["print-hop"])
    assert out == module(
        """
        y = x + 1
        torch._higher_order_ops.print("after {{add}} {!s} {!s}", y.sum(), 3)  # trace
        torch._higher_order_ops.print("{!s} done", y)
        return y
        """
    )
    assert fixed(out, ["print-hop"]) == out
    assert not [d for d in lint_source(out, "m.py", SETTINGS).diagnostics if d.code.startswith("PTC3")]
    assert all(f.applicability is Applicability.UNSAFE and "private torch API" in f.message for f in fixes_of(SRC, ["print-hop"]))
    # by default the safe guard wins
    assert {f.name for f in fixes_of(SRC)} == {"guard"}


def test_a_refused_guard_is_not_replaced_by_the_print_operator_unless_it_is_named():
    # the guard refuses a side-effecting argument; the opt-in codemod must not step in by default
    src = module(
        """
        print(x.add_(1).sum())
        return x
        """
    )
    default = fixes_of(src)
    assert default and {f.name for f in default} == {"guard"}
    assert all(f.applicability is Applicability.DISPLAY_ONLY for f in default)
    assert {f.name for f in fixes_of(src, ["print-hop"])} == {"print-hop"}


@pytest.mark.parametrize(
    "line, reason",
    [
        ("print(x, x.shape)", "`x.shape` is neither a tensor nor a literal"),
        ("print(x, end='')", "keyword arguments"),
        ("print(x, *[x])", "starred"),
    ],
)
def test_refusals(line, reason):
    src = module(f"{line}\nreturn x")
    fixes = fixes_of(src, ["print-hop"])
    assert fixes and fixes[0].applicability is Applicability.DISPLAY_ONLY and reason in fixes[0].message, fixes
    assert fixed(src, ["print-hop"]) == src


def test_print_without_a_tensor_is_not_claimed():
    for line in ('print("plain")', 'print(f"x={x}")', "print(3)"):
        assert not fixes_of(module(f"{line}\nreturn x"), ["print-hop"]), line


def _stdout(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args)
    return buf.getvalue()


def test_measured_output_of_the_print_operator_and_the_logging_knobs():
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    namespace = {}
    exec(compile(SRC, "orig.py", "exec"), namespace)
    orig = namespace["M"]()
    namespace = {}
    exec(compile(fixed(SRC, ["print-hop"]), "new.py", "exec"), namespace)
    new = namespace["M"]()
    x = torch.arange(3.0)
    expected = _stdout(orig, x)
    assert expected == "after {add} tensor(6.) 3\ntensor([1., 2., 3.]) done\n"
    assert _stdout(new, x) == expected
    dynamo.reset()
    assert dynamo.explain(new)(x).graph_break_count == 0
    for backend in ("eager", "aot_eager"):
        dynamo.reset()
        assert _stdout(torch.compile(new, fullgraph=True, backend=backend), x) == expected, backend
    # with aot_eager a tensor that requires grad prints without grad_fn (why the fix is unsafe)
    xg = torch.arange(3.0, requires_grad=True)
    dynamo.reset()
    assert "grad_fn" in _stdout(new, xg) and "grad_fn" not in _stdout(torch.compile(new, fullgraph=True, backend="aot_eager"), xg)

    log = logging.getLogger("pt2lint.test.knobs")

    def logs(x):
        y = x + 1
        log.info("after add")
        return y * 2

    def prints(x):
        y = x + 1
        print("after add", y)
        return y * 2

    dynamo.reset()
    assert dynamo.explain(logs)(x).graph_break_count == 1
    with dynamo.config.patch(ignore_logger_methods={log.info}):
        dynamo.reset()
        assert dynamo.explain(logs)(x).graph_break_count == 0
    with dynamo.config.patch(reorderable_logging_functions={log.info}):  # no help for logger methods
        dynamo.reset()
        assert dynamo.explain(logs)(x).graph_break_count == 1
    with dynamo.config.patch(reorderable_logging_functions={print}):
        dynamo.reset()
        assert dynamo.explain(prints)(x).graph_break_count == 0
        dynamo.reset()
        assert _stdout(torch.compile(prints, fullgraph=True, backend="eager"), x) == "after add tensor([1., 2., 3.])\n"
    with dynamo.config.patch(ignore_logger_methods={log.info}):
        dynamo.reset()
        records = []
        handler = logging.Handler()
        handler.emit = records.append
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        try:
            torch.compile(logs, fullgraph=True, backend="eager")(x)
            compiled_records = len(records)
            logs(x)
        finally:
            log.removeHandler(handler)
        assert compiled_records == 0 and len(records) == 1  # compiled code drops the call; eager still logs
