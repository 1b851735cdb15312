"""CUDA-graph / sync rules (PTC7xx) by target, and Dynamo config read from the linted code.

Everything here runs the linter only (no torch); the Dynamo measurements behind the rules
are in tests/test_spec_evidence.py.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from pt2lint.analysis import dynamo_facts
from pt2lint.analysis.code_config import RegionOptions, apply_to_settings, scan_source
from pt2lint.analysis.driver import _severity
from pt2lint.cli import cli
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection
from pt2lint.specs import SpecError, get_spec, parse_spec
from tests.clitools import cli_runner

MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 4)
            self.scale = torch.tensor(2.0).item()

        def forward(self, x):
            y = self.proj(x) * self.scale
            bias = torch.tensor([1.0, 2.0, 3.0, 4.0]).to(x.device)
            pos = torch.arange(y.shape[1], device=x.device)
            pad = x.new_zeros(x.shape[0], 2)
            return (y + bias + pos).cpu(), pad
    """
)


def _lint(source: str, target: str = "compile", **knobs):
    settings = LintSettings(enabled=resolve_selection(target=target), target=target, **knobs)
    return lint_source(source, "model.py", settings).diagnostics


def _found(diags, prefix="PTC7"):
    return sorted((d.start.line, d.code, d.severity) for d in diags if d.code.startswith(prefix))


def test_cudagraphs_target_warns_where_compile_only_informs():
    compile_found = _found(_lint(MODEL, "compile"))
    graphs_found = _found(_lint(MODEL, "cudagraphs"))
    assert [(line, code) for line, code, _ in compile_found] == [(13, "PTC702"), (16, "PTC701")]
    assert [(line, code) for line, code, _ in graphs_found] == [(13, "PTC702"), (16, "PTC701")]
    assert {sev for *_, sev in compile_found} == {"info"}
    assert {sev for *_, sev in graphs_found} == {"warning"}
    # near misses: .item() in __init__, device=x.device, x.new_zeros, shape reads: nothing
    assert not [d for d in _lint(MODEL, "cudagraphs") if d.code.startswith("PTC7") and d.start.line in (9, 14, 15)]


def test_item_is_a_sync_only_when_traced():
    src = textwrap.dedent(
        """\
        import torch
        from torch import nn


        class Norm(nn.Module):
            def forward(self, x):
                scale = x.abs().amax().item()
                return x / scale
        """
    )
    assert _found(_lint(src, "cudagraphs"), "PTC") == [(7, "PTC101", "error")]
    assert _found(_lint(src, "cudagraphs", capture_scalar_outputs=True), "PTC") == [(7, "PTC701", "warning")]


def test_factory_with_kwargs_from_elsewhere_is_not_flagged():
    src = textwrap.dedent(
        """\
        import torch
        from torch import nn


        class Block(nn.Module):
            def forward(self, x, **factory):
                a = torch.zeros(x.shape[-1], **factory)
                b = torch.zeros(x.shape[-1], device="cpu")
                c = torch.tensor(x)
                return x + a + b.to(x.device) + c
        """
    )
    assert [(line, code) for line, code, _ in _found(_lint(src, "cudagraphs"))] == [(8, "PTC702")]


# ------------------------------------------------------------------ config in code

