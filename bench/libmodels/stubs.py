"""Import stand-ins for packages that some libraries import but never use in
a forward pass, and that are not installed (torchvision and torchaudio would
pull another torch build; datasets / tokenizers / sentencepiece / regex are
only used by torchtune's data and tokenizer modules).

``install(roots)`` adds a finder at the end of ``sys.meta_path``: an import of
one of ``roots`` (or a submodule) that no installed package satisfies gets an
empty module whose every attribute is a class that raises when used.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        modname = self.__name__

        def _fail(*args, **kwargs):
            raise RuntimeError(f"stub: {modname}.{name} is not installed")

        return type(name, (), {"__init__": _fail, "__module__": modname, "__call__": _fail})


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots) -> None:
        self.roots = set(roots)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".", 1)[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = _StubModule(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module) -> None:
        pass


def install(roots) -> None:
    sys.meta_path.append(_StubFinder(roots))
