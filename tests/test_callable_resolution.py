"""Calls whose function is resolved through Python's call protocol rather than spelled as a method call.

Ground truth (torch 2.13, ``torch._dynamo.explain`` on ``torch.randn(4)``): each module in
``BREAKS`` has a graph break at the marked line ("Unsupported Tensor.item() call with
capture_scalar_outputs=False"; for ``__call__``, "Unsupported method call"; for the context
managers, the whole frame runs eagerly: 0 graphs); each module in ``NEAR_MISSES`` compiles to
one graph with no break.
"""

from __future__ import annotations

import pytest

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())
P = "import torch\nimport torch.nn as nn\nimport functools, operator\n"
FWD = "class M(nn.Module):\n    def forward(self, x):\n"
CTX = (
    "class C:\n    def __init__(self, t):\n        self.t = t\n"
    "    def __enter__(self):\n        return {enter}\n"
    "    def __exit__(self, *a):\n        {exit}\n        return False\n"
)

#: name -> (source, 1-based line of the break)
BREAKS = {
    "type-of-tensor": (P + FWD + "        return x * type(x).item(x.sum())\n", 6),
    "methodcaller": (P + FWD + "        return x * operator.methodcaller('item')(x.sum())\n", 6),
    "dunder-call": (P + FWD + "        return x * x.sum().item.__call__()\n", 6),
    "partial-of-unbound": (P + FWD + "        f = functools.partial(torch.Tensor.item)\n        return x * f(x.sum())\n", 7),
    "lambda-called": (P + FWD + "        g = lambda t: t.sum().item()\n        return x * g(x)\n", 6),
    "staticmethod-lambda-forward": (P + "class M(nn.Module):\n    forward = staticmethod(lambda x: x * x.sum().item())\n", 5),
    "lambda-forward": (P + "class M(nn.Module):\n    forward = lambda self, x: x * x.sum().item()\n", 5),
    "context-enter": (P + CTX.format(enter="self.t.sum().item()", exit="pass") + FWD + "        with C(x) as v:\n            return x * v\n", 8),
    "context-exit": (P + CTX.format(enter="self", exit="self.t.sum().item()") + FWD + "        with C(x):\n            y = x * 2\n        return y\n", 10),
    # a bound method looked up, kept, and called later: Python calls it on its tensor
    "bound-method-local": (P + FWD + "        m = x.sum().item\n        return x * m()\n", 7),
    "bound-method-in-tuple": (P + FWD + "        fs = (x.sum().item,)\n        return x * fs[0]()\n", 7),
    "attrgetter-then-call": (P + FWD + "        return x * operator.attrgetter('item')(x.sum())()\n", 6),
    "getattr-folded-name": (P + FWD + "        return x * getattr(x.sum(), 'it' + 'em')()\n", 6),
    "bound-method-in-dict": (P + FWD + "        fs = {'a': x.sum().item}\n        return x * fs['a']()\n", 7),
    # the attribute protocol called by hand (Dynamo: "torch.* op returned non-Tensor", or for
    # ``object.__getattribute__``, "Unsupported method call")
    "dunder-getattribute": (P + FWD + "        return x * x.sum().__getattribute__('item')()\n", 6),
    "getattr-of-getattribute": (P + FWD + "        return x * getattr(x.sum(), '__getattribute__')('item')()\n", 6),
    "object-getattribute": (P + FWD + "        return x * object.__getattribute__(x.sum(), 'item')()\n", 6),
    "partial-binding-the-tensor": (P + FWD + "        return x * functools.partial(torch.Tensor.item, x.sum())()\n", 6),
    # a starred tuple or list of known elements passes its first element as the tensor
    "unbound-starred-tuple": (P + FWD + "        a = (x.sum(),)\n        return x * torch.Tensor.item(*a)\n", 7),
    "unbound-starred-list-inline": (P + FWD + "        return x * torch.Tensor.item(*[x.sum()])\n", 6),
    "unbound-starred-after-empty": (P + FWD + "        a, b = (x.sum(),), ()\n        return x * torch.Tensor.item(*b, *a)\n", 7),
}

