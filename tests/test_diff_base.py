"""``check --diff-base REF``: only findings on changed lines, or reached through a changed call."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap

import pytest

from pt2lint.cli import cli
from pt2lint.gitdiff import Changes, FileChanges, changes_since, narrow, parse_diff, unquote_path
from clitools import cli_runner

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

MODEL_V1 = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            print("old")
            s = x.sum()
            return x * s
    """
)

HELPERS = textwrap.dedent(
    """\
    import torch


    def scale(x):
        return x * x.max().item()


    def shift(x):
        return x + 1
    """
)

CALLER = textwrap.dedent(
    """\
    import torch
    from torch import nn

    from helpers import scale, shift


    class Caller(nn.Module):
        def forward(self, x):
            y = shift(x)
            return y
    """
)


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    monkeypatch.chdir(root)
    return root


def commit(repo, message="c"):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)


def check(*args):
    return cli_runner().invoke(cli, ["check", "--no-cache", *args], catch_exceptions=False)


def findings(*args):
    result = check("--output-format", "json", *args)
    assert result.exit_code in (0, 1), result.stderr
    return [(os.path.basename(d["filename"]), d["location"]["row"], d["code"]) for d in json.loads(result.stdout)], result


def test_one_line_gained_item_reports_exactly_that_finding(repo):
    (repo / "model.py").write_text(MODEL_V1)
    commit(repo)
    (repo / "model.py").write_text(MODEL_V1.replace("s = x.sum()", "s = x.sum().item()"))
    commit(repo)
    everything, _ = findings(".")
    assert ("model.py", 7, "PTC301") in everything and ("model.py", 8, "PTC101") in everything
    only, result = findings("--diff-base", "HEAD~1", ".")
    assert only == [("model.py", 8, "PTC101")]
    assert result.exit_code == 1
    # the same in the text format, and nothing changed since HEAD exits 0 although print() is still there
    text = check("--diff-base", "HEAD~1", ".")
    assert text.exit_code == 1 and text.stdout.count("PTC") == 1 and "model.py:8:" in text.stdout
    clean = check("--diff-base", "HEAD", ".")
    assert clean.exit_code == 0 and clean.stdout == ""


def test_uncommitted_and_untracked_changes_count(repo):
    (repo / "model.py").write_text(MODEL_V1)
    commit(repo)
    (repo / "model.py").write_text(MODEL_V1.replace("s = x.sum()", "s = x.sum().item()"))  # not staged
    (repo / "new.py").write_text(MODEL_V1.replace("Net", "Other"))  # untracked: every line is new
    only, _ = findings("--diff-base", "HEAD", ".")
    assert only == [("model.py", 8, "PTC101"), ("new.py", 7, "PTC301")]
    (repo / ".gitignore").write_text("new.py\n")  # an ignored file is not a change
    only, _ = findings("--diff-base", "HEAD", ".")
    assert only == [("model.py", 8, "PTC101")]


def test_finding_in_unchanged_file_reached_through_a_changed_call(repo):
    (repo / "helpers.py").write_text(HELPERS)
    (repo / "caller.py").write_text(CALLER)
    (repo / "unrelated.py").write_text(MODEL_V1)
    commit(repo)
    assert findings("--diff-base", "HEAD", ".")[0] == []
    # a new call into the helper whose line holds .item(): the finding is in helpers.py, which did not change
    (repo / "caller.py").write_text(CALLER.replace("return y\n", "return scale(y)\n"))
    only, result = findings("--diff-base", "HEAD", ".")
    assert only == [("helpers.py", 5, "PTC101")]
    (item,) = json.loads(result.stdout)
    assert [os.path.basename(s["filename"]) for s in item["call_sites"]] == ["caller.py"]
    # unrelated.py cannot reach a changed file and is not analysed; helpers.py is (it is imported)
    shown = check("--diff-base", "HEAD", "--show-files", ".")
    assert shown.stdout.split() == ["caller.py"]


def test_changed_helper_line_reached_from_an_unchanged_entry(repo):
    (repo / "helpers.py").write_text(HELPERS.replace("x * x.max().item()", "x * x.max()"))
    (repo / "caller.py").write_text(CALLER.replace("return y\n", "return scale(y)\n"))
    (repo / "unrelated.py").write_text(MODEL_V1)
    commit(repo)
    (repo / "helpers.py").write_text(HELPERS)
    only, _ = findings("--diff-base", "HEAD", ".")
    assert only == [("helpers.py", 5, "PTC101")]
    # the unchanged caller is analysed because it imports the changed module
    assert sorted(check("--diff-base", "HEAD", "--show-files", ".").stdout.split()) == ["caller.py", "helpers.py"]


