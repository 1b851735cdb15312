"""The ``html`` output format: one self-contained page for reading a run's findings in a browser.

The page has no scripts, fonts or links to fetch: a summary per rule, per rule
category and per file, then for every finding the flagged source region with its lines
highlighted (the flagged columns marked), where it is reached from, the rule's
explanation from its spec, and the fix as a unified diff when there is one.
Write it with ``--output-format html --output-file report.html``.
"""

from __future__ import annotations

import difflib
import html
from collections import Counter, OrderedDict
from typing import Dict, List, Optional, Sequence

from pt2lint import __version__
from pt2lint.diagnostics import Diagnostic, Edit
from pt2lint.lines import SourceLines, lines_of
from pt2lint.reading import printable
from pt2lint.reporters import ELLIPSIS, SHOWN_LINE_CHARS, ReportContext, clip_line, fix_marker, line_window, register
from pt2lint.specs import load_specs

CONTEXT_LINES = 2

_CSS = """
:root { --bg:#fff; --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --hl:#fff8c5; --mark:#ffd33d;
        --err:#cf222e; --warn:#9a6700; --info:#0969da; --add:#dafbe1; --del:#ffebe9; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg);
       margin: 0 auto; max-width: 1100px; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 0; font-weight: 600; }
.muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; } th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.finding { border: 1px solid var(--line); border-left: 4px solid var(--warn); border-radius: 6px; margin: 12px 0; padding: 10px 14px; }
.finding.sev-error { border-left-color: var(--err); } .finding.sev-info { border-left-color: var(--info); }
.badge { display: inline-block; font-weight: 600; padding: 0 6px; border-radius: 4px; color: #fff; background: var(--warn); }
.sev-error .badge, .badge.sev-error { background: var(--err); } .sev-info .badge, .badge.sev-info { background: var(--info); }
.badge.sev-warning { background: var(--warn); }
pre.source, pre.diff { background: #f6f8fa; border-radius: 6px; padding: 8px 0; overflow-x: auto; margin: 8px 0; }
pre.source span.ln { display: block; padding: 0 12px; white-space: pre; }
pre.source span.ln.hl { background: var(--hl); }
pre.source span.no { display: inline-block; min-width: 3.5em; color: var(--muted); user-select: none; }
pre.source mark { background: var(--mark); border-radius: 2px; }
pre.diff span { display: block; padding: 0 12px; white-space: pre; }
pre.diff .add { background: var(--add); } pre.diff .del { background: var(--del); } pre.diff .hunk { color: var(--muted); }
details { margin: 6px 0; } summary { cursor: pointer; color: var(--muted); }
.explain p { margin: 4px 0; white-space: pre-wrap; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _name(filename: str) -> str:
    """A file name for the page: control characters escaped (``\\x1b``, as the text output
    prints them), then HTML-escaped."""
    return _e(printable(filename))


def _anchor(filename: str) -> str:
    return "file-" + "".join(ch if ch.isalnum() else "-" for ch in filename)


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """``source`` with ``edits`` applied (1-based lines and character columns; end exclusive).

    Edits are applied from last to first so earlier offsets stay valid; edits
    that overlap an already applied one are skipped.
    """
    offset = SourceLines(source).offset
    out = source
    last_start = len(source) + 1
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        a, b = offset(e.start.line, e.start.column), offset(e.end.line, e.end.column)
        if b > last_start or a > b:
            continue
        out = out[:a] + e.content + out[b:]
        last_start = a
    return out


def fix_diff(source: str, d: Diagnostic, filename: str) -> str:
    """The unified diff of applying ``d``'s fix to ``source`` (empty when it changes nothing)."""
    if d.fix is None or not d.fix.edits or not source:
        return ""
    after = apply_edits(source, d.fix.edits)
    if after == source:
        return ""
    diff = difflib.unified_diff(
        SourceLines(source).texts(), SourceLines(after).texts(), fromfile=f"a/{printable(filename)}", tofile=f"b/{printable(filename)}", n=CONTEXT_LINES, lineterm=""
    )
    return "\n".join(diff)


