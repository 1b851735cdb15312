"""Persistent result cache: ``lint_path`` results keyed by file content, pt2lint version and effective config.

Layout (like ruff's ``.ruff_cache``): ``<dir>/<version>/<key[:2]>/<key>.json``, with a
``CACHEDIR.TAG`` and a ``.gitignore`` so backup tools and git skip it.  Entries are
written to a temporary file and renamed into place, so concurrent runs never see a
half-written entry; an unreadable or corrupt entry is treated as a miss and rewritten.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from typing import Any, Dict, FrozenSet, Optional

from pt2lint import __version__
from pt2lint.atomic import atomic_write
from pt2lint.diagnostics import Applicability, Diagnostic, Edit, FileResult, Fix, Position

CACHE_DIR_NAME = ".pt2lint_cache"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by pt2lint.\n"


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """Size and mtime of every module and spec of this pt2lint, so a changed install never reads stale entries."""
    from pt2lint.specs import specs_dir

    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for folder in (here, str(specs_dir())):
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".py", ".toml")):
                    try:
                        st = os.stat(os.path.join(dirpath, name))
                    except OSError:
                        continue
                    h.update(f"{name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


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
    """sha256 of files' current bytes, each read at most once per run (``None``: absent or unreadable)."""

    def __init__(self) -> None:
        self._memo: Dict[str, Optional[str]] = {}

    def get(self, path: str) -> Optional[str]:
        if path not in self._memo:
            try:
                with open(path, "rb") as fh:
                    self._memo[path] = hashlib.sha256(fh.read()).hexdigest()
            except OSError:
                self._memo[path] = None
        return self._memo[path]

    def unchanged(self, dependencies) -> bool:
        """True when every ``(path, sha256 or None)`` still holds."""
        return all(self.get(p) == h for p, h in dependencies)


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
        self._base = (
            f"{__version__}|{_code_fingerprint()}|{settings.capture_scalar_outputs}|"
            f"{settings.capture_dynamic_output_shape_ops}|{settings.target}|{getattr(settings, 'compute_dtype', 'float32')}|"
            f"{','.join(getattr(settings, 'src', ()))}|{','.join(getattr(settings, 'follow_imports', ()))}"
        )
        self._prepared = False

    def key(self, data: bytes, enabled: FrozenSet[str]) -> str:
        """Content key: sha256 of the bytes, the version, the knobs and the codes enabled for the file."""
        h = hashlib.sha256()
        h.update(self._base.encode())
        h.update(",".join(sorted(enabled)).encode())
        h.update(b"\0")
        h.update(data)
        return h.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key + ".json")

    def get(self, key: str, filename: str) -> Optional[FileResult]:
        """The cached result for ``key`` with ``filename`` re-attached, or ``None`` (miss or corrupt entry)."""
        try:
            with open(self._path(key), "r", encoding="utf-8") as fh:
                data = json.load(fh)
            diags = tuple(diagnostic_from_dict(d, filename) for d in data["diagnostics"])
            deps = tuple((str(p), None if h is None else str(h)) for p, h in data.get("dependencies", ()))
            has_regions = bool(data.get("has_regions", False))
            submodules = tuple((str(p), str(c)) for p, c in data.get("submodules", ()))
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None
        return FileResult(filename, diags, dependencies=deps, has_regions=has_regions, submodules=submodules)

    def put(self, key: str, result: FileResult) -> None:
        """Store a result (errors are never cached); failures to write are ignored."""
        if result.error is not None:
            return
        try:
            self._prepare()
            path = self._path(key)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            payload = json.dumps({
                "diagnostics": [diagnostic_to_dict(d, result.filename) for d in result.diagnostics],
                "dependencies": [list(dep) for dep in result.dependencies],
                "has_regions": result.has_regions,
                "submodules": [list(s) for s in result.submodules],
            })
            atomic_write(path, payload.encode("utf-8"), mode=0o644, durable=False, prefix=".tmp-")
        except OSError:
            pass

    def _prepare(self) -> None:
        if self._prepared:
            return
        os.makedirs(self.root, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "# Automatically created by pt2lint.\n*\n")):
            path = os.path.join(self.directory, name)
            if not os.path.exists(path):
                try:
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write(text)
                except OSError:
                    pass
        self._prepared = True
