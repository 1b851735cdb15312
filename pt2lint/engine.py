"""The lint engine: one file in, findings out.

``lint_path`` reads and decodes a file, ``lint_source`` parses it once with
LibCST, runs the analysis and every enabled rule in a single pass, drops
suppressed findings and reports unused suppressions.  ``lint_paths`` fans files
out to worker processes and yields results in input order.  The engine imports
no torch, click or pygls.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tokenize
from dataclasses import replace
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from pt2lint.diagnostics import Diagnostic, FileResult, Position, syntax_error
from pt2lint.nesting import guard_deep_nesting
from pt2lint.discovery import os_error_reason
from pt2lint.settings import LintSettings


class DecodeError(ValueError):
    """The bytes of a file cannot be decoded with its declared (or default UTF-8) encoding."""


def _utf8_error(data: bytes) -> Optional[str]:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} (add a PEP 263 coding line, or convert the file to UTF-8)"
    return None


def decode_source(data: bytes) -> str:
    """Decode Python source bytes as the interpreter would (PEP 263 coding line, UTF-8 BOM).

    Raises:
        DecodeError: unknown encoding or bytes invalid in it; the message names the byte and offset.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # Without a coding line, detect_encoding fails on bad UTF-8 in the first two lines
        # with a misleading "invalid or missing encoding declaration".
        raise DecodeError(_utf8_error(data) or str(exc)) from None
    try:
        text = data.decode(encoding)
    except LookupError:
        raise DecodeError(f"unknown encoding {encoding!r} in the coding line") from None
    except UnicodeDecodeError as exc:
        if encoding.replace("-", "_").lower() in ("utf_8", "utf8", "utf_8_sig"):
            raise DecodeError(_utf8_error(data) or str(exc)) from None
        raise DecodeError(f"cannot decode as {encoding}: byte 0x{data[exc.start]:02x} at offset {exc.start}") from None
    except (UnicodeError, ValueError) as exc:  # codecs such as 'undefined' and 'punycode' raise plain UnicodeError
        raise DecodeError(f"cannot decode as {encoding}: {exc}") from None
    if text.startswith("\ufeff") and encoding != "utf-8-sig":
        text = text[1:]  # the codec kept the BOM; with utf-8-sig it has gone already, and a second one is an error
    return text


def dominant_newline(source: str) -> str:
    """The line ending most lines of ``source`` use (``"\\n"`` on a tie or without line breaks).

    LibCST takes the first line's ending as the module's, so a file that is mostly LF but
    starts with a CRLF line would get CRLF in every line a fix inserts.
    """
    crlf = source.count("\r\n")
    cr = source.count("\r") - crlf
    lf = source.count("\n") - crlf
    if crlf > max(lf, cr):
        return "\r\n"
    if cr > max(lf, crlf):
        return "\r"
    return "\n"


def _parse_without_collections(source: str) -> cst.Module:
    """``libcst.parse_module`` with the cyclic garbage collector paused while it runs.

    The parse allocates the whole tree (hundreds of thousands of objects for a 10,000-line
    file, none of them garbage), and each full collection on the way walks everything built so
    far: on the 10,000-line "many locals" forward of ``bench/limits.py`` that was about 1.5 s of
    CPU of 12 (measured in process).  Only in the main thread, since the collector's switch is
    process-wide (the LSP server lints in threads); the collector runs again right after.
    """
    import gc
    import threading

    if threading.current_thread() is not threading.main_thread() or not gc.isenabled():
        return cst.parse_module(source)
    gc.disable()
    try:
        return cst.parse_module(source)
    finally:
        gc.enable()


def parse_module(source: str) -> cst.Module:
    """``libcst.parse_module`` with the file's dominant line ending as the module's default newline.

    Raises:
        libcst.ParserSyntaxError: the source does not parse.
    """
    module = _parse_without_collections(source)
    if "\r" in source:  # LibCST keeps the first line's ending, whatever its config says
        newline = dominant_newline(source)
        if module.default_newline != newline:
            module = module.with_changes(default_newline=newline)
    return module


def _quiet_syntax_warnings(fn):
    """Run ``fn`` with CPython's warnings about the *linted* code silenced.

    ``ast.parse``/``compile`` of user code warn on stderr (``<unknown>:3: SyntaxWarning:
    invalid escape sequence '\\d'`` on Python 3.12+); that is not ours to print.
    """
    import functools
    import warnings

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return fn(*args, **kwargs)

    return wrapper


def _syntax_error(exc: cst.ParserSyntaxError, source: str, filename: str) -> Diagnostic:
    """A ``PTC001`` finding for a file LibCST cannot parse.

    LibCST's native parser reports poor positions, so the position and message
    come from CPython's own parser when it also rejects the file.
    """
    import ast

    line, col = max(exc.raw_line, 1), exc.raw_column + 1
    message = str(exc.message).strip().splitlines()[0] if exc.message else "invalid syntax"
    message = re.sub(r"^(parser|tokenizer) error: (error at \d+:\d+: )?", "", message)
    try:
        ast.parse(source, filename=filename)
    except SyntaxError as py_exc:
        line = py_exc.lineno or line
        col = py_exc.offset or col
        message = py_exc.msg or message
    except (ValueError, RecursionError, MemoryError):
        pass
    return syntax_error(filename, f"SyntaxError: {message}", Position(line, col))


#: Verdicts of :func:`cpython_syntax_error` by text digest (a text is often linted again unchanged).
_VERDICTS: "dict[str, Optional[Tuple[str, int, int, int, int]]]" = {}
_VERDICTS_MAX = 256


