"""Which graph breaks pt2lint predicts: a status for every id of Dynamo's graph-break registry.

torch ships ``torch/_dynamo/graph_break_registry.json``, one id (``GB0007``) per kind of graph
break Dynamo can report.  Every id gets exactly one status here, so a user who meets a break in
``TORCH_LOGS=graph_breaks`` can look it up (``pt2lint rule GB0142``) and the docs list what is
predicted statically and what only a run shows:

``rule``
    a rule's spec names the id in ``gb_types``: that rule reports the pattern;
``not-raised``
    no ``gb_type=`` argument in torch's sources raises it any more (the registry keeps ids of
    removed code);
``follow-on``, ``internal``, ``user-error``
    from torch's own hint categories (``torch._dynamo.graph_break_hints``):
    ``CAUSED_BY_EARLIER_GRAPH_BREAK``, ``DYNAMO_BUG`` and ``USER_ERROR``;
and, for the ids neither the specs nor torch's data settle, the status written in
``pt2lint/data/graph_break_coverage.toml`` after reading the code that raises it:
``dynamic-only`` (model code can hit it, but run-time values, types or state decide),
``not-model-code``, ``internal``, ``user-error`` or ``uncovered`` (a pattern in the source
breaks and no rule reports it yet; each such entry carries the pattern and a Dynamo probe).

The registry's ids, hint categories and the "still raised" flag come from the shipped Dynamo
facts table (:mod:`pt2lint.analysis.dynamo_facts`), so nothing here imports torch.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

try:
    import tomllib
except ImportError:  # pragma: no cover - Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from pt2lint.analysis import dynamo_facts
from pt2lint.specs import RuleSpec, load_specs

_RESOURCE = "data/graph_break_coverage.toml"

#: Every status, in the order the docs and ``pt2lint rule --coverage`` list them.
STATUSES = ("rule", "uncovered", "dynamic-only", "not-model-code", "user-error", "internal", "follow-on", "not-raised")
#: The statuses the hand-written table may give (the others are derived).
WRITTEN_STATUSES = frozenset({"dynamic-only", "not-model-code", "internal", "user-error", "uncovered"})
#: torch's hint category -> (status, reason) for ids no spec lists and no entry describes.
HINT_STATUSES = (
    ("DYNAMO_BUG", "internal", "torch's hints call it a Dynamo bug (graph_break_hints.DYNAMO_BUG): no pattern of correct code is meant to reach it"),
    ("USER_ERROR", "user-error", "torch's hints call it a user error (graph_break_hints.USER_ERROR): the code fails without torch.compile too"),
    (
        "CAUSED_BY_EARLIER_GRAPH_BREAK",
        "follow-on",
        "torch's hints say an earlier graph break causes it (graph_break_hints.CAUSED_BY_EARLIER_GRAPH_BREAK): the earlier break is the one to fix",
    ),
)
#: The status of an id nothing classifies: only with a rule catalog other than the shipped one.
UNCLASSIFIED = "unclassified"
UNCLASSIFIED_REASON = "no status: the rule catalog in use is not the one the coverage table was written for"
NOT_RAISED_REASON = "no gb_type= argument in torch's sources raises it: the registry keeps the id of removed code"

STATUS_TEXT = {
    "rule": "a rule reports it",
    "uncovered": "a pattern in the source breaks, and no rule reports it yet",
    "dynamic-only": "model code can hit it, but run-time values, types or state decide: confirm mode reports it (PTC090)",
    "not-model-code": "only torch internals, torch.export/AOT, compiled autograd or misuse of compiler APIs reach it",
    "user-error": "the code fails without torch.compile too",
    "internal": "an internal Dynamo invariant, not a pattern of correct code",
    "follow-on": "caused by an earlier graph break",
    "not-raised": "torch no longer raises it",
    UNCLASSIFIED: UNCLASSIFIED_REASON,
}


class CoverageError(ValueError):
    """The coverage table is malformed or disagrees with the registry (a bug in the shipped data)."""


@dataclass(frozen=True)
class GraphBreakCoverage:
    """How pt2lint covers one graph-break id.

    Attributes:
        gb_id: the registry id, ``"GB0142"``.
        gb_type: the registry's short name of the break ("Unsupported context manager").
        status: one of :data:`STATUSES`.
        rules: the codes of the rules whose specs list the id (``status == "rule"``), else ``()``.
        reason: why the id has this status (empty for ``rule``).
        pattern: for ``uncovered``, a line of model code that hits it.
        probed: for ``uncovered``, what Dynamo did with the pattern on the table's torch.
    """

    gb_id: str
    gb_type: str
    status: str
    rules: Tuple[str, ...] = ()
    reason: str = ""
    pattern: Optional[str] = None
    probed: Optional[str] = None

    def to_dict(self) -> Dict[str, object]:
        """A JSON-ready dict (absent fields left out)."""
        out: Dict[str, object] = {"id": self.gb_id, "gb_type": self.gb_type, "status": self.status}
        if self.rules:
            out["rules"] = list(self.rules)
        for key in ("reason", "pattern", "probed"):
            value = getattr(self, key)
            if value:
                out[key] = value
        return out


def _written() -> Mapping[str, Mapping[str, str]]:
    try:
        from importlib.resources import files

        text = files("pt2lint").joinpath(_RESOURCE).read_text(encoding="utf-8")
    except (ImportError, FileNotFoundError):  # pragma: no cover - a checkout without the package data
        from pathlib import Path

        text = (Path(__file__).resolve().parent / _RESOURCE).read_text(encoding="utf-8")
    return tomllib.loads(text)


def graph_break_coverage(strict: bool = False) -> Dict[str, GraphBreakCoverage]:
    """Every registry id of the shipped facts table's torch, in id order, with its status.

    Args:
        strict: raise on any disagreement between the three sources (the tests and the docs
            generator); otherwise an id left without a status (possible only with a rule catalog
            other than the shipped one) is ``unclassified`` and a malformed entry is skipped.

    Returns:
        ``{"GB0000": GraphBreakCoverage(...), ...}``, one entry per id of the registry.

    Raises:
        CoverageError: (``strict`` only) the written table names an id the registry lacks, gives
            an unknown status, describes an id the specs or torch's data already settle (a stale
            entry), or leaves an id with no status.
    """
    from pt2lint.specs import specs_dir

    return _cached(str(specs_dir()), strict)


@functools.lru_cache(maxsize=4)
def _cached(catalog: str, strict: bool) -> Dict[str, GraphBreakCoverage]:
    del catalog  # the cache key: the rule catalog in use
    return _derive(load_specs(), dynamo_facts.facts()["graph_breaks"], _written(), strict)


def _derive(
    specs: Mapping[str, RuleSpec],
    registry: Mapping[str, Mapping[str, object]],
    written: Mapping[str, Mapping[str, str]],
    strict: bool = True,
) -> Dict[str, GraphBreakCoverage]:
    """:func:`graph_break_coverage` from its three sources (separate for the tests)."""
    by_id: Dict[str, list] = {}
    for code, spec in specs.items():
        for gb in spec.gb_types:
            by_id.setdefault(gb, []).append(code)
    unknown = sorted(set(written) - set(registry))
    if unknown and strict:
        raise CoverageError(f"{_RESOURCE} names ids the registry lacks: {', '.join(unknown)}")
    out: Dict[str, GraphBreakCoverage] = {}
    problems = []
    for gb_id in sorted(registry):
        fact = registry[gb_id]
        gb_type = str(fact.get("gb_type", ""))
        entry = written.get(gb_id)
        derived = _derived_status(gb_id, fact, by_id)
        if derived is not None:
            if entry is not None:
                problems.append(f"{gb_id} is {derived[0]} (derived), so its entry in {_RESOURCE} is stale")
            out[gb_id] = GraphBreakCoverage(gb_id, gb_type, derived[0], derived[1], derived[2])
            continue
        status = entry.get("status") if entry is not None else None
        if entry is None:
            problems.append(f"{gb_id} ({gb_type}) has no status: add it to {_RESOURCE}")
        elif status not in WRITTEN_STATUSES:
            problems.append(f"{gb_id}: status {status!r} is not one of {', '.join(sorted(WRITTEN_STATUSES))}")
        elif status == "uncovered" and not entry.get("pattern"):
            problems.append(f"{gb_id}: an uncovered id needs the pattern that hits it")
        else:
            out[gb_id] = GraphBreakCoverage(
                gb_id, gb_type, status, (), str(entry.get("reason", "")), entry.get("pattern"), entry.get("probed")
            )
            continue
        out[gb_id] = GraphBreakCoverage(gb_id, gb_type, UNCLASSIFIED, (), UNCLASSIFIED_REASON)
    if problems and strict:
        raise CoverageError("; ".join(problems))
    return out


def _derived_status(gb_id: str, fact: Mapping[str, object], by_id: Mapping[str, list]):
    """``(status, rules, reason)`` when the specs or torch's data settle the id, else None."""
    if gb_id in by_id:
        return "rule", tuple(sorted(by_id[gb_id])), ""
    if fact.get("raised") is False:
        return "not-raised", (), NOT_RAISED_REASON
    hints = set(fact.get("hints") or ())
    for category, status, reason in HINT_STATUSES:
        if category in hints:
            return status, (), reason
    return None


