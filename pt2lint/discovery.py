"""File discovery: turn the paths a user gives into the Python files to lint.

Directories are walked without following symbolic links (so a link loop cannot
make the walk endless, and a link cannot take the walk out of the tree: a file link
is followed only when its target lies in the project or the walked directory),
skipping what ``.gitignore`` files (nested ones too),
the default excludes and the ``exclude`` / ``extend-exclude`` settings name,
and installed code: every virtual environment (a directory holding
``pyvenv.cfg``, whatever its name) and every ``site-packages`` directory.
Patterns use gitignore syntax (pathspec's ``GitIgnoreSpec``, compiled by
:mod:`pt2lint.globs`), as ruff's do.
A file named explicitly is always linted, whatever its name, unless
``force_exclude`` is set (what pre-commit hooks want, since they pass every
changed file explicitly).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from pt2lint.globs import MAX_PATTERN_CHARS, Globs, compile_patterns
from pt2lint.reading import is_within

#: Directory and file names skipped while walking (ruff's defaults, plus our cache).
#: Virtual environments and ``site-packages`` are skipped whatever these are (see
#: :func:`is_installed_code_dir`); name one on the command line to lint an installed library.
DEFAULT_EXCLUDES: Tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".pt2lint_cache",
    "build",
    "dist",
    "node_modules",
)

#: File suffixes picked up while walking a directory.
PYTHON_SUFFIXES: Tuple[str, ...] = (".py", ".pyi")

GITIGNORE = ".gitignore"
#: The file that marks a virtual environment's root (PEP 405), whatever the directory is called.
VENV_MARKER = "pyvenv.cfg"
#: Directories holding installed distributions.
SITE_PACKAGES = ("site-packages", "dist-packages")


def is_installed_code_dir(path: str) -> bool:
    """Whether directory ``path`` holds installed code rather than the project's own:
    a virtual environment (it contains ``pyvenv.cfg``, PEP 405) or a ``site-packages``
    (or Debian's ``dist-packages``) directory.  Such directories are skipped while walking."""
    return os.path.basename(path) in SITE_PACKAGES or os.path.isfile(os.path.join(path, VENV_MARKER))


def _within_installed_code(path: str) -> bool:
    """Whether ``path`` is, or lies inside, a virtual environment or a ``site-packages`` directory."""
    probe = path
    while True:
        if is_installed_code_dir(probe):
            return True
        parent = os.path.dirname(probe)
        if parent == probe:
            return False
        probe = parent

#: Largest ``.gitignore`` read, in bytes; a larger one is ignored.
GITIGNORE_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class DiscoverySettings:
    """Which files a walk yields.

    Attributes:
        project_root: absolute directory that ``exclude`` patterns (and the
            project-relative paths handed to per-file ignores) are relative to.
        exclude: gitignore-style patterns; replaces :data:`DEFAULT_EXCLUDES`
            when set by the user (as ruff's ``exclude`` does).
        extend_exclude: patterns added to ``exclude``.
        respect_gitignore: honour ``.gitignore`` files.
        force_exclude: apply the excludes and ``.gitignore`` to explicitly
            named paths too.
    """

    project_root: str
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: Tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False


@dataclass(frozen=True, order=True)
class SourceFile:
    """One file to lint.

    Attributes:
        path: the path as reported and opened: relative to the working
            directory when the file lies under it, absolute otherwise.
        relpath: the path relative to the project root with ``/`` separators
            (absolute when the file lies outside the root); per-file ignores
            match against it.
    """

    path: str
    relpath: str


@dataclass
class Discovery:
    """The outcome of :func:`discover`.

    Attributes:
        files: files to lint, sorted by ``path``, without duplicates.
        errors: one-line messages (``"<path>: <reason>"``) for paths that do
            not exist, cannot be listed, or are symbolic-link loops.
        warnings: one-line messages for ``.gitignore`` files that exist but could not be used
            (not a regular file, too large, unreadable): their patterns were not applied.
    """

    files: List[SourceFile] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)


def os_error_reason(exc: OSError) -> str:
    """The OS's reason for ``exc``, lower-cased like the rest of our messages ("no such file or directory")."""
    reason = exc.strerror or type(exc).__name__
    return reason[0].lower() + reason[1:]


