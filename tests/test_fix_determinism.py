"""``pt2lint fix`` gives byte-identical output for any ``PYTHONHASHSEED`` and any ``--jobs``.

The branch functions of a ``torch.cond`` rewrite take the branches' tensors as
parameters; their order once followed a set union of environment keys, so the
``--diff`` preview and the written file could differ from run to run.  Here the
fix corpus (``fixtures/fix``, which includes a cell whose branches read four
inputs in differing orders inside a loop) is fixed in child processes under three
hash seeds and with one and two jobs: every ``--diff`` output and every written
tree must be the same bytes, and the written tree must be what ``--diff`` showed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from clitools import repo_pythonpath
from pt2lint.commands.fix import unified_diff

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "fixtures" / "fix"
SEEDS = ("0", "1", "4242")


def _pt2lint(args, cwd: Path, seed: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=repo_pythonpath(str(REPO)))
    env.pop("PT2LINT_CACHE_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "pt2lint", "fix", "--isolated", "--no-cache", "--unsafe-fixes", *args],
        cwd=cwd, env=env, capture_output=True, timeout=300,
    )


def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def test_fix_and_diff_are_identical_under_hash_seeds_and_jobs(tmp_path):
    src = tmp_path / "corpus"
    shutil.copytree(CORPUS, src)
    original = _tree(src)
    assert len(original) >= 10

    diffs = {}
    for seed, jobs in [(SEEDS[0], "1"), (SEEDS[1], "1"), (SEEDS[2], "1"), (SEEDS[1], "2")]:
        res = _pt2lint(["--diff", "-j", jobs, "."], src, seed)
        assert res.returncode == 1, res.stderr.decode()  # there are changes
        diffs[(seed, jobs)] = res.stdout
    first = next(iter(diffs.values()))
    assert b"torch.cond(" in first
    for key, out in diffs.items():
        assert out == first, f"--diff differs under PYTHONHASHSEED={key[0]} --jobs {key[1]}"
    assert _tree(src) == original  # --diff writes nothing

    written = {}
    for seed, jobs in [(SEEDS[0], "1"), (SEEDS[2], "2")]:
        dest = tmp_path / f"fixed-{seed}-{jobs}"
        shutil.copytree(CORPUS, dest)
        res = _pt2lint(["-q", "-j", jobs, "."], dest, seed)
        assert res.returncode in (0, 1), res.stderr.decode()
        written[(seed, jobs)] = _tree(dest)
    trees = list(written.values())
    assert trees[0] == trees[1], "fix wrote different files under different seeds/jobs"

    # what fix wrote is what --diff previewed, file by file
    shown = "".join(
        unified_diff(name, original[name].decode(), trees[0][name].decode())
        for name in sorted(original) if trees[0][name] != original[name]
    )
    printed = first.decode()
    for name in sorted(original):
        if trees[0][name] == original[name]:
            assert f"/{name}\n" not in printed
    assert _hunks(shown) == _hunks(printed)


def _hunks(diff_text: str) -> list:
    """The changed lines of a unified diff, without the file headers (the paths are spelled per run)."""
    return [line for line in diff_text.splitlines() if line[:1] in "+-@" and not line.startswith(("+++", "---"))]
