"""The byte filters of the search for the files that build or call a linted file's definitions
(:mod:`pt2lint.analysis.builders`): they may let through a file that does not import the
module (the parse that follows decides), but must never drop one that does."""

from __future__ import annotations

import pytest

from pt2lint.analysis.builders import _call_of, _imports_word, search_root, top_level_functions


@pytest.mark.parametrize("text", [
    b"from .utils import clamp\n",
    b"from ..utils.sub import f\n",
    b"from pkg.utils import (\n    clamp,\n)\n",
    b"import pkg.utils as U\n",
    b"import os, pkg.utils\n",
    b"from pkg import utils\n",
    b"from . import (\n    layers,\n    utils,\n)\n",
    b"    from .utils import clamp  # inside a function\n",
])
def test_imports_of_the_module_are_recognised(text):
    assert _imports_word([b"utils"]).search(text) is not None


@pytest.mark.parametrize("text", [
    b"x = utils\n",
    b"from .myutils import a\n",
    b"from pkg import utilsx\n",
    b"# from .utils import clamp\n",
])
def test_other_text_is_no_import_of_the_module(text):
    assert _imports_word([b"utils"]).search(text) is None


def test_calls_of_a_name_bare_or_as_an_attribute_only():
    call = _call_of(["Block"])
    assert call.search(b"self.b = Block(4)") and call.search(b"self.b = layers.Block (4)")
    assert call.search(b"self.b = pkg . layers.Block(4)")
    assert not call.search(b"self.b = TransformerBlock(4)") and not call.search(b"Block = 1")


def test_top_level_functions_are_the_defs_at_column_zero():
    data = b"def a(x):\n    def inner():\n        pass\nasync def b():\n    pass\nclass C:\n    def m(self):\n        pass\n"
    assert top_level_functions(data) == {"a", "b"}


def test_the_search_covers_the_top_level_package(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for rel in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/layers.py", "loose.py"):
        (tmp_path / rel).write_text("")
    assert search_root(str(tmp_path / "pkg" / "sub" / "layers.py")) == str(tmp_path / "pkg")
    assert search_root(str(tmp_path / "loose.py")) == str(tmp_path)
