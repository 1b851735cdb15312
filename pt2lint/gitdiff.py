"""``check --diff-base REF``: report only what changed since a git ref.

The changed lines come from git itself: ``git diff --unified=0 -M REF --`` compares
the working tree (committed, staged and unstaged changes alike) with ``REF``, and
``git ls-files --others --exclude-standard`` adds untracked files, every line of
which counts as changed.  A renamed file is known by its new path; only the lines
the rename edited count as changed.

A finding is kept when the statement it flags touches a changed line, or when one
of the calls that lead to it (``Diagnostic.call_sites``, possibly in other files)
does.  A finding reached from several files is judged on every route before the
engine merges the routes into one, so a changed route is never hidden behind an
unchanged one.

Files are narrowed before analysis only where that cannot lose a kept finding:
an unchanged file is analysed only when it may import (directly or through other
files) a changed file.  The test is textual and conservative: an unchanged file
that never names a changed module (its file stem, or its package's name for an
``__init__.py``) as a word, and has no relative import into a changed package,
cannot reach it.
"""

from __future__ import annotations

import bisect
import os
import re
import subprocess
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Set, Tuple

from pt2lint.diagnostics import Diagnostic, FileResult

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class GitDiffError(ValueError):
    """git is missing, the directory is not in a repository, or the ref is unknown (one-line message)."""


@dataclass(frozen=True)
class FileChanges:
    """The changed lines of one file, in its working-tree numbering.

    Attributes:
        lines: 1-based lines that were added or edited, sorted.
        cuts: ``n`` for each place where lines were deleted between line ``n`` and
            line ``n + 1`` (``0``: at the top of the file), sorted.
        whole: every line counts as changed (an untracked file).
    """

    lines: Tuple[int, ...] = ()
    cuts: Tuple[int, ...] = ()
    whole: bool = False

    def touches(self, first: int, last: int) -> bool:
        """True when lines ``first..last`` (inclusive) hold a changed line or a deletion inside them."""
        return self.whole or _any_in(self.lines, first, last) or _any_in(self.cuts, first, last - 1)


def _any_in(values: Tuple[int, ...], lo: int, hi: int) -> bool:
    """True when the sorted ``values`` hold a number in ``lo..hi`` (inclusive)."""
    if hi < lo:
        return False
    i = bisect.bisect_left(values, lo)
    return i < len(values) and values[i] <= hi


@dataclass
class Changes:
    """What changed in a git working tree since a ref.

    Attributes:
        root: the repository's top-level directory (real path).
        ref: the ref as the user gave it.
        files: real absolute path -> its :class:`FileChanges`; files only deleted are absent.
    """

    root: str
    ref: str
    files: Dict[str, FileChanges] = field(default_factory=dict)

    def for_path(self, path: str) -> Optional[FileChanges]:
        """The changes of ``path`` (relative to the working directory, or absolute), or ``None`` when unchanged."""
        return self.files.get(os.path.realpath(path))

    def touches(self, path: str, first: int, last: int) -> bool:
        """True when lines ``first..last`` of ``path`` hold a change."""
        changes = self.for_path(path)
        return changes is not None and changes.touches(first, last)

    def keeps(self, d: Diagnostic) -> bool:
        """True when finding ``d`` is on a changed statement or is reached through a changed call."""
        if d.filename == "-":
            return False
        first, last = d.statement_lines or (d.start.line, d.end.line)
        first, last = min(first, d.start.line), max(last, d.start.line)
        if self.touches(d.filename, first, last):
            return True
        for _symbol, filename, line, _column, s_first, s_last in d.call_sites:
            lo, hi = (s_first, s_last) if s_first and s_last else (line, line)
            if self.touches(filename, min(lo, line), max(hi, line)):
                return True
        return False


