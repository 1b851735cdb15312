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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from pt2lint import __version__
from pt2lint.baseline import NOQA_SKIP_CODES
from pt2lint.diagnostics import Diagnostic, Position
from pt2lint.lines import SourceLines, split_lines

logger = logging.getLogger("pt2lint.lsp")

FIX_ALL_KIND = "source.fixAll.pt2lint"
CONFIG_FILE_NAMES = (".pt2lint.toml", "pt2lint.toml", "pyproject.toml")
DEFAULT_DEBOUNCE_S = 0.3
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
    """
    from pt2lint.discovery import is_excluded, project_relpath
    from pt2lint.engine import lint_source

    filename = path or uri
    relpath = None
    if path is not None:
        if is_excluded(path, project.discovery):
            return [], ()
        relpath = project_relpath(path, project.root)
    others = {k: v for k, v in (overlay or {}).items() if k != (os.path.abspath(path) if path else None)}
    result = lint_source(source, filename, project.settings, relpath=relpath, overlay=others)
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
    return shown, tuple(p for p, _ in result.dependencies)


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


def noqa_text_edit(source: str, line0: int, code: str, encoding: str) -> Optional[Dict[str, Any]]:
    """The LSP ``TextEdit`` that suppresses ``code`` for a finding on 0-based line ``line0``.

    The comment goes where :func:`pt2lint.baseline.insert_noqa` puts it (the end
    of a multi-line string or continuation), merged into an existing ``# noqa``
    or ``# pt2lint: ignore[...]``; ``None`` when the line is already suppressed.
    """
    from pt2lint.baseline import insert_noqa

    new_source, added = insert_noqa(source, {line0 + 1: [code]})
    if not added:
        return None
    old_lines = SourceLines(source).texts()  # the LSP's lines are CPython's, not str.splitlines'
    new_lines = SourceLines(new_source).texts()
    for n, (a, b) in enumerate(zip(old_lines, new_lines)):
        if a != b:
            return {
                "range": {"start": {"line": n, "character": 0}, "end": {"line": n, "character": _units(a, encoding)}},
                "newText": b,
            }
    return None


def _overlap(a: Tuple[Tuple[int, int], Tuple[int, int]], b: Tuple[Tuple[int, int], Tuple[int, int]]) -> bool:
    """Whether two ranges (start, end) overlap; two insertions at the same point count as overlapping."""
    if a[0] == a[1] == b[0] == b[1]:
        return True
    return a[0] < b[1] and b[0] < a[1]


def safe_fix_edits(diagnostics: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The edits of every safe fix among LSP diagnostic dicts, skipping fixes that overlap an earlier one."""
    chosen: List[Dict[str, Any]] = []
    taken: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
    for d in diagnostics:
        fix = (d.get("data") or {}).get("fix")
        if not fix or fix.get("applicability") != "safe" or not fix.get("edits"):
            continue
        spans = [
            ((e["range"]["start"]["line"], e["range"]["start"]["character"]), (e["range"]["end"]["line"], e["range"]["end"]["character"]))
            for e in fix["edits"]
        ]
        if any(_overlap(a, b) for a in spans for b in taken):
            continue
        taken.extend(spans)
        chosen.extend(fix["edits"])
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


# --------------------------------------------------------------------------- server


@dataclass
class _DocState:
    version: Optional[int] = None
    diagnostics: List[Dict[str, Any]] = field(default_factory=list)
    dependencies: Tuple[str, ...] = ()  # absolute paths the last analysis read
    handle: Optional[asyncio.TimerHandle] = None
    task: Optional["asyncio.Task[None]"] = None


def create_server(debounce: float = DEFAULT_DEBOUNCE_S):
    """Build the pygls ``LanguageServer`` with pt2lint's features registered.

    Args:
        debounce: seconds to wait after the last change of a document before
            linting it (open and save lint at once).

    Raises:
        LspUnavailable: pygls or lsprotocol is missing.
    """
    _require_lsp()
    from lsprotocol import types
    from lsprotocol.converters import get_converter
    from pygls.lsp.server import LanguageServer

    converter = get_converter()
    server = LanguageServer("pt2lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
    projects = ProjectCache()
    docs: Dict[str, _DocState] = {}
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pt2lint-lint")

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

    async def lint_now(uri: str) -> List[Dict[str, Any]]:
        """Lint the document's current text off the event loop; publish unless the text changed meanwhile."""
        doc = server.workspace.get_text_document(uri)
        source, version = doc.source, doc.version
        path = uri_to_path(uri)
        project, error = projects.get(path, root_dir())
        if error:
            show_config_error(error)
        loop = asyncio.get_running_loop()
        overlay = open_buffers(exclude=uri)
        deps: Tuple[str, ...] = ()
        try:
            diags, deps = await loop.run_in_executor(pool, lint_document_result, source, path, uri, project, overlay)
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
            server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uri, version=version, diagnostics=[converter.structure(d, types.Diagnostic) for d in payload]
                )
            )
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
        """Re-lint the open documents whose last analysis read the file of ``uri``."""
        p = uri_to_path(uri)
        if p is None:
            return
        changed = os.path.abspath(p)
        for other, state in list(docs.items()):
            if other != uri and changed in state.dependencies:
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

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        schedule(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        schedule(params.text_document.uri, debounce)
        relint_dependents(params.text_document.uri, debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        schedule(params.text_document.uri, 0.0)
        relint_dependents(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        state = docs.pop(params.text_document.uri, None)
        if state is not None and state.handle is not None:
            state.handle.cancel()
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

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
        doc = server.workspace.get_text_document(uri)
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
                if diag.source != "pt2lint":
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
                if fresh and code not in NOQA_SKIP_CODES and (code, line0) not in seen_noqa:
                    seen_noqa.add((code, line0))
                    edit = noqa_text_edit(doc.source, line0, code, enc)
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

        doc = server.workspace.get_text_document(params.text_document.uri)
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
        pool.shutdown(wait=False, cancel_futures=True)

    return server


def serve(debounce: Optional[float] = None) -> None:
    """Run the language server on stdin/stdout until the client says ``exit``.

    Args:
        debounce: seconds between the last change and the lint; default from
            ``$PT2LINT_LSP_DEBOUNCE_MS``, else 0.3 s.

    Raises:
        LspUnavailable: the ``lsp`` extra is not installed.
    """
    if debounce is None:
        try:
            debounce = float(os.environ.get("PT2LINT_LSP_DEBOUNCE_MS", "")) / 1000.0
        except ValueError:
            debounce = DEFAULT_DEBOUNCE_S
    server = create_server(debounce)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="pt2lint-lsp: %(levelname)s: %(message)s")
    server.start_io()


__all__ = [
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
