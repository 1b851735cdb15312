"""``pt2lint compare`` (new / fixed / unchanged by fingerprint) and ``pt2lint merge``."""

from __future__ import annotations

import json
import textwrap

import pytest

from pt2lint.cli import cli
from clitools import cli_runner

MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            n = x.sum().item()
            print("step")
            return x * n
    """
)


def run(*args):
    return cli_runner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def report(work, text, name, fmt="json"):
    """Lint ``text`` as model.py and write the report to ``name``."""
    (work / "model.py").write_text(text)
    result = run("check", "--no-cache", "-q", "--output-format", fmt, "-o", name, "model.py")
    assert result.exit_code in (0, 1), result.stderr
    return str(work / name)


def compare(old, new, *extra):
    result = run("compare", *extra, old, new)
    assert "Traceback" not in result.stderr
    return result


def counts(old, new):
    result = compare(old, new, "--output-format", "json")
    data = json.loads(result.stdout)
    return data["counts"], data, result.exit_code


def test_inserting_lines_above_findings_leaves_them_unchanged(work):
    old = report(work, MODEL, "old.json")
    moved = MODEL.replace("class Net", "# a comment\n\n\ndef unrelated():\n    return 1\n\n\nclass Net")
    moved = moved.replace("            print", "            # reindented below\n            print")
    new = report(work, moved, "new.json")
    rows_old = [d["location"]["row"] for d in json.loads(open(old).read())]
    rows_new = [d["location"]["row"] for d in json.loads(open(new).read())]
    assert len(rows_old) == 2 and all(b > a for a, b in zip(rows_old, rows_new))  # the findings really moved
    got, data, code = counts(old, new)
    assert got == {"new": 0, "fixed": 0, "unchanged": 2} and code == 0
    assert [d["location"]["row"] for d in data["unchanged"]] == rows_new  # the new copies
    text = compare(old, new)
    assert text.exit_code == 0 and "0 new, 0 fixed, 2 unchanged" in text.stdout


def test_removed_finding_is_fixed(work):
    old = report(work, MODEL, "old.json")
    new = report(work, "\n\n" + MODEL.replace('        print("step")\n', ""), "new.json")
    got, data, code = counts(old, new)
    assert got == {"new": 0, "fixed": 1, "unchanged": 1} and code == 0
    assert [d["code"] for d in data["fixed"]] == ["PTC301"]
    text = compare(old, new)
    assert "Fixed (1):" in text.stdout and "PTC301" in text.stdout.split("Fixed (1):")[1]


def test_added_finding_is_new_and_exits_1(work):
    old = report(work, MODEL, "old.json")
    new = report(work, MODEL.replace("return x * n", "m = x.tolist()\n        return x * n"), "new.json")
    got, data, code = counts(old, new)
    assert got == {"new": 1, "fixed": 0, "unchanged": 2} and code == 1
    assert [(d["code"], d["location"]["row"]) for d in data["new"]] == [("PTC102", 9)]
    text = compare(old, new)
    assert text.exit_code == 1 and text.stdout.startswith("New (1):\n  model.py:9:")


def test_a_second_copy_of_a_line_is_new(work):
    old = report(work, MODEL, "old.json")
    new = report(work, MODEL.replace('        print("step")\n', '        print("step")\n        print("step")\n'), "new.json")
    got, _, code = counts(old, new)
    assert got == {"new": 1, "fixed": 0, "unchanged": 2} and code == 1


def test_sarif_and_json_reports_share_fingerprints(work):
    old = report(work, MODEL, "old.sarif", fmt="sarif")
    new = report(work, "\n\n\n" + MODEL, "new.json")
    got, _, code = counts(old, new)
    assert got == {"new": 0, "fixed": 0, "unchanged": 2} and code == 0
    lines = report(work, "\n\n\n" + MODEL.replace('        print("step")\n', ""), "new.jsonl", fmt="json-lines")
    got, _, _ = counts(old, lines)
    assert got == {"new": 0, "fixed": 1, "unchanged": 1}


def test_two_checkouts_in_different_places_agree(tmp_path, monkeypatch):
    fps = []
    for where in ("a", "b"):
        (tmp_path / where).mkdir()
        monkeypatch.chdir(tmp_path / where)
        fps.append(report(tmp_path / where, MODEL, "r.json"))
    got, _, code = counts(*fps)
    assert got == {"new": 0, "fixed": 0, "unchanged": 2} and code == 0


def test_bad_reports_are_one_line_errors(work):
    good = report(work, MODEL, "good.json")
    (work / "garbage.json").write_text("not json at all")
    (work / "other.json").write_text('{"tool": "x"}')
    (work / "old.json").write_text('[{"code": "PTC101", "filename": "m.py"}]')
    for name, needle in (
        ("missing.json", "report not found"),
        ("garbage.json", "not a JSON report"),
        ("other.json", "not a pt2lint report"),
        ("old.json", "has no fingerprint"),
    ):
        result = compare(str(work / name), good)
        assert result.exit_code == 2 and needle in result.stderr and result.stderr.count("\n") == 1, result.stderr


def _with_status(findings, status):
    out = []
    for d in findings:
        d = dict(d)
        d["confirm"] = {"status": status, "detail": "", "module": None, "failure": None, "next_step": None, "evidence": {}}
        out.append(d)
    return out


def test_merge_dedupes_by_fingerprint_and_keeps_the_confirmed_copy(work):
    both = json.loads(open(report(work, MODEL, "full.json")).read())
    item, printed = both
    (work / "shard1.json").write_text(json.dumps(_with_status([item], "not-confirmed") + _with_status([printed], "confirmed")))
    (work / "shard2.json").write_text(json.dumps(_with_status([item], "confirmed") + _with_status([printed], "not-confirmed")))
    result = run("merge", "shard1.json", "shard2.json", "-o", "all.json")
    assert result.exit_code == 0 and "all.json" in result.stderr
    merged = json.loads((work / "all.json").read_text())
    assert [(d["code"], d["confirm"]["status"]) for d in merged] == [("PTC101", "confirmed"), ("PTC301", "confirmed")]
    # the merged report compares like any report
    got, _, _ = counts(str(work / "full.json"), str(work / "all.json"))
    assert got == {"new": 0, "fixed": 0, "unchanged": 2}


def test_merge_sarif_and_refuse_mixed_formats(work):
    first = report(work, MODEL, "one.sarif", fmt="sarif")
    second = report(work, MODEL.replace("return x * n", "m = x.tolist()\n        return x * n"), "two.sarif", fmt="sarif")
    result = run("merge", first, second)
    assert result.exit_code == 0
    log = json.loads(result.stdout)
    results = log["runs"][0]["results"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert sorted(r["ruleId"] for r in results) == ["PTC101", "PTC102", "PTC301"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    mixed = run("merge", first, report(work, MODEL, "three.json"))
    assert mixed.exit_code == 2 and "different formats" in mixed.stderr


def test_json_lines_with_a_line_separator_in_a_file_name(work):
    name = "m\u2028odel.py"
    (work / name).write_text(MODEL)
    for fmt, out in (("json", "old.json"), ("json-lines", "new.jsonl")):
        result = run("check", "--no-cache", "-q", "--output-format", fmt, "-o", out, name)
        assert result.exit_code == 1, result.stderr
    assert "\u2028" in (work / "new.jsonl").read_text(encoding="utf-8")  # written raw
    got, _, code = counts(str(work / "old.json"), str(work / "new.jsonl"))
    assert got == {"new": 0, "fixed": 0, "unchanged": 2} and code == 0
