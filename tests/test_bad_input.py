"""The bad-input matrix: whatever is in the tree, ``pt2lint check`` never crashes, hangs or writes.

Each case expects what a ruff user would: a problem with one file is one line on stderr
(``error: <path>: <cause>``, no traceback) and exit code 2, while every other file is
still checked and its findings still reported; a syntax error is a ``PTC001`` finding
(exit 1); a config error stops the run with one line and exit 2. No case writes a file
(the result cache aside). Cases that could kill the interpreter (deep nesting) run
``python -m pt2lint`` in a subprocess.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from pt2lint.cli import cli
from clitools import Run, repo_pythonpath
from clitools import cli_runner as runner

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = ".pt2lint_cache"

MODEL = textwrap.dedent(
    """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x):
            return x.sum().item()
    """
)
MODEL_FINDING = ":6:24: PTC101 "  # the `item` of `.item()`
SYNTAX_ERROR = "def f(:\n    pass\n"


# --- helpers ---------------------------------------------------------------------------------------




def check(*args, input=None, isolated=True) -> Run:
    """``pt2lint check`` in-process, with the real rules."""
    argv = ["check", "-j", "1"] + (["--isolated"] if isolated else []) + list(args)
    res = runner().invoke(cli, argv, input=input, catch_exceptions=False)
    run = Run(res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in run.stdout + run.stderr, run
    return run


def pt2lint(*args, cwd, timeout=120, env=None, **kw) -> Run:
    """``python -m pt2lint ...`` in a fresh interpreter (a segfault cannot take pytest down)."""
    env = dict(env or os.environ, PYTHONPATH=repo_pythonpath(REPO))
    out = subprocess.run([sys.executable, "-m", "pt2lint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, **kw)
    run = Run(out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in run.stdout + run.stderr, run
    return run


def write(root, name, content):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def snapshot(root):
    """Every file under ``root`` (the result cache aside) with its bytes and mtime."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != CACHE]
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode):
                    with open(path, "rb") as fh:
                        out[os.path.relpath(path, root)] = (fh.read(), st.st_mtime_ns)
                else:
                    out[os.path.relpath(path, root)] = (None, st.st_mode)
            except OSError:
                out[os.path.relpath(path, root)] = None
    return out


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project as the working directory; fails the test if a run wrote into it."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.fixture
def unchanged(project):
    """Call after writing the files: asserts at teardown that nothing was written."""
    taken = {}

    def take():
        taken["before"] = snapshot(project)

    yield take
    if "before" in taken:
        assert snapshot(project) == taken["before"], "pt2lint check wrote into the tree"


# --- the matrix --------------------------------------------------------------------------------------


def test_syntax_error_is_a_ptc001_finding_and_other_files_are_checked(project, unchanged):
    write(project, "a_broken.py", SYNTAX_ERROR)
    write(project, "b_model.py", MODEL)
    unchanged()
    run = check()
    assert run.code == 1, run
    assert run.stdout.splitlines() == [
        "a_broken.py:1:7: PTC001 SyntaxError: invalid syntax",
        "b_model.py" + MODEL_FINDING + run.stdout.splitlines()[1].split(" PTC101 ", 1)[1],
    ]
    assert run.errors == []


CPYTHON_ONLY_REJECTS = {  # LibCST parses each of these; CPython's compiler does not
    "escape_n.py": (b'x = "\\N{"\n', "1:10: PTC001 SyntaxError: (unicode error)"),
    "escape_x.py": (b'x = "\\x1"\n', "1:10: PTC001 SyntaxError: (unicode error)"),
    # the column moved between CPython 3.11 patch releases: the running one's is expected
    "bytes.py": ('x = b"\u00e9"\n'.encode(), "1:{bytes}: PTC001 SyntaxError: bytes can only contain ASCII literal characters"),
    "double_bom.py": (b"\xef\xbb\xbf\xef\xbb\xbfx = 1\n", "1:1: PTC001 SyntaxError: invalid non-printable character U+FEFF"),
    "nul.py": (b"x = 1  # a\x00b\n", "1:11: PTC001 SyntaxError: source code"),
    "return.py": (b"return 1\n", "1:1: PTC001 SyntaxError: 'return' outside function"),
    "dup_arg.py": (b"def f(a, a):\n    pass\n", "1:10: PTC001 SyntaxError: duplicate argument 'a' in function definition"),
    "blocks.py": ("".join(" " * i + "for x in y:\n" for i in range(21)).encode() + b" " * 21 + b"pass\n", "21:21: PTC001 SyntaxError: too many statically nested blocks"),
}


