"""Output formats: a registry from ``--output-format`` name to a reporter.

A reporter turns the run's findings into text for stdout.  It reads
:class:`~pt2lint.diagnostics.Diagnostic` objects only, never rule internals.
To add a format, write a module with a render function, decorate it with
:func:`register`, and import the module at the bottom of this file; the CLI
offers every registered name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Mapping, Optional, Sequence

from pt2lint.diagnostics import DEFAULT_DOCS_URL, Diagnostic, rule_url


@dataclass(frozen=True)
class ReportContext:
    """What a reporter may need besides the findings.

    Attributes:
        cwd: the working directory that relative filenames are relative to.
        sources: decoded file text by filename; filled only for reporters that
            set ``needs_source``.
        files: every file checked, with or without findings, as reported
            (for formats that list clean files too: junit, lsp, html).
        docs_url: the project's ``docs-url`` template for rule links (JSON ``url``,
            SARIF ``helpUri``, LSP ``codeDescription.href``).
    """

    cwd: str = field(default_factory=os.getcwd)
    sources: Mapping[str, str] = field(default_factory=dict)
    files: Sequence[str] = ()
    docs_url: str = DEFAULT_DOCS_URL

    def rule_url(self, code: str) -> str:
        """The documentation link of rule ``code`` under :attr:`docs_url`."""
        return rule_url(code, self.docs_url)

    def absolute(self, filename: str) -> str:
        """``filename`` as an absolute path (``-``, meaning stdin, stays ``-``)."""
        if filename == "-":
            return filename
        return os.path.normpath(os.path.join(self.cwd, filename))


RenderFn = Callable[[Sequence[Diagnostic], ReportContext], str]


@dataclass(frozen=True)
class Reporter:
    """A registered output format.

    Attributes:
        name: the ``--output-format`` value.
        render: ``render(diagnostics, context) -> str``; diagnostics arrive sorted
            by (filename, line, column, code); the text is written to stdout as is.
        needs_source: the engine must keep each file's text (``context.sources``).
        human: meant for people: the CLI adds the summary line on stderr.
        description: one line for ``--help``.
    """

    name: str
    render: RenderFn
    needs_source: bool = False
    human: bool = True
    description: str = ""


REPORTERS: Dict[str, Reporter] = {}


def register(name: str, *, needs_source: bool = False, human: bool = True, description: str = "") -> Callable[[RenderFn], RenderFn]:
    """Decorator registering ``render`` as the output format ``name``.

    Raises:
        ValueError: ``name`` is already registered.
    """

    def decorate(render: RenderFn) -> RenderFn:
        if name in REPORTERS:
            raise ValueError(f"output format {name!r} is registered twice")
        REPORTERS[name] = Reporter(name, render, needs_source, human, description)
        return render

    return decorate


def get_reporter(name: str) -> Reporter:
    """The reporter registered as ``name``.

    Raises:
        KeyError: no such format.
    """
    return REPORTERS[name]


def fix_marker(diagnostic: Diagnostic) -> Optional[str]:
    """The text-format tag for a finding's fix: ``[fix available]``, ``[unsafe fix available]``,
    ``[suggested fix]`` (display-only), or ``None`` when it has no fix."""
    if diagnostic.fix is None:
        return None
    applicability = getattr(diagnostic.fix.applicability, "value", diagnostic.fix.applicability)
    return {"unsafe": "[unsafe fix available]", "display-only": "[suggested fix]"}.get(applicability, "[fix available]")


def confirm_marker(diagnostic: Diagnostic) -> Optional[str]:
    """The text-format tag for a confirm-mode status: ``[confirmed]``, ``[not-reproduced]``,
    ``[not-executed]``, ``[not-confirmed]``, ``[dynamic-only]``, ``[failed: runtime-crash]``;
    ``None`` outside confirm mode."""
    conf = getattr(diagnostic, "confirm", None)
    if conf is None:
        return None
    if conf.status == "failed" and conf.failure:
        return f"[failed: {conf.failure}]"
    return f"[{conf.status}]"


#: A source line up to this many characters is shown whole in ``full``, ``html`` and SARIF
#: snippets; a longer one (generated or minified code) as a window of this many characters
#: around the finding, so that a report stays linear in the number of findings.
SHOWN_LINE_CHARS = 200
#: Of that window, at most this many characters come before the finding's first column.
SHOWN_BEFORE_CHARS = 60
#: What stands for the cut-off part of a line.
ELLIPSIS = "\u2026"


def line_window(length: int, start: int, end: int) -> "tuple[int, int]":
    """The characters ``[a, b)`` to show of a line of ``length`` characters for a finding on
    ``[start, end)`` (0-based, clamped to the line): the whole line when it is at most
    :data:`SHOWN_LINE_CHARS` long, else :data:`SHOWN_LINE_CHARS` characters starting up to
    :data:`SHOWN_BEFORE_CHARS` before ``start`` (a long finding is cut at the window's end)."""
    if length <= SHOWN_LINE_CHARS:
        return 0, length
    start = min(max(start, 0), length)
    a = max(0, start - SHOWN_BEFORE_CHARS)
    b = min(length, a + SHOWN_LINE_CHARS)
    return max(0, b - SHOWN_LINE_CHARS), b


def clip_line(text: str, a: int, b: int) -> str:
    """``text[a:b]`` with :data:`ELLIPSIS` where the line goes on before or after it."""
    return (ELLIPSIS if a > 0 else "") + text[a:b] + (ELLIPSIS if b < len(text) else "")


# Built-in formats register themselves on import.
from pt2lint.reporters import full, json, text  # noqa: E402,F401  (import order is the registry order)
from pt2lint.reporters import github, html, jsonlines, junit, lsp, sarif  # noqa: E402,F401

__all__ = [
    "ELLIPSIS", "REPORTERS", "ReportContext", "Reporter", "SHOWN_LINE_CHARS", "clip_line", "confirm_marker", "fix_marker",
    "get_reporter", "line_window", "register",
]
