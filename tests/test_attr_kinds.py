"""Kinds of module state: attributes set on ``self`` anywhere in a class, attribute objects
typed by their constructor's annotations, and TorchScript-only decorators.

Each test lints a small package the way the CLI does and names the (file, line, code)
triples that must appear, with the near miss that must not.  The Dynamo facts they rely
on (torch 2.13) are stated at each test.
"""

from __future__ import annotations

from test_project_analysis import PYPROJECT, found, lint_tree, write

KVCACHE = """
    import torch
    from torch import nn

    class KVCache(nn.Module):
        def __init__(self, n: int) -> None:
            super().__init__()
            self.register_buffer("cache_pos", torch.arange(0, n), persistent=False)

        @property
        def size(self) -> int:
            return self.cache_pos[0].item()

        @property
        def capacity(self) -> int:
            return self.cache_pos.shape[0]
    """


def test_attribute_object_from_an_annotated_constructor_parameter_is_followed(tmp_path):
    # ``self.attn.kv_cache.size``: ``attn`` and ``kv_cache`` come in as (keyword-only)
    # constructor arguments annotated with the project's classes; the property reads a
    # registered buffer with ``.item()`` (GB0124 on torch 2.13).
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "from pkg.attn import Attn\nfrom pkg.kv_cache import KVCache\n",
        "pkg/kv_cache.py": KVCACHE,
        "pkg/attn.py": """
            from typing import Optional
            from torch import nn
            from pkg.kv_cache import KVCache

            class Attn(nn.Module):
                def __init__(self, *, dim: int, kv_cache: Optional[KVCache] = None) -> None:
                    super().__init__()
                    self.kv_cache = kv_cache
                    self.proj = nn.Linear(dim, dim)

                def forward(self, x):
                    return self.proj(x)
            """,
        "pkg/layer.py": """
            from torch import nn
            from pkg import Attn

            class Layer(nn.Module):
                def __init__(self, attn: Attn, mlp: nn.Module) -> None:
                    super().__init__()
                    self.attn = attn
                    self.mlp = mlp

                def forward(self, x):
                    if self.attn.kv_cache.size == 0:
                        return x
                    return self.attn(x)

            class Near(nn.Module):
                def __init__(self, attn: Attn) -> None:
                    super().__init__()
                    self.attn = attn

                def forward(self, x):
                    # a shape read through the same object: a guard, no break
                    if self.attn.kv_cache.capacity == 0:
                        return x
                    return self.attn(x)
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/layer.py"])) == [("pkg/kv_cache.py", 11, "PTC101")]


def test_unannotated_or_non_class_constructor_parameter_stays_unknown(tmp_path):
    # near miss: nothing says what ``cache`` is, and ``n: int`` names no class of the project
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/kv_cache.py": KVCACHE,
        "pkg/layer.py": """
            from torch import nn

            class Layer(nn.Module):
                def __init__(self, cache, n: int) -> None:
                    super().__init__()
                    self.cache = cache
                    self.n = n

                def forward(self, x):
                    if self.cache.size == 0 or self.n.size == 0:
                        return x
                    return x + 1
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/layer.py"])) == []


def test_attribute_object_built_in_a_setup_method_of_another_module(tmp_path):
    # ``self.kv_cache = KVCache(...)`` in a ``setup_cache`` method (not the constructor) of
    # a class defined in another module than the compiled one: the attribute is a KVCache.
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/kv_cache.py": KVCACHE,
        "pkg/attn.py": """
            from torch import nn
            from pkg.kv_cache import KVCache

            class Attn(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.kv_cache = None
                    self.proj = nn.Linear(dim, dim)

                def setup_cache(self, n):
                    self.kv_cache = KVCache(n)

                def forward(self, x):
                    if self.kv_cache is not None:
                        x = x[:, : self.kv_cache.size]
                    return self.proj(x)
            """,
        "pkg/model.py": """
            from torch import nn
            from pkg.attn import Attn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.attn = Attn(8)

                def forward(self, x):
                    return self.attn(x)
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/kv_cache.py", 11, "PTC101")]


def test_torchscript_ignore_and_unused_bodies_are_traced(tmp_path):
    # Dynamo (torch 2.13) traces the body of a ``torch.jit.ignore``/``torch.jit.unused``
    # method like any other: ``if self.flag:`` on a registered buffer inside one is a
    # data-dependent branch (measured: 2 graphs, 1 break, for both decorators).  A body with
    # no break stays silent.
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/model.py": """
            import torch
            from torch import nn, tensor

            class Codebook(nn.Module):
                def __init__(self, kmeans_init=False):
                    super().__init__()
                    self.register_buffer("initted", tensor(not kmeans_init))

                @torch.jit.ignore
                def init_(self, x):
                    if self.initted:
                        return
                    self.initted.data.copy_(x[0] > 0)

                @torch.jit.unused
                def other_(self, x):
                    if self.initted:
                        return

                @torch.jit.ignore
                def plain_(self, x):
                    return (x * 2).sin()

                def forward(self, x):
                    self.init_(x)
                    self.other_(x)
                    return self.plain_(x)
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [
        ("pkg/model.py", 11, "PTC104"),
        ("pkg/model.py", 17, "PTC104"),
    ]


GPK_MODULE = """
    from torch import nn

    class Module(nn.Module):
        def __call__(self, *inputs, **kwargs):
            outputs = self.forward(*inputs, **kwargs)
            if isinstance(outputs, list):
                return [o for o in outputs]
            return outputs
    """


