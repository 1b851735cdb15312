"""bench/realmodels/evaluate.py scores a finding where the collector attributes a break."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _evaluator():
    spec = importlib.util.spec_from_file_location("bench_realmodels_evaluate", ROOT / "bench" / "realmodels" / "evaluate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TRUTH = {
    "libraries": ["demucs"],
    "models": {
        "m": {
            "status": "ok",
            "executed": {"demucs/demucs.py": [[410, 440]]},  # the collector records library lines only
            "breaks": [{"file": "demucs/demucs.py", "line": 416, "reason": "Tensor.item()", "gb_type": "GB0124"}],
        }
    },
}


def _finding(filename, row, call_sites=()):
    return {
        "code": "PTC103",
        "category": "data-dependent",
        "filename": filename,
        "location": {"row": row, "column": 1},
        "call_sites": [{"symbol": "f", "filename": f, "location": {"row": r, "column": 1}} for f, r in call_sites],
    }


def test_followed_dependency_finding_is_scored_at_the_innermost_library_call_site():
    ev = _evaluator()
    truth = ev.Truth(TRUTH)
    sp = "/venv/lib/python3.11/site-packages/"
    inside = _finding(sp + "julius/resample.py", 149, [(sp + "demucs/demucs.py", 416), (sp + "julius/resample.py", 166)])
    assert ev.attributed_site(truth, inside) == ("demucs/demucs.py", 416)
    res = ev.evaluate(truth, [inside], ("demucs",))
    assert res["rows"]["overall"]["tp"] == 1 and res["rows"]["overall"]["found"] == 1


def test_library_finding_keeps_its_own_line_and_an_unattributable_one_is_not_moved():
    ev = _evaluator()
    truth = ev.Truth(TRUTH)
    sp = "/venv/lib/python3.11/site-packages/"
    own = _finding(sp + "demucs/demucs.py", 420, [(sp + "demucs/demucs.py", 416)])
    assert ev.attributed_site(truth, own) == ("demucs/demucs.py", 420)
    stray = _finding(sp + "julius/resample.py", 149, [(sp + "julius/resample.py", 166)])
    assert ev.attributed_site(truth, stray) == ("julius/resample.py", 149)
    res = ev.evaluate(truth, [own, stray], ("demucs",))
    assert res["rows"]["overall"]["found"] == 0
    assert [(fp["file"], fp["line"]) for fp in res["false_positives"]] == [("demucs/demucs.py", 420)]
