"""``--output-format html``: a self-contained page, rendered for real in headless Chromium."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import textwrap

import pytest

from pt2lint.cli import cli
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




@pytest.fixture
def report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "net.py").write_text(MODEL)
    (tmp_path / "models" / "other.py").write_text("def forward(self, x):\n    return x.item()  # <b>\n")
    (tmp_path / "clean.py").write_text("x = 1\n")
    result = _runner().invoke(cli, ["check", "--output-format", "html", "--output-file", "report.html", "."], catch_exceptions=False)
    assert result.exit_code == 1 and result.stdout == ""
    return tmp_path / "report.html"


def test_page_is_self_contained_and_complete(report):
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script|<link|\ssrc=|@import|url\(", page, re.I)
    assert '<table id="by-rule">' in page and '<table id="by-file">' in page
    assert 'data-code="PTC101"' in page and 'data-code="PTC301"' in page
    assert "<mark>.item()</mark>" in page  # the flagged columns
    assert '<span class="ln hl" data-line="3">' in page  # the flagged line
    assert "Why print-call is bad." in page  # the rule explanation from the spec
    assert '<span class="add">+        pass</span>' in page and '<span class="del">-        print(n)</span>' in page
    assert "<b>" not in page
    assert "return x<mark>.item()</mark>  # &lt;b&gt;" in page  # source text is escaped


def test_clean_page(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clean.py").write_text("x = 1\n")
    result = _runner().invoke(cli, ["check", "--output-format", "html", "-o", "r.html", "clean.py"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "All checks passed!" in (tmp_path / "r.html").read_text()


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.skipif(_chromium() is None, reason="headless Chromium is not installed (apt-get install chromium)")
def test_renders_in_headless_chromium(report, tmp_path):
    cmd = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", report.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert "<title>pt2lint report</title>" in dom
    text = html.unescape(re.sub(r"<[^>]+>", "", dom))
    assert "3 findings in 2 files (3 checked)" in text
    assert "models/net.py:3:20" in text and "models/net.py:4:9" in text and "models/other.py:2:13" in text
    articles = re.findall(r'<article class="finding sev-error" id="finding-\d+" data-code="(PTC\d+)"', dom)
    assert articles == ["PTC101", "PTC301", "PTC101"]
    assert "<mark>.item()</mark>" in dom
    assert '<span class="add">+        pass</span>' in dom


def test_control_characters_in_a_file_name_are_escaped(tmp_path, monkeypatch):
    # an ESC/BEL in a file name reached the page raw (the text, github and JSON formats escape them)
    monkeypatch.chdir(tmp_path)
    name = "ctl\x1b[31m\x07x.py"
    (tmp_path / name).write_text(MODEL)
    result = _runner().invoke(cli, ["check", "--output-format", "html", "--output-file", "report.html", "."], catch_exceptions=False)
    assert result.exit_code == 1
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "\x1b" not in page and "\x07" not in page
    assert "ctl\\x1b[31m\\x07x.py" in page
