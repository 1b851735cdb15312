"""Breaks reached through values the analysis follows across calls: asserts with a computed
message, functions carried in keyword dicts.

Each case was measured on torch 2.13 with ``torch._dynamo.explain``: ``assert t.all()`` and
``assert t.all(), "text"`` compile to ``torch._assert_async`` (no break), while
``assert t.all(), "{}".format(n)``, an f-string with fields or a message in a variable break
with "Data-dependent branching"; an assert on a shape with a computed message does not break.
"""

from __future__ import annotations

from linttools import found


def test_assert_on_a_tensor_breaks_only_with_a_computed_message():
    code = """
        import torch
        from torch import nn

        def check(t, name):
            assert (t[1:] > t[:-1]).all(), "{} must increase".format(name)
            assert (t > -1e9).all(), f"{name} is finite"
            msg = "bad"
            assert t.sum() > -1e9, msg
            assert (t < 1e9).all()
            assert (t < 1e9).all(), "constant message"
            assert (t < 1e9).all(), "implicitly " "joined"
            assert (t < 1e9).all(), f"no fields"
            assert t.shape[0] > 0, "rows: {}".format(t.shape)
            return t

        class M(nn.Module):
            def forward(self, x):
                return check(x, "x")
        """
    assert found(code, codes={"PTC104"}) == [(5, "PTC104"), (6, "PTC104"), (8, "PTC104")]


OPTIONS = """
    import torch
    from torch import nn


    def _rms_norm(t):
        return t.abs().pow(2).mean().sqrt()


    def _plain(t):
        return t.sum() * 2


    def _check(options, norm_fn):
        if options is None:
            options = {}
        else:
            options = options.copy()
        if "norm" in options:
            pass
        else:
            options["norm"] = norm_fn
        return options


    class Base:
        def __init__(self, y0, norm, **unused):
            self.y0 = y0
            self.norm = norm


    class Solver(Base):
        def __init__(self, func, y0, rtol=1e-3, **kwargs):
            super().__init__(y0=y0, **kwargs)
            self.func = func

        def step(self):
            d = self.norm(self.y0)
            if d < 1:
                return self.y0
            return self.y0 * 2


    class Solve(nn.Module):
        def __init__(self, **options):
            super().__init__()
            self.options = options

        def forward(self, x):
            options = _check(self.options or None, NORM)
            return Solver(None, x, **options).step()
    """


def test_a_function_stored_in_an_options_dict_is_called_through_keyword_expansion():
    # measured on torch 2.13: the `if d < 1` on the norm of the state breaks ("Data-dependent branching")
    assert found(OPTIONS.replace("NORM", "_rms_norm"), codes={"PTC104"}) == [(38, "PTC104")]


def test_a_function_stored_in_an_options_dict_that_returns_a_tensor_op_only_is_still_a_tensor():
    # `_plain(t)` returns a tensor too: the branch still breaks; an entry that is not a known
    # function (a lambda returning a constant) does not make the branch a tensor test
    assert found(OPTIONS.replace("NORM", "_plain"), codes={"PTC104"}) == [(38, "PTC104")]
    assert found(OPTIONS.replace("NORM", "lambda t: 0.5"), codes={"PTC104"}) == []


def test_is_none_folds_for_a_parameter_rebound_only_in_straight_line_code():
    code = """
        import torch
        from torch import nn

        def solve(x, scale=None):
            if scale is None:
                scale = 2.0
            else:
                print("scale", scale)
                scale = scale * 1.0
            return x * scale

        def loop(xs, h=None):
            for x in xs:
                if h is None:
                    h = x
                else:
                    h = h + x.sum().item()
            return h

        class M(nn.Module):
            def forward(self, x):
                return solve(x) + loop([x, x])
        """
    # solve(x): `scale` is None at its test (rebound after it, outside any loop), so the
    # `print` branch is never traced; `h` is rebound inside the loop, so both branches are
    # analysed there
    assert found(code, codes={"PTC101", "PTC301"}) == [(17, "PTC101")]
