"""The README's command blocks and install instructions, as a user would run them.

``tools/readme_blocks.py`` runs every ``sh`` block of the README in a fresh install;
``.ci/run`` runs it in full after the test suite (minutes).  Here: how it reads blocks
and markers, that it fails what it should, one real block run against a copy of this
repository, and the README's install-from-git command (with the public URL replaced
by a ``git+file://`` URL of a snapshot of this checkout, the offline equivalent).
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("markdown_it")

REPO = pathlib.Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")

_spec = importlib.util.spec_from_file_location("pt2lint_readme_blocks", REPO / "tools" / "readme_blocks.py")
rb = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = rb  # dataclasses look their module up
_spec.loader.exec_module(rb)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _repo_with_readme(tmp_path: pathlib.Path, readme: str) -> pathlib.Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text(textwrap.dedent(readme))
    (repo / "data.txt").write_text("hello\n")
    return repo


def _run_tool(repo: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "tools" / "readme_blocks.py"), "--repo", str(repo), "--no-install", *args],
        capture_output=True, text=True, timeout=300,
    )


# --- reading the README ----------------------------------------------------------------

def test_every_sh_fence_of_the_readme_is_a_block():
    fences = [i + 1 for i, line in enumerate(README.splitlines()) if re.fullmatch(r"\s*```sh\s*", line)]
    blocks = rb.extract(README)
    assert [b.line for b in blocks] == fences
    assert all(b.commands for b in blocks)


def test_readme_skips_only_blocks_marked_needs_gpu_and_every_marker_is_known():
    blocks = rb.extract(README)  # an unknown marker raises UsageError here
    gpu = [b for b in blocks if b.needs_gpu]
    assert all("cuda" in " ".join(b.commands) for b in gpu), gpu
    assert len(gpu) < len(blocks)
    markers = re.findall(r"^\s*<!--\s*readme-blocks:.*-->\s*$", README, re.M)
    assert len(markers) == sum(1 for b in blocks if b.needs_gpu or b.exits != frozenset({0}))


def test_readme_commands_name_paths_that_exist():
    """Every relative path a README command names (``examples/``, ``fixtures/...``, ``tools/x.py``) exists here."""
    for block in rb.extract(README):
        for command in block.commands:
            code = re.sub(r"--diff-base[ =]\S+", "", command.split(" #")[0])  # a git ref, not a path
            for word in re.findall(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]*)", code):
                if word.startswith(("http", "fuzz-", "/")) or "://" in word or re.fullmatch(r"[\d/]+", word):  # 2/4: a shard
                    continue
                assert (REPO / word).exists(), f"README.md:{block.line}: {word} does not exist ({command})"


def test_markers():
    assert rb.parse_marker("<!-- readme-blocks: exit 0 1 -->\n", 3) == (frozenset({0, 1}), False)
    assert rb.parse_marker("<!-- readme-blocks: exit 1; needs-gpu -->", 3) == (frozenset({1}), True)
    assert rb.parse_marker("<!-- readme-blocks: needs-gpu -->", 3) == (frozenset({0}), True)
    assert rb.parse_marker("<!-- some other comment -->", 3) == (frozenset({0}), False)
    with pytest.raises(rb.UsageError, match=r"README.md:3: unknown readme-blocks marker 'skip'"):
        rb.parse_marker("<!-- readme-blocks: skip -->", 3)
    with pytest.raises(rb.UsageError, match="unknown"):
        rb.parse_marker("<!-- readme-blocks: exit one -->", 3)


def test_commands_join_continuations_and_drop_comment_lines():
    body = "# a comment\npt2lint check \\\n    examples/   # trailing\n\necho 'a # b'\n"
    assert rb.commands_of(body) == ("pt2lint check examples/   # trailing", "echo 'a # b'")


def test_blocks_in_lists_and_after_markers():
    text = textwrap.dedent(
        """\
        <!-- readme-blocks: exit 2 -->
        ```sh
        one
        ```

        - item

          <!-- readme-blocks: needs-gpu -->
          ```sh
          two
          ```

        ```bash
        not a block: only sh
        ```

        <!-- readme-blocks: exit 1 -->

        ```sh
        three: the marker is not just above, so it does not apply
        ```
        """
    )
    blocks = rb.extract(text)
    assert [(b.line, b.commands, sorted(b.exits), b.needs_gpu) for b in blocks] == [
        (2, ("one",), [2], False),
        (9, ("two",), [0], True),
        (19, ("three: the marker is not just above, so it does not apply",), [0], False),
    ]


# --- running blocks ----------------------------------------------------------------------

@needs_git
def test_runner_fails_wrong_exits_and_tracebacks_and_skips_gpu_blocks(tmp_path):
    repo = _repo_with_readme(
        tmp_path,
        """\
        ```sh
        grep -q hello data.txt
        ```

        <!-- readme-blocks: exit 0 1 -->
        ```sh
        test -f missing.txt
        python -c "1/0"
        ```

        ```sh
        exit 3
        ```

        <!-- readme-blocks: needs-gpu -->
        ```sh
        exit 4
        ```
        """,
    )
    proc = _run_tool(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(l.startswith("README.md:1: ok [exit 0") and l.endswith("$ grep -q hello data.txt") for l in lines), lines
    assert any(l.startswith("README.md:6: ok [exit 1") for l in lines), lines
    assert any("README.md:6: FAILED: printed a Python traceback" in l for l in lines), lines
    assert any("README.md:11: FAILED: exit 3 (expected 0)" in l for l in lines), lines
    assert "README.md:16: skipped (needs-gpu)" in lines
    assert lines[-1] == "readme: 2 passed, 2 failed, 1 skipped"


@needs_git
def test_runner_works_on_a_copy_and_leaves_the_checkout_alone(tmp_path):
    repo = _repo_with_readme(
        tmp_path,
        """\
        ```sh
        echo changed > data.txt && touch new-file && git status --porcelain | grep -q new-file
        ```
        """,
    )
    (repo / "ignored.txt").write_text("x")
    (repo / ".gitignore").write_text("ignored.txt\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    proc = _run_tool(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / "data.txt").read_text() == "hello\n" and not (repo / "new-file").exists()
    copy = tmp_path / "copy"
    rb.copy_repo(repo, copy)
    assert sorted(p.name for p in copy.iterdir() if p.name != ".git") == [".gitignore", "README.md", "data.txt"]
    heads = subprocess.run(["git", "rev-parse", "HEAD", "origin/main"], cwd=copy, capture_output=True, text=True, check=True)
    head, origin_main = heads.stdout.split()
    assert head == origin_main
    assert subprocess.run(["git", "status", "--porcelain"], cwd=copy, capture_output=True, text=True).stdout == ""


def test_usage_errors_exit_2(tmp_path):
    repo = _repo_with_readme(tmp_path, "<!-- readme-blocks: sometimes -->\n```sh\ntrue\n```\n")
    proc = _run_tool(repo, "--list")
    assert proc.returncode == 2 and proc.stderr.startswith("error: README.md:1: unknown readme-blocks marker 'sometimes'"), proc.stderr
    proc = _run_tool(REPO, "--only", "1")
    assert proc.returncode == 2 and "no sh block opens at line(s) 1" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


@needs_git
def test_the_readme_usage_block_runs_against_a_copy_of_this_repository():
    (usage,) = [b for b in rb.extract(README) if any(c.startswith("pt2lint rule PTC101") for c in b.commands)]
    proc = _run_tool(REPO, "--only", str(usage.line))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr
    assert f"readme: {len(usage.commands)} passed, 0 failed, 0 skipped" in proc.stdout
    assert f"README.md:{usage.line}: ok [exit 1" in proc.stdout  # the examples have findings


# --- installing from git -----------------------------------------------------------------

@needs_git
def test_the_readme_vcs_install_command_is_the_one_the_runner_installs(tmp_path):
    """The prose command ``pip install 'pt2lint[lsp] @ git+https://...'`` with only its URL made local.

    The full runner (``.ci/run``) executes it in a fresh venv; here: that the command is
    found, keeps the extra, points at a git checkout pip can clone, and that checkout
    builds a wheel (what ``pip install`` from the URL does first).
    """
    (command,) = re.findall(r"`(pip install 'pt2lint\[lsp\] @ git\+https://[^`']+')`", README)
    snapshot = rb.copy_repo(REPO, tmp_path / "src")
    local = command.replace(re.search(r"git\+(https://[^'@]+)", command)[1], f"file://localhost{snapshot}")
    assert local.startswith("pip install 'pt2lint[lsp] @ git+file://localhost/")
    assert local in rb.vcs_install_commands(README, snapshot)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", f"file://localhost{snapshot}", str(clone)], check=True)
    assert (clone / "pyproject.toml").exists() and (clone / "rules").is_dir() and (clone / "pt2lint" / "cli.py").exists()


# --- install hints the CLI prints ----------------------------------------------------------

def _pyproject():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_install_hints_name_packages_the_index_has_not_pt2lint_extras():
    """pt2lint is installed from a checkout or git, so ``pip install 'pt2lint[...]'`` cannot work as a hint."""
    from pt2lint.commands.confirm import TORCH_INSTALL_HINT
    from pt2lint.lsp import LSP_REQUIREMENTS

    extras = _pyproject()["project"]["optional-dependencies"]
    assert list(LSP_REQUIREMENTS) == extras["lsp"]
    assert extras["confirm"] == ["torch>=2.4"]
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in TORCH_INSTALL_HINT
    for path in (REPO / "pt2lint").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for hint in re.findall(r"pip install [^\"\n]*", text):
            assert not re.search(r"['\"(]?pt2lint\[", hint) and not re.match(r"pip install ['\"]?pt2lint\b", hint), (
                f"{path.relative_to(REPO)} names pt2lint on the index: {hint}"
            )


def test_readme_and_the_confirm_extra_say_how_to_choose_the_torch_build():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    comment = text[: text.index('confirm = ["torch')].rsplit("[project.optional-dependencies]", 1)[1]
    assert "https://download.pytorch.org/whl/cpu" in comment and "pytorch.org/get-started" in comment
    install = README[README.index("## Install"):README.index("## Usage")]
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in install
    assert "download.pytorch.org/whl/cuXYZ" in install and "pip install '.[confirm]'" in install


def test_readme_never_installs_pt2lint_from_the_index():
    """``pip install pt2lint`` / ``'pt2lint[x]'`` without a URL would look for pt2lint on PyPI, which does not have it."""
    for match in re.finditer(r"pip install ([^`\n]*)", README):
        args = re.split(r"&&|\|\||;|\|", match[1])[0]
        if re.search(r"(?<![\w.-])['\"]?pt2lint(\[[\w,]+\])?['\"]?(?=\s|$|`)", args) and "@ git+" not in args:
            pytest.fail(f"README installs pt2lint from the index: {match[0]}")