def _cpython_verdict(source: str) -> Optional[Tuple[str, int, int, int, int]]:
    """``(message, line, column, end line, end column)`` of CPython's rejection of ``source``, or ``None``.

    The whole compiler runs (parser, symbol table, code generation: ``return``
    outside a function, a duplicate argument and 21 nested blocks are found only
    there), with ``dont_inherit`` so pt2lint's own ``__future__`` imports do not
    leak in; the code object is discarded, nothing runs.  Nested ``finally`` bodies,
    which CPython's code generation copies exponentially, are compiled once
    (:func:`pt2lint.pycompile.compile_module`).  Positions are 1-based
    characters (CPython gives UTF-8 byte columns for compiler errors; they are
    converted).  A depth limit (``RecursionError``, ``MemoryError``) is judged as
    ``import`` in a fresh ``python`` would judge it, whatever this thread's depth and
    recursion limit (:func:`pt2lint.nesting.compile_as_imported`).
    """
    import hashlib
    import warnings

    from pt2lint.pycompile import compile_module

    key = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    if key in _VERDICTS:
        return _VERDICTS[key]
    verdict: Optional[Tuple[str, int, int, int, int]] = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the linted code are not ours to print
            compile_module(source, "<pt2lint>")
    except SyntaxError as exc:
        verdict = _rejection(exc, source)
    except ValueError as exc:  # older CPythons: "source code string cannot contain null bytes"
        verdict = _rejection(SyntaxError(str(exc)), source)
    except (RecursionError, MemoryError, OverflowError):
        verdict = _depth_verdict(source)  # this stack was deeper (or its limit lower) than an import's
    else:
        if len(source) >= _DEPTH_JUDGED_CHARS and sys.getrecursionlimit() > _DEFAULT_RECURSION_LIMIT:
            verdict = _depth_verdict(source)  # under a raised limit CPython's compiler allows more than import's
    if len(_VERDICTS) >= _VERDICTS_MAX:
        try:
            _VERDICTS.pop(next(iter(_VERDICTS)), None)
        except (RuntimeError, StopIteration):  # another thread (the language server's) changed it meanwhile
            pass
    _VERDICTS[key] = verdict
    return verdict


#: A text shorter than this cannot nest ~3000 levels deep (CPython's depth limit under import).
_DEPTH_JUDGED_CHARS = 2900
_DEFAULT_RECURSION_LIMIT = 1000


def _depth_verdict(source: str) -> Optional[Tuple[str, int, int, int, int]]:
    """The verdict of a compile under ``import``'s limits (:func:`pt2lint.nesting.compile_as_imported`)
    when it is a depth error, else ``None``; positioned where the text starts nesting deeply."""
    from pt2lint.nesting import looks_deeply_nested, too_deep_for_python

    diag = too_deep_for_python(source, "<pt2lint>", looks_deeply_nested(source) or 0)
    if diag is None:
        return None
    message = diag.message[len("SyntaxError: "):] if diag.message.startswith("SyntaxError: ") else diag.message
    return message, diag.start.line, diag.start.column, diag.start.line, diag.start.column + 1


def _rejection(exc: SyntaxError, source: str) -> Tuple[str, int, int, int, int]:
    from pt2lint.lines import SourceLines

    lines = SourceLines(source)
    message = exc.msg or "invalid syntax"
    if "\0" in source and "null" in message:
        line, col = lines.position(source.index("\0"))  # CPython gives no position for it
        return message, line, col, line, col + 1
    line = exc.lineno or 1
    text = lines.text(line)

    def column(offset: Optional[int]) -> int:
        if not offset:
            return 1
        if exc.text is None:  # a compiler (not parser) error: the column counts UTF-8 bytes
            offset = len(text.encode("utf-8", "surrogatepass")[: offset - 1].decode("utf-8", "ignore")) + 1
        return min(max(offset, 1), len(text) + 1)

    col = column(exc.offset)
    end_line = exc.end_lineno or line
    end_col = column(exc.end_offset) if end_line == line else col + 1
    if end_line != line or end_col <= col:
        end_line, end_col = line, col + 1
    return message, line, col, end_line, end_col


def cpython_syntax_error(source: str, filename: str) -> Optional[Diagnostic]:
    """A ``PTC001`` finding when CPython would refuse to compile ``source``, else ``None``.

    CPython is the judge, not LibCST: LibCST accepts texts the interpreter rejects
    (``"\\N{"``, ``b"é"``, a second BOM, a NUL byte, ``return`` outside a function,
    duplicate arguments, more than 20 nested blocks).  The message is CPython's own,
    at CPython's position.  See :func:`_cpython_verdict` for what is compiled.
    """
    verdict = _cpython_verdict(source)
    if verdict is None:
        return None
    message, line, col, end_line, end_col = verdict
    return syntax_error(filename, f"SyntaxError: {message}", Position(line, col), Position(end_line, end_col))


