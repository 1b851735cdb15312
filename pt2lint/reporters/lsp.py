"""The ``lsp`` output format, and the one conversion from findings to LSP ``Diagnostic`` objects.

Editors that run a command instead of a language server read this format:
a JSON array of ``PublishDiagnosticsParams`` (``{"uri", "diagnostics"}``), one per
checked file, with LSP 3.17 ``Diagnostic`` objects whose positions are 0-based
and counted in UTF-16 code units (the LSP default).  The language server
(:mod:`pt2lint.lsp`) builds its diagnostics with the same functions, so the
command and the server never disagree.

Each diagnostic's ``data`` carries what a code action needs without linting
again: the rule name, the line a suppression comment goes on, and the fix
(its message, applicability and edits as LSP ``TextEdit`` objects).
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any, Dict, List, Optional, Sequence

from pt2lint.diagnostics import Diagnostic, Fix, Position, rule_url
from pt2lint.lines import SourceLines
from pt2lint.reporters import ReportContext, register

SOURCE = "pt2lint"

#: LSP ``DiagnosticSeverity`` values by pt2lint severity.
SEVERITY = {"error": 1, "warning": 2, "info": 3, "hint": 4}

#: Codes whose findings point at code that can be deleted (LSP ``DiagnosticTag.Unnecessary``).
UNNECESSARY_CODES = frozenset({"PTC002"})

ENCODINGS = ("utf-16", "utf-8", "utf-32")


def _units(text: str, encoding: str) -> int:
    """Length of ``text`` in code units of ``encoding`` (``utf-16``, ``utf-8`` or ``utf-32``)."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class LineIndex:
    """Converts pt2lint positions (1-based line, 1-based character column) to LSP positions.

    Args:
        source: the document text (``\\n``, ``\\r\\n`` or ``\\r`` line ends, the only ones the LSP and
            CPython know: see :mod:`pt2lint.lines`), or ``""``
            when unknown; columns are then taken as they are.
        encoding: the negotiated LSP position encoding: ``"utf-16"`` (the LSP
            default), ``"utf-8"`` or ``"utf-32"``.
    """

    def __init__(self, source: str, encoding: str = "utf-16") -> None:
        self.lines = SourceLines(source).texts() if source else []
        self.encoding = encoding if encoding in ENCODINGS else "utf-16"

    def position(self, pos: Position) -> Dict[str, int]:
        """The LSP ``Position`` (0-based ``line`` and ``character``) of ``pos``."""
        line = max(pos.line - 1, 0)
        col = max(pos.column - 1, 0)
        if line < len(self.lines):
            text = self.lines[line]
            col = _units(text[:col], self.encoding) if col <= len(text) else _units(text, self.encoding) + col - len(text)
        return {"line": line, "character": col}

    def range(self, start: Position, end: Position) -> Dict[str, Dict[str, int]]:
        """The LSP ``Range`` from ``start`` to ``end`` (end exclusive, as in pt2lint)."""
        return {"start": self.position(start), "end": self.position(end)}


def fix_to_lsp(fix: Fix, index: LineIndex) -> Dict[str, Any]:
    """A fix as ``{"message", "applicability", "name", "edits": [TextEdit]}`` for ``Diagnostic.data``."""
    return {
        "message": fix.message,
        "applicability": getattr(fix.applicability, "value", fix.applicability),
        "name": fix.name,
        "edits": [{"range": index.range(e.start, e.end), "newText": e.content} for e in fix.edits],
    }


