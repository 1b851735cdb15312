"""Adoption on a big codebase: ``--add-noqa`` and ``--baseline`` / ``--write-baseline``."""

from __future__ import annotations

import codecs
import json
import os
import stat
import textwrap

import pytest

from pt2lint.baseline import comment_line, insert_noqa, normalise_line, place_noqa
from pt2lint.cli import cli
from clitools import cli_runner as _runner

MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            n = x.sum().item()
            if x.sum() > 0:  # keep this comment
                print("positive")
            return x * n
    """
)




def run(*args):
    return _runner().invoke(cli, ["check", "--no-cache", *args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "net.py").write_text(MODEL)
    return tmp_path


# ----------------------------------------------------------------- insert_noqa


def test_insert_noqa_appends_and_merges():
    src = "a = 1\nb = 2  # why\nc = 3  # noqa: PTC101\nd = 4  # pt2lint: ignore[PTC104]\ne = 5  # noqa\n"
    out, n = insert_noqa(src, {1: ["PTC301"], 2: ["PTC101"], 3: ["PTC301", "PTC101"], 4: ["PTC101"], 5: ["PTC101"]})
    assert out.splitlines() == [
        "a = 1  # noqa: PTC301",
        "b = 2  # why  # noqa: PTC101",
        "c = 3  # noqa: PTC101, PTC301",
        "d = 4  # pt2lint: ignore[PTC104, PTC101]",
        "e = 5  # noqa",
    ]
    assert n == 4
    again, n2 = insert_noqa(out, {1: ["PTC301"], 3: ["PTC301"]})
    assert (again, n2) == (out, 0)


def test_insert_noqa_keeps_line_endings_and_avoids_strings_and_continuations():
    src = 'x = f("""a\r\nb""").item()\r\ny = 1 + \\\r\n    2\r\n'
    assert comment_line(src, 1) == 2
    assert comment_line(src, 3) == 4
    out, n = insert_noqa(src, {1: ["PTC101"], 3: ["PTC301"]})
    assert n == 2
    assert out == 'x = f("""a\r\nb""").item()  # noqa: PTC101\r\ny = 1 + \\\r\n    2  # noqa: PTC301\r\n'


def test_place_noqa_writes_no_comment_where_none_suppresses_the_finding():
    # the finding's statement is line 2 only; its line ends inside a string that ends on line 3,
    # and the line above the statement ends inside a string too: no line a comment can cover it from
    src = "s = '''a\nb'''; t = f('''\nc''')\n"
    assert place_noqa(src, {(2, (2, 2)): ["PTC101"]}) == (src, 0, [2])
    new, added, unplaced = place_noqa(src, {(2, (1, 3)): ["PTC101"]})
    assert (added, unplaced) == (1, []) and new.endswith("c''')  # noqa: PTC101\n")


def test_normalise_line_ignores_indentation_spacing_and_comments():
    assert normalise_line("    n  =  x.sum().item()   # noqa: PTC101") == "n = x.sum().item()"
    assert normalise_line("s = '# not a comment'  # but this is") == "s = '# not a comment'"


# ----------------------------------------------------------------- --add-noqa


def test_add_noqa_suppresses_every_current_finding(project):
    before = run("net.py")
    assert before.exit_code == 1
    codes = {line.split()[1] for line in before.stdout.splitlines()}
    os.chmod(project / "net.py", 0o640)
    result = run("--add-noqa", "net.py")
    assert result.exit_code == 0, result.stderr
    assert f"Added {len(before.stdout.splitlines())} noqa directives to 1 file." in result.stderr
    text = (project / "net.py").read_text()
    assert "# keep this comment  # noqa: " in text
    for code in codes:
        assert f"# noqa: {code}" in text or f", {code}" in text
    assert stat.S_IMODE(os.stat(project / "net.py").st_mode) == 0o640
    after = run("net.py")
    assert after.exit_code == 0, after.stdout
    assert run("--add-noqa", "net.py").stderr.startswith("Added 0 noqa directives")


def test_add_noqa_keeps_encoding_and_bom(project):
    latin = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + MODEL
    (project / "latin.py").write_bytes(latin.encode("latin-1"))
    (project / "bom.py").write_bytes(codecs.BOM_UTF8 + MODEL.encode("utf-8"))
    assert run("--add-noqa", "latin.py", "bom.py").exit_code == 0
    data = (project / "latin.py").read_bytes()
    assert b"caf\xe9" in data and b"# noqa: PTC101" in data
    data = (project / "bom.py").read_bytes()
    assert data.startswith(codecs.BOM_UTF8) and data.count(codecs.BOM_UTF8) == 1 and b"# noqa: PTC101" in data
    assert run("latin.py", "bom.py").exit_code == 0


BACKSLASH_BODY = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            if x.sum().item(): \\
                x = x + 1
            if x.max().item() > 0 and \\
                    x.min().item() < 0:
                x = x - 1
            return x


    m = torch.compile(Net())
    """
)


