"""Glob patterns: normalisation is equivalent to pathspec's reading, and no pattern is slow."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pt2lint.config import ConfigError, Overrides, load_project
from pt2lint.globs import MAX_PATTERN_CHARS, compile_patterns, normalize_pattern, pattern_problem

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: pattern pieces: star runs of every length, components, escapes, brackets, negation, comments
_PATTERN_TOKENS = st.sampled_from(
    ["*", "**", "***", "a", "b", "/", "/", "?", "[ab]", "[!a]", "[", "]", "\\", "\\*", "!", " ", "#"]
)
_PATH_PARTS = st.lists(st.sampled_from(["a", "b", "ab", "ba", "aab", "*", "[", " ", "\\"]), min_size=1, max_size=3).map(
    "".join
)


def _as_git_reads(pattern: str) -> str:
    """``pattern`` with a trailing ``**/`` component made ``*/``: where pathspec's reading differs
    from git's (``a/**/`` does not match ``a/m.py`` in git), pt2lint follows git."""
    body = pattern if pattern.endswith("\\ ") else pattern.rstrip()
    segments = body.split("/")
    if not pattern.startswith("#") and len(segments) >= 2 and segments[-1] == "" and segments[-2] == "**":
        return "/".join(segments[:-2] + ["*", ""])
    return pattern


def _reference(pattern: str):
    """pathspec's own reading of the raw pattern (its backtracking backend), or the error type."""
    try:
        return pathspec.GitIgnoreSpec.from_lines([_as_git_reads(pattern)], backend="simple")
    except Exception as exc:  # a bad pattern must stay bad, with the same error class
        return type(exc)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_PATTERN_TOKENS, max_size=8).map("".join),
    st.lists(st.lists(_PATH_PARTS, min_size=1, max_size=4), min_size=1, max_size=4),
)
def test_normalised_pattern_matches_what_the_raw_pattern_matches(pattern, paths):
    ref = _reference(pattern)
    if isinstance(ref, type):
        with pytest.raises(ref):
            compile_patterns([pattern]).match_file("probe")
        return
    ours = compile_patterns([pattern])
    for parts in paths:
        for path in ("/".join(parts), "/".join(parts) + "/"):
            try:
                expected = ref.match_file(path)
            except Exception as exc:  # e.g. a reversed range surfacing at match time
                with pytest.raises(type(exc)):
                    ours.match_file(path)
                continue
            assert ours.match_file(path) == expected, (pattern, normalize_pattern(pattern), path)


def test_every_short_pattern_normalises_to_an_equivalent_one():
    """Exhaustive over four pieces: deterministic, where the generated test samples."""
    import itertools

    tokens = ["*", "**", "***", "a", "/", "?", "\\", "!", "[a]"]
    paths = ["a", "aa", "b", "a/a", "a/", "a/b/a", "aa/a/", "*", "a/aa/b", "!a", "\\a", "a//a"]
    for n in range(1, 5):
        for parts in itertools.product(tokens, repeat=n):
            pattern = "".join(parts)
            if normalize_pattern(pattern) == pattern:
                continue
            ref = _reference(pattern)
            if isinstance(ref, type):
                continue  # a bad pattern: the generated test checks it stays bad
            ours = compile_patterns([pattern])
            for path in paths:
                assert ours.match_file(path) == ref.match_file(path), (pattern, normalize_pattern(pattern), path)


@pytest.mark.parametrize(
    "raw, normal",
    [
        ("*********x", "*x"),
        ("a***b/**", "a*b/**"),
        ("**/x", "**/x"),
        ("a/**/b", "a/**/b"),
        ("a/***/b", "a/***/b"),
        ("a/*********/b", "a/***/b"),
        ("*/***", "*/***"),
        ("*/*", "*/*"),
        ("!***.py", "!*.py"),
        ("a**b", "a*b"),
        ("\\***", "\\**"),
        ("# ***", "# ***"),
    ],
)
def test_normalize_collapses_star_runs_but_keeps_double_star_components(raw, normal):
    assert normalize_pattern(raw) == normal


