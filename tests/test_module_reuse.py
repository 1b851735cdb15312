"""Imported modules are parsed once per worker process, whatever number of entry files import them.

A generated package: one helper module (a base class, a guard helper, a helper with a
graph break) imported by every model module.  Linting the model modules with two worker
processes must parse each piece of the helper module at most once in each worker, and
give the same findings as one process.
"""

from __future__ import annotations

import os
import textwrap
from typing import Dict, List, Tuple

import libcst as cst

from pt2lint.analysis import project
from pt2lint.engine import lint_path, lint_paths
from pt2lint.pool import ordered_map
from pt2lint.settings import LintSettings, resolve_selection

MODELS = 8

HELPERS = '''
import torch
import torch.nn as nn


def is_compiling():
    return torch.compiler.is_compiling()


def scale(x):
    print("scaling")
    return x * 2


class Base(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.width = width
        self.proj = nn.Linear(width, width)

    def project(self, x):
        if not is_compiling():
            return x
        return self.proj(x)
'''

MODEL = '''
import torch
from pkg.helpers import Base, scale


class Model{n}(Base):
    def forward(self, x):
        y = self.project(x)
        return scale(y) + {n}
'''


def _write_package(root) -> List[str]:
    files: Dict[str, str] = {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/helpers.py": HELPERS,
    }
    for n in range(MODELS):
        files[f"pkg/m{n}.py"] = MODEL.format(n=n)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return sorted(str(root / rel) for rel in files if rel.startswith("pkg/m"))


def _settings(root) -> LintSettings:
    return LintSettings(enabled=resolve_selection(), project_root=str(root))


def _lint_and_count(item: Tuple[str, str]) -> Tuple[int, Dict[str, int], List[Tuple[str, int, str]]]:
    """Worker: lint one entry file; (this process' id, its parse counts, the findings)."""
    path, root = item
    result = lint_path(path, _settings(root))
    found = [(d.filename, d.start.line, d.code) for d in result.diagnostics]
    return os.getpid(), project.parse_counts(), found


def test_each_imported_piece_is_parsed_at_most_once_per_worker(tmp_path):
    entries = _write_package(tmp_path)
    helpers = str(tmp_path / "pkg" / "helpers.py")
    results = list(ordered_map(_lint_and_count, [(p, str(tmp_path)) for p in entries], jobs=2, dead=lambda item: None))
    assert all(r is not None for r in results)
    last: Dict[int, Dict[str, int]] = {}
    for pid, counts, _found in results:
        last[pid] = counts  # counts only grow: the latest result of a process is its total
    helper_keys = set()
    for pid, counts in last.items():
        mine = {k: v for k, v in counts.items() if k.startswith(helpers + "#")}
        helper_keys |= set(mine)
        assert mine, f"worker {pid} analysed entry files without reading the helper module"
        assert all(v == 1 for v in mine.values()), f"worker {pid} parsed a piece more than once: {mine}"
    # the base text and the pieces the models reach (the class, both helpers) were all read
    assert {helpers + "#", helpers + "#Base", helpers + "#scale", helpers + "#is_compiling"} <= helper_keys
    # every worker that analysed more than one entry reused what it had parsed
    per_worker = {pid: sum(1 for r in results if r[0] == pid) for pid in last}
    assert sum(per_worker.values()) == MODELS and max(per_worker.values()) >= 2
    # the helper's break is found from every entry file, in the helper
    for _pid, _counts, found in results:
        assert any(f == helpers and code == "PTC301" for f, _line, code in found), found


def test_two_workers_give_the_findings_of_one(tmp_path):
    entries = _write_package(tmp_path)
    settings = _settings(tmp_path)

    def diags(jobs: int):
        return [
            (d.filename, d.start.line, d.start.column, d.code, d.message, tuple(map(str, getattr(d, "call_chain", None) or ())))
            for r in lint_paths(entries, settings, jobs=jobs)
            for d in r.diagnostics
        ]

    one = diags(1)
    assert one, "the generated package must have findings"
    assert diags(2) == one


def test_guard_helper_scans_are_reused_per_node():
    from pt2lint.analysis import interp

    module = cst.parse_module("def f(x):\n    t = is_compiling()\n    t |= x\n    return t\n")
    fn = module.body[0]
    first = interp._returns_of(fn)
    assert [cst.Module([]).code_for_node(e) for e in first] == ["t"]
    assert interp._returns_of(fn) is first  # the memoised answer, not a new scan
    values, only_or = interp._local_assigns(fn, "t")
    assert [cst.Module([]).code_for_node(e) for e in values] == ["is_compiling()"] and only_or is True
    assert interp._local_assigns(fn, "t") is interp._local_assigns(fn, "t")
    # another tree with the same text is another node: scanned on its own
    other = cst.parse_module(module.code).body[0]
    assert interp._returns_of(other) is not first
    assert interp._local_assigns(other, "x") == ((), True)


def test_an_imported_piece_with_a_long_line_is_followed(tmp_path):
    # a line over the long-line threshold sends the piece down the careful parse (on a big
    # stack); the break in it is still found through the import, at its line
    long_list = "[" + ", ".join(str(i) for i in range(400)) + "]"
    assert len(long_list) > 1000
    files = {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/wide.py": f"TABLE = {long_list}\n\n\ndef wide(x):\n    table = {long_list}\n    print(len(table))\n    return x\n",
        "pkg/model.py": "import torch.nn as nn\nfrom pkg.wide import wide\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        return wide(x)\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    result = lint_path(str(tmp_path / "pkg" / "model.py"), _settings(tmp_path))
    got = [(os.path.basename(d.filename), d.start.line, d.code) for d in result.diagnostics]
    assert ("wide.py", 6, "PTC301") in got, got
    counts = project.parse_counts()
    assert counts.get(str(tmp_path / "pkg" / "wide.py") + "#wide") == 1
