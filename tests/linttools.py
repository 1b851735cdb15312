"""Helpers shared by the tests that lint a source snippet and compare its findings."""

from __future__ import annotations

import textwrap
from typing import Collection, List, Optional, Tuple

from pt2lint.settings import LintSettings, resolve_selection
from pt2lint.engine import FileResult, lint_source

#: Every rule enabled, every other setting at its default.
DEFAULT = LintSettings(enabled=resolve_selection())


def lint_snippet(code: str, settings: LintSettings = DEFAULT) -> FileResult:
    """Lint ``code`` as the file ``m.py``.

    Args:
        code: Python source; common leading indentation and leading newlines are removed,
            so line 1 is the first non-blank line of the snippet.
        settings: the lint settings (default: every rule on).

    Returns:
        The engine's result for the snippet.
    """
    return lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", settings)


def found(
    code: str,
    settings: LintSettings = DEFAULT,
    *,
    codes: Optional[Collection[str]] = None,
) -> List[Tuple[int, str]]:
    """The sorted ``(line, code)`` pairs of the findings in a snippet.

    Args:
        code: the snippet (see :func:`lint_snippet`).
        settings: the lint settings.
        codes: keep only findings whose rule code is in this collection; ``None`` keeps all.
    """
    result = lint_snippet(code, settings)
    return sorted(
        (d.start.line, d.code) for d in result.diagnostics if codes is None or d.code in codes
    )


def found_with_messages(code: str, settings: LintSettings = DEFAULT) -> List[Tuple[int, str, str]]:
    """The sorted ``(line, code, message)`` triples of the findings in a snippet."""
    result = lint_snippet(code, settings)
    return sorted((d.start.line, d.code, d.message) for d in result.diagnostics)
