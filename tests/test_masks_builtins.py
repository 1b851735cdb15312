"""Boolean-mask read-modify-writes, masks on values of unknown kind, ``all``/``any`` over tensors,
decorator factories and ``functools.partial``: each break Dynamo 2.13 reports, with the near miss
that must stay quiet (the measurements are in the rule specs and docstrings of the analysis)."""

from __future__ import annotations

import textwrap

from pt2lint.settings import LintSettings, resolve_selection
from linttools import found


def test_augmented_assignment_through_a_boolean_mask_reads_it():
    code = """
        import torch
        from torch import nn

        class Points(nn.Module):
            def __init__(self):
                super().__init__()
                self.pad = nn.Embedding(2, 4)

            def forward(self, emb, labels):
                emb = emb.clone()
                emb[labels == -1] = 0.0
                emb[labels == -1] += self.pad.weight[0]
                emb[emb < 0] *= 2
                keep = ~torch.isnan(emb) & (emb > 1)
                emb[keep] -= 1
                idx = torch.arange(2, device=emb.device)
                emb[idx] += 1
                emb[0] += 1
                emb[:, 1:] += 1
                out = torch.where((labels == 0)[..., None], emb + self.pad.weight[1], emb)
                return out.masked_fill(labels[..., None] == 1, 0.0)
        """
    # 11: a plain store through a mask does not break (index_put); 17-19: integer and basic indexes
    assert found(code, codes={"PTC201", "PTC202"}) == [(12, "PTC201"), (13, "PTC201"), (15, "PTC201")]


def test_augmented_assignment_mask_is_quiet_when_dynamic_shapes_are_captured():
    code = """
        from torch import nn

        class Points(nn.Module):
            def forward(self, emb, labels):
                emb[labels == 0] += 1
                return emb
        """
    settings = LintSettings(enabled=resolve_selection(), capture_dynamic_output_shape_ops=True)
    assert found(code, settings, codes={"PTC201"}) == []


def test_len_of_nonzero_breaks_unless_dynamic_shapes_are_captured():
    # torch 2.13, inputs with zeros, a graph-counting backend and the graph_breaks log:
    # "Dynamic shape operator" (aten.nonzero) at the line by default (explain() misses it when
    # nonzero is the frame's first op); no break with capture_dynamic_output_shape_ops=True
    code = "import torch\n@torch.compile\ndef f(x):\n    return x * len(x.nonzero())\n"
    assert found(code, codes={"PTC202"}) == [(4, "PTC202")]
    settings = LintSettings(enabled=resolve_selection(), capture_dynamic_output_shape_ops=True)
    assert found(code, settings) == []


def test_mask_index_on_a_value_of_unknown_kind():
    code = """
        import torch
        import einx
        from torch import nn

        class Loss(nn.Module):
            def forward(self, logits, weights, lengths):
                b, n = logits.shape[:2]
                rank = torch.rand((b, n), device=logits.device).argsort(dim=-1).float()
                mask = rank < lengths[:, None]
                loss = einx.multiply("b n, b", logits.sum(-1), weights)
                total = loss[mask].mean()
                picked = loss[rank.long()]
                maybe = loss[lengths.tolist()]
                return total + picked.sum() + maybe.sum()
        """
    # 11: `loss` comes from a call the analysis does not follow, but only a tensor takes a mask;
    # 12: an integer tensor index; 13: a Python list index
    assert found(code, codes={"PTC201"}) == [(11, "PTC201")]


_ALL_ANY = """
        import torch
        from torch import nn

        class Check(nn.Module):
            def forward(self, x, y):
                xs, ys = [x, y], [y, x]
                if all((a == b).all() for a, b in zip(xs, ys)):
                    x = x + 1
                if any(t.gt(0).any() for t in xs):
                    x = x + 1
                big = max(x.sum(), y.sum()) + min(t.sum() for t in xs) + sum(t.sum() for t in xs)
                if all(a.shape == b.shape for a, b in zip(xs, ys)):
                    x = x + 1
                if any(isinstance(t, torch.Tensor) for t in xs):
                    x = x + 1
                ok = torch.stack([(a == b).all() for a, b in zip(xs, ys)]).all()
                return torch.where(ok, x, big)
        """


