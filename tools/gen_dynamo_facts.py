#!/usr/bin/env python
"""Derive what Dynamo does with library callables from torch's own tables, confirm
each entry with a probe, and write ``pt2lint/data/dynamo_facts.json``.

The static linter reads that file (through :mod:`pt2lint.analysis.dynamo_facts`)
without importing torch. This tool imports torch and numpy.

Usage (from the repository root, torch installed)::

    python tools/gen_dynamo_facts.py                 # rewrite pt2lint/data/dynamo_facts.json
    python tools/gen_dynamo_facts.py --output f.json # write somewhere else
    python tools/gen_dynamo_facts.py --check         # exit 1 when the shipped file is out of date
    python tools/gen_dynamo_facts.py --show random.random   # one probe's source and breaks

Where each part comes from (torch 2.13 names):

* ``calls`` -- for every candidate callable (module-level functions of the
  standard-library modules model code calls: ``random``, ``time``, ``os``,
  ``copy``, ``inspect``, ``re``, ``json``, ``pickle``, ``heapq``, ...; a few
  builtins; torch's seeding functions; NumPy functions), what torch's tables say
  (``source``) and therefore what a call should do (``expect``):

  - ``skipped``: ``torch._dynamo.trace_rules.lookup(fn)`` is
    ``SkipFunctionVariable`` (a C function, or a file in ``BUILTIN_SKIPLIST`` /
    ``THIRDPARTY_SKIPLIST`` / ``MOD_SKIPLIST``): the call breaks with "Attempted
    to call function marked as skipped".
  - ``polyfill``: ``trace_rules.is_polyfilled_callable(fn)`` (a
    ``torch._dynamo.polyfills`` substitute): traced.
  - ``random-variable``: a bound method of the module-level ``random.Random``
    whose name is in ``torch._dynamo.variables.misc.RandomVariable._supported_fn_names``
    and that is written in Python: traced (a fresh value per call).
  - ``builtin``: ``trace_rules.is_builtin_callable(fn)``; traced when
    ``BuiltinVariable`` has a ``call_<name>`` handler or constant-folds / graphs
    it (``_constant_fold_functions``, ``_fx_graph_functions``), else "Failed to
    trace builtin operator".
  - ``in-graph`` / ``inlined`` / other: the ``trace_rules.lookup`` class
    (``TorchInGraphFunctionVariable``, ``UserFunctionVariable``, ...): traced.
  - ``torch._numpy`` / ``numpy-unsupported``: a NumPy function Dynamo wraps
    (``trace_rules._numpy_function_ids``) that is, or is not, in
    ``torch._dynamo.variables.misc.get_np_to_tnp_map()``: traced, or "attempted
    to trace numpy function unsupported by PyTorch".
  - ``torch._numpy-scalar``: a ``torch._numpy.random`` draw that, called without
    a size, returns ``array_or_scalar(..., return_scalar=True)`` -- a Python
    number read out of a traced tensor: "Data dependent operator".
    ``size_index`` is the position of its ``size`` parameter.
  - ``torch._numpy-datacheck``: a ``torch._numpy.random`` function whose body
    branches on tensor data (``choice`` checks ``if abs(p.sum() - 1.0) > atol``
    on every call, sized or not): "Data dependent operator".

  Each entry is then probed: a tiny function ``y = x + 1; r = <call>; return y * 2``
  is written to a file, compiled with ``backend="eager"`` and called on a tensor,
  and its breaks are read from the ``graph_breaks`` log
  (:func:`pt2lint.confirm.dynamo.graph_breaks`, which resets Dynamo around each
  probe). ``outcome`` is ``breaks`` (a break at the call line, or inside the
  callee reached from it: ``where`` says which), ``traces`` (no break at all) or
  ``inconclusive`` (the probe raised, or broke elsewhere). ``confirmed`` is true
  only when the probe agrees with ``expect`` (and, for a break, with
  ``expect_gb`` when the source names one).
* ``tensor_calls`` -- the same for calls whose argument is a tensor (``math``
  functions, builtins, ``copy.copy``): ``math`` functions and builtins such as
  ``chr``, ``hex``, ``pow`` are constant-folded on Python numbers
  (``BuiltinVariable._constant_fold_functions``), so a tensor argument has to be
  read into Python (``__float__``/``__index__``): expected to break; a builtin with
  its own ``call_<name>`` handler (``abs``, ``len``, ``min``, ``max``) takes
  tensors: expected to trace.
* ``sized_calls`` -- those NumPy draws with a size (an array): traced.
* ``shape_calls`` -- ``math`` functions on shapes (``math.sqrt(x.shape[-1])``): traced.
* ``math`` -- the ``math`` functions Dynamo constant-folds on numbers and shapes.
* ``numpy`` -- per module Dynamo traces (``torch._dynamo.utils.NP_TO_TNP_MODULE``),
  the NumPy function names ``torch._numpy`` implements and those it does not.
* ``shape_ops`` -- Python-level calls that reach an ATen overload tagged
  ``torch.Tag.dynamic_output_shape`` or ``torch.Tag.data_dependent_output``
  (``aten::nonzero``, ``_unique2``, ``masked_select``, ``bincount``, ``one_hot``'s
  ``_local_scalar_dense``, ...). Found by calling every public callable of ``torch``,
  ``torch.Tensor``, ``torch.nn.functional``, ``torch.linalg``, ``torch.special`` and
  ``torch.fft`` (state setters, I/O and compilers left out), and every function
  ``torch._numpy`` implements, on a few small argument lists (:data:`SHAPE_FORMS`,
  :data:`NUMPY_FORMS`) under a ``TorchDispatchMode`` that records the overloads run.
  For a callee that reached a tagged op with one argument list, every argument list
  that ran is an entry: ``expect`` is ``breaks`` where the tagged op ran and
  ``traces`` where none did (``torch.where(b, x, x)`` next to ``torch.where(b)``);
  ``form`` gives the argument kinds (``T``: tensor or array, ``py``: Python number)
  and ``aten`` the tagged ops. Each is probed like ``calls``; a tagged op Dynamo
  handles anyway (``one_hot(i, 3)``) comes out unconfirmed, so nothing relies on it.
* ``inplace_view`` -- ``Tensor`` methods whose ATen op's first overload carries
  ``torch.Tag.inplace_view`` (the test ``torch/_dynamo/variables/tensor.py`` makes:
  such a method on a tensor with a source, a graph input, is a delayed graph break,
  GB0148): each probed on the input (``x.unsqueeze_(0)``, expected to break) and on a
  fresh tensor (``(x + 1).unsqueeze_(0)``, expected to trace).
* ``numpy_calls`` -- every NumPy function of ``numpy``, ``numpy.linalg``, ``numpy.fft``
  and ``numpy.random`` that ``torch._numpy`` does not implement (the ``numpy.unsupported``
  names) and that ``calls`` does not probe, probed as ``numpy.<name>(a)``: the break
  comes when Dynamo looks the function up, before its arguments matter, so a probe
  whose eager call then fails on ``a`` still counts (its break was logged).
* ``skip_modules`` -- ``trace_rules.BUILTIN_SKIPLIST`` and ``THIRDPARTY_SKIPLIST``.
* ``namespaces`` -- for ``torch`` and the namespaces of :data:`HASATTR_NAMESPACES`
  (``torch.nn.functional``, ``torch.Tensor``, ``torch.backends``, ...), every attribute
  name present right after a bare ``import torch`` (read in a fresh interpreter): what
  ``hasattr(torch, "nextafter")`` answers on this torch, which Dynamo folds to a
  constant while tracing.
* ``nn_modules`` -- for every public ``torch.nn`` module class: whether a forward call
  writes its buffers, measured, not assumed. Each class is built with the first of a
  few small constructor argument lists that works (``()``, ``(4,)``, ``(4, 4)``, ...)
  and called on the first of a few small inputs that works (``randn(2, 4)``,
  ``randn(2, 4, 6)``, ..., one to three of them); its buffers are snapshotted and
  compared after one call in train mode (``train_writes``) and one in eval mode
  (``eval_writes``). A constructor with a ``track_running_stats`` parameter is measured
  again with ``track_running_stats=False`` (``unless``: the keyword that stops the
  writes). ``parameters`` says whether the module has parameters (a ``torch.cond``
  branch that alone uses them leaves zero, not ``None``, gradients). A class that no
  argument list builds, or no input runs, has ``measured_with: null``: the codemods
  treat it as unknown. Lazy modules (``LazyLinear``, ...) materialise parameters on
  their first call and are recorded as writing ``<parameters>``.
* ``graph_breaks`` -- ``torch/_dynamo/graph_break_registry.json``: id -> ``Gb_type`` and
  ``Explanation`` of its first entry, the categories of ``graph_break_hints`` its hints come from
  (``USER_ERROR``, ``DYNAMO_BUG``, ``SUPPORTABLE``, ...), and whether a ``gb_type=`` argument in
  torch's sources still raises it (contexts and hint texts dropped).
* ``amp_deprecated`` -- the deprecated mixed-precision APIs, by every name they can be
  imported under, with the warning torch gives: public callables of ``torch.amp``,
  ``torch.cuda.amp`` and ``torch.cpu.amp`` (and their submodules) that carry a
  ``typing_extensions.deprecated`` marker (``__deprecated__`` on the function, the
  class, or the class's own ``__init__``): a ``FutureWarning`` at the caller's line;
  and the ``torch.*autocast*`` functions that warn when called (C++ deprecations,
  ``torch.is_autocast_cpu_enabled()``: a ``DeprecationWarning``), found by calling each
  getter with no argument and each setter ``set_X`` with the current value of its
  getter ``get_X``/``is_X`` (so no state changes).
* ``collectives`` -- the ``torch.distributed`` functions that take ``async_op`` (the
  collectives and ``barrier``), whether Dynamo rewrites them into functional
  collectives (keys of ``torch.distributed._functional_collectives.
  traceable_collective_remaps``: traced; any other is not) and what
  ``trace_rules.lookup`` says. These need a process group to probe; the probe is
  ``tools/probe_distributed.py`` (two ranks, gloo), not this tool.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import difflib
import enum
import functools
import importlib
import importlib.util
import inspect
import io
import json
import os
import re
import sys
import tempfile
import textwrap
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_OUTPUT = ROOT / "pt2lint" / "data" / "dynamo_facts.json"
SCHEMA = 1

os.environ.setdefault("PYTHONBREAKPOINT", "0")

import numpy  # noqa: E402,F401  (Dynamo only wraps NumPy when it is importable)
import torch  # noqa: E402
import torch._dynamo  # noqa: E402
from torch._dynamo import trace_rules  # noqa: E402

from pt2lint.confirm.dynamo import graph_breaks  # noqa: E402


@dataclass(frozen=True)
class Candidate:
    """One probed call: ``qualname`` is the callee, ``call`` the expression the probe runs
    (``x`` is a float32 tensor of shape (4, 4), ``a`` is ``x.numpy()`` and ``t`` is
    ``x.abs().sum() + 1``)."""

    qualname: str
    call: str


def _c(qualname: str, args: str = "") -> Candidate:
    return Candidate(qualname, f"{qualname}({args})")


# Calls on Python values (or none): what the callee itself does under Dynamo.
CALLS: Tuple[Candidate, ...] = (
    # random (PTC305 / PTC306)
    _c("random.random"), _c("random.choice", "[1, 2, 3]"), _c("random.choices", "[1, 2, 3], k=2"),
    _c("random.gauss", "0.0, 1.0"), _c("random.normalvariate", "0.0, 1.0"), _c("random.randint", "1, 3"),
    _c("random.randrange", "3"), _c("random.uniform", "0.5, 1.5"), _c("random.shuffle", "[1, 2, 3]"),
    _c("random.sample", "[1, 2, 3], 2"), _c("random.getrandbits", "8"), _c("random.betavariate", "1.0, 1.0"),
    _c("random.expovariate", "1.0"), _c("random.triangular"), _c("random.lognormvariate", "0.0, 1.0"),
    _c("random.vonmisesvariate", "0.0, 1.0"), _c("random.gammavariate", "1.0, 1.0"),
    _c("random.paretovariate", "1.0"), _c("random.weibullvariate", "1.0, 1.0"), _c("random.seed", "0"),
    _c("random.getstate"),
    # time, datetime, uuid, secrets (PTC305)
    _c("time.time"), _c("time.time_ns"), _c("time.perf_counter"), _c("time.perf_counter_ns"),
    _c("time.monotonic"), _c("time.monotonic_ns"), _c("time.process_time"), _c("time.thread_time"),
    _c("time.sleep", "0"), _c("time.localtime"), _c("time.gmtime"), _c("time.strftime", "'%Y'"),
    _c("time.ctime"),
    _c("datetime.datetime.now"), _c("datetime.datetime.utcnow"), _c("datetime.datetime.today"),
    _c("datetime.date.today"),
    _c("uuid.uuid4"), _c("uuid.uuid1"),
    _c("secrets.token_hex", "4"), _c("secrets.token_bytes", "4"), _c("secrets.randbelow", "10"),
    _c("secrets.choice", "[1, 2]"),
    # os, sys, gc, threading, inspect, traceback
    _c("os.getpid"), _c("os.getppid"), _c("os.getcwd"), _c("os.cpu_count"), _c("os.urandom", "4"),
    _c("os.getenv", "'HOME'"), _c("os.environ.get", "'HOME'"), _c("os.fspath", "'a'"),
    _c("os.path.join", "'a', 'b'"), _c("os.path.exists", "'/'"), _c("os.path.isfile", "'/'"),
    _c("os.path.isdir", "'/'"), _c("os.path.basename", "'a/b.py'"), _c("os.path.dirname", "'a/b.py'"),
    _c("os.path.splitext", "'a/b.py'"), _c("os.path.abspath", "'a'"), _c("os.path.expanduser", "'~'"),
    _c("sys.getsizeof", "1"), _c("sys.getrecursionlimit"), _c("sys.exc_info"), _c("sys.intern", "'a'"),
    _c("sys.getdefaultencoding"),
    # the standard streams: methods of C file objects (``sys.stdout.write(...)`` beside ``print``)
    _c("sys.stdout.write", "''"), _c("sys.stderr.write", "''"), _c("sys.stdout.flush"), _c("sys.stderr.flush"),
    _c("gc.collect"), _c("gc.isenabled"), _c("gc.get_count"),
    _c("threading.get_ident"), _c("threading.current_thread"), _c("threading.active_count"),
    _c("threading.main_thread"),
    _c("inspect.currentframe"), _c("inspect.stack"), _c("inspect.signature", "len"),
    _c("inspect.isfunction", "len"), _c("inspect.isclass", "int"), _c("inspect.ismodule", "os"),
    _c("inspect.getmodule", "os"), _c("inspect.iscoroutinefunction", "len"),
    _c("traceback.format_stack"), _c("traceback.extract_stack"), _c("traceback.print_stack"),
    # copy, pickle, json, re
    _c("copy.copy", "[1, 2]"), _c("copy.deepcopy", "{'a': [1, 2]}"),
    _c("pickle.dumps", "1"), _c("pickle.loads", "b'\\x80\\x04K\\x01.'"),
    _c("json.dumps", "{'a': 1}"), _c("json.loads", "'[1]'"),
    _c("re.match", "'a', 'abc'"), _c("re.search", "'b', 'abc'"), _c("re.fullmatch", "'abc', 'abc'"),
    _c("re.sub", "'a', 'b', 'abc'"), _c("re.split", "',', 'a,b'"), _c("re.findall", "'a', 'aba'"),
    _c("re.compile", "'a+'"), _c("re.escape", "'a.b'"),
    # itertools, functools, operator, collections, typing
    _c("itertools.chain", "[1], [2]"), _c("itertools.product", "[1], [2]"),
    _c("itertools.permutations", "[1, 2]"), _c("itertools.combinations", "[1, 2, 3], 2"),
    _c("itertools.accumulate", "[1, 2]"), _c("itertools.islice", "[1, 2, 3], 2"),
    _c("itertools.repeat", "1, 2"), _c("itertools.zip_longest", "[1], [2, 3]"),
    _c("itertools.groupby", "[1, 1, 2]"), _c("itertools.pairwise", "[1, 2, 3]"),
    _c("itertools.starmap", "max, [(1, 2)]"), _c("itertools.tee", "[1, 2]"), _c("itertools.cycle", "[1]"),
    _c("itertools.count"),
    _c("functools.reduce", "max, [1, 2]"), _c("functools.partial", "max, 1"),
    _c("functools.cmp_to_key", "lambda a, b: a - b"),
    _c("operator.add", "1, 2"), _c("operator.mul", "2, 3"), _c("operator.getitem", "[1, 2], 0"),
    _c("operator.itemgetter", "0"), _c("operator.attrgetter", "'real'"),
    _c("collections.OrderedDict"), _c("collections.defaultdict", "list"), _c("collections.deque", "[1]"),
    _c("collections.Counter", "[1, 1, 2]"),
    _c("typing.cast", "int, 1"),
    # heapq, bisect, statistics, struct, zlib, binascii, hashlib (PTC307)
    _c("heapq.heappush", "[], 1"), _c("heapq.heappop", "[1]"), _c("heapq.heapify", "[2, 1]"),
    _c("heapq.nlargest", "1, [1, 2]"), _c("heapq.nsmallest", "1, [1, 2]"),
    _c("bisect.bisect_left", "[1, 2], 1"), _c("bisect.bisect_right", "[1, 2], 1"),
    _c("bisect.bisect", "[1, 2], 1"), _c("bisect.insort", "[1, 2], 1"),
    _c("statistics.mean", "[1, 2]"), _c("statistics.median", "[1, 2]"), _c("statistics.fmean", "[1.0, 2.0]"),
    _c("statistics.stdev", "[1.0, 2.0]"),
    _c("struct.pack", "'i', 1"), _c("struct.unpack", "'i', b'\\x01\\x00\\x00\\x00'"),
    _c("struct.calcsize", "'i'"),
    _c("zlib.crc32", "b'x'"), _c("zlib.adler32", "b'x'"), _c("zlib.compress", "b'x'"),
    _c("zlib.decompress", "b'x\\x9c\\xab\\x00\\x00\\x00y\\x00y'"),
    _c("binascii.crc32", "b'x'"), _c("binascii.hexlify", "b'x'"),
    _c("hashlib.md5", "b'x'"), _c("hashlib.sha1", "b'x'"), _c("hashlib.sha224", "b'x'"), _c("hashlib.sha256", "b'x'"),
    _c("hashlib.sha384", "b'x'"),
    _c("hashlib.sha512", "b'x'"), _c("hashlib.blake2b", "b'x'"), _c("hashlib.new", "'sha256', b'x'"),
    # warnings, logging (PTC302 / PTC303)
    _c("warnings.warn", "'careful'"), _c("warnings.warn_explicit", "'careful', UserWarning, 'f.py', 1"),
    _c("warnings.simplefilter", "'ignore'"),
    _c("logging.getLogger", "'pt2lint.probe'"), _c("logging.info", "'x'"), _c("logging.debug", "'x'"),
    _c("logging.warning", "'x'"), _c("logging.error", "'x'"), _c("logging.log", "10, 'x'"),
    # builtins (PTC301)
    _c("builtins.print", "'x'"), _c("builtins.eval", "'1'"), _c("builtins.exec", "'pass'"),
    _c("builtins.globals"), _c("builtins.locals"), _c("builtins.vars"), _c("builtins.dir", "1"),
    _c("builtins.hash", "1"), _c("builtins.compile", "'1', 's', 'eval'"), _c("builtins.repr", "1"),
    _c("builtins.format", "1.0, '.2f'"), _c("builtins.sorted", "[2, 1]"), _c("builtins.id", "x"),
    # torch seeding (PTC306) and friends
    _c("torch.manual_seed", "0"), _c("torch.random.manual_seed", "0"), _c("torch.seed"),
    _c("torch.initial_seed"), _c("torch.get_rng_state"), _c("torch.cuda.manual_seed", "0"),
    # torch.nn.utils.rnn entries of trace_rules.manual_torch_name_rule_map (PTC307)
    _c("torch.nn.utils.rnn.pack_padded_sequence", "x.unsqueeze(0), [4], batch_first=True"),
    _c("torch.nn.utils.rnn.pad_packed_sequence", "torch.nn.utils.rnn.PackedSequence(x, torch.tensor([1, 1, 1, 1]))"),
    _c("torch.nn.utils.rnn.pad_sequence", "[x, x[:2]], batch_first=True"),
    _c("torch.cuda.manual_seed_all", "0"), _c("torch.compiler.is_compiling"), _c("torch.is_grad_enabled"),
    # torch.utils.checkpoint: checkpoint() is traced as a higher-order op (not a trace rule, not
    # listed), checkpoint_sequential is SkipFunctionVariable (PTC307)
    _c("torch.utils.checkpoint.checkpoint_sequential", "torch.nn.Sequential(torch.nn.Identity()), 1, x, use_reentrant=False"),
    # math on Python numbers
    _c("math.sqrt", "2.0"), _c("math.log", "2.0"), _c("math.exp", "1.0"), _c("math.floor", "2.5"),
    _c("math.ceil", "2.5"), _c("math.prod", "[2, 3]"), _c("math.isclose", "1.0, 1.0"),
    _c("math.isfinite", "1.0"), _c("math.isnan", "1.0"), _c("math.cos", "1.0"), _c("math.sin", "1.0"),
    _c("math.tanh", "1.0"), _c("math.erf", "1.0"), _c("math.pow", "2.0, 3.0"), _c("math.log2", "8.0"),
    _c("math.log10", "100.0"), _c("math.fabs", "-1.0"), _c("math.gcd", "4, 6"), _c("math.lcm", "4, 6"),
    _c("math.comb", "5, 2"), _c("math.factorial", "5"), _c("math.trunc", "2.5"), _c("math.hypot", "3.0, 4.0"),
    _c("math.atan2", "1.0, 1.0"), _c("math.degrees", "1.0"), _c("math.radians", "1.0"),
    _c("math.copysign", "1.0, -1.0"), _c("math.fmod", "5.0, 3.0"),
    # NumPy functions torch._numpy implements
    _c("numpy.mean", "a"), _c("numpy.sum", "a"), _c("numpy.sqrt", "a"), _c("numpy.exp", "a"),
    _c("numpy.concatenate", "[a, a]"), _c("numpy.where", "a > 0, a, 0.0"), _c("numpy.clip", "a, 0.0, 1.0"),
    _c("numpy.argmax", "a"), _c("numpy.cumsum", "a"), _c("numpy.einsum", "'ij->i', a"),
    _c("numpy.linalg.norm", "a"), _c("numpy.fft.fft", "a"),
    _c("numpy.random.seed", "0"), _c("numpy.random.shuffle", "a"),
    # ... and its RNG draws without a size, which return a Python scalar
    _c("numpy.random.rand"), _c("numpy.random.randn"), _c("numpy.random.normal"),
    _c("numpy.random.uniform"), _c("numpy.random.randint", "3"), _c("numpy.random.choice", "3"),
    _c("numpy.random.random_sample"), _c("numpy.random.random"),
    # NumPy functions torch._numpy does not implement
    _c("numpy.isin", "a, [1.0]"), _c("numpy.nanmean", "a"), _c("numpy.nansum", "a"), _c("numpy.nanmax", "a"),
    _c("numpy.nanmin", "a"), _c("numpy.nanstd", "a"), _c("numpy.nanvar", "a"), _c("numpy.nanargmax", "a"),
    _c("numpy.nanargmin", "a"), _c("numpy.nanmedian", "a"), _c("numpy.nanprod", "a"),
    _c("numpy.nancumsum", "a"), _c("numpy.nanpercentile", "a, 50"), _c("numpy.nanquantile", "a, 0.5"),
    _c("numpy.interp", "a, [0.0, 1.0], [0.0, 1.0]"), _c("numpy.digitize", "a, [0.0]"),
    _c("numpy.intersect1d", "a, a"), _c("numpy.union1d", "a, a"), _c("numpy.setdiff1d", "a, a"),
    _c("numpy.unravel_index", "3, (2, 2)"), _c("numpy.ravel_multi_index", "([1], [1]), (2, 2)"),
    _c("numpy.delete", "a, 0"), _c("numpy.insert", "a, 0, 1.0"), _c("numpy.ix_", "[0], [1]"),
    _c("numpy.lexsort", "a"), _c("numpy.partition", "a, 1"), _c("numpy.argpartition", "a, 1"),
    _c("numpy.asanyarray", "a"), _c("numpy.apply_along_axis", "numpy.sum, 0, a"), _c("numpy.trapezoid", "a"),
    _c("numpy.polyval", "[1.0, 0.0], a"), _c("numpy.ediff1d", "a"), _c("numpy.extract", "a > 0, a"),
    _c("numpy.select", "[a > 0], [a]"), _c("numpy.frexp", "a"), _c("numpy.spacing", "a"),
    _c("numpy.unwrap", "a"), _c("numpy.unique_counts", "a"), _c("numpy.unique_inverse", "a"),
    _c("numpy.histogram_bin_edges", "a"), _c("numpy.cumulative_sum", "a, axis=0"),
    _c("numpy.matrix_transpose", "a"), _c("numpy.vecdot", "a, a"), _c("numpy.block", "[a, a]"),
    _c("numpy.linalg.matrix_norm", "a"), _c("numpy.linalg.vector_norm", "a"),
    _c("numpy.linalg.svdvals", "a"), _c("numpy.linalg.outer", "a[0], a[0]"),
    _c("numpy.linalg.tensordot", "a, a"), _c("numpy.linalg.trace", "a"), _c("numpy.linalg.diagonal", "a"),
    _c("numpy.linalg.matmul", "a, a"),
    _c("numpy.random.permutation", "4"), _c("numpy.random.standard_normal"), _c("numpy.random.default_rng", "0"),
    _c("numpy.random.exponential"), _c("numpy.random.poisson", "1.0"), _c("numpy.random.beta", "1.0, 1.0"),
    _c("numpy.random.gamma", "1.0"), _c("numpy.random.binomial", "1, 0.5"),
)

# Calls whose argument is a tensor: math functions read the tensor into Python.
# ``t`` is a positive 0-d tensor (``x.abs().sum() + 1``), inside every math domain.
_MATH_ON_TENSOR = (
    ("math.sqrt", "t"), ("math.log", "t"), ("math.exp", "t"), ("math.floor", "t"), ("math.ceil", "t"),
    ("math.isfinite", "t"), ("math.isnan", "t"), ("math.cos", "t"), ("math.sin", "t"), ("math.tanh", "t"),
    ("math.fabs", "t"), ("math.pow", "t, 2"), ("math.isclose", "t, 1.0"),
    ("math.erf", "t"), ("math.log2", "t"), ("math.log10", "t"), ("math.atan2", "t, 1.0"),
    ("math.hypot", "t, 1.0"),
)
# Builtins Dynamo folds on constants (``BuiltinVariable._constant_fold_functions``), on a
# tensor: those without a ``call_<name>`` handler need Python numbers (``n`` is a 0-d int64
# tensor); those with one (``abs``, ``len``, ``min``, ``max``) handle tensors. ``sum`` has
# none yet traces (Dynamo runs it element by element): its entry stays unconfirmed.
_BUILTINS_ON_TENSOR = (
    ("builtins.chr", "n + 60"), ("builtins.hex", "n"), ("builtins.oct", "n"), ("builtins.bin", "n"),
    ("builtins.pow", "t, 2"), ("builtins.ascii", "x"), ("builtins.abs", "t"), ("builtins.len", "x"),
    ("builtins.min", "t, 1.0"), ("builtins.max", "x[0], x[1]"), ("builtins.sum", "x"),
)
TENSOR_CALLS: Tuple[Candidate, ...] = tuple(
    Candidate(q, f"{q}({args})") for q, args in _MATH_ON_TENSOR + _BUILTINS_ON_TENSOR
) + (
    Candidate("copy.copy", "copy.copy(x)"),
    Candidate("copy.deepcopy", "copy.deepcopy(x)"),
)

# The same NumPy draws with a size: an array, traced.
SIZED_CALLS: Tuple[Candidate, ...] = (
    _c("numpy.random.rand", "4"), _c("numpy.random.randn", "4"), _c("numpy.random.normal", "size=4"),
    _c("numpy.random.uniform", "size=4"), _c("numpy.random.randint", "3, size=4"),
    _c("numpy.random.choice", "3, size=2"), _c("numpy.random.random_sample", "4"), _c("numpy.random.random", "4"),
)

# Math functions on shapes (Python ints / SymInts under dynamic shapes): traced.
SHAPE_CALLS: Tuple[Candidate, ...] = (
    Candidate("math.sqrt", "math.sqrt(x.shape[-1])"),
    Candidate("math.log", "math.log(x.shape[0])"),
    Candidate("math.ceil", "math.ceil(x.shape[0] / 3)"),
    Candidate("math.floor", "math.floor(x.shape[0] / 3)"),
    Candidate("math.prod", "math.prod(x.shape)"),
    Candidate("math.log2", "math.log2(x.shape[0])"),
)

PROBE_IMPORTS = (
    "import array, binascii, bisect, builtins, collections, contextlib, copy, dataclasses, datetime, decimal, "
    "enum, fractions, functools, gc, hashlib, heapq, inspect, itertools, json, logging, math, numbers, operator, "
    "os, os.path, pickle, random, re, secrets, statistics, string, struct, sys, textwrap, threading, time, "
    "traceback, types, typing, uuid, warnings, weakref, zlib\n"
    "import numpy\n"
    "import torch\n"
)

#: Variables a probe may use besides its input ``x`` (a float32 tensor of shape (4, 4)),
#: each computed from ``x`` in the probe (and the same way for the eager runs that find
#: the candidates of ``shape_ops``).
PROBE_VARS: Dict[str, str] = {
    "a": "x.numpy()",
    "t": "x.abs().sum() + 1",
    "b": "x > 0",
    "i": "x.abs().long().clamp(0, 2).flatten()[:6]",  # six ints in [0, 2]
    "ab": "(x > 0).numpy()",
    "ai": "x.abs().long().clamp(0, 2).flatten()[:6].numpy()",
    "lp": "x[:, None, :].log_softmax(-1)",  # ctc_loss log-probs: (T=4, N=1, C=4)
    "tg": "torch.tensor([[1, 2]])",
    "il": "torch.tensor([4])",
    "tl": "torch.tensor([2])",
    "n": "(x.abs().sum() > -1).long() + 2",  # a 0-d int64 tensor (3)
    "n4": "(x.abs().sum() > -1).long() + 3",  # a 0-d int64 tensor (4): a size that fits x's shape
    "r": "x.abs().long().clamp(1, 1).flatten()[:6]",  # six ones: counts whose sum (6) the probe knows
}

# ---------------------------------------------------------------------------
# torch's tables


@functools.lru_cache(maxsize=None)
def _registry() -> Dict[str, list]:
    path = Path(torch._dynamo.__file__).parent / "graph_break_registry.json"
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _gb_id(gb_type: str) -> Optional[str]:
    """The registry id whose ``Gb_type`` is exactly ``gb_type`` (lowest id when several)."""
    for gb_id in sorted(_registry()):
        for entry in _registry()[gb_id]:
            if entry.get("Gb_type", "").strip() == gb_type:
                return gb_id
    return None


GB_SKIPPED = "Attempted to call function marked as skipped"
GB_BUILTIN = "Failed to trace builtin operator"
GB_NUMPY = "attempted to trace numpy function unsupported by PyTorch"
GB_METHOD = "Unsupported method call"
GB_DATA = "Data dependent operator"
GB_DELAYED = "Unsupported function call (delayed)"
GB_DATA_BRANCH = "Data-dependent branching"


def resolve(qualname: str) -> Any:
    """The object a dotted name refers to (``os.path.exists``, ``datetime.datetime.now``)."""
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(qualname)


def _hashable(obj: Any) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def _numpy_maps() -> Tuple[set, Dict[Any, Any]]:
    """ids of the NumPy callables Dynamo wraps, and its NumPy -> torch._numpy map."""
    from torch._dynamo.variables.misc import get_np_to_tnp_map

    return set(trace_rules._numpy_function_ids()), get_np_to_tnp_map()


def _returns_scalar(tnp_fn: Any, depth: int = 0) -> bool:
    """A ``torch._numpy.random`` function whose result goes through
    ``array_or_scalar(..., return_scalar=...)``, itself or by returning a call of
    another such function of that module (``rand`` returns ``random_sample(size)``)."""
    import ast

    fn = inspect.unwrap(tnp_fn)
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return False
    if "return_scalar" in source:
        return True
    if depth > 2:
        return False
    module = sys.modules.get(getattr(fn, "__module__", ""), None)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            callee = getattr(module, node.value.func.id, None)
            if callable(callee) and getattr(callee, "__module__", "") == "torch._numpy.random":
                if _returns_scalar(callee, depth + 1):
                    return True
    return False


def _scalar_size_index(tnp_fn: Any) -> Optional[int]:
    """For a ``torch._numpy.random`` function that returns a Python scalar when called
    without a size, the position of its ``size`` parameter; else None."""
    if getattr(tnp_fn, "__module__", "") != "torch._numpy.random" or not _returns_scalar(tnp_fn):
        return None
    for index, name in enumerate(inspect.signature(inspect.unwrap(tnp_fn)).parameters):
        if name == "size":
            return index
    return None


#: Methods whose result, tested by an ``if``, reads tensor data into Python.
_DATA_READS = frozenset({"sum", "any", "all", "min", "max", "item", "mean", "prod"})


def _branches_on_data(tnp_fn: Any) -> bool:
    """A ``torch._numpy.random`` function whose own body branches on tensor data: an
    ``if`` test that calls a reduction or ``.item()`` (``choice`` validates its
    probabilities with ``if abs(p.sum() - 1.0) > atol``), which Dynamo cannot trace
    ("Data dependent operator" once the probe runs it)."""
    import ast

    if getattr(tnp_fn, "__module__", "") != "torch._numpy.random":
        return False
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(tnp_fn)))
    except (OSError, TypeError):
        return False
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            for sub in ast.walk(node.test):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _DATA_READS:
                    return True
    return False


def _builtin_handled(fn: Any) -> bool:
    from torch._dynamo.variables.builtin import BuiltinVariable

    name = getattr(fn, "__name__", "")
    return (
        hasattr(BuiltinVariable, f"call_{name}")
        or fn in BuiltinVariable._constant_fold_functions()
        or fn in BuiltinVariable._fx_graph_functions()
    )


def _fact(source: str, expect: str, gb_type: Optional[str] = None) -> Dict[str, Any]:
    return {"source": source, "expect": expect, "expect_gb": _gb_id(gb_type) if gb_type else None}


def derive(qualname: str) -> Dict[str, Any]:
    """What torch's tables say about a call of ``qualname``: ``source``, ``expect``, ``expect_gb``.

    The checks follow the order in which ``torch._dynamo.variables.builder`` wraps
    a callable it finds in a global.
    """
    from torch._dynamo.variables.builder import ITERTOOLS_TYPE_IDS, bound_builtin_method_descriptor
    from torch._dynamo.variables.functions import RE_CONSTANT_FOLD_FNS
    from torch._dynamo.variables.misc import RandomVariable

    obj = resolve(qualname)
    np_ids, np_map = _numpy_maps()
    if id(obj) in np_ids:
        if _hashable(obj) and obj in np_map:
            size_index = _scalar_size_index(np_map[obj])
            if size_index is not None:
                # Without a size, torch._numpy.random returns a Python scalar read out of a
                # traced tensor (array_or_scalar(..., return_scalar=True)).
                return {**_fact("torch._numpy-scalar", "breaks", GB_DATA), "size_index": size_index}
            if _branches_on_data(np_map[obj]):
                return _fact("torch._numpy-datacheck", "breaks", GB_DATA)
            return _fact("torch._numpy", "traces")
        return _fact("numpy-unsupported", "breaks", GB_NUMPY)
    if trace_rules.is_polyfilled_callable(obj):
        return _fact("polyfill", "traces")
    if trace_rules.is_builtin_callable(obj):
        if _builtin_handled(obj):
            return _fact("builtin", "traces")
        return _fact("builtin-unhandled", "breaks", GB_BUILTIN)
    if obj is sys.exc_info:
        return _fact("SysFunctionVariable", "traces")
    if id(obj) in ITERTOOLS_TYPE_IDS:
        return _fact("itertools", "traces")
    if inspect.isclass(obj):
        return _fact("class", "traces")
    import random as _random

    if (
        isinstance(getattr(obj, "__self__", None), _random.Random)
        and getattr(obj, "__name__", "") in RandomVariable._supported_fn_names
        and isinstance(getattr(obj, "__func__", None), types.FunctionType)
    ):
        return _fact("random-variable", "traces")
    if bound_builtin_method_descriptor(obj) is not None:
        # BoundBuiltinMethodVariable forwards to the owner's call_method, which for a
        # C type Dynamo does not model is an unsupported method call.
        return _fact("bound-builtin-method", "breaks", GB_METHOD)
    rule = trace_rules.lookup(obj)
    name = getattr(rule, "__name__", str(rule))
    if name == "SkipFunctionVariable":
        if _hashable(obj) and obj in RE_CONSTANT_FOLD_FNS:
            return _fact("skipped-constant-fold", "traces")  # constant arguments are folded
        return _fact("skipped", "breaks", GB_SKIPPED)
    if name == "TorchInGraphFunctionVariable":
        return _fact("in-graph", "traces")
    if name == "UserFunctionVariable":
        return _fact("inlined", "traces")
    return _fact(name or "unknown", "traces")


def derive_tensor(qualname: str) -> Dict[str, Any]:
    """Expectation for a call with a tensor argument (see the module docstring)."""
    from torch._dynamo.variables.builtin import BuiltinVariable

    obj = resolve(qualname)
    if _hashable(obj) and obj in BuiltinVariable._constant_fold_functions():
        if trace_rules.is_builtin_callable(obj) and hasattr(BuiltinVariable, f"call_{getattr(obj, '__name__', '')}"):
            return _fact("builtin-handler", "traces")  # the handler takes tensors (abs, len, min, max, sum)
        return _fact("constant-fold", "breaks")
    return _fact(derive(qualname)["source"], "traces")


def numpy_names() -> Dict[str, Dict[str, List[str]]]:
    """Per NumPy module Dynamo traces: names torch._numpy implements and those it lacks."""
    from torch._dynamo.utils import NP_TO_TNP_MODULE

    np_ids, np_map = _numpy_maps()
    implemented: Dict[str, List[str]] = {}
    missing: Dict[str, List[str]] = {}
    for np_mod in NP_TO_TNP_MODULE:
        have, lack = [], []
        for name, value in vars(np_mod).items():
            if name.startswith("_") or id(value) not in np_ids:
                continue
            if inspect.isclass(value) or inspect.ismodule(value):
                continue
            (have if _hashable(value) and value in np_map else lack).append(name)
        implemented[np_mod.__name__] = sorted(have)
        missing[np_mod.__name__] = sorted(lack)
    return {"implemented": implemented, "unsupported": missing}


def _python_value_type(value: Any) -> Optional[str]:
    """``"int"``, ``"bool"`` or ``"shape"`` (a tuple of ints) when ``value`` is that plain Python
    value (no NumPy scalar), else None."""
    if type(value) in (int, bool):
        return type(value).__name__
    if type(value) is tuple and all(type(item) is int for item in value):
        return "shape"
    return None


def numpy_query_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``numpy.<name>(a)`` for each function of ``numpy`` that ``torch._numpy`` implements whose
    eager NumPy result on a float array of shape (2, 3) is a plain Python value, with that value's
    kind as ``result``: ``"int"`` (``numpy.size``, ``numpy.ndim``), ``"bool"``
    (``numpy.isscalar``) or ``"shape"`` (``numpy.shape``, a tuple of ints).

    Such a result is no array: computed in ``__init__`` and read in ``forward``, Dynamo
    specialises it as a constant (``np.sum`` gives a ``numpy.int64``, which it wraps as a tensor).
    On a traced array, ``torch._numpy`` answers with a Python int or bool that Dynamo cannot put in
    the graph: expected to break with "torch.* op returned non-Tensor"; a tuple of sizes traces.
    """
    out = []
    sample = numpy.zeros((2, 3))
    for name in numpy_names()["implemented"].get("numpy", ()):
        fn = getattr(numpy, name, None)
        if not callable(fn) or inspect.isclass(fn):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kind = _python_value_type(fn(sample))
        except Exception:  # noqa: BLE001  (a function that needs more arguments)
            continue
        if kind is None:
            continue
        fact = _fact("numpy-python-result", "traces") if kind == "shape" else _fact("numpy-python-result", "breaks", "torch.* op returned non-Tensor")
        out.append((Candidate(f"numpy.{name}", f"numpy.{name}(a)"), {**fact, "result": kind}))
    return tuple(out)


