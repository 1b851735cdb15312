"""Source positions for the few nodes that become findings, without a whole-module codegen.

LibCST nodes carry no positions; its ``PositionProvider`` regenerates the whole
module to compute them, which costs about as much as parsing it.  Findings are
few, so we anchor each finding's *statement* with CPython's ``ast`` (whose
statements map one-to-one onto LibCST's: a ``SimpleStatementLine`` holds one
``ast`` statement per small statement) and run ``PositionProvider`` on a
one-statement module only.  Every computed position is checked against the
source text; on any disagreement the caller falls back to the full provider.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from pt2lint.lines import split_lines

Point = Tuple[int, int]  # (1-based line, 0-based character column)


class PositionMismatch(Exception):
    """The ``ast`` and LibCST statement trees did not line up, or a position failed its check."""


def _small_count(stmt: cst.BaseStatement) -> int:
    if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return len(stmt.body)
    return 1


def _cst_blocks(stmt: cst.CSTNode) -> List[List[cst.BaseStatement]]:
    def body(b) -> List[cst.BaseStatement]:
        if isinstance(b, cst.IndentedBlock):
            return list(b.body)
        if isinstance(b, cst.SimpleStatementSuite):
            return [b]
        return []

    out: List[List[cst.BaseStatement]] = []
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef, cst.With)):
        out.append(body(stmt.body))
    elif isinstance(stmt, (cst.For, cst.While)):
        out.append(body(stmt.body))
        if stmt.orelse is not None:
            out.append(body(stmt.orelse.body))
    elif isinstance(stmt, cst.If):
        out.append(body(stmt.body))
        if isinstance(stmt.orelse, cst.If):
            out.append([stmt.orelse])
        elif stmt.orelse is not None:
            out.append(body(stmt.orelse.body))
    elif isinstance(stmt, (cst.Try, cst.TryStar)):
        out.append(body(stmt.body))
        for h in stmt.handlers:
            out.append(body(h.body))
        if stmt.orelse is not None:
            out.append(body(stmt.orelse.body))
        if stmt.finalbody is not None:
            out.append(body(stmt.finalbody.body))
    elif isinstance(stmt, cst.Match):
        for case in stmt.cases:
            out.append(body(case.body))
    return out


def _ast_blocks(node: ast.stmt) -> List[List[ast.stmt]]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)):
        return [node.body]
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        return [node.body] + ([node.orelse] if node.orelse else [])
    if isinstance(node, ast.If):
        return [node.body] + ([node.orelse] if node.orelse else [])
    if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
        return [node.body] + [h.body for h in node.handlers] + ([node.orelse] if node.orelse else []) + (
            [node.finalbody] if node.finalbody else []
        )
    if isinstance(node, ast.Match):
        return [c.body for c in node.cases]
    return []


class StatementAnchors:
    """Start points of LibCST statements, read off CPython's ``ast`` of the same source."""

    def __init__(self, module: cst.Module, source: str) -> None:
        self.lines = split_lines(source)  # as CPython (and so ast) numbers lines
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise PositionMismatch(str(exc)) from None
        self.starts: Dict[int, ast.stmt] = {}
        self._pair(list(module.body), tree.body)

    def _pair(self, cst_stmts: List[cst.BaseStatement], ast_stmts: List[ast.stmt]) -> None:
        i = 0
        for stmt in cst_stmts:
            n = _small_count(stmt)
            if i + n > len(ast_stmts):
                raise PositionMismatch("statement counts differ")
            first = ast_stmts[i]
            self.starts[id(stmt)] = first
            if n == 1 and not isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                cblocks, ablocks = _cst_blocks(stmt), _ast_blocks(first)
                if len(cblocks) != len(ablocks):
                    raise PositionMismatch("block counts differ")
                for cb, ab in zip(cblocks, ablocks):
                    self._pair(cb, ab)
            i += n
        if i != len(ast_stmts):
            raise PositionMismatch("statement counts differ")

    def char_col(self, line: int, byte_col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


class LazyPositions:
    """Positions of finding nodes, computed per statement (see the module docstring)."""

    def __init__(self, module: cst.Module, source: str) -> None:
        self.module = module
        self.source = source
        self.anchors = StatementAnchors(module, source)

    def _check(self, point: Point, text: str) -> None:
        line, col = point
        lines = self.anchors.lines
        if not (0 < line <= len(lines)):
            raise PositionMismatch("line out of range")
        first = text.split("\n", 1)[0][:30]
        if first and not lines[line - 1][col:].startswith(first):
            raise PositionMismatch("text check failed")

    def ranges(self, stmt: cst.CSTNode, header: Optional[cst.CSTNode], nodes: List[cst.CSTNode]) -> Dict[int, CodeRange]:
        """Absolute ``CodeRange`` (LibCST convention: 1-based lines, 0-based columns) of ``nodes``,
        which all lie in ``stmt`` (in its ``header`` expression for a compound statement)."""
        anchor = self.anchors.starts.get(id(stmt))
        if anchor is None:
            raise PositionMismatch("statement not anchored")
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            mini = cst.Module(body=[cst.SimpleStatementLine(body=list(stmt.body))]) if isinstance(stmt, cst.SimpleStatementSuite) else cst.Module(body=[stmt])
            root: cst.CSTNode = mini.body[0]
            base_line, base_col = anchor.lineno, self.anchors.char_col(anchor.lineno, anchor.col_offset)
        else:
            if header is None:
                raise PositionMismatch("no header")
            mini = cst.Module(body=[cst.SimpleStatementLine(body=[cst.Expr(value=header)])])
            root = header
            ast_expr = _ast_header(anchor, stmt, header)
            if ast_expr is None:
                raise PositionMismatch("header not anchored")
            base_line, base_col = ast_expr.lineno, self.anchors.char_col(ast_expr.lineno, ast_expr.col_offset)
        positions = MetadataWrapper(mini, unsafe_skip_copy=True).resolve(PositionProvider)
        code = mini.code
        code_lines = split_lines(code)
        rstart = positions[root].start
        # ast anchors exclude enclosing parentheses; skip them in the mini module as well
        lead = 0
        own_parens = len(getattr(header, "lpar", ())) if root is header else 0
        if own_parens:
            first = code_lines[rstart.line - 1][rstart.column:]
            k = 0
            for _ in range(own_parens):
                while k < len(first) and first[k] in " \t":
                    k += 1
                if k >= len(first) or first[k] != "(":
                    raise PositionMismatch("parentheses not where expected")
                k += 1
            while k < len(first) and first[k] in " \t":
                k += 1
            if k >= len(first) or first[k] in "\r\n":
                raise PositionMismatch("multi-line parenthesised header")
            lead = k

        src_lines = self.anchors.lines

        def absolute(line: int, col: int) -> Point:
            dl = line - rstart.line
            if dl == 0:
                return base_line, base_col + (col - rstart.column - lead)
            # A continuation line is the source line, less the block indentation when
            # LibCST re-creates it (ParenthesizedWhitespace(indent=True)).
            src = src_lines[base_line + dl - 1] if base_line + dl - 1 < len(src_lines) else ""
            mini_line = code_lines[line - 1] if line - 1 < len(code_lines) else ""
            shift = (len(src) - len(src.lstrip(" \t"))) - (len(mini_line) - len(mini_line.lstrip(" \t")))
            return base_line + dl, col + max(shift, 0)

        out: Dict[int, CodeRange] = {}
        for node in nodes:
            r = positions.get(node)
            if r is None:
                raise PositionMismatch("node not in statement")
            if root is header and own_parens and node is header:
                # the header's own parentheses: the ast anchor starts inside them
                s = absolute(r.start.line, r.start.column + lead)
                e = absolute(r.end.line, r.end.column)
                node_text = code_lines[r.start.line - 1][r.start.column + lead:]
            else:
                s = absolute(r.start.line, r.start.column)
                e = absolute(r.end.line, r.end.column)
                node_text = code_lines[r.start.line - 1][r.start.column:]
            self._check(s, node_text)
            out[id(node)] = CodeRange((s[0], s[1]), (e[0], e[1]))
        return out


def _ast_header(anchor: ast.stmt, stmt: cst.CSTNode, header: cst.CSTNode) -> Optional[ast.expr]:
    if isinstance(stmt, (cst.If, cst.While)) and header is stmt.test:
        return anchor.test
    if isinstance(stmt, cst.For) and header is stmt.iter:
        return anchor.iter
    if isinstance(stmt, cst.With) and isinstance(anchor, (ast.With, ast.AsyncWith)):
        for item, a_item in zip(stmt.items, anchor.items):
            if item.item is header:
                return a_item.context_expr
    return None
