"""Calls resolved through submodule methods, container elements and conditionally chosen definitions.

Each snippet was checked with Dynamo on torch 2.13 (``torch._dynamo.explain`` for the breaks,
the functionalized graph's ``copy_`` for the input writes): the finding must sit at the line
Dynamo names, with the chain of calls that reaches it, and the near miss next to it must stay silent.
"""

from __future__ import annotations

import textwrap

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def lint(code: str):
    return lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT).diagnostics


def found(code: str):
    return sorted((d.start.line, d.code) for d in lint(code))


# -------------------------------------------- a method read off a submodule binds the submodule

MIXIN = """
    import torch
    from torch import nn

    class FillMixin:
        def fill_missing_(self, x):
            return x.masked_fill_(torch.isnan(x), 0.0)

        def fill_missing(self, x):
            return x.clone().masked_fill_(torch.isnan(x), 0.0)

    class RevIN(FillMixin, nn.Module):
        def normalize(self, x):
            x = self.{helper}(x)
            return x - x.mean()

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.revin = RevIN()

        def forward(self, history):
            return self.revin.normalize(history)
    """


def test_mixin_write_through_a_submodule_method_is_reported_at_the_write():
    diags = lint(MIXIN.format(helper="fill_missing_"))
    assert sorted((d.start.line, d.code) for d in diags) == [(6, "PTC401")]
    (d,) = diags
    assert d.call_chain == ("M.forward", "RevIN.normalize", "RevIN.fill_missing_")
    assert "`history`" in d.message and "`.masked_fill_()`" in d.message


def test_mixin_writing_a_clone_through_a_submodule_method_is_silent():
    # the old false alarm sat at the call ``self.fill_missing(x)``, taking ``self`` for the input
    assert found(MIXIN.format(helper="fill_missing")) == []


# ------------------------------- an element of a container input, through kwargs and helpers

CACHE = """
    import torch
    from torch import nn

    def write_kv_(cache, new, start: int):
        {write}
        return cache

    class Layer(nn.Module):
        def forward(self, x, layer_cache=None, start: int = 0):
            return write_kv_(layer_cache[0], x, start).sum() + x

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Layer()])

        def forward(self, x, past=None, start: int = 0):
            for i, layer in enumerate(self.layers):
                x = layer(x, layer_cache=past[i], start=start)
            return x
    """


def test_multi_axis_slice_store_into_a_cache_element_writes_the_input():
    diags = lint(CACHE.format(write="cache[:, start:start + new.shape[1]] = new"))
    assert [(d.start.line, d.code) for d in diags] == [(5, "PTC401")]
    assert diags[0].call_chain == ("M.forward", "Layer.forward", "write_kv_")
    assert "`past`" in diags[0].message


def test_ellipsis_store_into_a_cache_element_writes_the_input():
    assert found(CACHE.format(write="cache[..., 0] = new.sum()")) == [(5, "PTC401")]


def test_multi_axis_augmented_store_into_a_cache_element_writes_the_input():
    assert found(CACHE.format(write="cache[:, start:start + new.shape[1]] += new")) == [(5, "PTC401")]


def test_stores_a_list_or_dict_also_accepts_stay_silent_on_a_guessed_tensor():
    # ``cache=None``: as likely a list or a dict, and these indexes are valid on both
    assert found(CACHE.format(write="cache[start] = new")) == []
    assert found(CACHE.format(write="cache[0:start] = new")) == []
    assert found(CACHE.format(write='cache["k", start] = new')) == []


def test_multi_axis_store_into_a_clone_of_the_element_is_silent():
    assert found(CACHE.format(write="cache = cache.clone()\n        cache[:, start:start + new.shape[1]] = new")) == []


# ------------------------------------------- a function or class chosen by a conditional

CHOSEN_FN = """
    import warnings
    import torch
    from torch import nn

    def chunked(x):
        {body}
        return x * 2

    def plain(x):
        return x * 2

    class M(nn.Module):
        def __init__(self, use_chunked=True):
            super().__init__()
            self.use_chunked = use_chunked

        def forward(self, x):
            fn = chunked if self.use_chunked else plain
            return fn(x)
    """


def test_function_chosen_by_a_conditional_expression_is_followed():
    diags = lint(CHOSEN_FN.format(body='warnings.warn("falling back")'))
    assert [(d.start.line, d.code) for d in diags] == [(6, "PTC303")]
    assert diags[0].call_chain == ("M.forward", "chunked (one of chunked, plain)")


def test_function_chosen_by_a_conditional_expression_with_clean_candidates_is_silent():
    assert found(CHOSEN_FN.format(body="x = x + 1")) == []


CHOSEN_CLS = """
    import torch
    from torch import nn

    class Sparse(nn.Module):
        def forward(self, x):
            return {sparse}

    class Dense(nn.Module):
        def forward(self, x):
            return x.clamp(min=0).sum()

    class M(nn.Module):
        def __init__(self, dense=False):
            super().__init__()
            {choose}
            self.body = cls()

        def forward(self, x):
            return self.body(x)
    """


def test_class_chosen_by_a_conditional_expression_is_followed():
    diags = lint(CHOSEN_CLS.format(sparse="x[x > 0].sum()", choose="cls = Dense if dense else Sparse"))
    assert [(d.start.line, d.code) for d in diags] == [(6, "PTC201")]
    assert diags[0].call_chain == ("M.forward", "Sparse.forward (one of Dense, Sparse)")


def test_class_chosen_by_an_if_statement_is_followed():
    choose = "if dense:\n                cls = Dense\n            else:\n                cls = Sparse"
    assert found(CHOSEN_CLS.format(sparse="x[x > 0].sum()", choose=choose)) == [(6, "PTC201")]


def test_class_chosen_by_a_conditional_expression_with_clean_candidates_is_silent():
    assert found(CHOSEN_CLS.format(sparse="torch.where(x > 0, x, 0).sum()", choose="cls = Dense if dense else Sparse")) == []