def test_all_and_any_over_tensors_test_each_element():
    code = _ALL_ANY
    # 11: builtin min/max/sum over tensors become tensor ops (no break); 12, 14: shapes and isinstance.
    # The break of ``all(<generator>)`` on line 7 is inside Dynamo's polyfill, which cannot rebuild the
    # generator: the rest of forward runs eagerly, so line 9's ``any(...)`` is never traced (torch 2.13's
    # graph_breaks log names line 7 only, for inputs taking either branch)
    assert found(code, codes={"PTC104"}) == [(7, "PTC104")]


def test_all_and_any_over_tensors_matches_dynamo():
    pytest = __import__("pytest")
    pytest.importorskip("torch")
    import textwrap

    from linttools import dynamo_break_lines

    source = textwrap.dedent(_ALL_ANY).lstrip("\n")
    for second in ("torch.ones(3)", "torch.zeros(3)"):
        assert dynamo_break_lines(source, f'torch.compile(Check(), backend="eager")(torch.ones(3), {second})') == [7]


def test_all_over_torch_equal_reports_the_equal_call_only():
    code = """
        import torch
        from torch import nn

        class Check(nn.Module):
            def forward(self, x, y):
                if not all(torch.equal(a, b) for a, b in zip([x], [y])):
                    return x + 1
                return x
        """
    assert found(code, codes={"PTC104", "PTC105"}) == [(6, "PTC105")]


MEMO = """
    import functools
    import pickle

    import torch
    from torch import nn


    def _cached(method=None, name=None):
        if method is None:
            return functools.partial(_cached, name=name)

        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            key = pickle.dumps(kwargs)
            return method(self, *args, **kwargs)

        return wrapper


    def _cached_ignore_args(method=None, name=None):
        @functools.wraps(method)
        def plain(self, *args, **kwargs):
            return method(self, *args, **kwargs)

        return plain


    def cached(method=None, name=None, ignore_args=False):
        if ignore_args:
            return _cached_ignore_args(method=method, name=name)
        else:
            return _cached(method=method, name=name)


    class M(nn.Module):
        @cached(name="doubled")
        def doubled(self, x):
            return x * 2

        @cached
        def tripled(self, x):
            return x * 3

        @cached(name="halved", ignore_args=True)
        def halved(self, x):
            return x / 2

        def forward(self, x):
            return {calls}
    """


def test_decorator_factory_wrapper_calling_a_skipped_function_breaks_at_the_call():
    for calls in ("self.doubled(x)", "self.tripled(x)"):
        assert found(MEMO.format(calls=calls), codes={"PTC307"}) == [(14, "PTC307")], calls


def test_decorator_factory_path_without_the_skipped_call_is_quiet():
    assert found(MEMO.format(calls="self.halved(x)"), codes={"PTC307"}) == []


def test_functools_partial_of_a_local_function_binds_its_keywords():
    code = """
        import functools
        from torch import nn

        def scaled(x, scale=1.0, debug=True):
            if debug:
                print("scaling", x.shape)
            return x * scale

        class M(nn.Module):
            def forward(self, x):
                quiet = functools.partial(scaled, scale=2.0, debug=False)
                loud = functools.partial(scaled, scale=3.0)
                return quiet(x) + {call}
        """
    assert found(code.format(call="x"), codes={"PTC301"}) == []
    assert found(code.format(call="loud(x)"), codes={"PTC301"}) == [(6, "PTC301")]


def test_tuple_unpacked_torch_results_keep_tensor_kinds():
    code = """
        import torch
        from somewhere import settings

        def safe_cholesky(A, out=None):
            L, info = torch.linalg.cholesky_ex(A, out=out)
            if settings.trace_mode.on() or not torch.any(info):
                return L
            if L.shape[-1] > 4:
                return L * 2
            return L

        class M(torch.nn.Module):
            def forward(self, x):
                return safe_cholesky(x @ x.mT)
        """
    # 8: a shape test is a guard, not a break
    assert found(code, codes={"PTC104"}) == [(6, "PTC104")]


# A caching decorator factory in another module: ``cached(name=...)`` wraps the method in a
# wrapper that calls ``pickle.dumps`` (skipped by Dynamo, GB0007); ``cached(ignore_args=True)``
# wraps it in one without that call.
_MEMOIZE = """
    import functools
    import pickle


    def _cached(method=None, name=None):
        if method is None:
            return functools.partial(_cached, name=name)

        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            key = pickle.dumps(kwargs)
            return method(self, *args, **kwargs)

        return wrapper


    def _plain(method=None, name=None):
        if method is None:
            return functools.partial(_plain, name=name)

        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            return method(self, *args, **kwargs)

        return wrapper


    def cached(method=None, name=None, ignore_args=False):
        if ignore_args:
            return _plain(method=method, name=name)
        return _cached(method=method, name=name)
    """


