"""One line model, CPython's: ``\\n``, ``\\r\\n`` and ``\\r`` end a line; a form feed, ``\\v``,
``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029 do not (``str.splitlines`` says they do).

Every line-based edit and report is checked on a module where such a character sits in a
comment or a string above the finding, so that counting lines with ``splitlines`` would
land on the wrong line.
"""

from __future__ import annotations

import ast
import json

import pytest

from pt2lint.baseline import finding_keys, insert_noqa
from pt2lint.engine import lint_source
from pt2lint.lines import SourceLines, split_lines, strip_line_end
from pt2lint.reporters import ReportContext
from pt2lint.reporters.full import render_one
from pt2lint.reporters.html import _source_block, apply_edits
from pt2lint.reporters.lsp import LineIndex
from pt2lint.reporters.sarif import build_sarif
from pt2lint.settings import LintSettings
from pt2lint.suppression import parse_suppressions

SETTINGS = LintSettings()
ODD = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def model(ch: str) -> str:
    """A module whose line 7 holds a `.item()` finding, with ``ch`` in a comment and a string above it."""
    return (
        "import torch\n"
        f"# a comment with {ch} in it\n"
        f"DOC = 'a string with {ch} in it'\n"
        "\n"
        "@torch.compile\n"
        "def f(x):\n"
        "    return x.sum().item()\n"
    )


def finding(source: str):
    diags = [d for d in lint_source(source, "m.py", SETTINGS).diagnostics if d.code == "PTC101"]
    assert len(diags) == 1, diags
    return diags[0]


@pytest.mark.parametrize("ch", ODD + ["\r"])
def test_split_lines_matches_cpython(ch):
    text = f"a = 1  # x{ch}y\nb = 2\r\nc = 3\rd = 4"
    lines = split_lines(text)
    assert "".join(lines) == text
    expected = len(ast.parse(text).body) if ch != "\r" else 5
    assert len(lines) == expected
    model_lines = SourceLines(text)
    for node in ast.parse(text).body:  # ast's line numbers are CPython's
        assert model_lines.text(node.lineno).startswith(ast.unparse(node).split(" ")[0])


def test_offsets_and_positions_round_trip():
    text = "ab\r\ncd\x0cef\rgh\n\u2028ij"
    lines = SourceLines(text)
    assert lines.texts() == ["ab", "cd\x0cef", "gh", "\u2028ij"]
    assert [lines.ending(n) for n in range(1, 5)] == ["\r\n", "\r", "\n", ""]
    for offset in range(len(text) + 1):
        line, col = lines.position(offset)
        if text[offset:offset + 1] != "\n" or text[offset - 1:offset] != "\r":  # the middle of a \r\n
            assert lines.offset(line, col) == offset
    assert lines.offset(0, 5) == 0 and lines.offset(9, 1) == len(text) and lines.offset(1, 99) == 2
    assert strip_line_end("x\x0c\r\n") == "x\x0c"


@pytest.mark.parametrize("ch", ODD)
def test_add_noqa_writes_on_the_findings_line(ch):
    source = model(ch)
    d = finding(source)
    assert d.start.line == 7
    new, added = insert_noqa(source, {d.start.line: [d.code]})
    assert added == 1
    assert SourceLines(new).text(7).endswith("return x.sum().item()  # noqa: PTC101")
    assert [x.code for x in lint_source(new, "m.py", SETTINGS).diagnostics] == []  # and it suppresses it
    assert new.replace("  # noqa: PTC101", "") == source


@pytest.mark.parametrize("ch", ODD)
def test_add_noqa_never_writes_into_a_triple_quoted_string(ch):
    source = (
        "import torch\n\n@torch.compile\ndef f(x):\n"
        f"    n = x.sum().item(); s = '''first{ch}\n"
        f"    second{ch} line\n"
        "    '''\n"
        "    return n, s\n"
    )
    d = finding(source)
    new, added = insert_noqa(source, {d.start.line: [d.code]})
    assert added == 1
    old_tree, new_tree = ast.parse(source), ast.parse(new)
    assert ast.dump(old_tree) == ast.dump(new_tree)  # every string keeps its value
    assert SourceLines(new).text(7) == "    '''  # noqa: PTC101"
    assert [x.code for x in lint_source(new, "m.py", SETTINGS).diagnostics] == []


