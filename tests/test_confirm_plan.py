"""Confirm mode without running models: finding the modules (default factory names, configured
names no file defines, ``path::Class``, submodule classes), sharding, ``--fail-on``,
per-expression coverage, truncated messages and the cleanup of what children leave behind.

Nothing here imports torch; the CLI tests stop before any child process starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pt2lint.commands.confirm import failing_findings, split_targets, summary_text
from pt2lint.confirm import coverage
from pt2lint.confirm.child import MESSAGE_LIMIT, _first_line, new_result
from pt2lint.confirm.join import join
from pt2lint.confirm.plan import Job, PlanError, plan_jobs, select_shard, shard_of
from pt2lint.confirm.runner import TOKEN_ENV, JobOutcome, Reaper, process_table
from pt2lint.confirm.settings import build_settings
from pt2lint.diagnostics import Confirmation, Diagnostic, Position

ROOT = Path(__file__).resolve().parent.parent


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return str(path)


def _plan(folder: Path, paths, only=None, **options):
    settings = build_settings(options.pop("table", {}), config_path=options.pop("config_path", None), root=str(folder), jobs=1, **options)
    files = [(p, os.path.relpath(p, folder), os.path.relpath(p, folder)) for p in paths]
    return plan_jobs(files, settings, only=only)


FACTORY_FILE = """\
from torch import nn
class Net(nn.Module):
    def forward(self, x): ...
def make_model(): ...
def example_inputs(): ...
"""

CLASSES_FILE = """\
from torch import nn
class Block(nn.Module):
    def __init__(self, dim): ...
    def forward(self, x): ...
class Outer(nn.Module):
    def __init__(self):
        self.blocks = nn.ModuleList([Block(4) for _ in range(2)])
    def forward(self, x): ...
class Alone(nn.Module):
    def forward(self, x): ...
