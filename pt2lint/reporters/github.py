"""The ``github`` output format: GitHub Actions workflow commands that annotate the changed lines.

::

    ::error title=PTC101 tensor-item,file=models/net.py,line=7,col=13,endLine=7,endColumn=27::`.item()` reads ...

Severity picks the command: ``error`` for errors, ``warning`` for warnings and
``notice`` for info findings.  Values are escaped as the Actions runner expects
(``%``, CR and LF everywhere; ``:`` and ``,`` in properties too), which the runner
decodes back.  Every other control character (C0, DEL, C1) is percent-encoded the
same way (ESC is ``%1B``), and so is a byte of a file name that is not UTF-8 (``%FF``):
the runner leaves those as they are, but since ``%`` itself is always ``%25`` the
rendering is unambiguous, and no raw control character reaches the log, where a
terminal or the log viewer would act on it.
Reference: GitHub Docs, "Workflow commands for GitHub Actions"; the runner's
``ActionCommand`` unescaping (``%25``, ``%0D``, ``%0A``, ``%3A``, ``%2C``).
"""

from __future__ import annotations

import os
from typing import Optional, Sequence

from pt2lint.diagnostics import Diagnostic
from pt2lint.reporters import ReportContext, fix_marker, register

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def _percent(ch: str) -> str:
    """``ch`` as ``%XX`` when it must not appear raw in a workflow command, else itself."""
    o = ord(ch)
    if ch == "%" or o < 0x20 or 0x7F <= o < 0xA0:
        return f"%{o:02X}"
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape of a file-name byte that is not UTF-8
        return f"%{o - 0xDC00:02X}"
    return ch


def escape_data(text: str) -> str:
    """Escape a workflow command's message: ``%``, CR, LF and every other control
    character become ``%XX`` (upper-case hex of the code point; see the module docstring)."""
    if text.isprintable() and "%" not in text:
        return text
    return "".join(_percent(ch) for ch in text)


def escape_property(text: str) -> str:
    """Escape a workflow command's property value: as :func:`escape_data`, and ``:`` / ``,`` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation_path(filename: str, context: Optional[ReportContext] = None) -> str:
    """The ``file=`` value: relative to the git checkout (where Actions resolves it), else as reported."""
    if filename == "-" or context is None:
        return os.path.normpath(filename).replace(os.sep, "/") if filename != "-" else filename
    from pt2lint.reporters.sarif import find_repo_root

    root = find_repo_root(context.cwd)
    absolute = context.absolute(filename)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:
        rel = os.pardir
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return absolute.replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def annotation(d: Diagnostic, context: Optional[ReportContext] = None) -> str:
    """One finding as a ``::error``/``::warning``/``::notice`` workflow command line.

    Args:
        d: the finding.
        context: the run's working directory, to make the path checkout-relative;
            without it the path is used as reported.
    """
    path = annotation_path(d.filename, context)
    props = [
        ("title", f"{d.code} {d.name}"),
        ("file", path),
        ("line", str(d.start.line)),
        ("col", str(d.start.column)),
        ("endLine", str(d.end.line)),
        ("endColumn", str(d.end.column)),
    ]
    message = f"{d.code} {d.message}"
    marker = fix_marker(d)
    if marker:
        message += f" {marker}"
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{COMMANDS.get(d.severity, 'warning')} {head}::{escape_data(message)}"


@register("github", human=False, description="GitHub Actions annotations (::error file=...,line=...::message)")
def render_github(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """One workflow command per finding."""
    return "".join(annotation(d, context) + "\n" for d in diagnostics)
