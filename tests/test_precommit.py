"""The pre-commit hooks, driven by a real ``pre-commit try-repo`` in a temporary git repository.

pre-commit installs the hook repository (a snapshot of this checkout) into a fresh
virtual environment, with the dependencies from the package index, as a user's
``.pre-commit-config.yaml`` would.  ``try-repo`` always builds a new environment, so
the runs start together and the tests read their results.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pre_commit")
if shutil.which("git") is None:  # pragma: no cover - git is everywhere CI runs
    pytest.skip("git is not installed", allow_module_level=True)

REPO = pathlib.Path(__file__).resolve().parent.parent
BAD = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                x = x * 2
            return x
    """
)
GOOD = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            return torch.where(x.sum() > 0, x * 2, x)
    """
)
NETWORK_ERRORS = ("Could not find a version", "Failed to establish a new connection", "Temporary failure in name resolution", "No matching distribution")
GIT = ["git", "-c", "user.name=pt2lint tests", "-c", "user.email=tests@pt2lint.invalid", "-c", "commit.gpgsign=false"]


def _git(*args, cwd):
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True)


def _snapshot(dest: pathlib.Path) -> pathlib.Path:
    """A git repository holding what installing pt2lint needs, from the working tree."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pt2lint_cache")
    for name in ("pt2lint", "rules"):
        shutil.copytree(REPO / name, dest / name, ignore=ignore)
    _git("init", "-q", cwd=dest)
    _git("add", ".", cwd=dest)
    _git("commit", "-q", "-m", "snapshot", cwd=dest)
    return dest


def _fix_available() -> bool:
    proc = subprocess.run([sys.executable, "-m", "pt2lint", "check", "--help"], capture_output=True, text=True, timeout=60)
    return "--fix" in proc.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run every ``try-repo`` case at once (each builds its own hook environment, ~20 s)."""
    root = tmp_path_factory.mktemp("precommit")
    hooks = _snapshot(root / "hooks")
    work = root / "work"
    work.mkdir()
    (work / "bad.py").write_text(BAD)
    (work / "good.py").write_text(GOOD)
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    environ = dict(os.environ)
    environ.pop("PT2LINT_CACHE_DIR", None)
    cases = {"bad": ("pt2lint", "bad.py"), "good": ("pt2lint", "good.py")}
    if _fix_available():
        cases["fix-good"] = ("pt2lint-fix", "good.py")
    procs = {}
    for name, (hook, file) in cases.items():
        environ_case = dict(environ, PRE_COMMIT_HOME=str(root / f"home-{name}"))
        procs[name] = subprocess.Popen(
            [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), hook, "--files", file],
            cwd=work, env=environ_case, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
    out = {}
    for name, proc in procs.items():
        try:
            text, _ = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            text, _ = proc.communicate()
        out[name] = (proc.returncode, text)
    return out


def _result(runs, name):
    if name not in runs:
        pytest.skip("`pt2lint check --fix` is not available yet")
    code, out = runs[name]
    if code not in (0, 1) or "An error has occurred" in out:
        if any(e in out for e in NETWORK_ERRORS):
            pytest.skip("pre-commit could not install the hook's dependencies from the package index")
        pytest.fail(f"pre-commit try-repo failed ({code}):\n{out}")
    return code, out


def test_hook_fails_on_a_graph_break_and_shows_the_code(runs):
    code, out = _result(runs, "bad")
    assert code == 1, out
    assert "pt2lint" in out and "Failed" in out
    assert "bad.py:7:12: PTC104" in out


def test_hook_passes_a_clean_file(runs):
    code, out = _result(runs, "good")
    assert code == 0, out
    assert "Passed" in out and "PTC" not in out


def test_fix_hook_passes_a_clean_file(runs):
    code, out = _result(runs, "fix-good")
    assert code == 0, out


def test_manifest_is_valid_and_selects_python_files_only():
    from identify.identify import tags_from_path
    from pre_commit.clientlib import load_manifest

    hooks = {h["id"]: h for h in load_manifest(str(REPO / ".pre-commit-hooks.yaml"))}
    assert set(hooks) == {"pt2lint", "pt2lint-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["require_serial"] is True
        assert set(hook["types_or"]) == {"python", "pyi"} and hook["minimum_pre_commit_version"]
        assert hook["entry"].startswith("pt2lint check --hook")
        assert hook["pass_filenames"] is True and hook["always_run"] is False
    assert tags_from_path(str(REPO / "pt2lint" / "cli.py")) & {"python", "pyi"}
    assert not tags_from_path(str(REPO / "README.md")) & {"python", "pyi"}


def test_hook_installs_without_torch():
    import sys as _sys

    if _sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    deps = [d.split(";")[0].strip().lower() for d in project["dependencies"]]
    assert not any(d.startswith(("torch", "pygls", "lsprotocol")) for d in deps), deps


def test_hook_entry_with_no_files_never_lints_the_tree(tmp_path):
    # pre-commit with `always_run` or `pass_filenames: false` calls the entry with no files:
    # that must not fall back to linting `.` (which here holds bad.py).
    (tmp_path / "bad.py").write_text(BAD)
    proc = subprocess.run([sys.executable, "-m", "pt2lint", "check", "--hook"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


# --- the README's recipe, exactly as written ---------------------------------------------

ITEM = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            scale = x.abs().max().item()
            return x / scale
    """
)


