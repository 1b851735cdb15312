"""The result cache and the region prefilter: fast paths that must never change a finding."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pt2lint.cache import ResultCache
from pt2lint.engine import lint_path, lint_paths, lint_source, read_source
from pt2lint.settings import LintSettings, resolve_selection

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "fixtures" / "models").glob("*.py"))
SETTINGS = LintSettings(enabled=resolve_selection())


def _key(result):
    return [(d.code, d.start, d.end, d.message) for d in result.diagnostics]


def test_warm_run_equals_cold_run(tmp_path):
    paths = [str(p) for p in FIXTURES[:12]]
    cold = list(lint_paths(paths, SETTINGS, jobs=1, cache_dir=str(tmp_path)))
    entries = list(tmp_path.rglob("*.json"))
    assert len(entries) == len(paths)
    warm = list(lint_paths(paths, SETTINGS, jobs=1, cache_dir=str(tmp_path)))
    assert [_key(r) for r in warm] == [_key(r) for r in cold]
    assert [r.filename for r in warm] == paths
    assert (tmp_path / "CACHEDIR.TAG").exists()


def test_cache_key_depends_on_content_and_effective_config(tmp_path):
    cache = ResultCache(str(tmp_path), SETTINGS)
    data = b"x = 1\n"
    here = str(tmp_path / "m.py")
    base = cache.key(data, SETTINGS.enabled, here)
    assert cache.key(data, SETTINGS.enabled, here) == base
    assert cache.key(data + b" ", SETTINGS.enabled, here) != base
    assert cache.key(data, SETTINGS.enabled - {"PTC101"}, here) != base
    assert cache.key(data, SETTINGS.enabled, str(tmp_path / "n.py")) != base
    knob = ResultCache(str(tmp_path), LintSettings(enabled=SETTINGS.enabled, capture_scalar_outputs=True))
    assert knob.key(data, SETTINGS.enabled, here) != base
    (tmp_path / "__init__.py").write_text("")  # m.py is now module <dir>.m, with other import roots
    assert cache.key(data, SETTINGS.enabled, here) != base


def test_corrupt_entry_is_a_miss_and_is_rewritten(tmp_path):
    path = str(FIXTURES[0])
    first = list(lint_paths([path], SETTINGS, jobs=1, cache_dir=str(tmp_path)))[0]
    (entry,) = list(tmp_path.rglob("*.json"))
    entry.write_text("{not json")
    again = list(lint_paths([path], SETTINGS, jobs=1, cache_dir=str(tmp_path)))[0]
    assert _key(again) == _key(first)
    assert json.loads(entry.read_text())["diagnostics"] is not None


def test_changed_file_is_relinted(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n        return x\n")
    cache_dir = str(tmp_path / "cache")
    assert _key(next(lint_paths([str(f)], SETTINGS, jobs=1, cache_dir=cache_dir))) == []
    f.write_text("from torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n        return x.item()\n")
    assert [d[0] for d in _key(next(lint_paths([str(f)], SETTINGS, jobs=1, cache_dir=cache_dir)))] == ["PTC101"]


def test_pool_results_stream_in_input_order(tmp_path):
    paths = [str(p) for p in FIXTURES]
    serial = [_key(r) for r in lint_paths(paths, SETTINGS, jobs=1)]
    pooled = list(lint_paths(paths, SETTINGS, jobs=2, cache_dir=str(tmp_path)))
    assert [r.filename for r in pooled] == paths
    assert [_key(r) for r in pooled] == serial


def test_two_concurrent_runs_share_a_cache_dir(tmp_path):
    env = dict(os.environ, PT2LINT_CACHE_DIR=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "pt2lint", "check", "-q", "--output-format", "json", str(ROOT / "fixtures" / "models")]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [1, 1]
    assert json.loads(outs[0][0]) == json.loads(outs[1][0])


# --------------------------------------------------------------- prefilter


def _assert_lossless(path: str) -> bool:
    """Lint ``path`` with and without the prefilter; returns whether the prefilter skipped it."""
    source = read_source(path)
    fast = lint_source(source, path, SETTINGS, prefilter=True)
    full = lint_source(source, path, SETTINGS, prefilter=False)
    assert _key(fast) == _key(full), path
    from pt2lint.engine import _may_have_findings, cpython_syntax_error

    return cpython_syntax_error(source, path) is None and not _may_have_findings(source)


def test_prefilter_is_lossless_on_fixtures_and_edge_cases(tmp_path):
    for p in FIXTURES:
        _assert_lossless(str(p))
    cases = {
        "plain.py": "x = 1\n",
        "syntax.py": "def f(:\n    pass\n",
        "suppression.py": "x = 1  # noqa: PTC101\n",
        "compiled.py": "import torch\n@torch.compile\ndef f(x):\n    return x.item()\n",
        "aliased_compile.py": "from torch import compile as c\nimport torch\n\ndef g(x):\n    print(x)\n\nh = c(g)\n",
    }
    skipped = set()
    for name, text in cases.items():
        f = tmp_path / name
        f.write_text(text)
        if _assert_lossless(str(f)):
            skipped.add(name)
    assert skipped == {"plain.py"}


def _corpus_files():
    roots = []
    for pkg in ("transformers", "timm", "diffusers"):
        spec = importlib.util.find_spec(pkg)
        if spec is not None and spec.submodule_search_locations:
            roots.append(Path(list(spec.submodule_search_locations)[0]) / "models")
    return [str(p) for r in roots if r.is_dir() for p in sorted(r.rglob("*.py"))]


@pytest.mark.skipif(not _corpus_files(), reason="transformers/timm/diffusers are not installed")
def test_prefilter_is_lossless_on_every_prefiltered_corpus_file():
    from pt2lint.engine import _may_have_findings

    checked = 0
    for path in _corpus_files():
        source = read_source(path)
        if _may_have_findings(source):
            continue
        checked += 1
        assert _key(lint_source(source, path, SETTINGS, prefilter=False)) == [], path
    assert checked > 0


# ------------------------------------------------- what an entry depends on, what it may name

MODEL_IMPORTING_H = "import torch\nfrom .helpers import h\n\n\n@torch.compile\ndef f(x):\n    return h(x) + 1\n"
BREAKING_H = "def h(x):\n    return x.sum().item()\n"
CLEAN_H = "def h(x):\n    return x * 2\n"


def _findings(paths, cache_dir):
    return [(d.code, d.filename, d.start.line) for r in lint_paths([str(p) for p in paths], SETTINGS, jobs=1, cache_dir=cache_dir) for d in r.diagnostics]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_identical_files_in_two_packages_do_not_share_an_entry(tmp_path):
    """Same bytes, different package: `from .helpers import h` means another file, so another result."""
    for pkg, helper in (("a", BREAKING_H), ("b", CLEAN_H)):
        _write(tmp_path / pkg / "__init__.py", "")
        _write(tmp_path / pkg / "model.py", MODEL_IMPORTING_H)
        _write(tmp_path / pkg / "helpers.py", helper)
    cache = str(tmp_path / "cache")
    a, b = tmp_path / "a" / "model.py", tmp_path / "b" / "model.py"
    assert _findings([b], cache) == []
    assert _findings([a], cache) == [("PTC101", str(tmp_path / "a" / "helpers.py"), 2)]
    assert _findings([b], cache) == []  # and the other way round
    assert _findings([a], None) == [("PTC101", str(tmp_path / "a" / "helpers.py"), 2)]


def test_a_copied_tree_answers_from_its_own_files(tmp_path):
    """`cp -r proj copy` copies the cache too; the copy's findings lie in the copy's files."""
    import shutil

    proj = tmp_path / "proj"
    _write(proj / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(proj / "model.py", MODEL_IMPORTING_H.replace("from .helpers", "from helpers"))
    _write(proj / "helpers.py", BREAKING_H)
    assert _findings([proj / "model.py"], str(proj / ".pt2lint_cache")) == [("PTC101", str(proj / "helpers.py"), 2)]
    copy = tmp_path / "copy"
    shutil.copytree(str(proj), str(copy))
    cache = str(copy / ".pt2lint_cache")
    assert _findings([copy / "model.py"], cache) == [("PTC101", str(copy / "helpers.py"), 2)]
    _write(copy / "helpers.py", CLEAN_H)  # the copy's helper is fixed
    assert _findings([copy / "model.py"], cache) == []
    assert _findings([proj / "model.py"], str(proj / ".pt2lint_cache")) == [("PTC101", str(proj / "helpers.py"), 2)]


def test_a_package_directory_that_appears_later_invalidates_the_entry(tmp_path):
    """An import that found no directory is a dependency too: creating `utils/helpers.py` must count."""
    model = _write(tmp_path / "model.py", MODEL_IMPORTING_H.replace("from .helpers", "from utils.helpers"))
    cache = str(tmp_path / "cache")
    assert _findings([model], cache) == []
    _write(tmp_path / "utils" / "helpers.py", BREAKING_H)  # a namespace package: no __init__.py, no utils.py
    assert _findings([model], cache) == [("PTC101", str(tmp_path / "utils" / "helpers.py"), 2)]


def test_every_setting_is_part_of_the_key(tmp_path):
    """Each field of LintSettings changes the key, but those declared not to change findings.

    A per-file ignore of a helper changes the findings its callers report, so it changes
    their key; a field added later fails here until it has a changed value below.
    """
    import dataclasses

    from pt2lint.analysis.code_config import ConfigSite, RegionOptions

    changed = {
        "enabled": SETTINGS.enabled - {"PTC101"},
        "per_file_ignores": (("helpers.py", frozenset({"PTC101"})),),
        "capture_scalar_outputs": True,
        "capture_dynamic_output_shape_ops": True,
        "allow_rnn": True,
        "target": "export",
        "compute_dtype": "bfloat16",
        "project_root": str(tmp_path),
        "src": ("lib",),
        "follow_imports": ("einops",),
        "max_file_size": 10,
        "explicit_knobs": frozenset({"capture_scalar_outputs"}),
        "regions": (RegionOptions("m.f", fullgraph=True),),
        "config_sites": (ConfigSite("m.Cfg", keywords=(("flag", True, True),)),),
        "assume_compiled": True,
        "built_elsewhere": frozenset({"Block"}),
        "reached_elsewhere": frozenset({"Block"}),
    }
    fields = {f.name for f in dataclasses.fields(LintSettings)}
    assert set(changed) == fields - LintSettings.NOT_IN_KEY
    data, here = b"x = 1\n", str(tmp_path / "m.py")
    base = ResultCache(str(tmp_path), SETTINGS).key(data, SETTINGS.enabled, here)
    for name, value in changed.items():
        other = dataclasses.replace(SETTINGS, **{name: value})
        assert ResultCache(str(tmp_path), other).key(data, SETTINGS.enabled, here) != base, name
    for name in LintSettings.NOT_IN_KEY:  # what fix (unscanned settings) shares with check
        other = dataclasses.replace(SETTINGS, code_scanned=not SETTINGS.code_scanned, code_knobs=(("capture_scalar_outputs", True, "t.py:1"),))
        assert ResultCache(str(tmp_path), other).key(data, SETTINGS.enabled, here) == base, name


def test_a_helper_ignored_per_file_is_not_reported_from_a_warm_entry(tmp_path):
    import dataclasses

    for pkg in ("a",):
        _write(tmp_path / pkg / "__init__.py", "")
        _write(tmp_path / pkg / "model.py", MODEL_IMPORTING_H)
        _write(tmp_path / pkg / "helpers.py", BREAKING_H)
    cache, model = str(tmp_path / "cache"), tmp_path / "a" / "model.py"
    assert [f[0] for f in _findings([model], cache)] == ["PTC101"]
    ignoring = dataclasses.replace(SETTINGS, project_root=str(tmp_path), per_file_ignores=(("helpers.py", frozenset({"PTC101"})),))
    results = list(lint_paths([str(model)], ignoring, jobs=1, cache_dir=cache))
    assert [d.code for r in results for d in r.diagnostics] == []


def test_a_warm_entry_with_a_finding_in_another_file_is_used(tmp_path, monkeypatch):
    """Checking what an entry names must not turn every good entry into a miss."""
    import pt2lint.engine as engine

    _write(tmp_path / "a" / "__init__.py", "")
    model = _write(tmp_path / "a" / "model.py", MODEL_IMPORTING_H)
    _write(tmp_path / "a" / "helpers.py", BREAKING_H)
    own = _write(tmp_path / "own.py", "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n")
    cache = str(tmp_path / "cache")
    cold = _findings([model, own], cache)
    assert len(cold) == 2
    calls = []
    real = engine.lint_path
    monkeypatch.setattr(engine, "lint_path", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert _findings([model, own], cache) == cold
    assert calls == []


def _forge(tmp_path, edit):
    """Lint a 6-line file with a finding, change its cache entry with ``edit``, lint again."""
    f = _write(tmp_path / "m.py", "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n")
    _write(tmp_path / "other.py", "x = 1\n")
    cache = str(tmp_path / "cache")
    first = _findings([f], cache)
    (entry,) = list((tmp_path / "cache").rglob("*.json"))
    data = json.loads(entry.read_text())
    edit(data["diagnostics"][0], data)
    entry.write_text(json.dumps(data))
    again = list(lint_paths([str(f)], SETTINGS, jobs=1, cache_dir=cache))
    return first, [(d.code, d.filename, d.start.line) for r in again for d in r.diagnostics], [d for r in again for d in r.diagnostics]


def _set(**fields):
    def edit(d, data):
        d.update(fields)
    return edit


@pytest.mark.parametrize(
    "edit",
    [
        _set(start=[9999, 50], end=[10000, 3], statement_lines=[9999, 10000]),  # lines past the end of a 6-line file
        _set(start=[6, 200], end=[6, 201]),  # a column past the end of the line
        _set(statement_lines=[6, 7000]),
    ],
    ids=["line", "column", "statement"],
)
def test_a_cached_position_outside_the_file_is_a_miss(tmp_path, edit):
    first, again, diags = _forge(tmp_path, edit)
    assert again == first and first[0][2] == 6
    assert [(d.start.line, d.start.column, d.statement_lines) for d in diags] == [(6, 20, (6, 6))]


def test_a_cached_finding_in_a_file_the_analysis_never_read_is_a_miss(tmp_path):
    def elsewhere(d, data):
        d["file"] = str(tmp_path / "other.py")  # exists, has line 1, but the entry did not read it
        d["start"], d["end"], d["statement_lines"] = [1, 1], [1, 2], [1, 1]

    first, again, _ = _forge(tmp_path, elsewhere)
    assert again == first == [("PTC101", str(tmp_path / "m.py"), 6)]


def test_a_cached_submodule_in_a_file_the_analysis_never_read_is_a_miss(tmp_path, monkeypatch):
    import pt2lint.engine as engine

    f = _write(tmp_path / "m.py", "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n")
    cache = str(tmp_path / "cache")
    first = _findings([f], cache)
    (entry,) = list((tmp_path / "cache").rglob("*.json"))
    data = json.loads(entry.read_text())
    data["submodules"] = [[str(tmp_path / "other.py"), "Net"]]  # would hide Net's input-mutation findings
    entry.write_text(json.dumps(data))
    calls = []
    real = engine.lint_path
    monkeypatch.setattr(engine, "lint_path", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert _findings([f], cache) == first
    assert calls == [str(f)]
    assert json.loads(entry.read_text())["submodules"] == []  # rewritten


def test_fix_reads_entries_under_the_same_key(tmp_path, monkeypatch):
    """`fix` reuses check's entries for files nothing can rewrite; a copy's must be its own."""
    import shutil

    from clitools import cli_runner
    from pt2lint.cli import cli

    proj = tmp_path / "proj"
    _write(proj / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(proj / "model.py", "import torch\nfrom helpers import h\n\n\n@torch.compile\ndef f(x):\n    return h(x)\n")
    _write(proj / "helpers.py", "def h(x):\n    return x.tolist()\n")  # PTC102: no codemod
    monkeypatch.delenv("PT2LINT_CACHE_DIR", raising=False)
    monkeypatch.chdir(proj)
    assert cli_runner().invoke(cli, ["check", "-q", "-j", "1", "."], catch_exceptions=False).exit_code == 1
    shutil.copytree(str(proj), str(tmp_path / "copy"))
    _write(tmp_path / "copy" / "helpers.py", CLEAN_H)
    monkeypatch.chdir(tmp_path / "copy")
    res = cli_runner().invoke(cli, ["fix", "--diff", "-j", "1", "."], catch_exceptions=False)
    assert res.exit_code == 0 and "proj" not in res.stdout + res.stderr, (res.stdout, res.stderr)
    assert "nothing left" in res.stderr + res.stdout


def test_the_code_fingerprint_covers_the_dynamo_facts_table(tmp_path):
    """Regenerating pt2lint/data/dynamo_facts.json changes what the analysis knows: entries must go stale."""
    from pt2lint.cache import _code_folders, _fingerprinted_files, _tree_fingerprint

    counted = {os.path.normpath(p) for _, p in _fingerprinted_files(_code_folders())}
    assert os.path.normpath(str(ROOT / "pt2lint" / "data" / "dynamo_facts.json")) in counted
    table = _write(tmp_path / "data" / "facts.json", "{}")
    before = _tree_fingerprint([str(tmp_path)])
    table.write_text('{"skip": []}')
    assert _tree_fingerprint([str(tmp_path)]) != before


def test_the_key_depends_on_the_interpreter_that_judges_syntax(tmp_path, monkeypatch):
    """`match x:` or a PEP 701 f-string is PTC001 on one CPython and fine on the next."""
    data, here = b'x = f"{"a"}"\n', str(tmp_path / "m.py")
    base = ResultCache(str(tmp_path), SETTINGS).key(data, SETTINGS.enabled, here)
    monkeypatch.setattr(sys, "version_info", (3, 99, 0, "final", 0))
    assert ResultCache(str(tmp_path), SETTINGS).key(data, SETTINGS.enabled, here) != base


def test_the_language_server_resolves_identical_documents_in_their_own_packages(tmp_path):
    """The server keeps parsed modules between lints in one process: by path and bytes, never bytes alone."""
    from pt2lint.config import load_project
    from pt2lint.lsp import lint_document_result

    for pkg, helper in (("a", BREAKING_H), ("b", CLEAN_H)):
        _write(tmp_path / pkg / "__init__.py", "")
        _write(tmp_path / pkg / "model.py", MODEL_IMPORTING_H)
        _write(tmp_path / pkg / "helpers.py", helper)
    seen = {}
    for pkg in ("b", "a", "b"):
        path = str(tmp_path / pkg / "model.py")
        shown, deps = lint_document_result(MODEL_IMPORTING_H, path, "file://" + path, load_project([path]))
        seen[pkg] = ([d.code for d in shown], str(tmp_path / pkg / "helpers.py") in deps, str(tmp_path / ("b" if pkg == "a" else "a") / "helpers.py") in deps)
    assert seen == {"a": (["PTC101"], True, False), "b": ([], True, False)}


def test_the_settings_fingerprint_is_the_same_in_every_process():
    """Sets of codes iterate in a per-process order (string hashing): the key must not."""
    code = (
        "from pt2lint.settings import LintSettings, resolve_selection\n"
        "from pt2lint.analysis.code_config import RegionOptions\n"
        "s = LintSettings(enabled=resolve_selection(), per_file_ignores=(('a.py', frozenset({'PTC101', 'PTC102', 'PTC301'})),),\n"
        "                 regions=(RegionOptions('m.f', knobs=(('capture_scalar_outputs', True),)),))\n"
        "print(s.fingerprint())\n"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], env=dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT)),
            stdout=subprocess.PIPE, check=True, text=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1 and len(outs.pop().strip()) == 32