@pytest.mark.parametrize("name", sorted(CPYTHON_ONLY_REJECTS))
def test_files_cpython_rejects_are_ptc001_even_when_libcst_parses_them(project, unchanged, name):
    data, expected = CPYTHON_ONLY_REJECTS[name]
    if "{bytes}" in expected:
        try:
            compile(data.decode(), name, "exec", dont_inherit=True)
        except SyntaxError as exc:
            expected = expected.replace("{bytes}", str(exc.offset))
    write(project, "a_" + name, data)
    write(project, "b_model.py", MODEL)
    unchanged()
    run = check()
    assert run.code == 1, run
    lines = run.stdout.splitlines()
    assert lines[0].startswith(f"a_{name}:{expected}"), run
    assert len(lines) == 2 and lines[1].startswith("b_model.py" + MODEL_FINDING), run
    assert run.errors == []


def test_non_utf8_bytes_are_one_error_line_and_other_files_are_checked(project, unchanged):
    write(project, "a_latin.py", b"name = 'caf\xe9'\n")
    write(project, "b_model.py", MODEL)
    unchanged()
    run = check()
    assert run.code == 2, run
    assert run.stdout.startswith("b_model.py" + MODEL_FINDING)
    assert run.errors == [
        "error: a_latin.py: not valid UTF-8: byte 0xe9 at offset 11 (add a PEP 263 coding line, or convert the file to UTF-8)"
    ]
    assert "1 path could not be checked" in run.stderr


def test_unknown_coding_line_is_one_error_line(project, unchanged):
    write(project, "a_bogus.py", "# -*- coding: klingon -*-\nx = 1\n")
    write(project, "b_model.py", MODEL)
    unchanged()
    run = check()
    assert run.code == 2, run
    (error,) = run.errors
    assert error.startswith("error: a_bogus.py: ") and "klingon" in error
    assert run.stdout.startswith("b_model.py" + MODEL_FINDING)


def test_utf8_bom_is_skipped_and_positions_are_unchanged(project, unchanged):
    write(project, "bom.py", b"\xef\xbb\xbf" + MODEL.encode())
    write(project, "bom_only.py", b"\xef\xbb\xbf")
    unchanged()
    run = check()
    assert run.code == 1, run
    assert run.stdout.startswith("bom.py" + MODEL_FINDING)
    assert len(run.stdout.splitlines()) == 1 and run.errors == []


def test_pep263_latin1_coding_line(project, unchanged):
    source = "# -*- coding: latin-1 -*-\n" + MODEL.replace("return x", "caf\xe9 = 1; return x")
    write(project, "latin.py", source.encode("latin-1"))
    unchanged()
    run = check()
    assert run.code == 1, run
    # line 7 now; the column counts characters, so the 'é' (one byte in latin-1, two in UTF-8) is one column
    assert run.stdout.startswith("latin.py:7:34: PTC101 "), run


@pytest.mark.parametrize(
    "name, newline",
    [("crlf.py", "\r\n"), ("cr.py", "\r"), ("mixed.py", None)],
)
def test_crlf_cr_and_mixed_line_endings(project, unchanged, name, newline):
    lines = MODEL.splitlines()
    if newline is None:
        text = "".join(line + ("\r\n", "\n", "\r")[i % 3] for i, line in enumerate(lines))
    else:
        text = newline.join(lines) + newline
    write(project, name, text)
    unchanged()
    run = check()
    assert run.code == 1, run
    assert run.stdout.startswith(name + MODEL_FINDING), run


