"""The Dynamo facts table and the rules agree: every call the table records as a graph break,
linted inside a compiled function, is reported at its line by a rule whose spec names the
break's graph-break id -- or is in :data:`NOT_REPORTED`, each with the reason.

The probes are rebuilt exactly as ``tools/gen_dynamo_facts.py`` ran them (its imports and its
probe variables: ``x`` a float tensor, ``a = x.numpy()``, ...), one ``@torch.compile``d function
per entry, so a fact that no rule reads, or a rule that reports an id its spec does not list,
fails here.  Needs torch only to load the generator's probe scaffolding.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection
from pt2lint.specs import load_specs

ROOT = Path(__file__).resolve().parent.parent

#: (section, entry) -> why no rule reports the break the probe saw.
NOT_REPORTED = {
    ("calls", "inspect.signature"): "probed on a builtin (`inspect.signature(len)`); on the Python functions and "
    "methods model code passes, Dynamo's InspectSignatureVariable traces it (measured)",
    ("skipped_calls", "torch.jit.trace"): "probed without arguments, the call breaks inside on the missing "
    "argument (GB0098, unconfirmed); a module it traces is PTC328 where forward uses it",
    ("skipped_calls", "torch.jit.trace_module"): "as torch.jit.trace",
    ("shape_ops", "numpy.array_equal(a, 0)"): "NumPy comparison with a Python scalar, a break of another id "
    "(GB0208) than the array form PTC105 reports",
    ("shape_ops", "numpy.array_equal(ai, 3)"): "as numpy.array_equal(a, 0)",
    ("shape_ops", "numpy.linalg.matrix_rank(ai)"): "breaks for integer arrays only (the float form traced); the "
    "analysis does not track NumPy dtypes",
    ("shape_ops", "numpy.linalg.matrix_rank(ai, 3)"): "as numpy.linalg.matrix_rank(ai)",
    ("shape_ops", "torch.nn.functional.threshold(x, 0, 0, n4)"): "a tensor `value` makes the Python wrapper branch "
    "on it (GB0170), where the other arguments are Python numbers in model code",
    ("shape_ops", "torch.sym_fresh_size(n4)"): "a tracing helper of torch's symbolic shapes, not called from model code",
}


def _breaking_entries():
    table = json.loads((ROOT / "pt2lint" / "data" / "dynamo_facts.json").read_text(encoding="utf-8"))
    for section, entries in table.items():
        if not isinstance(entries, dict):
            continue
        for key, entry in entries.items():
            if isinstance(entry, dict) and entry.get("outcome") == "breaks" and entry.get("gb") and entry.get("probe"):
                yield section, key, entry


def _probe_source(tool, entries):
    """One compiled function per entry, laid out as the generator's probe module; the line of
    each probed call -> its entry."""
    lines = tool.PROBE_IMPORTS.splitlines()
    where = {}
    for i, (section, key, entry) in enumerate(entries):
        used = tool._names(entry["probe"])
        lines += ["", "", "@torch.compile", f"def probe_{i}(x):", "    y = x + 1"]
        lines += [f"    {var} = {expr}" for var, expr in tool.PROBE_VARS.items() if var in used]
        lines.append(f"    r = {entry['probe']}")
        where[len(lines)] = (section, key, entry["gb"])
        lines.append("    return y * 2")
    return "\n".join(lines) + "\n", where


def test_every_break_in_the_facts_table_is_reported_by_a_rule_naming_its_id(tool):
    specs = load_specs()
    source, where = _probe_source(tool, list(_breaking_entries()))
    codes_at = collections.defaultdict(set)
    for d in lint_source(source, "probes.py", LintSettings(enabled=resolve_selection())).diagnostics:
        codes_at[d.start.line].add(d.code)
    wrong, unexplained, stale = [], [], []
    for line, (section, key, gb) in sorted(where.items()):
        codes = codes_at.get(line, set())
        reported = any(gb in specs[c].gb_types for c in codes if c in specs)
        if (section, key) in NOT_REPORTED:
            if codes:
                stale.append((section, key, sorted(codes)))
        elif codes and not reported:
            wrong.append((section, key, gb, sorted(codes)))
        elif not reported:
            unexplained.append((section, key, gb))
    assert wrong == [], "reported by rules whose spec does not name the graph-break id"
    assert unexplained == [], "breaks no rule reports: fix the rule or list the entry in NOT_REPORTED"
    assert stale == [], "NOT_REPORTED entries a rule now reports"
    assert set(NOT_REPORTED) <= {(s, k) for s, k, _ in where.values()}, "NOT_REPORTED names entries the table no longer has"
