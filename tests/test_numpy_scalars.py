"""NumPy on Python numbers: a floating one-element result computed only from sizes and
constants is constant-folded by Dynamo's fake tensors, so ``int()``/``float()``/``.item()`` of
it does not break (torch 2.13), while an integer result, one from a tuple or list, or one
computed from tensor data does. The static cases are the probe results; the torch tests
re-derive the function tables from ``torch._numpy`` and re-run a batch through Dynamo."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pt2lint.analysis import torch_api as api
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())

# (expression, breaks on torch 2.13 with static shapes, x = torch.randn(8, 3))
CASES = [
    ("x * int(np.ceil(x.shape[0] / 3))", False),
    ("x * int(np.floor(x.shape[0] / 3))", False),
    ("x * int(np.round(x.shape[0] / 3))", False),
    ("x * np.ceil(x.shape[0] / 3).item()", False),
    ("x * float(np.sqrt(x.shape[0] / 2))", False),
    ("x * float(np.maximum(x.shape[0] / 2, 2.0))", False),
    ("x * int(np.maximum(x.shape[0] / 2, 2.0))", False),
    ("x * float(np.sqrt(2))", False),
    ("x * float(np.exp(x.shape[0] * 0.5))", False),
    ("x * int(np.maximum(x.shape[0], 2))", True),
    ("x * int(np.abs(-x.shape[0]))", True),
    ("x * int(np.prod(x.shape))", True),
    ("x * float(np.prod(x.shape))", True),
    ("x * int(np.sum([1, 2]))", True),
    ("x * float(np.mean([1.0, 2.0]))", True),
    ("x * int(np.power(3, 2))", True),
    ("x * int(np.ceil(x.shape[0] / 3).astype(int))", True),
    ("x * float(np.ceil(x.sum().numpy()))", True),
    ("x * int(np.ceil(x.shape[0] / x.sum()))", True),
    ("x * int(np.ceil(x.shape[0] / 3) + 1)", False),
    ("x * int(np.ceil(x.shape[0] / 3) * np.sqrt(2.0))", False),
    ("x * int(np.ceil(x.shape[0] / 3) + x.sum())", True),
    ("x * int(np.ceil(x.shape[0] / 3) + np.prod(x.shape))", True),
    # a folded result is a number to the next NumPy call (monai's convutils: np.floor(np.sqrt(40.0 * n)))
    ("x * int(2 * (3 + np.floor(np.sqrt(40.0 * 3))))", False),
    ("x * int(np.ceil(np.sqrt(x.shape[0] / 2)))", False),
    ("x * int(np.floor(np.sqrt(x.abs().sum().numpy())))", True),
]


def _flagged(expr: str) -> bool:
    src = textwrap.dedent(
        f"""
        import numpy as np
        import torch

        @torch.compile
        def f(x: torch.Tensor):
            return {expr}
        """
    ).lstrip("\n")
    result = lint_source(src, "m.py", DEFAULT)
    return any(d.code in ("PTC101", "PTC103") and d.start.line == 6 for d in result.diagnostics)


@pytest.mark.parametrize("expr,breaks", CASES)
def test_numpy_scalar_read_is_flagged_exactly_where_dynamo_breaks(expr, breaks):
    assert _flagged(expr) is breaks


def test_names_carry_the_float_through_assignments():
    src = textwrap.dedent(
        """
        import numpy as np
        import torch

        @torch.compile
        def f(x: torch.Tensor, k: int = 4):
            n = x.shape[0] / k
            chunks = x.chunk(int(np.ceil(n)), 0)
            m = np.prod(x.shape)
            return chunks[0] * int(m)
        """
    ).lstrip("\n")
    result = lint_source(src, "m.py", DEFAULT)
    assert sorted((d.start.line, d.code) for d in result.diagnostics if d.code == "PTC103") == [(9, "PTC103")]


def test_a_divisor_of_unknown_kind_is_not_assumed_a_tensor():
    # ``self.virtual_batch_size`` comes from an unannotated ``__init__`` parameter: a number
    # (the read folds) or a tensor (it breaks), so the read is not a break for every kind it
    # may have; a tensor divisor still is one.
    src = textwrap.dedent(
        """
        import numpy as np
        import torch

        class GBN(torch.nn.Module):
            def __init__(self, virtual_batch_size=128):
                super().__init__()
                self.virtual_batch_size = virtual_batch_size
                self.register_buffer("scale", torch.ones(()))

            def forward(self, x: torch.Tensor):
                chunks = x.chunk(int(np.ceil(x.shape[0] / self.virtual_batch_size)), 0)
                n = int(np.ceil(x.shape[0] / self.scale))
                return torch.cat([c * n for c in chunks], dim=0)
        """
    ).lstrip("\n")
    result = lint_source(src, "m.py", DEFAULT)
    assert sorted((d.start.line, d.code) for d in result.diagnostics if d.code in ("PTC101", "PTC103")) == [(12, "PTC103")]


def test_arithmetic_on_parameters_of_unknown_kind_is_not_assumed_a_tensor():
    # ``self.width`` comes from an unannotated ``__init__`` parameter: an int (the read folds)
    # or a tensor (it breaks); a read of tensor data next to it still breaks
    src = textwrap.dedent(
        """
        import numpy as np
        import torch

        class Resize(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
                self.width = width

            def forward(self, attentions: torch.Tensor):
                scale = (self.width * self.width // attentions.shape[2]) ** 0.5
                feat_width = int(np.round(self.width / scale))
                n = int(np.round(attentions.sum() / scale))
                return attentions.reshape(attentions.shape[0], -1, feat_width) * n
        """
    ).lstrip("\n")
    result = lint_source(src, "m.py", DEFAULT)
    assert sorted((d.start.line, d.code) for d in result.diagnostics if d.code in ("PTC101", "PTC103")) == [(12, "PTC103")]


def test_tables_match_torch_numpy_under_fake_tensors():
    torch = pytest.importorskip("torch")
    tnp = pytest.importorskip("torch._numpy")
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    binary = {"power", "float_power", "maximum", "minimum", "fmax", "fmin", "add", "subtract", "multiply",
              "divide", "true_divide", "floor_divide", "mod", "remainder", "fmod", "hypot", "arctan2", "copysign"}

    def folded_float(name, scalar):
        fn = getattr(tnp, name)
        n_args = 3 if name == "clip" else 2 if name in binary else 1
        args = [scalar] * n_args if name != "clip" else [scalar, type(scalar)(0), type(scalar)(1)]
        with FakeTensorMode(shape_env=ShapeEnv()):
            try:
                t = fn(*args).tensor
            except Exception:
                return False
            return t.dtype.is_floating_point and t.constant is not None and t.numel() == 1

    for name in api.NUMPY_FLOAT_OF_FLOAT:
        assert folded_float(name, 0.7), name
    assert {n for n in api.NUMPY_FLOAT_OF_FLOAT if folded_float(n, 3)} == set(api.NUMPY_FLOAT_OF_INT)
    assert torch.__version__  # the facts were measured on the installed torch


_DYNAMO_CHILD = """
import numpy as np, torch, torch._dynamo as dynamo, sys, json
out = []
for expr in json.loads(sys.argv[1]):
    dynamo.reset()
    fn = eval("lambda x: " + expr)
    out.append(dynamo.explain(fn)(torch.randn(8, 3)).graph_break_count > 0)
print(json.dumps(out))
"""


def test_cases_are_what_dynamo_does():
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    import json

    exprs = [e for e, _ in CASES]
    proc = subprocess.run([sys.executable, "-c", _DYNAMO_CHILD, json.dumps(exprs)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    measured = json.loads(proc.stdout.strip().splitlines()[-1])
    assert dict(zip(exprs, measured)) == dict(CASES)


# --------------------------------------- NumPy values computed when the module is built

# (value stored on self in __init__, forward's return expression, breaks on torch 2.13 with
# x = torch.randn(4, 4)); re-measured by test_attribute_cases_are_what_dynamo_does
ATTR_CASES = [
    ("np.prod([2, 2])", "x.view(self.v, -1)", False),  # used as it is: a constant
    ("np.prod([1, 2])", "x[:, : self.v]", False),
    ("np.prod([2, 2])", "x.view(int(self.v), -1)", False),
    ("np.prod([4, 4])", "x / math.sqrt(self.v)", False),
    ("np.sqrt(64.0)", "x * self.v", False),
    ("int(np.prod([2, 2]))", "x.view(self.v * 1, -1)", False),  # an int when built: no NumPy left
    ("np.prod([2, 2])", "x.view(self.v * 1, -1)", True),  # arithmetic: traced into a tensor
    ("np.prod([2, 2])", "x * 2 if self.v > 2 else x", True),
    ("np.sqrt(64.0)", "x * 2 if self.v > 2 else x", True),
    ("np.prod([2, 2])", "x.view(-1, math.ceil(x.shape[-1] / self.v))", True),
    ("np.int64(2)", "sum(x for _ in range(self.v))", True),
]


def _module_source(init: str, expr: str) -> str:
    return textwrap.dedent(
        f"""
        import math
        import numpy as np
        import torch
        from torch import nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.v = {init}

            def forward(self, x):
                return {expr}
        """
    ).lstrip("\n")


@pytest.mark.parametrize("init,expr,breaks", ATTR_CASES)
def test_a_numpy_value_built_with_the_module_is_flagged_where_dynamo_breaks(init, expr, breaks):
    result = lint_source(_module_source(init, expr), "m.py", DEFAULT)
    flagged = [d.code for d in result.diagnostics if d.start.line == 12 and d.code.startswith("PTC1")]
    assert bool(flagged) is breaks, flagged


_ATTR_DYNAMO_CHILD = """
import io, json, logging, sys
import torch, torch._dynamo as dynamo
torch._logging.set_logs(graph_breaks=True)
stream = io.StringIO()
logging.getLogger("torch._dynamo").addHandler(logging.StreamHandler(stream))
out = []
for src in json.loads(sys.argv[1]):
    dynamo.reset()
    stream.seek(0)
    stream.truncate()
    ns = {}
    exec(src, ns)
    m = torch.compile(ns["M"](), backend="eager")
    m(torch.randn(4, 4))
    out.append("Graph break in user code" in stream.getvalue())
print(json.dumps(out))
"""


def test_attribute_cases_are_what_dynamo_does():
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    import json

    sources = [_module_source(i, e) for i, e, _ in ATTR_CASES]
    proc = subprocess.run([sys.executable, "-c", _ATTR_DYNAMO_CHILD, json.dumps(sources)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    measured = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [(i, e, b) for (i, e, _), b in zip(ATTR_CASES, measured)] == ATTR_CASES


def test_numpy_of_a_value_only_guessed_to_be_a_tensor_is_a_guess():
    # monai's SwinUNETR: window sizes are a constructor argument (ints), so ``int(np.ceil(h / ws[0]))``
    # folds (torch 2.13: no break); it had been read as ``int()`` of a sure tensor
    src = textwrap.dedent(
        """
        import numpy as np
        import torch
        from torch import nn

        def window(x_size, window_size):
            use = list(window_size)
            for i in range(len(x_size)):
                if x_size[i] <= window_size[i]:
                    use[i] = x_size[i]
            return tuple(use)

        class M(nn.Module):
            def __init__(self, window_size=(4, 4)):
                super().__init__()
                self.window_size = window_size

            def forward(self, x):
                b, c, h, w = x.size()
                ws = window((h, w), self.window_size)
                hp = int(np.ceil(h / ws[0])) * ws[0]
                return x[..., :hp]
        """
    ).lstrip("\n")
    assert [d.code for d in lint_source(src, "m.py", DEFAULT).diagnostics if d.code.startswith("PTC1")] == []
