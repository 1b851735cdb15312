"""Confirm mode without torch: settings, job planning, failure classes, crash logs, the join, reporters.

The child's measurements are written by hand here (the dicts ``pt2lint.confirm.child``
sends), so these tests pin the join's rules without running anything; the
end-to-end behaviour is in tests/test_confirm.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from pt2lint.config import ConfigError
from pt2lint.confirm import outcome as oc
from pt2lint.confirm.child import guard_text, new_result
from pt2lint.confirm.join import join, summarize
from pt2lint.confirm.plan import Job, plan_jobs, scan_source
from pt2lint.confirm.runner import JobOutcome
from pt2lint.confirm.settings import build_settings, default_jobs
from pt2lint.diagnostics import Confirmation, Diagnostic, Position

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------
# settings


def test_settings_from_table_and_options():
    table = {
        "factory": "make_model",
        "inputs": "example_inputs",
        "device": "cuda:1",
        "backend": "inductor",
        "timeout": 30,
        "jobs": 3,
        "check-accuracy": True,
        "memory-limit": 512,
        "models/net.py::Net": {"factory": "models.net:build", "inputs": "models/net.py:inputs"},
    }
    s = build_settings(table, config_path="/p/pyproject.toml", root="/p", target="export", backend="eager", jobs=2)
    assert (s.factory, s.inputs, s.device, s.backend, s.timeout, s.jobs) == ("make_model", "example_inputs", "cuda:1", "eager", 30.0, 2)
    assert s.check_accuracy and s.memory_limit_mb == 512 and s.target == "export"
    entry = s.modules[("models/net.py", "Net")]
    assert (entry.factory, entry.inputs) == ("models.net:build", "models/net.py:inputs")
    assert build_settings({}, config_path=None, root=".", target="cudagraphs").target == "compile"
    assert build_settings({}, config_path=None, root=".").jobs == default_jobs()


@pytest.mark.parametrize(
    "table,needle",
    [
        ({"factroy": "make_model"}, "unknown key 'factroy' (did you mean 'factory'?)"),
        ({"device": "gpu"}, "device must be cpu, cuda, cuda:N or mps"),
        ({"backend": "tvm"}, "'backend' must be one of eager, aot_eager, inductor"),
        ({"timeout": 0}, "'timeout' must be a positive number"),
        ({"jobs": True}, "'jobs' must be a positive integer"),
        ({"net.py::Net": "x:y"}, "must be a table"),
        ({"net.py::Net": {"factory": "no_colon"}}, "must be a string \"module:function\""),
        ({"net.py::Net": {"inputs": "m:f", "extra": 1}}, "unknown key 'extra'"),
        ({"net::Net": {}}, 'must be named "path/to/file.py::ClassName"'),
    ],
)
def test_settings_errors_are_one_line(table, needle):
    with pytest.raises(ConfigError) as err:
        build_settings(table, config_path="/p/pyproject.toml", root="/p")
    message = str(err.value)
    assert needle in message and "\n" not in message
    assert message.startswith("/p/pyproject.toml: [tool.pt2lint.confirm]") or "pyproject.toml: [tool.pt2lint.confirm]" in message


def test_bad_device_option():
    with pytest.raises(ConfigError, match="--device: device must be"):
        build_settings({}, config_path=None, root=".", device="tpu")


# ---------------------------------------------------------------------------
# planning


def test_scan_source_finds_module_classes_and_functions():
    shape = scan_source(
        textwrap.dedent(
            """
            class A(nn.Module):
                def forward(self, x): ...
            class B(A):
                pass
            class C:
                def forward(self, x): ...
            class D(Base):
                def helper(self): ...
            def make_model(): ...
            """
        )
    )
    assert shape.classes == {"A": 2, "B": 4}
    assert shape.functions == {"make_model": 10}
    assert scan_source("def f(:\n").error


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_plan_jobs_factory_classes_and_entries(tmp_path):
    with_factory = _write(tmp_path, "a.py", "class A(nn.Module):\n    def forward(self, x): ...\ndef make_model(): ...\ndef example_inputs(): ...\n")
    two = _write(tmp_path, "b.py", "class B(nn.Module):\n    def forward(self, x): ...\nclass C(nn.Module):\n    def forward(self, x): ...\ndef example_inputs(): ...\n")
    one = _write(tmp_path, "c.py", "class D(nn.Module):\n    def forward(self, x): ...\ndef example_inputs(): ...\n")
    helper = _write(tmp_path, "d.py", "def helper(x):\n    return x\n")
    broken = _write(tmp_path, "e.py", "def f(:\n")
    table = {"b.py::C": {"factory": "b:make_c", "inputs": "b:inputs_c"}}
    settings = build_settings(table, config_path=None, root=str(tmp_path), factory="make_model", inputs="example_inputs", jobs=1)
    files = [(p, Path(p).name, Path(p).name) for p in (with_factory, two, one, helper, broken)]
    jobs, skipped = plan_jobs(files, settings)
    got = [(j.display, j.class_name, j.factory, j.inputs, j.anchor_line) for j in jobs]
    assert got == [
        ("a.py", None, "make_model", "example_inputs", 3),
        ("b.py", "B", None, None, 1),  # two classes: the file's example_inputs is not guessed for either
        ("b.py", "C", "b:make_c", "b:inputs_c", 3),
        ("c.py", "D", None, "example_inputs", 1),
    ]
    assert [s[0] for s in skipped] == ["e.py"]
    assert jobs[0].label == "a.py::make_model()" and jobs[1].label == "b.py::B"
    assert jobs[0].target_spec == "a.py" and jobs[2].target_spec == "b.py::C"


# ---------------------------------------------------------------------------
# failure classes and crash logs

_FAULT_LOG = """\
some output
Fatal Python error: Segmentation fault