def test_renamed_file_keeps_only_its_edited_lines(repo):
    (repo / "model.py").write_text(MODEL_V1)
    commit(repo)
    git(repo, "mv", "model.py", "renamed.py")
    (repo / "renamed.py").write_text(MODEL_V1.replace("s = x.sum()", "s = x.sum().item()"))
    only, _ = findings("--diff-base", "HEAD", ".")
    assert only == [("renamed.py", 8, "PTC101")]


def test_sarif_output_is_filtered_too(repo):
    (repo / "model.py").write_text(MODEL_V1)
    commit(repo)
    (repo / "model.py").write_text(MODEL_V1.replace("s = x.sum()", "s = x.sum().item()"))
    result = check("--output-format", "sarif", "--diff-base", "HEAD", ".")
    assert result.exit_code == 1
    results = json.loads(result.stdout)["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [("PTC101", 8)]


def test_errors_are_one_line(repo, tmp_path, monkeypatch):
    (repo / "model.py").write_text(MODEL_V1)
    commit(repo)
    bad = check("--diff-base", "no-such-ref", ".")
    assert bad.exit_code == 2 and "unknown git ref 'no-such-ref'" in bad.stderr and "Traceback" not in bad.stderr
    dash = check("--diff-base", "--output=x", ".")
    assert dash.exit_code == 2 and "unknown git ref" in dash.stderr
    stdin = cli_runner().invoke(cli, ["check", "--diff-base", "HEAD", "-"], input="x = 1\n")
    assert stdin.exit_code == 2 and "not stdin" in stdin.stderr
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "m.py").write_text(MODEL_V1)
    monkeypatch.chdir(outside)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    not_repo = check("--diff-base", "HEAD", ".")
    assert not_repo.exit_code == 2 and "is not inside a git working tree" in not_repo.stderr
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    no_git = check("--diff-base", "HEAD", ".")
    assert no_git.exit_code == 2 and "needs git" in no_git.stderr


def test_parse_diff_lines_deletions_renames_and_quoted_paths():
    diff = (
        b"diff --git a.py a.py\n--- a.py\n+++ a.py\n@@ -3 +3,2 @@ def f():\n-x\n+y\n+z\n@@ -10,2 +10,0 @@\n-q\n-r\n"
        b"diff --git old.py new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n"
        b"diff --git gone.py gone.py\ndeleted file mode 100644\n--- gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        b'diff --git "sp\\303\\244ce\\tx.py" "sp\\303\\244ce\\tx.py"\n--- "sp\\303\\244ce\\tx.py"\n+++ "sp\\303\\244ce\\tx.py"\n@@ -0,0 +1 @@\n+n\n'
        b"diff --git with space.py with space.py\n--- with space.py\t\n+++ with space.py\t\n@@ -2 +2 @@\n-a\n+b\n"
    )
    parsed = parse_diff(diff)
    assert set(parsed) == {b"a.py", b"new.py", "späce\tx.py".encode(), b"with space.py"}  # git adds a tab after a name with a space
    assert parsed[b"a.py"] == FileChanges((3, 4), (10,))
    assert parsed[b"new.py"] == FileChanges()
    assert parsed["späce\tx.py".encode()].lines == (1,)
    assert unquote_path(b"plain.py") == b"plain.py"
    # a deletion counts for a statement spanning it, not for the lines next to it alone
    cut = parsed[b"a.py"]
    assert cut.touches(10, 11) and not cut.touches(11, 11) and not cut.touches(9, 10)