def test_tabs(project, unchanged):
    write(project, "tabs.py", MODEL.replace("    ", "\t"))
    write(project, "taberror.py", "if True:\n\tx = 1\n        y = 2\n")  # inconsistent tabs and spaces
    unchanged()
    run = check()
    assert run.code == 1, run
    out = run.stdout.splitlines()
    assert out[0].startswith("taberror.py:3:") and " PTC001 " in out[0], run
    assert out[1].startswith("tabs.py:6:18: PTC101 "), run  # a tab is one column
    assert run.errors == []


def test_empty_and_blank_files(project, unchanged):
    write(project, "empty.py", b"")
    write(project, "blank.py", b"\n\n   \n")
    write(project, "comment.py", b"# nothing here\n")
    write(project, "eof_backslash.py", b"x = 1\\")
    unchanged()
    run = check()
    assert run.stdout.splitlines() == ["eof_backslash.py:1:6: PTC001 SyntaxError: unexpected EOF while parsing"] or (
        len(run.stdout.splitlines()) == 1 and run.stdout.startswith("eof_backslash.py:1:") and " PTC001 " in run.stdout
    ), run
    assert run.code == 1 and run.errors == []
    assert "(4 files checked in " in run.stderr


def test_5mb_generated_file_is_checked_quickly(project, unchanged):
    rows = "".join(f'    "token_{i:07d}_abcdefghijklmnopqrstuvwxyz",\n' for i in range(115_000))
    write(project, "vocab.py", '"""Generated vocabulary."""\nVOCAB = [\n' + rows + "]\n")
    write(project, "model.py", MODEL)
    assert os.path.getsize(project / "vocab.py") > 5_000_000
    unchanged()
    started = time.perf_counter()
    run = check()
    took = time.perf_counter() - started
    assert run.code == 1 and run.errors == [], run
    assert run.stdout.startswith("model.py" + MODEL_FINDING)
    assert "(2 files checked in " in run.stderr
    assert took < 30, f"{took:.1f} s for 5 MB (LibCST alone takes a minute: the prefilter must keep it away)"


# Deep nesting: each runs in a subprocess (LibCST used to die of SIGSEGV on some).

FORWARD = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        y = {expr}\n        return x.sum().item()\n"
DEEP = {
    # CPython refuses these: a PTC001 finding, LibCST never sees them
    "parens_2000": ("x = " + "(" * 2000 + "1" + ")" * 2000 + "\n", 1, "PTC001 SyntaxError: too many nested parentheses"),
    "binop_10000": ("x = " + " + ".join(["a"] * 10_000) + "\n", 1, "PTC001 SyntaxError: code nested too deeply for Python to compile"),
    "unary_20000": ("x = " + "-" * 20_000 + "a\n", 1, "PTC001 SyntaxError: code nested too deeply for Python to compile"),
    "ifs_500": ("".join(" " * i + "if x:\n" for i in range(500)) + " " * 500 + "pass\n", 1, "PTC001 SyntaxError: too many levels of indentation"),
    "lists_250_in_forward": (FORWARD.format(expr="[" * 250 + "x" + "]" * 250), 1, "PTC001 SyntaxError: too many nested parentheses"),
    # CPython accepts these: analysed for real, on a big stack
    "binop_1500_in_forward": (FORWARD.format(expr=" + ".join(["x"] * 1500)), 1, " PTC101 "),
    "lists_150_in_forward": (FORWARD.format(expr="[" * 150 + "x" + "]" * 150), 1, " PTC101 "),
    "ifs_95_in_forward": (
        "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        + "".join(" " * (8 + i) + "if self.training:\n" for i in range(95))
        + " " * 103 + "x = x.item()\n        return x\n",
        1,
        " PTC101 ",
    ),
    # flat for CPython, 12000 levels deep for LibCST (whose parser died at ~10000 on the main thread)
    "and_chain_12000": ("x = " + " and ".join(["a"] * 12_000) + "  # noqa: PTC101\n", 1, " PTC002 "),
}