def math_names() -> List[str]:
    """``math`` functions ``BuiltinVariable`` constant-folds (on Python numbers)."""
    from torch._dynamo.variables.builtin import BuiltinVariable

    folded = BuiltinVariable._constant_fold_functions()
    import math

    return sorted(k for k, v in vars(math).items() if not k.startswith("_") and callable(v) and v in folded)


def _hint_categories() -> Dict[str, List[str]]:
    """``torch._dynamo.graph_break_hints``: category name (``USER_ERROR``, ``DYNAMO_BUG``,
    ``SUPPORTABLE``, ...) -> the hint texts a break of that category carries."""
    from torch._dynamo import graph_break_hints

    return {
        name: list(value)
        for name, value in vars(graph_break_hints).items()
        if name.isupper() and isinstance(value, list) and all(isinstance(h, str) for h in value)
    }


@functools.lru_cache(maxsize=1)
def _raised_gb_types() -> Tuple[frozenset, Tuple[Any, ...]]:
    """The ``gb_type=`` arguments written in torch's Python sources: the string constants (implicit
    concatenation joined by the parser) and, for f-strings, a regular expression with ``.*`` for
    each replacement field."""
    import ast
    import re

    literals, patterns = set(), []
    for path in sorted(Path(torch.__file__).parent.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.keyword) and node.arg == "gb_type"):
                continue
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                literals.add(" ".join(value.value.split()))
            elif isinstance(value, ast.JoinedStr):
                parts = [re.escape(v.value) if isinstance(v, ast.Constant) else ".*" for v in value.values]
                patterns.append(re.compile("^" + "".join(parts) + "$", re.S))
    return frozenset(literals), tuple(patterns)


