"""Compiled regions, value kinds and suppressions, one behaviour per test.

Each snippet is linted with every default rule; assertions name the (line, code)
pairs that must appear -- and, as importantly, the near-misses that must not.
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def lint(code: str, settings: LintSettings = DEFAULT):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", settings)
    return result.diagnostics


def found(code: str, settings: LintSettings = DEFAULT):
    return sorted((d.start.line, d.code) for d in lint(code, settings))


# ----------------------------------------------------------------- regions


def test_import_alias_still_resolves_module_base():
    assert found(
        """
        import torch as t
        class M(t.nn.Module):
            def forward(self, x):
                return x.sum().item()
        """
    ) == [(4, "PTC101")]


def test_local_base_class_chain_is_a_module():
    assert found(
        """
        from torch import nn
        class Base(nn.Module):
            pass
        class Mid(Base):
            pass
        class M(Mid):
            def forward(self, x):
                print(x.shape)
                return x
        """
    ) == [(8, "PTC301")]


def test_unresolvable_base_with_forward_counts_but_plain_class_does_not():
    assert found(
        """
        from somewhere import PreTrainedModel
        class M(PreTrainedModel):
            def forward(self, x):
                return x.tolist()
        class NotAModule:
            def forward(self, x):
                return x.tolist()
        """
    ) == [(4, "PTC102")]


def test_torch_compile_decorator_and_call_are_entry_points():
    assert found(
        """
        import torch
        @torch.compile
        def step(x):
            return x.item()
        @torch.compile(fullgraph=True)
        def step2(x):
            print(x)
        def plain(x):
            return x.item()
        def later(x):
            return x.tolist()
        fast = torch.compile(later)
        """
    ) == [(4, "PTC101"), (7, "PTC301"), (11, "PTC102")]


def test_helpers_are_followed_with_call_chain_and_item_in_init_is_not():
    diags = lint(
        """
        import torch
        from torch import nn
        def route(scores):
            return scores.argmax().item()
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.n = torch.tensor(3).item()
            def forward(self, x):
                return self._inner(x)
            def _inner(self, x):
                return route(x)
            def unused(self, x):
                return x.item()
        """
    )
    assert [(d.start.line, d.code) for d in diags] == [(4, "PTC101")]
    assert diags[0].symbol == "route"
    assert diags[0].call_chain == ("M.forward", "M._inner", "route")


def test_closures_and_same_file_decorator_wrappers():
    assert found(
        """
        import functools
        from torch import nn
        def logged(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                print("calling")
                return fn(*args, **kwargs)
            return wrapper
        class M(nn.Module):
            @logged
            def forward(self, x):
                def scale(t):
                    return t * t.max().item()
                return scale(x)
        """
    ) == [(6, "PTC301"), (13, "PTC101")]


@pytest.mark.parametrize(
    "guard,flagged",
    [
        ("if not torch.compiler.is_compiling():", False),
        ("if torch.compiler.is_compiling():", True),
        ("if not torch._dynamo.is_compiling():", False),
        ("if torch.jit.is_scripting():", False),
        ("if not torch.jit.is_scripting():", True),
        ("if not is_torchdynamo_compiling():", False),
        ("if self.debug and not torch.compiler.is_compiling():", False),
    ],
)
def test_dead_branch_of_compiling_guards_is_skipped(guard, flagged):
    code = f"""
        import torch
        from torch import nn
        from transformers.utils import is_torchdynamo_compiling
        class M(nn.Module):
            def forward(self, x):
                {guard}
                    print(x.shape)
                return x
        """
    assert (found(code) == [(7, "PTC301")]) is flagged


def test_disabled_function_body_is_not_analysed_but_the_call_is_a_break():
    assert found(
        """
        import torch
        from torch import nn
        @torch.compiler.disable
        def post(x):
            print(x)
            return x.tolist()
        class M(nn.Module):
            def forward(self, x):
                return post(x)
        """
    ) == [(9, "PTC310")]


# ----------------------------------------------------------------- value kinds


def test_shape_training_none_isinstance_and_flags_do_not_branch_on_data():
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.use_bias = cfg.use_bias
                self.proj = nn.Linear(4, 4)
            def forward(self, x, mask=None, use_cache: bool = False, scale=1.0):
                b, n = x.shape[:2]
                if x.shape[0] > 1 and x.dim() == 3 and len(x) > 2 and x.numel() > 0:
                    x = x + 1
                if self.training or self.use_bias or use_cache or scale > 0:
                    x = x * 2
                if mask is None or isinstance(x, torch.Tensor) or x.dtype == torch.float16:
                    x = x - 1
                if x.size(-1) % 2 == 0 and b > n:
                    x = self.proj(x)
                return x
        """
    ) == []