"""


# ---------------------------------------------------------------------------
# finding the modules


def test_make_model_and_example_inputs_are_used_without_flags(tmp_path):
    paths = [_write(tmp_path, "a.py", FACTORY_FILE), _write(tmp_path, "b.py", CLASSES_FILE)]
    jobs, _ = _plan(tmp_path, paths)
    assert (jobs[0].display, jobs[0].factory, jobs[0].inputs, jobs[0].class_name) == ("a.py", "make_model", "example_inputs", None)
    assert all(j.class_name for j in jobs[1:])


def test_a_configured_factory_no_file_defines_is_an_error(tmp_path):
    paths = [_write(tmp_path, "a.py", FACTORY_FILE), _write(tmp_path, "b.py", CLASSES_FILE)]
    with pytest.raises(PlanError) as err:
        _plan(tmp_path, paths, factory="make_modle")
    assert str(err.value).startswith("--factory: no linted file defines a function 'make_modle' (did you mean 'make_model'?)")
    with pytest.raises(PlanError, match=r"^--inputs: no linted file defines a function 'inputs'"):
        _plan(tmp_path, paths, inputs="inputs")
    with pytest.raises(PlanError) as err:
        _plan(tmp_path, paths, table={"factory": "build"}, config_path=str(tmp_path / "pyproject.toml"))
    assert "[tool.pt2lint.confirm] 'factory': no linted file defines a function 'build'" in str(err.value)
    with pytest.raises(PlanError, match="module:function spec"):
        _plan(tmp_path, paths, factory="a:make_model")
    # the default name is only used where it exists: no file defining it is not an error
    jobs, _ = _plan(tmp_path, [paths[1]])
    assert [j.class_name for j in jobs] == ["Outer", "Alone"]


def test_classes_built_by_another_class_are_left_to_it(tmp_path):
    path = _write(tmp_path, "b.py", CLASSES_FILE)
    jobs, skipped = _plan(tmp_path, [path])
    assert [j.class_name for j in jobs] == ["Outer", "Alone"]
    assert skipped == [("b.py::Block", "built inside Outer, so it is confirmed as part of that module")]
    cycle = _write(tmp_path, "c.py", "class A(nn.Module):\n    def forward(self, x): return B()(x)\nclass B(nn.Module):\n    def forward(self, x): return A()(x)\n")
    jobs, skipped = _plan(tmp_path, [cycle])
    assert [j.class_name for j in jobs] == ["A", "B"] and skipped == []


def test_path_class_targets(tmp_path):
    a = _write(tmp_path, "a.py", FACTORY_FILE)
    b = _write(tmp_path, "b.py", CLASSES_FILE)
    table = {"b.py::Block": {"factory": "b:make_block"}}
    jobs, _ = _plan(tmp_path, [a, b], only={a: ["Net"], b: ["Block"]}, table=table)
    assert [(j.display, j.class_name, j.factory) for j in jobs] == [("a.py", "Net", None), ("b.py", "Block", "b:make_block")]
    assert jobs[0].label == "a.py::Net"
    with pytest.raises(PlanError) as err:
        _plan(tmp_path, [b], only={b: ["Outr"]})
    assert str(err.value) == "b.py::Outr: no nn.Module class 'Outr' with a forward in b.py (did you mean 'Outer'?) (classes found: Block, Outer, Alone)"

    paths, only = split_targets([f"{b}::Outer", f"{b}::Alone", a])
    assert paths == (b, a) and only == {os.path.abspath(b): ["Outer", "Alone"]}
    import click

    with pytest.raises(click.BadParameter, match="must be a class name"):
        split_targets([f"{b}::1x"])
    with pytest.raises(click.BadParameter, match="is not a file"):
        split_targets([f"{tmp_path}::Outer"])


# ---------------------------------------------------------------------------
# shards


def _many_jobs(tmp_path, n=40):
    paths = [_write(tmp_path, f"m{i:02d}.py", CLASSES_FILE if i % 3 else FACTORY_FILE) for i in range(n)]
    jobs, _ = _plan(tmp_path, paths)
    return jobs


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_shards_cover_every_module_exactly_once(tmp_path, count):
    jobs = _many_jobs(tmp_path)
    seen = []
    for index in range(1, count + 1):
        mine, others = select_shard(jobs, index, count)
        assert len(mine) + len(others) == len(jobs)
        seen += [j.shard_key for j in mine]
    assert sorted(seen) == sorted(j.shard_key for j in jobs) and len(set(seen)) == len(jobs)
    if count > 1:
        sizes = [len(select_shard(jobs, i, count)[0]) for i in range(1, count + 1)]
        assert min(sizes) > 0, sizes  # 67 modules do not all land in one shard
    with pytest.raises(ValueError):
        select_shard(jobs, count + 1, count)


def test_shards_do_not_depend_on_the_hash_seed_or_the_other_modules(tmp_path):
    jobs = _many_jobs(tmp_path, 12)
    code = (
        "import sys; from pt2lint.confirm.plan import Job, shard_of\n"
        "for key in sys.argv[1:]:\n"
        "    rel, _, cls = key.partition('::')\n"
        "    print(shard_of(Job(path=rel, display=rel, relpath=rel, root='.', class_name=cls or None, factory='make_model'), 4))\n"
    )
    keys = [j.shard_key if j.class_name else j.relpath + "::" for j in jobs]
    runs = [
        subprocess.run([sys.executable, "-c", code, *keys], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}, check=True).stdout.split()
        for seed in ("1", "2")
    ]
    assert runs[0] == runs[1] == [str(shard_of(j, 4)) for j in jobs]
    # a job's shard is its own: planning fewer files does not move it
    assert [shard_of(j, 4) for j in jobs[:5]] == [shard_of(j, 4) for j in _plan(tmp_path, sorted({j.path for j in jobs[:5]}))[0][:5]]


def _cli(*args):
    from click.testing import CliRunner

    from pt2lint.cli import cli

    return CliRunner().invoke(cli, ["confirm", "--isolated", "--no-cache", *args], catch_exceptions=False)


@pytest.mark.parametrize("value,needle", [("3/2", "K must be between 1 and N"), ("1-2", "is not K/N"), ("0/0", "K must be")])
def test_bad_shard_values_are_usage_errors(tmp_path, value, needle):
    (tmp_path / "m.py").write_text("x = 1\n")
    result = _cli("--shard", value, str(tmp_path))
    assert result.exit_code == 2 and needle in result.output


def test_cli_errors_before_running_anything(tmp_path):
    pytest.importorskip("torch")  # run_confirm checks for torch before planning
    b = _write(tmp_path, "b.py", CLASSES_FILE)
    result = _cli("--factory", "make_modle", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: --factory: no linted file defines a function 'make_modle'")
    result = _cli(f"{b}::Nope")
    assert result.exit_code == 2 and "error: " + b + "::Nope: no nn.Module class 'Nope'" in result.stderr
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------------
# --fail-on and the summary


def _finding(status, code="PTC101"):
    return Diagnostic(code=code, name=code, message="m", filename="f.py", start=Position(1, 1), end=Position(1, 2),
                      severity="error", category="data-dependent", confirm=Confirmation(status, "d") if status else None)


def test_fail_on_counts_only_confirmed_findings():
    mixed = [_finding("not-reproduced"), _finding("not-executed"), _finding("dynamic-only", "PTC090"), _finding("failed", "PTC091"), _finding(None)]
    assert failing_findings(mixed, {"fail_on": "confirmed"}) == []
    assert failing_findings(mixed, {"fail_on": "any"}) == mixed == failing_findings(mixed, {})
    hit = mixed + [_finding("confirmed")]
    assert failing_findings(hit, {"fail_on": "confirmed"}) == [hit[-1]]


# ---------------------------------------------------------------------------
# per-expression coverage

SHORT_CIRCUIT = """\
def forward(mask, x, flag):
    if mask is not None and mask.any():
        x = x + 1
    y = x.real if flag else x.imag
    return [v.bit_length() for v in ()] if flag else y
