"""State a submodule's hook writes, which ``forward`` resets before it returns, does not recompile.

``self.enc.register_forward_hook(self._capture)`` with ``self.captured[name] = out`` in the hook
and ``self.captured.clear()`` at the end of ``forward``: the hook runs inside ``forward``'s call
of ``self.enc``, so every call starts from the empty dict ``__init__`` made, and Dynamo's guard
on it holds (one compiled frame for three calls, ``test_recompiles_are_what_dynamo_does``).
Before, the hook's store was judged alone, as if it ran after ``forward``, and reported as
PTC501.  Without the final ``clear()`` the entry is left behind and Dynamo recompiles.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_frame_counts, found

SOURCE = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.dec = nn.Linear(4, 4)
        self.captured = {{}}
        {target}.register_forward_hook(self._capture)

    def _capture(self, module, args, out):
        self.captured["enc"] = out

    def forward(self, x):
        self.captured.clear()
        self.enc(x)
        h = self.captured.get("enc", x)
{end}
        return self.dec(h)
"""

STORE_LINE = 14

CASES = {
    "a submodule's hook, cleared before forward returns": ("self.enc", "        self.captured.clear()", []),
    "a submodule's hook, left filled": ("self.enc", "", [(STORE_LINE, "PTC501")]),
}


def _source(target: str, end: str) -> str:
    return SOURCE.format(target=target, end=end)


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_written_by_a_submodule_hook(name):
    target, end, expected = CASES[name]
    assert found(_source(target, end), codes={"PTC501"}) == expected


def test_recompiles_are_what_dynamo_does():
    pytest.importorskip("torch")
    cases = [(_source(target, end), "Net()", "torch.randn(2, 4)") for target, end, _ in CASES.values()]
    # one compiled frame where nothing is left behind; a recompile otherwise
    assert [count == 1 for count in dynamo_frame_counts(cases)] == [not expected for _, _, expected in CASES.values()]
