"""Confirm mode end to end on torch (CPU): labelled fixtures, the crash corpus, modules without
factories, per-class config entries, --target export, and a GPU run when one is present.

Every run goes through the CLI in this process, so the children share one fork
server that has imported torch once; modules run two at a time with the eager
backend. Budget: this file runs well under 120 s on 2 cores.
"""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")


from pt2lint.cli import cli  # noqa: E402
from pt2lint.commands.confirm import WARNING  # noqa: E402
from clitools import cli_runner as _runner

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
LABELS = json.loads((FIXTURES / "labels.json").read_text())
CRASH = FIXTURES / "confirm" / "crash"
NOSPEC = FIXTURES / "confirm" / "nospec"
GRAPH_BREAK_CATEGORIES = {"data-dependent", "dynamic-shape", "side-effect"}

# One fixture per kind of fact: ternary, bool(), @disable helper, explicit break, while loop,
# two breaks on two lines, two break types on one line, tolist (and its recompiles), a
# decorator wrapper, logging, consecutive mask indexing, a break inside a loop, a helper,
# print in a loop over a ModuleList, time calls, input mutations, and two clean modules.
SUBSET = [
    "models/adaptive_scale_ternary.py",
    "models/aliased_imports_mixed.py",
    "models/disabled_postprocess_helper.py",
    "models/explicit_graph_break.py",
    "models/fixed_point_solver.py",
    "models/gradient_penalty_critic.py",
    "models/hashed_ngram_crc32.py",
    "models/label_smoothing_tolist.py",
    "models/logged_forward_decorator.py",
    "models/logging_norm_stats.py",
    "models/masked_token_loss.py",
    "models/moe_router_nonzero.py",
    "models/nested_helper_item.py",
    "models/stage_debug_print_loop.py",
    "models/timed_forward.py",
    "models/attention_mask_fill_inplace.py",
    "models/clean_torch_cond_gate.py",
    "models/clean_generator_helper.py",
]




def confirm(*args: str):
    """Run ``pt2lint confirm ARGS`` in this process; returns the click result."""
    return _runner().invoke(cli, ["confirm", "--no-cache", "--jobs", "2", *args], catch_exceptions=False)


def confirm_json(*args: str):
    result = confirm("--output-format", "json", *args)
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout), result


def _at(findings, path, line):
    return [f for f in findings if f["filename"] == str(path) and f["location"]["row"] == line]


@pytest.fixture(scope="module")
def labelled():
    paths = [str(FIXTURES / rel) for rel in SUBSET]
    findings, result = confirm_json(*paths, "--factory", "make_model", "--inputs", "example_inputs")
    return findings, result


@pytest.mark.parametrize("rel", [r for r in SUBSET if LABELS[r]["graph_breaks"]])
def test_every_labelled_break_is_reported_at_its_line(labelled, rel):
    findings, _ = labelled
    path = FIXTURES / rel
    for label in LABELS[rel]["graph_breaks"]:
        here = _at(findings, path, label["line"])
        measured = [f for f in here if f.get("confirm", {}).get("status") in ("confirmed", "dynamic-only")]
        assert measured, f"{rel}:{label['line']}: no confirmed break among {[(f['code'], f.get('confirm')) for f in here]}"
        ids = set()
        for f in measured:
            ids.update(f["gb_types"] if f["code"] == "PTC090" else f["confirm"]["evidence"].get("gb_types", []))
        assert label["gb_type"] in ids, (rel, label, ids)
        for f in here:
            if f["category"] in GRAPH_BREAK_CATEGORIES:
                assert f["confirm"]["status"] == "confirmed", (rel, f)


def test_labelled_input_mutations_are_confirmed(labelled):
    findings, _ = labelled
    for rel in SUBSET:
        for label in LABELS[rel]["input_mutations"]:
            here = _at(findings, FIXTURES / rel, label["line"])
            assert any(f["code"] == "PTC401" and f["confirm"]["status"] == "confirmed" for f in here), (rel, label, here)
            (ev,) = [f["confirm"]["evidence"] for f in here if f["code"] == "PTC401"]
            assert (ev["op"], ev["argument"]) == (label["op"], label["argument"])


