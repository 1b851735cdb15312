"""File discovery: walking, excludes, .gitignore, explicit paths, bad paths."""

from __future__ import annotations

import os

import pytest

from pt2lint.discovery import DiscoverySettings, discover, display_path, is_excluded


def touch(root, *names):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def found(root, paths=(".",), **kw):
    settings = DiscoverySettings(project_root=str(root), **kw)
    result = discover(paths, settings, cwd=str(root))
    return [f.path for f in result.files], result.errors


def test_walk_finds_py_and_pyi_sorted(tmp_path):
    touch(tmp_path, "b.py", "a/z.py", "a/m.pyi", "notes.txt", "a/data.json", "A.py")
    files, errors = found(tmp_path)
    assert files == sorted(files) == ["A.py", os.path.join("a", "m.pyi"), os.path.join("a", "z.py"), "b.py"]
    assert errors == []


def test_a_file_named_with_a_trailing_slash_is_an_error(tmp_path):
    # ``open("m.py/")`` on a regular file fails with ENOTDIR; the file is not read as ``m.py``
    touch(tmp_path, "m.py", "pkg/a.py")
    files, errors = found(tmp_path, ["m.py/", "pkg/"])
    assert files == [os.path.join("pkg", "a.py")]
    assert errors == ["m.py/: not a directory"]


def test_default_excludes_skip_tool_dirs_and_site_packages(tmp_path):
    touch(tmp_path, "ok.py", ".venv/x.py", "venv/x.py", "build/x.py", "dist/x.py", "__pycache__/x.py",
          "node_modules/x.py", ".git/x.py", "lib/python3.11/site-packages/pkg/mod.py", "src/build/x.py",
          "usr/lib/python3/dist-packages/pkg/mod.py", "lib/python3.11/site-packages-notes/keep.py")
    files, _ = found(tmp_path)
    assert files == [os.path.join("lib", "python3.11", "site-packages-notes", "keep.py"), "ok.py"]


