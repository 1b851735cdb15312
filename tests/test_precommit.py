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
