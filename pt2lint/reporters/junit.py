"""The ``junit`` output format: JUnit XML that CI systems show as a test report.

One ``<testsuite>`` per checked file (its name is the path); each finding is a
failing ``<testcase>`` named ``CODE name`` with the position in ``line`` and
``column`` attributes; a file without findings gets one passing test case, so
a clean run is a green report rather than an empty one.  This is the layout of
ruff's ``junit`` format.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Dict, List, Sequence

from pt2lint.diagnostics import Diagnostic
from pt2lint.reporters import ReportContext, register


_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (they become U+FFFD)."""
    return _XML_INVALID.sub("\ufffd", text)


def build_junit(diagnostics: Sequence[Diagnostic], context: ReportContext) -> ET.Element:
    """The ``<testsuites>`` element for a run."""
    by_file: Dict[str, List[Diagnostic]] = {name: [] for name in context.files}
    for d in diagnostics:
        by_file.setdefault(d.filename, []).append(d)
    total = sum(max(len(v), 1) for v in by_file.values())
    root = ET.Element("testsuites", name="pt2lint", tests=str(total), failures=str(len(diagnostics)), errors="0")
    for filename, diags in by_file.items():
        suite = ET.SubElement(
            root, "testsuite", name=_xml(filename), tests=str(max(len(diags), 1)), failures=str(len(diags)), errors="0", skipped="0"
        )
        if not diags:
            ET.SubElement(suite, "testcase", name="pt2lint", classname=_xml(filename))
            continue
        for d in diags:
            case = ET.SubElement(
                suite, "testcase", name=f"{d.code} {d.name}", classname=_xml(filename),
                file=_xml(filename), line=str(d.start.line), column=str(d.start.column),
            )
            failure = ET.SubElement(case, "failure", message=_xml(d.message), type=d.code)
            failure.text = _xml(f"{filename}:{d.start.line}:{d.start.column}: {d.code} {d.message}")
    return root


@register("junit", human=False, description="JUnit XML: a test suite per file, a failing test case per finding")
def render_junit(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The findings as a JUnit XML document."""
    root = build_junit(diagnostics, context)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
