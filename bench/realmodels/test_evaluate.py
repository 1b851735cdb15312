"""Self-contained check of evaluate.py on a hand-made truth and report.

Run: python -m unittest bench/realmodels/test_evaluate.py   (stdlib only)
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import evaluate  # noqa: E402

SP = "/venv/lib/python3.11/site-packages"

TRUTH = {
    "torch": "2.13.0",
    "versions": {},
    "models": {
        "m1": {
            "status": "ok",
            "executed": {
                "transformers/models/foo/modeling_foo.py": [[10, 20], 30, [40, 42]],
                "transformers/utils/generic.py": [5],
                "diffusers/models/transformers/transformer_x.py": [[1, 9]],
            },
            # Dynamo never traced foo:15 (e.g. a frame it gave up on)
            "traced": {
                "transformers/models/foo/modeling_foo.py": [[10, 14], [16, 20], 30, [40, 42]],
                "timm/models/bar.py": [[1, 50]],
            },
            "breaks": [
                {"file": "transformers/models/foo/modeling_foo.py", "line": 12,
                 "reason": "Data-dependent branching", "gb_type": "GB0170"},
                {"file": "transformers/models/foo/modeling_foo.py", "line": 41,
                 "reason": "Data dependent operator", "gb_type": "GB0033"},
                {"file": "transformers/utils/generic.py", "line": 5,
                 "reason": "Missing tp_iternext", "gb_type": "GB4347"},
                {"file": "torch/nn/modules/module.py", "line": 1, "reason": "x",
                 "gb_type": "GB0001", "outside_library": True},
            ],
        },
        "m2": {
            "status": "ok",
            "executed": {"timm/models/bar.py": [[1, 50]]},
            "breaks": [
                {"file": "timm/models/bar.py", "line": 7, "reason": "print", "gb_type": "GB0059"},
            ],
        },
        "broken": {
            "status": "error: build: ValueError: nope",
            "executed": {"timm/models/baz.py": [1, 2, 3]},
            "breaks": [{"file": "timm/models/baz.py", "line": 2, "reason": "r", "gb_type": "GB1"}],
        },
    },
}


def finding(rel, row, category="data-dependent", code="PTC101", gb=()):
    return {
        "code": code,
        "category": category,
        "filename": f"{SP}/{rel}",
        "location": {"row": row, "column": 1},
        "message": f"msg {code}",
        "symbol": "f",
        "call_chain": [],
        "gb_types": list(gb),
    }


FOO = "transformers/models/foo/modeling_foo.py"
REPORT = [
    finding(FOO, 12, gb=["GB0170"]),  # TP exact, GB id agrees
    finding(FOO, 12, code="PTC102"),  # same site, counted once
    finding(FOO, 15),  # FP (executed, no break)
    finding(FOO, 42),  # FP exact, TP at +-1 (break at 41)
    finding(FOO, 100),  # not executed: ignored for precision
    finding(FOO, 30, category="sync", code="PTC401"),  # not a graph-break category
    finding("timm/models/bar.py", 7, category="side-effect", code="PTC301", gb=["GB0001"]),  # TP
    finding("timm/models/bar.py", 9),  # FP
    finding("timm/models/baz.py", 2),  # model failed: line not executed by an ok model
    finding("diffusers/models/transformers/transformer_x.py", 3),  # FP
]


def run_cli(truth: dict, report: list, *args: str):
    """evaluate.main on temporary truth/report files: (exit code, stdout, --json result)."""
    with tempfile.TemporaryDirectory() as d:
        tp = os.path.join(d, "truth.json")
        rp = os.path.join(d, "report.json")
        jp = os.path.join(d, "out.json")
        with open(tp, "w") as fh:
            json.dump(truth, fh)
        with open(rp, "w") as fh:
            json.dump(report, fh)
        buf = io.StringIO()
        with redirect_stdout(buf):
            rc = evaluate.main([rp, "--truth", tp, "--json", jp, *args])
        with open(jp) as fh:
            return rc, buf.getvalue(), json.load(fh)


class EvaluateTest(unittest.TestCase):
    def setUp(self):
        self.truth = evaluate.Truth(json.loads(json.dumps(TRUTH)))
        self.res = evaluate.evaluate(self.truth, REPORT, evaluate.DEFAULT_SCOPE)

    def test_expand(self):
        self.assertEqual(evaluate.expand([1, [3, 5], 9]), {1, 3, 4, 5, 9})

    def test_relpath(self):
        t = self.truth
        self.assertEqual(t.rel(f"{SP}/{FOO}"), FOO)
        # no site-packages in the path: suffix match against known files
        self.assertEqual(t.rel(f"/src/x/{FOO}"), FOO)
        self.assertEqual(
            t.rel("/opt/d/diffusers/models/transformers/transformer_x.py"),
            "diffusers/models/transformers/transformer_x.py",
        )
        self.assertEqual(t.rel("/elsewhere/thing.py"), None)

    def test_overall(self):
        o = self.res["rows"]["overall"]
        # executed graph-break sites: foo:12, foo:15, foo:42, bar:7, bar:9, x:3
        self.assertEqual(o["findings_executed"], 6)
        self.assertEqual(o["tp"], 2)  # foo:12, bar:7
        self.assertEqual(o["tp_pm1"], 3)  # + foo:42
        self.assertEqual(o["tp_gb_type"], 1)  # foo:12 predicts GB0170; bar:7 predicts wrong id
        # in-scope breaks: foo:12, foo:41, bar:7 (generic.py out of scope, torch ignored)
        self.assertEqual(o["break_sites"], 3)
        self.assertEqual(o["found"], 2)
        self.assertEqual(o["found_pm1"], 3)
        self.assertAlmostEqual(o["recall"], 0.6667)

    def test_traced(self):
        o = self.res["rows"]["overall"]
        # traced graph-break sites: foo:12, foo:42, bar:7, bar:9 (foo:15 is only executed)
        self.assertEqual(o["findings_traced"], 4)
        self.assertEqual(o["tp_traced"], 2)
        fp = {(f["file"], f["line"]): f for f in self.res["false_positives"]}
        self.assertIs(fp[(FOO, 15)]["traced"], False)
        self.assertIs(fp[(FOO, 42)]["traced"], True)

    def test_per_library(self):
        rows = self.res["rows"]
        self.assertEqual(rows["timm"]["break_sites"], 1)
        self.assertEqual(rows["timm"]["recall"], 1.0)
        self.assertEqual(rows["diffusers"]["precision"], 0.0)
        self.assertIsNone(rows["diffusers"]["recall"])

    def test_lists(self):
        fps = {(f["file"], f["line"]) for f in self.res["false_positives"]}
        self.assertEqual(
            fps,
            {(FOO, 15), (FOO, 42), ("timm/models/bar.py", 9),
             ("diffusers/models/transformers/transformer_x.py", 3)},
        )
        self.assertEqual([(m["file"], m["line"]) for m in self.res["missed"]], [(FOO, 41)])
        self.assertEqual(
            [(m["file"], m["line"]) for m in self.res["out_of_scope_breaks"]],
            [("transformers/utils/generic.py", 5)],
        )
        self.assertIn("broken", self.res["models_failed"])

    def test_scope_whole_packages(self):
        res = evaluate.evaluate(self.truth, REPORT, ("transformers", "timm", "diffusers"))
        self.assertEqual(res["rows"]["overall"]["break_sites"], 4)

    def test_cli(self):
        rc, text, res = run_cli(TRUTH, REPORT)
        self.assertEqual(rc, 0)
        self.assertIn("overall", text)
        self.assertIn(f"{FOO}:15 PTC101 msg PTC101", text)
        self.assertIn(f"{FOO}:41 Data dependent operator (m1)", text)
        self.assertEqual(res["rows"]["overall"]["tp"], 2)

    def test_show_code(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, os.path.dirname(FOO)))
            with open(os.path.join(root, FOO), "w") as fh:
                fh.write("".join(f"line_{i} = {i}\n" for i in range(1, 50)))
            _, text, _ = run_cli(TRUTH, REPORT, "--show-code", root)
        self.assertIn("      | line_15 = 15", text)  # under the false positive
        self.assertIn("      | line_41 = 41", text)  # under the miss


class LibrariesTest(unittest.TestCase):
    """A truth from another zoo names its libraries: rows and default scope follow."""

    TRUTH = {
        "libraries": ["torchdiffeq", "whisper"],
        "models": {
            "ode": {
                "status": "ok",
                "executed": {"torchdiffeq/_impl/misc.py": [[1, 20]], "whisper/model.py": [[1, 5]]},
                "breaks": [{"file": "torchdiffeq/_impl/misc.py", "line": 7, "reason": "r", "gb_type": "GB0170"}],
            }
        },
    }

    def test_rows_and_scope(self):
        report = [finding("torchdiffeq/_impl/misc.py", 7), finding("whisper/model.py", 2)]
        _, _, res = run_cli(self.TRUTH, report)
        self.assertEqual(res["scope"], ["torchdiffeq", "whisper"])
        self.assertEqual(list(res["rows"]), ["torchdiffeq", "whisper", "overall"])
        self.assertEqual(res["rows"]["torchdiffeq"]["recall"], 1.0)
        self.assertEqual(res["rows"]["whisper"]["precision"], 0.0)
        self.assertEqual(res["rows"]["overall"]["tp"], 1)


if __name__ == "__main__":
    unittest.main()
