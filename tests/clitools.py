"""Helpers shared by the CLI-level tests."""

from __future__ import annotations

import os

from click.testing import CliRunner


def cli_runner() -> CliRunner:
    """A click test runner that keeps stderr apart from stdout on every click version.

    click < 8.2 mixes stderr into ``output`` unless ``mix_stderr=False``; 8.2 removed the
    argument and always keeps them apart.
    """
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


class Run:
    """The outcome of one ``pt2lint`` run: exit code, stdout and stderr (text)."""

    def __init__(self, code, stdout, stderr):
        self.code, self.stdout, self.stderr = code, stdout, stderr

    @property
    def errors(self):
        """The ``error: ...`` lines of stderr."""
        return [line for line in self.stderr.splitlines() if line.startswith("error: ")]

    def __repr__(self):
        return f"exit {self.code}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


def repo_pythonpath(repo: str) -> str:
    """``PYTHONPATH`` for a child process: ``repo`` first, then the current entries.

    Empty entries are dropped: an empty ``PYTHONPATH`` component means the working
    directory, which would let the linted project's own modules shadow our imports.
    """
    parts = [repo] + os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return os.pathsep.join(p for p in parts if p)


def json_findings(root, *paths) -> list:
    """The findings of ``pt2lint check --no-cache --output-format json <paths>`` run with ``root`` as
    the working directory (the JSON list, parsed)."""
    import json

    from pt2lint.cli import cli

    old = os.getcwd()
    os.chdir(root)
    try:
        out = cli_runner().invoke(cli, ["check", "--no-cache", "--output-format", "json", *paths], catch_exceptions=False)
    finally:
        os.chdir(old)
    return json.loads(out.stdout)