#: name -> (source, line): a conversion method called by name is the builtin's cast (PTC103;
#: Dynamo: "Unsupported Tensor.item() call with capture_scalar_outputs=False")
CASTS = {
    "dunder-int": (P + FWD + "        return x * x.sum().__int__()\n", 6),
    "dunder-float": (P + FWD + "        return x * x.sum().__float__()\n", 6),
    "dunder-index": (P + FWD + "        return x * x.long().sum().__index__()\n", 6),
    "unbound-dunder-int": (P + FWD + "        return x * torch.Tensor.__int__(x.sum())\n", 6),
}

NEAR_MISSES = {
    "type-of-tensor-add": P + FWD + "        return type(x).add(x, 1)\n",
    "methodcaller-add": P + FWD + "        return operator.methodcaller('add', 1)(x)\n",
    "partial-of-unbound-add": P + FWD + "        f = functools.partial(torch.Tensor.add, other=1)\n        return f(x)\n",
    "lambda-no-item": P + FWD + "        g = lambda t: t.sum() * 2\n        return x * g(x)\n",
    "lambda-never-called": P + FWD + "        g = lambda t: t.sum().item()\n        return x * 2\n",
    "staticmethod-lambda-no-item": P + "class M(nn.Module):\n    forward = staticmethod(lambda x: x * x.sum())\n",
    "attrgetter-add": P + FWD + "        return operator.attrgetter('add')(x)(1)\n",
    "attrgetter-shape": P + FWD + "        return x * operator.attrgetter('shape')(x)[0]\n",
    "getattr-folded-name-add": P + FWD + "        return getattr(x, 'a' + 'dd')(1)\n",
    "bound-method-add": P + FWD + "        m = x.add\n        return m(1)\n",
    "bound-method-never-called": P + FWD + "        m = x.sum().item\n        return x * 2\n",
    "context-no-item": P + CTX.format(enter="self.t.sum()", exit="pass") + FWD + "        with C(x) as v:\n            return x * v\n",
    # ``t.__getattribute__("shape")`` is ``t.shape`` and ``t.__len__()`` is ``len(t)``: sizes, so
    # the branches are on sizes (Dynamo: one graph)
    "getattribute-shape": P + FWD + "        if x.__getattribute__('shape')[0] > 2:\n            return x\n        return x - 1\n",
    "partial-binding-the-tensor-add": P + FWD + "        return functools.partial(torch.Tensor.add, x)(1)\n",
    "unbound-starred-add": P + FWD + "        a = (x, 1)\n        return torch.Tensor.add(*a)\n",
    # ``*a`` of elements the analysis does not know: nothing says its first one is a tensor
    "unbound-starred-unknown": P + "from helpers import pack\n" + FWD + "        return x * torch.Tensor.item(*pack(x))\n",
    "dunder-len": P + FWD + "        if x.__len__() > 2:\n            return x\n        return x - 1\n",
    "getattribute-item-of-object": P + "class O:\n    def item(self):\n        return 3\n" + FWD + "        return x * O().__getattribute__('item')()\n",
    "dunder-float-of-object": P + "class O:\n    def __float__(self):\n        return 3.0\n" + FWD + "        return x * O().__float__()\n",
}


def graph_breaks(src: str):
    return [(d.start.line, d.code) for d in lint_source(src, "m.py", SETTINGS).diagnostics if d.code.startswith("PTC1")]


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_the_break_is_found_at_its_line(name):
    src, line = BREAKS[name]
    assert graph_breaks(src) == [(line, "PTC101")]


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_the_near_miss_is_clean(name):
    assert graph_breaks(NEAR_MISSES[name]) == []


@pytest.mark.parametrize("name", sorted(CASTS))
def test_a_conversion_method_called_by_name_is_the_cast(name):
    src, line = CASTS[name]
    assert graph_breaks(src) == [(line, "PTC103")]