def readme_precommit_config() -> str:
    """The ``.pre-commit-config.yaml`` block of the README's pre-commit section, verbatim."""
    from markdown_it import MarkdownIt

    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### pre-commit"):]
    for token in MarkdownIt("commonmark").parse(section):
        if token.type == "fence" and token.info.strip() == "yaml" and ".pre-commit-config.yaml" in token.content:
            return token.content
    raise AssertionError("the README's pre-commit section has no .pre-commit-config.yaml block")


def _local_config(config_text: str) -> tuple[str, str]:
    """``config_text`` with its pt2lint ``repo:`` URL replaced by this checkout's path, and the rev.

    The README points at the public repository; offline, the same commit is fetched from
    this checkout instead.  Nothing else in the config changes.
    """
    import yaml

    config = yaml.safe_load(config_text)
    (entry,) = [r for r in config["repos"] if "pt2lint" in r["repo"]]
    url, rev = entry["repo"], entry["rev"]
    assert config_text.count(url) == 1
    return config_text.replace(url, str(REPO)), rev


def _has_commit(rev: str) -> bool:
    proc = subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=REPO, capture_output=True)
    return proc.returncode == 0


def _has_history() -> bool:
    """A clone with its history: not shallow, and more than one commit (a copy of the tree
    committed once, as the README runner makes, holds no earlier commit)."""
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    return shallow == "false" and count.isdigit() and int(count) > 1


@pytest.fixture(scope="module")
def readme_runs(tmp_path_factory):
    """``pre-commit run --all-files`` with the README's config, on a file with ``.item()`` and on a clean one.

    The config is the README's block with only the repository URL replaced by the path
    of this checkout (offline, the public URL cannot be fetched); ``rev`` is used as
    written, so it must be a commit this repository has.  The two runs share one
    pre-commit home, so the hook environment is built once.
    """
    config_text, rev = _local_config(readme_precommit_config())
    if not _has_commit(rev):
        if not _has_history():
            pytest.skip(f"this checkout has no git history (shallow, or a copy), so it cannot hold rev {rev}")
        pytest.fail(f"the README's pre-commit rev {rev} is not a commit of this repository")
    root = tmp_path_factory.mktemp("readme-precommit")
    environ = dict(os.environ, PRE_COMMIT_HOME=str(root / "home"))
    environ.pop("PT2LINT_CACHE_DIR", None)
    out = {}
    for name, files in {"item": {"model.py": ITEM, "clean.py": GOOD}, "clean": {"clean.py": GOOD}}.items():
        work = root / name
        work.mkdir()
        (work / ".pre-commit-config.yaml").write_text(config_text)
        for file, source in files.items():
            (work / file).write_text(source)
        _git("init", "-q", cwd=work)
        _git("add", ".", cwd=work)
        proc = subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--all-files"],
            cwd=work, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
        )
        out[name] = (proc.returncode, proc.stdout)
    return out


def test_readme_config_pins_a_commit_and_names_both_hooks():
    import yaml

    config = yaml.safe_load(readme_precommit_config())
    (entry,) = config["repos"]
    assert len(entry["rev"]) == 40 and int(entry["rev"], 16) >= 0, entry["rev"]
    assert [h["id"] for h in entry["hooks"]] == ["pt2lint", "pt2lint-fix"]


def test_readme_config_fails_on_item_and_names_the_line(readme_runs):
    code, out = _result(readme_runs, "item")
    assert code == 1, out
    assert "model.py:7:31: PTC101" in out, out
    assert "clean.py:" not in out, out


def test_readme_config_passes_a_clean_file(readme_runs):
    code, out = _result(readme_runs, "clean")
    assert code == 0, out
    assert out.count("Passed") == 2 and "PTC" not in out, out


def test_autoupdate_moves_the_readme_rev_to_a_commit_of_this_repository(tmp_path):
    """``pre-commit autoupdate``, which the README recommends, on the README's config (URL made local)."""
    config_text, rev = _local_config(readme_precommit_config())
    if not _has_commit(rev):
        pytest.skip(f"this checkout does not hold rev {rev}")
    (tmp_path / ".pre-commit-config.yaml").write_text(config_text)
    _git("init", "-q", cwd=tmp_path)
    environ = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "autoupdate"], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import yaml

    new_rev = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text())["repos"][0]["rev"]
    resolved = subprocess.run(["git", "rev-parse", f"{new_rev}^{{commit}}"], cwd=REPO, capture_output=True, text=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    assert resolved.returncode == 0 and resolved.stdout.strip() == head, (new_rev, proc.stdout)