@pytest.mark.parametrize("case", sorted(DEEP))
def test_deeply_nested_code(project, unchanged, case):
    source, code, expected = DEEP[case]
    write(project, "deep.py", source)
    write(project, "other.py", SYNTAX_ERROR)
    unchanged()
    run = pt2lint("check", "--isolated", "--no-cache", "-j", "1", ".", cwd=project, timeout=180)
    assert run.code == code, run
    assert run.errors == [], run
    lines = run.stdout.splitlines()
    assert any(line.startswith("deep.py:") and expected in line for line in lines), run
    assert "other.py:1:7: PTC001 SyntaxError: invalid syntax" in lines


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlink_loop(project, unchanged):
    write(project, "pkg/model.py", MODEL)
    os.symlink(str(project / "pkg"), str(project / "pkg" / "again"))  # a directory loop inside the tree
    os.symlink("loop_b.py", str(project / "loop_a.py"))  # a file loop
    os.symlink("loop_a.py", str(project / "loop_b.py"))
    unchanged()
    run = check()  # walking: links are not followed, the loops are never entered
    assert run.code == 1 and run.errors == [], run
    assert run.stdout.startswith(os.path.join("pkg", "model.py") + MODEL_FINDING)
    run = check("loop_a.py", "pkg")  # named explicitly: one line, the rest still checked
    assert run.code == 2, run
    assert run.errors == ["error: loop_a.py: too many levels of symbolic links"]
    assert run.stdout.startswith(os.path.join("pkg", "model.py") + MODEL_FINDING)


def test_unreadable_file(project, unchanged, monkeypatch):
    write(project, "a_locked.py", MODEL)
    write(project, "b_model.py", MODEL)
    unchanged()
    real_open = os.open

    def fake_open(file, *args, **kwargs):  # root ignores chmod 000, so refuse the read here
        if os.path.basename(os.fspath(file)) == "a_locked.py":
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)  # every read goes through pt2lint.reading's os.open
    run = check()
    monkeypatch.undo()
    assert run.code == 2, run
    assert run.errors == ["error: a_locked.py: permission denied"]
    assert run.stdout.startswith("b_model.py" + MODEL_FINDING)
    assert len(run.stdout.splitlines()) == 1


