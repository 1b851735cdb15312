"""Module index: the classes, functions, imports and globals of one file, and its compiled entry points.

A compiled region starts at (DESIGN §1):

* ``forward`` (or ``__call__``) of an ``nn.Module`` subclass -- the base resolved
  through imports and aliases and through local base classes; a class whose
  base cannot be resolved (imported from outside torch) counts when it defines
  ``forward(self, ...)``;
* a function decorated with ``torch.compile`` / ``torch._dynamo.optimize``, or
  passed to ``torch.compile(...)``.

Functions decorated with ``torch.compiler.disable`` / ``torch._dynamo.disable``
are never entered; ``allow_in_graph`` / ``custom_op`` functions are opaque.
"""

from __future__ import annotations

import collections

from typing import Callable, Dict, List, Optional, Sequence

import libcst as cst

from pt2lint.analysis import torch_api as api
from pt2lint.analysis.imports import ImportMap, caught_exceptions, dotted_name, identifier  # noqa: F401  (identifier: re-exported)
from pt2lint.analysis.walk import walk


class FunctionInfo:
    """A function or method defined in the linted file.

    Attributes:
        node: its ``FunctionDef``.
        name: the bare name; ``symbol``: ``Class.method`` / ``outer.<locals>.inner``.
        cls: the class it is a method of, if any.
        disabled: decorated with ``torch.compiler.disable`` (Dynamo skips it).
        opaque: decorated with ``allow_in_graph``/``custom_op``-style decorators
            (Dynamo does not trace the body).
        compiled: decorated with ``torch.compile``.
        kind: ``"function"``, ``"method"``, ``"staticmethod"``, ``"classmethod"`` or ``"property"``.
        local_decorators: decorator expressions that name functions of this file
            (their wrappers run inside the compiled region).
        is_generator: contains ``yield`` directly.
    """

    __slots__ = (
        "node", "name", "symbol", "cls", "disabled", "opaque", "compiled", "kind",
        "local_decorators", "is_generator", "closure", "module", "foreign_decorators", "decorator_targets",
        "decorators_linked", "origin", "lambda_stmt", "has_yield",
    )

    def __init__(self, node: cst.FunctionDef, symbol: str, cls: Optional["ClassInfo"]) -> None:
        self.node = node
        self.name = identifier(node.name.value)
        self.symbol = symbol
        self.cls = cls
        self.disabled = False
        self.opaque = False
        self.compiled = False
        self.kind = "method" if cls is not None else "function"
        self.local_decorators: List[cst.BaseExpression] = []
        self.is_generator = False  # set by the interpreter when it meets a ``yield``
        self.has_yield: Optional[bool] = None  # its own body holds a ``yield`` (read once, when asked)
        self.closure = None  # the analysis frame a nested def closes over
        self.module = None  # the ModuleIndex it is defined in
        self.foreign_decorators: List[tuple] = []  # (expr, qualified name) of decorators imported from elsewhere
        self.decorator_targets: Dict[int, "FunctionInfo"] = {}  # id(decorator expr) -> project function
        self.decorators_linked = False
        self.origin: Optional["FunctionInfo"] = None  # the decorated function this is the undecorated body of
        self.lambda_stmt: Optional[cst.CSTNode] = None  # for a lambda: the statement that holds it

    def link_decorators(self) -> None:
        """Resolve decorators imported from other project modules (once): their wrappers run in the region."""
        if self.decorators_linked:
            return
        self.decorators_linked = True
        project = getattr(self.module, "project", None)
        if project is None or not self.foreign_decorators:
            return
        for expr, q in self.foreign_decorators:
            target = project.resolve(self.module, q)
            if isinstance(target, FunctionInfo):
                self.local_decorators.append(expr)
                self.decorator_targets[id(expr)] = target
            else:
                # a project alias of a torch decorator (``no_compile = torch.compiler.disable`` in
                # util.py, or a ``functools.partial`` of it) applied here
                if target is not None:
                    library = _partial_of_library(getattr(target, "index", None), getattr(target, "name", None))
                else:
                    library = project.external_name(self.module, q)
                if library in api.DISABLE_DECORATORS:
                    self.disabled = True
                elif library in api.OPAQUE_DECORATORS:
                    self.opaque = True

    def __repr__(self) -> str:
        return f"<FunctionInfo {self.symbol}>"


