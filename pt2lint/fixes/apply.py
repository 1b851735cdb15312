"""Apply fixes to a text until nothing more changes, and write the result back safely.

:func:`fix_text` lints, applies every selected fix that does not overlap an
earlier one, and lints again (a second round picks up fixes that overlapped,
and findings that a first rewrite exposed), at most :data:`MAX_ROUNDS` times.
The ``check`` codemod's op definitions, each inserted at the same point after the
imports, do not count as overlapping: they are written together, in the findings'
order (:func:`pt2lint.fixes.check_op.join_insertions`), so a file with more
validations than rounds is fixed in one.
It never returns text that does not parse.

:func:`write_fixed` writes a file the way an editor should: the bytes are
encoded with the file's own encoding (BOM included), every line ending is the
file's own (a CRLF file stays CRLF), the file is re-read first and left alone
if it changed since it was read, it goes to a temporary file in the same
directory that is renamed over the original (so a crash never leaves half a
file), and the permission bits are kept.  A file without write permission is
not touched, even when running as root.
"""

from __future__ import annotations

import ast
import codecs
import io
import tokenize
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple

import libcst as cst

from pt2lint.diagnostics import Applicability, Diagnostic, Fix
from pt2lint.fixes.check_op import join_insertions
from pt2lint.fixes.edits import apply_fixes

MAX_ROUNDS = 10


class FixError(Exception):
    """A file could not be fixed (unreadable, undecodable, does not parse, read-only, changed meanwhile).

    The message is one line, without the file name.
    """


@dataclass
class SourceFile:
    """A Python file's text and how to write it back.

    Attributes:
        text: decoded text (without a BOM).
        encoding: the PEP 263 / BOM encoding it was decoded with.
        bom: the file started with a UTF-8 byte order mark.
        newline: the file's line ending (``"\\r\\n"``, ``"\\r"`` or ``"\\n"``), the most frequent one.
        raw: the bytes as read.
    """

    text: str
    encoding: str
    bom: bool
    newline: str
    raw: bytes