Current thread 0x00007f (most recent call first):
  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at
  File "/proj/models/net.py", line 12 in forward
  File "/venv/site-packages/torch/nn/modules/module.py", line 1779 in _call_impl

Extension modules: torch._C
"""


def test_crash_log_parsing():
    frames = oc.crash_frames(_FAULT_LOG)
    assert frames[0] == ("/usr/lib/python3.11/ctypes/__init__.py", 519, "string_at")
    assert oc.fatal_error(_FAULT_LOG) == "Segmentation fault"
    pick = oc.innermost_user_frame(frames, lambda f: f.startswith("/proj/"))
    assert pick == ("/proj/models/net.py", 12, "forward")
    assert oc.describe_exit(-11) == "was killed by SIGSEGV"
    assert oc.describe_exit(3).startswith("exited with status 3")
    assert oc.is_cuda_error("RuntimeError: CUDA error: device-side assert triggered")
    assert oc.is_out_of_memory("DefaultCPUAllocator: can't allocate memory")


def test_next_steps_name_the_right_logs():
    repro = oc.Repro("models/net.py", factory="make_model", inputs="example_inputs", backend="inductor")
    steps = {f: oc.next_step(f, repro) for f in oc.FAILURE_CLASSES}
    assert steps[oc.GRAPH_BREAK].startswith("TORCH_LOGS=graph_breaks python -m pt2lint.confirm.child models/net.py --factory make_model")
    assert steps[oc.RECOMPILE_LIMIT].startswith("TORCH_LOGS=recompiles ")
    assert steps[oc.BACKEND_COMPILER_FAILURE].startswith("TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2 ")
    assert steps[oc.ACCURACY_MISMATCH].startswith("TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4 ")
    assert steps[oc.DYNAMO_INTERNAL_ERROR].startswith("TORCHDYNAMO_VERBOSE=1 TORCH_LOGS=+dynamo ")
    assert "--eager-only" in steps[oc.RUNTIME_CRASH] and "-X faulthandler" in steps[oc.RUNTIME_CRASH]
    assert oc.next_step(oc.RUNTIME_CRASH, repro, cuda_error=True).startswith("CUDA_LAUNCH_BLOCKING=1 ")
    assert "--backend inductor" in steps[oc.GRAPH_BREAK]


def test_guard_text():
    assert guard_text("forward (/m.py:8): 0/7: self.n == 7; 0/6: self.n == 6") == "self.n == 7"


# ---------------------------------------------------------------------------
# the join, on hand-written measurements

MODEL = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        n = x.sum().item()
        if x.shape[0] > 64:
            print("big")
        y = x * n
        print("done")
        return y  # noqa: PTC090
"""