def _partial_of_library(mod, name: Optional[str]) -> Optional[str]:
    """``"torch.compiler.disable"`` when module-level ``name`` of module index ``mod`` is bound by
    ``functools.partial(torch.compiler.disable, ...)``: the library callable the partial wraps;
    else ``None``."""
    expr = getattr(mod, "global_exprs", {}).get(name)
    if not (isinstance(expr, cst.Call) and expr.args and expr.args[0].keyword is None and not expr.args[0].star):
        return None
    if mod.imports.qualify(expr.func) != "functools.partial":
        return None
    return mod.imports.qualify(expr.args[0].value)


class ClassInfo:
    """A class defined in the linted file.

    Attributes:
        bases: for each base, the local :class:`ClassInfo` or the qualified name
            (``"torch.nn.Module"``) or ``None`` when it cannot be resolved.
        methods: name -> :class:`FunctionInfo` (own methods only).
        attrs: ``self.<name>`` values collected from the methods (filled lazily).
    """

    __slots__ = (
        "node", "name", "bases", "methods", "attrs", "attrs_done", "_module", "_autograd_fn", "module", "_linked",
        "method_imports", "method_import_kinds", "class_values", "_mro",
    )

    def __init__(self, node: cst.ClassDef, name: str) -> None:
        self.module = None  # the ModuleIndex it is defined in
        self._linked = False  # bases imported from project modules resolved to their ClassInfo
        self._mro: Optional[List["ClassInfo"]] = None
        self.node = node
        self.name = name
        self.bases: List[object] = []
        self.methods: Dict[str, FunctionInfo] = {}
        # ``forward = helpers.impl`` in the class body: method name -> the imported function's qualified name
        self.method_imports: Dict[str, str] = {}
        # ... bound through ``staticmethod(...)`` / ``classmethod(...)``: method name -> that kind
        self.method_import_kinds: Dict[str, str] = {}
        self.attrs: Dict[str, object] = {}
        self.attrs_done = False
        # the values of the names its body assigns (``scale = 0.5``), filled lazily by the interpreter
        self.class_values: Optional[Dict[str, object]] = None
        self._module: Optional[bool] = None
        self._autograd_fn: Optional[bool] = None

    def mro(self) -> List["ClassInfo"]:
        """Local classes in method resolution order (breadth-first over the bases, cycles cut).

        Computed once per class: every class it reaches is linked on the way (:meth:`link`, which
        runs once), so the bases it read do not change after (an 800-class inheritance chain asked
        for it thousands of times, each walk quadratic in the chain's length)."""
        if self._mro is not None:
            return self._mro
        out: List[ClassInfo] = []
        seen = set()
        queue = collections.deque([self])
        while queue:
            c = queue.popleft()
            if id(c) in seen:
                continue
            seen.add(id(c))
            out.append(c)
            c.link()
            queue.extend(b for b in c.bases if isinstance(b, ClassInfo))
        self._mro = out
        return out

    def link(self) -> None:
        """Resolve bases imported from other project modules to their ``ClassInfo`` (once, lazily:
        only the classes an analysis looks at load the modules of their bases)."""
        if self._linked:
            return
        self._linked = True
        project = getattr(self.module, "project", None)
        if project is not None and any(isinstance(b, str) for b in self.bases):
            self.bases = project.resolve_bases(self.module, self.bases)
        if project is not None:
            for name, q in self.method_imports.items():
                target = project.resolve(self.module, q)
                if isinstance(target, FunctionInfo) and name not in self.methods:
                    alias = method_alias(target, self, name)
                    if name in self.method_import_kinds:
                        alias.kind = self.method_import_kinds[name]  # ``peak_fn = staticmethod(ops.peak)``
                    self.methods[name] = alias

    def external_bases(self) -> List[Optional[str]]:
        return [b for c in self.mro() for b in c.bases if not isinstance(b, ClassInfo)]

    def lookup_method(self, name: str, skip_self: bool = False) -> Optional[FunctionInfo]:
        name = identifier(name)
        for c in self.mro()[1 if skip_self else 0:]:
            if name in c.methods:
                return c.methods[name]
        return None

    @property
    def is_autograd_function(self) -> bool:
        if self._autograd_fn is None:
            self._autograd_fn = any(b in api.AUTOGRAD_FUNCTION_BASES for b in self.external_bases())
        return self._autograd_fn

    @property
    def is_module(self) -> bool:
        """An ``nn.Module`` subclass (resolved, or unresolvable with a ``forward``)."""
        if self._module is None:
            ext = self.external_bases()
            if self.is_autograd_function:
                self._module = False
            elif any(isinstance(b, str) and b.startswith(api.MODULE_BASES_PREFIX) and b not in api.NON_MODULE_TORCH_CLASSES for b in ext):
                self._module = True
            else:
                unresolved = any(b is None or (isinstance(b, str) and not b.startswith(("torch.", "builtins.", "typing.", "abc.", "enum.", "collections.", "dataclasses."))) for b in ext)
                fwd = self.lookup_method("forward")
                self._module = bool(unresolved and fwd is not None and _first_param_is_self(fwd.node))
        return self._module

    def __repr__(self) -> str:
        return f"<ClassInfo {self.name}>"


