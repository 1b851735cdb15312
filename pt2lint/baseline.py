"""Adopting pt2lint on a large codebase: baselines and ``--add-noqa``.

A *baseline* is a JSON file listing the findings a codebase already has, so a
run reports only new ones.  A finding is matched by its rule code, its file
(relative to the baseline file's directory) and the normalised text of its
line -- not by line number -- so adding or removing lines elsewhere in the
file does not bring old findings back.  Identical (rule, file, text) triples
are counted, so a second copy of a baselined line is still reported.

``--add-noqa`` instead writes a ``# noqa: CODE`` comment for each current
finding, merging codes into a suppression comment already on the line.  Files
are replaced atomically (a temporary file in the same directory, then
``os.replace``), keep their encoding, BOM and line endings, and are left alone
when they changed since they were linted.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import os
import tokenize
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from pt2lint.atomic import WriteRefused, rewrite_file, write_output
from pt2lint.diagnostics import Diagnostic
from pt2lint.lines import SourceLines, line_end_of, lines_of, split_lines, strip_line_end, tokens

BASELINE_VERSION = 1

#: Codes ``--add-noqa`` never suppresses: syntax errors and findings about suppressions themselves.
NOQA_SKIP_CODES = frozenset({"PTC001", "PTC002", "PTC003"})


class BaselineError(ValueError):
    """A baseline file cannot be read or written, or is not a pt2lint baseline (one-line message)."""


def _strip_comment(text: str) -> str:
    """``text`` without a trailing ``#`` comment (found with the tokenizer, so ``"#"`` in strings stays)."""
    if "#" not in text:
        return text
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                return text[: tok.start[1]]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return text


def normalise_line(text: str) -> str:
    """The form of a source line that baselines and fingerprints compare.

    Leading/trailing whitespace and a trailing comment are dropped and runs of
    whitespace collapse to one space, so re-indenting a block, re-wrapping
    spaces or adding a comment does not make a baselined finding new.
    """
    return " ".join(_strip_comment(text).split())


def _line_of(source: str, line: int) -> str:
    return lines_of(source).text(line)  # numbered as Python numbers lines, not as str.splitlines


def _source_of(filename: str, sources: Mapping[str, Optional[str]]) -> str:
    text = sources.get(filename)
    if text is not None:
        return text
    if filename == "-":
        return ""
    from pt2lint.engine import DecodeError, read_source

    try:
        return read_source(filename)
    except (OSError, DecodeError):
        return ""


Key = Tuple[str, str, str]


def _relfile(filename: str, base_dir: str, cwd: Optional[str] = None) -> str:
    if filename == "-":
        return "-"
    absolute = os.path.abspath(os.path.join(cwd or os.getcwd(), filename))
    try:
        rel = os.path.relpath(absolute, base_dir)
    except ValueError:
        rel = absolute
    return rel.replace(os.sep, "/")


def finding_keys(
    diagnostics: Sequence[Diagnostic], sources: Mapping[str, Optional[str]], base_dir: str
) -> List[Key]:
    """``(code, file relative to base_dir with /, normalised line text)`` for each finding, in order."""
    cache: Dict[str, str] = {}
    keys: List[Key] = []
    for d in diagnostics:
        if d.filename not in cache:
            cache[d.filename] = _source_of(d.filename, sources)
        text = normalise_line(_line_of(cache[d.filename], d.start.line))
        keys.append((d.code, _relfile(d.filename, base_dir), text))
    return keys


def fingerprint(code: str, relpath: str, line_text: str, occurrence: int) -> str:
    """A stable finding id (32 hex digits): rule, path, the flagged line's normalised text, and
    how many identical (rule, path, text) findings come before it in the file.

    The same key as a baseline entry plus an occurrence index, hashed: it survives
    lines added or removed elsewhere in the file.  SARIF's ``partialFingerprints``
    and the ``json`` format's ``fingerprint`` field are both this value, so reports
    of either kind from two runs can be compared (``pt2lint compare``).
    """
    payload = "\0".join((code, relpath, normalise_line(line_text), str(occurrence)))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def finding_fingerprints(
    diagnostics: Sequence[Diagnostic], sources: Mapping[str, Optional[str]], path_of: Callable[[str], str]
) -> List[str]:
    """:func:`fingerprint` of each finding, in order.

    Args:
        diagnostics: findings sorted by file and position (occurrences count in this order).
        sources: file text by filename; a file not there is read from disk.
        path_of: a finding's filename -> the path that goes into the fingerprint
            (repository-relative, so that two checkouts agree).
    """
    cache: Dict[str, str] = {}
    seen: Counter = Counter()
    out: List[str] = []
    for d in diagnostics:
        if d.filename not in cache:
            cache[d.filename] = _source_of(d.filename, sources)
        path = path_of(d.filename)
        text = _line_of(cache[d.filename], d.start.line)
        key = (d.code, path, normalise_line(text))
        out.append(fingerprint(d.code, path, text, seen[key]))
        seen[key] += 1
    return out


