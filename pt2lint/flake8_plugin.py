"""A flake8 plugin, so ``flake8 --select PTC`` reports the same findings as ``pt2lint check``.

Registered as the ``flake8.extension`` entry point ``PTC``.  Each file is
linted with the settings of its own project (the nearest ``[tool.pt2lint]``
or ``pt2lint.toml``, exactly as ``pt2lint check`` finds it); flake8's own
``--select``/``--ignore``/``--extend-ignore`` then filter the ``PTC`` codes
further, and flake8 applies its ``# noqa`` handling on top of pt2lint's.
Columns are converted to flake8's 0-based offsets.
"""

from __future__ import annotations

import ast
import functools
import os
from typing import Iterator, List, Optional, Sequence, Tuple

from pt2lint import __version__


@functools.lru_cache(maxsize=64)
def _project_for_dir(directory: str):
    from pt2lint.config import load_project

    return load_project([directory])


def _project(filename: str):
    """The resolved project of ``filename`` (cached per directory).

    Raises:
        pt2lint.config.ConfigError: the project's config is invalid.
    """
    if filename in ("-", "stdin") or not filename:
        directory = os.getcwd()
    else:
        directory = os.path.dirname(os.path.abspath(filename)) or os.getcwd()
    return _project_for_dir(directory)


class Pt2lintChecker:
    """flake8 checker: runs pt2lint on one file and yields ``(line, column, "PTCnnn message", type)``.

    Args (passed by flake8 by name):
        tree: the module's ``ast`` (unused: pt2lint parses with LibCST).
        filename: the path flake8 is checking (``stdin`` or ``-`` for standard input).
        lines: the file's physical lines, with line ends.
    """

    name = "pt2lint"
    version = __version__

    def __init__(self, tree: Optional[ast.AST] = None, filename: str = "-", lines: Optional[Sequence[str]] = None) -> None:
        self.filename = filename
        self.lines = list(lines) if lines is not None else None

    def _source(self) -> str:
        if self.lines is not None:
            return "".join(self.lines)
        from pt2lint.engine import read_source

        return read_source(self.filename)

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        """Yield flake8 results: 1-based line, 0-based column, ``"PTCnnn message"``, the checker type.

        Raises:
            pt2lint.config.ConfigError: the file's pt2lint config is invalid (flake8
                reports it as a plugin failure naming the file and key).
        """
        from pt2lint.discovery import project_relpath
        from pt2lint.engine import lint_source

        project = _project(self.filename)
        relpath: Optional[str] = None
        if self.filename not in ("-", "stdin"):
            relpath = project_relpath(self.filename, project.root)
        result = lint_source(self._source(), self.filename, project.settings, relpath=relpath)
        out: List[Tuple[int, int, str, type]] = []
        for d in result.diagnostics:
            out.append((d.start.line, max(d.start.column - 1, 0), f"{d.code} {d.message}", type(self)))
        yield from out


__all__ = ["Pt2lintChecker"]