def lambda_function(lam: cst.Lambda, stmt: Optional[cst.CSTNode], symbol: str, cls: Optional[ClassInfo]) -> FunctionInfo:
    """The function a ``lambda`` expression makes, as a :class:`FunctionInfo`.

    Args:
        lam: the ``Lambda`` node.
        stmt: the statement of the file's tree that holds it; findings in the lambda's body
            are reported against it (the synthetic ``def`` below is in no tree).
        symbol: the name chains show (``M.forward.<locals>.<lambda>``).
        cls: the class whose body binds it, if any (``forward = lambda self, x: ...``).

    Python gives a lambda the parameters it spells and one ``return`` of its body; Dynamo
    traces it as it traces a ``def`` (measured on torch 2.13: ``g = lambda t: t.sum().item();
    g(x)`` breaks at the lambda's line).  Its ``node`` is a ``def`` with those parameters whose
    ``return`` holds the lambda's own body node, so positions of what is inside stay the
    file's.
    """
    ret = cst.Return(value=lam.body)
    node = cst.FunctionDef(
        name=cst.Name("_lambda"), params=lam.params, body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[ret])])
    )
    info = FunctionInfo(node, symbol, cls)
    info.name = "<lambda>"
    info.lambda_stmt = stmt
    return info


def method_alias(fn: FunctionInfo, cls: ClassInfo, name: str) -> FunctionInfo:
    """The method ``cls.name`` that a class-body ``name = fn`` binds, for a function ``fn`` defined
    outside the class (a module-level function, or one imported from another project module).

    Python makes a plain function assigned in a class body a method: called on an instance, its
    first parameter is the instance.  The result shares ``fn``'s node, decorators and module.
    """
    info = FunctionInfo(fn.node, fn.symbol, cls)
    info.name = name
    info.disabled, info.opaque, info.compiled = fn.disabled, fn.opaque, False
    info.local_decorators = list(fn.local_decorators)
    info.foreign_decorators = list(fn.foreign_decorators)
    info.decorator_targets = dict(fn.decorator_targets)
    info.decorators_linked = fn.decorators_linked
    info.module = fn.module
    info.closure = fn.closure
    info.origin = fn.origin
    return info


def _del_names(node: cst.Del) -> List[str]:
    target = node.target
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return [identifier(e.value) for e in elements if isinstance(e, cst.Name)]


def _first_param_is_self(node: cst.FunctionDef) -> bool:
    params = node.params.params
    return bool(params) and params[0].name.value == "self"


def decorator_name(dec: cst.Decorator, imports: ImportMap) -> Optional[str]:
    """Qualified (or, failing that, dotted) name of a decorator, call or not."""
    expr = dec.decorator
    if isinstance(expr, cst.Call):
        expr = expr.func
    return imports.qualify(expr) or dotted_name(expr)


