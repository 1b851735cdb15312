"""``pt2lint lsp``: a language server (LSP 3.17 over stdio) built on pygls and lsprotocol.

What an editor gets:

- diagnostics on open, change (debounced per document) and save, with
  ``source="pt2lint"``, the rule ``code``, ``codeDescription.href`` to the rule's
  documentation and the rule's severity; each carries its fix's edits in
  ``Diagnostic.data`` (see :mod:`pt2lint.reporters.lsp`), so code actions never
  lint again;
- code actions: the quick fix of a finding (unsafe ones say so in the title and
  are not preferred), "Suppress PTCnnn on this line" (adds or extends a
  ``# noqa`` comment), and ``source.fixAll.pt2lint`` (every safe fix at once);
- hover on a code inside a suppression comment (``# noqa: PTC101``,
  ``# pt2lint: ignore[tensor-item]``) shows the rule's summary;
- settings from the document's own project (the nearest ``pyproject.toml`` with
  ``[tool.pt2lint]``, ``pt2lint.toml`` or ``.pt2lint.toml``), reloaded when that
  file changes (watched-file notifications, and a modification-time check
  before every lint).  An invalid config is shown once as an error message and
  the document is linted with the default settings meanwhile.

pygls and lsprotocol are the ``lsp`` extra and are imported only here, only when
the server starts; :func:`serve` raises :class:`LspUnavailable` without them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import typing
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from pt2lint import __version__
from pt2lint.baseline import NOQA_SKIP_CODES
from pt2lint.diagnostics import Diagnostic, Position
from pt2lint.lines import SourceLines, split_lines
from pt2lint.reading import read_text

logger = logging.getLogger("pt2lint.lsp")

FIX_ALL_KIND = "source.fixAll.pt2lint"
CONFIG_FILE_NAMES = (".pt2lint.toml", "pt2lint.toml", "pyproject.toml")
DEFAULT_DEBOUNCE_S = 0.3
#: Seconds one lint may take in the language server before it is stopped.
DEFAULT_LINT_TIMEOUT_S = 10.0
#: Lint threads of the language server: a few slow documents do not hold up the others.
DEFAULT_LINT_WORKERS = 4
_CODE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


#: The ``lsp`` extra of pyproject.toml (a test keeps the two equal).  The install hint
#: names these packages, which are on the package index, and not ``pt2lint[lsp]``: pt2lint
#: itself is installed from a checkout or a git URL, not from the index.
LSP_REQUIREMENTS = ("pygls>=2.0", "lsprotocol>=2024.0.0")


class LspUnavailable(RuntimeError):
    """pygls or lsprotocol is not installed (the message says how to install the ``lsp`` extra)."""


def _require_lsp() -> None:
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        packages = " ".join(f"'{r}'" for r in LSP_REQUIREMENTS)
        raise LspUnavailable(
            f"the language server needs the 'lsp' extra ({exc.name or 'pygls'} is not installed): "
            f"pip install {packages}"
        ) from None


def uri_to_path(uri: str) -> Optional[str]:
    """The local path of a ``file://`` URI, or ``None`` for other schemes (``untitled:``, ...)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):  # pragma: no cover - Windows only
        path = path[1:]
    return os.path.normpath(path)


# --------------------------------------------------------------------------- config


@dataclass
class _CachedProject:
    project: Any
    stamp: Tuple[Tuple[str, int, int], ...]


