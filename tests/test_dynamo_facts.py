"""The Dynamo facts table (``pt2lint/data/dynamo_facts.json``) and the rules that read it.

With torch installed, the shipped table must be what ``tools/gen_dynamo_facts.py``
derives from the installed torch (every part that needs no probe, in full, and a
sample of probes); without torch the loader still works. The rule tests check the
findings the table enables and the near misses it must not flag.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.settings import LintSettings, resolve_selection
from linttools import dynamo_break_lines, found, found_with_messages

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("calls", "tensor_calls", "shape_calls", "sized_calls")
# Sections whose candidates the tool derives from torch (an op scan, the inplace_view tag,
# the NumPy functions torch._numpy lacks), and the static keys of their entries.
DERIVED = (
    "shape_ops", "inplace_view", "numpy_calls", "tensor_queries", "sequence_searches", "classes", "skipped_calls", "torch_queries",
    "iterator_calls", "utility_calls", "callable_methods", "sized_keywords", "numpy_queries",
)
DERIVED_KEYS = ("probe", "source", "expect", "expect_gb", "callee", "keyword", "form", "aten", "method", "receiver", "result", "type", "c_implemented")
ALL_SECTIONS = SECTIONS + DERIVED
# The parts of an entry that come from torch's tables, not from the probe.
STATIC_KEYS = ("probe", "source", "expect", "expect_gb", "size_index")
PROBED_KEYS = ("outcome", "gb", "where", "confirmed")


def _shipped() -> dict:
    return json.loads((ROOT / "pt2lint" / "data" / "dynamo_facts.json").read_text(encoding="utf-8"))



@pytest.fixture(scope="module")
def derived(tool):
    shipped = _shipped()
    import torch

    assert shipped["versions"]["torch"] == torch.__version__, (
        f"pt2lint/data/dynamo_facts.json describes torch {shipped['versions']['torch']}, the installed torch is "
        f"{torch.__version__}: regenerate it with `python tools/gen_dynamo_facts.py`"
    )
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if shipped["versions"]["python"] != here:
        pytest.skip(f"table generated on Python {shipped['versions']['python']}, running {here} (stdlib differs)")
    return tool.derive_static(derived=False)


# ------------------------------------------------------------ table vs torch


def test_shipped_table_matches_installed_torch_tables(derived):
    shipped = _shipped()
    for key in ("schema", "generator", "versions", "math", "numpy", "skip_modules", "graph_breaks", "amp_deprecated", "collectives", "cudagraphs", "return_types", "namespaces", "torch_function_modules", "parameter_names", "schema_arguments"):
        assert shipped[key] == derived[key], f"{key} differs: regenerate with `python tools/gen_dynamo_facts.py`"
    for section in SECTIONS:
        assert sorted(shipped[section]) == sorted(derived[section]), section
        for name, entry in derived[section].items():
            got = {k: shipped[section][name].get(k) for k in STATIC_KEYS}
            want = {k: entry.get(k) for k in STATIC_KEYS}
            assert got == want, f"{section}[{name}]: shipped {got}, torch says {want}"


def test_tracing_state_matches_dynamo_handler_table(derived, tool):
    # every name of the shipped section is a query Dynamo's handler table answers, with that value
    # (the names each query is reachable under depend on what torch has imported, so the entries
    # are checked one by one, not as a whole)
    from torch._dynamo.variables.torch import tracing_state_functions

    table = tracing_state_functions()
    shipped = _shipped()["tracing_state"]
    assert "torch.onnx.is_in_onnx_export" in shipped and "torch.compiler.is_compiling" in shipped
    for name, entry in shipped.items():
        fn = tool.resolve(name)
        assert fn in table, name
        want = "export" if name.endswith(".is_exporting") else table[fn]
        assert entry["value"] == want and entry["confirmed"], name


def test_forbidden_section_is_what_the_installed_trace_rules_forbid(tool):
    # every shipped name is a function the installed torch marks forbidden, the markers of
    # torch._dynamo and torch.compiler are all there, and each entry was confirmed by a probe
    import torch
    from torch._dynamo import trace_rules

    shipped = _shipped()["forbidden"]
    assert {"torch._dynamo.mark_dynamic", "torch._dynamo.maybe_mark_dynamic", "torch.compiler.set_stance"} <= set(shipped)
    for name, entry in shipped.items():
        assert trace_rules.is_forbidden(tool.resolve(name)) and entry["confirmed"], name
    for space in (torch._dynamo, torch.compiler):
        for attr, obj in vars(space).items():
            if callable(obj) and not isinstance(obj, type) and trace_rules.is_forbidden(obj):
                assert f"{space.__name__}.{attr}" in shipped, attr


# A sample of probes, rerun on the installed torch: skipped, traced, random-variable,
# NumPy (implemented, unsupported, scalar draw), math on a tensor and on a shape.
SAMPLE = (
    ("calls", "random.random"),
    ("calls", "random.randint"),
    ("calls", "zlib.crc32"),
    ("calls", "os.path.join"),
    ("calls", "re.match"),
    ("calls", "numpy.isin"),
    ("calls", "numpy.mean"),
    ("calls", "numpy.random.rand"),
    ("sized_calls", "numpy.random.rand"),
    ("tensor_calls", "math.sqrt"),
    ("shape_calls", "math.sqrt"),
)


def test_derived_sections_match_installed_torch(tool, derived):
    """The in-place view and NumPy sections are re-derived in full; the op scan (minutes) only
    for the callees the shipped table holds, each with every argument list it tried."""
    shipped = _shipped()
    assert shipped["inplace_view_methods"] == tool.inplace_view_methods()
    assert {"unsqueeze_", "transpose_", "t_", "squeeze_", "as_strided_", "resize_"} <= set(shipped["inplace_view_methods"])
    callees = frozenset(e["callee"] for e in shipped["shape_ops"].values())
    again = {
        "inplace_view": tool.derived_section(tool.inplace_view_candidates()),
        "numpy_calls": tool.derived_section(tool.numpy_call_candidates()),
        "tensor_queries": tool.derived_section(tool.tensor_query_candidates()),
        "sequence_searches": tool.derived_section(tool.sequence_search_candidates()),
        "classes": tool.derived_section(tool.class_candidates()),
        "skipped_calls": tool.derived_section(tool.skipped_call_candidates()),
        "torch_queries": tool.derived_section(tool.torch_query_candidates()),
        "iterator_calls": tool.derived_section(tool.iterator_call_candidates()),
        "utility_calls": tool.derived_section(tool.utility_call_candidates()),
        "callable_methods": tool.derived_section(tool.callable_method_candidates()),
        "sized_keywords": tool.derived_section(tool.sized_keyword_candidates()),
        "numpy_queries": tool.derived_section(tool.numpy_query_candidates()),
        "shape_ops": tool.derived_section(tool.shape_op_candidates(callees)),
    }
    for section, entries in again.items():
        assert sorted(shipped[section]) == sorted(entries), section
        for name, entry in entries.items():
            got = {k: shipped[section][name].get(k) for k in DERIVED_KEYS}
            want = {k: entry.get(k) for k in DERIVED_KEYS}
            assert got == want, f"{section}[{name}]: shipped {got}, torch says {want}"


# Derived entries rerun: a dynamic-shape op and its static near miss, a tagged op Dynamo
# traces anyway, an in-place view on an input and on a fresh tensor, a NumPy gap.
DERIVED_SAMPLE = (
    ("shape_ops", "torch.where(b)"),
    ("shape_ops", "torch.where(b, x, x)"),
    ("shape_ops", "torch.nn.functional.one_hot(i)"),
    ("shape_ops", "torch.nn.functional.one_hot(i, 3)"),
    ("shape_ops", "numpy.unique(a)"),
    ("inplace_view", "x.unsqueeze_(0)"),
    ("inplace_view", "(x + 1).unsqueeze_(0)"),
    ("numpy_calls", "numpy.load"),
    ("tensor_queries", "x.storage_offset()"),
    ("tensor_queries", "x.numel()"),
    ("tensor_queries", "x.is_inference()"),
    ("sequence_searches", "list.index"),
    ("sequence_searches", "tuple.count"),
    ("classes", "types.SimpleNamespace"),
    ("classes", "collections.OrderedDict"),
    ("skipped_calls", "torch.jit.isinstance"),
    ("torch_queries", "torch._C._is_tracing"),
    ("torch_queries", "torch.is_grad_enabled"),
    ("torch_queries", "torch.cuda.memory_allocated"),
    ("iterator_calls", "math.prod:generator"),
    ("iterator_calls", "math.fsum:map"),
    ("utility_calls", "torch.nn.utils.rnn.pack_sequence"),
    ("utility_calls", "torch.nn.utils.rnn.pad_sequence"),
    ("callable_methods", "torch.Tensor.apply_"),
    ("sized_keywords", "torch.repeat_interleave:output_size"),
    ("numpy_queries", "numpy.size"),
    ("numpy_queries", "numpy.shape"),
)


def test_sampled_derived_probes_agree_with_the_shipped_table(tool):
    shipped = _shipped()
    for section in DERIVED:
        names = [n for s, n in DERIVED_SAMPLE if s == section]
        cands = [tool.Candidate(n, shipped[section][n]["probe"]) for n in names]
        results = tool.run_probes(cands, tolerant=section in tool.TOLERANT_SECTIONS)
        for name, result in zip(names, results):
            entry = tool._confirm(shipped[section][name], result)
            got = {k: entry.get(k) for k in PROBED_KEYS}
            want = {k: shipped[section][name].get(k) for k in PROBED_KEYS}
            assert got == want, f"{section}[{name}]: probe says {got}, shipped {want}"


def test_sampled_probes_agree_with_the_shipped_table(tool, derived):
    shipped = _shipped()
    by_section = {section: {c.qualname: c for c in cands} for section, cands in tool.SECTIONS}
    cands = [by_section[section][name] for section, name in SAMPLE]
    results = tool.run_probes(cands)
    for (section, name), result in zip(SAMPLE, results):
        entry = tool._confirm(derived[section][name], result)
        got = {k: entry.get(k) for k in PROBED_KEYS}
        want = {k: shipped[section][name].get(k) for k in PROBED_KEYS}
        assert got == want, f"{section}[{name}]: probe says {got}, shipped {want}"


def test_dumps_is_stable_json(tool, derived):
    text = tool.dumps(derived)
    assert json.loads(text) == derived
    assert tool.dumps(json.loads(text)) == text


# ------------------------------------------------------------ loader, no torch


def test_tensor_queries_hold_what_dynamo_answers_and_what_it_breaks_on():
    """The layout queries with a TensorVariable handler trace; the others break (GB0208)."""
    assert facts.tensor_query_break("storage_offset") == "GB0208"
    assert facts.tensor_query_break("is_pinned") == "GB0208"
    assert facts.tensor_query_break("is_inference") == "GB0045"
    for traced in ("numel", "dim", "is_contiguous", "data_ptr", "element_size", "is_floating_point"):
        assert facts.tensor_query_break(traced) is None, traced
    assert facts.tensor_query_break("item") is None  # PTC101's, not a candidate
    assert facts.tensor_query_break(None) is None


def test_loader_works_without_torch():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["torch"] = None  # any `import torch` now raises ImportError
        sys.modules["numpy"] = None
        from pt2lint.analysis import dynamo_facts as f
        assert f.torch_version().startswith("2."), f.torch_version()
        assert f.breaks("random.random") == "GB0007"
        assert f.skipped_function("zlib.crc32") == "GB0007"
        assert f.numpy_traced("numpy.mean") and f.numpy_traced("mean") and not f.numpy_traced("numpy.isin")
        assert f.numpy_unsupported("numpy.isin") == "GB0294"
        assert f.tensor_call_breaks("math.sqrt") == "GB0033"
        assert f.gb_type("GB0007") == "Attempted to call function marked as skipped"
        from pt2lint.engine import lint_source
        from pt2lint.settings import LintSettings, resolve_selection
        src = "import zlib\\nfrom torch import nn\\nclass M(nn.Module):\\n    def forward(self, x):\\n        return x + zlib.crc32(b'a')\\n"
        codes = [d.code for d in lint_source(src, "m.py", LintSettings(enabled=resolve_selection())).diagnostics]
        assert codes == ["PTC307"], codes
        assert "torch" not in [m for m, v in sys.modules.items() if v is not None]
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_at_least_40_entries_are_probe_confirmed():
    shipped = _shipped()
    confirmed = sum(1 for s in ALL_SECTIONS for e in shipped[s].values() if e["confirmed"])
    assert confirmed == facts.confirmed_count() == shipped["confirmed_count"]
    assert confirmed >= 400
    # Confirmed means the probe agreed with what torch's tables predicted.
    for section in ALL_SECTIONS:
        for name, e in shipped[section].items():
            if e["confirmed"]:
                assert e["outcome"] == e["expect"], (section, name)
                if e["outcome"] == "breaks" and e["expect_gb"]:
                    assert e["gb"] == e["expect_gb"], (section, name)


def test_loader_answers_only_for_confirmed_breaks():
    # uuid.uuid4 is inlined (the tables say "traces"), and breaks inside uuid on
    # os.urandom: the probe disagreed with the tables, so nothing is claimed.
    fact = facts.call_fact("uuid.uuid4")
    assert fact is not None and fact.outcome == "breaks" and not fact.confirmed
    assert facts.breaks("uuid.uuid4") is None
    assert facts.breaks("random.randint") is None and facts.traces("random.randint")
    assert facts.call_fact("not.in.the.table") is None and facts.breaks(None) is None
    assert facts.numpy_scalar_draw("numpy.random.rand") == ("GB0033", 0)
    assert facts.numpy_scalar_draw("numpy.random.normal") == ("GB0033", 2)
    assert facts.numpy_scalar_draw("numpy.mean") is None


def test_table_ships_in_the_package():
    from importlib.resources import files

    assert files("pt2lint").joinpath("data/dynamo_facts.json").is_file()


# ------------------------------------------------------------ rules


def test_skipped_stdlib_functions_are_ptc307():
    assert found(
        """
        import gc
        import os
        import time
        from heapq import heappush
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                n = os.cpu_count()
                gc.collect()
                time.sleep(0)
                heap = []
                heappush(heap, 1)
                return x * n
        """
    ) == [(10, "PTC307"), (11, "PTC307"), (12, "PTC307"), (14, "PTC307")]


def test_skipped_function_near_misses():
    # In __init__, in a helper forward never calls, a same-named local function,
    # a traced polyfill (struct.pack) and re on constants (folded) are not flagged.
    assert found(
        """
        import os
        import re
        import struct
        import torch
        from torch import nn

        def cpu_count():
            return 4

        def unused_helper():
            return os.cpu_count()

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.workers = os.cpu_count()
                self.name = "gelu"

            def forward(self, x):
                tag = struct.pack("i", 1)
                if re.match("ge", self.name):
                    x = x * 2
                return x * cpu_count() + self.workers
        """
    ) == []


def test_skipped_function_in_a_helper_called_from_forward():
    assert found(
        """
        import pickle
        from torch import nn

        def size_of(obj):
            return len(pickle.dumps(obj))

        class M(nn.Module):
            def forward(self, x):
                return x * size_of([1, 2])
        """
    ) == [(5, "PTC307")]


def test_random_and_clock_calls_follow_the_table():
    assert found(
        """
        import random
        import time
        from torch import nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.p = random.random()
                self.t0 = time.time()

            def forward(self, x):
                order = [0, 1, 2]
                random.shuffle(order)
                k = random.randint(1, 3)
                s = random.uniform(0.5, 1.5)
                return x * k * s + time.perf_counter_ns()
        """
    ) == [(13, "PTC305"), (16, "PTC305")]


def test_class_constructions_answer_from_their_probes():
    assert facts.class_construction_break("types.SimpleNamespace") == "GB0147"
    assert facts.class_construction_break("decimal.Decimal") == "GB0147"
    for traced in ("collections.OrderedDict", "collections.deque", "functools.partial", "fractions.Fraction"):
        assert facts.class_construction_break(traced) is None, traced
    assert facts.class_construction_break("not.a.Class") is None and facts.class_construction_break(None) is None


def test_context_manager_section_is_a_fresh_measurement(tool):
    # every context manager of the listed modules, entered built in the ``with`` and stored on ``self``
    assert tool.context_manager_facts() == _shipped()["context_managers"]


def test_numpy_object_section_is_a_fresh_measurement(tool):
    # every public numpy.random callable that builds a generator object, with a method called in forward
    assert tool.numpy_object_facts() == _shipped()["numpy_objects"]


def test_iterator_object_section_is_a_fresh_measurement(tool):
    # every builtin iterator form and itertools class, built in ``__init__`` and stepped in forward
    assert tool.iterator_object_facts() == _shipped()["iterator_objects"]


def test_numpy_objects_answer_by_constructor():
    assert facts.numpy_object_class("numpy.random.default_rng") == "numpy.random.Generator"
    assert facts.numpy_object_method_break("numpy.random.default_rng") == "GB0156"
    assert facts.numpy_object_method_break("numpy.random.RandomState") == "GB0156"
    for array_or_number in ("numpy.random.rand", "numpy.random.randint", "numpy.random.permutation", None):
        assert facts.numpy_object_class(array_or_number) is None, array_or_number
        assert facts.numpy_object_method_break(array_or_number) is None


def test_context_managers_answer_by_form():
    assert facts.context_manager_break("threading.Lock", "stored") == "GB0142"
    assert facts.context_manager_break("threading.Lock", "any") == "GB0142"
    assert facts.context_manager_break("torch.device", "local") == "GB0142"
    assert facts.context_manager_break("torch.backends.cudnn.flags", "local") == "GB0208"
    # modelled by Dynamo when built in the region, refused when built outside it
    assert facts.context_manager_break("torch.no_grad", "local") is None
    assert facts.context_manager_break("torch.no_grad", "stored") == "GB0142"
    assert facts.context_manager_break("torch.no_grad", "any") is None
    for traced in ("torch.autocast", "contextlib.nullcontext"):
        assert facts.context_manager_break(traced, "local") is None and facts.context_manager_break(traced, "stored") is None
    assert facts.context_manager_break("mylib.Timer", "local") is None and facts.context_manager_break(None, "local") is None


def test_with_of_a_context_manager_dynamo_cannot_enter_is_ptc307():
    assert found(
        """
        import contextlib
        import threading

        import torch
        from torch import nn

        _LOCK = threading.RLock()


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(8, 8)
                self._lock = threading.Lock()
                self.quiet = contextlib.nullcontext()

            def forward(self, x):
                with torch.no_grad(), torch.autocast("cpu", enabled=False), self.quiet:
                    ref = self.proj(x)
                with self._lock:
                    y = self.proj(x)
                return y - ref


        class Placed(nn.Module):
            def forward(self, x):
                with torch.device("cpu"):
                    y = torch.ones(4) + x
                return y


        class Guarded(nn.Module):
            def forward(self, x):
                lock = threading.Lock()
                ctx = torch.no_grad()
                with ctx:
                    x = x + 1
                with _LOCK:
                    x = x * 2
                print(x)
                return x
        """,
        codes={"PTC307", "PTC301"},
    ) == [(20, "PTC307"), (27, "PTC307"), (38, "PTC307")]


def test_later_breaks_after_an_unenterable_context_manager_are_named_not_reported():
    # Dynamo gives up on the frame at the ``with`` (measured: the ``print`` after it is not logged)
    got = found_with_messages(
        """
        import threading

        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self._lock = threading.Lock()

            def forward(self, x):
                with self._lock:
                    y = x * 2
                print(y)
                return y
        """
    )
    assert [(line, code) for line, code, _ in got] == [(13, "PTC307")]
    assert "line 15 (PTC301)" in got[0][2]


def test_calls_into_a_skiplisted_package_are_ptc307():
    # tqdm is on torch's third-party skip list: Dynamo never traces it (measured: GB0007 at the
    # call); NumPy is on that list too but is traced through torch._numpy
    assert facts.skipped_package_call("tqdm.auto.tqdm") == "GB0007"
    assert facts.skipped_package_call("numpy.asarray") is None
    assert facts.skipped_package_call("einops.rearrange") is None and facts.skipped_package_call(None) is None
    assert found(
        """
        import torch
        from torch import nn
        from tqdm.auto import tqdm


        class Sampler(nn.Module):
            def __init__(self):
                super().__init__()
                self.steps = list(tqdm(range(3)))

            def forward(self, x):
                for t in tqdm(self.steps, desc="sampling"):
                    x = x * 0.5 + t
                return x
        """
    ) == [(12, "PTC307")]


NUMPY_SUBMODULE_CALLS = """
import numpy as np
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x):
        nodes, weights = np.polynomial.legendre.leggauss(4)
        value = np.polynomial.polynomial.polyval(2.0, [1.0, 2.0])
        close = np.isclose(np.ones(3), 1.0)
        return x * torch.as_tensor(nodes, dtype=x.dtype).sum() + value + close.sum()
