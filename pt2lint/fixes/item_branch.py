"""The ``item-branch`` codemod: a number read with ``.item()`` that only feeds an ``if`` test.

::

    s = t.item()                     if t.item() > thr:          def _true_fn(...): ...
    if s > thr:               ->         ...                 ->  x = torch.cond(t.double() > thr, ...)
        ...

``s = t.item()`` (rule PTC101), ``s = float(t)`` and ``s = bool(t)`` (PTC103) break the
graph at the assignment, so the ``if`` on ``s`` is not flagged and neither ``cond`` nor
``where`` sees it.  This codemod first *inlines* the value into the test of the ``if``
that immediately follows, which is exactly equivalent when

* ``s`` is bound once in the function and every read of ``s`` is in that ``if``'s test or its
  ``elif`` tests (the
  interpreter's names, :func:`pt2lint.analysis.names.loaded_names`, nested scopes included):
  ``s`` is then never used as a Python number anywhere else;
* the ``if`` is the next statement, so nothing runs between the read and the test; or the
  statements in between cannot change the number: the read is of a local tensor ``t``
  assigned once, earlier in the block, to a new tensor, which nothing from there to the
  ``if`` mentions, and which is provably one element (so ``.item()`` cannot fail first);
* the value is read at most once in the test, or it is ``t.item()`` / ``float(t)`` of a
  name or attribute (reading it twice computes the same number); otherwise, when the ``if``
  is the next statement, ``s`` is bound to the tensor instead (``s = x.mean()``) and each
  test reads ``s.item()`` (``float(s)``): the tensor is computed once, where the number was;

and then hands the inlined ``if`` to the ``check``, ``cond`` and ``where`` codemods
(in that order), run on the inlined text with their own analysis.  The fix is theirs
composed with the inlining: its applicability is theirs (``cond`` is safe only when it
proves the rewrite), and a refusal of theirs is this fix's refusal.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from pt2lint.analysis.walk import walk
from pt2lint.diagnostics import Fix
from pt2lint.fixes.context import FixContext, Refuse
from pt2lint.fixes.edits import apply_edits, comment_lines, diff_edits
from pt2lint.analysis.names import all_names, bound_names
from pt2lint.fixes.predicate import ScalarProver, call_qualname, paren_if_needed
from pt2lint.fixes.purity import is_new_tensor

NAME = "item-branch"
TARGET_CODES = frozenset({"PTC101", "PTC103"})
INNER = ("check", "cond", "where")
_INNER_CODES = frozenset({"PTC101", "PTC103", "PTC104"})


def _read(ctx: FixContext, node: cst.CSTNode) -> bool:
    """``t.item()``, ``float(t)`` or ``bool(t)`` (the flagged read of a tensor value)."""
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute) and node.func.attr.value == "item" and not node.args:
        return True
    if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
        return call_qualname(ctx, node) in ("builtins.float", "builtins.bool")
    return False


def _simple_operand(node: cst.Call) -> bool:
    """The read's tensor is a name or an attribute chain of names (``t``, ``self.scale``)."""
    inner = node.func.value if isinstance(node.func, cst.Attribute) and node.func.attr.value == "item" else node.args[0].value
    while isinstance(inner, cst.Attribute):
        inner = inner.value
    return isinstance(inner, cst.Name)


