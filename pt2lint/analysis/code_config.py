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

Only constants are read (``True``, ``"reduce-overhead"``); a value computed at run
time is unknown and ignored.  The scan uses :mod:`ast` (no LibCST parse, no import
of the code), and reads only files that mention ``compile(`` or ``_dynamo``.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from dataclasses import dataclass, field
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
class CodeConfig:
    """Every knob assignment and region option found in the project's code."""

    knobs: Tuple[KnobSetting, ...] = ()
    regions: Tuple[RegionOptions, ...] = field(default_factory=tuple)

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
    def __init__(self, module: str, is_package: bool, display: str) -> None:
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
        self._scope.append(node.name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._scope.append("<locals>")
        self.generic_visit(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._scope.pop()
        self._scope.pop()

    visit_FunctionDef = _def
    visit_AsyncFunctionDef = _def

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scope.append(node.name)
        self.generic_visit(node)
        self._scope.pop()

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

    def visit_Call(self, node: ast.Call) -> None:
        q = self.qualify(node.func)
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


def scan_source(text: str, display: str, module: str = "", is_package: bool = False) -> CodeConfig:
    """Knob assignments and region options in one file's text.

    Args:
        text: the source.
        display: the file name findings use (it goes into ``where``).
        module: the file's dotted module name (region keys and relative imports use it).
        is_package: the file is a package's ``__init__.py``.

    Returns:
        A :class:`CodeConfig`; empty for a file that does not parse (its syntax error is
        reported by the lint itself).
    """
    if _MARKER.search(text) is None:
        return CodeConfig()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "invalid escape sequence" and the like: not ours to print
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return CodeConfig()
    scanner = _Scanner(module, is_package, display)
    scanner.collect(tree)
    try:
        scanner.visit(tree)
    except RecursionError:
        return CodeConfig()
    return CodeConfig(tuple(scanner.knobs), tuple(scanner.regions))


def scan_files(files: Iterable[Tuple[str, str]], project_root: str = "", src: Sequence[str] = (), max_bytes: Optional[int] = None) -> CodeConfig:
    """:func:`scan_source` over ``(path, display name)`` pairs, merged in order.

    Files that cannot be read or decoded are skipped (the lint reports them).
    """
    from pt2lint import reading
    from pt2lint.analysis.project import import_roots, module_name_for
    from pt2lint.engine import DecodeError, decode_source

    knobs: List[KnobSetting] = []
    regions: List[RegionOptions] = []
    for path, display in files:
        try:
            data = reading.read_bytes(path, max_bytes=max_bytes or reading.DEFAULT_MAX_BYTES)
            text = decode_source(data)
        except (OSError, DecodeError):
            continue
        if _MARKER.search(text) is None:
            continue
        roots = import_roots(os.path.abspath(path), project_root, src)
        module, is_package = module_name_for(path, roots)
        found = scan_source(text, display, module, is_package)
        knobs.extend(found.knobs)
        regions.extend(found.regions)
    return CodeConfig(tuple(knobs), tuple(regions))


def apply_to_settings(settings, config: CodeConfig, explicit: Iterable[str] = ()):
    """``settings`` with the project's own Dynamo config applied.

    A knob of :data:`KNOBS` assigned a bool in code takes that value project-wide (Dynamo's
    config is global to the process), unless the command line set it (``explicit``: knob
    names given as options). The last assignment in file order wins. Region options are
    attached as ``settings.regions``.
    """
    from dataclasses import replace

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
        **changes,
    )


def region_lookup(regions: Sequence[RegionOptions]) -> Mapping[str, RegionOptions]:
    """Key -> options, for the driver (``settings.regions`` is a tuple, to stay hashable)."""
    return {r.key: r for r in regions}