def coverage_counts(coverage: Optional[Mapping[str, GraphBreakCoverage]] = None) -> Dict[str, int]:
    """How many ids have each status, in :data:`STATUSES` order."""
    coverage = graph_break_coverage() if coverage is None else coverage
    counts = {status: 0 for status in STATUSES}
    for item in coverage.values():
        counts[item.status] = counts.get(item.status, 0) + 1
    return counts


def explain(item: GraphBreakCoverage) -> str:
    """The text ``pt2lint rule GBnnnn`` prints for one id."""
    lines = [f"# {item.gb_id}: {item.gb_type}", "", f"Status: {item.status} ({STATUS_TEXT[item.status]})"]
    if item.rules:
        lines.append(f"Reported by: {', '.join(item.rules)} (`pt2lint rule {item.rules[0]}`)")
    if item.reason:
        lines += ["", item.reason]
    if item.pattern:
        lines += ["", f"Pattern: `{item.pattern}`"]
    if item.probed:
        lines.append(f"Dynamo on torch {dynamo_facts.torch_version()}: {item.probed}")
    return "\n".join(lines)


def render_text(coverage: Optional[Mapping[str, GraphBreakCoverage]] = None) -> str:
    """The coverage as a terminal table: a summary by status, then one line per id."""
    coverage = graph_break_coverage() if coverage is None else coverage
    counts = coverage_counts(coverage)
    lines = [
        f"# Graph-break coverage (torch {dynamo_facts.torch_version()} registry, {len(coverage)} ids)",
        "",
    ]
    lines += [f"{status:>15}  {count:4d}  {STATUS_TEXT[status]}" for status, count in counts.items()]
    lines.append("")
    for item in coverage.values():
        what = ", ".join(item.rules) if item.rules else (item.pattern or item.reason)
        lines.append(f"{item.gb_id}  {item.status:<14}  {item.gb_type[:60]:<60}  {what}")
    return "\n".join(lines)