def _diag(path, line, code="PTC101", category="data-dependent", symbol="Net.forward"):
    return Diagnostic(
        code=code, name=code.lower(), message=f"{code} here", filename=path,
        start=Position(line, 9), end=Position(line, 20), severity="error", category=category, symbol=symbol,
    )


def _outcome(job, **fields):
    result = new_result(job)
    result.update(stage="done", eager_ok=True, compiled=True, mutations_ok=True, **fields)
    return JobOutcome(job=job, result=result, stage="done", exitcode=0)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(MODEL)
    job = Job(path=str(path), display="net.py", relpath="net.py", root=str(tmp_path), class_name="Net", anchor_line=5)
    return str(path), job


def _join(diags, outcomes, path, target="compile", enabled=frozenset({"PTC090", "PTC091"})):
    settings = build_settings({}, config_path=None, root=str(Path(path).parent), target=target)
    return join(diags, outcomes, settings, displays={}, enabled_for=lambda _d: enabled, cwd=str(Path(path).parent))


def test_statuses_of_static_findings(model):
    path, job = model
    gb = {"filename": path, "lineno": 7, "reason": "Unsupported Tensor.item() call", "gb_type": "GB0124", "call": 0, "user_stack": []}
    out = _outcome(job, graph_breaks=[gb], executed={path: [6, 7, 8, 10, 11, 12]})
    diags = [
        _diag(path, 7),  # the break Dynamo logged
        _diag(path, 9, "PTC301", "side-effect"),  # in the branch that never ran
        _diag(path, 11, "PTC301", "side-effect"),  # ran, no break logged
        _diag(path, 10, "PTC701", "sync"),  # a category confirm does not measure
        _diag(path, 12, "PTC002", "internal"),
    ]
    res = _join(diags, [out], path)
    status = {(d.code, d.start.line): (d.confirm.status if d.confirm else None) for d in res.diagnostics}
    assert status == {
        ("PTC101", 7): "confirmed",
        ("PTC301", 9): "not-executed",
        ("PTC301", 11): "not-reproduced",
        ("PTC701", 10): "not-confirmed",
        ("PTC002", 12): None,
    }
    confirmed = next(d for d in res.diagnostics if d.start.line == 7)
    assert dict(confirmed.confirm.evidence)["gb_type"] == "GB0124"
    assert confirmed.confirm.next_step.startswith("TORCH_LOGS=graph_breaks ")
    later = next(d for d in res.diagnostics if d.start.line == 11)
    assert "after the break at line 7" in later.confirm.detail
    assert res.counts == {"confirmed": 1, "not-executed": 1, "not-reproduced": 1, "not-confirmed": 1}


def test_missed_break_becomes_ptc090_unless_suppressed_or_disabled(model):
    path, job = model
    ctypes_file = str(Path(sysconfig.get_paths()["stdlib"]) / "ctypes" / "__init__.py")
    breaks = [
        {"filename": path, "lineno": 11, "reason": "Failed to trace builtin operator", "gb_type": "GB0059", "call": 0, "user_stack": []},
        {"filename": path, "lineno": 12, "reason": "Something", "gb_type": "GB0001", "call": 0, "user_stack": []},
        {"filename": ctypes_file, "lineno": 519, "reason": "Unsupported method call",
         "gb_type": "GB0156", "call": 0, "user_stack": [[path, 10, "forward"], [ctypes_file, 519, "string_at"]]},
    ]
    out = _outcome(job, graph_breaks=breaks, executed={path: [6, 7, 8, 10, 11, 12]})
    res = _join([], [out], path)
    dyn = [(d.code, d.start.line, d.start.column, d.gb_types, d.confirm.status) for d in res.diagnostics]
    # line 12 carries `# noqa: PTC090`; the ctypes break is reported at the user's line 10
    assert dyn == [("PTC090", 10, 9, ("GB0156",), "dynamic-only"), ("PTC090", 11, 9, ("GB0059",), "dynamic-only")]
    assert _join([], [out], path, enabled=frozenset()).diagnostics == []
    assert _join([], [out], path, target="export").diagnostics == []  # export does not care about breaks


