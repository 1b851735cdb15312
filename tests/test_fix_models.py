"""The cond/where codemods on the model fixtures in ``fixtures/fix``, proven with torch.

For every ``fixtures/fix/{cond,where}_*.py`` (each defines ``FIX``, ``make_model()`` and
``branch_inputs()``, one input tuple per branch direction):

* the fixed file parses, the targeted finding is gone, and a second fix changes nothing;
* the inputs really take every branch of the original (line coverage of the flagged
  ``if`` chains; recorded ``Tensor.__bool__`` outcomes for conditional expressions);
* eager outputs and gradients (inputs and parameters) of the original and the fixed
  module are equal (``torch.testing.assert_close``) on every input;
* the fixed module compiles with ``torch.compile(fullgraph=True, backend="eager")`` and
  gives the same outputs, with zero graph breaks (``pt2lint.confirm.dynamo.graph_breaks``);
* for ``cond``, ``torch.export.export`` succeeds and the exported program agrees.

``refuse_*.py`` fixtures must be left untouched, with the reason (``REFUSE``) in the
finding's display-only fix.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pt2lint.commands.fix import RuleSelection, fix_one  # noqa: E402
from pt2lint.diagnostics import Applicability  # noqa: E402
from pt2lint.engine import lint_source  # noqa: E402
from pt2lint.fixes import CODEMOD_CODES  # noqa: E402
from pt2lint.settings import LintSettings, resolve_selection  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fix"
CASES = sorted(p.name for p in FIXTURES.glob("*.py") if not p.name.startswith("refuse_"))
REFUSALS = sorted(p.name for p in FIXTURES.glob("refuse_*.py"))
SETTINGS = LintSettings(enabled=resolve_selection())


def _fix_name(path: Path) -> str:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FIX" for t in node.targets):
            return node.value.value  # type: ignore[attr-defined]
    raise AssertionError(f"{path.name} defines no FIX")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _fix(path: Path, rule: str):
    selection = RuleSelection(names=frozenset({rule}))
    return fix_one(str(path), path.name, SETTINGS, selection, unsafe=True)


@pytest.fixture(scope="module")
def fixed_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fixed")


def _flatten(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return []


def _run(model, inputs):
    """Outputs, input gradients and parameter gradients of one eager call."""
    args = [a.detach().clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a for a in inputs]
    model.zero_grad(set_to_none=True)
    outs = _flatten(model(*args))
    loss = sum((o.float() * (i + 1)).sum() for i, o in enumerate(outs) if o.requires_grad)
    if isinstance(loss, torch.Tensor):
        loss.backward()
    grads = [a.grad for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
    params = {n: p.grad for n, p in model.named_parameters()}
    return [o.detach() for o in outs], grads, params


def _branch_lines(path: Path, findings) -> set:
    """Lines of every statement inside the flagged ``if`` chains (all must run for some input)."""
    tree = ast.parse(path.read_text())
    flagged = {d.start.line for d in findings}
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.lineno in flagged:
            for child in node.body + node.orelse:
                for sub in ast.walk(child):
                    if isinstance(sub, ast.stmt):
                        lines.add(sub.lineno)
    return lines


def _trace_lines(path: Path, fn):
    hit = set()
    target = str(path)

    def tracer(frame, event, arg):
        if frame.f_code.co_filename == target and event == "line":
            hit.add(frame.f_lineno)
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return hit


def _bool_outcomes(fn):
    seen = []
    original = torch.Tensor.__bool__

    def recording(self):
        value = original(self)
        seen.append(value)
        return value

    torch.Tensor.__bool__ = recording
    try:
        fn()
    finally:
        torch.Tensor.__bool__ = original
    return seen


@pytest.mark.parametrize("name", CASES)
def test_fixture_fix_is_equivalent_and_compiles(name, fixed_dir):
    from pt2lint.confirm.dynamo import graph_breaks

    src_path = FIXTURES / name
    rule = _fix_name(src_path)
    original_text = src_path.read_text()
    before = lint_source(original_text, name, SETTINGS, fix_names=lambda d: [rule]).diagnostics
    targeted = [d for d in before if d.code in CODEMOD_CODES[rule] and d.fix is not None and d.fix.name == rule]
    assert targeted, f"{name}: no finding for the {rule} codemod"

    result = _fix(src_path, rule)
    assert result.error is None, result.error
    assert result.changed, [d.fix.message for d in result.remaining if d.fix]
    fixed_path = fixed_dir / name
    fixed_path.write_text(result.text)
    compile(result.text, name, "exec")  # parses

    after = lint_source(result.text, name, SETTINGS).diagnostics
    assert not [d for d in after if d.code in CODEMOD_CODES[rule]], [(d.start.line, d.code, d.message) for d in after]
    again = _fix(fixed_path, rule)
    assert again.error is None and not again.changed and again.text == result.text

    orig = _load(src_path, f"_fix_orig_{name[:-3]}")
    new = _load(fixed_path, f"_fix_new_{name[:-3]}")
    inputs = orig.branch_inputs()
    assert len(inputs) >= 2

    m1 = orig.make_model()
    m2 = new.make_model()
    m2.load_state_dict(m1.state_dict())
    m1.train(False)
    m2.train(False)

    # the inputs take every branch of the original
    lines = _branch_lines(src_path, targeted)
    if lines:
        covered = set()
        for inp in inputs:
            covered |= _trace_lines(src_path, lambda inp=inp: m1(*inp))
        assert lines <= covered, f"branch lines never run: {sorted(lines - covered)}"
    else:
        outcomes = set()
        for inp in inputs:
            outcomes |= set(_bool_outcomes(lambda inp=inp: m1(*inp)))
        assert outcomes == {True, False}

    for inp in inputs:
        o1, g1, p1 = _run(m1, inp)
        o2, g2, p2 = _run(m2, inp)
        assert len(o1) == len(o2)
        for a, b in zip(o1, o2):
            torch.testing.assert_close(b, a)
        for a, b in zip(g1, g2):
            torch.testing.assert_close(b, a)
        for key in p1:
            if p1[key] is None:
                assert p2[key] is None or not p2[key].any(), key
            else:
                torch.testing.assert_close(p2[key], p1[key], msg=key)

    torch._dynamo.reset()
    compiled = torch.compile(m2, fullgraph=True, backend="eager")
    for inp in inputs:
        with torch.no_grad():
            expected = _flatten(m1(*inp))
            got = _flatten(compiled(*inp))
        for a, b in zip(expected, got):
            torch.testing.assert_close(b, a)
    assert graph_breaks(m2, inputs[0]) == []
    assert graph_breaks(m2, inputs[-1]) == []

    if rule == "cond":
        program = torch.export.export(m2, tuple(inputs[0]))
        for inp in inputs:
            with torch.no_grad():
                expected = _flatten(m1(*inp))
                got = _flatten(program.module()(*inp))
            for a, b in zip(expected, got):
                torch.testing.assert_close(b, a)


@pytest.mark.parametrize("name", REFUSALS)
def test_refused_fixture_is_untouched_with_reason(name):
    path = FIXTURES / name
    text = path.read_text()
    reason = next(
        node.value.value
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "REFUSE" for t in node.targets)
    )
    result = _fix(path, "cond")
    assert result.error is None
    assert not result.changed and result.text == text
    fixes = [d.fix for d in result.remaining if d.code == "PTC104"]
    assert fixes and all(f is not None and f.applicability is Applicability.DISPLAY_ONLY and not f.edits for f in fixes)
    assert any(reason in f.message for f in fixes), [f.message for f in fixes]
