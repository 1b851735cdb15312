"""One entry module in, diagnostics out: index, resolve its project, interpret, resolve positions.

The entry module's compiled regions are analysed; calls into other project modules
are followed (:mod:`pt2lint.analysis.project`), and a finding lands at its innermost
line, in whichever file holds it, with the call chain that reaches it.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from pt2lint.analysis.interp import Interpreter
from pt2lint.analysis.positions import LazyPositions, PositionMismatch
from pt2lint.diagnostics import Diagnostic, Position
from pt2lint.rules import build_dispatch
from pt2lint.specs import load_specs

# A compiled region needs a ``forward``/``__call__`` method or a ``torch.compile``
# (or ``torch._dynamo.optimize``) call; a file with none of these words has none.
REGION_MARKERS = ("forward", "__call__", "compile", "optimize")
#: Held while an entry module is analysed: module indexes cached in the process are
#: mutated by the interpreter (attributes collected, generators marked), and the LSP
#: server lints from threads.
ANALYSIS_LOCK = threading.RLock()
COMPILE_CALL = re.compile(r"\b(?:compile|optimize)\s*\(\s*[A-Za-z_]")


# A class with a base may inherit ``forward`` from a class in another module.
_CLASS_WITH_BASE = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\([ \t]*[^)\s]", re.MULTILINE)
# Whole-file rules (``on_module``) look for mixed-precision APIs, which need one of these
# words; FSDP wrapping matters only in a file that calls ``torch.compile`` (a region marker).
_MODULE_RULE_MARKERS = re.compile(r"\bamp\b|autocast")


def may_need_module_rules(source: str) -> bool:
    """Cheap, lossless prefilter for the whole-file rules: False only when none can fire."""
    return _MODULE_RULE_MARKERS.search(source) is not None


def may_contain_region(source: str) -> bool:
    """Cheap, lossless prefilter: False only when the file cannot hold a compiled region.

    A region needs a ``forward``/``__call__``/``compile`` word in the file, or a class
    with a base class (whose ``forward`` may be inherited from another module).
    """
    return any(m in source for m in REGION_MARKERS) or _CLASS_WITH_BASE.search(source) is not None


def _start_node(node: cst.CSTNode) -> cst.CSTNode:
    """Dynamo reports a method call at the method name's line (CPython 3.11 call locations)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr
    return node


# Statement anchors of modules seen in this process (imported modules recur across entry
# files): id(module) -> (module, LazyPositions or the full position map); bounded.
_ANCHORS: "OrderedDict[int, tuple]" = OrderedDict()
_ANCHORS_MAX = 1024


def _anchors_for(module: cst.Module, source: str):
    hit = _ANCHORS.get(id(module))
    if hit is not None and hit[0] is module:
        _ANCHORS.move_to_end(id(module))
        return hit[1]
    try:
        value = LazyPositions(module, source)
    except PositionMismatch:
        value = None
    _ANCHORS[id(module)] = (module, value)
    while len(_ANCHORS) > _ANCHORS_MAX:
        _ANCHORS.popitem(last=False)
    return value


def _full_positions(module: cst.Module):
    key = -id(module) - 1
    hit = _ANCHORS.get(key)
    if hit is not None and hit[0] is module:
        return hit[1]
    value = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    _ANCHORS[key] = (module, value)
    while len(_ANCHORS) > _ANCHORS_MAX:
        _ANCHORS.popitem(last=False)
    return value


def _resolve_positions(module: cst.Module, source: str, raw) -> dict:
    """Positions of every node the findings need: per statement when possible, else one full pass."""
    try:
        lazy = _anchors_for(module, source)
        if lazy is None:
            raise PositionMismatch("statements not anchored")
        groups: dict = {}
        for f in raw:
            stmt = f.stmt
            if stmt is None:
                raise PositionMismatch("finding outside a statement")
            key = (id(stmt), id(f.header) if f.header is not None and not isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else None)
            entry = groups.setdefault(key, (stmt, f.header if key[1] is not None else None, []))
            entry[2].extend([f.node, _start_node(f.node)])
        out: dict = {}  # node -> CodeRange (LibCST nodes hash by identity)
        for stmt, header, nodes in groups.values():
            rng = lazy.ranges(stmt, header, nodes + ([stmt] if header is None else [header]))
            for n in nodes + ([stmt] if header is None else [header]):
                out[n] = rng[id(n)]
            if header is not None:
                anchor = lazy.anchors.starts[id(stmt)]
                h = out[header]
                out[stmt] = type(h)((min(anchor.lineno, h.start.line), h.start.column), (h.end.line, h.end.column))
        return out
    except PositionMismatch:
        return _full_positions(module)


