"""Per-process summaries of the ``self`` attributes of classes of other modules.

Every entry file that builds a ``PreTrainedModel`` subclass makes the interpreter collect the
attributes of the foreign bases (:meth:`~pt2lint.analysis.interp.Interpreter.class_attrs` of
``PreTrainedModel``, ``GenerationMixin``, ``PeftAdapterMixin``...): their constructors and
self-state methods run, silently, with the parameter kinds their annotations give.  Nothing of
that depends on the entry file, yet each entry has its own project model
(:class:`~pt2lint.analysis.project.ProjectModel`), so the values it produces point at that
entry's :class:`~pt2lint.analysis.index.ClassInfo`/:class:`~pt2lint.analysis.index.FunctionInfo`
objects.

A :class:`Summary` is the outcome of one such collection in a portable form: for every class
whose attributes it read or wrote, the state before (attributes known or not, and their
values) and after, with every definition a value refers to written as a *handle* (file, module
name, top-level name, method name) instead of the object; and the project-model lookups it made
(module loads, star-import probes), replayed so the entry's dependency record (the result
cache's key) is what it would have been.  A later entry of the same process, with the same
settings, replays the lookups (each must find the same file: an entry's own folder is one of
its import roots), checks that every module read has the same bytes, decodes the handles
against its own project model and takes the after state without interpreting anything,
provided the before state of every class touched matches its own.

The collection itself runs isolated from the entry's analysis (fresh memo, signature counts,
budget, module-global values and call stack), so its outcome depends only on the class, the
project files and the settings, whichever entry computes it first: results are the same with
one worker or several, and the same as analysing each entry alone.  A summary that touches the
entry module itself, or a value that cannot be written as handles (a closure, a lambda, a
class defined inside a function), is used for the entry that computed it but not kept.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

from pt2lint.analysis.dicts import Entries
from pt2lint.analysis.index import ClassInfo, FunctionInfo
from pt2lint.analysis.kinds import Kind, Value

#: Most summaries kept by one process (least recently used dropped first).
MAX_SUMMARIES = 2048

_STORE: "OrderedDict[tuple, Summary]" = OrderedDict()
# computations per ``"<path>#<class name>"`` in this process: what :func:`computation_counts` reports
_COMPUTED: Dict[str, int] = {}
_SETTINGS_KEYS: Dict[int, Tuple[object, str]] = {}


class NotPortable(Exception):
    """A value refers to an object that no handle names (a closure, a nested class, ...)."""


def computation_counts() -> Dict[str, int]:
    """How many times this process interpreted each foreign class's attribute methods.

    Keys are ``"<abs path>#<class name>"``.  A class whose summary was kept is computed once
    per process (per import roots and settings); later entries replay it.  Returns a copy.
    """
    return dict(_COMPUTED)


def clear() -> None:
    """Forget every summary (tests; a long-lived process whose files changed keys by content anyway)."""
    _STORE.clear()
    _COMPUTED.clear()
    _IDENTITY.clear()


def note_computed(cls: ClassInfo) -> None:
    """Count one interpretation of ``cls``'s attribute methods (see :func:`computation_counts`)."""
    key = f"{getattr(cls.module, 'path', '')}#{cls.name}"
    _COMPUTED[key] = _COMPUTED.get(key, 0) + 1


def settings_key(settings) -> str:
    """The settings' fingerprint (computed once per settings object)."""
    hit = _SETTINGS_KEYS.get(id(settings))
    if hit is not None and hit[0] is settings:
        return hit[1]
    fp = settings.fingerprint() if hasattr(settings, "fingerprint") else repr(settings)
    if len(_SETTINGS_KEYS) > 64:
        _SETTINGS_KEYS.clear()
    _SETTINGS_KEYS[id(settings)] = (settings, fp)
    return fp


def store_key(cls: ClassInfo, project, settings) -> Optional[tuple]:
    """The key of ``cls``'s summary, or ``None`` when summaries cannot be shared (an editor overlay).

    The import roots are not in the key (they differ per entry folder): a replay checks what
    each lookup finds instead.
    """
    if project is None or project.overlay or not getattr(cls.module, "path", ""):
        return None
    return (
        id(cls.node), cls.module.path, tuple(project.library_roots), project.follow,
        project.entry_package, project.target, settings_key(settings),
    )


def lookup(key: tuple, cls: ClassInfo) -> Optional["Summary"]:
    """The summary kept under ``key`` for ``cls``'s very node, or ``None``."""
    hit = _STORE.get(key)
    if hit is None or hit.node is not cls.node:
        return None
    _STORE.move_to_end(key)
    return hit


def remember(key: tuple, summary: "Summary") -> None:
    """Keep ``summary`` under ``key`` (bounded by :data:`MAX_SUMMARIES`)."""
    _STORE[key] = summary
    _STORE.move_to_end(key)
    while len(_STORE) > MAX_SUMMARIES:
        _STORE.popitem(last=False)