def _venv(root, name):
    """A virtual environment as `python -m venv` lays it out: pyvenv.cfg at its root, torch inside."""
    touch(root, f"{name}/lib/python3.11/site-packages/torch/nn/modules/module.py", f"{name}/bin/activate_this.py")
    (root / name / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")


def test_virtualenvs_are_skipped_whatever_their_name(tmp_path):
    touch(tmp_path, "model.py", "envs/notes.py")
    _venv(tmp_path, "torch-env")
    _venv(tmp_path, "envs/py311")
    files, errors = found(tmp_path)
    assert files == [os.path.join("envs", "notes.py"), "model.py"] and errors == []
    # a replaced exclude list still skips them: they are installed code, not a name pattern
    files, _ = found(tmp_path, exclude=("build",))
    assert files == [os.path.join("envs", "notes.py"), "model.py"]


def test_a_pyvenv_cfg_file_elsewhere_or_a_file_named_site_packages_does_not_skip(tmp_path):
    touch(tmp_path, "pkg/mod.py", "site-packages.py")
    (tmp_path / "pkg" / "sub").mkdir()
    (tmp_path / "pkg" / "sub" / "pyvenv.cfg").mkdir()  # a directory of that name is no marker
    touch(tmp_path, "pkg/sub/a.py")
    files, _ = found(tmp_path)
    assert files == [os.path.join("pkg", "mod.py"), os.path.join("pkg", "sub", "a.py"), "site-packages.py"]


def test_installed_code_named_on_the_command_line_is_walked(tmp_path):
    _venv(tmp_path, "torch-env")
    site = os.path.join("torch-env", "lib", "python3.11", "site-packages")
    module = os.path.join(site, "torch", "nn", "modules", "module.py")
    assert found(tmp_path, paths=(site,))[0] == [module]
    assert found(tmp_path, paths=(os.path.join(site, "torch"),))[0] == [module]
    assert found(tmp_path, paths=("torch-env",))[0] == [os.path.join("torch-env", "bin", "activate_this.py"), module]
    assert found(tmp_path, paths=(module,))[0] == [module]
    # pre-commit hooks pass files with --force-exclude: installed code stays out
    assert found(tmp_path, paths=(module,), force_exclude=True)[0] == []
    assert is_excluded(str(tmp_path / module), DiscoverySettings(project_root=str(tmp_path)))


def test_gitignore_root_and_nested_with_negation(tmp_path):
    touch(tmp_path, "keep.py", "gen/out.py", "pkg/a.py", "pkg/secret.py", "pkg/sub/secret.py", "pkg/tmp_x.py", "pkg/tmp_keep.py")
    (tmp_path / ".gitignore").write_text("gen/\ntmp_*.py\n")
    (tmp_path / "pkg" / ".gitignore").write_text("secret.py\n!tmp_keep.py\n")
    files, _ = found(tmp_path)
    assert files == ["keep.py", os.path.join("pkg", "a.py"), os.path.join("pkg", "tmp_keep.py")]


def test_gitignore_above_walk_root_applies_inside_a_repository(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated_*.py\n")
    touch(tmp_path, "models/net.py", "models/generated_net.py")
    settings = DiscoverySettings(project_root=str(tmp_path))
    result = discover(["models"], settings, cwd=str(tmp_path))
    assert [f.path for f in result.files] == [os.path.join("models", "net.py")]


def test_no_respect_gitignore(tmp_path):
    touch(tmp_path, "a.py", "b.py")
    (tmp_path / ".gitignore").write_text("b.py\n")
    assert found(tmp_path, respect_gitignore=False)[0] == ["a.py", "b.py"]


def test_exclude_replaces_defaults_and_extend_exclude_adds(tmp_path):
    touch(tmp_path, "a.py", "build/b.py", "legacy/c.py", "models/old_d.py")
    assert found(tmp_path, exclude=("legacy/",))[0] == ["a.py", os.path.join("build", "b.py"), os.path.join("models", "old_d.py")]
    assert found(tmp_path, extend_exclude=("legacy/", "old_*.py"))[0] == ["a.py"]


def test_exclude_patterns_are_relative_to_project_root(tmp_path):
    touch(tmp_path, "models/x.py", "other/models/x.py")
    assert found(tmp_path, extend_exclude=("/models",))[0] == [os.path.join("other", "models", "x.py")]


def test_explicit_file_is_always_linted_unless_force_exclude(tmp_path):
    touch(tmp_path, "build/gen.py", "ignored.py", "script")
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    paths = ["build/gen.py", "ignored.py", "script"]
    assert found(tmp_path, paths)[0] == [os.path.join("build", "gen.py"), "ignored.py", "script"]
    assert found(tmp_path, paths, force_exclude=True)[0] == ["script"]


def test_force_exclude_checks_parent_directories(tmp_path):
    touch(tmp_path, "legacy/deep/x.py")
    settings = DiscoverySettings(project_root=str(tmp_path), extend_exclude=("legacy/",), force_exclude=True)
    assert is_excluded(str(tmp_path / "legacy" / "deep" / "x.py"), settings)
    assert not is_excluded(str(tmp_path / "new.py"), settings)
    assert found(tmp_path, ["legacy/deep/x.py", "legacy"], extend_exclude=("legacy/",), force_exclude=True)[0] == []


def test_explicit_excluded_directory_is_walked_without_force_exclude(tmp_path):
    touch(tmp_path, "build/a.py")
    assert found(tmp_path, ["build"])[0] == [os.path.join("build", "a.py")]


def test_directory_named_like_a_python_file_is_walked(tmp_path):
    touch(tmp_path, "weird.py/inner.py")
    assert found(tmp_path)[0] == [os.path.join("weird.py", "inner.py")]
    assert found(tmp_path, ["weird.py"])[0] == [os.path.join("weird.py", "inner.py")]


def test_nonexistent_path_is_an_error_and_others_still_found(tmp_path):
    touch(tmp_path, "a.py")
    files, errors = found(tmp_path, ["missing.py", "a.py"])
    assert files == ["a.py"]
    assert errors == ["missing.py: no such file or directory"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loops_do_not_hang_and_are_reported_when_named(tmp_path):
    touch(tmp_path, "pkg/a.py")
    os.symlink(str(tmp_path / "pkg"), str(tmp_path / "pkg" / "loop"))  # pkg/loop -> pkg
    os.symlink(str(tmp_path / "l2"), str(tmp_path / "l1"))
    os.symlink(str(tmp_path / "l1"), str(tmp_path / "l2"))
    files, errors = found(tmp_path)
    assert files == [os.path.join("pkg", "a.py")]
    assert errors == []
    files, errors = found(tmp_path, ["l1", "pkg"])
    assert files == [os.path.join("pkg", "a.py")]
    assert len(errors) == 1 and errors[0].startswith("l1: ") and "symbolic links" in errors[0]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinked_files_are_linted_dangling_ones_skipped(tmp_path):
    touch(tmp_path, "real.py")
    os.symlink(str(tmp_path / "real.py"), str(tmp_path / "alias.py"))
    os.symlink(str(tmp_path / "gone.py"), str(tmp_path / "dangling.py"))
    assert found(tmp_path)[0] == ["alias.py", "real.py"]


def test_unlistable_directory_is_an_error(tmp_path, monkeypatch):
    touch(tmp_path, "a.py", "locked/b.py")
    real_scandir = os.scandir
    locked = str(tmp_path / "locked")

    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    files, errors = found(tmp_path)
    assert files == ["a.py"]
    assert errors == ["locked: permission denied"]


def test_duplicates_are_removed(tmp_path):
    touch(tmp_path, "pkg/a.py")
    files, _ = found(tmp_path, ["pkg", "pkg/a.py", "./pkg/../pkg/a.py"])
    assert files == [os.path.join("pkg", "a.py")]


def test_relpaths_are_project_relative_and_paths_cwd_relative(tmp_path):
    touch(tmp_path, "proj/pkg/a.py")
    settings = DiscoverySettings(project_root=str(tmp_path / "proj"))
    result = discover(["proj/pkg"], settings, cwd=str(tmp_path))
    (f,) = result.files
    assert f.path == os.path.join("proj", "pkg", "a.py")
    assert f.relpath == "pkg/a.py"


def test_display_path_outside_cwd_is_absolute(tmp_path):
    inside = tmp_path / "cwd"
    inside.mkdir()
    assert display_path(str(tmp_path / "x.py"), str(inside)) == str(tmp_path / "x.py")
    assert display_path("a/b.py", str(inside)) == os.path.join("a", "b.py")


def _deep_tree(root, levels):
    """``root/deep/d/d/.../d/x.py``, ``levels`` directories ``d`` deep (built relative, level by level)."""
    here = os.getcwd()
    os.chdir(root)
    try:
        os.mkdir("deep")
        os.chdir("deep")
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        with open("x.py", "w") as fh:
            fh.write("x = 1\n")
    finally:
        os.chdir(here)


def _remove_deep_tree(root, levels):
    """Undo :func:`_deep_tree` without recursion (``shutil.rmtree``, pytest's clean-up of old
    temporary folders included, recurses per level on Python 3.11)."""
    here = os.getcwd()
    os.chdir(os.path.join(root, "deep"))
    try:
        for _ in range(levels):
            os.chdir("d")
        os.remove("x.py")
        for _ in range(levels):
            os.chdir("..")
            os.rmdir("d")
        os.chdir(root)
        os.rmdir("deep")
    finally:
        os.chdir(here)


def test_a_directory_nested_1000_deep_is_walked_and_the_rest_still_checked(tmp_path, monkeypatch):
    """The walk must not recurse per level: 1000 nested directories (a legal ~2000-character
    path) once made ``check`` and ``--show-files`` fail with an internal RecursionError."""
    from clitools import cli_runner
    from pt2lint.cli import cli

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n")
    _deep_tree(tmp_path, 1000)
    try:
        deep_file = os.path.join("deep", *["d"] * 1000, "x.py")
        monkeypatch.chdir(tmp_path)

        files, errors = found(tmp_path)
        assert files == [deep_file, "model.py"] and errors == []

        runner = cli_runner()
        shown = runner.invoke(cli, ["check", "--no-cache", "--show-files", "."], catch_exceptions=False)
        assert shown.exit_code == 0, shown.stderr
        assert shown.stdout.splitlines() == [deep_file, "model.py"]
        checked = runner.invoke(cli, ["check", "--no-cache", "-j", "1", "."], catch_exceptions=False)
        assert checked.exit_code == 1, checked.stderr
        assert "internal error" not in checked.stderr and "model.py:5:" in checked.stdout
        assert "2 files checked" in checked.stderr
    finally:
        _remove_deep_tree(str(tmp_path), 1000)
