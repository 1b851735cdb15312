"""PTC5xx: Python state that changes between calls and so fails Dynamo's guards (recompiles).

Dynamo guards on the values of Python ints/floats/lists read from ``self`` or from
module globals, and on the Python ints it specialises (a tensor size used as a dict
key or a constructor argument); when forward changes them, or a call brings a new
size, the next call fails the guard and recompiles, until
``torch._dynamo.config.recompile_limit`` (8 on torch 2.13) is hit and the frame runs
eagerly from then on, silently (measured on torch 2.13: the ``recompiles`` log
artifact reports the failed guard, see the specs).
"""

from __future__ import annotations

from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule


class ModuleStateMutation(Rule):
    """PTC501: ``self.n += 1``, ``self.n = self.n + 1``, ``self.cache.append(x)`` in a compiled region,
    and ``next(self.ids)`` on an iterator Dynamo guards by its position (``itertools.count``, tuple
    and range iterators built in ``__init__``; the ``iterator_objects`` facts, see
    :func:`pt2lint.rules.iterators.stored_iterator_next`)."""

    code = "PTC501"

    def __init__(self, settings) -> None:
        super().__init__(settings)
        self._memo: dict = {}

    def _same_every_call(self, interp, attr: str, node) -> bool:
        return same_state_every_call(interp, self._memo, attr, node)

    def on_state_write(self, interp, ev) -> None:
        if ev.fill_once:
            return  # ``if k not in self.cache: self.cache[k] = ...``: once per key (see fill_guarded)
        if self._same_every_call(interp, ev.attr, ev.node):
            return
        if ev.how == "augassign":
            what = f"`self.{ev.attr} {ev.detail}`"
        elif ev.how == "reassign":
            what = f"reassigning `self.{ev.attr}` from its own value"
        else:
            what = f"mutating the container `self.{ev.attr}` ({ev.detail})"
        interp.report(
            self.code,
            ev.node,
            f"{what} changes Python state Dynamo guards on: recompiles on later calls, and after "
            f"`torch._dynamo.config.recompile_limit` (8) recompiles runs eagerly "
            f"(keep the state in a registered buffer tensor, or outside the compiled module)",
        )

    def on_call(self, interp, ev) -> None:
        from pt2lint.analysis.interp import _CONTAINER_MUTATORS  # the interpreter's list
        from pt2lint.rules.iterators import iterator_words, stored_iterator_next

        stepped = stored_iterator_next(interp, ev, self._memo)
        if stepped is not None and stepped[2] == "recompiles" and stepped[0].startswith("self."):
            interp.report(
                self.code,
                ev.node,
                f"`next({stepped[0]})` steps {iterator_words(stepped[1])}, which Dynamo guards on by its "
                f"position: every call recompiles, and {_LIMIT} "
                f"(keep the step in a registered buffer tensor, or step the iterator outside the compiled module)",
            )
            return
        node = ev.node.func
        # ``self.cache.append(x)``, or an entry of a container held on self (``self.stats[k].append(x)``,
        # a ``defaultdict(list)``): Dynamo guards on the entries as on the container
        holder = getattr(node, "value", None) if node.__class__.__name__ == "Attribute" else None
        entry = holder.__class__.__name__ == "Subscript"
        if entry:
            holder = holder.value
        if (
            ev.method in _CONTAINER_MUTATORS
            and ev.receiver is not None
            and ev.receiver.kind is Kind.CONTAINER
            and holder.__class__.__name__ == "Attribute"
            and getattr(holder.value, "value", None) == "self"
        ):
            attr = holder.attr.value
            if interp.fresh_self() or self._same_every_call(interp, attr, ev.node):
                return  # (an object built in this call: no state outlives the call, nothing is guarded)
            interp.report(
                self.code,
                ev.node,
                f"`self.{attr}{'[...]' if entry else ''}.{ev.method}()` mutates a Python container Dynamo guards on: "
                f"recompiles on later calls (keep the state in a tensor, or outside the compiled module)",
            )


class TensorId(Rule):
    """PTC502: ``id(tensor)`` in a compiled region."""

    code = "PTC502"

    def on_call(self, interp, ev) -> None:
        if ev.qualname == "builtins.id" and ev.args and ev.args[0].kind is Kind.TENSOR:
            interp.report(
                self.code,
                ev.node,
                "`id()` of a tensor is a new Python int on every call: guards on it recompile each time "
                "(key caches on shapes/dtypes, not object identity)",
            )


_LIMIT = "after `torch._dynamo.config.recompile_limit` (8 by default) recompiles Dynamo stops compiling the frame and runs it eagerly, silently"


