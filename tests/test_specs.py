"""The rule catalog is executable: every spec example is linted, and must be flagged exactly where it says.

This is Fixit's habit (a rule carries its valid/invalid examples and the suite is
generated from them): a spec whose example lies fails here.
"""

from __future__ import annotations

import re

import pytest

from pt2lint.engine import lint_source
from pt2lint.rules import ENGINE_CODES, RULES
from pt2lint.settings import LintSettings, resolve_selection
from pt2lint.specs import CATEGORIES, load_specs

SPECS = load_specs()


def _settings_for(example, code):
    cfg = dict(example.config)
    target = cfg.get("target", "compile")
    enabled = resolve_selection(target=target) | {code}
    return LintSettings(
        enabled=frozenset(enabled),
        capture_scalar_outputs=bool(cfg.get("capture-scalar-outputs", False)),
        capture_dynamic_output_shape_ops=bool(cfg.get("capture-dynamic-output-shape-ops", False)),
        allow_rnn=bool(cfg.get("allow-rnn", False)),
        target=target,
        compute_dtype=str(cfg.get("compute-dtype", "float32")),
    )


def _cases():
    for code, spec in SPECS.items():
        for i, ex in enumerate(spec.examples):
            yield pytest.param(code, i, ex, id=f"{code}-{ex.kind}-{i + 1}")


@pytest.mark.parametrize("code,index,example", list(_cases()))
def test_spec_example(code, index, example):
    settings = _settings_for(example, code)
    result = lint_source(example.code, "example.py", settings)
    lines = sorted({d.start.line for d in result.diagnostics if d.code == code})
    if example.kind == "bad":
        assert lines == sorted(set(example.flag)), (
            f"{code} example {index + 1} should be flagged on lines {list(example.flag)}, got {lines}:\n"
            + "\n".join(f"{d.start.line}: {d.code} {d.message}" for d in result.diagnostics)
        )
    else:
        assert lines == [], f"{code} good example {index + 1} was flagged on lines {lines}"


def test_every_rule_has_a_spec_and_every_spec_a_rule():
    implemented = set(RULES) | ENGINE_CODES
    assert implemented == set(SPECS), (
        f"rules without spec: {sorted(implemented - set(SPECS))}; specs without rule: {sorted(set(SPECS) - implemented)}"
    )


def test_codes_names_unique_and_well_formed():
    names = [s.name for s in SPECS.values()]
    assert len(names) == len(set(names))
    for code, spec in SPECS.items():
        assert re.fullmatch(r"PTC\d{3}", code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", spec.name)
        assert spec.category in CATEGORIES
        assert spec.path.endswith(f"{code}-{spec.name}.toml"), spec.path


@pytest.mark.parametrize("code", sorted(c for c in SPECS if c not in ENGINE_CODES))
def test_rule_has_near_misses(code):
    spec = SPECS[code]
    assert sum(e.kind == "bad" for e in spec.examples) >= 2, code
    assert sum(e.kind == "good" for e in spec.examples) >= 3, code
    if spec.is_graph_break:
        assert spec.gb_types, f"{code} predicts a graph break but names no Dynamo GB id"
        for gb in spec.gb_types:
            assert re.fullmatch(r"GB\d{4}", gb)


def test_category_matches_code_range():
    ranges = {
        "0": {"internal"},
        "1": {"data-dependent"},
        "2": {"dynamic-shape"},
        "3": {"side-effect"},
        "4": {"input-mutation"},
        "5": {"recompile"},
        "6": {"export"},
        "7": {"sync"},
        "8": {"amp-distributed"},
    }
    for code, spec in SPECS.items():
        assert spec.category in ranges[code[3]], (code, spec.category)


def test_readme_rule_table_is_generated_from_the_specs():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, str(root / "tools" / "rules_table.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
