"""Control characters and wide text in reports: github percent-encodes, full lines carets up by display column."""

from __future__ import annotations


import pytest

from clitools import cli_runner
from pt2lint.cli import cli
from pt2lint.diagnostics import Diagnostic, Position
from pt2lint.reporters.full import render_one
from pt2lint.reporters.github import escape_data, escape_property

ITEM = "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n"


def test_github_percent_encodes_every_control_character():
    # the five sequences the runner decodes
    assert escape_property("a%b:c,d\r\n") == "a%25b%3Ac%2Cd%0D%0A"
    assert escape_data("a%b:c,d\r\n") == "a%25b:c,d%0D%0A"
    # the others, encoded the same way (never dropped), and non-UTF-8 file-name bytes
    assert escape_property("esc\x1b[31mred.py") == "esc%1B[31mred.py"
    assert escape_data("\x00\t\x7f\x85\x9f") == "%00%09%7F%85%9F"
    assert escape_property("bad\udcffname.py") == "bad%FFname.py"
    # printable text outside ASCII is kept
    assert escape_property("模型/é.py") == "模型/é.py"


def _check(tmp_path, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    result = cli_runner().invoke(cli, ["check", "--isolated", "--no-cache", "-q", "--output-format", fmt, "."])
    return result.stdout


def test_github_file_property_keeps_an_escape_sequence_in_the_name(tmp_path, monkeypatch):
    (tmp_path / "esc\x1b[31mred.py").write_text(ITEM)
    out = _check(tmp_path, monkeypatch, "github")
    assert "file=esc%1B[31mred.py," in out, out
    assert "\x1b" not in out


def test_stdout_report_is_what_the_format_rendered(tmp_path, monkeypatch):
    """The text format escapes the name itself; stdout (not a terminal here) shows it unaltered."""
    (tmp_path / "esc\x1b[31mred.py").write_text(ITEM)
    out = _check(tmp_path, monkeypatch, "text")
    assert out.startswith("esc\\x1b[31mred.py:6:"), out


def _diag(line, start, end):
    return Diagnostic(
        code="PTC101", name="tensor-item", message="m", filename="m.py",
        start=Position(line, start), end=Position(line, end), severity="error", category="data-dependent",
    )


def _source_and_caret(source, needle):
    """The printed source line and caret line for a finding over ``needle`` on line 1."""
    text = source.splitlines()[0]
    start = text.index(needle) + 1
    block = render_one(_diag(1, start, start + len(needle)), source).splitlines()
    src = next(line for line in block if line.startswith("1 | "))
    caret = next(line for line in block if "^" in line)
    return src[4:], caret[4:]


@pytest.mark.parametrize(
    "source, columns_before, carets",
    [
        # 3 CJK characters: 2 columns each
        ('s = ("日本語", x.item())\n', len('s = ("') + 6 + len('", x'), len(".item()")),
        # a combining acute accent takes no column
        ('s = ("e\u0301", x.item())\n', len('s = ("e') + len('", x'), len(".item()")),
        # an emoji takes two
        ('s = ("😀", x.item())\n', len('s = ("') + 2 + len('", x'), len(".item()")),
        # wide characters inside the span widen the carets
        ('s = x.f("日本")\n', len("s = x"), len('.f("') + 4 + len('")')),
        # escape sequences print escaped (\x1b: 4 columns each) and the carets follow that
        ('s = ("\x1b[2J\x1b[31m", x.item())\n', len('s = ("\\x1b[2J\\x1b[31m", x'), len(".item()")),
    ],
)
def test_full_carets_sit_under_the_span_by_display_column(source, columns_before, carets):
    needle = ".item()" if ".item()" in source else '.f("日本")'
    src, caret = _source_and_caret(source, needle)
    assert "\x1b" not in src
    assert caret == " " * columns_before + "^" * carets + " PTC101"


def test_full_keeps_tabs_in_the_source_and_caret_lines():
    src, caret = _source_and_caret('\ts = ("日", x.item())\n', ".item()")
    assert src.startswith("\ts = (")
    assert caret == "\t" + " " * (len('s = ("') + 2 + len('", x')) + "^" * len(".item()") + " PTC101"


def test_full_over_a_real_file_lines_up_after_cjk(tmp_path, monkeypatch):
    (tmp_path / "wide.py").write_text(ITEM.replace("return x.sum().item()", 'return ("日本語", x.sum().item())'))
    out = _check(tmp_path, monkeypatch, "full").splitlines()
    row = next(i for i, line in enumerate(out) if line.startswith("6 | "))
    assert out[row + 1].index("^") == out[row].index("item()") + 3  # three wide characters before it
