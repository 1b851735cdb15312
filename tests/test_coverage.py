"""Graph-break coverage: every id of Dynamo's registry has one status, and the table cannot rot."""

from __future__ import annotations

import json
import re

import pytest

from clitools import cli_runner as runner
from pt2lint import coverage
from pt2lint.analysis import dynamo_facts
from pt2lint.cli import cli
from pt2lint.specs import load_specs


def run(*args):
    return runner().invoke(cli, list(args), catch_exceptions=False)


def test_every_registry_id_has_exactly_one_status():
    table = coverage.graph_break_coverage(strict=True)  # raises on a stale, missing or malformed entry
    registry = dynamo_facts.facts()["graph_breaks"]
    assert list(table) == sorted(registry)
    assert all(item.status in coverage.STATUSES for item in table.values())
    assert sum(coverage.coverage_counts(table).values()) == len(registry)


def test_rule_status_comes_from_the_specs_and_names_every_rule():
    table = coverage.graph_break_coverage()
    for code, spec in load_specs().items():
        for gb in spec.gb_types:
            assert table[gb].status == "rule" and code in table[gb].rules, (code, gb)
    assert {i.gb_id for i in table.values() if i.status == "rule"} == {g for s in load_specs().values() for g in s.gb_types}


def test_uncovered_ids_carry_the_pattern_and_what_dynamo_did():
    uncovered = [i for i in coverage.graph_break_coverage().values() if i.status == "uncovered"]
    assert uncovered
    assert all(i.pattern and i.probed and i.reason for i in uncovered)


def test_derived_statuses_follow_torchs_hint_categories_and_raise_sites():
    registry = {
        "GB0001": {"gb_type": "a", "hints": ["DYNAMO_BUG"], "raised": True},
        "GB0002": {"gb_type": "b", "hints": ["USER_ERROR", "SUPPORTABLE"], "raised": True},
        "GB0003": {"gb_type": "c", "hints": ["CAUSED_BY_EARLIER_GRAPH_BREAK"], "raised": True},
        "GB0004": {"gb_type": "d", "hints": ["USER_ERROR"], "raised": False},
        "GB0005": {"gb_type": "e", "hints": ["SUPPORTABLE"], "raised": True},
    }
    written = {"GB0005": {"status": "dynamic-only", "reason": "depends on a run-time type"}}
    got = coverage._derive({}, registry, written)
    assert [got[g].status for g in sorted(got)] == ["internal", "user-error", "follow-on", "not-raised", "dynamic-only"]
    assert got["GB0005"].reason == "depends on a run-time type"


@pytest.mark.parametrize(
    "written, message",
    [
        ({}, "has no status"),  # an id neither the specs, torch's data nor the table settle
        ({"GB0005": {"status": "dynamic-only"}, "GB0001": {"status": "internal"}}, "is stale"),  # torch's hints settle it
        ({"GB0005": {"status": "dynamic-only"}, "GB0009": {"status": "internal"}}, "the registry lacks"),
        ({"GB0005": {"status": "maybe"}}, "is not one of"),
        ({"GB0005": {"status": "uncovered", "reason": "x"}}, "needs the pattern"),
    ],
)
def test_a_table_that_rots_is_an_error(written, message):
    registry = {
        "GB0001": {"gb_type": "a", "hints": ["DYNAMO_BUG"], "raised": True},
        "GB0005": {"gb_type": "e", "hints": [], "raised": True},
    }
    with pytest.raises(coverage.CoverageError, match=message):
        coverage._derive({}, registry, written)
    lenient = coverage._derive({}, registry, written, strict=False)  # what the command line shows
    assert sorted(lenient) == ["GB0001", "GB0005"] and lenient["GB0001"].status == "internal"


def test_an_entry_for_an_id_a_rule_now_lists_is_stale():
    spec = next(iter(load_specs().values()))
    registry = {"GB0005": {"gb_type": "e", "hints": [], "raised": True}}
    specs = {spec.code: type(spec)(**{**spec.__dict__, "gb_types": ("GB0005",)})}
    with pytest.raises(coverage.CoverageError, match="GB0005 is rule"):
        coverage._derive(specs, registry, {"GB0005": {"status": "uncovered", "pattern": "x"}})


def test_rule_command_looks_up_a_graph_break_id():
    result = run("rule", "gb0126")
    assert result.exit_code == 0
    assert result.output.startswith("# GB0126: Unsupported Tensor.resize_() call\n")
    assert "Reported by: PTC314" in result.output
    data = json.loads(run("rule", "GB0083", "--output-format", "json").output)
    assert data["status"] == "uncovered" and data["pattern"] and data["probed"].startswith("breaks")
    missing = run("rule", "GB9999")
    assert missing.exit_code == 2 and "not a graph-break id" in missing.output


def test_rule_coverage_and_all_list_every_id():
    rows = json.loads(run("rule", "--coverage", "--output-format", "json").output)
    assert [r["id"] for r in rows] == sorted(dynamo_facts.facts()["graph_breaks"])
    text = run("rule", "--all").output
    assert text.index("# Graph-break coverage") > text.index("# syntax-error (PTC001)")
    assert len(re.findall(r"^GB\d{4}  ", text, re.M)) == len(rows)  # one line per id after the rules
    assert run("rule", "--all", "--coverage").exit_code == 2