@_quiet_syntax_warnings
@guard_deep_nesting  # CPython's depth limits first, a big stack for deep code: never a crash
def lint_source(
    source: str,
    filename: str,
    settings: LintSettings,
    *,
    relpath: Optional[str] = None,
    keep_source: bool = False,
    prefilter: bool = True,
    fixes: bool = True,
    fix_names=None,
    data: Optional[bytes] = None,
    overlay=None,
) -> FileResult:
    """Lint one module's text.

    Args:
        source: the decoded module text.
        filename: the name findings carry (as given by the user).
        settings: enabled rules and Dynamo knobs.
        relpath: path relative to the project root, for per-file ignores
            (defaults to ``filename``).
        keep_source: keep ``source`` on the result (fixes and the LSP need it).
        prefilter: skip LibCST entirely for a file that cannot hold a compiled
            region or a suppression comment (its syntax is still checked, by
            CPython's much cheaper parser).  Lossless: see ``tests/test_cache.py``.
        fixes: attach the codemods' fixes (:mod:`pt2lint.fixes`) to the findings they can
            handle; costs nothing for a file without such findings.
        fix_names: ``fix_names(diagnostic)`` gives the codemods allowed for a finding
            (``None``: all), for ``pt2lint fix --rule``.
        data: the bytes ``source`` was decoded from (the file's identity in the cache).
        overlay: ``abs path -> text`` of unsaved editor buffers; imported project
            modules are read from it before the disk.

    Returns:
        A :class:`FileResult` with findings sorted by position, including findings in
        other project files that this file's compiled regions reach (each with its
        ``call_sites``).  A syntax error is a ``PTC001`` finding, not an exception.
    """
    from pt2lint.analysis.driver import analyse_module  # local: keeps import of the CLI light

    enabled = settings.enabled_for((relpath or filename).replace(os.sep, "/"))
    rejected = cpython_syntax_error(source, filename)
    if rejected is not None:  # Python could not import the file: that is the one finding
        return FileResult(filename, (rejected,) if "PTC001" in enabled else (), source=source if keep_source else None)
    if prefilter and not _may_have_findings(source):
        return FileResult(filename, (), source=source if keep_source else None)
    from pt2lint.lines import cut_form_feeds

    original = source
    source, cuts = cut_form_feeds(source)  # what LibCST can read; positions are mapped back at the end
    digest = ""
    module = None
    if data is not None and filename != "-":
        from pt2lint.analysis.project import cached_module, sha256_text

        digest = sha256_text(data)
        module = cached_module(os.path.abspath(filename), digest)
    try:
        if module is None:
            module = parse_module(source)
            if digest:
                from pt2lint.analysis.project import remember_module

                remember_module(os.path.abspath(filename), digest, module)
    except cst.ParserSyntaxError as exc:
        diags = [_uncut(_syntax_error(exc, source, filename), {filename: cuts})] if "PTC001" in enabled else []
        return FileResult(filename, tuple(diags), source=original if keep_source else None)
    except RecursionError:
        diag = syntax_error(filename, "SyntaxError: expression nested too deeply to parse", Position(1, 1))
        return FileResult(filename, (diag,) if "PTC001" in enabled else (), source=original if keep_source else None)
    if not getattr(settings, "code_scanned", True):
        # linted alone (stdin, the language server, the API): the file's own Dynamo config counts
        from pt2lint.analysis.code_config import apply_to_settings, scan_source

        found = scan_source(source, filename, _module_name(filename, settings))
        if found.knobs or found.regions or found.sites:
            settings = apply_to_settings(settings, found, settings.explicit_knobs)
    findings = None
    dependencies: tuple = ()
    has_regions = False
    others: dict = {}
    submodules: tuple = ()
    reached: tuple = ()
    if _stock_analysis():
        # The same analysis, keeping each finding's nodes so that fixes need no second pass.
        from pt2lint.analysis.driver import analyse_project

        analysis = analyse_project(module, source, filename, settings, enabled, data=data, overlay=overlay)
        findings = [f for f in analysis.findings if f.diagnostic.filename == filename and f.node is not None]
        dependencies, has_regions, others = analysis.dependencies, analysis.has_regions, analysis.sources
        submodules, reached = analysis.submodules, analysis.reached
        diags = [f.diagnostic for f in analysis.findings]
    else:
        diags = analyse_module(module, source, filename, settings, enabled)
        has_regions = True
    diags, used_elsewhere = _suppress(diags, source, filename, enabled, others, has_regions)
    if findings and fixes:
        from pt2lint.fixes import FIXABLE_CODES, attach_fixes

        if any(d.code in FIXABLE_CODES for d in diags):
            read = dict(dependencies)
            diags = attach_fixes(
                module, source, settings, findings, diags, fix_names, (relpath or filename).replace(os.sep, "/"),
                filename=filename, overlay=overlay, data=data, dependencies=read,
            )
            if len(read) != len(dependencies):
                dependencies = tuple(sorted(read.items()))
    cuts_by_file = {filename: cuts} if cuts else {}
    for name, text in others.items():  # imported modules read with their own form feeds cut
        if "\f" in text and name != filename:
            other = cut_form_feeds(text)[1]
            if other:
                cuts_by_file[name] = other
    if cuts_by_file:
        diags = [_uncut(d, cuts_by_file) for d in diags]
    diags.sort(key=Diagnostic.sort_key)
    return FileResult(
        filename, tuple(diags), source=original if keep_source else None,
        dependencies=dependencies, has_regions=has_regions, submodules=submodules,
        used_suppressions=used_elsewhere, reached=reached,
    )


def _uncut_position(pos: Position, cuts, *, end: bool = False) -> Position:
    """``pos`` in the text :func:`pt2lint.lines.cut_form_feeds` gave, as a position in the file.

    A column on a cut line moves right by the cut; column 1 of a cut line is the start of the
    statement (after the form feed), except for the end of a range, which then stops before
    the line (and so leaves its form feed alone).
    """
    cut = cuts.get(pos.line, 0)
    if not cut or (end and pos.column == 1):
        return pos
    return Position(pos.line, pos.column + cut)