"""


def test_numpy_outside_torch_numpy_is_skipped():
    # Only numpy, numpy.fft, numpy.linalg and numpy.random run through torch._numpy; the rest of
    # NumPy is on the third-party skip list (zuko's ``np.polynomial.legendre.leggauss``)
    assert facts.skipped_package_call("numpy.polynomial.legendre.leggauss") == "GB0007"
    assert facts.skipped_package_call("numpy.lib.stride_tricks.sliding_window_view") == "GB0007"
    assert facts.skipped_package_call("numpy.isclose") is None
    assert facts.skipped_package_call("numpy.linalg.norm") is None
    assert facts.skipped_package_call("numpy.core.numeric.isclose") is None
    assert found(NUMPY_SUBMODULE_CALLS, codes={"PTC307"}) == [(8, "PTC307"), (9, "PTC307")]


def test_numpy_outside_torch_numpy_breaks_in_dynamo():
    pytest.importorskip("torch")
    src = textwrap.dedent(NUMPY_SUBMODULE_CALLS).lstrip("\n")
    assert dynamo_break_lines(src, 'torch.compile(M(), backend="eager")(torch.randn(3))') == [8, 9]


def test_numpy_random_functions_torch_numpy_lacks_are_probed():
    # normflows' ``np.random.geometric(p)``: torch._numpy.random has no such function, so Dynamo
    # breaks at the call (GB0294), like ``np.random.poisson``; the draws it implements trace
    assert facts.numpy_unsupported("numpy.random.geometric") == "GB0294"
    assert facts.numpy_unsupported("numpy.random.normal") is None
    assert found(
        """
        import numpy as np
        import torch


        class M(torch.nn.Module):
            def forward(self, x):
                n = np.random.geometric(0.5)
                return x * n + np.random.normal(size=3).sum()
        """
    ) == [(7, "PTC305")]


def test_an_inlined_callee_is_claimed_from_its_probe_alone():
    # uuid.uuid4 is inlined: torch's tables predict nothing about its body, which reaches the
    # skipped os.urandom; the probe saw the break (GB0007), so PTC305 reports it, and the
    # confirmed-only predicate still answers None.
    assert facts.breaks("uuid.uuid4") is None
    assert facts.inlined_break("uuid.uuid4") == "GB0007"
    assert facts.inlined_break("copy.deepcopy") is None  # of a dict of lists: traces
    assert facts.inlined_break("copy.deepcopy", "tensor_calls") == "GB4198"
    assert facts.inlined_break("zlib.crc32") is None  # skipped, not inlined: PTC307's other branch
    assert found(
        """
        import uuid
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                tag = uuid.uuid4()
                return x
        """
    ) == [(6, "PTC305")]


def test_numpy_draws_break_only_without_a_size():
    assert found(
        """
        import numpy as np
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                a = np.random.rand()
                b = np.random.rand(4, 8)
                c = np.random.normal(0.0, 1.0)
                d = np.random.normal(0.0, 1.0, (4, 8))
                e = np.random.normal(0.0, 1.0, size=(4, 8))
                rng = np.random.default_rng(0)
                return x * a
        """
    ) == [(7, "PTC305"), (9, "PTC305"), (12, "PTC305")]


def test_a_sized_numpy_draw_is_an_array_whose_item_breaks():
    # Measured on torch 2.13 (torch._dynamo.explain): `np.random.rand(1).item()` breaks once
    # (GB0033, the array is a traced tensor), `np.random.rand(4)` used as an array does not.
    # `np.random.choice` breaks with or without a size (GB0033): torch._numpy's choice checks
    # `if abs(p.sum() - 1.0) > atol` on every call.
    assert found(
        """
        import numpy as np
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                eps = np.random.rand(1).item()
                idx = np.random.choice(np.arange(8), 3, replace=False)
                noise = np.random.rand(4) * 2
                y = x + torch.from_numpy(noise).float()
                return y * eps
        """
    ) == [(7, "PTC101"), (8, "PTC305")]


def test_numpy_functions_without_torch_numpy_equivalent_are_ptc312():
    assert found(
        """
        import numpy as np
        from numpy import nanmean
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                a = x.numpy()
                keep = np.isin(a, [0.0])
                m = nanmean(a, axis=0)
                ok = np.mean(a, axis=0) + np.linalg.norm(a)
                idx = np.random.permutation(4)
                return torch.from_numpy(m)
        """
    ) == [(9, "PTC312"), (10, "PTC312"), (12, "PTC305")]


def test_numpy_near_misses():
    assert found(
        """
        import numpy as np
        import torch
        from torch import nn

        def isin(x, values):
            return (x[..., None] == torch.tensor(values)).any(-1)

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("mask", torch.from_numpy(np.isin(np.arange(8), [1, 3])))

            def forward(self, x):
                return x * self.mask * isin(x, [0.0])
        """
    ) == [(6, "PTC702")]  # no NumPy finding; torch.tensor(values) is made on the host (PTC702, info)


def test_math_on_a_tensor_is_ptc103_and_on_a_shape_is_not():
    assert found(
        """
        import math
        import torch
        from torch import nn

        class M(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.scale = math.sqrt(dim)

            def forward(self, q, k):
                s = math.sqrt(q.shape[-1]) * self.scale
                t = math.log(q.abs().sum() + 1)
                ok = math.isfinite(2.0)
                return q @ k.transpose(-1, -2) / s * t
        """
    ) == [(12, "PTC103")]


def test_math_on_a_tensor_breaks_with_the_knob_on():
    knob = LintSettings(enabled=resolve_selection(), capture_scalar_outputs=True)
    code = """
        import math
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                y = x / math.sqrt(x.var() + 1e-5)
                return y * float(x.sum())
        """
    assert found(code) == [(6, "PTC103"), (7, "PTC103")]
    # float(t) is traced with the knob (a host sync, PTC701 at info), math.sqrt(t) is not
    assert found(code, knob) == [(6, "PTC103"), (7, "PTC701")]


# ------------------------------------------------------------ nn module buffer writes (measured)


def test_nn_module_table_lists_every_public_module_class(tool):
    shipped = _shipped()["nn_modules"]
    assert sorted(shipped) == sorted(f"torch.nn.{name}" for name in tool.nn_module_classes())


@pytest.mark.parametrize("name", ["BatchNorm1d", "InstanceNorm2d", "Linear", "Dropout", "LayerNorm", "LazyLinear"])
def test_nn_module_entries_agree_with_a_fresh_measurement(tool, name):
    assert tool.nn_module_fact(name) == _shipped()["nn_modules"][f"torch.nn.{name}"]


def test_nn_module_loader_answers_by_class_without_torch():
    bn = facts.module_state("torch.nn.modules.batchnorm.BatchNorm2d")
    assert bn is not None and bn.known and "running_mean" in bn.train_writes and bn.eval_writes == ()
    assert bn.unless == "track_running_stats=False" and bn.parameters is True
    lin = facts.module_state("torch.nn.Linear")
    assert lin.known and lin.train_writes == () and lin.parameters is True
    assert facts.module_state("torch.nn.ReLU").parameters is False
    assert facts.module_state("torch.nn.LazyLinear").train_writes == ("<parameters>",)
    assert facts.module_state("torch.nn.Sequential") is None  # a container: what it holds decides
    assert facts.module_state("mylib.Norm") is None


def test_a_function_an_installed_extension_module_defines_is_ptc307(tmp_path, monkeypatch):
    # scipy.optimize.linear_sum_assignment is bound by ``from ._lsap import ...`` with ``_lsap`` a
    # compiled module: Dynamo skips C code (measured on torch 2.13: GB0007 at the call); a Python
    # function of the same package is traced, and nothing is said of a package that is not installed
    import importlib.machinery

    from pt2lint.analysis import extensions

    site = tmp_path / "site-packages"
    pkg = site / "fakesolve"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from ._core import solve\nfrom .sub import refine\n")
    (pkg / ("_core" + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(b"\x7fELF")
    (pkg / "sub" / "__init__.py").write_text("def refine(x):\n    return x * 2\n")
    monkeypatch.setattr(extensions, "_SEARCH", (str(site),))
    extensions._resolve.cache_clear()
    extensions._locate.cache_clear()
    assert extensions.extension_binding("fakesolve.solve", (str(site),)).endswith(importlib.machinery.EXTENSION_SUFFIXES[0])
    assert extensions.extension_binding("fakesolve.refine", (str(site),)) is None
    assert extensions.extension_binding("notinstalled.solve", (str(site),)) is None
    assert extensions.extension_binding("zlib.crc32", (str(site),)) is None  # the standard library: the table's
    assert found(
        """
        import torch
        from torch import nn
        from fakesolve import solve, refine


        class Matcher(nn.Module):
            def forward(self, cost):
                rows = solve(cost.detach())
                return refine(cost), rows
        """
    ) == [(8, "PTC307")]