class GlobalStateMutation(Rule):
    """PTC503: a module-level variable written in a compiled region.

    ``global STEP; STEP += 1`` (or ``STEP = STEP + 1``), mutating a module-level list,
    dict or set (``HISTORY.append(x)``, ``SEEN[k] = v``), and ``next(TICKS)`` on a module-level
    iterator Dynamo guards by its position (``TICKS = itertools.count()``).  Dynamo guards on the globals it
    reads (``G['STEP'] == 0``, ``not G['HISTORY']``), so the next call fails the guard.  A
    fill-once cache (``if k not in CACHE: CACHE[k] = ...`` with a key that does not vary)
    is not reported.  Facts: rules/PTC503-global-state-mutation.toml (torch 2.13).
    """

    code = "PTC503"

    def __init__(self, settings) -> None:
        super().__init__(settings)
        self._memo: dict = {}

    def on_global_write(self, interp, ev) -> None:
        if ev.fill_once:
            return
        if ev.how == "augassign":
            what, guard = f"`{ev.name} {ev.detail}` on a global", f"G['{ev.name}'] == <value>"
        elif ev.how == "reassign":
            what, guard = f"reassigning the global `{ev.name}` from its own value", f"G['{ev.name}'] == <value>"
        else:
            what, guard = f"writing into the module-level container `{ev.name}` ({ev.detail})", f"not G['{ev.name}']` / `len(G['{ev.name}']) == <n>"
        interp.report(
            self.code,
            ev.node,
            f"{what} changes a global Dynamo guards on (`{guard}`): every call recompiles, and {_LIMIT} "
            f"(move the state out of forward, or keep it in a registered buffer tensor)",
        )

    def on_call(self, interp, ev) -> None:
        from pt2lint.analysis.interp import _CONTAINER_MUTATORS  # the interpreter's list
        from pt2lint.rules.iterators import iterator_words, stored_iterator_next

        stepped = stored_iterator_next(interp, ev, self._memo)
        if stepped is not None and stepped[2] == "recompiles" and not stepped[0].startswith("self."):
            interp.report(
                self.code,
                ev.node,
                f"`next({stepped[0]})` steps a module-level {iterator_words(stepped[1])[2:]}, which Dynamo guards on "
                f"by its position: every call recompiles, and {_LIMIT} "
                f"(keep the step in a registered buffer tensor, or step the iterator outside the compiled region)",
            )
            return
        recv = ev.receiver_node
        if (
            ev.method in _CONTAINER_MUTATORS
            and ev.receiver is not None
            and ev.receiver.kind is Kind.CONTAINER
            and recv is not None
            and interp.is_module_global(recv)
        ):
            name = recv.value
            interp.report(
                self.code,
                ev.node,
                f"`{name}.{ev.method}()` mutates a module-level container Dynamo guards on "
                f"(`not G['{name}']` / `len(G['{name}']) == <n>`): every call recompiles, and {_LIMIT} "
                f"(collect it outside the compiled region)",
            )


class SizeKeyedDict(Rule):
    """PTC504: a tensor size used as a Python dict key in a compiled region.

    Hashing the size makes Dynamo specialise it: automatic dynamic shapes cannot keep
    it symbolic, so every distinct size compiles a new graph (``{x.shape[0]: v}``,
    ``d[n]`` with ``n = x.shape[0]``, a cache filled per size).  Facts:
    rules/PTC504-size-keyed-dict.toml (torch 2.13).
    """

    code = "PTC504"

    def __init__(self, settings) -> None:
        super().__init__(settings)
        self._seen: set = set()

    def on_key(self, interp, ev) -> None:
        if not interp.size_derived(ev.key_node):
            return
        key = interp._source(ev.key_node)
        where = interp._source(ev.container_node) if ev.container_node is not None else None
        scope = (id(interp.frame.func) if interp.frame is not None else None, key, where)
        if where is not None:
            if scope in self._seen:
                return  # one finding per (function, key, dict): the first use
            self._seen.add(scope)
        target = f"the dict `{where}`" if where else "a dict literal"
        interp.report(
            self.code,
            ev.node,
            f"the tensor size `{key}` is used as a key of {target}: Dynamo specialises it (automatic dynamic "
            f"shapes cannot keep a hashed size symbolic; each graph guards the exact size, and a new one fails with "
            f"`tensor '...' size mismatch`) and compiles a new graph for every distinct size; {_LIMIT} "
            f"(key on something that does not vary with the input shape, or build the dict outside the compiled region)",
        )