ITEM = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Norm(nn.Module):
        def forward(self, x):
            return x / x.abs().amax().item()
    """
)


def test_capture_scalar_outputs_set_in_the_file_silences_ptc101():
    assert _found(_lint(ITEM), "PTC1") == [(7, "PTC101", "error")]
    in_code = ITEM.replace("from torch import nn\n", "from torch import nn\n\ntorch._dynamo.config.capture_scalar_outputs = True\n", 1)
    codes = {d.code for d in _lint(in_code)}
    assert "PTC101" not in codes and "PTC701" in codes  # traced: a sync, no break
    # the same with any spelling the imports allow
    aliased = ITEM.replace(
        "from torch import nn\n", "from torch import nn\nfrom torch._dynamo import config as dc\n\ndc.capture_scalar_outputs = True\n", 1
    )
    assert "PTC101" not in {d.code for d in _lint(aliased)}
    # a value computed at run time is not a known setting
    computed = ITEM.replace("from torch import nn\n", "from torch import nn\nimport os\n\ntorch._dynamo.config.capture_scalar_outputs = bool(os.environ.get('X'))\n", 1)
    assert "PTC101" in {d.code for d in _lint(computed)}


def _project(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def _check(tmp_path, *args):
    result = cli_runner().invoke(cli, ["check", "--no-cache", "--isolated", "--output-format", "json", *args, str(tmp_path)])
    assert result.exit_code in (0, 1), result.output
    return sorted((d["location"]["row"], d["code"], d.get("severity")) for d in json.loads(result.stdout) if d["filename"].endswith("model.py"))


def test_config_in_another_project_file_applies_project_wide(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, {"model.py": ITEM, "train.py": "import torch\nimport torch._dynamo\n\ntorch._dynamo.config.capture_scalar_outputs = True\n"})
    found = _check(tmp_path)
    assert [c for _, c, _ in found] == ["PTC701"]
    # the command line wins over the code
    assert [c for _, c, _ in _check(tmp_path, "--no-capture-scalar-outputs")] == ["PTC101"]


def test_reduce_overhead_compile_makes_its_region_cudagraphs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    two = MODEL + textwrap.dedent(
        """\


        class Other(nn.Module):
            def forward(self, x):
                return x + torch.zeros(x.shape[-1])
        """
    )
    _project(tmp_path, {"model.py": two, "train.py": "import torch\nfrom model import Net\n\nmodel = Net()\nfast = torch.compile(model, mode='reduce-overhead')\n"})
    found = _check(tmp_path)
    assert (13, "PTC702", "warning") in found and (16, "PTC701", "warning") in found
    assert (21, "PTC702", "info") in found  # Other is compiled with the default mode
    result = cli_runner().invoke(cli, ["check", "--no-cache", "--isolated", str(tmp_path)])
    assert "mode='reduce-overhead' at" in result.stdout and "train.py:5" in result.stdout


def test_compile_options_in_the_same_file(tmp_path):
    src = MODEL + "\n\nnet = torch.compile(Net(), mode='max-autotune')\n"
    found = _found(_lint(src))
    assert {sev for *_, sev in found} == {"warning"}  # max-autotune turns CUDA graphs on (facts table)
    src = MODEL + "\n\nnet = torch.compile(Net(), mode='max-autotune-no-cudagraphs')\n"
    assert {sev for *_, sev in _found(_lint(src))} == {"info"}


def test_config_patch_decorator_applies_to_its_region_only():
    src = textwrap.dedent(
        """\
        import torch
        import torch._dynamo
        from torch import nn


        class A(nn.Module):
            @torch._dynamo.config.patch(capture_scalar_outputs=True)
            def forward(self, x):
                return x / x.amax().item()


        class B(nn.Module):
            def forward(self, x):
                return x / x.amax().item()
        """
    )
    found = _found(_lint(src), "PTC")
    assert (9, "PTC701", "info") in found and (14, "PTC101", "error") in found
    assert not [f for f in found if f[0] == 9 and f[1] == "PTC101"]


def test_config_patch_block_around_compile_applies_to_what_it_compiles():
    src = ITEM + textwrap.dedent(
        """\


        with torch._dynamo.config.patch({"capture_scalar_outputs": True}):
            fast = torch.compile(Norm(), fullgraph=True)
        """
    )
    codes = {d.code for d in _lint(src)}
    assert "PTC101" not in codes and "PTC701" in codes


# ------------------------------------------------------------------ allow_rnn

RNN = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(8, 8, batch_first=True)

        def forward(self, x):
            h, _ = self.rnn(x)
            return h
    """
)


