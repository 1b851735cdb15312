"""pt2lint against the Dynamo-labelled fixtures (fixtures/labels.json, from fixtures/relabel.py).

Labels come from running each fixture through torch 2.13 (graph_breaks log
artifact, and a dispatch-mode probe for input mutation); this test needs no torch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pt2lint.engine import lint_path
from pt2lint.settings import LintSettings, resolve_selection

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LABELS = json.loads((FIXTURES / "labels.json").read_text())
SETTINGS = LintSettings(enabled=resolve_selection())


def _predicted(rel: str):
    result = lint_path(str(FIXTURES / rel), SETTINGS)
    assert result.error is None, result.error
    breaks = {d.start.line for d in result.diagnostics if d.is_graph_break}
    mutations = {d.start.line for d in result.diagnostics if d.category == "input-mutation"}
    return breaks, mutations


@pytest.mark.parametrize("rel", sorted(LABELS))
def test_fixture_matches_dynamo_labels(rel):
    label = LABELS[rel]
    breaks, mutations = _predicted(rel)
    assert breaks == {b["line"] for b in label["graph_breaks"]}, "graph-break lines differ from Dynamo's"
    assert mutations == {m["line"] for m in label["input_mutations"]}, "input-mutation lines differ from the dispatch probe's"


def test_labels_cover_every_fixture_file():
    files = {f"models/{p.name}" for p in (FIXTURES / "models").glob("*.py")}
    assert files == set(LABELS)


def test_fixture_set_has_breaks_mutations_and_near_misses():
    n_breaks = sum(bool(v["graph_breaks"]) for v in LABELS.values())
    n_mut = sum(bool(v["input_mutations"]) for v in LABELS.values())
    n_clean = sum(not v["graph_breaks"] and not v["input_mutations"] for v in LABELS.values())
    assert n_breaks >= 20 and n_mut >= 10 and n_clean >= 15