def test_recompiles_confirm_state_rules_and_follow_their_break(model):
    path, job = model
    recompiles = [
        {"reason": f"forward ({path}:6): 0/0: self.n == 0", "filename": path, "lineno": 10, "tensor_only": False, "call": 1},
        {"reason": f"torch_dynamo_resume_in_forward_at_7 ({path}:7): 1/0: ___stack0 == 1.5", "filename": None, "lineno": None, "tensor_only": False, "call": 1},
        {"reason": f"forward ({path}:6): 0/1: tensor 'x' size mismatch at index 0", "filename": None, "lineno": None, "tensor_only": True, "call": 2},
    ]
    gb = {"filename": path, "lineno": 7, "reason": "item", "gb_type": "GB0124", "call": 0, "user_stack": []}
    out = _outcome(job, graph_breaks=[gb], recompiles=recompiles, executed={path: [6, 7, 10, 11, 12]})
    res = _join([_diag(path, 7), _diag(path, 10, "PTC501", "recompile")], [out], path)
    by_line = {d.start.line: d for d in res.diagnostics}
    assert set(by_line) == {7, 10}
    assert by_line[10].confirm.status == "confirmed" and "self.n == 0" in by_line[10].confirm.detail
    assert "___stack0 == 1.5" in dict(by_line[7].confirm.evidence)["recompiles_after_break"]
    res = _join([_diag(path, 7)], [out], path)
    extra = [d for d in res.diagnostics if d.code == "PTC090"]
    assert [(d.start.line, d.severity) for d in extra] == [(10, "warning")]


def test_failed_modules_become_ptc091_and_their_findings_not_confirmed(model, tmp_path):
    path, job = model
    log = (
        _FAULT_LOG.replace("/proj/models/net.py", path)
        .replace("line 12", "line 10")
        .replace("/usr/lib/python3.11", sysconfig.get_paths()["stdlib"])
    )
    crashed = JobOutcome(job=job, result=None, stage="compile call 1", exitcode=-11, log=log)
    res = _join([_diag(path, 7)], [crashed], path)
    failed, finding = sorted(res.diagnostics, key=lambda d: d.code)
    assert finding.confirm.status == "not-confirmed" and "runtime crash" in finding.confirm.detail
    assert failed.code == "PTC091" and failed.start.line == 10 and failed.severity == "error"
    assert failed.confirm.failure == "runtime-crash" and "SIGSEGV" in failed.message and "net.py:10 in forward" in failed.message
    assert failed.confirm.next_step.startswith("python -X faulthandler -m pt2lint.confirm.child net.py::Net")

    hung = JobOutcome(job=job, result=None, stage="import", timed_out=True, log="")
    rep = summarize(hung)
    assert rep.failure == "timeout" and "while importing the file" in rep.detail
    died_importing = JobOutcome(job=job, result=None, stage="import", exitcode=-6, log="")
    assert summarize(died_importing).failure == "import-error"


def test_no_example_inputs_carries_the_config_entry(model):
    path, job = model
    result = new_result(job)
    result.update(stage="done", failure="no-example-inputs", detail="forward(a, b) needs 2 arguments")
    rep = summarize(JobOutcome(job=job, result=result, stage="done", exitcode=0))
    assert rep.failure == "no-example-inputs"
    assert '"net.py::Net" = { factory = "net:Net", inputs = "net:example_inputs" }' in rep.next_step
    res = _join([], [JobOutcome(job=job, result=result, stage="done", exitcode=0)], path)
    (d,) = res.diagnostics
    assert d.code == "PTC091" and d.severity == "warning" and d.message.startswith("not confirmed: no example inputs in net.py::Net")


# ---------------------------------------------------------------------------
# reporters


