"""Persistent result cache: ``lint_path`` results keyed by file content and place, pt2lint version and effective config.

Layout (like ruff's ``.ruff_cache``): ``<dir>/<version>/<key[:2]>/<key>.json``, with a
``CACHEDIR.TAG`` and a ``.gitignore`` so backup tools and git skip it.  Entries are
written to a temporary file and renamed into place, so concurrent runs never see a
half-written entry.

Nothing read from the cache is trusted: an entry is used only when it has exactly the
shape :func:`valid_entry` checks (known rule codes, positions of at least 1, no control
characters in text meant for a terminal) and names only files and positions that exist
in the sources it was computed from (:func:`positions_hold`); anything else --
unreadable, not JSON, the wrong shape, larger than :data:`MAX_ENTRY_BYTES`, a FIFO or a
link -- is a miss and is rewritten.  Every entry is signed (HMAC-SHA256 over its key and
content) with a secret that lives outside every project, in the user's own cache folder
(:func:`cache_secret`): an entry committed to a repository, copied from another machine or
moved to another key's file does not carry a valid signature and is a miss, so no one
but the user can make ``check`` report a file clean.  Entries are keyed by the exact bytes that were
analysed (the worker that linted a file stores its result under the key of the bytes it
read) and by what else the result depends on: the file's absolute path and import roots,
and every setting (:meth:`ResultCache.key`).  The files and directories its analysis
read or looked for are recorded in the entry and must be unchanged for it to be used.  The cache
directory is only written when it is a real directory (no symbolic link) that pt2lint
created (it holds our ``CACHEDIR.TAG``) or an empty one; see :func:`cache_dir_problem`.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import stat
import sys
from typing import Any, Dict, FrozenSet, Optional

from pt2lint import __version__
from pt2lint.atomic import atomic_write
from pt2lint.diagnostics import Applicability, Diagnostic, Edit, FileResult, Fix, Position

CACHE_DIR_NAME = ".pt2lint_cache"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by pt2lint.\n"
_TAG_NAME = "CACHEDIR.TAG"

#: Largest cache entry read, in bytes; a larger one is a miss.
MAX_ENTRY_BYTES = 64 * 1024 * 1024

#: The analysis' limit on a followed module (``pt2lint.analysis.project.MAX_MODULE_BYTES``),
#: repeated so that a cache hit needs no import of the analysis; a test keeps them equal.
DEPENDENCY_MAX_BYTES = 4 * 1024 * 1024


#: Files whose change makes every entry stale: the code, the rule specs and the data tables
#: (the Dynamo facts of ``pt2lint/data``).
_FINGERPRINTED = (".py", ".toml", ".json")


#: Environment variable naming the folder of the signing secret (default: the user's cache folder).
SECRET_DIR_ENV = "PT2LINT_SECRET_DIR"
_SECRET_NAME = "cache-key"
_SECRET_HEX = 64


def secret_path() -> Optional[str]:
    """Where the cache's signing secret lives: ``$PT2LINT_SECRET_DIR/cache-key``, else
    ``$XDG_CACHE_HOME/pt2lint/cache-key``, else ``~/.cache/pt2lint/cache-key``; ``None``
    without a home folder.  Never inside a project (a repository cannot ship it)."""
    folder = os.environ.get(SECRET_DIR_ENV)
    if not folder:
        base = os.environ.get("XDG_CACHE_HOME")
        if not base:
            home = os.path.expanduser("~")
            if home == "~" or not os.path.isabs(home):
                return None
            base = os.path.join(home, ".cache")
        folder = os.path.join(base, "pt2lint")
    return os.path.join(folder, _SECRET_NAME)


def _read_secret(path: str) -> Optional[bytes]:
    """The secret in ``path`` when it is a regular file of this user that nobody else can write
    (no link followed, no FIFO waited on), holding 64 hex digits; else ``None``."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != _SECRET_HEX:
            return None
        if hasattr(os, "geteuid") and (st.st_uid != os.geteuid() or st.st_mode & 0o022):
            return None
        data = os.read(fd, _SECRET_HEX + 1)
    finally:
        os.close(fd)
    if len(data) != _SECRET_HEX or any(c not in b"0123456789abcdef" for c in data):
        return None
    return data


