"""The ``github`` output format: GitHub Actions workflow commands that annotate the changed lines.

::

    ::error title=PTC101 tensor-item,file=models/net.py,line=7,col=13,endLine=7,endColumn=27::`.item()` reads ...

Severity picks the command: ``error`` for errors, ``warning`` for warnings and
``notice`` for info findings.  Values are escaped as the Actions runner expects
(``%``, CR and LF everywhere; ``:`` and ``,`` in properties too).
Reference: GitHub Docs, "Workflow commands for GitHub Actions".
"""

from __future__ import annotations

import os
from typing import Sequence

from pt2lint.diagnostics import Diagnostic
from pt2lint.reporters import ReportContext, fix_marker, register

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    """One finding as a ``::error``/``::warning``/``::notice`` workflow command line."""
    path = os.path.normpath(d.filename).replace(os.sep, "/") if d.filename != "-" else d.filename
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
    return "".join(annotation(d) + "\n" for d in diagnostics)
