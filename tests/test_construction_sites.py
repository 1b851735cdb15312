"""Constructor arguments from the module's own construction sites (``Interpreter.site_parameters``).

A submodule class whose ``__init__`` parameters are unannotated used to be analysed with those
parameters unknown: ``getattr(nn, rnn_type)(...)`` was a module of unknown class, a component
passed in had no methods to follow, and code under ``if self.verbose:`` was analysed whatever
the flag.  Where the module's own functions build the class (a parent's ``__init__``), the
arguments they pass are what the model holds, as Dynamo sees it.  Each ``Model`` below is also
compiled (eager backend, graph_breaks log) by ``test_dynamo_agrees``: the lines it breaks at are
the expected findings' lines.
"""

from __future__ import annotations

import textwrap

import pytest

from linttools import dynamo_break_lines, found

RNN_BY_NAME = """\
import torch
from torch import nn


class SingleRNN(nn.Module):
    def __init__(self, rnn_type, input_size, hidden_size):
        super().__init__()
        self.rnn = getattr(nn, rnn_type)(input_size, hidden_size, batch_first=True)

    def forward(self, x):
        out, _ = self.rnn(x)
        return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.r = SingleRNN("LSTM", 4, 8)

    def forward(self, x):
        return self.r(x)
"""

INJECTED_COMPONENT = """\
import torch
from torch import nn


class STFT(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.rand(8) + 0.5)

    def post_synthesis(self, wav):
        small = self.w.abs() < 0.6
        if small.any():
            wav = wav * 2.0
        return wav


class Decoder(nn.Module):
    def __init__(self, filterbank):
        super().__init__()
        self.filterbank = filterbank

    def forward(self, x):
        return self.filterbank.post_synthesis(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dec = Decoder(STFT())

    def forward(self, x):
        return self.dec(x)
"""

