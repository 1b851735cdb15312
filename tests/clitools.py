"""Helpers shared by the CLI-level tests."""

from __future__ import annotations

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