def _uncut_fix(fix, cuts):
    """``fix`` with its edits moved into the file's coordinates, or a display-only refusal when an
    edit would delete the form feed that indents a cut line (LibCST's rewrite cannot hold it)."""
    from pt2lint.diagnostics import Applicability, Edit, Fix

    if fix is None or not fix.edits:
        return fix
    edits = []
    for e in fix.edits:
        lost = [n for n in cuts if e.start.line < n < e.end.line or (n == e.end.line > e.start.line and e.end.column > 1)]
        if lost:
            return Fix(
                f"not fixed: the rewrite would replace line {min(lost)}, whose indentation holds a form feed "
                f"(LibCST, which writes the rewrite, cannot keep one there; remove that form feed to get this fix)",
                Applicability.DISPLAY_ONLY, (), fix.name,
            )
        if e.start == e.end:  # an insertion goes before the line, form feed and all
            start = stop = _uncut_position(e.start, cuts, end=True)
        else:
            start, stop = _uncut_position(e.start, cuts), _uncut_position(e.end, cuts, end=True)
        edits.append(Edit(start, stop, e.content))
    return replace(fix, edits=tuple(edits))


def _uncut(d: Diagnostic, cuts_by_file: Dict[str, Dict[int, int]]) -> Diagnostic:
    """A finding of texts :func:`pt2lint.lines.cut_form_feeds` gave, in the files' coordinates.

    ``cuts_by_file`` maps a display filename (the linted file, and every imported module that
    the analysis read with its form feeds cut) to its cuts: the columns of the finding's range
    and fix, and of each call site, move by the cuts of the file they lie in.
    """
    sites = tuple(
        (sym, fn, line, _uncut_position(Position(line, col), cuts_by_file[fn]).column, first, last)
        if fn in cuts_by_file else (sym, fn, line, col, first, last)
        for sym, fn, line, col, first, last in d.call_sites
    )
    cuts = cuts_by_file.get(d.filename)
    if not cuts:
        return replace(d, call_sites=sites) if sites != d.call_sites else d
    return replace(
        d, start=_uncut_position(d.start, cuts), end=_uncut_position(d.end, cuts, end=True),
        call_sites=sites, fix=_uncut_fix(d.fix, cuts),
    )


def _module_name(filename: str, settings) -> str:
    """The dotted module name of ``filename`` as the project analysis names it (stdin: ``<stdin>``)."""
    from pt2lint.analysis.project import import_roots, module_name_for

    path = os.path.abspath(filename) if filename and filename != "-" else os.path.join(os.getcwd(), "<stdin>.py")
    roots = import_roots(path, getattr(settings, "project_root", "") or "", getattr(settings, "src", ()) or ())
    return module_name_for(path, roots)[0]


def _suppress(
    diags, source: str, filename: str, enabled, others, has_regions: bool
) -> Tuple[List[Diagnostic], Tuple[Tuple[str, int, str], ...]]:
    """Drop suppressed findings, in every file they lie in, and at the call site in ``filename``.

    A finding in another project file is suppressed by a comment at its own line (in
    that file) or at the call in ``filename`` that leads to it (its anchor).  Unused
    suppressions (``PTC002``) are reported for ``filename`` only, and, in a file with no
    compiled region of its own, only for codes no other file's analysis could use.

    Returns:
        ``(findings kept, suppressions used in other files)``: the latter as ``(abs path,
        line, code as written)`` (see :attr:`~pt2lint.diagnostics.FileResult.used_suppressions`).
    """
    from pt2lint.suppression import apply_suppressions, suppress_reached

    own = [d for d in diags if d.filename == filename]
    foreign = [d for d in diags if d.filename != filename]
    used: set = set()
    if foreign:
        by_file: dict = {}
        for d in foreign:
            by_file.setdefault(d.filename, []).append(d)
        foreign = []
        for name, group in by_file.items():
            text = others.get(name)
            if text is None:
                foreign.extend(group)
                continue
            kept, hits = suppress_reached(group, text)
            used.update((os.path.abspath(name), line, code) for line, code in hits)
            foreign.extend(kept)
    # Anchors: a stand-in for each foreign finding at its call site in this file.
    proxies = {}
    for d in foreign:
        anchor = d.call_sites[0] if d.call_sites else None
        if anchor is not None and anchor[1] == filename:
            p = Diagnostic(
                code=d.code, name=d.name, message=d.message, filename=filename,
                start=Position(anchor[2], anchor[3]), end=Position(anchor[2], anchor[3] + 1),
                severity=d.severity, category=d.category, statement_lines=(anchor[4], anchor[5]),
            )
            proxies[id(p)] = (p, d)
    kept = apply_suppressions(own + [p for p, _ in proxies.values()], source, filename, enabled, unused_analysis_codes=has_regions)
    survivors = {id(d) for p, d in proxies.values() if any(k is p for k in kept)}
    out = [k for k in kept if id(k) not in proxies]
    out.extend(d for d in foreign if not (d.call_sites and d.call_sites[0][1] == filename) or id(d) in survivors)
    return out, tuple(sorted(used))


def _stock_analysis() -> bool:
    """Whether ``pt2lint.analysis.driver.analyse_module`` is the built-in analysis.

    A replaced one (a plugin, a test double) yields diagnostics without nodes,
    so its findings get no codemod fixes.
    """
    from pt2lint.analysis import driver

    return getattr(driver.analyse_module, "__module__", None) == driver.__name__


