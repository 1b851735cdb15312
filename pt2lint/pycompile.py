"""CPython's verdict on a module text, without CPython's exponential code generation.

pt2lint compiles every file with CPython's compiler to report what Python itself would
refuse (``PTC001``): the parser's errors, and those only the symbol table and the code
generator find (``return`` outside a function, a duplicate argument, more than 20
nested blocks, ``break`` outside a loop, ...).  The code generator of CPython (3.11 and
later) emits every ``finally`` body once on the normal path, once on the exceptional
one, and once more for each ``return``, ``break`` and ``continue`` that leaves its
``try``: 20 nested ``try``/``finally`` (61 valid lines) make it emit the innermost
body 2**20 times, seconds and gigabytes, and a 22 KB file exhausts the memory.

:func:`compile_module` gives the same verdict at a cost linear in the text.  A text
without ``finally`` is compiled as it always was, and so is one whose copies of
``finally`` bodies add up to at most :data:`MAX_EXTRA_CHARS` characters of code
(:func:`plan_finally_bodies` estimates them from the AST).  Beyond that, the AST is
compiled instead, with each ``try ... finally: F`` whose copies of ``F`` are big
rewritten to ``try ... finally: pass`` followed by ``with None: F``.  That rewrite keeps
each error the code generator can raise: ``F`` is still compiled, inside exactly as many
blocks as the exceptional path's copy (the ``with`` block takes the place of the
``finally`` block; a ``try``/``except`` would add two for its handler), in the same
loops and function, after the ``try`` statement's other parts.

The verdict (compiles or not) is CPython's.  Which error is reported may differ when a
rewritten text holds several: CPython reports the first it meets, and it meets ``F``'s
copies in other places (the one a ``return`` in the ``try`` body emits; the one on the
normal path, a block less deep, where another statement may be the first too deep).
And a ``return`` inside a rewritten ``F`` in an ``except*`` block is reported without a
line, as CPython reports one inside any ``with`` block.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set

#: Characters of code, beyond the text's own, that copied ``finally`` bodies may add before a
#: text is rewritten (CPython generates code for about 2 MB of text per second).
MAX_EXTRA_CHARS = 500_000
#: A ``try`` statement whose ``finally`` body spans at most this many characters in all its
#: copies is compiled as it is, even in a text that is rewritten, so that most ``try``
#: statements keep CPython's exact order of errors; the rewritten text then costs at most
#: about 20 times its size.
KEEP_CHARS = 10_000
#: Costs are capped here (2**depth would otherwise grow without bound).
_CAP = 1 << 62

_JUMPS = (ast.Return, ast.Break, ast.Continue)
_TRY_TYPES = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)
_BLOCK_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NEWLINE = re.compile(r"\r\n?|\n")


def compile_module(source: str, filename: str) -> None:
    """Compile ``source`` as ``compile(source, filename, "exec", dont_inherit=True)`` does, and discard the code.

    Raises what that call raises for the text (``SyntaxError``, ``ValueError``,
    ``RecursionError``, ``MemoryError``, ``OverflowError``), at a cost linear in the
    text's size: see the module docstring for how ``finally`` bodies are kept from
    being compiled an exponential number of times.  SyntaxWarnings are not silenced
    here.
    """
    if "finally" not in source:
        compile(source, filename, "exec", dont_inherit=True)
        return
    try:
        tree = compile(source, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (RecursionError, MemoryError):  # too deep for Python objects: judge the text as before
        compile(source, filename, "exec", dont_inherit=True)
        return
    plan = plan_finally_bodies(tree, source)
    if plan.chars - len(source) <= MAX_EXTRA_CHARS:
        compile(source, filename, "exec", dont_inherit=True)
        return
    compile(finally_once(tree, plan.rewrite), filename, "exec", dont_inherit=True)


class FinallyPlan:
    """What :func:`plan_finally_bodies` found: ``chars`` (about how many characters of code
    CPython's code generation goes through, copies included; capped at 2**62) and
    ``rewrite`` (the ids of the ``try`` statements whose ``finally`` body is to be compiled once)."""

    __slots__ = ("chars", "rewrite")

    def __init__(self, chars: int, rewrite: Set[int]) -> None:
        self.chars, self.rewrite = chars, rewrite


def _blocks(node: ast.AST) -> List[ast.AST]:
    """The statements, handlers and cases directly under ``node``."""
    out: List[ast.AST] = []
    for field in _BLOCK_FIELDS:
        out.extend(getattr(node, field, ()))
    return out


def plan_finally_bodies(tree: ast.Module, source: str) -> FinallyPlan:
    """Estimate what code generation costs for ``tree`` (parsed from ``source``), and choose the
    ``try`` statements to rewrite.

    The cost is counted in characters of the text: a statement's own (its span less the
    statements under it), plus, for a ``try``, its ``finally`` body ``2 + j`` times, ``j``
    the ``return``, ``break`` and ``continue`` statements under the rest of the ``try``
    (an upper bound: some of them do not leave it).  Innermost first, a ``try`` whose
    ``finally`` body (as already planned) would cost more than :data:`KEEP_CHARS` in all
    its copies is chosen.  Only statements are visited, iteratively.
    """
    starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]  # the lines Python's tokenizer counts

    def offset(line: int, col: int) -> int:
        return starts[min(max(line, 1), len(starts)) - 1] + col

    def span(node: ast.AST) -> int:
        first = getattr(node, "pattern", node)  # a match_case has no position of its own
        last = node.body[-1] if isinstance(node, ast.match_case) else node
        try:
            return offset(last.end_lineno, last.end_col_offset) - offset(first.lineno, first.col_offset)
        except (AttributeError, TypeError):
            return 1

    order: List[ast.AST] = []
    stack: List[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(_blocks(node))
    plain: Dict[int, int] = {}  # as CPython would generate it
    kept: Dict[int, int] = {}  # once the chosen statements are rewritten
    jumps: Dict[int, int] = {}
    rewrite: Set[int] = set()
    for node in reversed(order):  # children before their parents
        children = _blocks(node)
        own = 0 if node is tree else max(1, span(node) - sum(span(c) for c in children))
        own_jumps = sum(jumps[id(c)] for c in children) + (1 if isinstance(node, _JUMPS) else 0)
        if isinstance(node, _TRY_TYPES) and node.finalbody:
            final = set(map(id, node.finalbody))
            rest = [id(c) for c in children if id(c) not in final]
            copies = 2 + sum(jumps[i] for i in rest)
            plain_total = own + sum(plain[i] for i in rest) + sum(plain[i] for i in final) * copies
            final_kept = sum(kept[i] for i in final)
            if final_kept * copies <= KEEP_CHARS:
                kept_total = own + sum(kept[i] for i in rest) + final_kept * copies
            else:
                rewrite.add(id(node))
                kept_total = own + sum(kept[i] for i in rest) + final_kept
        else:
            plain_total = own + sum(plain[id(c)] for c in children)
            kept_total = own + sum(kept[id(c)] for c in children)
        plain[id(node)] = min(plain_total, _CAP)
        kept[id(node)] = min(kept_total, _CAP)
        jumps[id(node)] = own_jumps
    return FinallyPlan(plain[id(tree)], rewrite)


def _last_statement(body: List[ast.stmt]) -> ast.stmt:
    """The statement of ``body`` code generation visits last (where it leaves its location)."""
    stmt = body[-1]
    while not isinstance(stmt, _SCOPES):  # a function or class body is another code object
        inner = [b for b in (getattr(stmt, f, None) for f in ("finalbody", "orelse", "handlers", "body")) if b]
        if not inner:
            return stmt
        last = inner[0][-1]
        if isinstance(last, ast.excepthandler):
            last = last.body[-1]
        if not isinstance(last, ast.stmt):
            return stmt
        stmt = last
    return stmt


def finally_once(tree: ast.Module, rewrite: Optional[Set[int]] = None) -> ast.Module:
    """``tree`` with each ``try ... finally: F`` (those whose ``id`` is in ``rewrite``; all when
    it is ``None``) turned into ``try ... finally: pass`` then ``with None: F``, in place
    (returned for convenience).  The ``pass`` stands where ``F`` ends, since emitting ``F``
    leaves code generation's position there.  Only statement lists are visited, iteratively."""
    stack: List[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for field, value in ast.iter_fields(node):
            if not isinstance(value, list):
                continue
            if value and isinstance(value[0], ast.stmt):
                new: List[ast.stmt] = []
                for stmt in value:
                    new.append(stmt)
                    if isinstance(stmt, _TRY_TYPES) and stmt.finalbody and (rewrite is None or id(stmt) in rewrite):
                        body = stmt.finalbody
                        stmt.finalbody = [ast.copy_location(ast.Pass(), _last_statement(body))]
                        item = ast.withitem(context_expr=ast.copy_location(ast.Constant(value=None), body[0]))
                        new.append(ast.copy_location(ast.With(items=[item], body=body), body[0]))
                setattr(node, field, new)
            stack.extend(v for v in getattr(node, field) if isinstance(v, (ast.stmt, ast.excepthandler, ast.match_case)))
    return tree