def test_module_call_override_runs_in_the_region_and_super_call_reaches_forward(tmp_path):
    # ``torch.compile(module)`` compiles ``module.__call__`` (torch 2.13 OptimizedModule), and
    # ``self.strategy(x)`` runs ``Strategy.__call__``: the ``.item()`` reads of registered
    # buffers there are GB0124 breaks; ``super().__call__`` of a project base without one
    # is ``nn.Module.__call__``, which runs ``forward``.
    write(tmp_path, {**PYPROJECT,
        "gpk/__init__.py": "",
        "gpk/module.py": GPK_MODULE,
        "gpk/strategy.py": """
            import torch
            from gpk.module import Module

            class _Strategy(Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("initialized", torch.tensor(0))

                def forward(self, x):
                    print(x)
                    return x * 2

                def __call__(self, x, prior: bool = False, **kwargs):
                    if not self.initialized.item():
                        self.initialized.fill_(1)
                    return super().__call__(x, **kwargs)

            class Strategy(_Strategy):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("updated", torch.tensor(True))

                def __call__(self, x, prior: bool = False, **kwargs):
                    if not self.updated.item() and not prior:
                        self.updated.fill_(True)
                    return super().__call__(x, prior=prior, **kwargs)
            """,
        "gpk/model.py": """
            from gpk.module import Module
            from gpk.strategy import Strategy

            class GP(Module):
                def __init__(self, strategy: Strategy):
                    super().__init__()
                    self.strategy = strategy

                def __call__(self, inputs, prior: bool = False, **kwargs):
                    if inputs is not None and inputs.dim() == 1:
                        inputs = inputs.unsqueeze(-1)
                    return self.strategy(inputs, prior=prior, **kwargs)
            """,
    })
    assert found(lint_tree(tmp_path, ["gpk/model.py"])) == [
        ("gpk/strategy.py", 10, "PTC301"),
        ("gpk/strategy.py", 14, "PTC101"),
        ("gpk/strategy.py", 24, "PTC101"),
    ]


def test_module_without_call_override_still_runs_forward(tmp_path):
    # near miss: a plain module's ``__call__`` is nn.Module's; the ``.item()`` in a helper
    # that nothing calls is not in the region
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/model.py": """
            import torch
            from torch import nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("step", torch.tensor(0))

                def report(self):
                    return self.step.item()

                def forward(self, x):
                    return super().__call__ if False else x + 1
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == []


def test_requires_grad_on_module_state_is_not_a_steady_break(tmp_path):
    # torch 2.13: ``requires_grad_()`` on a buffer/parameter breaks on the first compiled
    # call only (the flag stays set; the guard recompiles the frame into one graph), while
    # on a forward input or on an intermediate that is returned it breaks (GB0125 /
    # "requires_grad_() intermediate leaked as output").
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/model.py": """
            import torch
            from torch import nn

            class Buf(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("zero", torch.tensor(0.0), persistent=False)
                    self.fc = nn.Linear(4, 4)

                def forward(self, x):
                    loss = self.zero
                    if self.training:
                        loss.requires_grad_()
                    self.fc.weight.requires_grad_(False)
                    loss = loss + self.fc(x).sum()
                    return loss

            class Inp(nn.Module):
                def forward(self, x):
                    x.requires_grad_()
                    y = x * 2
                    y.requires_grad_()
                    return y

            class Mixed(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("zero", torch.tensor(0.0))

                def forward(self, x):
                    loss = self.zero
                    if x.shape[0] > 2:
                        loss = x.sum()
                    loss.requires_grad_()
                    return loss

            class Loop(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("zero", torch.tensor(0.0))

                def forward(self, x):
                    loss = self.zero
                    for _ in range(2):
                        loss.requires_grad_()
                        loss = x * 2
                    return loss
            """,
    })
    got = [f for f in found(lint_tree(tmp_path, ["pkg/model.py"])) if f[2] == "PTC308"]
    assert got == [
        ("pkg/model.py", 20, "PTC308"), ("pkg/model.py", 22, "PTC308"), ("pkg/model.py", 34, "PTC308"),
        ("pkg/model.py", 45, "PTC308"),
    ]


def test_module_to_returns_the_module_so_its_forward_is_followed(tmp_path):
    # ``Resample(...).to(x)(x)``: nn.Module.to/cuda/float/eval/... return the module
    # (torch/nn/modules/module.py), so the call runs ``Resample.forward``, whose tensor slice
    # bound is read with ``__index__`` (GB0124 on torch 2.13).  Near miss: ``.to()`` of a
    # class of the project that is not a module (and defines no ``to``) says nothing, so
    # ``Box().to(x)(x)`` is not followed into ``Box.__call__``.
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/model.py": """
            from typing import Optional
            from torch import nn

            class Resample(nn.Module):
                def forward(self, x, bound: Optional[int] = None):
                    if bound is None:
                        return x
                    return x[..., :bound]

            class Box:
                def __call__(self, x):
                    return x.sum().item()

            class Net(nn.Module):
                def forward(self, x):
                    y = Resample().to(x).eval()(x, x.argmax())
                    return y + Box().to(x)(x)
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/model.py", 8, "PTC103")]


def test_item_on_a_value_of_unknown_kind_is_not_reported(tmp_path):
    # torch 2.13: ``.item()`` of a NumPy scalar or one-element array made in the region is
    # traced without a break (measured: ``np.float64(2.0).item()`` and
    # ``np.array([2.0]).item()`` gave one graph, no break), so ``.item()`` is a break only
    # on a value proven to be a tensor; the registered buffer next to it is one.
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/model.py": """
            import torch
            from torch import nn

            class Net(nn.Module):
                def __init__(self, scale):
                    super().__init__()
                    self.scale = scale
                    self.register_buffer("steps", torch.zeros(()))

                def forward(self, x):
                    return x * self.scale.item() + self.steps.item()
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/model.py", 11, "PTC101")]