def _source_block(d: Diagnostic, source: str) -> str:
    """The finding's lines with :data:`CONTEXT_LINES` around them, the flagged part marked; a line
    longer than :data:`pt2lint.reporters.SHOWN_LINE_CHARS` is shown as a window around the finding."""
    lines = lines_of(source)
    if not 1 <= d.start.line <= len(lines):
        return ""
    last_flagged = min(max(d.end.line, d.start.line), len(lines))
    if d.end.line > d.start.line and d.end.column == 1:
        last_flagged = max(d.start.line, last_flagged - 1)
    first = max(1, d.start.line - CONTEXT_LINES)
    last = min(len(lines), last_flagged + CONTEXT_LINES)
    column = max(d.start.column - 1, 0)
    out: List[str] = []
    for n in range(first, last + 1):
        text = lines.text(n)
        flagged = d.start.line <= n <= last_flagged
        if flagged:
            a = d.start.column - 1 if n == d.start.line else 0
            b = d.end.column - 1 if n == d.end.line else len(text)
            a, b = max(0, min(a, len(text))), max(0, min(b, len(text)))
            wa, wb = line_window(len(text), a, b)
            a, b = min(max(a, wa), wb), min(max(b, wa), wb)
            lead, tail = (ELLIPSIS if wa > 0 else ""), (ELLIPSIS if wb < len(text) else "")
            if b > a:
                body = _e(lead + text[wa:a]) + "<mark>" + _e(text[a:b]) + "</mark>" + _e(text[b:wb] + tail)
            else:
                body = _e(clip_line(text, wa, wb))
        else:
            body = _e(clip_line(text, *line_window(len(text), column, column)))
        cls = "ln hl" if flagged else "ln"
        out.append(f'<span class="{cls}" data-line="{n}"><span class="no">{n}</span>{body}</span>')
    return '<pre class="source">' + "".join(out) + "</pre>"


def _diff_block(diff: str, column: int = 0) -> str:
    """``diff`` as HTML rows; a source line longer than :data:`pt2lint.reporters.SHOWN_LINE_CHARS`
    is shown as a window around the 0-based ``column`` (where the finding starts)."""
    rows = []
    for line in diff.split("\n"):  # fix_diff joins with \n; a form feed inside a line is no line end
        cls = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
        if line.startswith(("+++", "---")):
            cls = "hunk"
        elif cls != "hunk" and len(line) > SHOWN_LINE_CHARS + 1:
            line = line[0] + clip_line(line[1:], *line_window(len(line) - 1, column, column))
        rows.append(f'<span class="{cls}">{_e(line) or " "}</span>')
    return '<pre class="diff">' + "".join(rows) + "</pre>"


def _explain(code: str) -> str:
    spec = load_specs().get(code)
    if spec is None:
        return ""
    parts = [
        f"<p><strong>What it does.</strong> {_e(spec.summary.strip())}</p>",
        f"<p><strong>Why is this bad?</strong> {_e(spec.why.strip())}</p>",
        f"<p><strong>Use instead.</strong> {_e(spec.fix.strip())}</p>",
    ]
    if spec.gb_types:
        parts.append(f"<p class=\"muted\">Dynamo graph-break types: {_e(', '.join(spec.gb_types))}</p>")
    return '<details class="explain"><summary>Rule explanation</summary>' + "".join(parts) + "</details>"


def _finding(d: Diagnostic, source: str, index: int) -> str:
    marker = fix_marker(d)
    head = (
        f'<h3><span class="badge">{_e(d.code)}</span> {_e(d.message)}'
        + (f' <span class="muted">{_e(marker)}</span>' if marker else "")
        + "</h3>"
    )
    where = f'<div class="muted">{_name(d.filename)}:{d.start.line}:{d.start.column} &middot; {_e(d.name)} &middot; {_e(d.severity)}'
    if d.symbol:
        where += f" &middot; in <code>{_e(d.symbol)}</code>"
        if d.call_chain:
            where += " via <code>" + _e(" \u2192 ".join(d.call_chain)) + "</code>"
    where += "</div>"
    body = [head, where, _source_block(d, source)]
    diff = fix_diff(source, d, d.filename)
    if diff:
        body.append(f"<div><strong>Fix</strong> ({_e(getattr(d.fix.applicability, 'value', d.fix.applicability))}): {_e(d.fix.message)}</div>")
        body.append(_diff_block(diff, max(d.start.column - 1, 0)))
    elif d.fix is not None and d.fix.message:
        body.append(f"<div><strong>Fix:</strong> {_e(d.fix.message)}</div>")
    body.append(_explain(d.code))
    return (
        f'<article class="finding sev-{_e(d.severity)}" id="finding-{index}" data-code="{_e(d.code)}" '
        f'data-file="{_name(d.filename)}" data-line="{d.start.line}">' + "".join(body) + "</article>"
    )


