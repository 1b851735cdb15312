#!/usr/bin/env python
"""Measure what Dynamo (torch.compile) and torch.export really do with the code
patterns pt2lint flags, and check that the rule specs in ``rules/*.toml`` tell
the truth.

Ground truth only: every fact comes from running the pattern on the installed
torch. Nothing here is imported by pt2lint itself; this is a developer tool and
it needs torch (and numpy).

Usage (from the repository root, torch installed)::

    python tools/probe_patterns.py                       # all patterns, table on stdout
    python tools/probe_patterns.py -k item -k nonzero    # only patterns whose id contains these
    python tools/probe_patterns.py --write docs/dynamo-2.13-facts.md
    python tools/probe_patterns.py --json facts.json     # machine-readable results
    python tools/probe_patterns.py --check-rules         # verify every rules/*.toml example
    python tools/probe_patterns.py --check-rules --rule PTC101 -v
    python tools/probe_patterns.py --show -k item       # a pattern's source and raw break messages
    python tools/probe_patterns.py --show-rule PTC101   # what torch says for a spec's examples
    python tools/probe_patterns.py --write-evidence     # refill rules/*.toml `evidence` from a run

How a pattern is measured (``probe``):

* the snippet is written to a temporary ``.py`` file and imported, so Dynamo
  and the tracebacks have real source lines;
* ``graph_breaks`` and ``recompiles`` logging artifacts are captured with a
  ``logging.Handler`` (``torch._logging.set_logs(graph_breaks=True,
  recompiles=True)``); ``torch._dynamo.explain`` is not used because it misses
  breaks at the first op of a frame and breaks inside loops (where Dynamo
  skips the whole frame);
* each break is tied to a ``GBnnnn`` id through the ``gb/gbNNNN.html`` link
  in the message, or, failing that, by matching the ``Gb_type`` line against
  ``torch/_dynamo/graph_break_registry.json``;
* compile runs use ``backend="eager"``: default, ``fullgraph=True``, and
  default again with ``capture_scalar_outputs`` and
  ``capture_dynamic_output_shape_ops`` set;
* the module is called three times (fresh inputs from ``run`` each time) to
  see whether calls 2 and 3 recompile;
* ``torch.export.export`` is tried non-strict (the 2.13 default) and strict;
* input mutation: an eager call under a ``TorchDispatchMode`` records every
  aten op whose schema marks an argument as written (``alias_info.is_write``)
  when that argument shares storage with a tensor passed to ``forward``.

Exit status of ``--check-rules``: 0 when every example tells the truth, 1 when
any example lies (or a spec is malformed).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import itertools
import json
import logging
import os
import re
import sys
import tempfile
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

os.environ.setdefault("PYTHONBREAKPOINT", "0")  # breakpoint() must not stop the probe

import torch  # noqa: E402
import torch._dynamo  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_leaves  # noqa: E402

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parent.parent
KNOBS = ("capture_scalar_outputs", "capture_dynamic_output_shape_ops")

# --------------------------------------------------------------------------
# graph-break registry
# --------------------------------------------------------------------------

_REGISTRY: dict[str, str] | None = None


def registry() -> dict[str, str]:
    """GB id -> Gb_type, from torch/_dynamo/graph_break_registry.json."""
    global _REGISTRY
    if _REGISTRY is None:
        path = Path(torch._dynamo.__file__).parent / "graph_break_registry.json"
        raw = json.loads(path.read_text())
        _REGISTRY = {gid: entries[0]["Gb_type"] for gid, entries in raw.items()}
    return _REGISTRY


def gb_id_for_type(gb_type: str) -> str | None:
    for gid, t in registry().items():
        if t == gb_type:
            return gid
    return None


# --------------------------------------------------------------------------
# log capture
# --------------------------------------------------------------------------


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self._seen: set[int] = set()

    def emit(self, record: logging.LogRecord) -> None:
        if id(record) in self._seen:
            return
        self._seen.add(id(record))
        self.records.append(record)

    def messages(self, artifact: str) -> list[str]:
        return [r.getMessage() for r in self.records if r.name.endswith("__" + artifact)]


_LOGGER_NAMES = ("torch", "torch._dynamo", "torch.export", "torch._export")


@contextlib.contextmanager
def capture_logs():
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    handler = _Capture()
    loggers = [logging.getLogger(n) for n in _LOGGER_NAMES]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        yield handler
    finally:
        for lg in loggers:
            lg.removeHandler(handler)


@contextlib.contextmanager
def quiet():
    """Swallow stdout/stderr written by the pattern and by torch's log handlers."""
    out, err = io.StringIO(), io.StringIO()
    names = [n for n in logging.root.manager.loggerDict if n == "torch" or n.startswith("torch.")]
    saved = [(h, h.level) for n in names for h in getattr(logging.getLogger(n), "handlers", [])
             if not isinstance(h, _Capture)]
    for h, _ in saved:
        h.setLevel(logging.CRITICAL + 1)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield out
    finally:
        for h, lvl in saved:
            h.setLevel(lvl)


# --------------------------------------------------------------------------
# parsed facts
# --------------------------------------------------------------------------


@dataclass
class Break:
    line: int | None  # innermost line in the probed file
    lines: list[int]  # every line of the probed file on the user stack
    gb: str | None  # GBnnnn of the first (primary) graph break in the message
    gb_type: str  # its Gb_type text
    gbs: list[str]  # every GBnnnn mentioned (e.g. the loop fallback)
    src: str = ""  # the source text of ``line``


_GB_LINK = re.compile(r"/gb/gb(\d{4})\.html")
_AT = re.compile(r'Graph break(?: \([^)]*\))? in user code at (.+?):(\d+)')
_FRAME = re.compile(r'File "(.+?)", line (\d+)')


def parse_break(msg: str, path: str, source_lines: list[str]) -> Break:
    gbs = ["GB" + m for m in _GB_LINK.findall(msg)]
    # Gb_type: first non-empty line after the "Graph Break Reason: ...:" line
    gb_type = ""
    lines = msg.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("Graph Break Reason:"):
            rest = ln[len("Graph Break Reason:"):].strip()
            tail = [x.strip() for x in lines[i + 1:] if x.strip()]
            if rest.endswith(":") and tail:
                gb_type = tail[0]
            else:
                gb_type = rest
            break
    gb = gbs[0] if gbs else gb_id_for_type(gb_type)
    if gb and not gb_type:
        gb_type = registry().get(gb, "")
    if gb and registry().get(gb) and gb_type != registry()[gb]:
        # the message's first line may be a wrapper text; trust the registry
        gb_type = registry()[gb]
    at = _AT.search(msg)
    line = int(at.group(2)) if at and at.group(1) == path else None
    stack: list[int] = []
    if "User code traceback:" in msg:
        tb = msg.split("User code traceback:", 1)[1]
        stack = [int(n) for f, n in _FRAME.findall(tb) if f == path]
    if line is None and stack:
        line = stack[-1]
    all_lines = sorted(set(stack + ([line] if line else [])))
    src = source_lines[line - 1].strip() if line and line <= len(source_lines) else ""
    return Break(line, all_lines, gb, gb_type, gbs, src)


def _dedupe(breaks: list[Break]) -> list[Break]:
    seen, out = set(), []
    for b in breaks:
        key = (b.line, b.gb, b.gb_type)
        if key not in seen:
            seen.add(key)
            out.append(b)
    return out