def _make_secret(path: str) -> None:
    """Create ``path`` with a fresh random secret, mode 0600; a secret already there wins (no overwrite)."""
    import secrets

    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = os.path.join(folder, f".{_SECRET_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, secrets.token_hex(_SECRET_HEX // 2).encode("ascii"))
        os.close(fd)
        try:
            os.link(tmp, path)  # atomic and never replaces: two first runs agree on one secret
        except FileExistsError:
            pass
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


_SECRET_CACHE: Dict[str, Optional[bytes]] = {}


def cache_secret() -> Optional[bytes]:
    """The user's secret that cache entries are signed with, created on first use; ``None`` when
    there is none to be had (no home folder, an unusable secret file), and then the cache is
    neither read nor written.  See :func:`secret_path` for where it lives."""
    path = secret_path()
    if path is None:
        return None
    if path in _SECRET_CACHE:
        return _SECRET_CACHE[path]
    secret: Optional[bytes] = None
    try:
        try:
            secret = _read_secret(path)
        except FileNotFoundError:
            _make_secret(path)
            secret = _read_secret(path)
    except OSError:
        secret = None
    _SECRET_CACHE[path] = secret
    return secret


def _signature(secret: bytes, key: str, content: Dict[str, Any]) -> str:
    """HMAC-SHA256 (hex) of an entry's ``key`` and its four fields, in a canonical JSON form."""
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    message = key.encode("ascii", "replace") + b"\0" + canonical.encode("ascii")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _fingerprinted_files(folders):
    """``(name, path)`` of every file under ``folders`` whose change makes entries stale, in a stable order."""
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(_FINGERPRINTED):
                    yield name, os.path.join(dirpath, name)


def _tree_fingerprint(folders) -> str:
    """Size and mtime of every file :func:`_fingerprinted_files` lists, hashed (16 hex digits)."""
    h = hashlib.sha256()
    for name, path in _fingerprinted_files(folders):
        try:
            st = os.stat(path)
        except OSError:
            continue
        h.update(f"{name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def _code_folders():
    from pt2lint.specs import specs_dir

    return (os.path.dirname(os.path.abspath(__file__)), str(specs_dir()))


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """The fingerprint of this pt2lint's modules, specs and data tables, so a changed install never reads stale entries."""
    return _tree_fingerprint(_code_folders())


def default_cache_dir(project_root: str) -> str:
    """``$PT2LINT_CACHE_DIR`` if set, else ``<project root>/.pt2lint_cache``."""
    env = os.environ.get("PT2LINT_CACHE_DIR")
    return env if env else os.path.join(project_root or ".", CACHE_DIR_NAME)


def _pos(p: Position) -> list:
    return [p.line, p.column]


def diagnostic_to_dict(d: Diagnostic, filename: Optional[str] = None) -> Dict[str, Any]:
    """A JSON-safe form of a diagnostic without its filename (re-attached on load).

    A finding in another file than ``filename`` (the cached file) keeps its file as an
    absolute path, as do call sites, so the entry reads right from any working directory.
    """
    out: Dict[str, Any] = {
        "code": d.code, "name": d.name, "message": d.message, "start": _pos(d.start), "end": _pos(d.end),
        "severity": d.severity, "category": d.category, "gb_types": list(d.gb_types), "symbol": d.symbol,
        "call_chain": list(d.call_chain), "statement_lines": list(d.statement_lines) if d.statement_lines else None,
    }
    if filename is not None and d.filename != filename:
        out["file"] = os.path.abspath(d.filename)
    if d.call_sites:
        out["call_sites"] = [[s[0], os.path.abspath(s[1]), s[2], s[3], s[4], s[5]] for s in d.call_sites]
    if d.fix is not None:
        out["fix"] = {
            "message": d.fix.message, "applicability": d.fix.applicability.value, "name": d.fix.name,
            "edits": [[_pos(e.start), _pos(e.end), e.content] for e in d.fix.edits],
        }
    return out


def diagnostic_from_dict(data: Dict[str, Any], filename: str) -> Diagnostic:
    """The diagnostic :func:`diagnostic_to_dict` stored, in the file ``filename`` unless it names another.

    Raises:
        KeyError, TypeError, ValueError: the entry does not have the stored shape.
    """
    from pt2lint.discovery import display_path

    fix = None
    if data.get("fix"):
        f = data["fix"]
        fix = Fix(
            message=f["message"], applicability=Applicability(f["applicability"]), name=f.get("name", ""),
            edits=tuple(Edit(Position(*s), Position(*e), c) for s, e, c in f["edits"]),
        )
    sites = tuple(
        (str(s[0]), display_path(str(s[1])), int(s[2]), int(s[3]), int(s[4]), int(s[5])) for s in data.get("call_sites") or ()
    )
    if sites and sites[0][1] == display_path(filename):
        sites = ((sites[0][0], filename) + sites[0][2:],) + sites[1:]
    return Diagnostic(
        code=data["code"], name=data["name"], message=data["message"],
        filename=display_path(str(data["file"])) if data.get("file") else filename,
        start=Position(*data["start"]), end=Position(*data["end"]), severity=data["severity"],
        category=data["category"], gb_types=tuple(data["gb_types"]), symbol=data["symbol"],
        call_chain=tuple(data["call_chain"]),
        statement_lines=tuple(data["statement_lines"]) if data.get("statement_lines") else None,
        fix=fix,
        call_sites=sites,
    )


class DependencyHashes:
    """sha256 of files' current bytes, each read at most once per run (``None``: absent, unreadable or refused).

    Files are read with :func:`pt2lint.reading.read_bytes` and the analysis' own size limit,
    so a dependency that the analysis could not read hashes to ``None`` here too.  A path
    ending in ``os.sep`` stands for a directory the analysis looked for: it "hashes" to
    :data:`pt2lint.analysis.project.DIRECTORY` while it is one, else ``None``.
    """

    def __init__(self) -> None:
        self._memo: Dict[str, Optional[str]] = {}
        self._lines: Dict[str, Any] = {}

    def get(self, path: str) -> Optional[str]:
        """The sha256 hex digest of ``path``'s bytes, or ``None``."""
        if path not in self._memo:
            if path.endswith(os.sep):
                from pt2lint.analysis.project import DIRECTORY

                self._memo[path] = DIRECTORY if os.path.isdir(path) else None
                return self._memo[path]
            from pt2lint.reading import read_bytes

            try:
                self._memo[path] = hashlib.sha256(read_bytes(path, max_bytes=DEPENDENCY_MAX_BYTES)).hexdigest()
            except OSError:
                self._memo[path] = None
        return self._memo[path]

    def unchanged(self, dependencies) -> bool:
        """True when every ``(path, sha256 or None)`` still holds."""
        return all(self.get(p) == h for p, h in dependencies)

    def lines(self, path: str, digest: str):
        """The :class:`~pt2lint.lines.SourceLines` of the file at ``path`` if its bytes still have sha256 ``digest``, else ``None``."""
        key = path + "\0" + digest
        if key not in self._lines:
            from pt2lint.reading import read_bytes

            try:
                data = read_bytes(path, max_bytes=DEPENDENCY_MAX_BYTES)
            except OSError:
                data = None
            self._lines[key] = _lines_of(data) if data is not None and hashlib.sha256(data).hexdigest() == digest else None
        return self._lines[key]


def _lines_of(data: bytes):
    """The :class:`~pt2lint.lines.SourceLines` of Python source bytes, or ``None`` when they do not decode."""
    from pt2lint.engine import DecodeError, decode_source
    from pt2lint.lines import SourceLines

    try:
        return SourceLines(decode_source(data))
    except DecodeError:
        return None


def _within(lines, position) -> bool:
    """Whether 1-based ``[line, column]`` lies in the text of ``lines`` (a :class:`~pt2lint.lines.SourceLines`).

    A position may point at a line's end, and an exclusive end one past it (a syntax error
    at the end of a line); the line after the last is the end of the file.
    """
    line, column = position
    if line > len(lines) + 1:
        return False
    return column <= len(lines.text(line)) + 2


def positions_hold(data: Dict[str, Any], path: str, own, dependency_lines) -> bool:
    """Whether every file and position an entry names exists in the sources it was computed from.

    Args:
        data: a decoded entry that passed :func:`valid_entry`.
        path: the cached file's absolute path.
        own: the :class:`~pt2lint.lines.SourceLines` of the cached file (``None``: undecodable).
        dependency_lines: ``dependency_lines(abs path)`` gives the lines of a file the entry
            lists as read (with a digest), or ``None`` for any other path.

    A finding in another file must lie in one of the entry's dependencies (as resolved for
    this file), each call site in this file or in one of them, and lines and columns must
    fall within those files' text (see :func:`_within`).
    """
    def lines_of(name: str):
        return own if name == path else dependency_lines(name)

    for d in data["diagnostics"]:
        points = [d["start"], d["end"]] + [[n, 1] for n in d["statement_lines"] or ()]
        if "fix" in d:
            points += [p for e in d["fix"]["edits"] for p in e[:2]]
        checks = [(lines_of(d["file"]) if "file" in d else own, points)]
        checks += [(lines_of(s[1]), [[s[2], s[3]], [s[4], 1], [s[5], 1]]) for s in d.get("call_sites", ())]
        for lines, where in checks:
            if lines is None or not all(_within(lines, p) for p in where):
                return False
    return True


_SEVERITIES = frozenset({"error", "warning", "info"})
_APPLICABILITIES = frozenset(a.value for a in Applicability)
#: Control characters allowed in code an edit inserts (source text may hold them).
_SOURCE_WHITESPACE = frozenset("\t\n\r\x0b\x0c")


def _plain(value: Any, allow: FrozenSet[str] = frozenset()) -> bool:
    """A string without control characters (C0, DEL, C1, lone surrogates) but those in ``allow``."""
    if not isinstance(value, str):
        return False
    if value.isprintable():
        return True
    for ch in value:
        o = ord(ch)
        if (o < 0x20 or 0x7F <= o < 0xA0 or 0xD800 <= o <= 0xDFFF) and ch not in allow:
            return False
    return True


def _path_text(value: Any) -> bool:
    """A stored path: any string without NUL (file names may hold other control characters)."""
    return isinstance(value, str) and bool(value) and "\0" not in value


def _int(value: Any, low: int = 1) -> bool:
    return type(value) is int and low <= value


def _position(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and _int(value[0]) and _int(value[1])


def _fix(value: Any) -> bool:
    if not isinstance(value, dict) or set(value) != {"message", "applicability", "name", "edits"}:
        return False
    if not (_plain(value["message"]) and _plain(value["name"]) and value["applicability"] in _APPLICABILITIES):
        return False
    edits = value["edits"]
    return isinstance(edits, list) and all(
        isinstance(e, list) and len(e) == 3 and _position(e[0]) and _position(e[1]) and e[0] <= e[1]
        and _plain(e[2], _SOURCE_WHITESPACE)
        for e in edits
    )


_DIAG_KEYS = frozenset({"code", "name", "message", "start", "end", "severity", "category", "gb_types", "symbol", "call_chain", "statement_lines"})
_DIAG_OPTIONAL = frozenset({"file", "call_sites", "fix"})


def _diagnostic(value: Any, codes: FrozenSet[str]) -> bool:
    if not isinstance(value, dict):
        return False
    keys = set(value)
    if not _DIAG_KEYS <= keys or keys - _DIAG_KEYS - _DIAG_OPTIONAL:
        return False
    if value["code"] not in codes or not all(_plain(value[k]) for k in ("name", "message", "category")):
        return False
    if value["severity"] not in _SEVERITIES or not (_position(value["start"]) and _position(value["end"])):
        return False
    if value["end"] < value["start"]:
        return False
    if not (isinstance(value["gb_types"], list) and all(_plain(g) for g in value["gb_types"])):
        return False
    if not (value["symbol"] is None or _plain(value["symbol"])):
        return False
    if not (isinstance(value["call_chain"], list) and all(_plain(c) for c in value["call_chain"])):
        return False
    lines = value["statement_lines"]
    if lines is not None and not (isinstance(lines, list) and len(lines) == 2 and _int(lines[0]) and _int(lines[1]) and lines[0] <= lines[1]):
        return False
    if "file" in value and not _path_text(value["file"]):
        return False
    sites = value.get("call_sites", [])
    if not isinstance(sites, list) or not all(
        isinstance(s, list) and len(s) == 6 and _plain(s[0]) and _path_text(s[1]) and all(_int(n) for n in s[2:]) for s in sites
    ):
        return False
    return "fix" not in value or _fix(value["fix"])


#: The top-level keys of a cache entry (besides its ``signature``).
_ENTRY_KEYS = frozenset({"diagnostics", "dependencies", "has_regions", "submodules", "used_suppressions", "reached"})


def valid_entry(data: Any, codes: Optional[FrozenSet[str]] = None) -> bool:
    """Whether ``data`` (a decoded cache entry) has exactly the shape :meth:`ResultCache.put` writes.

    Args:
        data: the decoded JSON.
        codes: the known rule codes (default: every code of :func:`pt2lint.specs.load_specs`).

    The check is strict: the five top-level keys and nothing else (besides the ``signature``
    :meth:`ResultCache.get` checks); each finding with a known
    code, a severity, 1-based positions with ``end`` not before ``start``, text fields without
    control characters (so a forged entry cannot put terminal escapes on the screen); each
    dependency a path with a sha256 hex digest or ``null``; each used suppression a path, a
    line and a code.
    """
    if codes is None:
        from pt2lint.specs import load_specs

        codes = frozenset(load_specs())
    if not isinstance(data, dict) or set(data) - {"signature"} != _ENTRY_KEYS:
        return False
    if "signature" in data and not (isinstance(data["signature"], str) and len(data["signature"]) == 64):
        return False
    if not isinstance(data["has_regions"], bool):
        return False
    diags, deps, subs = data["diagnostics"], data["dependencies"], data["submodules"]
    if not (isinstance(diags, list) and isinstance(deps, list) and isinstance(subs, list)):
        return False
    for dep in deps:
        if not (isinstance(dep, list) and len(dep) == 2 and _path_text(dep[0])):
            return False
        h = dep[1]
        if h is not None and not (isinstance(h, str) and len(h) == 64 and all(c in "0123456789abcdef" for c in h)):
            return False
    if not all(isinstance(x, list) and len(x) == 2 and _path_text(x[0]) and _plain(x[1]) for x in subs):
        return False
    reached = data["reached"]
    if not (isinstance(reached, list) and all(isinstance(x, list) and len(x) == 2 and _path_text(x[0]) and _plain(x[1]) for x in reached)):
        return False
    used = data["used_suppressions"]
    if not (isinstance(used, list) and all(
        isinstance(x, list) and len(x) == 3 and _path_text(x[0]) and _int(x[1]) and _plain(x[2]) and x[2] for x in used
    )):
        return False
    return all(_diagnostic(d, codes) for d in diags)


def _owned_dir(path: str) -> bool:
    """Whether ``path`` is a real directory (not a link) owned by this user."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    owner_ok = not hasattr(os, "geteuid") or st.st_uid == os.geteuid()
    return stat.S_ISDIR(st.st_mode) and owner_ok


def cache_dir_problem(directory: str) -> Optional[str]:
    """Why pt2lint must not read or write the cache at ``directory`` (``None``: it may).

    Allowed: a directory that does not exist yet (its parent is created as needed), or a
    real directory, owned by this user, that holds pt2lint's ``CACHEDIR.TAG`` or is empty.
    Refused: a symbolic link (a committed ``.pt2lint_cache`` link would make ``check``
    write into its target), something that is not a directory, a directory of another
    user, or a non-empty directory pt2lint did not create.
    """
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return (exc.strerror or type(exc).__name__).lower()
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link; not used"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory; not used"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return "belongs to another user; not used"
    tag = os.path.join(directory, _TAG_NAME)
    try:
        tag_st = os.lstat(tag)
    except FileNotFoundError:
        try:
            if os.listdir(directory):
                return f"is not a pt2lint cache (no {_TAG_NAME}); not used"
        except OSError as exc:
            return (exc.strerror or type(exc).__name__).lower()
        return None
    except OSError as exc:
        return (exc.strerror or type(exc).__name__).lower()
    if not stat.S_ISREG(tag_st.st_mode):
        return f"its {_TAG_NAME} is not a regular file; not used"
    return None


class ResultCache:
    """A directory of cached :class:`FileResult` entries.

    Args:
        directory: the cache root (created on first write).
        settings: the :class:`~pt2lint.settings.LintSettings` every key includes.
    """

    def __init__(self, directory: str, settings) -> None:
        self.root = os.path.join(directory, __version__)
        self.directory = directory
        self.settings = settings
        # Every setting (LintSettings.fingerprint covers each field), the version and the code,
        # and the interpreter: CPython's own compiler judges syntax (PTC001), and its grammar
        # changes between versions (a cache directory may be shared by two environments).
        fingerprint = settings.fingerprint() if hasattr(settings, "fingerprint") else repr(settings)
        interpreter = f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"
        self._base = f"{__version__}|{_code_fingerprint()}|{fingerprint}|{interpreter}"
        self._prepared: Optional[bool] = None
        self._known: Optional[FrozenSet[str]] = None
        self._dir_ok: Optional[bool] = None

    def key(self, data: bytes, enabled: FrozenSet[str], path: str) -> str:
        """The key of the result of linting ``data`` as the file at ``path``.

        Args:
            data: the exact bytes analysed.
            enabled: the codes enabled for the file.
            path: the file (made absolute).

        A result depends on more than the bytes: which files its imports resolve to depends
        on where the file is (its module name, the import roots of
        :func:`pt2lint.analysis.project.import_context`), so the key holds the absolute path
        and those roots too, besides every setting, the version and the code.  Two
        identical files in different packages (or a copied tree) never share an entry.
        """
        from pt2lint.analysis.project import import_context

        absolute = os.path.abspath(path)
        roots, library_roots = import_context(absolute, self.settings)
        h = hashlib.sha256()
        for part in (self._base, ",".join(sorted(enabled)), absolute, *roots, "|", *library_roots):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        h.update(data)
        return h.hexdigest()

    def key_for(self, data: bytes, path: str, relpath: str) -> str:
        """:meth:`key` of ``data`` read from ``path``, with the codes enabled for its project-relative ``relpath``.

        The one key every reader and writer of entries uses (``check``, ``--diff-base``, ``fix``).
        """
        return self.key(data, self.settings.enabled_for(relpath.replace(os.sep, "/")), path)

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key + ".json")

    def get(self, key: str, filename: str, data: bytes, current: Optional[DependencyHashes] = None) -> Optional[FileResult]:
        """The cached result for ``key`` with ``filename`` re-attached, or ``None``.

        Args:
            key: :meth:`key` of ``data`` as ``filename``.
            filename: the file, as the user named it.
            data: the bytes of it that were read (the key's).
            current: the run's :class:`DependencyHashes` (a fresh one when omitted).

        ``None`` for a miss and for every entry that is not exactly what :meth:`put`
        writes (see :func:`valid_entry`), whose dependencies changed, or that names a file
        or position the analysed sources do not have (:func:`positions_hold`): a bad entry
        is never an error and never trusted.
        """
        from pt2lint.reading import read_bytes

        path = self._path(key)
        if not self._safe_dirs(path):
            return None
        try:
            raw = read_bytes(path, max_bytes=MAX_ENTRY_BYTES)
            entry = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            return None
        if not valid_entry(entry, self._codes()):
            return None
        secret = cache_secret()
        signature = entry.pop("signature", None)
        if secret is None or not isinstance(signature, str):
            return None
        if not hmac.compare_digest(signature, _signature(secret, key, entry)):
            return None  # not written by this user for this key: forged, copied or moved
        current = current if current is not None else DependencyHashes()
        deps = tuple((p, h) for p, h in entry["dependencies"])
        if not current.unchanged(deps):
            return None
        if entry["diagnostics"]:
            read = {p: h for p, h in deps if h is not None and not p.endswith(os.sep)}

            def dependency_lines(name: str):
                return current.lines(name, read[name]) if name in read else None

            if not positions_hold(entry, os.path.abspath(filename), _lines_of(data), dependency_lines):
                return None
        if entry["submodules"]:
            known = {os.path.abspath(filename)} | {p for p, h in deps if h is not None}
            if any(p not in known for p, _ in entry["submodules"]):
                return None  # a class in a file this analysis never read
        try:
            diags = tuple(diagnostic_from_dict(d, filename) for d in entry["diagnostics"])
        except (KeyError, TypeError, ValueError, IndexError):
            return None
        submodules = tuple((p, c) for p, c in entry["submodules"])
        reached = tuple((p, c) for p, c in entry["reached"])
        if reached:
            known = {p for p, h in deps if h is not None}
            if any(p not in known for p, _ in reached):
                return None  # a class in a file this analysis never read
        used = tuple((p, n, c) for p, n, c in entry["used_suppressions"])
        if used:
            read_files = {p for p, h in deps if h is not None}
            if any(p not in read_files for p, _, _ in used):
                return None  # a comment in a file this analysis never read
        return FileResult(
            filename, diags, dependencies=deps, has_regions=entry["has_regions"], submodules=submodules, used_suppressions=used,
            reached=reached,
        )

    def _codes(self) -> FrozenSet[str]:
        if self._known is None:
            from pt2lint.specs import load_specs

            self._known = frozenset(load_specs())
        return self._known

    def _safe_dirs(self, entry: str) -> bool:
        """Every directory from the cache root down to ``entry``'s is a real directory of ours (or absent)."""
        probe = os.path.dirname(entry)
        while True:
            try:
                os.lstat(probe)
            except FileNotFoundError:
                pass
            except OSError:
                return False
            else:
                if not _owned_dir(probe):
                    return False
            if os.path.normpath(probe) == os.path.normpath(self.directory):
                if self._dir_ok is None:
                    self._dir_ok = cache_dir_problem(self.directory) is None
                return self._dir_ok
            parent = os.path.dirname(probe)
            if parent == probe:
                return False
            probe = parent

    def put(self, key: str, result: FileResult) -> None:
        """Store a result (errors are never cached); failures to write are ignored.

        Nothing is written unless the cache directory passes :func:`cache_dir_problem` and
        every directory on the way to the entry is a real directory of ours.
        """
        if result.error is not None:
            return
        try:
            if not self._prepare():
                return
            path = self._path(key)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not self._safe_dirs(path):
                return
            secret = cache_secret()
            if secret is None:
                return
            content = {
                "diagnostics": [diagnostic_to_dict(d, result.filename) for d in result.diagnostics],
                "dependencies": [list(dep) for dep in result.dependencies],
                "has_regions": result.has_regions,
                "submodules": [list(s) for s in result.submodules],
                "reached": [list(s) for s in result.reached],
                "used_suppressions": [list(u) for u in result.used_suppressions],
            }
            # the round trip makes the signed form the one get() rebuilds from the file
            content = json.loads(json.dumps(content))
            payload = json.dumps(dict(content, signature=_signature(secret, key, content)))
            atomic_write(path, payload.encode("utf-8"), mode=0o644, durable=False, prefix=".tmp-")
        except (OSError, ValueError):
            pass

    def _prepare(self) -> bool:
        if self._prepared is not None:
            return self._prepared
        self._prepared = False
        if cache_dir_problem(self.directory) is not None:
            return False
        os.makedirs(self.directory, exist_ok=True)
        if not _owned_dir(self.directory):
            return False
        for name, text in ((_TAG_NAME, _TAG), (".gitignore", "# Automatically created by pt2lint.\n*\n")):
            path = os.path.join(self.directory, name)
            if not os.path.lexists(path):
                try:
                    atomic_write(path, text.encode("utf-8"), mode=0o644, durable=False, prefix=".tmp-")
                except OSError:
                    pass
        os.makedirs(self.root, exist_ok=True)
        self._prepared = _owned_dir(self.root)
        return self._prepared