def _as_root_drop_file_capabilities():
    """``setpriv`` arguments that make root obey file permissions (``[]`` for other users); ``None``: impossible."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    args = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
    try:
        subprocess.run(args + ["true"], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return args


@pytest.mark.skipif(_as_root_drop_file_capabilities() is None, reason="root without setpriv can read a chmod 000 file")
def test_unreadable_file_for_real(project):
    locked = write(project, "a_locked.py", MODEL)
    write(project, "b_model.py", MODEL)
    locked.chmod(0)
    try:
        env = dict(os.environ, PYTHONPATH=repo_pythonpath(REPO))
        out = subprocess.run(
            _as_root_drop_file_capabilities() + [sys.executable, "-m", "pt2lint", "check", "--isolated", "--no-cache", "."],
            cwd=project, env=env, capture_output=True, text=True, timeout=120,
        )
        run = Run(out.returncode, out.stdout, out.stderr)
    finally:
        locked.chmod(0o644)
    assert run.code == 2, run
    assert run.errors == ["error: a_locked.py: permission denied"]
    assert run.stdout.startswith("b_model.py" + MODEL_FINDING)


def test_directory_named_like_a_python_file(project, unchanged):
    write(project, "x.py/inner.py", MODEL)
    write(project, "pkg/y.py/deeper/inner.py", SYNTAX_ERROR)
    if hasattr(os, "symlink"):
        os.symlink(str(project / "pkg"), str(project / "link.py"))  # a link to a directory, named .py
    unchanged()
    run = check()
    assert run.code == 1 and run.errors == [], run
    assert run.stdout.splitlines()[0] == os.path.join("pkg", "y.py", "deeper", "inner.py") + ":1:7: PTC001 SyntaxError: invalid syntax"
    assert run.stdout.splitlines()[1].startswith(os.path.join("x.py", "inner.py") + MODEL_FINDING)
    assert len(run.stdout.splitlines()) == 2
    run = check("x.py")  # named explicitly: walked as the directory it is
    assert run.code == 1 and run.stdout.startswith(os.path.join("x.py", "inner.py") + MODEL_FINDING)

    from pt2lint.engine import lint_path
    from pt2lint.settings import LintSettings

    assert lint_path("x.py", LintSettings()).error == "x.py: is a directory, not a Python file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifo_named_like_a_python_file_is_not_read(project, unchanged):
    os.mkfifo(str(project / "pipe.py"))  # opening it for reading would block forever
    write(project, "model.py", MODEL)
    unchanged()
    run = pt2lint("check", "--isolated", "--no-cache", ".", cwd=project, timeout=60)
    assert run.code == 1 and run.errors == [], run
    assert run.stdout.startswith("model.py" + MODEL_FINDING)


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
def test_pipe_named_explicitly_is_read_once_with_the_cache_on(project, unchanged):
    unchanged()
    read_end, write_end = os.pipe()
    os.write(write_end, SYNTAX_ERROR.encode())
    os.close(write_end)
    try:
        run = check(f"/dev/fd/{read_end}")  # what `pt2lint check <(...)` passes; the cache is on
    finally:
        os.close(read_end)
    assert run.code == 1, run
    assert run.stdout == f"/dev/fd/{read_end}:1:7: PTC001 SyntaxError: invalid syntax\n"


def test_warnings_about_the_linted_code_are_not_printed(project, unchanged):
    """``ast.parse`` warns about ``"\\d"`` (SyntaxWarning on 3.12+, DeprecationWarning before): not ours to print."""
    write(project, "escapes.py", 'import re\nPAT = re.compile("\\d+")\nOK = 1 is 1\n')
    write(project, "model.py", 'import re\n' + MODEL + 'PAT = re.compile("\\d+")\n')
    unchanged()
    env = dict(os.environ, PYTHONWARNINGS="always::SyntaxWarning,always::DeprecationWarning")
    run = pt2lint("check", "--isolated", "--no-cache", "-j", "1", ".", cwd=project, env=env)
    assert run.code == 1, run
    assert "invalid escape sequence" not in run.stderr and "SyntaxWarning" not in run.stderr, run


@pytest.mark.parametrize("fmt", ["text", "full", "json", "json-lines", "sarif", "github", "junit", "lsp", "html"])
def test_odd_file_names_in_every_output_format(project, unchanged, fmt):
    """Names that are not UTF-8 (bytes a Linux file name may hold), or hold a newline or a space."""
    write(project, "caf\u00e9 model.py", MODEL)
    write(project, "new\nline.py", SYNTAX_ERROR)
    try:
        with open(os.path.join(os.fsencode(str(project)), b"\xff\xfebad.py"), "wb") as fh:
            fh.write(SYNTAX_ERROR.encode())
    except OSError:
        pass  # the file system wants UTF-8 names
    unchanged()
    run = check("--output-format", fmt)
    assert run.code == 1, run
    assert run.errors == [], run


def test_file_deleted_between_discovery_and_reading(project, unchanged, monkeypatch):
    import pt2lint.cli

    write(project, "a_gone.py", MODEL)
    write(project, "b_dir.py", MODEL)
    write(project, "c_model.py", MODEL)
    real_discover = pt2lint.cli.discover

    def discover_then_race(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        os.unlink(project / "a_gone.py")  # deleted after discovery
        os.unlink(project / "b_dir.py")
        os.mkdir(project / "b_dir.py")  # replaced by a directory
        unchanged()
        return found

    monkeypatch.setattr(pt2lint.cli, "discover", discover_then_race)
    run = check()
    assert run.code == 2, run
    assert run.errors == [
        "error: a_gone.py: no such file or directory",
        "error: b_dir.py: is a directory, not a Python file",
    ]
    assert run.stdout.startswith("c_model.py" + MODEL_FINDING) and len(run.stdout.splitlines()) == 1


@pytest.mark.parametrize(
    "name, config, expected",
    [
        ("pyproject.toml", "[tool.pt2lint]\nselect = [\n", "error: pyproject.toml: invalid TOML: "),
        ("pyproject.toml", "[tool.pt2lint]\nselec = ['PTC1']\n", "error: pyproject.toml: [tool.pt2lint] unknown key 'selec' (did you mean 'select'?)"),
        ("pyproject.toml", b"[tool.pt2lint]\nselect = ['\xff']\n", "error: pyproject.toml: not valid UTF-8"),
        ("pyproject.toml", "[tool.pt2lint]\nselect = 'PTC1'\n", "error: pyproject.toml: [tool.pt2lint] 'select' must be an array of strings, not a string"),
        ("pt2lint.toml", "selec = ['PTC1']\n", "error: pt2lint.toml: unknown key 'selec' (did you mean 'select'?)"),
    ],
)
def test_broken_config_is_one_line_and_exit_2(project, unchanged, name, config, expected):
    write(project, name, config)
    write(project, "model.py", MODEL)
    unchanged()
    run = check(isolated=False)
    assert run.code == 2, run
    assert run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith(expected), run


def test_stdin_without_stdin_filename(project, unchanged):
    unchanged()
    run = check("-", input=MODEL)
    assert run.code == 1, run
    assert run.stdout.startswith("-" + MODEL_FINDING)
    run = check("-", input=b"x = '\xff'\n")
    assert run.code == 2, run
    assert run.errors == ["error: -: not valid UTF-8: byte 0xff at offset 5 (add a PEP 263 coding line, or convert the file to UTF-8)"]
    run = check("-", input="")
    assert run.code == 0 and run.errors == [], run
    run = check("-", input=SYNTAX_ERROR)
    assert run.code == 1 and run.stdout == "-:1:7: PTC001 SyntaxError: invalid syntax\n"


@pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(os, "kill"), reason="needs fork and signals")
def test_a_worker_process_that_dies_is_one_error_not_a_hang(project, unchanged):
    """A crash in native code (or the OOM killer) takes a worker down: that file is one error line,
    every other file is still checked, and the run ends (multiprocessing.Pool used to wait forever)."""
    for i in range(8):
        write(project, f"m{i}.py", MODEL if i != 3 else "CRASH = 1\n")
    unchanged()
    bootstrap = textwrap.dedent(
        """\
        import os, signal, sys
        import pt2lint.engine as engine
        real = engine.lint_path
        def lint_path(path, *args, **kwargs):
            if os.path.basename(path) == "m3.py":
                os.kill(os.getpid(), signal.SIGKILL)  # in a worker: the parent must survive it
            return real(path, *args, **kwargs)
        engine.lint_path = lint_path
        from pt2lint.cli import main
        sys.argv[0] = "pt2lint"
        main()
        """
    )
    env = dict(os.environ, PYTHONPATH=repo_pythonpath(REPO))
    out = subprocess.run(
        [sys.executable, "-c", bootstrap, "check", "--isolated", "--no-cache", "-j", "2", "."],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    run = Run(out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in run.stderr, run
    assert run.code == 2, run
    assert run.errors == ["error: m3.py: internal error: the process checking this file died (a crash in native code, or out of memory)"]
    assert len(run.stdout.splitlines()) == 7 and all(line.split(":")[0] != "m3.py" for line in run.stdout.splitlines())


def test_two_checks_at_once_on_the_same_tree(project):
    """Two processes over one tree at the same time (sharing the result cache), twice: both succeed, alike."""
    for i in range(24):
        write(project, f"pkg/m{i:02d}.py", MODEL if i % 4 else SYNTAX_ERROR)
    before = {k: v for k, v in snapshot(project).items()}
    env = dict(os.environ, PYTHONPATH=repo_pythonpath(REPO))
    args = [sys.executable, "-m", "pt2lint", "check", "--isolated", "-q", "-j", "2", "."]
    outputs = []
    for _ in range(2):  # a cold cache, then a warm one
        procs = [subprocess.Popen(args, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        for p in procs:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 1, err
            assert "Traceback" not in err and "error:" not in err, err
            outputs.append(out)
    assert len(set(outputs)) == 1 and len(outputs[0].splitlines()) == 24
    assert snapshot(project) == before  # only the cache was written


# --- fix: a read-only file ------------------------------------------------------------------------


def _has_fix() -> bool:
    return "fix" in cli.commands


@pytest.mark.skipif(not _has_fix(), reason="`pt2lint fix` does not exist yet")
def test_fix_leaves_a_read_only_file_alone_and_fixes_the_others(project):
    fixable = MODEL.replace("return x.sum().item()", "print(x)\n        return x")
    ro = write(project, "a_readonly.py", fixable)
    rw = write(project, "b_writable.py", fixable)
    ro.chmod(0o444)
    try:
        res = runner().invoke(cli, ["fix", "--isolated", "-j", "1", "--unsafe-fixes", "."], catch_exceptions=False)
    finally:
        mode = ro.stat().st_mode
        ro.chmod(0o644)
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert ro.read_text() == fixable and stat.S_IMODE(mode) == 0o444
    assert rw.read_text() != fixable
    (error,) = [line for line in res.stderr.splitlines() if line.startswith("error: ")]
    assert error.startswith("error: a_readonly.py: ")


@pytest.mark.skipif(not _has_fix(), reason="`pt2lint fix` does not exist yet")
def test_two_fixes_at_once_on_the_same_tree(tmp_path):
    """Two ``fix --unsafe-fixes`` processes over one tree at once: the tree ends as one fix leaves it,
    every file parses, nothing half-written, no temporary file left behind."""
    import ast
    import shutil

    body = MODEL.replace("return x.sum().item()", "print(x.shape)\n        x.add_(1)\n        return x")
    tree, alone = tmp_path / "tree", tmp_path / "alone"
    for i in range(16):
        write(tree, f"pkg/m{i:02d}.py", body.replace("Net", f"Net{i}") if i % 3 else MODEL)
    shutil.copytree(tree, alone)
    env = dict(os.environ, PYTHONPATH=repo_pythonpath(REPO))
    args = [sys.executable, "-m", "pt2lint", "fix", "--isolated", "--unsafe-fixes", "-q", "-j", "2", "."]
    original = {k: v[0] for k, v in snapshot(tree).items()}
    subprocess.run(args, cwd=alone, env=env, capture_output=True, text=True, timeout=300)
    assert {k: v[0] for k, v in snapshot(alone).items()} != original, "the fix changed nothing: a useless test"
    procs = [subprocess.Popen(args, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode in (0, 1, 2), err
        assert "Traceback" not in err and "internal error" not in err, err
    assert snapshot(tree).keys() == snapshot(alone).keys(), "a temporary file was left behind"
    for rel, (data, _) in snapshot(tree).items():
        ast.parse(data)
        assert data == snapshot(alone)[rel][0], rel
    again = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in again.stderr
    assert {k: v[0] for k, v in snapshot(tree).items()} == {k: v[0] for k, v in snapshot(alone).items()}
