"""Does a method leave a ``self`` attribute in the state every call finds it in?

Dynamo guards on the Python state a compiled frame reads from ``self`` at entry (an
int attribute by value, a list or dict by its length and keys).  Mutating that state in
``forward`` fails the guard on the next call only when the state the next call starts
from differs from the one the guard recorded.  Measured on torch 2.13 (``recompiles``
log artifact, a module compiled with ``backend="eager"`` and called four times with
inputs of one shape, and six times with growing batches):

* no recompile when the attribute is assigned before anything reads it in the call
  (``self.p = self.make(x.shape); self.p.update(...)``, ``self.outs = []`` then appends,
  ``self.n = 0`` then ``self.n += 1``): the entry value is never read, so never guarded;
* no recompile when every way out of the call leaves the attribute in the state
  ``__init__`` gave it (``self.hidden[k] = v ... self.hidden.clear()`` with
  ``self.hidden = {}`` in ``__init__``; ``self.hidden = []`` at the end);
* one recompile when ``self.hidden.clear()`` comes first and the call leaves entries
  behind (``clear()`` reads the entry dict, whose guard fails once on call 2), one when
  ``__init__`` fills the dict that forward clears at the end, and one per call when an
  early ``return`` skips the ``clear()``.

:func:`analyse` answers this for one attribute by following the method's statements
(and the methods of the same object it calls) in order.  It is conservative: code it
cannot follow (``self`` handed to another function, the container bound to a local or
passed on, a ``super()`` call it cannot resolve) counts as reading the attribute and
changing it to something unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from pt2lint.analysis.walk import iter_children_in_source_order, walk

# A state of the attribute: still the object the call found (``ENTRY``), reset to a
# known literal (``"lit:0"``, ``"empty:list"``; ``EMPTY`` after ``.clear()``, whose
# container type is not known here), or anything else (``OTHER``).
ENTRY = "entry"
EMPTY = "empty"
OTHER = "other"

_INLINE_DEPTH = 6

#: Methods of a list/dict/set/deque that read the container and change nothing.
_READERS = frozenset(
    "get items keys values copy index count __getitem__ __len__ __contains__ __iter__".split()
)
#: Callables that read a container passed to them and keep no reference to it.
_READING_BUILTINS = frozenset(
    "len list tuple sorted sum min max any all enumerate zip iter reversed dict set frozenset isinstance bool str repr".split()
)
#: Callables that look at the object passed to them without changing its attributes.
_INSPECTING_BUILTINS = frozenset("type isinstance issubclass id callable hasattr".split())
_EMPTY_FACTORIES = frozenset({"dict", "list", "set", "OrderedDict", "deque", "defaultdict"})


@dataclass(frozen=True)
class _St:
    states: FrozenSet[str]
    escaped: bool = False  # another reference to the current object may exist


def _join(a: Optional[_St], b: Optional[_St]) -> Optional[_St]:
    if a is None:
        return b
    if b is None:
        return a
    return _St(a.states | b.states, a.escaped or b.escaped)


def literal_token(node: Optional[cst.BaseExpression]) -> Optional[str]:
    """A token for a constant literal value (``0``, ``"a"``, ``None``, ``[]``, ``dict()``), else None.

    Two assignments with the same token leave the attribute in the same state as far as
    Dynamo's guards go (a value guard on a constant, a length/keys guard on an empty container).
    """
    if node is None:
        return None
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return f"lit:{node.value}"
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return f"lit:-{node.expression.value}"
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return f"lit:{node.value}"
    if isinstance(node, cst.List) and not node.elements:
        return "empty:list"
    if isinstance(node, cst.Dict) and not node.elements:
        return "empty:dict"
    if isinstance(node, cst.Tuple) and not node.elements:
        return "lit:()"
    if isinstance(node, cst.Call):
        fn = node.func
        name = fn.value if isinstance(fn, cst.Name) else fn.attr.value if isinstance(fn, cst.Attribute) else None
        maxlen_only = name == "deque" and all(a.keyword is not None and a.keyword.value == "maxlen" for a in node.args)
        if name in _EMPTY_FACTORIES and (not node.args or maxlen_only or (name == "defaultdict" and len(node.args) == 1)):
            return f"empty:{name}"  # (``deque(maxlen=4)``: an empty deque)
    return None


def _matches(state: str, init: str) -> bool:
    return state == init or (state == EMPTY and init.startswith("empty:"))


@dataclass
class Verdict:
    """What :func:`analyse` found for one attribute of one method.

    ``entry_read``: some path reads (or mutates in place) the value the call found.
    ``exit_states``: the attribute's possible states where the method returns.
    ``seen``: ids of the nodes of the statements followed that touch the attribute (to
    tell whether an event's node was part of this analysis).
    """

    entry_read: bool = False
    exit_states: FrozenSet[str] = frozenset()
    seen: set = field(default_factory=set)
    keep: list = field(default_factory=list)  # the nodes analysed, so that ``seen``'s ids stay theirs

    def stable(self, init: Optional[str]) -> bool:
        """Every call finds the attribute in one state: the call never reads the value it finds
        (it assigns the attribute first), or every exit leaves the state ``init`` (the one
        ``__init__`` sets, see :func:`init_token`) or the one the call found."""
        if not self.entry_read:
            return True
        if init is None:
            return False
        return all(s == ENTRY or _matches(s, init) for s in self.exit_states)


class _Analysis:
    def __init__(self, attr: str, cls, written_by: Optional[str] = None, truth=None) -> None:
        self.attr = attr
        self.cls = cls
        self.written_by = written_by  # a submodule attribute whose calls write it ("*": any submodule)
        self.truth = truth  # (test, module) -> its value while Dynamo traces, or None
        self.modules: List[object] = []  # the module of each method being followed
        self.v = Verdict()
        self.returns: Optional[List[_St]] = None
        self.loops: List[Tuple[List[_St], List[_St]]] = []
        self.active: List[cst.FunctionDef] = []
        self.owner: List[object] = []  # the class defining each method being followed
        self.self_name: List[str] = []

    # ------------------------------------------------------------- helpers
    def _target(self, node) -> bool:
        return (
            isinstance(node, cst.Attribute) and node.attr.value == self.attr
            and isinstance(node.value, cst.Name) and bool(self.self_name) and node.value.value == self.self_name[-1]
        )

    def _is_self(self, node) -> bool:
        return isinstance(node, cst.Name) and bool(self.self_name) and node.value == self.self_name[-1]

    def _read(self, st: _St) -> None:
        if ENTRY in st.states:
            self.v.entry_read = True

    def _unknown(self, st: _St) -> _St:
        """Code that may read and change the attribute in ways not followed."""
        self._read(st)
        return _St(frozenset({OTHER}), True)

    def _mentions(self, node) -> bool:
        return any(self._target(n) or self._is_self(n) for n in walk(node))

    def _method(self, name: str, after=None):
        """The method ``name`` of the analysed class (the first class after ``after`` in its MRO)."""
        if self.cls is None:
            return None
        mro = self.cls.mro()
        if after is not None:
            mro = mro[mro.index(after) + 1:] if after in mro else []
        for c in mro:
            fn = c.methods.get(name)
            if fn is not None:
                return fn
        return None

    # ---------------------------------------------------------- functions
    def function(self, fn_info, st: _St, root: bool) -> _St:
        node = fn_info.node
        if not isinstance(node, cst.FunctionDef) or not node.params.params:
            return self._unknown(st)
        # a generator or coroutine: its body runs later, when it is iterated or awaited, so it is
        # followed here only to see that it leaves the attribute alone (then where it runs does
        # not matter); one that touches it may read and change it at any later point
        deferred = any(isinstance(n, (cst.Yield, cst.Await)) for n in walk(node.body, into_functions=False))
        if deferred and root:
            return self._unknown(st)
        saved = self.returns, self.loops
        self.returns, self.loops = [], []
        self.active.append(node)
        self.owner.append(fn_info.cls)
        self.modules.append(getattr(fn_info, "module", None))
        self.self_name.append(node.params.params[0].name.value)
        self.v.keep.append(node)
        try:
            end = self.block(node.body.body, st)
            outs = self.returns + ([end] if end is not None else [])
        finally:
            self.returns, self.loops = saved
            self.active.pop()
            self.owner.pop()
            self.modules.pop()
            self.self_name.pop()
        if root:
            self.v.exit_states = frozenset().union(*(o.states for o in outs)) if outs else frozenset()
        joined = None
        for o in outs:
            joined = _join(joined, o)
        if deferred:
            return st if joined == st or (joined is None and not outs) else self._unknown(st)
        return joined if joined is not None else _St(frozenset({OTHER}), True)

    def _inline(self, fn_info, st: _St) -> _St:
        if fn_info is None or any(n is fn_info.node for n in self.active) or len(self.active) >= _INLINE_DEPTH:
            return self._unknown(st)
        return self.function(fn_info, st, root=False)

    # ---------------------------------------------------------- statements
    def block(self, stmts, st: Optional[_St]) -> Optional[_St]:
        for s in stmts:
            if st is None:
                return None  # unreachable
            st = self.stmt(s, st)
        return st

    def stmt(self, s, st: _St) -> Optional[_St]:
        if isinstance(s, cst.SimpleStatementLine):
            return self.block(s.body, st)
        if isinstance(s, cst.If):
            st = self.expr(s.test, st)
            known = self._truth(s.test)
            a = self.block(s.body.body, st) if known is not False else None
            if known is True:
                return a
            b = st if s.orelse is None else self.stmt(s.orelse, st) if isinstance(s.orelse, cst.If) else self.block(s.orelse.body.body, st)
            return _join(a, b)
        if isinstance(s, (cst.For, cst.While)):
            return self.loop(s, st)
        if isinstance(s, cst.With):
            for item in s.items:
                st = self.expr(item.item, st)
                if item.asname is not None:
                    st = self.store(item.asname.name, None, st)
            return self.block(s.body.body, st)
        if isinstance(s, cst.Try):
            body = self.block(s.body.body, st)
            start = _join(st, body)
            if self._mentions(s.body):  # an exception may leave the body anywhere, after any change
                start = _join(start, _St(frozenset({OTHER}), st.escaped))
            out = self.block(s.orelse.body.body, body) if s.orelse is not None else body
            for h in s.handlers:
                out = _join(out, self.block(h.body.body, start))
            if s.finalbody is not None:
                out = self.block(s.finalbody.body.body, out if out is not None else start)
            return out
        if isinstance(s, cst.Return):
            if s.value is not None:
                st = self.expr(s.value, st)
            self.returns.append(st)
            return None
        if isinstance(s, cst.Raise):
            return None  # the call fails: not a way out a next call starts from
        if isinstance(s, (cst.Break, cst.Continue)):
            if self.loops:
                self.loops[-1][0 if isinstance(s, cst.Break) else 1].append(st)
            return None
        if isinstance(s, (cst.Assign, cst.AnnAssign)):
            if s.value is not None:
                st = self.expr(s.value, st)
            targets = [t.target for t in s.targets] if isinstance(s, cst.Assign) else [s.target]
            for t in targets:
                st = self.store(t, s.value, st)
            self._note(s)
            return st
        if isinstance(s, cst.AugAssign):
            st = self.expr(s.value, st)
            if self._target(s.target) or (isinstance(s.target, cst.Subscript) and self._target(s.target.value)):
                self._read(st)
                st = _St(frozenset({OTHER}), st.escaped)
                if isinstance(s.target, cst.Subscript):
                    st = self._slices(s.target, st)
            else:
                st = self.expr(s.target, st)
            self._note(s)
            return st
        if isinstance(s, cst.Del):
            for t in walk(s.target):
                if self._target(t):
                    self._read(st)
                    st = _St(frozenset({OTHER}), st.escaped)
            self._note(s)
            return st
        if isinstance(s, cst.Expr):
            st = self.expr(s.value, st)
            self._note(s)
            return st
        if isinstance(s, (cst.Pass, cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)):
            return st
        if isinstance(s, cst.Assert):
            return self.expr(s.test, st)
        # nested def/class, match and anything else: followed only when it cannot touch the attribute
        if self._mentions(s):
            self._note(s)
            return self._unknown(st)
        return st

    def _truth(self, test) -> Optional[bool]:
        """The value ``test`` has while Dynamo traces (``if is_exporting(): return`` is False under
        ``torch.compile``: the code after it runs), when the caller's ``truth`` decides it."""
        if self.truth is None or not self.modules:
            return None
        return self.truth(test, self.modules[-1])

    def _note(self, s) -> None:
        if any(self._target(n) for n in walk(s)):
            self.v.seen.update(id(n) for n in walk(s))

    def loop(self, s, st: _St) -> Optional[_St]:
        head = st
        after: Optional[_St] = None
        for _ in range(4):  # states only grow: a fixed point comes within a few passes
            if isinstance(s, cst.For):
                cur = self._read_only(s.iter, head)
                cur = self.store(s.target, None, cur)
            else:
                cur = self.expr(s.test, head)
            after = cur  # the test fails / the iterator is exhausted
            self.loops.append(([], []))
            end = self.block(s.body.body, cur)
            breaks, continues = self.loops.pop()
            nxt = head
            for x in [end] + continues:
                nxt = _join(nxt, x)
            for b in breaks:
                after = _join(after, b)
            if nxt == head:
                break
            head = nxt
        if s.orelse is not None:
            after = _join(after, self.block(s.orelse.body.body, after))
        return after

    def store(self, t, value, st: _St) -> _St:
        if self._target(t):
            tok = literal_token(value)
            fresh = value is not None and (tok is not None or isinstance(
                value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.Tuple)
            ))
            return _St(frozenset({tok or OTHER}), not fresh)
        if isinstance(t, cst.Subscript) and self._target(t.value):
            self._read(st)
            return self._slices(t, _St(frozenset({OTHER}), st.escaped))
        if isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                st = self.store(el.value, None, st)
            return st
        if isinstance(t, cst.StarredElement):
            return self.store(t.value, None, st)
        if isinstance(t, cst.Name):
            return st
        return self.expr(t, st)

    def _slices(self, sub: cst.Subscript, st: _St) -> _St:
        for el in sub.slice:
            st = self.expr(el.slice, st)
        return st

    # --------------------------------------------------------- expressions
    def expr(self, e, st: _St) -> _St:
        if self._target(e):
            return self._unknown(st)  # the container itself handed on (bound, passed, returned)
        if self._is_self(e):
            return self._unknown(st)  # ``self`` handed to code not followed
        if isinstance(e, cst.Call):
            return self.call(e, st)
        if isinstance(e, cst.Subscript) and self._target(e.value):
            self._read(st)
            return self._slices(e, st)
        if isinstance(e, cst.Attribute) and self._target(e.value):
            self._read(st)  # ``self.cache.maxlen``
            return st
        if isinstance(e, cst.Attribute) and self._is_self(e.value):
            return st  # another attribute of self
        if isinstance(e, cst.Comparison):
            st = self._read_only(e.left, st)
            for c in e.comparisons:
                st = self._read_only(c.comparator, st)
            return st
        if isinstance(e, cst.IfExp):
            st = self.expr(e.test, st)
            return _join(self.expr(e.body, st), self.expr(e.orelse, st))
        if isinstance(e, cst.BooleanOperation):
            st = self.expr(e.left, st)
            return _join(st, self.expr(e.right, st))
        if isinstance(e, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            return self._unknown(st) if self._mentions(e) else st
        if isinstance(e, (cst.CompFor,)):
            st = self._read_only(e.iter, st)
            st = self.store(e.target, None, st)
            for i in e.ifs:
                st = self.expr(i.test, st)
            return self.expr(e.inner_for_in, st) if e.inner_for_in is not None else st
        for c in iter_children_in_source_order(e):
            st = self.expr(c, st)
        return st

    def _read_only(self, e, st: _St) -> _St:
        """``e`` is read where no reference to it is kept (``k in c``, ``len(c)``, ``for v in c``)."""
        if self._target(e):
            self._read(st)
            self.v.seen.add(id(e))  # (``len(self.outs)``: a read PTC506 asks about)
            return st
        return self.expr(e, st)

    def call(self, e: cst.Call, st: _St) -> _St:
        fn = e.func
        # ``self.cache.clear()``, ``self.cache.append(x)``, ``self.cache.get(k)``
        if isinstance(fn, cst.Attribute) and self._target(fn.value):
            for a in e.args:
                st = self.expr(a.value, st)
            self._read(st)
            self.v.seen.add(id(e))
            m = fn.attr.value
            if m == "clear":
                return _St(frozenset({OTHER if st.escaped else EMPTY}), st.escaped)
            if m in _READERS:
                return st
            return _St(frozenset({OTHER}), st.escaped)
        if isinstance(fn, cst.Attribute) and isinstance(fn.value, cst.Subscript) and self._target(fn.value.value):
            # ``self.stats[k].append(x)``: an entry changed in place (a reader leaves it as it was)
            st = self.expr(fn.value, st)
            for a in e.args:
                st = self.expr(a.value, st)
            self.v.seen.add(id(e))
            return st if fn.attr.value in _READERS else _St(frozenset({OTHER}), st.escaped)
        reading = (isinstance(fn, cst.Name) and fn.value in _READING_BUILTINS) or _torch_function(fn)
        if not reading:
            st = self.expr(fn, st) if not (isinstance(fn, cst.Attribute) and (self._is_self(fn.value) or _is_super(fn.value))) else st
        inspects = isinstance(fn, cst.Name) and fn.value in _INSPECTING_BUILTINS
        for a in e.args:
            if inspects and self._is_self(a.value):
                if fn.value == "hasattr":
                    self._read(st)
                continue  # ``type(self)``, ``isinstance(self, C)``: no attribute changes
            st = self._read_only(a.value, st) if reading else self.expr(a.value, st)
        if isinstance(fn, cst.Attribute) and self._is_self(fn.value):
            name = fn.attr.value
            method = self._method(name)
            if method is not None:
                return self._inline(method, st)
            if self.written_by in ("*", name):
                # a hook of the submodule writes the attribute in place while it runs
                self._read(st)
                return _St(frozenset({OTHER}), st.escaped)
            return st  # a submodule or a callable attribute: another object
        if isinstance(fn, cst.Attribute) and _is_super(fn.value):
            owner = self.owner[-1] if self.owner else None
            method = self._method(fn.attr.value, after=owner) if owner is not None else None
            return self._inline(method, st)
        return st


def _is_super(node) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"


def _torch_function(fn) -> bool:
    """``torch.stack``, ``torch.nn.functional.pad``: a torch function keeps no reference to a list argument."""
    while isinstance(fn, cst.Attribute):
        fn = fn.value
    return isinstance(fn, cst.Name) and fn.value == "torch"


def analyse(fn_info, attr: str, cls, written_by: Optional[str] = None, truth=None) -> Verdict:
    """Follow ``fn_info`` (a method of ``cls``, the class of the object it runs on) for the
    attribute ``self.<attr>``: whether a path reads the value the call found, and the states
    the paths out of the method leave it in.  The facts it encodes are the torch 2.13
    measurements in this module's docstring (rules/PTC501-module-state-mutation.toml).
    ``written_by``: the ``self`` attribute of a submodule each call of which (``self.enc(x)``)
    changes the attribute in place (a hook registered on it writes it); ``"*"`` for any submodule.
    ``truth(test, module)``: the value an ``if`` test of ``module`` has while Dynamo traces
    (``True``/``False``), ``None`` when undecided; only the arm it selects is followed."""
    a = _Analysis(attr, cls, written_by, truth)
    a.function(fn_info, _St(frozenset({ENTRY})), root=True)
    return a.v


def init_token(cls, attr: str) -> Optional[str]:
    """The literal state ``__init__`` leaves ``self.<attr>`` in (see :func:`literal_token`), when every
    ``__init__`` of the class's MRO that mentions it only assigns it that one literal; else None."""
    tokens = set()
    for c in cls.mro():
        init = c.methods.get("__init__")
        node = getattr(init, "node", None)
        if not isinstance(node, cst.FunctionDef) or not node.params.params:
            continue
        me = node.params.params[0].name.value
        assigned = set()
        for n in walk(node.body):
            if isinstance(n, (cst.Assign, cst.AnnAssign)):
                targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, cst.Attribute) and t.attr.value == attr and isinstance(t.value, cst.Name) and t.value.value == me:
                        tokens.add(literal_token(n.value))
                        assigned.add(id(t))
        for n in walk(node.body):
            if isinstance(n, cst.Attribute) and n.attr.value == attr and isinstance(n.value, cst.Name) and n.value.value == me and id(n) not in assigned:
                return None  # read or changed after it is set
    if len(tokens) != 1:
        return None
    return next(iter(tokens))


