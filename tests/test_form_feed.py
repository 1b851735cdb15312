"""Form feeds in indentation: CPython resets the column there, LibCST rejects (or drops) them.

CPython's tokenizer sets the indentation column back to 0 at a form feed in a line's leading
whitespace, so ``"\\f        if t:"`` is an ``if`` indented by 8.  LibCST fails on such a block
("no matching outer block for dedent"), which made pt2lint report a false PTC001 and analyse
nothing.  The engine now hands LibCST the text with that whitespace cut after its last form feed
(:func:`pt2lint.lines.cut_form_feeds`) and maps columns back; a fix that would delete such a form
feed is refused, one that does not touch it keeps it.

Measured on torch 2.13 with ``torch._dynamo.explain`` on :data:`BREAKS`'s module: 3 graphs,
2 breaks, ``generic_jump TensorVariable()`` at line 6 and ``Unsupported Tensor.item() call with
capture_scalar_outputs=False`` at line 7.
"""

from __future__ import annotations

import pytest

from pt2lint.baseline import insert_noqa
from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.fixes.apply import fix_text
from pt2lint.lines import cut_form_feeds
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())

HEAD = "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"

BREAKS = HEAD + (
    "\f        if x.sum() > 0:\n"
    "            y = x.sum().item()\n"
    "\f            x = x * y\n"
    "        else:\n"
    "            x = x - 1\n"
    "\f        return x\n"
)


def _any_fix(d) -> bool:
    return d.fix is not None and d.fix.applicability is not Applicability.DISPLAY_ONLY


def _codes(result):
    return [(d.code, d.start.line, d.start.column) for d in result.diagnostics]


def test_cpython_accepts_the_module():
    compile(BREAKS, "m.py", "exec", dont_inherit=True)


def test_a_form_feed_in_indentation_is_analysed_at_the_right_columns():
    found = _codes(lint_source(BREAKS, "m.py", SETTINGS))
    assert not any(code == "PTC001" for code, _, _ in found), found
    # line 6 is "\f        if x.sum() > 0:": the test starts after the form feed, 8 spaces and "if "
    assert ("PTC104", 6, 1 + 1 + 8 + 3) in found, found
    assert ("PTC101", 7, BREAKS.split("\n")[6].index("item()") + 1) in found, found


def test_the_same_findings_as_without_the_form_feeds():
    plain = lint_source(BREAKS.replace("\f", ""), "m.py", SETTINGS)
    cut = lint_source(BREAKS, "m.py", SETTINGS)
    shift = {6: 1, 8: 1, 11: 1}
    assert [(c, ln, col + shift.get(ln, 0)) for c, ln, col in _codes(plain)] == _codes(cut)


@pytest.mark.parametrize("text", [
    "def f(x):\n    \f  if x:\n        return 1\n    return 2\n",  # column 2 after the form feed, then 8, then 4
    "def f(x):\n    y = 1\n  \f  return y\n",  # column 2: an unindent that matches nothing
])
def test_a_form_feed_cpython_rejects_is_still_a_syntax_error(text):
    with pytest.raises(SyntaxError) as exc:
        compile(text, "m.py", "exec", dont_inherit=True)
    found = lint_source(text, "m.py", SETTINGS).diagnostics
    assert [d.code for d in found] == ["PTC001"]
    assert found[0].start.line == exc.value.lineno


def test_a_fix_that_would_delete_such_a_form_feed_is_refused():
    text = HEAD + "        if x.sum() > 0:\n\f            x = x + 1\n        else:\n            x = x - 1\n        return x\n"
    found = [d for d in lint_source(text, "m.py", SETTINGS).diagnostics if d.code == "PTC104"]
    assert len(found) == 1 and found[0].fix is not None
    assert found[0].fix.applicability is Applicability.DISPLAY_ONLY and not found[0].fix.edits
    assert "form feed" in found[0].fix.message and "line 7" in found[0].fix.message
    out = fix_text(text, "m.py", SETTINGS, select_fix=_any_fix)
    assert out.text == text and not out.applied


def test_a_fix_that_does_not_touch_the_form_feed_keeps_it():
    text = HEAD + "\f        if x.sum() > 0:\n            x = x + 1\n        else:\n            x = x - 1\n        return x\n"
    out = fix_text(text, "m.py", SETTINGS, select_fix=_any_fix)
    assert out.applied and "torch.cond(" in out.text
    assert out.text.count("\f") == 1 and "\n\f        def " in out.text
    compile(out.text, "m.py", "exec", dont_inherit=True)
    assert not [d for d in lint_source(out.text, "m.py", SETTINGS).diagnostics if d.code in ("PTC001", "PTC104")]
    plain = fix_text(text.replace("\f", ""), "m.py", SETTINGS, select_fix=_any_fix)
    assert out.text.replace("\f", "") == plain.text