def test_add_noqa_puts_the_comment_where_it_suppresses_a_header_continued_by_a_backslash(project):
    """`if <finding>: \\` with its body on the next line: a comment after the body is outside the
    `if` header and suppresses nothing there, so it goes on its own line above the `if`; a header
    continued onto its next line takes the comment at the header's end, as before."""
    (project / "m.py").write_text(BACKSLASH_BODY)
    before = run("m.py")
    assert [row.split()[:2] for row in before.stdout.splitlines()] == [
        ["m.py:7:20:", "PTC101"], ["m.py:9:20:", "PTC101"], ["m.py:10:25:", "PTC101"],
    ], before.stdout
    result = run("--add-noqa", "m.py")
    assert result.exit_code == 0, result.stderr
    assert "Added 2 noqa directives to 1 file." in result.stderr
    text = (project / "m.py").read_text()
    assert text.splitlines()[6:12] == [
        "        # noqa: PTC101",
        "        if x.sum().item(): \\",
        "            x = x + 1",
        "        if x.max().item() > 0 and \\",
        "                x.min().item() < 0:  # noqa: PTC101",
        "            x = x - 1",
    ]
    after = run("m.py")
    assert after.exit_code == 0, after.stdout
    assert run("--add-noqa", "m.py").stderr.startswith("Added 0 noqa directives")


# ----------------------------------------------------------------- baselines


def test_baseline_hides_known_findings_even_when_lines_move(project):
    result = run("--write-baseline", "pt2lint-baseline.json", ".")
    assert result.exit_code == 0 and "Wrote" in result.stderr
    data = json.loads((project / "pt2lint-baseline.json").read_text())
    assert data["tool"] == "pt2lint" and data["version"] == 1
    assert {"code": "PTC101", "file": "net.py", "text": "n = x.sum().item()", "count": 1} in data["findings"]

    assert run("--baseline", "pt2lint-baseline.json", ".").exit_code == 0
    # edits elsewhere (lines added above, a re-indented comment) do not resurrect them
    moved = "import math\n\n\n" + MODEL.replace("# keep this comment", "#   another comment")
    (project / "net.py").write_text(moved)
    result = run("--baseline", "pt2lint-baseline.json", ".")
    assert result.exit_code == 0, result.stdout
    assert "in the baseline not shown" in result.stderr

    # a new finding is reported, and so is a second copy of a baselined line
    (project / "net.py").write_text(moved.replace("return x * n", "m = x.max().item()\n        n = x.sum().item()\n        return x * n * m"))
    result = run("--baseline", "pt2lint-baseline.json", ".")
    assert result.exit_code == 1
    rows = result.stdout.splitlines()
    assert len(rows) == 2 and all("PTC101" in r for r in rows)


def test_baseline_from_another_directory(project, monkeypatch):
    (project / "sub").mkdir()
    (project / "sub" / "m.py").write_text(MODEL)
    assert run("--write-baseline", "base/bl.json", "sub").exit_code == 2  # missing folder: a clear error
    (project / "base").mkdir()
    assert run("--write-baseline", "base/bl.json", "sub").exit_code == 0
    assert json.loads((project / "base" / "bl.json").read_text())["findings"][0]["file"] == "../sub/m.py"
    monkeypatch.chdir(project / "sub")
    assert run("--baseline", "../base/bl.json", "m.py").exit_code == 0


def test_bad_baselines_are_usage_errors(project):
    result = run("--baseline", "missing.json", "net.py")
    assert result.exit_code == 2 and "baseline file not found" in result.stderr
    (project / "bad.json").write_text("{not json")
    result = run("--baseline", "bad.json", "net.py")
    assert result.exit_code == 2 and "not a valid JSON baseline" in result.stderr
    (project / "other.json").write_text('{"findings": []}')
    assert "not a pt2lint baseline" in run("--baseline", "other.json", "net.py").stderr
    result = run("--add-noqa", "--write-baseline", "x.json", "net.py")
    assert result.exit_code == 2 and "cannot be combined" in result.stderr