def test_allow_rnn_knob_in_settings_code_and_config(tmp_path, monkeypatch):
    assert "PTC311" in {d.code for d in _lint(RNN)}
    assert "PTC311" not in {d.code for d in _lint(RNN, allow_rnn=True)}
    in_code = RNN + "\n\ntorch._dynamo.config.allow_rnn = True\n"
    assert "PTC311" not in {d.code for d in _lint(in_code)}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(RNN)
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\nallow-rnn = true\n")
    run = cli_runner().invoke(cli, ["check", "--no-cache", str(tmp_path)])
    assert run.exit_code == 0, run.stdout + run.stderr
    run = cli_runner().invoke(cli, ["check", "--no-cache", "--no-allow-rnn", str(tmp_path)])
    assert run.exit_code == 1 and "PTC311" in run.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\nallow-rnn = 1\n")
    run = cli_runner().invoke(cli, ["check", "--no-cache", str(tmp_path)])
    assert run.exit_code == 2 and "'allow-rnn' must be true or false" in run.stderr


def test_every_knob_a_rule_tells_users_to_set_is_settable():
    """Each ``torch._dynamo.config.X = True`` a spec's fix or a rule's message names is a knob."""
    import re
    from pathlib import Path

    from pt2lint.analysis.code_config import KNOBS
    from pt2lint.config import KNOWN_KEYS
    from pt2lint.specs import load_specs

    root = Path(__file__).resolve().parent.parent
    told = set()
    for spec in load_specs().values():
        told |= set(re.findall(r"torch\._dynamo\.config\.(\w+)\s*=\s*True", spec.fix))
        if spec.knob:
            told.add(spec.knob)
    for path in (root / "pt2lint" / "rules").glob("*.py"):
        told |= set(re.findall(r"torch\._dynamo\.config\.(\w+) = True", path.read_text()))
        told |= set(re.findall(r"set (\w+)=True", path.read_text()))
    assert told, "no knob found: the pattern is stale"
    for knob in told:
        assert knob in KNOBS, f"{knob} is named in a rule but pt2lint does not model it"
        assert knob.replace("_", "-") in KNOWN_KEYS, f"{knob} cannot be set in [tool.pt2lint]"
        assert hasattr(LintSettings(), knob)


# ------------------------------------------------------------------ the scanner and the facts


def test_scanner_resolves_compile_targets():
    src = textwrap.dedent(
        """\
        import torch
        from .nets import Encoder as Enc
        from torch import nn


        class Local(nn.Module):
            def forward(self, x):
                return x


        def step(x):
            return x


        a = Local()
        a = torch.compile(a, mode="reduce-overhead")
        b = torch.compile(Enc(4), fullgraph=True, dynamic=False)
        c = torch.compile(step, mode=some_mode)
        d = Local()
        d.compile(mode="max-autotune")
        import re
        pattern = re.compile("x")


        @torch.compile(mode="reduce-overhead")
        def fused(x):
            return x
        """
    )
    found = {r.key: r for r in scan_source(src, "pkg/train.py", "pkg.train").regions}
    assert found["pkg.train.Local.forward"].mode in ("reduce-overhead", "max-autotune")
    assert found["pkg.nets.Encoder.forward"].fullgraph is True and found["pkg.nets.Encoder.forward"].dynamic is False
    assert found["pkg.train.step"].mode is None  # not a constant
    assert found["pkg.train.fused"].mode == "reduce-overhead"
    assert not any("re." in k or "pattern" in k for k in found)
    merged = apply_to_settings(LintSettings(), scan_source(src, "pkg/train.py", "pkg.train"))
    assert merged.region("pkg.train.Local.forward").mode == "max-autotune"  # the later call wins


def test_scanner_ignores_unparsable_and_unrelated_files():
    assert scan_source("def f(:\n", "x.py").regions == ()
    assert scan_source("x = 1\n", "x.py").knobs == ()


def test_fullgraph_makes_a_graph_break_an_error():
    spec = parse_spec(
        {"code": "PTC999", "name": "x", "category": "side-effect", "severity": "warning", "summary": "s", "why": "w", "fix": "f"},
        "x.toml",
    )
    region = RegionOptions("m.Net.forward", fullgraph=True, where="train.py:3")
    severity, note = _severity(spec, LintSettings(), region)
    assert severity == "error" and "fullgraph=True at train.py:3" in note
    assert _severity(spec, LintSettings(), None) == ("warning", "")
    sync = get_spec("PTC701")
    assert _severity(sync, LintSettings(), region)[0] == "info"  # not a graph break: fullgraph does not matter


