"""Output formats: text, json, full, statistics and the summary line."""

from __future__ import annotations

import json
import os

import pytest

from pt2lint.baseline import fingerprint
from pt2lint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position
from pt2lint.reporters import REPORTERS, ReportContext, fix_marker, get_reporter, register
from pt2lint.reporters.statistics import count_by_code, render_statistics_json, render_statistics_text
from pt2lint.reporters.text import RunStats, summary_line


def diag(code="PTC101", name="tensor-item", filename="m.py", line=3, col=5, fix=None, **kw):
    return Diagnostic(
        code=code, name=name, message=f"{name} message", filename=filename,
        start=Position(line, col), end=Position(line, col + 7), severity="error",
        category="data-dependent", fix=fix, **kw,
    )


SAFE = Fix("use torch.where", Applicability.SAFE, (Edit(Position(3, 5), Position(3, 12), "y"),), name="where")


def test_registry_has_builtin_formats_and_rejects_duplicates():
    assert {"text", "json", "full"} <= set(REPORTERS)
    assert get_reporter("full").needs_source and not get_reporter("json").human
    with pytest.raises(ValueError):
        register("text")(lambda diagnostics, context: "")


def test_text_format_and_fix_markers():
    out = get_reporter("text").render(
        [diag(), diag(line=4, fix=SAFE), diag(line=5, fix=Fix("m", Applicability.UNSAFE, ())),
         diag(line=6, fix=Fix("m", Applicability.DISPLAY_ONLY, ()))],
        ReportContext(),
    )
    assert out.splitlines() == [
        "m.py:3:5: PTC101 tensor-item message",
        "m.py:4:5: PTC101 tensor-item message [fix available]",
        "m.py:5:5: PTC101 tensor-item message [unsafe fix available]",
        "m.py:6:5: PTC101 tensor-item message [suggested fix]",
    ]
    assert fix_marker(diag()) is None


def test_json_format_fields(tmp_path):
    d = diag(fix=SAFE, gb_types=("GB0124",), symbol="Net.forward", call_chain=("Net.forward", "Net._h"))
    (obj,) = json.loads(get_reporter("json").render([d], ReportContext(cwd=str(tmp_path))))
    assert obj == {
        "code": "PTC101",
        "name": "tensor-item",
        "message": "tensor-item message",
        "filename": os.path.join(str(tmp_path), "m.py"),
        "location": {"row": 3, "column": 5},
        "end_location": {"row": 3, "column": 12},
        "fix": {
            "applicability": "safe",
            "message": "use torch.where",
            "edits": [{"content": "y", "location": {"row": 3, "column": 5}, "end_location": {"row": 3, "column": 12}}],
        },
        "url": d.url,
        "noqa_row": 3,
        "category": "data-dependent",
        "severity": "error",
        "gb_types": ["GB0124"],
        "symbol": "Net.forward",
        "call_chain": ["Net.forward", "Net._h"],
        "call_sites": [],
        # m.py is not on disk: the fingerprint hashes an empty line (path relative to the checkout)
        "fingerprint": fingerprint("PTC101", "m.py", "", 0),
    }
    (stdin_obj,) = json.loads(get_reporter("json").render([diag(filename="-")], ReportContext()))
    assert stdin_obj["filename"] == "-" and stdin_obj["fix"] is None
    assert json.loads(get_reporter("json").render([], ReportContext())) == []


def test_full_format_shows_context_carets_and_notes():
    source = "import torch\n\nclass Net:\n    def forward(self, x):\n        n = x.item()\n        return n\n"
    d = Diagnostic(
        code="PTC101", name="tensor-item", message="`.item()` breaks", filename="m.py",
        start=Position(5, 14), end=Position(5, 21), severity="error", category="data-dependent",
        gb_types=("GB0124",), symbol="Net._h", call_chain=("Net.forward", "Net._h"), fix=SAFE,
    )
    out = get_reporter("full").render([d], ReportContext(sources={"m.py": source}))
    assert out.splitlines() == [
        "m.py:5:14: PTC101 `.item()` breaks [fix available]",
        "  |",
        "3 | class Net:",
        "4 |     def forward(self, x):",
        "5 |         n = x.item()",
        "  |              ^^^^^^^ PTC101",
        "6 |         return n",
        "  |",
        "  = in: Net._h (via Net.forward -> Net._h)",
        "  = graph-break types: GB0124",
        "  = help: use torch.where",
    ]
    # Without the source text the header and notes are still printed.
    assert get_reporter("full").render([d], ReportContext()).splitlines()[0].startswith("m.py:5:14: PTC101")