def test_add_noqa_after_a_lone_cr_and_a_comment_ending_in_backslash():
    source = "import torch\r# a comment \\\r@torch.compile\rdef f(x):\r    return x.sum().item()\r"
    d = finding(source)
    assert d.start.line == 5
    new, added = insert_noqa(source, {5: ["PTC101"]})
    assert added == 1 and new.split("\r")[4] == "    return x.sum().item()  # noqa: PTC101"
    assert [(s.line, s.codes) for s in parse_suppressions(new)] == [(5, ["PTC101"])]


@pytest.mark.parametrize("ch", ["\x0c", "\u2028", "\x85", "\x1c"])
def test_full_carets_sarif_html_lsp_and_baseline_use_the_findings_line(ch):
    source = model(ch)
    d = finding(source)
    line = "    return x.sum().item()"
    block = render_one(d, source)
    rows = block.splitlines()
    at = next(i for i, r in enumerate(rows) if r.startswith("7 | "))
    assert rows[at] == "7 | " + line and "^" in rows[at + 1] and rows[at + 1].index("^") == 4 + d.start.column - 1
    context = ReportContext(cwd="/", sources={"m.py": source}, files=("m.py",))
    sarif = build_sarif([d], context, root="/")
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["snippet"]["text"] == line
    html = _source_block(d, source)
    assert 'data-line="7"><span class="no">7</span>    return x.sum().<mark>' in html
    pos = LineIndex(source).position(d.start)
    assert pos == {"line": 6, "character": d.start.column - 1}
    assert finding_keys([d], {"m.py": source}, "/")[0][2] == "return x.sum().item()"
    json.dumps(sarif)


def test_html_apply_edits_on_the_right_line():
    from pt2lint.diagnostics import Edit, Position

    source = "a = 1  # \u2028\nb = 2\n"
    assert apply_edits(source, [Edit(Position(2, 1), Position(2, 2), "c")]) == "a = 1  # \u2028\nc = 2\n"


@pytest.mark.parametrize("ch", ["\x0c", "\u2028", "\x85", "\x1e"])
def test_lsp_suppress_quick_fix_and_hover_use_the_findings_line(ch):
    from pt2lint.lsp import code_at, noqa_text_edit

    source = model(ch)
    d = finding(source)
    edit = noqa_text_edit(source, d.start.line - 1, d.code, "utf-16")
    assert edit is not None
    assert edit["range"]["start"] == {"line": 6, "character": 0}
    assert edit["newText"] == "    return x.sum().item()  # noqa: PTC101"
    suppressed = source.replace("x.sum().item()\n", "x.sum().item()  # noqa: PTC101\n")
    assert code_at(suppressed, 6, len("    return x.sum().item()  # noqa: PTC1")) == ("PTC101", 35, 41)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ODD_TEXT = st.text(alphabet=st.sampled_from(ODD + ["a", " ", "#"]), max_size=6)


@st.composite
def odd_modules(draw):
    """``(module text, line of its one `.item()`)``: comments and strings full of characters
    ``splitlines`` breaks at, mixed line ends, and sometimes a triple-quoted string that
    starts on the finding's line."""
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    lines = ["import torch"]
    for kind in draw(st.lists(st.sampled_from(["comment", "string", "triple", "blank"]), max_size=5)):
        body = draw(_ODD_TEXT)
        if kind == "comment":
            lines.append(f"# {body}")
        elif kind == "string":
            lines.append(f"S = '{body}'")
        elif kind == "triple":
            lines.extend([f"T = '''{body}", f"{body} '''"])
        else:
            lines.append("")
    lines += ["@torch.compile", "def f(x):"]
    at = len(lines) + 1
    if draw(st.booleans()):
        body = draw(_ODD_TEXT)
        lines += [f"    n = x.sum().item(); s = '''{body}", f"    {body}'''", "    return n, s"]
    else:
        lines += ["    return x.sum().item()"]
    return end.join(lines) + end, at


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(odd_modules())
def test_any_module_the_noqa_lands_on_the_findings_statement_and_changes_no_string(case):
    source, at = case
    d = finding(source)
    assert d.start.line == at
    assert SourceLines(source).text(at).lstrip().startswith(("return x.sum().item()", "n = x.sum().item()"))
    new, added = insert_noqa(source, {d.start.line: [d.code]})
    assert added == 1
    assert ast.dump(ast.parse(new)) == ast.dump(ast.parse(source))  # no string changed value
    assert [x.code for x in lint_source(new, "m.py", SETTINGS).diagnostics] == []
    rows = render_one(d, source).split("\n")
    assert any(r.lstrip().startswith(f"{at} | ") and ".item()" in r for r in rows)