def display_path(path: str, cwd: Optional[str] = None) -> str:
    """``path`` relative to ``cwd`` (default: the working directory) when it lies below it, else absolute."""
    cwd = os.path.abspath(cwd or os.getcwd())
    absolute = os.path.abspath(os.path.join(cwd, path))
    try:
        rel = os.path.relpath(absolute, cwd)
    except ValueError:  # another drive on Windows
        return absolute
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return absolute
    return rel


def project_relpath(path: str, project_root: str) -> str:
    """``path`` relative to ``project_root`` with ``/`` separators, or absolute (with ``/``) when outside it."""
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, project_root)
    except ValueError:
        rel = os.pardir
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        rel = absolute
    return rel.replace(os.sep, "/")


def _read_gitignore(directory: str, problems: Optional[List[str]] = None) -> Optional[Globs]:
    """The ``.gitignore`` of ``directory`` (``None``: none, or not a readable regular file).

    Read with :func:`pt2lint.reading.read_bytes` (a FIFO or ``/dev/zero`` behind the name is
    refused, never read); bad patterns, and lines over :data:`pt2lint.globs.MAX_PATTERN_CHARS`
    characters, are ignored line by line, as git ignores bad patterns.  A ``.gitignore`` that
    exists but cannot be used adds ``"<path>: <reason>; its patterns are not applied"`` to
    ``problems``.
    """
    from pt2lint.reading import read_bytes

    path = os.path.join(directory, GITIGNORE)
    try:
        data = read_bytes(path, max_bytes=GITIGNORE_MAX_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if problems is not None and os.path.lexists(path):
            problems.append(f"{path}: {os_error_reason(exc)}; its patterns are not applied")
        return None
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if len(line) <= MAX_PATTERN_CHARS]
    try:
        return compile_patterns(lines)
    except Exception:  # pathspec raises various errors for a bad pattern: keep the good lines
        good = []
        for line in lines:
            try:
                compile_patterns([line])
            except Exception:
                continue
            good.append(line)
        return compile_patterns(good)


def _is_under(path: str, directory: str) -> bool:
    try:
        return os.path.commonpath([path, directory]) == directory
    except ValueError:
        return False


