"""Every file pt2lint writes, and its standard output, when the target is not a plain file.

A report or a baseline named on the command line may be a device (``-o /dev/null``), a
pipe (a FIFO, ``-o >(cat)``) or a symbolic link: it is written through or via the
link, never replaced by a regular file, and a failed write (a full device) is an
error, never "wrote 1 finding".  Sources edited by ``--add-noqa`` go through the same
boundary as ``fix``; config files are read like every other file; a report that cannot
reach stdout is an error.

Device nodes are made here (``mknod``, needs root or CAP_MKNOD; skipped otherwise), never
the system's own ``/dev/null`` or ``/dev/full``.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
import textwrap
import threading

import pytest

from clitools import Run, cli_runner, repo_pythonpath
from pt2lint.atomic import WriteRefused, atomic_write, write_output
from pt2lint.cli import cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = textwrap.dedent(
    """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x):
            return x.sum().item()
    """
)
FINDING = ":6:24: PTC101 "

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
needs_symlink = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")


def device(path, minor):
    """A character device node ``1:minor`` at ``path`` (3: null, 5: zero, 7: full), or skip the test."""
    try:
        os.mknod(str(path), 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except (OSError, AttributeError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return path


def is_char_device(path):
    return stat.S_ISCHR(os.lstat(str(path)).st_mode)


def run(*args):
    res = cli_runner().invoke(cli, list(args), catch_exceptions=False)
    out = Run(res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in out.stdout + out.stderr, out
    return out


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "m.py").write_text(MODEL)
    monkeypatch.chdir(root)
    monkeypatch.delenv("PT2LINT_CACHE_DIR", raising=False)
    return root


# --- reports and baselines named on the command line ------------------------------------------


def test_output_to_a_null_device_writes_through_and_keeps_the_device(project):
    device(project / "mynull", 3)
    out = run("check", "--isolated", "--no-cache", "-q", "-o", "mynull", "m.py")
    assert out.code == 1 and out.errors == [], out
    assert is_char_device(project / "mynull")
    out = run("check", "--isolated", "--no-cache", "-q", "--write-baseline", "mynull", "m.py")
    assert out.code == 0 and out.errors == [], out
    assert is_char_device(project / "mynull")


def test_a_full_device_is_an_error_not_success(project):
    device(project / "myfull", 7)
    out = run("check", "--isolated", "--no-cache", "-o", "myfull", "m.py")
    assert out.code == 2, out
    assert out.errors == ["error: --output-file: myfull: no space left on device"], out
    assert "wrote" not in out.stderr
    out = run("check", "--isolated", "--no-cache", "--write-baseline", "myfull", "m.py")
    assert out.code == 2, out
    assert out.errors == ["error: myfull: cannot write baseline: no space left on device"], out
    assert "Wrote" not in out.stderr
    assert is_char_device(project / "myfull")
    with pytest.raises(OSError) as info:
        write_output(str(project / "myfull"), b"x")
    assert info.value.errno == errno.ENOSPC


def _read_fifo(path, into):
    with open(path, "rb") as fh:
        into.append(fh.read())


@needs_fifo
def test_output_to_a_fifo_is_written_through(project):
    os.mkfifo(str(project / "myfifo"))
    got = []
    reader = threading.Thread(target=_read_fifo, args=(str(project / "myfifo"), got), daemon=True)
    reader.start()
    out = run("check", "--isolated", "--no-cache", "-q", "-o", "myfifo", "m.py")
    reader.join(10)
    assert out.code == 1 and out.errors == [], out
    assert got and got[0].decode().startswith("m.py" + FINDING), got
    assert stat.S_ISFIFO(os.lstat(str(project / "myfifo")).st_mode)


@needs_fifo
def test_a_fifo_nobody_reads_is_an_error_after_the_timeout(tmp_path):
    os.mkfifo(str(tmp_path / "f"))
    with pytest.raises(OSError) as info:
        write_output(str(tmp_path / "f"), b"x", pipe_timeout=0.2)
    assert info.value.errno == errno.ENXIO and "nobody opened the named pipe" in info.value.strerror
    assert stat.S_ISFIFO(os.lstat(str(tmp_path / "f")).st_mode)


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
def test_a_pipe_named_as_dev_fd_is_written_through():
    """``-o >(cat)`` names ``/dev/fd/N``: there is no directory to put a temporary file in."""
    r, w = os.pipe()
    try:
        write_output(f"/dev/fd/{w}", b"report\n")
        os.close(w)
        w = -1
        assert os.read(r, 100) == b"report\n"
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


@needs_symlink
def test_a_link_is_kept_and_its_target_written(project, tmp_path):
    target = tmp_path / "elsewhere" / "report.txt"
    target.parent.mkdir()
    os.symlink(str(target), str(project / "dangling"))  # the target does not exist yet
    out = run("check", "--isolated", "--no-cache", "-q", "-o", "dangling", "m.py")
    assert out.code == 1 and out.errors == [], out
    assert os.path.islink(str(project / "dangling"))
    assert target.read_text().startswith("m.py" + FINDING)
    target.write_text("old\n")
    mode = stat.S_IMODE(os.stat(str(target)).st_mode)
    inode = os.stat(str(target)).st_ino
    out = run("check", "--isolated", "--no-cache", "-q", "--write-baseline", "dangling", "m.py")
    assert out.code == 0, out
    assert os.path.islink(str(project / "dangling"))
    assert '"code": "PTC101"' in target.read_text()
    assert os.stat(str(target)).st_ino != inode, "a regular target is replaced atomically, not rewritten in place"
    assert stat.S_IMODE(os.stat(str(target)).st_mode) == mode


@needs_symlink
def test_a_link_to_a_device_writes_through_to_the_device(project):
    device(project / "myfull", 7)
    os.symlink("myfull", str(project / "lnk"))
    out = run("check", "--isolated", "--no-cache", "-q", "-o", "lnk", "m.py")
    assert out.code == 2 and out.errors == ["error: --output-file: lnk: no space left on device"], out
    assert os.path.islink(str(project / "lnk")) and is_char_device(project / "myfull")


def test_a_regular_file_is_still_replaced_atomically(project):
    (project / "r.txt").write_text("old\n")
    os.link(str(project / "r.txt"), str(project / "hard.txt"))
    out = run("check", "--isolated", "--no-cache", "-q", "-o", "r.txt", "m.py")
    assert out.code == 1, out
    assert (project / "r.txt").read_text().startswith("m.py" + FINDING)
    assert (project / "hard.txt").read_text() == "old\n", "renamed over, not written into"


def test_compare_and_merge_outputs_write_through_devices(project):
    device(project / "myfull", 7)
    device(project / "mynull", 3)
    assert run("check", "--isolated", "--no-cache", "-q", "--output-format", "json", "-o", "r.json", "m.py").code == 1
    out = run("merge", "r.json", "-o", "myfull")
    assert out.code == 2 and out.errors == ["error: --output-file: myfull: no space left on device"], out
    out = run("compare", "r.json", "r.json", "-o", "mynull")
    assert out.code == 0 and out.errors == [], out
    assert is_char_device(project / "myfull") and is_char_device(project / "mynull")


def test_a_socket_or_directory_is_refused(tmp_path):
    sock = socket.socket(socket.AF_UNIX)
    path = str(tmp_path / "s")
    try:
        sock.bind(path)
    except OSError as exc:
        pytest.skip(f"cannot bind a unix socket: {exc}")
    try:
        with pytest.raises(WriteRefused, match=r"not a regular file \(a socket\), not written"):
            write_output(path, b"x")
    finally:
        sock.close()
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    with pytest.raises(IsADirectoryError):
        write_output(str(tmp_path), b"x")


@needs_fifo
def test_atomic_write_never_renames_over_a_device_or_fifo(tmp_path):
    os.mkfifo(str(tmp_path / "f"))
    with pytest.raises(WriteRefused, match=r"a named pipe"):
        atomic_write(str(tmp_path / "f"), b"x")
    assert stat.S_ISFIFO(os.lstat(str(tmp_path / "f")).st_mode)
    assert os.listdir(str(tmp_path)) == ["f"]


# --- --add-noqa goes through fix's boundary -----------------------------------------------------


@needs_symlink
def test_add_noqa_refuses_a_link_out_of_the_project_and_follows_one_inside(project, tmp_path):
    outside = tmp_path / "outside" / "secret.py"
    outside.parent.mkdir()
    outside.write_text(MODEL)
    os.symlink(str(outside), str(project / "innocent.py"))
    out = run("check", "--isolated", "--no-cache", "--add-noqa", "innocent.py")
    assert out.code == 2, out
    assert out.errors == ["error: innocent.py: a symbolic link to a file outside the project, not edited"], out
    assert os.path.islink(str(project / "innocent.py"))
    assert outside.read_text() == MODEL
    os.symlink("m.py", str(project / "alias.py"))  # a link inside the project: its target is edited
    out = run("check", "--isolated", "--no-cache", "--add-noqa", "alias.py")
    assert out.code == 0, out
    assert os.path.islink(str(project / "alias.py"))
    assert "# noqa: PTC101" in (project / "m.py").read_text()


def test_add_noqa_refuses_a_read_only_file_like_fix(project):
    os.chmod(str(project / "m.py"), 0o444)
    out = run("check", "--isolated", "--no-cache", "--add-noqa", "m.py")
    assert out.code == 2 and out.errors == ["error: m.py: read-only file, not edited"], out
    assert (project / "m.py").read_text() == MODEL


HELPER = "def scale(x):\n    return x * x.sum().item()\n"
CALLER = textwrap.dedent(
    """\
    import torch
    from torch import nn

    from {module} import scale


    class Net(nn.Module):
        def forward(self, x):
            return scale(x)


    m = torch.compile(Net())
    """
)


def test_add_noqa_edits_only_the_files_it_was_given(tmp_path, monkeypatch):
    """A finding in a file the command was not given, reached from a given one, is suppressed at
    the call in the given file that leads to it; the other file (here: a package file not named,
    and a file outside the project that the config's `src` points to) is never written."""
    root = tmp_path / "p1"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text(HELPER)
    (root / "pkg" / "model.py").write_text(CALLER.format(module=".helpers"))
    monkeypatch.chdir(root)
    before = run("check", "--no-cache", "-q", "pkg/model.py")
    assert before.code == 1 and before.stdout.startswith("pkg/helpers.py:2:"), before
    out = run("check", "--no-cache", "--add-noqa", "pkg/model.py")
    assert out.code == 0, out
    assert (root / "pkg" / "helpers.py").read_text() == HELPER
    assert "        return scale(x)  # noqa: PTC101\n" in (root / "pkg" / "model.py").read_text()
    assert run("check", "--no-cache", "pkg/model.py").code == 0
    assert run("check", "--no-cache", ".").code == 0

    shared = tmp_path / "p2" / "shared"
    shared.mkdir(parents=True)
    (shared / "sharedhelpers.py").write_text(HELPER)
    proj = tmp_path / "p2" / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[tool.pt2lint]\nsrc = ["../shared"]\n')
    (proj / "model.py").write_text(CALLER.format(module="sharedhelpers"))
    monkeypatch.chdir(proj)
    before = run("check", "--no-cache", "-q", ".")
    assert before.code == 1 and f"{shared / 'sharedhelpers.py'}:2:" in before.stdout, before
    out = run("check", "--no-cache", "--add-noqa", ".")
    assert out.code == 0, out
    assert (shared / "sharedhelpers.py").read_text() == HELPER
    assert "        return scale(x)  # noqa: PTC101\n" in (proj / "model.py").read_text()
    assert run("check", "--no-cache", ".").code == 0


# --- config files are read like every other file ------------------------------------------------


@needs_fifo
@pytest.mark.parametrize("name", ["pyproject.toml", "pt2lint.toml"])
def test_a_config_file_that_is_a_fifo_is_an_error(project, name):
    os.mkfifo(str(project / name))
    out = run("check", "--no-cache", "m.py")
    assert out.code == 2, out
    assert out.errors == [f"error: {name}: cannot read config file: not a regular file (a named pipe), not read"], out


@needs_symlink
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_config_link_to_dev_zero_is_an_error(project):
    os.symlink("/dev/zero", str(project / "pt2lint.toml"))  # only opened for reading, and refused
    out = run("check", "--no-cache", "m.py")
    assert out.code == 2, out
    assert out.errors == ["error: pt2lint.toml: cannot read config file: not a regular file (a character device), not read"], out
    out = run("check", "--no-cache", "--config", "/dev/zero", "m.py")
    assert out.code == 2, out
    assert out.errors == ["error: /dev/zero: cannot read config file: not a regular file (a character device), not read"], out


@needs_fifo
def test_config_option_naming_a_fifo_gives_the_reason(project):
    os.mkfifo(str(project / "cfg.toml"))
    out = run("check", "--no-cache", "--config", "cfg.toml", "m.py")
    assert out.errors == ["error: cfg.toml: cannot read config file: not a regular file (a named pipe), not read"], out
    assert out.code == 2
    out = run("check", "--no-cache", "--config", "missing.toml", "m.py")
    assert out.code == 2 and out.errors == ["error: --config: missing.toml: no such file"], out


def test_a_directory_named_like_a_config_file_is_passed_over(project):
    (project / "pt2lint.toml").mkdir()
    out = run("check", "--no-cache", "m.py")
    assert out.code == 1 and out.errors == [], out


# --- the report on standard output ---------------------------------------------------------------


def test_a_report_that_cannot_reach_stdout_is_a_clear_error(project):
    """Closed stdout (``>&-``) and a full device as stdout: exit 2 and one line, never exit 1 or "internal error"."""
    device(project / "myfull", 7)
    env = dict(os.environ, PYTHONPATH=repo_pythonpath(REPO))
    env.pop("PT2LINT_CACHE_DIR", None)
    env.pop("PYTHONUNBUFFERED", None)  # a buffered stdout, as in a user's shell: the exit flush must stay quiet
    cmd = [sys.executable, "-m", "pt2lint", "check", "--isolated", "--no-cache", "m.py"]
    with open(str(project / "myfull"), "wb") as full:
        res = subprocess.run(cmd, cwd=str(project), env=env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines() == ["error: cannot write the report to standard output: no space left on device"]
    res = subprocess.run(
        cmd, cwd=str(project), env=env, stderr=subprocess.PIPE, text=True, timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines() == ["error: cannot write the report to standard output: standard output is closed"]
    res = subprocess.run(
        [sys.executable, "-m", "pt2lint", "fix", "--isolated", "-"], cwd=str(project), env=env, input=MODEL,
        stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=lambda: os.close(1),
    )
    assert res.returncode == 2, res.stderr
    assert "error: cannot write the fixed code to standard output: standard output is closed" in res.stderr.splitlines()


class _FailingStream:
    encoding = "utf-8"
    closed = False

    def __init__(self, err):
        self.err = err

    def write(self, text):
        raise OSError(self.err, os.strerror(self.err))

    def flush(self):
        pass


@pytest.mark.parametrize("err", [errno.EIO, errno.ENOSPC])
def test_echo_report_turns_a_failed_stdout_write_into_one_error(monkeypatch, err):
    from pt2lint.cli import CliError, echo_report

    monkeypatch.setattr(sys, "stdout", _FailingStream(err))
    with pytest.raises(CliError) as info:
        echo_report("m.py:1:1: PTC101 x\n")
    assert str(info.value) == f"cannot write the report to standard output: {os.strerror(err).lower()}"
    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(CliError, match="^cannot write the diff to standard output: standard output is closed$"):
        echo_report("x", what="the diff")
