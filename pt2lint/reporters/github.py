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
from typing import Optional, Sequence

from pt2lint.diagnostics import Diagnostic
from pt2lint.reporters import ReportContext, fix_marker, register

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value."""
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