def registry_subset() -> Dict[str, Dict[str, Any]]:
    """``graph_breaks``: every registry id with its ``gb_type``, explanation, the hint categories of
    ``graph_break_hints`` its hints come from, and whether torch's sources still raise it (a
    ``gb_type=`` argument equal to, or an f-string matching, its ``gb_type``; ids of removed code
    stay in the registry)."""
    categories = _hint_categories()
    literals, patterns = _raised_gb_types()
    out = {}
    for gb_id, entries in sorted(_registry().items()):
        first = entries[0] if entries else {}
        gb_type = " ".join(str(first.get("Gb_type", "")).split())
        hints = [str(h) for h in first.get("Hints", []) or []]
        out[gb_id] = {
            "gb_type": gb_type,
            "explanation": " ".join(str(first.get("Explanation", "")).split()),
            "hints": sorted(name for name, texts in categories.items() if any(h in texts for h in hints)),
            "raised": gb_type in literals or any(p.match(gb_type) for p in patterns),
        }
    return out


def skip_modules() -> Dict[str, List[str]]:
    return {
        "builtin": sorted(m.__name__ for m in trace_rules.BUILTIN_SKIPLIST),
        "third_party": sorted(trace_rules.THIRDPARTY_SKIPLIST),
    }


def tensor_attributes() -> List[str]:
    """Public attribute names of ``torch.Tensor`` (methods and properties): a method call
    with another name on a value proves that value is not a tensor."""
    return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))


#: The namespaces whose attribute names the table lists (``namespaces``): where model code
#: asks ``hasattr(torch, "nextafter")`` / ``hasattr(F, "scaled_dot_product_attention")`` to
#: pick a code path for older torch versions. Every one is loaded by a bare ``import torch``.
HASATTR_NAMESPACES = (
    "torch", "torch.Tensor", "torch.nn", "torch.nn.Module", "torch.nn.functional", "torch.nn.init",
    "torch.nn.utils", "torch.nn.utils.parametrizations", "torch.nn.attention", "torch.linalg", "torch.fft",
    "torch.special", "torch.compiler", "torch.backends", "torch.backends.cuda", "torch.backends.cudnn",
    "torch.backends.mps", "torch.serialization", "torch.version", "torch.cuda", "torch.mps", "torch.xpu",
    "torch.cpu", "torch.mtia", "torch.accelerator", "torch.amp", "torch.autograd", "torch.library",
    "torch.utils", "torch.utils.checkpoint", "torch.func", "torch.export", "torch.jit", "torch.random",
    "torch.sparse", "torch.nested",
)

_NAMESPACE_SCRIPT = """
import json, sys, warnings
warnings.simplefilter("ignore")
import torch
out = {}
for name in sys.argv[1:]:
    obj = torch
    try:
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
    except AttributeError:
        continue
    out[name] = sorted(n for n in dir(obj) if hasattr(obj, n))
print(json.dumps(out))
"""


