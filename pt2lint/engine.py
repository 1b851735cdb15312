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
import tokenize
from typing import Iterator, List, Optional, Sequence

import libcst as cst

from pt2lint.diagnostics import Diagnostic, FileResult, Position
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
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


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
    return Diagnostic(
        code="PTC001",
        name="syntax-error",
        message=f"SyntaxError: {message}",
        filename=filename,
        start=Position(line, col),
        end=Position(line, col + 1),
        severity="error",
        category="internal",
    )


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

    Returns:
        A :class:`FileResult` with findings sorted by position.  A syntax error is
        a ``PTC001`` finding, not an exception.
    """
    from pt2lint.analysis.driver import analyse_module  # local: keeps import of the CLI light
    from pt2lint.suppression import apply_suppressions

    enabled = settings.enabled_for((relpath or filename).replace(os.sep, "/"))
    if prefilter and not _may_have_findings(source):
        return FileResult(filename, (), source=source if keep_source else None)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        diags = [_syntax_error(exc, source, filename)] if "PTC001" in enabled else []
        return FileResult(filename, tuple(diags), source=source if keep_source else None)
    except RecursionError:
        diag = Diagnostic(
            code="PTC001", name="syntax-error", message="SyntaxError: expression nested too deeply to parse",
            filename=filename, start=Position(1, 1), end=Position(1, 2), severity="error", category="internal",
        )
        return FileResult(filename, (diag,) if "PTC001" in enabled else (), source=source if keep_source else None)
    findings = None
    if fixes and _stock_analysis():
        # The same analysis, keeping each finding's nodes so that fixes need no second pass.
        from pt2lint.analysis.driver import analyse_findings

        findings = analyse_findings(module, source, filename, settings, enabled)
        diags = [f.diagnostic for f in findings]
    else:
        diags = analyse_module(module, source, filename, settings, enabled)
    diags = apply_suppressions(diags, source, filename, enabled)
    if findings:
        from pt2lint.fixes import FIXABLE_CODES, attach_fixes

        if any(d.code in FIXABLE_CODES for d in diags):
            diags = attach_fixes(module, source, settings, findings, diags, fix_names)
    diags.sort(key=Diagnostic.sort_key)
    return FileResult(filename, tuple(diags), source=source if keep_source else None)


def _stock_analysis() -> bool:
    """Whether ``pt2lint.analysis.driver.analyse_module`` is the built-in analysis.

    A replaced one (a plugin, a test double) yields diagnostics without nodes,
    so its findings get no codemod fixes.
    """
    from pt2lint.analysis import driver

    return getattr(driver.analyse_module, "__module__", None) == driver.__name__


_SUPPRESSION_MARKERS = ("noqa", "pt2lint")


def _may_have_findings(source: str) -> bool:
    """False only when the file has no compiled region, no suppression comment and no syntax error."""
    from pt2lint.analysis.driver import may_contain_region

    if may_contain_region(source) or any(m in source for m in _SUPPRESSION_MARKERS):
        return True
    import ast

    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # let LibCST produce the PTC001 finding
    return False


def read_source(path: str) -> str:
    """Read and decode a file.

    Raises:
        OSError: unreadable, a directory, missing, a symlink loop (message from the OS).
        DecodeError: undecodable bytes.
    """
    if os.path.isdir(path):
        raise IsADirectoryError(21, "is a directory, not a Python file")
    with open(path, "rb") as fh:
        data = fh.read()
    return decode_source(data)


def lint_path(path: str, settings: LintSettings, *, relpath: Optional[str] = None, keep_source: bool = False) -> FileResult:
    """Read, decode and lint one file; I/O and decoding problems become ``FileResult.error``."""
    try:
        source = read_source(path)
    except DecodeError as exc:
        return FileResult(path, error=f"{path}: {exc}")
    except OSError as exc:
        return FileResult(path, error=f"{path}: {os_error_reason(exc)}")
    try:
        return lint_source(source, path, settings, relpath=relpath, keep_source=keep_source)
    except RecursionError:
        return FileResult(path, error=f"{path}: code nested too deeply to analyse (recursion limit)")


def _worker(args):
    path, relpath, settings, keep_source, cache_dir, key = args
    try:
        result = lint_path(path, settings, relpath=relpath, keep_source=keep_source)
    except Exception as exc:  # an analysis bug must not take down the whole run
        return FileResult(path, error=f"{path}: internal error: {type(exc).__name__}: {exc}")
    if cache_dir and key:
        from pt2lint.cache import ResultCache

        ResultCache(cache_dir, settings).put(key, result)
    return result


def lint_paths(
    paths: Sequence[str],
    settings: LintSettings,
    *,
    jobs: Optional[int] = None,
    relpaths: Optional[Sequence[str]] = None,
    keep_source: bool = False,
    cache_dir: Optional[str] = None,
) -> Iterator[FileResult]:
    """Lint many files, in worker processes when there are enough of them.

    Args:
        paths: files to lint.
        settings: shared by all files.
        jobs: worker processes; ``None`` means one per CPU core, ``1`` runs in-process.
        relpaths: project-relative paths parallel to ``paths`` (for per-file ignores).
        keep_source: keep each file's text on its result (disables the cache).
        cache_dir: a :class:`~pt2lint.cache.ResultCache` directory, or ``None`` for no cache.

    Yields:
        One :class:`FileResult` per path, in the order of ``paths``, as soon as it
        and every earlier one are done.
    """
    rel = list(relpaths) if relpaths is not None else list(paths)
    cache = None
    if cache_dir and not keep_source:
        from pt2lint.cache import ResultCache

        cache = ResultCache(cache_dir, settings)
    plan: List[object] = []  # a FileResult (cache hit) or a work item (miss), in input order
    for p, r in zip(paths, rel):
        key = None
        if cache is not None and os.path.isfile(p):  # a pipe (`check <(...)`) can be read only once
            try:
                with open(p, "rb") as fh:
                    data = fh.read()
            except OSError:
                data = None
            if data is not None:
                key = cache.key(data, settings.enabled_for(r.replace(os.sep, "/")))
                hit = cache.get(key, p)
                if hit is not None:
                    plan.append(hit)
                    continue
        plan.append((p, r, settings, keep_source, cache_dir if cache is not None else None, key))
    misses = [item for item in plan if not isinstance(item, FileResult)]
    n_jobs = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    if n_jobs == 1 or len(misses) < 4:
        for item in plan:
            yield item if isinstance(item, FileResult) else _worker(item)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    chunk = max(1, min(8, len(misses) // (n_jobs * 16) or 1))
    # Not multiprocessing.Pool: when a worker dies (a crash in native code, the OOM killer)
    # Pool loses its task and waits forever; this executor raises BrokenProcessPool instead.
    pool = ProcessPoolExecutor(min(n_jobs, len(misses)), mp_context=ctx)
    try:
        computed = pool.map(_worker, misses, chunksize=chunk)
        broken = False
        for item in plan:
            if isinstance(item, FileResult):
                yield item
                continue
            if not broken:
                try:
                    yield next(computed)
                    continue
                except BrokenProcessPool:
                    broken = True  # this file and every later one: one fresh process each
            yield _worker_in_own_process(item, ctx)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _worker_in_own_process(item, ctx) -> FileResult:
    """:func:`_worker` on ``item`` in a process of its own, after a worker died: a file that kills
    its process gets a one-line error, and the others are still checked."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    path = item[0]
    with ProcessPoolExecutor(1, mp_context=ctx) as one:
        try:
            return one.submit(_worker, item).result()
        except BrokenProcessPool:
            return FileResult(path, error=f"{path}: internal error: the process checking this file died (a crash in native code, or out of memory)")
