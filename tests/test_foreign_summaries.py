"""Attributes of classes of other modules are collected once per process (pt2lint.analysis.foreign).

Each test writes a small project, lints its entry files in one process (``jobs=1``) and
compares with linting each entry alone in a process that has seen nothing before (the
summary store cleared): the findings must be the same, and the foreign class's
constructor is interpreted once for all the entries that share it.
"""

from __future__ import annotations

import os
import textwrap
from typing import Dict, List

import pytest

from pt2lint.analysis import foreign
from pt2lint.engine import lint_paths
from pt2lint.settings import LintSettings, resolve_selection


def write(root, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def lint(root, paths: List[str]) -> List[tuple]:
    """Every entry's own findings (not merged across entries), linted in this process."""
    old = os.getcwd()
    os.chdir(root)
    try:
        settings = LintSettings(enabled=resolve_selection(), project_root=str(root))
        return [
            (d.filename.replace(os.sep, "/"), d.start.line, d.code, d.message)
            for r in lint_paths(paths, settings, jobs=1, merge=False) for d in r.diagnostics
        ]
    finally:
        os.chdir(old)


def alone(root, paths: List[str]) -> List[tuple]:
    """The findings of each entry linted in a process that kept no summary."""
    out = []
    for p in paths:
        foreign.clear()
        out.extend(lint(root, [p]))
    return out


def computed(root, name: str) -> int:
    path = os.path.join(os.path.realpath(str(root)), *name.split("#")[0].split("/"))
    cls = name.split("#")[1]
    return sum(n for k, n in foreign.computation_counts().items() if os.path.realpath(k.rsplit("#", 1)[0]) == path and k.endswith("#" + cls))


@pytest.fixture(autouse=True)
def fresh_store():
    foreign.clear()
    yield
    foreign.clear()


BASE = """
    import torch
    from torch import nn


    class Base(nn.Module):
        def __init__(self, width: int = 4):
            super().__init__()
            self.scale = torch.ones(1).sum()
            self.width = width
            self.setup_state()

        def setup_state(self):
            self.offset = torch.zeros(1).mean()
    """

ENTRY = """
    from pkg.base import Base


    class {name}(Base):
        def forward(self, x):
            if self.scale > 0:
                x = x + 1
            if self.width > 2:
                x = x * 2
            if self.offset < 1:
                x = x - 1
            return x
    """


def _two_entries_of_one_base(root, base: str, entry: str) -> List[str]:
    """Write a package whose ``pkg/one.py`` and ``pkg/two.py`` are ``entry`` (formatted with the
    class names ``One`` and ``Two``) over ``pkg/base.py``; returns the two entry paths."""
    write(root, {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/base.py": base,
        "pkg/one.py": entry.format(name="One"),
        "pkg/two.py": entry.format(name="Two"),
    })
    return ["pkg/one.py", "pkg/two.py"]


def test_a_foreign_base_is_collected_once_for_two_entries_with_the_same_findings(tmp_path):
    entries = _two_entries_of_one_base(tmp_path, BASE, ENTRY)
    together = lint(tmp_path, entries)
    assert computed(tmp_path, "pkg/base.py#Base") == 1
    # the tensor attributes the foreign constructor and its self-state method assign are
    # tensors in both entries (line 6: ``self.scale``, line 10: ``self.offset``); the int is not
    assert sorted((f, line, c) for f, line, c, _ in together) == [
        ("pkg/one.py", 6, "PTC104"), ("pkg/one.py", 10, "PTC104"),
        ("pkg/two.py", 6, "PTC104"), ("pkg/two.py", 10, "PTC104"),
    ]
    assert together == alone(tmp_path, entries)
    assert computed(tmp_path, "pkg/base.py#Base") == 1  # each entry alone: once in its own store


def test_a_summary_holding_a_closure_is_not_kept_and_each_entry_collects_it(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/base.py": """
            import torch
            from torch import nn


            class Base(nn.Module):
                def __init__(self):
                    super().__init__()

                    def gate(t):
                        return t.sum().item()

                    self.gate = gate
            """,
        "pkg/one.py": """
            from pkg.base import Base


            class One(Base):
                def forward(self, x):
                    return x * self.gate(x)
            """,
        "pkg/two.py": """
            from pkg.base import Base


            class Two(Base):
                def forward(self, x):
                    return x + self.gate(x)
            """,
    })
    entries = ["pkg/one.py", "pkg/two.py"]
    together = lint(tmp_path, entries)
    # a nested function is no definition another entry's project model can name
    assert computed(tmp_path, "pkg/base.py#Base") == 2
    assert together == alone(tmp_path, entries)


def test_a_summary_is_not_replayed_where_an_import_of_the_foreign_module_finds_another_file(tmp_path):
    # ``common.py`` imports ``helpers``, which each script's own folder provides (a script's
    # folder is an import root): the same foreign class has a tensor attribute for one entry
    # and an int for the other
    files = {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "common.py": """
            import torch
            from helpers import make


            class Base(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.v = make()
            """,
        "a/helpers.py": """
            import torch


            def make():
                return torch.ones(1).sum()
            """,
        "b/helpers.py": """
            def make():
                return 3
            """,
    }
    for d in ("a", "b"):
        files[f"{d}/m.py"] = """
            from common import Base


            class Net(Base):
                def forward(self, x):
                    if self.v > 0:
                        return x + 1
                    return x
            """
    write(tmp_path, files)
    for order in (["a/m.py", "b/m.py"], ["b/m.py", "a/m.py"]):
        foreign.clear()
        together = lint(tmp_path, order)
        assert sorted((f, line, c) for f, line, c, _ in together) == [("a/m.py", 6, "PTC104")]
        assert sorted(together) == sorted(alone(tmp_path, order))


def test_a_class_of_the_entry_module_is_collected_as_before(tmp_path):
    # near miss: the entry's own classes are not summarised (their values belong to the entry)
    write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/one.py": """
            import torch
            from torch import nn


            class One(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = torch.ones(1).sum()

                def forward(self, x):
                    if self.scale > 0:
                        x = x + 1
                    return x
            """,
    })
    assert [(f, line, c) for f, line, c, _ in lint(tmp_path, ["pkg/one.py"])] == [("pkg/one.py", 11, "PTC104")]
    assert foreign.computation_counts() == {}


def test_a_summary_is_not_replayed_once_a_module_it_read_has_changed(tmp_path):
    # one long-lived process (the LSP server) linting again after a file was edited on disk
    write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/helpers.py": """
            import torch


            def make():
                return torch.ones(1).sum()
            """,
        "pkg/base.py": """
            import torch
            from pkg.helpers import make


            class Base(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.v = make()
            """,
        "pkg/one.py": """
            from pkg.base import Base


            class One(Base):
                def forward(self, x):
                    if self.v > 0:
                        return x + 1
                    return x
            """,
    })
    assert [(f, line, c) for f, line, c, _ in lint(tmp_path, ["pkg/one.py"])] == [("pkg/one.py", 6, "PTC104")]
    write(tmp_path, {"pkg/helpers.py": """
        def make():
            return 3
        """})
    assert lint(tmp_path, ["pkg/one.py"]) == []
    assert computed(tmp_path, "pkg/base.py#Base") == 2


_DECORATED = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "pkg/__init__.py": "",
    "pkg/docs.py": """
        from pkg.text import tidy


        def documented(fn):
            fn.__doc__ = tidy(fn.__doc__)
            return fn
        """,
    "pkg/text.py": """
        def tidy(doc):
            return (doc or "").strip()
        """,
    "pkg/one.py": """
        import torch
        from pkg.docs import documented


        class One(torch.nn.Module):
            @documented
            def forward(self, x):
                return x * x.sum().item()
        """,
    "pkg/two.py": """
        import torch
        from pkg.docs import documented


        class Two(torch.nn.Module):
            @documented
            def forward(self, x):
                return x + x.max().item()
        """,
}


def _decorator_runs(monkeypatch, name: str) -> List[str]:
    """The list that collects one entry per interpreted run of decorator ``name``'s body."""
    from pt2lint.analysis import interp

    runs: List[str] = []
    real = interp.Interpreter._returned_callable

    def counting(self, deco, *rest):
        if deco.name == name:
            runs.append(getattr(self.entry, "path", ""))
        return real(self, deco, *rest)

    monkeypatch.setattr(interp.Interpreter, "_returned_callable", counting)
    return runs


def test_a_foreign_decorator_returning_its_argument_is_run_once_for_all_entries(tmp_path, monkeypatch):
    write(tmp_path, _DECORATED)
    runs = _decorator_runs(monkeypatch, "documented")
    both = lint(tmp_path, ["pkg/one.py", "pkg/two.py"])
    assert len(runs) == 1, runs
    assert both == alone(tmp_path, ["pkg/one.py", "pkg/two.py"])
    assert [(f, line, c) for f, line, c, _ in both] == [("pkg/one.py", 8, "PTC101"), ("pkg/two.py", 8, "PTC101")]


def test_a_replayed_decorator_keeps_the_files_its_run_read_in_the_dependency_record(tmp_path):
    """The second entry did not run the decorator, yet its result depends on ``text.py``
    (which the run imported): editing that file must re-check it."""
    write(tmp_path, _DECORATED)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        settings = LintSettings(enabled=resolve_selection(), project_root=str(tmp_path))
        results = {os.path.basename(r.filename): r for r in lint_paths(["pkg/one.py", "pkg/two.py"], settings, jobs=1, merge=False)}
    finally:
        os.chdir(old)
    for name in ("one.py", "two.py"):
        deps = {os.path.basename(p) for p, _ in results[name].dependencies}
        assert {"docs.py", "text.py"} <= deps, (name, deps)


def test_a_foreign_decorator_is_run_again_once_a_file_it_read_has_changed(tmp_path, monkeypatch):
    write(tmp_path, _DECORATED)
    runs = _decorator_runs(monkeypatch, "documented")
    lint(tmp_path, ["pkg/one.py"])
    write(tmp_path, {"pkg/text.py": """
        def tidy(doc):
            return (doc or "").strip() + "."
        """})
    lint(tmp_path, ["pkg/two.py"])
    assert len(runs) == 2, runs


PARTIAL_BASE = """\
import functools

import torch
from torch import nn

Linear = functools.partial(nn.Linear, bias=False)


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.say = functools.partial(print, "dbg:")
        self.proj = Linear(4, 4)
"""

PARTIAL_ENTRY = """\
from .base import Base


class {name}(Base):
    def forward(self, x):
        self.say(x.shape)
        return self.proj(x)
"""


def test_a_summary_holding_a_partial_of_a_library_callable_is_replayed(tmp_path):
    # the attribute state of ``Base`` holds ``functools.partial(print, ...)`` values: written as
    # handles for the first entry and read back, whole, for the second
    entries = _two_entries_of_one_base(tmp_path, PARTIAL_BASE, PARTIAL_ENTRY)
    together = lint(tmp_path, entries)
    assert sorted((f, line, c) for f, line, c, _ in together) == [("pkg/one.py", 6, "PTC301"), ("pkg/two.py", 6, "PTC301")]
    assert together == alone(tmp_path, entries)