_SUPPRESSION_MARKERS = ("noqa", "pt2lint")


def _may_have_findings(source: str) -> bool:
    """False only when the file has no compiled region and no suppression comment.

    (Its syntax has been judged by CPython already: :func:`cpython_syntax_error`.)
    """
    from pt2lint.analysis.driver import may_contain_region, may_need_module_rules

    return may_contain_region(source) or may_need_module_rules(source) or any(m in source for m in _SUPPRESSION_MARKERS)


def read_source(path: str) -> str:
    """Read and decode a file.

    Raises:
        OSError: unreadable, a directory, missing, a symlink loop (message from the OS).
        DecodeError: undecodable bytes.
    """
    return decode_source(read_bytes(path))


def read_bytes(path: str, max_bytes: Optional[int] = None) -> bytes:
    """The bytes of the file at ``path``, read with :func:`pt2lint.reading.read_bytes`.

    A FIFO or pipe is read (the walk never yields one, so it was named on the command line:
    ``check <(...)``), with a time limit; a device, socket or directory is refused.

    Args:
        path: the file.
        max_bytes: the size limit in bytes (default: :data:`pt2lint.reading.DEFAULT_MAX_BYTES`).

    Raises:
        OSError: unreadable, a directory, missing, a symlink loop (message from the OS), or
            :class:`~pt2lint.reading.ReadRefused` (a device, too large).
    """
    from pt2lint import reading

    return reading.read_bytes(path, max_bytes=reading.DEFAULT_MAX_BYTES if max_bytes is None else max_bytes, allow_pipe=True)


def lint_path(
    path: str,
    settings: LintSettings,
    *,
    relpath: Optional[str] = None,
    keep_source: bool = False,
    on_read: Optional[Callable[[bytes], None]] = None,
) -> FileResult:
    """Read, decode and lint one file; I/O and decoding problems become ``FileResult.error``.

    Args:
        path: the file.
        settings: the lint settings (``max_file_size`` bounds the read).
        relpath: path relative to the project root, for per-file ignores.
        keep_source: keep the text on the result.
        on_read: called with the exact bytes that were read (and are analysed), so the
            result cache is keyed by what was linted, not by an earlier or later read.
    """
    try:
        data = read_bytes(path, getattr(settings, "max_file_size", None))
    except OSError as exc:
        return FileResult(path, error=f"{path}: {os_error_reason(exc)}")
    if on_read is not None:
        on_read(data)
    try:
        source = decode_source(data)
    except DecodeError as exc:
        return FileResult(path, error=f"{path}: {exc}")
    try:
        return lint_source(source, path, settings, relpath=relpath, keep_source=keep_source, data=data)
    except RecursionError:
        return FileResult(path, error=f"{path}: code nested too deeply to analyse (recursion limit)")


def _worker(args):
    path, relpath, settings, keep_source, cache_dir = args
    analysed: List[bytes] = []
    try:
        result = lint_path(path, settings, relpath=relpath, keep_source=keep_source, on_read=analysed.append)
    except Exception as exc:  # an analysis bug must not take down the whole run
        return FileResult(path, error=f"{path}: internal error: {type(exc).__name__}: {exc}")
    if cache_dir and analysed:
        from pt2lint.cache import ResultCache

        cache = ResultCache(cache_dir, settings)
        # Keyed by the bytes this result was computed from: a file edited during the run
        # gets an entry for its new content, never the old content's key with new findings.
        cache.put(cache.key_for(analysed[0], path, relpath), result)
    return result


def lint_paths(
    paths: Sequence[str],
    settings: LintSettings,
    *,
    jobs: Optional[int] = None,
    relpaths: Optional[Sequence[str]] = None,
    keep_source: bool = False,
    cache_dir: Optional[str] = None,
    merge: bool = True,
) -> Iterator[FileResult]:
    """Lint many files, in worker processes when there are enough of them.

    Args:
        paths: files to lint.
        settings: shared by all files.
        jobs: worker processes; ``None`` means one per CPU core, ``1`` runs in-process.
        relpaths: project-relative paths parallel to ``paths`` (for per-file ignores).
        keep_source: keep each file's text on its result (disables the cache).
        cache_dir: a :class:`~pt2lint.cache.ResultCache` directory, or ``None`` for no cache.
        merge: merge findings reached from several files (below); ``False`` yields each
            file's own results, for a caller that filters them before :func:`merge_results`.

    Yields:
        One :class:`FileResult` per path, in the order of ``paths``.  A finding in a
        project file that several files' compiled regions reach is reported once: by
        the file it lies in when that file is linted too, else by the first file that
        reaches it.  A suppression that another file's analysis used is not reported
        unused (``PTC002``) by its own file's.  A cached result is used only while every
        file its analysis read is unchanged.
    """
    paths = list(paths)
    rel = list(relpaths) if relpaths is not None else list(paths)

    def lint(ps: Sequence[str], ss: Sequence[LintSettings], rs: Sequence[str]) -> List[FileResult]:
        return list(_lint_each(list(ps), list(ss), jobs, list(rs), keep_source, cache_dir))

    results = judge_submodules(lint(paths, [settings] * len(paths), rel), settings, lint, rel)
    yield from merge_results(results) if merge else results


