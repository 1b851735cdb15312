"""Rules that read the parts of the Dynamo facts table derived from torch's own tables:
ops tagged ``dynamic_output_shape`` / ``data_dependent_output`` (PTC202), in-place view ops
tagged ``inplace_view`` on graph inputs (PTC314), and the NumPy functions ``torch._numpy``
lacks (PTC312). Each finding next to the near miss that must stay clean; the table and the
installed torch are compared in tests/test_dynamo_facts.py.
"""

from __future__ import annotations

import textwrap

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection
from linttools import found


def test_table_answers_from_probes():
    assert facts.inplace_view_breaks("unsqueeze_") == "GB0148"
    assert facts.inplace_view_breaks("t_") == "GB0148"
    assert facts.inplace_view_breaks("unsqueeze") is None  # out of place: no entry
    assert facts.inplace_view_breaks("add_") is None  # writes data, not a view op
    assert facts.inplace_view_method("transpose_") and not facts.inplace_view_method("mul_")
    assert facts.numpy_unsupported("numpy.load") == "GB0294"
    assert facts.numpy_unsupported("numpy.asarray") is None
    where = {f.form: f for f in facts.shape_op_forms("torch.where")}
    assert where[("T",)].outcome == "breaks" and where[("T",)].gb == "GB0036" and "nonzero" in where[("T",)].aten
    assert where[("T", "T", "T")].outcome == "traces" and where[("T", "T", "T")].confirmed
    one_hot = {f.form: f for f in facts.shape_op_forms("torch.nn.functional.one_hot")}
    assert one_hot[("T",)].gb == "GB0246"
    assert one_hot[("T", "py")].outcome == "traces" and not one_hot[("T", "py")].confirmed
    assert facts.shape_op_forms("torch.sum") == ()


def test_derived_dynamic_shape_calls_are_ptc202():
    code = """
    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch import nn


    class M(nn.Module):
        def forward(self, x, labels, lengths):
            a = F.one_hot(labels)
            d = torch.where(x > 0)
            f = x.unique(return_counts=True)
            g = np.unique(x.detach().numpy())
            k = F.ctc_loss(x, labels, lengths, lengths, reduction="sum")
            m = torch.combinations(labels, 2)
            return a, d, f, g, k, m
    """
    assert found(code, codes={"PTC202"}) == [(9, "PTC202"), (10, "PTC202"), (11, "PTC202"), (12, "PTC202"), (13, "PTC202"), (14, "PTC202")]


def test_dynamic_shape_near_misses():
    code = """
    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch import nn


    class M(nn.Module):
        def forward(self, x, labels):
            b = F.one_hot(labels, 5)
            c = F.one_hot(labels, num_classes=5)
            e = torch.where(x > 0, x, 0.0)
            h = np.asarray(x.detach().numpy())
            n = x.unsqueeze(0).sum(dim=0)
            c2 = torch.cov(x)
            r = x.repeat_interleave(2, dim=0)
            return b, c, e, h, n, c2, r
    """
    assert found(code, codes={"PTC202"}) == []


def test_dynamic_shape_method_on_a_non_tensor_is_not_flagged():
    code = """
    from torch import nn


    class M(nn.Module):
        def forward(self, x, names: list):
            return x, names.unique()
    """
    assert found(code, codes={"PTC202"}) == []


def test_inplace_view_on_input_is_ptc314():
    code = """
    import torch
    from torch import nn


    class M(nn.Module):
        def forward(self, x, y):
            x.unsqueeze_(0)
            y.t_()
            return x, y
    """
    assert found(code, codes={"PTC314"}) == [(7, "PTC314"), (8, "PTC314")]


def test_inplace_view_near_misses():
    code = """
    import torch
    from torch import nn


    class M(nn.Module):
        def forward(self, x, y, z, w=None):
            a = x.unsqueeze(0)
            b = y * 2
            b.unsqueeze_(0)
            row = z[0]
            row.unsqueeze_(0)
            z = z.clone()
            z.transpose_(0, 1)
            if w is not None:
                w.unsqueeze_(0)
            x.add_(1)
            return a, b, row, z, w
    """
    assert found(code, codes={"PTC314"}) == []


def test_set_with_storage_arguments_is_ptc314_on_any_tensor():
    # measured on torch 2.13: the storage overload broke on a fresh tensor (GB0128); set_ with
    # one tensor argument or none was traced, and a starred argument hides the count
    code = """
    import torch
    from torch import nn


    class M(nn.Module):
        def forward(self, x, shape):
            y = torch.empty(0)
            y.set_(x.untyped_storage(), 0, (4, 4), (4, 1))
            a = x + 1
            a.set_(x * 2)
            b = x + 1
            b.set_()
            c = torch.empty(0)
            c.set_(*shape)
            return y, a, b, c
    """
    assert found(code, codes={"PTC314"}) == [(8, "PTC314")]


def test_numpy_function_without_torch_numpy_equivalent_on_any_argument_is_ptc312():
    code = """
    import numpy as np
    import torch
    from torch import nn


    class Mel(nn.Module):
        def forward(self, x, path: str):
            with np.load(path, allow_pickle=False) as f:
                filters = torch.from_numpy(f["mel"])
            grid = np.asarray(x.detach().numpy())
            return x @ filters, grid
    """
    assert found(code, codes={"PTC312"}) == [(8, "PTC312")]


def test_builtins_that_need_python_numbers_are_ptc103_on_tensors():
    code = """
    from torch import nn


    class M(nn.Module):
        def forward(self, x):
            s = x.sum()
            a = pow(x, 2)
            b = hex(s.long())
            c = chr(s.long() + 60)
            return x, a, b, c
    """
    assert found(code, codes={"PTC103"}) == [(7, "PTC103"), (8, "PTC103"), (9, "PTC103")]


def test_builtin_near_misses():
    code = """
    from torch import nn


    class M(nn.Module):
        def forward(self, x, y):
            s = x.sum()
            a = abs(s) + len(x) + max(x[0], x[1]).sum() + sum(x).sum() + min(s, 1.0)
            b = pow(x.shape[0], 2) + x ** 2
            c = hex(3) + chr(x.shape[1] + 60)
            return a, b, c, pow(y.n, 2)
    """
    assert found(code, codes={"PTC103"}) == []


def test_builtins_on_tensors_are_not_flagged_for_export():
    code = textwrap.dedent("""
    from torch import nn


    class M(nn.Module):
        def forward(self, x):
            return pow(x, 2)
    """).lstrip("\\n")
    settings = LintSettings(enabled=resolve_selection(target="export"), target="export")
    assert [d.code for d in lint_source(code, "m.py", settings).diagnostics if d.code == "PTC103"] == []
    assert found(code, codes={"PTC103"}) == [(6, "PTC103")]