@pytest.mark.parametrize("text", [
    # near misses, fine before: a form feed on a blank line, between top-level definitions
    "import torch\n\f\n" + HEAD[len("import torch\n"):] + "        if x.sum() > 0:\n            x = x + 1\n        else:\n"
    "            x = x - 1\n        return x\n\f\ndef g(x):\n    return x\n",
    HEAD + "        if x.sum() > 0:\n\f\n            x = x + 1\n        else:\n            x = x - 1\n  \f  \n        return x\n",
])
def test_form_feeds_on_blank_lines_change_nothing(text):
    assert cut_form_feeds(text) == (text, {})
    plain = text.replace("\f", "")
    assert _codes(lint_source(text, "m.py", SETTINGS)) == _codes(lint_source(plain, "m.py", SETTINGS))
    out = fix_text(text, "m.py", SETTINGS, select_fix=_any_fix)
    assert out.applied and out.text.count("\f") == text.count("\f")
    assert out.text.replace("\f", "") == fix_text(plain, "m.py", SETTINGS, select_fix=_any_fix).text


def test_only_the_indentation_of_statements_is_cut():
    text = (
        "def f(x):\n"
        "    s = '''a\n\f    b'''\n"  # inside a string: kept
        "    t = (1,\n\f        2)\n"  # inside brackets: kept
        "\f    # a comment line: kept\n"
        "  \f    return s, t\n"  # a statement: cut after the form feed
    )
    cut, cuts = cut_form_feeds(text)
    assert cuts == {7: 3}
    assert cut == text.replace("  \f    return", "    return")


def test_add_noqa_keeps_the_form_feeds():
    line = next(d.start.line for d in lint_source(BREAKS, "m.py", SETTINGS).diagnostics if d.code == "PTC101")
    new, n = insert_noqa(BREAKS, {line: ["PTC101"]})
    assert n == 1 and new.count("\f") == BREAKS.count("\f")
    assert "PTC101" not in [d.code for d in lint_source(new, "m.py", SETTINGS).diagnostics]


def test_an_imported_helper_indented_with_form_feeds_is_followed(tmp_path):
    """The project model reads an imported module as the engine reads an entry file: a helper
    whose statements are indented with form feeds is parsed and followed (it was left
    unresolved, so the caller's break went unreported).  The helper's ``.item()`` is a graph
    break Dynamo reports in the helper's file, at its line (as for any followed helper)."""
    import os

    from pt2lint.engine import lint_paths

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(
        "def scale(x):\n"
        "\f    if x.dim() > 1:\n"
        "        s = x.sum().item()\n"  # line 3: the break
        "\f        x = x * s\n"
        "    return x\n"
    )
    (pkg / "model.py").write_text(
        "import torch\n"
        "from .helpers import scale\n\n\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return scale(x)\n"
    )
    settings = LintSettings(enabled=resolve_selection(), project_root=str(tmp_path))
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        found = sorted(
            (os.path.basename(d.filename), d.start.line, d.code)
            for r in lint_paths(["pkg/model.py"], settings, jobs=1) for d in r.diagnostics
        )
    finally:
        os.chdir(old)
    assert ("helpers.py", 3, "PTC101") in found, found
    assert not any(code == "PTC001" for _, _, code in found)


def test_a_finding_on_a_form_feed_line_of_an_imported_module_has_the_files_column(tmp_path):
    """Columns of a finding in an imported module whose line is indented with a form feed are
    the file's columns (the analysis read the cut text, which is one character shorter there);
    so are the columns of a call site on such a line."""
    import os

    from pt2lint.engine import lint_paths

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    helper = "def scale(x):\n\f    s = x.sum().item()\n    return x * s\n\n\ndef outer(x):\n\f    return scale(x)\n"
    (pkg / "helpers.py").write_text(helper)
    (pkg / "model.py").write_text(
        "import torch\nfrom .helpers import outer\n\n\n"
        "class M(torch.nn.Module):\n    def forward(self, x):\n        return outer(x)\n"
    )
    settings = LintSettings(enabled=resolve_selection(), project_root=str(tmp_path))
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        diags = [d for r in lint_paths(["pkg/model.py"], settings, jobs=1) for d in r.diagnostics if d.code == "PTC101"]
    finally:
        os.chdir(old)
    (d,) = diags
    lines = helper.split("\n")  # not splitlines(): that splits at the form feed too
    assert os.path.basename(d.filename) == "helpers.py" and d.start.line == 2
    # the 1-based column of ``item()`` (where the finding starts) in the file, form feed counted
    assert d.start.column == lines[1].index("item()") + 1, d
    helper_sites = [s for s in d.call_sites if os.path.basename(s[1]) == "helpers.py"]
    assert helper_sites and helper_sites[0][2] == 7
    assert helper_sites[0][3] == lines[6].index("scale(x)") + 1, d.call_sites
