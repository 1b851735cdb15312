"""Gitignore-style glob patterns, compiled so that no pattern can make matching slow.

Every glob pt2lint matches (``.gitignore`` lines, ``exclude`` / ``extend-exclude``,
``per-file-ignores``) is compiled here, with pathspec's ``GitIgnoreSpec``.

pathspec turns each ``*`` into the regex ``[^/]*``; with Python's backtracking ``re``
a run of them (``*********x``) or many stars split by literals (``*a*a*a*a*a*b``) takes
time exponential or polynomial in the pattern when a path does not match. Two defences:

* :func:`normalize_pattern` collapses every run of ``*`` that is not a ``**`` path
  component into one ``*`` (``[^/]*[^/]*`` and ``[^/]*`` match the same strings), so
  the run case is gone whatever the regex engine;
* ``google-re2`` is a dependency, and pathspec matches with it when it is importable
  (its default, "best" backend): RE2 matches in time linear in the path, whatever
  the pattern.

Patterns longer than :data:`MAX_PATTERN_CHARS` are refused (:func:`pattern_problem`).
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence

import pathspec

#: The longest pattern accepted, in characters: a pattern longer than the longest path
#: (``PATH_MAX`` is 4096 bytes on Linux) is a mistake, and its regex costs memory.
MAX_PATTERN_CHARS = 4096


def _collapse_segment(segment: str) -> str:
    """``segment`` (no ``/``) with each run of unescaped ``*`` made one ``*``.

    A segment made only of stars keeps its own meaning in pathspec: ``*`` matches one
    or more characters, ``**`` any number of directories, and three or more stars
    an empty segment too; so ``*`` and ``**`` are kept and longer runs become ``***``.
    """
    if segment and segment.strip("*") == "":
        return segment if len(segment) <= 3 else "***"
    out: List[str] = []
    i, end = 0, len(segment)
    while i < end:
        char = segment[i]
        if char == "\\" and i + 1 < end:
            out.append(segment[i : i + 2])
            i += 2
            continue
        out.append(char)
        i += 1
        if char == "*":
            while i < end and segment[i] == "*":
                i += 1
    return "".join(out)


def normalize_pattern(pattern: str) -> str:
    """An equivalent gitignore pattern without runs of ``*`` (other than ``**`` components).

    In gitwildmatch, a ``*`` matches any run of characters but ``/``, so ``a***b`` and
    ``a*b`` match the same paths; a component made only of stars keeps its meaning
    (``*``: one or more characters; ``**``: ``**/x``, ``a/**``, ``a/**/b``; three or more
    stars, which pathspec lets match an empty component: ``***``). Comments, the leading ``!`` and escaped stars (``\\*``) are kept as they are.
    Equivalence with pathspec's reading of the raw pattern is tested on generated
    patterns and paths (tests/test_globs.py).  One reading differs from pathspec's, to
    agree with git's: a trailing ``/**/`` matches the directories below, not the one
    before it (:func:`_git_directory_tail`).

    Args:
        pattern: one gitignore line.

    Returns:
        The normalised line (``pattern`` itself when nothing changes).
    """
    if "**" not in pattern or pattern.startswith("#"):
        return pattern
    body = pattern
    if not body.endswith("\\ "):  # pathspec strips unescaped trailing whitespace first
        body = body.rstrip()
    prefix = ""
    if body.startswith("!"):
        prefix, body = "!", body[1:]
    segments = [_collapse_segment(segment) for segment in body.split("/")]
    return prefix + "/".join(_git_directory_tail(segments))


def _git_directory_tail(segments: List[str]) -> List[str]:
    """``a/**/`` as git reads it: the directories below ``a`` (``a/*/``, which ignores every file
    inside them too), not ``a`` itself.  pathspec matches ``a/m.py`` with ``a/**/`` and so
    dropped files git keeps (checked against ``git check-ignore``: tests/test_globs.py)."""
    if len(segments) >= 2 and segments[-1] == "" and segments[-2] == "**":
        return segments[:-2] + ["*", ""]
    return segments


class Globs:
    """Compiled gitignore lines: :meth:`match_file` as pathspec's ``GitIgnoreSpec`` has it.

    RE2 matches UTF-8, so a path holding a surrogate escape (a file name that is not
    UTF-8: each bad byte is one ``U+DC80``-``U+DCFF`` character) cannot go to it; such a
    path is matched by the same normalised patterns with Python's ``re`` instead,
    which reads each bad byte as one character, as ``*`` and ``?`` expect.  So are all
    paths when the patterns together are too big for RE2's memory budget (a
    ``.gitignore`` of some thousand lines): the star-run normalisation still holds there.

    Raises:
        What pathspec raises for a bad pattern (``GitIgnorePatternError``, ``re.error``).
    """

    def __init__(self, lines: Sequence[str]) -> None:
        self._lines = [normalize_pattern(line) for line in lines]
        self._re_spec: Optional[pathspec.GitIgnoreSpec] = None
        try:
            self.spec = pathspec.GitIgnoreSpec.from_lines(self._lines)
        except Exception:  # a bad pattern, or a set too big for RE2's memory budget
            # Python's re has no such budget: a bad pattern raises here again, a big set compiles
            self.spec = self._python_re()

    def _python_re(self) -> pathspec.GitIgnoreSpec:
        if self._re_spec is None:
            self._re_spec = pathspec.GitIgnoreSpec.from_lines(self._lines, backend="simple")
        return self._re_spec

    def match_file(self, path: str) -> bool:
        """Whether the patterns (the last that matches deciding) ignore ``path`` (``/``-separated)."""
        try:
            return self.spec.match_file(path)
        except UnicodeEncodeError:
            return self._python_re().match_file(path)

    def check_file(self, path: str) -> Any:
        """pathspec's ``CheckResult`` for ``path``: ``include`` is ``True`` (ignored),
        ``False`` (re-included by a ``!`` line) or ``None`` (no pattern matches)."""
        try:
            return self.spec.check_file(path)
        except UnicodeEncodeError:
            return self._python_re().check_file(path)


def compile_patterns(lines: Iterable[str]) -> Globs:
    """:class:`Globs` for ``lines``, each normalised with :func:`normalize_pattern`.

    Args:
        lines: gitignore lines (blank lines and comments allowed).

    Raises:
        Whatever pathspec raises for a bad pattern (``GitIgnorePatternError``,
        ``re.error``, ...): check config values with :func:`pattern_problem` first.
    """
    return Globs(list(lines))


def pattern_problem(pattern: str) -> Optional[str]:
    """Why ``pattern`` is not a usable gitignore-style pattern (``None``: it is).

    A pattern over :data:`MAX_PATTERN_CHARS` characters is refused. Otherwise it is
    compiled with :func:`compile_patterns` and matched once, since some errors (a
    reversed character range such as ``[z-a]``) only surface in the regex.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"longer than the limit of {MAX_PATTERN_CHARS} characters"
    if not pattern.strip():
        return "an empty pattern matches no path"
    if "\0" in pattern:
        return "a NUL character is in no path, so the pattern matches none"
    if _unclosed_bracket(pattern):
        return "a '[' with no closing ']' matches no path (write '[[]' for a literal '[')"
    try:
        compile_patterns([pattern]).match_file("probe/probe.py")
    except Exception as exc:  # pathspec and re raise several types for a bad pattern
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return reason
    return None


def _unclosed_bracket(pattern: str) -> bool:
    """Whether ``pattern`` has a ``[`` that opens a bracket expression with no closing ``]``.

    In a gitignore bracket expression a ``]`` right after ``[`` or ``[!`` is a member, not
    the end (``[!]`` is unclosed); a backslash escapes the next character.  Such a pattern
    matches no path in pathspec (measured: ``[``, ``a[``, ``[!]``, ``x[]y`` against the
    same names spelled out) nor in git's wildmatch, which aborts the match.
    """
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            if j >= n:
                return True
            i = j + 1
            continue
        i += 1
    return False


def shown_pattern(pattern: str, limit: int = 60) -> str:
    """``repr(pattern)``, shortened to about ``limit`` characters for an error message."""
    if len(pattern) <= limit:
        return repr(pattern)
    return repr(pattern[:limit]) + f"... ({len(pattern)} characters)"
