"""Recompile hazards (PTC501-PTC505): what is flagged, and the near misses that are not.

The Dynamo measurements behind each case are in the rules' specs (rules/PTC50*.toml,
checked by tests/test_spec_evidence.py); these tests pin the static side.
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def found(code: str):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    return sorted((d.start.line, d.code) for d in result.diagnostics if d.code.startswith("PTC5"))


def messages(code: str):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    return {d.code: d.message for d in result.diagnostics}


def test_global_counter_and_module_level_containers_are_flagged():
    code = """
        import torch
        from torch import nn
        STEP = 0
        LOG = []
        SEEN = {}
        class M(nn.Module):
            def forward(self, x):
                global STEP
                STEP += 1
                LOG.append(x.shape[0])
                SEEN[len(SEEN)] = 1
                return x + 1
        """
    assert found(code) == [(9, "PTC503"), (10, "PTC503"), (11, "PTC503")]
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    by_line = {d.start.line: d.message for d in result.diagnostics}
    assert "G['STEP'] == <value>" in by_line[9] and "recompile_limit" in by_line[9]
    assert "not G['LOG']" in by_line[10] and "not G['SEEN']" in by_line[11]


def test_global_reassigned_from_itself_is_flagged_but_a_constant_store_is_not():
    assert found(
        """
        import torch
        from torch import nn
        STEP = 0
        MODE = "a"
        class M(nn.Module):
            def forward(self, x):
                global STEP, MODE
                STEP = STEP + 1
                MODE = "b"
                return x
        """
    ) == [(8, "PTC503")]


def test_near_misses_of_globals_are_not_flagged():
    # a local shadowing the global name, reading a global, writing it outside the compiled region
    assert found(
        """
        import torch
        from torch import nn
        LOG = []
        STEP = 0
        def train_step(model, x):
            global STEP
            STEP += 1
            LOG.append(STEP)
            return model(x)
        class M(nn.Module):
            def forward(self, x):
                LOG = [x]
                LOG.append(x * 2)
                return LOG[-1] + STEP
        """
    ) == []


def test_a_cache_filled_once_is_silent_in_every_spelling():
    assert found(
        """
        import torch
        from torch import nn
        CACHE = {}
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.cache = {}
            def forward(self, x):
                key = "mask"
                if key not in self.cache:
                    self.cache[key] = torch.ones(8)
                if "g" not in CACHE:
                    CACHE["g"] = torch.zeros(8)
                return x + self.cache[key] + CACHE["g"] + self.other(x)
            def other(self, x):
                if "w" in self.cache:
                    return self.cache["w"]
                self.cache["w"] = x.new_ones(8)
                return self.cache["w"]
        """
    ) == []


def test_a_guarded_fill_with_a_varying_key_is_still_flagged():
    # the guard tests another key; the key is a tensor (hashed by identity)
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.cache = {}
            def forward(self, x, y):
                if "a" not in self.cache:
                    self.cache["b"] = 1
                if x not in self.cache:
                    self.cache[x] = y
                return y
        """
    ) == [(9, "PTC501"), (11, "PTC501")]


def test_a_size_keyed_cache_is_reported_once_as_size_keyed():
    code = """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.cache = {}
            def forward(self, x):
                n = x.shape[0]
                if n not in self.cache:
                    self.cache[n] = torch.ones(n, 1)
                return x + self.cache[n]
        """
    assert found(code) == [(9, "PTC504")]
    assert "`n`" in messages(code)["PTC504"] and "self.cache" in messages(code)["PTC504"]


def test_size_keys_of_local_dicts_and_their_near_misses():
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                b, t = x.shape
                scales = {x.shape[0]: 2.0}
                table = {2: 1.0, 3: 0.5}
                by_name = {"a": 1.0}
                y = x * table[x.dim()] * by_name["a"]
                if x.shape[0] > 1:
                    y = y + 1
                lut = {}
                lut[t] = 1.0
                return y * scales[b]
        """
    ) == [(6, "PTC504"), (13, "PTC504")]


def test_modules_built_from_sizes_in_forward():
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.width = 8
                self.proj = nn.Linear(8, 8)
            def forward(self, x):
                n = x.size(0)
                mix = nn.Linear(n, 8)
                norm = nn.LayerNorm(normalized_shape=x.shape[-1])
                act = nn.GELU()
                drop = nn.Dropout(0.1)
                same = nn.Linear(self.width, 8)
                return act(mix(x.t())) + norm(drop(same(x))).sum()
        """
    ) == [(10, "PTC505"), (11, "PTC505")]


