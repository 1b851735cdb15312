"""A test on a flag reads the values an earlier ``if`` on the same flag bound in the arm it selects.

``self.training`` is one Python bool for the whole call and Dynamo guards on it, so a name bound
to a tensor only in train mode is never a tensor where a later test selects eval mode; the same
holds for any flag that cannot change in between (a ``self`` attribute the function never
assigns, a local not rebound).  Labels from ``torch._dynamo.explain`` on torch 2.13 (CPU), each
class compiled in train and in eval mode (``OtherFlag`` with ``flag`` True and False):

- ``EvalOnlyTest``: no break (descript-audio-codec's residual quantizer:
  ``if self.training is False and i >= n_quantizers: break``);
- ``NotTrainingAnd``: no break;
- ``TrainTest``: a break at line 39 (the ``if``) in train mode;
- ``Rebound``: a break at line 51 in eval mode (``k`` is rebound to a tensor after the mode
  ``if``, so the mode says nothing about it any more);
- ``OtherFlag``: no break (``self.flag`` is never assigned in ``forward``).
"""

from __future__ import annotations

import textwrap

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())

MODELS = """\
import torch
from torch import nn

class EvalOnlyTest(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.n_codebooks = n
        self.qs = nn.ModuleList([nn.Linear(8, 8) for _ in range(n)])

    def forward(self, z):
        n_quantizers = self.n_codebooks
        if self.training:
            n_quantizers = torch.ones((z.shape[0],)) * self.n_codebooks + 1
        out = 0
        for i, q in enumerate(self.qs):
            if self.training is False and i >= n_quantizers:
                break
            out = out + q(z)
        return out


class NotTrainingAnd(nn.Module):
    def forward(self, x):
        if not self.training:
            k = 2
        else:
            k = x.sum()
        if not self.training and k > 1:
            x = x * 2
        return x


class TrainTest(nn.Module):
    def forward(self, x):
        if self.training:
            k = x.sum()
        else:
            k = 2
        if self.training and k > 1:
            x = x * 2
        return x


class Rebound(nn.Module):
    def forward(self, x):
        if self.training:
            k = 2
        else:
            k = 3
        k = x.sum() if x.shape[0] > 1 else k
        if not self.training and k > 1:
            x = x * 2
        return x


class OtherFlag(nn.Module):
    def __init__(self, flag):
        super().__init__()
        self.flag = flag

    def forward(self, x):
        if self.flag:
            k = x.sum()
        else:
            k = 2
        if not self.flag and k > 1:
            x = x * 2
        return x
"""


def _breaks():
    result = lint_source(MODELS, "m.py", DEFAULT, fixes=False)
    return sorted(d.start.line for d in result.diagnostics if d.code == "PTC104")


def test_a_flag_test_reads_the_values_of_its_arm():
    # 16 (EvalOnlyTest), 28 (NotTrainingAnd) and 66 (OtherFlag) select the arm where the names hold ints
    assert _breaks() == [39, 51]


def test_each_flag_test_spelling_names_its_subject_and_arm():
    import libcst as cst

    from pt2lint.analysis.interp import _branch_subject

    def subject(text):
        return _branch_subject(cst.parse_expression(text))

    training = ("self", "training")
    assert subject("self.training") == (training, True)
    assert subject("self.training is True") == (training, True)
    assert subject("self.training == False") == (training, False)
    assert subject("self.training is not False") == (training, True)
    assert subject("not self.training") == (training, False)
    assert subject("not self.training is False") == (training, True)
    assert subject("self.training is None") is None
    assert subject("other.training") is None
    assert subject("self.flag") == (("self", "flag"), True)
    assert subject("not use_cache") == (("local", "use_cache"), False)
    # ``is False`` is not ``not`` for a flag that may be None or 0: only the bool mode counts
    assert subject("self.flag is False") is None
    assert subject("x > 0") is None


def test_the_arms_of_one_flag_pair_up_and_a_rebound_flag_pairs_nothing():
    code = textwrap.dedent("""\
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                if self.training:
                    scale = x.std()
                else:
                    scale = 1.0
                if not self.training and scale > 0.5:
                    x = x * scale
                if self.training and scale > 0.5:
                    x = x / scale
                return x
    """)
    result = lint_source(code, "m.py", DEFAULT, fixes=False)
    assert sorted((d.start.line, d.code) for d in result.diagnostics if d.code.startswith("PTC1")) == [(12, "PTC104")]


def test_a_flag_rebound_in_an_arm_correlates_nothing():
    # Dynamo on torch 2.13 with ``use=True``: the first arm makes ``k`` a tensor and ``use``
    # False, so the second test reads the tensor: a break at line 9
    code = textwrap.dedent("""\
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, x, use=True):
                if use:
                    k = x.sum()
                    use = False
                else:
                    k = 2
                if not use and k > 1:
                    x = x * 2
                return x
    """)
    result = lint_source(code, "m.py", DEFAULT, fixes=False)
    assert [(d.start.line, d.code) for d in result.diagnostics if d.code.startswith("PTC1")] == [(11, "PTC104")]


def test_a_self_flag_the_function_assigns_correlates_nothing():
    code = textwrap.dedent("""\
        import torch
        from torch import nn

        class M(nn.Module):
            def __init__(self, fast):
                super().__init__()
                self.fast = fast

            def forward(self, x):
                if self.fast:
                    k = x.sum()
                else:
                    k = 2
                self.fast = x.shape[0] > 1
                if self.fast and k > 1:
                    x = x * 2
                return x
    """)
    result = lint_source(code, "m.py", DEFAULT, fixes=False)
    assert (15, "PTC104") in [(d.start.line, d.code) for d in result.diagnostics]