class _Inline(cst.CSTTransformer):
    def __init__(self, targets, value: cst.BaseExpression) -> None:
        self.targets = {id(n) for n in targets}
        self.value = value

    def leave_Name(self, original: cst.Name, updated: cst.Name):  # noqa: D102
        if id(original) in self.targets:
            return paren_if_needed(self.value)
        return updated


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The inline-then-``cond``/``where``/``check`` fix for ``s = t.item()`` followed by ``if <test on s>:``.

    Returns ``None`` when the finding is not such an assignment, and a display-only fix
    with the reason when it is but the rewrite is not proven or the inner codemods refuse.
    """
    node, stmt = finding.node, finding.stmt
    if finding.stmt is None or ctx.parent(finding.stmt) is None:
        return None  # a finding in another file of the project (its nodes are not this module's)
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return None
    assign = stmt.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) or assign.value is not node:
        return None
    if not _read(ctx, node):
        return None
    block = ctx.parent(stmt)
    func = ctx.enclosing_function(stmt)
    if not isinstance(block, cst.IndentedBlock) or func is None:
        return None
    body = list(block.body)
    index = next(i for i, s in enumerate(body) if s is stmt)
    name = assign.targets[0].target.value
    # the first later statement of the block that mentions the name must be an ``if`` testing it
    later = next((j for j in range(index + 1, len(body)) if name in all_names(body[j])), None)
    nxt = body[later] if later is not None else None
    if not isinstance(nxt, cst.If) or name not in {n.value for t in _chain_tests(nxt) for n in walk(t) if isinstance(n, cst.Name)}:
        return None
    between = body[index + 1:later]
    def build() -> Fix:
        if between:
            _check_movable(ctx, func, body, index, between, node)
        return _build(ctx, diagnostic, func, stmt, assign, nxt, name, between)

    return ctx.fix_once(NAME, stmt, build, "not rewritten")


def _uses_in_test(ctx: FixContext, func: cst.FunctionDef, nxt: cst.If, name: str) -> List[cst.Name]:
    binds = _bindings(func, name)
    if name in _params(func) or len(binds) != 1:
        raise Refuse(f"`{name}` is bound more than once in `{func.name.value}`")
    scoped = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Lambda, cst.NamedExpr)
    if any(isinstance(n, scoped) for t in _chain_tests(nxt) for n in walk(t)):
        raise Refuse("the test has a comprehension, lambda or `:=`, where the name may be another binding")
    loads = ctx.function_loads(func).get(name, [])
    test_ids = {id(n) for t in _chain_tests(nxt) for n in walk(t)}
    outside = [n for n in loads if id(n) not in test_ids]
    if outside:
        line = _line_of(ctx, outside[0])
        where = f" (line {line})" if line else ""
        raise Refuse(f"`{name}` is also used as a Python number outside the `if`/`elif` tests{where}")
    return [n for n in loads if id(n) in test_ids]


def _chain_tests(node: cst.If) -> List[cst.BaseExpression]:
    """The tests of an ``if`` and of its ``elif`` clauses."""
    out = [node.test]
    while isinstance(node.orelse, cst.If):
        node = node.orelse
        out.append(node.test)
    return out


def _bindings(func: cst.FunctionDef, name: str) -> List[cst.CSTNode]:
    return bound_names([func.body]).get(name, [])


def _params(func: cst.FunctionDef) -> set:
    from pt2lint.fixes.context import all_params

    return {p.name.value for p in all_params(func)}


def _line_of(ctx: FixContext, node: cst.CSTNode) -> Optional[int]:
    """1-based line of ``node`` (from the position metadata of the module; ``None`` if unknown)."""
    positions = ctx.cache.get((NAME, "positions"))
    if positions is None:
        wrapper = MetadataWrapper(ctx.module, unsafe_skip_copy=True)
        positions = ctx.cache[(NAME, "positions")] = wrapper.resolve(PositionProvider)
    pos = positions.get(node)  # type: ignore[union-attr]
    return pos.start.line if pos is not None else None


def _check_movable(ctx: FixContext, func: cst.FunctionDef, body, index: int, between, read: cst.Call) -> None:
    """Refuse unless reading the value at the ``if`` instead of at ``body[index]`` gives the same number.

    Proven when the read is of a local name ``t`` bound once, by an assignment earlier in the
    same block to a new tensor (not another name for, or a view of, an existing one); no
    statement from that assignment to the ``if`` other than the read itself mentions ``t``
    (so nothing can write to it, through it or an alias); and ``t`` is provably one element,
    so ``.item()`` cannot fail (the original would fail before the statements in between ran).
    """
    inner = read.func.value if isinstance(read.func, cst.Attribute) and read.func.attr.value == "item" else read.args[0].value
    if not isinstance(inner, cst.Name):
        raise Refuse("statements run between the read and the `if`, and the read is not of a local name")
    t = inner.value
    binds = bound_names([func.body]).get(t, [])
    if t in _params(func) or len(binds) != 1:
        raise Refuse(f"statements run between the read and the `if`, and `{t}` is not bound once in the function")
    home = next((k for k in range(index) if body[k] is binds[0]), None)
    if home is None:
        home = next((k for k in range(index) if any(n is binds[0] for n in walk(body[k]))), None)
    bind = binds[0]
    if home is None or not isinstance(body[home], cst.SimpleStatementLine) or not isinstance(bind, cst.Assign) or len(bind.targets) != 1 or not isinstance(bind.targets[0].target, cst.Name):
        raise Refuse(f"statements run between the read and the `if`, and `{t}` is not assigned earlier in the same block")
    if not is_new_tensor(bind.value):
        raise Refuse(f"statements run between the read and the `if`, and `{t}` may be another name for an existing tensor")
    if any(t in all_names(s) for s in list(body[home + 1:index]) + list(between)):
        raise Refuse(f"`{t}` is used between its read and the `if`")
    if not ScalarProver(ctx, func).zero_dim(inner):
        raise Refuse(f"statements run between the read and the `if`, and `{t}` is not provably one element (`.item()` could fail first)")


def _build(ctx: FixContext, diagnostic, func, stmt, assign: cst.Assign, nxt: cst.If, name: str, between=()) -> Fix:
    uses = _uses_in_test(ctx, func, nxt, name)
    value = assign.value
    rebound = None
    if len(uses) > 1 and not _simple_operand(value):  # type: ignore[arg-type]
        if between:
            raise Refuse(f"`{name}` is read {len(uses)} times in the test and its value is not a plain read of a tensor")
        # `s = x.mean().item()` read by several tests: `s` now holds the tensor, each test reads it
        rebound, value = _rebind_tensor(stmt, assign, name)
    inlined_if = nxt.visit(_Inline(uses, value.with_changes(lpar=[], rpar=[]) if getattr(value, "lpar", None) else value))
    moved = comment_lines(stmt.with_changes(leading_lines=()))
    if rebound is not None:
        first_edits = ctx.replace_statements([stmt, nxt], [rebound, inlined_if])
        return _compose(ctx, diagnostic, first_edits, nxt, name, assign.value, f"bind the tensor to `{name}`")
    if between:
        new_if = inlined_if
        kept = [between[0].with_changes(leading_lines=[*moved, *between[0].leading_lines]), *between[1:]]
    else:
        new_if = inlined_if.with_changes(leading_lines=[*moved, *nxt.leading_lines])  # type: ignore[union-attr]
        kept = []
    first_edits = ctx.replace_statements([stmt, *between, nxt], [*kept, new_if])
    return _compose(ctx, diagnostic, first_edits, nxt, name, value, "inline")


def _rebind_tensor(stmt: cst.SimpleStatementLine, assign: cst.Assign, name: str) -> Tuple[cst.SimpleStatementLine, cst.BaseExpression]:
    """``s = <tensor>.item()`` -> (``s = <tensor>``, ``s.item()``); ``float(<tensor>)`` -> ``float(s)`` alike.

    Exact when the ``if`` testing ``s`` is the next statement and ``s`` is read nowhere else
    (checked by the caller): the tensor is computed once, where the number was, and each
    test reads the same one-element tensor, so the same number (or raises as ``.item()`` did).
    """
    read = assign.value
    assert isinstance(read, cst.Call)
    if isinstance(read.func, cst.Attribute) and read.func.attr.value == "item":
        tensor = read.func.value
        again: cst.BaseExpression = cst.Call(func=cst.Attribute(value=cst.Name(name), attr=cst.Name("item")))
    else:
        tensor = read.args[0].value
        again = read.with_changes(args=[cst.Arg(cst.Name(name))], lpar=[], rpar=[])
    new_assign = assign.with_changes(value=tensor.with_changes(lpar=[], rpar=[]) if getattr(tensor, "lpar", None) else tensor)
    return stmt.with_changes(body=[new_assign]), again


def _compose(ctx: FixContext, diagnostic, first_edits, nxt: cst.If, name: str, value: cst.BaseExpression, how: str) -> Fix:
    """The inner codemod's fix of the ``if`` after ``first_edits``, composed with them into one fix."""
    if_index = _if_ordinal(ctx.module, nxt)
    inlined = apply_edits(ctx.source, first_edits)
    inner = _inner_fix(ctx, diagnostic, inlined, if_index)
    final = apply_edits(inlined, inner.edits)
    try:
        cst.parse_module(final)
    except cst.ParserSyntaxError:
        raise Refuse("the composed rewrite does not parse") from None
    read = ctx.module.code_for_node(value).strip()
    if how == "inline":
        what = f"inline `{name} = {read}` into the `if` test (`{name}` is read only there, right after)"
    else:
        what = (
            f"{how} instead of `{read}` (`{name}` is read only by the `if`/`elif` tests right after, which now "
            f"read it there)"
        )
    return Fix(f"{what}, then {inner.name}: {inner.message}", inner.applicability, diff_edits(ctx.source, final), NAME)


