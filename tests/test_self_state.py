"""Whether a method stores ``self`` state: the memoised walk over its code fields."""

import libcst as cst

from pt2lint.analysis.interp import _scan_self_state, _stores_self_state


def _method(src: str) -> cst.FunctionDef:
    node = cst.parse_module(src).body[0]
    assert isinstance(node, cst.FunctionDef)
    return node


STORES = [
    "def f(self, n):\n    if n:\n        for i in range(n):\n            self.cache[i] = 1\n            self.k = i\n",
    "def f(self):\n    with ctx():\n        try:\n            pass\n        except E:\n            self.n += 1\n",
    "def f(me, t):\n    me.register_buffer('b', t)\n",
    "def f(self):\n    x = [self.add_module('m', y) for y in z]\n",
    "def f(self):\n    self.x: int = 3\n",
]
NEAR_MISSES = [
    "def f(self, other):\n    other.k = 1\n    y = self.k\n",  # another object's attribute, a read of its own
    "def f(self):\n    def g():\n        self.k = 1\n    return g\n",  # a nested function's store
    "def f(self):\n    h = lambda: self.register_buffer('b', 1)\n",  # inside a lambda
    "def f():\n    x = 1\n",  # no first parameter
]


def test_stores_and_near_misses():
    for src in STORES:
        fn = _method(src)
        assert _stores_self_state(fn) is True, src
        assert _stores_self_state(fn) is True, src  # the memoised answer
    for src in NEAR_MISSES:
        fn = _method(src)
        assert _stores_self_state(fn) is False, src
        assert _scan_self_state(fn) is False, src


def test_memo_is_per_node():
    # two different nodes with equal text each get their own answer, never another node's
    a, b = _method(STORES[0]), _method(NEAR_MISSES[0])
    assert (_stores_self_state(a), _stores_self_state(b)) == (True, False)
