"""Example inputs for confirm mode: normalise what an inputs function returns, synthesise
inputs for a module that has none, and make the differently-shaped second call.

Runs in the child process (imports torch inside the functions).

Synthesis never guesses silently: it succeeds only when ``forward`` needs at
most one argument and that argument's shape follows from its annotation
(``Annotated[Tensor, (2, 8)]``, or a jaxtyping annotation with numeric dims) or
from the module's first layer (the first submodule, in registration order,
that has parameters: ``Linear``, ``ConvNd``, ``Embedding``, norms, RNNs,
``MultiheadAttention``). Every synthesised input carries a description of
where its shape came from, which the report shows.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any, Dict, Optional, Tuple


class NoExampleInputs(Exception):
    """No unambiguous example inputs can be synthesised; the message says why."""


def normalize_inputs(value: Any) -> Tuple[tuple, Dict[str, Any]]:
    """``(args, kwargs)`` from an inputs function's return value.

    A tuple or list is the positional arguments, a dict the keyword arguments,
    anything else (one tensor) the single positional argument.
    """
    if isinstance(value, tuple):
        return value, {}
    if isinstance(value, list):
        return tuple(value), {}
    if isinstance(value, dict):
        return (), dict(value)
    return (value,), {}


def map_tensors(value: Any, fn, depth: int = 0) -> Any:
    """Apply ``fn`` to every tensor in nested tuples/lists/dicts (other values unchanged)."""
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if depth >= 6:
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple
        return type(value)(*(map_tensors(v, fn, depth + 1) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(map_tensors(v, fn, depth + 1) for v in value)
    if isinstance(value, dict):
        return type(value)((k, map_tensors(v, fn, depth + 1)) for k, v in value.items())
    return value


def iter_tensors(value: Any, depth: int = 0):
    """Yield every tensor in nested tuples/lists/dicts."""
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 6 and isinstance(value, (tuple, list)):
        for v in value:
            yield from iter_tensors(v, depth + 1)
    elif depth < 6 and isinstance(value, dict):
        for v in value.values():
            yield from iter_tensors(v, depth + 1)


def describe(args: tuple, kwargs: Dict[str, Any]) -> str:
    """``"float32[2, 8], int64[2, 8]"``: dtypes and shapes of the tensors, ``repr`` of small other values."""
    import torch

    def one(v: Any) -> str:
        if isinstance(v, torch.Tensor):
            return f"{str(v.dtype).replace('torch.', '')}[{', '.join(str(s) for s in v.shape)}]"
        if isinstance(v, (list, tuple)):
            inner = ", ".join(one(x) for x in v[:4]) + (", ..." if len(v) > 4 else "")
            return f"[{inner}]" if isinstance(v, list) else f"({inner})"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {one(x)}" for k, x in list(v.items())[:4]) + "}"
        text = repr(v)
        return text if len(text) <= 20 else type(v).__name__
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return ", ".join(parts) if parts else "no arguments"


def with_bigger_batch(args: tuple, kwargs: Dict[str, Any]) -> Optional[Tuple[tuple, Dict[str, Any]]]:
    """The inputs with dimension 0 of the batch-sized tensors one larger, or None when there are none.

    The batch size is the most common size of dimension 0 among the input
    tensors; each tensor with that leading size gets its first row repeated at
    the end (``torch.cat([t, t[:1]])``), which keeps dtype, device and the value
    domain (indices stay in range, masks stay boolean).
    """
    import torch

    sizes: Dict[int, int] = {}
    for t in iter_tensors((args, kwargs)):
        if t.dim() >= 1 and t.shape[0] >= 1:
            sizes[t.shape[0]] = sizes.get(t.shape[0], 0) + 1
    if not sizes:
        return None
    batch = max(sizes, key=lambda s: (sizes[s], s))

    def grow(t):
        if t.dim() >= 1 and t.shape[0] == batch:
            return torch.cat([t, t[:1]], dim=0)
        return t

    return map_tensors(args, grow), map_tensors(kwargs, grow)


# ---------------------------------------------------------------------------
# synthesis

_TENSOR_NAMES = {
    "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
    "LongTensor", "IntTensor", "ShortTensor", "ByteTensor", "BoolTensor", "Parameter",
}


def _annotation_shape(annotation: Any) -> Tuple[bool, Optional[Tuple[int, ...]], str]:
    """``(is_tensor_like, shape_or_None, note)`` for a parameter annotation."""
    import torch

    if annotation is inspect.Parameter.empty:
        return True, None, ""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        is_tensor, _, _ = _annotation_shape(base)
        for m in meta:
            if isinstance(m, (tuple, list)) and m and all(isinstance(d, int) and d > 0 for d in m):
                return is_tensor, tuple(m), f"Annotated shape {tuple(m)}"
        return is_tensor, None, ""
    if origin is typing.Union:
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return _annotation_shape(options[0])
        return False, None, ""
    dims = getattr(annotation, "dim_str", None)  # jaxtyping: Float[Tensor, "2 8"]
    if isinstance(dims, str):
        parts = dims.split()
        if parts and all(p.isdigit() and int(p) > 0 for p in parts):
            return True, tuple(int(p) for p in parts), f"jaxtyping shape {dims!r}"
        return True, None, ""
    if isinstance(annotation, type) and issubclass(annotation, torch.Tensor):
        return True, None, ""
    name = getattr(annotation, "__name__", None) or str(annotation)
    if isinstance(annotation, str):
        name = annotation.rsplit(".", 1)[-1]
    return name in _TENSOR_NAMES, None, ""


def _first_layer(model) -> Optional[Tuple[str, Any]]:
    """The first submodule (registration order) that owns parameters, skipping containers."""
    for name, sub in model.named_modules():
        if sub is model:
            continue
        if any(True for _ in sub.parameters(recurse=False)):
            return name, sub
    return None


def _layer_input(name: str, layer, device, dtype) -> Tuple[Any, str]:
    """An input for ``layer`` (batch 2), and a note; raises :class:`NoExampleInputs` for unknown layers."""
    import torch
    from torch import nn

    kind = type(layer).__name__
    where = f"first layer `{name}`: {kind}"

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=dtype)

    if isinstance(layer, nn.Embedding) or isinstance(layer, nn.EmbeddingBag):
        return torch.randint(0, layer.num_embeddings, (2, 8), device=device), f"{where}({layer.num_embeddings}, ...)"
    if isinstance(layer, nn.Linear) and not isinstance(layer, nn.modules.lazy.LazyModuleMixin):
        return randn(2, layer.in_features), f"{where}(in_features={layer.in_features})"
    if isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)):
        nd = len(layer.kernel_size)
        side = max(16, max(k * d for k, d in zip(layer.kernel_size, layer.dilation)) + 1)
        return randn(2, layer.in_channels, *([side] * nd)), f"{where}(in_channels={layer.in_channels})"
    if isinstance(layer, (nn.BatchNorm1d, nn.InstanceNorm1d)):
        return randn(2, layer.num_features), f"{where}({layer.num_features})"
    if isinstance(layer, (nn.BatchNorm2d, nn.InstanceNorm2d)):
        return randn(2, layer.num_features, 8, 8), f"{where}({layer.num_features})"
    if isinstance(layer, (nn.BatchNorm3d, nn.InstanceNorm3d)):
        return randn(2, layer.num_features, 4, 4, 4), f"{where}({layer.num_features})"
    if isinstance(layer, nn.GroupNorm):
        return randn(2, layer.num_channels, 8, 8), f"{where}({layer.num_groups}, {layer.num_channels})"
    norm_types = (nn.LayerNorm,) + ((nn.RMSNorm,) if hasattr(nn, "RMSNorm") else ())
    if isinstance(layer, norm_types):
        shape = tuple(layer.normalized_shape)
        return randn(2, 8, *shape), f"{where}(normalized_shape={shape}), as [batch, tokens, ...]"
    if isinstance(layer, (nn.RNN, nn.LSTM, nn.GRU)):
        shape = (2, 5, layer.input_size) if layer.batch_first else (5, 2, layer.input_size)
        return randn(*shape), f"{where}(input_size={layer.input_size}, batch_first={layer.batch_first})"
    if isinstance(layer, nn.MultiheadAttention):
        shape = (2, 8, layer.embed_dim) if layer.batch_first else (8, 2, layer.embed_dim)
        return randn(*shape), f"{where}(embed_dim={layer.embed_dim}, batch_first={layer.batch_first})"
    raise NoExampleInputs(f"the first layer `{name}` ({kind}) does not tell the input shape")


def synthesize_inputs(model, device) -> Tuple[tuple, Dict[str, Any], str]:
    """Example ``(args, kwargs, note)`` for ``model.forward``, when they are unambiguous.

    Args:
        model: a constructed ``nn.Module``.
        device: where to create the tensors.

    Returns:
        The arguments and a note saying where their shape came from.

    Raises:
        NoExampleInputs: ``forward`` needs more than one argument, a non-tensor
            argument, or a tensor whose shape neither its annotation nor the first
            layer gives.
    """
    import torch

    forward = model.forward
    try:
        sig = inspect.signature(forward)
    except (TypeError, ValueError):
        raise NoExampleInputs("the signature of forward cannot be read") from None
    try:
        hints = typing.get_type_hints(forward, include_extras=True)
    except Exception:  # unresolvable string annotations: fall back to the raw ones
        hints = {}
    required = [
        p
        for p in sig.parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    if not required:
        return (), {}, "forward takes no required arguments"
    if len(required) > 1:
        names = ", ".join(p.name for p in required)
        raise NoExampleInputs(f"forward({names}) needs {len(required)} arguments; only a single tensor argument is synthesised")
    param = required[0]
    annotation = hints.get(param.name, param.annotation)
    is_tensor, shape, note = _annotation_shape(annotation)
    if not is_tensor:
        raise NoExampleInputs(f"argument `{param.name}` is annotated {getattr(annotation, '__name__', annotation)!s}, not a tensor")
    params = [p for p in model.parameters() if p.is_floating_point()]
    dtype = params[0].dtype if params else torch.get_default_dtype()
    if shape is not None:
        value = torch.randn(*shape, device=device, dtype=dtype)
    else:
        first = _first_layer(model)
        if first is None:
            raise NoExampleInputs("the module has no layer with parameters to take the input shape from")
        value, note = _layer_input(first[0], first[1], device, dtype)
    if param.kind is inspect.Parameter.KEYWORD_ONLY:
        return (), {param.name: value}, f"`{param.name}` from {note}"
    return (value,), {}, f"`{param.name}` from {note}"


__all__ = [
    "NoExampleInputs",
    "describe",
    "iter_tensors",
    "map_tensors",
    "normalize_inputs",
    "synthesize_inputs",
    "with_bigger_batch",
]