def _git(args: Sequence[str], cwd: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            ["git", "-c", "core.quotePath=false", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False
        )
    except FileNotFoundError:
        raise GitDiffError("--diff-base needs git, which is not installed or not on PATH") from None
    except OSError as exc:
        raise GitDiffError(f"--diff-base: cannot run git: {(exc.strerror or type(exc).__name__).lower()}") from None


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip().splitlines()
    return text[-1] if text else "unknown error"


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote_path(raw: bytes) -> bytes:
    """A path as git prints it in a diff header, C-quoted (``"a\\tb"``, octal bytes) or not, as raw bytes."""
    if not raw.startswith(b'"') or not raw.endswith(b'"') or len(raw) < 2:
        return raw
    body = raw[1:-1].decode("latin-1")
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if i + 3 < len(body) and all(c in "01234567" for c in body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
        out.append(ord(ch))
        i += 1
    return bytes(out)


def parse_diff(data: bytes) -> Dict[bytes, FileChanges]:
    """Changed lines per new-side path from ``git diff --unified=0 --no-prefix`` output.

    Args:
        data: the raw diff (bytes: paths need not be UTF-8).

    Returns:
        Repository-relative path (bytes, as git names it in the working tree) ->
        :class:`FileChanges`.  A deleted file (``+++ /dev/null``) is left out; a binary
        or mode-only change, or a pure rename, has no changed lines but is present.
    """
    out: Dict[bytes, Tuple[Set[int], Set[int]]] = {}
    current: Optional[bytes] = None
    for line in data.split(b"\n"):
        if line.startswith(b"diff --git "):
            current = None
        elif line.startswith(b"rename to ") or line.startswith(b"copy to "):
            current = unquote_path(line.split(b" ", 2)[2])
            out.setdefault(current, (set(), set()))
        elif line.startswith(b"+++ "):
            target = line[4:].rstrip(b"\t")
            current = None if target == b"/dev/null" else unquote_path(target)
            if current is not None:
                out.setdefault(current, (set(), set()))
        elif line.startswith(b"@@") and current is not None:
            m = _HUNK.match(line)
            if m is None:
                continue
            start = int(m.group(1))
            count = int(m.group(2)) if m.group(2) is not None else 1
            lines, cuts = out[current]
            if count == 0:
                cuts.add(start)  # deleted after line `start` (git numbers it so)
            else:
                lines.update(range(start, start + count))
    return {path: FileChanges(tuple(sorted(lines)), tuple(sorted(cuts))) for path, (lines, cuts) in out.items()}


def changes_since(ref: str, cwd: Optional[str] = None) -> Changes:
    """The lines changed in the working tree of the repository holding ``cwd`` since ``ref``.

    Args:
        ref: any commit-ish git understands (``HEAD~1``, ``origin/main``, a SHA).
        cwd: a directory inside the working tree (default: the process's).

    Raises:
        GitDiffError: git is missing, ``cwd`` is not in a git working tree, or ``ref``
            does not name a commit.
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if top.returncode != 0:
        raise GitDiffError(f"--diff-base: {cwd} is not inside a git working tree ({_first_line(top.stderr)})")
    root = os.path.realpath(os.fsdecode(top.stdout.rstrip(b"\n")))
    if ref.startswith("-"):
        raise GitDiffError(f"--diff-base: unknown git ref {ref!r}")
    verify = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root)
    if verify.returncode != 0:
        raise GitDiffError(f"--diff-base: unknown git ref {ref!r} (not a commit in {root})")
    commit = verify.stdout.decode("ascii", "replace").strip()
    diff = _git(
        ["diff", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-prefix", "-M", commit, "--"], root
    )
    if diff.returncode != 0:
        raise GitDiffError(f"--diff-base: git diff failed: {_first_line(diff.stderr)}")
    untracked = _git(["ls-files", "-z", "--others", "--exclude-standard"], root)
    if untracked.returncode != 0:
        raise GitDiffError(f"--diff-base: git ls-files failed: {_first_line(untracked.stderr)}")
    files: Dict[str, FileChanges] = {}
    for rel, changes in parse_diff(diff.stdout).items():
        files[os.path.realpath(os.path.join(root, os.fsdecode(rel)))] = changes
    for rel in untracked.stdout.split(b"\0"):
        if rel:
            files[os.path.realpath(os.path.join(root, os.fsdecode(rel)))] = FileChanges(whole=True)
    return Changes(root, ref, files)


def keep_changed(results: Sequence[FileResult], changes: Changes) -> List[FileResult]:
    """Drop every finding that is neither on a changed statement nor reached through a changed call.

    Args:
        results: the engine's per-file results *before* findings reached from several
            files are merged (``lint_paths(..., merge=False)``), so each route is judged.
        changes: from :func:`changes_since`.

    Returns:
        The results with only the kept findings, merged as ``lint_paths`` merges them.
    """
    from pt2lint.engine import merge_results

    kept = [replace(r, diagnostics=tuple(d for d in r.diagnostics if changes.keeps(d))) for r in results]
    return merge_results(kept)


def _stem_names(path: str) -> Set[str]:
    base = os.path.basename(path)
    stem = base[:-3] if base.endswith(".py") else os.path.splitext(base)[0]
    if stem == "__init__":
        return {os.path.basename(os.path.dirname(path))}
    return {stem}


def _read_text(path: str) -> Optional[str]:
    from pt2lint.reading import read_bytes

    try:  # regular files only, within the default size limit (pt2lint.reading)
        return read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return None


_RELATIVE = re.compile(r"^\s*from\s+\.", re.MULTILINE)


def narrow(paths: Sequence[str], changes: Changes) -> List[int]:
    """Indexes of the ``paths`` worth analysing for :func:`keep_changed`.

    A changed file is always analysed.  An unchanged one is analysed when it may
    import a changed file, directly or through other files of ``paths``: its text
    names an affected module (file stem, or package name for ``__init__.py``) as a
    word, or it has a relative import and lies under an affected package.  This
    over-approximates the imports the analysis follows, so no kept finding is lost;
    an unreadable file is always analysed.

    Args:
        paths: the files discovery found (relative to the working directory or absolute).
        changes: from :func:`changes_since`.
    """
    real = [os.path.realpath(p) for p in paths]
    chosen: Set[int] = {i for i, r in enumerate(real) if r in changes.files}
    names: Set[str] = set()
    packages: Set[str] = set()

    def affect(path: str) -> None:
        names.update(_stem_names(path))
        if os.path.basename(path) == "__init__.py":
            packages.add(os.path.dirname(path))

    for path in changes.files:  # changed files outside `paths` can still be imported
        if path.endswith(".py") or path.endswith(".pyi"):
            affect(path)
    texts: Dict[int, Optional[str]] = {}
    grew = True
    while grew:
        grew = False
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\b") if names else None
        for i, path in enumerate(real):
            if i in chosen:
                continue
            if i not in texts:
                texts[i] = _read_text(path)
            text = texts[i]
            hit = text is None or (pattern is not None and pattern.search(text) is not None)
            if not hit and packages and _RELATIVE.search(text or ""):
                hit = any(path.startswith(pkg + os.sep) for pkg in packages)
            if hit:
                chosen.add(i)
                affect(path)
                grew = True
    return sorted(chosen)


__all__ = ["Changes", "FileChanges", "GitDiffError", "changes_since", "keep_changed", "narrow", "parse_diff", "unquote_path"]
