"""Parameter kinds of a region root come from its callers, not from a guess.

A submodule's ``forward`` reached from its parent takes the kinds the parent
passes; one that no analysed caller reaches (the module is passed as an argument
to a callee the analysis cannot resolve) has callers the analysis did not see, so
its untyped parameters are Unknown, not Tensors; a ``@torch.compile``d function
takes the join of what its calls in the module pass.  Each case was run through
Dynamo on torch 2.13 (``torch._dynamo.explain``): the near misses below do not
break there, the flagged lines do.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from pt2lint.analysis.callers import join_callers, static_value
from pt2lint.analysis.kinds import CONST, SHAPE, TENSOR, UNKNOWN, Kind, Value
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())
GRAPH_BREAKS = {"PTC103", "PTC104"}


def found(code: str):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    return sorted((d.start.line, d.code) for d in result.diagnostics if d.code in GRAPH_BREAKS)


ALIBI = """
import torch
from torch import nn


class Alibi(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.register_buffer("bias", None, persistent=False)

    def forward(self, i, j):
        if self.bias is not None and self.bias.shape[-1] >= j and self.bias.shape[-2] >= i:
            return self.bias[..., -i:, -j:]
        return torch.zeros(i, j, device=self.bias.device)
"""


PASSED_ON = ALIBI + """

class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, rel_pos=None):
        i, j = x.shape[-2], x.shape[-2]
        out = self.proj(x)
        if rel_pos is not None:
            out = out + rel_pos(i, j)
        return out


class Layers(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.rel_pos = Alibi(4)
        self.layers = nn.ModuleList([nn.ModuleList([nn.LayerNorm(dim), Attention(dim)]) for _ in range(depth)])

    def forward(self, x):
        for norm, block in self.layers:
            x = block(norm(x), rel_pos=self.rel_pos)
        return x
"""


def test_ints_from_shapes_into_a_submodule_passed_as_an_argument_are_not_tensors():
    # x_transformers' AlibiPositionalBias: the parent hands ``self.rel_pos`` to blocks the
    # analysis cannot resolve, which call ``rel_pos(i, j)`` with sequence lengths
    assert found(PASSED_ON) == []


REACHED = ALIBI + """

class Layers(nn.Module):
    def __init__(self):
        super().__init__()
        self.rel_pos = Alibi(4)

    def forward(self, x):
        return x + self.rel_pos(x.shape[-2], x.shape[-1])
"""


def test_ints_from_shapes_into_a_reached_submodule_are_not_tensors():
    assert found(REACHED) == []


TENSOR_PASSED = ALIBI + """

class Layers(nn.Module):
    def __init__(self):
        super().__init__()
        self.rel_pos = Alibi(4)

    def forward(self, x, mask):
        n = mask.sum(-1).max()
        return x + self.rel_pos(n, n)
"""


def test_a_tensor_passed_into_the_submodule_is_flagged():
    assert found(TENSOR_PASSED) == [(11, "PTC104"), (11, "PTC104"), (12, "PTC103"), (12, "PTC103")]


GATE = """
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x, scores):
        if scores.sum() > 0:
            return x
        return -x


class Block(nn.Module):
    def forward(self, x, gate=None):
        return gate(x, x) if gate is not None else x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.blocks = nn.ModuleList([nn.ModuleList([nn.LayerNorm(4), Block()])])

    def forward(self, x):
        for norm, block in self.blocks:
            x = block(norm(x), gate=self.gate)
        return x
"""


def test_unreached_submodule_parameter_used_as_a_tensor_still_breaks():
    # ``scores.sum()`` is a tensor-only method: whatever the unseen caller passes, the
    # ``if`` on its result is data-dependent (Dynamo breaks at this line)
    assert found(GATE) == [(7, "PTC104")]


COMPILED = """
import torch


@torch.compile
def crop(x, n):
    if n > 2:
        x = x * 2
    return x[:n]

"""


def test_compiled_function_called_with_ints_is_not_flagged():
    code = COMPILED + """
def main():
    x = torch.randn(8, 4)
    crop(x, 3)
    crop(x, x.shape[0] - 1)
    crop(x, n=len(x))
"""
    assert found(code) == []


def test_compiled_function_called_with_a_tensor_is_flagged():
    code = COMPILED + """
def main():
    x = torch.randn(8, 4)
    crop(x, torch.tensor(3))
"""
    assert found(code) == [(6, "PTC104"), (8, "PTC103")]


def test_compiled_function_without_callers_keeps_tensor_parameters():
    assert found(COMPILED) == [(6, "PTC104"), (8, "PTC103")]


def test_compiled_function_with_mixed_callers_reports_only_sure_breaks():
    # an int at one call and something unknown at another: ``n`` may be either, and
    # ``if n > 2`` is a break only for a tensor -- not proven, so not reported
    code = COMPILED + """