def test_len_of_a_container_grown_elsewhere_and_its_near_misses():
    assert found(
        """
        import torch
        from torch import nn
        SEEN = []
        NAMES = ["a", "b"]
        def remember(v):
            SEEN.append(v)
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.hist = []
                self.sizes = [1, 2]
                self.sizes.append(3)
                self.layers = nn.ModuleList([nn.Linear(8, 8)])
            def observe(self, v):
                self.hist.append(v)
            def forward(self, x):
                parts = [x]
                parts.append(x)
                n = len(self.hist) + len(SEEN)
                m = len(self.sizes) + len(NAMES) + len(self.layers) + len(parts)
                return x * n * m
        """
    ) == [(19, "PTC506"), (19, "PTC506")]


def test_new_rules_show_in_statistics_the_html_report_and_the_rule_docs(tmp_path):
    from pathlib import Path

    from clitools import cli_runner

    from pt2lint.cli import cli
    from pt2lint.specs import load_specs

    specs = load_specs()
    codes = ("PTC503", "PTC504", "PTC505", "PTC506")
    for code in codes:
        (tmp_path / f"{code}.py").write_text(specs[code].examples[0].code)
    runner = cli_runner()
    stats = runner.invoke(cli, ["check", "--isolated", "--no-cache", "--statistics", str(tmp_path)])
    assert stats.exit_code == 1, stats.stderr
    for code in codes:
        assert f"{code}  [ ] {specs[code].name}" in stats.stdout
    report = tmp_path / "report.html"
    html = runner.invoke(cli, ["check", "--isolated", "--no-cache", "--output-format", "html", "-o", str(report), str(tmp_path)])
    assert html.exit_code == 1, html.stderr
    text = report.read_text()
    docs = Path(__file__).resolve().parent.parent / "docs" / "rules"
    for code in codes:
        assert f"{code}.py:" in text and specs[code].name in text
        assert specs[code].name in (docs / f"{code}.md").read_text()


def test_a_size_kept_as_a_hyper_parameter_and_bounded_growth_are_not_flagged():
    # transformers' question-answering span loss; sew_d's dropout context stack (both measured
    # on torch 2.13 to stay within two or three graphs, see the PTC505/PTC506 specs)
    assert [f for f in found(
        """
        import torch
        from torch import nn
        from torch.nn import CrossEntropyLoss
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.count = 0
                self.stack = []
            def get_context(self):
                if self.count >= len(self.stack):
                    self.stack.append(object())
                self.count += 1
                return self.stack[self.count - 1]
            def forward(self, start_logits, start_positions):
                self.get_context()
                ignored_index = start_logits.size(1)
                start_positions = start_positions.clamp(0, ignored_index)
                loss_fct = CrossEntropyLoss(ignore_index=ignored_index)
                pool = nn.AdaptiveAvgPool1d(start_logits.shape[-1] // 2)
                return loss_fct(start_logits, start_positions) * len(self.stack) + pool(start_logits).sum()
        """
    ) if f[1] in ("PTC505", "PTC506")] == []


# Containers whose state is the same at every call entry (measured on torch 2.13, four calls of
# one shape and six of growing batches: no recompile from the container; the spec's good
# examples 7-9 in rules/PTC501-module-state-mutation.toml are the executed versions).