class IdentityDecorator:
    """A decorator of another module found to return the function it decorates on every path.

    ``node`` is the decorator's ``FunctionDef`` (the key's object identity is checked against it),
    ``loads`` the project lookups its run made (replayed, as a :class:`Summary`'s are) and
    ``digests`` the ``(path, sha256)`` of every file it read.
    """

    __slots__ = ("node", "loads", "digests")

    def __init__(self, node, loads, digests) -> None:
        self.node, self.loads, self.digests = node, loads, digests


_IDENTITY: "OrderedDict[tuple, IdentityDecorator]" = OrderedDict()


def decorator_key(deco: FunctionInfo, how: tuple, project, settings, entry_path: str) -> Optional[tuple]:
    """The process-wide key of applying ``deco`` (``how``: its decorator text, the decorated
    function's kind, whether it is a plain function), or ``None`` when the result cannot be
    shared: a decorator of the entry module itself, an editor overlay, no project model."""
    path = getattr(deco.module, "path", "")
    if project is None or project.overlay or not path or path == entry_path:
        return None
    return (
        id(deco.node), path, deco.symbol, how, tuple(project.library_roots), project.follow,
        project.entry_package, project.target, settings_key(settings),
    )


def lookup_identity(key: tuple, deco: FunctionInfo) -> Optional[IdentityDecorator]:
    """The record kept under ``key`` for ``deco``'s very node, or ``None``."""
    hit = _IDENTITY.get(key)
    if hit is None or hit.node is not deco.node:
        return None
    _IDENTITY.move_to_end(key)
    return hit


def remember_identity(key: tuple, record: IdentityDecorator) -> None:
    """Keep ``record`` under ``key`` (bounded by :data:`MAX_SUMMARIES`)."""
    _IDENTITY[key] = record
    _IDENTITY.move_to_end(key)
    while len(_IDENTITY) > MAX_SUMMARIES:
        _IDENTITY.popitem(last=False)


class Recording:
    """What one isolated attribute collection touches: classes (first state seen) and project lookups."""

    __slots__ = ("pre", "loads")

    def __init__(self) -> None:
        self.pre: Dict[int, Tuple[ClassInfo, bool, Dict[str, Value]]] = {}
        self.loads: List[tuple] = []

    def touch(self, cls: ClassInfo) -> None:
        """Remember ``cls``'s attribute state before the collection first reads or writes it."""
        if id(cls) not in self.pre:
            self.pre[id(cls)] = (cls, cls.attrs_done, dict(cls.attrs))

    def absorb(self, inner: "Recording") -> None:
        """Fold a nested collection's record into this one (its first states are ours, unless seen already)."""
        for k, v in inner.pre.items():
            self.pre.setdefault(k, v)
        self.loads.extend(inner.loads)


class Summary:
    """The portable outcome of collecting one foreign class's attributes (see the module doc)."""

    __slots__ = ("node", "paths", "loads", "classes", "instantiated", "digests")

    def __init__(self, node, paths, loads, classes, instantiated, digests) -> None:
        self.node = node  # the ClassDef (kept alive: its id is in the key)
        self.paths = paths  # files of every module the collection reached
        # ("load", dotted, outcome) / ("bind", dotted, name, found), in order: replayed, and each must
        # give the same outcome (import roots differ between entries: the entry's folder is one)
        self.loads = loads
        # (class handle, (done, attrs) before, (done, attrs) after), attrs as encoded items
        self.classes = classes
        self.instantiated = instantiated  # handles of the classes constructed
        self.digests = digests  # (path, sha256) of each of ``paths`` when it was computed


# ---------------------------------------------------------------------------- handles
def _module_of(project, path: str, dotted: str):
    mod = project.load_module(dotted)
    if mod is None or getattr(mod, "path", None) != path:
        raise NotPortable(dotted)
    return mod


def _top_level(project, mod, name: str):
    found = mod.classes.get(name) or mod.functions.get(name)
    if found is None and name in getattr(mod, "lazy_defs", ()):
        found = project.definition(mod, name)
    return found