def main(k):
    x = torch.randn(8, 4)
    crop(x, 3)
    crop(x, k)
"""
    assert found(code) == []


def test_compiled_alias_calls_count_as_calls():
    code = """
import torch


def crop(x, n):
    if n > 2:
        x = x * 2
    return x[:n]


step = torch.compile(crop)


def main():
    step(torch.randn(8, 4), 3)
"""
    assert found(code) == []


DIRECT_COMPILE_CALLS = """
import torch


def crop(x, n):
    if n > 2:
        x = x * 2
    return x[:n]


def run():
    a = torch.compile(crop)(torch.randn(8, 4), 3)
    b = torch.compile(crop, backend="eager")(torch.randn(8, 4), n=2)
    return a, b
"""


def test_a_compiled_function_called_where_it_is_compiled_takes_the_call_s_kinds():
    # torch.compile(crop)(x, 3): n is the int 3, not a tensor; with a tensor it breaks again
    assert found(DIRECT_COMPILE_CALLS) == []
    with_tensor = DIRECT_COMPILE_CALLS.replace("(torch.randn(8, 4), 3)", "(torch.randn(8, 4), torch.tensor(3))")
    with_tensor = with_tensor.replace("n=2)", "n=torch.tensor(2))")
    assert found(with_tensor) == [(5, "PTC104"), (7, "PTC103")]


def test_dynamo_agrees_on_direct_compile_calls():
    pytest = __import__("pytest")
    pytest.importorskip("torch")
    from linttools import dynamo_break_lines_many

    source = textwrap.dedent(DIRECT_COMPILE_CALLS).lstrip("\n").replace("torch.compile(crop)", "torch.compile(crop, backend='eager')")
    tensor = source.replace("(torch.randn(8, 4), 3)", "(torch.randn(8, 4), torch.tensor(3))").replace("n=2)", "n=torch.tensor(2))")
    # (lines counted from the dedented text: the `if` is line 5, the slice line 7)
    assert dynamo_break_lines_many([(source, "run()"), (tensor, "run()")]) == [[], [5, 7]]


def test_compiled_function_called_from_a_compiled_forward_takes_its_kinds():
    code = COMPILED + """
class M(torch.nn.Module):
    def forward(self, x):
        return crop(x, x.shape[0])
"""
    assert found(code) == []


def test_literal_defaults_are_not_tensors():
    # ``scale=1.0``, ``causal=False``, ``mask=None``: branching on them is no break
    assert found("""
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, scale=1.0, causal=False, mask=None, k=-1):
        if scale > 1:
            x = x * scale
        if causal:
            x = x.tril()
        if mask is not None:
            x = x + mask
        return x[..., :k]
