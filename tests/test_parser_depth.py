"""``PTC001`` for code nested near CPython's depth limit is what ``import`` in a fresh ``python`` says.

CPython 3.11's compiler allows about three nesting levels per frame of recursion left, so
its verdict on a file ~3000 levels deep depended on where pt2lint compiled it: deep in
pt2lint's own call stack a 2,940-deep attribute chain that ``import`` accepts was a
``PTC001``; under the language server's raised recursion limit one it rejects was not; and
a chain spread over short lines (no long line, no long bracketed span) that ``import``
rejects had no finding at all.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pt2lint.engine import lint_source
from pt2lint.nesting import run_on_big_stack
from pt2lint.settings import LintSettings

SETTINGS = LintSettings()

# the import verdict of each text is measured, not assumed; sizes straddle CPython 3.11's limit
CASES = {
    "attr_2940": "a = None\nx = a" + ".b" * 2940 + "\n",
    "attr_2965": "a = None\nx = a" + ".b" * 2965 + "\n",
    "attr_2990": "a = None\nx = a" + ".b" * 2990 + "\n",
    "attr_3100_multiline": "a = None\nx = (a" + "\n.b" * 3100 + ")\n",
    "unary_3000_multiline": "x = (" + "-\n" * 3000 + "1)\n",
    "unary_2900_multiline": "x = (" + "-\n" * 2900 + "1)\n",
    "not_2960": "x = " + "not " * 2960 + "1\n",
    "not_2995": "x = " + "not " * 2995 + "1\n",
}

_IMPORTER = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
out = {}
for name in sys.argv[2:]:
    try:
        __import__(name)
        out[name] = True
    except (RecursionError, MemoryError):
        out[name] = False
    except Exception:
        out[name] = True  # compiled (it ran, and failed at run time)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def import_verdicts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("deep")
    for name, text in CASES.items():
        (folder / f"{name}.py").write_text(text)
    run = subprocess.run(
        [sys.executable, "-B", "-c", _IMPORTER, str(folder), *CASES], capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    verdicts = json.loads(run.stdout)
    if sys.version_info[:2] == (3, 11):  # the cases straddle the limit: both verdicts occur
        assert set(verdicts.values()) == {True, False}, verdicts
    return verdicts


def _ptc001(text: str) -> bool:
    codes = [d.code for d in lint_source(text, "m.py", SETTINGS).diagnostics]
    return "PTC001" in codes


@pytest.mark.parametrize("name", sorted(CASES))
def test_depth_verdict_agrees_with_import(name, import_verdicts):
    imports = import_verdicts[name]
    assert _ptc001(CASES[name]) == (not imports), (name, imports)


@pytest.mark.parametrize("name", sorted(CASES))
def test_depth_verdict_is_the_same_under_a_raised_recursion_limit(name, import_verdicts):
    # the language server lints on big-stack threads, under a recursion limit of 50,000
    assert run_on_big_stack(_ptc001, CASES[name]) == (not import_verdicts[name]), name