class Codec:
    """Writes values of one project model as handles, and reads handles back into another.

    Args:
        project: the :class:`~pt2lint.analysis.project.ProjectModel` objects are resolved in.
        entry: the entry module, which no handle may name.
    """

    def __init__(self, project, entry) -> None:
        self.project = project
        self.entry = entry
        self.paths: set = set()
        self._enc: Dict[int, tuple] = {}
        self._dec: Dict[tuple, object] = {}

    # -- objects -> handles
    def _base(self, obj) -> Tuple[str, str]:
        mod = obj.module
        if mod is None or mod is self.entry or getattr(mod, "base", None) is self.entry:
            raise NotPortable(obj)
        path, dotted = getattr(mod, "path", ""), getattr(mod, "name", "")
        if not path or not dotted or self.project.modules.get(path) is not (mod.base or mod):
            raise NotPortable(obj)
        self.paths.add(path)
        return path, dotted

    def _top_level_handle(self, tag: str, obj) -> tuple:
        """``(tag, path, dotted module name, name)`` of a top-level class or function of another
        module; ``NotPortable`` when ``obj`` is not what that name holds at the module's top level."""
        path, dotted = self._base(obj)
        if _top_level(self.project, obj.module.base or obj.module, obj.name) is not obj:
            raise NotPortable(obj)
        return (tag, path, dotted, obj.name)

    def class_handle(self, cls: ClassInfo) -> tuple:
        hit = self._enc.get(id(cls))
        if hit is not None:
            return hit
        handle = self._top_level_handle("C", cls)
        self._enc[id(cls)] = handle
        return handle

    def function_handle(self, fn: FunctionInfo) -> tuple:
        hit = self._enc.get(id(fn))
        if hit is not None:
            return hit
        if fn.closure is not None or fn.lambda_stmt is not None:
            raise NotPortable(fn)
        if fn.cls is not None:
            owner = self.class_handle(fn.cls)
            fn.cls.link()
            names = [fn.name] + [n for n in fn.cls.methods if n != fn.name]
            name = next((n for n in names if fn.cls.methods.get(n) is fn), None)
            if name is None:
                raise NotPortable(fn)
            handle = ("M", owner, name)
        else:
            handle = self._top_level_handle("F", fn)
        self._enc[id(fn)] = handle
        return handle

    def resolve(self, handle: tuple):
        """The object ``handle`` names in this codec's project (``NotPortable`` when none)."""
        hit = self._dec.get(handle)
        if hit is not None:
            return hit
        tag = handle[0]
        if tag == "M":
            owner = self.resolve(handle[1])
            owner.link()
            found = owner.methods.get(handle[2])
            if not isinstance(found, FunctionInfo):
                raise NotPortable(handle)
        else:
            _, path, dotted, name = handle
            mod = _module_of(self.project, path, dotted)
            if mod is self.entry:
                raise NotPortable(handle)
            found = _top_level(self.project, mod, name)
            if not isinstance(found, ClassInfo if tag == "C" else FunctionInfo):
                raise NotPortable(handle)
        self._dec[handle] = found
        return found

    # -- values
    def encode(self, v) -> tuple:
        """``v`` (a :class:`Value`, or a plain constant) as nested tuples of handles and constants."""
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
            return ("k", type(v).__name__, v)
        if isinstance(v, Value):
            return (
                "V", v.kind.value, v.bool_tensor, v.maybe_none, v.weak, v.alias_of,
                None if v.elts is None else tuple(self.encode(e) for e in v.elts),
                None if v.elt is None else self.encode(v.elt),
                self._encode_ref(v.ref), self._encode_ref(v.const), v.keys, v.py_float, v.not_none,
            )
        raise NotPortable(v)

    def _encode_ref(self, r) -> tuple:
        if r is None or isinstance(r, (bool, int, float, complex, str, bytes)):
            return ("k", type(r).__name__, r)
        if isinstance(r, ClassInfo):
            return ("h", self.class_handle(r))
        if isinstance(r, FunctionInfo):
            return ("h", self.function_handle(r))
        if isinstance(r, Entries):
            return ("E", r.keys, tuple(self.encode(x) for x in r.values))
        if isinstance(r, Value):
            return ("v", self.encode(r))
        if isinstance(r, tuple) and type(r).__module__.startswith("pt2lint.") or type(r) is tuple:
            # BoundTensorMethod (name, receiver), _Fields (names), plain tuples of constants
            return ("t", f"{type(r).__module__}.{type(r).__qualname__}", tuple(self._encode_ref(x) for x in r))
        raise NotPortable(r)

    def decode(self, t: tuple):
        """The value :meth:`encode` wrote as ``t``, with handles resolved in this codec's project."""
        tag = t[0]
        if tag == "k":
            return t[2]
        (_, kind, bool_tensor, maybe_none, weak, alias_of, elts, elt, ref, const, keys, py_float, not_none) = t
        return Value(
            Kind(kind), bool_tensor=bool_tensor, maybe_none=maybe_none, weak=weak, alias_of=alias_of,
            elts=None if elts is None else tuple(self.decode(e) for e in elts),
            elt=None if elt is None else self.decode(elt),
            ref=self._decode_ref(ref), const=self._decode_ref(const), keys=keys, py_float=py_float,
            not_none=not_none,
        )

    def _decode_ref(self, t: tuple):
        tag = t[0]
        if tag == "k":
            return t[2]
        if tag == "h":
            return self.resolve(t[1])
        if tag == "E":
            return Entries(t[1], tuple(self.decode(x) for x in t[2]))
        if tag == "v":
            return self.decode(t[1])
        items = tuple(self._decode_ref(x) for x in t[2])
        return _tuple_type(t[1])(*items) if t[1] != "builtins.tuple" else items

    def state(self, done: bool, attrs: Dict[str, Value]) -> tuple:
        """A class's attribute state (collected or not, and the values) in encoded form."""
        return (done, tuple((name, self.encode(v)) for name, v in attrs.items()))


def _tuple_type(qualified: str):
    from pt2lint.analysis import interp

    module, _, name = qualified.rpartition(".")
    if module != interp.__name__ or not hasattr(interp, name):
        raise NotPortable(qualified)
    cls = getattr(interp, name)
    if cls.__getnewargs__ is not tuple.__getnewargs__:
        return lambda *items: cls(*items)  # built from its parts (``BoundTensorMethod(name, receiver)``)
    return lambda *items: cls(items)
