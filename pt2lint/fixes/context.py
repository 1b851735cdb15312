"""Per-file state shared by the codemods: the module, its text, the findings and lazily computed facts."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from pt2lint.analysis.imports import ImportMap
from pt2lint.analysis.walk import iter_children, walk
from pt2lint.diagnostics import Applicability, Diagnostic, Edit, Fix
from pt2lint.fixes.edits import (
    diff_edits,
    indentation_at,
    line_starts,
    render_orelse,
    render_statements,
    span_edit,
    strip_leading_lines,
)


class Refuse(Exception):
    """A codemod applies to the finding but declines to rewrite it; the message says why."""


class FixContext:
    """One module being fixed.

    Args:
        module: the parsed module the findings' nodes belong to.
        source: its text.
        settings: the lint settings (target and Dynamo knobs; facts are computed with them).
        findings: the engine's :class:`~pt2lint.analysis.driver.Finding` objects, for
            statement line anchors and to know which statements are flagged.
        diagnostic_of: the diagnostic reported for each finding (``id(finding) -> Diagnostic``);
            findings whose diagnostic was suppressed are absent.
        path: the module's path relative to the project root (``/``-separated; the file name
            when there is no root), from which generated module-level names are derived.
        filename: the module's file as linted (its imports resolve from there; ``"-"``: from the
            working directory).
        overlay: ``abs path -> text`` of unsaved editor buffers, read instead of the disk.
        data: the file's bytes as read, if known.
    """

    def __init__(
        self, module: cst.Module, source: str, settings, findings: Sequence, diagnostic_of: Dict[int, Diagnostic], path: str = "",
        *, filename: str = "-", overlay=None, data: Optional[bytes] = None,
    ) -> None:
        self.module = module
        self.path = path
        self.filename = filename
        self.overlay = overlay
        self.data = data
        self.source = source
        self.settings = settings
        self.findings = list(findings)
        self.starts = line_starts(source)
        self.lines = _split_lines(source)
        self._parents: Optional[Dict[int, cst.CSTNode]] = None
        self._facts = None
        self._facts_failed: Optional[RecursionError] = None
        self._imports: Optional[ImportMap] = None
        self._import_edits: Optional[Tuple[Edit, ...]] = None
        self.cache: Dict[object, object] = {}
        # statement -> 1-based line of its first token, from the diagnostics' statement lines
        self.stmt_line: Dict[int, int] = {}
        self.flagged: Dict[int, List[Tuple[object, Diagnostic]]] = {}
        for f in self.findings:
            d = diagnostic_of.get(id(f))
            if d is None:
                continue
            if f.stmt is not None and d.statement_lines:
                self.stmt_line.setdefault(id(f.stmt), d.statement_lines[0])
            self.flagged.setdefault(id(f.node), []).append((f, d))

    # ------------------------------------------------------------ lazy facts
    @property
    def facts(self):
        """:class:`~pt2lint.fixes.facts.Facts` of the module and the project code it calls (computed on first use)."""
        if self._facts is None:
            from pt2lint.fixes.facts import collect_facts

            if self._facts_failed is not None:
                # one failed recording run per module (a chain too deep for the interpreter's
                # recursion limit), not one per finding asking for a fix
                raise self._facts_failed
            try:
                self._facts = collect_facts(self.module, self.source, self.settings, self.filename, overlay=self.overlay, data=self.data)
            except RecursionError as exc:
                self._facts_failed = exc
                raise
        return self._facts

    @property
    def dependencies(self) -> Tuple[Tuple[str, Optional[str]], ...]:
        """``(abs path, sha256 or None)`` of the other files the facts were computed from (none
        before :attr:`facts` is first used)."""
        return self._facts.dependencies if self._facts is not None else ()

    @property
    def parents(self) -> Dict[int, cst.CSTNode]:
        """``id(node) -> parent node`` for every code node of the module."""
        if self._parents is None:
            parents: Dict[int, cst.CSTNode] = {}
            for n in walk(self.module):
                for c in iter_children(n):
                    parents[id(c)] = n
            self._parents = parents
        return self._parents

    def fix_once(self, name: str, node: cst.CSTNode, build: Callable[[], Fix], refused: str) -> Fix:
        """The fix of codemod ``name`` for ``node``, built once per module however many findings share it.

        Args:
            name: the codemod (``"cond"``), also the key's first part and the refusal's fix name.
            node: the node the rewrite is about (the ``if``, the call, the statement).
            build: makes the fix; raises :class:`Refuse` to decline.
            refused: the start of a refusal's message (``"not rewritten as torch.cond"``);
                the reason follows after ``": "``.

        Returns:
            The built fix, or a display-only fix saying why it was refused.
        """
        key = (name, id(node))
        if key not in self.cache:
            try:
                self.cache[key] = build()
            except Refuse as exc:
                self.cache[key] = Fix(f"{refused}: {exc}", Applicability.DISPLAY_ONLY, (), name)
        return self.cache[key]  # type: ignore[return-value]

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The node whose field holds ``node`` (``None`` for the module)."""
        return self.parents.get(id(node))

    def subtree_ids(self, root: cst.CSTNode) -> frozenset:
        """``id`` of ``root`` and of every code node below it, walked once per ``root`` and kept.

        Asking whether a finding's node lies in a statement's test once per finding walked
        the whole test each time: quadratic in the test's size for a long ``and`` chain.
        """
        return self.per_node("subtree", root, lambda: frozenset(id(n) for n in walk(root)))

    def per_node(self, tag: str, node: cst.CSTNode, compute: Callable[[], object]):
        """``compute()``, once per ``(tag, node)`` for this module: the memo of the per-node facts
        the codemods share (names read or bound, subtree ids).  The node is kept with its value,
        so its ``id`` cannot be reused by another node.  Callers must not mutate the value."""
        key = (tag, id(node))
        hit = self.cache.get(key)
        if hit is None or hit[0] is not node:  # type: ignore[index]
            hit = self.cache[key] = (node, compute())
        return hit[1]  # type: ignore[index]

    def contains(self, root: cst.CSTNode, node: cst.CSTNode) -> bool:
        """Whether ``node`` is ``root`` or one of its descendants (see :meth:`subtree_ids`)."""
        return id(node) in self.subtree_ids(root)

    def enclosing_function(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The innermost ``def`` containing ``node``."""
        p = self.parent(node)
        while p is not None and not isinstance(p, cst.FunctionDef):
            p = self.parent(p)
        return p

    def inside_loop(self, node: cst.CSTNode, stop: cst.CSTNode) -> bool:
        """Whether a ``for``/``while`` body lies between ``node`` and ``stop`` (its function)."""
        p = self.parent(node)
        while p is not None and p is not stop:
            if isinstance(p, (cst.For, cst.While)):
                return True
            p = self.parent(p)
        return False

    # ------------------------------------------------------- per-function facts
    def function_loads(self, func: cst.FunctionDef):
        """:func:`~pt2lint.analysis.names.loaded_names` of ``func``'s body, computed once per function.

        Every ``if`` of a function asks for the names read after it; computing them per
        finding made fix proposals quadratic in the function's size.  The result is shared:
        callers must not mutate it.
        """
        from pt2lint.analysis.names import loaded_names

        return self.per_node("loads", func, lambda: loaded_names([func.body]))

    def function_spelled(self, func: cst.FunctionDef) -> frozenset:
        """Every identifier spelled in ``func`` (:func:`~pt2lint.analysis.names.all_names`), once per function."""
        from pt2lint.analysis.names import all_names

        return self.per_node("spelled", func, lambda: frozenset(all_names(func)))

    def function_bound(self, func: cst.FunctionDef) -> frozenset:
        """Names ``func``'s body binds in its own scope (:func:`~pt2lint.analysis.names.bound_names`), once per function."""
        from pt2lint.analysis.names import bound_names

        def compute() -> frozenset:
            body = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else [func.body]
            return frozenset(bound_names(body))

        return self.per_node("bound", func, compute)

    # --------------------------------------------------------------- torch
    @property
    def imports(self) -> ImportMap:
        """Module-level imports (aliases to qualified names)."""
        if self._imports is None:
            imap = ImportMap()
            for stmt in self.module.body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, cst.Import):
                            imap.add_import(small)
                        elif isinstance(small, cst.ImportFrom):
                            imap.add_import_from(small)
            self._imports = imap
        return self._imports

    def torch_name(self, func: Optional[cst.FunctionDef]) -> Tuple[str, Tuple[Edit, ...]]:
        """The local name of the ``torch`` module, and the edits that import it when it is missing.

        Raises:
            Refuse: ``torch`` is bound to something else, or shadowed in ``func``.
        """
        names = self.imports.names
        alias = "torch" if names.get("torch") == "torch" else next((k for k, v in names.items() if v == "torch"), None)
        edits: Tuple[Edit, ...] = ()
        if alias is None:
            if "torch" in names:
                raise Refuse("the name `torch` is bound to something else in this module")
            alias = "torch"
            edits = self.import_torch_edits()
        if func is not None:
            params = {p.name.value for p in _all_params(func.params)}
            if alias in params or alias in self.function_bound(func):
                raise Refuse(f"`{alias}` is a local name in `{func.name.value}`")
        return alias, edits

    def import_torch_edits(self) -> Tuple[Edit, ...]:
        """Edits adding ``import torch`` where LibCST's ``AddImportsVisitor`` puts it."""
        if self._import_edits is None:
            from libcst.codemod import CodemodContext
            from libcst.codemod.visitors import AddImportsVisitor

            context = CodemodContext()
            AddImportsVisitor.add_needed_import(context, "torch")
            new = AddImportsVisitor(context).transform_module(self.module)
            self._import_edits = diff_edits(self.source, new.code)
        return self._import_edits

    # --------------------------------------------------------------- edits
    def replace_statements(self, old: Sequence[cst.BaseStatement], new: Sequence[cst.BaseStatement]) -> Tuple[Edit, ...]:
        """Edits replacing the sibling statements ``old`` (consecutive, in one block) by ``new``.

        The first statement's comment lines above it stay where they are: ``new``
        must not repeat them (its first statement's ``leading_lines`` are added).  Only
        the replaced lines are rendered when the first statement's line is known
        from a finding; otherwise the whole module is rendered and diffed.
        """
        first = old[0]
        line = self.stmt_line.get(id(first))
        if line is not None:
            indent = indentation_at(self.lines, line)
            if indent is not None:
                old_text = render_statements(self.module, [strip_leading_lines(first), *old[1:]], indent)
                new_text = render_statements(self.module, list(new), indent)
                edit = span_edit(self.source, self.starts, line, old_text, new_text)
                if edit is not None:
                    return (edit,)
        replacement = [*new]
        if replacement and getattr(first, "leading_lines", None):
            extra = list(getattr(replacement[0], "leading_lines", ()))
            replacement[0] = replacement[0].with_changes(leading_lines=list(first.leading_lines) + extra)
        return self._replace_in_module(list(old), replacement)

    def replace_orelse(self, owner: cst.If, new_orelse: cst.CSTNode) -> Tuple[Edit, ...]:
        """Edits replacing the ``elif`` clause ``owner.orelse`` (an ``If``) by ``new_orelse``."""
        clause = owner.orelse
        line = self.stmt_line.get(id(clause))
        if line is not None:
            indent = indentation_at(self.lines, line)
            if indent is not None:
                old_text = render_orelse(self.module, clause, indent)
                new_text = render_orelse(self.module, new_orelse, indent)
                edit = span_edit(self.source, self.starts, line, old_text, new_text)
                if edit is not None:
                    return (edit,)
        new_module = self.module.deep_replace(owner, owner.with_changes(orelse=new_orelse))
        return diff_edits(self.source, new_module.code)  # type: ignore[union-attr]

    def _replace_in_module(self, old: List[cst.BaseStatement], new: List[cst.BaseStatement]) -> Tuple[Edit, ...]:
        targets = {id(s) for s in old}
        head = id(old[0])
        new_module = _rebuild(self.module, targets, head, new)
        return diff_edits(self.source, new_module.code)


def _rebuild(module: cst.Module, targets, head, new) -> cst.Module:
    """The module with the statements ``targets`` replaced by ``new`` (at ``head``), identity-based."""

    def fix_body(body):
        out = []
        for s in body:
            if id(s) == head:
                out.extend(new)
            elif id(s) not in targets:
                out.append(s)
        return out

    block = None
    for n in walk(module):
        if isinstance(n, (cst.IndentedBlock, cst.Module)) and any(id(s) == head for s in n.body):
            block = n
            break
    if block is None:
        raise Refuse("cannot locate the statement to replace")
    if block is module:
        return module.with_changes(body=fix_body(module.body))
    return module.deep_replace(block, block.with_changes(body=fix_body(block.body)))  # type: ignore[return-value]


def _split_lines(text: str) -> List[str]:
    import re

    return re.split(r"\r\n|\r|\n", text)


def _all_params(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def all_params(func: cst.FunctionDef) -> List[cst.Param]:
    """Every parameter of ``func`` (positional-only, regular, ``*args``, keyword-only, ``**kwargs``)."""
    return _all_params(func.params)


__all__ = ["FixContext", "Refuse", "all_params"]