class _Matcher:
    """Decides whether an absolute path is excluded, caching ``.gitignore`` files per directory."""

    def __init__(self, settings: DiscoverySettings) -> None:
        self.settings = settings
        self.root = os.path.abspath(settings.project_root)
        self.exclude = compile_patterns(list(settings.exclude) + list(settings.extend_exclude))
        self._gitignores: Dict[str, Optional[Globs]] = {}
        self.problems: List[str] = []  # .gitignore files that could not be used
        self._chains: Dict[str, List[Tuple[str, Globs]]] = {}

    def gitignore(self, directory: str) -> Optional[Globs]:
        """The ``.gitignore`` of ``directory`` itself (``None``: none, unreadable, or gitignore not respected)."""
        if directory not in self._gitignores:
            self._gitignores[directory] = _read_gitignore(directory, self.problems) if self.settings.respect_gitignore else None
        return self._gitignores[directory]

    def ignore_scope(self, directory: str) -> str:
        """The highest directory whose ``.gitignore`` applies to ``directory``.

        That is the enclosing git work tree (the nearest ancestor holding ``.git``);
        outside a repository, the project root when ``directory`` lies under it.
        """
        probe = directory
        while True:
            if os.path.exists(os.path.join(probe, ".git")):
                return probe
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        return self.root if _is_under(directory, self.root) else directory

    def gitignore_chain(self, directory: str) -> List[Tuple[str, Globs]]:
        """``(base, spec)`` for every ``.gitignore`` from the scope down to ``directory``, shallowest first."""
        if not self.settings.respect_gitignore:
            return []
        if directory not in self._chains:
            self._chains[directory] = self._gitignore_chain(directory)
        return self._chains[directory]

    def _gitignore_chain(self, directory: str) -> List[Tuple[str, Globs]]:
        scope = self.ignore_scope(directory)
        dirs = []
        probe = directory
        while True:
            dirs.append(probe)
            if probe == scope:
                break
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        chain = []
        for d in reversed(dirs):
            spec = self.gitignore(d)
            if spec is not None:
                chain.append((d, spec))
        return chain

    def excluded(
        self,
        path: str,
        is_dir: bool,
        chain: Sequence[Tuple[str, Globs]],
        pattern_base: str,
    ) -> bool:
        """Whether ``path`` matches an exclude pattern or, deepest ``.gitignore`` deciding, is git-ignored.

        Args:
            path: absolute path.
            is_dir: match directory-only patterns (``build/``).
            chain: the ``.gitignore`` specs that apply, shallowest first.
            pattern_base: directory that exclude patterns are relative to
                (the project root, or the walk root for paths outside it).
        """
        suffix = "/" if is_dir else ""
        rel = os.path.relpath(path, pattern_base).replace(os.sep, "/")
        if self.exclude.match_file(rel + suffix):
            return True
        for base, spec in reversed(chain):
            result = spec.check_file(os.path.relpath(path, base).replace(os.sep, "/") + suffix)
            if result.include is not None:
                return bool(result.include)
        return False

    def pattern_base(self, path: str, fallback: str) -> str:
        """The directory exclude patterns are relative to for ``path``: the project root, or ``fallback`` outside it."""
        return self.root if _is_under(path, self.root) else fallback

    def excluded_explicit(self, path: str, is_dir: bool) -> bool:
        """For ``force_exclude``: is an explicitly named path, or a directory above it, excluded?

        Directories are checked up to the project root (or, for a path outside
        it, only the path itself, with patterns relative to its directory).
        """
        base = self.pattern_base(path, os.path.dirname(path))
        probe, probe_is_dir = path, is_dir
        while probe != base:
            parent = os.path.dirname(probe)
            if self.excluded(probe, probe_is_dir, self.gitignore_chain(parent), base):
                return True
            if probe_is_dir and is_installed_code_dir(probe):
                return True
            if parent == probe:
                break
            probe, probe_is_dir = parent, True
        return False


def is_excluded(path: str, settings: DiscoverySettings) -> bool:
    """Whether ``path`` (or a directory above it, up to the project root) is excluded or git-ignored.

    This is the test ``force_exclude`` applies to explicitly named paths and to
    ``--stdin-filename``.  ``path`` need not exist; it is taken as a file
    unless it is an existing directory.
    """
    absolute = os.path.abspath(path)
    return _Matcher(settings).excluded_explicit(absolute, os.path.isdir(absolute))