def test_data_dependent_tests_in_every_construct():
    assert found(
        """
        from torch import nn
        class M(nn.Module):
            def forward(self, x, flag: bool = True):
                if x.sum() > 0:
                    x = x + 1
                elif (x < 0).any():
                    x = x - 1
                y = x if x.max() > 1 else -x
                while y.mean() < 1:
                    y = y * 2
                ok = flag and not x.all()
                vals = [r for r in x if r.sum() > 0]
                return y
        """
    ) == [(4, "PTC104"), (6, "PTC104"), (8, "PTC104"), (9, "PTC104"), (11, "PTC104"), (12, "PTC104")]


def test_values_flow_through_assignment_unpacking_and_helpers():
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("threshold", torch.zeros(()))
                self.w = nn.Parameter(torch.ones(4))
            def split(self, x):
                return x.chunk(2, dim=-1)
            def forward(self, x):
                a, b = self.split(x)
                h = a
                if h.mean() > self.threshold:
                    b = b * 2
                if self.w.sum() > 0:
                    b = b + 1
                return b
        """
    ) == [(13, "PTC104"), (15, "PTC104")]


def test_submodule_forward_is_analysed_with_its_callers_arguments():
    code = """
        from torch import nn
        class Block(nn.Module):
            def forward(self, x):
                x.add_(1)
                return x
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(2)])
            def forward(self, x):
                h = x.clone()
                for blk in self.blocks:
                    h = blk(h)
                return h
        """
    # The block mutates its argument, but Net hands it a clone: the compiled
    # model's input is never written.
    assert found(code) == []
    alone = code.split("class Net")[0]
    assert found(alone) == [(4, "PTC401")]


def test_input_mutation_through_views_out_and_inplace_activations():
    assert found(
        """
        import torch
        import torch.nn.functional as F
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU(inplace=True)
                self.act2 = nn.ReLU()
            def forward(self, x, y, xs):
                flat = x.view(-1)
                flat.mul_(2)
                torch.mul(y, 2, out=y)
                F.relu(y, inplace=True)
                xs[0].add_(1)
                z = x.clone()
                z.add_(1)
                z[0] = 0
                w = self.act2(x)
                w.add_(1)
                return self.act(x)
        """
    ) == [(11, "PTC401"), (12, "PTC401"), (13, "PTC401"), (14, "PTC401"), (20, "PTC401")]


def test_boolean_mask_vs_integer_index():
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def forward(self, x, idx):
                a = x[x > 0]
                keep = torch.isfinite(x) & (x != 0)
                b = x[keep]
                c = x[idx]
                d = x[:, 0]
                x[x < 0] = 0
                return a, b, c, d
        """
    ) == [(5, "PTC201"), (7, "PTC201"), (10, "PTC401")]


def test_capture_knobs_silence_what_they_make_compilable():
    code = """
        import torch
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                v = x.sum().item()
                if v > 0:
                    x = x + 1
                idx = torch.nonzero(x)
                return x[x > 0], idx
        """
    assert found(code) == [(5, "PTC101"), (8, "PTC202"), (9, "PTC201")]
    knobs = LintSettings(
        enabled=resolve_selection(), capture_scalar_outputs=True, capture_dynamic_output_shape_ops=True
    )
    # .item() is now traced as an unbacked SymFloat; branching on it still breaks, and the
    # traced read is a host sync (PTC701, info under --target compile).
    assert found(code, knobs) == [(5, "PTC701"), (6, "PTC104")]


def test_recompile_hazards():
    assert found(
        """
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.steps = 0
                self.history = []
            def forward(self, x):
                self.steps += 1
                self.history.append(x.shape[0])
                key = id(x)
                return x
        """
    ) == [(8, "PTC501"), (9, "PTC501"), (10, "PTC502")]


def test_export_rules_only_for_export_target():
    code = """
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                assert (x >= 0).all()
                return x.numpy()
        """
    assert found(code) == []
    export = LintSettings(enabled=resolve_selection(target="export"), target="export")
    assert found(code, export) == [(4, "PTC602"), (5, "PTC601")]


# ----------------------------------------------------------------- suppressions


