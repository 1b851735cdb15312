#!/usr/bin/env python3
"""Run every ``sh`` command block of README.md, as written, in a fresh install.

The README is the first thing a user runs.  This tool checks that each of its command
blocks works against this repository:

1. copy the repository (the files git tracks plus the untracked ones it does not
   ignore, as a fresh clone would have them) into a temporary folder, and make it a git
   checkout of its own;
2. create a fresh virtual environment there, ``pip install torch==2.13.0`` (first, so
   that nothing later pulls another torch build), run the README's install-from-git
   command with its URL pointed at the copy (``git+file://localhost/...``, the offline
   equivalent), check ``pt2lint --version``, then ``pip install .``;
3. run each block's commands, in README order, from the copy's root, with the virtual
   environment first on ``PATH``.

A block is a fenced code block whose info string is ``sh``.  Each line is one command
(a line ending in ``\\`` continues on the next; blank lines and lines that are only a
``#`` comment are skipped), run with ``bash -o pipefail -c``.  A command must exit 0
and print no Python traceback, unless a marker says otherwise.  A marker is an HTML
comment on the line just above the block's opening fence (invisible on GitHub)::

    <!-- readme-blocks: exit 0 1 -->     every command may exit 0 or 1 (1: findings)
    <!-- readme-blocks: needs-gpu -->    needs a CUDA GPU: skipped unless --gpu is given

Both can be given in one comment, separated by ``;``.  Nothing else skips a block.

Usage::

    python tools/readme_blocks.py                 # all blocks, fresh venv (minutes)
    python tools/readme_blocks.py --list          # the blocks, their lines and markers
    python tools/readme_blocks.py --only 28,129   # the blocks opening at these lines
    python tools/readme_blocks.py --no-install    # the current environment, the copy on PYTHONPATH

Exit status: 0 when every block that ran passed, 1 when one failed, 2 on a usage error
(an unreadable README, an unknown marker, a --only line that opens no block).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^\s*<!--\s*readme-blocks:\s*(?P<body>.*?)\s*-->\s*$", re.DOTALL)
TORCH = "torch==2.13.0"
TRACEBACK = "Traceback (most recent call last)"
GIT = ["git", "-c", "user.name=pt2lint", "-c", "user.email=readme@pt2lint.invalid", "-c", "commit.gpgsign=false"]


class UsageError(Exception):
    """A README or a command line this tool cannot work with (exit 2)."""


@dataclasses.dataclass(frozen=True)
class Block:
    """One ``sh`` block of the README.

    ``line`` is the 1-based line of the opening fence; ``commands`` the logical command
    lines (continuations joined); ``exits`` the exit statuses every command may end with;
    ``needs_gpu`` whether the ``needs-gpu`` marker was given.
    """

    line: int
    commands: tuple[str, ...]
    exits: frozenset[int] = frozenset({0})
    needs_gpu: bool = False


def parse_marker(text: str, line: int) -> tuple[frozenset[int], bool]:
    """The ``(exits, needs_gpu)`` that the marker comment ``text`` (at ``line``) sets.

    Raises :class:`UsageError` for a directive other than ``exit N...`` / ``needs-gpu``.
    """
    match = MARKER.match(text)
    if match is None:
        return frozenset({0}), False
    exits: frozenset[int] = frozenset({0})
    needs_gpu = False
    for directive in filter(None, (d.strip() for d in match["body"].split(";"))):
        words = directive.split()
        if words == ["needs-gpu"]:
            needs_gpu = True
        elif words[0] == "exit" and len(words) > 1 and all(w.isdigit() for w in words[1:]):
            exits = frozenset(int(w) for w in words[1:])
        else:
            raise UsageError(f"README.md:{line}: unknown readme-blocks marker {directive!r} (expected 'exit N...' or 'needs-gpu')")
    return exits, needs_gpu


def commands_of(body: str) -> tuple[str, ...]:
    """The command lines of a block's text: continuations joined, comment-only lines dropped."""
    commands: list[str] = []
    pending = ""
    for raw in body.splitlines():
        if pending:
            raw = pending + " " + raw.strip()
            pending = ""
        if raw.rstrip().endswith("\\"):
            pending = raw.rstrip()[:-1].rstrip()
            continue
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            commands.append(stripped)
    if pending.strip():
        commands.append(pending.strip())
    return tuple(commands)