class ModuleFromSize(Rule):
    """PTC505: an ``nn`` layer with parameters constructed in a compiled region from a tensor size.

    ``nn.Linear(x.shape[-1], d)`` in ``forward``: the size becomes the shape of a new
    parameter, Dynamo specialises it and compiles a new graph for every distinct size.
    Only layers that allocate parameters from their size arguments count
    (:data:`pt2lint.analysis.torch_api.PARAMETRISED_MODULES`).  Facts: rules/PTC505-module-from-size.toml (torch 2.13).
    """

    code = "PTC505"

    def on_call(self, interp, ev) -> None:
        from pt2lint.analysis import torch_api as api

        qual = ev.qualname or ""
        if not qual.startswith("torch.nn.") or ev.result.kind is not Kind.MODULE:
            return
        if qual.rsplit(".", 1)[-1] not in api.PARAMETRISED_MODULES:
            return  # a size kept as a hyper-parameter (``ignore_index``) stays symbolic
        sized = None
        pos = 0
        for a in ev.node.args:
            if a.star:
                return  # ``*args``: which value lands where is unknown
            if a.keyword is None:
                v = ev.args[pos] if pos < len(ev.args) else None
                pos += 1
            else:
                v = ev.kwargs.get(a.keyword.value)
            if v is not None and v.kind is Kind.SHAPE and interp.size_derived(a.value):
                sized = a.value
                break
        if not sized:
            return
        interp.report(
            self.code,
            ev.node,
            f"`{qual.replace('torch.nn.', 'nn.')}` is built in the compiled region from the tensor size "
            f"`{interp._source(sized)}`: Dynamo specialises the size (each graph guards it exactly: `tensor '...' size "
            f"mismatch` on a new one) and compiles a new graph for every distinct "
            f"size (and the layer gets freshly initialised parameters on every call); {_LIMIT} "
            f"(build the module in `__init__`, or use the functional form with `torch._dynamo.mark_dynamic` on the input)",
        )


_GROWERS = frozenset("append extend insert add update setdefault appendleft extendleft".split())


def _bounds(test, is_target) -> bool:
    """The ``if`` test bounds the container's growth: it reads ``len(c)`` (``if self.count >=
    len(c):``) or tests a key's membership (``if k not in c:``)."""
    import libcst as cst

    from pt2lint.analysis.walk import walk

    for n in walk(test):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "len" and n.args and is_target(n.args[0].value):
            return True
        if isinstance(n, cst.Comparison) and any(
            isinstance(c.operator, (cst.In, cst.NotIn)) and is_target(c.comparator) for c in n.comparisons
        ):
            return True
    return False


def _grown_in(fn_node, is_target) -> bool:
    """Whether the function body grows the container ``is_target`` accepts (``c.append(...)``,
    ``c[k] = v``, ``c += [...]``) without a bound: growth under an ``if`` that compares
    against ``len(c)`` or tests membership in ``c`` fills the container up to a size (or
    once per key) and then stops, which costs a bounded number of recompiles (measured on
    torch 2.13 with sew_d's ``if self.count >= len(self.context_stack): ....append(...)``:
    3 graphs over 8 calls, one of them for a new batch size)."""
    import libcst as cst

    from pt2lint.analysis.walk import walk

    body = fn_node.body if isinstance(fn_node, cst.FunctionDef) else fn_node
    bounded = set()
    for n in walk(body):
        if isinstance(n, cst.If) and _bounds(n.test, is_target):
            bounded.update(id(m) for m in walk(n.body))
    for n in walk(body):
        if id(n) in bounded:
            continue
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in _GROWERS:
            if is_target(n.func.value):
                return True
        elif isinstance(n, cst.Assign):
            if any(isinstance(t.target, cst.Subscript) and is_target(t.target.value) for t in n.targets):
                return True
        elif isinstance(n, cst.AugAssign) and is_target(n.target):
            return True
    return False


def same_state_every_call(interp, memo: dict, attr: str, node) -> bool:
    """Every call of the outermost method running on this object finds ``self.<attr>`` in one
    state: it assigns the attribute before reading it, or leaves it as ``__init__`` set it on
    every way out (``self.hidden.clear()`` at the end), so a guard on it never fails (measured on
    torch 2.13, see :mod:`pt2lint.analysis.entry_state`); an ``if`` whose test is a guard Dynamo
    decides (``if is_exporting(): return``) takes only the arm it selects.  ``memo`` is the
    calling rule's cache."""
    from pt2lint.analysis.entry_state import state_stable, state_stable_through_submodules
    from pt2lint.analysis.index import ClassInfo
    from pt2lint.analysis.interp import guard_truth

    cur = interp.frame
    sv = cur.self_value if cur is not None else None
    if sv is None or sv.kind is not Kind.SELF or not isinstance(sv.ref, ClassInfo):
        return False
    outer = next(
        (f for f in interp.frames if f.self_value is not None and f.self_value.kind is Kind.SELF and f.self_value.ref is sv.ref),
        cur,
    )
    target, resolve = interp.settings.target, interp._function_in

    def truth(test, module):
        # the guards Dynamo decides while it traces (``if is_exporting(): return`` is False)
        return guard_truth(test, module, target, resolve)

    hooked = _hook_of_submodule(interp, sv.ref)
    if hooked is not None:
        # a write in a hook of a submodule: it happens while ``forward`` runs, inside its calls of
        # that submodule (``self.captured[k] = out``, cleared by forward before it returns)
        return state_stable_through_submodules(memo, hooked[0], sv.ref, attr, hooked[1], truth)
    return state_stable(memo, outer.func, sv.ref, attr, node, truth)


