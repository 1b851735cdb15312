"""Hostile files, races and limits: what a tree (or a user) can throw at pt2lint's I/O.

Every case here once went wrong: an unbounded read of ``/dev/zero``, a FIFO that blocked
forever, a link that took the walk (and ``fix``) out of the project, a cache entry that was
trusted whatever it held, a pool that hung when a worker died.  Cases that could hang or
eat memory on a regression run ``python -m pt2lint`` in a subprocess with a timeout (and a
memory limit), so a regression fails the test instead of the machine.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from clitools import Run, repo_pythonpath
from pt2lint.cli import cli
from clitools import cli_runner

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

MODEL = textwrap.dedent(
    """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x):
            return x.sum().item()
    """
)
CLEAN = MODEL.replace("return x.sum().item()", "return x.sum()")
FINDING = ":6:24: PTC101 "
PRINT_MODEL = textwrap.dedent(
    """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x):
            print(x)
            return x * 2
    """
)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
needs_symlink = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and signals")


def _limit_memory():
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # an unbounded read dies, not the machine
    except (ImportError, ValueError, OSError):
        pass


def env_with_repo(**extra):
    env = dict(os.environ, PYTHONPATH=repo_pythonpath(REPO), **extra)
    env.pop("PT2LINT_CACHE_DIR", None)
    return env


def pt2lint(*args, cwd, timeout=60, argv0=None, preexec=None, text=True, **kw) -> Run:
    """``python -m pt2lint ARGS`` (or ``python -c argv0 ARGS``) with a timeout and a memory cap."""

    def setup():
        _limit_memory()
        if preexec is not None:
            preexec()

    head = [sys.executable, "-c", argv0] if argv0 else [sys.executable, "-m", "pt2lint"]
    out = subprocess.run(
        head + list(args), cwd=cwd, env=kw.pop("env", None) or env_with_repo(), capture_output=True,
        timeout=timeout, preexec_fn=setup, text=text, **kw,
    )
    return Run(out.returncode, out.stdout, out.stderr)


def check(*args, input=None):
    """``pt2lint check -j 1 --isolated ARGS`` in-process."""
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--isolated", *args], input=input, catch_exceptions=False)
    run = Run(res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in run.stdout + run.stderr, run
    return run


def write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.delenv("PT2LINT_CACHE_DIR", raising=False)
    return root


# --- one reader: regular files only, bounded, inside the tree -------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_named_or_behind_a_link_is_refused_not_read(project):
    write(project / "model.py", MODEL)
    os.symlink("/dev/zero", str(project / "zero.py"))
    run = pt2lint("check", "--isolated", "--no-cache", "/dev/zero", "zero.py", "model.py", cwd=project, timeout=30)
    assert run.code == 2, run
    assert run.errors == [
        "error: /dev/zero: not a regular file (a character device), not read",
        "error: zero.py: not a regular file (a character device), not read",
    ], run
    assert run.stdout.startswith("model.py" + FINDING), run


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@needs_fifo
def test_gitignore_that_is_dev_zero_or_a_fifo_is_skipped(project):
    write(project / "a" / "model.py", MODEL)
    write(project / "b" / "model.py", MODEL)
    os.symlink("/dev/zero", str(project / "a" / ".gitignore"))
    os.mkfifo(str(project / "b" / ".gitignore"))
    run = pt2lint("check", "--isolated", "--no-cache", ".", cwd=project, timeout=30)
    assert run.code == 1, run
    assert [line.split(":")[0] for line in run.stdout.splitlines()] == [os.path.join("a", "model.py"), os.path.join("b", "model.py")]
    # not silently: each unusable .gitignore is named, and its patterns said not to apply
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        f"warning: {os.path.join('a', '.gitignore')}: not a regular file (a character device), not read; its patterns are not applied",
        f"warning: {os.path.join('b', '.gitignore')}: not a regular file (a named pipe), not read; its patterns are not applied",
    ], run
    quiet = pt2lint("check", "--isolated", "--no-cache", "-q", ".", cwd=project, timeout=30)
    assert "warning:" not in quiet.stderr, quiet


@needs_fifo
def test_fifo_named_on_the_command_line_is_read_when_its_writer_comes_late(project):
    # the writer opens the FIFO a second after check started: a non-blocking read before that was
    # end of file at once, and the model in the pipe was reported clean (exit 0)
    os.mkfifo(str(project / "pipe.py"))
    write(project / "model.py", MODEL)

    def late_writer():
        time.sleep(1.0)
        with open(project / "pipe.py", "w", encoding="utf-8") as fh:
            fh.write(MODEL)

    writer = threading.Thread(target=late_writer, daemon=True)  # (blocks for good if nobody reads)
    writer.start()
    try:
        run = pt2lint("check", "--isolated", "--no-cache", "pipe.py", "model.py", cwd=project, timeout=30)
    finally:
        writer.join(timeout=30)
    assert run.code == 1 and run.errors == [], run
    assert sorted(line.split(":")[0] for line in run.stdout.splitlines()) == ["model.py", "pipe.py"], run


@needs_fifo
def test_fifo_nobody_writes_to_is_refused_after_the_pipe_timeout(tmp_path, monkeypatch):
    from pt2lint import reading

    os.mkfifo(str(tmp_path / "pipe.py"))
    monkeypatch.setattr(reading, "PIPE_TIMEOUT_S", 0.5)
    start = time.monotonic()
    with pytest.raises(reading.ReadRefused, match="a pipe that sent nothing"):
        reading.read_bytes(str(tmp_path / "pipe.py"), allow_pipe=True)
    assert time.monotonic() - start < 5


@needs_fifo
def test_fifo_as_a_cache_entry_does_not_block(project):
    write(project / "model.py", MODEL)
    first = pt2lint("check", "--isolated", "model.py", cwd=project)
    assert first.code == 1, first
    entries = glob.glob(str(project / ".pt2lint_cache" / "*" / "*" / "*.json"))
    assert len(entries) == 1
    os.unlink(entries[0])
    os.mkfifo(entries[0])
    run = pt2lint("check", "--isolated", "model.py", cwd=project, timeout=30)
    assert run.code == 1 and run.errors == [], run
    assert run.stdout == first.stdout


def test_file_over_the_size_limit_is_one_error_and_the_limit_is_a_setting(project):
    write(project / "big.py", "x = 1\n" * 4000)  # 24,000 bytes
    write(project / "model.py", MODEL)
    write(project / "pt2lint.toml", 'max-file-size = "16KB"\n')
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--no-cache", "."], catch_exceptions=False)
    assert res.exit_code == 2, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: big.py: file too large (23.4 KB, limit 16 KB; raise it with the max-file-size setting), not read"], errors
    assert res.stdout.startswith("model.py" + FINDING)
    write(project / "pt2lint.toml", "max-file-size = 100000\n")
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--no-cache", "."], catch_exceptions=False)
    assert res.exit_code == 1 and "error:" not in res.stderr, res.stderr
    write(project / "pt2lint.toml", 'max-file-size = "lots"\n')
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--no-cache", "."], catch_exceptions=False)
    assert res.exit_code == 2 and "'max-file-size' must be a size in bytes" in res.stderr, res.stderr


def test_reader_never_reads_past_the_limit(tmp_path):
    from pt2lint.reading import ReadRefused, read_bytes

    path = write(tmp_path / "f.py", b"a" * 1000)
    assert read_bytes(str(path), max_bytes=1000) == b"a" * 1000
    with pytest.raises(ReadRefused, match=r"file too large \(1000 bytes, limit 999 bytes"):
        read_bytes(str(path), max_bytes=999)
    with pytest.raises(IsADirectoryError):
        read_bytes(str(tmp_path))


@needs_symlink
def test_walk_skips_file_links_out_of_the_project(tmp_path, monkeypatch):
    outside = write(tmp_path / "secret" / "private.py", MODEL)
    root = tmp_path / "proj"
    write(root / "model.py", MODEL)
    os.symlink(str(outside), str(root / "innocent.py"))  # out of the tree: never followed
    os.symlink("model.py", str(root / "alias.py"))  # inside the tree: a file like any other
    monkeypatch.chdir(root)
    run = check("--show-files")
    assert run.stdout.splitlines() == ["alias.py", "model.py"], run
    run = check("--output-format", "full")
    assert "private" not in run.stdout and "innocent" not in run.stdout, run
    run = check("innocent.py")  # named explicitly: the user asked for it
    assert run.code == 1 and run.stdout.startswith("innocent.py" + FINDING), run


@needs_symlink
def test_fix_never_writes_through_a_link_out_of_the_project(tmp_path, monkeypatch):
    outside = write(tmp_path / "secret" / "private.py", PRINT_MODEL)
    root = tmp_path / "proj"
    write(root / "model.py", PRINT_MODEL)
    os.symlink(str(outside), str(root / "innocent.py"))
    monkeypatch.chdir(root)
    res = cli_runner().invoke(cli, ["fix", "--isolated", "-j", "1", "."], catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    assert outside.read_text() == PRINT_MODEL
    assert "is_compiling" in (root / "model.py").read_text()
    res = cli_runner().invoke(cli, ["fix", "--isolated", "-j", "1", "innocent.py"], catch_exceptions=False)
    assert res.exit_code == 2, res.stderr
    assert "error: innocent.py: a symbolic link to a file outside the project, not fixed" in res.stderr
    assert outside.read_text() == PRINT_MODEL
    assert os.path.islink(str(root / "innocent.py"))


# --- the cache ---------------------------------------------------------------------------------------


def test_a_file_edited_while_it_is_checked_does_not_poison_the_cache(project, monkeypatch):
    """The parent looks the file up by the bytes it read; the worker lints what it reads.
    The entry must be keyed by the worker's bytes, else the old content maps to the new result."""
    import pt2lint.engine as engine

    model = write(project / "model.py", MODEL)
    real = engine.lint_path

    def edited_meanwhile(path, *args, **kwargs):
        model.write_text(CLEAN)  # the user saves a fixed version after the parent read the file
        return real(path, *args, **kwargs)

    monkeypatch.setattr(engine, "lint_path", edited_meanwhile)
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--isolated", "model.py"], catch_exceptions=False)
    assert res.exit_code == 0, res.stdout  # it linted the clean version
    monkeypatch.setattr(engine, "lint_path", real)
    model.write_text(MODEL)  # back to the version with .item()
    run = check("model.py")
    assert run.code == 1 and run.stdout.startswith("model.py" + FINDING), run


