"""The ``full`` output format: each finding with the source lines around it, like ruff's ``full``.

::

    models/net.py:7:13: PTC101 `.item()` on a tensor breaks the graph [fix available]
      |
    6 |     def forward(self, x):
    7 |         n = x.sum().item()
      |             ^^^^^^^^^^^^^^ PTC101
    8 |         return x * n
      |
      = in: Net.forward
      = help: keep the value as a 0-d tensor
"""

from __future__ import annotations

import unicodedata
from typing import List, Sequence

from pt2lint.diagnostics import Diagnostic
from pt2lint.lines import lines_of
from pt2lint.reading import printable
from pt2lint.reporters import ELLIPSIS, ReportContext, clip_line, line_window, register
from pt2lint.reporters.text import format_line

CONTEXT_LINES = 2


def shown_source(text: str) -> str:
    """A source line as printed: control characters escaped (``\\x1b``), tabs kept."""
    return "".join(ch if ch == "\t" else printable(ch) for ch in text)


def char_width(ch: str) -> int:
    """Terminal columns of one printable character: 0 for a combining mark or a format
    character (ZWJ, variation selectors), 2 for East Asian wide and fullwidth ones
    (``unicodedata.east_asian_width`` ``W``/``F``: CJK, most emoji), else 1."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Terminal columns of ``text`` as printed (see :func:`shown_source`, :func:`char_width`)."""
    return sum(char_width(ch) for ch in shown_source(text))


def _caret_prefix(text: str) -> str:
    """Blank out ``text`` (as printed) for the caret line: each character becomes as many
    spaces as the columns it takes, and tabs stay tabs, so the carets line up under it."""
    return "".join(ch if ch == "\t" else " " * char_width(ch) for ch in shown_source(text))


def render_one(d: Diagnostic, source: str) -> str:
    """One finding with up to :data:`CONTEXT_LINES` lines of context either side.

    A line longer than :data:`pt2lint.reporters.SHOWN_LINE_CHARS` is shown as a window
    around the finding's columns, with an ellipsis where it is cut.

    Args:
        d: the finding (1-based lines and character columns; end exclusive).
        source: the file's text; when empty or too short, only the header
            and notes are shown.
    """
    out: List[str] = [format_line(d)]  # source lines and notes are printed with control characters escaped
    lines = lines_of(source)  # numbered as Python numbers lines, not as str.splitlines
    row = d.start.line
    if 1 <= row <= len(lines):
        first = max(1, row - CONTEXT_LINES)
        last = min(len(lines), row + CONTEXT_LINES)
        width = len(str(last))
        gutter = " " * width
        out.append(f"{gutter} |")
        column = max(d.start.column - 1, 0)
        for n in range(first, last + 1):
            text = lines.text(n)
            if n == row:
                start = min(column, len(text))
                end = max(start, min(d.end.column - 1 if d.end.line == row else len(text), len(text)))
            else:
                start = end = column
            a, b = line_window(len(text), start, end)  # a long line is shown around the finding
            out.append(f"{n:>{width}} | {shown_source(clip_line(text, a, b))}".rstrip())
            if n == row:
                start, end = max(start, a), min(end, b)
                length = max(display_width(text[start:end]), 1)
                lead = ELLIPSIS if a > 0 else ""
                out.append(f"{gutter} | {_caret_prefix(lead + text[a:start])}{'^' * length} {d.code}")
        out.append(f"{gutter} |")
        note_prefix = f"{gutter} = "
    else:
        note_prefix = "  = "
    notes = len(out)
    if d.symbol:
        via = f" (via {' -> '.join(d.call_chain)})" if d.call_chain else ""
        out.append(f"{note_prefix}in: {d.symbol}{via}")
        if d.call_sites and any(s[1] != d.filename for s in d.call_sites):
            for s in d.call_sites:
                out.append(f"{note_prefix}called from: {s[1]}:{s[2]}:{s[3]} ({s[0]})")
    if d.gb_types:
        out.append(f"{note_prefix}graph-break types: {', '.join(d.gb_types)}")
    if d.fix is not None and d.fix.message:
        out.append(f"{note_prefix}help: {d.fix.message}")
    if d.confirm is not None:
        detail = f": {d.confirm.detail}" if d.confirm.detail else ""
        out.append(f"{note_prefix}confirm: {d.confirm.status}{detail}")
        if d.confirm.module:
            out.append(f"{note_prefix}module: {d.confirm.module}")
        if d.confirm.next_step:
            out.append(f"{note_prefix}next: {d.confirm.next_step}")
    out[notes:] = [printable(line) for line in out[notes:]]
    return "\n".join(out) + "\n"


@register("full", needs_source=True, description="each finding with the source lines around it and notes")
def render_full(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """Every finding as a :func:`render_one` block, separated by blank lines."""
    return "\n".join(render_one(d, context.sources.get(d.filename, "")) for d in diagnostics)