def test_statistics_sorted_by_count_then_code():
    diags = [diag(), diag(line=4), diag(code="PTC301", name="print-call", fix=SAFE), diag(code="PTC102", name="tensor-tolist")]
    assert [(c.code, c.count) for c in count_by_code(diags)] == [("PTC101", 2), ("PTC102", 1), ("PTC301", 1)]
    assert render_statistics_text(diags).splitlines() == [
        "2  PTC101  [ ] tensor-item",
        "1  PTC102  [ ] tensor-tolist",
        "1  PTC301  [*] print-call",
    ]
    assert json.loads(render_statistics_json(diags))[2] == {"code": "PTC301", "name": "print-call", "count": 1, "fixable": 1}
    assert render_statistics_text([]) == ""


def test_summary_lines():
    assert summary_line(RunStats(3, 2, 12, 0, 0.5, 1_000_000)) == (
        "Found 3 findings in 2 files (12 files checked in 0.50s, 24 files/s, 2.0 MB/s)."
    )
    assert summary_line(RunStats(1, 1, 1, 0, 1.0, 0)).startswith("Found 1 finding in 1 file (1 file checked")
    assert summary_line(RunStats(0, 0, 4, 0, 1.0, 0)) == "All checks passed! (4 files checked in 1.00s, 4 files/s, 0.0 MB/s)"
    assert summary_line(RunStats(0, 0, 4, 1, 1.0, 0)).startswith("No findings; 1 path could not be checked (4 files")
    assert summary_line(RunStats(2, 1, 4, 2, 1.0, 0)).startswith("Found 2 findings in 1 file; 2 paths could not be checked")


def _one_long_line(count: int) -> str:
    """A compiled function whose one long line holds ``count`` ``.item()`` findings."""
    body = "; ".join(f"a{i} = x.sum().item()" for i in range(count))
    return f"import torch\n\n\n@torch.compile\ndef f(x):\n    {body}\n    return x\n"


@pytest.mark.parametrize("fmt", ["full", "sarif", "html"])
def test_many_findings_on_one_long_line_give_output_linear_in_the_findings(tmp_path, monkeypatch, fmt):
    """Each finding carries a bounded window of its line, not the whole line: with the whole
    line per finding, output grew as findings x line length (a 47 KB file gave 140 MB of
    ``full``), and doubling the file quadrupled it."""
    from clitools import cli_runner
    from pt2lint.cli import cli

    monkeypatch.chdir(tmp_path)
    sizes = []
    for count in (150, 300):
        (tmp_path / "m.py").write_text(_one_long_line(count))
        run = cli_runner().invoke(
            cli, ["check", "--isolated", "--no-cache", "-q", "-j", "1", "--output-format", fmt, "m.py"], catch_exceptions=False
        )
        assert run.exit_code == 1, run.stderr
        out = run.stdout
        assert out.count("a7 = x.sum().item()") >= 1  # the finding's own text is shown
        assert "a0 = x.sum().item(); a1" in out  # the start of the line too
        assert _one_long_line(count).splitlines()[5].strip() not in out  # but never the whole line
        sizes.append(len(out.encode("utf-8")))
    per_finding = (sizes[1] - sizes[0]) / 150
    assert per_finding < 6_000 if fmt == "html" else per_finding < 2_000, sizes
    assert sizes[1] < 2.2 * sizes[0], sizes


def test_a_fix_on_a_long_line_shows_a_window_of_it_in_the_html_diff():
    line = "y = " + " + ".join(f"x[{i}]" for i in range(2_000))  # ~14 KB
    source = f"{line}\nz = 1\n"
    col = line.index("x[1000]") + 1
    fix = Fix("drop it", Applicability.SAFE, (Edit(Position(1, col), Position(1, col + 7), "0"),), name="x")
    d = Diagnostic(
        code="PTC101", name="tensor-item", message="m", filename="m.py", start=Position(1, col),
        end=Position(1, col + 7), severity="error", category="data-dependent", fix=fix,
    )
    out = get_reporter("html").render([d], ReportContext(sources={"m.py": source}, files=["m.py"]))
    assert "x[1000]" in out and '<span class="add">+\u2026' in out and '<span class="del">-\u2026' in out
    assert "x[0] + x[1]" not in out and len(out) < 20_000