def test_suppression_forms():
    diags = lint(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                a = x.item()  # noqa: PTC101
                b = x.item()  # pt2lint: ignore[tensor-item]
                # pt2lint: ignore[PTC102]
                c = x.tolist()
                d = torch.cat(
                    [x, x.tolist()],  # noqa
                )
                e = x.item()  # noqa: PTC301, E501
                f = x  # pt2lint: ignore[PTC999]
                return a
        """
    )
    got = sorted((d.start.line, d.code) for d in diags)
    assert got == [(12, "PTC002"), (12, "PTC101"), (13, "PTC003")]


def test_syntax_error_is_a_finding_with_the_parser_position():
    diags = lint("def f(:\n    pass\n")
    assert [(d.code, d.start.line) for d in diags] == [("PTC001", 1)]
    assert diags[0].message.startswith("SyntaxError")


def test_inplace_activation_first_in_sequential_writes_the_input():
    assert found(
        """
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 4))
                self.tail = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True))
            def forward(self, x):
                y = self.tail(x)
                return self.head(x) + y
        """
    ) == [(9, "PTC401")]


def test_dtype_guards_follow_the_compute_dtype():
    code = """
        import torch
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                if x.dtype == torch.float16 and not torch.isfinite(x).all():
                    x = x.clamp(-1, 1)
                if x.dtype in (torch.float16, torch.bfloat16):
                    print("half")
                return x
        """
    assert found(code) == []
    half = LintSettings(enabled=resolve_selection(), compute_dtype="float16")
    assert found(code, half) == [(5, "PTC104"), (8, "PTC301")]


def test_numpy_values_are_tensors_under_dynamo():
    assert found(
        """
        import numpy as np
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                m = np.lcm(4, 6)
                if x.shape[-1] % m:
                    x = x + 1
                for i in range(np.prod([2, 3])):
                    x = x + i
                arr = x.sum(0).detach().numpy()
                return x, np.pi * 2, [v for v in arr if v > 0]
        """
    ) == [(6, "PTC104"), (8, "PTC103"), (11, "PTC104")]


def test_tensor_on_one_path_constant_on_another_still_branches():
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def forward(self, x, p: float = 0.1):
                skip = False
                if self.training:
                    skip = torch.rand([]) < p
                if not skip:
                    x = x * 2
                return x
        """
    ) == [(8, "PTC104")]  # torch.rand([]) is made on the host and only read by the `if`: no PTC702


def test_guessed_tensor_arguments_stay_guesses_through_arithmetic():
    # ``size`` gets an unknown value from its caller: a guessed tensor, never flagged
    assert found(
        """
        from torch import nn
        def window(x, size):
            return x[:, -size:], [i for i in range(-size, size + 1)]
        class M(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.size = cfg.size
            def forward(self, x):
                return window(x, self.size)
        """
    ) == []


def test_setting_requires_grad_on_a_tensor():
    assert found(
        """
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                h = x * 2
                h.requires_grad = True
                return h
        """
    ) == [(5, "PTC308")]


def test_a_break_inside_a_loop_hides_the_rest_of_that_frame_like_dynamo():
    # Dynamo skips the frame after the first break in a loop (GB7000): the later breaks
    # of forward are not reported, but a helper it calls is still compiled on its own.
    assert found(
        """
        from torch import nn
        def helper(t):
            return t.tolist()
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
            def forward(self, x):
                v = x.max().item()
                for layer in self.layers:
                    x = layer(x)
                    print(x.shape)
                    w = x.sum().item()
                y = x.nonzero()
                return helper(x), y
        """
    ) == [(3, "PTC102"), (9, "PTC101"), (12, "PTC301")]


def test_a_loop_break_in_one_arm_of_an_if_does_not_hide_the_other_arm():
    # one arm runs: with mode="a" Dynamo reports the print, with mode="b" the tolist (torch
    # 2.13, graph_breaks log); either way the frame is skipped, so the nonzero after the loop
    # is never reported
    assert found(
        """
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
            def forward(self, x, mode: str):
                for layer in self.layers:
                    if mode == "a":
                        print(x.shape)
                    else:
                        w = x.tolist()
                    x = layer(x)
                y = x.nonzero()
                return y
        """
    ) == [(9, "PTC301"), (11, "PTC102")]


