"""Parameter types a function checks at its top, for parameters without an annotation.

``assert isinstance(num_samples, int) and num_samples > 0`` or ``if not isinstance(n, int):
raise TypeError(...)`` as the first statements of a function state the parameter's type as
surely as an annotation: the function raises for anything else, so every call that gets past
the check passed that type.  The analysis otherwise guesses that an unannotated ``forward``
parameter is a tensor, and would then take the check itself for a statically false test and
the comparison after it for a data-dependent branch (pyro's forecaster,
``while num_samples > 0:`` after ``assert isinstance(num_samples, int)``).

Only checks in the leading run of the body count: the docstring, ``assert`` statements, and
``if <test>: raise ...`` guards without ``else``, with plain assignments and expression
statements between them.  The run ends at the first other compound statement, at a
``return``, or where the parameter is rebound: a check after code that may return or loop says
nothing of the value that code saw.  Only the builtin types are read: the scalars (``int``,
``float``, ``bool``, ``str``, ``complex``) and the containers (``list``, ``tuple``, ``dict``,
``set``), one or a tuple of them; a check naming any other class says nothing here.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterator, Optional

import libcst as cst

from pt2lint.analysis.names import bound_names

SCALAR_TYPES = frozenset({"int", "float", "bool", "str", "complex"})
CONTAINER_TYPES = frozenset({"list", "tuple", "dict", "set"})

_MEMO: Dict[int, tuple] = {}
_MEMO_MAX = 4096  # entries keep their trees alive: bounded, for long-lived processes (the LSP server)


def checked_types(node: cst.FunctionDef) -> Dict[str, FrozenSet[str]]:
    """The builtin types the leading checks of ``node``'s body give its parameters.

    Args:
        node: a function definition.

    Returns:
        ``{parameter name: type names}``, e.g. ``{"num_samples": frozenset({"int"})}`` for a body
        that starts ``assert isinstance(num_samples, int) and num_samples > 0``; a parameter
        checked twice keeps the types both checks allow.  Parameters no leading check names
        are absent.
    """
    hit = _MEMO.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    params = _param_names(node)
    found: Dict[str, FrozenSet[str]] = {}
    rebound: set = set()
    for stmt in _leading_statements(node):
        for name, types in _checks(stmt):
            if name in params and name not in rebound:
                found[name] = found[name] & types if name in found else types
        rebound.update(n for n in bound_names([stmt]) if n in params)
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[id(node)] = (node, found)
    return found


def _param_names(node: cst.FunctionDef) -> set:
    p = node.params
    return {q.name.value for q in list(p.posonly_params) + list(p.params) + list(p.kwonly_params)}


def _leading_statements(node: cst.FunctionDef) -> Iterator[cst.CSTNode]:
    """The statements of the leading run (see the module docstring), in order."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue, cst.Global, cst.Nonlocal)):
                    return
                yield small
        elif isinstance(stmt, cst.SimpleStatementSuite):
            return
        elif isinstance(stmt, cst.If) and stmt.orelse is None and _raises(stmt.body):
            yield stmt
        else:
            return


def _raises(block: cst.BaseSuite) -> bool:
    """The block ends in a ``raise`` (whatever comes before it)."""
    stmts = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not stmts:
        return False
    last = stmts[-1]
    smalls = getattr(last, "body", None)
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and bool(smalls) and isinstance(smalls[-1], cst.Raise)


def _checks(stmt: cst.CSTNode) -> Iterator[tuple]:
    """``(name, types)`` for each ``isinstance`` check the statement makes hold after it."""
    if isinstance(stmt, cst.Assert):
        for part in _operands(stmt.test, cst.And):
            found = _isinstance(part)
            if found is not None:
                yield found
    elif isinstance(stmt, cst.If):
        # ``if not isinstance(n, int) or n < 0: raise``: past it, every disjunct is false
        for part in _operands(stmt.test, cst.Or):
            if isinstance(part, cst.UnaryOperation) and isinstance(part.operator, cst.Not):
                found = _isinstance(part.expression)
                if found is not None:
                    yield found


def _operands(test: cst.BaseExpression, operator: type) -> Iterator[cst.BaseExpression]:
    """The operands of a chain of ``and`` (``operator=cst.And``) or ``or`` (``cst.Or``) in
    ``test``, left to right; ``test`` itself when it is no such chain."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, operator):
        yield from _operands(test.left, operator)
        yield from _operands(test.right, operator)
    else:
        yield test


def _isinstance(expr: cst.BaseExpression) -> Optional[tuple]:
    """``(name, types)`` for ``isinstance(name, T)`` where ``T`` names builtin scalar or container
    types only (one or a tuple), else ``None``."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "isinstance"):
        return None
    if len(expr.args) != 2 or any(a.keyword is not None or a.star for a in expr.args):
        return None
    subject, classes = expr.args[0].value, expr.args[1].value
    if not isinstance(subject, cst.Name):
        return None
    elems = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
    names = [e.value for e in elems if isinstance(e, cst.Name)]
    if not elems or len(names) != len(elems) or not set(names) <= SCALAR_TYPES | CONTAINER_TYPES:
        return None
    return subject.value, frozenset(names)
