"""``python -m pt2lint`` entry point.

``python -m`` puts the working directory first on ``sys.path``.  pt2lint lints the
project in the working directory and must never import it: a repository with its own
``click.py`` or ``libcst/`` would otherwise replace our dependencies (and run its code).
So the entry is removed before anything else is imported.  pt2lint itself is already
imported by then (this module belongs to it), so its own submodules still load from
wherever it was found; a directory the user put on ``PYTHONPATH`` stays.
"""

import os
import sys


def _drop_working_directory() -> None:
    """Remove the ``sys.path[0]`` entry that ``python -m`` added for the working directory."""
    if not sys.path:
        return
    first = sys.path[0]
    try:
        is_cwd = first == "" or os.path.realpath(first) == os.path.realpath(os.getcwd())
    except OSError:  # the working directory was removed
        is_cwd = first == ""
    if is_cwd:
        del sys.path[0]


_drop_working_directory()

from pt2lint.cli import main  # noqa: E402

if __name__ == "__main__":  # pragma: no cover - exercised through subprocess tests
    main()
