"""Configuration: find and validate ``[tool.pt2lint]``, merge command-line options.

The nearest config file above the linted paths wins, as with ruff: in each
directory, from the paths' common parent upward, ``.pt2lint.toml``, then
``pt2lint.toml`` (top-level keys), then a ``pyproject.toml`` that has a
``[tool.pt2lint]`` table.  ``--config PATH`` names the file instead.  The
directory holding the config is the project root; without one it is the
working directory (or, for paths outside it, their common parent).

Every problem is a :class:`ConfigError` whose message is one line naming the
file and the key, so a front end prints it as is.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Mapping, Optional, Sequence, Tuple

from pt2lint.diagnostics import DEFAULT_DOCS_URL, check_docs_url
from pt2lint.discovery import DEFAULT_EXCLUDES, DiscoverySettings, display_path
from pt2lint.globs import pattern_problem, shown_pattern
from pt2lint.reading import DEFAULT_MAX_BYTES
from pt2lint.settings import LintSettings, SelectionError, resolve_selection, resolve_selector
from pt2lint.specs import TARGETS, RuleSpec, load_specs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older Pythons only
    import tomli as tomllib

#: Config file names, in the order they are looked for within one directory.
CONFIG_FILES: Tuple[str, ...] = (".pt2lint.toml", "pt2lint.toml", "pyproject.toml")

_SELECTOR_KEYS = ("select", "extend-select", "ignore")
_PATTERN_KEYS = ("exclude", "extend-exclude")
_BOOL_KEYS = ("capture-scalar-outputs", "capture-dynamic-output-shape-ops", "allow-rnn", "assume-compiled")
#: Every key ``[tool.pt2lint]`` accepts.  ``confirm`` is a table kept raw for the confirm mode.
_IMPORT_KEYS = ("src", "follow-imports")
KNOWN_KEYS: Tuple[str, ...] = (
    _SELECTOR_KEYS
    + ("per-file-ignores",)
    + _PATTERN_KEYS
    + _BOOL_KEYS
    + ("target", "compute-dtype")
    + _IMPORT_KEYS
    + ("docs-url", "max-file-size", "confirm")
)
_SIZE = re.compile(r"^\s*(\d+)\s*(|b|kb|k|mb|m|gb|g)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def parse_size(value: Any, where: str) -> int:
    """A ``max-file-size`` value in bytes: an integer (bytes) or a string such as ``"20MB"`` / ``"512 KB"``.

    Raises:
        ConfigError: not a positive size (the message names ``where``, the key).
    """
    if isinstance(value, bool):
        raise ConfigError(f"{where} must be a size in bytes or a string such as '20MB', not a boolean")
    if isinstance(value, int):
        n = value
    elif isinstance(value, str) and _SIZE.match(value):
        m = _SIZE.match(value)
        n = int(m.group(1)) * _UNITS[m.group(2).lower()]
    else:
        raise ConfigError(f"{where} must be a size in bytes or a string such as '20MB', not {value!r}")
    if n <= 0:
        raise ConfigError(f"{where} must be a positive size, not {value!r}")
    return n

#: Values of ``compute-dtype``: the floating dtype the model runs in when compiled.
COMPUTE_DTYPES: Tuple[str, ...] = ("float32", "float16", "bfloat16")


class ConfigError(ValueError):
    """A config file or a command-line option is invalid.

    The message is one line that names the file (or the option) and the key.
    """


@dataclass(frozen=True)
class FileConfig:
    """The validated contents of one config file (``None``: the key is not set).

    Attributes:
        path: the file it came from; ``None`` for the empty default config.
        select, extend_select, ignore: rule selectors.
        per_file_ignores: ``(glob, selectors)`` pairs, in file order.
        exclude, extend_exclude: gitignore-style patterns relative to the project root.
        capture_scalar_outputs, capture_dynamic_output_shape_ops, allow_rnn: Dynamo knobs
            (``torch._dynamo.config`` names); an assignment in the project's code overrides them.
        assume_compiled: every module and function is compiled (``cond`` fixes need not be
            marked unsafe for their eager-mode cost).
        target: ``"compile"``, ``"export"`` or ``"cudagraphs"``.
        compute_dtype: ``"float32"``, ``"float16"`` or ``"bfloat16"``.
        src: extra import roots, relative to the project root (like ruff's ``src``).
        follow_imports: installed packages (``"einops"``, ``"timm.layers"``) whose source
            the analysis reads when a compiled region calls into them.
        docs_url: the template of rule links (``{code}``, ``{name}``), or ``None`` for the default.
        max_file_size: largest file read, in bytes (default: 10 MB); see :mod:`pt2lint.reading`.
        confirm: the raw ``confirm`` sub-table (validated here too, so every command rejects a bad
            one; :mod:`pt2lint.confirm.settings` turns it into confirm settings).
    """

    path: Optional[str] = None
    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Optional[Tuple[str, ...]] = None
    extend_exclude: Tuple[str, ...] = ()
    capture_scalar_outputs: Optional[bool] = None
    capture_dynamic_output_shape_ops: Optional[bool] = None
    allow_rnn: Optional[bool] = None
    assume_compiled: Optional[bool] = None
    target: Optional[str] = None
    compute_dtype: Optional[str] = None
    src: Tuple[str, ...] = ()
    follow_imports: Tuple[str, ...] = ()
    docs_url: Optional[str] = None
    max_file_size: Optional[int] = None
    confirm: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Overrides:
    """Command-line options that override the config file (``None`` / empty: not given).

    ``select`` and ``exclude`` replace the config's values; ``extend_select``,
    ``ignore`` and ``extend_exclude`` add to them (ruff's layering).
    """

    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    exclude: Optional[Tuple[str, ...]] = None
    extend_exclude: Tuple[str, ...] = ()
    capture_scalar_outputs: Optional[bool] = None
    capture_dynamic_output_shape_ops: Optional[bool] = None
    allow_rnn: Optional[bool] = None
    assume_compiled: Optional[bool] = None
    target: Optional[str] = None
    compute_dtype: Optional[str] = None
    follow_imports: Tuple[str, ...] = ()
    force_exclude: bool = False
    respect_gitignore: bool = True


@dataclass(frozen=True)
class Project:
    """Everything a front end needs to lint: the resolved settings and where they came from.

    Attributes:
        root: absolute project root.
        config: the file config that was applied (``config.path`` is ``None`` without one).
        settings: the engine's settings.
        discovery: the file walker's settings.
        docs_url: the template of rule links (the ``docs-url`` key, default
            :data:`pt2lint.diagnostics.DEFAULT_DOCS_URL`).
    """

    root: str
    config: FileConfig
    settings: LintSettings
    discovery: DiscoverySettings
    docs_url: str = DEFAULT_DOCS_URL


def _has_pt2lint_table(path: str) -> bool:
    """Whether ``pyproject.toml`` at ``path`` has ``[tool.pt2lint]``.

    Raises:
        ConfigError: it cannot be read (:func:`pt2lint.reading.read_bytes` refuses it: a
            FIFO, a device, too large; or the OS's error), or it mentions pt2lint but is not
            valid TOML.
    """
    data = _read_config_bytes(path)
    if not _mentions_pt2lint(data):  # do not fail on a broken pyproject.toml that is not ours
        return False
    doc = _parse_toml(data, path)
    tool = doc.get("tool")
    return isinstance(tool, dict) and "pt2lint" in tool


def _mentions_pt2lint(data: bytes) -> bool:
    """Whether ``data`` contains the word pt2lint, in UTF-8 or in a UTF-16/UTF-32 encoding (a
    file saved so by an editor is ours too, and must be refused rather than skipped)."""
    return any("pt2lint".encode(codec) in data for codec in ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"))


_UNICODE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def _read_config_bytes(path: str) -> bytes:
    """The bytes of config file ``path``, read with :func:`pt2lint.reading.read_bytes`.

    Raises:
        ConfigError: naming the file and the reason it was not read.
    """
    from pt2lint.reading import read_bytes

    try:
        return read_bytes(path, max_bytes=CONFIG_MAX_BYTES, what=None)
    except IsADirectoryError:
        raise ConfigError(f"{display_path(path)}: cannot read config file: is a directory") from None
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise ConfigError(f"{display_path(path)}: cannot read config file: {reason}") from None


def find_config(start: str) -> Optional[str]:
    """The nearest config file at or above directory ``start``, or ``None``.

    A name in :data:`CONFIG_FILES` that exists but cannot be read (a FIFO, a link to
    ``/dev/zero``, no permission, a dangling link) is an error, never silently skipped:
    skipping it would lint with settings the project did not ask for.  A directory of
    that name is not a config file and is passed over.

    Raises:
        ConfigError: such a file, or a ``pyproject.toml`` on the way that mentions pt2lint
            but is not valid TOML.
    """
    probe = os.path.abspath(start)
    while True:
        for name in CONFIG_FILES:
            candidate = os.path.join(probe, name)
            if not os.path.lexists(candidate) or os.path.isdir(candidate):
                continue
            if name != "pyproject.toml" or _has_pt2lint_table(candidate):
                return candidate
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


#: Largest config file read, in bytes.
CONFIG_MAX_BYTES = 1024 * 1024

_KEY_AT_LINE = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")


def _deep_value_key(text: str) -> Tuple[Optional[str], int]:
    """``(key, line)`` of the first value whose brackets nest deeper than Python can parse (best effort)."""
    depth = 0
    key: Optional[str] = None
    key_line = 0
    for number, line in enumerate(text.splitlines(), 1):
        if depth == 0:
            m = _KEY_AT_LINE.match(line)
            if m:
                key, key_line = m.group(1).strip("\"'"), number
        for ch in line:
            if ch in "[{":
                depth += 1
                if depth > 100:
                    return key, key_line or number
            elif ch in "]}":
                depth = max(0, depth - 1)
    return None, 0


def _parse_toml(data: bytes, path: str) -> Dict[str, Any]:
    where = display_path(path)
    for bom, codec in _UNICODE_BOMS:
        if data.startswith(bom):
            raise ConfigError(f"{where}: encoded as {codec}; TOML files must be UTF-8") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not valid UTF-8 (byte offset {exc.start})") from None
    if text.startswith("\ufeff"):  # tomllib reads it as an invalid statement at line 1
        raise ConfigError(f"{where}: starts with a byte-order mark (U+FEFF), which TOML does not allow; save it as UTF-8 without BOM")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc).splitlines()[0] if str(exc) else "invalid TOML"
        raise ConfigError(f"{where}: invalid TOML: {message}") from None
    except (RecursionError, MemoryError):
        key, line = _deep_value_key(text)
        what = f"the value of {key!r} (line {line})" if key else "a value"
        raise ConfigError(f"{where}: invalid TOML: {what} nests arrays or tables too deeply to read") from None


def _check_patterns(patterns: Sequence[str], where: str) -> None:
    """Raise a :class:`ConfigError` naming ``where`` (the key or option) for the first bad pattern."""
    for pattern in patterns:
        problem = pattern_problem(pattern)
        if problem is not None:
            raise ConfigError(f"{where}: invalid pattern {shown_pattern(pattern)}: {problem}")


def _where(path: str) -> str:
    """How messages name a config file: ``"pyproject.toml: [tool.pt2lint]"`` or ``"pt2lint.toml:"``."""
    shown = display_path(path)
    return f"{shown}: [tool.pt2lint]" if os.path.basename(path) == "pyproject.toml" else f"{shown}:"


def _suggest(key: str) -> str:
    close = difflib.get_close_matches(key.replace("_", "-"), KNOWN_KEYS, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array", dict: "a table"}.get(
        type(value), type(value).__name__
    )


def _string_list(value: Any, where: str, key: str) -> Tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{where} {key!r} must be an array of strings, not {_type_name(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ConfigError(f"{where} {key!r} must be an array of strings, but item {i + 1} is {_type_name(item)}")
    return tuple(value)


def parse_config(doc: Mapping[str, Any], path: str) -> FileConfig:
    """Validate the pt2lint table of a config file.

    Args:
        doc: the decoded TOML document (the whole file).
        path: the file, for messages; a ``pyproject.toml`` is read from ``[tool.pt2lint]``,
            any other file from its top level.

    Raises:
        ConfigError: an unknown key, or a value of the wrong type or out of range.
    """
    where = _where(path)
    if os.path.basename(path) == "pyproject.toml":
        tool = doc.get("tool", {})
        table = tool.get("pt2lint", {}) if isinstance(tool, dict) else {}
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table, not {_type_name(table)}")
    else:
        table = doc
    values: Dict[str, Any] = {}
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{where} unknown key {key!r}{_suggest(key)}")
        attr = key.replace("-", "_")
        if key in _SELECTOR_KEYS:
            values[attr] = _string_list(value, where, key)
        elif key in _PATTERN_KEYS:
            values[attr] = _string_list(value, where, key)
            _check_patterns(values[attr], f"{where} {key!r}")
        elif key in _IMPORT_KEYS:
            items = _string_list(value, where, key)
            if key == "follow-imports":
                bad = [m for m in items if not all(p.isidentifier() for p in m.split("."))]
                if bad:
                    raise ConfigError(f"{where} 'follow-imports' names a module by its dotted name, not {bad[0]!r}")
            values[attr] = items
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where} {key!r} must be true or false, not {_type_name(value)}")
            values[attr] = value
        elif key == "target":
            if value not in TARGETS:
                raise ConfigError(f"{where} 'target' must be one of {', '.join(map(repr, TARGETS))}, not {value!r}")
            values[attr] = value
        elif key == "compute-dtype":
            if value not in COMPUTE_DTYPES:
                raise ConfigError(f"{where} 'compute-dtype' must be one of {', '.join(map(repr, COMPUTE_DTYPES))}, not {value!r}")
            values[attr] = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where} 'per-file-ignores' must be a table of glob = [selectors], not {_type_name(value)}")
            values[attr] = tuple(
                (glob, _string_list(codes, where, f'per-file-ignores."{glob}"'))
                for glob, codes in value.items()
            )
            for glob, _ in values[attr]:
                problem = pattern_problem(glob[2:] if glob.startswith("./") else glob)
                if problem is not None:
                    raise ConfigError(f"{where} 'per-file-ignores': invalid glob {shown_pattern(glob)}: {problem}")
        elif key == "max-file-size":
            values[attr] = parse_size(value, f"{where} 'max-file-size'")
        elif key == "docs-url":
            try:
                values[attr] = check_docs_url(value)
            except ValueError as exc:
                raise ConfigError(f"{where} 'docs-url' {exc}") from None
        elif key == "confirm":
            if not isinstance(value, dict):
                raise ConfigError(f"{where} 'confirm' must be a table, not {_type_name(value)}")
            values[attr] = dict(value)
            _check_confirm_table(values[attr], path)
    return FileConfig(path=path, **values)


def _check_confirm_table(table: Mapping[str, Any], path: str) -> None:
    """Validate ``[tool.pt2lint.confirm]`` with confirm mode's own rules (no torch is imported).

    Raises:
        ConfigError: an unknown key (with a suggestion) or a bad value, named as confirm mode names it.
    """
    from pt2lint.confirm.settings import parse_confirm_table

    parse_confirm_table(table, path, os.path.dirname(os.path.abspath(path)))


def read_config(path: str) -> FileConfig:
    """Read and validate one config file.

    Raises:
        ConfigError: the file is unreadable (refused by :func:`pt2lint.reading.read_bytes`:
            not a regular file, too large; or the OS's error), not TOML, or has a bad key or value.
    """
    return parse_config(_parse_toml(_read_config_bytes(path), path), path)


def _check_selectors(selectors: Sequence[str], where: str, specs: Mapping[str, RuleSpec]) -> None:
    for sel in selectors:
        try:
            resolve_selector(sel, specs)
        except SelectionError as exc:
            raise ConfigError(f"{where}: {exc}") from None


def _codes(selectors: Sequence[str], specs: Mapping[str, RuleSpec]) -> FrozenSet[str]:
    out: set = set()
    for sel in selectors:
        out |= resolve_selector(sel, specs)
    return frozenset(out)


def resolve_project(
    config: FileConfig,
    overrides: Overrides = Overrides(),
    root: Optional[str] = None,
    specs: Optional[Mapping[str, RuleSpec]] = None,
) -> Project:
    """Merge a file config and command-line overrides into engine and discovery settings.

    Selection is layered as in ruff: the config's ``select`` (default: every rule
    for the target) plus ``extend-select`` minus ``ignore``; then the command
    line's ``--select`` replaces that set, ``--extend-select`` adds and
    ``--ignore`` removes.

    Args:
        config: the validated config file (or ``FileConfig()``).
        overrides: command-line options.
        root: project root (default: the config file's directory, else the working directory).
        specs: the rule catalog (default: :func:`pt2lint.specs.load_specs`).

    Raises:
        ConfigError: a selector names no rule (the message names the key or option).
    """
    specs = load_specs() if specs is None else specs
    if root is None:
        root = os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd()
    root = os.path.abspath(root)
    where = _where(config.path) if config.path else "config:"
    for key in _SELECTOR_KEYS:
        _check_selectors(getattr(config, key.replace("-", "_")) or (), f"{where} {key!r}", specs)
    for glob, sels in config.per_file_ignores:
        _check_selectors(sels, f"{where} 'per-file-ignores.\"{glob}\"'", specs)
    for option, sels in (("--select", overrides.select), ("--extend-select", overrides.extend_select), ("--ignore", overrides.ignore)):
        _check_selectors(sels or (), option, specs)
    _check_patterns(overrides.exclude or (), "--exclude")
    _check_patterns(overrides.extend_exclude, "--extend-exclude")

    target = overrides.target or config.target or "compile"
    enabled = resolve_selection(config.select, config.extend_select, config.ignore, target, specs)
    if overrides.select is not None or overrides.extend_select or overrides.ignore:
        base = overrides.select if overrides.select is not None else tuple(sorted(enabled))
        enabled = resolve_selection(base, overrides.extend_select, overrides.ignore, target, specs)

    def pick(cli: Optional[bool], file: Optional[bool]) -> bool:
        return cli if cli is not None else bool(file)

    settings = LintSettings(
        enabled=enabled,
        per_file_ignores=tuple(
            (glob[2:] if glob.startswith("./") else glob, _codes(sels, specs)) for glob, sels in config.per_file_ignores
        ),
        capture_scalar_outputs=pick(overrides.capture_scalar_outputs, config.capture_scalar_outputs),
        capture_dynamic_output_shape_ops=pick(overrides.capture_dynamic_output_shape_ops, config.capture_dynamic_output_shape_ops),
        allow_rnn=pick(overrides.allow_rnn, config.allow_rnn),
        explicit_knobs=frozenset(
            k for k in ("capture_scalar_outputs", "capture_dynamic_output_shape_ops", "allow_rnn") if getattr(overrides, k) is not None
        ),
        assume_compiled=pick(overrides.assume_compiled, config.assume_compiled),
        target=target,
        compute_dtype=overrides.compute_dtype or config.compute_dtype or "float32",
        project_root=root,
        src=tuple(config.src),
        follow_imports=tuple(dict.fromkeys(tuple(config.follow_imports) + tuple(overrides.follow_imports))),
        max_file_size=config.max_file_size or DEFAULT_MAX_BYTES,
    )
    exclude = overrides.exclude if overrides.exclude is not None else config.exclude
    discovery = DiscoverySettings(
        project_root=root,
        exclude=DEFAULT_EXCLUDES if exclude is None else tuple(exclude),
        extend_exclude=tuple(config.extend_exclude) + tuple(overrides.extend_exclude),
        respect_gitignore=overrides.respect_gitignore,
        force_exclude=overrides.force_exclude,
    )
    return Project(root=root, config=config, settings=settings, discovery=discovery, docs_url=config.docs_url or DEFAULT_DOCS_URL)


def _search_start(paths: Sequence[str]) -> str:
    """The common parent directory of ``paths`` (a file counts as its directory); the cwd when empty."""
    dirs = []
    for p in paths:
        absolute = os.path.abspath(p)
        dirs.append(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))
    if not dirs:
        return os.getcwd()
    try:
        return os.path.commonpath(dirs)
    except ValueError:  # different drives
        return os.getcwd()


def load_project(
    paths: Sequence[str] = (),
    config_path: Optional[str] = None,
    overrides: Overrides = Overrides(),
    isolated: bool = False,
) -> Project:
    """Find the config for ``paths``, read it, and merge ``overrides``.

    Args:
        paths: the paths to lint (for stdin, the ``--stdin-filename``); the search
            for a config starts at their common parent, or at the cwd.
        config_path: a config file to use instead of searching.
        overrides: command-line options.
        isolated: ignore config files altogether.

    Raises:
        ConfigError: the config file is missing (when named), unreadable or invalid,
            or a selector names no rule.
    """
    if isolated:
        config = FileConfig()
    elif config_path is not None:
        if not os.path.lexists(config_path):
            raise ConfigError(f"--config: {config_path}: no such file")
        config = read_config(config_path)
    else:
        found = find_config(_search_start(paths))
        config = read_config(found) if found else FileConfig()
    root = None
    if config.path is None:
        cwd = os.getcwd()
        start = _search_start(paths)
        root = cwd if os.path.commonpath([cwd, start]) == cwd else start
    return resolve_project(config, overrides, root)