FORGERIES = {
    "wrong shape": {"diagnostics": [["PTC101", 6, 24]], "dependencies": [], "has_regions": True, "submodules": []},
    "not an object": [1, 2, 3],
    "diagnostics only": {"diagnostics": []},
    "negative line": "line",
    "unknown code": "code",
    "terminal escape": "escape",
    "bad dependency": "dep",
    "not json": b"\x00\xff{",
}


@pytest.mark.parametrize("case", sorted(FORGERIES))
def test_a_forged_or_malformed_cache_entry_is_a_miss(project, case):
    write(project / "model.py", MODEL)
    first = check("model.py")
    assert first.code == 1
    (entry,) = glob.glob(str(project / ".pt2lint_cache" / "*" / "*" / "*.json"))
    with open(entry, encoding="utf-8") as fh:
        good = json.load(fh)
    forged = FORGERIES[case]
    if forged == "line":
        good["diagnostics"][0]["start"] = [-5, 1]
    elif forged == "code":
        good["diagnostics"][0]["code"] = "PTC999"
    elif forged == "escape":
        good["diagnostics"][0]["message"] = "\x1b[2J\x1b[31mall clear"
    elif forged == "dep":
        good["dependencies"] = [[str(project / "model.py"), 5]]
    if isinstance(forged, str):
        forged = good
    with open(entry, "wb") as fh:
        fh.write(forged if isinstance(forged, bytes) else json.dumps(forged).encode())
    run = check("model.py")
    assert run.code == 1 and run.errors == [], run
    assert run.stdout == first.stdout
    assert "\x1b" not in run.stdout