@dataclass(frozen=True)
class Baseline:
    """The findings recorded in a baseline file.

    Attributes:
        path: the baseline file; ``file`` entries are relative to its directory.
        counts: how many findings each ``(code, file, normalised text)`` key had.
    """

    path: str
    counts: Mapping[Key, int]

    @property
    def base_dir(self) -> str:
        """The directory that the recorded file paths are relative to."""
        return os.path.dirname(os.path.abspath(self.path))

    def filter(
        self, diagnostics: Sequence[Diagnostic], sources: Mapping[str, Optional[str]]
    ) -> Tuple[List[Diagnostic], int]:
        """Drop the findings the baseline covers.

        Returns:
            ``(new findings, number dropped)``.  Each baseline entry covers as many
            findings as it counted, first come first served, in position order.
        """
        left = Counter(self.counts)
        kept: List[Diagnostic] = []
        dropped = 0
        for d, key in zip(diagnostics, finding_keys(diagnostics, sources, self.base_dir)):
            if left.get(key, 0) > 0:
                left[key] -= 1
                dropped += 1
            else:
                kept.append(d)
        return kept, dropped


#: Largest baseline file read, in bytes.
BASELINE_MAX_BYTES = 256 * 1024 * 1024


def load_baseline(path: str) -> Baseline:
    """Read a baseline written by :func:`write_baseline`.

    Raises:
        BaselineError: missing, unreadable, not JSON, or not in the expected shape.
    """
    from pt2lint.reading import read_bytes

    try:
        data = json.loads(read_bytes(path, max_bytes=BASELINE_MAX_BYTES, what=None).decode("utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found (create it with --write-baseline)") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {(exc.strerror or type(exc).__name__).lower()}") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BaselineError(f"{path}: not a valid JSON baseline: {type(exc).__name__ if isinstance(exc, RecursionError) else exc}") from None
    if not isinstance(data, dict) or data.get("tool") != "pt2lint" or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path}: not a pt2lint baseline (expected an object with tool = \"pt2lint\" and a findings array)")
    if data.get("version") != BASELINE_VERSION:
        raise BaselineError(f"{path}: baseline version {data.get('version')!r} is not supported (expected {BASELINE_VERSION})")
    counts: Dict[Key, int] = {}
    for i, item in enumerate(data["findings"]):
        try:
            key = (str(item["code"]), str(item["file"]), str(item["text"]))
            count = int(item.get("count", 1))
        except (TypeError, KeyError, ValueError):
            raise BaselineError(f"{path}: finding {i + 1} needs code, file and text") from None
        counts[key] = counts.get(key, 0) + max(count, 0)
    return Baseline(path, counts)


