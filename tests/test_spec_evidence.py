"""With torch installed: every spec's ``bad`` example really breaks (or mutates, recompiles,
fails export) under Dynamo on the installed torch, and every ``good`` example that can run
does not.  Measured with :mod:`pt2lint.confirm.dynamo` (the ``graph_breaks`` and
``recompiles`` log artifacts, a dispatch-mode probe for input writes, ``torch.export``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import sys

import pytest

from pt2lint.specs import load_specs

torch = pytest.importorskip("torch")
from pt2lint.confirm import dynamo  # noqa: E402  (needs torch)

_counter = itertools.count()
_KNOBS = {
    "capture-scalar-outputs": "capture_scalar_outputs",
    "capture-dynamic-output-shape-ops": "capture_dynamic_output_shape_ops",
    "allow-rnn": "allow_rnn",
}


def _load(code: str, tmp_path):
    """Import the snippet from a real file, so Dynamo reports lines in it."""
    name = f"spec_example_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, str(path)


def _instantiate(module, run: str):
    scope = dict(vars(module))
    scope.setdefault("torch", torch)
    torch.manual_seed(0)
    model, args = eval(run, scope)  # the spec's own expression: (model, args)
    return model, tuple(args)


def _bigger_batch(args: tuple, k: int) -> tuple:
    """``args`` with every tensor of rank >= 1 grown by ``k`` rows along dim 0 (copies of its first row)."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.dim() >= 1 and a.shape[0] > 0:
            a = torch.cat([a, a[:1].expand(k, *a.shape[1:])])
        out.append(a)
    return tuple(out)


def _cases():
    for code, spec in load_specs().items():
        if spec.category == "internal":
            continue
        for i, ex in enumerate(spec.examples):
            if ex.run:
                yield pytest.param(spec, ex, id=f"{code}-{ex.kind}-{i + 1}")


_CHILD = """
import importlib.util, json, sys, torch
from pt2lint.confirm import dynamo
path, run, config = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
spec = importlib.util.spec_from_file_location("example", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
scope = dict(vars(module)); scope.setdefault("torch", torch)
model, args = eval(run, scope)
breaks = dynamo.graph_breaks(model, tuple(args), config=config)
print("\\nBREAKS=" + json.dumps([[b.filename, b.lineno, [list(f) for f in b.user_stack]] for b in breaks]))
"""


def _check_in_subprocess(spec, example, tmp_path) -> None:
    import json
    import subprocess
    from types import SimpleNamespace

    path = tmp_path / "example.py"
    path.write_text(example.code)
    config = {_KNOBS[k]: v for k, v in example.config if k in _KNOBS}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), example.run, json.dumps(config)],
        input="c\n" * 100, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    breaks = [SimpleNamespace(filename=f, lineno=ln, user_stack=[tuple(x) for x in st]) for f, ln, st in json.loads(out.stdout.rsplit("BREAKS=", 1)[1])]
    lines = _break_lines(breaks, str(path))
    if example.kind == "bad":
        assert set(example.flag) <= lines, f"Dynamo broke at {sorted(lines)}, the spec flags {sorted(example.flag)}"
    else:
        assert not lines, f"good example breaks at {sorted(lines)}"


def _break_lines(breaks, path: str) -> set:
    """Lines of ``path`` where a break happened: the innermost frame in ``path`` of each break's
    user stack (a ``logging.info`` break is raised inside the stdlib, called from the example)."""
    lines = set()
    for b in breaks:
        frames = [ln for f, ln, _ in b.user_stack if f == path]
        if b.filename == path:
            lines.add(b.lineno)
        elif frames:
            lines.add(frames[-1])
    return lines