def judge_submodules(
    results: List[FileResult], settings: LintSettings, lint, relpaths: Sequence[str], hidden_out: Optional[list] = None,
    overlay: Optional[Dict[str, str]] = None,
) -> List[FileResult]:
    """``results`` after analysing again the files whose classes turned out to be submodules.

    A file analysed alone takes each ``nn.Module`` class that nothing in it builds for a
    top-level model (:func:`built_elsewhere`).  When a class of another linted file, or of
    a project file outside the run (:func:`_users_outside_run`: ``pt2lint check
    layers.py``, a pre-commit run or an editor on the one file), builds it, the file is
    analysed again knowing that (cached under its own key); what the analyses of the
    outside files that build its classes or call its functions reach in the linted files
    is added (:func:`_take_reached_findings`).

    Args:
        results: one result per linted file (its ``filename`` as given).
        settings: the run's settings.
        lint: ``lint(paths, settings per path, relpaths) -> results``, in order.
        relpaths: project-relative paths parallel to ``results`` (per-file ignores).
        hidden_out: a list that receives the results of the outside files analysed.
        overlay: ``abs path -> text`` read instead of the disk by the search for users (an
            editor's buffers, stdin given a file name).

    Returns:
        One result per linted file, in order, not yet merged (:func:`merge_results`).
    """
    results = list(results)
    hidden, hidden_rel = _users_outside_run(results, settings, lint, overlay or {})
    everything = results + hidden
    rel_all = list(relpaths) + hidden_rel
    again = built_elsewhere(everything)
    if again:
        # the linted files, and the outside files, whose classes turned out to be submodules
        order = sorted(again)
        redone = lint(
            [everything[i].filename for i in order],
            [replace(settings, built_elsewhere=again[i], reached_elsewhere=_reached_by_others(everything, i)) for i in order],
            [rel_all[i] for i in order],
        )
        for i, r in zip(order, redone):
            everything[i] = r
    results, hidden = everything[: len(results)], everything[len(results):]
    if hidden_out is not None:
        hidden_out.extend(hidden)
    if hidden:
        results = _take_reached_findings(results, hidden)
    return results


def judge_document(
    result: FileResult, source: str, path: str, relpath: Optional[str], settings: LintSettings, others: Optional[Dict[str, str]] = None,
) -> FileResult:
    """The result of a text not read from its file (an editor's buffer, stdin with
    ``--stdin-filename``) judged by the project files that build its classes or use its definitions.

    As ``check`` does for a file linted alone (:func:`judge_submodules`): the text is analysed
    again knowing which of its classes a module class of another file of its package builds,
    and the findings that the analyses of the files building its classes or calling its
    functions reach in it are added.  Those analyses read the text in place of the file at
    ``path``, and the other files from ``others`` (open buffers), else from the disk; they
    count among the files the result depends on.

    Args:
        result: :func:`lint_source`'s result for ``source`` (its ``filename`` as shown).
        source: the decoded text.
        path: the file the text stands for (it need not exist).
        relpath: its project-relative path (per-file ignores), or ``None``.
        settings: the run's settings.
        others: ``abs path -> text`` of other files to read from memory.

    Returns:
        The judged result, merged (:func:`merge_results`).
    """
    from pt2lint.reading import read_text

    others = dict(others or {})
    own = os.path.abspath(path)
    texts = {**others, own: source}

    def lint(paths, settings_list, relpaths):
        out = []
        for p, s, r in zip(paths, settings_list, relpaths):
            absolute = os.path.abspath(p)
            if absolute == own:
                out.append(lint_source(source, result.filename, s, relpath=r, overlay=others))
                continue
            text = texts.get(absolute)
            if text is None:
                try:
                    text = read_text(absolute, max_bytes=s.max_file_size)
                except (OSError, ValueError) as exc:
                    out.append(FileResult(p, error=f"{p}: {exc}"))
                    continue
            out.append(lint_source(text, p, s, relpath=r, overlay={k: v for k, v in texts.items() if k != absolute}))
        return out

    hidden: list = []
    judged = merge_results(judge_submodules([result], settings, lint, [relpath or path], hidden_out=hidden, overlay=texts))[0]
    # the document is re-linted when a file that builds or calls it changes too
    read = {p for p, _ in judged.dependencies}
    extra = []
    for h in hidden:
        for p, digest in ((os.path.abspath(h.filename), None), *h.dependencies):
            if p not in read and p != own:
                read.add(p)
                extra.append((p, digest))
    return replace(judged, dependencies=tuple(judged.dependencies) + tuple(extra)) if extra else judged


#: Rounds of the search for users outside the run: the users of a linted file, then the
#: builders of the classes of those users whose analyses reach it (a ``Stage`` built by a
#: ``Net`` and building the linted ``Block``), and the users of the files that call its
#: functions without compiling anything themselves (``ops.py`` between ``model.py`` and
#: ``utils.py``).
USER_SEARCH_ROUNDS = 3