def state_stable(memo: Dict, fn_info, cls, attr: str, node, truth=None) -> bool:
    """Whether a state write at ``node`` into ``self.<attr>``, made while ``fn_info`` runs on an
    instance of ``cls``, leaves every call of ``fn_info`` starting from the same state (see
    :meth:`Verdict.stable`); ``memo`` caches one verdict per (method, class, attribute).
    ``truth``: see :func:`analyse` (one per ``memo``)."""
    key = (id(fn_info), id(cls), attr)
    hit = memo.get(key)
    if hit is None:
        hit = (fn_info, cls, analyse(fn_info, attr, cls, truth=truth), init_token(cls, attr))
        memo[key] = hit
    verdict, init = hit[2], hit[3]
    return id(node) in verdict.seen and verdict.stable(init)


def state_stable_through_submodules(memo: Dict, fn_info, cls, attr: str, written_by: str = "*", truth=None) -> bool:
    """Whether ``fn_info`` (a ``forward``) leaves ``self.<attr>`` in the state every call finds it
    in when the attribute is written by a hook of the submodule ``self.<written_by>`` (``"*"``: of
    any submodule), that is in place at each call of it (``self.captured[name] = out`` in a forward hook of ``self.enc``, with
    ``self.captured.clear()`` before ``forward`` returns: no recompile, measured on torch 2.13);
    ``memo`` caches one verdict per (method, class, attribute); ``truth``: see :func:`analyse`."""
    key = (id(fn_info), id(cls), attr, "written by", written_by)
    hit = memo.get(key)
    if hit is None:
        hit = (fn_info, cls, analyse(fn_info, attr, cls, written_by=written_by, truth=truth), init_token(cls, attr))
        memo[key] = hit
    return hit[2].stable(hit[3])