def namespace_attributes() -> Dict[str, List[str]]:
    """Per namespace of :data:`HASATTR_NAMESPACES`: every name ``hasattr`` finds on it right
    after a bare ``import torch``, read in a fresh interpreter (``dir``, each name checked
    with ``hasattr``). Imports only add attributes, so each listed name is there in any
    process that imported torch, and Dynamo folds ``hasattr(torch, name)`` to that constant
    while tracing (measured on torch 2.13: no graph break, the branch it selects is traced)."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_LOGS", "TORCHDYNAMO"))}
    done = subprocess.run(
        [sys.executable, "-c", _NAMESPACE_SCRIPT, *HASATTR_NAMESPACES],
        capture_output=True, text=True, check=True, env=env,
    )
    return json.loads(done.stdout)


def torch_function_modules() -> Dict[str, List[str]]:
    """``torch_function_modules``: the public lower-case functions of the ``torch`` namespace that
    are written in Python, by the module that defines them (``"torch"`` for ``torch/__init__.py``:
    ``get_device_module``, ``set_default_dtype``, ``typename``, ``compile``...; ``"torch.functional"``:
    ``einsum``, ``split``, ``stft``...).  The operators (``torch.add``: C functions of
    ``torch._C._VariableFunctions``) are not listed.  The analysis reads a call of a function of
    ``torch/__init__.py`` as returning no tensor: they configure torch or describe its build."""
    out: Dict[str, List[str]] = {}
    for name in sorted(dir(torch)):
        obj = getattr(torch, name, None)
        if name.startswith("_") or not name[:1].islower() or not callable(obj):
            continue
        fn = inspect.unwrap(obj)  # ``get_device_module`` is an ``lru_cache`` wrapper
        if not inspect.isfunction(fn):
            continue
        out.setdefault(fn.__module__, []).append(name)
    return out


#: Schema types of an argument that is a Python value, never a tensor or a number that a 0-d
#: tensor could stand for (``Optional[...]`` and ``List[...]`` of them count the same).
NON_TENSOR_SCHEMA_TYPES = frozenset({"int", "SymInt", "bool", "ScalarType", "Device", "Layout", "MemoryFormat", "str"})
#: How many ATen arguments must bear a name before the name counts as a convention.
PARAMETER_NAME_MIN_USES = 10


def non_tensor_parameter_names() -> List[str]:
    """``parameter_names.non_tensor``: the argument names that ATen's operator schemas give at
    least :data:`PARAMETER_NAME_MIN_USES` times, and only to Python values of
    :data:`NON_TENSOR_SCHEMA_TYPES` (``dim``, ``dims``, ``axis``, ``kernel_size``, ``stride``,
    ``groups``, ``is_causal``, ``training``, ``dtype``, ``device``...).  A name ATen also gives to a
    tensor or to a float/number (``n``, ``k``, ``index``, ``scale``, ``size``, ``padding``) is not
    listed.  The analysis does not take an unannotated parameter of such a name for a sure
    tensor.  Source: ``torch._C._jit_get_all_schemas()``, the ``aten::`` operators."""
    uses: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        for arg in schema.arguments:
            uses[arg.name][str(arg.type).replace("Optional[", "").replace("List[", "").replace("]", "")] += 1
    return sorted(
        name for name, types in uses.items()
        if sum(types.values()) >= PARAMETER_NAME_MIN_USES and set(types) <= NON_TENSOR_SCHEMA_TYPES
    )


def _named_tensor_returns(packet: Any, count: int) -> Optional[List[str]]:
    """The return names of the first overload of an aten op packet that returns ``count``
    named tensors (``aten.max.dim``: ``values, indices``), or ``None``."""
    for overload in packet.overloads():
        returns = getattr(packet, overload)._schema.returns
        if len(returns) == count and all(r.name and str(r.type) == "Tensor" for r in returns):
            return [r.name for r in returns]
    return None


def return_types() -> Dict[str, List[str]]:
    """Field names of the named tuples (``torch.return_types``) ops return, by op name.

    The names are those of ``torch.return_types.__all__`` (structseq classes; the ``_out``
    variants left out), e.g. ``max``, ``topk``, ``linalg_eigh``; the field names are the
    return names of the aten op of the same name whose schema returns that many named
    tensors (``aten::max.dim(...) -> (Tensor values, Tensor indices)``).  Every field is a
    tensor; an op whose schema names none of the right count is left out.
    """
    out: Dict[str, List[str]] = {}
    for name in torch.return_types.__all__:
        cls = getattr(torch.return_types, name)
        if name.endswith("_out") or not isinstance(cls, type) or not hasattr(cls, "n_fields"):
            continue
        packet = getattr(torch.ops.aten, name, None)
        fields = _named_tensor_returns(packet, cls.n_fields) if packet is not None else None
        if fields:
            out[name] = fields
    return dict(sorted(out.items()))


AMP_PACKAGES = ("torch.amp", "torch.cuda.amp", "torch.cpu.amp")


def _deprecation_marker(obj: Any) -> Optional[str]:
    """The ``typing_extensions.deprecated`` message on a function, a class or its own ``__init__``."""
    msg = getattr(obj, "__deprecated__", None)
    if msg is None and isinstance(obj, type):
        init = obj.__dict__.get("__init__")
        msg = getattr(init, "__deprecated__", None)
    return str(msg) if msg is not None else None


def _amp_modules() -> List[types.ModuleType]:
    import pkgutil

    mods = []
    for name in AMP_PACKAGES:
        pkg = importlib.import_module(name)
        mods.append(pkg)
        for info in pkgutil.iter_modules(getattr(pkg, "__path__", [])):
            if not info.name.startswith("_"):
                mods.append(importlib.import_module(f"{name}.{info.name}"))
    return mods


def _call_warning(fn: Any, args: tuple) -> Optional[Tuple[str, str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - a function that needs arguments says nothing here
            return None
    for w in seen:
        if issubclass(w.category, (DeprecationWarning, FutureWarning)):
            text = str(w.message).split(" (Triggered internally", 1)[0]
            return w.category.__name__, " ".join(text.split())
    return None


def amp_deprecated() -> Dict[str, Dict[str, str]]:
    """Deprecated mixed-precision names (see the module docstring): name -> category, message, how."""
    out: Dict[str, Dict[str, str]] = {}
    for mod in _amp_modules():
        for name in sorted(vars(mod)):
            if name.startswith("_"):
                continue
            msg = _deprecation_marker(getattr(mod, name))
            if msg is not None:
                out[f"{mod.__name__}.{name}"] = {"category": "FutureWarning", "message": " ".join(msg.split()), "how": "typing_extensions.deprecated"}
    for name in sorted(dir(torch)):
        if "autocast" not in name or name.startswith("_"):
            continue
        fn = getattr(torch, name)
        if not callable(fn) or isinstance(fn, type):
            continue
        args: tuple = ()
        if name.startswith("set_"):
            getter = next((getattr(torch, p + name[4:]) for p in ("get_", "is_") if hasattr(torch, p + name[4:])), None)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the getter may be deprecated too; its own turn comes
                    args = (getter(),)
            except Exception:  # noqa: BLE001 - no getter, or one that needs a device: not probed
                continue
        elif not name.startswith(("get_", "is_")):
            continue
        found = _call_warning(fn, args)
        if found is not None:
            out[f"torch.{name}"] = {"category": found[0], "message": found[1], "how": "warns when called"}
    return out


def _public_names(obj: Any) -> List[str]:
    """The dotted names code may reach ``obj`` under: ``<module>.<name>`` for every loaded module
    of torch that holds it under its own name (``torch.onnx.is_in_onnx_export`` as well as
    ``torch.onnx.utils.is_in_onnx_export``, ``torch.jit.is_scripting`` as well as
    ``torch._jit_internal.is_scripting``)."""
    name = getattr(obj, "__name__", None)
    if not name:
        return []
    out = []
    for space, mod in sorted(sys.modules.items()):
        if (space == "torch" or space.startswith("torch.")) and mod is not None and getattr(mod, name, None) is obj:
            out.append(f"{space}.{name}")
    return out


def tracing_state() -> Dict[str, Dict[str, Any]]:
    """``tracing_state``: the value Dynamo gives each query of the tracing state while it traces
    (``torch.onnx.is_in_onnx_export()`` is False, ``torch.compiler.is_compiling()`` True,
    ``torch.jit.is_tracing()`` False), so code behind such a guard is dead or live in the graph.
    ``torch.compiler.is_exporting()`` reads torch.export's flag at trace time: ``"export"`` (true
    under ``torch.export`` only).  Source: ``torch._dynamo.variables.torch.tracing_state_functions()``,
    the handler's table; each value is confirmed by compiling ``x + 1 if fn() else x - 1`` with
    ``fullgraph=True`` (``confirmed``)."""
    from torch._dynamo.variables.torch import tracing_state_functions

    out: Dict[str, Dict[str, Any]] = {}
    for fn, value in tracing_state_functions().items():
        names = _public_names(fn)
        if not names:
            continue
        if fn is getattr(torch.compiler, "is_exporting", None):
            value, expect = "export", False  # plain torch.compile: not exporting
        else:
            expect = bool(value)

        def probe(x, fn=fn):
            return x + 1 if fn() else x - 1

        torch._dynamo.reset()
        try:
            with _quiet():
                got = torch.compile(probe, backend="eager", fullgraph=True)(torch.zeros(1))
            confirmed = bool(got.item() == (1.0 if expect else -1.0))
        except Exception:  # noqa: BLE001 - recorded as unconfirmed
            confirmed = False
        for qualname in names:
            out[qualname] = {"value": value, "confirmed": confirmed}
    return dict(sorted(out.items()))


def forbidden_callables() -> Dict[str, Dict[str, Any]]:
    """``forbidden``: the functions Dynamo refuses to trace at all.  A call of one in a compiled
    region is no graph break: compilation fails with "Attempt to trace forbidden callable" (an
    ``AssertionError``, in every mode), so the model does not run compiled.  Source:
    ``trace_rules.is_forbidden`` (the ``_dynamo_forbidden`` mark that
    ``torch._dynamo.forbid_in_graph`` puts on ``mark_dynamic``, ``maybe_mark_dynamic``,
    ``mark_static_address``, and ``torch.compiler`` on ``set_stance``), asked of every function
    of every loaded torch module, under each name code may reach it by (:func:`_public_names`).
    Each is confirmed by compiling a function that calls it (``confirmed``: compilation failed
    with that message; the call itself never runs)."""
    found: Dict[int, Any] = {}
    for space, mod in sorted(sys.modules.items()):
        if mod is None or not (space == "torch" or space.startswith("torch.")):
            continue
        for obj in list(vars(mod).values()):
            if inspect.isfunction(obj) and trace_rules.is_forbidden(obj):
                found[id(obj)] = obj
    out: Dict[str, Dict[str, Any]] = {}
    for obj in found.values():
        names = _public_names(obj)
        if not names:
            continue

        def probe(x, fn=obj):
            fn(x)
            return x + 1

        torch._dynamo.reset()
        try:
            with _quiet():
                torch.compile(probe, backend="eager")(torch.zeros(1))
            confirmed = False  # compiled (or ran): not forbidden after all
        except AssertionError as exc:
            confirmed = "forbidden callable" in str(exc)
        except Exception:  # noqa: BLE001 - recorded as unconfirmed
            confirmed = False
        for qualname in names:
            out[qualname] = {"confirmed": confirmed}
    return dict(sorted(out.items()))


def collectives() -> Dict[str, Dict[str, Any]]:
    """``torch.distributed`` functions with an ``async_op`` parameter: traced as functional collectives or not."""
    if not torch.distributed.is_available():
        return {}
    import torch.distributed as dist
    from torch.distributed import _functional_collectives as funcol
    from torch.distributed import distributed_c10d as c10d

    remapped = set(map(id, funcol.traceable_collective_remaps))
    out: Dict[str, Dict[str, Any]] = {}
    for name in sorted(vars(c10d)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ``reduce_op`` warns when read
            fn = getattr(c10d, name)
            if name.startswith("_") or not inspect.isfunction(fn):
                continue
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if "async_op" not in params:
            continue
        entry = {"functional": id(fn) in remapped, "lookup": trace_rules.lookup(fn).__name__}
        out[f"torch.distributed.distributed_c10d.{name}"] = entry
        if getattr(dist, name, None) is fn:
            out[f"torch.distributed.{name}"] = entry
    return out


#: Inductor modules whose source holds the "skipping cudagraphs due to ..." messages.
CUDAGRAPH_SOURCES = ("cudagraph_utils.py", "compile_fx.py")


def _literal_head(node: Any, assigned: Dict[str, Any]) -> Optional[str]:
    """The literal text a message expression starts with (an f-string up to its first field).

    A name is looked up among the string assignments of the enclosing function.
    """
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        head = ""
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                head += part.value
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and not head:
                inner = _literal_head(assigned.get(part.value.id), assigned)
                if inner is None:
                    return None
                head += inner
            else:
                break
        return head
    if isinstance(node, ast.BinOp):  # "a" "b" split over lines is one Constant; "a" + "b" is not
        left = _literal_head(node.left, assigned)
        right = _literal_head(node.right, assigned) if left is not None else None
        return left + right if right is not None else left
    if isinstance(node, ast.Name):
        return _literal_head(assigned.get(node.id), assigned)
    return None


def cudagraph_skip_reasons() -> List[str]:
    """Reasons Inductor gives when ``mode="reduce-overhead"`` runs a graph without CUDA graphs.

    Read from the installed ``torch/_inductor`` source (:data:`CUDAGRAPH_SOURCES`): the
    literal head of every argument of ``format_default_skip_message(...)`` (which prefixes
    "skipping cudagraphs due to "), e.g. ``"mutated inputs"``, ``"cpu device"``, with the
    f-string's fields and counts cut off.
    """
    import ast

    base = Path(torch._inductor.__file__).parent
    reasons = set()
    for name in CUDAGRAPH_SOURCES:
        tree = ast.parse((base / name).read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            assigned: Dict[str, Any] = {}
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    assigned.setdefault(node.targets[0].id, node.value)
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "format_default_skip_message"
                    and node.args
                ):
                    head = _literal_head(node.args[0], assigned)
                    if head:
                        reasons.add(" ".join(head.split(".")[0].split("(")[0].split()).rstrip(" :"))
    return sorted(r for r in reasons if r)


def cudagraph_modes() -> Dict[str, bool]:
    """``torch.compile`` mode -> whether it turns on CUDA graphs (``triton.cudagraphs``),
    from ``torch._inductor.list_mode_options()``."""
    import torch._inductor

    options = torch._inductor.list_mode_options()
    return {mode: bool(opts.get("triton.cudagraphs", False)) for mode, opts in sorted(options.items())}


_NN_CTOR_ARGS = ((), (4,), (4, 4), (4, 2), (4, 4, 3), (4, 4, 4), (2,))
_NN_INPUT_SHAPES = ((2, 4), (2, 4, 6), (2, 4, 6, 6), (2, 4, 6, 6, 6))
_NN_CONTAINERS = frozenset("Module Sequential ModuleList ModuleDict ParameterList ParameterDict Container".split())


def _buffer_snapshot(module: "torch.nn.Module") -> Dict[str, Any]:
    return {name: (b.detach().clone() if b is not None else None) for name, b in module.named_buffers(remove_duplicate=False)}


def _written(before: Dict[str, Any], after: Dict[str, Any]) -> List[str]:
    out = set(before) ^ set(after)
    for name in set(before) & set(after):
        a, b = before[name], after[name]
        if (a is None) != (b is None) or (a is not None and (a.shape != b.shape or not torch.equal(a, b))):
            out.add(name)
    return sorted(out)


def _nn_call(module: "torch.nn.Module", training: bool, inputs: Tuple[Any, ...]) -> List[str]:
    module.train(training)
    before = _buffer_snapshot(module)
    module(*inputs)
    return _written(before, _buffer_snapshot(module))


def _nn_measure(cls: type, extra: Dict[str, Any]) -> Optional[Tuple[str, "torch.nn.Module", Tuple[Any, ...]]]:
    """The first constructor arguments and inputs that build and run ``cls`` (see the module docstring)."""
    for args in _NN_CTOR_ARGS:
        try:
            with _quiet():
                torch.manual_seed(0)
                module = cls(*args, **extra)
        except Exception:
            continue
        for shape, integer in [(shape, False) for shape in _NN_INPUT_SHAPES] + [(shape, True) for shape in _NN_INPUT_SHAPES]:
            for count in (1, 2, 3):
                torch.manual_seed(0)
                if integer:  # indices (Embedding)
                    inputs = tuple(torch.randint(0, 2, shape) for _ in range(count))
                else:  # positive values in (0.1, ...): probabilities, lengths and logs work too
                    inputs = tuple(torch.randn(*shape).abs() + 0.1 for _ in range(count))
                try:
                    with _quiet():
                        torch.manual_seed(0)
                        probe = cls(*args, **extra)
                        probe.train(True)
                        probe(*inputs)
                except Exception:
                    continue
                kw = "".join(f", {k}={v!r}" for k, v in extra.items())
                draw = f"randint(0, 2, {shape})" if integer else f"randn{shape}"
                call = f"{cls.__name__}({', '.join(map(str, args))}{kw})({', '.join([draw] * count)})"
                return call, module, inputs
    return None


def nn_module_classes() -> List[str]:
    """Public ``torch.nn`` module classes (containers left out), sorted."""
    out = []
    for name in sorted(dir(torch.nn)):
        cls = getattr(torch.nn, name)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module) and not name.startswith("_") and name not in _NN_CONTAINERS:
            out.append(name)
    return out


def nn_module_fact(name: str) -> Dict[str, Any]:
    """The measured entry of ``torch.nn.<name>`` (see the module docstring)."""
    cls = getattr(torch.nn, name)
    entry: Dict[str, Any] = {"measured_with": None, "parameters": None, "train_writes": None, "eval_writes": None}
    if issubclass(cls, torch.nn.modules.lazy.LazyModuleMixin):
        entry.update(train_writes=["<parameters>"], eval_writes=["<parameters>"])
        return entry
    found = _nn_measure(cls, {})
    if found is None:
        return entry
    call, module, inputs = found
    try:
        with _quiet():
            train = _nn_call(module, True, inputs)
            evaluate = _nn_call(module, False, inputs)
    except Exception:
        return entry
    entry.update(measured_with=call, parameters=any(True for _ in module.parameters()), train_writes=train, eval_writes=evaluate)
    if train and "track_running_stats" in inspect.signature(cls.__init__).parameters:
        off = _nn_measure(cls, {"track_running_stats": False})
        if off is not None:
            with _quiet():
                if not _nn_call(off[1], True, off[2]):
                    entry["unless"] = "track_running_stats=False"
    return entry


def nn_module_facts() -> Dict[str, Dict[str, Any]]:
    """Per public ``torch.nn`` module class: buffer writes in train and eval mode, measured."""
    return {f"torch.nn.{name}": nn_module_fact(name) for name in nn_module_classes()}


def stamp() -> Dict[str, str]:
    return {
        "torch": torch.__version__,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "numpy": numpy.__version__,
    }


def derive_static(derived: bool = True) -> Dict[str, Any]:
    """Every part of the table that does not need a probe. ``derived=False`` leaves out the
    sections of :data:`DERIVED_SECTIONS` (the ``shape_ops`` scan takes minutes; the test
    re-derives their shipped entries instead)."""
    return {
        "schema": SCHEMA,
        "generator": "tools/gen_dynamo_facts.py",
        "versions": stamp(),
        "calls": {c.qualname: {"probe": c.call, **derive(c.qualname)} for c in CALLS},
        "tensor_calls": {c.qualname: {"probe": c.call, **derive_tensor(c.qualname)} for c in TENSOR_CALLS},
        "shape_calls": {c.qualname: {"probe": c.call, **derive(c.qualname)} for c in SHAPE_CALLS},
        "sized_calls": {c.qualname: {"probe": c.call, **_fact("torch._numpy", "traces")} for c in SIZED_CALLS},
        "math": {"constant_fold": math_names()},
        "numpy": numpy_names(),
        "torch_function_modules": torch_function_modules(),
        "parameter_names": {"non_tensor": non_tensor_parameter_names()},
        "skip_modules": skip_modules(),
        "graph_breaks": registry_subset(),
        "tensor": {"attributes": tensor_attributes()},
        "namespaces": namespace_attributes(),
        "return_types": return_types(),
        "amp_deprecated": amp_deprecated(),
        "collectives": collectives(),
        "tracing_state": tracing_state(),
        "forbidden": forbidden_callables(),
        **{section: derived_section(cands()) for section, cands in (DERIVED_SECTIONS if derived else ())},
        "inplace_view_methods": inplace_view_methods(),
        "schema_arguments": schema_arguments(),
        "cudagraphs": {"modes": cudagraph_modes(), "skip_reasons": cudagraph_skip_reasons()},
    }


# ---------------------------------------------------------------------------
# ops whose output shape (or value) depends on data, in-place view ops, NumPy gaps

#: The ATen tags that say an op's output depends on tensor data.
SHAPE_TAGS = ("dynamic_output_shape", "data_dependent_output")
#: Argument lists tried on every scanned callable (names from :data:`PROBE_VARS`, or ints).
SHAPE_FORMS: Tuple[Tuple[str, ...], ...] = (
    ("x",), ("b",), ("i",), ("x", "b"), ("i", "i"), ("b", "x", "x"), ("x", "0"), ("i", "3"), ("x", "2"),
    ("lp", "tg", "il", "tl"),
    # a 0-d integer tensor where a size or count may go (``torch.arange(n)``, ``x.view(n, -1)``,
    # ``x.narrow(0, 0, n)``): reading it as an int runs ``aten::_local_scalar_dense``
    ("n4",), ("x", "n4"), ("x", "n4", "-1"), ("x", "0", "0", "n4"),
    # ... in a later position (``x.view(-1, n)``, ``x.reshape(1, n)``, ``x.repeat(1, n)``)
    ("x", "-1", "n4"), ("x", "1", "n4"), ("x", "1", "n4", "-1"),
    # ... after an integer tensor (``F.one_hot(i, n)``: a class count read from the data)
    ("i", "n4"),
    # ... among the sizes of a factory (``torch.zeros(n, 3)``, ``torch.ones(3, n)``)
    ("n4", "3"), ("3", "n4"),
    # ... beside a tuple of sizes (``torch.randint(n, (3,))``, ``torch.randint(0, n, (3,))``, a fill
    # value: ``x.new_full((2, 2), n)``, ``torch.full((2, 2), n)``) or inside one (``F.pad(x, (0, n))``)
    ("n4", "(3,)"), ("0", "n4", "(3,)"), ("x", "(2, 2)", "n4"), ("(2, 2)", "n4"), ("x", "(0, n4)"),
)
NUMPY_FORMS: Tuple[Tuple[str, ...], ...] = (
    ("a",), ("ab",), ("ai",), ("ab", "a", "a"), ("ai", "ai"), ("a", "0"), ("ai", "3"),
)
SCAN_SPACES = ("torch", "torch.Tensor", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft")
#: Names not called while scanning: global-state setters, file and process I/O, compilers
#: and tracers, and the ``Tensor`` methods that write their receiver (``*_``).
SCAN_SKIP = (
    "set_", "use_", "save", "load", "manual_seed", "seed", "compile", "export", "from_file", "vmap", "cond",
    "while_loop", "jit", "onnx", "fork", "wait", "register", "backward", "autograd", "detect_anomaly",
)


def _is_py(arg: str) -> bool:
    return arg.lstrip("-").isdigit()


def _is_seq(arg: str) -> bool:
    """A tuple literal of a probe argument list: ``"(3,)"``, ``"(0, n4)"``."""
    return arg.startswith("(")


def _scan_env() -> Dict[str, Any]:
    """The probe variables, computed from a seeded ``x`` the way the probes compute them."""
    torch.manual_seed(0)
    env: Dict[str, Any] = {"x": torch.randn(4, 4), "torch": torch}
    for var, expr in PROBE_VARS.items():
        env[var] = eval(expr, {}, env)  # noqa: S307 - our own constant expressions
    return env


def _tagged_ops(fn: Any, form: Tuple[str, ...], wrap: Any = None) -> Optional[List[str]]:
    """The tagged ATen ops (:data:`SHAPE_TAGS`) one eager call of ``fn`` on ``form`` runs,
    or None when the call raises."""
    from torch.utils._python_dispatch import TorchDispatchMode

    tags = tuple(getattr(torch.Tag, t) for t in SHAPE_TAGS)

    class _Record(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.hit: set = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
            if any(t in func.tags for t in tags):
                self.hit.add(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    env = _scan_env()
    args = [int(a) if _is_py(a) else eval(a, {}, env) if _is_seq(a) else env[a] for a in form]  # noqa: S307
    if wrap is not None:
        args = [a if _is_py(f) or _is_seq(f) else wrap(a) for a, f in zip(args, form)]
    record = _Record()
    try:
        with _quiet(), torch.no_grad(), record:
            fn(*args)
    except Exception:  # noqa: BLE001 - an argument list the callable does not take
        return None
    return sorted(record.hit)


def _scan_callables() -> List[Tuple[str, Any, Optional[Any]]]:
    """``(qualname, callable, wrap)`` for every scanned callable: the public functions of
    :data:`SCAN_SPACES` and the ``torch._numpy`` functions Dynamo maps NumPy onto
    (``wrap`` turns a tensor argument into a ``torch._numpy`` array)."""
    out: List[Tuple[str, Any, Optional[Any]]] = []
    for space in SCAN_SPACES:
        ns = resolve(space)
        for name in sorted(dir(ns)):
            if name.startswith("_") or name.startswith(SCAN_SKIP) or name.endswith("_"):
                continue
            fn = getattr(ns, name, None)
            if not callable(fn) or inspect.isclass(fn) or inspect.ismodule(fn):
                continue
            out.append((f"{space}.{name}", fn, None))
    import torch._numpy as tnp

    _, np_map = _numpy_maps()
    implemented = numpy_names()["implemented"]
    for module, names in sorted(implemented.items()):
        if module == "numpy.random":
            continue
        np_mod = importlib.import_module(module)
        for name in names:
            tnp_fn = np_map.get(getattr(np_mod, name))
            if tnp_fn is not None:
                out.append((f"{module}.{name}", tnp_fn, tnp.asarray))
    return out


def _operand_position(fn: Any, form: Tuple[str, ...], wrap: Any = None) -> bool:
    """An argument list holding the 0-d tensor ``n4`` where the callable also takes an ordinary
    tensor (``x.add(n4, -1)`` next to ``x.add(x, -1)``): a tensor operand that a 0-d tensor
    reaches through a special case, not a size argument; such forms are left out, so the table
    says "a tensor here is read as a number" only where torch rejects a (4, 4) tensor."""
    if "n4" not in form:
        return False
    return _tagged_ops(fn, tuple("x" if a == "n4" else a for a in form), wrap) is not None


def _probe_call(qualname: str, form: Tuple[str, ...]) -> str:
    """The probe expression: ``torch.where(b)``, ``x.unique()`` for a method, ``numpy.unique(a)``."""
    if qualname.startswith("torch.Tensor."):
        recv = form[0]
        return f"{recv}.{qualname.rsplit('.', 1)[1]}({', '.join(form[1:])})"
    return f"{qualname}({', '.join(form)})"


def _kinds(form: Tuple[str, ...]) -> List[str]:
    """The kind of each argument, as the linter matches it: ``"py"`` (a Python int), ``"T"`` (a
    tensor), ``"S"`` (a tuple of Python ints) or ``"S[T]"`` (a tuple holding a 0-d tensor)."""
    return [_arg_kind(a) for a in form]


def _arg_kind(arg: str) -> str:
    if _is_py(arg):
        return "py"
    if _is_seq(arg):
        return "S[T]" if _names(arg) & set(PROBE_VARS) else "S"
    return "T"


@functools.lru_cache(maxsize=None)
def shape_op_candidates(only: Optional[frozenset] = None) -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """Every (callee, argument list) of a callee that reaches a tagged op (see the module
    docstring), with its static entry. The whole scan takes a few minutes; ``only``
    restricts it to some callees."""
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for qualname, fn, wrap in _scan_callables():
        if only is not None and qualname not in only:
            continue
        forms = NUMPY_FORMS if wrap is not None else SHAPE_FORMS
        if qualname.startswith("torch.Tensor."):
            forms = tuple(f for f in forms if not _is_py(f[0]) and not _is_seq(f[0]))
        ran = [(form, _tagged_ops(fn, form, wrap)) for form in forms]
        ran = [(form, hit) for form, hit in ran if hit is not None and not _operand_position(fn, form, wrap)]
        if not any(hit for _, hit in ran):
            continue
        for form, hit in ran:
            call = _probe_call(qualname, form)
            entry = {
                "callee": qualname,
                "form": _kinds(form[1:] if qualname.startswith("torch.Tensor.") else form),
                "aten": hit,
                **_fact("tagged-op" if hit else "no-tagged-op", "breaks" if hit else "traces"),
            }
            out.append((Candidate(call, call), entry))
    return tuple(out)


INPLACE_VIEW_FORMS: Tuple[str, ...] = ("", "0", "0, 1", "(2, 2), (1, 1)", "16", "x + 1")


def inplace_view_methods() -> List[str]:
    """``Tensor`` methods whose ``torch.ops.aten`` packet's first overload is tagged
    ``inplace_view`` -- the test Dynamo applies (``torch/_dynamo/variables/tensor.py``)."""
    out = []
    for name in sorted(dir(torch.Tensor)):
        if name.startswith("_"):
            continue
        packet = getattr(torch.ops.aten, name, None)
        try:
            first = getattr(packet, packet.overloads()[0])
        except Exception:  # noqa: BLE001 - not an aten packet
            continue
        if torch.Tag.inplace_view in first.tags:
            out.append(name)
    return out


def _positional_kinds(arguments) -> Tuple[str, bool]:
    """One overload's positional parameters as a string of kinds (``"t"``: a tensor may go
    there, ``"n"``: none may), and whether its first one takes varargs (an ``int[]`` first
    parameter: ``x.view(2, -1)`` is ``x.view((2, -1))``, the Python binding's rule)."""
    kinds = "".join("t" if "Tensor" in str(a.type) else "n" for a in arguments if not a.kwarg_only)
    first = next((a for a in arguments if not a.kwarg_only), None)
    return kinds, first is not None and str(first.type) in ("List[int]", "List[SymInt]")


def schema_arguments() -> Dict[str, str]:
    """``schema_arguments``: per ``torch.Tensor`` method and ``torch`` function bound in C (the
    ATen operators; Python-defined ones such as ``Tensor.split`` are left out: their own code
    decides), the positional arguments no overload's ATen schema types as a tensor.

    The value is one character per position (``"n"``: every overload that takes an argument
    there types it as a number, size, flag or dtype; ``"t"``: some overload takes a tensor there,
    or none takes one), then ``"*"`` and the verdict for every later position when an overload's
    first parameter is a list of ints given as varargs (``x.view(n, -1)``, ``torch.zeros(n, d)``).
    A method's ``self`` is not counted.  Only names with an ``"n"`` somewhere are listed.  The
    fact is eager Python's (``torch._C._jit_get_all_schemas()``), not Dynamo's: the analysis
    reads a parameter passed only where ATen takes a number as most likely a number, as it reads
    an argument of ``range()`` (a 0-d tensor there is read with ``.item()``)."""
    overloads: Dict[str, List[Any]] = {}  # operator name -> its schemas
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::"):
            overloads.setdefault(schema.name[len("aten::"):], []).append(schema)
    methods = {n for n in dir(torch.Tensor) if not n.startswith("_") and type(getattr(torch.Tensor, n)).__name__ == "method_descriptor"}
    functions = {n for n in dir(torch._C._VariableFunctions) if not n.startswith("_") and getattr(torch, n, None) is getattr(torch._C._VariableFunctions, n)}
    out: Dict[str, str] = {}
    for qual, names, is_method in (("torch.Tensor", methods, True), ("torch", functions, False)):
        for name in sorted(names):
            forms = []
            for schema in overloads.get(name, ()):
                arguments = list(schema.arguments)
                if is_method:
                    if not arguments or arguments[0].name != "self" or "Tensor" not in str(arguments[0].type):
                        continue
                    arguments = arguments[1:]
                forms.append(_positional_kinds(arguments))
            if not forms:
                continue
            width = max(len(k) for k, _ in forms)
            verdict = ""
            for i in range(width):
                at = [k[i] for k, _ in forms if i < len(k)] + [k[0] for k, varargs in forms if varargs and i >= len(k)]
                verdict += "n" if at and all(c == "n" for c in at) else "t"
            if any(varargs for _, varargs in forms):
                verdict += "*n"  # only an overload with varargs takes more: into its list of ints
            if "n" in verdict:
                out[f"{qual}.{name}"] = verdict
    return out


@functools.lru_cache(maxsize=1)
def inplace_view_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """For each in-place view method, the first argument list that runs eagerly on a fresh
    (4, 4) tensor, probed on the input (expected to break) and on ``x + 1`` (to trace)."""
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for method in inplace_view_methods():
        for args in INPLACE_VIEW_FORMS:
            x = torch.randn(4, 4)
            try:
                with _quiet():
                    eval(f"x.{method}({args})", {}, {"x": x})  # noqa: S307 - our own constant expressions
            except Exception:  # noqa: BLE001 - not this argument list
                continue
            for call, expect in ((f"x.{method}({args})", "breaks"), (f"(x + 1).{method}({args})", "traces")):
                entry = {"method": method, "receiver": "input" if expect == "breaks" else "fresh",
                         **_fact("inplace_view", expect, GB_DELAYED if expect == "breaks" else None)}
                out.append((Candidate(call, call), entry))
            break
    return tuple(out)


GB_NON_TENSOR = "torch.* op returned non-Tensor"


def _holds_a_tensor(result: Any) -> bool:
    """An eager call's result is a tensor or a tuple holding one: an op, not a query."""
    return isinstance(result, torch.Tensor) or (isinstance(result, tuple) and any(isinstance(r, torch.Tensor) for r in result))
#: Public zero-argument ``Tensor`` methods other rules report, or that are not queries of the
#: tensor (conversions and copies of its data, autograd calls): not candidates of
#: ``tensor_queries`` (private, dunder and in-place names never are).
TENSOR_QUERY_EXCLUDED = frozenset(
    "item tolist numpy backward retain_grad register_hook register_post_accumulate_grad_hook "
    "pin_memory cpu cuda record_stream".split()
)


def tensor_query_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``x.<name>()`` for every public method of ``torch.Tensor`` that runs with no argument on
    a float32 (4, 4) tensor and returns something that is not a tensor (a bool, an int, a
    storage, a tuple of ints): a query of the tensor's layout or storage.  Dynamo traces the
    ones ``TensorVariable`` has a ``method_<name>`` handler for (``numel``, ``dim``,
    ``is_contiguous``: a constant or a SymInt) and is expected to break on the others with
    "torch.* op returned non-Tensor" (GB0208), as a generic call whose result is not a
    tensor; the probe decides."""
    from torch._dynamo.variables.tensor import TensorVariable

    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for name in sorted(dir(torch.Tensor)):
        if name.startswith("_") or name in TENSOR_QUERY_EXCLUDED or name.endswith("_"):
            continue
        attr = getattr(torch.Tensor, name, None)
        if not callable(attr) or isinstance(attr, type):
            continue
        x = torch.randn(4, 4)
        try:
            with _quiet():
                result = getattr(x, name)()
        except Exception:  # noqa: BLE001 - needs arguments, or not for this tensor
            continue
        if isinstance(result, torch.Size) or result is None or _holds_a_tensor(result):
            continue  # (values, indices) and other tensor tuples: ops, not queries
        call = f"x.{name}()"
        handled = hasattr(TensorVariable, f"method_{name}")
        fact = _fact("tensor_queries", "traces") if handled else _fact("tensor_queries", "breaks", GB_NON_TENSOR)
        out.append((Candidate(call, call), {"method": name, "result": type(result).__name__, **fact}))
        if handled and not isinstance(result, (bool, int, float, str, tuple, torch.dtype, torch.device)):
            out += _query_result_methods(name, result)
    return tuple(out)


def _query_result_methods(query: str, result: Any) -> List[Tuple[Candidate, Dict[str, Any]]]:
    """``x.<query>().<name>()`` for every public method of a traced query's result object that
    runs with no argument and returns a bool, number or string: ``x.untyped_storage().nbytes()``.  Dynamo wraps
    the storage in ``UntypedStorageVariable``, whose ``call_method`` answers ``size`` alone and
    is expected to refuse the others ("Unsupported method call"); the probe decides.  The entry's
    ``via`` names the query."""
    from torch._dynamo.variables import tensor as tensor_variables

    storage_variable = getattr(tensor_variables, "UntypedStorageVariable", None)
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for name in sorted(dir(type(result))):
        if name.startswith("_") or name.endswith("_"):
            continue
        attr = getattr(type(result), name, None)
        if not callable(attr) or isinstance(attr, type):
            continue
        try:
            with _quiet():
                value = getattr(result, name)()
        except Exception:  # noqa: BLE001 - needs arguments, or not for this storage
            continue
        if not isinstance(value, (bool, int, float, str)):
            continue  # copies and conversions of the storage (``.float()``, ``.tolist()``): not queries
        answered = storage_variable is not None and name == "size"
        fact = _fact("tensor_queries", "traces") if answered else _fact("tensor_queries", "breaks", GB_METHOD)
        call = f"x.{query}().{name}()"
        out.append((Candidate(call, call), {"method": name, "via": query, "result": type(value).__name__, **fact}))
    return out


#: Argument lists tried for :func:`sized_keyword_candidates`: counts ``r`` (six ones) as input
#: and as repeats, so the output has the six elements the keyword states.
SIZED_KEYWORD_FORMS: Tuple[str, ...] = ("r", "r, r")


def _sized_keywords() -> List[Tuple[str, str]]:
    """``(op, keyword)`` for each keyword-only ``Optional[int]`` argument of an ATen operator
    overload tagged ``dynamic_output_shape`` or ``data_dependent_output``
    (``repeat_interleave``'s ``output_size``).  Source: ``torch._C._jit_get_all_schemas()`` and
    the overloads' tags."""
    out = set()
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        name = schema.name.split("::", 1)[1]
        packet = getattr(torch.ops.aten, name, None)
        overload = getattr(packet, schema.overload_name or "default", None) if packet is not None else None
        if overload is None or not any(getattr(torch.Tag, tag) in overload.tags for tag in SHAPE_TAGS):
            continue
        for arg in schema.arguments:
            if arg.kwarg_only and str(arg.type) == "Optional[int]":
                out.add((name, arg.name))
    return sorted(out)


def sized_keyword_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``sized_keywords``: a call of a data-dependent-shape op that states the output's size in
    a keyword (``torch.repeat_interleave(t, counts, output_size=n)``): Dynamo then knows the
    shape, so the call is expected to trace.  Candidates: ``torch.<op>`` and
    ``torch.Tensor.<op>`` for each ``(op, keyword)`` of :func:`_sized_keywords`, with the first
    argument list of :data:`SIZED_KEYWORD_FORMS` whose eager output has the stated six
    elements; the probe decides."""
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    r = eval(PROBE_VARS["r"], {}, {"x": torch.randn(4, 4)})  # noqa: S307 - our own constant expression
    for op, keyword in _sized_keywords():
        for callee, receiver in ((f"torch.{op}", None), (f"torch.Tensor.{op}", "r")):
            if not hasattr(torch.Tensor if receiver else torch, op):
                continue
            for form in SIZED_KEYWORD_FORMS:
                if receiver is not None:
                    head, _, rest = form.partition(", ")
                    if not rest:
                        continue
                    call = f"{head}.{op}({rest}, {keyword}=6)"
                else:
                    call = f"{callee}({form}, {keyword}=6)"
                try:
                    with _quiet():
                        result = eval(call, {"torch": torch}, {"r": r})  # noqa: S307 - our own constant expressions
                except Exception:  # noqa: BLE001 - not this argument list
                    continue
                if not isinstance(result, torch.Tensor) or result.numel() != 6:
                    continue
                entry = {"callee": callee, "keyword": keyword, **_fact("sized_keywords", "traces")}
                out.append((Candidate(f"{callee}:{keyword}", call), entry))
                break
    return tuple(out)


#: The first line of a ``Tensor`` method's docstring: its signature (``apply_(callable) -> Tensor``).
_SIGNATURE_LINE = re.compile(r"^\s*(\w+)\(([^)]*)\)")


def callable_method_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``x.clone().<name>(...)`` for every public ``Tensor`` method whose documented signature
    takes a Python ``callable`` (``apply_(callable)``, ``map_(tensor, callable)``: they run the
    callable on each element, on the CPU).  Source: the signature line of each method's
    docstring (``torch/_tensor_docs.py``).  Dynamo cannot put a Python function into the graph as
    an argument of a tensor method, so each is expected to break; the probe decides and names
    the break.  A ``tensor`` parameter gets ``x``, the callable ``lambda *a: a[0]``."""
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for name in sorted(dir(torch.Tensor)):
        if name.startswith("_"):
            continue
        doc = getattr(getattr(torch.Tensor, name, None), "__doc__", None) or ""
        match = _SIGNATURE_LINE.match(doc.strip().split("\n", 1)[0]) if doc.strip() else None
        if match is None or match.group(1) != name:
            continue
        params = [p.strip() for p in match.group(2).split(",") if p.strip()]
        if "callable" not in params or any(p not in ("tensor", "callable") for p in params):
            continue
        args = ", ".join("x" if p == "tensor" else "lambda *a: a[0]" for p in params)
        call = f"x.clone().{name}({args})"
        try:
            with _quiet():
                eval(call, {}, {"x": torch.randn(4, 4)})  # noqa: S307 - our own constant expressions
        except Exception:  # noqa: BLE001 - not callable this way on this build
            continue
        out.append((Candidate(f"torch.Tensor.{name}", call), {"method": name, **_fact("callable_methods", "breaks")}))
    return tuple(out)


#: The sequence types whose element searches ``sequence_searches`` probes, with the
#: expression that builds one holding two tensors of the graph.
SEQUENCE_BUILDERS: Tuple[Tuple[type, str], ...] = (
    (list, "[x.sum(), x.max()]"),
    (tuple, "(x.sum(), x.max())"),
    (collections.deque, "collections.deque([x.sum(), x.max()])"),
)


class _EqualitySpy:
    """An element that records every ``==`` Python asks it (always unequal)."""

    calls = 0

    def __eq__(self, other: object) -> bool:
        type(self).calls += 1
        return False

    __hash__ = object.__hash__


def _compares_elements(seq_type: type, name: str) -> bool:
    """True when ``seq.<name>(v)`` asks an element ``==`` (``index``, ``count``, ``remove``)."""
    _EqualitySpy.calls = 0
    seq = seq_type([_EqualitySpy(), _EqualitySpy()])
    try:
        getattr(seq, name)(_EqualitySpy())
    except Exception:  # noqa: BLE001 - ValueError of a failed search, TypeError of a wrong arity
        pass
    return _EqualitySpy.calls > 0


def sequence_search_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``seq.<name>(x.max())`` for every public one-argument method of ``list``, ``tuple`` and
    ``collections.deque`` that compares elements with ``==`` (found with an element that counts
    the comparisons asked of it): a search for a tensor in a sequence of tensors.  Python asks
    ``bool(a == b)`` of each element not identical to the argument, which on tensors is a
    data-dependent branch (expected: "Data-dependent branching", GB0170); the argument is a
    fresh tensor equal to the second element and identical to none (no identity shortcut
    applies, and the search succeeds in eager).  The probe decides, method by method."""
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for seq_type, build in SEQUENCE_BUILDERS:
        for name in sorted(dir(seq_type)):
            if name.startswith("_") or not _compares_elements(seq_type, name):
                continue
            type_name = "deque" if seq_type is collections.deque else seq_type.__name__
            call = f"{build}.{name}(x.max())"
            entry = {"type": type_name, "method": name, **_fact("sequence_searches", "breaks", GB_DATA_BRANCH)}
            out.append((Candidate(f"{type_name}.{name}", call), entry))
    return tuple(out)


#: Standard-library modules of plain data and helper classes that model code builds objects of
#: (``types.SimpleNamespace(...)``, ``decimal.Decimal(...)``, ``collections.OrderedDict()``):
#: ``classes`` probes a construction of each public class they define.  Modules whose
#: constructors touch the process (files, threads, sockets, subprocesses) are not listed.
CLASS_MODULES = (
    "types", "decimal", "fractions", "collections", "string", "datetime", "enum", "dataclasses", "contextlib",
    "functools", "weakref", "array", "numbers", "textwrap", "operator", "itertools",
)
#: Argument lists tried, in order, to build one object of each class in eager Python.
CLASS_FORMS = ("", "1", "'a'", "a=1", "1, 2", "[1, 2]", "2020, 1, 1", "'i', [1]", "len")


def _c_implemented(cls: type) -> bool:
    """The class defines its own ``__new__`` or ``__init__`` in C (not a Python function)."""
    for name in ("__new__", "__init__"):
        own = cls.__dict__.get(name)
        if own is not None and not isinstance(own, (types.FunctionType, staticmethod, classmethod)):
            return True
    return False


def class_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``module.Class(args)`` for every public, concrete, non-exception class defined in a module of
    :data:`CLASS_MODULES`, with the first argument list of :data:`CLASS_FORMS` that builds one in
    eager Python.  Dynamo inlines the construction of a class defined in Python
    (``polyfills.instantiate_user_defined_class_object``) and models a few C classes itself
    (``OrderedDict``, ``deque``, ``partial``, ``MappingProxyType``); for other C-implemented classes
    (its own C ``__new__``/``__init__``) its ``UserDefinedClassVariable`` falls back to the generic
    call, expected to break with "Unsupported function call" (GB0147).  The probe decides."""
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for module_name in CLASS_MODULES:
        module = importlib.import_module(module_name)
        for name in sorted(vars(module)):
            cls = getattr(module, name)
            if name.startswith("_") or not inspect.isclass(cls) or inspect.isabstract(cls):
                continue
            if cls.__module__ != module_name or issubclass(cls, BaseException):
                continue
            if issubclass(cls, enum.Enum):
                # an enum base (``enum.Flag``): model code uses members of its own subclasses, and
                # whether the bare base can be called varies between Python patch releases
                continue
            for form in CLASS_FORMS:
                try:
                    with _quiet():
                        eval(f"cls({form})", {"cls": cls, "len": len})  # noqa: S307 - our own forms
                except Exception:  # noqa: BLE001 - this form does not build one
                    continue
                c_impl = _c_implemented(cls)
                fact = _fact("classes", "breaks", "Unsupported function call") if c_impl else _fact("classes", "traces")
                qualname = f"{module_name}.{name}"
                entry = {"c_implemented": c_impl, **fact}
                out.append((Candidate(qualname, f"{qualname}({form})"), entry))
                break
    return tuple(out)


#: Modules whose context managers model code enters in ``forward`` (``with torch.no_grad():``,
#: ``with self._lock:``, ``with torch.random.fork_rng():``): ``context_managers`` probes a
#: ``with`` of every one of them.  Their public classes with ``__enter__``/``__exit__`` and their
#: ``contextlib.contextmanager`` functions are candidates; in the modules of
#: :data:`CONTEXT_FACTORY_MODULES` a function that returns a context manager when called with no
#: argument (``threading.Lock``) is one too.
CONTEXT_MODULES = (
    "torch", "torch.autograd", "torch.autograd.grad_mode", "torch.autograd.graph", "torch.autograd.profiler",
    "torch.autograd.forward_ad", "torch.profiler", "torch.random", "torch.nn.attention", "torch.backends.cudnn",
    "torch.backends.cuda", "torch.backends.mkldnn", "torch.amp", "torch.cpu.amp", "torch.sparse",
    "torch.nn.utils.parametrize", "torch.overrides", "torch.compiler",
    "threading", "contextlib", "warnings", "decimal",
)
#: Modules whose public functions are called with no argument to find context-manager factories
#: (their no-argument calls have no lasting effect).
CONTEXT_FACTORY_MODULES = ("threading",)
#: Argument lists tried, in order, to build one context manager in eager Python.
CONTEXT_FORMS = (
    "", "'x'", "False", "'cpu'", "ValueError", "torch.nn.attention.SDPBackend.MATH",
    # a pair of callables (``torch.autograd.graph.saved_tensors_hooks(pack, unpack)``)
    "lambda t: t, lambda t: t",
)


def _is_contextmanager_function(obj: Any) -> bool:
    """``obj`` is a function made by ``contextlib.contextmanager`` (its wrapper's code is the decorator's)."""
    marker = contextlib.contextmanager(lambda: iter(()))
    return inspect.isfunction(obj) and getattr(obj, "__code__", None) is marker.__code__


def _restore_global_modes():
    """Building some context managers switches a global mode at once (``torch.set_grad_enabled(False)``,
    ``torch.autograd.set_detect_anomaly(False)``): a context that puts the modes back."""
    grad, anomaly = torch.is_grad_enabled(), torch.is_anomaly_enabled()

    @contextlib.contextmanager
    def restore():
        try:
            yield
        finally:
            torch.set_grad_enabled(grad)
            torch.autograd.set_detect_anomaly(anomaly)

    return restore()


def context_manager_candidates() -> List[Tuple[str, str, List[str]]]:
    """``(name, constructor expression, every name)`` for each context manager of
    :data:`CONTEXT_MODULES`: built with the first argument list of :data:`CONTEXT_FORMS` that gives
    an object with ``__enter__`` and ``__exit__`` in eager Python.  An object reachable under several
    names (``torch.no_grad`` is ``torch.autograd.no_grad``) is one candidate with all its names."""
    seen: Dict[int, Tuple[str, str, List[str]]] = {}
    order: List[int] = []
    for module_name in CONTEXT_MODULES:
        module = importlib.import_module(module_name)
        # ``torch.backends.cudnn`` and its siblings replace their module with a ``PropModule``
        # that holds the real one as ``m``
        real = getattr(module, "m", None)
        namespace = vars(real) if isinstance(real, types.ModuleType) else vars(module)
        for name in sorted(namespace):
            obj = namespace[name]
            if name.startswith("_") or not callable(obj):
                continue
            qualname = f"{module_name}.{name}"
            if id(obj) in seen:
                seen[id(obj)][2].append(qualname)
                continue
            if inspect.isclass(obj):
                if issubclass(obj, BaseException) or not (hasattr(obj, "__enter__") and hasattr(obj, "__exit__")):
                    continue
            elif not (_is_contextmanager_function(obj) or module_name in CONTEXT_FACTORY_MODULES):
                continue
            for form in CONTEXT_FORMS if (inspect.isclass(obj) or _is_contextmanager_function(obj)) else ("",):
                try:
                    with _quiet(), _restore_global_modes():
                        built = eval(f"obj({form})", {"obj": obj, "torch": torch, "ValueError": ValueError})  # noqa: S307
                        if not (hasattr(type(built), "__enter__") and hasattr(type(built), "__exit__")):
                            break
                        with built:  # a generator-based one checks its arguments only here
                            pass
                except Exception:  # noqa: BLE001 - this form does not build one
                    continue
                seen[id(obj)] = (qualname, f"{qualname}({form})", [qualname])
                order.append(id(obj))
                break
    return [seen[i] for i in order]


_CONTEXT_PROBE = """
def probe_local_{i}(x):
    y = x + 1
    with {expr}:
        y = y * 2
    return y - 1


class ProbeStored{i}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ctx = {expr}

    def forward(self, x):
        y = x + 1
        with self.ctx:
            y = y * 2
        return y - 1
"""


def context_manager_facts() -> Dict[str, Dict[str, Any]]:
    """``context_managers``: per name of each candidate of :func:`context_manager_candidates`,
    what Dynamo does with a ``with`` of it, measured in two forms: ``local`` (built in the
    ``with`` statement inside the compiled function) and ``stored`` (built in ``__init__`` and
    entered as ``with self.ctx:``).  Dynamo models the context managers it knows
    (``torch/_dynamo/variables/ctx_manager.py``) only when they are built in the region ("Supported
    context managers can cross graph break boundaries only if they are local non-closure
    variables"); anything else breaks at the ``with`` ("Unsupported context manager", GB0142) and
    the frame runs eagerly.  Each form's outcome is ``breaks``/``traces``/``inconclusive`` with the
    registry id of a break at the ``with`` line."""
    cands = context_manager_candidates()
    out: Dict[str, Dict[str, Any]] = {}
    lines = ["import contextlib, decimal, threading, warnings", "import torch", "import torch.nn.attention"]
    with_lines: List[Tuple[int, int]] = []
    for i, (_name, expr, _names) in enumerate(cands):
        base = len(lines) + 1  # the template's first line (an empty one) is this line
        lines += _CONTEXT_PROBE.format(i=i, expr=expr).split("\n")
        with_lines.append((base + 3, base + 15))
    with tempfile.TemporaryDirectory() as workdir, _quiet():
        module, path = _import_lines(lines, workdir, "dynamo_context_probes")
        for i, (name, expr, names) in enumerate(cands):
            entry: Dict[str, Any] = {"probe": expr}
            for form, fn_name, line in (("local", f"probe_local_{i}", with_lines[i][0]), ("stored", f"ProbeStored{i}", with_lines[i][1])):
                try:
                    with _restore_global_modes():
                        fn = getattr(module, fn_name)
                        fn = fn() if inspect.isclass(fn) else fn
                        breaks = graph_breaks(fn, (torch.randn(4, 4),), backend="eager")
                    result = _classify(breaks, path, line)
                except Exception as exc:  # noqa: BLE001 - the answer is "inconclusive", not a crash
                    result = ProbeResult("inconclusive", None, None, type(exc).__name__)
                # a break inside the factory Dynamo inlines (``threading.RLock``) is on the way into the
                # ``with`` too: the user's line is the ``with``
                entry[form] = result.outcome
                entry[f"{form}_gb"] = result.gb if result.outcome == "breaks" else None
            for alias in names:
                out[alias] = dict(entry)
        sys.modules.pop("dynamo_context_probes", None)
    return out


def _plain_value(obj: Any) -> bool:
    """``obj`` is data (an array, a NumPy scalar, a Python number, string or container): a NumPy
    callable returning one builds no stateful object."""
    return obj is None or isinstance(obj, (numpy.ndarray, numpy.generic, int, float, complex, str, bytes, tuple, list, dict))


def numpy_object_candidates() -> List[Tuple[str, str, str, str]]:
    """``(constructor, call, class, method)`` for every public callable of ``numpy.random`` that,
    called with a seed (``0``) or with no argument, returns an object of a ``numpy.random`` class
    rather than an array or a number (``default_rng(0)`` -> ``Generator``, ``RandomState(0)``,
    the bit generators), with the first public method of that class (in name order) that runs
    with no argument: what a model calls on a generator it built in ``__init__``.  A class with
    no such method (``SeedSequence``) is left out."""
    out = []
    for name in sorted(dir(numpy.random)):
        ctor = getattr(numpy.random, name)
        if name.startswith("_") or not callable(ctor) or f"numpy.random.{name}" in _NOT_PROBED_NUMPY:
            continue
        for arg in ("0", ""):
            try:
                with _quiet():
                    obj = ctor(*([0] if arg else []))
            except Exception:  # noqa: BLE001 - this form does not build one
                continue
            if _plain_value(obj) or not type(obj).__module__.startswith("numpy.random"):
                break
            cls = type(obj)
            method = None
            for attr in sorted(dir(cls)):
                if attr.startswith("_") or isinstance(inspect.getattr_static(cls, attr, None), property):
                    continue  # a property (``BitGenerator.cffi`` imports cffi when read)
                if not callable(inspect.getattr_static(cls, attr, None)):
                    continue
                try:
                    with _quiet():
                        getattr(ctor(*([0] if arg else [])), attr)()
                except Exception:  # noqa: BLE001 - needs arguments
                    continue
                method = attr
                break
            if method is not None:
                out.append((f"numpy.random.{name}", f"numpy.random.{name}({arg})", f"numpy.random.{cls.__name__}", method))
            break
    return out


_STORED_PROBE = """
class StoredProbe{i}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.obj = {built}

    def forward(self, x):
        y = x + 1
        r = {use}
        return y * 2
"""


@contextlib.contextmanager
def _stored_object_probes(imports: List[str], probes: List[Tuple[str, str]], name: str) -> Iterator[Tuple[List[type], str, List[int]]]:
    """One ``nn.Module`` class per ``(built, use)`` of ``probes``: ``__init__`` stores ``built`` as
    ``self.obj`` and ``forward`` runs ``use`` on it (``self.obj.random()``, ``next(self.obj)``),
    written after ``imports`` to a real file ``<name>.py`` and imported (Dynamo reports its lines).

    Yields:
        ``(classes, path, use_lines)``: the classes in ``probes``' order, the file's absolute path,
        and the line of each ``use``.  The module is dropped from ``sys.modules`` afterwards.
    """
    lines = list(imports)
    use_lines: List[int] = []
    for i, (built, use) in enumerate(probes):
        base = len(lines) + 1
        lines += _STORED_PROBE.format(i=i, built=built, use=use).split("\n")
        use_lines.append(base + 8)
    with tempfile.TemporaryDirectory() as workdir, _quiet():
        module, path = _import_lines(lines, workdir, name)
        try:
            yield [getattr(module, f"StoredProbe{i}") for i in range(len(probes))], path, use_lines
        finally:
            sys.modules.pop(name, None)


def numpy_object_facts() -> Dict[str, Dict[str, Any]]:
    """``numpy_objects``: per constructor of :func:`numpy_object_candidates`, what Dynamo does
    when a compiled ``forward`` calls a method of the object built in ``__init__``
    (``self.rng = np.random.default_rng(0)`` ... ``self.rng.random()``).  Dynamo wraps such an
    object as a user-defined object of a C class and cannot trace its methods ("Unsupported method
    call", GB0156, measured on the probe's method).  ``stored`` is ``breaks``/``traces``/
    ``inconclusive`` with the registry id of a break at the call line."""
    cands = numpy_object_candidates()
    out: Dict[str, Dict[str, Any]] = {}
    probes = [(call, f"self.obj.{method}()") for _ctor, call, _cls, method in cands]
    with _stored_object_probes(["import numpy", "import torch"], probes, "dynamo_object_probes") as (classes, path, lines):
        for (ctor, call, cls, method), probe, line in zip(cands, classes, lines):
            try:
                result = _classify(graph_breaks(probe(), (torch.randn(4, 4),), backend="eager"), path, line)
            except Exception as exc:  # noqa: BLE001 - the answer is "inconclusive", not a crash
                result = ProbeResult("inconclusive", None, None, type(exc).__name__)
            out[ctor] = {
                "class": cls, "method": method, "probe": f"{call}.{method}()",
                "stored": result.outcome, "stored_gb": result.gb if result.outcome == "breaks" else None,
            }
    return out


#: The element values an iterator probe walks: more than the calls a probe makes.
_ITEMS = "[1, 2, 3, 4, 5, 6, 7, 8]"
#: Iterators the builtins make, by ``<constructor>:<iterable>``: what ``iter()`` and
#: ``reversed()`` give on a list, tuple, range, dict, str and set, and ``zip``, ``map``,
#: ``filter``, ``enumerate`` objects and a generator expression (key ``generator``).
_BUILTIN_ITERATORS = (
    ("builtins.iter:list", f"iter({_ITEMS})"),
    ("builtins.iter:tuple", "iter((1, 2, 3, 4, 5, 6, 7, 8))"),
    ("builtins.iter:range", "iter(range(100))"),
    ("builtins.iter:dict", "iter({'a': 1, 'b': 2, 'c': 3, 'd': 4, 'e': 5, 'f': 6})"),
    ("builtins.iter:str", "iter('abcdefgh')"),
    ("builtins.iter:set", "iter({1, 2, 3, 4, 5, 6, 7, 8})"),
    ("builtins.reversed:list", f"reversed({_ITEMS})"),
    ("builtins.reversed:tuple", "reversed((1, 2, 3, 4, 5, 6, 7, 8))"),
    ("builtins.reversed:range", "reversed(range(100))"),
    ("builtins.zip", f"zip({_ITEMS}, {_ITEMS})"),
    ("builtins.map", f"map(int, {_ITEMS})"),
    ("builtins.filter", f"filter(None, {_ITEMS})"),
    ("builtins.enumerate", f"enumerate({_ITEMS})"),
    ("generator", "(i for i in range(100))"),
)
#: Argument lists tried, in order, on each ``itertools`` class; the first that builds an
#: iterator ``next()`` can take five items from is probed.
_ITERTOOLS_FORMS = ("", _ITEMS, f"{_ITEMS}, 2", "1", f"{_ITEMS}, {_ITEMS}", f"max, [(1, 2)] * 8", f"None, {_ITEMS}", f"bool, {_ITEMS}", f"{_ITEMS}, 8",
                   f"lambda v: v < 0, {_ITEMS}")


def iterator_object_candidates() -> List[Tuple[str, str]]:
    """``(constructor, expression)`` for each iterator object a model can build in ``__init__``
    and step with ``next()`` in ``forward``: :data:`_BUILTIN_ITERATORS`, then every public class
    of ``itertools`` with the first of :data:`_ITERTOOLS_FORMS` that builds an iterator yielding at
    least five items in eager Python (``itertools.count()``, ``itertools.cycle([...])``,
    ``itertools.repeat(1)``...).  ``itertools.tee`` returns a tuple, not an iterator: left out."""
    import itertools

    out = list(_BUILTIN_ITERATORS)
    for name in sorted(vars(itertools)):
        cls = getattr(itertools, name)
        if name.startswith("_") or not isinstance(cls, type):
            continue
        for form in _ITERTOOLS_FORMS:
            expr = f"itertools.{name}({form})"
            try:
                it = eval(expr, {"itertools": itertools})  # noqa: S307 - our own constant expressions
                for _ in range(5):
                    next(it)
            except Exception:  # noqa: BLE001 - this form builds none, or too short a one
                continue
            out.append((f"itertools.{name}", expr))
            break
    return out


def iterator_object_facts() -> Dict[str, Dict[str, Any]]:
    """``iterator_objects``: per constructor of :func:`iterator_object_candidates`, what Dynamo
    does when a compiled ``forward`` calls ``next()`` on the iterator built in ``__init__``
    (``self.steps = itertools.count()`` ... ``next(self.steps)``).

    ``expect`` is derived from ``VariableBuilder``'s type dispatch: an iterator type it wraps
    itself (``itertools.count``, tuple and range iterators on torch 2.13) becomes a variable
    guarded on its position, so stepping it fails the guard on the next call (``recompiles``);
    any other is wrapped as a user-defined object whose ``next()`` Dynamo cannot take ("Missing
    tp_iternext", GB4347: ``breaks``).  ``outcome`` is measured: the probe compiled with the
    eager backend, graph breaks read at the ``next()`` line; when it traces, a fresh instance
    called four times on inputs of one shape, ``recompiles`` when the ``recompiles`` log names a
    failed guard.  ``built`` is the expression ``__init__`` builds the iterator with, ``type`` the
    Python type name of the iterator."""
    from torch._dynamo.variables.builder import VariableBuilder

    from pt2lint.confirm.dynamo import recompiles

    dispatch = VariableBuilder._type_dispatch()
    cands = iterator_object_candidates()
    out: Dict[str, Dict[str, Any]] = {}
    probes = [(expr, "next(self.obj)") for _ctor, expr in cands]
    with _stored_object_probes(["import itertools", "import torch"], probes, "dynamo_iterator_probes") as (classes, path, lines):
        for (ctor, expr), probe, line in zip(cands, classes, lines):
            typ = type(eval(expr, {"itertools": __import__("itertools")}))  # noqa: S307 - our own expressions
            fact = _fact("builder-dispatch", "recompiles") if typ in dispatch else _fact("user-defined-object", "breaks", "Missing tp_iternext")
            try:
                result = _classify(graph_breaks(probe(), (torch.randn(4, 4),), backend="eager"), path, line)
                if result.outcome == "traces" and recompiles(probe(), [(torch.randn(4, 4),) for _ in range(4)]):
                    result = ProbeResult("recompiles")
            except Exception as exc:  # noqa: BLE001 - the answer is "inconclusive", not a crash
                result = ProbeResult("inconclusive", None, None, type(exc).__name__)
            out[ctor] = _confirm({"built": expr, "type": typ.__name__, **fact}, result)
    return out


def derived_section(pairs: Tuple[Tuple[Candidate, Dict[str, Any]], ...]) -> Dict[str, Dict[str, Any]]:
    """The static entries of a derived section, keyed by candidate."""
    return {c.qualname: {"probe": c.call, **entry} for c, entry in pairs}


#: NumPy names whose probe's eager call would change the generating process itself: the global
#: generator's state (``set_state(a)``, ``set_bit_generator(a)``) or run NumPy's own test suite
#: (``numpy.random.test``, a ``PytestTester``).
_NOT_PROBED_NUMPY = frozenset({"numpy.random.set_state", "numpy.random.set_bit_generator", "numpy.random.test"})


def numpy_call_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``numpy.<name>(a)`` for every unsupported NumPy function of the modules Dynamo wraps
    (``numpy.random`` included: ``np.random.geometric`` breaks like ``np.isin``) but those
    ``calls`` already probes."""
    probed = {c.qualname for c in CALLS}
    out = []
    for module, names in sorted(numpy_names()["unsupported"].items()):
        for name in names:
            qualname = f"{module}.{name}"
            if qualname in _NOT_PROBED_NUMPY:
                continue
            if qualname not in probed:
                out.append((Candidate(qualname, f"{qualname}(a)"), derive(qualname)))
    return tuple(out)


#: torch namespaces whose public functions are checked against Dynamo's trace rules for skips.
SKIP_SCAN_SPACES = ("torch", "torch.jit", "torch.nn.utils.rnn", "torch.autograd", "torch.cuda", "torch.nn.utils.parametrize")


def skipped_call_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``<qualname>()`` for every public function of :data:`SKIP_SCAN_SPACES`, defined in torch,
    that ``trace_rules.lookup`` wraps as ``SkipFunctionVariable`` (``torch.jit.isinstance``,
    ``torch.sparse_coo_tensor``, ``torch.typename``) and that ``calls`` does not probe already.
    Dynamo breaks at the call before it runs the function, so the probe needs no arguments (the
    eager call that follows may raise: the section is tolerant)."""
    probed = {c.qualname for c in CALLS}
    out = []
    for space, name, obj, rule in _traced_functions(SKIP_SCAN_SPACES, lambda space, name: not name.startswith("_")):
        if not str(getattr(obj, "__module__", "") or "").startswith("torch"):
            continue  # a re-exported name of typing, builtins, ...
        qualname = f"{space}.{name}"
        if qualname in probed or rule != "SkipFunctionVariable":
            continue
        entry = derive(qualname)
        if entry.get("expect") == "breaks":
            out.append((Candidate(qualname, f"{qualname}()"), entry))
    return tuple(out)


#: Modules of torch, written in Python, whose public functions model code calls from ``forward``
#: (``torch.nn.utils.rnn.pack_sequence``, ``torch.nn.utils.fusion.fuse_conv_bn_eval``,
#: ``torch.nn.utils.skip_init``, ``torch.autograd.functional.jacobian``, ``torch.testing.assert_close``,
#: ``torch.nested.nested_tensor``): ``utility_calls`` probes each one Dynamo inlines.
UTILITY_SCAN_SPACES = (
    "torch.nn.utils", "torch.nn.utils.rnn", "torch.nn.utils.fusion", "torch.nn.utils.stateless",
    "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations", "torch.nn.init",
    "torch.autograd.functional", "torch.testing", "torch.nested",
)
#: Objects a ``utility_calls`` probe may be given, built at the top level of the probe module and
#: afresh for each probe (a module built inside the compiled function breaks by itself, and a
#: utility may change the module it is given: ``weight_norm(LIN)``).
UTILITY_OBJECTS: Dict[str, str] = {
    "LIN": "torch.nn.Linear(4, 4)",
    "CONV": "torch.nn.Conv2d(1, 1, 1).eval()",
    "BN": "torch.nn.BatchNorm2d(1).eval()",
}
#: Argument lists tried, in order, on each utility (``y`` is the probe's ``x + 1``: a (4, 4) float
#: tensor computed in the region, not a graph input, which an in-place utility would write); the
#: first that runs in eager mode is probed.  A function argument is a ``lambda``, as model code
#: passes (``jacobian(lambda t: ..., y)``): a builtin such as ``torch.sum`` given instead makes
#: Dynamo raise an internal error on torch 2.13, not the graph break users meet.
UTILITY_FORMS = (
    "y", "[y[0], y[1, :2]]", "LIN", "LIN.parameters()", "LIN.parameters(), 1.0", "LIN, {}, (y,)",
    "CONV, BN", "torch.nn.Linear, 4, 4", "torch.zeros(20), LIN.parameters()", "y, torch.tensor([4, 3, 2, 1])",
    "LIN, 'weight'", "lambda t: t * 2, y", "lambda t: t.sum(), y", "lambda t: t * 2, y, y", "lambda t: t.sum(), y, y",
    "y, y",
)


def _utility_env() -> Dict[str, Any]:
    x = torch.randn(4, 4)
    env: Dict[str, Any] = {"x": x, "y": x + 1, "torch": torch}
    for name, expr in UTILITY_OBJECTS.items():
        env[name] = eval(expr, {"torch": torch})  # noqa: S307 - our own constant expressions
    return env


def utility_call_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``<qualname>(<args>)`` for every public function of :data:`UTILITY_SCAN_SPACES` defined in
    torch that ``trace_rules.lookup`` lets Dynamo inline (``UserFunctionVariable``: neither skipped
    nor put in the graph) or, written in Python, puts in the graph whole
    (``TorchInGraphFunctionVariable``, source ``in-graph-python``), with the first argument list of
    :data:`UTILITY_FORMS` that runs in eager mode.  torch's tables say only that Dynamo traces the body, so the entry expects a
    trace; the probe finds what the body meets (``pack_sequence`` calls the skipped
    ``pack_padded_sequence``, ``fuse_conv_bn_eval`` deep-copies a module, ``skip_init`` builds
    ``nn.Parameter``s, ``stateless.functional_call`` warns)."""
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for space, name, obj, rule in _traced_functions(UTILITY_SCAN_SPACES, lambda space, name: not name.startswith("_")):
        # (a function re-exported by a parent module is probed under each name code may use:
        # ``torch.nn.utils.fuse_conv_bn_eval`` and ``torch.nn.utils.fusion.fuse_conv_bn_eval``)
        if not str(getattr(obj, "__module__", "") or "").startswith("torch"):
            continue
        if rule == "UserFunctionVariable":
            source = "inlined"
        elif rule == "TorchInGraphFunctionVariable" and inspect.isfunction(obj):
            # a Python function torch's tables put in the graph whole
            # (``torch.autograd.functional.jacobian``, ``torch.nested.nested_tensor``): the tables
            # expect a trace; running it on fake tensors may meet what Dynamo cannot put there
            source = "in-graph-python"
        else:
            continue
        for form in UTILITY_FORMS:
            env = _utility_env()
            env["fn"] = obj
            try:
                with _quiet():
                    eval(f"fn({form})", {}, env)  # noqa: S307 - our own constant expressions
            except Exception:  # noqa: BLE001 - not this argument list
                continue
            qualname = f"{space}.{name}"
            call = f"{qualname}({form})"
            out.append((Candidate(qualname, call), {"callee": qualname, **_fact(source, "traces")}))
            break
    return tuple(out)


def _traced_functions(spaces: Tuple[str, ...], keep: Callable[[str, str], bool]) -> Iterator[Tuple[str, str, Any, str]]:
    """``(namespace, name, function, trace rule)`` for every function (no class, no module) of
    ``spaces`` whose name ``keep(namespace, name)`` accepts, with the name of the variable class
    ``trace_rules.lookup`` wraps it in (``"SkipFunctionVariable"``, ``"TorchInGraphFunctionVariable"``);
    objects the rules cannot key are left out."""
    for space in spaces:
        ns = resolve(space)
        for name in sorted(dir(ns)):
            if not keep(space, name):
                continue
            obj = getattr(ns, name, None)
            if not callable(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
                continue
            try:
                rule = trace_rules.lookup(obj)
            except Exception:  # noqa: BLE001 - an object the rules cannot key
                continue
            yield space, name, obj, getattr(rule, "__name__", "")


#: Namespaces whose functions ``torch_queries`` scans, and the name prefixes of a private
#: ``torch._C`` function it calls with no argument: queries of global state (``_is_tracing``,
#: ``_get_tracing_state``, ``_has_distributed``).  Other private bindings are not called: many
#: change process state (``_enter_dual_level``, ``_valgrind_toggle``) or abort.
QUERY_SCAN_SPACES = (
    "torch", "torch._C",
    # the device and backend modules: memory statistics, device counts, backend switches
    # (``torch.cuda.memory_allocated()``, ``torch.backends.cuda.flash_sdp_enabled()``); a function
    # that raises without a device here (``torch.cuda.current_device()``) is no candidate
    "torch.cuda", "torch.cuda.memory", "torch.xpu", "torch.mps", "torch.cpu", "torch.accelerator",
    "torch.backends.cuda", "torch.backends.cudnn", "torch.backends.mps",
)
PRIVATE_QUERY_PREFIXES = ("_is_", "_get_", "_has_", "_are_", "_len_", "_current_", "_jit_get_", "_jit_can_")


#: Python values that stand for a schema argument type in a query probe: two of each, so that
#: a call with two arguments of one type (``can_cast(ScalarType from_, ScalarType to)``) gets
#: two different values.  A schema with an argument of any other type (a tensor, a number, a
#: list) makes no probe: those overloads are TorchScript's or need a tensor.
QUERY_ARGUMENT_VALUES: Dict[str, Tuple[str, str]] = {
    "ScalarType": ("torch.float32", "torch.float16"),
    "Device": ("torch.device('cpu')", "torch.device('cpu')"),
    "Layout": ("torch.strided", "torch.strided"),
    "str": ("'cpu'", "'cpu'"),
}


def _schema_query_calls(space: str, name: str, obj: Any) -> List[Tuple[str, Any]]:
    """Calls of ``<space>.<name>`` built from the ATen schemas of ``aten::<name>`` whose required
    arguments are all of :data:`QUERY_ARGUMENT_VALUES`'s types and whose results hold no tensor
    (``aten::can_cast(ScalarType from_, ScalarType to) -> bool`` gives
    ``torch.can_cast(torch.float32, torch.float16)``), each with its eager result; only calls
    that run in eager Python and return no tensor are kept."""
    if space != "torch":
        return []
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    except Exception:  # noqa: BLE001 - no ATen operator of that name
        return []
    calls: List[Tuple[str, Any]] = []
    for schema in schemas:
        if any("Tensor" in str(r.type) for r in schema.returns) or not schema.returns:
            continue
        required = [a for a in schema.arguments if not a.has_default_value() and not a.kwarg_only]
        # ``real_type``: the schema's own type name (``type`` says ``int`` for a ScalarType)
        if not required or any(str(a.real_type) not in QUERY_ARGUMENT_VALUES for a in required):
            continue
        seen: Dict[str, int] = {}
        args = []
        for a in required:
            k = seen.get(str(a.real_type), 0)
            seen[str(a.real_type)] = k + 1
            args.append(QUERY_ARGUMENT_VALUES[str(a.real_type)][min(k, 1)])
        call = f"{space}.{name}({', '.join(args)})"
        try:
            with _quiet():
                result = eval(call, {"torch": torch})  # noqa: S307 - our own literal call text
        except Exception:  # noqa: BLE001 - an overload Python cannot call
            continue
        if not _holds_a_tensor(result) and call not in (c for c, _ in calls):
            calls.append((call, result))
    return calls


def torch_query_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``<qualname>()`` for every function of :data:`QUERY_SCAN_SPACES` (public, or a private
    ``torch._C`` binding named like a query: :data:`PRIVATE_QUERY_PREFIXES`) that
    ``trace_rules.lookup`` puts in the graph (``TorchInGraphFunctionVariable``), that runs with
    no argument and returns no tensor: ``torch._C._is_tracing()``, ``torch.get_num_threads()``.
    A ``torch`` function that needs arguments is called with the Python values its ATen schema
    asks for (:func:`_schema_query_calls`: ``torch.can_cast(torch.float32, torch.float16)``).
    Dynamo records such a call as a graph op and rejects its non-tensor result ("torch.* op
    returned non-Tensor", GB0208) unless ``TorchInGraphFunctionVariable`` has a handler that
    answers it at trace time (``torch.is_grad_enabled``, ``torch.get_default_dtype``) or folds it
    (``torch.promote_types``, in ``constant_fold_functions``): the probe decides which."""
    def keep(space: str, name: str) -> bool:
        if name.startswith("__"):
            return False
        if name.startswith("_"):  # a private binding: only query-named ones of torch._C
            return space == "torch._C" and name.startswith(PRIVATE_QUERY_PREFIXES)
        return not name.startswith(SCAN_SKIP)

    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for space, name, obj, rule in _traced_functions(QUERY_SCAN_SPACES, keep):
        if rule != "TorchInGraphFunctionVariable":
            continue
        qualname = f"{space}.{name}"
        try:
            with _quiet():
                result = obj()
            call = f"{qualname}()"
        except Exception:  # noqa: BLE001 - needs arguments
            calls = _schema_query_calls(space, name, obj)
            if not calls:
                continue
            call, result = calls[0]
        if _holds_a_tensor(result):
            continue
        entry = {"callee": qualname, "result": type(result).__name__, **_fact("in-graph-non-tensor", "breaks", GB_NON_TENSOR)}
        out.append((Candidate(qualname, call), entry))
    return tuple(out)


GB_PROXY = "Failed to convert args/kwargs to proxy"
#: Lazy iterators a call can be given instead of a sequence: a generator expression and the
#: builtins that return an iterator object (``iterator_calls`` probes each).
ITERATOR_FORMS = (
    ("generator", "(d for d in x.shape)"),
    ("map", "map(int, x.shape)"),
    ("filter", "filter(None, x.shape)"),
    ("reversed", "reversed(x.shape)"),
)
#: Modules whose functions ``iterator_calls`` scans.
ITERATOR_SCAN_SPACES = ("math",)


def iterator_call_candidates() -> Tuple[Tuple[Candidate, Dict[str, Any]], ...]:
    """``<qualname>(<iterator>)`` for every public function of :data:`ITERATOR_SCAN_SPACES` that
    ``trace_rules.lookup`` puts in the graph (``TorchInGraphFunctionVariable``) and that takes one
    iterable in eager Python (``math.prod((4, 4))`` runs), with each of :data:`ITERATOR_FORMS`:
    ``math.prod(d for d in x.shape)``.  Dynamo hands the call its arguments as graph values, and
    a generator or ``map`` object is none ("Failed to convert args/kwargs to proxy", GB0055,
    expected), while the same values in a tuple or list constant-fold.  The probe decides, form
    by form; the key is ``<qualname>:<form>``."""
    out: List[Tuple[Candidate, Dict[str, Any]]] = []
    for space, name, obj, rule in _traced_functions(ITERATOR_SCAN_SPACES, lambda space, name: not name.startswith("_")):
        if rule != "TorchInGraphFunctionVariable":
            continue
        try:
            with _quiet():
                obj((4, 4))
        except Exception:  # noqa: BLE001 - takes no single iterable
            continue
        qualname = f"{space}.{name}"
        for form, expr in ITERATOR_FORMS:
            entry = {"callee": qualname, "form": form, **_fact("in-graph", "breaks", GB_PROXY)}
            out.append((Candidate(f"{qualname}:{form}", f"{qualname}({expr})"), entry))
    return tuple(out)


# ---------------------------------------------------------------------------
# probes


@dataclass
class ProbeResult:
    outcome: str  # breaks | traces | inconclusive
    gb: Optional[str] = None
    where: Optional[str] = None  # call | callee
    note: str = ""


def _probe_module(candidates: List[Candidate], workdir: str) -> Tuple[types.ModuleType, str, List[int]]:
    """Write one probe function per candidate into a real file and import it."""
    lines = PROBE_IMPORTS.splitlines()
    call_lines = []
    for i, cand in enumerate(candidates):
        used = _names(cand.call)
        call = cand.call
        objects = [name for name in UTILITY_OBJECTS if name in used]
        lines += [""] + [f"{name}_{i} = {UTILITY_OBJECTS[name]}" for name in objects]
        for name in objects:  # this probe's own object, built outside the compiled function
            call = re.sub(rf"\b{name}\b", f"{name}_{i}", call)
        lines += ["", f"def probe_{i}(x):", "    y = x + 1"]
        for var, expr in PROBE_VARS.items():
            if var in used:
                lines.append(f"    {var} = {expr}")
        lines.append(f"    r = {call}")
        call_lines.append(len(lines))
        lines.append("    return y * 2")
    module, path = _import_lines(lines, workdir, "dynamo_fact_probes")
    return module, path, call_lines


def _import_lines(lines: List[str], workdir: str, name: str) -> Tuple[types.ModuleType, str]:
    """Write ``lines`` to ``<workdir>/<name>.py`` and import it (Dynamo reports real lines of a real
    file); returns the module and the file's absolute path."""
    path = os.path.join(workdir, f"{name}.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, os.path.abspath(path)


def _names(expr: str) -> set:
    import ast

    return {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}


def _classify(breaks, path: str, line: int) -> ProbeResult:
    if not breaks:
        return ProbeResult("traces")
    for b in breaks:
        if b.filename == path and b.lineno == line:
            return ProbeResult("breaks", b.gb_type, "call")
        if any(f == path and ln == line for f, ln, _ in b.user_stack):
            return ProbeResult("breaks", b.gb_type, "callee")
    first = breaks[0]
    return ProbeResult("inconclusive", first.gb_type, None, f"broke elsewhere ({first.reason})")


@contextlib.contextmanager
def _quiet():
    """Probes print and warn; keep the terminal and the RNG states as they were.

    Logging is left on: the graph breaks are read from torch's logging artifacts.
    """
    import random

    state = random.getstate()
    torch_state = torch.get_rng_state()
    np_state = numpy.random.get_state()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            random.setstate(state)
            torch.set_rng_state(torch_state)
            numpy.random.set_state(np_state)


def _breaks_logged_before_raising(fn: Any, args: tuple) -> List[Any]:
    """The graph breaks of one compiled call of ``fn``, kept when the call then raises
    (the eager run of the code after the break fails on the probe's arguments)."""
    from pt2lint.confirm.dynamo import capture_artifacts, parse_graph_break, reset_dynamo

    reset_dynamo()
    try:
        with capture_artifacts("graph_breaks") as recorder:
            try:
                torch.compile(fn, backend="eager")(*args)
            except Exception:  # noqa: BLE001 - what was logged before the error is the answer
                pass
    finally:
        reset_dynamo()
    found = [gb for gb in (parse_graph_break(msg, exc) for msg, exc in recorder.records) if gb is not None]
    return found


def run_probes(candidates: List[Candidate], tolerant: bool = False) -> List[ProbeResult]:
    """Compile and call one probe per candidate; classify each by its graph breaks.

    With ``tolerant``, a probe that raises after Dynamo logged its breaks is classified by
    those breaks (``numpy_calls``: the break comes before the arguments are looked at);
    otherwise it is ``inconclusive``.
    """
    results: List[ProbeResult] = []
    with tempfile.TemporaryDirectory() as workdir, _quiet():
        module, path, call_lines = _probe_module(list(candidates), workdir)
        for i, line in enumerate(call_lines):
            fn = getattr(module, f"probe_{i}")
            if tolerant:
                results.append(_classify(_breaks_logged_before_raising(fn, (torch.randn(4, 4),)), path, line))
                continue
            try:
                breaks = graph_breaks(fn, (torch.randn(4, 4),), backend="eager")
            except Exception as exc:  # the answer is "inconclusive", not a crash of the tool
                results.append(ProbeResult("inconclusive", None, None, f"{type(exc).__name__}"))
                continue
            results.append(_classify(breaks, path, line))
        sys.modules.pop("dynamo_fact_probes", None)
    return results


def _confirm(entry: Dict[str, Any], result: ProbeResult) -> Dict[str, Any]:
    entry = dict(entry)
    entry["outcome"] = result.outcome
    entry["gb"] = result.gb
    entry["where"] = result.where
    agrees = result.outcome == entry["expect"]
    if agrees and result.outcome == "breaks" and entry.get("expect_gb"):
        agrees = result.gb == entry["expect_gb"]
    entry["confirmed"] = bool(agrees)
    if result.note:
        entry["note"] = result.note
    return entry


SECTIONS = (("calls", CALLS), ("tensor_calls", TENSOR_CALLS), ("shape_calls", SHAPE_CALLS), ("sized_calls", SIZED_CALLS))
#: Sections whose candidates are derived from torch (each a function of no argument that
#: returns ``(candidate, static entry)`` pairs), probed like :data:`SECTIONS`.
DERIVED_SECTIONS = (
    ("shape_ops", shape_op_candidates),
    ("inplace_view", inplace_view_candidates),
    ("numpy_calls", numpy_call_candidates),
    ("tensor_queries", tensor_query_candidates),
    ("sequence_searches", sequence_search_candidates),
    ("classes", class_candidates),
    ("skipped_calls", skipped_call_candidates),
    ("torch_queries", torch_query_candidates),
    ("iterator_calls", iterator_call_candidates),
    ("utility_calls", utility_call_candidates),
    ("callable_methods", callable_method_candidates),
    ("sized_keywords", sized_keyword_candidates),
    ("numpy_queries", numpy_query_candidates),
)
#: Sections whose probes may raise after the break they look for.
TOLERANT_SECTIONS = frozenset({"numpy_calls", "skipped_calls"})


def all_sections() -> List[Tuple[str, List[Candidate]]]:
    """Every probed section with its candidates, the derived ones included."""
    out = [(name, list(cands)) for name, cands in SECTIONS]
    out += [(name, [c for c, _ in cands()]) for name, cands in DERIVED_SECTIONS]
    return out


def generate() -> Dict[str, Any]:
    """The full table: the static derivation plus a probe per call entry."""
    data = derive_static()
    sections = all_sections()
    for section, cands in sections:
        results = run_probes(cands, tolerant=section in TOLERANT_SECTIONS)
        for cand, result in zip(cands, results):
            data[section][cand.qualname] = _confirm(data[section][cand.qualname], result)
    data["nn_modules"] = nn_module_facts()  # measured by running each class (about a minute)
    data["context_managers"] = context_manager_facts()  # two probes per context manager
    data["numpy_objects"] = numpy_object_facts()  # one probe per NumPy generator class
    data["iterator_objects"] = iterator_object_facts()  # next() on an iterator built in __init__
    data["confirmed_count"] = sum(1 for section, _ in sections for e in data[section].values() if e["confirmed"])
    return data


def dumps(data: Dict[str, Any]) -> str:
    """Stable JSON: sections one per line block, each entry on one line (small diffs)."""
    out = ["{"]
    keys = sorted(data)
    for i, key in enumerate(keys):
        value = data[key]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(value, dict) and value and all(isinstance(v, (dict, list, str)) for v in value.values()):
            out.append(f" {json.dumps(key)}: {{")
            sub = sorted(value)
            for j, k in enumerate(sub):
                c = "," if j < len(sub) - 1 else ""
                out.append(f"  {json.dumps(k)}: {json.dumps(value[k], sort_keys=True)}{c}")
            out.append(f" }}{comma}")
        else:
            out.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


def _show(qualname: str) -> int:
    cands = [c for _, section in all_sections() for c in section if c.qualname == qualname]
    if not cands:
        print(f"no candidate named {qualname}", file=sys.stderr)
        return 2
    for cand in cands:
        try:
            print(f"{cand.call}: {derive(cand.qualname)}")
        except (ImportError, AttributeError):  # a derived candidate: its key is the probe expression
            print(cand.call)
        with tempfile.TemporaryDirectory() as workdir:
            module, path, lines = _probe_module([cand], workdir)
            for b in graph_breaks(module.probe_0, (torch.randn(4, 4),)):
                print(f"  break at {os.path.basename(b.filename)}:{b.lineno} {b.gb_type} {b.reason}")
            print(f"  -> {run_probes([cand])[0]}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where to write the table")
    parser.add_argument("--check", action="store_true", help="regenerate in memory; exit 1 when the file differs")
    parser.add_argument("--show", metavar="QUALNAME", help="print one candidate's derivation and breaks")
    args = parser.parse_args(argv)
    if args.show:
        return _show(args.show)
    text = dumps(generate())
    if args.check:
        try:
            current = args.output.read_text(encoding="utf-8")
        except OSError:
            current = ""
        if current == text:
            print(f"{args.output}: up to date (torch {torch.__version__})")
            return 0
        sys.stdout.writelines(
            difflib.unified_diff(current.splitlines(True), text.splitlines(True), str(args.output), "regenerated")
        )
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    data = json.loads(text)
    print(f"wrote {args.output}: {data['confirmed_count']} confirmed entries (torch {torch.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
