"""Confirm mode end to end on torch (CPU): a folder of model files that define
``make_model``/``example_inputs`` needs no flags; ``--fail-on confirmed``; ``--shard K/N``;
``path::Class``; submodule classes and classes that need arguments; a 10 MB exception
message; and nothing a module starts outlives the run, SIGTERM included.

Runs go through the CLI in this process (sharing one fork server) except the SIGTERM
test, which needs a process of its own to signal. Budget: about a minute on 2 cores.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pt2lint.cli import cli  # noqa: E402
from pt2lint.commands.confirm import WARNING  # noqa: E402
from pt2lint.confirm.plan import plan_jobs, shard_of  # noqa: E402
from pt2lint.confirm.runner import process_table  # noqa: E402
from pt2lint.confirm.settings import build_settings  # noqa: E402
from clitools import cli_runner  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

ITEM = """\
import torch
from torch import nn


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        return h / h.abs().max().item()


def make_model():
    return Scale()


def example_inputs():
    return (torch.randn(4, 8),)
"""

PRINT = """\
import torch
from torch import nn


class Talk(nn.Module):
    def forward(self, x):
        y = x * 2
        print("shape", y.shape)
        return y + 1


def make_model():
    return Talk()


def example_inputs():
    return torch.randn(3, 5)
"""

MASKED = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x)


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(8)

    def forward(self, x, mask=None):
        if mask is not None and mask.any():
            x = x * mask
        return self.block(x)


def make_model():
    return Masked()


def example_inputs():
    return (torch.randn(4, 8),)
"""

CLEAN = """\
import torch
from torch import nn


class Clean(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


def make_model():
    return Clean()


def example_inputs():
    return (torch.randn(2, 3),)
"""


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zoo")
    for name, text in (("item_net.py", ITEM), ("talk.py", PRINT), ("masked.py", MASKED), ("clean.py", CLEAN)):
        (folder / name).write_text(text)
    return folder


def confirm(*args: str):
    return cli_runner().invoke(cli, ["confirm", "--isolated", "--no-cache", "--jobs", "2", *args], catch_exceptions=False)