""") == []


def test_imported_function_compiled_here_takes_the_kinds_of_the_calls_here(tmp_path):
    from pt2lint.engine import lint_paths

    pkg = tmp_path / "f"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text("def crop(x, n):\n    if n > 2:\n        x = x * 2\n    return x[:n]\n")
    (pkg / "run.py").write_text(
        "import torch\nfrom .ops import crop\nfast = torch.compile(crop)\n\n\ndef main(x):\n    return fast(x, x.shape[0])\n"
    )
    settings = LintSettings(enabled=DEFAULT.enabled, project_root=str(tmp_path))
    files = [str(pkg / "__init__.py"), str(pkg / "ops.py"), str(pkg / "run.py")]
    got = [(d.filename.rsplit("/", 1)[-1], d.start.line, d.code) for r in lint_paths(files, settings, jobs=1) for d in r.diagnostics]
    assert [g for g in got if g[2] in GRAPH_BREAKS] == []
    (pkg / "run.py").write_text("import torch\nfrom .ops import crop\nfast = torch.compile(crop)\n")
    got = [(d.filename.rsplit("/", 1)[-1], d.start.line, d.code) for r in lint_paths(files, settings, jobs=1) for d in r.diagnostics]
    assert [g for g in got if g[2] in GRAPH_BREAKS] == [("ops.py", 2, "PTC104"), ("ops.py", 4, "PTC103")]


def test_static_values_of_call_arguments():
    def v(src):
        return static_value(cst.parse_expression(src))

    assert v("3").kind is Kind.CONST and v("3").const == 3
    assert v("x.shape[0] - 1") == SHAPE
    assert v("len(x)") == SHAPE
    assert v("x.size(1)") == SHAPE
    assert v("(1, 2)").kind is Kind.CONTAINER
    assert v("None").kind is Kind.NONE
    assert v("torch.tensor(3)") == UNKNOWN
    assert v("k") == UNKNOWN
    assert v("(k, 2)") == UNKNOWN


def test_static_values_of_dtypes_and_devices():
    from pt2lint.analysis.imports import ImportMap

    imports = ImportMap()
    imports.add_import(cst.parse_statement("import torch").body[0])

    def v(src):
        return static_value(cst.parse_expression(src), imports)

    assert v("x.dtype") == CONST and v("x.device") == CONST and v("self.dtype") == CONST
    assert v("torch.float16") == CONST and v("torch.float8_e4m3fn") == CONST
    assert v("np.float16") == UNKNOWN  # not torch's
    assert v("torch.randn") == UNKNOWN


def test_join_of_callers():
    defaults = {"x": TENSOR, "n": TENSOR}
    out = join_callers([{"x": UNKNOWN, "n": CONST}, {"x": UNKNOWN, "n": SHAPE}], defaults)
    assert out["x"] == TENSOR  # nobody informs x: its default
    assert out["n"] == SHAPE
    mixed = join_callers([{"x": UNKNOWN, "n": CONST}, {"x": UNKNOWN, "n": UNKNOWN}], defaults)
    assert mixed["n"].kind is Kind.TENSOR and mixed["n"].weak
    assert join_callers([], defaults) == defaults
    assert join_callers([{"n": Value(Kind.TENSOR, weak=True)}], {"n": CONST})["n"] == CONST


def test_dynamo_agrees(tmp_path):
    """The kinds above are Dynamo's: the near misses do not break, the flagged lines do."""
    torch = __import__("pytest").importorskip("torch")
    import importlib.util
    import sys

    def break_lines(code, build):
        # the ``@torch.compile`` line is blanked (line numbers kept) and the function explained
        path = tmp_path / f"callers_{len(list(tmp_path.iterdir()))}.py"
        path.write_text(textwrap.dedent(code).lstrip("\n").replace("@torch.compile\n", "\n"))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        fn, args = build(module)
        torch._dynamo.reset()
        out = torch._dynamo.explain(fn)(*args)
        lines = set()
        for b in out.break_reasons:  # the innermost frame of the snippet on each break's stack
            frames = [f for f in b.user_stack if f.filename == str(path)]
            if frames:
                lines.add(frames[-1].lineno)
        return sorted(lines)

    x = torch.randn(4, 5, 5)

    def layers(m, *args):
        m.rel_pos.bias = torch.zeros(4, 6, 6)
        return m, (x, *args)

    assert break_lines(PASSED_ON, lambda mod: layers(mod.Layers(5, 1))) == []
    assert break_lines(REACHED, lambda mod: layers(mod.Layers())) == []
    assert 11 in break_lines(TENSOR_PASSED, lambda mod: layers(mod.Layers(), torch.ones(4, 5, dtype=torch.long)))
    assert break_lines(GATE, lambda mod: (mod.Net(), (torch.randn(2, 4),))) == [7]
    assert break_lines(COMPILED, lambda mod: (mod.crop, (torch.randn(8, 4), 3))) == []
    assert 6 in break_lines(COMPILED, lambda mod: (mod.crop, (torch.randn(8, 4), torch.tensor(3))))


MAX_OF_MAYBE = """
import torch
from torch import nn


def bucketed(q, bucket_size):
    bucket_size = max(bucket_size, 1)
    if bucket_size > 1:
        q = q * 2
    return q


class Block(nn.Module):
    def __init__(self, bucket_size=1):
        super().__init__()
        self.bucket_size = bucket_size

    def forward(self, q):
        return bucketed(q, self.bucket_size)


class Sure(nn.Module):
    def forward(self, q):
        m = max(q.sum(), 1)
        if m > 1:
            q = q * 2
        return q
"""


def test_builtin_max_keeps_the_doubt_of_an_operand_that_may_not_be_a_tensor():
    # ``max(size, 1)`` on a value that is only maybe a tensor is no proof of a tensor (Dynamo
    # traces ``Block`` without a break); over a sure tensor it is one (``Sure`` breaks at the ``if``)
    assert found(MAX_OF_MAYBE) == [(24, "PTC104")]


GATED = """
import torch
from torch import nn


class Cfg:
    use_bias: bool = False


class Bias(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(16, 2))

    def forward(self, window_size):
        h = 2 * window_size[0] - 1
        return self.table[: int(h)]


class Layer(nn.Module):
    def __init__(self, cfg: CFG_ANNOTATION):
        super().__init__()
        self.bias = Bias(cfg) if cfg.use_bias else None

    def forward(self, x, counts=None):
        if self.bias is not None:
            ws = WINDOW
            return x + self.bias(ws).sum()
        return x
"""