def test_clean_fixtures_stay_clean_and_the_summary_adds_up(labelled):
    findings, result = labelled
    for rel in SUBSET:
        if rel.startswith("models/clean_"):
            assert [f for f in findings if f["filename"] == str(FIXTURES / rel)] == []
    # Every static finding got a status, and nothing failed except the measured recompile limit.
    assert all("confirm" in f for f in findings)
    failed = [(Path(f["filename"]).name, f["confirm"]["failure"]) for f in findings if f["code"] == "PTC091"]
    assert failed == [("label_smoothing_tolist.py", "recompile-limit")]
    # json output: the warning that confirm runs the code, no summary, no progress bar without a terminal
    assert result.stderr == WARNING + "\n"


def test_crash_corpus_is_reported_per_file_and_the_rest_finish():
    started = time.monotonic()
    findings, result = confirm_json(
        str(CRASH), "--factory", "make_model", "--inputs", "example_inputs",
        "--timeout", "20", "--memory-limit", "2048", "--jobs", "3",
    )
    elapsed = time.monotonic() - started
    assert result.exit_code == 1
    failed = {Path(f["filename"]).name: f for f in findings if f["code"] == "PTC091"}
    expected = {
        "abort_in_forward.py": ("runtime-crash", "SIGABRT", 15),
        "segfault_ctypes.py": ("runtime-crash", "SIGSEGV", 10),
        "hang_in_forward.py": ("timeout", "no result within 20s during stage 'eager'", 10),
        "hang_at_import.py": ("timeout", "while importing the file", 7),
        "raise_on_import.py": ("import-error", "RuntimeError: this module cannot be imported", 5),
        "import_missing_module.py": ("import-error", "ModuleNotFoundError", 5),
        "sys_exit_in_factory.py": ("runtime-crash", "sys.exit(3)", 14),
        "exhaust_memory.py": ("runtime-crash", "out of memory", 25),
    }
    assert set(failed) == set(expected)
    for name, (failure, text, line) in expected.items():
        f = failed[name]
        assert f["confirm"]["failure"] == failure, (name, f["message"])
        assert text in f["message"], (name, f["message"])
        assert f["location"]["row"] == line, (name, f["message"])
        assert f["confirm"]["next_step"], name
    healthy = [f for f in findings if f["filename"].endswith("healthy_item_break.py") and f["code"] == "PTC101"]
    assert [f["confirm"]["status"] for f in healthy] == ["confirmed"]
    assert elapsed < 3 * 22, f"the hangs were not cut at the timeout ({elapsed:.0f}s)"


def test_a_file_that_fails_to_import_is_imported_once(tmp_path):
    (tmp_path / "two.py").write_text(
        "import torch\nfrom torch import nn\n\nraise ImportError('broken on purpose')\n\n\n"
        "class A(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        "class B(nn.Module):\n    def forward(self, x):\n        return x\n"
    )
    findings, result = confirm_json("--isolated", str(tmp_path))
    assert [(f["code"], f["location"]["row"], f["confirm"]["failure"]) for f in findings] == [("PTC091", 4, "import-error")]
    assert findings[0]["message"] == f"import error in {tmp_path / 'two.py'}: importing the file failed: ImportError: broken on purpose"


def test_modules_without_factories():
    findings, result = confirm_json(str(NOSPEC), "--check-accuracy")
    by_file = {}
    for f in findings:
        by_file.setdefault(Path(f["filename"]).name, []).append(f)
    # Linear first layer: built with Normalizer(), x synthesised as [2, 16]; its .item() break is confirmed.
    assert [(f["code"], f["confirm"]["status"]) for f in by_file["linear_first_layer.py"]] == [("PTC101", "confirmed")]
    # Embedding first layer: int64 ids; compiles in one graph, nothing to report.
    assert "embedding_first_layer.py" not in by_file
    # Annotated[Tensor, (3, 5)]: the static pass misses the branch on a tensor, Dynamo does not.
    (missed,) = by_file["annotated_shape.py"]
    assert (missed["code"], missed["location"]["row"], missed["gb_types"]) == ("PTC090", 10, ["GB0170"])
    assert missed["confirm"]["status"] == "dynamic-only"
    # NeedsDim(dim) cannot be built without arguments: skipped with a note, not a failure
    assert "needs_args.py" not in by_file
    for name, cls in (("two_inputs.py", "PairScore"),):
        (f,) = by_file[name]
        assert f["code"] == "PTC091" and f["severity"] == "warning"
        assert f["message"].startswith("not confirmed: no example inputs in ") and f"{name}::{cls}: " in f["message"]
        assert f'"fixtures/confirm/nospec/{name}::{cls}" = {{ factory = ' in f["confirm"]["next_step"]
    (drift,) = by_file["compile_only_branch.py"]
    assert drift["confirm"]["failure"] == "accuracy-mismatch"
    assert "TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4" in drift["confirm"]["next_step"]


