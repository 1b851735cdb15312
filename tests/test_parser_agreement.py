"""CPython, not LibCST, decides whether a file is valid Python (``PTC001``).

LibCST parses all of the texts below; CPython's compiler rejects each of them, so
Python could not import the file and a ``PTC001`` finding with CPython's message is
the one thing to report.
"""

from __future__ import annotations

import codecs

import libcst
import pytest

from pt2lint.engine import cpython_syntax_error, lint_path, lint_source
from pt2lint.settings import LintSettings

SETTINGS = LintSettings()

MODEL = "import torch\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n"

# (text, CPython's message (a part of it), line, column)
REJECTED = [
    ('x = "\\N{"\n', "malformed \\N character escape", 1, None),
    ('x = "\\x1"\n', "truncated \\xXX escape", 1, None),
    # the column of this one moved between CPython 3.11 patch releases (5 in 3.11.7, 9 in 3.11.2): taken from the running one
    ('x = b"é"\n', "bytes can only contain ASCII literal characters", 1, "cpython"),
    ("\ufeffx = 1\n", "invalid non-printable character U+FEFF", 1, 1),
    ("x = 1\n# a\x00b\n", "null bytes", 2, 4),
    ("return 1\n", "'return' outside function", 1, 1),
    ('y = "ééé"; return 1\n', "'return' outside function", 1, 12),  # CPython counts UTF-8 bytes here
    ("def f(a, a):\n    pass\n", "duplicate argument 'a'", 1, None),
    ("".join(" " * i + "for x in y:\n" for i in range(21)) + " " * 21 + "pass\n", "too many statically nested blocks", 21, 21),
    ("import torch\n@torch.compile\ndef f(x):\n    return x.item()\nyield 1\n", "'yield' outside function", 5, 1),
]


def _cpython_offset(text: str) -> int:
    """The column the running CPython gives for its rejection of ``text`` (a parser error: characters)."""
    try:
        compile(text, "m.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.offset
    raise AssertionError("CPython accepts the text")


@pytest.mark.parametrize("text, message, line, column", REJECTED, ids=[repr(c[0][:24]) for c in REJECTED])
def test_cpython_rejections_are_ptc001_with_cpythons_message(text, message, line, column):
    libcst.parse_module(text)  # the case is only interesting while LibCST accepts it
    result = lint_source(text, "m.py", SETTINGS)
    assert [d.code for d in result.diagnostics] == ["PTC001"], result.diagnostics
    d = result.diagnostics[0]
    assert message in d.message and d.message.startswith("SyntaxError: ")
    assert d.start.line == line
    if column == "cpython":
        column = _cpython_offset(text)
    if column is not None:
        assert d.start.column == column
    # the prefilter (no compiled region, no suppression comment) must not skip it either
    assert [x.code for x in lint_source(text, "m.py", SETTINGS, prefilter=False).diagnostics] == ["PTC001"]


def test_valid_files_are_not_rejected_and_keep_their_findings():
    assert cpython_syntax_error(MODEL, "m.py") is None
    assert [d.code for d in lint_source(MODEL, "m.py", SETTINGS).diagnostics] == ["PTC101"]
    # a form feed is fine for CPython (and so for pt2lint)
    assert cpython_syntax_error("\x0cx = 1  # \x0c\n", "m.py") is None


def test_double_bom_and_nul_byte_files_on_disk(tmp_path):
    bom = tmp_path / "bom.py"
    bom.write_bytes(codecs.BOM_UTF8 * 2 + MODEL.encode())
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"x = 1  # a\x00b\n" + MODEL.encode())
    single = tmp_path / "single.py"
    single.write_bytes(codecs.BOM_UTF8 + MODEL.encode())
    for path, want in ((bom, ["PTC001"]), (nul, ["PTC001"]), (single, ["PTC101"])):
        result = lint_path(str(path), SETTINGS)
        assert result.error is None
        assert [d.code for d in result.diagnostics] == want, (path.name, result.diagnostics)
    assert lint_path(str(nul), SETTINGS).diagnostics[0].start.column == 11


def test_ptc001_can_be_disabled():
    settings = LintSettings(enabled=SETTINGS.enabled - {"PTC001"})
    assert lint_source("return 1\n", "m.py", settings).diagnostics == ()