def test_a_decorator_is_applied_once_however_often_the_function_is_called(monkeypatch):
    """Python runs a decorator once, at the ``def``; every call goes to the wrapper it made.  The
    analysis works the wrapper out once per function too (a long ``@auto_docstring``-style
    decorator was interpreted again at each call), and still reports what each call reaches."""
    from pt2lint.analysis import interp

    calls = []
    real = interp.Interpreter._decorated

    def counting(self, fn):
        calls.append(fn.name)
        return real(self, fn)

    monkeypatch.setattr(interp.Interpreter, "_decorated", counting)
    src = (
        P
        + "def logged(fn):\n"
        "    doc = (fn.__doc__ or '').strip().upper()\n"
        "    fn.__doc__ = doc\n"
        "    @functools.wraps(fn)\n"
        "    def wrapper(*args, **kwargs):\n"
        "        print('calling')\n"  # line 9: a break in every call's wrapper
        "        return fn(*args, **kwargs)\n"
        "    return wrapper\n\n"
        "@logged\n"
        "def scale(t, k):\n"
        "    return t * k\n\n"
        + FWD
        + "        a = scale(x, 2)\n        b = scale(a, 3.0)\n        return scale(b, x.sum())\n"
    )
    found = sorted({(d.start.line, d.code) for d in lint_source(src, "m.py", SETTINGS).diagnostics})
    assert (9, "PTC301") in found, found
    assert calls == ["scale"], calls


def _decorator_runs(monkeypatch, src):
    """``(findings, runs)``: the ``(line, code)`` findings of ``src`` and how many times a
    decorator body was interpreted."""
    from pt2lint.analysis import interp

    runs = []
    real = interp.Interpreter._returned_callable

    def counting(self, deco, *rest):
        runs.append(deco.name)
        return real(self, deco, *rest)

    monkeypatch.setattr(interp.Interpreter, "_returned_callable", counting)
    found = sorted({(d.start.line, d.code) for d in lint_source(src, "m.py", SETTINGS).diagnostics})
    return found, runs


def test_a_decorator_that_returns_its_argument_is_run_once_for_all_functions(monkeypatch):
    src = (
        P
        + "def documented(fn):\n"
        "    fn.__doc__ = (fn.__doc__ or '').strip() + ' (documented)'\n"
        "    return fn\n\n"
        "@documented\n"
        "def a(t):\n"
        "    return t.sum().item()\n\n"  # line 10
        "@documented\n"
        "def b(t):\n"
        "    return t.max().item()\n\n"  # line 14
        + FWD
        + "        return x * a(x) * b(x)\n"
    )
    found, runs = _decorator_runs(monkeypatch, src)
    assert (10, "PTC101") in found and (14, "PTC101") in found, found
    assert runs == ["documented"], runs


def test_a_decorator_that_may_wrap_is_run_for_each_function(monkeypatch):
    """Near miss: a decorator that returns a wrapper on some path is not taken as the identity for
    the next function, whose calls still go through (and report) the wrapper."""
    src = (
        P
        + "import sys\n"
        "def traced(fn):\n"
        "    if sys.argv[1:]:\n"  # a run-time fact (an unset environment variable would be known)
        "        def wrapper(*args):\n"
        "            print('call')\n"  # line 8
        "            return fn(*args)\n"
        "        return wrapper\n"
        "    return fn\n\n"
        "@traced\n"
        "def a(t):\n"
        "    return t * 2\n\n"
        "@traced\n"
        "def b(t):\n"
        "    return t * 3\n\n"
        + FWD
        + "        return a(x) + b(x)\n"
    )
    found, runs = _decorator_runs(monkeypatch, src)
    assert runs.count("traced") == 2, runs
    assert (8, "PTC301") in found, found


def test_a_method_or_a_submodule_chosen_by_a_flag_is_followed_either_way():
    # ``trunk = self.checkpointed if self.use_ckpt else self.seq; trunk(x)``: Dynamo breaks inside
    # the method (``checkpoint_sequential`` is skipped, GB0007; measured on torch 2.13 with the
    # flag on); the analysis follows both the method and the submodule
    src = (
        "import torch\nfrom torch import nn\nfrom torch.utils.checkpoint import checkpoint_sequential\n\n"
        "class M(nn.Module):\n"
        "    def __init__(self, use_ckpt=True):\n"
        "        super().__init__()\n"
        "        self.seq = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))\n"
        "        self.use_ckpt = use_ckpt\n"
        "    def checkpointed(self, x):\n"
        "        return checkpoint_sequential(self.seq, 2, x, use_reentrant=False)\n"
        "    def forward(self, x):\n"
        "        trunk = self.checkpointed if self.use_ckpt else self.seq\n"
        "        return trunk(x)\n"
    )
    got = [(d.start.line, d.code) for d in lint_source(src, "m.py", SETTINGS).diagnostics]
    assert got == [(11, "PTC307")]
    clean = src.replace("return checkpoint_sequential(self.seq, 2, x, use_reentrant=False)", "return self.seq(x) * 2")
    assert [d.code for d in lint_source(clean, "m.py", SETTINGS).diagnostics] == []