def test_a_container_left_as_init_set_it_on_every_exit_is_not_flagged():
    # vit-pytorch dino.py: cleared, filled, read, cleared again in every forward
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                self.hidden = {}
                self.outs = []
            def forward(self, x):
                self.hidden.clear()
                self.hidden[x.device] = self.lin(x)
                h = self.hidden[x.device]
                self.hidden.clear()
                self.outs.append(h)
                if x.dim() > 3:
                    self.outs = []
                    return h
                y = torch.stack(self.outs)
                self.reset()
                return y
            def reset(self):
                self.outs.clear()
        """
    ) == []


def test_an_attribute_assigned_before_it_is_read_is_not_flagged():
    # kornia mix/base.py: ``self._params`` rebuilt from a method on every call, then updated;
    # ``type(self)`` in a helper looks at the class, not the attribute
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self._params = {}
                self.n = 0
            def check(self):
                if type(self).forward is M.forward:
                    return
            def make(self, shape):
                return {"lam": torch.full((shape[0], 1), 0.5)}
            def forward(self, x, params=None):
                self.check()
                if params is None:
                    self._params = self.make(x.shape)
                    self._params.update({"shift": torch.ones(())})
                else:
                    self._params = params
                self.n = 0
                for _ in range(3):
                    self.n += 1
                return x * self._params["lam"] * self.n
        """
    ) == []


def test_state_that_differs_at_the_next_call_entry_is_still_flagged():
    # each of these recompiled on torch 2.13 (recompiles log): the list grows, the counter
    # is guarded by value, clear() first reads the entry dict (one recompile on call 2),
    # an early return skips the clear, __init__ fills what forward clears, a conditional clear
    assert found(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.h = []
                self.step = 0
                self.d = {}
                self.k = []
                self.j = {"z": 1}
                self.buf = []
            def forward(self, x):
                self.h.append(x.shape[0])
                self.step += 1
                self.d.clear()
                self.d["a"] = x
                self.j["a"] = x
                self.j.clear()
                self.buf.append(1)
                if len(self.buf) > 2:
                    self.buf.clear()
                self.k.append(x)
                if x.shape[0] == 2:
                    return x * self.step
                self.k.clear()
                return x
        """
    ) == [(13, "PTC501"), (14, "PTC501"), (15, "PTC501"), (16, "PTC501"), (17, "PTC501"), (18, "PTC501"),
          (19, "PTC501"), (20, "PTC506"), (22, "PTC501"), (25, "PTC501")]


def test_a_container_that_may_escape_or_meet_code_not_followed_is_still_flagged():
    # an alias appended to after the clear; ``self`` handed to a function that is not followed
    assert found(
        """
        import torch
        from torch import nn
        def record(m, x):
            m.log.append(x)
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = []
                self.log = []
            def forward(self, x):
                h = self.hidden
                self.hidden.clear()
                h.append(x)
                self.log.append(x)
                record(self, x)
                self.log.clear()
                return x
        """
    ) == [(12, "PTC501"), (14, "PTC501"), (16, "PTC501")]


LAZY_COUNTER = """
    import torch
    from torch import nn
    class M(nn.Module):
        def forward(self, x):
            self.calls = getattr(self, "{read}", 0) + 1
            return x * 2
    """


def test_a_counter_read_through_getattr_with_a_default_is_flagged():
    # ``getattr(self, "calls", 0)`` reads the attribute the statement then stores: a counter
    # created lazily, which Dynamo guards on by value (one recompile per call, measured below);
    # the near miss reads another attribute, and every call stores the same value
    assert found(LAZY_COUNTER.format(read="calls")) == [(5, "PTC501")]
    assert found(LAZY_COUNTER.format(read="other")) == []


def test_a_lazy_counter_recompiles():
    pytest.importorskip("torch")
    from linttools import dynamo_frame_counts

    sources = [textwrap.dedent(LAZY_COUNTER.format(read=read)) for read in ("calls", "other")]
    calls, other = dynamo_frame_counts([(src, "M()", "torch.randn(2, 4)") for src in sources])
    assert calls > 1 and other == 1


MODULE_MOVED = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)

    def forward(self, x):
        self.emb = {rhs}
        return self.emb(x)
"""


@pytest.mark.parametrize("rhs", ["self.emb.to(x.device)", "self.emb.cpu()", "self.emb.train(self.training)"])
def test_a_module_moved_back_onto_itself_is_no_state_change(rhs):
    # ``nn.Module.to``/``.cpu()``/``.train()`` return the module itself: nothing Dynamo guards on changes
    from linttools import dynamo_frame_counts

    src = MODULE_MOVED.format(rhs=rhs)
    assert [code for _, code in found(src) if code == "PTC501"] == []
    pytest.importorskip("torch")
    assert dynamo_frame_counts([(src, "Net()", "torch.randint(0, 10, (2, 5))")], calls=3) == [1]