class ModuleIndex:
    """Everything module-level that the interpreter looks up by name.

    Attributes:
        imports: import aliases (module level).
        functions: module-level functions by name.
        classes: classes by name (module level and nested, by bare name).
        global_exprs: module-level ``name = expr`` (last assignment wins).
        compiled_names: names passed to ``torch.compile(...)`` anywhere in the file.
        defined_names: every name bound at module level (shadows builtins).
        star_imports: modules named by ``from m import *`` (as written, maybe relative).
        path, source, name, is_package, project: set by the
            :class:`~pt2lint.analysis.project.ProjectModel` that loaded it.
    """

    def __init__(
        self,
        module: cst.Module,
        target: str = "compile",
        scan_compile_calls: bool = True,
        base: Optional["ModuleIndex"] = None,
        import_readable: Optional[Callable[..., bool]] = None,
    ) -> None:
        self.module = module
        self.target = target
        # ``import_readable(level, module, names=())``: the analysis can read what ``from
        # <dots><module> import <names>`` binds (a project module that binds the names, torch,
        # the standard library); None: assume so
        self.import_readable = import_readable
        self.imports = ImportMap()
        self.functions: Dict[str, FunctionInfo] = {}
        self.classes: Dict[str, ClassInfo] = {}
        self.all_classes: List[ClassInfo] = []
        self.all_functions: List[FunctionInfo] = []
        self.global_exprs: Dict[str, cst.BaseExpression] = {}
        self.defined_names: set = set()
        self.compiled_names: set = set()
        self.compiled_foreign: List[FunctionInfo] = []  # imported project functions passed to torch.compile
        self.star_imports: List[str] = []
        self.all_grown = False  # ``__all__ += [...]`` / ``__all__.extend(...)``: not the literal alone
        self.path = ""
        self.source = ""
        self.name = ""
        self.is_package = False
        self.project = None
        self.linked = False
        self.full_source = ""  # the file's whole text (this module may be a piece of it)
        # Top-level functions and classes of the file that are parsed on demand (a module of
        # another file): name -> (first line, last line); and their qualified names.
        self.lazy_defs: Dict[str, tuple] = {}
        self.siblings: Dict[str, str] = {}
        self.base: Optional["ModuleIndex"] = None
        self.file_lines: List[str] = []
        self.line_offset = 0  # a piece of a file starts this many lines into it
        self._collect_module(module.body)
        if base is not None:
            # a piece of a file (one top-level def): the file's imports and globals are its own
            self.base = base
            self.imports = base.imports
            self.global_exprs = base.global_exprs
            self.star_imports = base.star_imports
            self.defined_names = base.defined_names | self.defined_names
            self.siblings = base.siblings
        for item in self.all_classes:
            item.module = self
        for item in self.all_functions:
            item.module = self
        for cls in self.all_classes:
            cls.bases = [self._resolve_base(arg.value) for arg in cls.node.bases if arg.keyword is None]
        for fn in self.all_functions:
            self._classify_decorators(fn)
        if scan_compile_calls:
            _find_compile_calls(self)

    # -- collection -----------------------------------------------------------
    def _collect_module(self, body: Sequence[cst.CSTNode]) -> None:
        for stmt in body:
            self._collect_stmt(stmt, top=True)
            self._rebind_in_order(stmt)

    def _rebind_in_order(self, stmt: cst.CSTNode) -> None:
        """A statement of the module body binds its names over earlier bindings, as Python runs
        it: ``def act`` after ``from .util import act`` is the function, an import after a ``def``
        of the same name is the import (statements inside ``if``/``try`` blocks, which may not
        run, leave earlier bindings as they are)."""
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self.imports.names.pop(identifier(stmt.name.value), None)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for t in targets:
                        if isinstance(t, cst.Name):
                            self.imports.names.pop(identifier(t.value), None)
                    # ``warn = warnings.warn``, ``no_compile = torch.compiler.disable``: a module-level
                    # name bound to an imported name is that name, as an ``import ... as`` would be
                    value = small.value
                    if len(targets) == 1 and isinstance(targets[0], cst.Name) and isinstance(value, (cst.Name, cst.Attribute)):
                        qualified = self.imports.qualify(value)
                        if qualified is not None and not qualified.startswith("."):
                            self.imports.names[identifier(targets[0].value)] = qualified
                elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(getattr(small, "names", None), cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname is not None else alias.name
                        if isinstance(bound, cst.Name):
                            self.functions.pop(identifier(bound.value), None)

    def _collect_stmt(self, stmt: cst.CSTNode, top: bool, typing_only: bool = False) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    self.imports.add_import(small)
                    for alias in small.names:
                        self.defined_names.add((alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else dotted_name(alias.name).split(".")[0]))
                elif isinstance(small, cst.ImportFrom):
                    self.imports.add_import_from(small)
                    if isinstance(small.names, cst.ImportStar):
                        base = _import_from_module(small)
                        if base and not typing_only:  # ``if TYPE_CHECKING:`` binds nothing at run time
                            self.star_imports.append(base)
                    else:
                        for alias in small.names:
                            n = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else dotted_name(alias.name)
                            self.defined_names.add(n)
                elif isinstance(small, cst.Assign) and top:
                    for t in small.targets:
                        if isinstance(t.target, cst.Name):
                            self.global_exprs[identifier(t.target.value)] = small.value
                            self.defined_names.add(identifier(t.target.value))
                elif isinstance(small, cst.AnnAssign) and top and small.value is not None:
                    if isinstance(small.target, cst.Name):
                        self.global_exprs[identifier(small.target.value)] = small.value
                        self.defined_names.add(identifier(small.target.value))
                elif top and _grows_all(small):
                    self.all_grown = True
        elif isinstance(stmt, cst.FunctionDef):
            info = FunctionInfo(stmt, identifier(stmt.name.value), None)
            self.functions[info.name] = info
            self.all_functions.append(info)
            self.defined_names.add(info.name)
            for local_class in _local_classes(stmt):
                # ``def make(): class Net(nn.Module): ...``: a model a factory defines is analysed
                # like a module-level one (its name is the function's local, not the module's)
                self._collect_class(local_class, local_class.name.value, register=False)
        elif isinstance(stmt, cst.ClassDef):
            self._collect_class(stmt, stmt.name.value)
            self.defined_names.add(identifier(stmt.name.value))
        elif isinstance(stmt, cst.Try) and _imports_in(stmt.body.body) and self._optional_import_absent(stmt):
            # ``try: from flash_kernels import op / except ImportError: from .slow import op``: the
            # ``try`` imports what the analysis cannot read (an optional extension or package), so
            # it reads the program as running without it: the handler's bindings (the fallback
            # the project defines, ``HAS_FLASH = False``, ``op = None``) over the ``try`` body's
            for block in (stmt.body.body, stmt.orelse.body.body if stmt.orelse is not None else ()):
                for inner in block:
                    self._collect_stmt(inner, top, typing_only)
            for h in stmt.handlers:
                for inner in h.body.body:
                    self._collect_stmt(inner, top, typing_only)
                    for name in _defined_by(inner):
                        self.imports.names.pop(name, None)  # ``def op(x): ...`` replaces the import
        elif isinstance(stmt, cst.Try) and _imports_in(stmt.body.body):
            # ``try: from .fast import * / except ImportError: from .slow import *``: the import that
            # works is what runs; an ``except`` block is a fallback for the names the ``try`` body
            # does not bind, so it is read first and the ``try`` body (and ``else``) over it
            stars = len(self.star_imports)
            for h in stmt.handlers:
                for inner in h.body.body:
                    self._collect_stmt(inner, top, typing_only)
            fallback_stars = self.star_imports[stars:]
            del self.star_imports[stars:]
            for inner in stmt.body.body:
                self._collect_stmt(inner, top, typing_only)
            if len(self.star_imports) == stars:
                self.star_imports.extend(fallback_stars)  # the ``try`` body star-imports nothing
            if stmt.orelse is not None:
                for inner in stmt.orelse.body.body:
                    self._collect_stmt(inner, top, typing_only)
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            # ``if TYPE_CHECKING:`` / ``try: import x except ImportError`` blocks at module level.
            for block in _blocks(stmt):
                for inner in block:
                    self._collect_stmt(inner, top, typing_only or _is_type_checking_test(stmt))

    def _optional_import_absent(self, stmt: cst.Try) -> bool:
        """``stmt`` is ``try: <imports> except ImportError: <fallback>`` whose ``try`` body imports a
        module the analysis cannot read (:attr:`import_readable`), and a handler binds something."""
        if self.import_readable is None or not any(_catches_import_error(h) and _binds_names(h.body.body) for h in stmt.handlers):
            return False
        for line in stmt.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if isinstance(small, cst.Import):
                    if any(not self.import_readable(0, dotted_name(a.name) or "") for a in small.names):
                        return True
                elif isinstance(small, cst.ImportFrom):
                    name = dotted_name(small.module) if small.module is not None else ""
                    names = [] if isinstance(small.names, cst.ImportStar) else [dotted_name(a.name) or "" for a in small.names]
                    if not self.import_readable(len(small.relative), name or "", names):
                        return True
        return False

    def _collect_class(self, node: cst.ClassDef, name: str, register: bool = True) -> ClassInfo:
        """Index the class ``node`` (and the classes nested in its body); with ``register``, its
        name is a name of the module (``False`` for a class defined inside a function)."""
        name = identifier(name)
        cls = ClassInfo(node, name)
        if register:
            self.classes.setdefault(name, cls)
        self.all_classes.append(cls)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef):
                method = identifier(stmt.name.value)
                info = FunctionInfo(stmt, f"{name}.{method}", cls)
                # a later definition (property setter, overload) must not hide the getter
                if method not in cls.methods or not _is_property_setter(stmt):
                    cls.methods[method] = info
                    cls.method_imports.pop(method, None)
                self.all_functions.append(info)
            elif isinstance(stmt, cst.ClassDef):
                self._collect_class(stmt, stmt.name.value, register=register)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            if isinstance(t.target, cst.Name):
                                self._class_body_binding(cls, identifier(t.target.value), small.value, stmt)
                            elif isinstance(t.target, (cst.Tuple, cst.List)):
                                # ``forward, other = _impl, None``: element by element when both sides
                                # are plain sequences of one length; any other unpacking unbinds its names
                                targets = t.target.elements
                                values = small.value.elements if isinstance(small.value, (cst.Tuple, cst.List)) else None
                                plain = values is not None and len(values) == len(targets) and not any(
                                    isinstance(e, cst.StarredElement) for e in list(targets) + list(values)
                                )
                                for k, el in enumerate(targets):
                                    if isinstance(el.value, cst.Name):
                                        if plain:
                                            self._class_body_binding(cls, identifier(el.value.value), values[k].value, stmt)
                                        else:
                                            cls.methods.pop(identifier(el.value.value), None)
                                            cls.method_imports.pop(identifier(el.value.value), None)
                    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                        self._class_body_binding(cls, identifier(small.target.value), small.value, stmt)
                    elif isinstance(small, cst.Del):
                        for gone in _del_names(small):
                            cls.methods.pop(gone, None)  # ``del forward``: the class has no such method
                            cls.method_imports.pop(gone, None)
        return cls

    def _class_body_binding(
        self, cls: ClassInfo, name: str, value: cst.BaseExpression, stmt: Optional[cst.CSTNode] = None
    ) -> None:
        """``name = value`` in the body of ``cls``: a method when ``value`` names a function.

        ``forward = _impl`` (a method defined above in the body), ``forward = other_fn`` (a
        module-level function defined above) and ``forward = helpers.fn`` / an imported name (a
        function of another project module, resolved when the class is linked) bind a method;
        so does ``forward = lambda self, x: ...``, and ``staticmethod(...)`` /
        ``classmethod(...)`` of a lambda or a function defined above binds one of that kind;
        any other value unbinds a method of that name.  ``stmt`` is the class-body statement
        (where findings in a lambda's body are reported).
        """
        cls.methods.pop(name, None)
        cls.method_imports.pop(name, None)
        cls.method_import_kinds.pop(name, None)
        kind = None
        if (
            isinstance(value, cst.Call) and len(value.args) == 1 and value.args[0].keyword is None
            and not value.args[0].star
            and dotted_name(value.func) in ("staticmethod", "classmethod") and dotted_name(value.func) not in self.imports.names
        ):
            kind = dotted_name(value.func)
            value = value.args[0].value
        if isinstance(value, cst.Lambda):
            info = lambda_function(value, stmt, f"{cls.name}.{name}", cls)
            info.name = name
            if kind is not None:
                info.kind = kind
            cls.methods[name] = info
            self.all_functions.append(info)
            return
        if kind is not None:
            if isinstance(value, cst.Name) and identifier(value.value) in self.functions and value.value not in self.imports.names:
                info = method_alias(self.functions[identifier(value.value)], cls, name)
                info.kind = kind
                info.module = None  # set with the others once the module is collected
                cls.methods[name] = info
                self.all_functions.append(info)
                return
            q = self._imported_callable(value)
            if q is not None:
                cls.method_imports[name] = q  # ``staticmethod(ops.peak)``: a function of another module
                cls.method_import_kinds[name] = kind
            return
        if (
            isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value in self.classes
            and value.value.value not in self.imports.names
        ):
            # ``forward = Base._impl``: a method of a class of this file, read through the class
            source_cls = self.classes[value.value.value]
            fn = source_cls.methods.get(identifier(value.attr.value))
            if fn is not None and fn.kind == "method":
                cls.methods[name] = fn
            return
        if isinstance(value, cst.Name):
            source = identifier(value.value)
            if source in cls.methods:
                cls.methods[name] = cls.methods[source]
                return
            fn = self.functions.get(source)
            if fn is not None and source not in self.imports.names:
                info = method_alias(fn, cls, name)
                info.module = None  # set with the others once the module is collected
                cls.methods[name] = info
                self.all_functions.append(info)
                return
        q = self._imported_callable(value)
        if q is not None:
            cls.method_imports[name] = q

    def _imported_callable(self, value: cst.BaseExpression) -> Optional[str]:
        """The qualified name of ``value`` when it names something imported from a module other than
        torch, builtins, ``typing`` or ``functools`` (a function of another project module, resolved
        when the class is linked), else ``None``."""
        q = self.imports.qualify(value)
        return q if q is not None and not q.startswith(("torch.", "builtins.", "typing.", "functools.")) else None

    def _resolve_base(self, expr: cst.BaseExpression) -> object:
        if isinstance(expr, cst.Name) and expr.value in self.classes and expr.value not in self.imports.names:
            return self.classes[expr.value]
        if isinstance(expr, cst.Subscript):  # Generic[T], nn.Module subclass with type params
            return self._resolve_base(expr.value)
        q = self.imports.qualify(expr)
        if q is not None:
            return q
        if isinstance(expr, cst.Name) and expr.value in ("object", "Exception", "dict", "list", "tuple", "str", "int"):
            return f"builtins.{expr.value}"
        if isinstance(expr, cst.Name) and expr.value in self.siblings:
            return self.siblings[expr.value]  # a class of the same file, parsed on demand
        if isinstance(expr, cst.Name) and expr.value in self.global_exprs:
            return None
        return None

    def _classify_decorators(self, fn: FunctionInfo) -> None:
        for dec in fn.node.decorators:
            name = decorator_name(dec, self.imports)
            if name is None:
                continue
            if "." not in name and name in self.global_exprs and name not in self.functions:
                name = _partial_of_library(self, name) or name  # ``@shallow`` with ``shallow = functools.partial(torch.compiler.disable, ...)``
            if name in api.DISABLE_DECORATORS:
                recursive = True
                if isinstance(dec.decorator, cst.Call):
                    for arg in dec.decorator.args:
                        if arg.keyword and arg.keyword.value == "recursive" and isinstance(arg.value, cst.Name) and arg.value.value == "False":
                            recursive = False
                fn.disabled = True if recursive else fn.disabled
                fn.disabled = True
            elif name in api.OPAQUE_DECORATORS:
                fn.opaque = True
            elif name in api.COMPILE_FUNCTIONS:
                fn.compiled = True
            elif name in ("staticmethod", "builtins.staticmethod"):
                fn.kind = "staticmethod"
            elif name in ("classmethod", "builtins.classmethod"):
                fn.kind = "classmethod"
            elif name in ("property", "functools.cached_property", "cached_property"):
                fn.kind = "property"
            elif "." not in name and name in self.functions:
                fn.local_decorators.append(dec.decorator)
            elif "." not in name and name in self.siblings:
                fn.foreign_decorators.append((dec.decorator, self.siblings[name]))
            else:
                expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
                q = self.imports.qualify(expr)
                if q is not None and not q.startswith(("torch.", "builtins.", "typing.", "functools.", "abc.")):
                    fn.foreign_decorators.append((dec.decorator, q))

    # -- entry points ---------------------------------------------------------
    def module_classes(self) -> List[ClassInfo]:
        return [c for c in self.all_classes if c.is_module]

    def entry_functions(self) -> List[FunctionInfo]:
        """Functions compiled directly: ``@torch.compile`` or passed to ``torch.compile``."""
        out = []
        for fn in self.all_functions:
            if fn.compiled or (fn.cls is None and fn.name in self.compiled_names):
                out.append(fn)
        out.extend(f for f in self.compiled_foreign if f not in out)
        return out