@pytest.mark.parametrize("spec,example", list(_cases()))
def test_example_tells_the_truth_under_dynamo(spec, example, tmp_path, monkeypatch):
    # Debugger examples must not stop the suite: breakpoint() honours PYTHONBREAKPOINT=0 at
    # each call, and pdb reads "continue" from a fake stdin once Dynamo hands it to eager.
    monkeypatch.setenv("PYTHONBREAKPOINT", "0")
    monkeypatch.setattr(sys, "stdin", io.StringIO("c\n" * 100))
    if "pdb" in example.code:
        # pytest replaces pdb.set_trace with its own debugger hook: measure in a clean interpreter.
        return _check_in_subprocess(spec, example, tmp_path)
    module, path = _load(example.code, tmp_path)
    config = {_KNOBS[k]: v for k, v in example.config if k in _KNOBS}
    model, args = _instantiate(module, example.run)
    flagged = set(example.flag)
    if spec.is_graph_break:
        lines = _break_lines(dynamo.graph_breaks(model, args, config=config), path)
        if example.kind == "bad":
            assert flagged <= lines, f"Dynamo broke at {sorted(lines)}, the spec flags {sorted(flagged)}"
        else:
            assert not lines, f"good example breaks at {sorted(lines)}"
    elif spec.category == "input-mutation":
        lines = {m.lineno for m in dynamo.input_mutations(model, args) if m.filename == path}
        if example.kind == "bad":
            assert flagged <= lines, f"inputs written at {sorted(lines)}, the spec flags {sorted(flagged)}"
        else:
            assert not lines, f"good example writes its input at {sorted(lines)}"
    elif spec.category == "recompile":
        # Six calls: fresh inputs of the example's shapes, then batches one, two and three
        # larger, then the example's shapes again.  Automatic dynamic shapes make a new
        # batch size cost one recompile (the dimension becomes symbolic), and a cache filled
        # once costs one more: at most three graphs.  A hazard keeps recompiling: a graph
        # per call, or per distinct size (three recompiles or more).
        base = [_instantiate(module, example.run)[1] for _ in range(2)]
        calls = base + [_bigger_batch(base[0], k) for k in (1, 2, 3)] + [_instantiate(module, example.run)[1]]
        run = dynamo.compile_and_call(model, [(c, {}) for c in calls])
        assert run.error is None, f"a compiled call failed: {run.error!r}"
        reasons = [r.reason for r in run.recompiles]
        if example.kind == "bad":
            assert len(reasons) >= 3, f"fewer than three recompiles over six calls: {reasons}"
        else:
            assert len(reasons) <= 2, f"good example keeps recompiling: {reasons}"
    elif spec.category == "export":
        error = dynamo.export_error(model, args)
        if example.kind == "bad":
            assert error is not None, "torch.export.export accepted the bad example"
        else:
            assert error is None, f"good example fails export: {error}"
    elif spec.category == "amp-distributed":
        with _process_group(example.code):
            _check_amp_distributed(spec, example, model, args, path)
    elif spec.category == "sync":
        # What a CPU shows: no graph break, and the flagged line is a host node of the graph
        # (traced on the meta device: a CPU tensor, a scalar read or a synchronisation).  The
        # CUDA-graph skip itself is measured on a CUDA machine (test_device_evidence below).
        if not torch.cuda.is_available():
            # the traced synchronisation would run in the eager backend and fail without a device
            monkeypatch.setattr(torch.accelerator, "synchronize", lambda *a, **k: None)
        breaks = _break_lines(dynamo.graph_breaks(model, args, config=config), path)
        assert not breaks & flagged, f"a sync rule's line breaks the graph: {sorted(breaks)}"
        hosts = {h.lineno for h in dynamo.host_ops(model, args, config=config) if h.filename == path}
        if example.kind == "bad":
            assert not breaks, f"bad example breaks at {sorted(breaks)}"
            assert flagged <= hosts, f"host nodes at {sorted(hosts)}, the spec flags {sorted(flagged)}"
        else:
            assert not breaks and not hosts, f"good example: breaks at {sorted(breaks)}, host nodes at {sorted(hosts)}"
    else:  # pragma: no cover - a new category needs a measurement here
        pytest.fail(f"no Dynamo check for category {spec.category}")


@contextlib.contextmanager
def _process_group(code: str):
    """A one-rank gloo process group around examples that use ``torch.distributed`` (what two
    ranks do is measured by tools/probe_distributed.py, bench/distributed-2.13.md)."""
    import tempfile

    import torch.distributed as dist

    if "torch.distributed" not in code or dist.is_initialized():
        yield
        return
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/rendezvous", rank=0, world_size=1)
        try:
            yield
        finally:
            dist.destroy_process_group()