def _users_outside_run(
    results: Sequence[FileResult], settings: LintSettings, lint, overlay: Dict[str, str],
) -> Tuple[List[FileResult], List[str]]:
    """The results of the project files outside the run that build classes or call functions of linted files.

    A file linted without the rest of its package (``pt2lint check layers.py``, a pre-commit
    run or an editor on the one changed file) is compiled as part of what other files build
    and call: a class with findings from its analysis as a top-level model, that no linted
    file builds, may be the submodule of a module class of another file, and a function
    may be called from another file's ``forward``.
    :func:`pt2lint.analysis.builders.find_users` looks for such files in the package, and
    they are analysed here (``lint`` as :func:`judge_submodules`), unreported, so that
    :func:`built_elsewhere` knows the class for a submodule and the findings their
    analyses reach in the linted files count, as when the whole package is linted.  Up to
    :data:`USER_SEARCH_ROUNDS` rounds: a user that is itself a class analysed as a top-level
    model while a module class of another file builds it, or a file that only passes the
    call on, is judged the same way in turn.

    Returns:
        ``(results of the outside files, their project-relative paths)``.
    """
    from pt2lint.analysis.builders import find_users, standalone_classes, top_level_classes, top_level_functions
    from pt2lint.discovery import display_path, project_relpath
    from pt2lint.reading import read_bytes

    asked = {os.path.abspath(r.filename) for r in results if r.filename and r.filename != "-"}
    built = {s for r in results for s in r.submodules}
    classes: Dict[str, frozenset] = {}
    for i, names in standalone_classes(results, _standalone_root).items():
        own = os.path.abspath(results[i].filename)
        rest = frozenset(c for c in names if (own, c) not in built)
        if rest:
            classes[own] = rest

    def defs_of(paths) -> Dict[str, frozenset]:
        out: Dict[str, frozenset] = {}
        for own in paths:
            try:
                if own in overlay:
                    data = overlay[own].encode("utf-8", "surrogateescape")
                else:
                    data = read_bytes(own, max_bytes=settings.max_file_size)
            except (OSError, ValueError):
                continue
            names = top_level_functions(data) | top_level_classes(data)
            if names:
                out[own] = names
        return out

    functions = defs_of(sorted(asked - {os.path.abspath(r.filename) for r in results if r.error}))
    hidden: List[FileResult] = []
    hidden_rel: List[str] = []
    seen = set(asked)
    root = settings.project_root or os.getcwd()
    for _round in range(USER_SEARCH_ROUNDS):
        if not classes and not functions:
            break
        passing: Dict[str, set] = {}
        found = find_users(classes, functions, settings, skip=sorted(seen), intermediates=passing, overlay=overlay)
        paths = sorted(p for p in found if p not in seen)
        seen.update(paths)
        seen.update(passing)
        new: List[FileResult] = []
        if paths:
            rel = [project_relpath(p, root) for p in paths]
            new = lint([display_path(p) for p in paths], [settings] * len(paths), rel)
            hidden += new
            hidden_rel += rel
        # next round: builders of the new users' classes that were analysed as top-level
        # models and reach a linted file, and users of the files that pass calls on
        built |= {s for r in new for s in r.submodules}
        classes = {}
        for r in new:
            own = os.path.abspath(r.filename)
            names = {
                _standalone_root(d)[1] for d in r.diagnostics
                if os.path.abspath(d.filename) in asked and _standalone_root(d)[0] == own
            }
            rest = frozenset(c for c in names if c and (own, c) not in built)
            if rest:
                classes[own] = rest
        functions = defs_of(sorted(passing))
    return hidden, hidden_rel


def _take_reached_findings(results: List[FileResult], hidden: Sequence[FileResult]) -> List[FileResult]:
    """``results`` with the findings that the ``hidden`` results' analyses reach in their files.

    The hidden results (files analysed only for what they build) are not reported: their
    findings in the linted files join those files' results (a duplicate of the file's own
    finding is dropped by :func:`merge_results`, as for two linted files), the rest are
    dropped; the suppressions their analyses used count as used, and the classes they
    build are submodules to :func:`merge_results` (carried on the first result).
    """
    index = {os.path.abspath(r.filename): i for i, r in enumerate(results)}
    extra: Dict[int, list] = {}
    used: set = set()
    for h in hidden:
        used |= set(h.used_suppressions)
        for d in h.diagnostics:
            i = index.get(os.path.abspath(d.filename))
            if i is not None and d.code != "PTC002":
                extra.setdefault(i, []).append(replace(d, filename=results[i].filename))
    out = list(results)
    for i, more in extra.items():
        r = out[i]
        diags = sorted(list(r.diagnostics) + more, key=Diagnostic.sort_key)
        out[i] = replace(r, diagnostics=tuple(diags))
    built = {s for h in hidden for s in h.submodules}
    if out and (used or built):
        first = out[0]
        out[0] = replace(
            first,
            used_suppressions=tuple(first.used_suppressions) + tuple(sorted(used - set(first.used_suppressions))),
            submodules=tuple(first.submodules) + tuple(sorted(built - set(first.submodules))),
        )
    return out


def _reached_by_others(results: Sequence[FileResult], i: int) -> frozenset:
    """Names of the classes of ``results[i]``'s file whose ``forward`` the analyses of the other
    results followed (:attr:`~pt2lint.diagnostics.FileResult.reached`)."""
    own = os.path.abspath(results[i].filename)
    return frozenset(c for j, r in enumerate(results) if j != i for p, c in r.reached if p == own)


def built_elsewhere(results: Sequence[FileResult]) -> dict:
    """The results to analyse again because another linted file builds their classes as submodules.

    A file analysed alone takes each ``nn.Module`` class that nothing in it builds for a
    top-level model, called with tensors (Dynamo's view of ``torch.compile(Block())``).
    When a class of another linted file builds it in its ``__init__`` (the parent's
    analysis saw it constructed: :attr:`~pt2lint.diagnostics.FileResult.submodules`), its
    ``forward`` runs inside the parent's graph with what the parent passes (``H, W`` from
    ``x.shape`` are ints there), and the parent's analysis follows it with those kinds; the
    class's own analysis must then take untyped parameters as unknown, as for a class
    built in its own file.

    Args:
        results: one result per linted file, in order.

    Returns:
        ``{index into results: frozenset of class names}`` for each result that has a
        finding from such a class's standalone analysis (only those can change).
    """
    by_others: dict = {}
    for r in results:
        own = os.path.abspath(r.filename)
        for path, cls in r.submodules:
            if path != own:
                by_others.setdefault(path, set()).add(cls)
    if not by_others:
        return {}
    out: dict = {}
    for i, r in enumerate(results):
        own = os.path.abspath(r.filename)
        names = by_others.get(own, set()) - {c for p, c in r.submodules if p == own}
        if not names or r.error:
            continue
        roots = {(own, c) for c in names}
        if any(_standalone_root(d) in roots for d in r.diagnostics):
            out[i] = frozenset(names)
    return out


