"""One line model for every line-based edit and report, matching CPython's.

CPython's tokenizer ends a physical line only at ``\\n``, ``\\r\\n`` or ``\\r``
(the Python Language Reference, "Lexical analysis: physical lines").  LibCST's
positions and ``ast`` line numbers count lines the same way.  ``str.splitlines()``
does not: it also breaks at ``\\v`` (``\\x0b``), ``\\f`` (``\\x0c``), ``\\x1c``,
``\\x1d``, ``\\x1e``, ``\\x85``, U+2028 and U+2029, all of which CPython accepts
inside a comment or a string (and ``\\f`` in indentation) without starting a new
line.  Line *N* of ``splitlines()`` is then not line *N* of a finding, and an edit
made there lands on the wrong statement.  Everything in pt2lint that numbers
lines goes through :class:`SourceLines` instead.

The Language Server Protocol counts lines the same way (LSP 3.17, "Text
Documents": ``\\n``, ``\\r\\n`` and ``\\r`` are the line ends), so LSP positions use
this model too.
"""

from __future__ import annotations

import bisect
import functools
import io
import re
import tokenize
from typing import Dict, Iterator, List, Tuple

#: The line ends CPython's tokenizer (and the LSP) recognise, longest first.
LINE_END = re.compile(r"\r\n|\r|\n")

__all__ = [
    "LINE_END", "FormFeedCuts", "SourceLines", "cut_form_feeds", "line_end_of", "lines_of", "split_lines",
    "strip_line_end", "tokens",
]


def split_lines(source: str) -> List[str]:
    """``source`` cut into physical lines as CPython counts them, each keeping its line end.

    ``"".join(split_lines(s)) == s`` always holds.  A text ending with a line end
    has no empty last line (as ``str.splitlines(keepends=True)``); an empty text
    has no lines.
    """
    out: List[str] = []
    pos = 0
    for m in LINE_END.finditer(source):
        out.append(source[pos:m.end()])
        pos = m.end()
    if pos < len(source):
        out.append(source[pos:])
    return out


def line_end_of(line: str) -> str:
    """The line end (``"\\r\\n"``, ``"\\r"``, ``"\\n"`` or ``""``) a line from :func:`split_lines` carries."""
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\r", "\n")):
        return line[-1]
    return ""


def strip_line_end(line: str) -> str:
    """``line`` without its line end (only ``\\r\\n``, ``\\r`` or ``\\n``; a form feed or U+2028 stays)."""
    return line[: len(line) - len(line_end_of(line))]