def write_baseline(path: str, diagnostics: Sequence[Diagnostic], sources: Mapping[str, Optional[str]]) -> int:
    """Record ``diagnostics`` in a baseline file at ``path``, written with
    :func:`pt2lint.atomic.write_output` (a regular file or a link's target replaced
    atomically; a device or a pipe written through).

    Returns:
        The number of findings recorded.

    Raises:
        BaselineError: the file cannot be written.
    """
    base_dir = os.path.dirname(os.path.abspath(path))
    counts = Counter(finding_keys(diagnostics, sources, base_dir))
    payload = {
        "tool": "pt2lint",
        "version": BASELINE_VERSION,
        "findings": [
            {"code": code, "file": file, "text": text, "count": n}
            for (code, file, text), n in sorted(counts.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2]))
        ],
    }
    try:
        write_output(path, (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {(exc.strerror or type(exc).__name__).lower()}") from None
    return sum(counts.values())


# --------------------------------------------------------------------------- noqa


def atomic_write_bytes(path: str, data: bytes) -> None:
    """Write ``data`` to the user-named file ``path`` with :func:`pt2lint.atomic.write_output`
    (a regular file or a link's target replaced atomically, keeping its permission bits;
    a device or a pipe written through).

    Raises:
        OSError: the directory is not writable, the disk is full, ...
    """
    write_output(path, data)


def _comment_lines(source: str) -> Optional[Dict[int, int]]:
    """Map a line where a comment cannot go to the line where it can; ``None`` when it cannot tell.

    Inside a multi-line string (or f-string) a comment would become part of the
    string, and after a backslash continuation it is a syntax error; both move
    to the line where the token or continuation ends.  Lines are CPython's
    (:mod:`pt2lint.lines`), and strings are found by its tokenizer: a text it
    cannot tokenize gets no comment at all rather than one inside a string.
    """
    moves: Dict[int, int] = {}
    commented: Set[int] = set()
    try:
        stack: List[int] = []
        for tok in tokens(source):
            name = tokenize.tok_name.get(tok.type, "")
            if tok.type == tokenize.COMMENT:
                commented.add(tok.start[0])
            if name == "FSTRING_START":
                stack.append(tok.start[0])
            elif name == "FSTRING_END" and stack:
                first = stack.pop()
                for n in range(first, tok.end[0]):
                    moves[n] = max(moves.get(n, 0), tok.end[0])
            elif tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                for n in range(tok.start[0], tok.end[0]):
                    moves[n] = max(moves.get(n, 0), tok.end[0])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    for n, text in enumerate(SourceLines(source).texts(), start=1):
        if text.endswith("\\") and n not in commented and n not in moves:  # a backslash continuation
            moves[n] = n + 1
    return moves


def comment_line(source: str, line: int, moves: Optional[Dict[int, int]] = None) -> int:
    """The 1-based line on which a suppression comment for a finding on ``line`` can go."""
    moves = (_comment_lines(source) or {}) if moves is None else moves
    seen: Set[int] = set()
    while line in moves and line not in seen:
        seen.add(line)
        line = moves[line]
    return line


def _merge_on_line(text: str, line_no: int, codes: Sequence[str], sups) -> Tuple[str, List[str]]:
    """``text`` (one line, no line end) with ``codes`` suppressed; returns (new text, codes added)."""
    on_line = [s for s in sups if s.line == line_no]
    if any(s.codes is None for s in on_line):  # a blanket suppression already covers everything
        return text, []
    present = {c.upper() for s in on_line for c in (s.codes or [])}
    new = [c for c in codes if c.upper() not in present]
    if not new:
        return text, []
    for style in ("noqa", "pt2lint"):
        target = next((s for s in on_line if s.style == style), None)
        if target is None:
            continue
        start, end = target.column - 1, target.end_column - 1
        merged = list(target.codes or []) + new
        if style == "noqa":
            replacement = "# noqa: " + ", ".join(merged)
        else:
            replacement = "# pt2lint: ignore[" + ", ".join(merged) + "]"
        return text[:start] + replacement + text[end:], new
    return text.rstrip() + "  # noqa: " + ", ".join(new), new


#: A finding for ``--add-noqa``: its line and the first and last line of the statement that a
#: suppression comment must sit in to cover it (``None``: not known, any line the comment moves to).
NoqaSpot = Tuple[int, Optional[Tuple[int, int]]]


def insert_noqa(
    source: str, targets: Mapping[int, Iterable[str]], statements: Optional[Mapping[int, Tuple[int, int]]] = None
) -> Tuple[str, int]:
    """Add ``# noqa: CODE`` comments to ``source``.

    Args:
        source: the module text (any line endings; they are kept).
        targets: 1-based line of a finding -> codes to suppress there.
        statements: 1-based line of a finding -> first and last line of its statement
            (:attr:`~pt2lint.diagnostics.Diagnostic.statement_lines`, or ``(line, line)``
            without one); with it, a comment that cannot go on the finding's line goes
            only where it suppresses the finding (see :func:`place_noqa`).

    Returns:
        ``(new text, number of codes added)``.  Codes join a ``# noqa: ...`` or
        ``# pt2lint: ignore[...]`` comment already on the line; a line under a
        blanket ``# noqa`` is left alone.
    """
    spots: Dict[NoqaSpot, Iterable[str]] = {}
    for line, codes in targets.items():
        spot = (line, statements.get(line, (line, line)) if statements is not None else None)
        spots[spot] = list(spots.get(spot, ())) + list(codes)
    new, added, _ = place_noqa(source, spots)
    return new, added


def _indent_of(text: str) -> str:
    """The blanks that start ``text`` (after its last form feed, which a comment line needs not keep)."""
    blanks = text[: len(text) - len(text.lstrip(" \t\f"))]
    return blanks.rsplit("\f", 1)[-1]


def place_noqa(source: str, spots: Mapping[NoqaSpot, Iterable[str]]) -> Tuple[str, int, List[int]]:
    """Add suppression comments to ``source`` where :mod:`pt2lint.suppression` reads them.

    A comment goes at the end of the finding's line; where no comment can end that line
    (inside a multi-line string, before a backslash continuation) at the end of the line
    the string or continuation ends on, if that line is still in the finding's statement;
    else on a line of its own just above the statement (merged into a suppression comment
    already alone there), which covers the statement that follows it.  When the line
    above the statement ends inside a string or in a continuation too, no comment can
    suppress the finding, and none is written.

    Args:
        source: the module text (any line endings; they are kept).
        spots: ``(line, statement lines or None)`` of a finding -> codes to suppress (see
            :data:`NoqaSpot`; ``None``: the statement is not known, the comment goes at the
            end of the string or continuation as the only choice).

    Returns:
        ``(new text, number of codes added, lines of the findings left unsuppressed)``.
    """
    from pt2lint.suppression import parse_suppressions

    moves = _comment_lines(source)
    if moves is None:  # the tokenizer fails (then CPython rejects the file): no safe place for a comment
        return source, 0, []
    lines = split_lines(source)  # CPython's lines, so line N is the finding's line N
    sups = parse_suppressions(source)
    own_line = {s.line for s in sups if s.own_line}
    wanted: Dict[int, List[str]] = {}  # line -> codes for a comment at its end
    above: Dict[int, List[str]] = {}  # line -> codes for a new comment line before it
    unplaced: List[int] = []

    def add(bucket: Dict[int, List[str]], at: int, codes: Iterable[str]) -> None:
        into = bucket.setdefault(at, [])
        for c in sorted(set(codes)):
            if c not in into:
                into.append(c)

    for (line, statement), codes in sorted(spots.items(), key=lambda kv: (kv[0][0], kv[0][1] or (0, 0))):
        at = comment_line(source, line, moves)
        if at == line or statement is None or statement[0] <= at <= statement[1]:
            add(wanted, at, codes)
            continue
        first = statement[0]
        if first - 1 in own_line:  # a suppression alone on the line above: it covers the statement
            add(wanted, first - 1, codes)
        elif 1 <= first <= len(lines) and (first - 1) not in moves:
            add(above, first, codes)
        else:
            unplaced.append(line)
    added = 0
    out: List[str] = []
    for line_no, raw in enumerate(lines, start=1):
        if line_no in above:
            ending = line_end_of(lines[line_no - 2]) if line_no > 1 else (line_end_of(raw) or "\n")
            out.append(_indent_of(strip_line_end(raw)) + "# noqa: " + ", ".join(above[line_no]) + ending)
            added += len(above[line_no])
        if line_no in wanted:
            ending = line_end_of(raw)
            new_body, new_codes = _merge_on_line(strip_line_end(raw), line_no, wanted[line_no], sups)
            raw = new_body + ending
            added += len(new_codes)
        out.append(raw)
    return "".join(out), added, unplaced


def noqa_spot(line: int, statement_lines: Optional[Tuple[int, int]]) -> NoqaSpot:
    """The :data:`NoqaSpot` of a finding on 1-based ``line`` whose statement spans the 1-based
    ``statement_lines`` (:attr:`~pt2lint.diagnostics.Diagnostic.statement_lines`; ``None``: only
    its own line is known to be in it).

    ``--add-noqa`` and the language server's "Suppress" quick fix both place their comment with
    :func:`place_noqa` at this spot, so the comment lands where it suppresses the finding: never
    after a continuation or string that ends outside the finding's statement.
    """
    return (line, statement_lines or (line, line))


def noqa_targets(diagnostics: Iterable[Diagnostic]) -> Dict[str, Dict[NoqaSpot, Set[str]]]:
    """File -> ``(line, statement lines)`` (a :data:`NoqaSpot`) -> codes for the findings
    ``--add-noqa`` suppresses (not PTC001-PTC003)."""
    out: Dict[str, Dict[NoqaSpot, Set[str]]] = {}
    for d in diagnostics:
        if d.code in NOQA_SKIP_CODES or d.filename == "-":
            continue
        spot = noqa_spot(d.start.line, d.statement_lines)
        out.setdefault(d.filename, {}).setdefault(spot, set()).add(d.code)
    return out


def _encode_like(original: bytes, text: str) -> bytes:
    """Encode ``text`` as ``original`` was encoded (PEP 263 coding line, UTF-8 BOM)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
    if original.startswith(codecs.BOM_UTF8):
        return codecs.BOM_UTF8 + text.encode("utf-8")
    return text.encode(encoding)


@dataclass(frozen=True)
class NoqaResult:
    """What ``--add-noqa`` did: codes ``added`` over ``files`` changed, and one-line ``errors``."""

    added: int
    files: int
    errors: Tuple[str, ...] = ()


def in_given_files(diagnostics: Iterable[Diagnostic], given: Iterable[str]) -> Tuple[List[Diagnostic], List[Diagnostic]]:
    """``diagnostics`` moved into the files ``given`` (the files a command was given), and those
    that cannot be.

    A finding in a given file stays as it is.  A finding in another file (reached by the
    whole-project analysis from a given file's compiled region) becomes a finding at the
    call in the given file that leads to it (its first call site), where a suppression
    covers it too; one that no call in a given file leads to cannot be moved.

    Returns:
        ``(findings in given files, findings left out)``.
    """
    from dataclasses import replace

    from pt2lint.diagnostics import Position

    names = {os.path.abspath(g): g for g in given}
    kept: List[Diagnostic] = []
    left: List[Diagnostic] = []
    for d in diagnostics:
        name = names.get(os.path.abspath(d.filename))
        if name is not None:
            kept.append(d if name == d.filename else replace(d, filename=name))
            continue
        anchor = d.call_sites[0] if d.call_sites else None
        name = names.get(os.path.abspath(anchor[1])) if anchor is not None else None
        if name is None:
            left.append(d)
            continue
        _, _, line, column, first, last = anchor
        kept.append(replace(
            d, filename=name, start=Position(line, column), end=Position(line, column + 1),
            statement_lines=(first, last), call_sites=(), fix=None,
        ))
    return kept, left


def add_noqa(
    diagnostics: Sequence[Diagnostic], sources: Mapping[str, Optional[str]], root: Optional[str] = None,
    given: Optional[Iterable[str]] = None,
) -> NoqaResult:
    """Write ``# noqa`` comments for ``diagnostics`` into their files.

    Files are rewritten with :func:`pt2lint.atomic.rewrite_file`, as ``fix`` rewrites
    them: a symbolic link is written through to its target (the link stays), and refused
    when it leads out of ``root``; a read-only file, or one changed since it was read, is
    left alone.

    Args:
        diagnostics: the findings to suppress.
        sources: the text each file had when it was linted; a file whose text
            changed since is skipped with an error, never half-edited.
        root: the project root (``None``: no boundary check).
        given: the files the command was given; only they are written (see
            :func:`in_given_files`: a finding another file holds is suppressed at the call
            in a given file that leads to it).  ``None``: the files the findings lie in.

    Returns:
        A :class:`NoqaResult`.  I/O problems are reported in ``errors``, not raised.
    """
    from pt2lint.engine import DecodeError, decode_source
    from pt2lint.reading import read_bytes

    added = files = 0
    errors: List[str] = []
    if given is not None:
        diagnostics, left = in_given_files(diagnostics, given)
        for d in left:
            if d.code not in NOQA_SKIP_CODES:
                errors.append(
                    f"{d.filename}:{d.start.line}: {d.code} not suppressed: the file was not given, "
                    "and no call in a given file leads to the finding"
                )
    for filename, targets in noqa_targets(diagnostics).items():
        try:
            original = read_bytes(filename)
            text = decode_source(original)
        except OSError as exc:
            errors.append(f"{filename}: cannot add noqa: {(exc.strerror or type(exc).__name__).lower()}")
            continue
        except DecodeError as exc:
            errors.append(f"{filename}: cannot add noqa: {exc}")
            continue
        linted = sources.get(filename)
        if linted is not None and linted != text:
            errors.append(f"{filename}: changed while it was being checked; not edited")
            continue
        new_text, n, unplaced = place_noqa(text, targets)
        for line in unplaced:
            errors.append(
                f"{filename}:{line}: cannot add a noqa comment: no comment there suppresses the finding "
                "(the line before its statement ends inside a string or in a backslash continuation)"
            )
        if n == 0 or new_text == text:
            continue
        try:
            rewrite_file(filename, _encode_like(original, new_text), expected=original, root=root, action="not edited")
        except WriteRefused as exc:
            errors.append(f"{filename}: {exc.strerror}")
            continue
        except (OSError, UnicodeEncodeError, SyntaxError) as exc:
            errors.append(f"{filename}: cannot write: {exc}")
            continue
        added += n
        files += 1
    return NoqaResult(added, files, tuple(errors))


__all__ = [
    "Baseline",
    "BaselineError",
    "NoqaResult",
    "NoqaSpot",
    "add_noqa",
    "atomic_write_bytes",
    "comment_line",
    "finding_fingerprints",
    "finding_keys",
    "fingerprint",
    "in_given_files",
    "insert_noqa",
    "load_baseline",
    "normalise_line",
    "noqa_spot",
    "noqa_targets",
    "place_noqa",
    "write_baseline",
]