def _if_ordinal(module: cst.Module, target: cst.If) -> int:
    """Position of ``target`` among the module's ``if`` statements in pre-order (stable across the inlining)."""
    count = 0
    for n in walk(module):
        if isinstance(n, cst.If):
            if n is target:
                return count
            count += 1
    raise Refuse("cannot locate the `if`")


def _inner_fix(ctx: FixContext, diagnostic, text: str, ordinal: int) -> Fix:
    """The ``check``/``cond``/``where`` fix of the ``if`` number ``ordinal`` in ``text``."""
    from pt2lint.engine import lint_source

    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    ifs = [n for n in walk(module) if isinstance(n, cst.If)]
    if ordinal >= len(ifs):
        raise Refuse("cannot locate the inlined `if`")
    test = ifs[ordinal].test
    first, last = positions[test].start.line, positions[test].end.line
    result = lint_source(text, diagnostic.filename, ctx.settings, relpath=ctx.path or None, fix_names=lambda d: list(INNER))
    candidates: List[Tuple[int, Fix]] = []
    for d in result.diagnostics:
        if d.code in _INNER_CODES and d.fix is not None and first <= d.start.line <= last:
            rank = INNER.index(d.fix.name) if d.fix.name in INNER else len(INNER)
            candidates.append((rank if d.fix.edits else rank + len(INNER), d.fix))
    if not candidates:
        raise Refuse("after inlining, no codemod rewrites the `if`")
    candidates.sort(key=lambda c: c[0])
    best = candidates[0][1]
    if not best.edits:
        raise Refuse(f"after inlining, {best.message}")
    return best


__all__ = ["INNER", "NAME", "TARGET_CODES", "propose"]
