"""Long ``if``/``elif`` chains of tensor tests: the ``cond`` rewrite nests one ``torch.cond`` per test,
so chains longer than ``MAX_ELIF_LEVELS`` are refused with the reason; and the codemods' recording
analysis, when it runs out of recursion on such a chain, fails once per module, not once per finding
(an adversarial 300-test chain took about 50 s, one failed run per finding)."""

from __future__ import annotations

from pt2lint.diagnostics import Applicability
from pt2lint.fixes.cond import MAX_ELIF_LEVELS
from test_fix_cond_safety import COMPILED, cond_fix


def _chain(n: int) -> str:
    body = "        if x.sum() > 0:\n            x = x * 1\n" + "".join(
        f"        elif x.sum() > {i}:\n            x = x * {i}\n" for i in range(1, n)
    )
    return "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n" + body + "        return x\n"


def test_a_chain_longer_than_the_limit_is_refused_with_the_reason():
    f = cond_fix(_chain(MAX_ELIF_LEVELS + 4))
    assert f.applicability is Applicability.DISPLAY_ONLY
    assert f"more than {MAX_ELIF_LEVELS} tensor tests" in f.message, f.message


def test_a_chain_at_the_limit_is_rewritten():
    f = cond_fix(_chain(MAX_ELIF_LEVELS))
    assert f.applicability is not Applicability.DISPLAY_ONLY, f.message


def test_a_failed_recording_run_is_not_repeated_per_finding(monkeypatch):
    import pt2lint.fixes.facts as facts
    from pt2lint.engine import lint_source

    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(facts, "collect_facts", failing)
    result = lint_source(_chain(30), "m.py", COMPILED)
    assert len([d for d in result.diagnostics if d.code == "PTC104"]) == 30
    assert len(calls) == 1