def extract(text: str) -> list[Block]:
    """Every ``sh`` block of the markdown ``text``, with its marker, in document order.

    Fences are found with markdown-it-py's CommonMark parser, so blocks indented inside
    list items count and code inside other blocks does not.
    """
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    blocks = []
    for i, token in enumerate(tokens):
        if token.type != "fence" or token.info.strip().split()[:1] != ["sh"]:
            continue
        line = token.map[0] + 1
        exits, needs_gpu = frozenset({0}), False
        before = tokens[i - 1] if i else None
        if before is not None and before.type == "html_block" and before.map[1] == token.map[0]:
            exits, needs_gpu = parse_marker(before.content, before.map[0] + 1)
        blocks.append(Block(line, commands_of(token.content), exits, needs_gpu))
    return blocks


def copy_repo(src: pathlib.Path, dest: pathlib.Path) -> pathlib.Path:
    """Copy the checkout ``src`` to ``dest`` as a fresh clone would hold it, and commit it there.

    The files are those ``git ls-files --cached --others --exclude-standard`` lists
    (tracked ones deleted from the work tree are left out); without git, the whole
    folder but ``.git`` and caches.  The copy is a git repository on branch ``main``
    with one commit, and an ``origin`` remote (``src``) whose ``origin/main`` is that
    commit, as after ``git clone``.
    """
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=src, check=True, capture_output=True,
        ).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        listed = None
    if listed is None:
        shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(".git", "__pycache__", ".pt2lint_cache"))
    else:
        dest.mkdir(parents=True)
        for name in filter(None, listed):
            source = src / name
            if not source.exists() and not source.is_symlink():
                continue
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=dest, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=dest, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "README check"], cwd=dest, check=True)
    # as in a clone: an `origin` remote whose main is this commit (`--diff-base origin/main`)
    subprocess.run([*GIT, "remote", "add", "origin", str(src)], cwd=dest, check=True)
    subprocess.run([*GIT, "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=dest, check=True)
    return dest


VCS_INSTALL = re.compile(r"`(pip install '[^`']*@ git\+(https://[^`'@]+)')`")


def vcs_install_commands(readme: str, repo: pathlib.Path) -> list[str]:
    """The README's install-from-git commands, pointed at the git checkout ``repo``.

    The README says ``pip install 'pt2lint @ git+https://...'`` (and the same with an
    extra) in prose: the public URL cannot be reached offline, so they are no ``sh``
    blocks.  In each, the URL is replaced by ``file://localhost<repo>`` (a URL with a
    host, as the https one has; old pips reject ``git+file:///``), nothing else.
    """
    return [m[1].replace(m[2], f"file://localhost{repo}") for m in VCS_INSTALL.finditer(readme)]


def make_venv(where: pathlib.Path, repo: pathlib.Path, python: str, readme: str = "") -> dict[str, str]:
    """A fresh virtual environment at ``where`` holding torch 2.13.0 and ``pip install .`` of ``repo``.

    Between the two, the README's install-from-git command (see
    :func:`vcs_install_commands`) install ``repo`` from a VCS URL, and after each
    ``pt2lint --version`` must run; ``pip install .`` then installs the checkout over it.  Returns the
    environment variables that activate the venv.  Raises
    ``subprocess.CalledProcessError`` when a step fails.
    """
    subprocess.run([python, "-m", "venv", str(where)], check=True)
    env = activated(where)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, TORCH], check=True, env=env, cwd=repo)
    for vcs in vcs_install_commands(readme, repo):
        print(f"$ {vcs}", flush=True)
        subprocess.run(["bash", "-c", vcs], check=True, env=env, cwd=where)
        subprocess.run([str(where / "bin" / "pt2lint"), "--version"], check=True, env=env, cwd=where)
    print("$ pip install .", flush=True)
    subprocess.run([*pip, "."], check=True, env=env, cwd=repo)
    return env


def activated(venv: pathlib.Path | None) -> dict[str, str]:
    """``os.environ`` with the virtual environment ``venv`` (if any) first on PATH, and no PYTHONPATH."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PT2LINT_CACHE_DIR", None)
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    env["PIP_NO_INPUT"] = "1"
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env.pop("PYTHONHOME", None)
    return env


@dataclasses.dataclass
class Result:
    """What one command did: its exit status, combined output and seconds taken."""

    command: str
    code: int
    output: str
    seconds: float


def run_command(command: str, cwd: pathlib.Path, env: dict[str, str], timeout: float) -> Result:
    """Run one README command line with bash (``-o pipefail``); a timeout is exit 124."""
    start = time.monotonic()
    try:
        proc = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
        )
        code, output = proc.returncode, proc.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as exc:
        code, output = 124, (exc.stdout or b"").decode(errors="replace") + f"\n[timed out after {timeout:g}s]"
    return Result(command, code, output, time.monotonic() - start)


def failure(block: Block, result: Result) -> str | None:
    """Why ``result`` fails ``block``'s expectations, or None when it passes."""
    if result.code not in block.exits:
        allowed = " or ".join(str(c) for c in sorted(block.exits))
        return f"exit {result.code} (expected {allowed})"
    if TRACEBACK in result.output:
        return "printed a Python traceback"
    return None