def test_dependency_limit_matches_the_analysis():
    from pt2lint.analysis.project import MAX_MODULE_BYTES
    from pt2lint.cache import DEPENDENCY_MAX_BYTES

    assert DEPENDENCY_MAX_BYTES == MAX_MODULE_BYTES  # else a big dependency would never be a cache hit


def test_every_entry_the_cache_writes_is_valid(project):
    from pt2lint.cache import valid_entry

    write(project / "model.py", MODEL)
    write(project / "fixable.py", PRINT_MODEL)
    write(project / "clean.py", CLEAN)
    assert check(".").code == 1
    entries = glob.glob(str(project / ".pt2lint_cache" / "*" / "*" / "*.json"))
    assert len(entries) == 3
    for entry in entries:
        with open(entry, encoding="utf-8") as fh:
            assert valid_entry(json.load(fh)), entry


@needs_symlink
def test_a_cache_directory_that_is_a_link_is_never_written_into(tmp_path, monkeypatch):
    target = tmp_path / "elsewhere"
    target.mkdir()
    root = tmp_path / "proj"
    write(root / "model.py", MODEL)
    os.symlink(str(target), str(root / ".pt2lint_cache"))  # committed to the repository
    monkeypatch.chdir(root)
    monkeypatch.delenv("PT2LINT_CACHE_DIR", raising=False)
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--isolated", "."], catch_exceptions=False)
    assert res.exit_code == 1
    assert os.listdir(str(target)) == []
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: .pt2lint_cache: is a symbolic link; not used; running without the cache"], res.stderr
    assert res.stdout.startswith("model.py" + FINDING)


