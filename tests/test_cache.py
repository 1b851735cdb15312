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
    base = cache.key(data, SETTINGS.enabled)
    assert cache.key(data + b" ", SETTINGS.enabled) != base
    assert cache.key(data, SETTINGS.enabled - {"PTC101"}) != base
    knob = ResultCache(str(tmp_path), LintSettings(enabled=SETTINGS.enabled, capture_scalar_outputs=True))
    assert knob.key(data, SETTINGS.enabled) != base


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