def decode_file(data: bytes) -> SourceFile:
    """Decode source bytes as Python does (BOM, coding line), remembering how to encode them back.

    Raises:
        FixError: unknown encoding or invalid bytes.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise FixError(str(exc)) from None
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8-sig" if bom else encoding)
    except (UnicodeError, LookupError, ValueError) as exc:  # 'undefined', 'punycode': a bare UnicodeError
        raise FixError(f"cannot decode as {encoding}: {exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    crlf = text.count("\r\n")
    cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    newline = "\r\n" if crlf > max(lf, cr) else ("\r" if cr > max(lf, crlf) else "\n")
    return SourceFile(text, "utf-8" if bom else encoding, bom, newline, data)


def encode_file(src: SourceFile, text: str) -> bytes:
    """``text`` encoded like ``src`` was: same encoding, same BOM (codemods write new lines with the
    module's own line ending, which LibCST detects, so a CRLF file stays CRLF).

    Raises:
        FixError: the new text has a character the file's encoding cannot hold.
    """
    try:
        data = text.encode(src.encoding)
    except (UnicodeError, LookupError, ValueError) as exc:  # idna raises a bare UnicodeError
        raise FixError(f"the fixed text cannot be encoded as {src.encoding}: {exc}") from None
    try:
        if data.decode(src.encoding) != text:  # a codec that does not round-trip would corrupt the file
            raise FixError(f"the fixed text does not survive encoding as {src.encoding}; not fixed")
    except (UnicodeError, LookupError, ValueError) as exc:
        raise FixError(f"the fixed text cannot be encoded as {src.encoding}: {exc}") from None
    return (codecs.BOM_UTF8 + data) if src.bom else data


@dataclass
class FixOutcome:
    """What fixing one text did.

    Attributes:
        text: the fixed text (the input when nothing applied).
        applied: the fixes applied, over all rounds.
        remaining: findings of the last lint (with their fixes or refusals).
        rounds: lint rounds run.
        first: findings of the first lint, of the text as given (what is left
            if the fixed text is never written).
        used: the suppressions in other files that the last lint used
            (:attr:`~pt2lint.diagnostics.FileResult.used_suppressions`); ``first_used``: the first lint's.
    """

    text: str
    applied: List[Fix] = field(default_factory=list)
    remaining: List[Diagnostic] = field(default_factory=list)
    rounds: int = 0
    first: List[Diagnostic] = field(default_factory=list)
    used: Tuple[Tuple[str, int, str], ...] = ()
    first_used: Tuple[Tuple[str, int, str], ...] = ()

    @property
    def changed(self) -> bool:
        """Whether any fix was applied."""
        return bool(self.applied)


def parses(text: str) -> bool:
    """Whether ``text`` parses (LibCST, after :func:`~pt2lint.lines.cut_form_feeds` as the engine
    reads it, and CPython, on the text itself)."""
    from pt2lint.lines import cut_form_feeds

    try:
        cst.parse_module(cut_form_feeds(text)[0])
        compile(text, "<fixed>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_text(
    text: str,
    filename: str,
    settings,
    *,
    relpath: Optional[str] = None,
    select_fix: Callable[[Diagnostic], bool],
    names_for=None,
) -> FixOutcome:
    """Fix ``text`` as far as the selection allows.

    Args:
        text: the module's text.
        filename: the name findings carry.
        settings: the :class:`~pt2lint.settings.LintSettings`.
        relpath: path relative to the project root (per-file ignores).
        select_fix: whether a finding's fix may be applied (selection and applicability).
        names_for: codemods allowed per finding (see :func:`pt2lint.engine.lint_source`).

    Raises:
        FixError: the text does not parse (a PTC001 finding), or a fix produced text that
            does not parse (a codemod bug: nothing is written).
    """
    from pt2lint.engine import lint_source

    try:
        compile(text, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        raise FixError(f"cannot parse: SyntaxError: {exc.msg} (line {exc.lineno}); not fixed") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise FixError(f"cannot parse: {type(exc).__name__}; not fixed") from None
    outcome = FixOutcome(text)
    seen = {text}
    for _ in range(MAX_ROUNDS):
        result = lint_source(outcome.text, filename, settings, relpath=relpath, fix_names=names_for)
        outcome.rounds += 1
        outcome.remaining = list(result.diagnostics)
        outcome.used = result.used_suppressions
        if outcome.rounds == 1:
            outcome.first, outcome.first_used = outcome.remaining, outcome.used
        syntax = next((d for d in result.diagnostics if d.code == "PTC001"), None)
        if syntax is not None:
            if outcome.rounds == 1:
                raise FixError(f"cannot parse: {syntax.message} (line {syntax.start.line}); not fixed")
            raise FixError("a fix produced code that does not parse; nothing was written")
        fixes = [d.fix for d in result.diagnostics if d.fix is not None and d.fix.edits and select_fix(d)]
        if not fixes:
            break
        new_text, applied = apply_fixes(outcome.text, fixes, join=join_insertions)
        if new_text == outcome.text or new_text in seen:
            break
        if not parses(new_text):
            raise FixError("a fix produced code that does not parse; nothing was written")
        seen.add(new_text)
        outcome.text = new_text
        outcome.applied.extend(applied)
    return outcome


def read_file(path: str, max_bytes: Optional[int] = None) -> SourceFile:
    """Read (with :func:`pt2lint.reading.read_bytes`) and decode ``path``.

    Args:
        path: the file.
        max_bytes: size limit in bytes (default: :data:`pt2lint.reading.DEFAULT_MAX_BYTES`).

    Raises:
        FixError: unreadable, not a regular file, too large, or undecodable.
    """
    from pt2lint.reading import DEFAULT_MAX_BYTES, read_bytes

    try:
        data = read_bytes(path, max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)
    except OSError as exc:
        raise FixError((exc.strerror or type(exc).__name__).lower()) from None
    return decode_file(data)


def write_fixed(path: str, src: SourceFile, text: str, root: Optional[str] = None) -> None:
    """Atomically replace ``path`` with ``text``, encoded like ``src``, if the file still holds ``src.raw``.

    The write is :func:`pt2lint.atomic.rewrite_file`, the one used by every command that edits sources.

    Args:
        path: the file (a symbolic link is written through, to its target).
        src: the file as it was read.
        text: the fixed text.
        root: the project root; a ``path`` whose real location (links resolved) is outside
            it is never written.  ``None``: no such check.

    Raises:
        FixError: the file is read-only, changed since it was read, a link out of ``root``,
            or cannot be written (the original is then left exactly as it was).
    """
    from pt2lint.atomic import WriteRefused, rewrite_file

    try:
        rewrite_file(path, encode_file(src, text), expected=src.raw, root=root, action="not fixed")
    except WriteRefused as exc:
        raise FixError(exc.strerror) from None
    except OSError as exc:
        raise FixError(f"cannot write: {(exc.strerror or type(exc).__name__).lower()}") from None


def applicable(fix: Fix, unsafe: bool) -> bool:
    """Whether a fix of this applicability is applied (safe always, unsafe with ``--unsafe-fixes``, display-only never)."""
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


__all__ = [
    "FixError",
    "FixOutcome",
    "MAX_ROUNDS",
    "SourceFile",
    "applicable",
    "decode_file",
    "encode_file",
    "fix_text",
    "parses",
    "read_file",
    "write_fixed",
]
