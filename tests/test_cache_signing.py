"""Cache entries are signed with the user's own secret: a committed, copied or moved entry is a miss.

A well-formed entry says nothing about who wrote it.  Before entries were signed, an
entry of exactly the right shape with ``"diagnostics": []`` -- committed to a
repository under the key of one of its files (the key is computable from public
facts: the bytes, the checkout path, the version) -- made ``check`` report a file with
a graph break clean, exit 0.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

import pt2lint.cache as cache_mod
from pt2lint.cache import ResultCache, cache_secret, secret_path
from pt2lint.engine import lint_paths
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())
DIRTY = "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n"
CLEAN = "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum()\n"


@pytest.fixture
def secret_dir(tmp_path, monkeypatch):
    folder = tmp_path / "secret"
    monkeypatch.setenv(cache_mod.SECRET_DIR_ENV, str(folder))
    monkeypatch.setattr(cache_mod, "_SECRET_CACHE", {})
    return folder


def _codes(paths, cache):
    return [(d.code, os.path.basename(d.filename)) for r in lint_paths([str(p) for p in paths], SETTINGS, jobs=1, cache_dir=cache) for d in r.diagnostics]


def _entry_of(cache_root, before):
    (new,) = set(cache_root.rglob("*.json")) - before
    return new


def test_a_well_formed_empty_entry_is_a_miss(tmp_path, secret_dir):
    model = tmp_path / "m.py"
    model.write_text(DIRTY)
    cache = tmp_path / "cache"
    assert _codes([model], str(cache)) == [("PTC101", "m.py")]
    (entry,) = cache.rglob("*.json")
    data = json.loads(entry.read_text())
    assert len(data["signature"]) == 64
    data["diagnostics"] = []  # exactly the shape put() writes, the signature kept
    entry.write_text(json.dumps(data))
    assert _codes([model], str(cache)) == [("PTC101", "m.py")]
    del data["signature"]  # or no signature at all
    entry.write_text(json.dumps(data))
    assert _codes([model], str(cache)) == [("PTC101", "m.py")]


def test_a_genuine_entry_moved_to_another_key_is_a_miss(tmp_path, secret_dir):
    model, clean = tmp_path / "m.py", tmp_path / "c.py"
    model.write_text(DIRTY)
    clean.write_text(CLEAN)
    cache = tmp_path / "cache"
    assert _codes([model], str(cache)) == [("PTC101", "m.py")]
    dirty_entry = next(cache.rglob("*.json"))
    before = set(cache.rglob("*.json"))
    assert _codes([clean], str(cache)) == []
    clean_entry = _entry_of(cache, before)
    dirty_entry.write_bytes(clean_entry.read_bytes())  # signed, but for the clean file's key
    assert _codes([model], str(cache)) == [("PTC101", "m.py")]


def test_an_entry_signed_with_another_secret_is_a_miss(tmp_path, secret_dir, monkeypatch):
    model = tmp_path / "m.py"
    model.write_text(DIRTY)
    cache = tmp_path / "cache"
    _codes([model], str(cache))
    (entry,) = cache.rglob("*.json")
    data = json.loads(entry.read_text())
    data.pop("signature")
    data["diagnostics"] = []
    key = entry.stem
    data["signature"] = cache_mod._signature(b"0" * 64, key, data)  # the attacker's own secret
    entry.write_text(json.dumps(data))
    assert _codes([model], str(cache)) == [("PTC101", "m.py")]


def test_warm_runs_still_hit(tmp_path, secret_dir, monkeypatch):
    import pt2lint.engine as engine

    model = tmp_path / "m.py"
    model.write_text(DIRTY)
    cache = str(tmp_path / "cache")
    cold = _codes([model], cache)
    calls = []
    real = engine.lint_path
    monkeypatch.setattr(engine, "lint_path", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert _codes([model], cache) == cold and calls == []
    assert stat.S_IMODE(os.stat(secret_path()).st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_an_unusable_secret_turns_the_cache_off(tmp_path, secret_dir):
    secret_dir.mkdir()
    target = tmp_path / "planted"
    target.write_text("0" * 64)
    os.symlink(str(target), secret_path())  # a link is never followed: the secret could be someone else's
    assert cache_secret() is None
    model = tmp_path / "m.py"
    model.write_text(DIRTY)
    cache = tmp_path / "cache"
    assert _codes([model], str(cache)) == [("PTC101", "m.py")]
    assert list(cache.rglob("*.json")) == []  # nothing written that could not be checked
    assert _codes([model], str(cache)) == [("PTC101", "m.py")]


def test_two_first_runs_agree_on_one_secret(tmp_path, secret_dir):
    path = secret_path()
    cache_mod._make_secret(path)
    first = open(path, "rb").read()
    cache_mod._make_secret(path)  # a second process racing the first: the first secret stays
    assert open(path, "rb").read() == first and len(first) == 64