def discover(paths: Iterable[str], settings: DiscoverySettings, cwd: Optional[str] = None) -> Discovery:
    """Expand ``paths`` into the Python files to lint.

    Args:
        paths: files and directories as the user gave them (relative to ``cwd``).
        settings: excludes, ``.gitignore`` handling and the project root.
        cwd: the working directory paths are relative to and reported against
            (default: the process's).

    Returns:
        A :class:`Discovery`: sorted, de-duplicated files, plus one-line errors
        for paths that are missing, unlistable or symbolic-link loops.  Nothing
        is raised for a bad path; the other paths are still expanded.
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    matcher = _Matcher(settings)
    found: Dict[str, SourceFile] = {}
    errors: List[str] = []

    def add(absolute: str) -> None:
        absolute = os.path.normpath(absolute)
        if absolute not in found:
            found[absolute] = SourceFile(display_path(absolute, cwd), project_relpath(absolute, matcher.root))

    for given in paths:
        absolute = os.path.normpath(os.path.join(cwd, given))
        try:
            # the path as given: ``m.py/`` names a directory, which a regular file is not
            # (ENOTDIR, as ``open()`` says); normpath would drop the slash
            st = os.stat(os.path.join(cwd, given))
        except OSError as exc:
            errors.append(f"{given}: {os_error_reason(exc)}")
            continue
        is_dir = stat.S_ISDIR(st.st_mode)
        if settings.force_exclude and matcher.excluded_explicit(absolute, is_dir):
            continue
        if not is_dir:
            add(absolute)
            continue
        _walk(absolute, matcher, add, errors, cwd)

    files = sorted(found.values())
    warnings = [display_problem(m, cwd) for m in dict.fromkeys(matcher.problems)]
    return Discovery(files=files, errors=errors, warnings=warnings)


def display_problem(message: str, cwd: str) -> str:
    """``message`` (``"<absolute path>: <reason>"``) with the path shown relative to ``cwd``."""
    path, sep, reason = message.partition(": ")
    return f"{display_path(path, cwd)}{sep}{reason}"


def walk_tree(top: str, onerror: Optional[Callable[[OSError], None]] = None) -> Iterator[Tuple[str, List[str], List[str]]]:
    """``os.walk(top, onerror=onerror, followlinks=False)``, top-down, without recursion.

    Yields ``(dirpath, dirnames, filenames)`` for ``top`` and each directory below it,
    parents before children, siblings in listing order; the caller may prune ``dirnames``
    in place to skip directories.  A link to a directory is listed in ``dirnames`` but
    never entered.  A directory that cannot be listed is passed to ``onerror`` and
    skipped.  Python 3.11's ``os.walk`` recurses once per level, so a tree ~1000
    directories deep raised ``RecursionError``; here depth costs only a list entry.
    """
    stack = [top]
    while stack:
        dirpath = stack.pop()
        dirnames: List[str] = []
        filenames: List[str] = []
        try:
            with os.scandir(dirpath) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    (dirnames if is_dir else filenames).append(entry.name)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        yield dirpath, dirnames, filenames
        for name in reversed(dirnames):
            child = os.path.join(dirpath, name)
            if not os.path.islink(child):
                stack.append(child)


def _walk(top: str, matcher: _Matcher, add, errors: List[str], cwd: str) -> None:
    """Walk ``top`` (not following symbolic links), calling ``add`` for each Python file kept.

    A directory the user named is walked even when it is itself excluded
    (``pt2lint check build/``); the patterns and ``.gitignore`` files that
    exclude it then do not also exclude everything inside it: patterns are
    matched relative to ``top`` and only ``.gitignore`` files from ``top`` down apply.
    Virtual environments and ``site-packages`` directories below ``top`` are skipped,
    unless ``top`` itself is (or lies inside) one: naming installed code lints it.
    """
    skip_installed = not _within_installed_code(top)
    if matcher.excluded_explicit(top, True):
        base = top
        own = matcher.gitignore(top)
        chain_top = [(top, own)] if own is not None else []
    else:
        base = matcher.pattern_base(top, top)
        chain_top = matcher.gitignore_chain(top)
    chains: Dict[str, List[Tuple[str, Globs]]] = {top: chain_top}

    def onerror(exc: OSError) -> None:
        where = display_path(exc.filename, cwd) if exc.filename else display_path(top, cwd)
        errors.append(f"{where}: {os_error_reason(exc)}")

    for dirpath, dirnames, filenames in walk_tree(top, onerror):
        chain = chains.pop(dirpath, None)
        if chain is None:  # pragma: no cover - the walk only yields directories we kept
            chain = matcher.gitignore_chain(dirpath)
        keep = []
        for name in sorted(dirnames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full):  # never followed: no loops, no escaping the tree
                continue
            if matcher.excluded(full, True, chain, base):
                continue
            if skip_installed and is_installed_code_dir(full):
                continue
            keep.append(name)
            own = matcher.gitignore(full)
            chains[full] = chain + [(full, own)] if own is not None else chain
        dirnames[:] = keep
        for name in filenames:
            if not name.endswith(PYTHON_SUFFIXES):
                continue
            full = os.path.join(dirpath, name)
            if matcher.excluded(full, False, chain, base):
                continue
            try:
                st = os.stat(full)
            except PermissionError as exc:  # a directory we may list but not search (mode r--)
                where = display_path(dirpath, cwd)
                message = f"{where}: {os_error_reason(exc)}"
                if message not in errors:
                    errors.append(message)
                continue
            except OSError:
                continue  # a dangling link or a link loop: not a file to check
            if not stat.S_ISREG(st.st_mode):
                continue  # link to a directory, FIFO, socket, device: reading one could block forever
            if os.path.islink(full) and not (is_within(full, matcher.root) or is_within(full, top)):
                continue  # a link out of the tree is not followed, like a directory link
            add(full)