def short_exc(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    gbs = ["GB" + m for m in _GB_LINK.findall(text)]
    if gbs:
        first += f" [{gbs[0]}]"
    return first[:300]


# --------------------------------------------------------------------------
# input-mutation detector
# --------------------------------------------------------------------------


class WriteToInput(TorchDispatchMode):
    """Record aten ops that write (schema ``alias_info.is_write``) into storage
    shared with one of the tensors passed to ``forward``."""

    supports_higher_order_operators = True  # torch.cond etc. pass through

    def __init__(self, inputs, path: str) -> None:
        super().__init__()
        self.path = path
        self.ptrs = set()
        for t in tree_leaves(inputs):
            if isinstance(t, torch.Tensor):
                with contextlib.suppress(Exception):
                    self.ptrs.add(t.untyped_storage().data_ptr())
        self.hits: list[tuple[int | None, str]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        schema = getattr(func, "_schema", None)
        if schema is None:  # a higher-order operator (torch.cond): run it unobserved
            return func(*args, **kwargs)
        for i, arg in enumerate(schema.arguments):
            if arg.alias_info is None or not arg.alias_info.is_write:
                continue
            if arg.kwarg_only or i >= len(args):
                val = kwargs.get(arg.name)
            else:
                val = args[i]
            for t in tree_leaves(val):
                if not isinstance(t, torch.Tensor):
                    continue
                try:
                    ptr = t.untyped_storage().data_ptr()
                except Exception:
                    continue
                if ptr in self.ptrs:
                    frames = [f for f in traceback.extract_stack() if f.filename == self.path]
                    line = frames[-1].lineno if frames else None
                    self.hits.append((line, str(func)))
        return func(*args, **kwargs)


# --------------------------------------------------------------------------
# probing one snippet
# --------------------------------------------------------------------------

_TMP = Path(tempfile.mkdtemp(prefix="pt2probe_"))
_counter = itertools.count()


def load_snippet(code: str):
    """Write ``code`` to a fresh temp module and import it. Returns (module, path)."""
    n = next(_counter)
    path = _TMP / f"pt2probe_{n}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(f"pt2probe_{n}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod, str(path)


def make(mod, run: str):
    ns = dict(vars(mod))
    ns.setdefault("torch", torch)
    model, args = eval(run, ns)  # noqa: S307 - developer tool, trusted snippets
    if not isinstance(args, tuple):
        args = (args,)
    return model, args


@dataclass
class Result:
    id: str = ""
    label: str = ""
    eager: str = "ok"
    breaks: list[Break] = field(default_factory=list)
    compile_error: str | None = None
    fullgraph: str = ""
    knob_breaks: list[Break] | None = None
    knob_fullgraph: str | None = None
    recompiles: list[str] = field(default_factory=list)
    export: str = ""
    export_strict: str = ""
    writes: list[tuple[int | None, str]] = field(default_factory=list)
    stdout: str = ""
    calls: int = 3


@contextlib.contextmanager
def dynamo_config(knobs: dict[str, bool]):
    with torch._dynamo.config.patch(**knobs):
        yield


def _compile_call(mod, run, path, src, *, fullgraph, knobs, calls=1, compile_kwargs=None):
    """Compile and call; returns (breaks, recompile messages, error or None)."""
    torch._dynamo.reset()
    err = None
    with capture_logs() as cap, dynamo_config(knobs), quiet():
        model, args = make(mod, run)
        cm = torch.compile(model, backend="eager", fullgraph=fullgraph, **(compile_kwargs or {}))
        try:
            cm(*args)
            first_recompiles = len(cap.messages("recompiles"))
            for _ in range(calls - 1):
                cm(*make(mod, run)[1])
        except Exception as e:  # noqa: BLE001
            err = short_exc(e)
            first_recompiles = 0
    breaks = _dedupe([parse_break(m, path, src) for m in cap.messages("graph_breaks")])
    recs = cap.messages("recompiles")[first_recompiles:] if err is None else []
    recs += [r.getMessage() for r in cap.records if "hit config.recompile_limit" in r.getMessage()]
    torch._dynamo.reset()
    return breaks, recs, err


def _export(mod, run, *, strict: bool, knobs=None) -> str:
    torch._dynamo.reset()
    with quiet(), dynamo_config(knobs or {}):
        model, args = make(mod, run)
        try:
            ep = torch.export.export(model, args, strict=strict)
            res = "ok"
            if not strict:
                # input mutations show up in the signature once functionalized
                mutated = ep.run_decompositions().graph_signature.user_inputs_to_mutate
                if mutated:
                    res = "ok, mutates inputs " + ", ".join(sorted(set(mutated.values())))
        except Exception as e:  # noqa: BLE001
            res = "fail: " + short_exc(e)
    torch._dynamo.reset()
    return res


def _eager_writes(mod, run, path):
    with quiet() as out:
        model, args = make(mod, run)
        mode = WriteToInput(args, path)
        with mode:
            model(*args)
    return mode.hits, out.getvalue()


def probe(code: str, run: str, *, knobs: dict[str, bool] | None = None,
          compile_kwargs: dict | None = None, do_export: bool = True,
          stdin: str | None = None, calls: int = 3) -> Result:
    """Measure one snippet. ``run`` evaluates (in the snippet's namespace) to
    ``(model, args)``; it is evaluated afresh for each measurement."""
    knobs = dict(knobs or {})
    mod, path = load_snippet(code)
    src = code.splitlines()
    r = Result(calls=calls)
    saved_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        try:
            r.writes, r.stdout = _eager_writes(mod, run, path)
        except Exception as e:  # noqa: BLE001
            r.eager = "fail: " + short_exc(e)
        r.breaks, r.recompiles, r.compile_error = _compile_call(
            mod, run, path, src, fullgraph=False, knobs=knobs, calls=calls,
            compile_kwargs=compile_kwargs)
        _, _, fg_err = _compile_call(mod, run, path, src, fullgraph=True, knobs=knobs,
                                     compile_kwargs=compile_kwargs)
        r.fullgraph = "ok" if fg_err is None else "fail: " + fg_err
        all_knobs = {**knobs, **{k: True for k in KNOBS}}
        if all_knobs != knobs:
            r.knob_breaks, _, kerr = _compile_call(mod, run, path, src, fullgraph=False,
                                                   knobs=all_knobs, compile_kwargs=compile_kwargs)
            _, _, kfg = _compile_call(mod, run, path, src, fullgraph=True, knobs=all_knobs,
                                      compile_kwargs=compile_kwargs)
            r.knob_fullgraph = "ok" if kfg is None else "fail: " + kfg
        if do_export:
            r.export = _export(mod, run, strict=False, knobs=knobs)
            r.export_strict = _export(mod, run, strict=True, knobs=knobs)
    finally:
        sys.stdin = saved_stdin
    return r


# --------------------------------------------------------------------------
# the patterns
# --------------------------------------------------------------------------

HEADER = '''import logging
import os
import pdb
import random
import time
import warnings
import zlib

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

logger = logging.getLogger("pt2probe")
logger.setLevel(logging.WARNING)
'''


def module_src(body: str, *, init: str = "", pre: str = "", sig: str = "self, x", base: str = "nn.Module") -> str:
    ind = lambda s, n: "\n".join((" " * n + ln) if ln.strip() else "" for ln in s.strip("\n").splitlines())  # noqa: E731
    init_block = "        super().__init__()\n" + (ind(init, 8) + "\n" if init.strip() else "")
    return (HEADER + (("\n" + pre.strip("\n") + "\n") if pre.strip() else "") + f"\n\nclass M({base}):\n"
            "    def __init__(self):\n" + init_block + "\n"
            f"    def forward({sig}):\n" + ind(body, 8) + "\n")


@dataclass
class Pattern:
    id: str
    label: str
    body: str
    run: str = "M(), (torch.randn(4, 8),)"
    init: str = ""
    pre: str = ""
    sig: str = "self, x"
    expect: str = ""  # what the catalog says it should do (for the notes column)
    stdin: str | None = None
    compile_kwargs: dict | None = None
    knobs: dict | None = None  # torch._dynamo.config values for every run of this pattern
    base: str = "nn.Module"
    calls: int = 3  # compiled calls (fresh inputs each); recompiles are counted from call 2

    def code(self) -> str:
        return module_src(self.body, init=self.init, pre=self.pre, sig=self.sig, base=self.base)


P = Pattern
RAND2 = "M(), (torch.randn(4, 8), torch.randn(4, 8))"
POS = "M(), (torch.rand(4, 8) + 0.1,)"

PATTERNS: list[Pattern] = [
    # --- data-dependent scalars -------------------------------------------
    P("item", "`x.sum().item()`", "return x * x.sum().item()"),
    P("tolist", "`x.sum(0).tolist()` (float tensor)", "v = x.sum(0).tolist()\nreturn x * v[0]"),
    P("tolist-int", "`n.tolist()` (int64 tensor)", "v = n.tolist()\nreturn x * v[0]", sig="self, x, n",
      run="M(), (torch.randn(4, 8), torch.tensor([2, 3]))"),
    P("numpy", "`x.numpy()` then numpy ops", "a = x.numpy()\nb = np.sin(a) * 2\nreturn torch.from_numpy(b) + 1"),
    P("int-t", "`int(t)`", "return x * int(x.sum())"),
    P("float-t", "`float(t)`", "return x * float(x.sum())"),
    P("bool-t", "`bool(t)`", "return x * bool(x.sum() > 0)"),
    P("complex-t", "`complex(t)`", "c = complex(x.sum())\nreturn x * c.real"),
    P("if-tensor", "`if t.sum() > 0:`", "if x.sum() > 0:\n    return x * 2\nreturn x"),
    P("if-bare-tensor", "`if t:` (bool tensor)", "if (x > 0).all():\n    return x * 2\nreturn x"),
    P("while-tensor", "`while` on a tensor", "y = x.abs() + 1\nwhile y.max() < 100:\n    y = y * 2\nreturn y"),
    P("ternary-tensor", "ternary on a tensor", "return x * 2 if x.sum() > 0 else x"),
    P("compr-if-tensor", "comprehension `if` on a tensor",
      "ys = [r for r in x if r.sum() > 0]\nreturn torch.stack(ys) if ys else x"),
    P("assert-tensor", "`assert (t >= 0).all()`", 'assert (x >= 0).all(), "negative"\nreturn x + 1', run=POS),
    P("not-any", "`not t.any()`", "if not (x > 5).any():\n    return x + 1\nreturn x"),
    P("any-and-flag", "`t.any() and flag`", "if (x > 0).any() and self.flag:\n    return x + 1\nreturn x",
      init="self.flag = True"),
    P("and-value", "`t.any() and flag` as a value", "ok = (x > 0).any() and self.flag\nreturn x, ok",
      init="self.flag = True"),
    P("int-of-bool-knob", "`int(t > 0)` with `capture_scalar_outputs=True`", "return x * int(x.sum() > 0)",
      knobs={"capture_scalar_outputs": True}),
    P("bool-t-knob", "`bool(t)` with `capture_scalar_outputs=True`", "return x * bool(x.sum() > 0)",
      knobs={"capture_scalar_outputs": True}),
    P("assert-async", "`torch._assert_async((x >= 0).all())`", 'torch._assert_async((x >= 0).all(), "negative")\nreturn x + 1',
      run=POS),
    P("assert-shape", "`assert x.shape[0] > 0`", "assert x.shape[0] > 0\nreturn x + 1"),
    P("shape-branch", "`if x.shape[0] > 1:`", "if x.shape[0] > 1:\n    return x * 2\nreturn x"),
    P("shape-branch-dyn", "`if x.shape[0] > 1:` with dynamic=True", "if x.shape[0] > 1:\n    return x * 2\nreturn x",
      compile_kwargs={"dynamic": True}),
    P("numel-dim-branch", "`if x.dim() == 2 and x.numel() > 4:`",
      "if x.dim() == 2 and x.numel() > 4:\n    return x * 2\nreturn x"),
    P("training-branch", "`if self.training:`", "if self.training:\n    return x * 2\nreturn x"),
    P("mask-is-none", "`if mask is None:`", "if mask is None:\n    return x\nreturn x * mask",
      sig="self, x, mask=None"),
    P("where-3arg", "`torch.where(x > 0, x, 0)` (three-arg)", "return torch.where(x > 0, x, torch.zeros_like(x))"),
    P("item-then-branch", "`.item()` then `if v > 0` (knob on)", "v = x.sum().item()\nif v > 0:\n    return x * 2\nreturn x"),
    # --- dynamic shapes -------------------------------------------------
    P("bool-mask-index", "`x[x > 0]` (bool mask)", "return x[x > 0]"),
    P("bool-mask-assign", "`x[x > 0] = 0` on a clone (bool-mask store)", "y = x.clone()\ny[y > 0] = 0\nreturn y"),
    P("int-index", "`x[idx]` (int64 index tensor)", "return x[idx]", sig="self, x, idx",
      run="M(), (torch.randn(4, 8), torch.tensor([0, 2]))"),
    P("torch-nonzero", "`torch.nonzero(x)`", "return torch.nonzero(x)"),
    P("method-nonzero", "`x.nonzero()`", "return x.nonzero()"),
    P("nonzero-as-tuple", "`torch.nonzero(x, as_tuple=True)`", "return torch.nonzero(x, as_tuple=True)"),
    P("unique", "`torch.unique(x)`", "return torch.unique(x)"),
    P("unique-consecutive", "`torch.unique_consecutive(x)`", "return torch.unique_consecutive(x)"),
    P("masked-select", "`torch.masked_select(x, x > 0)`", "return torch.masked_select(x, x > 0)"),
    P("bincount", "`torch.bincount(idx)`", "return torch.bincount(x)",
      run="M(), (torch.randint(0, 5, (10,)),)"),
    P("where-1arg", "`torch.where(c)` (one-arg)", "return torch.where(x > 0)[0]"),
    P("argwhere", "`torch.argwhere(x)`", "return torch.argwhere(x)"),
    P("repeat-interleave", "`torch.repeat_interleave(x, repeats_tensor)`", "return torch.repeat_interleave(x, r, dim=0)",
      sig="self, x, r", run="M(), (torch.randn(4, 8), torch.tensor([1, 2, 1, 3]))"),
    P("repeat-interleave-int", "`torch.repeat_interleave(x, 2)` (int repeats)", "return torch.repeat_interleave(x, 2, dim=0)"),
    P("nonzero-static", "`torch.nonzero_static(x, size=4)`", "return torch.nonzero_static(x, size=4)"),
    # --- side effects / untraceable calls -------------------------------
    P("print-const", '`print("constant")`', 'print("constant")\nreturn x + 1'),
    P("print-shape", "`print(x.shape)`", "print(x.shape)\nreturn x + 1"),
    P("logger-info", "`logger.info(...)` (logging.getLogger)", 'logger.info("step %s", 1)\nreturn x + 1'),
    P("logging-info", "`logging.info(...)`", 'logging.info("step")\nreturn x + 1'),
    P("logger-debug-dropped", "`logger.debug` when the level drops it", 'logger.debug("dropped")\nreturn x + 1'),
    P("logger-isenabled", "`if logger.isEnabledFor(logging.DEBUG):`",
      'if logger.isEnabledFor(logging.DEBUG):\n    x = x + 1\nreturn x + 1'),
    P("warnings-warn", "`warnings.warn(...)`", 'warnings.warn("careful")\nreturn x + 1'),
    P("breakpoint", "`breakpoint()` (PYTHONBREAKPOINT=0)", "breakpoint()\nreturn x + 1"),
    P("pdb-set-trace", "`pdb.set_trace()` (stdin fed `c`)", "pdb.set_trace()\nreturn x + 1", stdin="c\n" * 50),
    P("random-random", "`random.random()`", "return x * random.random()"),
    P("random-randint", "`random.randint(0, 10)`", "return x * random.randint(0, 10)"),
    P("random-randint-roll", "`k = random.randint(0, 3)` then `torch.roll(x, k, dims=-1)`", "k = random.randint(0, 3)\nreturn torch.roll(x, k, dims=-1)"),
    P("random-uniform", "`random.uniform(0, 1)`", "return x * random.uniform(0, 1)"),
    P("random-randrange", "`random.randrange(10)`", "return x * random.randrange(10)"),
    P("random-choice", "`random.choice([1, 2])`", "return x * random.choice([1, 2])"),
    P("random-gauss", "`random.gauss(0, 1)`", "return x * random.gauss(0, 1)"),
    P("time-time", "`time.time()`", "t0 = time.time()\nreturn x + t0"),
    P("time-perf-counter", "`time.perf_counter()`", "t0 = time.perf_counter()\nreturn x + t0"),
    P("time-monotonic", "`time.monotonic()`", "t0 = time.monotonic()\nreturn x + t0"),
    P("np-random-rand", "`np.random.rand()`", "return x * np.random.rand()"),
    P("torch-rand", "`torch.rand_like(x)` (torch RNG)", "return x * torch.rand_like(x)"),
    P("random-seed", "`random.seed(0)`", "random.seed(0)\nreturn x + 1"),
    P("np-random-seed", "`np.random.seed(0)`", "np.random.seed(0)\nreturn x + 1"),
    P("torch-random-manual-seed", "`torch.random.manual_seed(0)`", "torch.random.manual_seed(0)\nreturn x + 1"),
    P("manual-seed", "`torch.manual_seed(0)`", "torch.manual_seed(0)\nreturn x + 1"),
    P("zlib-crc32", '`zlib.crc32(b"x")`', 'h = zlib.crc32(b"x")\nreturn x + h'),
    P("autograd-grad", "`torch.autograd.grad` in forward",
      "y = (x * x).sum()\n(g,) = torch.autograd.grad(y, x, create_graph=True)\nreturn g",
      run="M(), (torch.randn(4, 8, requires_grad=True),)"),
    P("backward", "`loss.backward()` in forward", "y = (x * x).sum()\ny.backward()\nreturn x + 1",
      run="M(), (torch.randn(4, 8, requires_grad=True),)"),
    P("autograd-grad-knob", "`torch.autograd.grad` with `trace_autograd_ops=True`",
      "y = (x * x).sum()\n(g,) = torch.autograd.grad(y, x, create_graph=True)\nreturn g",
      run="M(), (torch.randn(4, 8, requires_grad=True),)", knobs={"trace_autograd_ops": True}),
    P("backward-knob", "`loss.backward()` with `trace_autograd_ops=True`", "y = (x * x).sum()\ny.backward()\nreturn x + 1",
      run="M(), (torch.randn(4, 8, requires_grad=True),)", knobs={"trace_autograd_ops": True}),
    P("requires-grad_-knob", "`x.requires_grad_()` with `trace_autograd_ops=True`", "x.requires_grad_()\nreturn x * 2",
      knobs={"trace_autograd_ops": True}),
    P("explicit-graph-break", "`torch._dynamo.graph_break()`", "y = x + 1\ntorch._dynamo.graph_break()\nreturn y * 2"),
    P("disabled-fn", "calling a `@torch.compiler.disable` function",
      "y = x + 1\ny = helper(y)\nreturn y * 2",
      pre="@torch.compiler.disable\ndef helper(t):\n    return t * 3"),
    P("dynamo-disabled-fn", "calling a `@torch._dynamo.disable` function",
      "y = x + 1\ny = helper(y)\nreturn y * 2",
      pre="@torch._dynamo.disable\ndef helper(t):\n    return t * 3"),
    P("disabled-method", "calling a `@torch.compiler.disable` method via `self`",
      "y = x + 1\ny = self.helper(y)\nreturn y * 2",
      pre="class Base(nn.Module):\n    @torch.compiler.disable\n    def helper(self, t):\n        return t * 3",
      base="Base"),
    P("disabled-nonrecursive", "calling a `@torch.compiler.disable(recursive=False)` function",
      "y = x + 1\ny = helper(y)\nreturn y * 2",
      pre="@torch.compiler.disable(recursive=False)\ndef helper(t):\n    return t * 3"),
    P("binascii-crc32", '`binascii.crc32(b"x")`', 'import binascii\nh = binascii.crc32(b"x")\nreturn x + h'),
    P("hashlib-sha256", '`hashlib.sha256(b"x")`', 'import hashlib\nd = hashlib.sha256(b"x")\nreturn x + 1'),
    P("os-getpid", "`os.getpid()`", "p = os.getpid()\nreturn x + p % 3"),
    P("struct-pack", '`struct.pack("f", 1.0)`', 'import struct\nb = struct.pack("f", 1.0)\nreturn x + len(b)'),
    P("math-sqrt-shape", "`math.sqrt(x.shape[-1])`", "import math\nreturn x / math.sqrt(x.shape[-1])"),
    P("np-pi", "`x * np.pi`", "return x * np.pi"),
    P("no-grad-block", "`with torch.no_grad():`", "with torch.no_grad():\n    y = x * 2\nreturn y + x"),
    P("generator-arg", "`torch.rand(..., generator=self.g)` (Generator made in `__init__`)",
      "return x + torch.rand(x.shape, generator=self.g)", init="self.g = torch.Generator().manual_seed(0)"),
    P("is-compiling-guard", "`if not torch.compiler.is_compiling(): print(...)`",
      'if not torch.compiler.is_compiling():\n    print("eager only")\nreturn x + 1'),
    P("jit-is-scripting-guard", "`if not torch.jit.is_scripting(): print(...)`",
      'if not torch.jit.is_scripting():\n    print("not scripting")\nreturn x + 1'),
    P("os-environ-get", '`os.environ.get("HOME")`', 'if os.environ.get("PT2PROBE_FLAG"):\n    return x * 2\nreturn x + 1'),
    P("open-file", "`open(...)` in forward", 'with open(__file__) as f:\n    n = len(f.readline())\nreturn x + n'),
    P("str-tensor", "`str(t)`", "s = str(x)\nreturn x + 1, s"),
    P("fstring-tensor", "f-string of a tensor", 's = f"sum={x.sum()}"\nreturn x + 1, s'),
    P("repr-tensor", "`t.__repr__()`", "s = x.__repr__()\nreturn x + 1, s"),
    P("hash-tensor", "`hash(t)`", "h = hash(x)\nreturn x + 1, h"),
    P("id-tensor", "`id(t)` (value used)", "k = id(x)\nreturn x + (k % 7)"),
    # --- module state / recompiles --------------------------------------
    P("counter", "`self.counter += 1`", "self.counter += 1\nreturn x + 1", init="self.counter = 0"),
    P("counter-12-calls", "`self.counter += 1`, 12 calls", "self.counter += 1\nreturn x + 1", init="self.counter = 0",
      calls=12),
    P("history-append", "`self.history.append(1)`", "self.history.append(1)\nreturn x + len(self.history)",
      init="self.history = []"),
    P("history-append-unread", "`self.history.append(1)` (length not read)", "self.history.append(1)\nreturn x + 1",
      init="self.history = []"),
    P("calls-rebind", "`self.calls = self.calls + 1`", "self.calls = self.calls + 1\nreturn x + 1", init="self.calls = 0"),
    P("same-const-attr", "`self.last = 0.5` (same constant each call)", "self.last = 0.5\nreturn x + 1", init="self.last = 0.0"),
    P("cache-attr", "`self.cache = x` (tensor attribute set)", "self.cache = x * 2\nreturn x + 1",
      init="self.cache = None"),
    P("id-self", "`id(self)`", "k = id(self)\nreturn x + (k % 7)"),
    P("id-cache-key", "`id(x)` as a cache key", "k = id(x)\nif k not in self.memo:\n    self.memo[k] = x * 2\nreturn self.memo[k]",
      init="self.memo = {}"),
    # --- input mutation -------------------------------------------------
    P("add_", "`x.add_(1)`", "x.add_(1)\nreturn x"),
    P("iadd", "`x += 1`", "x += 1\nreturn x"),
    P("setitem", "`x[:, 0] = 0`", "x[:, 0] = 0\nreturn x"),
    P("out-kw", "`torch.add(a, b, out=x)`", "torch.add(a, b, out=x)\nreturn x", sig="self, x, a, b",
      run="M(), (torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8))"),
    P("relu-inplace-fn", "`F.relu(x, inplace=True)`", "return F.relu(x, inplace=True)"),
    P("relu-inplace-mod", "`nn.ReLU(inplace=True)` on input", "return self.act(x)", init="self.act = nn.ReLU(inplace=True)"),
    P("view-mul_", "`h = x.view(-1); h.mul_(2)`", "h = x.view(-1)\nh.mul_(2)\nreturn h"),
    P("alias-add_", "`h = x; h.add_(1)`", "h = x\nh.add_(1)\nreturn h"),
    P("select-zero_", "`x[0].zero_()`", "x[0].zero_()\nreturn x"),
    P("float-noop-add_", "`x.float().add_(1)` (float32 input)", "y = x.float()\ny.add_(1)\nreturn y"),
    P("float-copy-add_", "`x.float().add_(1)` (float16 input)", "y = x.float()\ny.add_(1)\nreturn y",
      run="M(), (torch.randn(4, 8).half(),)"),
    P("list-input", "`xs[0].add_(1)` (list input)", "xs[0].add_(1)\nreturn xs[0] + xs[1]", sig="self, xs",
      run="M(), ([torch.randn(4, 8), torch.randn(4, 8)],)"),
    P("dict-input", '`d["a"].mul_(2)` (dict input)', 'd["a"].mul_(2)\nreturn d["a"]', sig="self, d",
      run='M(), ({"a": torch.randn(4, 8)},)'),
    P("clone-add_", "`y = x.clone(); y.add_(1)`", "y = x.clone()\ny.add_(1)\nreturn y"),
    P("data-add_", "`x.data.add_(1)`", "x.data.add_(1)\nreturn x"),
    P("copy_", "`x.copy_(y)`", "x.copy_(y)\nreturn x", sig="self, x, y", run=RAND2),
    P("masked-fill_", "`x.masked_fill_(m, 0)`", "x.masked_fill_(x > 0, 0)\nreturn x"),
    P("requires-grad_", "`x.requires_grad_()`", "x.requires_grad_()\nreturn x * 2"),
    P("param-inplace", "in-place on a parameter (`self.w.data.mul_`)", "self.w.data.mul_(0.5)\nreturn x * self.w",
      init="self.w = nn.Parameter(torch.ones(8))"),
    P("buffer-inplace", "in-place on a buffer (`self.n += 1`)", "self.n += 1\nreturn x + self.n",
      init='self.register_buffer("n", torch.zeros(()))'),
    # --- misc -----------------------------------------------------------
    P("generator", "generator with `yield` in a helper", "return sum(gen(x))",
      pre="def gen(t):\n    for i in range(3):\n        yield t * i"),
    P("torch-cond", "`torch.cond`", "return torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))"),
    P("cpu", "`x.cpu()`", "return x.cpu() + 1"),
    P("to-cpu", '`x.to("cpu")`', 'return x.to("cpu") + 1'),
    P("torch-equal", "`torch.equal(a, b)`", "if torch.equal(x, y):\n    return x\nreturn y", sig="self, x, y", run=RAND2),
    P("tensor-equal-method", "`x.equal(y)`", "same = x.equal(y)\nreturn x * same", sig="self, x, y", run=RAND2),
    P("torch-equal-value", "`torch.equal(a, b)` as a value", "same = torch.equal(x, y)\nreturn x * same", sig="self, x, y", run=RAND2),
    P("allclose", "`torch.allclose(a, b)`", "if torch.allclose(x, y):\n    return x\nreturn y", sig="self, x, y", run=RAND2),
    P("max-builtin", "`max(t1.sum(), t2.sum())`", "m = max(x.sum(), y.sum())\nreturn x * m", sig="self, x, y", run=RAND2),
    P("for-in-tensor", "`for v in t:`", "out = []\nfor v in x:\n    out.append(v * 2)\nreturn torch.stack(out)"),
    P("range-size", "`for i in range(t.size(0))`", "out = []\nfor i in range(x.size(0)):\n    out.append(x[i] * 2)\nreturn torch.stack(out)"),
    P("range-tensor", "`for i in range(int(n))` with n a tensor", "out = x\nfor i in range(int(n)):\n    out = out * 2\nreturn out",
      sig="self, x, n", run="M(), (torch.randn(4, 8), torch.tensor(3))"),
    P("len-t", "`len(t)`", "return x * len(x)"),
    P("data-ptr", "`x.data_ptr()`", "p = x.data_ptr()\nreturn x + 1, p"),
    P("isinstance", "`isinstance(x, torch.Tensor)`", "if isinstance(x, torch.Tensor):\n    return x * 2\nreturn x"),
    P("dtype-compare", "`x.dtype == torch.float16`", "if x.dtype == torch.float16:\n    return x.float()\nreturn x * 2"),
    P("device-type", '`x.device.type == "cuda"`', 'if x.device.type == "cuda":\n    return x * 3\nreturn x * 2'),
    P("modulelist-loop", "loop over `nn.ModuleList`", "for layer in self.layers:\n    x = layer(x)\nreturn x",
      init="self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])"),
    P("item-in-init", "`.item()` in `__init__`", "return x * self.scale", init="self.scale = torch.tensor(2.0).item()"),
]


# --------------------------------------------------------------------------
# reporting
# --------------------------------------------------------------------------


def _fmt_breaks(bs: list[Break] | None) -> tuple[str, str, str]:
    if not bs:
        return "n", "", ""
    reasons = "; ".join(dict.fromkeys(b.gb_type for b in bs))
    gbs = ", ".join(dict.fromkeys(
        "+".join(b.gbs) if len(b.gbs) > 1 else (b.gb or "?") for b in bs))
    return f"y ({len(bs)})" if len(bs) > 1 else "y", reasons, gbs


def _short(s: str, n: int = 90) -> str:
    s = s.replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def knob_effect(r: Result) -> str:
    if r.knob_breaks is None:
        return "-"
    before = {(b.line, b.gb) for b in r.breaks}
    after = {(b.line, b.gb) for b in r.knob_breaks}
    fg = "fullgraph " + ("ok" if r.knob_fullgraph == "ok" else "fails")
    if before == after:
        return "none" if before else f"none ({fg})"
    if not after:
        return f"no break ({fg})"
    return "breaks: " + ", ".join(sorted({b.gb or "?" for b in r.knob_breaks})) + f" ({fg})"


def other_effects(r: Result) -> str:
    parts = []
    if r.eager != "ok":
        parts.append("eager " + r.eager)
    if r.compile_error:
        parts.append("compiled call raised " + r.compile_error)
    if r.writes:
        ops = sorted({".".join(op.split(".")[:2]) for _, op in r.writes})
        parts.append("writes input (" + ", ".join(ops) + ")")
    limit = [m for m in r.recompiles if "hit config.recompile_limit" in m]
    recompiles = [m for m in r.recompiles if m not in limit]
    if recompiles:
        first = recompiles[0]
        m = re.search(r"triggered by the following guard failure\(s\):\s*-\s*\d+/\d+:\s*(.+)", first)
        reason = m.group(1).split("  #")[0].strip() if m else first.splitlines()[0]
        reason = re.sub(r"== -?\d+(\.\d+)?\b", "== <value>", _norm(reason))
        reason = f"guard `{reason[:60]}` failed"
        parts.append(f"recompiles ({len(recompiles)} in calls 2-{r.calls}): {reason}")
    if limit:
        parts.append("then: " + limit[0].splitlines()[0].strip())
    return "; ".join(parts)


def table(results: list[tuple[Pattern, Result]]) -> str:
    head = ("| id | pattern | breaks | reason (Gb_type) | GB | line | fullgraph=True | knobs | "
            "export (non-strict) | export (strict) | other |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    rows = []
    for p, r in results:
        brk, reason, gbs = _fmt_breaks(r.breaks)
        line = "; ".join(dict.fromkeys(f"`{b.src}`" for b in r.breaks if b.src))
        rows.append("| " + " | ".join([
            p.id, p.label, brk, _short(reason, 80), gbs, _short(line, 60),
            _short(r.fullgraph, 70), knob_effect(r),
            _short(r.export, 70), _short(r.export_strict, 70), _short(other_effects(r), 120),
        ]) + " |")
    return head + "\n".join(rows) + "\n"


# --------------------------------------------------------------------------
# --check-rules
# --------------------------------------------------------------------------

SPEC_KEYS = {"code", "name", "category", "severity", "targets", "gb_types", "knob", "summary",
             "why", "fix", "references", "evidence", "examples"}
REQUIRED_KEYS = SPEC_KEYS - {"knob"}
EXAMPLE_KEYS = {"kind", "flag", "code", "run", "config", "note"}
CATEGORIES = {"internal", "data-dependent", "dynamic-shape", "side-effect", "input-mutation",
              "recompile", "export", "sync", "amp-distributed"}
BREAK_CATEGORIES = {"data-dependent", "dynamic-shape", "side-effect"}
CONFIG_KNOBS = {"capture-scalar-outputs": "capture_scalar_outputs",
                "capture-dynamic-output-shape-ops": "capture_dynamic_output_shape_ops"}


def _spec_problems(path: Path, spec: dict) -> list[str]:
    errs = []
    unknown = set(spec) - SPEC_KEYS
    missing = REQUIRED_KEYS - set(spec)
    if unknown:
        errs.append(f"unknown keys {sorted(unknown)}")
    if missing:
        errs.append(f"missing keys {sorted(missing)}")
    code, name = spec.get("code", ""), spec.get("name", "")
    if path.name != f"{code}-{name}.toml":
        errs.append(f"file name should be {code}-{name}.toml")
    if spec.get("category") not in CATEGORIES:
        errs.append(f"bad category {spec.get('category')!r}")
    if spec.get("severity") not in {"error", "warning", "info"}:
        errs.append(f"bad severity {spec.get('severity')!r}")
    if not set(spec.get("targets", [])) <= {"compile", "export", "cudagraphs"} or not spec.get("targets"):
        errs.append(f"bad targets {spec.get('targets')!r}")
    for gid in spec.get("gb_types", []):
        if gid not in registry():
            errs.append(f"{gid} is not in graph_break_registry.json")
    if "knob" in spec and spec["knob"] not in KNOBS:
        errs.append(f"unknown knob {spec['knob']!r}")
    exs = spec.get("examples", [])
    bad = [e for e in exs if e.get("kind") == "bad"]
    good = [e for e in exs if e.get("kind") == "good"]
    if spec.get("category") != "internal" and (len(bad) < 2 or len(good) < 3):
        errs.append(f"needs >= 2 bad and >= 3 good examples (has {len(bad)}/{len(good)})")
    for i, e in enumerate(exs, 1):
        if set(e) - EXAMPLE_KEYS:
            errs.append(f"example {i}: unknown keys {sorted(set(e) - EXAMPLE_KEYS)}")
        if e.get("kind") not in {"bad", "good"}:
            errs.append(f"example {i}: bad kind {e.get('kind')!r}")
        if e.get("kind") == "bad" and not e.get("flag"):
            errs.append(f"example {i}: a bad example needs flag lines")
        if e.get("kind") == "good" and e.get("flag"):
            errs.append(f"example {i}: a good example has no flag lines")
        n = len(e.get("code", "").splitlines())
        for ln in e.get("flag", []):
            if not 1 <= ln <= n:
                errs.append(f"example {i}: flag line {ln} outside 1..{n}")
        if (e.get("kind") == "bad" and spec.get("category") not in {"internal", "sync"}
                and not e.get("run")):
            errs.append(f"example {i}: a bad example needs `run`")
        for k in e.get("config", {}):
            if k not in {*CONFIG_KNOBS, "target"}:
                errs.append(f"example {i}: unknown config key {k!r}")
    return errs


def _knobs_of(example: dict) -> dict[str, bool]:
    cfg = example.get("config", {})
    return {CONFIG_KNOBS[k]: bool(v) for k, v in cfg.items() if k in CONFIG_KNOBS}


def check_example(spec: dict, ex: dict) -> tuple[bool, str]:
    """Run one spec example; returns (tells the truth, explanation).

    Graph-break rules: every flagged line of a bad example must be the line
    of a graph break whose GB id is in ``gb_types``; when ``targets`` lists
    ``export``, ``torch.export.export`` (non-strict) must fail too. Input
    mutation: every flagged line must write into a forward input's storage.
    Recompile: calls 2 and 3 (fresh inputs) must recompile. Export-only:
    ``torch.export.export`` fails while ``torch.compile`` does not break at the
    flagged lines. Good examples with ``run`` must be clean.
    """
    saved = sys.stdin
    sys.stdin = io.StringIO("c\n" * 200)  # a pdb.set_trace() that runs continues at once
    try:
        return _check_example(spec, ex)
    finally:
        sys.stdin = saved


def _parse_error_line(code: str) -> int | None:
    import libcst

    try:
        libcst.parse_module(code)
    except libcst.ParserSyntaxError as e:
        return e.raw_line
    return None


def _check_example(spec: dict, ex: dict) -> tuple[bool, str]:
    cat = spec["category"]
    code = ex["code"]
    if spec["code"] == "PTC001":
        line = _parse_error_line(code)
        if ex["kind"] == "good":
            return (line is None, "parses" if line is None else f"does not parse (line {line})")
        try:
            compile(code, "<example>", "exec")
            py_line = None
        except SyntaxError as e:
            py_line = e.lineno
        ok = line is not None and set(ex["flag"]) == {line} == {py_line}
        return ok, f"LibCST parse error at line {line}, CPython at line {py_line}"
    if cat == "internal":
        return True, "not executable (internal rule)"
    if cat == "amp-distributed":
        # needs a process group or a deprecation-warning check: tests/test_spec_evidence.py
        # measures these examples, tools/probe_distributed.py the two-rank behaviour
        return True, "measured by tests/test_spec_evidence.py (and tools/probe_distributed.py)"
    run = ex.get("run")
    knobs = _knobs_of(ex)
    mod, path = load_snippet(code)
    src = code.splitlines()
    gb_types = set(spec.get("gb_types", []))
    target = ex.get("config", {}).get("target")
    if ex["kind"] == "bad":
        flags = set(ex["flag"])
        if cat in BREAK_CATEGORIES:
            breaks, _, err = _compile_call(mod, run, path, src, fullgraph=False, knobs=knobs)
            if err:
                return False, f"compiled call raised {err}"
            hit = {b.line for b in breaks if b.line in flags and (not gb_types or b.gb in gb_types)}
            missing = flags - hit
            if missing:
                seen = ", ".join(f"line {b.line} {b.gb} {b.gb_type!r}" for b in breaks) or "no break"
                return False, f"lines {sorted(missing)} do not break with {sorted(gb_types)} (saw: {seen})"
            _GB_SEEN.setdefault(spec["code"], set()).update(b.gb for b in breaks if b.line in flags)
            msg = "breaks: " + ", ".join(f"{b.line}:{b.gb}" for b in breaks)
            if "export" in spec["targets"] and target != "compile":
                res = _export(mod, run, strict=False, knobs=knobs)
                if res.startswith("ok"):
                    return False, msg + "; but torch.export.export succeeds (drop 'export' from targets?)"
                msg += "; export " + res[:80]
            return True, msg
        if cat == "input-mutation":
            writes, _ = _eager_writes(mod, run, path)
            missing = flags - {ln for ln, _ in writes}
            if missing:
                return False, f"lines {sorted(missing)} do not write into a forward input (saw {writes})"
            breaks, _, err = _compile_call(mod, run, path, src, fullgraph=False, knobs=knobs)
            if err or breaks:
                return False, f"not a plain input mutation: compile {err or [b.gb for b in breaks]}"
            _, _, fg_err = _compile_call(mod, run, path, src, fullgraph=True, knobs=knobs)
            if fg_err:
                return False, f"torch.compile(fullgraph=True) raises {fg_err}"
            msg = "writes: " + ", ".join(f"{ln}:{op}" for ln, op in writes) + "; no graph break"
            if "export" in spec["targets"]:
                res = _export(mod, run, strict=False, knobs=knobs)
                if res == "ok":
                    return False, msg + "; export neither records an input mutation nor fails"
                msg += "; export " + res
            return True, msg
        if cat == "recompile":
            breaks, recs, err = _compile_call(mod, run, path, src, fullgraph=False, knobs=knobs, calls=3)
            if err:
                return False, f"compiled call raised {err}"
            if not recs:
                return False, "no recompile in calls 2-3"
            if breaks:
                return False, "also breaks the graph: " + ", ".join(f"{b.line}:{b.gb}" for b in breaks)
            guard = re.search(r"guard failure\(s\):\s*-\s*\d+/\d+:\s*(.+)", recs[0])
            return True, f"{len(recs)} recompile(s): " + (guard.group(1).split("  #")[0].strip()[:80] if guard else "")
        if cat == "export":
            # export-only: must fail torch.export (non-strict, the default) ...
            res = _export(mod, run, strict=False, knobs=knobs)
            if res == "ok":
                return False, "torch.export.export succeeded"
            # ... while plain torch.compile takes it without a break at the flagged lines
            breaks, _, err = _compile_call(mod, run, path, src, fullgraph=False, knobs=knobs)
            bad_lines = {b.line for b in breaks} & flags
            if err or bad_lines:
                return False, f"torch.compile also breaks/raises there ({err or sorted(bad_lines)}): not export-only"
            _, _, fg_err = _compile_call(mod, run, path, src, fullgraph=True, knobs=knobs)
            if fg_err:
                return False, f"torch.compile(fullgraph=True) raises {fg_err}: not export-only"
            return True, res + "; compile and fullgraph=True ok"
        return True, "not executable (category %s)" % cat
    # good example
    if not run:
        return True, "static only"
    if cat == "export" or target == "export":
        res = _export(mod, run, strict=False, knobs=knobs)
        if not res.startswith("ok"):
            return False, f"export fails: {res}"
    breaks, recs, err = _compile_call(mod, run, path, src, fullgraph=False, knobs=knobs, calls=3)
    if err:
        return False, f"compiled call raised {err}"
    if breaks:
        return False, "breaks: " + ", ".join(f"line {b.line} {b.gb} {b.gb_type!r}" for b in breaks)
    if recs:
        return False, f"recompiles: {recs[0].splitlines()[0]}"
    writes, _ = _eager_writes(mod, run, path)
    if writes:
        return False, f"writes into a forward input: {writes}"
    return True, "clean (no break, no recompile, no input write)"


_GB_SEEN: dict[str, set[str]] = {}


def check_rules(rules_dir: Path, only: list[str], verbose: bool) -> int:
    files = sorted(rules_dir.glob("*.toml"))
    if not files:
        print(f"no rule specs in {rules_dir}")
        return 1
    lies = 0
    codes: dict[str, Path] = {}
    for f in files:
        spec = tomllib.loads(f.read_text())
        code = spec.get("code", f.stem)
        if only and not any(code.startswith(o) for o in only):
            continue
        problems = _spec_problems(f, spec)
        if code in codes:
            problems.append(f"duplicate code (also {codes[code].name})")
        codes[code] = f
        for pr in problems:
            print(f"FAIL {f.name}: {pr}")
            lies += 1
        if problems:
            continue
        for i, ex in enumerate(spec.get("examples", []), 1):
            try:
                ok, why = check_example(spec, ex)
            except Exception as e:  # noqa: BLE001
                ok, why = False, "probe crashed: " + short_exc(e)
            if not ok:
                lies += 1
            if not ok or verbose:
                print(f"{'ok  ' if ok else 'LIE '} {code} example {i} ({ex['kind']}): {why}")
        if spec.get("category") in BREAK_CATEGORIES:
            unseen = set(spec.get("gb_types", [])) - _GB_SEEN.get(code, set())
            if unseen:
                print(f"LIE  {code}: gb_types {sorted(unseen)} not produced by any bad example")
                lies += 1
        if verbose:
            print(f"---- {code} done")
    print(f"{len(codes)} specs checked, {lies} problem(s)")
    return 1 if lies else 0


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

DOC_INTRO = """# What Dynamo on torch {version} does with the patterns pt2lint flags

Measured by `tools/probe_patterns.py` on torch {version} (CPU, Python {py}).
Every row was produced by running the pattern; nothing here is copied from
documentation or folklore. Regenerate the table with

```
python tools/probe_patterns.py --write docs/dynamo-2.13-facts.md
```

and check the rule specs against the installed torch with

```
python tools/probe_patterns.py --check-rules      # exit 1 when a spec example lies
```

How each column was measured (each pattern is a tiny `nn.Module` written to a
temporary `.py` file, so Dynamo sees real source lines):

- **breaks / reason / GB / line**: `torch.compile(m, backend="eager")`, default
  settings, called once; the `graph_breaks` logging artifact captured through a
  `logging.Handler` (`torch._logging.set_logs(graph_breaks=True)`). The GB id
  is the `gb/gbNNNN.html` link in the message (several ids joined with `+`
  when one break led to another, e.g. a break inside a loop that makes Dynamo
  skip the frame; `?` when the message carried no id). `torch._dynamo.explain`
  was not used: it misses breaks at the first op of a frame and inside loops
  (see the last section). Patterns whose label names a knob were run with
  that knob set for every column.
- **fullgraph=True**: same call with `fullgraph=True`; `ok` or the exception.
- **knobs**: default call again with `torch._dynamo.config.capture_scalar_outputs = True`
  and `capture_dynamic_output_shape_ops = True` (`-` when a pattern was
  already probed with them on); the fullgraph result under the knobs is in
  parentheses.
- **export**: `torch.export.export(m, args)` (non-strict, the 2.13 default) and
  with `strict=True`. "ok, mutates inputs x" means the export succeeded and,
  after `run_decompositions()`, `graph_signature.user_inputs_to_mutate` named
  input `x`.
- **other**: exceptions, input writes (an eager call under a
  `TorchDispatchMode` recording aten ops whose schema marks an argument as
  written, `alias_info.is_write`, on storage shared with a forward input), and
  recompiles seen in the `recompiles` artifact on calls 2 and 3 (fresh inputs
  each call; 12 calls where the label says so).

"""


EXPLAIN_CASES = [
    ("`print(1)` as the first statement", "print(1)\nreturn x + 1"),
    ("`torch._dynamo.graph_break()` first", "torch._dynamo.graph_break()\nreturn x + 1"),
    ("`.item()` after an op", "y = x * 2\nreturn y * y.sum().item()"),
    ("`.item()` inside a `for` loop", "for i in range(2):\n    x = x * x.sum().item()\nreturn x"),
    ("`print` inside a `for` loop", 'for i in range(2):\n    print("i")\n    x = x + 1\nreturn x'),
]


def explain_table() -> str:
    """Compare ``torch._dynamo.explain`` with the graph_breaks log on a few traps."""
    rows = ["| case | explain: graph_break_count | explain: graph_count | graph_breaks log |",
            "|---|---|---|---|"]
    run = "M(), (torch.randn(4, 8),)"
    for label, body in EXPLAIN_CASES:
        code = module_src(body)
        mod, path = load_snippet(code)
        model, args = make(mod, run)
        torch._dynamo.reset()
        with quiet():
            ex = torch._dynamo.explain(model)(*args)
        breaks, _, _ = _compile_call(mod, run, path, code.splitlines(), fullgraph=False, knobs={})
        def_line = next(i for i, ln in enumerate(code.splitlines(), 1) if "def forward" in ln)
        log = "; ".join(f"body line {b.line - def_line if b.line else '?'}: "
                        + "+".join(b.gbs or [b.gb or "?"]) for b in breaks) or "no break"
        rows.append(f"| {label} | {ex.graph_break_count} | {ex.graph_count} | {log} |")
    return "\n".join(rows) + "\n"


def _replace_block(text: str, name: str, body: str) -> str | None:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start in text and end in text:
        return text[: text.index(start)] + f"{start}\n{body}{end}" + text[text.index(end) + len(end):]
    return None


def show(p: Pattern) -> None:
    code = p.code()
    mod, path = load_snippet(code)
    print(f"===== {p.id}: {p.label}")
    for i, ln in enumerate(code.splitlines(), 1):
        if i > HEADER.count("\n"):
            print(f"{i:3d}  {ln}")
    torch._dynamo.reset()
    saved = sys.stdin
    if p.stdin is not None:
        sys.stdin = io.StringIO(p.stdin)
    try:
        with capture_logs() as cap, quiet():
            model, args = make(mod, p.run)
            try:
                torch.compile(model, backend="eager", **(p.compile_kwargs or {}))(*args)
            except Exception as e:  # noqa: BLE001
                print("raised", short_exc(e))
    finally:
        sys.stdin = saved
    for m in cap.messages("graph_breaks"):
        print("--- graph break")
        print(m.split("User code traceback:")[0].rstrip())


def _norm(text: str) -> str:
    """Drop run-to-run noise (addresses, random values, temp paths) from a quoted message."""
    text = re.sub(r"-?\d+\.\d{4,}(e-?\d+)?", "<value>", text)
    text = re.sub(r"\b\d{7,}\b", "<id>", text)
    text = re.sub(r"/tmp/\S+?\.py", "<file>", text)
    return text.strip()


def _guard(recompile_msg: str) -> str | None:
    g = re.search(r"guard failure\(s\):\s*-\s*\d+/\d+:\s*(.+)", recompile_msg)
    return re.sub(r"== -?\d+(\.\d+)?\b", "== <value>", _norm(g.group(1).split("  #")[0])) if g else None


def evidence_for(spec: dict) -> str:
    """Measured evidence for every executable bad example of a spec, one short quoted line each."""
    out = [f"torch {torch.__version__.split('+')[0]}, tools/probe_patterns.py:"]
    cat = spec["category"]
    for i, ex in enumerate(spec["examples"], 1):
        if ex["kind"] != "bad" or not ex.get("run"):
            continue
        mod, path = load_snippet(ex["code"])
        src = ex["code"].splitlines()
        knobs = _knobs_of(ex)
        flags = ex["flag"]
        where = f"example {i} (line {', '.join(map(str, flags))})"
        if cat in BREAK_CATEGORIES:
            breaks, recs, _ = _compile_call(mod, ex["run"], path, src, fullgraph=False, knobs=knobs, calls=2)
            bs = [b for b in breaks if b.line in flags]
            line = f"- {where}: " + "; ".join(f'graph break "{b.gb_type}" ({b.gb})' for b in bs)
            recs = [m for m in recs if m.startswith("Recompiling")]
            if recs and _guard(recs[0]):
                line += f"; call 2 recompiled: guard `{_guard(recs[0])}` failed"
            if "export" in spec["targets"]:
                line += "; torch.export.export: " + _norm(_export(mod, ex["run"], strict=False, knobs=knobs))
            out.append(line)
        elif cat == "input-mutation":
            writes, _ = _eager_writes(mod, ex["run"], path)
            ops = ", ".join(sorted({f"{op} (line {ln})" for ln, op in writes}))
            breaks, _, _ = _compile_call(mod, ex["run"], path, src, fullgraph=False, knobs=knobs)
            out.append(f"- {where}: eager call wrote into a forward input: {ops}; torch.compile: "
                       + ("no graph break" if not breaks else "breaks")
                       + "; torch.export.export: " + _norm(_export(mod, ex["run"], strict=False, knobs=knobs)))
        elif cat == "recompile":
            breaks, recs, _ = _compile_call(mod, ex["run"], path, src, fullgraph=False, knobs=knobs, calls=3)
            recs = [m for m in recs if m.startswith("Recompiling")]
            g = _guard(recs[0]) if recs else None
            out.append(f"- {where}: {'no graph break' if not breaks else 'breaks'}; {len(recs)} recompile(s) in calls 2-3"
                       + (f", first on guard `{g}`" if g else ""))
        elif cat == "export":
            breaks, _, _ = _compile_call(mod, ex["run"], path, src, fullgraph=False, knobs=knobs)
            _, _, fg = _compile_call(mod, ex["run"], path, src, fullgraph=True, knobs=knobs)
            out.append(f"- {where}: torch.compile: {'no graph break' if not breaks else 'breaks'}, "
                       f"fullgraph=True {'ok' if fg is None else 'fails'}; torch.export.export: "
                       + _norm(_export(mod, ex["run"], strict=False, knobs=knobs)))
    return "\n".join(out)


def write_evidence(rules_dir: Path, only: list[str]) -> None:
    """Regenerate the ``evidence`` field of every executable spec in place."""
    for f in sorted(rules_dir.glob("*.toml")):
        text = f.read_text()
        spec = tomllib.loads(text)
        if spec["category"] in ("internal", "sync") or (only and not any(spec["code"].startswith(o) for o in only)):
            continue
        saved = sys.stdin
        sys.stdin = io.StringIO("c\n" * 200)
        try:
            ev = evidence_for(spec)
        finally:
            sys.stdin = saved
        ev = ev.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        new = re.sub(r'^evidence = """.*?"""', lambda _m: f'evidence = """{ev}"""', text, count=1, flags=re.S | re.M)
        assert tomllib.loads(new)["evidence"].startswith("torch ")  # still valid TOML
        f.write_text(new)
        print(f"{f.name}: evidence updated")


def show_rule(rules_dir: Path, code: str) -> None:
    """Print what torch says for each example of one rule (to write ``evidence``)."""
    for f in sorted(rules_dir.glob(f"{code}-*.toml")):
        spec = tomllib.loads(f.read_text())
        for i, ex in enumerate(spec["examples"], 1):
            if not ex.get("run"):
                continue
            print(f"===== {code} example {i} ({ex['kind']})")
            mod, path = load_snippet(ex["code"])
            knobs = _knobs_of(ex)
            torch._dynamo.reset()
            with capture_logs() as cap, quiet(), dynamo_config(knobs):
                model, args = make(mod, ex["run"])
                cm = torch.compile(model, backend="eager")
                try:
                    cm(*args)
                    for _ in range(2):
                        cm(*make(mod, ex["run"])[1])
                except Exception as e:  # noqa: BLE001
                    print("raised", short_exc(e))
            for m in cap.messages("graph_breaks"):
                print("--- graph break")
                print(m.split("User code traceback:")[0].rstrip())
            for m in cap.messages("recompiles"):
                print("--- recompile")
                print(m[:600])
            if spec["category"] in ("export", "input-mutation") or "export" in spec["targets"]:
                print("--- export:", _export(mod, ex["run"], strict=False, knobs=knobs))
            if spec["category"] == "input-mutation":
                print("--- writes:", _eager_writes(mod, ex["run"], path)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", action="append", default=[], help="only patterns whose id contains this")
    ap.add_argument("--write", type=Path, help="write the facts page (intro + table + notes) here")
    ap.add_argument("--json", type=Path, help="write raw results as JSON")
    ap.add_argument("--check-rules", action="store_true", help="verify rules/*.toml examples")
    ap.add_argument("--rules-dir", type=Path, default=REPO / "rules")
    ap.add_argument("--rule", action="append", default=[], help="with --check-rules: only these codes")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--show-rule", metavar="CODE", help="print torch's messages for a rule's examples")
    ap.add_argument("--write-evidence", action="store_true",
                    help="regenerate the `evidence` field of rules/*.toml from a run (with --rule: only those)")
    ap.add_argument("--show", action="store_true",
                    help="print the snippet and the raw graph-break messages of the selected patterns")
    ns = ap.parse_args(argv)
    if ns.write and ns.k:
        ap.error("--write regenerates the whole table; drop -k")
    torch.manual_seed(0)  # reproducible inputs; each call still draws fresh ones

    if ns.write_evidence:
        write_evidence(ns.rules_dir, ns.rule)
        return 0
    if ns.show_rule:
        show_rule(ns.rules_dir, ns.show_rule)
        return 0
    if ns.check_rules:
        return check_rules(ns.rules_dir, ns.rule, ns.verbose)

    if ns.show:
        for p in PATTERNS:
            if ns.k and not any(k in p.id for k in ns.k):
                continue
            show(p)
        return 0

    results = []
    for p in PATTERNS:
        if ns.k and not any(k in p.id for k in ns.k):
            continue
        try:
            r = probe(p.code(), p.run, knobs=p.knobs, compile_kwargs=p.compile_kwargs, stdin=p.stdin,
                      calls=p.calls)
        except Exception as e:  # noqa: BLE001
            r = Result(eager="probe crashed: " + short_exc(e))
        r.id, r.label = p.id, p.label
        results.append((p, r))
        if ns.verbose:
            print(p.id, _fmt_breaks(r.breaks), r.fullgraph, knob_effect(r), r.export, r.export_strict,
                  other_effects(r), file=sys.stderr)
    tbl = table(results)
    if ns.json:
        ns.json.write_text(json.dumps([asdict(r) for _, r in results], indent=1, default=str))
    if ns.write:
        text = ns.write.read_text() if ns.write.exists() else ""
        new = _replace_block(text, "probe-table", tbl)
        if new is None:
            intro = DOC_INTRO.format(version=torch.__version__.split("+")[0],
                                     py=".".join(map(str, sys.version_info[:3])))
            new = (intro + "## Measured table\n\n<!-- probe-table:start -->\n" + tbl
                   + "<!-- probe-table:end -->\n\n## explain() versus the graph_breaks log\n\n"
                   "<!-- explain-table:start -->\n<!-- explain-table:end -->\n")
        new = _replace_block(new, "explain-table", explain_table()) or new
        ns.write.write_text(new)
    else:
        print(tbl)
    return 0


if __name__ == "__main__":
    sys.exit(main())