def test_functions_given_to_map_and_filter_are_followed():
    # measured on torch 2.13: each ``.item()`` below breaks where it is (Dynamo inlines the calls
    # the builtin makes); ``map(lambda t: t * 2, ...)`` traces
    src = (
        "import torch\nfrom torch import nn\n\n"
        "def scale(t):\n"
        "    return t * t.sum().item()\n\n"
        "class A(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.stack(list(map(scale, x.unbind(0))))\n\n"
        "class B(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.stack(list(map(lambda t: t * t.max().item(), x.unbind(0))))\n\n"
        "class E(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.stack(tuple(filter(lambda t: t.sum().item() > 0, x.unbind(0))))\n\n"
        "class Clean(nn.Module):\n"
        "    def forward(self, x):\n"
        "        q, k = map(lambda t: t * 2, (x, x))\n"
        "        return q + k\n"
    )
    got = sorted((d.start.line, d.code) for d in lint_source(src, "m.py", SETTINGS).diagnostics)
    assert got == [(5, "PTC101"), (13, "PTC101"), (17, "PTC101")]


def test_a_default_factory_lambda_is_called_not_kept():
    # ``default(val, lambda: nn.Linear(...))`` with ``d() if not isinstance(d, Module) and
    # callable(d) else d``: a lambda is callable and no Module, so the attribute is the layer the
    # lambda builds in ``__init__`` (torch 2.13: one graph, no break), not the lambda run in forward
    src = (
        "import torch\nfrom torch import nn\nfrom torch.nn import Module\n\n"
        "def default(val, d):\n"
        "    if val is not None:\n"
        "        return val\n"
        "    return d() if not isinstance(d, Module) and callable(d) else d\n\n"
        "class W(nn.Module):\n"
        "    def __init__(self, dim, project_in=None, has=True):\n"
        "        super().__init__()\n"
        "        self.project_in = default(project_in, lambda: nn.Linear(dim, dim) if has else nn.Identity())\n\n"
        "    def forward(self, x):\n"
        "        return self.project_in(x)\n"
    )
    assert [d.code for d in lint_source(src, "m.py", SETTINGS).diagnostics] == []


def test_a_method_named_by_a_computed_string_is_one_of_those_its_literal_parts_fit():
    # pytorch-metric-learning's reducers: ``getattr(self, "{}_reduction".format(kind))(losses)``;
    # torch 2.13 (kind "element"): the mask index breaks (GB0036), then the ``if`` (GB0170)
    src = (
        "import torch\nfrom torch import nn\n\n"
        "class M(nn.Module):\n"
        "    def __init__(self, kind='element'):\n"
        "        super().__init__()\n"
        "        self.kind = kind\n"
        "    def forward(self, x):\n"
        "        return getattr(self, '{}_reduction'.format(self.kind))(x.relu())\n"
        "    def element_reduction(self, losses):\n"
        "        losses = losses[losses > 0.1]\n"
        "        out = losses.sum() / 3\n"
        "        if torch.isnan(out):\n"
        "            out = out * 0\n"
        "        return out\n"
        "    def mean_reduction(self, losses):\n"
        "        return losses.mean()\n"
        "    def helper(self, losses):\n"
        "        return losses.item()\n"
    )
    got = sorted((d.start.line, d.code) for d in lint_source(src, "m.py", SETTINGS).diagnostics)
    assert got == [(11, "PTC201"), (13, "PTC104")]
    fstring = src.replace("'{}_reduction'.format(self.kind)", "f'{self.kind}_reduction'")
    assert sorted((d.start.line, d.code) for d in lint_source(fstring, "m.py", SETTINGS).diagnostics) == got
    plain = src.replace("'{}_reduction'.format(self.kind)", "self.kind")  # no literal part: not followed
    assert [d.code for d in lint_source(plain, "m.py", SETTINGS).diagnostics] == []
