"""PTC316: module hook registration inside forward (measured break: GB0467 on torch 2.13,
see rules/PTC316-module-hook-registration.toml, run through Dynamo by test_spec_evidence)."""

from __future__ import annotations

import textwrap

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def lines(code: str, rule: str = "PTC316"):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    return sorted(d.start.line for d in result.diagnostics if d.code == rule)


def test_hooks_on_submodules_looked_up_by_name_in_forward():
    code = """
    import torch
    from torch import nn

    class Taps(nn.Module):
        def __init__(self, names=("a", "b")):
            super().__init__()
            self.net = nn.Module()
            self.net.a = nn.Linear(3, 3)
            self.net.b = nn.Linear(3, 3)
            self.names = list(names)
            self.out = {}

        def forward(self, x):
            hs = [getattr(self.net, n).register_forward_hook(lambda m, i, o: None) for n in self.names]
            self.net.a.register_full_backward_hook(lambda m, gi, go: None)
            return self.net.b(self.net.a(x)), hs
    """
    assert lines(code) == [14, 15]


def test_hooks_in_init_and_tensor_grad_hooks_are_not_flagged():
    code = """
    import torch
    from torch import nn

    class Taps(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.fc.register_forward_hook(lambda m, i, o: None)

        def forward(self, x, scale: float = 1.0):
            y = self.fc(x)
            if y.requires_grad:
                y.register_hook(lambda g: g * scale)
            return y
    """
    assert lines(code) == []


def test_a_local_class_with_the_same_method_name_is_not_a_module():
    code = """
    import torch
    from torch import nn

    class Book:
        def __init__(self):
            self.items = []
        def register_forward_hook(self, name):
            self.items.append(name)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.book = Book()
        def forward(self, x):
            self.book.register_forward_hook("x")
            return x * 2
    """
    assert lines(code) == []


def test_a_hook_registered_by_a_function_given_to_module_apply():
    # torch 2.13: nn.Module.apply runs the function on each submodule inside the region, and the
    # first hook it registers breaks there (GB0467), the second is never reached by Dynamo (apply
    # calls it in a loop); a visitor that only reads the modules does not break
    code = """
    import torch
    from torch import nn
    
    
    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.key = nn.Linear(4, 4)
    
        def forward(self, x):
            return self.key(x)
    
    
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(Attn(), Attn())
    
        def install(self):
            cache = {}
            hooks = []
    
            def save(module, _, output):
                cache[module] = output
                return output
    
            def install_hooks(layer: nn.Module):
                if isinstance(layer, Attn):
                    hooks.append(layer.key.register_forward_hook(save))
                    hooks.append(layer.key.register_forward_pre_hook(lambda m, a: None))
    
            self.blocks.apply(install_hooks)
            return cache, hooks
    
        def forward(self, x):
            cache, hooks = self.install()
            return self.blocks(x)
    
    
    class Near(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(Attn(), Attn())
    
        def forward(self, x):
            seen = []
    
            def visit(layer: nn.Module):
                if isinstance(layer, Attn):
                    seen.append(layer.training)
    
            self.blocks.apply(visit)
            return self.blocks(x) * len(seen)
    """
    assert lines(code) == [29]


def test_handle_uses_inside_forward_and_the_near_misses():
    # PTC317 (GB0013 on torch 2.13, see rules/PTC317-hook-handle-use.toml): a handle read
    # through an attribute, a comparison or a method call breaks where it is used; handles of
    # tensor gradient hooks (removing one in forward is an internal Dynamo error on torch 2.13,
    # "idx must not be None for hook removal", not a graph break), handles that may not exist
    # (None until a method forward does not call sets them) stay quiet
    code = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)
            self.h = self.a.register_forward_hook(lambda m, i, o: None)
            self.g = torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: None)
            self.maybe = None

        def attach(self):
            self.maybe = self.a.register_forward_hook(lambda m, i, o: None)

        def forward(self, x):
            y = self.a(x)
            n = self.h.id
            self.g.remove()
            if self.maybe is not None:
                y = y * 2
            if y.requires_grad:
                t = y.register_hook(lambda g: g)
                t.remove()
            return y * n
    """
    assert lines(code, "PTC317") == [17, 18]


_PRE_HOOKS = '''\
import torch
from torch import nn


def center_(module, args):
    args[0].sub_(args[0].mean())


def log_shape(module, args):
    return None


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.lin.register_forward_pre_hook(self._tripwire)
        self.register_forward_pre_hook(center_)
        self.register_forward_pre_hook(log_shape)

    def _tripwire(self, module, args):
        if torch.isnan(args[0]).any():
            raise FloatingPointError("nan")

    def forward(self, x):
        return self.lin(x)
'''


def test_forward_pre_hooks_are_compiled_code_of_the_module():
    # Dynamo traces forward pre-hooks with the call (torch 2.13): the branch on the input breaks at
    # line 22, and center_ writes the input in place at line 6 (the dispatch-mode watcher sees
    # aten.sub_ on the input's storage); log_shape is clean
    from linttools import found

    assert found(_PRE_HOOKS, codes={"PTC104", "PTC401"}) == [(6, "PTC401"), (22, "PTC104")]


def test_forward_pre_hook_break_matches_dynamo():
    pytest = __import__("pytest")
    pytest.importorskip("torch")
    from linttools import dynamo_break_lines

    lines = dynamo_break_lines(_PRE_HOOKS, 'torch.compile(M(), backend="eager")(torch.randn(2, 4))')
    assert lines == [22]


def test_forward_pre_hook_mutation_matches_the_dispatch_watcher(tmp_path):
    pytest = __import__("pytest")
    pytest.importorskip("torch")
    from linttools import watched_mutations

    source = _PRE_HOOKS.replace("if torch.isnan(args[0]).any():", "if False:")
    writes = watched_mutations(tmp_path, "prehooks", source, lambda torch, mod: (torch.randn(2, 4),))
    assert {(m.lineno, m.op) for m in writes} == {(6, "aten.sub_.Tensor")}