class Finding(NamedTuple):
    """A diagnostic together with the nodes it was found on (for codemods and the LSP).

    ``node`` is the flagged expression or statement; ``stmt`` the statement that
    contains it (``If`` for a branch test, a ``SimpleStatementLine`` otherwise).
    Node identity is meaningful only for the module object that was analysed; findings
    in other project files (``diagnostic.filename`` differs from the entry's) carry nodes
    of those files' modules.
    """

    diagnostic: Diagnostic
    node: cst.CSTNode
    stmt: Optional[cst.CSTNode]


class Analysis(NamedTuple):
    """What one entry module's analysis produced.

    Attributes:
        findings: every finding, in the entry file and in the project files its code reaches.
        sources: display filename -> text of every file a finding lies in (for suppressions).
        dependencies: ``(abs path, sha256 or None)`` of every other file read or looked for.
        has_regions: the entry module has compiled regions of its own.
        submodules: ``(abs path, class name)`` of project classes that the analysed code
            builds as submodules of another class (their forward runs in that parent's context).
        reached: ``(abs path, class name)`` of the module classes of other project files
            whose own ``forward`` the analysis followed from a compiled region (with the
            arguments and attributes this file's code gives them).
    """

    findings: List[Finding]
    sources: Dict[str, str]
    dependencies: Tuple[Tuple[str, Optional[str]], ...]
    has_regions: bool
    submodules: Tuple[Tuple[str, str], ...] = ()
    reached: Tuple[Tuple[str, str], ...] = ()


def _reached_foreign_forwards(interp, project, index) -> Tuple[Tuple[str, str], ...]:
    """``(abs path, class name)`` of the classes of other project files read by the analysis whose
    own ``forward`` (not an inherited one) it ran."""
    out = set()
    classes = [c for other in project.loaded_indexes() if other is not index for c in getattr(other, "classes", {}).values()]
    for cls in classes:
        module = cls.module
        path = getattr(module, "path", "") if module is not None else ""
        fwd = cls.methods.get("forward")
        if path and module is not index and path != index.path and fwd is not None and id(fwd) in interp.analysed:
            out.add((path, cls.name))
    return tuple(sorted(out))


def _constructed_imported_classes(index, project) -> set:
    """``(abs path, class name)`` of the project classes of other files that a ``nn.Module`` class
    of ``index`` constructs in one of its methods (``Block(dim)``, ``layers.Block(dim)``).

    They are that class's submodules even where the analysis did not reach the call (a
    branch it reads as dead for the configuration's defaults, as
    :func:`pt2lint.analysis.interp._built_by_other_classes` says within a file).

    Args:
        index: the entry module's :class:`~pt2lint.analysis.index.ModuleIndex`.
        project: its :class:`~pt2lint.analysis.project.ProjectModel`.
    """
    from pt2lint.analysis.index import ClassInfo

    functions = [fn for owner in index.module_classes() for fn in owner.methods.values()]
    return {(d.module.path, d.name) for d in _called_imported_definitions(index, project, functions) if isinstance(d, ClassInfo)}


