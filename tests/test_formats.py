"""Machine output formats of ``check``: github, json-lines, junit, lsp; ``--output-file``; ``--hook``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from pt2lint.cli import cli
from pt2lint.diagnostics import Diagnostic, Position
from pt2lint.reporters import REPORTERS, ReportContext
from pt2lint.reporters.github import annotation
from pt2lint.reporters.lsp import LineIndex
from clitools import cli_runner as _runner

pytestmark = pytest.mark.usefixtures("fake_specs", "fake_analysis")

MODEL = textwrap.dedent(
    """\
    class Net:
        def forward(self, x):
            n = x.sum().item()
            print(n)
            return x * n
    """
)




def run(*args):
    return _runner().invoke(cli, ["check", *args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "net.py").write_text(MODEL)
    (tmp_path / "clean.py").write_text("x = 1\n")
    return tmp_path


def test_every_format_is_registered():
    assert {"text", "full", "json", "json-lines", "sarif", "github", "junit", "lsp", "html"} <= set(REPORTERS)


def test_github_annotations(project):
    result = run("--output-format", "github", "net.py")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "::error title=PTC101 tensor-item,file=net.py,line=3,col=20,endLine=3,endColumn=27::"
        "PTC101 `.item()` on a tensor breaks the graph"
    )
    assert lines[1].startswith("::error title=PTC301 print-call,file=net.py,line=4,col=9,") and lines[1].endswith("[fix available]")
    assert "Found" not in result.stderr  # machine formats print no summary


def test_github_escapes_and_severity_commands():
    d = Diagnostic(
        code="PTC401", name="input-mutation", message="50% of x\nmutated", filename="a,b:c.py",
        start=Position(1, 1), end=Position(1, 2), severity="warning", category="input-mutation",
    )
    assert annotation(d) == (
        "::warning title=PTC401 input-mutation,file=a%2Cb%3Ac.py,line=1,col=1,endLine=1,endColumn=2::PTC401 50%25 of x%0Amutated"
    )
    info = Diagnostic(code="PTC701", name="sync", message="m", filename="f.py", start=Position(1, 1), end=Position(1, 2),
                      severity="info", category="sync")
    assert annotation(info).startswith("::notice ")


def test_json_lines(project):
    result = run("--output-format", "json-lines", "net.py", "clean.py")
    assert result.exit_code == 1
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["code"] for r in rows] == ["PTC101", "PTC301"]
    assert rows[0]["location"] == {"row": 3, "column": 20} and rows[0]["filename"] == str(project / "net.py")
    assert rows[1]["fix"]["applicability"] == "safe"
    assert run("--output-format", "json-lines", "clean.py").stdout == ""


def test_junit(project):
    result = run("--output-format", "junit", "net.py", "clean.py")
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites" and root.get("failures") == "2" and root.get("tests") == "3"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"net.py", "clean.py"}
    cases = suites["net.py"].findall("testcase")
    assert [c.get("name") for c in cases] == ["PTC101 tensor-item", "PTC301 print-call"]
    assert cases[0].get("line") == "3" and cases[0].find("failure").get("type") == "PTC101"
    (clean_case,) = suites["clean.py"].findall("testcase")
    assert clean_case.find("failure") is None


def test_lsp_format_is_publish_diagnostics_per_file_uri(project):
    result = run("--output-format", "lsp", "net.py", "clean.py")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    by_uri = {p["uri"]: p["diagnostics"] for p in payload}
    assert by_uri[(project / "clean.py").as_uri()] == []
    diags = by_uri[(project / "net.py").as_uri()]
    first = diags[0]
    assert first["range"] == {"start": {"line": 2, "character": 19}, "end": {"line": 2, "character": 26}}
    assert first["severity"] == 1 and first["source"] == "pt2lint" and first["code"] == "PTC101"
    assert first["codeDescription"]["href"].endswith("/docs/rules/PTC101.md")
    fix = diags[1]["data"]["fix"]
    assert fix["applicability"] == "safe"
    assert fix["edits"] == [{"range": {"start": {"line": 3, "character": 8}, "end": {"line": 3, "character": 16}}, "newText": "pass"}]


def test_lsp_positions_count_utf16_code_units():
    index = LineIndex("s = '\U0001F600é'; x.item()\n")
    # the emoji is one character but two UTF-16 code units
    assert index.position(Position(1, 13)) == {"line": 0, "character": 13}
    assert LineIndex("s = '\U0001F600é'; x.item()\n", "utf-32").position(Position(1, 13)) == {"line": 0, "character": 12}
    assert LineIndex("s = '\U0001F600é'; x.item()\n", "utf-8").position(Position(1, 13)) == {"line": 0, "character": 16}


def test_output_file(project):
    result = run("--output-format", "json", "--output-file", "out/report.json", "net.py")
    assert result.exit_code == 2 and "out/report.json" in result.stderr  # the folder does not exist
    result = run("--output-format", "json", "-o", "report.json", "net.py")
    assert result.exit_code == 1 and result.stdout == ""
    assert [d["code"] for d in json.loads((project / "report.json").read_text())] == ["PTC101", "PTC301"]


def test_hook_mode_without_files_does_nothing(project):
    result = run("--hook")
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""
    result = run("--hook", "net.py")
    assert result.exit_code == 1 and "PTC101" in result.stdout


def test_hook_mode_applies_excludes_to_named_files(project):
    (project / "pyproject.toml").write_text('[tool.pt2lint]\nextend-exclude = ["net.py"]\n')
    assert run("net.py").exit_code == 1  # a named file is checked ...
    hooked = run("--hook", "net.py")  # ... unless it runs as a hook
    assert hooked.exit_code == 0 and "warning" not in hooked.stderr


def test_lsp_extra_missing_is_one_error_line(tmp_path):
    code = (
        "import sys; sys.modules['pygls'] = None; sys.modules['lsprotocol'] = None\n"
        "from pt2lint.cli import main; main(['lsp'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: the language server needs the 'lsp' extra")
    # the packages themselves, which the index has (pt2lint is installed from a checkout or git)
    assert proc.stderr.strip().endswith("pip install 'pygls>=2.0' 'lsprotocol>=2024.0.0'"), proc.stderr
    assert "Traceback" not in proc.stderr


def test_github_paths_are_relative_to_the_checkout(project, monkeypatch):
    (project / ".git").mkdir()
    (project / "pkg").mkdir()
    (project / "pkg" / "m.py").write_text(MODEL)
    monkeypatch.chdir(project / "pkg")
    out = run("--output-format", "github", "m.py").stdout
    assert ",file=pkg/m.py,line=3," in out.splitlines()[0]


def test_junit_survives_control_characters():
    from pt2lint.reporters.junit import render_junit

    d = Diagnostic(code="PTC101", name="tensor-item", message="bad \x00\x1b byte", filename="a.py",
                   start=Position(1, 1), end=Position(1, 2), severity="error", category="data-dependent")
    root = ET.fromstring(render_junit([d], ReportContext(files=["a.py"])))
    assert root.find("testsuite/testcase/failure").get("message") == "bad \ufffd\ufffd byte"