def _skipped_calls_in_package(root, model: str):
    """Lint a package of ``_MEMOIZE`` and ``model`` under ``root``; its PTC307 findings as
    sorted ``(file, line, code)``."""
    import os

    from pt2lint.engine import lint_paths

    files = {"pkg/__init__.py": "", "pkg/memoize.py": _MEMOIZE, "pkg/model.py": model}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    old = os.getcwd()
    os.chdir(root)
    try:
        settings = LintSettings(enabled=resolve_selection(), project_root=str(root))
        paths = sorted(os.path.join("pkg", n) for n in os.listdir("pkg"))
        return sorted(
            (d.filename.replace(os.sep, "/"), d.start.line, d.code)
            for r in lint_paths(paths, settings, jobs=1) for d in r.diagnostics if d.code == "PTC307"
        )
    finally:
        os.chdir(old)


def test_decorator_factory_imported_from_another_module(tmp_path):
    model = """
        from torch import nn

        from .memoize import cached


        class M(nn.Module):
            @cached(name="doubled")
            def doubled(self, x):
                return x * 2

            @cached(ignore_args=True)
            def plain(self, x):
                return x + 1

            def forward(self, x):
                return self.{method}(x)
        """
    for method, expected in (("doubled", [("pkg/memoize.py", 11, "PTC307")]), ("plain", [])):
        got = _skipped_calls_in_package(tmp_path / method, model.replace("{method}", method))
        assert got == expected, method


def test_property_over_a_decorator_factory_runs_the_wrapper(tmp_path):
    # torch 2.13: reading ``self.dist`` runs the wrapper ``cached`` returns, whose
    # ``pickle.dumps`` is skipped (GB0007); under ``ignore_args=True`` the wrapper has no
    # skipped call and the read traces in one graph
    model = """
        from torch import nn

        from .memoize import cached


        class M(nn.Module):
            @property
            @cached({args})
            def dist(self):
                return 2

            def forward(self, x):
                return x * self.dist
        """
    for args, expected in (('name="dist"', [("pkg/memoize.py", 11, "PTC307")]), ("ignore_args=True", [])):
        got = _skipped_calls_in_package(tmp_path / str(len(expected)), model.replace("{args}", args))
        assert got == expected, args


def test_break_inside_a_generator_consumed_by_all_any_sum_set_breaks_again_at_the_call():
    code = """
        import torch
        from torch import nn

        def total(xs):
            s = sum(
                t.sum().item() for t in xs
            )
            return xs[0] * s

        class M(nn.Module):
            def forward(self, x, y):
                ok = all(
                    torch.equal(a, b) for a, b in zip([x, y], [x, x])
                )
                listed = all(
                    [torch.equal(a, b) for a, b in zip([x, y], [x, x])]
                )
                top = max(
                    t.sum().item() for t in (x, y)
                )
                inline = any(torch.equal(a, b) for a, b in zip([x], [y]))
                shapes = all(
                    a.shape == b.shape for a, b in zip([x, y], [x, x])
                )
                return total([x, y]) + 1, ok, listed, top, inline, shapes
        """
    # 15: a list is built before all() runs; 18: max exhausts the generator without a second break;
    # 21: generator on the call's line (same site); 22: no break inside
    assert found(code, codes={"PTC313"}) == [(5, "PTC313"), (12, "PTC313")]
    assert {(6, "PTC101"), (13, "PTC105"), (16, "PTC105"), (19, "PTC101")} <= set(found(code))


def test_is_none_folds_only_for_parameters_the_body_never_rebinds():
    code = """
        import torch
        from torch import nn

        def select(x, mask=None):
            if mask is not None:
                x = x[mask] + print("masked")
            return x.sum()

        def accumulate(xs, h=None):
            for x in xs:
                if h is None:
                    h = x
                else:
                    h = h + x.sum().item()
            return h

        class M(nn.Module):
            def forward(self, x):
                return select(x) + accumulate([x, x]){extra}
        """
    # select(x): `mask` is None for the whole call, the branch is not traced; `h` is rebound in the loop
    codes = {"PTC101", "PTC201", "PTC301"}
    assert found(code.format(extra=""), codes=codes) == [(14, "PTC101")]
    assert found(code.format(extra=" + select(x, x > 0)"), codes=codes) == [(6, "PTC201"), (6, "PTC301"), (14, "PTC101")]