def test_a_foreign_non_empty_cache_directory_is_not_used(project):
    write(project / "model.py", MODEL)
    notes = write(project / "notes" / "keep.txt", "mine\n")
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--isolated", "--cache-dir", "notes", "."], catch_exceptions=False)
    assert res.exit_code == 1
    assert "warning: notes: is not a pt2lint cache (no CACHEDIR.TAG); not used" in res.stderr
    assert sorted(os.listdir(str(project / "notes"))) == ["keep.txt"] and notes.read_text() == "mine\n"


# --- pools -------------------------------------------------------------------------------------------

_DIE_IN_FIX = textwrap.dedent(
    """\
    import os, signal, sys
    import pt2lint.commands.fix as fix
    real = fix.fix_one
    def fix_one(path, *args, **kwargs):
        if os.path.basename(path) == "m3.py":
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, *args, **kwargs)
    fix.fix_one = fix_one
    from pt2lint.cli import main
    sys.argv[0] = "pt2lint"
    main()
    """
)


@needs_fork
def test_fix_survives_a_worker_that_dies(project):
    for i in range(8):
        write(project / f"m{i}.py", PRINT_MODEL)
    run = pt2lint("fix", "--isolated", "-j", "2", ".", cwd=project, argv0=_DIE_IN_FIX, timeout=90)
    assert "Traceback" not in run.stderr, run
    assert run.code == 2, run
    assert run.errors == ["error: m3.py: internal error: the process fixing this file died (a crash in native code, or out of memory); not fixed"], run
    for i in range(8):
        text = (project / f"m{i}.py").read_text()
        assert ("is_compiling" in text) == (i != 3), (i, text)


_SLOW_CHECK = textwrap.dedent(
    """\
    import signal, sys, time
    # A background job of a non-interactive shell (how CI runners and `cmd &` in scripts start
    # processes) inherits SIGINT ignored, and Python keeps it so: give this process the
    # terminal's default, which is what the test is about.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import pt2lint.engine as engine
    real = engine.lint_path
    def lint_path(*args, **kwargs):
        open("started", "a").close()  # the pool is up and checking files
        time.sleep(0.3)
        return real(*args, **kwargs)
    engine.lint_path = lint_path
    from pt2lint.cli import main
    sys.argv[0] = "pt2lint"
    main()
    """
)


@needs_fork
def test_ctrl_c_on_a_parallel_check_stops_promptly(project):
    for i in range(260):  # 0.3 s a file, 8 files a task: the queued tasks alone take over 7 s
        write(project / f"m{i:03d}.py", MODEL)
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_CHECK, "check", "--isolated", "--no-cache", "-j", "2", "."],
        cwd=str(project), env=env_with_repo(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (project / "started").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert (project / "started").exists(), "the check never started"
        time.sleep(0.5)
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)  # to pt2lint only (`kill -INT`, an IDE's stop button): the workers must be stopped by it
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, err)
    assert took < 5.0, took
    assert "Traceback" not in err, err


