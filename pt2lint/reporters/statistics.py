"""``--statistics``: how many findings each rule produced, most frequent first (ruff's layout)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Sequence

from pt2lint.diagnostics import Applicability, Diagnostic


@dataclass(frozen=True)
class CodeCount:
    """Findings of one rule: ``count`` of them, ``fixable`` of which carry a safe fix (applied by ``--fix``)."""

    code: str
    name: str
    count: int
    fixable: int


def count_by_code(diagnostics: Sequence[Diagnostic]) -> List[CodeCount]:
    """Per-code counts sorted by count (descending), then code."""
    counts: Counter = Counter(d.code for d in diagnostics)
    # as in ruff, "fixable" means a plain `--fix` applies it: safe fixes only
    fixable: Counter = Counter(
        d.code for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.SAFE
    )
    names: Dict[str, str] = {}
    for d in diagnostics:
        names.setdefault(d.code, d.name)
    return [
        CodeCount(code, names[code], n, fixable[code])
        for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def render_statistics_text(diagnostics: Sequence[Diagnostic]) -> str:
    """Lines ``<count>  <code>  [*] <name>`` (``[*]``: every finding of the rule has a fix, ``[-]``: some do)."""
    rows = count_by_code(diagnostics)
    if not rows:
        return ""
    count_w = max(len(str(r.count)) for r in rows)
    code_w = max(len(r.code) for r in rows)
    out = []
    for r in rows:
        mark = "[*]" if r.fixable == r.count else "[-]" if r.fixable else "[ ]"
        out.append(f"{r.count:>{count_w}}  {r.code:<{code_w}}  {mark} {r.name}")
    return "\n".join(out) + "\n"


def render_statistics_json(diagnostics: Sequence[Diagnostic]) -> str:
    """A JSON array of ``{"code", "name", "count", "fixable"}`` (``fixable``: findings with a fix)."""
    rows = [{"code": r.code, "name": r.name, "count": r.count, "fixable": r.fixable} for r in count_by_code(diagnostics)]
    return json.dumps(rows, indent=2) + "\n"