FLAG_AT_ITS_DEFAULT = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, verbose=False):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.verbose = verbose

    def forward(self, x):
        if self.verbose:
            print("block", x.shape)
        return self.lin(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block(8)
        self.b = Block(8, verbose=False)

    def forward(self, x):
        return self.b(self.a(x))
"""

FLAG_SET_AT_ONE_SITE = FLAG_AT_ITS_DEFAULT.replace("Block(8, verbose=False)", "Block(8, verbose=True)")

TYPE_TEST_ON_AN_ATTRIBUTE = """\
import torch
from torch import nn


def squash(x):
    return torch.tanh(x)


class Layer(nn.Module):
    def __init__(self, domain=2):
        super().__init__()
        self.domain = domain

    def resolved(self):
        if torch.is_tensor(self.domain):
            d = squash(self.domain)
        else:
            d = self.domain
        return d

    def forward(self, x):
        if self.resolved() == 1:
            x = x * 2
        return x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Layer(domain=2)

    def forward(self, x):
        return self.layer(x)
"""

NUMBER_BY_DEFAULT = """\
import torch
import torch.nn.functional as F
from torch import nn


def class_histogram(labels, num_classes=None):
    if num_classes is None:
        return F.one_hot(labels.flatten()).sum(0)
    return F.one_hot(labels.flatten(), num_classes).sum(0)


class Model(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.num_classes = num_classes

    def forward(self, x):
        return class_histogram((x > 0).long(), self.num_classes)
"""

NORM_PASSED_IN = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, norm=None):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.norm = norm

    def forward(self, x):
        if self.norm is None:
            x = x / x.sum().item()
        else:
            x = self.norm(x)
        return self.lin(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(8, norm=nn.LayerNorm(8))

    def forward(self, x):
        return self.block(x)
"""

# (source, findings expected, lines Dynamo breaks at when ``Model()`` is compiled)
# the flag reaches ``Block`` through ``Stage``'s own parameter: ``Stage``'s sites decide it
FLAG_FORWARDED = FLAG_AT_ITS_DEFAULT.replace(
    "class Model(nn.Module):",
    "class Stage(nn.Module):\n"
    "    def __init__(self, dim, verbose=True):\n"
    "        super().__init__()\n"
    "        self.block = Block(dim, verbose=verbose)\n\n"
    "    def forward(self, x):\n"
    "        return self.block(x)\n\n\n"
    "class Model(nn.Module):",
).replace("        self.a = Block(8)\n        self.b = Block(8, verbose=False)\n", "        self.a = Stage(8, verbose=False)\n        self.b = nn.Identity()\n")

CASES = {
    "flag forwarded through another constructor": (FLAG_FORWARDED, [], []),
    "flag forwarded, turned on at the outer site": (FLAG_FORWARDED.replace("Stage(8, verbose=False)", "Stage(8, verbose=True)"), [(13, "PTC301")], [13]),
    "flag forwarded, left at the outer default": (FLAG_FORWARDED.replace("Stage(8, verbose=False)", "Stage(8)"), [(13, "PTC301")], [13]),
    # rebound before it is passed on: not the value the sites give
    "flag rebound before it is forwarded": (
        FLAG_FORWARDED.replace("        self.block = Block(dim, verbose=verbose)", "        verbose = not verbose\n        self.block = Block(dim, verbose=verbose)"),
        [(13, "PTC301")], [13],
    ),
    "rnn class chosen by a literal name": (RNN_BY_NAME, [(11, "PTC311")], [11]),
    "component built by the parent": (INJECTED_COMPONENT, [(12, "PTC104")], [12]),
    "flag left at its default everywhere": (FLAG_AT_ITS_DEFAULT, [], []),
    # the annotation says a bool; the sites say which one
    "annotated flag left at its default everywhere": (
        FLAG_AT_ITS_DEFAULT.replace("verbose=False):", "verbose: bool = False):"), [], [],
    ),
    "annotated flag turned on at one site": (
        FLAG_AT_ITS_DEFAULT.replace("verbose=False):", "verbose: bool = False):").replace("Block(8, verbose=False)", "Block(8, verbose=True)"),
        [(13, "PTC301")], [13],
    ),
    "flag turned on at one site": (FLAG_SET_AT_ONE_SITE, [(13, "PTC301")], [13]),
    # every site passes a torch module: ``self.norm is None`` is False while tracing
    "a torch module passed at every site": (NORM_PASSED_IN, [], []),
    "no module passed at one site": (
        NORM_PASSED_IN.replace("        self.block = Block(8, norm=nn.LayerNorm(8))\n",
                               "        self.block = Block(8, norm=nn.LayerNorm(8))\n        self.plain = Block(8)\n")
        .replace("return self.block(x)", "return self.plain(self.block(x))"),
        [(13, "PTC101")], [13],
    ),
    # no site builds ``Model``: a number as the default says ``num_classes`` is not ``None``
    "a parameter defaulting to a number, never built": (NUMBER_BY_DEFAULT, [], []),
    "a parameter defaulting to None, never built": (
        NUMBER_BY_DEFAULT.replace("num_classes=4):", "num_classes=None):"), [(8, "PTC202")], [8],
    ),
    # ``torch.is_tensor(self.domain)`` with the attribute surely an int: False while tracing
    "type test on an attribute the sites make a number": (TYPE_TEST_ON_AN_ATTRIBUTE, [], []),
    "type test on an attribute the sites make a tensor": (
        TYPE_TEST_ON_AN_ATTRIBUTE.replace("Layer(domain=2)", "Layer(domain=nn.Parameter(torch.ones(())))"),
        [(22, "PTC104")],
        [22],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_site_arguments_decide(name):
    src, expected, _ = CASES[name]
    assert found(src, codes=None) == expected


def _with_parent(parent_init: str, extra: str = "") -> str:
    return FLAG_AT_ITS_DEFAULT.replace(
        '        self.a = Block(8)\n        self.b = Block(8, verbose=False)\n', textwrap.indent(parent_init, " " * 8)
    ) + extra


@pytest.mark.parametrize(
    "parent_init,extra",
    [
        # a value computed at run time: unknown, so the print is analysed
        ("self.a = Block(8, verbose=bool(len(__name__) % 2))\n", ""),
        # passed through from the parent's own parameter: unknown
        ("self.a = Block(8, verbose=self.training)\n", ""),
        # ``*args``/``**kwargs`` at a site: nothing is known
        ("kw = {'verbose': True}\nself.a = Block(8, **kw)\n", ""),
        # only a module-level demo builds it with the default: a user may build it otherwise
        ("self.a = Block(8, verbose=bool(len(__name__)))\n", "\n\nDEMO = Block(8)\n"),
    ],
)
def test_unknown_site_arguments_leave_the_flag_unknown(parent_init, extra):
    src = _with_parent(parent_init, extra)
    assert found(src) == [(13, "PTC301")]


def test_a_local_that_shadows_the_class_is_not_a_site():
    src = FLAG_AT_ITS_DEFAULT.replace(
        "        self.a = Block(8)\n",
        "        Block = lambda dim, verbose=True: nn.Identity()\n        self.a = Block(8)\n",
    ).replace("        self.b = Block(8, verbose=False)\n", "")
    # no site of the class remains: the flag is unknown, the print is analysed
    assert found(src) == [(13, "PTC301")]


def test_a_module_level_site_alone_does_not_decide():
    src = FLAG_AT_ITS_DEFAULT.replace("        self.a = Block(8)\n        self.b = Block(8, verbose=False)\n", "        self.a = nn.Identity()\n        self.b = nn.Identity()\n") + "\n\nblock = Block(8)\n"
    assert found(src) == [(13, "PTC301")]


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamo_agrees(name):
    pytest.importorskip("torch")
    src, _, breaks = CASES[name]
    shape = "(2, 5, 4)" if "SingleRNN" in src else "(2, 8)"
    assert dynamo_break_lines(src, f'torch.compile(Model().eval(), backend="eager")(torch.randn{shape})') == breaks


def test_a_cycle_of_forwarding_constructors_decides_nothing():
    # each builds the other with its own flag (under a depth test): no site outside the cycle
    # says what the flag is, so it stays unknown and the print is analysed
    src = '''\
from torch import nn


class A(nn.Module):
    def __init__(self, depth, verbose=False):
        super().__init__()
        self.verbose = verbose
        self.inner = B(depth - 1, verbose=verbose) if depth else None

    def forward(self, x):
        if self.verbose:
            print("a")
        return x if self.inner is None else self.inner(x)


class B(nn.Module):
    def __init__(self, depth, verbose=False):
        super().__init__()
        self.inner = A(depth - 1, verbose=verbose) if depth else None

    def forward(self, x):
        return x if self.inner is None else self.inner(x)
'''
    assert found(src) == [(12, "PTC301")]
