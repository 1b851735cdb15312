"""Dynamo settings written in the linted project's own code.

Three kinds of statement decide how Dynamo treats a compiled region, and all three
are read here, from every linted file, before any file is analysed:

* ``torch._dynamo.config.<knob> = <constant>`` (any spelling the imports allow:
  ``from torch._dynamo import config as dc; dc.capture_scalar_outputs = True``).
  Dynamo's config is process-wide, so an assignment anywhere in the project applies
  to every region of the project (:class:`KnobSetting`).
* ``torch._dynamo.config.patch(knob=value)`` used as a decorator or a ``with``
  block: it applies while the decorated function or the block runs, so it governs
  the region it decorates, and the regions compiled inside it
  (:class:`RegionOptions.knobs`).
* ``torch.compile(target, mode=..., fullgraph=..., dynamic=...)`` (also as
  ``@torch.compile(...)`` and ``module.compile(...)``): the options apply to what
  it compiles.  The target is resolved statically: a function of the file, a class
  instance built in the file (``model = Net(); torch.compile(model)``), or a class
  imported from another module (``torch.compile(pkg.models.Net())``).

A fourth kind decides which code of a region is alive: the arguments the project passes
where it builds a config dataclass (``Config(quantize=True)``, :class:`ConfigSite`).  The
analysis reads a field of such a config as its class default; a field some construction
site in the project sets to another value (or to a value computed at run time) is read as
either (see :meth:`pt2lint.analysis.interp.Interpreter.class_level_values`), so the code
under ``if self.cfg.quantize:`` is analysed when a script of the project turns it on.

Only constants are read (``True``, ``"reduce-overhead"``); a value computed at run
time is unknown (ignored, or for a config field: "some other value").  The scan uses
:mod:`ast` (no LibCST parse, no import of the code), and parses only files that mention
``compile(`` or ``_dynamo``, or call a class that annotates an ``__init__`` parameter.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from pt2lint.analysis.imports import ast_dotted_name as _dotted
from pt2lint.analysis.imports import qualify_dotted, resolve_relative

#: ``torch._dynamo.config`` knobs pt2lint models (settable in ``[tool.pt2lint]`` as kebab-case too).
KNOBS: Tuple[str, ...] = ("capture_scalar_outputs", "capture_dynamic_output_shape_ops", "allow_rnn")
_CONFIG = "torch._dynamo.config"
_PATCH = ("torch._dynamo.config.patch",)
_COMPILE = ("torch.compile", "torch._dynamo.optimize")
_OPTIONS = ("mode", "fullgraph", "dynamic")


@dataclass(frozen=True)
class KnobSetting:
    """``torch._dynamo.config.<knob> = value`` found in the project.

    Attributes:
        knob: the config name (``"capture_scalar_outputs"``).
        value: the constant assigned.
        where: ``"path:line"`` of the assignment (the path as the file was named).
    """

    knob: str
    value: object
    where: str


@dataclass(frozen=True)
class RegionOptions:
    """What a compile call (or a config patch) says about one compiled region.

    Attributes:
        key: the region's qualified name: ``"<module>.<Class>.forward"`` for a module class,
            ``"<module>.<function symbol>"`` for a compiled function.
        mode: the ``mode=`` string, or ``None``.
        fullgraph: the ``fullgraph=`` constant, or ``None``.
        dynamic: the ``dynamic=`` constant, or ``None``.
        knobs: ``(knob, value)`` pairs from ``config.patch`` around the compile or on the function.
        where: ``"path:line"`` of the call (or decorator) that set them.
    """

    key: str
    mode: Optional[str] = None
    fullgraph: Optional[bool] = None
    dynamic: Optional[bool] = None
    knobs: Tuple[Tuple[str, object], ...] = ()
    where: str = ""

    def merged(self, other: "RegionOptions") -> "RegionOptions":
        """These options with ``other``'s set values on top (the later call wins per option)."""
        return RegionOptions(
            key=self.key,
            mode=other.mode if other.mode is not None else self.mode,
            fullgraph=other.fullgraph if other.fullgraph is not None else self.fullgraph,
            dynamic=other.dynamic if other.dynamic is not None else self.dynamic,
            knobs=tuple(dict(self.knobs + other.knobs).items()),
            where=other.where or self.where,
        )


