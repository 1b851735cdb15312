#!/usr/bin/env python
"""Collect the Dynamo ground truth for the models in models.py.

Runs bench/realmodels/collect.py with this zoo (``--zoo models.py``); every
option of that script applies, and the default output is truth.json here.

    python bench/libmodels/collect.py                      # all models, 2 jobs
    python bench/libmodels/collect.py --list
    python bench/libmodels/collect.py --only sam,gp_svgp --merge
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "realmodels"))

import collect as realmodels_collect  # noqa: E402  (bench/realmodels/collect.py)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return realmodels_collect.main(["--zoo", str(HERE / "models.py"), *argv])


if __name__ == "__main__":
    sys.exit(main())
