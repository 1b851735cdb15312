"""Lint each case of cases.py (or of the module named as the argument) (compiled with @torch.compile) and print the codes found, as JSON."""
import sys, json
import pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests")); sys.path.insert(0, ".")
from linttools import found
CASES = __import__(sys.argv[1] if len(sys.argv) > 1 else "cases").CASES
print(json.dumps({n: [c for _, c in found(s.replace("def f", "@torch.compile\ndef f"))] for n, s in CASES.items()}))
