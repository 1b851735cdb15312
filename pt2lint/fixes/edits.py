"""Text edits from LibCST rewrites, and applying fixes to a text.

A codemod rewrites nodes; the finding must carry text :class:`~pt2lint.diagnostics.Edit`\\ s
(1-based lines and character columns, end exclusive) so that JSON, the LSP and
``pt2lint fix`` share one representation.  Rendering a whole module per fix is
slow on large files, so :func:`replace_statements` renders only the statements it
replaces, at their indentation, and checks that the old rendering is exactly
the text found at the given line (LibCST round-trips source byte for byte);
when that check fails it falls back to a line diff of the whole module.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from pt2lint.diagnostics import Edit, Fix, Position

_NEWLINE = re.compile(r"\r\n|\r|\n")


def sole_small_statement(block: cst.BaseSuite) -> Optional[cst.BaseSmallStatement]:
    """The one small statement that is the whole of ``block`` (``x = y``, ``raise E``), else ``None``.

    ``block`` is an indented block holding one simple statement line with one statement, or
    a same-line suite (``if t: raise E``) with one statement.
    """
    if isinstance(block, cst.IndentedBlock):
        if len(block.body) != 1 or not isinstance(block.body[0], cst.SimpleStatementLine):
            return None
        smalls = block.body[0].body
    elif isinstance(block, cst.SimpleStatementSuite):
        smalls = block.body
    else:
        return None
    return smalls[0] if len(smalls) == 1 else None


def line_starts(text: str) -> List[int]:
    """Offsets where each line of ``text`` starts (Python's newlines: ``\\n``, ``\\r\\n``, ``\\r``)."""
    starts = [0]
    starts.extend(m.end() for m in _NEWLINE.finditer(text))
    return starts


def split_keepends(text: str) -> List[str]:
    """Lines of ``text`` with their line endings, split only at Python's newlines (not at form feeds)."""
    starts = line_starts(text)
    out = [text[a:b] for a, b in zip(starts, starts[1:])]
    if starts[-1] < len(text):
        out.append(text[starts[-1]:])
    return out


def offset(starts: Sequence[int], text_len: int, pos: Position) -> int:
    """Character offset of a 1-based (line, column) position; positions past the end clamp to it."""
    if pos.line - 1 >= len(starts):
        return text_len
    return min(starts[pos.line - 1] + pos.column - 1, text_len)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (any order) to ``text``.

    Raises:
        ValueError: two edits overlap.
    """
    starts = line_starts(text)
    spans = sorted(
        ((offset(starts, len(text), e.start), offset(starts, len(text), e.end), e.content) for e in edits),
        key=lambda s: (s[0], s[1]),
    )
    out: List[str] = []
    last = 0
    for a, b, content in spans:
        if a < last:
            raise ValueError("overlapping edits")
        out.append(text[last:a])
        out.append(content)
        last = b
    out.append(text[last:])
    return "".join(out)


def _spans(text: str, fix: Fix) -> List[Tuple[int, int]]:
    starts = line_starts(text)
    return [(offset(starts, len(text), e.start), offset(starts, len(text), e.end)) for e in fix.edits]


def _overlaps(a: Tuple[int, int], b: Tuple[int, int]) -> bool:
    if a[0] == a[1] == b[0] == b[1]:
        return True  # two insertions at one point: order would be ambiguous
    return a[0] < b[1] and b[0] < a[1]


def apply_fixes(
    text: str,
    fixes: Sequence[Fix],
    join: Optional[Callable[[Sequence[str]], Optional[str]]] = None,
) -> Tuple[str, List[Fix]]:
    """Apply as many of ``fixes`` as do not overlap an earlier one, in the given order.

    Identical fixes (two findings on one statement share a rewrite) are applied once.

    Two pure insertions at one point overlap (their order would be ambiguous) unless ``join``
    composes them: called with the contents of every insertion at that point, in the order of
    ``fixes``, it returns the one text that makes them all, or ``None`` when they do not compose
    (then the later fix waits for the next round, as without ``join``).  The check codemod's op
    definitions, all written after the imports, compose this way
    (:func:`pt2lint.fixes.check_op.join_insertions`).

    Returns:
        ``(new text, fixes applied)``.
    """
    chosen: List[Fix] = []
    taken: List[Tuple[int, int]] = []
    seen = set()
    edits: List[Edit] = []
    inserted: Dict[int, List[str]] = {}  # offset -> contents of the fixes' sole insertions there, in order
    for fix in fixes:
        if not fix.edits:
            continue
        key = fix.edits
        if key in seen:
            chosen.append(fix)
            continue
        spans = _spans(text, fix)
        points = [a for a, b in spans if a == b]
        sole = {a for a in points if points.count(a) == 1} if join is not None else set()
        joined: Dict[int, List[str]] = {}
        clash = False
        for span, edit in zip(spans, fix.edits):
            a = span[0]
            if a in sole and a in inserted and not any(_overlaps(span, b) for b in taken if b[0] != b[1]):
                joined[a] = inserted[a] + [edit.content]
            elif any(_overlaps(span, b) for b in taken):
                clash = True
                break
        if clash or any(join(contents) is None for contents in joined.values()):  # type: ignore[misc]
            continue
        seen.add(key)
        taken.extend(spans)
        for span, edit in zip(spans, fix.edits):
            if span[0] in sole and span[0] not in joined:
                inserted[span[0]] = [edit.content]
        inserted.update(joined)
        edits.extend(fix.edits)
        chosen.append(fix)
    if any(len(c) > 1 for c in inserted.values()):
        edits = _join_insertions(text, edits, inserted, join)  # type: ignore[arg-type]
    return apply_edits(text, edits), chosen


def _join_insertions(text: str, edits: Sequence[Edit], inserted: Dict[int, List[str]], join: Callable[[Sequence[str]], Optional[str]]) -> List[Edit]:
    """``edits`` with the insertions at each point of ``inserted`` that holds several replaced by one
    edit of their joined text (at the place of the first)."""
    starts = line_starts(text)
    out: List[Edit] = []
    done = set()
    for e in edits:
        a, b = offset(starts, len(text), e.start), offset(starts, len(text), e.end)
        if a == b and len(inserted.get(a, ())) > 1:
            if a not in done:
                done.add(a)
                content = join(inserted[a])
                if content is None:  # accepted above, so a join that changed its mind
                    raise ValueError("insertions that composed no longer do")
                out.append(Edit(e.start, e.end, content))
            continue
        out.append(e)
    return out


def diff_edits(old: str, new: str) -> Tuple[Edit, ...]:
    """Whole-line edits turning ``old`` into ``new`` (difflib opcodes, one edit per changed hunk).

    Lines are compared without their line endings: LibCST renders a module with one newline,
    so a file mixing ``\r\n``, ``\r`` and ``\n`` would otherwise get every line it did not
    change rewritten to that newline.  Unchanged lines keep their own endings."""
    a = split_keepends(old)
    b = split_keepends(new)
    out: List[Edit] = []
    bare_a = [line.rstrip("\r\n") for line in a]
    bare_b = [line.rstrip("\r\n") for line in b]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, bare_a, bare_b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        out.append(Edit(Position(i1 + 1, 1), Position(i2 + 1, 1), "".join(b[j1:j2])))
    return tuple(out)


def _module_like(module: cst.Module, body: Sequence[cst.CSTNode]) -> cst.Module:
    return cst.Module(
        body=list(body),
        header=(),
        footer=(),
        encoding=module.encoding,
        default_indent=block_indent(module),
        default_newline=module.default_newline,
        has_trailing_newline=True,
    )


def render_statements(module: cst.Module, stmts: Sequence[cst.BaseStatement], indent: str) -> str:
    """Source text of ``stmts`` as they would appear at absolute indentation ``indent`` in ``module``.

    The statements are rendered inside a synthetic block whose indentation is
    ``indent``, so nested blocks and multi-line strings come out exactly as
    LibCST writes them in place.
    """
    if not indent:
        return _module_like(module, stmts).code
    holder = cst.If(test=cst.Name("_"), body=cst.IndentedBlock(body=list(stmts), indent=indent))
    code = _module_like(module, [holder]).code
    first = _NEWLINE.search(code)
    return code[first.end():] if first else ""


def render_orelse(module: cst.Module, orelse: cst.CSTNode, indent: str) -> str:
    """Source text of an ``elif``/``else`` clause at absolute indentation ``indent``."""
    holder = cst.If(
        test=cst.Name("_"),
        body=cst.IndentedBlock(body=[cst.SimpleStatementLine([cst.Pass()])], indent=module.default_indent),
        orelse=orelse,  # type: ignore[arg-type]
    )
    code = render_statements(module, [holder], indent)
    breaks = list(_NEWLINE.finditer(code))
    # drop the holder's "if _:" and "pass" lines: the clause starts on the third line
    return code[breaks[1].end():] if len(breaks) >= 2 else ""


def block_indent(module: cst.Module) -> str:
    """The indentation a new block adds in ``module``: LibCST's ``default_indent`` without form feeds.

    LibCST takes the first indented line's whitespace, form feed included (``"\f    "`` for a
    line that starts with one), but CPython resets the column at a form feed, so a block
    indented by it again (``"\f    \f    "``) would sit at the column of its header.
    """
    indent = module.default_indent.rsplit("\f", 1)[-1]
    return indent or "    "


def _count_lines(text: str) -> int:
    return len(_NEWLINE.findall(text))


def indentation_at(lines: Sequence[str], line: int) -> Optional[str]:
    """The leading whitespace of 1-based ``line``, or ``None`` past the end."""
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    return text[: len(text) - len(text.lstrip(" \t\f"))]


def span_edit(
    source: str,
    starts: Sequence[int],
    line: int,
    old_text: str,
    new_text: str,
) -> Optional[Edit]:
    """An edit replacing ``old_text`` found at the start of 1-based ``line`` by ``new_text``.

    Returns ``None`` when the source at that line is not exactly ``old_text``
    (then the caller falls back to :func:`diff_edits`).
    """
    if not 1 <= line <= len(starts):
        return None
    begin = starts[line - 1]
    if source[begin: begin + len(old_text)] != old_text or not old_text:
        return None
    end_line = line + _count_lines(old_text)
    if not old_text.endswith(("\n", "\r")):
        return None
    return Edit(Position(line, 1), Position(end_line, 1), new_text)


_ALL_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _has_comment(node: cst.CSTNode) -> bool:
    """Whether a ``Comment`` node lies anywhere in ``node`` (whitespace fields included).

    Reads the dataclass fields directly: ``CSTNode.children`` rebuilds every node it lists,
    which made looking for comments cost more than rendering the code.  Every child node
    is a field value (or in a list or tuple field), so this finds exactly what a walk over
    ``children`` finds.
    """
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Comment):
            return True
        names = _ALL_FIELDS.get(type(n))
        if names is None:
            names = _ALL_FIELDS[type(n)] = tuple(f.name for f in dataclasses.fields(n))
        for name in names:
            value = getattr(n, name)
            if isinstance(value, cst.CSTNode):
                stack.append(value)
            elif isinstance(value, (list, tuple)):
                stack.extend(item for item in value if isinstance(item, cst.CSTNode))
    return False


def comment_lines(node: cst.CSTNode) -> List[cst.EmptyLine]:
    """Every comment inside ``node`` (in whitespace, headers, trailing), as own-line comments,
    in source order."""
    if not _has_comment(node):
        return []
    out: List[cst.EmptyLine] = []
    seen = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Comment) and id(n) not in seen:
            seen.add(id(n))
            out.append(cst.EmptyLine(comment=n))
        stack.extend(reversed(n.children))
    return out


def lost_comments(old: cst.CSTNode, new: cst.CSTNode) -> List[cst.EmptyLine]:
    """Comments of ``old`` that a rewrite into ``new`` dropped (to be put back on their own lines)."""
    lines = comment_lines(old)
    if not lines:
        return []
    kept = {id(line.comment) for line in comment_lines(new)}
    return [line for line in lines if id(line.comment) not in kept]


def strip_leading_lines(stmt: cst.BaseStatement) -> cst.BaseStatement:
    """``stmt`` without the comment/blank lines LibCST attaches above it."""
    if getattr(stmt, "leading_lines", None):
        return stmt.with_changes(leading_lines=())
    return stmt


__all__ = [
    "apply_edits",
    "comment_lines",
    "lost_comments",
    "apply_fixes",
    "diff_edits",
    "indentation_at",
    "line_starts",
    "render_orelse",
    "render_statements",
    "span_edit",
    "strip_leading_lines",
]