def test_reporters_show_the_status():
    from pt2lint.reporters import ReportContext, get_reporter

    d = Diagnostic(
        code="PTC101", name="tensor-item", message="m", filename="net.py", start=Position(3, 5), end=Position(3, 9),
        severity="error", category="data-dependent",
        confirm=Confirmation("confirmed", "Unsupported Tensor.item() (GB0124)", module="net.py::Net", next_step="TORCH_LOGS=graph_breaks x"),
    )
    ctx = ReportContext(sources={"net.py": "a\nb\nc = t.item()\n"})
    assert get_reporter("text").render([d], ctx) == "net.py:3:5: PTC101 m [confirmed]\n"
    (obj,) = json.loads(get_reporter("json").render([d], ctx))
    assert obj["confirm"]["status"] == "confirmed" and obj["confirm"]["module"] == "net.py::Net"
    full = get_reporter("full").render([d], ctx)
    assert "= confirm: confirmed: Unsupported Tensor.item() (GB0124)" in full and "= next: TORCH_LOGS=graph_breaks x" in full
    sarif = json.loads(get_reporter("sarif").render([d], ctx))
    assert sarif["runs"][0]["results"][0]["properties"]["confirmStatus"] == "confirmed"
    plain = Diagnostic(code="PTC101", name="tensor-item", message="m", filename="net.py", start=Position(3, 5),
                       end=Position(3, 9), severity="error", category="data-dependent")
    assert "confirm" not in json.loads(get_reporter("json").render([plain], ctx))[0]


# ---------------------------------------------------------------------------
# static check stays static


def test_static_check_imports_neither_torch_nor_user_code(tmp_path):
    marker = tmp_path / "imported.txt"
    (tmp_path / "model.py").write_text(
        textwrap.dedent(
            f"""
            import pathlib
            pathlib.Path({str(marker)!r}).write_text("imported")
            import torch
            from torch import nn


            class Net(nn.Module):
                def forward(self, x):
                    return x.sum().item()
            """
        )
    )
    hang = ROOT / "fixtures" / "confirm" / "crash" / "hang_at_import.py"
    code = textwrap.dedent(
        f"""
        import sys
        from click.testing import CliRunner
        from pt2lint.cli import cli
        r = CliRunner().invoke(cli, ["check", "--no-cache", "--isolated", {str(tmp_path)!r}, {str(hang)!r}])
        print(r.exit_code, "torch" in sys.modules, "pt2lint.confirm.child" in sys.modules)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.stdout.split() == ["1", "False", "False"], proc.stdout + proc.stderr
    assert not marker.exists()


def test_confirm_without_torch_is_a_usage_error(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["torch"] = None
        import importlib.util
        real = importlib.util.find_spec
        importlib.util.find_spec = lambda name, *a: None if name == "torch" else real(name, *a)
        from pt2lint.cli import main
        main(["confirm", "--isolated", "--no-cache", {str(tmp_path)!r}])
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "error: confirm mode needs torch, which is not installed: install the torch build you want, "
        "e.g. CPU only: pip install torch --index-url https://download.pytorch.org/whl/cpu "
        "(CUDA builds: https://pytorch.org/get-started/locally/)"
    )


def test_confirm_refuses_stdin():
    from click.testing import CliRunner

    from pt2lint.cli import cli

    result = CliRunner().invoke(cli, ["check", "--confirm", "--isolated", "--no-cache", "-"], input="x = 1\n")
    assert result.exit_code == 2
    assert "error: --confirm needs files: code read from stdin cannot be imported" in result.output


def test_confirm_command_and_options_are_registered():
    from pt2lint.cli import check, cli

    names = {p.name for p in check.params}
    assert {"confirm", "device", "backend", "timeout", "factory", "inputs", "check_accuracy", "memory_limit"} <= names
    confirm = cli.commands["confirm"]
    assert "confirm" not in {p.name for p in confirm.params} and "device" in {p.name for p in confirm.params}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_source_lines_of_a_break_are_read_bounded(tmp_path):
    # the line Dynamo names is quoted from the file; a FIFO in its place is not waited on
    from pt2lint.confirm.join import _line_text

    fifo = tmp_path / "m.py"
    os.mkfifo(fifo)
    assert _line_text(str(fifo), 1, {}) == ""
    real = tmp_path / "r.py"
    real.write_bytes(b"a = 1\r\nb = '\xff'\n")
    assert _line_text(str(real), 2, {}) == "b = '\ufffd'"