def merge_results(results: Sequence[FileResult]) -> List[FileResult]:
    """Drop findings reported by more than one result, and unused-suppression findings about a
    comment another result used (see :func:`lint_paths`); name files as they were given."""
    given = {os.path.abspath(r.filename): r.filename for r in results}
    # A class another linted file builds as a submodule runs in that parent's context: its
    # forward's own analysis (inputs assumed to be the caller's) says nothing about input
    # mutation then; the parent's analysis, with the arguments it really passes, decides.
    submodules = {s for r in results for s in r.submodules}
    best: dict = {}
    longest: dict = {}  # key -> the diagnostic with the longest call chain (first such)
    for i, r in enumerate(results):
        own = os.path.abspath(r.filename)
        for d in r.diagnostics:
            if submodules and d.category == "input-mutation" and _standalone_root(d) in submodules:
                continue
            where = os.path.abspath(d.filename)
            key = (where, d.start, d.end, d.code)
            rank = (0 if where == own else 1, i)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, id(d), key)
            if key not in longest or len(d.call_chain) > len(longest[key].call_chain):
                longest[key] = d
    winners = {v[1]: v[2] for v in best.values()}
    used = {u for r in results for u in r.used_suppressions}
    out: List[FileResult] = []
    for r in results:
        if all(
            id(d) in winners and d.filename == r.filename and longest[winners[id(d)]] is d and not suppression_used_elsewhere(d, used)
            for d in r.diagnostics
        ):
            out.append(r)
            continue
        kept = []
        for d in r.diagnostics:
            if id(d) not in winners or suppression_used_elsewhere(d, used):
                continue
            far = longest[winners[id(d)]]
            if far is not d:
                # the file's own analysis found it (and its fix); a caller in another file reaches it too
                d = replace(d, message=far.message, call_chain=far.call_chain, call_sites=far.call_sites, symbol=far.symbol)
            name = given.get(os.path.abspath(d.filename))
            if name is not None and name != d.filename:
                d = replace(d, filename=name)
            kept.append(d)
        out.append(replace(r, diagnostics=tuple(kept)))
    return out


def suppression_used_elsewhere(d: Diagnostic, used) -> bool:
    """Whether ``d`` reports a suppression as unused (``PTC002``) that another file's analysis in
    the run used (``used``: the results' :attr:`~pt2lint.diagnostics.FileResult.used_suppressions`)."""
    if not used or d.code != "PTC002":
        return False
    from pt2lint.suppression import unused_suppression_key

    key = unused_suppression_key(d)
    return key is not None and (os.path.abspath(d.filename), key[0], key[1]) in used


def _standalone_root(d: Diagnostic) -> Tuple[str, str]:
    """``(abs path, class)`` of the forward whose analysis found ``d`` (its chain's entry)."""
    entry = (d.call_chain[0] if d.call_chain else d.symbol) or ""
    path = d.call_sites[0][1] if d.call_sites else d.filename
    return (os.path.abspath(path), entry.split(".", 1)[0])


def _lint_each(paths, settings, jobs, relpaths, keep_source, cache_dir) -> Iterator[FileResult]:
    """One result per path, as :func:`lint_paths` yields them before merging.

    ``settings`` holds one :class:`LintSettings` per path (``relpaths`` one relative path per path).
    """
    rel = list(relpaths) if relpaths is not None else list(paths)
    caches: dict = {}  # id(settings) -> ResultCache
    current = None
    if cache_dir and not keep_source:
        from pt2lint.cache import DependencyHashes

        current = DependencyHashes()
    plan: List[object] = []  # a FileResult (cache hit) or a work item (miss), in input order
    for p, r, s in zip(paths, rel, settings):
        if current is not None:
            from pt2lint import reading
            from pt2lint.cache import ResultCache

            cache = caches.get(id(s))
            if cache is None:
                cache = caches[id(s)] = ResultCache(cache_dir, s)
            try:  # regular files only: a pipe (`check <(...)`) can be read only once, by the worker
                data: Optional[bytes] = reading.read_bytes(p, max_bytes=getattr(s, "max_file_size", reading.DEFAULT_MAX_BYTES))
            except OSError:
                data = None
            if data is not None:
                hit = cache.get(cache.key_for(data, p, r), p, data, current)
                if hit is not None:
                    plan.append(hit)
                    continue
        plan.append((p, r, s, keep_source, cache_dir if current is not None else None))
    misses = [item for item in plan if not isinstance(item, FileResult)]
    from pt2lint.pool import ordered_map

    computed = ordered_map(_worker, misses, jobs, _died)
    for item in plan:
        yield item if isinstance(item, FileResult) else next(computed)


def _died(item) -> FileResult:
    """The result for a file whose worker process died while checking it."""
    path = item[0]
    return FileResult(path, error=f"{path}: internal error: the process checking this file died (a crash in native code, or out of memory)")