def test_arms_a_loop_alternates_between_iterations_hide_each_other():
    # `i == 0` takes the first arm in the first iteration: Dynamo reports the print and skips
    # the frame, so the tolist of the later iterations is never reported (torch 2.13)
    assert found(
        """
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
            def forward(self, x):
                for i, layer in enumerate(self.layers):
                    if i == 0:
                        print(x.shape)
                    else:
                        w = x.tolist()
                    x = layer(x)
                return x
        """
    ) == [(9, "PTC301")]


def test_a_return_annotation_types_what_the_body_cannot():
    # the body returns what a library the analysis does not read computes: `-> Tensor` makes the
    # result a tensor; Optional[Tensor], no annotation or `-> int` leave it unknown (not flagged)
    assert found(
        """
        import torch
        from torch import Tensor
        from typing import Optional
        import somelib
        def project(x) -> Tensor:
            return somelib.project(x)
        def maybe(x) -> Optional[torch.Tensor]:
            return somelib.project(x)
        def untyped(x):
            return somelib.project(x)
        def count(x) -> int:
            return somelib.count(x)
        def sized(x) -> Tensor:
            return x.shape[0]
        class M(torch.nn.Module):
            def forward(self, x):
                if project(x) > 0:
                    x = x + 1
                if maybe(x) is None:
                    x = x * 2
                if untyped(x) > 0:
                    x = x - 1
                if count(x) > 1:
                    x = x - 2
                if sized(x) > 1:
                    x = x - 3
                return x
        """
    ) == [(17, "PTC104")]


def test_container_annotations_give_their_elements_kinds():
    assert found(
        """
        import torch
        from typing import List
        from torch import nn
        class M(nn.Module):
            def forward(self, x, sizes: list[tuple[int, int]], lens: List[torch.Tensor], extra: list):
                for h, w in sizes:
                    x = x[:, :h]
                n = lens[0]
                for e in extra:
                    x = x[:, :e]
                return x[:, :n]
        """
    ) == [(11, "PTC103")]


# ------------------------------------------------- containers with known keys


def test_kwargs_of_a_wrapper_keep_their_keys():
    # the wrapper forwards **kwargs; `kwargs.get("debug")` is its default, not one of the tensors
    assert found(
        """
        import torch
        def wrap(fn):
            def wrapper(self, *args, **kwargs):
                if kwargs.get("debug", False):
                    print("debug")
                return fn(self, *args, **kwargs)
            return wrapper
        class M(torch.nn.Module):
            @wrap
            def forward(self, x, mask=None):
                return x
        class Parent(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = M()
            def forward(self, x, mask):
                return self.m(x, mask=mask)
        """
    ) == []


