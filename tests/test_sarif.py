"""``--output-format sarif``: valid SARIF 2.1.0 (official schema), rule metadata, repo-relative URIs, fingerprints."""

from __future__ import annotations

import json
import pathlib
import textwrap

import pytest

from pt2lint.cli import cli
from pt2lint.specs import load_specs
from clitools import cli_runner as _runner

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = pathlib.Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            n = x.sum().item()
            if x.sum() > 0:
                print("positive")
            x.add_(1)
            return x * n
    """
)




def _sarif(*args):
    result = _runner().invoke(cli, ["check", "--output-format", "sarif", "--no-cache", *args], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src" / "models").mkdir(parents=True)
    (tmp_path / "src" / "models" / "net.py").write_text(MODEL)
    (tmp_path / "src" / "clean.py").write_text("def f(x):\n    return x + 1\n")
    monkeypatch.chdir(tmp_path / "src")
    return tmp_path


def _validator():
    schema = json.loads(SCHEMA.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_sarif_validates_against_the_2_1_0_schema_and_describes_rules(repo):
    code, log = _sarif(".")
    assert code == 1
    errors = sorted(_validator().iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "pt2lint"
    rules = {r["id"]: r for r in driver["rules"]}
    specs = load_specs()
    assert set(specs) <= set(rules)
    for code_, spec in specs.items():
        rule = rules[code_]
        assert rule["shortDescription"]["text"] and spec.summary.split()[0] in rule["shortDescription"]["text"]
        assert spec.why.split()[0] in rule["fullDescription"]["text"]
        assert rule["help"]["text"] == spec.fix.strip() and "## Why is this bad?" in rule["help"]["markdown"]
        assert rule["helpUri"] == f"https://github.com/pt2lint/pt2lint/blob/main/docs/rules/{code_}.md"
        assert rule["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning", "info": "note"}[spec.severity]
    results = run["results"]
    assert {"PTC101", "PTC104", "PTC301", "PTC401"} <= {r["ruleId"] for r in results}
    for r in results:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {"uri": "src/models/net.py", "uriBaseId": "%SRCROOT%"}
        assert r["partialFingerprints"]["pt2lintFinding/v1"]
    item = next(r for r in results if r["ruleId"] == "PTC101")
    region = item["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"], region["endLine"]) == (7, 21, 7)
    assert region["snippet"]["text"].strip() == "n = x.sum().item()"
    assert item["level"] == "error"
    assert item["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "Net.forward"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"


def test_fingerprints_survive_edits_elsewhere(repo):
    _, before = _sarif(".")
    net = repo / "src" / "models" / "net.py"
    net.write_text("# a comment\n\n" + MODEL.replace("import torch\n", "import torch\nimport math\n"))
    _, after = _sarif(".")

    def prints(log):
        return sorted(r["partialFingerprints"]["pt2lintFinding/v1"] for r in log["runs"][0]["results"])

    assert prints(before) == prints(after)
    lines = sorted(r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after["runs"][0]["results"])
    assert lines[0] == 10  # the findings moved down by three lines, the fingerprints did not change


def test_clean_run_is_valid_sarif_with_no_results(repo):
    code, log = _sarif("clean.py")
    assert code == 0
    assert log["runs"][0]["results"] == []
    assert not list(_validator().iter_errors(log))


def test_fixes_are_sarif_fixes(repo, fake_specs, fake_analysis):
    (repo / "src" / "p.py").write_text("def forward(self, x):\n    print(x)\n")
    code, log = _sarif("p.py")
    assert not list(_validator().iter_errors(log))
    (result,) = log["runs"][0]["results"]
    (fix,) = result["fixes"]
    change = fix["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "src/p.py"
    assert change["replacements"][0]["insertedContent"]["text"] == "pass"
    assert "safe" in fix["description"]["text"]