def test_every_glob_site_is_fast_even_with_the_backtracking_backend(tmp_path):
    """``.gitignore``, ``exclude`` and ``per-file-ignores`` with long star runs finish at once.

    The child forces pathspec's ``simple`` (Python ``re``) backend, so only the
    normalisation protects it; before it, ten stars took over a minute.
    """
    stars = "*" * 40 + "x"
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / ("a" * 32 + ".py")).write_text("import torch\n")
    (project / "sub" / ("b" * 32 + "x")).mkdir()
    (project / "sub" / ("b" * 32 + "x") / "m.py").write_text("import torch\n")
    (project / ".gitignore").write_text(stars + "\n")
    (project / "pyproject.toml").write_text(
        f'[tool.pt2lint]\nexclude = ["{stars}"]\nper-file-ignores = {{ "{stars}" = ["PTC1"] }}\n'
    )
    child = textwrap.dedent(
        f"""
        import os, sys, pathspec._backends.agg as agg
        agg._BEST_BACKEND = "simple"
        from pt2lint.config import load_project
        from pt2lint.discovery import discover
        os.chdir({str(project)!r})
        project = load_project(["."])
        found = discover(["."], project.discovery)
        print(sorted(os.path.basename(f.path) for f in found.files))
        print(len(project.settings.enabled_for("{'a' * 32}.py")) == len(project.settings.enabled_for("{'a' * 31}x")))
        """
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # sub/bbb...x is ignored (a directory matching the pattern); the .py file matches nothing
    assert lines == [repr(["a" * 32 + ".py"]), "False"], done.stdout


def test_many_stars_between_literals_match_in_linear_time():
    """RE2 (the default backend) bounds ``*a*a*a...`` patterns, which no normalisation removes."""
    import importlib.util
    import time

    # google-re2 is a dependency; without it this match would backtrack for hours
    assert importlib.util.find_spec("re2") is not None, "google-re2 is not installed (pip install -e .)"
    spec = compile_patterns(["*a" * 12 + "*b"])
    start = time.monotonic()
    assert not spec.match_file("a" * 40 + ".py")
    assert time.monotonic() - start < 1.0


def test_an_absurdly_long_pattern_is_a_config_error_naming_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    long = "a" * (MAX_PATTERN_CHARS + 1)
    assert pattern_problem(long) is not None
    (tmp_path / "pt2lint.toml").write_text(f'exclude = ["{long}"]\n')
    with pytest.raises(ConfigError) as info:
        load_project(["."])
    message = str(info.value)
    assert "'exclude'" in message and "longer than the limit" in message and len(message) < 300
    (tmp_path / "pt2lint.toml").write_text(f'[per-file-ignores]\n"{long}" = ["PTC1"]\n')
    with pytest.raises(ConfigError, match="'per-file-ignores'.*longer than the limit") as info:
        load_project(["."])
    assert len(str(info.value)) < 300
    os.remove(tmp_path / "pt2lint.toml")
    with pytest.raises(ConfigError, match="^--extend-exclude: .*longer than the limit"):
        load_project(["."], overrides=Overrides(extend_exclude=(long,)))


def test_an_overlong_gitignore_line_is_skipped_and_the_others_apply(tmp_path):
    from pt2lint.discovery import DiscoverySettings, discover

    (tmp_path / "keep.py").write_text("")
    (tmp_path / "drop.py").write_text("")
    (tmp_path / ".gitignore").write_text("a" * (MAX_PATTERN_CHARS + 1) + "\ndrop.py\n")
    found = discover([str(tmp_path)], DiscoverySettings(project_root=str(tmp_path)))
    assert [os.path.basename(f.path) for f in found.files] == ["keep.py"]


def test_a_file_name_that_is_not_utf8_is_matched_like_any_other():
    """RE2 takes UTF-8 only; a surrogate-escaped byte is one character to ``?`` and ``*``."""
    spec = compile_patterns(["b?d.py", "!keep*", "*.txt"])
    assert spec.match_file("b\udcffd.py") and not spec.match_file("b\udcff\udcfed.py")
    assert spec.check_file("keep\udcff.py").include is False
    assert spec.check_file("x\udcff").include is None and spec.match_file("x\udcff.txt")


def test_a_pattern_set_too_big_for_re2_still_matches():
    lines = ["?" * 3000 + str(i) for i in range(10)] + ["!" + "?" * 3000 + "7"]  # over RE2's memory budget
    spec = compile_patterns(lines)
    assert spec.match_file("d/" + "a" * 3000 + "3") and not spec.match_file("b.py")
    assert spec.check_file("a" * 3000 + "7").include is False
    with pytest.raises(Exception):
        compile_patterns(lines + ["[z-a]"]).match_file("probe")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("pattern", ["a/**/", "**/a/**/", "/a/**/", "a/b/**/", "*/**/", "**/", "!a/**/", "a/**", "a/**/b/"])
def test_directory_patterns_match_what_git_ignores(pattern, tmp_path):
    # pathspec reads ``a/**/`` as everything under ``a``; git keeps the files directly in ``a``
    files = ["a/m.py", "a/b/n.py", "a/b/c/d.py", "x/a/m.py", "x/a/b/n.py", "m.py"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    lines = ["*", pattern] if pattern.startswith("!") else [pattern]  # a negation needs something to undo
    (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    out = subprocess.run(
        ["git", "-C", str(tmp_path), "check-ignore", "--no-index", *files], capture_output=True, text=True
    ).stdout.split()
    ours = compile_patterns(lines)
    assert sorted(f for f in files if ours.match_file(f)) == sorted(out), pattern