def test_facts_table_names_cudagraph_skip_reasons_and_modes():
    reasons = dynamo_facts.cudagraph_skip_reasons()
    assert "mutated inputs" in reasons and "cpu device" in reasons
    assert dynamo_facts.cudagraph_skip_reason("cpu") == "cpu device"
    with pytest.raises(KeyError):
        dynamo_facts.cudagraph_skip_reason("no such reason")
    assert dynamo_facts.cudagraph_mode("reduce-overhead") and not dynamo_facts.cudagraph_mode("default")
    assert not dynamo_facts.cudagraph_mode(None) and not dynamo_facts.cudagraph_mode("bogus")


@pytest.mark.parametrize(
    "extra,message",
    [
        ({"target_severity": {"export": "info"}}, "not one of the rule's targets"),
        ({"target_severity": {"compile": "loud"}}, "is not one of error, warning, info"),
        ({"target_severity": "info"}, "must be a table"),
        ({"needs_device": "tpu"}, "needs_device 'tpu'"),
    ],
)
def test_spec_rejects_bad_target_severity_and_device(extra, message):
    data = {"code": "PTC999", "name": "x", "category": "sync", "severity": "warning", "summary": "s", "why": "w", "fix": "f", "targets": ["compile"]}
    with pytest.raises(SpecError, match=message):
        parse_spec({**data, **extra}, "x.toml")


def test_sync_findings_show_in_statistics_and_html(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(MODEL)
    run = cli_runner().invoke(cli, ["check", "--no-cache", "--isolated", "--exit-zero", "--target", "cudagraphs", "--statistics", str(tmp_path)])
    assert "PTC701" in run.stdout and "host-sync" in run.stdout and "host-tensor-creation" in run.stdout
    out = tmp_path / "report.html"
    run = cli_runner().invoke(cli, ["check", "--no-cache", "--isolated", "--exit-zero", "--target", "cudagraphs", "--output-format", "html", "-o", str(out), str(tmp_path)])
    html = out.read_text()
    assert "PTC701" in html and "sync &middot; warning" in html


def test_device_type_tests_are_constant_under_cudagraphs():
    src = textwrap.dedent(
        """\
        import torch
        from torch import nn


        class Rope(nn.Module):
            def forward(self, ids):
                if ids.device.type == "mps":
                    ids = ids.to("cpu")
                if ids.device.type in ("cuda", "xpu"):
                    ids = ids.cpu()
                return ids
        """
    )
    assert [(line, code) for line, code, _ in _found(_lint(src, "cudagraphs"))] == [(10, "PTC701")]
    assert [(line, code) for line, code, _ in _found(_lint(src, "compile"))] == [(8, "PTC701"), (10, "PTC701")]


def test_info_findings_are_shown_but_do_not_fail_the_run(tmp_path):
    """A host sync under --target compile is info: printed, counted, exit 0; under cudagraphs it fails."""
    import subprocess
    import sys

    from clitools import repo_pythonpath

    src = tmp_path / "m.py"
    src.write_text("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        return x + torch.arange(4)\n")
    repo = str(__import__("pathlib").Path(__file__).resolve().parent.parent)
    env = {**__import__("os").environ, "PYTHONPATH": repo_pythonpath(repo)}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "pt2lint", "check", "--no-cache", *args, str(src)],
                              capture_output=True, text=True, env=env, cwd=tmp_path)

    compile_run = run()
    assert compile_run.returncode == 0, compile_run.stderr
    assert "PTC702" in compile_run.stdout and "1 at info severity" in compile_run.stderr
    graphs = run("--target", "cudagraphs")
    assert graphs.returncode == 1 and "PTC702" in graphs.stdout and "info severity" not in graphs.stderr
    mixed = tmp_path / "m.py"
    mixed.write_text(mixed.read_text() + "\n    def helper(self, x):\n        pass\n\n\nclass N(nn.Module):\n    def forward(self, x):\n        return x.item()\n")
    assert run().returncode == 1