def render_page(diagnostics: Sequence[Diagnostic], context: ReportContext, title: str = "pt2lint report") -> str:
    """The whole HTML document for a run."""
    specs = load_specs()
    by_file: "OrderedDict[str, List[Diagnostic]]" = OrderedDict((f, []) for f in context.files)
    for d in diagnostics:
        by_file.setdefault(d.filename, []).append(d)
    per_rule = Counter(d.code for d in diagnostics)
    names: Dict[str, Diagnostic] = {}
    for d in diagnostics:
        names.setdefault(d.code, d)
    n_files = len(by_file)
    flagged_files = sum(1 for v in by_file.values() if v)
    out: List[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="muted" id="totals">{len(diagnostics)} finding{"s" if len(diagnostics) != 1 else ""} in '
        f'{flagged_files} file{"s" if flagged_files != 1 else ""}'
        + (f" ({n_files} checked)" if context.files else "")
        + f" &middot; pt2lint {_e(__version__)}</p>",
    ]
    if not diagnostics:
        out.append('<p id="clean">All checks passed!</p>')
    else:
        out.append('<h2>By rule</h2><table id="by-rule"><thead><tr><th>Code</th><th>Rule</th><th>Severity</th>'
                   '<th class="num">Findings</th><th>What it flags</th></tr></thead><tbody>')
        for code, count in sorted(per_rule.items(), key=lambda kv: (-kv[1], kv[0])):
            spec = specs.get(code)
            d0 = names[code]
            summary = spec.summary.strip() if spec else ""
            out.append(
                f'<tr data-code="{_e(code)}"><td><span class="badge sev-{_e(d0.severity)}">{_e(code)}</span></td>'
                f"<td>{_e(d0.name)}</td><td>{_e(d0.severity)}</td><td class=\"num\">{count}</td><td>{_e(summary)}</td></tr>"
            )
        out.append("</tbody></table>")
        per_category: "OrderedDict[str, List[str]]" = OrderedDict()
        for code in sorted(per_rule):
            per_category.setdefault(names[code].category, []).append(code)
        out.append('<h2>By category</h2><table id="by-category"><thead><tr><th>Category</th>'
                   '<th class="num">Findings</th><th>Rules</th></tr></thead><tbody>')
        for category, codes in sorted(per_category.items(), key=lambda kv: (-sum(per_rule[c] for c in kv[1]), kv[0])):
            out.append(
                f'<tr data-category="{_e(category)}"><td>{_e(category)}</td>'
                f'<td class="num">{sum(per_rule[c] for c in codes)}</td><td>{_e(", ".join(codes))}</td></tr>'
            )
        out.append("</tbody></table>")
        out.append('<h2>By file</h2><table id="by-file"><thead><tr><th>File</th><th class="num">Findings</th>'
                   "<th>Rules</th></tr></thead><tbody>")
        for filename, diags in by_file.items():
            if not diags:
                continue
            codes = ", ".join(sorted({d.code for d in diags}))
            out.append(
                f'<tr><td><a href="#{_anchor(filename)}">{_name(filename)}</a></td><td class="num">{len(diags)}</td>'
                f"<td>{_e(codes)}</td></tr>"
            )
        out.append("</tbody></table>")
        out.append("<h2>Findings</h2>")
        index = 0
        for filename, diags in by_file.items():
            if not diags:
                continue
            out.append(f'<section class="file" id="{_anchor(filename)}"><h2>{_name(filename)}</h2>')
            source: Optional[str] = context.sources.get(filename)
            for d in diags:
                index += 1
                out.append(_finding(d, source or "", index))
            out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


@register("html", needs_source=True, human=False, description="a self-contained HTML page (use with --output-file)")
def render_html(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The findings as one self-contained HTML page."""
    return render_page(diagnostics, context)