def _stamp(paths: Sequence[str]) -> Tuple[Tuple[str, int, int], ...]:
    out = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((p, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((p, -1, -1))
    return tuple(out)


def _config_candidates(directory: str) -> List[str]:
    """Every config file that could decide the settings of a file in ``directory`` (existing or not)."""
    out = []
    probe = os.path.abspath(directory)
    while True:
        out.extend(os.path.join(probe, n) for n in CONFIG_FILE_NAMES)
        parent = os.path.dirname(probe)
        if parent == probe:
            return out
        probe = parent


class ProjectCache:
    """Resolved projects by document directory, reloaded when a config file that decides them changes.

    A project is keyed by the directory of the document; its validity stamp is
    the modification time and size of every config file name at or above that
    directory (existing or not), so creating, editing or deleting a config file
    is noticed without any notification from the client.
    """

    def __init__(self) -> None:
        self._by_dir: Dict[str, _CachedProject] = {}
        self.errors_shown: set = set()

    def clear(self) -> None:
        """Forget every project (after a watched config file changed)."""
        self._by_dir.clear()

    def get(self, path: Optional[str], fallback_dir: str) -> Tuple[Any, Optional[str]]:
        """``(project, error message or None)`` for the document at ``path``.

        On a config error the project is the default one (isolated), so the
        document is still linted; the error message names the file and key.
        """
        from pt2lint.config import ConfigError, load_project

        directory = os.path.dirname(path) if path else fallback_dir
        candidates = _config_candidates(directory)
        stamp = _stamp(candidates)
        cached = self._by_dir.get(directory)
        if cached is not None and cached.stamp == stamp:
            return cached.project, None
        error: Optional[str] = None
        try:
            project = load_project([path] if path else [directory])
        except ConfigError as exc:
            error = str(exc)
            project = load_project([path] if path else [directory], isolated=True)
        if error is None:
            self._by_dir[directory] = _CachedProject(project, stamp)
        return project, error


# --------------------------------------------------------------------------- linting


def lint_document(source: str, path: Optional[str], uri: str, project: Any, overlay: Optional[Dict[str, str]] = None) -> List[Diagnostic]:
    """Lint an open document's text with its project's settings.

    Returns an empty list for files the project excludes (``exclude``,
    ``extend-exclude``, ``.gitignore``).  Never raises for bad code: a syntax
    error is a ``PTC001`` finding.  See :func:`lint_document_result`.
    """
    return lint_document_result(source, path, uri, project, overlay)[0]


def lint_document_result(
    source: str, path: Optional[str], uri: str, project: Any, overlay: Optional[Dict[str, str]] = None
) -> Tuple[List[Diagnostic], Tuple[str, ...]]:
    """``(findings to show in the document, absolute paths of the files its analysis read)``.

    Args:
        overlay: ``abs path -> text`` of the other open documents: imported project
            modules are read from there before the disk, so unsaved edits count.

    A finding in another file that the document's compiled regions reach is shown at
    the document's call that leads there (its anchor), with the chain and the
    finding's own place as related information.

    A leading byte order mark (U+FEFF) is not source, as ``check`` reads a file: it is
    dropped before linting (in the overlay's documents too), and the findings' columns
    on line 1 are then counted in the document's own text, where the BOM is character 0.
    """
    from pt2lint.discovery import is_excluded, project_relpath
    from pt2lint.engine import judge_document, lint_source

    bom = source.startswith(BOM)
    if bom:
        source = source[1:]
    overlay = {k: v[1:] if v.startswith(BOM) else v for k, v in (overlay or {}).items()}

    filename = path or uri
    relpath = None
    if path is not None:
        if is_excluded(path, project.discovery):
            return [], ()
        relpath = project_relpath(path, project.root)
    others = {k: v for k, v in (overlay or {}).items() if k != (os.path.abspath(path) if path else None)}
    result = lint_source(source, filename, project.settings, relpath=relpath, overlay=others)
    if path is not None and not result.error:
        result = judge_document(result, source, path, relpath, project.settings, others)
    shown: List[Diagnostic] = []
    for d in result.diagnostics:
        if d.filename == filename:
            shown.append(d)
            continue
        anchor = d.call_sites[0] if d.call_sites else None
        if anchor is None or anchor[1] != filename:
            continue
        shown.append(replace(
            d,
            filename=filename,
            start=Position(anchor[2], anchor[3]),
            end=Position(anchor[2], anchor[3] + _word_length(source, anchor[2], anchor[3])),
            fix=None,
            statement_lines=(anchor[4], anchor[5]),
            extra=d.extra + (("origin", (os.path.abspath(d.filename), d.start.line, d.start.column)),),
        ))
    if bom:
        shown = [_after_bom(d) for d in shown]
    return shown, tuple(p for p, _ in result.dependencies)


#: The byte order mark, as it starts a document's text when the client kept it.
BOM = "\ufeff"


def _after_bom(d: Diagnostic) -> Diagnostic:
    """``d`` (found in a document's text without its BOM) placed in the text with it:
    line-1 columns of the finding and of its fix's edits move one character right."""

    def shift(p: Position) -> Position:
        return Position(p.line, p.column + 1) if p.line == 1 else p

    fix = d.fix
    if fix is not None:
        fix = replace(fix, edits=tuple(replace(e, start=shift(e.start), end=shift(e.end)) for e in fix.edits))
    return replace(d, start=shift(d.start), end=shift(d.end), fix=fix)


def _word_length(source: str, line: int, column: int) -> int:
    """Length of the dotted name starting at 1-based (line, column) of ``source`` (at least 1)."""
    lines = SourceLines(source)
    if not 1 <= line <= len(lines):
        return 1
    m = re.match(r"[\w.]+", lines.text(line)[column - 1:])
    return max(1, len(m.group(0)) if m else 1)


def to_lsp_diagnostics(
    diagnostics: Sequence[Diagnostic], source: str, encoding: str, docs_url: Optional[str] = None
) -> List[Dict[str, Any]]:
    """Findings as LSP ``Diagnostic`` dicts (see :func:`pt2lint.reporters.lsp.diagnostic_to_lsp`);
    ``docs_url`` is the project's ``docs-url`` template for ``codeDescription.href``."""
    from pt2lint.reporters.lsp import LineIndex, diagnostic_to_lsp

    from pt2lint.reporters.lsp import file_uri_of

    index = LineIndex(source, encoding)
    return [diagnostic_to_lsp(d, index, file_uri_of, docs_url) for d in diagnostics]


def _units(text: str, encoding: str) -> int:
    from pt2lint.reporters.lsp import _units as units

    return units(text, encoding)


def noqa_text_edit(
    source: str, line0: int, code: str, encoding: str, statement0: Optional[Tuple[int, int]] = None,
) -> Optional[Dict[str, Any]]:
    """The LSP ``TextEdit`` that suppresses ``code`` for a finding on 0-based line ``line0``.

    Args:
        source: the document's text.
        line0: the finding's 0-based line (``data.noqaLine``).
        code: the rule code to suppress.
        encoding: the negotiated LSP position encoding.
        statement0: 0-based first and last line of the finding's statement
            (``data.statementLines``), ``None`` when not known.

    The comment goes where ``check --add-noqa`` puts it, by the same function
    (:func:`pt2lint.baseline.place_noqa` at :func:`pt2lint.baseline.noqa_spot`): at the
    end of the finding's line, else at the end of the multi-line string or backslash
    continuation when that is still in the finding's statement, else on a line of its own
    above the statement; merged into an existing ``# noqa`` or ``# pt2lint: ignore[...]``.
    ``None`` when the line is already suppressed, or when no comment can suppress the finding.
    """
    from pt2lint.baseline import noqa_spot, place_noqa
    from pt2lint.lines import split_lines

    statement = (statement0[0] + 1, statement0[1] + 1) if statement0 is not None else None
    new_source, added, _unplaced = place_noqa(source, {noqa_spot(line0 + 1, statement): [code]})
    if not added:
        return None
    old_lines = SourceLines(source).texts()  # the LSP's lines are CPython's, not str.splitlines'
    new_lines = SourceLines(new_source).texts()
    if len(new_lines) == len(old_lines):  # the comment ends a line
        for n, (a, b) in enumerate(zip(old_lines, new_lines)):
            if a != b:
                return {
                    "range": {"start": {"line": n, "character": 0}, "end": {"line": n, "character": _units(a, encoding)}},
                    "newText": b,
                }
        return None
    # a comment line of its own, inserted before line n (with its line ending)
    n = next((i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b), len(old_lines))
    return {
        "range": {"start": {"line": n, "character": 0}, "end": {"line": n, "character": 0}},
        "newText": split_lines(new_source)[n],
    }


def _overlap(a: Tuple[Tuple[int, int], Tuple[int, int]], b: Tuple[Tuple[int, int], Tuple[int, int]]) -> bool:
    """Whether two ranges (start, end) overlap; two insertions at the same point count as overlapping."""
    if a[0] == a[1] == b[0] == b[1]:
        return True
    return a[0] < b[1] and b[0] < a[1]


def safe_fix_edits(diagnostics: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The edits of every safe fix among LSP diagnostic dicts, skipping fixes that overlap an earlier one.

    Two pure insertions at one point overlap, except where they compose as ``pt2lint fix``
    composes them (:func:`pt2lint.fixes.edits.apply_fixes` with
    :func:`pt2lint.fixes.check_op.join_insertions`: the check codemod's op definitions after the
    imports): the earlier edit then carries the joined text, so "apply all safe fixes" writes
    every validation check of a file at once, as ``pt2lint fix`` does.  The diagnostics' own
    edit dicts are not changed (the returned edits are copies).
    """
    from pt2lint.fixes.check_op import join_insertions

    chosen: List[Dict[str, Any]] = []
    taken: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
    inserted: Dict[Tuple[int, int], Tuple[Dict[str, Any], List[str]]] = {}  # point -> (chosen edit, contents)
    for d in diagnostics:
        fix = (d.get("data") or {}).get("fix")
        if not fix or fix.get("applicability") != "safe" or not fix.get("edits"):
            continue
        spans = [
            ((e["range"]["start"]["line"], e["range"]["start"]["character"]), (e["range"]["end"]["line"], e["range"]["end"]["character"]))
            for e in fix["edits"]
        ]
        points = [a for a, b in spans if a == b]
        joined: Dict[Tuple[int, int], List[str]] = {}
        clash = False
        for span, edit in zip(spans, fix["edits"]):
            a = span[0]
            sole = span[0] == span[1] and points.count(a) == 1
            if sole and a in inserted and not any(_overlap(span, t) for t in taken if t[0] != t[1]):
                joined[a] = inserted[a][1] + [edit.get("newText", "")]
            elif any(_overlap(span, t) for t in taken):
                clash = True
                break
        if clash or any(join_insertions(c) is None for c in joined.values()):
            continue
        taken.extend(spans)
        for span, edit in zip(spans, fix["edits"]):
            a = span[0]
            if a in joined:
                target = inserted[a][0]
                target["newText"] = join_insertions(joined[a])
                inserted[a] = (target, joined[a])
                continue
            copy = dict(edit)
            chosen.append(copy)
            if span[0] == span[1] and points.count(a) == 1:
                inserted[a] = (copy, [edit.get("newText", "")])
    return chosen


def fix_title(code: str, fix: Dict[str, Any]) -> str:
    """The code action title of a fix: ``Fix PTC401: <message>``, with ``(unsafe fix)`` appended for unsafe ones.

    Only the message's first clause is used (the text before ``"; "``): the
    rest explains the fix's safety, which the diagnostic and docs carry.
    """
    message = str(fix.get("message") or "apply the fix").split("; ")[0].strip()
    suffix = " (unsafe fix)" if fix.get("applicability") == "unsafe" else ""
    return f"Fix {code}: {message}{suffix}"


def hover_markdown(code: str, docs_url: Optional[str] = None) -> Optional[str]:
    """The hover text for a rule code or name: code, name, severity, summary and a link (under the
    ``docs_url`` template, default the repository's rule page); ``None`` if unknown."""
    from pt2lint.diagnostics import rule_url
    from pt2lint.specs import load_specs

    specs = load_specs()
    spec = specs.get(code.upper()) or next((s for s in specs.values() if s.name == code.lower()), None)
    if spec is None:
        return None
    lines = [
        f"**{spec.code}** `{spec.name}` ({spec.severity}, {spec.category})",
        "",
        " ".join(spec.summary.split()),
        "",
        f"Use instead: {' '.join(spec.fix.split())}",
        "",
        f"[Documentation]({rule_url(spec.code, docs_url, spec.name)})",
    ]
    return "\n".join(lines)


def code_at(source: str, line0: int, char_index: int) -> Optional[Tuple[str, int, int]]:
    """The rule code or name under 0-based ``(line0, char_index)`` inside a suppression comment.

    Returns ``(code, start, end)`` with 0-based character offsets on the line, or ``None``.
    """
    from pt2lint.suppression import parse_suppressions

    lines = SourceLines(source)
    if not 0 <= line0 < len(lines):
        return None
    text = lines.text(line0 + 1)
    for sup in parse_suppressions(source):
        if sup.line != line0 + 1 or not sup.codes:
            continue
        start, end = sup.column - 1, sup.end_column - 1
        if not start <= char_index <= end:
            continue
        for m in _CODE.finditer(text, start, end):
            if m.start() <= char_index <= m.end() and m.group(0).lower() not in ("noqa", "pt2lint", "ignore"):
                return m.group(0), m.start(), m.end()
    return None


# --------------------------------------------------------------------------- lint workers


class LintInterrupt(BaseException):
    """Raised inside a running lint to stop it (a ``BaseException``: the analysis's ``except Exception`` must not swallow it)."""


class LintCancelled(LintInterrupt):
    """A newer version of the document, or its closing, made the running lint useless."""


class LintTimedOut(LintInterrupt):
    """The lint ran past the time bound (``lintTimeout``)."""


_ASYNC_EXC: Dict[str, Any] = {}


def _raise_in_thread(ident: int, exc_type: Optional[type]) -> bool:
    """Make ``exc_type`` raise in the thread ``ident`` at its next bytecode; ``None`` withdraws a
    pending one.  Returns whether the interpreter found the thread.

    This is CPython's ``PyThreadState_SetAsyncExc``: it touches the one thread only.  A lint
    inside a long native call (LibCST's parser) stops when that call returns.
    """
    try:
        import ctypes
    except ImportError:  # pragma: no cover - an interpreter without ctypes: late results are only dropped
        return False
    if not _ASYNC_EXC:
        api = ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
        _ASYNC_EXC["set"] = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(api)
        _ASYNC_EXC["clear"] = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(api)
    if exc_type is None:
        return _ASYNC_EXC["clear"](ident, None) >= 0
    return _ASYNC_EXC["set"](ident, exc_type) == 1


@dataclass(eq=False)
class LintJob:
    """One call on a :class:`LintWorkers` thread; ``future`` (of the event loop) gets its result or exception."""

    fn: Any
    args: Tuple[Any, ...]
    loop: asyncio.AbstractEventLoop
    future: "asyncio.Future[Any]"
    started: "asyncio.Future[None]"  # done when a thread takes the job (its time bound counts from then)
    state: str = "queued"  # queued -> running -> done, or queued -> dropped
    thread: Optional[int] = None
    interrupted: Optional[type] = None  # the LintInterrupt sent, once


class LintWorkers:
    """A fixed set of long-lived lint threads fed from one queue.

    Args:
        count: threads.  With several, a slow document holds only one of them: two slow
            ones leave the others to lint a small document at once (the GIL shares the
            processor between them).
        big_stacks: start them with :func:`pt2lint.nesting.start_big_stack_thread` (big
            stack, big recursion limit; only from the main thread, before serving), so
            deep code never changes a process-wide setting from a worker.

    A lint is stopped by :meth:`interrupt`: a :class:`LintInterrupt` raised inside it.
    """

    def __init__(self, count: int = 4, big_stacks: bool = True) -> None:
        import queue
        import threading

        self._queue: "queue.Queue[Optional[LintJob]]" = queue.Queue()
        self._lock = threading.Lock()
        self.threads = []
        for i in range(max(1, count)):
            name = f"pt2lint-lint-{i}"
            if big_stacks:
                from pt2lint.nesting import start_big_stack_thread

                self.threads.append(start_big_stack_thread(self._run, name))
            else:
                thread = threading.Thread(target=self._run, name=name, daemon=True)
                thread.start()
                self.threads.append(thread)

    def submit(self, fn: Any, *args: Any) -> LintJob:
        """Queue ``fn(*args)``; must be called on the running event loop, whose future the job carries."""
        loop = asyncio.get_running_loop()
        job = LintJob(fn, args, loop, loop.create_future(), loop.create_future())
        self._queue.put(job)
        return job

    def interrupt(self, job: LintJob, exc_type: type) -> None:
        """Stop ``job``: dropped if it has not started, else ``exc_type`` is raised inside it (once)."""
        with self._lock:
            if job.state == "queued":
                job.state = "dropped"
                job.loop.call_soon_threadsafe(_settle, job, None, exc_type())
            elif job.state == "running" and job.interrupted is None and job.thread is not None:
                job.interrupted = exc_type
                _raise_in_thread(job.thread, exc_type)

    def stop(self) -> None:
        """Let the threads end once the queued jobs are done (running lints are not waited for)."""
        for _ in self.threads:
            self._queue.put(None)

    def _run(self) -> None:
        import threading

        ident = threading.get_ident()
        while True:
            job = self._queue.get()
            if job is None:
                return
            result: Any = None
            error: Optional[BaseException] = None
            try:
                with self._lock:
                    if job.state != "queued":
                        continue
                    job.state, job.thread = "running", ident
                job.loop.call_soon_threadsafe(_mark_started, job)
                try:
                    result = job.fn(*job.args)
                except BaseException as exc:  # noqa: B036 - handed to the awaiting coroutine
                    error = exc
                with self._lock:
                    job.state = "done"
                    if job.interrupted is not None:
                        _raise_in_thread(ident, None)  # an interrupt that came too late to matter
            except LintInterrupt as exc:  # it arrived after the lint returned, before "done"
                error = error or exc
                with self._lock:
                    job.state = "done"
            job.loop.call_soon_threadsafe(_settle, job, result, error)


def _mark_started(job: LintJob) -> None:
    if not job.started.done():
        job.started.set_result(None)


def _settle(job: LintJob, result: Any, error: Optional[BaseException]) -> None:
    _mark_started(job)
    if job.future.done():
        return
    if error is not None:
        job.future.set_exception(error)
    else:
        job.future.set_result(result)


# --------------------------------------------------------------------------- transport

#: JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object) and the LSP's.
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
#: The largest message body read; a bigger one is answered with an error and skipped.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_MAX_HEADER_BYTES = 64 * 1024
_CONTENT_LENGTH = re.compile(rb"^content-length:[ \t]*(\S*)[ \t]*$", re.IGNORECASE)
_HEADER_START = re.compile(rb"content-length:", re.IGNORECASE)
#: A header line (``Name: value``, the name an RFC 9110 token); anything else is not a header.
_HEADER_LINE = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\r\n]*$")


def _error(msg_id: Any, code: int, message: str) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _valid_id(value: Any) -> bool:
    """LSP request ids are integers or strings (JSON-RPC 2.0 also allows null, which the LSP does not)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class MessageReader:
    """Base-protocol framing (``Content-Length`` headers, then a body) that survives a bad peer.

    A header block whose ``Content-Length`` is missing, not a number, above
    ``max_bytes``, or given twice with different values gets a parse-error answer and is
    skipped up to the next ``Content-Length`` header; bytes where a header should start
    (the rest of a body longer than its ``Content-Length``) are skipped up to the next
    ``Content-Length`` header even when it starts inside them; so a broken message
    costs that message only: the stream
    is never misread from there on, and no more than ``max_bytes`` (plus one read) is
    ever held in memory.

    Args:
        read: ``read(n) -> bytes``, at most ``n`` bytes, ``b""`` at the end of the stream
            (blocking: it is run on an executor thread).
        max_bytes: the largest body accepted.
    """

    def __init__(self, read: Any, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self._read = read
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._eof = False

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await asyncio.get_running_loop().run_in_executor(None, self._read, 65536)
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    async def _resync(self, start: int = 0) -> None:
        """Drop bytes up to the next ``Content-Length`` header at or after ``start`` (keeping a possible partial one)."""
        keep = len(b"content-length:") - 1
        while True:
            m = _HEADER_START.search(self._buf, start)
            if m is not None:
                del self._buf[: m.start()]
                return
            if len(self._buf) > keep:
                del self._buf[: len(self._buf) - keep]
            start = 0
            if not await self._fill():
                self._buf.clear()
                return

    async def next_body(self, on_bad_frame: Any) -> Optional[bytes]:
        """The next message body, or ``None`` at the end of the stream.

        ``on_bad_frame(text)`` is called for each skipped message with the reason.
        """
        while True:
            end = self._buf.find(b"\r\n\r\n")
            while end < 0:
                if len(self._buf) > _MAX_HEADER_BYTES:
                    on_bad_frame(f"no end of headers within {_MAX_HEADER_BYTES} bytes")
                    await self._resync(1)
                elif not await self._fill():
                    return None
                end = self._buf.find(b"\r\n\r\n")
            headers = bytes(self._buf[:end]).split(b"\r\n")
            first = next((h for h in headers if h.strip()), b"")
            if not _HEADER_LINE.match(first.strip()):
                # bytes that are no header: the rest of a body longer than its frame said, or
                # noise; they are skipped up to the next header, which may start inside them
                on_bad_frame(f"{len(first)} bytes that are not a message header")
                await self._resync(1)
                continue
            length: Optional[int] = None
            problem = "no Content-Length header"
            values = [m.group(1) for m in (_CONTENT_LENGTH.match(h.strip()) for h in headers) if m is not None]
            if len(set(values)) > 1:
                shown = " and ".join(v[:20].decode("ascii", "replace") for v in values[:2])
                problem = f"{len(values)} Content-Length headers that disagree ({shown})"
            elif values:
                value = values[0]
                if not value.isdigit():
                    problem = f"Content-Length {value[:40].decode('ascii', 'replace')!r} is not a number"
                elif int(value) > self.max_bytes:
                    problem = f"Content-Length {int(value)} is over the limit of {self.max_bytes} bytes"
                else:
                    length, problem = int(value), ""
            if length is None:
                on_bad_frame(problem)
                del self._buf[: end + 4]
                await self._resync()
                continue
            start = end + 4
            while len(self._buf) < start + length:
                if not await self._fill():
                    return None
            body = bytes(self._buf[start : start + length])
            del self._buf[: start + length]
            return body


# --------------------------------------------------------------------------- server


@dataclass
class _DocState:
    version: Optional[int] = None
    diagnostics: List[Dict[str, Any]] = field(default_factory=list)
    dependencies: Tuple[str, ...] = ()  # absolute paths the last analysis read
    handle: Optional[asyncio.TimerHandle] = None
    task: Optional["asyncio.Task[None]"] = None
    job: Optional[LintJob] = None  # the lint running or queued for this document
    job_version: Optional[int] = None


def _server_class():
    """pygls's ``LanguageServer`` with pt2lint's transport: every request is answered, errors per
    JSON-RPC 2.0 and LSP 3.17, and documents count lines as the LSP (and CPython) do."""
    import json
    import threading

    from pygls.io_ import StdoutWriter
    from pygls.lsp.server import LanguageServer
    from pygls.workspace.text_document import TextDocument
    from lsprotocol import types

    # the protocol's notifications (``$/cancelRequest``, ``initialized``, ``textDocument/didOpen``...)
    notifications = set(typing.get_args(types.NOTIFICATIONS))
    notification_methods = frozenset(m for m, entry in types.METHOD_TO_TYPES.items() if entry[0] in notifications)

    class Document(TextDocument):
        """A text document whose lines end at ``\\n``, ``\\r\\n`` and ``\\r`` only (LSP 3.17,
        "Text Documents"): pygls's own splits at U+2028 and form feeds too, so an edit
        after one would be applied to the wrong line."""

        @property
        def lines(self):  # type: ignore[override]
            return tuple(split_lines(self.source))

    class Server(LanguageServer):
        max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES
        exit_code = 1  # the LSP's, for an ``exit`` (or end of input) without ``shutdown`` first
        _initialized_once = False  # a second ``initialize`` would replace the workspace and its open documents

        def use_lsp_lines(self) -> None:
            """Make the workspace (created by ``initialize``) build :class:`Document` objects."""
            ws = self.workspace

            def create(doc_uri, source=None, version=None, language_id=None):
                return Document(
                    doc_uri, source=source, version=version, language_id=language_id,
                    sync_kind=ws._sync_kind, position_codec=ws._position_codec,
                )

            ws._create_text_document = create

        def start_io(self, stdin=None, stdout=None):
            """Serve the base protocol on ``stdin``/``stdout`` until ``exit`` or the end of input."""
            self._stop_event = threading.Event()
            self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
            stream = stdin or sys.stdin.buffer
            reader = MessageReader(getattr(stream, "read1", None) or stream.read, self.max_message_bytes)
            try:
                asyncio.run(self._serve(reader))
                self.exit_code = 0 if self.protocol._shutdown else 1
            except BrokenPipeError:
                logger.error("the client closed the connection")
            except KeyboardInterrupt:
                pass
            except SystemExit as exc:  # pygls's ``exit`` handler: 0 after ``shutdown``, else 1
                self.exit_code = exc.code if isinstance(exc.code, int) else 1
            finally:
                self.shutdown()

        async def _serve(self, reader: MessageReader) -> None:
            while not self._stop_event.is_set():
                body = await reader.next_body(self._bad_frame)
                if body is None:
                    return
                self._handle_body(body)

        def _send(self, data: Any) -> None:
            self.protocol._send_data(data)

        def _bad_frame(self, reason: str) -> None:
            logger.warning("message skipped: %s", reason)
            self._send(_error(None, PARSE_ERROR, f"message skipped: {reason}"))

        def _handle_body(self, body: bytes) -> None:
            try:
                data = json.loads(body)
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                self._send(_error(None, PARSE_ERROR, f"Parse error: {str(exc)[:200]}"))
                return
            if isinstance(data, list):  # JSON-RPC 2.0 batches: the LSP has none
                why = "batch messages are not supported by the Language Server Protocol"
                replies = [
                    _error(m.get("id") if isinstance(m, dict) and _valid_id(m.get("id")) else None, INVALID_REQUEST, why)
                    for m in data
                    if not (isinstance(m, dict) and "method" in m and "id" not in m)  # a notification gets no reply
                ]
                if replies or not data:
                    self._send(replies or _error(None, INVALID_REQUEST, why))
                return
            self._handle_object(data)

        def _handle_object(self, data: Any) -> None:
            if not isinstance(data, dict):
                self._send(_error(None, INVALID_REQUEST, "a message must be a JSON object"))
                return
            has_id, msg_id, method = "id" in data, data.get("id"), data.get("method")
            is_response = "method" not in data and ("result" in data or "error" in data)
            if has_id and not _valid_id(msg_id) and not (is_response and msg_id is None):
                self._send(_error(None, INVALID_REQUEST, f"id must be an integer or a string, not {json.dumps(msg_id)[:40]}"))
                return
            if "method" in data and not isinstance(method, str):
                self._send(_error(msg_id if has_id else None, INVALID_REQUEST, "method must be a string"))
                return
            if data.get("jsonrpc") != "2.0" or not (is_response or isinstance(method, str)):
                if not is_response:
                    self._send(_error(msg_id if has_id else None, INVALID_REQUEST, 'not a JSON-RPC 2.0 request ("jsonrpc": "2.0" and a method)'))
                return
            is_request = has_id and not is_response
            if "params" in data and data["params"] is not None and not isinstance(data["params"], (dict, list)):
                if is_request:
                    self._send(_error(msg_id, INVALID_REQUEST, "params must be an object or an array"))
                return
            if self.protocol._shutdown and method != "exit":
                if is_request:  # LSP 3.17, "Shutdown Request": later requests fail with InvalidRequest
                    self._send(_error(msg_id, INVALID_REQUEST, f"the server is shut down; {method!r} is refused (only 'exit' is accepted)"))
                return  # a notification after shutdown is dropped
            if is_request and method in notification_methods:
                # LSP 3.17 / JSON-RPC 2.0: a notification method has no request form; the
                # message is answered and not handled (no side effect as the notification)
                self._send(_error(msg_id, METHOD_NOT_FOUND, f"{method!r} is a notification: send it without an id"))
                return
            if method == "initialize" and is_request:
                if self._initialized_once:  # LSP 3.17, "Initialize Request": sent only once
                    self._send(_error(msg_id, INVALID_REQUEST, "the server is already initialized; a second 'initialize' is refused"))
                    return
            try:
                message = self.protocol.structure_message(data)
            except Exception as exc:  # params that do not match the method's type (a negative position, null)
                cause = exc.__cause__ or exc
                detail = " ".join(str(cause).split())[:200] or type(cause).__name__
                if is_request:
                    self._send(_error(msg_id, INVALID_PARAMS, f"invalid params for {method}: {detail}"))
                else:
                    logger.warning("notification %s ignored: invalid params: %s", method, detail)
                return
            if method == "initialize" and is_request:
                self._initialized_once = True
            try:
                self.protocol.handle_message(message)
            except Exception as exc:  # pygls answers its own handler errors; this is the rest
                logger.exception("handling %s failed", method)
                if is_request:
                    self._send(_error(msg_id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}"[:300]))

    return Server


def create_server(
    debounce: float = DEFAULT_DEBOUNCE_S,
    lint_timeout: float = DEFAULT_LINT_TIMEOUT_S,
    workers: Optional[LintWorkers] = None,
):
    """Build the pygls ``LanguageServer`` with pt2lint's features registered.

    Args:
        debounce: seconds to wait after the last change of a document before
            linting it (open and save lint at once).
        lint_timeout: seconds one lint may take; a longer one is stopped and the
            document gets one diagnostic saying so.  The client may set it with the
            ``lintTimeout`` initialization option (seconds).
        workers: the lint threads (see :class:`LintWorkers`); by default
            :data:`DEFAULT_LINT_WORKERS` ordinary threads, started on the first lint.
            :func:`serve` passes big-stack ones.

    Raises:
        LspUnavailable: pygls or lsprotocol is missing.
    """
    _require_lsp()
    from lsprotocol import types
    from lsprotocol.converters import get_converter

    converter = get_converter()
    server = _server_class()("pt2lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
    projects = ProjectCache()
    docs: Dict[str, _DocState] = {}
    limits = {"timeout": float(lint_timeout)}
    pool: List[LintWorkers] = [workers] if workers is not None else []

    def lint_workers() -> LintWorkers:
        if not pool:
            pool.append(LintWorkers(DEFAULT_LINT_WORKERS, big_stacks=False))
        return pool[0]

    def encoding() -> str:
        enc = server.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

    def root_dir() -> str:
        try:
            root = server.workspace.root_path
        except Exception:  # no workspace yet
            root = None
        return root or os.getcwd()

    def show_config_error(message: str) -> None:
        if message in projects.errors_shown:
            return
        projects.errors_shown.add(message)
        server.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"pt2lint: {message}"))

    def publish(uri: str, version: Optional[int], payload: List[Dict[str, Any]]) -> None:
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=[converter.structure(d, types.Diagnostic) for d in payload]
            )
        )

    def cancel_lint(uri: str) -> None:
        """Stop the lint queued or running for ``uri`` (its text is outdated, or the document closed)."""
        state = docs.get(uri)
        if state is not None and state.job is not None:
            lint_workers().interrupt(state.job, LintCancelled)
            state.job = None

    def document(uri: str) -> Optional[Any]:
        """The open document at ``uri``, or else the file on disk read as every pt2lint read is
        (:func:`pt2lint.reading.read_text`: bounded, a FIFO or device refused, never blocking).

        Returns ``None`` for a URI that is not a readable UTF-8 file (the request then has no
        result).  pygls' own fallback opens the path plainly, which waits forever on a FIFO.
        """
        managed = server.workspace.text_documents.get(unquote(uri))
        if managed is not None:
            return managed
        path = uri_to_path(uri)
        if path is None:
            return None
        try:
            text = read_text(path)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            logger.info("%s: not read: %s", uri, getattr(exc, "strerror", None) or exc)
            return None
        return server.workspace._create_text_document(uri, source=text)  # pt2lint's Document (use_lsp_lines)

    async def lint_now(uri: str) -> List[Dict[str, Any]]:
        """Lint the document's current text on a lint thread, within the time bound; publish unless
        the text changed meanwhile.  A lint of an older version of the document is stopped."""
        doc = document(uri)
        if doc is None:
            return []
        source, version = doc.source, doc.version
        path = uri_to_path(uri)
        project, error = projects.get(path, root_dir())
        if error:
            show_config_error(error)
        overlay = open_buffers(exclude=uri)
        deps: Tuple[str, ...] = ()
        state = docs.get(uri)
        if state is not None and state.job is not None and state.job_version != version:
            cancel_lint(uri)
        workers = lint_workers()
        # looked up now, not bound at import: a wrapped lint_document_result is used
        job = workers.submit(globals()["lint_document_result"], source, path, uri, project, overlay)
        job.future.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "exception never retrieved"
        if state is not None:
            state.job, state.job_version = job, version
        timeout = limits["timeout"]
        try:
            try:
                await job.started  # waiting for a free thread is bounded by the others' time bounds
                diags, deps = await asyncio.wait_for(asyncio.shield(job.future), timeout)
            except asyncio.TimeoutError:
                workers.interrupt(job, LintTimedOut)
                raise LintTimedOut() from None
        except LintCancelled:
            return []  # a newer text is being linted, or the document closed: nothing to publish
        except LintTimedOut:
            message = f"pt2lint: the lint was cut after {timeout:g} s (the lintTimeout setting); findings are not shown"
            logger.warning("%s: %s", uri, message)
            server.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=f"{message}: {uri}"))
            payload = [{
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                "severity": 2, "source": "pt2lint", "message": message,
                "data": {"name": "lint-timeout", "noqaLine": 0, "fix": None, "version": version},
            }]
            current = server.workspace.get_text_document(uri)
            if uri in docs and current.version == version:
                docs[uri].version, docs[uri].diagnostics = version, []
                if docs[uri].job is job:
                    docs[uri].job = None
                publish(uri, version, payload)
            return []
        except Exception as exc:  # an analysis bug must not take the server down
            logger.exception("linting %s failed", uri)
            server.window_log_message(
                types.LogMessageParams(type=types.MessageType.Error, message=f"pt2lint: internal error on {uri}: {type(exc).__name__}: {exc}")
            )
            diags = []
        current = server.workspace.get_text_document(uri)
        payload = to_lsp_diagnostics(diags, source, encoding(), getattr(project, "docs_url", None))
        for item in payload:  # code actions use a fix only on the text it was computed for
            item["data"]["version"] = version
        if uri in docs and current.version == version:
            state = docs[uri]
            state.version = version
            state.diagnostics = payload
            state.dependencies = deps
            if state.job is job:
                state.job = None
            publish(uri, version, payload)
        return payload

    def schedule(uri: str, delay: float) -> None:
        """(Re)start the per-document timer: the lint runs ``delay`` seconds after the last call."""
        state = docs.setdefault(uri, _DocState())
        if state.handle is not None:
            state.handle.cancel()
        loop = asyncio.get_running_loop()

        def fire() -> None:
            state.handle = None
            state.task = loop.create_task(lint_now(uri))

        state.handle = loop.call_later(max(delay, 0.0), fire)

    def open_buffers(exclude: Optional[str] = None) -> Dict[str, str]:
        """``abs path -> text`` of every open document but ``exclude``."""
        out: Dict[str, str] = {}
        for other in list(docs):
            if other == exclude:
                continue
            p = uri_to_path(other)
            if p is None:
                continue
            try:
                out[os.path.abspath(p)] = server.workspace.get_text_document(other).source
            except Exception:  # closed meanwhile
                continue
        return out

    def relint_dependents(uri: str, delay: float) -> None:
        """Re-lint the open documents whose last analysis read the file of ``uri`` (its text
        changed, was saved, or its buffer was dropped): a lint of theirs already under way read
        the old text, so it is stopped."""
        p = uri_to_path(uri)
        if p is None:
            return
        changed = os.path.abspath(p)
        for other, state in list(docs.items()):
            if other != uri and changed in state.dependencies:
                cancel_lint(other)
                schedule(other, delay)

    def relint_all() -> None:
        projects.clear()
        projects.errors_shown.clear()
        for uri in list(docs):
            schedule(uri, 0.0)

    @server.feature(types.INITIALIZED)
    async def initialized(ls, params: types.InitializedParams) -> None:
        """Ask the client to watch config files, when it can register watchers dynamically."""
        caps = server.client_capabilities
        watch = getattr(getattr(caps, "workspace", None), "did_change_watched_files", None)
        if watch is None or not getattr(watch, "dynamic_registration", False):
            return
        watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILE_NAMES]
        try:
            await server.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="pt2lint-config-watch",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
                        )
                    ]
                )
            )
        except Exception:  # the client refused; the mtime check still catches config edits
            logger.info("client did not accept the config file watchers")

    @server.feature(types.INITIALIZE)
    def initialize(ls, params: types.InitializeParams) -> None:
        """Count document lines as the LSP does; take the ``lintTimeout`` option (seconds)."""
        server.use_lsp_lines()
        options = params.initialization_options
        value = options.get("lintTimeout") if isinstance(options, dict) else None
        if value is not None:
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 3600:
                limits["timeout"] = float(value)
            else:
                server.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"pt2lint: lintTimeout must be a number of seconds above 0 and at most 3600, not {value!r}; using {limits['timeout']:g}",
                ))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        schedule(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        cancel_lint(params.text_document.uri)  # its text is outdated now
        schedule(params.text_document.uri, debounce)
        relint_dependents(params.text_document.uri, debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        schedule(params.text_document.uri, 0.0)
        relint_dependents(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        """Forget the document; the open documents that read it are linted again, now reading
        its file on disk (an unsaved edit of the closed buffer is discarded)."""
        uri = params.text_document.uri
        cancel_lint(uri)
        state = docs.pop(uri, None)
        if state is not None and state.handle is not None:
            state.handle.cancel()
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        relint_dependents(uri, 0.0)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls, params: types.DidChangeWatchedFilesParams) -> None:
        if any(os.path.basename(uri_to_path(c.uri) or c.uri) in CONFIG_FILE_NAMES for c in params.changes):
            relint_all()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False),
    )
    async def code_action(ls, params: types.CodeActionParams) -> List[types.CodeAction]:
        """Quick fixes from ``Diagnostic.data``, suppressions, and ``source.fixAll.pt2lint``."""
        uri = params.text_document.uri
        only = [str(getattr(k, "value", k)) for k in (params.context.only or [])]

        def wanted(kind: str) -> bool:
            return not only or any(kind == o or kind.startswith(o + ".") for o in only)

        actions: List[types.CodeAction] = []
        doc = document(uri)
        if doc is None:
            return actions
        enc = encoding()

        def workspace_edit(edits: List[Dict[str, Any]]) -> types.WorkspaceEdit:
            text_edits = [converter.structure(e, types.TextEdit) for e in edits]
            caps = server.client_capabilities
            ws_edit = getattr(getattr(caps, "workspace", None), "workspace_edit", None)
            if getattr(ws_edit, "document_changes", False):  # the client then rejects an edit of a newer text
                ident = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version)
                return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=ident, edits=text_edits)])
            return types.WorkspaceEdit(changes={uri: text_edits})

        if wanted(types.CodeActionKind.QuickFix.value):
            seen_noqa = set()
            for diag in params.context.diagnostics:
                if diag.source != "pt2lint" or diag.code is None:  # a "lint was cut" notice has no code
                    continue
                data = diag.data if isinstance(diag.data, dict) else {}
                code = str(diag.code)
                fix = data.get("fix")
                fresh = data.get("version") in (None, doc.version)
                if fresh and fix and fix.get("applicability") in ("safe", "unsafe") and fix.get("edits"):
                    unsafe = fix["applicability"] == "unsafe"
                    title = fix_title(code, fix)
                    actions.append(
                        types.CodeAction(
                            title=title,
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diag],
                            edit=workspace_edit(fix["edits"]),
                            is_preferred=not unsafe,
                        )
                    )
                line0 = int(data.get("noqaLine", diag.range.start.line))
                lines0 = data.get("statementLines")
                statement0 = (int(lines0[0]), int(lines0[1])) if isinstance(lines0, (list, tuple)) and len(lines0) == 2 else None
                if fresh and code not in NOQA_SKIP_CODES and (code, line0) not in seen_noqa:
                    seen_noqa.add((code, line0))
                    edit = noqa_text_edit(doc.source, line0, code, enc, statement0)
                    if edit is not None:
                        actions.append(
                            types.CodeAction(
                                title=f"Suppress {code} on this line",
                                kind=types.CodeActionKind.QuickFix,
                                diagnostics=[diag],
                                edit=workspace_edit([edit]),
                            )
                        )
        if only and wanted(FIX_ALL_KIND):
            state = docs.get(uri)
            payload = state.diagnostics if state is not None and state.version == doc.version else await lint_now(uri)
            edits = safe_fix_edits(payload)
            if edits:
                actions.append(
                    types.CodeAction(
                        title="pt2lint: apply all safe fixes",
                        kind=FIX_ALL_KIND,
                        edit=workspace_edit(edits),
                    )
                )
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls, params: types.HoverParams) -> Optional[types.Hover]:
        """The rule summary for a code under the cursor inside a suppression comment."""
        from pt2lint.reporters.lsp import lsp_position_to_char_column

        doc = document(params.text_document.uri)
        if doc is None:
            return None
        lines = SourceLines(doc.source).texts()
        line0 = params.position.line
        if not 0 <= line0 < len(lines):
            return None
        enc = encoding()
        char_index = lsp_position_to_char_column(lines[line0], params.position.character, enc)
        hit = code_at(doc.source, line0, char_index)
        if hit is None:
            return None
        code, start, end = hit
        text = hover_markdown(code, getattr(projects.get(uri_to_path(params.text_document.uri), root_dir())[0], "docs_url", None))
        if text is None:
            return None
        line = lines[line0]
        rng = types.Range(
            start=types.Position(line=line0, character=_units(line[:start], enc)),
            end=types.Position(line=line0, character=_units(line[:end], enc)),
        )
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=rng)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls, params: Any) -> None:
        for uri in list(docs):
            cancel_lint(uri)
        if pool:
            pool[0].stop()

    return server


def _env_seconds(name: str, scale: float, default: float) -> float:
    """A positive number of seconds from ``$name`` (in units of ``scale`` seconds), else ``default``."""
    try:
        value = float(os.environ.get(name, "")) * scale
    except ValueError:
        return default
    return value if value >= 0 else default


def serve(debounce: Optional[float] = None, lint_timeout: Optional[float] = None) -> int:
    """Run the language server on stdin/stdout until the client says ``exit``.

    The event loop and the lint threads run on big-stack threads started here, on the
    main thread, before anything else (see :func:`pt2lint.nesting.start_big_stack_thread`):
    deep code is linted there without any thread changing the process's recursion limit
    or stack size, so two deep documents linted at once cannot overflow a stack.

    Args:
        debounce: seconds between the last change and the lint; default from
            ``$PT2LINT_LSP_DEBOUNCE_MS``, else 0.3 s.
        lint_timeout: seconds one lint may take; default from
            ``$PT2LINT_LSP_LINT_TIMEOUT_S``, else 10 s (the client's ``lintTimeout``
            initialization option overrides both).

    Returns:
        The exit code the LSP asks for: 0 after ``shutdown`` then ``exit``, else 1.

    Raises:
        LspUnavailable: the ``lsp`` extra is not installed.
    """
    if debounce is None:
        debounce = _env_seconds("PT2LINT_LSP_DEBOUNCE_MS", 0.001, DEFAULT_DEBOUNCE_S)
    if lint_timeout is None:
        lint_timeout = _env_seconds("PT2LINT_LSP_LINT_TIMEOUT_S", 1.0, DEFAULT_LINT_TIMEOUT_S) or DEFAULT_LINT_TIMEOUT_S
    _require_lsp()
    from pt2lint.nesting import start_big_stack_thread

    workers = LintWorkers(DEFAULT_LINT_WORKERS, big_stacks=True)
    server = create_server(debounce, lint_timeout=lint_timeout, workers=workers)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="pt2lint-lsp: %(levelname)s: %(message)s")
    start_big_stack_thread(server.start_io, "pt2lint-lsp").join()
    return int(server.exit_code)


__all__ = [
    "DEFAULT_LINT_TIMEOUT_S",
    "LintCancelled",
    "LintInterrupt",
    "LintTimedOut",
    "LintWorkers",
    "MessageReader",
    "FIX_ALL_KIND",
    "LspUnavailable",
    "ProjectCache",
    "code_at",
    "fix_title",
    "create_server",
    "hover_markdown",
    "lint_document",
    "noqa_text_edit",
    "safe_fix_edits",
    "serve",
    "to_lsp_diagnostics",
    "uri_to_path",
]
