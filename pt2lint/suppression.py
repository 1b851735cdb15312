"""Suppression comments: ``# noqa``, ``# noqa: PTC101``, ``# pt2lint: ignore[PTC101]``.

A suppression applies to findings on its own line, on any line of the
statement it sits in (a comment inside brackets of a multi-line call), and --
when it is alone on its line -- to the statement that starts on the next line.
Suppressions naming a pt2lint code that suppressed nothing are reported
(``PTC002``), so they do not rot; unknown pt2lint codes are ``PTC003``.
"""

from __future__ import annotations

import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from pt2lint.diagnostics import Diagnostic, Position
from pt2lint.lines import tokens as source_tokens
from pt2lint.specs import load_specs

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*pt2lint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_MARKERS = ("noqa", "pt2lint:")


@dataclass
class Suppression:
    """One suppression comment.

    Attributes:
        line: 1-based line of the comment; ``column``: 1-based column of ``#``.
        codes: the codes it names (upper-case), or ``None`` for a blanket one.
        own_line: the comment is alone on its line (so it covers the next statement).
        style: ``"noqa"`` or ``"pt2lint"``.
        used: codes it actually suppressed.
    """

    line: int
    column: int
    end_column: int
    codes: Optional[List[str]]
    own_line: bool
    style: str
    used: Set[str] = field(default_factory=set)


def _split_codes(text: str) -> List[str]:
    return [c.strip() for c in re.split(r"[\s,]+", text) if c.strip()]


def parse_suppressions(source: str) -> List[Suppression]:
    """All suppression comments of a module (comments only: strings are never read as comments)."""
    if not any(m in source for m in _MARKERS):
        return []
    out: List[Suppression] = []
    try:
        tokens = list(source_tokens(source))  # CPython's lines (a lone \r ends one; U+2028 does not)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    prev_line_has_code: Dict[int, bool] = {}
    for tok in tokens:
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER):
            for ln in range(tok.start[0], tok.end[0] + 1):
                prev_line_has_code[ln] = True
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        text = tok.string
        line, col = tok.start
        own = not prev_line_has_code.get(line, False)
        for m in _IGNORE.finditer(text):
            codes = m.group("codes")
            parsed = None if codes is None else _split_codes(codes)
            out.append(Suppression(line, col + m.start() + 1, col + m.end() + 1, parsed, own, "pt2lint"))
        for m in _NOQA.finditer(text):
            codes = m.group("codes")
            parsed = None if codes is None else [c.upper() for c in _split_codes(codes)]
            out.append(Suppression(line, col + m.start() + 1, col + m.end() + 1, parsed, own, "noqa"))
    return out


def _matches(sup: Suppression, diag: Diagnostic, names: Dict[str, str]) -> Optional[str]:
    """The code/name of ``sup`` that covers ``diag``, ``"*"`` for a blanket one, else None."""
    if sup.codes is None:
        return "*"
    for c in sup.codes:
        cu = c.upper()
        if cu == diag.code:
            return c
        if names.get(c.lower()) == diag.code:
            return c
    return None


def _covers(sup: Suppression, diag: Diagnostic) -> bool:
    line = diag.start.line
    if sup.line == line:
        return True
    if diag.statement_lines is not None:
        first, last = diag.statement_lines
        if first <= sup.line <= last:
            return True
        if sup.own_line and sup.line == first - 1:
            return True
    elif sup.own_line and sup.line == line - 1:
        return True
    return False


def apply_suppressions(
    diags: Sequence[Diagnostic],
    source: str,
    filename: str,
    enabled: FrozenSet[str],
    *,
    report_unused: bool = True,
    unused_analysis_codes: bool = True,
) -> List[Diagnostic]:
    """Drop suppressed findings; add ``PTC002``/``PTC003`` for unused or unknown suppression codes.

    Args:
        diags: findings in the file ``filename`` whose text is ``source``.
        enabled: codes enabled for the file (``PTC002``/``PTC003`` are reported only if enabled).
        report_unused: add ``PTC002``/``PTC003`` findings at all (off for a file that was
            not asked for, whose findings come from another file's analysis).
        unused_analysis_codes: report a suppression of an analysis code (not ``PTC0xx``)
            as unused anywhere.  Off for a file without compiled regions of its own: code
            inside its functions runs compiled only when another file's region calls it,
            which this run may not see, so only suppressions outside every function body
            (module level, never compiled) are reported there.
    """
    sups = parse_suppressions(source)
    if not sups:
        return list(diags)
    specs = load_specs()
    names = {s.name: s.code for s in specs.values()}
    kept = _drop_suppressed(diags, sups, names)
    if not report_unused:
        return kept
    in_function = None if unused_analysis_codes else _function_lines(source)
    for s in sups:
        certain = in_function is None or s.line not in in_function
        kept.extend(_suppression_findings(s, filename, specs, names, enabled, certain))
    return kept