def test_a_parallel_run_leaves_no_pool_thread_behind(project):
    """An executor thread still running at interpreter exit printed ``OSError: Bad file descriptor``."""
    from pt2lint.engine import lint_paths
    from pt2lint.settings import LintSettings

    paths = []
    for i in range(6):
        paths.append(str(write(project / f"m{i}.py", MODEL)))
    before = {t.ident for t in threading.enumerate()}
    results = list(lint_paths(paths, LintSettings(), jobs=2))
    assert all(r.diagnostics for r in results)
    left = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    for t in left:  # a manager thread that is already ending may take a moment on a loaded machine
        t.join(timeout=10)
    left = [t for t in left if t.is_alive()]
    assert left == [], left


# --- the tree boundary -------------------------------------------------------------------------------


def test_python_m_does_not_import_the_projects_own_modules(project):
    write(project / "click.py", 'raise SystemExit("the project\'s click.py was imported")\n')
    write(project / "libcst.py", 'raise SystemExit("the project\'s libcst.py was imported")\n')
    write(project / "model.py", MODEL)
    run = pt2lint("check", "--isolated", "--no-cache", ".", cwd=project)
    assert "was imported" not in run.stderr + run.stdout, run
    assert run.code == 1 and run.stdout.startswith("model.py" + FINDING), run