def _deprecation_lines(model, args, path: str) -> set:
    """Lines of ``path`` where an eager call warned with a DeprecationWarning or FutureWarning."""
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model(*args)
    return {w.lineno for w in seen if w.filename == path and issubclass(w.category, (DeprecationWarning, FutureWarning))}


def _graph_code_per_rank(model, args, ranks=(0, 1)) -> list:
    """The graph Dynamo captures with ``dist.get_rank()`` answering each of ``ranks`` in turn."""
    import torch.distributed as dist

    codes = []
    for rank in ranks:
        graphs = []

        def backend(gm, example_inputs):
            graphs.append(gm.code)
            return gm.forward

        torch._dynamo.reset()
        saved = dist.get_rank
        dist.get_rank = lambda *a, **k: rank  # what Dynamo reads on that rank
        try:
            torch.compile(model, backend=backend)(*args)
        finally:
            dist.get_rank = saved
            torch._dynamo.reset()
        codes.append(graphs)
    return codes


def _fullgraph_error_lines(model, args, path: str) -> set:
    """Lines of ``path`` named by the error ``fullgraph=True`` raises (empty when it compiles)."""
    import re

    torch._dynamo.reset()
    try:
        torch.compile(model, backend="eager", fullgraph=True)(*args)
    except Exception as exc:  # noqa: BLE001 - the error is the measurement
        return {int(n) for n in re.findall(re.escape(path) + r'", line (\d+)', str(exc))} or {-1}
    finally:
        torch._dynamo.reset()
    return set()


def _check_amp_distributed(spec, example, model, args, path: str) -> None:
    flagged = set(example.flag)
    if spec.code == "PTC801":  # a deprecated API: torch warns at the call
        lines = _deprecation_lines(model, args, path)
        if example.kind == "bad":
            assert flagged <= lines, f"deprecation warnings at {sorted(lines)}, the spec flags {sorted(flagged)}"
        else:
            assert not lines, f"good example warns at {sorted(lines)}"
    elif spec.code == "PTC806":  # ranks compile different graphs
        rank0, rank1 = _graph_code_per_rank(model, args)
        if example.kind == "bad":
            assert rank0 != rank1, "rank 0 and rank 1 compiled the same graphs"
        else:
            assert rank0 == rank1, "good example compiles a different graph per rank"
    elif spec.code == "PTC802":  # autocast entered by hand: fullgraph=True fails at the line
        lines = _fullgraph_error_lines(model, args, path)
        if example.kind == "bad":
            assert flagged <= lines, f"fullgraph=True failed at {sorted(lines)}, the spec flags {sorted(flagged)}"
        else:
            assert not lines, f"good example fails with fullgraph=True at {sorted(lines)}"
    else:  # graph breaks
        lines = _break_lines(dynamo.graph_breaks(model, args), path)
        if example.kind == "bad":
            assert flagged <= lines, f"Dynamo broke at {sorted(lines)}, the spec flags {sorted(flagged)}"
        else:
            assert not lines, f"good example breaks at {sorted(lines)}"
def _device_cases():
    for code, spec in load_specs().items():
        if spec.needs_device:
            for i, ex in enumerate(spec.examples):
                if ex.run:
                    yield pytest.param(spec, ex, id=f"{code}-{ex.kind}-{i + 1}-{spec.needs_device}")


@pytest.mark.parametrize("spec,example", list(_device_cases()))
def test_device_evidence(spec, example, tmp_path):
    """On the device a spec names (``needs_device``): compiled with ``mode="reduce-overhead"``,
    a bad example skips CUDA graphs and a good one does not (``bench/cudagraphs_evidence.py``)."""
    if spec.needs_device == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device: run python bench/cudagraphs_evidence.py on one")
    from pathlib import Path

    bench = Path(__file__).resolve().parent.parent / "bench" / "cudagraphs_evidence.py"
    loader = importlib.util.spec_from_file_location("cudagraphs_evidence", bench)
    tool = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(tool)
    config = {_KNOBS[k]: v for k, v in example.config if k in _KNOBS}
    got = tool.measure(example.code, example.run, config, str(tmp_path))
    assert got["error"] is None, got["error"]
    if example.kind == "bad":
        assert got["skips"] or got["syncs"], f"no CUDA-graph skip and no sync seen: {got}"
    else:
        assert not got["skips"], f"good example skipped CUDA graphs: {got['skips']}"
