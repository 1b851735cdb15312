"""The byte filters of the search for the files that build or call a linted file's definitions
(:mod:`pt2lint.analysis.builders`): they may let through a file that does not import the
module (the parse that follows decides), but must never drop one that does."""

from __future__ import annotations

import pytest

from pt2lint.analysis.builders import _use_of, imports_of, search_root, top_level_classes, top_level_functions


@pytest.mark.parametrize("text, strength", [
    (b"from .utils import clamp\n", 2),
    (b"from pkg.utils import (\n    clamp,\n)\n", 2),
    (b"import pkg.utils as U\n", 2),
    (b"import os, pkg.utils\n", 2),
    (b"from pkg import utils\n", 2),
    (b"from . import (\n    layers,\n    utils,\n)\n", 2),
    (b"    from .utils import clamp  # inside a function\n", 2),
    (b"from pkg import (  # submodules\n    layers,\n    utils,\n)\n", 2),
    (b"from pkg import (\r\n    layers,\r\n    utils,\r\n)\r\n", 2),
    # other text is no import of the module
    (b"x = utils\n", 0),
    (b"from .myutils import a\n", 0),
    (b"from pkg import utilsx\n", 0),
    (b"# from .utils import clamp\n", 0),
])
def test_imports_of_the_module_are_recognised_and_nothing_else(tmp_path, text, strength):
    target, user = _package(tmp_path)
    assert imports_of(text, user, target) == strength


def _package(tmp_path):
    for rel in ("pkg/__init__.py", "pkg/utils.py", "pkg/myutils.py", "pkg/model.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    return {str(tmp_path / "pkg" / "utils.py"): frozenset({"clamp"})}, str(tmp_path / "pkg" / "model.py")


def test_top_level_functions_are_the_module_level_defs():
    data = b"def a(x):\n    def inner():\n        pass\nasync def b():\n    pass\nclass C:\n    def m(self):\n        pass\n"
    assert top_level_functions(data) == {"a", "b"}
    # a fallback defined where an optional import fails, a definition under a version test
    data = (b"try:\n    from fused import op\nexcept ImportError:\n    def op(x):\n        return x\n"
            b"if True:\n    class Gate:\n        def inner(self):\n            pass\n")
    assert top_level_functions(data) == {"op"} and top_level_classes(data) == {"Gate"}
    # bytes Python cannot parse: the defs at column 0
    assert top_level_functions(b"def a(:\n    pass\ndef b():\n    pass\n    def c(): pass\n") == {"a", "b"}


def test_the_search_covers_the_top_level_package(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for rel in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/layers.py", "loose.py"):
        (tmp_path / rel).write_text("")
    assert search_root(str(tmp_path / "pkg" / "sub" / "layers.py")) == str(tmp_path / "pkg")
    assert search_root(str(tmp_path / "loose.py")) == str(tmp_path)
    # a namespace package (no __init__.py): importable from anywhere in its project
    (tmp_path / "ns" / "sub").mkdir(parents=True)
    (tmp_path / "ns" / "sub" / "layers.py").write_text("")
    layers = str(tmp_path / "ns" / "sub" / "layers.py")
    assert search_root(layers) == str(tmp_path / "ns" / "sub")
    assert search_root(layers, project_root=str(tmp_path)) == str(tmp_path)
    assert search_root(layers, project_root=str(tmp_path / "elsewhere")) == str(tmp_path / "ns" / "sub")


def test_a_use_is_the_name_as_a_word():
    # a call, a base class, an import under another name: the parse that follows decides
    use = _use_of(["MaskingMixin"])
    assert use.search(b"class Block(MaskingMixin, nn.Module):\n")
    assert use.search(b"class Block(\n    mixins.MaskingMixin,\n    nn.Module,\n):\n")
    assert use.search(b"from .mixins import MaskingMixin as M\n")
    assert not use.search(b"class Block(OtherMaskingMixin):\n") and not use.search(b"MaskingMixins = []\n")


def test_top_level_classes_are_the_classes_at_column_zero():
    assert top_level_classes(b"class A(nn.Module):\n    class Inner:\n        pass\nclass B:\n    pass\n") == {"A", "B"}


def test_imports_are_resolved_from_the_importing_files_package(tmp_path):
    from pt2lint.analysis.builders import imports_of

    for rel in ("pkg/__init__.py", "pkg/layers.py", "pkg/a/__init__.py", "pkg/a/layers.py", "pkg/a/m.py", "pkg/n.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    target = {str(tmp_path / "pkg" / "layers.py"): frozenset({"Block"})}
    inner, outer = str(tmp_path / "pkg" / "a" / "m.py"), str(tmp_path / "pkg" / "n.py")
    assert imports_of(b"from .layers import Block\n", inner, target) == 0  # pkg.a.layers: another module
    assert imports_of(b"from ..layers import Block\n", inner, target) == 2
    assert imports_of(b"from .layers import Block\n", outer, target) == 2
    assert imports_of(b"from pkg.layers import Block as B\n", inner, target) == 2
    assert imports_of(b"from pkg import (  # modules\r\n    layers,\r\n)\r\n", inner, target) == 2
    assert imports_of(b"import pkg.layers as L\n", inner, target) == 2
    assert imports_of(b"from pkg import Block\n", inner, target) == 1  # through the package, if it re-exports
    assert imports_of(b"from pkg import *\n", inner, target) == 1
    assert imports_of(b"from pkg.conf import Block\n", inner, target) == 0