class SourceLines:
    """The physical lines of a text and the character offsets where they start.

    Args:
        source: the text (any mix of ``\\n``, ``\\r\\n`` and ``\\r`` line ends).

    Lines are numbered from 1 and columns are 1-based character (code point)
    columns, as pt2lint's :class:`~pt2lint.diagnostics.Position`.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.raw: List[str] = split_lines(source)
        starts = [0]
        for ln in self.raw:
            starts.append(starts[-1] + len(ln))
        self.starts: List[int] = starts  # starts[n - 1]: offset of line n; starts[-1] == len(source)

    def __len__(self) -> int:
        return len(self.raw)

    def text(self, line: int) -> str:
        """Line ``line`` (1-based) without its line end; ``""`` for a line that does not exist."""
        if 1 <= line <= len(self.raw):
            return strip_line_end(self.raw[line - 1])
        return ""

    def texts(self) -> List[str]:
        """Every line without its line end (what ``splitlines()`` should have given)."""
        return [strip_line_end(ln) for ln in self.raw]

    def ending(self, line: int) -> str:
        """The line end of line ``line`` (``""`` for the last line without one, or no such line)."""
        if 1 <= line <= len(self.raw):
            return line_end_of(self.raw[line - 1])
        return ""

    def offset(self, line: int, column: int) -> int:
        """The character offset of 1-based ``(line, column)``, clamped into the text.

        A line before the first is offset 0, one after the last is the end of the
        text; a column past the line's end is the offset of its line end.
        """
        if line < 1:
            return 0
        if line > len(self.raw):
            return len(self.source)
        body = len(strip_line_end(self.raw[line - 1]))
        return self.starts[line - 1] + min(max(column - 1, 0), body)

    def position(self, offset: int) -> Tuple[int, int]:
        """The 1-based ``(line, column)`` of a character offset (clamped into the text)."""
        offset = min(max(offset, 0), len(self.source))
        if not self.raw:
            return 1, 1
        n = bisect.bisect_right(self.starts, offset) - 1
        n = min(n, len(self.raw) - 1)
        return n + 1, offset - self.starts[n] + 1


@functools.lru_cache(maxsize=8)
def lines_of(source: str) -> "SourceLines":
    """A shared :class:`SourceLines` of ``source`` (the last few texts are kept: reporters ask
    for one line per finding, many findings per file).  Treat it as read-only."""
    return SourceLines(source)


def tokens(source: str) -> Iterator[tokenize.TokenInfo]:
    """The tokens of ``source`` with positions in this line model.

    The pure-Python ``tokenize`` module reads lines with ``readline``; a
    ``StringIO`` splits only at ``\\n``, so a lone ``\\r`` line end would merge two
    lines.  Each line is fed whole (line ends as CPython sees them, normalised to
    ``\\n``, which changes no line number or column).

    Raises:
        tokenize.TokenError, IndentationError, SyntaxError: as ``tokenize`` does.
    """
    normalised = "".join(strip_line_end(ln) + ("\n" if line_end_of(ln) else "") for ln in split_lines(source))
    return tokenize.generate_tokens(io.StringIO(normalised).readline)


#: ``line -> characters cut`` from the start of that line by :func:`cut_form_feeds`.
FormFeedCuts = Dict[int, int]

_NOT_CODE = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
                       tokenize.ENCODING, tokenize.ENDMARKER})


def cut_form_feeds(source: str) -> Tuple[str, FormFeedCuts]:
    """``source`` with a form feed in a statement's indentation cut away, for LibCST.

    CPython's tokenizer resets the indentation column to 0 at a form feed (``\\f``) in the
    leading whitespace of a line (``tokenizer.c``: "Control-L (formfeed) ... col = altcol = 0"),
    so ``"\\f    if x:"`` is indented by 4.  LibCST rejects such a block ("no matching outer
    block for dedent"), or parses a statement that starts with one but drops the form feed.
    Here every line on which a statement starts (a logical line's first token: not a blank or
    comment-only line, not a line inside brackets or a string) and whose leading whitespace holds
    a form feed loses that whitespace up to and including its last form feed: what is left is
    spaces and tabs that give CPython's column, so the blocks are the ones CPython sees.  Line
    numbers do not change; columns on a cut line move left by the cut.

    Returns:
        ``(text, cuts)``: the text LibCST can read and ``line -> characters cut`` (empty, with
        ``source`` itself, when no statement is indented with a form feed, or when the text
        does not tokenize: then CPython rejects it anyway).
    """
    if "\f" not in source:
        return source, {}
    lines = split_lines(source)
    cuts: FormFeedCuts = {}
    at_start = True
    try:
        for tok in tokens(source):
            if tok.type == tokenize.NEWLINE:
                at_start = True
                continue
            if tok.type in _NOT_CODE or not at_start:
                continue
            at_start = False
            row, col = tok.start
            leading = lines[row - 1][:col] if row <= len(lines) else ""
            if "\f" in leading and not leading.strip(" \t\f"):
                cuts[row] = leading.rindex("\f") + 1
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return source, {}
    if not cuts:
        return source, {}
    out = [ln[cuts[n]:] if n in cuts else ln for n, ln in enumerate(lines, 1)]
    return "".join(out), cuts