@pytest.mark.skipif(not IS_ROOT, reason="only root can give a file to another user")
def test_fix_as_root_keeps_owner_group_and_mode(project):
    path = write(project / "model.py", PRINT_MODEL)
    os.chown(str(path), 65534, 65534)
    os.chmod(str(path), 0o640)
    res = cli_runner().invoke(cli, ["fix", "--isolated", "-j", "1", "model.py"], catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    st = os.stat(str(path))
    assert "is_compiling" in path.read_text()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (65534, 65534, 0o640)


# --- smaller ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("to_file", [False, True])
def test_json_with_a_non_utf8_file_name_is_valid_utf8(project, to_file):
    try:
        with open(os.path.join(os.fsencode(str(project)), b"\xff\xfebad.py"), "wb") as fh:
            fh.write(MODEL.encode())
    except OSError:
        pytest.skip("the file system wants UTF-8 names")
    args = ["check", "--isolated", "--no-cache", "--output-format", "json", "."] + (["-o", "out.json"] if to_file else [])
    env = env_with_repo(PYTHONIOENCODING="utf-8:surrogateescape")  # a stream that would pass the raw bytes on
    run = pt2lint(*args, cwd=project, text=False, env=env)
    assert run.code == 1, run
    data = (project / "out.json").read_bytes() if to_file else run.stdout
    findings = json.loads(data.decode("utf-8"))  # strict: raises on an undecodable byte
    assert findings[0]["filename"] == os.path.join(str(project), "\ufffd\ufffdbad.py")


CONFIG_CASES = {
    "per-file-ignores": ('[tool.pt2lint.per-file-ignores]\n"**/[z-a]" = ["PTC101"]\n', "'per-file-ignores': invalid glob '**/[z-a]'"),
    "extend-exclude": ('[tool.pt2lint]\nextend-exclude = ["\\\\"]\n', "'extend-exclude': invalid pattern '\\\\'"),
    "deep array": ("[tool.pt2lint]\nexclude = " + "[" * 5000 + "]" * 5000 + "\n", "the value of 'exclude' (line 2) nests arrays or tables too deeply"),
    # patterns that match no path by construction (pathspec compiles them; git's wildmatch aborts)
    "empty glob": ('[tool.pt2lint.per-file-ignores]\n"" = ["PTC101"]\n', "'per-file-ignores': invalid glob '': an empty pattern matches no path"),
    "unclosed bracket": ('[tool.pt2lint.per-file-ignores]\n"[" = ["PTC101"]\n', "'per-file-ignores': invalid glob '[': a '[' with no closing ']'"),
    "bracket of a bracket": ('[tool.pt2lint]\nexclude = ["[!]"]\n', "'exclude': invalid pattern '[!]': a '[' with no closing ']'"),
    "NUL": ('[tool.pt2lint]\nextend-exclude = ["a\\u0000b"]\n', "'extend-exclude': invalid pattern 'a\\x00b': a NUL character"),
}

#: near misses: a literal bracket, an escaped one, a ``]`` as the first member
GOOD_BRACKETS = ["[[]x", "a\\[", "[]]", "[!]]x", "[ab]*.py"]


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_bad_config_patterns_name_the_key(project, case):
    config, expected = CONFIG_CASES[case]
    write(project / "pyproject.toml", config)
    write(project / "model.py", MODEL)
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--no-cache", "."], catch_exceptions=False)
    assert res.exit_code == 2, res.stderr
    (line,) = res.stderr.splitlines()
    assert line.startswith("error: pyproject.toml: ") and expected in line, line
    assert "internal error" not in line


@pytest.mark.parametrize("pattern", GOOD_BRACKETS)
def test_closed_brackets_are_accepted(project, pattern):
    write(project / "pyproject.toml", f"[tool.pt2lint]\nexclude = [{pattern!r}]\n".replace("'", '"'))
    write(project / "model.py", MODEL)
    res = cli_runner().invoke(cli, ["check", "-j", "1", "--no-cache", "."], catch_exceptions=False)
    assert res.exit_code == 1, res.stderr


def test_bad_exclude_option_names_the_option(project):
    write(project / "model.py", MODEL)
    run = check("--extend-exclude", "\\", ".")
    assert run.code == 2 and run.errors == ["error: --extend-exclude: invalid pattern '\\\\': Invalid git pattern: '\\\\'"], run


def test_many_per_file_ignores_are_compiled_once(monkeypatch):
    import pathspec

    from pt2lint.settings import LintSettings

    table = tuple((f"dir{i}/**", frozenset({"PTC101"})) for i in range(300))
    settings = LintSettings(per_file_ignores=table)
    calls = []
    real = pathspec.GitIgnoreSpec.from_lines.__func__

    def counting(cls, lines, *args, **kwargs):
        calls.append(1)
        return real(cls, lines, *args, **kwargs)

    monkeypatch.setattr(pathspec.GitIgnoreSpec, "from_lines", classmethod(counting))
    for i in range(5):
        settings.enabled_for(f"dir{i}/model.py")
    assert "PTC101" not in settings.enabled_for("dir299/x.py")
    assert len(calls) <= 300, len(calls)


def test_stdin_over_the_size_limit_is_refused(monkeypatch):
    import io

    from pt2lint.cli import CliError, read_stdin

    class Stdin:
        buffer = io.BytesIO(b"x = 1\n" * 100)
        closed = False

    monkeypatch.setattr(sys, "stdin", Stdin())
    with pytest.raises(CliError, match=r"stdin holds more than 500 bytes \(the max-file-size limit\)"):
        read_stdin(500)
    Stdin.buffer = io.BytesIO(b"x = 1\n")
    assert read_stdin(500) == b"x = 1\n"


def test_closed_stdin_is_a_clear_error(project):
    run = pt2lint("check", "--isolated", "-", cwd=project, preexec=lambda: os.close(0))
    assert run.code == 2, run
    assert run.errors == ["error: stdin is closed: nothing to read for '-' (pipe a file in, or give paths)"], run
    assert "Traceback" not in run.stderr


def _without_file_permissions():
    """As root, drop the capabilities that let root ignore file permissions (else nothing to drop)."""
    if IS_ROOT:
        return ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
    return []


def _have_setpriv():
    if not IS_ROOT:
        return True
    try:
        subprocess.run(_without_file_permissions() + ["true"], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


@pytest.mark.skipif(not _have_setpriv(), reason="root without setpriv ignores permissions")
def test_unsearchable_directory_and_unreadable_named_file_are_reported(project):
    write(project / "ok.py", MODEL)
    write(project / "locked.py", MODEL).chmod(0)
    write(project / "listed" / "hidden.py", MODEL)
    (project / "listed").chmod(0o444)  # names can be listed, files cannot be opened
    try:
        cmd = _without_file_permissions() + [sys.executable, "-m", "pt2lint", "check", "--isolated", "--no-cache"]
        walked = subprocess.run(cmd + ["."], cwd=str(project), env=env_with_repo(), capture_output=True, text=True, timeout=60)
        named = subprocess.run(cmd + ["locked.py", "ok.py"], cwd=str(project), env=env_with_repo(), capture_output=True, text=True, timeout=60)
    finally:
        (project / "listed").chmod(0o755)
        (project / "locked.py").chmod(0o644)
    errors = [line for line in walked.stderr.splitlines() if line.startswith("error:")]
    assert walked.returncode == 2, walked.stderr
    assert errors == ["error: listed: permission denied", "error: locked.py: permission denied"], walked.stderr
    assert walked.stdout.startswith("ok.py" + FINDING)
    assert named.returncode == 2, named.stderr
    assert [line for line in named.stderr.splitlines() if line.startswith("error:")] == ["error: locked.py: permission denied"]
    assert named.stdout.startswith("ok.py" + FINDING), named.stderr


def test_fix_in_a_mostly_lf_file_with_a_crlf_first_line_inserts_lf(project):
    path = write(project / "model.py", PRINT_MODEL.replace("import torch\n", "import torch\r\n", 1))
    res = cli_runner().invoke(cli, ["fix", "--isolated", "-j", "1", "model.py"], catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    data = path.read_bytes()
    assert b"is_compiling" in data
    assert data.count(b"\r\n") == 1 and data.startswith(b"import torch\r\n"), data


def test_control_characters_in_file_names_are_escaped(project):
    write(project / "evil\x1b[2J.py", "def f(:\n")
    write(project / "new\nline.py", b"x = '\xff'\n")
    run = check(".")
    assert run.code == 2, run
    assert run.stdout == "evil\\x1b[2J.py:1:7: PTC001 SyntaxError: invalid syntax\n", run
    assert run.errors[0].startswith("error: new\\nline.py: not valid UTF-8"), run
    assert "\x1b" not in run.stdout + run.stderr
    run = check("--show-files", ".")
    assert run.stdout == "evil\\x1b[2J.py\nnew\\nline.py\n", run


def test_printable_escapes_only_what_a_terminal_would_act_on():
    from pt2lint.reading import printable

    assert printable("models/café net.py") == "models/café net.py"
    assert printable("a\\b.py") == "a\\b.py"
    assert printable("a\x1b[31m\n\t\x7f\x85.py") == "a\\x1b[31m\\n\\t\\x7f\\x85.py"
    assert printable(os.fsdecode(b"\xff.py")) == "\\xff.py"


def _load_fuzz_io():
    import importlib.util

    spec = importlib.util.spec_from_file_location("pt2lint_fuzz_io", os.path.join(REPO, "tools", "fuzz_io.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", ["2:6", "2:7"])  # trees that hung, wrote outside or crashed before
def test_random_hostile_trees(tmp_path, seed):
    """Two cases of ``tools/fuzz_io.py`` (run it for minutes by hand)."""
    import random

    fuzz_io = _load_fuzz_io()
    failure = fuzz_io.run_case(random.Random(seed), str(tmp_path), timeout=60)
    assert failure is None, failure


def test_a_cond_fix_in_a_file_of_mixed_line_endings_keeps_the_lines_it_does_not_change(project):
    # the rewrite is diffed against LibCST's rendering of the module, which has one newline: the
    # lines it does not change keep their own \r\n, \r and \n
    lines = ["import torch", "from torch import nn", "class Net(nn.Module):", "    def forward(self, x):", "        h = x * 2",
             "        if h.sum() > 0:", "            h = h * 2", "        else:", "            h = h * 3", '        print("x")',
             "        return h", "torch.compile(Net())"]
    eols = ["\r\n", "\n", "\r\n", "\r", "\n", "\r\n", "\n", "\r\n", "\r\n", "\n", "\r", "\n"]
    text = "".join(line + eol for line, eol in zip(lines, eols))
    path = project / "model.py"
    path.write_bytes(text.encode())
    res = cli_runner().invoke(cli, ["fix", "--isolated", "--unsafe-fixes", "--rule", "cond", "-j", "1", "model.py"], catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    data = path.read_bytes()
    assert b"torch.cond(" in data
    kept = data.split(b"        def _true_fn")[0]
    assert kept == text.split("        if h.sum()")[0].encode(), kept
    assert data.endswith(b"        return h\rtorch.compile(Net())\n"), data[-60:]