def test_per_class_config_entries_and_statuses(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.pt2lint.confirm]
            "pkg/net.py::Net" = { factory = "pkg.builders:build_net", inputs = "pkg.builders:net_inputs" }
            """
        )
    )
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text("def scale_by_peak(t):\n    return t / t.abs().max().item()\n")
    (pkg / "net.py").write_text(
        textwrap.dedent(
            """\
            import torch
            from torch import nn

            from .util import scale_by_peak


            class Net(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.fc = nn.Linear(dim, dim)

                def forward(self, x, mask):
                    h = self.fc(x)
                    if x.shape[0] > 64:
                        print("large batch")
                    return scale_by_peak(h) * mask
            """
        )
    )
    (pkg / "builders.py").write_text(
        "import torch\n\nfrom pkg.net import Net\n\n\ndef build_net():\n    return Net(8)\n\n\n"
        "def net_inputs():\n    return torch.randn(4, 8), torch.ones(4, 8)\n"
    )
    monkeypatch.chdir(tmp_path)
    result = _runner().invoke(cli, ["check", "--confirm", "--no-cache", "pkg"], catch_exceptions=False)
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "pkg/net.py:15:13: PTC301" in lines[0] and lines[0].endswith("[not-executed]")
    # the break in the helper module is found statically, at its own line, and confirmed there
    assert lines[1].startswith("pkg/util.py:2:30: PTC101 `.item()`")
    assert "[via pkg/net.py:16 Net.forward -> pkg/util.py:2 scale_by_peak]" in lines[1]
    assert lines[1].endswith("[confirmed]") and len(lines) == 2
    assert "Confirm: 1 module on cpu (backend eager, target compile)" in result.stderr
    assert "Findings: 1 confirmed, 0 not-reproduced, 1 not-executed" in result.stderr


def test_target_export_confirms_export_rules():
    findings, result = confirm_json(
        str(FIXTURES / "models" / "clean_numpy_roundtrip.py"),
        str(FIXTURES / "models" / "clean_runtime_assert.py"),
        "--target", "export", "--factory", "make_model", "--inputs", "example_inputs",
    )
    got = sorted((f["code"], f["location"]["row"], f["confirm"]["status"]) for f in findings)
    assert got == [("PTC601", 14, "confirmed"), ("PTC602", 13, "confirmed")]
    numpy = next(f for f in findings if f["code"] == "PTC601")
    assert numpy["confirm"]["evidence"]["export_error"].startswith("RuntimeError: .numpy() is not supported")


def test_child_entry_point_reports_one_module(capsys):
    from pt2lint.confirm import child

    code = child.main([str(CRASH / "healthy_item_break.py"), "--factory", "make_model", "--inputs", "example_inputs", "--device", "cpu"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["failure"] == "graph-break" and out["model_class"] == "Normalize"
    assert [(b["lineno"], b["gb_type"]) for b in out["graph_breaks"]] == [(13, "GB0124")]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_confirm_on_cuda():
    rel = ["models/attention_temperature_item.py", "models/attention_mask_fill_inplace.py", "models/clean_rmsnorm.py"]
    findings, result = confirm_json(
        *[str(FIXTURES / r) for r in rel], "--device", "cuda", "--factory", "make_model", "--inputs", "example_inputs",
    )
    item = _at(findings, FIXTURES / rel[0], LABELS[rel[0]]["graph_breaks"][0]["line"])
    assert [f["confirm"]["status"] for f in item] == ["confirmed"]
    mut = _at(findings, FIXTURES / rel[1], LABELS[rel[1]]["input_mutations"][0]["line"])
    assert [f["confirm"]["status"] for f in mut] == ["confirmed"]
    assert not [f for f in findings if f["code"] in ("PTC090", "PTC091")]
    # inductor on the GPU, outputs compared with eager
    findings, result = confirm_json(
        str(FIXTURES / "models" / "clean_rmsnorm.py"), "--device", "cuda", "--backend", "inductor", "--check-accuracy",
        "--factory", "make_model", "--inputs", "example_inputs",
    )
    assert findings == [], findings