def _is_property_setter(node: cst.FunctionDef) -> bool:
    for dec in node.decorators:
        d = dec.decorator
        if isinstance(d, cst.Attribute) and d.attr.value in ("setter", "deleter"):
            return True
        if isinstance(d, cst.Name) and d.value == "overload":
            return True
    return False


def _is_type_checking_test(stmt: cst.CSTNode) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``."""
    test = getattr(stmt, "test", None) if isinstance(stmt, cst.If) else None
    name = dotted_name(test) if test is not None else None
    return bool(name) and name.rsplit(".", 1)[-1] == "TYPE_CHECKING"


def _import_from_module(node: cst.ImportFrom) -> str:
    """The module an ``ImportFrom`` names, with its leading dots (``"..ops"``)."""
    from pt2lint.analysis.imports import _module_name

    base = _module_name(node.module) if node.module is not None else ""
    return "." * len(node.relative) + base


def _grows_all(small: cst.CSTNode) -> bool:
    """``__all__ += [...]``, ``__all__.extend(...)`` or ``__all__.append(...)``."""
    if isinstance(small, cst.AugAssign):
        return isinstance(small.target, cst.Name) and small.target.value == "__all__"
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        return (
            isinstance(func, cst.Attribute) and func.attr.value in ("extend", "append")
            and isinstance(func.value, cst.Name) and func.value.value == "__all__"
        )
    return False


#: Exception names whose handler runs when an import fails.
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_BUILTINS_IMPORT_ERRORS = frozenset(f"builtins.{e}" for e in _IMPORT_ERRORS)  # ``except builtins.ImportError``


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    """``except:``, ``except ImportError:``, ``except (ImportError, OSError) as e:``, ..."""
    names = caught_exceptions(handler)
    if names is None:
        return True
    return any(dotted_name(n) in _IMPORT_ERRORS or dotted_name(n) in _BUILTINS_IMPORT_ERRORS for n in names)


def _binds_names(body) -> bool:
    """A block binds a name at its top level (an import, an assignment, a ``def`` or ``class``):
    a fallback, not only a ``raise`` or a warning."""
    for stmt in body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return True
        if isinstance(stmt, cst.SimpleStatementLine) and any(
            isinstance(small, (cst.Import, cst.ImportFrom, cst.Assign, cst.AnnAssign)) for small in stmt.body
        ):
            return True
    return False


def _defined_by(stmt: cst.CSTNode) -> List[str]:
    """The names a module-level ``def``, ``class`` or plain assignment binds (not imports)."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return [identifier(stmt.name.value)]
    out: List[str] = []
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target] if isinstance(small, cst.AnnAssign) else []
            out += [identifier(t.value) for t in targets if isinstance(t, cst.Name)]
    return out


