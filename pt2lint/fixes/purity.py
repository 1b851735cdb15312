"""Can a block of statements become a ``torch.cond`` branch function without changing what it does?

A branch function of ``torch.cond`` is traced in full (a graph break inside it is
an error) and must not have side effects: Dynamo rejects mutation of its inputs
and of outer state, and in eager mode only the chosen branch's *values* reach
the caller.  :class:`BranchChecker` walks the statements and refuses
(:class:`~pt2lint.fixes.context.Refuse`) on:

* any finding of any rule inside the block, or inside a project function that
  the block calls (print, logging, ``.item()``, a nested data-dependent ``if``,
  input mutation, module-state mutation, ...): the finding's own message is the
  reason.  The function may be in this file or imported from another project file
  (the facts follow imports as the rules do); a message about one of another file
  names that file;
* ``yield``, ``await``, ``break``/``continue`` out of the block, ``raise``,
  ``assert``, ``global``/``nonlocal``, ``del``, ``import``, ``try``, ``with``,
  ``class``;
* assignments to attributes (``self.x = ...``), in-place writes
  (``x.add_()``, ``x += y`` on a tensor, ``x[i] = v``, ``out=``, ``inplace=True``)
  to anything not created inside the block, and container mutation
  (``cache.append``) of containers from outside;
* in a project function that the block calls: any of the above on an object
  the function did not create itself -- its parameters, ``self``, a global
  (``CACHE.append(t)``, ``STATS["n"] += 1``, ``TOTAL.add_(t)``) or a variable of an
  enclosing function (``seen[0] = 1``).

* a call of a ``torch.nn`` module that writes its buffers in train mode
  (``BatchNorm*``, ``SyncBatchNorm``: running statistics; lazy modules: their
  parameters), as measured by ``tools/gen_dynamo_facts.py`` (the ``nn_modules``
  table), unless every construction of that attribute in the class passes the
  keyword that stops the writes (``track_running_stats=False``); an ``nn.Sequential`` /
  ``nn.ModuleList`` built from literal ``torch.nn`` constructions is judged by its
  members.  torch 2.13's
  ``torch.cond`` rejects the buffer mutation in eager and compiled mode alike
  (measured in ``tests/test_fix_cond_safety.py``); a project module's ``forward``
  is checked as a called function (no ``self.x = ...``, no in-place writes).

Calls it cannot see into (a library function, an unknown callable, a ``torch.nn``
class the table has not measured) do not refuse, but are listed in
:attr:`BranchChecker.unverified` so the fix is marked unsafe; random ops are listed
in :attr:`BranchChecker.random`.

:func:`side_effect` answers the narrower question the ``guard`` codemod asks of an
expression that compiled code would skip: can evaluating it change anything?
"""

from __future__ import annotations

import os
from typing import Callable, Dict, List, Optional, Sequence, Set

import libcst as cst

from pt2lint.analysis import torch_api as api
from pt2lint.analysis.dynamo_facts import module_state
from pt2lint.analysis.index import ClassInfo, FunctionInfo
from pt2lint.analysis.kinds import Kind
from pt2lint.analysis.walk import walk
from pt2lint.fixes.context import FixContext, Refuse
from pt2lint.analysis.names import bound_names, target_names

PURE_BUILTINS = frozenset(
    """len min max abs range enumerate zip tuple list dict set frozenset isinstance issubclass hasattr getattr
    round sum any all sorted reversed type divmod pow map filter iter next str repr format slice super int float
    bool complex callable""".split()
)
RANDOM_FUNCTIONS = frozenset(
    """rand rand_like randn randn_like randint randint_like randperm bernoulli multinomial normal poisson
    dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout gumbel_softmax rrelu
    native_dropout""".split()
)
RANDOM_MODULES = frozenset("Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout RReLU".split())
# Ops whose result's size depends on tensor values (torch 2.13: unbacked sizes under torch.cond).
DATA_DEPENDENT_SHAPE = frozenset("nonzero argwhere unique unique_consecutive masked_select nonzero_static_ bincount".split())
VIEW_LIKE_FUNCTIONS = frozenset(
    """reshape view_as_real view_as_complex squeeze unsqueeze transpose permute t narrow select flatten unflatten
    movedim moveaxis swapaxes swapdims diagonal as_strided chunk split unbind tensor_split expand_copy
    broadcast_to detach atleast_1d atleast_2d atleast_3d ravel real imag""".split()
)
# Methods that may hand back their receiver (or a view of it) unchanged.
MAY_ALIAS_METHODS = api.VIEW_METHODS | frozenset(
    "float double half bfloat16 int long bool short byte char type cpu cuda to type_as contiguous detach expand broadcast_to".split()
)


def may_alias(expr: cst.BaseExpression, fresh: Set[str]) -> bool:
    """Whether ``expr`` may be (a view of) a tensor that existed before the block: a name not created
    in the block, an attribute (``self.weight``, ``x.T``), a basic index, a view or no-op cast of one.
    ``torch.cond`` rejects branch outputs that alias its inputs."""
    if isinstance(expr, cst.Name):
        return expr.value not in fresh
    if isinstance(expr, cst.Attribute):
        return True
    if isinstance(expr, cst.Subscript):
        return may_alias(expr.value, fresh)
    if isinstance(expr, cst.IfExp):
        return may_alias(expr.body, fresh) or may_alias(expr.orelse, fresh)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in MAY_ALIAS_METHODS:
            return may_alias(func.value, fresh)
        if isinstance(func, cst.Attribute) and func.attr.value in VIEW_LIKE_FUNCTIONS and expr.args:
            return may_alias(expr.args[0].value, fresh)
        return False
    return False


