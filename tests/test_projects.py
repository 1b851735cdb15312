"""pt2lint on whole multi-file projects against Dynamo's labels (fixtures/projects/labels.json).

Each ``fixtures/projects/<name>/`` is a small model package (its own ``pyproject.toml``,
2-5 modules, one ``model.py`` entry module); the labels come from
``fixtures/projects/relabel.py``, which imports the package and runs it through
torch 2.13 (``graph_breaks`` log artifact, and a dispatch-mode probe for input
mutation). The linter is run the way a user runs it, ``pt2lint check`` on the
project directory (or on its ``model.py`` alone) in a subprocess, and its JSON
findings are compared with the labels by (file relative to the project, line).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "fixtures" / "projects"
LABELS = json.loads((PROJECTS / "labels.json").read_text())

#: JSON categories that stand for a graph break (``Diagnostic.is_graph_break``).
GRAPH_BREAK_CATEGORIES = frozenset({"data-dependent", "dynamic-shape", "side-effect"})
MUTATION_CATEGORY = "input-mutation"


@functools.lru_cache(maxsize=None)
def _check(target: str) -> tuple[dict, ...]:
    """``pt2lint check --no-cache --output-format json TARGET`` from the repository root."""
    proc = subprocess.run(
        [sys.executable, "-m", "pt2lint", "check", "--no-cache", "--output-format", "json", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), f"pt2lint check {target} exited {proc.returncode}:\n{proc.stderr}"
    return tuple(json.loads(proc.stdout or "[]"))


def _rel(project: str, filename: str) -> str:
    """A JSON ``filename`` (absolute or relative to the cwd) relative to the project, with ``/``."""
    path = os.path.join(str(ROOT), filename)
    return Path(os.path.relpath(os.path.realpath(path), os.path.realpath(PROJECTS / project))).as_posix()


def _findings(project: str, target: Path) -> tuple[dict[tuple[str, int], list[dict]], dict[tuple[str, int], list[dict]]]:
    """Graph-break and input-mutation findings of one run, keyed by (file, line)."""
    breaks: dict[tuple[str, int], list[dict]] = {}
    mutations: dict[tuple[str, int], list[dict]] = {}
    for item in _check(str(target)):
        key = (_rel(project, item["filename"]), int(item["location"]["row"]))
        if item.get("category") in GRAPH_BREAK_CATEGORIES:
            breaks.setdefault(key, []).append(item)
        elif item.get("category") == MUTATION_CATEGORY:
            mutations.setdefault(key, []).append(item)
    return breaks, mutations


def _labelled(project: str) -> tuple[dict[tuple[str, int], list[str]], dict[tuple[str, int], list[str]]]:
    """Dynamo's breaks and the probe's mutations, keyed by (file, line), with a description each."""
    label = LABELS[project]
    breaks: dict[tuple[str, int], list[str]] = {}
    for b in label["graph_breaks"]:
        breaks.setdefault((b["file"], b["line"]), []).append(f"{b['gb_type']} {b['reason']}")
    mutations: dict[tuple[str, int], list[str]] = {}
    for m in label["input_mutations"]:
        mutations.setdefault((m["file"], m["line"]), []).append(f"{m['op']} writes {m['argument']}")
    return breaks, mutations


def _difference(kind: str, expected: dict, found: dict) -> list[str]:
    lines = []
    for key in sorted(set(expected) - set(found)):
        lines.append(f"  missed {kind} at {key[0]}:{key[1]}: {'; '.join(expected[key])}")
    for key in sorted(set(found) - set(expected)):
        what = "; ".join(f"{d['code']} {d['message']}" for d in found[key])
        lines.append(f"  false {kind} alarm at {key[0]}:{key[1]}: {what}")
    return lines


def _compare(project: str, target: Path) -> None:
    want_breaks, want_mutations = _labelled(project)
    got_breaks, got_mutations = _findings(project, target)
    problems = _difference("graph break", want_breaks, got_breaks)
    problems += _difference("input mutation", want_mutations, got_mutations)
    where = os.path.relpath(target, ROOT)
    assert not problems, f"pt2lint check {where} differs from Dynamo's labels:\n" + "\n".join(problems)


@pytest.mark.parametrize("project", sorted(LABELS))
def test_project_matches_dynamo_labels(project):
    _compare(project, PROJECTS / project)


@pytest.mark.parametrize("project", sorted(LABELS))
def test_entry_module_alone_reports_findings_in_imported_modules(project):
    # Only model.py is named; the findings in the modules it imports must still be
    # reported (at their own file and line), resolved through the project's imports.
    _compare(project, PROJECTS / project / LABELS[project]["entry"])


@pytest.mark.parametrize("project", sorted(LABELS))
def test_cross_file_findings_carry_the_call_chain(project):
    # A finding outside the file of the compiled forward was reached through a call
    # into another module, so its call chain names at least the caller and the callee.
    label = LABELS[project]
    forward_file = label["forward"]
    got_breaks, got_mutations = _findings(project, PROJECTS / project)
    cross = [
        (key, item)
        for found in (got_breaks, got_mutations)
        for key, items in found.items()
        if key[0] != forward_file
        for item in items
    ]
    expected_cross = sum(
        1 for row in label["graph_breaks"] + label["input_mutations"] if row["file"] != forward_file
    )
    if expected_cross:
        assert cross, f"{project}: no finding outside {forward_file} (Dynamo has {expected_cross})"
    short = [
        f"  {key[0]}:{key[1]} {item['code']} call_chain={item.get('call_chain')}"
        for key, item in cross
        if len(item.get("call_chain") or ()) <= 1
    ]
    assert not short, f"{project}: cross-file findings without a call chain through the caller:\n" + "\n".join(short)


# --- the project set itself --------------------------------------------------------------------------


def _project_dirs() -> list[Path]:
    return sorted(p for p in PROJECTS.iterdir() if p.is_dir() and (p / "pyproject.toml").is_file())


def test_labels_cover_every_project():
    assert {p.name for p in _project_dirs()} == set(LABELS)


@pytest.mark.parametrize("project", sorted(LABELS))
def test_project_layout(project):
    base = PROJECTS / project
    root = base / "src" if (base / "src").is_dir() else base
    entries = [p for p in root.rglob("model.py") if "__pycache__" not in p.parts]
    assert [p.relative_to(base).as_posix() for p in entries] == [LABELS[project]["entry"]]
    modules = [p for p in root.rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts]
    assert 2 <= len(modules) <= 5, f"{project} has {len(modules)} modules"
    assert (base / LABELS[project]["forward"]).is_file()


def test_package_names_are_unique():
    tops = []
    for base in _project_dirs():
        root = base / "src" if (base / "src").is_dir() else base
        tops.extend(p.name for p in root.iterdir() if (p / "__init__.py").is_file())
    assert len(tops) == len(set(tops)), sorted(tops)


def test_project_set_has_breaks_mutations_and_near_misses():
    n_breaks = sum(bool(v["graph_breaks"]) for v in LABELS.values())
    n_mut = sum(bool(v["input_mutations"]) for v in LABELS.values())
    n_clean = sum(not v["graph_breaks"] and not v["input_mutations"] for v in LABELS.values())
    n_cross = sum(
        row["file"] != v["forward"] for v in LABELS.values() for row in v["graph_breaks"] + v["input_mutations"]
    )
    assert len(LABELS) >= 12 and n_breaks >= 8 and n_mut >= 3 and n_clean >= 1 and n_cross >= 10


# --- the labels are what torch measures --------------------------------------------------------------


def _relabel():
    spec = importlib.util.spec_from_file_location("pt2lint_projects_relabel", PROJECTS / "relabel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("project", ["import_cycle", "inherited_forward", "kv_decoder"])
def test_labels_match_a_fresh_measurement(project):
    pytest.importorskip("torch")
    relabel = _relabel()
    assert relabel.measure(PROJECTS / project) == LABELS[project]