def _hook_of_submodule(interp, cls):
    """``(forward, submodule attribute or "*")`` when the code running is a hook that ``cls``
    registers on one of its submodules (called from ``forward``, directly or as the analysis
    follows the submodule's call), else ``None``."""
    for f in reversed(interp.frames):
        fn = f.func
        where = interp.hook_registration(fn)[2]
        if where is None:
            continue
        fwd = cls.lookup_method("forward") if hasattr(cls, "lookup_method") else None
        if fwd is None or getattr(fn, "cls", None) is None or fn.cls not in cls.mro():
            return None
        return fwd, where
    return None


class GrowingContainerLen(Rule):
    """PTC506: ``len()`` of a ``self`` or module-level container that the code grows.

    Dynamo guards on the length it read (``len(self.history) == 3``,
    ``len(G['SEEN']) == 3``); each time another method (or forward itself) appends to the
    container, the next call recompiles.  A container only filled in ``__init__`` (or a
    ``ModuleList``) keeps its length and is not reported.  Facts:
    rules/PTC506-growing-container-len.toml (torch 2.13).
    """

    code = "PTC506"

    def __init__(self, settings) -> None:
        super().__init__(settings)
        self._memo: dict = {}

    def _grown_only_by_outer(self, interp, cls, attr, methods, is_target) -> bool:
        """Only the outermost method running on this object (``forward``) grows ``self.<attr>``:
        whether each call starts from one length is then a question about that method alone."""
        outer = next(
            (f for f in interp.frames if f.self_value is not None and f.self_value.kind is Kind.SELF and f.self_value.ref is cls),
            None,
        )
        if outer is None or outer.func is None:
            return False
        key = ("growers", id(cls), attr)
        if key not in self._memo:
            self._memo[key] = {f.name for f in methods if _grown_in(f.node, is_target)}
        return self._memo[key] <= {outer.func.name}

    def _grower(self, key, functions, is_target):
        if key not in self._memo:
            self._memo[key] = next((f.name for f in functions if _grown_in(f.node, is_target)), None)
        return self._memo[key]

    def on_call(self, interp, ev) -> None:
        import libcst as cst

        from pt2lint.analysis.index import ClassInfo

        if ev.qualname != "builtins.len" or len(ev.node.args) != 1 or not ev.args or ev.args[0].kind is not Kind.CONTAINER:
            return
        arg = ev.node.args[0].value
        frame = interp.frame
        if frame is None:
            return
        if (
            isinstance(arg, cst.Attribute) and isinstance(arg.value, cst.Name) and arg.value.value == "self"
            and frame.self_value is not None and isinstance(frame.self_value.ref, ClassInfo)
        ):
            if interp.fresh_self():
                return  # a container of an object built in this call: its length is not guarded across calls
            attr = arg.attr.value
            cls = frame.self_value.ref
            methods = [m for c in cls.mro() for name, m in c.methods.items() if name not in ("__init__", "__post_init__")]

            def is_target(e, attr=attr):
                return isinstance(e, cst.Attribute) and e.attr.value == attr and isinstance(e.value, cst.Name) and e.value.value == "self"

            grower = self._grower((id(cls), attr), methods, is_target)
            if grower is not None and self._grown_only_by_outer(interp, cls, attr, methods, is_target):
                if same_state_every_call(interp, self._memo, attr, arg):
                    return  # ``self.outs = []`` before the appends: every call starts from one length
            shown, guard = f"self.{attr}", f"len(self.{attr}) == <n>"
        elif interp.is_module_global(arg):
            name = arg.value
            idx = interp.index

            def is_target(e, name=name):
                return isinstance(e, cst.Name) and e.value == name

            grower = self._grower((id(idx), name), list(idx.all_functions), is_target)
            shown, guard = name, f"len(G['{name}']) == <n>"
        else:
            return
        if grower is None:
            return
        stmt = interp.stmt
        if isinstance(stmt, cst.SimpleStatementLine) and _grown_in(stmt, is_target):
            return  # ``SEEN[len(SEEN)] = v``: the write on this line is the state mutation reported
        interp.report(
            self.code,
            ev.node,
            f"`len({shown})` reads the length of a container that `{grower}()` grows: Dynamo guards "
            f"`{guard}` and recompiles every time it grows; {_LIMIT} "
            f"(pass the count in as a tensor, or keep it in a registered buffer)",
        )
