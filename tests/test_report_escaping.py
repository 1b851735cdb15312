"""Control characters and wide text in reports: github percent-encodes, full lines carets up by display column."""

from __future__ import annotations


from clitools import cli_runner
from pt2lint.cli import cli
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