def confirm_json(*args: str):
    result = confirm("--output-format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout), result


def _by_file(findings):
    out = {}
    for f in findings:
        out.setdefault(Path(f["filename"]).name, []).append((f["code"], f["location"]["row"], f["confirm"]["status"]))
    return out


EXPECTED = {
    "item_net.py": [("PTC101", 12, "confirmed")],
    "talk.py": [("PTC301", 8, "confirmed")],
    # the line runs (mask is None), the expression does not
    "masked.py": [("PTC104", 20, "not-executed")],
}


def test_a_folder_of_model_files_needs_no_flags_and_fails_on_confirmed_findings(zoo):
    findings, result = confirm_json("--fail-on", "confirmed", str(zoo))
    assert _by_file(findings) == EXPECTED
    assert result.exit_code == 1  # two findings are confirmed
    modules = {f["confirm"]["module"] for f in findings if f["confirm"]["status"] == "confirmed"}
    assert modules == {f"{zoo / 'item_net.py'}::make_model() -> Scale", f"{zoo / 'talk.py'}::make_model() -> Talk"}
    assert result.stderr == WARNING + "\n"  # once, and nothing else with json output

    findings, result = confirm_json("--fail-on", "confirmed", str(zoo / "masked.py"), str(zoo / "clean.py"))
    assert _by_file(findings) == {"masked.py": EXPECTED["masked.py"]}
    assert result.exit_code == 0  # a finding, none of it confirmed
    result = confirm("--fail-on", "any", str(zoo / "masked.py"))
    assert result.exit_code == 1
    assert "masked.py:20:38: PTC104" in result.stdout and result.stdout.rstrip().endswith("[not-executed]")


def test_two_shards_confirm_every_module_exactly_once(zoo):
    files = sorted(str(p) for p in zoo.glob("*.py"))
    settings = build_settings({}, config_path=None, root=str(zoo), jobs=1)
    planned, _ = plan_jobs([(p, p, os.path.relpath(p, zoo)) for p in files], settings)
    assert len(planned) == 4
    shard_files = {k: {Path(j.path).name for j in planned if shard_of(j, 2) == k} for k in (1, 2)}
    measured = {}
    for k in (1, 2):
        findings, result = confirm_json("--shard", f"{k}/2", str(zoo))
        for name, rows in _by_file(findings).items():
            statuses = [s for _c, _l, s in rows]
            if name in shard_files[k]:
                assert rows == EXPECTED[name], (k, name)
                measured.setdefault(name, []).append(k)
            else:
                assert statuses == ["not-confirmed"] * len(rows), (k, name)
                (f,) = [f for f in findings if f["filename"].endswith(name)]
                assert f["confirm"]["detail"] == "its modules are confirmed in another shard (--shard)"
    assert measured == {name: [k for k in (1, 2) if name in shard_files[k]] for name in EXPECTED}
    assert all(len(v) == 1 for v in measured.values())


HUGE = """\
import torch
from torch import nn


class Huge(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        raise RuntimeError("y" * (10 * 1024 * 1024))
"""

OUTER = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        print("block")
        return self.fc(x)


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(6, 6)
        self.block = Block(6)

    def forward(self, x):
        return self.block(self.first(x))
"""

NEEDS = """\
import torch
from torch import nn


class NeedsDim(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x).sum().item()
"""


def test_submodules_arguments_path_class_and_a_huge_message(tmp_path):
    (tmp_path / "huge.py").write_text(HUGE)
    (tmp_path / "outer.py").write_text(OUTER)
    (tmp_path / "needs.py").write_text(NEEDS)
    result = confirm(str(tmp_path))
    out, err = result.stdout, result.stderr
    assert result.exit_code == 1
    # Block runs inside Outer: its print is confirmed there, and Block() is never built alone
    assert f"{tmp_path / 'outer.py'}:11:9: PTC301" in out and "[confirmed]" in out.split("outer.py:11:9")[1].splitlines()[0]
    assert f"{tmp_path / 'outer.py'}::Block: built inside Outer, so it is confirmed as part of that module" in err
    # NeedsDim() needs an argument: skipped with the config entry to add, no PTC091
    assert f"{tmp_path / 'needs.py'}::NeedsDim: NeedsDim() cannot be built alone: its constructor needs dim" in err
    assert "PTC091" not in [line.split()[1] for line in out.splitlines() if "needs.py" in line.split(":")[0]]
    needs_line = next(line for line in out.splitlines() if "needs.py" in line)
    assert needs_line.endswith("[not-confirmed]")
    # the 10 MB message: printed once, cut, with a note
    assert (out + err).count("RuntimeError: yyyy") == 1
    assert (out + err).count("y" * 1000 + "... [message truncated: 10,484,760 more characters]") == 1
    assert len(out) + len(err) < 20000
    assert err.count(WARNING) == 1

    findings, result = confirm_json(f"{tmp_path / 'outer.py'}::Outer")
    assert [(f["code"], f["location"]["row"], f["confirm"]["status"], f["confirm"]["module"]) for f in findings] == [
        ("PTC301", 11, "confirmed", f"{tmp_path / 'outer.py'}::Outer")
    ]


SPAWNER = """\
import os
import subprocess
import sys

import torch
from torch import nn

OUT = {out!r}
SLEEP = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep({sleep})"


class Spawner(nn.Module):
    def forward(self, x):
        if not os.path.exists(os.path.join(OUT, "child")):
            open(os.path.join(OUT, "child"), "w").write(str(os.getpid()))
            # a grandchild in a session of its own
            subprocess.Popen([sys.executable, "-c", SLEEP, os.path.join(OUT, "setsid")], start_new_session=True)
            # a daemon: double fork, new session, empty environment
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execve(sys.executable, [sys.executable, "-c", SLEEP, os.path.join(OUT, "daemon")], {{}})
                os._exit(0)
            {then}
        return x * 2


def make_model():
    return Spawner()


def example_inputs():
    return (torch.randn(2, 2),)
"""


def _wait_for(path: Path, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path.name} was never written")


def _running(pid: int) -> bool:
    table = process_table()
    return pid in table and table[pid][1] != "Z"


def _gone_soon(pids, timeout: float = 10.0) -> list:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_running(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _running(p)]


def _kill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process tracking uses /proc and prctl")
def test_grandchildren_that_call_setsid_do_not_outlive_the_run(tmp_path):
    out = tmp_path / "pids"
    out.mkdir()
    (tmp_path / "spawner.py").write_text(SPAWNER.format(out=str(out), sleep=300, then="pass"))
    pids = []
    try:
        result = confirm("--output-format", "json", str(tmp_path / "spawner.py"))
        pids = [_wait_for(out / name, 5) for name in ("setsid", "daemon")]
        assert result.exit_code in (0, 1), result.output
        assert [f for f in json.loads(result.stdout) if f["code"] == "PTC091"] == []  # the module itself ran fine
        assert _gone_soon(pids) == []
    finally:
        _kill(pids)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process tracking uses /proc and prctl")
def test_sigterm_takes_down_the_fork_server_and_the_running_child(tmp_path):
    out = tmp_path / "pids"
    out.mkdir()
    (tmp_path / "spawner.py").write_text(SPAWNER.format(out=str(out), sleep=300, then="import time; time.sleep(300)"))
    marker = f"pt2lint-sigterm-{os.getpid()}-{time.time_ns()}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PT2LINT_TEST_MARKER": marker}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pt2lint", "confirm", "--isolated", "--no-cache", str(tmp_path / "spawner.py")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
    )
    pids = []
    try:
        pids = [_wait_for(out / name) for name in ("child", "setsid", "daemon")]
        marked = [pid for pid in process_table() if _marker(pid) == marker]
        assert len(marked) >= 3, marked  # the command, its fork server, the child (the daemon's environment is empty)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)  # returns only once nothing holds the pipes
        assert proc.returncode == 128 + signal.SIGTERM, stderr.decode()
        assert b"error: confirm stopped by SIGTERM: its child processes were killed" in stderr
        assert _gone_soon(pids) == []
        assert _gone_soon(marked) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill(pids)


def _marker(pid: int):
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read()
    except OSError:
        return None
    for item in env.split(b"\0"):
        if item.startswith(b"PT2LINT_TEST_MARKER="):
            return item.split(b"=", 1)[1].decode()
    return None
