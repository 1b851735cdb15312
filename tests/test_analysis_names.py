"""How Python binds names, as the analysis must see them.

* A class-body ``forward = other_fn`` (a module-level function, an imported one, or a
  method defined above) binds ``forward``; ``del forward`` removes it.
* ``getattr(x, "item")`` with a constant string is ``x.item`` (Dynamo resolves it so).
* Identifiers are normalised to NFKC by the parser (PEP 3131): ``def ｆｏｒｗａｒｄ`` is
  ``forward`` and ``ｘ`` is ``x``.

Ground truth (torch 2.13, ``torch._dynamo.explain``): every module flagged below has
one graph break at the flagged line; the ``del forward`` module raises
``NotImplementedError`` ("missing a required forward function") before compiling.
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection
from test_project_analysis import PYPROJECT, found, lint_tree, write

SETTINGS = LintSettings(enabled=resolve_selection())
HEADER = "import torch\nfrom torch import nn\n\n\n"


def findings(body: str):
    src = HEADER + textwrap.dedent(body).lstrip("\n")
    return [(d.start.line - 4, d.code) for d in lint_source(src, "m.py", SETTINGS).diagnostics]


def test_class_body_alias_of_a_module_function_is_forward():
    assert findings(
        """
        def other_fn(self, x):
            return x * x.max().item()


        class A(nn.Module):
            forward = other_fn
        """
    ) == [(2, "PTC101")]


def test_class_body_alias_of_a_method_defined_above_is_forward():
    assert findings(
        """
        class C(nn.Module):
            def _impl(self, x):
                return x.tolist()

            forward = _impl
        """
    ) == [(3, "PTC102")]


def test_del_forward_removes_it_and_a_later_binding_wins():
    assert findings(
        """
        class D(nn.Module):
            def forward(self, x):
                return x.sum().item()

            del forward
        """
    ) == []
    # rebinding to something that is not a function hides the method too
    assert findings(
        """
        class N(nn.Module):
            def forward(self, x):
                return x.sum().item()

            forward = None
        """
    ) == []
    # and a def after an alias is the method
    assert findings(
        """
        def other_fn(self, x):
            return x


        class L(nn.Module):
            forward = other_fn

            def forward(self, x):
                return x.sum().item()
        """
    ) == [(9, "PTC101")]


def test_class_body_alias_of_a_function_of_another_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/impls.py": """
            def fwd(self, x):
                return x * x.sum().item()
            """,
        "pkg/model.py": """
            from torch import nn
            from pkg import impls
            from pkg.impls import fwd as imported


            class B(nn.Module):
                forward = impls.fwd


            class E(nn.Module):
                forward = imported
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/impls.py", 2, "PTC101")]


@pytest.mark.parametrize("call, code", [('getattr(x, "item")()', "PTC101"), ('getattr(x, "tolist", None)()', "PTC102")])
def test_constant_string_getattr_is_attribute_access(call, code):
    assert findings(
        f"""
        class G(nn.Module):
            def forward(self, x):
                return x * {call}
        """
    ) == [(3, code)]


def test_getattr_of_a_name_bound_to_a_string_constant_is_attribute_access():
    # ``N = "item"`` at module level, ``name = "tolist"`` in the function: the same lookups as
    # the literals (measured on torch 2.13: ``getattr(x, name)()`` with ``name = "tolist"`` breaks
    # with GB0109, as ``x.tolist()``); a parameter or a name bound to a shape name says nothing more
    assert findings(
        """
        N = "item"


        class G(nn.Module):
            def forward(self, x, which: str):
                name = "tolist"
                a = x.sum().__getattribute__(N)()
                b = getattr(x, name)()
                shape = "shape"
                return x * a * len(b) * getattr(x, shape)[0] * getattr(x, which)
        """
    ) == [(7, "PTC101"), (7, "PTC324"), (8, "PTC102")]


def test_constant_string_getattr_reaches_self_attributes_and_shadowed_getattr_does_not():
    assert findings(
        """
        class Inner(nn.Module):
            def forward(self, x):
                return x.sum().item()


        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()

            def forward(self, x):
                return getattr(self, "inner")(x)
        """
    ) == [(3, "PTC101")]
    assert findings(
        """
        def getattr(obj, name):
            return obj


        class G(nn.Module):
            def forward(self, x):
                return getattr(x, "item")()
        """
    ) == []


def test_nfkc_equivalent_identifiers_are_the_same_names():
    assert findings(
        """
        class F(nn.Module):
            def ｆｏｒｗａｒｄ(self, x):
                return x.sum().item()
        """
    ) == [(3, "PTC101")]
    assert findings(
        """
        class H(nn.Module):
            def forward(self, ｘ):
                return x.ｉｔｅｍ()
        """
    ) == [(3, "PTC101")]
    assert findings(
        """
        class K(nn.Module):
            def forward(self, x):
                ｙ = x.tolist()
                return y
        """
    ) == [(3, "PTC102")]
    # ``self.ｉｎｎｅｒ`` is ``self.inner``: the submodule is reached through the parent's call
    src = HEADER + textwrap.dedent(
        """
        class Inner(nn.Module):
            def forward(self, x):
                return x.sum().item()


        class S(nn.Module):
            def __init__(self):
                super().__init__()
                self.ｉｎｎｅｒ = Inner()

            def forward(self, x):
                return self.inner(x)
        """
    ).lstrip("\n")
    [d] = lint_source(src, "m.py", SETTINGS).diagnostics
    assert (d.code, d.start.line - 4, d.call_chain) == ("PTC101", 3, ("S.forward", "Inner.forward"))


DYNAMO_CASES = '''
import torch
from torch import nn


def other_fn(self, x):
    return x * x.max().item()


class Alias(nn.Module):
    forward = other_fn


class MethodAlias(nn.Module):
    def _impl(self, x):
        return x.tolist()

    forward = _impl


class Getattr(nn.Module):
    def forward(self, x):
        return x * getattr(x, "item")()


class Ｗｉｄｅ(nn.Module):
    def ｆｏｒｗａｒｄ(self, ｘ):
        return x.ｓｕｍ().ｉｔｅｍ()
'''


def test_the_breaks_are_where_dynamo_breaks(tmp_path):
    """Ground truth: each module's graph break, as torch 2.13 logs it, is at the flagged line."""
    pytest.importorskip("torch")
    import importlib.util

    from pt2lint.confirm.dynamo import graph_breaks
    import torch

    path = tmp_path / "cases.py"
    path.write_text(DYNAMO_CASES, encoding="utf-8")
    flagged = sorted({d.start.line for d in lint_source(DYNAMO_CASES, str(path), SETTINGS).diagnostics})
    spec = importlib.util.spec_from_file_location("cases", path)
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    seen = set()
    for name in ("Alias", "MethodAlias", "Getattr", "Wide"):
        breaks = graph_breaks(getattr(cases, name)(), (torch.ones(1),))
        assert breaks, name
        seen |= {b.lineno for b in breaks if b.filename == str(path)}
    assert sorted(seen) == flagged
