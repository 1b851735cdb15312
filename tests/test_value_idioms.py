"""Value kinds of call forms that are easy to miss: unbound ``torch.Tensor`` methods,
fields of ``torch.return_types`` named tuples, and casts applied through ``map``.

Each case names the (line, code) pairs that must appear, next to its near miss that
must not (behaviour measured with Dynamo on torch 2.13; see the interpreter's docstrings).
"""

from __future__ import annotations

from pt2lint.analysis import dynamo_facts
from linttools import found


def test_unbound_tensor_methods_are_the_bound_calls():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x, mask):
                p = torch.sigmoid(x).mean()
                a = x * torch.Tensor.item(p)
                b = torch.Tensor.tolist(p)
                c = torch.Tensor.add(x, 1)
                d = torch.Tensor.item(3)
                return a, b, c, d
        """
    ) == [(5, "PTC101"), (6, "PTC102")]


def test_unbound_inplace_method_writes_its_first_argument():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                torch.Tensor.add_(x, 1)
                y = x + 1
                torch.Tensor.add_(y, 1)
                return y
        """
    ) == [(4, "PTC401")]


def test_return_types_fields_are_tensors():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x, logits):
                best = x.max(dim=-1).values
                if best.mean() > 0:
                    x = -x
                a = logits.topk(2, dim=-1).indices.tolist()
                med = torch.median(x, dim=0)
                b = med.values.tolist()
                c = torch.sort(x).values[0, 0].item()
                e = torch.linalg.eigh(x).eigenvalues.tolist()
                return x, a, b, c, e
        """
    ) == [(5, "PTC104"), (7, "PTC102"), (9, "PTC102"), (10, "PTC101"), (11, "PTC102")]


def test_fields_of_other_values_are_not_tensors():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x, d: dict, obj):
                if d.values:
                    x = x + 1
                if obj.values:
                    x = x + 1
                r = x.max(dim=-1).values * 2
                if x.max(dim=-1).count:
                    x = x + 1
                return x, r
        """
    ) == []


def test_return_type_fields_come_from_torch():
    assert dynamo_facts.return_fields("max") == ("values", "indices")
    assert dynamo_facts.return_fields("linalg_eigh") == ("eigenvalues", "eigenvectors")
    assert dynamo_facts.return_fields("add") is None


def test_iterating_map_of_a_cast_over_a_tensor_reads_each_element():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x, lens):
                n = list(map(int, lens))
                t = tuple(map(bool, lens))
                for v in map(float, x):
                    pass
                return x * n[0]
        """
    ) == [(4, "PTC103"), (5, "PTC103"), (6, "PTC103")]


def test_map_near_misses():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                s = list(map(int, x.shape))
                m = map(float, x)
                q = list(map(str, [1, 2]))
                return x * s[0]
        """
    ) == []


def test_map_with_a_shadowed_cast_is_not_the_builtin():
    assert found(
        """
        import torch
        def int(v):
            return v
        class M(torch.nn.Module):
            def forward(self, x):
                return list(map(int, x))
        """
    ) == []


def test_formatting_a_tensor_into_a_string_reads_its_value():
    # ``%`` and ``str()`` need the text at once; an f-string or ``str.format`` of a tensor is built
    # after the graph unless its text is used in the region, here by the concatenation of line 10
    # (measured on torch 2.13: ``d + e`` alone breaks there, "missing sq_concat"; in this snippet
    # Dynamo's log holds only the first break, line 5, as the rest of the frame then ran eagerly)
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x, hw):
                h, w = hw.unbind()
                a = "%dx%d" % (h, w)
                b = "%d" % hw[0]
                c = str(hw[0])
                d = f"{hw[0]}"
                e = "{}".format(hw[0])
                return x * len(a + b + c + d + e)
        """
    ) == [(5, "PTC103"), (6, "PTC103"), (7, "PTC103"), (10, "PTC103"), (10, "PTC103")]


def test_formatting_shapes_and_constants_is_no_break():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x, hw, name: str):
                k = "%d-%s" % (x.shape[0], x.dtype)
                j = f"{x.shape[0]}" + "{}".format(x.size(1)) + str(x.dim()) + f"{name}"
                m = x % 3
                if k:
                    x = x + 1
                return x * m
        """
    ) == []


def test_forward_hook_method_registered_in_init_is_compiled_code():
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.norms = []
                self.fc.register_forward_hook(self._hook)
            def _hook(self, mod, inp, out):
                return out * out.norm().item()
            def _not_a_hook(self, mod, inp, out):
                return out.norm().item()
            def forward(self, x):
                return self.fc(x)
        class Quiet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.fc.register_forward_hook(self._hook)
            def _hook(self, mod, inp, out):
                return out * 2
            def forward(self, x):
                return self.fc(x)
        """
    ) == [(10, "PTC101")]


def test_closure_and_factory_hooks_registered_in_init_are_compiled_code():
    assert found(
        """
        import torch
        from torch import nn
        class C(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.stats = {}
                def hook(mod, inp, out):
                    return out * out.norm().item()
                self.fc.register_forward_hook(hook)
            def forward(self, x):
                return self.fc(x)
        class F(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
                for i, blk in enumerate(self.blocks):
                    blk.register_forward_hook(self._make_hook(i))
            def _make_hook(self, i):
                def hook(module, inputs, output):
                    return output * output.norm().item()
                return hook
            def forward(self, x):
                for b in self.blocks:
                    x = b(x)
                return x
        def unregistered(mod, inp, out):
            return out.norm().item()
        """
    ) == [(9, "PTC101"), (21, "PTC101")]