def is_new_tensor(expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` computes a new tensor, not (a view of, or another name for) an existing one:
    ``b = a`` or ``b = a.view(...)`` make ``b`` share ``a``'s storage, and ``torch.cond`` rejects
    outputs that alias each other as well as outputs that alias inputs."""
    return not may_alias(expr, set()) and not isinstance(expr, (cst.Tuple, cst.List))


def _enclosing_dependent(node: cst.CSTNode) -> str:
    """The name of a construct whose meaning depends on the function it is written in (and so changes
    when the code moves into a nested function), or ``""``: zero-argument ``super()`` (it reads the
    ``__class__`` cell and the first argument; measured: ``TypeError`` in a nested function),
    ``__class__``, and argument-less ``locals()`` / ``vars()`` / ``dir()``."""
    if isinstance(node, cst.Name) and node.value == "__class__":
        return "`__class__`"
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Name):
        if node.func.value in ("super", "locals", "vars", "dir"):
            return f"`{node.func.value}()`"
    return ""


def declared_names(func: cst.FunctionDef) -> Set[str]:
    """The names ``func`` declares ``global`` or ``nonlocal`` in its own body (not in nested
    functions or classes)."""
    return {
        item.name.value
        for n in walk(func.body, into_functions=False) if isinstance(n, (cst.Global, cst.Nonlocal))
        for item in n.names
    }


class BranchChecker:
    """Checks blocks of one function for what a ``torch.cond`` branch may not do.

    Args:
        ctx: the file's context.
        self_names: names bound to the method's ``self`` (closures over it are fine).
    """

    def __init__(self, ctx: FixContext, self_names: Set[str]) -> None:
        self.ctx = ctx
        self.self_names = self_names
        self.unverified: List[str] = []
        self.random: List[str] = []
        self._checked_functions: Set[int] = set()
        self._finding_nodes = None
        self.fresh_at: Dict[int, Set[str]] = {}  # id(Return) -> names holding fresh tensors there
        self.shapes: List[str] = []  # data-dependent shapes and computed indices (unsafe)
        self.zero_dim: Optional[Callable[[cst.BaseExpression], bool]] = None  # proves an index is 0-d
        #: names the function declares ``global`` or ``nonlocal``: a branch function that binds
        #: one binds a local of its own instead, and the write is lost
        self.declared: Set[str] = set()

    # ------------------------------------------------------------ findings
    def _findings_by_node(self):
        """``id(node) -> findings`` of the file, built once per file (a checker is made per
        branch, so building it per checker was quadratic in the number of findings)."""
        if self._finding_nodes is None:
            key = ("purity", "findings-by-node")
            index = self.ctx.cache.get(key)
            if index is None:
                index = {}
                from pt2lint.specs import load_specs

                specs = load_specs()
                for f in self.ctx.facts.findings:
                    spec = specs.get(f.code)
                    if spec is not None and spec.category == "sync":
                        continue  # a host sync costs speed but traces (in a torch.cond branch too)
                    index.setdefault(id(f.node), []).append(f)
                self.ctx.cache[key] = index
            self._finding_nodes = index
        return self._finding_nodes

    def _refuse_findings(self, roots: Sequence[cst.CSTNode], where: str) -> None:
        index = self._findings_by_node()
        for root in roots:
            for n in walk(root):
                found = index.get(id(n))
                if found:
                    f = found[0]
                    raise Refuse(f"{where} has {f.code}: {f.message.split(':')[0]}")

    # ------------------------------------------------------------ the block
    def check(self, stmts: Sequence[cst.BaseStatement], *, allow_return: bool, fresh: Optional[Set[str]] = None, where: str = "a branch") -> None:
        """Refuse when ``stmts`` cannot run as a branch function.

        Args:
            stmts: the block's statements.
            allow_return: ``return`` is allowed (both branches return).
            fresh: names already known to hold tensors created in the block.
            where: how to name the block in messages.

        Raises:
            Refuse: with the first reason found.
        """
        self._refuse_findings(stmts, where)
        for name in bound_names(stmts):
            if name in self.declared:
                raise Refuse(
                    f"{where} binds `{name}`, which the function declares `global` or `nonlocal`: in a branch "
                    "function the name would be a local of its own and the write would be lost"
                )
        fresh = set() if fresh is None else fresh
        for stmt in stmts:
            self._stmt(stmt, allow_return, fresh, loop_depth=0, where=where)

    def _stmt(self, stmt: cst.CSTNode, allow_return: bool, fresh: Set[str], loop_depth: int, where: str) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._small(small, allow_return, fresh, loop_depth, where)
            return
        if isinstance(stmt, cst.If):
            self._expr(stmt.test, fresh, where)
            self._block(stmt.body, allow_return, fresh, loop_depth, where)
            orelse = stmt.orelse
            while isinstance(orelse, cst.If):
                self._expr(orelse.test, fresh, where)
                self._block(orelse.body, allow_return, fresh, loop_depth, where)
                orelse = orelse.orelse
            if orelse is not None:
                self._block(orelse.body, allow_return, fresh, loop_depth, where)
            return
        if isinstance(stmt, (cst.For, cst.While)):
            if isinstance(stmt, cst.For):
                if stmt.asynchronous is not None:
                    raise Refuse(f"{where} has `async for`")
                self._expr(stmt.iter, fresh, where)
                for name in target_names(stmt.target):
                    fresh.discard(name.value)
            else:
                self._expr(stmt.test, fresh, where)
            self._block(stmt.body, allow_return, fresh, loop_depth + 1, where)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body, allow_return, fresh, loop_depth, where)
            return
        if isinstance(stmt, cst.FunctionDef):
            if stmt.decorators or stmt.asynchronous is not None:
                raise Refuse(f"{where} defines a decorated or async function")
            inner = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
            for s in inner:  # e.g. the branch functions of a torch.cond rewritten earlier
                self._stmt(s, True, set(), 0, f"`{stmt.name.value}` in {where}")
            fresh.discard(stmt.name.value)
            return
        kind = {
            cst.With: "`with`", cst.Try: "`try`", cst.ClassDef: "a class definition",
        }.get(type(stmt), type(stmt).__name__)
        raise Refuse(f"{where} has {kind}")

    def _block(self, block, allow_return, fresh, loop_depth, where) -> None:
        if isinstance(block, cst.SimpleStatementSuite):
            for small in block.body:
                self._small(small, allow_return, fresh, loop_depth, where)
        else:
            for s in block.body:
                self._stmt(s, allow_return, fresh, loop_depth, where)

    def _small(self, small: cst.CSTNode, allow_return: bool, fresh: Set[str], loop_depth: int, where: str) -> None:
        if isinstance(small, cst.Assign):
            self._expr(small.value, fresh, where)
            for t in small.targets:
                self._store(t.target, small.value, fresh, where)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._expr(small.value, fresh, where)
                self._store(small.target, small.value, fresh, where)
        elif isinstance(small, cst.AugAssign):
            self._expr(small.value, fresh, where)
            target = small.target
            if isinstance(target, cst.Name):
                v = self.ctx.facts.value(target)
                if (v is None or v.kind is Kind.TENSOR) and target.value not in fresh:
                    raise Refuse(f"{where} updates `{target.value}` in place (`{target.value} {_aug(small)}`), and `{target.value}` comes from outside the branch")
            else:
                self._store(target, small.value, fresh, where, augmented=True)
        elif isinstance(small, cst.Expr):
            value = small.value
            if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
                return
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and api.is_inplace_method(value.func.attr.value):
                self._expr(value, fresh, where)  # the in-place check happens there
                return
            raise Refuse(f"{where} evaluates `{_code(self.ctx, value)}` for its side effect")
        elif isinstance(small, cst.Return):
            if not allow_return:
                raise Refuse(f"{where} returns while the other falls through")
            self.fresh_at[id(small)] = set(fresh)
            if small.value is not None:
                self._expr(small.value, fresh, where)
        elif isinstance(small, cst.Pass):
            return
        elif isinstance(small, (cst.Break, cst.Continue)):
            if loop_depth == 0:
                raise Refuse(f"{where} has `{'break' if isinstance(small, cst.Break) else 'continue'}`")
        else:
            names = {
                cst.Raise: "`raise`", cst.Assert: "`assert`", cst.Global: "`global`", cst.Nonlocal: "`nonlocal`",
                cst.Del: "`del`", cst.Import: "`import`", cst.ImportFrom: "`import`",
            }
            raise Refuse(f"{where} has {names.get(type(small), type(small).__name__)}")

    def _store(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression], fresh: Set[str], where: str, augmented: bool = False) -> None:
        if isinstance(target, cst.Name):
            if value is not None and is_new_tensor(value):
                fresh.add(target.value)
            else:
                fresh.discard(target.value)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._store(el.value, None, fresh, where)
            return
        if isinstance(target, cst.StarredElement):
            self._store(target.value, None, fresh, where)
            return
        if isinstance(target, cst.Attribute):
            raise Refuse(f"{where} assigns `{_code(self.ctx, target)}` (a side effect on an object outside the branch)")
        if isinstance(target, cst.Subscript):
            base = target.value
            self._expr(base, fresh, where)
            for el in target.slice:
                self._expr(el.slice, fresh, where)
            if not (isinstance(base, cst.Name) and base.value in fresh):
                raise Refuse(f"{where} writes into `{_code(self.ctx, base)}[...]` in place, and it comes from outside the branch")
            return
        raise Refuse(f"{where} assigns to `{_code(self.ctx, target)}`")

    # ------------------------------------------------------------ expressions
    def _expr(self, node: cst.CSTNode, fresh: Set[str], where: str) -> None:
        for n in walk(node):
            if isinstance(n, (cst.Yield, cst.Await)):
                raise Refuse(f"{where} has `{'yield' if isinstance(n, cst.Yield) else 'await'}`")
            enclosing = _enclosing_dependent(n)
            if enclosing:
                raise Refuse(
                    f"{where} uses {enclosing}, whose meaning depends on the enclosing function: in a nested branch "
                    f"function it refers to another frame or raises"
                )
            if isinstance(n, cst.NamedExpr):
                for name in target_names(n.target):
                    fresh.discard(name.value)
            if isinstance(n, cst.Call):
                self._call(n, fresh, where)
                self._shape_call(n, where)
            elif isinstance(n, cst.Subscript):
                self._index(n, where)

    def _index(self, node: cst.Subscript, where: str) -> None:
        """Totality of ``x[i]`` in a branch that torch.cond traces for every input.

        Measured on torch 2.13 (``tests/test_fix_cond_safety.py``): a 0-d integer tensor index
        is read into Python while tracing ("Could not extract specialized integer from
        data-dependent expression"), so the rewrite raises for every input: refused.  A boolean
        mask gives a data-dependent size, and a computed integer index can be out of range for
        the inputs of the branch the original did not take: unsafe.  (torch 2.13 checks a masked
        size against the tensors it meets at run time, in the branch that runs; the rewrite of a
        masked branch ran in every case measured, but its totality is not proven.)
        """
        for el in node.slice:
            if not isinstance(el.slice, cst.Index):
                continue
            index = el.slice.value
            v = self.ctx.facts.value(index)
            if v is None or v.kind is not Kind.TENSOR:
                continue
            text = _code(self.ctx, node)
            if v.bool_tensor:
                self.shapes.append(f"`{text}` in {where} is boolean-mask indexing: its size depends on data, and pt2lint cannot prove the branch valid for the inputs of another branch (torch.cond traces every branch)")
                continue
            if self.zero_dim is not None and self.zero_dim(index):
                raise Refuse(
                    f"{where} indexes with the 0-d tensor `{_code(self.ctx, index)}`; torch.cond reads it into Python while "
                    f"tracing the branch and raises (data-dependent index), for every input"
                )
            self.shapes.append(f"`{text}` in {where} indexes with a tensor, which may be out of range for the inputs of another branch (torch.cond traces every branch)")

    def _shape_call(self, call: cst.Call, where: str) -> None:
        """``nonzero``/``unique``/``masked_select``-style calls: their result's size depends on data."""
        func = call.func
        ev = self.ctx.facts.calls.get(id(call))
        q = ev.qualname if ev is not None else None
        name = q.rsplit(".", 1)[-1] if q is not None and q.startswith("torch.") else (
            func.attr.value if isinstance(func, cst.Attribute) and ev is not None and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR else None
        )
        if name in DATA_DEPENDENT_SHAPE:
            self.shapes.append(f"`{_code(self.ctx, call)}` in {where} has a data-dependent size")
        elif name in ("view", "reshape") and any(_literal_size(a.value) for a in call.args if a.keyword is None):
            # measured on torch 2.13: `x.view(2, -1)` in a branch, traced with inputs of 3 rows,
            # raises ("RuntimeError when making fake tensor call") whichever branch the input takes
            self.shapes.append(
                f"`{_code(self.ctx, call)}` in {where} has literal sizes, valid for some shapes only; torch.cond traces every "
                f"branch with the inputs of the one taken and raises where they do not fit"
            )

    def _call(self, call: cst.Call, fresh: Set[str], where: str) -> None:
        ctx = self.ctx
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                raise Refuse(f"{where} writes through `out=`")
            if arg.keyword is not None and arg.keyword.value == "inplace" and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
                first = call.args[0].value if call.args else None
                if not (isinstance(first, cst.Name) and first.value in fresh):
                    raise Refuse(f"{where} calls `{_code(ctx, call.func)}` with `inplace=`")
        ev = ctx.facts.calls.get(id(call))
        func = call.func
        label = _code(ctx, func)
        if ev is None:
            self.unverified.append(label)
            return
        if isinstance(func, cst.Attribute) and api.is_inplace_method(func.attr.value) and ev.qualname is None:
            recv = func.value
            if not (isinstance(recv, cst.Name) and recv.value in fresh):
                raise Refuse(f"{where} calls `{_code(ctx, call)}`, an in-place write to a tensor from outside the branch")
            return
        q = ev.qualname
        if q is not None:
            if q.startswith("builtins."):
                name = q[len("builtins."):]
                if name not in PURE_BUILTINS:
                    raise Refuse(f"{where} calls `{name}()`")
                return
            if q.startswith("torch."):
                last = q.rsplit(".", 1)[-1]
                if api.is_inplace_method(last) and not last.startswith("__"):
                    raise Refuse(f"{where} calls `{q}`, an in-place function")
                if last in RANDOM_FUNCTIONS:
                    self.random.append(q)
                if q.startswith("torch.nn.") and last in RANDOM_MODULES:
                    self.random.append(q)
                return
            if q.startswith(("math.", "operator.")) and not q.startswith(("operator.i", "operator.set", "operator.del")):
                return
            if q in api.THIRD_PARTY_TENSOR_FUNCTIONS:
                return
            self.unverified.append(q)
            return
        callee = ev.callee
        if isinstance(callee, FunctionInfo):
            self._check_function(callee, where)
            return
        if isinstance(callee, ClassInfo):
            fwd = callee.lookup_method("forward") or callee.lookup_method("__call__")
            if fwd is not None:
                self._check_function(fwd, where)
            return
        if isinstance(callee, str):
            if callee.startswith("torch.nn."):
                if callee.rsplit(".", 1)[-1] in RANDOM_MODULES:
                    self.random.append(callee)
                self._nn_module(callee, call, self._class_of(call), label, where)
                return
            self.unverified.append(label)
            return
        recv = ev.receiver
        method = ev.method
        if recv is not None and method is not None:
            if recv.kind is Kind.TENSOR:
                if method in ("backward", "register_hook", "retain_grad", "resize_", "set_", "share_memory_"):
                    raise Refuse(f"{where} calls `.{method}()`")
                if method in RANDOM_FUNCTIONS or method in ("bernoulli_", "normal_", "uniform_", "random_", "exponential_"):
                    self.random.append(f".{method}()")
                return
            if recv.kind in (Kind.CONTAINER, Kind.MODULE, Kind.UNKNOWN) and method in _CONTAINER_MUTATORS:
                base = func.value if isinstance(func, cst.Attribute) else None
                if isinstance(base, cst.Name) and base.value in fresh:
                    return
                if recv.kind is not Kind.UNKNOWN or isinstance(base, cst.Name):
                    raise Refuse(f"{where} calls `{_code(ctx, func)}()`, which changes a container from outside the branch")
            if recv.kind in (Kind.CONST, Kind.SHAPE, Kind.CONTAINER):
                return
        self.unverified.append(label)

    def _class_of(self, node: cst.CSTNode) -> Optional[cst.ClassDef]:
        """The class whose body holds ``node`` in this file, if any."""
        cur = self.ctx.parent(node)
        while cur is not None and not isinstance(cur, cst.ClassDef):
            cur = self.ctx.parent(cur)
        return cur

    def _nn_module(self, qualname: str, call: cst.Call, cls: Optional[cst.ClassDef], label: str, where: str, imports=None) -> None:
        """A call of a ``torch.nn`` module: refuse when it writes buffers in train mode (measured),
        note it as unverified when the table does not know the class.  ``imports``: the import map
        of the file ``cls`` is in, when it is not the file being fixed."""
        fact = module_state(qualname)
        if fact is None and qualname.rsplit(".", 1)[-1] in _CONTAINERS:
            members = _container_members(self.ctx, cls, call.func, imports)
            if members is not None:  # `nn.Sequential(nn.Linear(...), nn.GELU())`: what it holds decides
                for member, construction in members:
                    self._nn_member(member, construction, label, where)
                return
        if fact is None or not fact.known:
            self.unverified.append(f"{label} ({qualname}, whose buffer writes were not measured)")
            return
        if not fact.train_writes:
            return
        if fact.unless and _every_construction_has(cls, call.func, fact.unless):
            return
        if fact.unless and isinstance(call.func, cst.Subscript):  # `self.layers[i](x)`: the members' constructions
            members = _container_members(self.ctx, cls, call.func.value, imports)
            name, _, literal = fact.unless.partition("=")
            same = [c for q, c in members or () if module_state(q) is not None and module_state(q).qualname == fact.qualname]
            if same and all(
                any(a.keyword is not None and a.keyword.value == name and isinstance(a.value, cst.Name) and a.value.value == literal for a in c.args)
                for c in same
            ):
                return
        writes = ", ".join(fact.train_writes)
        raise Refuse(
            f"{where} calls `{label}` ({fact.qualname}), which writes {writes} in train mode "
            f"(measured: {fact.measured_with}); torch.cond rejects buffer mutation in its branches"
            + (f" (construct it with {fact.unless} to avoid it)" if fact.unless else "")
        )

    def _nn_member(self, qualname: str, construction: cst.Call, label: str, where: str) -> None:
        """One module constructed inside a container (``nn.Sequential(...)``) called from a branch."""
        fact = module_state(qualname)
        if fact is None or not fact.known:
            self.unverified.append(f"{label} (holds {qualname}, whose buffer writes were not measured)")
            return
        if qualname.rsplit(".", 1)[-1] in RANDOM_MODULES:
            self.random.append(qualname)
        if not fact.train_writes:
            return
        name, _, literal = (fact.unless or "").partition("=")
        kw = next((a.value for a in construction.args if a.keyword is not None and a.keyword.value == name), None) if name else None
        if isinstance(kw, cst.Name) and kw.value == literal:
            return
        raise Refuse(
            f"{where} calls `{label}`, which holds a {fact.qualname} that writes {', '.join(fact.train_writes)} in train mode "
            f"(measured: {fact.measured_with}); torch.cond rejects buffer mutation in its branches"
        )

    def _elsewhere(self, fn: FunctionInfo) -> str:
        """The file of ``fn`` relative to the project root when it is not the file being fixed, else ``""``."""
        module = fn.module
        path = getattr(module, "path", None)
        if module is None or module is self.ctx.facts.index or getattr(module, "base", None) is self.ctx.facts.index or not path:
            return ""
        from pt2lint.discovery import project_relpath

        return project_relpath(path, getattr(self.ctx.settings, "project_root", "") or os.getcwd())

    def _check_function(self, fn: FunctionInfo, where: str) -> None:
        """A function called from the block, in this file or another project file: no findings, no
        writes to state, recursively.  A function of another file is named with its file."""
        node = fn.node
        if id(node) in self._checked_functions:
            return
        self._checked_functions.add(id(node))
        elsewhere = self._elsewhere(fn)
        if fn.disabled or fn.opaque:
            raise Refuse(f"{where} calls `{fn.symbol}`{f' ({elsewhere})' if elsewhere else ''}, which Dynamo does not trace")
        where_fn = f"`{fn.symbol}` ({elsewhere}, called from {where})" if elsewhere else f"`{fn.symbol}` (called from {where})"
        self._refuse_findings([node.body], where_fn)
        ids = {id(n) for n in walk(node.body)}
        own = _own_names(node)
        for ev in self.ctx.facts.writes:
            if id(ev.node) not in ids:
                continue
            if ev.target.alias_of is not None:
                raise Refuse(f"{where_fn} writes in place into an input")
            root = _write_root(ev.node)
            if root is None or root not in own:
                raise Refuse(f"{where_fn} writes in place into a tensor it did not create")
        for n in walk(node.body):
            if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
                for t in targets:
                    for part in _target_parts(t):
                        if isinstance(part, cst.Attribute):
                            raise Refuse(f"{where_fn} assigns `{_code(self.ctx, part)}`")
                        if isinstance(part, cst.Subscript) and _root_name(part) not in own:
                            # a global or a variable of an enclosing function (``CACHE[k] = v``, ``acc[0] += 1``)
                            raise Refuse(f"{where_fn} writes into `{_code(self.ctx, part.value)}[...]`, which it did not create")
            elif isinstance(n, (cst.Global, cst.Nonlocal, cst.Yield)):
                raise Refuse(f"{where_fn} has `{type(n).__name__.lower()}`")
            elif isinstance(n, cst.Call):
                ev = self.ctx.facts.calls.get(id(n))
                if ev is None:
                    continue
                if isinstance(ev.callee, FunctionInfo):
                    self._check_function(ev.callee, where)
                elif isinstance(ev.callee, ClassInfo):
                    fwd = ev.callee.lookup_method("forward") or ev.callee.lookup_method("__call__")
                    if fwd is not None:
                        self._check_function(fwd, where)
                elif isinstance(ev.callee, str) and ev.callee.startswith("torch.nn."):
                    self._nn_module(
                        ev.callee, n, fn.cls.node if fn.cls is not None else None, _code(self.ctx, n.func), where_fn,
                        imports=fn.module.imports if elsewhere else None,
                    )
                elif ev.qualname is not None and ev.qualname.startswith("builtins.") and ev.qualname[9:] not in PURE_BUILTINS:
                    raise Refuse(f"{where_fn} calls `{ev.qualname[9:]}()`")
                elif ev.qualname is not None and ev.qualname.startswith("torch."):
                    if ev.qualname.rsplit(".", 1)[-1] in RANDOM_FUNCTIONS:
                        self.random.append(ev.qualname)
                elif ev.method is not None and ev.method in _CONTAINER_MUTATORS and (ev.receiver is None or ev.receiver.kind is not Kind.TENSOR):
                    base = n.func.value if isinstance(n.func, cst.Attribute) else None
                    if _root_name(base) not in own:
                        # a container of the caller, of `self`, of the module (a global) or of an enclosing function
                        raise Refuse(f"{where_fn} calls `{_code(self.ctx, n.func)}()`, which changes a container it did not create")


# Builtins that iterate their (first) arguments: ``list(it)`` consumes an iterator or generator.
CONSUMING_BUILTINS = frozenset("list tuple dict set frozenset sum any all sorted min max next".split())
# Builtins among PURE_BUILTINS that are not free of side effects on their own: ``map``/``filter``
# call a function when consumed, ``iter``/``next`` advance an iterator.
_NOT_PURE_IN_EXPRESSIONS = frozenset({"map", "filter", "next"})
# Tensor methods with an effect beyond their result (autograd state, hooks, storage).
TENSOR_EFFECT_METHODS = frozenset(
    "backward register_hook register_post_accumulate_grad_hook retain_grad resize_ resize_as_ set_ share_memory_ "
    "requires_grad_ record_stream pin_memory_".split()
)
TENSOR_RANDOM_METHODS = frozenset("bernoulli_ normal_ uniform_ random_ exponential_ geometric_ cauchy_ log_normal_".split())
# ``torch.<name>`` functions that change global state or do I/O (the torch reference pages
# "Random sampling", "Serialization", "Locally disabling gradient computation" and the
# ``set_*`` settings): ``torch_api.is_tensor_function`` counts every lower-case ``torch.f``.
TORCH_STATE_PREFIXES = ("set_", "use_", "manual_seed", "seed", "save", "load", "compile", "init_", "clear_")
_GENERATOR_METHODS = frozenset({"send", "throw", "close", "__next__"})
# Values that iterate without side effects (iterating a tensor, a shape or a string reads it).
_ITERABLE_KINDS = (Kind.TENSOR, Kind.SHAPE, Kind.CONST, Kind.DATA)


class SideEffect:
    """Why an expression may change state when it is evaluated.

    Attributes:
        reason: what in the expression has (or may have) the effect, for messages.
        proven: True when the effect is certain from the facts (an in-place write, ``:=``,
            a container mutation, a random draw); False when the expression calls
            something whose freedom from side effects is not proven (an unknown or
            same-file function, a module, an iterator that may be consumed).
    """

    __slots__ = ("reason", "proven")

    def __init__(self, reason: str, proven: bool) -> None:
        self.reason = reason
        self.proven = proven

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"SideEffect({self.reason!r}, proven={self.proven})"


def side_effect(ctx: FixContext, exprs: Sequence[cst.CSTNode]) -> Optional[SideEffect]:
    """The first (possible) side effect of evaluating ``exprs``, or ``None`` when every one is
    proven free of side effects.

    Proven free: names, literals, attribute and item reads, operators, f-strings, ``lambda``
    (not called), comprehensions over values that do not change when iterated, calls of
    builtins in :data:`PURE_BUILTINS` (those that iterate only over such values), of
    ``math``/``operator`` functions, of torch functions that compute a tensor, a shape or a
    constant (``torch_api``) and that are neither in-place nor random, and of tensor methods
    that are neither in-place, random nor in :data:`TENSOR_EFFECT_METHODS`; methods of
    constants, shapes and containers that do not mutate.  A proven effect: ``:=``,
    ``yield``/``await``, an in-place method or function, ``out=``/``inplace=True``, a
    container mutator, a random op.  Anything else (a call the facts do not resolve, a
    same-file function, a module call, an iterator that may be consumed) is not proven.

    Args:
        ctx: the file's context (its facts give each call's callee and each value's kind).
        exprs: the expressions, in evaluation order.
    """
    for expr in exprs:
        for n in walk(expr, into_functions=False):
            found = _node_effect(ctx, n)
            if found is not None:
                return found
    return None


def _node_effect(ctx: FixContext, n: cst.CSTNode) -> Optional[SideEffect]:
    if isinstance(n, cst.NamedExpr):
        return SideEffect(f"`{_code(ctx, n)}` assigns a name", True)
    if isinstance(n, (cst.Yield, cst.Await)):
        return SideEffect(f"`{_code(ctx, n)}` suspends the function", True)
    if isinstance(n, cst.CompFor):
        return _iteration_effect(ctx, n.iter, f"`for ... in {_code(ctx, n.iter)}`")
    if isinstance(n, cst.Arg) and n.star == "*":
        return _iteration_effect(ctx, n.value, f"`*{_code(ctx, n.value)}`")
    if isinstance(n, cst.Call):
        return _call_effect(ctx, n)
    return None


def _iteration_effect(ctx: FixContext, it: cst.BaseExpression, what: str) -> Optional[SideEffect]:
    """Iterating ``it`` changes nothing: a display or comprehension (built fresh), ``range``, or a
    tensor, shape or constant.  A container of unknown origin may be a generator or iterator."""
    if isinstance(it, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return None
    ev = ctx.facts.calls.get(id(it)) if isinstance(it, cst.Call) else None
    if ev is not None and ev.qualname == "builtins.range":
        return None
    if ev is not None and ev.qualname in ("builtins.enumerate", "builtins.zip", "builtins.reversed"):
        # lazy: iterating them iterates their own arguments
        for arg in it.args:  # type: ignore[attr-defined]
            if arg.keyword is None:
                found = _iteration_effect(ctx, arg.value, what)
                if found is not None:
                    return found
        return None
    if ev is not None and ev.method is not None and ev.receiver is not None and ev.qualname is None:
        # ``d.items()``, ``s.split()``: a view or a new list of a dict or a string
        if (ev.receiver.kind is Kind.CONTAINER and ev.method in ("items", "keys", "values", "copy")) or ev.receiver.kind is Kind.CONST:
            return None
    value = ctx.facts.value(it)
    if value is not None and value.kind in _ITERABLE_KINDS:
        return None
    if value is not None and value.kind is Kind.CONTAINER and value.elts is not None:
        return None  # a list/tuple/dict of known length, not a generator
    return SideEffect(f"{what} may consume an iterator", False)


def _call_effect(ctx: FixContext, call: cst.Call) -> Optional[SideEffect]:
    text = _code(ctx, call)
    for arg in call.args:
        kw = arg.keyword.value if arg.keyword is not None else None
        if kw == "out":
            return SideEffect(f"`{text}` writes through `out=`", True)
        if kw == "inplace" and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
            return SideEffect(f"`{text}` may write in place (`inplace=`)", True)
    func = call.func
    while isinstance(func, cst.Attribute) and func.attr.value == "__call__":
        func = func.value  # ``x.add_.__call__(1)`` calls ``x.add_``
    if isinstance(func, cst.Attribute) and (
        func.attr.value in WRITING_DUNDERS or (func is not call.func and api.is_inplace_method(func.attr.value))
    ):
        # ``x.__imul__(2)``, ``xs.__iadd__(ys)``, ``d.__ior__(e)``, ``t.__setitem__(0, v)``: the
        # operator's in-place form writes its receiver, whatever its type
        return SideEffect(f"`{text}` writes `{_code(ctx, func.value)}` in place", True)
    ev = ctx.facts.calls.get(id(call))
    if ev is None:
        return SideEffect(f"`{text}` is not known to be free of side effects", False)
    q = ev.qualname
    if isinstance(func, cst.Attribute) and q is None and api.is_inplace_method(func.attr.value):
        return SideEffect(f"`{text}` writes `{_code(ctx, func.value)}` in place", True)
    if q is not None:
        last = q.rsplit(".", 1)[-1]
        if q.startswith("builtins."):
            name = q[len("builtins."):]
            if name not in PURE_BUILTINS or name in _NOT_PURE_IN_EXPRESSIONS:
                return SideEffect(f"`{text}` calls `{name}()`, which is not free of side effects", name == "next")
            if name in CONSUMING_BUILTINS:
                for arg in call.args:
                    if arg.keyword is None and not arg.star:
                        found = _iteration_effect(ctx, arg.value, f"`{text}`")
                        if found is not None:
                            return found
            return None
        if q.startswith("torch."):
            if api.is_inplace_method(last):
                return SideEffect(f"`{text}` calls `{q}`, an in-place function", True)
            if last in RANDOM_FUNCTIONS or last in RANDOM_MODULES:
                return SideEffect(f"`{text}` draws random numbers (it advances the random number generator)", True)
            pos = api.INPLACE_FUNCTIONAL_POS.get(last)
            if pos is not None and len(call.args) > pos and call.args[pos].keyword is None and not (isinstance(call.args[pos].value, cst.Name) and call.args[pos].value.value == "False"):
                return SideEffect(f"`{text}` may write in place (`inplace` argument)", True)
            if api.is_tensor_function(q) or q in api.CONST_FUNCTIONS or q in api.SHAPE_FUNCTIONS or q in api.DATA_FUNCTIONS or q in api.TUPLE_FUNCTIONS:
                if q.count(".") == 1 and last.startswith(TORCH_STATE_PREFIXES):
                    return SideEffect(f"`{text}` calls `{q}`, which changes torch's global state or does I/O", True)
                return None
            return SideEffect(f"`{text}` calls `{q}`, which is not known to be free of side effects", False)
        if q.startswith(("math.", "operator.")) and not q.startswith(("operator.i", "operator.set", "operator.del")):
            return None
        if q in api.THIRD_PARTY_TENSOR_FUNCTIONS:
            return None
        return SideEffect(f"`{text}` calls `{q}`, which is not known to be free of side effects", False)
    recv = ev.receiver
    method = ev.method
    if recv is not None and method is not None:
        if recv.kind is Kind.TENSOR:
            if method in TENSOR_EFFECT_METHODS:
                return SideEffect(f"`{text}` calls `.{method}()`, which changes the tensor's state", True)
            if method in TENSOR_RANDOM_METHODS or method in RANDOM_FUNCTIONS:
                return SideEffect(f"`{text}` draws random numbers (it advances the random number generator)", True)
            return None
        if method in _CONTAINER_MUTATORS:
            return SideEffect(f"`{text}` changes `{_code(ctx, func.value) if isinstance(func, cst.Attribute) else method}`", True)
        if recv.kind is Kind.CONTAINER and method in _GENERATOR_METHODS:
            return SideEffect(f"`{text}` advances a generator", True)
        if recv.kind in (Kind.CONST, Kind.SHAPE, Kind.CONTAINER, Kind.NONE):
            return None
    callee = ev.callee
    what = "a function of this file" if isinstance(callee, FunctionInfo) else "a module" if isinstance(callee, (ClassInfo, str)) or (recv is not None and recv.kind is Kind.MODULE) else "something"
    return SideEffect(f"`{text}` calls {what} not proven free of side effects", False)


#: Methods that write their receiver for every type that has them: the in-place operators
#: (``x *= 2`` calls ``x.__imul__(2)``) and item/attribute stores and deletions.
WRITING_DUNDERS = frozenset(
    """__iadd__ __isub__ __imul__ __imatmul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __ilshift__
    __irshift__ __iand__ __ixor__ __ior__ __setitem__ __delitem__ __setattr__ __delattr__""".split()
)

_CONTAINER_MUTATORS = frozenset(
    """append extend insert pop clear update add setdefault popitem remove discard appendleft extendleft popleft sort
    reverse __setitem__ __delitem__ register_buffer register_parameter add_module""".split()
)


_CONTAINERS = frozenset({"Sequential", "ModuleList"})


def _container_members(ctx: FixContext, cls: Optional[cst.ClassDef], func: cst.BaseExpression, imports=None):
    """``[(qualname, construction), ...]`` of the ``torch.nn`` modules that every
    ``self.<attr> = nn.Sequential(A(...), B(...))`` / ``nn.ModuleList([...])`` in ``cls`` holds,
    or None when some construction or member is not a literal call of a ``torch.nn`` class.
    ``imports`` qualifies names in ``cls``'s file (default: the file being fixed)."""
    imports = imports if imports is not None else ctx.imports
    if cls is None or not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
        return None
    attr = func.attr.value
    out = []
    for n in walk(cls):
        if not isinstance(n, (cst.Assign, cst.AnnAssign)):
            continue
        targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
        if not any(isinstance(t, cst.Attribute) and t.attr.value == attr and isinstance(t.value, cst.Name) for t in targets):
            continue
        value = n.value
        if not isinstance(value, cst.Call) or (imports.qualify(value.func) or "").rsplit(".", 1)[-1] not in _CONTAINERS:
            return None
        args = list(value.args)
        if len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)) and args[0].star == "":
            elems = [e.value for e in args[0].value.elements]
        else:
            elems = [a.value for a in args]
        for e in elems:
            q = imports.qualify(e.func) if isinstance(e, cst.Call) else None
            if not q or not q.startswith("torch.nn.") or any(a.star for a in e.args):
                return None
            out.append((q, e))
    return out if out else None


def _literal_size(node: cst.BaseExpression) -> bool:
    """An integer literal size other than -1, 0 and 1 (``x.view(2, -1)``), or a tuple holding one."""
    if isinstance(node, (cst.Tuple, cst.List)):
        return any(_literal_size(e.value) for e in node.elements)
    return isinstance(node, cst.Integer) and node.evaluated_value not in (0, 1)


def _every_construction_has(cls: Optional[cst.ClassDef], func: cst.BaseExpression, keyword: str) -> bool:
    """Whether ``func`` is ``self.<attr>`` and every ``self.<attr> = C(...)`` in ``cls`` passes
    ``keyword`` (``"track_running_stats=False"``), with at least one such assignment."""
    if cls is None or not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
        return False
    attr = func.attr.value
    name, _, literal = keyword.partition("=")
    found = 0
    for n in walk(cls):
        if not isinstance(n, (cst.Assign, cst.AnnAssign)):
            continue
        targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
        if not any(isinstance(t, cst.Attribute) and t.attr.value == attr and isinstance(t.value, cst.Name) for t in targets):
            continue
        value = n.value
        if not isinstance(value, cst.Call):
            return False
        kw = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == name), None)
        if not (isinstance(kw, cst.Name) and kw.value == literal):
            return False
        found += 1
    return found > 0


def _own_names(node: cst.FunctionDef) -> Set[str]:
    """Names of ``node``'s own scope that only ever hold objects it created: bound there (not
    parameters), never declared ``global``/``nonlocal``, and never assigned another name, an
    attribute or an item (``out = CACHE`` makes ``out`` the global's alias)."""
    params = {p.name.value for p in list(node.params.params) + list(node.params.posonly_params) + list(node.params.kwonly_params)}
    for star in (node.params.star_arg, node.params.star_kwarg):
        if isinstance(star, cst.Param):
            params.add(star.name.value)
    own = set(bound_names([node.body])) - params
    for n in walk(node.body, into_functions=False):
        if isinstance(n, (cst.Global, cst.Nonlocal)):
            own -= {a.name.value for a in n.names}
        elif isinstance(n, (cst.Assign, cst.AnnAssign)) and isinstance(getattr(n, "value", None), (cst.Name, cst.Attribute, cst.Subscript)):
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
            for t in targets:
                own -= {name.value for name in target_names(t)}
        elif isinstance(n, (cst.For, cst.WithItem)):
            target = n.target if isinstance(n, cst.For) else (n.asname.name if n.asname is not None else None)
            if target is not None:
                own -= {name.value for name in target_names(target)}  # elements of (or a context) from outside
    return own


def _target_parts(target: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The single targets of a (possibly unpacking) assignment target."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [p for el in target.elements for p in _target_parts(el.value)]
    if isinstance(target, cst.StarredElement):
        return _target_parts(target.value)
    return [target]


def _root_name(node: Optional[cst.CSTNode]) -> Optional[str]:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _write_root(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute):
            return _root_name(node.func.value)
        if node.args:
            return _root_name(node.args[0].value)
        return None
    if isinstance(node, cst.AugAssign):
        return _root_name(node.target)
    if isinstance(node, cst.Subscript):
        return _root_name(node.value)
    return None


def _aug(node: cst.AugAssign) -> str:
    return cst.Module(body=[]).code_for_node(node.operator).strip()


def _code(ctx: FixContext, node: cst.CSTNode) -> str:
    text = " ".join(ctx.module.code_for_node(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["BranchChecker", "MAY_ALIAS_METHODS", "PURE_BUILTINS", "SideEffect", "is_new_tensor", "may_alias", "side_effect"]