def _called_imported_definitions(index, project, functions, references: bool = False) -> list:
    """The definitions (``FunctionInfo``/``ClassInfo``) in other project files that the calls of
    imported names (``helper(x)``, ``layers.Block(dim)``, ``Block = L.Block`` then ``Block(4)``)
    in ``functions`` (of ``index``) resolve to, each once; an imported name passed as an
    argument or stored (``self.act = utils.helper``, ``partial(helper)``) counts as called when
    ``references`` is set (a construction is always a call)."""
    from pt2lint.analysis.index import ClassInfo, FunctionInfo
    from pt2lint.analysis.walk import walk

    names = index.imports.names
    if not names:
        return []
    own = getattr(index, "path", None)
    out: list = []
    seen: Dict[str, object] = {}
    for fn in functions:
        if fn.node is None:
            continue
        for node in walk(fn.node):
            t = type(node)
            if t is cst.Call:
                func = node.func
            elif references and t in (cst.Arg, cst.Assign, cst.AnnAssign) and type(node.value) in (cst.Name, cst.Attribute):
                func = node.value  # passed or stored, called later (``self.act = utils.helper``, ``partial(helper)``)
            else:
                continue
            rest = []
            while type(func) is cst.Attribute:
                rest.append(func.attr.value)
                func = func.value
            alias = index.global_exprs.get(func.value) if type(func) is cst.Name and func.value not in names else None
            while alias is not None and type(alias) in (cst.Attribute, cst.Name):
                # a module-level alias of an imported name (``Block = L.Block``)
                if type(alias) is cst.Name:
                    func, alias = alias, None
                else:
                    rest.append(alias.attr.value)
                    alias = alias.value
            if type(func) is not cst.Name or func.value not in names:
                continue
            qualified = ".".join([names[func.value], *reversed(rest)])
            if qualified in seen:
                continue
            try:
                found = project.resolve(index, qualified)
            except RecursionError:
                found = None
            seen[qualified] = found
            module = getattr(found, "module", None)
            if isinstance(found, (ClassInfo, FunctionInfo)) and module is not None and module.path and module.path != own:
                out.append(found)
    return out


def definitions_used_by(path: str, data: bytes, settings, overlay=None) -> Tuple[set, set]:
    """What the file at ``path`` (with bytes ``data``) builds and calls from other project files
    (read from ``overlay``, ``abs path -> text``, where it holds them).

    Returns:
        ``(built, used)``: ``(abs path, class name)`` of the classes a ``nn.Module`` class of
        the file constructs in a method (:func:`_constructed_imported_classes`), and ``(abs
        path, name)`` of the top-level functions any function or method of the file calls and
        of the classes its classes derive from (a mixin, a base); both empty for a file that
        cannot be decoded or parsed, or that may be nested too deeply to parse safely outside
        the engine's guard.
    """
    parsed = _parse_for_uses(path, data, settings, overlay)
    if parsed is None:
        return set(), set()
    project, index = parsed
    from pt2lint.analysis.index import ClassInfo, FunctionInfo

    with ANALYSIS_LOCK:
        try:
            built = _constructed_imported_classes(index, project)
            functions = list(index.functions.values()) + [fn for c in index.classes.values() for fn in c.methods.values()]
            used = {
                (d.module.path, d.name) for d in _called_imported_definitions(index, project, functions, references=True)
                if isinstance(d, FunctionInfo) and d.cls is None
            }
            for cls in index.classes.values():
                for base in project.resolve_bases(index, cls.bases):
                    module = getattr(base, "module", None)
                    if isinstance(base, ClassInfo) and module is not None and module.path and module.path != index.path:
                        used.add((module.path, base.name))
        except RecursionError:
            return set(), set()
    return built, used