"""


class _Mask:
    def any(self):
        return True


def _record(path: str, *args):
    namespace: dict = {}
    exec(compile(Path(path).read_text(), path, "exec"), namespace)
    recorder = coverage.Recorder(lambda f: f == path)
    with recorder:
        namespace["forward"](*args)
    return recorder


def _span(path: str, line: int, text: str):
    source = Path(path).read_text().splitlines()[line - 1]
    col = source.index(text)
    return (line, coverage.byte_column(source, col + 1), line, coverage.byte_column(source, col + 1 + len(text)))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="instruction columns need co_positions (3.11+)")
def test_expressions_that_did_not_run_are_told_from_their_line(tmp_path):
    path = _write(tmp_path, "f.py", SHORT_CIRCUIT)
    compiled = coverage.code_spans(Path(path).read_text(), path)
    none_ran = _record(path, None, 3, False)
    executed = {tuple(s) for s in none_ran.spans()[path]}
    assert none_ran.as_dict()[path] == [2, 4, 5]

    def ran(rec_spans, line, text):
        return coverage.expression_ran(_span(path, line, text), compiled, rec_spans)

    assert ran(executed, 2, "mask.any()") is False  # short-circuit
    assert ran(executed, 2, "any()") is False  # a part of the call: judged by the call
    assert ran(executed, 2, "mask is not None") is True
    assert ran(executed, 4, "x.real") is False and ran(executed, 4, "x.imag") is True  # branch not taken
    assert ran(executed, 5, "v.bit_length()") is False  # a comprehension never entered
    assert ran(executed, 3, "x + 1") is None  # the line never ran: lines decide
    mask_given = {tuple(s) for s in _record(path, _Mask(), 3, True).spans()[path]}
    assert ran(mask_given, 2, "mask.any()") is True and ran(mask_given, 4, "x.real") is True
    assert ran(mask_given, 5, "v.bit_length()") is False  # empty loop: the body never ran


def test_byte_columns_count_utf8():
    assert coverage.byte_column("é = x.item()", 5) == 5
    assert coverage.byte_column("x", 1) == 0


@pytest.mark.skipif(sys.version_info < (3, 11), reason="instruction columns need co_positions (3.11+)")
def test_join_reports_not_executed_for_a_short_circuited_expression(tmp_path):
    path = _write(tmp_path, "f.py", SHORT_CIRCUIT)
    rec = _record(path, None, 3, False)
    job = Job(path=path, display="f.py", relpath="f.py", root=str(tmp_path), class_name="Net", anchor_line=1)
    result = new_result(job)
    result.update(stage="done", eager_ok=True, compiled=True, mutations_ok=True, executed=rec.as_dict(), executed_spans=rec.spans())
    line2 = Path(path).read_text().splitlines()[1]

    def diag(line, text, code="PTC104"):
        col = Path(path).read_text().splitlines()[line - 1].index(text) + 1
        return Diagnostic(code=code, name=code, message="m", filename=path, start=Position(line, col),
                          end=Position(line, col + len(text)), severity="error", category="data-dependent", symbol="forward")

    diags = [diag(2, "mask.any()"), diag(2, "mask is not None"), diag(4, "x.real"), diag(3, "x + 1")]
    settings = build_settings({}, config_path=None, root=str(tmp_path))
    res = join(diags, [JobOutcome(job=job, result=result, stage="done", exitcode=0)], settings, displays={},
               enabled_for=lambda _d: frozenset(), cwd=str(tmp_path))
    got = {(d.start.line, d.start.column): d.confirm.status for d in res.diagnostics}
    assert got == {
        (2, line2.index("mask.any()") + 1): "not-executed",
        (2, line2.index("mask is not None") + 1): "not-reproduced",
        (4, Path(path).read_text().splitlines()[3].index("x.real") + 1): "not-executed",
        (3, Path(path).read_text().splitlines()[2].index("x + 1") + 1): "not-executed",  # by its line
    }
    detail = next(d for d in res.diagnostics if d.start.line == 2 and d.confirm.status == "not-executed").confirm.detail
    assert "short-circuit" in detail


# ---------------------------------------------------------------------------
# skipped modules, long messages


def test_a_class_that_needs_arguments_is_skipped_with_a_note(tmp_path):
    path = _write(tmp_path, "b.py", CLASSES_FILE)
    job = Job(path=path, display="b.py", relpath="b.py", root=str(tmp_path), class_name="Block", anchor_line=2)
    result = new_result(job)
    result.update(stage="done", skipped="Block() cannot be built alone: its constructor needs dim (...)", needs_arguments=["dim"])
    settings = build_settings({}, config_path=None, root=str(tmp_path))
    diag = Diagnostic(code="PTC101", name="x", message="m", filename=path, start=Position(4, 5), end=Position(4, 9),
                      severity="error", category="data-dependent")
    res = join([diag], [JobOutcome(job=job, result=result, stage="done", exitcode=0)], settings, displays={},
               enabled_for=lambda _d: frozenset({"PTC090", "PTC091"}), cwd=str(tmp_path))
    assert [d.code for d in res.diagnostics] == ["PTC101"]  # no PTC091
    assert res.diagnostics[0].confirm.status == "not-confirmed"
    assert "its module was skipped: Block() cannot be built alone" in res.diagnostics[0].confirm.detail
    text = summary_text(res, settings, 1.0, skipped=[("b.py::Inner", "built inside Outer, so ...")])
    assert "Skipped 2:\n  b.py::Inner: built inside Outer, so ...\n  b.py::Block: Block() cannot be built alone" in text
    assert 'next: add to [tool.pt2lint.confirm] in pyproject.toml: "b.py::Block" = { factory = "b:Block"' in text
    assert text.startswith("Confirm: 0 modules on ")
    sharded = summary_text(res, settings, 1.0, shard=(2, 3), other_shards=5)
    assert sharded.startswith("Confirm: 0 modules (shard 2/3: 5 more in the other shards) on ")


def test_a_huge_exception_message_is_cut_once():
    message = "x" * (10 * 1024 * 1024)
    text = _first_line(RuntimeError(message))
    assert text.startswith("RuntimeError: xxx") and len(text) < MESSAGE_LIMIT + 100
    assert text.endswith(f"... [message truncated: {len(message) - MESSAGE_LIMIT:,} more characters]")
    assert _first_line(RuntimeError("short\nsecond line")) == "RuntimeError: short"


# ---------------------------------------------------------------------------
# what children leave behind

pytestmark_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux")


def _alive(pid: int) -> bool:
    table = process_table()
    return pid in table and table[pid][1] != "Z"


def _wait_for(path: Path, timeout=20.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written")


@pytestmark_linux
def test_reaper_kills_tagged_processes_and_orphans_that_called_setsid(tmp_path):
    tagged_pid, orphan_pid = tmp_path / "tagged", tmp_path / "orphan"
    # A child that starts (1) a grandchild in its own session, keeping the token, and
    # (2) a double-forked daemon with a clean environment, then exits.
    script = textwrap.dedent(
        f"""
        import os, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import os, time; open({str(tagged_pid)!r}, 'w').write(str(os.getpid())); time.sleep(120)"],
                         start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execve(sys.executable, [sys.executable, "-c", "import os, time; open({str(orphan_pid)!r}, 'w').write(str(os.getpid())); time.sleep(120)"], {{}})
            os._exit(0)
        time.sleep(0.5)
        """
    )
    with Reaper(keep=[pid for pid, (ppid, _s) in process_table().items() if ppid == os.getpid()]) as reaper:
        child = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, TOKEN_ENV: "run-1"})
        reaper.keep.add(child.pid)
        try:
            tagged, orphan = _wait_for(tagged_pid), _wait_for(orphan_pid)
            child.wait(20)
            assert _alive(tagged) and _alive(orphan)
            killed = reaper.sweep(["run-2"], spare=["run-1"])  # another job's token: the tagged one is spared
            assert tagged not in killed
            if reaper.subreaper:
                assert orphan in killed  # re-parented here, no token: an orphan of a finished child
            killed = reaper.sweep(["run-1"])
            assert tagged in killed
            deadline = time.monotonic() + 5
            while (_alive(tagged) or (reaper.subreaper and _alive(orphan))) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _alive(tagged)
            assert not reaper.subreaper or not _alive(orphan)
        finally:
            for path in (tagged_pid, orphan_pid):
                if path.exists() and path.read_text().strip():
                    try:
                        os.kill(int(path.read_text()), signal.SIGKILL)
                    except OSError:
                        pass