SHAPES = "(x.shape[0] // 2, x.shape[1] // 2)"
COUNTS = "counts.sum(-1)"


def gated(annotation: str, window: str) -> str:
    return GATED.replace("CFG_ANNOTATION", annotation).replace("WINDOW", window)


def test_submodule_built_under_a_config_flag_read_as_false_is_not_a_root():
    # transformers' BeitRelativePositionBias: ``cfg.use_bias`` reads as the class default
    # (False), so the parent's call looks dead, but the class is still built by its parent
    # and called with shape ints: its ``window_size`` is not a tensor the user passes
    assert found(gated("Cfg", SHAPES)) == []


def test_submodule_reached_from_its_parent_takes_the_parents_kinds():
    # an unannotated config: both branches live, the parent's call is followed
    assert found(gated("object", SHAPES).replace("cfg: object", "cfg")) == []
    assert found(gated("object", COUNTS).replace("cfg: object", "cfg")) == [(16, "PTC103")]


STANDALONE = """
import torch
from torch import nn


class Crop(nn.Module):
    def forward(self, x, n):
        return x[: int(n * 2)]
"""


def test_module_nobody_builds_is_a_root_with_tensor_inputs():
    # a root module is what ``torch.compile(model)(...)`` is called with: its untyped
    # inputs are the user's tensors, as for a compiled function without callers
    assert found(STANDALONE) == [(7, "PTC103")]


def test_dynamo_agrees_on_built_submodules(tmp_path):
    """On torch 2.13 the shape-int window does not break, the tensor one and the root's ``int(n)`` do."""
    torch = __import__("pytest").importorskip("torch")
    import importlib.util
    import sys

    def break_lines(code, name, build):
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(code).lstrip("\n"))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        fn, args = build(module)
        torch._dynamo.reset()
        out = torch._dynamo.explain(fn)(*args)
        return sorted({[f for f in b.user_stack if f.filename == str(path)][-1].lineno for b in out.break_reasons})

    def layer(mod, *args):
        cfg = mod.Cfg()
        cfg.use_bias = True
        return mod.Layer(cfg), (torch.randn(6, 6), *args)

    assert break_lines(gated("Cfg", SHAPES), "gated_shapes", layer) == []
    counts = torch.full((2, 3), 1)
    assert 16 in break_lines(gated("Cfg", COUNTS), "gated_counts", lambda mod: layer(mod, counts))
    assert break_lines(STANDALONE, "standalone", lambda mod: (mod.Crop(), (torch.randn(8), torch.tensor(3)))) == [7]


DTYPE_DISPATCH = """
import torch

FMT = "fp6"


def to_dtype(data, elem_dtype, target_dtype):
    if elem_dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        out = data.to(target_dtype)
    elif elem_dtype == FMT:
        out = data.float().to(target_dtype)
    else:
        out = data
    return out


def run(x):
    step = torch.compile(to_dtype)
    return step(x, CALLER_DTYPE, torch.float32)
"""


def test_compiled_function_given_dtypes_takes_them_for_dtypes():
    # ``x.dtype``, ``x.device`` and ``torch.float16`` at the call site are no tensors: comparing
    # one with ``==`` is a constant guard, not a data-dependent branch (torch 2.13: one graph)
    for arg in ("x.dtype", "x.device", "torch.float16"):
        assert found(DTYPE_DISPATCH.replace("CALLER_DTYPE", arg)) == [], arg
    # a tensor passed there is compared with dtypes and a string: Python bools, no branch on data
    assert found(DTYPE_DISPATCH.replace("CALLER_DTYPE", "x.sum()")) == []
    # compared with a number it is a tensor test
    assert found(DTYPE_DISPATCH.replace("CALLER_DTYPE", "x.sum()").replace("== FMT", "== 2")) == [(9, "PTC104")]


def test_dynamo_agrees_on_dtype_arguments():
    __import__("pytest").importorskip("torch")
    from linttools import dynamo_break_lines_many

    src = textwrap.dedent(DTYPE_DISPATCH).lstrip("\n")
    cases = [
        (src.replace("CALLER_DTYPE", arg), "run(torch.randn(2, 4))")
        for arg in ("x.dtype", "torch.float16", "x.sum()")
    ]
    cases.append((src.replace("CALLER_DTYPE", "x.sum()").replace("== FMT", "== 2"), "run(torch.randn(2, 4))"))
    assert dynamo_break_lines_many(cases) == [[], [], [], [9]]