def test_known_dict_key_gives_its_value():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                out = {"logits": x, "n": 3}
                if out["n"] > 2:
                    x = x * 2
                if out["logits"].sum() > 0:
                    return x
                return -x
        """
    ) == [(7, "PTC104")]


def test_kwargs_passed_on_with_double_star_reach_the_callee():
    assert found(
        """
        import torch
        def helper(x, scale=None):
            if scale > 0:
                return x * scale
            return x
        class M(torch.nn.Module):
            def forward(self, x):
                opts = {"scale": x.mean()}
                return helper(x, **opts)
        """
    ) == [(3, "PTC104")]


def test_dict_written_with_an_unknown_key_forgets_its_keys():
    assert found(
        """
        import torch
        class M(torch.nn.Module):
            def forward(self, x, name: str):
                d = {"a": 1}
                d[name] = x.sum()
                if d.get("a"):
                    return x
                return -x
        """
    ) == []


def test_element_picked_by_an_index_of_unknown_kind_is_a_guess():
    # `pair[i]` with `i` from somewhere unknown: maybe the tensor, maybe the int, so no branch
    # finding; any element of a list of tensors is a tensor, whatever the index
    assert found(
        """
        import torch
        from typing import List
        class M(torch.nn.Module):
            def forward(self, x, feats: List[torch.Tensor]):
                i = self.pick()
                pair = (x.sum(), 3)
                if pair[i]:
                    x = x + 1
                if feats[i].sum() > 0:
                    x = x - 1
                for j in range(len(feats)):
                    if feats[j].sum() > 0:
                        x = x * 2
                return x
        """
    ) == [(9, "PTC104"), (12, "PTC104")]


def test_operator_index_of_a_tensor_reads_its_value_as_int_does():
    # torch 2.13: "Unsupported Tensor.item() call with capture_scalar_outputs=False" on the
    # first; no break with capture_scalar_outputs=True, nor for a size
    src = """
        import operator
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                n = operator.index(x.shape[0])
                return x * operator.index(x.sum().long()) * n
        """
    assert found(src) == [(6, "PTC103")]
    assert found(src, LintSettings(enabled=resolve_selection(), capture_scalar_outputs=True)) == []


@pytest.mark.parametrize("cast", ["int", "float", "bool"])
def test_cast_of_a_raw_0d_tensor_input_breaks(cast):
    # torch 2.13, f(x, torch.tensor(v)) for v = 2, 3, 5 with the graph_breaks and recompiles
    # logs: a graph break at the cast every call (no specialisation to a guard on the value),
    # the resumed frame recompiled per value; the parameter is a tensor, so the finding stands
    src = f"""
        import torch
        @torch.compile
        def f(x, n):
            return x * {cast}(n)
        """
    assert found(src) == [(4, "PTC103")]


def test_leaf_factory_and_retain_grad_are_ptc308():
    code = """
    import torch
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.zeros(4, requires_grad=True)
            self.lin = nn.Linear(4, 4)
        def forward(self, x):
            a = torch.zeros(4, requires_grad=True)
            b = torch.tensor([1.0, 2.0], requires_grad=True)
            c = torch.zeros_like(x, requires_grad=True)
            y = self.lin(x)
            y.retain_grad()
            return a, b, c, y
    """
    assert [f for f in found(code) if f[1] == "PTC308"] == [(9, "PTC308"), (10, "PTC308"), (11, "PTC308"), (13, "PTC308")]


def test_leaf_factory_near_misses_are_not_ptc308():
    # measured on torch 2.13: each traced without a break (requires_grad=False; a Tensor
    # method, not a torch function; a flag that is not a known constant True)
    code = """
    import torch
    from torch import nn
    class M(nn.Module):
        def forward(self, x, flag):
            d = torch.zeros(4, requires_grad=False)
            e = x.new_zeros(4, requires_grad=True)
            f = torch.ones(4, requires_grad=flag)
            return d, e, f
    """
    assert [f for f in found(code) if f[1] == "PTC308"] == []


@pytest.mark.parametrize(
    "fill",
    [
        "for f in feats:\n        outs.append(f * 2)",  # filled in a loop
        "outs.append(feats[0])\n    outs.append(feats[1])",  # one append at a time
        "outs.extend([feats[0], feats[1]])",
        "collect(outs, feats[0])\n    collect(outs, feats[1])",  # a helper appends to it
        "alias = outs\n    alias.append(feats[0])\n    alias.append(feats[1])",  # through another name
    ],
)
def test_a_local_list_filled_after_it_was_made_is_not_empty(fill):
    # ``len(outs)`` of ``outs = []`` is not 0 once something may have appended to it: the code
    # under ``if len(outs) > 1:`` runs (Dynamo broke at the nonzero, measured on torch 2.13)
    fill = fill.replace("\n    ", "\n        ")
    code = f"""import torch
from torch import nn


def collect(outs, x):
    outs.append(x)


class Head(nn.Module):
    def forward(self, feats):
        outs = []
        {fill}
        if len(outs) > 1:
            return torch.nonzero(outs[0] > 0)
        return outs[0]
