"""The mixed-precision and distributed rules (PTC8xx) on the training script from issue 15.

fixtures/amp_distributed/train.py must get exactly the findings the measurements support
(rules/PTC80*.toml evidence; bench/distributed-2.13.md for two gloo ranks), and its near
misses (fixtures/amp_distributed/clean_train.py) none. No torch needed.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from clitools import cli_runner
from pt2lint.cli import cli
from pt2lint.confirm import outcome as oc
from pt2lint.engine import lint_path, lint_source
from pt2lint.settings import LintSettings, resolve_selection
from pt2lint.specs import load_specs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "amp_distributed"
PTC8 = LintSettings(enabled=resolve_selection(select=["PTC8"]))


def _found(path: Path):
    result = lint_path(str(path), PTC8)
    assert result.error is None, result.error
    return sorted((d.start.line, d.code) for d in result.diagnostics)


def test_issue_training_script_gets_the_measured_findings():
    assert _found(FIXTURES / "train.py") == [
        (20, "PTC801"),  # torch.cuda.amp.autocast(): FutureWarning
        (25, "PTC806"),  # if dist.get_rank() == 0 in forward: a different graph per rank
        (27, "PTC805"),  # dist.barrier(): GB0007 (all_reduce on line 24 is traced: no finding)
        (36, "PTC801"),  # torch.cuda.amp.GradScaler(): FutureWarning
        (41, "PTC803"),  # scaler.scale(loss) in forward: skipped
        (42, "PTC803"),  # scaler.step(opt)
        (43, "PTC803"),  # scaler.update()
        (49, "PTC807"),  # FSDP(use_orig_params=False) in a file that calls torch.compile
    ]


def test_near_misses_are_silent():
    assert _found(FIXTURES / "clean_train.py") == []


def test_deprecated_api_in_a_script_without_a_compiled_region():
    # no forward, no torch.compile: the whole-file rule still runs (the prefilter lets it through)
    source = "import torch\nfrom torch.cuda import amp\n\nscaler = amp.GradScaler()\nwith torch.cpu.amp.autocast():\n    pass\n"
    result = lint_source(source, "train.py", PTC8)
    assert [(d.start.line, d.code) for d in result.diagnostics] == [(4, "PTC801"), (5, "PTC801")]
    assert "torch.amp.GradScaler('cuda', args...)" in result.diagnostics[0].message


def test_near_miss_names_are_not_deprecated():
    source = textwrap.dedent(
        """\
        import torch
        from mylib.cuda.amp import autocast


        def run(x):
            with autocast():
                return x
            with torch.amp.autocast("cuda"):
                return torch.is_autocast_enabled("cuda")
        """
    )
    assert lint_source(source, "run.py", PTC8).diagnostics == ()


def test_rank_branch_only_in_compiled_code_and_only_on_the_rank():
    source = textwrap.dedent(
        """\
        import torch
        import torch.distributed as dist
        from torch import nn


        class Net(nn.Module):
            def forward(self, x):
                if dist.get_world_size() > 1:
                    x = x * 2
                while dist.get_rank() > 99:
                    x = x + 1
                if dist.is_initialized() and dist.get_rank() > -1 and 0 <= dist.get_rank():
                    x = x - 1
                return x


        def log(x):
            if dist.get_rank() == 0:
                print(x)
        """
    )  # ranks are never negative: `get_rank() > -1` holds on every rank
    assert [(d.start.line, d.code) for d in lint_source(source, "net.py", PTC8).diagnostics] == [(10, "PTC806")]


def test_fsdp_needs_a_compile_call_and_no_opaque_kwargs():
    base = "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
    assert lint_source(base + "m = FSDP(net)\n", "a.py", PTC8).diagnostics == ()
    assert [d.code for d in lint_source(base + "m = torch.compile(FSDP(net))\n", "b.py", PTC8).diagnostics] == ["PTC807"]
    flag = "m = torch.compile(FSDP(net, use_orig_params=flag))\n"
    assert lint_source(base + flag, "c.py", PTC8).diagnostics == ()


def test_category_in_statistics_and_html(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text((FIXTURES / "train.py").read_text())
    runner = cli_runner()
    stats = runner.invoke(cli, ["check", "--select", "PTC8", "--statistics", "--output-format", "json", "train.py"])
    assert stats.exit_code == 1
    counts = {row["code"]: row["count"] for row in json.loads(stats.stdout)}
    assert counts == {"PTC801": 2, "PTC803": 3, "PTC805": 1, "PTC806": 1, "PTC807": 1}
    page = runner.invoke(cli, ["check", "--select", "PTC8", "--output-format", "html", "train.py"]).stdout
    assert '<tr data-category="amp-distributed"><td>amp-distributed</td><td class="num">8</td>' in page


def test_confirm_vocabulary_for_the_category():
    specs = load_specs()
    breaks = {c for c, s in specs.items() if s.category == "amp-distributed" and oc.finding_failure(s.category, s.gb_types)}
    # PTC807 predicts "FSDP with use_orig_params=False" (GB0053), which Dynamo raises for such a module
    assert breaks == {"PTC802", "PTC803", "PTC804", "PTC805", "PTC807"}
    assert oc.finding_failure("amp-distributed", ()) is None
    assert oc.finding_failure("amp-distributed", ("GB0007",)) == oc.GRAPH_BREAK in oc.FAILURE_CLASSES


@pytest.mark.parametrize("code", sorted(c for c, s in load_specs().items() if c.startswith("PTC8")))
def test_codes_in_range_belong_to_the_category(code):
    assert load_specs()[code].category == "amp-distributed"
