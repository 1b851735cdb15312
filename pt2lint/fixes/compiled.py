"""Is the code a fix rewrites known to run under ``torch.compile``?

``torch.cond`` is a higher-order op: in eager mode every call goes through Dynamo's
machinery and is many times slower than the ``if`` it replaces
(``bench/cond_overhead.py``, figures in ``bench/RESULTS.md``).  A ``cond`` fix is
therefore unsafe unless the ``assume-compiled`` setting is on or the linted file itself
compiles the region the ``if`` is reached from:

* a function decorated with ``@torch.compile`` (or ``torch._dynamo.optimize``), or
  passed to ``torch.compile(f)``;
* a class ``C`` passed to ``torch.compile`` as ``torch.compile(C)`` or
  ``torch.compile(C(...))``, or through a name bound to ``C(...)`` anywhere in the file
  (``model = C(); model = torch.compile(model)``, ``model.compile()``);
* a class constructed as a submodule (``self.block = C(...)``) of a compiled class
  (Dynamo inlines submodule calls into the parent's graph).

Where the ``if`` is reached from is the start of the finding's call chain (the
region's entry: ``Model.forward`` for a helper method it calls).  Compilation by another
file of the project (a training script) is not seen: that is what the setting is for.
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Set

import libcst as cst

from pt2lint.analysis import torch_api as api
from pt2lint.analysis.walk import walk


def _call_target(node: cst.Call) -> Optional[str]:
    """``C`` for ``C(...)`` / ``mod.C(...)`` (the last name), else None."""
    func = node.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def compiled_symbols(index) -> Dict[str, Set[str]]:
    """``{"classes": ..., "functions": ...}``: names of this file's classes and module-level
    functions that the file compiles (see the module docstring)."""
    imports = index.imports
    classes = set(index.classes)
    functions = {fn.name for fn in index.all_functions if fn.cls is None}
    bound: Dict[str, Set[str]] = {}  # variable name -> classes it is bound to (`m = C(...)`)
    compiled_args: Set[str] = set()  # names passed to torch.compile / with `.compile()` called
    direct: Set[str] = set()
    for node in walk(index.module):
        kind = type(node)  # final node classes: ``is`` tests, not an ABC check per node
        if kind is cst.Assign and isinstance(node.value, cst.Call):
            target_cls = _call_target(node.value)
            if target_cls in classes:
                for t in node.targets:
                    if isinstance(t.target, cst.Name):
                        bound.setdefault(t.target.value, set()).add(target_cls)
        if kind is not cst.Call:
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "compile" and isinstance(func.value, cst.Name) and not node.args:
            compiled_args.add(func.value.value)  # `model.compile()` (nn.Module.compile)
        if not node.args or imports.qualify(func) not in api.COMPILE_FUNCTIONS:
            continue
        first = node.args[0].value
        if isinstance(first, cst.Name):
            compiled_args.add(first.value)
        elif isinstance(first, cst.Call) and _call_target(first) in classes:
            direct.add(_call_target(first))  # torch.compile(Model(...))
    for name in compiled_args:
        if name in classes or name in functions:
            direct.add(name)
        direct |= bound.get(name, set())
    out_classes = {c for c in direct if c in classes}
    out_functions = {f for f in direct if f in functions}
    out_functions |= {fn.name for fn in index.all_functions if fn.cls is None and fn.compiled}
    for fn in index.all_functions:
        if fn.cls is not None and fn.compiled:
            out_classes.add(fn.cls.name)  # `@torch.compile` on a method: the class runs compiled there
    # submodules of compiled classes are compiled with them
    changed = True
    while changed:
        changed = False
        for name in list(out_classes):
            cls = index.classes.get(name)
            if cls is None:
                continue
            for n in walk(cls.node):
                if isinstance(n, cst.Call):
                    sub = _call_target(n)
                    if sub in classes and sub not in out_classes:
                        out_classes.add(sub)
                        changed = True
    return {"classes": out_classes, "functions": out_functions}


def region_compiled(index, entries: Iterable[str], table: Optional[Dict[str, Set[str]]] = None) -> bool:
    """Whether every region entry symbol (``"Model.forward"``, ``"step"``) is compiled by this file.

    Args:
        index: the file's :class:`~pt2lint.analysis.index.ModuleIndex`.
        entries: the first element of each finding chain that reaches the ``if``.
        table: :func:`compiled_symbols` of ``index`` when the caller already has it (it walks the
            whole module, so a caller asking once per finding should compute it once per file).
    """
    if table is None:
        table = compiled_symbols(index)
    entries = list(entries)
    if not entries:
        return False
    for symbol in entries:
        head = symbol.split(".", 1)[0]
        if head in table["classes"] or head in table["functions"]:
            continue
        if any(getattr(f, "name", None) == head for f in getattr(index, "compiled_foreign", ())):
            continue
        return False
    return True


__all__ = ["compiled_symbols", "region_compiled"]