def _imports_in(body) -> bool:
    """A block holds an ``import`` statement at its top level (an optional-import ``try``)."""
    return any(
        isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body)
        for stmt in body
    )


def _blocks(stmt: cst.CSTNode):
    if isinstance(stmt, cst.If):
        yield stmt.body.body
        if stmt.orelse is not None:
            if isinstance(stmt.orelse, cst.If):
                yield from _blocks(stmt.orelse)
            else:
                yield stmt.orelse.body.body
    elif isinstance(stmt, cst.Try):
        yield stmt.body.body
        for h in stmt.handlers:
            yield h.body.body
        if stmt.orelse is not None:
            yield stmt.orelse.body.body
    elif isinstance(stmt, cst.With):
        yield stmt.body.body


def _find_compile_calls(index: "ModuleIndex") -> None:
    """Names of local functions passed to ``torch.compile(...)`` anywhere in the module, and the
    methods compiled as bound methods (see :func:`_compiled_method`)."""
    bound_methods = []
    for node in walk(index.module):
        if isinstance(node, cst.Call) and node.args:
            q = index.imports.qualify(node.func)
            first = node.args[0].value
            if q in api.COMPILE_FUNCTIONS and isinstance(first, cst.Name):
                index.compiled_names.add(first.value)
            elif q in api.COMPILE_FUNCTIONS and isinstance(first, cst.Attribute):
                bound_methods.append(node)
    if not bound_methods:
        return
    wanted = {id(n) for n in bound_methods}
    for cls in index.all_classes:
        for fn in cls.methods.values():
            for node in walk(fn.node):
                if id(node) in wanted:
                    _compiled_method(index, node.args[0].value, cls)
    for stmt in index.module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        for node in walk(stmt):
            if id(node) in wanted:
                _compiled_method(index, node.args[0].value, None)


