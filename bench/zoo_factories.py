"""Model factories for ``pt2lint fix --verify`` built from the tiny-config zoo of ``bench/realmodels``.

Library classes take a config, so ``--verify`` cannot build them by itself ("no model
factory").  ``bench/realmodels/models.py`` already builds 132 models of transformers, timm
and diffusers from small configs with random weights (nothing is downloaded); this module
exposes each of them as a ``[tool.pt2lint.confirm]`` per-class factory and inputs function:

    model(name)    -> the zoo model ``name`` (an ``nn.Module``, built once per process)
    inputs(name)   -> the inputs of its train call (the eval call's with the labels that make
                      the loss code run too): a dict of keyword arguments, or a tuple of
                      positional ones (positional arguments given with keywords are bound
                      to their parameter names, so the result is one dict)
    index(names)   -> ``{name: [file, class name]}``: the file (absolute path) that defines
                      each model's top-level class, and the class; models that fail to build
                      are left out (their error goes to stderr)

``bench/fix_verify.py --zoo`` writes a module of zero-argument wrappers around these
(the confirm config names ``path.py:function``) and one per-class entry per model.
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

HERE = Path(__file__).resolve().parent
ZOO = HERE / "realmodels" / "models.py"

_SPECS: Dict[str, Any] = {}


def _zoo() -> Any:
    if str(HERE / "realmodels") not in sys.path:
        sys.path.insert(0, str(HERE / "realmodels"))
    from collect import OFFLINE_ENV, load_zoo  # bench/realmodels/collect.py

    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    return load_zoo(ZOO)


def _spec(name: str) -> Any:
    if name not in _SPECS:
        zoo = _zoo()
        zoo.prepare([name])
        _SPECS[name] = zoo.MODELS[name][1]()
    return _SPECS[name]


def model(name: str) -> Any:
    """The zoo model ``name`` in eval mode (built once per process; random weights)."""
    return _spec(name).model.eval()


def inputs(name: str) -> Any:
    """The train-call inputs of zoo model ``name`` (labels included): one kwargs dict, or a tuple
    when there are no keyword arguments.

    Raises:
        TypeError: positional and keyword arguments that do not bind to the model's ``forward``.
    """
    spec = _spec(name)
    kwargs = {**spec.kwargs, **spec.train_kwargs}
    if not kwargs:
        return tuple(spec.args)
    if not spec.args:
        return kwargs
    bound = inspect.signature(spec.model.forward).bind(*spec.args, **kwargs)
    return dict(bound.arguments)


def index(names: Sequence[str]) -> Dict[str, List[str]]:
    """``{name: [absolute file of the model's class, class name]}`` for the zoo models that build."""
    out: Dict[str, List[str]] = {}
    for name in names:
        try:
            cls = type(_spec(name).model)
            out[name] = [os.path.abspath(inspect.getfile(cls)), cls.__qualname__]
        except Exception as exc:  # a model that does not build here is left out
            print(f"{name}: not built: {type(exc).__name__}: {exc}", file=sys.stderr)
        _SPECS.pop(name, None)
    return out


def names(libraries: Sequence[str]) -> List[str]:
    """The zoo's model names whose library is one of ``libraries``."""
    return [n for n, (lib, _b) in _zoo().MODELS.items() if lib in libraries]


if __name__ == "__main__":  # python bench/zoo_factories.py transformers diffusers -> the index as JSON
    import json

    print(json.dumps(index(names(sys.argv[1:] or ["transformers", "timm", "diffusers"])), indent=1, sort_keys=True))