@dataclass(frozen=True)
class ConfigSite:
    """A call that builds a dataclass of the project, as far as the scan can read it.

    Attributes:
        callee: the qualified name of the class called (``"pkg.config.ModelConfig"``).
        positional: ``(known, value)`` of each positional argument, in order (``known`` False:
            a value computed at run time).
        keywords: ``(name, known, value)`` of each keyword argument.
        open: the call passes ``*args`` or ``**kwargs``: any field may be set.
        where: ``"path:line"`` of the call.
    """

    callee: str
    positional: Tuple[Tuple[bool, object], ...] = ()
    keywords: Tuple[Tuple[str, bool, object], ...] = ()
    open: bool = False
    where: str = ""


@dataclass(frozen=True)
class CodeConfig:
    """Every knob assignment, region option and config construction site found in the project's code."""

    knobs: Tuple[KnobSetting, ...] = ()
    regions: Tuple[RegionOptions, ...] = field(default_factory=tuple)
    sites: Tuple[ConfigSite, ...] = ()

    def region_map(self) -> Dict[str, RegionOptions]:
        """Region key -> its merged options."""
        out: Dict[str, RegionOptions] = {}
        for r in self.regions:
            out[r.key] = out[r.key].merged(r) if r.key in out else r
        return out


def _constant(node: Optional[ast.AST]) -> Tuple[bool, object]:
    """``(known, value)`` of a literal bool, number, string or ``None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float, str, type(None))):
        return True, node.value
    return False, None


class _Scanner(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, display: str, candidates: frozenset = frozenset()) -> None:
        self.candidates = candidates  # candidate config classes: annotations of ``__init__`` parameters
        self.sites: List[ConfigSite] = []
        self._in_class = False  # directly in a class body
        self._in_method = False  # inside a method of a class (not a classmethod/staticmethod)
        self.module = module
        self.is_package = is_package
        self.display = display
        self.names: Dict[str, str] = {}  # local name -> qualified name (imports, local defs)
        self.bindings: Dict[str, List[ast.AST]] = {}  # ``n = Call(...)`` / ``self.n = Call(...)``: dotted -> values
        self.knobs: List[KnobSetting] = []
        self.regions: List[RegionOptions] = []
        self._scope: List[str] = []  # class / function names of the symbol being visited
        self._patches: List[Tuple[Tuple[str, object], ...]] = []  # enclosing ``with config.patch(...)``

    # -- names ----------------------------------------------------------------
    def collect(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.names[a.asname] = a.name
                    else:
                        head = a.name.split(".", 1)[0]
                        self.names[head] = head
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = resolve_relative(self.module, self.is_package, node.level, node.module)
                for a in node.names:
                    if a.name != "*":
                        self.names[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                for t in node.targets:
                    d = _dotted(t)
                    if d is not None:
                        self.bindings.setdefault(d, []).append(node.value)
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                self.names[node.name] = f"{self.module}.{node.name}" if self.module else node.name

    def qualify(self, node: ast.AST) -> Optional[str]:
        return qualify_dotted(self.names, _dotted(node))

    def _where(self, node: ast.AST) -> str:
        return f"{self.display}:{getattr(node, 'lineno', 0)}"

    # -- knob assignments -------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        known, value = _constant(node.value)
        for t in node.targets:
            q = self.qualify(t) if isinstance(t, ast.Attribute) else None
            if known and q is not None and q.rsplit(".", 1)[0] == _CONFIG:
                self.knobs.append(KnobSetting(q.rsplit(".", 1)[1], value, self._where(node)))
        self.generic_visit(node)

    def _patch_knobs(self, call: ast.AST) -> Optional[Tuple[Tuple[str, object], ...]]:
        """The constant ``(knob, value)`` pairs of a ``config.patch(...)`` call, or ``None``."""
        if not isinstance(call, ast.Call) or self.qualify(call.func) not in _PATCH:
            return None
        out: List[Tuple[str, object]] = []
        for kw in call.keywords:
            known, value = _constant(kw.value)
            if kw.arg and known:
                out.append((kw.arg, value))
        if call.args:
            first = call.args[0]
            if isinstance(first, ast.Dict):
                for k, v in zip(first.keys, first.values):
                    kk, key = _constant(k)
                    kv, value = _constant(v)
                    if kk and kv and isinstance(key, str):
                        out.append((key, value))
            elif len(call.args) == 2:
                kk, key = _constant(first)
                kv, value = _constant(call.args[1])
                if kk and kv and isinstance(key, str):
                    out.append((key, value))
        return tuple(out)

    def visit_With(self, node: ast.With) -> None:
        pushed = 0
        for item in node.items:
            knobs = self._patch_knobs(item.context_expr)
            if knobs:
                self._patches.append(knobs)
                pushed += 1
        self.generic_visit(node)
        for _ in range(pushed):
            self._patches.pop()

    visit_AsyncWith = visit_With

    # -- compile calls ----------------------------------------------------------
    def _symbol(self, name: str) -> str:
        return ".".join(self._scope + [name])

    def _def(self, node) -> None:
        symbol = self._symbol(node.name)
        key = f"{self.module}.{symbol}" if self.module else symbol
        for dec in node.decorator_list:
            knobs = self._patch_knobs(dec)
            if knobs:
                self.regions.append(RegionOptions(key, knobs=knobs, where=self._where(dec)))
                continue
            func = dec.func if isinstance(dec, ast.Call) else dec
            if self.qualify(func) in _COMPILE:
                opts = self._options(dec) if isinstance(dec, ast.Call) else {}
                self.regions.append(RegionOptions(key, where=self._where(dec), knobs=self._enclosing(), **opts))
        was_in_method = self._in_method
        if self._in_class and not any(_dotted(d) in ("classmethod", "staticmethod") for d in node.decorator_list):
            self._in_method = True
        in_class, self._in_class = self._in_class, False
        self._scope.append(node.name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._scope.append("<locals>")
        self.generic_visit(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._scope.pop()
        self._scope.pop()
        self._in_method, self._in_class = was_in_method, in_class

    visit_FunctionDef = _def
    visit_AsyncFunctionDef = _def

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        in_class, self._in_class = self._in_class, True
        self._scope.append(node.name)
        self.generic_visit(node)
        self._scope.pop()
        self._in_class = in_class

    def _enclosing(self) -> Tuple[Tuple[str, object], ...]:
        out: Tuple[Tuple[str, object], ...] = ()
        for knobs in self._patches:
            out += knobs
        return out

    def _options(self, call: ast.Call) -> Dict[str, object]:
        opts: Dict[str, object] = {}
        for kw in call.keywords:
            if kw.arg in _OPTIONS:
                known, value = _constant(kw.value)
                if known and (kw.arg == "mode" and isinstance(value, str) or kw.arg != "mode" and isinstance(value, bool)):
                    opts[kw.arg] = value
        return opts

    def _class_of(self, expr: ast.AST, depth: int = 0) -> Optional[str]:
        """The qualified class an expression builds (``Net()``, ``model`` bound to ``Net()``), or ``None``."""
        if depth > 4:
            return None
        if isinstance(expr, ast.Call):
            if self.qualify(expr.func) in _COMPILE:
                return None
            return self.qualify(expr.func)
        d = _dotted(expr)
        if d is None:
            return None
        for value in self.bindings.get(d, ()):
            if isinstance(value, ast.Call) and self.qualify(value.func) not in _COMPILE:
                found = self._class_of(value, depth + 1)
                if found is not None:
                    return found
        return None

    def _target_key(self, expr: ast.AST) -> Optional[str]:
        """The region key of what ``torch.compile(expr)`` compiles."""
        if isinstance(expr, ast.Attribute) and expr.attr in ("forward", "__call__"):
            cls = self._class_of(expr.value)
            return f"{cls}.{expr.attr}" if cls else None
        if isinstance(expr, ast.Name) and expr.id in self.names and expr.id not in self.bindings:
            return self.names[expr.id]  # a function of this file, or one imported
        cls = self._class_of(expr)
        return f"{cls}.forward" if cls else None

    def _site(self, node: ast.Call, q: Optional[str]) -> None:
        """Record ``node`` when it calls a candidate class (:func:`annotated_init_classes`) by name, outside the methods
        of a class (a config is built by a script, a factory function or a classmethod; a
        dataclass built in ``forward`` is an output record, whose fields the call sets anyway)."""
        if self._in_method:
            return
        name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else None
        if name is None or name not in self.candidates:
            return
        positional = []
        is_open = False
        for a in node.args:
            if isinstance(a, ast.Starred):
                is_open = True
                continue
            positional.append(_constant(a))
        keywords = []
        for kw in node.keywords:
            if kw.arg is None:
                is_open = True
                continue
            known, value = _constant(kw.value)
            keywords.append((kw.arg, known, value))
        self.sites.append(ConfigSite(q or name, tuple(positional), tuple(keywords), is_open, self._where(node)))

    def visit_Call(self, node: ast.Call) -> None:
        q = self.qualify(node.func)
        if self.candidates:
            self._site(node, q)
        target: Optional[ast.AST] = None
        if q in _COMPILE and node.args:
            target = node.args[0]
        elif q is None and isinstance(node.func, ast.Attribute) and node.func.attr == "compile":
            target = node.func.value  # ``model.compile(...)`` (nn.Module.compile)
            if self._class_of(target) is None:
                target = None
        if target is not None:
            key = self._target_key(target)
            if key is not None:
                self.regions.append(RegionOptions(key, where=self._where(node), knobs=self._enclosing(), **self._options(node)))
        self.generic_visit(node)


#: What a file must contain to hold anything :func:`scan_source` reads: a knob assignment or a
#: patch needs ``_dynamo`` (in an import or in the dotted name itself), a compile call ``compile(``.
_MARKER = re.compile(r"_dynamo|compile\s*\(")
#: ``def __init__(self, ...)`` up to its closing ``):`` (the parameter list, across lines).
_INIT_SIGNATURE = re.compile(r"def[ \t]+__init__[ \t]*\((.*?)\)[ \t]*(?:->[^:\n]*)?:", re.S)
#: A parameter's annotation naming a class: ``cfg: Config``, ``cfg: Optional[Config]``, ``cfg: "Config"``.
_ANNOTATED_CLASS = re.compile(r"\w[ \t]*:[ \t]*(?:[\w.]*(?:Optional|Union)\[)?[\"']?(?:\w+\.)*([A-Z]\w*)")
#: A call of a capitalised name (``Config(``, ``cfgs.Config (``).
_CAPITAL_CALL = re.compile(r"\b([A-Z]\w*)[ \t]*\(")


def annotated_init_classes(text: str) -> frozenset:
    """Capitalised class names that annotate a parameter of some ``__init__`` in ``text`` (a
    text scan).  Only such a class's fields are read as their class defaults by the analysis
    (a ``cfg: Config`` parameter is an instance of ``Config``), so only its construction sites
    can change what the analysis sees."""
    out = set()
    for params in _INIT_SIGNATURE.findall(text):
        out.update(_ANNOTATED_CLASS.findall(params))
    return frozenset(out)


#: ``class Name`` at the start of a line.
_CLASS_DEF = re.compile(r"^[ \t]*class[ \t]+(\w+)", re.M)
#: ``@dataclass``-style decorators (attrs' too), other decorators, then ``class Name``.
_DATACLASS_DEF = re.compile(
    r"^[ \t]*@(?:\w+\.)*(?:dataclass|define|frozen|attrs|s)\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*class[ \t]+(\w+)", re.M
)


def class_definitions(text: str) -> Tuple[frozenset, frozenset]:
    """``(dataclasses, other classes)``: the simple names of the classes ``text`` defines under a
    ``@dataclass``-style decorator, and of the others (a text scan)."""
    data = frozenset(_DATACLASS_DEF.findall(text))
    return data, frozenset(_CLASS_DEF.findall(text)) - data


def _builds(text: str, names: frozenset) -> bool:
    """Whether ``text`` may call one of ``names`` (a text scan: ``Name(``)."""
    if not names:
        return False
    if len(names) <= 64:
        return re.search(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")[ \t]*\(", text) is not None
    return not names.isdisjoint(_CAPITAL_CALL.findall(text))


def scan_source(text: str, display: str, module: str = "", is_package: bool = False, candidates: Optional[frozenset] = None) -> CodeConfig:
    """Knob assignments, region options and config construction sites in one file's text.

    Args:
        text: the source.
        display: the file name findings use (it goes into ``where``).
        module: the file's dotted module name (region keys and relative imports use it).
        is_package: the file is a package's ``__init__.py``.
        candidates: simple names of the classes whose construction sites are recorded
            (``None``: the classes that annotate an ``__init__`` parameter in the file).

    Returns:
        A :class:`CodeConfig`; empty for a file that does not parse (its syntax error is
        reported by the lint itself).
    """
    if candidates is None:
        candidates = annotated_init_classes(text)
    building = _builds(text, candidates)
    if _MARKER.search(text) is None and not building:
        return CodeConfig()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "invalid escape sequence" and the like: not ours to print
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return CodeConfig()
    scanner = _Scanner(module, is_package, display, candidates if building else frozenset())
    scanner.collect(tree)
    try:
        scanner.visit(tree)
    except RecursionError:
        return CodeConfig()
    return CodeConfig(tuple(scanner.knobs), tuple(scanner.regions), tuple(scanner.sites))


def scan_files(files: Iterable[Tuple[str, str]], project_root: str = "", src: Sequence[str] = (), max_bytes: Optional[int] = None) -> CodeConfig:
    """:func:`scan_source` over ``(path, display name)`` pairs, merged in order.

    The construction sites recorded are those of the classes that annotate an ``__init__``
    parameter in any of the files and that the files do not define as plain classes (the
    analysis keeps the sites of dataclasses among them).
    Files that cannot be read or decoded are skipped (the lint reports them).
    """
    from pt2lint import reading
    from pt2lint.analysis.project import import_roots, module_name_for
    from pt2lint.engine import DecodeError, decode_source

    texts: List[Tuple[str, str, str]] = []
    annotated: set = set()
    defined_data: set = set()
    defined_other: set = set()
    for path, display in files:
        try:
            data = reading.read_bytes(path, max_bytes=max_bytes or reading.DEFAULT_MAX_BYTES)
            text = decode_source(data)
        except (OSError, DecodeError):
            continue
        annotated |= annotated_init_classes(text)
        data, other = class_definitions(text)
        defined_data |= data
        defined_other |= other
        texts.append((path, display, text))
    # a candidate that the linted files define only as a plain class is no dataclass (a config
    # class whose ``__init__`` sets the fields is read through that ``__init__``)
    names = frozenset(annotated - (defined_other - defined_data))
    knobs: List[KnobSetting] = []
    regions: List[RegionOptions] = []
    sites: List[ConfigSite] = []
    for path, display, text in texts:
        if _MARKER.search(text) is None and not _builds(text, names):
            continue
        roots = import_roots(os.path.abspath(path), project_root, src)
        module, is_package = module_name_for(path, roots)
        found = scan_source(text, display, module, is_package, names)
        knobs.extend(found.knobs)
        regions.extend(found.regions)
        sites.extend(found.sites)
    return CodeConfig(tuple(knobs), tuple(regions), tuple(sites))


def apply_to_settings(settings, config: CodeConfig, explicit: Iterable[str] = ()):
    """``settings`` with the project's own Dynamo config applied.

    A knob of :data:`KNOBS` assigned a bool in code takes that value project-wide (Dynamo's
    config is global to the process), unless the command line set it (``explicit``: knob
    names given as options). The last assignment in file order wins. Region options are
    attached as ``settings.regions``.
    """
    explicit = set(explicit)
    changes: Dict[str, object] = {}
    code_knobs: Dict[str, Tuple[object, str]] = {}
    for k in config.knobs:
        if k.knob in KNOBS and isinstance(k.value, bool):
            code_knobs[k.knob] = (k.value, k.where)
    for knob, (value, _) in code_knobs.items():
        if knob not in explicit and hasattr(settings, knob):
            changes[knob] = value
    regions = tuple(sorted(config.region_map().values(), key=lambda r: r.key))
    return replace(
        settings,
        code_scanned=True,
        code_knobs=tuple(sorted((k, v, w) for k, (v, w) in code_knobs.items())),
        regions=regions,
        config_sites=_site_summary(config.sites),
        **changes,
    )


def _site_summary(sites: Sequence[ConfigSite]) -> Tuple[ConfigSite, ...]:
    """The distinct construction sites, without where they are (so that moving a call does not
    change the cache key), in a stable order."""
    return tuple(sorted({replace(s, where="") for s in sites}, key=repr))


def site_overrides(sites: Sequence[ConfigSite], qualname: str, fields: Sequence[str]) -> Dict[str, List[Tuple[bool, object]]]:
    """What the construction sites of the dataclass ``qualname`` pass for each of its ``fields``.

    Args:
        sites: the project's :class:`ConfigSite` records (``settings.config_sites``).
        qualname: the class's qualified name (``"pkg.config.ModelConfig"``); a site whose callee
            could only be read as a simple name matches on the last segment.
        fields: the class's ``__init__`` fields in order (positional arguments bind to them).

    Returns:
        field -> the ``(known, value)`` pairs passed for it (a site passing ``**kwargs`` or
        ``*args`` counts as passing an unknown value to every field).
    """
    short = qualname.rsplit(".", 1)[-1]
    out: Dict[str, List[Tuple[bool, object]]] = {}
    for site in sites:
        if site.callee != qualname and not (site.callee == short and "." not in site.callee):
            continue
        if site.open:
            for f in fields:
                out.setdefault(f, []).append((False, None))
        for f, pair in zip(fields, site.positional):
            out.setdefault(f, []).append(pair)
        for name, known, value in site.keywords:
            out.setdefault(name, []).append((known, value))
    return out


def region_lookup(regions: Sequence[RegionOptions]) -> Mapping[str, RegionOptions]:
    """Key -> options, for the driver (``settings.regions`` is a tuple, to stay hashable)."""
    return {r.key: r for r in regions}