def test_narrow_follows_imports_transitively(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    files = {
        "pkg/__init__.py": "",
        "pkg/layers.py": "x = 1\n",
        "pkg/blocks.py": "from .layers import x\n",
        "pkg/sibling.py": "from . import something\n",
        "model.py": "from pkg.blocks import x\n",
        "alone.py": "import torch\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    paths = [str(tmp_path / rel) for rel in files]
    changed = Changes(str(tmp_path), "HEAD", {os.path.realpath(str(tmp_path / "pkg/layers.py")): FileChanges((1,))})
    chosen = {os.path.relpath(paths[i], tmp_path) for i in narrow(paths, changed)}
    assert chosen == {"pkg/layers.py", "pkg/blocks.py", "model.py"}
    init = Changes(str(tmp_path), "HEAD", {os.path.realpath(str(pkg / "__init__.py")): FileChanges(whole=True)})
    chosen = {os.path.relpath(paths[i], tmp_path) for i in narrow(paths, init)}
    assert chosen == {"pkg/__init__.py", "pkg/blocks.py", "pkg/sibling.py", "model.py"}


def test_changes_since_reads_the_working_tree(repo):
    (repo / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    commit(repo)
    (repo / "a.py").write_text("a = 1\nc = 3\nd = 4\n")
    changes = changes_since("HEAD")
    (only,) = changes.files.values()
    assert only.lines == (3,) and only.cuts == (1,)
    assert changes.root == os.path.realpath(str(repo))


def test_changed_route_wins_over_a_longer_unchanged_one(repo):
    # Both callers reach helpers.scale's .item(); a full run reports it once, with the longest
    # chain (through caller_a's _route).  Only caller_b's call is new: that route must decide.
    (repo / "helpers.py").write_text(HELPERS)
    (repo / "caller_a.py").write_text(
        "# kept next to caller_b\n" + CALLER.replace("y = shift(x)", "y = self._route(x)")
        + "\n    def _route(self, x):\n        return scale(x)\n"
    )
    (repo / "caller_b.py").write_text(CALLER.replace("Caller", "CallerB"))
    commit(repo)
    full, result = findings(".")
    (item,) = json.loads(result.stdout)
    assert len(item["call_chain"]) == 3  # the unchanged route is the one a full run shows
    (repo / "caller_b.py").write_text(CALLER.replace("Caller", "CallerB").replace("return y\n", "return scale(y)\n"))
    only, result = findings("--diff-base", "HEAD", ".")
    assert only == [("helpers.py", 5, "PTC101")]
    (item,) = json.loads(result.stdout)
    assert [os.path.basename(s["filename"]) for s in item["call_sites"]] == ["caller_b.py"]
    (repo / "caller_b.py").write_text(CALLER.replace("Caller", "CallerB"))
    assert findings("--diff-base", "HEAD", ".")[0] == []


def test_cached_results_are_judged_per_route_too(repo, tmp_path):
    (repo / "helpers.py").write_text(HELPERS)
    (repo / "caller.py").write_text(CALLER)
    commit(repo)
    (repo / "caller.py").write_text(CALLER.replace("return y\n", "return scale(y)\n"))
    cache = ["--cache-dir", str(tmp_path / "cache")]
    args = ["check", "--output-format", "json", "--diff-base", "HEAD", *cache, "."]
    cold = cli_runner().invoke(cli, args, catch_exceptions=False)
    warm = cli_runner().invoke(cli, args, catch_exceptions=False)
    assert (tmp_path / "cache").is_dir()
    assert cold.exit_code == warm.exit_code == 1
    assert json.loads(cold.stdout) == json.loads(warm.stdout) and len(json.loads(warm.stdout)) == 1


def test_a_copied_tree_with_its_cache_reports_its_own_changed_helper(repo, tmp_path, monkeypatch):
    """The cache entry of the original's caller (same bytes) must not answer for the copy's."""
    (repo / "helpers.py").write_text(HELPERS.replace("x * x.max().item()", "x * x.max()"))
    (repo / "caller.py").write_text(CALLER.replace("return y\n", "return scale(y)\n"))
    commit(repo)
    (repo / "helpers.py").write_text(HELPERS)  # the original gains .item() in scale
    warm = cli_runner().invoke(cli, ["check", "-q", "."], catch_exceptions=False)  # fills the cache
    assert warm.exit_code == 1
    copy = tmp_path / "copy"
    shutil.copytree(str(repo), str(copy))
    (copy / "helpers.py").write_text(HELPERS.replace("def shift", "# moved\ndef shift"))  # changed again, .item() kept
    monkeypatch.chdir(copy)
    result = cli_runner().invoke(cli, ["check", "--output-format", "json", "--diff-base", "HEAD", "."], catch_exceptions=False)
    assert result.exit_code == 1, result.stdout
    assert [(d["filename"], d["location"]["row"]) for d in json.loads(result.stdout)] == [(str(copy / "helpers.py"), 5)]
