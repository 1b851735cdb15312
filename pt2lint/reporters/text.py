"""The ``text`` output format (``path:line:col: CODE message``) and the run summary line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pt2lint.diagnostics import Diagnostic
from pt2lint.reading import printable
from pt2lint.reporters import ReportContext, confirm_marker, fix_marker, register


def format_line(d: Diagnostic) -> str:
    """One finding as ``path:line:col: CODE message`` plus its fix tag (see :func:`fix_marker`)
    and, in confirm mode, its status tag (see :func:`confirm_marker`).  Control characters
    and undecodable bytes in the path and the message are escaped (:func:`pt2lint.reading.printable`)."""
    line = f"{printable(d.filename)}:{d.start.line}:{d.start.column}: {d.code} {printable(d.message)}"
    for marker in (fix_marker(d), confirm_marker(d)):
        if marker:
            line = f"{line} {marker}"
    return line


@register("text", description="one line per finding: path:line:col: CODE message (default)")
def render_text(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """One line per finding, in the order given (the CLI sorts by path, line, column)."""
    return "".join(format_line(d) + "\n" for d in diagnostics)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass(frozen=True)
class RunStats:
    """Counts and timing of one run, for the summary line.

    Attributes:
        findings: number of findings reported.
        files_with_findings: files that have at least one finding.
        files_checked: files read and linted (files with errors excluded).
        errors: files or paths that could not be checked.
        seconds: wall-clock time of the run (discovery to last result).
        bytes_checked: total size of the checked files, in bytes.
        info: how many of the findings are at info severity (they do not fail the run).
    """

    findings: int
    files_with_findings: int
    files_checked: int
    errors: int
    seconds: float
    bytes_checked: int
    info: int = 0


def summary_line(stats: RunStats) -> str:
    """The line printed on stderr after a human-readable report.

    ``Found 3 findings in 2 files (12 files checked in 0.41s, 29 files/s, 0.3 MB/s).``,
    ``All checks passed! (...)``, with ``; N files could not be checked`` added
    when some could not be read.
    """
    secs = max(stats.seconds, 1e-6)
    rate = (
        f"{_plural(stats.files_checked, 'file')} checked in {stats.seconds:.2f}s, "
        f"{stats.files_checked / secs:.0f} files/s, {stats.bytes_checked / secs / 1e6:.1f} MB/s"
    )
    if stats.findings:
        head = f"Found {_plural(stats.findings, 'finding')} in {_plural(stats.files_with_findings, 'file')}"
        if stats.info:
            head += f" ({stats.info} at info severity, which do not fail the run)"
    elif stats.errors:
        head = "No findings"
    else:
        head = "All checks passed!"
    if stats.errors:
        head += f"; {_plural(stats.errors, 'path')} could not be checked"
    end = "" if head.endswith("!") else "."
    return f"{head} ({rate}){end}"
