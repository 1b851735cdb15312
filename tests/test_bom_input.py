"""A UTF-8 byte order mark is not source: the LSP lints such a document as ``check`` does, and ``fix -`` keeps it."""

from __future__ import annotations

from clitools import cli_runner
from pt2lint.cli import cli
from pt2lint.config import load_project
from pt2lint.diagnostics import Position
from pt2lint.lsp import lint_document_result

ITEM = "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n"


def _lint(text):
    return lint_document_result(text, None, "untitled:m.py", load_project([], isolated=True))[0]


def test_lsp_document_with_a_bom_gets_the_findings_check_gives(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with_bom = _lint("\ufeff" + ITEM)
    assert [d.code for d in with_bom] == ["PTC101"]
    assert [(d.start, d.end) for d in with_bom] == [(d.start, d.end) for d in _lint(ITEM)]
    (tmp_path / "m.py").write_bytes(b"\xef\xbb\xbf" + ITEM.encode())
    result = cli_runner().invoke(cli, ["check", "--isolated", "--no-cache", "--output-format", "json", "m.py"])
    assert '"PTC101"' in result.stdout and "PTC001" not in result.stdout


def test_lsp_line_one_columns_count_the_bom_as_the_documents_first_character():
    # the document's text holds the BOM at character 0, so '$' is its character 5 (1-based column 6)
    (d,) = _lint("\ufeffx = $\n")
    assert d.code == "PTC001" and d.start == Position(1, 6)
    (d,) = _lint("x = $\n")
    assert d.start == Position(1, 5)
    # a second BOM is still a syntax error, where it stands
    (d,) = _lint("\ufeff\ufeffx = 1\n")
    assert d.code == "PTC001" and "U+FEFF" in d.message and d.start == Position(1, 2)


def test_fix_stdin_keeps_the_bom_and_the_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = b"\xef\xbb\xbf" + ITEM.replace("\n", "\r\n").encode()
    result = cli_runner().invoke(cli, ["fix", "--isolated", "-"], input=data)
    assert result.stdout_bytes == data  # nothing fixed: the input back, byte for byte


def test_fix_stdin_encodes_the_fixed_code_as_the_input_was(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = (
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        if x.sum() > 0:\n            x = x * 2\n        return x\n"
    )
    result = cli_runner().invoke(cli, ["fix", "--isolated", "--unsafe-fixes", "--rule", "cond", "-"], input=b"\xef\xbb\xbf" + model.encode())
    assert result.stdout_bytes.startswith(b"\xef\xbb\xbfimport torch\n"), result.stdout_bytes[:40]
    assert b"torch.cond(" in result.stdout_bytes
    latin1 = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + model
    result = cli_runner().invoke(cli, ["fix", "--isolated", "--unsafe-fixes", "--rule", "cond", "-"], input=latin1.encode("latin-1"))
    assert b"# caf\xe9\n" in result.stdout_bytes and b"torch.cond(" in result.stdout_bytes


def test_fix_diff_keeps_escape_sequences_of_the_source(tmp_path, monkeypatch):
    """A diff is data for ``patch``: an escape sequence in the code stays in it (stdout not a terminal)."""
    monkeypatch.chdir(tmp_path)
    model = (
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        '        print("\x1b[31mred")\n        if x.sum() > 0:\n            x = x * 2\n        return x\n'
    )
    result = cli_runner().invoke(cli, ["fix", "--isolated", "--unsafe-fixes", "--rule", "cond", "--diff", "-"], input=model.encode())
    assert b"torch.cond(" in result.stdout_bytes
    assert b'print("\x1b[31mred")' in result.stdout_bytes