def diagnostic_to_lsp(d: Diagnostic, index: LineIndex, uri_of=None, docs_url: Optional[str] = None) -> Dict[str, Any]:
    """One finding as an LSP ``Diagnostic`` (a JSON-ready dict).

    ``code`` is the rule code, ``codeDescription.href`` the rule's documentation (under the
    ``docs_url`` template, default :data:`pt2lint.diagnostics.DEFAULT_DOCS_URL`),
    ``severity`` comes from the rule (error 1, warning 2, info 3), ``source`` is
    ``"pt2lint"``; ``data`` holds ``name``, ``noqaLine`` (0-based line for a
    suppression comment), ``statementLines`` (0-based first and last line of the finding's
    statement, where a suppression comment covers it, or ``None``) and ``fix`` (see
    :func:`fix_to_lsp`, or ``None``).  With
    ``uri_of`` (filename -> URI), a finding reached through calls gets
    ``relatedInformation``: each call of its chain (character offsets of call sites in
    other files are code points, since their text is not at hand).
    """
    out: Dict[str, Any] = {
        "range": index.range(d.start, d.end),
        "severity": SEVERITY.get(d.severity, 2),
        "code": d.code,
        "codeDescription": {"href": rule_url(d.code, docs_url, d.name)},
        "source": SOURCE,
        "message": d.message,
        "data": {
            "name": d.name,
            "noqaLine": d.start.line - 1,
            "statementLines": [d.statement_lines[0] - 1, d.statement_lines[1] - 1] if d.statement_lines else None,
            "fix": fix_to_lsp(d.fix, index) if d.fix is not None else None,
        },
    }
    if d.code in UNNECESSARY_CODES:
        out["tags"] = [1]
    if d.call_sites and uri_of is not None:
        origin = dict(d.extra).get("origin")
        related = [
            {
                "location": {
                    "uri": uri_of(s[1]),
                    "range": {"start": {"line": s[2] - 1, "character": s[3] - 1}, "end": {"line": s[2] - 1, "character": s[3] - 1}},
                },
                "message": f"{s[0]} calls {d.call_chain[i + 1] if i + 1 < len(d.call_chain) else 'the flagged code'}",
            }
            for i, s in enumerate(d.call_sites)
        ]
        if origin is not None:
            line, col = origin[1] - 1, origin[2] - 1
            related.append({
                "location": {"uri": uri_of(origin[0]), "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col}}},
                "message": f"{d.code} is here, in {d.symbol or 'the called code'}",
            })
        out["relatedInformation"] = related
    return out


def file_uri(filename: str, context: ReportContext) -> str:
    """The ``file://`` URI of a reported filename (``-``, meaning stdin, stays ``-``)."""
    if filename == "-":
        return filename
    return pathlib.Path(context.absolute(filename)).as_uri()


def file_uri_of(filename: str) -> str:
    """The ``file://`` URI of a path (relative paths are taken from the working directory)."""
    if filename == "-":
        return filename
    return pathlib.Path(os.path.abspath(filename)).as_uri()


def render_lsp_payload(diagnostics: Sequence[Diagnostic], context: ReportContext) -> List[Dict[str, Any]]:
    """``PublishDiagnosticsParams`` dicts: one per checked file (in ``context.files`` order,
    files without findings included with an empty list), then any other file with findings."""
    by_file: Dict[str, List[Diagnostic]] = {}
    for name in context.files:
        by_file.setdefault(name, [])
    for d in diagnostics:
        by_file.setdefault(d.filename, []).append(d)
    out: List[Dict[str, Any]] = []
    for name, diags in by_file.items():
        index = LineIndex(context.sources.get(name, "") or "")
        out.append({
            "uri": file_uri(name, context),
            "diagnostics": [diagnostic_to_lsp(d, index, lambda f: file_uri(f, context), context.docs_url) for d in diags],
        })
    return out


@register("lsp", needs_source=True, human=False, description="a JSON array of LSP PublishDiagnosticsParams, one per file URI")
def render_lsp(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The findings as LSP ``PublishDiagnosticsParams`` objects (UTF-16 positions), pretty-printed."""
    return json.dumps(render_lsp_payload(diagnostics, context), indent=2, ensure_ascii=False) + "\n"


def lsp_position_to_char_column(line_text: str, character: int, encoding: str = "utf-16") -> int:
    """The 0-based character index in ``line_text`` of an LSP ``character`` offset in ``encoding`` units."""
    if encoding == "utf-32":
        return min(character, len(line_text))
    count = 0
    for i, ch in enumerate(line_text):
        if count >= character:
            return i
        count += _units(ch, encoding)
    return len(line_text)


__all__ = [
    "LineIndex",
    "SEVERITY",
    "SOURCE",
    "diagnostic_to_lsp",
    "file_uri",
    "fix_to_lsp",
    "lsp_position_to_char_column",
    "render_lsp",
    "render_lsp_payload",
]
