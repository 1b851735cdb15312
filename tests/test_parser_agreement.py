"""CPython, not LibCST, decides whether a file is valid Python (``PTC001``).

LibCST parses all of the texts below; CPython's compiler rejects each of them, so
Python could not import the file and a ``PTC001`` finding with CPython's message is
the one thing to report.
"""

from __future__ import annotations

import codecs
import json
import os

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


def _nested_try_finally(depth: int, body: int) -> str:
    """``depth`` ``try``/``finally`` statements, each in the ``finally`` of the one before,
    the innermost ``finally`` holding ``body`` statements (valid Python up to 20 deep)."""
    text = "".join("    " * i + "try:\n" + "    " * (i + 1) + "pass\n" + "    " * i + "finally:\n" for i in range(depth))
    return text + ("    " * depth + "x = 1\n") * body


def test_nested_finally_bodies_are_judged_without_exponential_code_generation(tmp_path):
    """CPython's code generation copies each ``finally`` body (2**depth copies): pt2lint must
    give CPython's verdict on such files at once, in little memory, never a false PTC001."""
    import subprocess
    import sys
    import textwrap

    from clitools import repo_pythonpath

    (tmp_path / "deep18.py").write_text(_nested_try_finally(18, 256))  # 22 KB, valid
    (tmp_path / "deep20.py").write_text(_nested_try_finally(20, 1))  # 61 lines, valid
    (tmp_path / "deep21.py").write_text(_nested_try_finally(21, 1))  # one block too many
    limit = textwrap.dedent(
        """\
        import resource, runpy, sys
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        sys.argv = ["pt2lint", *sys.argv[1:]]
        runpy.run_module("pt2lint", run_name="__main__")
        """
    )
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=repo_pythonpath(repo))
    env.pop("PT2LINT_CACHE_DIR", None)
    run = subprocess.run(
        [sys.executable, "-c", limit, "check", "--isolated", "--no-cache", "-j", "1", "--output-format", "json", "."],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 1, run.stderr
    found = [(os.path.basename(d["filename"]), d["code"], d["message"], d["location"]["row"]) for d in json.loads(run.stdout)]
    assert found == [("deep21.py", "PTC001", "SyntaxError: too many statically nested blocks", 61)], found


#: Texts whose verdict comes from code generation, with ``finally`` bodies in every role.
CODEGEN_CASES = [
    "try:\n    pass\nfinally:\n    break\n",
    "for x in y:\n    try:\n        pass\n    finally:\n        break\n",
    "try:\n    pass\nfinally:\n    return 1\n",
    "def f():\n    try:\n        return 1\n    finally:\n        return 2\n",
    "def f():\n    try:\n        pass\n    except* E:\n        pass\n    finally:\n        return 2\n",
    "def f():\n    try:\n        pass\n    except* E:\n        try:\n            pass\n        finally:\n            return 2\n",
    "def f():\n    for x in y:\n        try:\n            continue\n        finally:\n            yield 1\n",
    "async def f():\n    try:\n        pass\n    finally:\n        yield from x\n",
    "def f():\n    try:\n        pass\n    finally:\n        await x\n",
    "try:\n    pass\nexcept E:\n    pass\nelse:\n    pass\nfinally:\n    a, *b, *c = d\n",
    "".join("    " * i + "for x in y:\n" for i in range(19)) + "    " * 19 + "try:\n" + "    " * 20 + "pass\n"
    + "    " * 19 + "finally:\n" + "    " * 20 + "with a:\n" + "    " * 21 + "pass\n",
    "".join("    " * i + "for x in y:\n" for i in range(18)) + "    " * 18 + "try:\n" + "    " * 19 + "pass\n"
    + "    " * 18 + "finally:\n" + "    " * 19 + "with a:\n" + "    " * 20 + "pass\n",
    _nested_try_finally(12, 2),
    _nested_try_finally(12, 2).replace("pass", "return"),
]


@pytest.mark.parametrize("text", CODEGEN_CASES, ids=range(len(CODEGEN_CASES)))
def test_rewritten_finally_bodies_keep_cpythons_verdict(text, monkeypatch):
    import pt2lint.pycompile as pycompile

    def verdict(judge):
        try:
            judge()
        except SyntaxError as exc:
            return exc.msg, exc.lineno, exc.offset, exc.end_lineno, exc.end_offset
        return None

    want = verdict(lambda: compile(text, "m.py", "exec", dont_inherit=True))
    monkeypatch.setattr(pycompile, "MAX_EXTRA_CHARS", -1)  # every text takes the rewrite
    monkeypatch.setattr(pycompile, "KEEP_CHARS", 0)  # of every `finally` body
    got = verdict(lambda: pycompile.compile_module(text, "m.py"))
    if want is not None and "except* block" in want[0]:
        assert got[0] == want[0]  # reported from inside a `with` block: CPython gives no line there
    else:
        assert got == want