"""
    lines = code.splitlines()
    nonzero = next(i for i, text in enumerate(lines, 1) if "nonzero" in text)
    assert (nonzero, "PTC202") in found(code), code


def test_a_list_length_stays_known_where_nothing_changes_it():
    # a list nothing appends to keeps its length; torch and builtins given the list do not grow it
    assert found(
        """
        import torch
        from torch import nn


        class Head(nn.Module):
            def forward(self, x):
                outs = [x, x * 2]
                y = torch.cat(outs)
                n = len(outs)
                if len(outs) > 2:
                    print(n)
                return y
        """
    ) == []


def test_an_item_store_into_a_local_list_is_what_reading_it_back_gives():
    # measured on torch 2.13: A breaks at line 9 (data-dependent branching), B at line 17
    # (``.item()``), D at line 31; C and E trace (a size stored and read back is a size)
    code = """
        import torch
        from torch import nn

        class A(nn.Module):
            def forward(self, x):
                outs = [0] * 3
                for i in range(3):
                    outs[i] = x.sum() * i
                if outs[1] > 0:
                    return x
                return -x

        class B(nn.Module):
            def forward(self, x):
                outs = [None, None]
                outs[0] = x.max()
                return x * outs[0].item()

        class C(nn.Module):
            def forward(self, x):
                outs = [None] * 2
                outs[0] = x.shape[0]
                if outs[0] > 1:
                    return x
                return -x

        class D(nn.Module):
            def forward(self, x):
                outs = [0, 0, 0]
                outs[1:] = [x.sum(), x.mean()]
                if outs[2] > 0:
                    return x
                return -x

        class E(nn.Module):
            def forward(self, x):
                sizes = [1, 2]
                sizes[0] = x.shape[0]
                return x.view(sizes[0], -1)
        """
    assert found(code) == [(9, "PTC104"), (17, "PTC101"), (31, "PTC104")]


def test_a_value_of_unknown_kind_stored_at_an_unknown_position_keeps_what_the_list_holds():
    # a decorator's wrapper writes back ``args[i] = v`` with ``v`` a config value or an element
    # (transformers' ``merge_with_config_defaults``): the forward input stays a tensor
    assert found(
        """
        import torch
        from torch import nn

        def with_defaults(func):
            def wrapper(self, *args, **kwargs):
                i = kwargs.get("index")
                v = args[i] if i is not None else getattr(self, "default", None)
                if v is not None:
                    args = list(args)
                    args[i] = v
                    args = tuple(args)
                return func(self, *args, **kwargs)
            return wrapper

        class M(nn.Module):
            @with_defaults
            def forward(self, x):
                if x > 0:
                    return x
                return -x
        """
    ) == [(18, "PTC104")]


def test_a_submodule_that_a_subclass_may_replace_by_an_rnn_is_reported_where_it_is_read():
    # timm's sequencer: the base builds an identity, the subclass an nn.LSTM when a flag is on;
    # compiled, LSTM2d() breaks at line 16 ("Attempted to wrap RNN, GRU, or LSTM", torch 2.13),
    # and Base() alone compiles to one graph
    code = """
        import torch
        from torch import nn

        class Ident(nn.Module):
            def forward(self, x):
                return x, None

        class Base(nn.Module):
            def __init__(self, union="cat"):
                super().__init__()
                self.with_vertical = union != "horizontal"
                self.rnn_v = Ident()

            def forward(self, x):
                if self.with_vertical:
                    v, _ = self.rnn_v(x)
                    return v
                return x

        class LSTM2d(Base):
            def __init__(self, union="cat"):
                super().__init__(union)
                if self.with_vertical:
                    self.rnn_v = nn.LSTM(4, 4, batch_first=True)
        """
    assert found(code) == [(16, "PTC311")]
    assert found(code.split("        class LSTM2d")[0]) == []


def test_a_string_key_proves_a_mapping_not_a_tensor():
    # ``batch["mode"] == "train"`` of a forward argument: no tensor takes a string index (torch 2.13,
    # a dict input: one graph, no break); ``batch["x"]`` stays of unknown kind
    assert found(
        """
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, batch):
                if batch["mode"] == "train":
                    batch["x"] = batch["x"] * 2
                return batch["x"]
        """
    ) == []


def test_and_or_stop_at_an_operand_that_decides_them():
    # measured on torch 2.13: none of these breaks (the tensor operand is never evaluated), while
    # ``torch.any(denom == 0)`` alone would
    assert found(
        """
        import torch
        from torch import nn

        def safe_divide(num, denom, zero_division=0.0):
            if zero_division == "warn" and torch.any(denom == 0):
                print("zero division")
            return num / denom

        def auroc(fpr, tpr, max_fpr=None):
            if max_fpr is None or max_fpr == 1 or fpr.sum() == 0:
                return (fpr * tpr).sum()
            return fpr.sum()

        def is_zero(losses):
            if (not torch.is_tensor(losses)) and (losses == 0):
                return True
            return False

        class M(nn.Module):
            def forward(self, a, b):
                losses = a * 2
                out = safe_divide(a, b) + auroc(a, b)
                return out * 0 if is_zero(losses) else out
        """
    ) == []


def test_a_multi_line_and_or_test_is_reported_at_the_statement_line():
    # Dynamo places the jump of every operand on the ``if``/``while`` line (torch 2.13: breaks at
    # lines 6 and 15, once each)
    assert found(
        """
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                if (
                    (x < 0.1).any()
                    or (x > 5).any()
                ):
                    return x * 2
                return x

        class W(nn.Module):
            def forward(self, x):
                while (x.sum() > 100
                       and x.mean() > 0):
                    x = x / 2
                return x
        """
    ) == [(6, "PTC104"), (15, "PTC104")]


def test_match_statement_in_forward_is_analysed():
    # each ``case`` arm is a path; a break in the subject or an arm is reported
    assert found(
        """
        import torch
        from torch import nn


        class Router(nn.Module):
            def __init__(self, mode: str = "sum"):
                super().__init__()
                self.mode = mode

            def forward(self, x):
                match self.mode:
                    case "sum":
                        y = x.sum()
                    case "max":
                        y = x.max()
                    case _:
                        y = x.mean()
                print(y)
                return y
        """
    ) == [(18, "PTC301")]


def test_elements_appended_in_a_loop_keep_their_kind():
    # ``dims`` starts empty and gets (int, int) tuples in a loop: its elements are shapes, not
    # tensors (Dynamo traced the int repeats without a break, torch 2.13); the real break is the
    # tensor of counts
    assert found(
        """
        import torch
        from torch import nn


        def grid(ph, pw):
            return torch.arange(ph).repeat_interleave(pw)


        class Packer(nn.Module):
            def forward(self, images: list[torch.Tensor]):
                dims = []
                for image in images:
                    dims.append((image.shape[-2] // 8, image.shape[-1] // 8))
                pos = [grid(ph, pw) for ph, pw in dims]
                counts = torch.tensor([p.shape[0] for p in pos], device=images[0].device)
                return torch.repeat_interleave(torch.arange(len(pos), device=counts.device), counts)
        """
    ) == [(6, "PTC702"), (16, "PTC202")]  # (PTC702: the arange is made on the CPU)


def test_tensor_index_of_a_python_list_and_int_scalar_arithmetic():
    # measured on torch 2.13: a list indexed by a tensor asks it for ``__index__`` (GB0124); a
    # tensor indexed by ``x.argmax() % 3`` reads the 0-d int tensor as a SymInt (GB0033); a mask
    # times a mask is a mask (GB0036 at the selection); a list indexed by a shape traces
    assert found(
        """
        import torch
        from torch import nn


        class Picker(nn.Module):
            def __init__(self):
                super().__init__()
                self.kernel_sizes = [3, 5, 7]

            def forward(self, x: torch.Tensor, prob: torch.Tensor):
                k = self.kernel_sizes[x.argmax() % 3]
                k2 = self.kernel_sizes[x.shape[0] % 3]
                sizes = torch.tensor(self.kernel_sizes, device=x.device)
                s = sizes[x.argmax() % 3]
                mask = (x > 0) * (prob == 1)
                one_d = torch.atleast_1d(prob > 0.5)
                if bool(one_d.any()):
                    s = s + 1
                return x[mask].sum() + k + k2 + s
        """
    ) == [(11, "PTC103"), (14, "PTC103"), (17, "PTC103"), (19, "PTC201")]


def test_state_stored_in_forward_and_read_back_keeps_its_kind():
    # measured on torch 2.13: int() of a tensor stored on self in forward, or of an entry of a dict
    # copy, breaks (GB0124); a shape stored the same way does not
    assert found(
        """
        from typing import Dict

        import torch
        from torch import nn


        class Mixer(nn.Module):
            def __init__(self):
                super().__init__()
                self._params = None
                self._rows = None

            def forward(self, x: torch.Tensor, p: Dict[str, torch.Tensor]):
                self._params = p
                self._peak = x.max()
                self._rows = x.shape[0]
                d = dict(p)
                return x * int(self._params["src"].max()) + int(d["src"].min()) + int(self._peak) + int(self._rows)
        """
    ) == [(18, "PTC103"), (18, "PTC103"), (18, "PTC103")]


def test_in_on_a_tensor_reads_it_and_ends_the_frame():
    # ``v in t`` is ``(t == v).any().item()`` inside ``Tensor.__contains__`` (GB0124): Dynamo
    # compiles no graph for the function (measured on torch 2.13); ``x.shape[0] in (2, 4)`` traces
    got = found(
        """
        import torch
        from torch import nn


        class Pad(nn.Module):
            def forward(self, ids, x: torch.Tensor):
                ok = x.shape[0] in (2, 4)
                if 0 in ids[:, [-1, 0]]:
                    ids = ids.clamp_min(1)
                seen = 3 in x.long()
                return ids, ok, seen
        """
    )
    assert got == [(8, "PTC103")]


def test_module_container_indexed_by_a_tensor_and_max_of_an_iterator_with_default():
    # measured on torch 2.13: ``self.heads[i]`` with a tensor ``i`` (GB0124 inside container.py),
    # ``max(map(len, words), default=0)`` (GB0193); ``self.heads[k]`` with an int and
    # ``max([...], default=0)`` trace
    got = found(
        """
        import torch
        from torch import nn


        class Heads(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

            def forward(self, x: torch.Tensor, words=("a", "bb")):
                k = x.shape[0] % 3
                y = self.heads[k](x)
                n = max([len(w) for w in words], default=0)
                m = max(map(len, words), default=0)
                return self.heads[x.argmax() % 3](y) * n * m
        """
    )
    assert got == [(14, "PTC325")]  # the frame runs eagerly after it: line 15 is named in its message
    assert found(
        """
        import torch
        from torch import nn


        class Heads(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

            def forward(self, x: torch.Tensor):
                return self.heads[x.argmax() % 3](x)
        """
    ) == [(11, "PTC103")]


def test_a_context_manager_is_reported_at_the_with_line():
    # a parenthesised ``with`` over several lines: Dynamo reports the ``with`` line (torch 2.13)
    assert found(
        """
        import threading

        import torch
        from torch import nn


        class Locked(nn.Module):
            def __init__(self):
                super().__init__()
                self._lock = threading.Lock()

            def forward(self, x):
                with (
                    torch.no_grad(),
                    self._lock,
                ):
                    y = x * 2
                return y
        """
    ) == [(13, "PTC307")]


def test_context_managers_built_outside_the_region():
    # measured on torch 2.13: ``with self.timer:`` (a context-manager class of the file, built in
    # ``__init__``) and ``with self.ctx:`` (``torch.no_grad()`` built in ``__init__``) break
    # (GB0142) and the frame runs eagerly, so the timer's ``__enter__`` is not traced;
    # ``with Timer():`` built in the region traces
    assert found(
        """
        import torch
        from torch import nn


        class Timer:
            def __init__(self):
                self.n = 0

            def __enter__(self):
                self.n += 1
                return self

            def __exit__(self, *exc):
                return False


        class Timed(nn.Module):
            def __init__(self):
                super().__init__()
                self.timer = Timer()
                self.ctx = torch.no_grad()

            def forward(self, x):
                with Timer():
                    x = x + 1
                with self.timer:
                    y = x * 2
                return y


        class Frozen(nn.Module):
            def __init__(self):
                super().__init__()
                self.ctx = torch.no_grad()

            def forward(self, x):
                with self.ctx:
                    y = x * 2
                return y
        """
    ) == [(26, "PTC307"), (37, "PTC307")]


@pytest.mark.parametrize("build", [
    'dict(d, n=3)', 'dict(**d)', 'dict(scale=d["scale"])', 'dict({"n": 2}, scale=d["scale"])', 'd | {"n": 3}',
])
def test_dict_copies_and_unions_keep_their_entries(build):
    # measured on torch 2.13: each ``if f["scale"] > 0`` breaks (GB0170, data-dependent branching)
    code = f"""
import torch
from torch import nn


class Scaled(nn.Module):
    def forward(self, x: torch.Tensor):
        d = {{"scale": x.mean(), "n": 2}}
        f = {build}
        if f["scale"] > 0:
            x = x + 1
        return x
"""
    assert (9, "PTC104") in found(code)


def test_self_state_written_in_forward_is_read_back_in_order():
    # measured on torch 2.13 (each model called twice): the print after filling ``self.outs``
    # (reset in every call) breaks and no recompile follows; the last store to ``self.v`` (an int)
    # is what the test reads (traced); a tensor stored on one path is read back (breaks)
    got = found(
        """
        import torch
        from torch import nn


        class StoreList(nn.Module):
            def forward(self, x):
                self.outs = []
                for t in x:
                    self.outs.append(t)
                if len(self.outs) == 2:
                    print("two")
                return x


        class StoreOverwrite(nn.Module):
            def forward(self, x):
                self.v = x.sum()
                self.v = 3
                if self.v > 1:
                    x = x + 1
                return x


        class StoreInBranch(nn.Module):
            def __init__(self):
                super().__init__()
                self.v = 1

            def forward(self, x):
                if x.shape[0] > 1:
                    self.v = x.mean()
                if self.v > 0:
                    x = x + 1
                return x
        """
    )
    assert got == [(11, "PTC301"), (32, "PTC104")]