def _drop_suppressed(diags: Sequence[Diagnostic], sups: List[Suppression], names: Dict[str, str]) -> List[Diagnostic]:
    """``diags`` without those ``sups`` cover; marks each suppression's ``used`` codes."""
    kept: List[Diagnostic] = []
    for d in diags:
        suppressed = False
        for s in sups:
            if _covers(s, d):
                hit = _matches(s, d, names)
                if hit is not None:
                    s.used.add(hit)
                    suppressed = True
        if not suppressed:
            kept.append(d)
    return kept


def suppress_reached(diags: Sequence[Diagnostic], source: str) -> Tuple[List[Diagnostic], List[Tuple[int, str]]]:
    """Drop the findings of ``diags`` (all in one other file, whose text is ``source``) that its
    suppression comments cover, reporting nothing about the comments themselves.

    Returns:
        ``(findings kept, suppressions used)``: each used suppression as ``(line of the
        comment, code as written there)``, ``"*"`` for a blanket one -- the key
        :func:`unused_suppression_key` gives that comment's ``PTC002`` finding, so a run can
        tell a comment that another file's analysis used from one that is unused.
    """
    sups = parse_suppressions(source)
    if not sups:
        return list(diags), []
    names = {s.name: s.code for s in load_specs().values()}
    kept = _drop_suppressed(diags, sups, names)
    used = sorted({(s.line, code) for s in sups for code in s.used})
    return kept, used


#: The message of a ``PTC002`` finding, as :func:`_suppression_findings` writes it.
_UNUSED_MESSAGE = re.compile(r"^unused suppression `[^`]*`: no (?P<code>\S+) finding here$")


def unused_suppression_key(d: Diagnostic) -> Optional[Tuple[int, str]]:
    """``(line, code as written)`` of the suppression an unused-suppression (``PTC002``) finding
    is about (``"*"``: a blanket ``# pt2lint: ignore``), as :func:`suppress_reached` names a used
    one; ``None`` for any other finding."""
    if d.code != "PTC002":
        return None
    m = _UNUSED_MESSAGE.match(d.message)
    if m is None:
        return None
    code = m.group("code")
    blanket = code == "pt2lint" and "`# pt2lint: ignore`" in d.message
    return d.start.line, "*" if blanket else code


def _function_lines(source: str) -> Set[int]:
    """Lines inside function bodies (from CPython's ``ast``; empty when it cannot parse the file)."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    lines: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _suppression_findings(s: Suppression, filename: str, specs, names, enabled, analysis_codes: bool = True) -> List[Diagnostic]:
    out: List[Diagnostic] = []
    start, end = Position(s.line, s.column), Position(s.line, s.end_column)

    def make(code: str, message: str) -> Diagnostic:
        spec = specs.get(code)
        return Diagnostic(
            code=code,
            name=spec.name if spec else code,
            message=message,
            filename=filename,
            start=start,
            end=end,
            severity=spec.severity if spec else "warning",
            category="internal",
        )

    directive = "# noqa" if s.style == "noqa" else "# pt2lint: ignore"
    if s.codes is None:
        if s.style == "pt2lint" and not s.used and "PTC002" in enabled and analysis_codes:
            out.append(make("PTC002", f"unused suppression `{directive}`: no pt2lint finding here"))
        return out
    for c in s.codes:
        cu = c.upper()
        is_ours = cu.startswith("PTC") or c.lower() in names or s.style == "pt2lint"
        if not is_ours:
            continue  # another tool's code (E501, F401...)
        known = cu in specs or c.lower() in names
        if not known:
            if "PTC003" in enabled:
                out.append(make("PTC003", f"suppression names unknown rule `{c}` (name a full code such as PTC101, or a rule name)"))
            continue
        covered_codes = {cu} if cu in specs else {names[c.lower()]}
        if c in s.used or not (covered_codes & enabled):
            continue
        if all(code.startswith("PTC09") for code in covered_codes):
            continue  # PTC09x come from confirm mode only: a static run cannot tell if they are used
        if not analysis_codes and not all(code.startswith("PTC0") for code in covered_codes):
            continue
        if "PTC002" in enabled:
            out.append(make("PTC002", f"unused suppression `{directive}{': ' if s.style == 'noqa' else '['}{c}{']' if s.style == 'pt2lint' else ''}`: no {c} finding here"))
    return out