def run_blocks(blocks: list[Block], cwd: pathlib.Path, env: dict[str, str], *, gpu: bool, timeout: float, out=sys.stdout) -> int:
    """Run ``blocks`` in order from ``cwd``; print one line per command; return the number of failures."""
    failures = 0
    for block in blocks:
        if block.needs_gpu and not gpu:
            print(f"README.md:{block.line}: skipped (needs-gpu)", file=out, flush=True)
            continue
        for command in block.commands:
            result = run_command(command, cwd, env, timeout)
            why = failure(block, result)
            status = "ok" if why is None else f"FAILED: {why}"
            print(f"README.md:{block.line}: {status} [exit {result.code}, {result.seconds:.1f}s] $ {command}", file=out, flush=True)
            if why is not None:
                failures += 1
                tail = result.output[-4000:]
                print("    " + tail.replace("\n", "\n    ").rstrip(), file=out, flush=True)
    return failures


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    parser = argparse.ArgumentParser(description="Run every sh block of README.md in a fresh install of this repository.")
    parser.add_argument("--readme", type=pathlib.Path, default=None, help="the README to read (default: README.md of the repository)")
    parser.add_argument("--repo", type=pathlib.Path, default=REPO, help="the checkout to copy (default: this one)")
    parser.add_argument("--list", action="store_true", help="print the blocks and exit")
    parser.add_argument("--only", default="", help="comma-separated opening-fence lines of the blocks to run")
    parser.add_argument("--gpu", action="store_true", help="also run the blocks marked needs-gpu")
    parser.add_argument("--no-install", action="store_true", help="run in the current environment (the copy first on PYTHONPATH), not a fresh venv")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the fresh venv (default: this one)")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per command (default 1200)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy and venv, and print where")
    args = parser.parse_args(argv)

    repo = args.repo.resolve()
    readme = args.readme or repo / "README.md"
    try:
        try:
            text = readme.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {readme}: {exc}") from None
        blocks = extract(text)
        if args.only:
            try:
                wanted = {int(x) for x in args.only.split(",") if x.strip()}
            except ValueError:
                raise UsageError(f"--only takes line numbers, not {args.only!r}") from None
            missing = wanted - {b.line for b in blocks}
            if missing:
                raise UsageError(f"no sh block opens at line(s) {', '.join(map(str, sorted(missing)))} of {readme.name}")
            blocks = [b for b in blocks if b.line in wanted]
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    if args.list:
        for block in blocks:
            marks = [f"exit {' '.join(map(str, sorted(block.exits)))}"] + (["needs-gpu"] if block.needs_gpu else [])
            print(f"README.md:{block.line}: {len(block.commands)} command(s) ({'; '.join(marks)})")
            for command in block.commands:
                print(f"    $ {command}")
        return 0

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="pt2lint-readme."))
    try:
        try:
            work = copy_repo(repo, tmp / "pt2lint")
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"error: cannot copy {repo} into a git repository (is git installed?): {exc}", file=sys.stderr)
            return 2
        if args.no_install:
            env = activated(None)
            env["PYTHONPATH"] = str(work)  # the copy's pt2lint, not whatever the environment installed
        else:
            print(f"installing {TORCH} and . into a fresh venv", flush=True)
            try:
                env = make_venv(tmp / "venv", work, args.python, text)
            except subprocess.CalledProcessError as exc:
                print(f"error: installing into the fresh venv failed: {exc}", file=sys.stderr)
                return 1
        start = time.monotonic()
        failures = run_blocks(blocks, work, env, gpu=args.gpu, timeout=args.timeout)
        ran = sum(len(b.commands) for b in blocks if args.gpu or not b.needs_gpu)
        skipped = sum(len(b.commands) for b in blocks) - ran
        print(f"README command blocks, {time.monotonic() - start:.0f}s:")
        print(f"readme: {ran - failures} passed, {failures} failed, {skipped} skipped")
        return 1 if failures else 0
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