def _parse_for_uses(path: str, data: bytes, settings, overlay=None):
    """``(ProjectModel, ModuleIndex)`` of the file at ``path`` parsed (not analysed), or ``None``."""
    from pt2lint.engine import DecodeError, decode_source
    from pt2lint.nesting import looks_deeply_nested

    try:
        source = decode_source(data)
        if looks_deeply_nested(source) is not None:
            return None
        module = cst.parse_module(source)
    except (DecodeError, cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    with ANALYSIS_LOCK:
        try:
            _path, project, index = entry_in_project(module, source, path, settings, data=data, overlay=overlay)
        except RecursionError:
            return None
    return project, index


def analyse_module(
    module: cst.Module, source: str, filename: str, settings, enabled: FrozenSet[str]
) -> List[Diagnostic]:
    """Run every enabled rule over the compiled regions of ``module``.

    Args:
        module: the parsed module (not copied; nodes are used as identities).
        source: its text (for the prefilter).
        filename: the name findings carry.
        settings: :class:`~pt2lint.settings.LintSettings`.
        enabled: codes enabled for this file.

    Returns:
        Diagnostics (unsorted, unsuppressed), including those in other project files.
    """
    return [f.diagnostic for f in analyse_findings(module, source, filename, settings, enabled)]


def analyse_findings(
    module: cst.Module, source: str, filename: str, settings, enabled: FrozenSet[str]
) -> List[Finding]:
    """Like :func:`analyse_module`, keeping each diagnostic's nodes (see :class:`Finding`)."""
    return analyse_project(module, source, filename, settings, enabled).findings


def _project_for(filename: str, settings, overlay=None):
    from pt2lint.analysis.project import ProjectModel, import_context, module_name_for

    path = os.path.abspath(filename) if filename and filename != "-" else os.path.join(os.getcwd(), "<stdin>.py")
    roots, library_roots = import_context(path, settings)  # the result cache keys by the same
    top = module_name_for(path, roots)[0].split(".", 1)[0]
    follow = tuple(getattr(settings, "follow_imports", ()) or ())
    return path, ProjectModel(roots, settings.target, overlay, entry_package=top, follow=follow, library_roots=library_roots)


def entry_in_project(module: cst.Module, source: str, filename: str, settings, *, data: Optional[bytes] = None, overlay=None):
    """The entry module ``module`` indexed in a new project model, with its imports linked.

    The analysis and the codemods' facts (:func:`pt2lint.fixes.facts.collect_facts`) both
    start here, so a codemod sees the same helpers in other files, re-exports and imports
    that the rules follow.  Call it with :data:`ANALYSIS_LOCK` held.

    Args:
        module, source, filename, settings: as :func:`analyse_module` (``filename`` ``"-"``:
            standard input, resolved from the working directory).
        data: the file's bytes as read, if known.
        overlay: ``abs path -> text`` of unsaved buffers to read instead of the disk.

    Returns:
        ``(abs path of the entry, ProjectModel, ModuleIndex of the entry)``.
    """
    path, project = _project_for(filename, settings, overlay)
    index = project.add_entry(path, source, module, COMPILE_CALL.search(source) is not None, data)
    project.link(index)
    return path, project, index


def analyse_project(
    module: cst.Module,
    source: str,
    filename: str,
    settings,
    enabled: FrozenSet[str],
    *,
    data: Optional[bytes] = None,
    overlay=None,
) -> Analysis:
    """Analyse the entry module ``module`` (the file ``filename``) and the project code it reaches.

    Args:
        module, source, filename, settings, enabled: as :func:`analyse_module`.
        data: the file's bytes as read (its identity in the cache), if known.
        overlay: ``abs path -> text`` of unsaved buffers to read instead of the disk.

    Returns:
        An :class:`Analysis`.
    """
    regions = may_contain_region(source)
    if not regions and not may_need_module_rules(source):
        return Analysis([], {}, (), False)
    dispatch = build_dispatch(enabled, settings)
    if not dispatch.handlers or (not regions and "on_module" not in dispatch.handlers):
        return Analysis([], {}, (), False)
    with ANALYSIS_LOCK:  # indexes of imported modules are shared between analyses in a process
        path, project, index = entry_in_project(module, source, filename, settings, data=data, overlay=overlay)
        has_regions = bool(index.module_classes() or index.entry_functions())
        interp = Interpreter(index, dispatch, settings)
        if regions:
            interp.run()
        if "on_module" in dispatch.handlers:

            def report(code, node, message, stmt, header) -> None:
                dispatch.findings.record(code, node, message, (), stmt, header, {}, module=index)

            for handler in dispatch.handlers["on_module"]:
                handler(index, report)
        built = {(c.module.path, c.name) for c in interp.instantiated if c.module is not None and c.module.path}
        submodules = tuple(sorted(built | _constructed_imported_classes(index, project)))
        reached = _reached_foreign_forwards(interp, project, index) if regions else ()
    deps = tuple(sorted((p, h) for p, h in project.deps.items() if p != path))
    raw = dispatch.findings.items
    if not raw:
        return Analysis([], {}, deps, has_regions, submodules, reached)
    from pt2lint.discovery import display_path, project_relpath

    names: Dict[int, str] = {id(index): filename}

    def name_of(mod) -> str:
        key = id(mod)
        if key not in names:
            names[key] = display_path(mod.path)
        return names[key]

    # Positions, per module: the findings' nodes and the call sites of their chains.
    by_module: Dict[int, tuple] = {}
    for f in raw:
        mod = f.module if f.module is not None else index
        by_module.setdefault(id(mod), (mod, []))[1].append(f)
        for site in f.sites:
            smod = site[0] if site[0] is not None else index
            if site[2] is not None:
                by_module.setdefault(id(smod), (smod, []))[1].append(_Site(site[1], site[2], site[3]))
        for _code, hnode, hstmt, hheader in _hidden_breaks(f):
            if hstmt is not None:
                by_module[id(mod)][1].append(_Site(hnode, hstmt, hheader))
    positions: dict = {}
    for mod, items in by_module.values():
        found = _resolve_positions(mod.module, mod.source if mod is not index else source, items)
        if mod.line_offset:
            found = {n: _shifted(r, mod.line_offset) for n, r in found.items()}
        positions.update(found)
    specs = load_specs()
    enabled_cache: Dict[str, FrozenSet[str]] = {filename: enabled}
    out: List[Finding] = []
    sources: Dict[str, str] = {}
    branch_tests: set = set()  # (code, file, id(statement)) of the branch-test findings emitted
    for f in raw:
        mod = f.module if f.module is not None else index
        fname = name_of(mod)
        if fname not in enabled_cache:
            enabled_cache[fname] = settings.enabled_for(project_relpath(mod.path, settings.project_root or os.getcwd()))
        if f.code not in enabled_cache[fname]:
            continue
        spec = specs.get(f.code)
        node = f.node
        start_node = _start_node(node)
        try:
            start = positions[start_node].start
            end = positions[node].end
        except KeyError:
            continue
        if (
            isinstance(f.stmt, (cst.If, cst.While)) and isinstance(f.extra, dict) and f.extra.get("branch_test")
            and f.stmt in positions
        ):
            # an operand of the branch's test on a later line (``if (\n a\n or b\n):``): Dynamo places
            # the jump of every operand on the statement's line (measured on torch 2.13), one finding
            head = positions[f.stmt].start
            key = (f.code, fname, id(f.stmt))
            if head.line < start.line:
                if key in branch_tests:
                    continue  # the statement's line has this finding already
                start = head
            branch_tests.add(key)
        stmt_lines = _statement_lines(positions, f.stmt, f.header, start.line)
        chain = f.chain
        sites = []
        for i, site in enumerate(f.sites):
            smod = site[0] if site[0] is not None else index
            rng = positions.get(_start_node(site[1])) or positions.get(site[1])
            if rng is None:
                sites = []
                break
            lines = _statement_lines(positions, site[2], site[3], rng.start.line) or (rng.start.line, rng.start.line)
            sites.append((chain[i], name_of(smod), rng.start.line, rng.start.column + 1, lines[0], lines[1]))
        message = f.message + _hidden_note(f, positions)
        if len(chain) > 1:
            if sites and any(s[1] != fname for s in sites):
                steps = [f"{s[1]}:{s[2]} {s[0]}" for s in sites] + [f"{fname}:{start.line} {chain[-1]}"]
                message = f"{message} [via {' -> '.join(steps)}]"
            else:
                message = f"{message} [via {' -> '.join(chain)}]"
        if project.is_library(mod.path):
            # inside an installed package (``follow-imports``): reported at the innermost call
            # from project code, which is where the user can act (and suppress)
            j = max((i for i, site in enumerate(f.sites) if not project.is_library(getattr(site[0], "path", ""))), default=None)
            if j is None or j >= len(sites):
                continue
            anchor = sites[j]
            lib_where = f"{fname}:{start.line}"
            message = f"{message} (inside {lib_where})" if "[via" in message else f"{message} (inside {lib_where} {chain[-1]})"
            fname = anchor[1]
            mod = f.sites[j][0] if f.sites[j][0] is not None else index
            start = end = None
            start_pos, end_pos = Position(anchor[2], anchor[3]), Position(anchor[2], anchor[3] + 1)
            stmt_lines = (anchor[4], anchor[5])
            chain, sites = chain[: j + 1], sites[:j]
            if fname not in enabled_cache:
                enabled_cache[fname] = settings.enabled_for(project_relpath(mod.path, settings.project_root or os.getcwd()))
            if f.code not in enabled_cache[fname]:
                continue
        else:
            start_pos, end_pos = Position(start.line, start.column + 1), Position(end.line, end.column + 1)
        if mod is not index:
            sources[fname] = mod.full_source or mod.source  # comments, for suppressions
        severity, note = _severity(spec, settings, _region_of(settings, index, f.chain))
        if note:
            message = f"{message} ({note})"
        out.append(Finding(
            Diagnostic(
                code=f.code,
                name=spec.name if spec else f.code,
                message=message,
                filename=fname,
                start=start_pos,
                end=end_pos,
                severity=severity,
                category=spec.category if spec else "internal",
                gb_types=spec.gb_types if spec else (),
                symbol=chain[-1] if chain else None,
                call_chain=chain if len(chain) > 1 else (),
                statement_lines=stmt_lines,
                call_sites=tuple(sites),
            ),
            f.node if start is not None else None,  # re-anchored: no node of this file to rewrite
            f.stmt if start is not None else None,
        ))
    return Analysis(out, sources, deps, has_regions, submodules, reached)


def _hidden_breaks(f) -> list:
    """``(code, node, stmt, header)`` of the later graph breaks in the frame this finding's break ends."""
    extra = f.extra if isinstance(f.extra, dict) else {}
    return list(extra.get("hidden_breaks", ()))


def _hidden_note(f, positions) -> str:
    """The message tail naming the breaks Dynamo reaches only once this one is fixed.

    After a graph break inside a loop or a ``try`` body, or at a context manager it cannot
    enter, Dynamo skips the rest of the frame (measured on torch 2.13: "graph break in loop",
    "Failed to handle graph break gracefully"; the frame falls back to eager), so later breaks
    there are not in its log until the first is fixed; they are named here rather than
    reported alone.
    """
    lines = []
    for code, node, _stmt, _header in _hidden_breaks(f):
        rng = positions.get(_start_node(node)) or positions.get(node)
        if rng is not None:
            lines.append((rng.start.line, code))
    if not lines:
        return ""
    where = ", ".join(f"line {line} ({code})" for line, code in sorted(set(lines)))
    return f" (Dynamo runs the rest of this frame eagerly after this break; reached once it is fixed: {where})"


def _region_of(settings, index, chain):
    """The compile options of the region a finding's chain starts in (``None``: none known).

    The chain's first entry is the region's entry point (``Net.forward``, a compiled
    function's symbol), in the entry module; submodules' code runs in their parent's region.
    """
    if not chain or not getattr(settings, "regions", ()):
        return None
    name = getattr(index, "name", "") or ""
    return settings.region(f"{name}.{chain[0]}" if name else chain[0])


def _severity(spec, settings, region) -> Tuple[str, str]:
    """``(severity, note)`` of a finding of ``spec`` in ``region``.

    The severity is the spec's for the effective target: ``cudagraphs`` when the region is
    compiled with a mode that turns CUDA graphs on (``reduce-overhead``, ``max-autotune``:
    the Dynamo facts table), else the configured target.  A graph break in a region compiled
    with ``fullgraph=True`` is an error (Dynamo raises instead of splitting the graph).  The
    note says which compile call decided it.
    """
    from pt2lint.analysis import dynamo_facts

    if spec is None:
        return "error", ""
    target = settings.target
    notes = []
    if region is not None and dynamo_facts.cudagraph_mode(region.mode) and target != "cudagraphs":
        if "cudagraphs" in spec.targets:
            target = "cudagraphs"
            if spec.severity_for("cudagraphs") != spec.severity_for(settings.target):
                notes.append(f"the region is compiled with mode={region.mode!r} at {region.where}: CUDA graphs")
    severity = spec.severity_for(target)
    if region is not None and region.fullgraph and spec.is_graph_break:
        if severity != "error":
            notes.append(f"fullgraph=True at {region.where}: Dynamo raises here")
        severity = "error"
    return severity, "; ".join(notes)


def _shifted(rng, lines: int):
    """``rng`` (a LibCST ``CodeRange``) moved down by ``lines`` lines."""
    return type(rng)((rng.start.line + lines, rng.start.column), (rng.end.line + lines, rng.end.column))


class _Site(NamedTuple):
    """A call site of a chain, as a position request (the shape of a raw finding)."""

    node: cst.CSTNode
    stmt: cst.CSTNode
    header: Optional[cst.CSTNode]


def _statement_lines(positions, stmt, header, start_line: int) -> Optional[Tuple[int, int]]:
    if stmt is None or stmt not in positions:
        return None
    srange = positions[stmt]
    last = srange.end.line
    if header is not None and header in positions:
        last = positions[header].end.line
    elif not isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        last = srange.start.line
    return (min(srange.start.line, start_line), max(last, start_line))