def _compiled_method(index: "ModuleIndex", target: cst.BaseExpression, owner: Optional[ClassInfo]) -> None:
    """Mark the method a ``torch.compile(obj.method)`` call compiles: ``self.method`` in a method
    of ``owner`` (``self._step = torch.compile(self._step)``), or ``model.method`` with ``model``
    bound at module level to an instance of a class of the module (``flow = Flow()`` then
    ``torch.compile(flow.log_prob)``).  Dynamo traces the bound method with that instance as
    ``self``, as it traces ``forward``."""
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
        return
    base, name = target.value.value, target.attr.value
    cls: Optional[ClassInfo] = None
    if owner is not None and base == "self":
        cls = owner
    elif owner is None:
        bound = index.global_exprs.get(base)
        if isinstance(bound, cst.Call) and isinstance(bound.func, cst.Name):
            cls = index.classes.get(bound.func.value)
    if cls is None:
        return
    fn = cls.lookup_method(name)
    if fn is not None and fn.kind == "method" and fn.cls is not None:
        fn.compiled = True


def _local_classes(fn: cst.FunctionDef) -> List[cst.ClassDef]:
    """The classes defined in ``fn``'s body, in its blocks too (``if``, ``try``, ``with``), but not
    inside nested functions or classes (a class's own nested classes are indexed with it)."""
    out: List[cst.ClassDef] = []
    stack: List[cst.CSTNode] = list(fn.body.children)
    while stack:
        n = stack.pop()
        if isinstance(n, cst.ClassDef):
            out.append(n)
            continue
        if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.BaseExpression, cst.SimpleStatementLine)):
            continue
        stack.extend(n.children)
    return out[::-1]
