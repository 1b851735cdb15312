"""Confirm-mode settings: the ``[tool.pt2lint.confirm]`` table merged with command-line options.

``pt2lint.config`` keeps the ``confirm`` sub-table raw; it is validated here, with
the same one-line :class:`~pt2lint.config.ConfigError` messages as the rest of
the config. Nothing here imports torch.

Keys of ``[tool.pt2lint.confirm]``::

    factory = "make_model"          # module-level function in each file returning the nn.Module
    inputs = "example_inputs"       # module-level function returning the forward arguments
    device = "cuda"                 # cpu | cuda | cuda:N | mps (default: cuda if available, else cpu)
    backend = "eager"               # eager | aot_eager | inductor
    timeout = 120                   # seconds per module (default: 120; 180 aot_eager; 600 inductor)
    jobs = 2                        # modules confirmed at once
    check-accuracy = false          # compare eager and compiled outputs
    memory-limit = 4096             # MiB a module may allocate (address space, Linux; cpu only)

    "models/net.py::Net" = { factory = "models.net:build", inputs = "models.net:example_inputs" }
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

from pt2lint.config import ConfigError

DEVICE_RE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
BACKENDS: Tuple[str, ...] = ("eager", "aot_eager", "inductor")
CONFIRM_TARGETS: Tuple[str, ...] = ("compile", "export")
DEFAULT_TIMEOUT = 120.0
#: Factory and inputs function names used when a file defines them and none are configured.
DEFAULT_FACTORY = "make_model"
DEFAULT_INPUTS = "example_inputs"
#: Default seconds per module by backend: inductor generates and compiles code, which takes longer.
DEFAULT_TIMEOUTS: Dict[str, float] = {"eager": 120.0, "aot_eager": 180.0, "inductor": 600.0}

#: Upper bounds of ``timeout`` (a week, in seconds; NaN and infinity are refused) and
#: ``memory-limit`` (2**40 MiB, more address space than any machine has: setrlimit takes
#: bytes as a 64-bit number, so much larger values could not be applied at all).
MAX_TIMEOUT_S = 7 * 24 * 3600
MAX_MEMORY_LIMIT_MB = 1 << 40

_KEYS = ("factory", "inputs", "device", "backend", "timeout", "jobs", "check-accuracy", "memory-limit")
_ENTRY_KEYS = ("factory", "inputs")
_FN_SPEC_RE = re.compile(r"^(?P<module>[^:]+):(?P<fn>[A-Za-z_][A-Za-z0-9_.]*)$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class ModuleSpec:
    """How to build one class's module and inputs (a per-class config entry).

    Attributes:
        path: the file, relative to the project root, with ``/`` separators.
        class_name: the ``nn.Module`` class in it.
        factory: ``"module:fn"`` (or ``"path/to/file.py:fn"``) returning the module; None: ``ClassName()``.
        inputs: ``"module:fn"`` returning the forward arguments; None: synthesised.
    """

    path: str
    class_name: str
    factory: Optional[str] = None
    inputs: Optional[str] = None


@dataclass(frozen=True)
class ConfirmSettings:
    """Everything confirm mode needs besides the files and the lint settings.

    Attributes:
        factory, inputs: names of module-level functions looked up in every file
            (default :data:`DEFAULT_FACTORY` / :data:`DEFAULT_INPUTS`).
        factory_from, inputs_from: where a configured name came from (``"--factory"``,
            ``"[tool.pt2lint.confirm] factory"``, ...), or None for the default name; a
            configured name that no file defines is an error, the default is not.
        device: ``cpu``, ``cuda``, ``cuda:N``, ``mps``, or None for "cuda if available, else cpu".
        backend: ``torch.compile`` backend.
        target: ``compile`` or ``export`` (``export`` also runs ``torch.export.export``).
        timeout: seconds per module (import, build, eager run, compile, calls); by default
            :data:`DEFAULT_TIMEOUTS` for the backend.
        jobs: modules confirmed at once (child processes).
        check_accuracy: compare eager and compiled outputs.
        memory_limit_mb: address space a module may add, in MiB, or None for no limit.
        modules: per-class entries keyed by ``(path, class_name)``.
        root: project root that entry paths and ``module:fn`` specs are relative to.
        config_path: the config file (for messages), or None.
    """

    factory: Optional[str] = DEFAULT_FACTORY
    inputs: Optional[str] = DEFAULT_INPUTS
    factory_from: Optional[str] = None
    inputs_from: Optional[str] = None
    device: Optional[str] = None
    backend: str = "eager"
    target: str = "compile"
    timeout: float = DEFAULT_TIMEOUT
    jobs: int = 1
    check_accuracy: bool = False
    memory_limit_mb: Optional[int] = None
    modules: Mapping[Tuple[str, str], ModuleSpec] = field(default_factory=dict)
    root: str = "."
    config_path: Optional[str] = None


def default_jobs(cpu_count: Optional[int] = None) -> int:
    """Default number of modules confirmed at once: half the CPUs, 1 to 4."""
    cpus = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    return max(1, min(4, cpus // 2))


def _where(config_path: Optional[str]) -> str:
    if not config_path:
        return "config: [tool.pt2lint.confirm]"
    shown = os.path.relpath(config_path) if not os.path.relpath(config_path).startswith("..") else config_path
    if os.path.basename(config_path) == "pyproject.toml":
        return f"{shown}: [tool.pt2lint.confirm]"
    return f"{shown}: [confirm]"


def _check_fn_spec(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str) or not _FN_SPEC_RE.match(value.strip()):
        raise ConfigError(f"{where} {key!r} must be a string \"module:function\" (or \"path/to/file.py:function\"), not {value!r}")
    return value.strip()


def _check_name(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str) or not (_NAME_RE.match(value) or _FN_SPEC_RE.match(value)):
        raise ConfigError(f"{where} {key!r} must be a function name such as \"make_model\", not {value!r}")
    return value


def check_device(value: Any, where: str) -> str:
    """Validate a device string (``cpu``, ``cuda``, ``cuda:N``, ``mps``).

    Raises:
        ConfigError: anything else (the message names ``where``).
    """
    if not isinstance(value, str) or not DEVICE_RE.match(value):
        raise ConfigError(f"{where} device must be cpu, cuda, cuda:N or mps, not {value!r}")
    return value


def parse_confirm_table(table: Mapping[str, Any], config_path: Optional[str], root: str) -> Dict[str, Any]:
    """Validate the raw ``[tool.pt2lint.confirm]`` table.

    Args:
        table: the decoded sub-table (``FileConfig.confirm``).
        config_path: the file it came from, for messages.
        root: the project root; per-class entry paths are relative to it.

    Returns:
        Keyword arguments for :class:`ConfirmSettings` (only the keys that were set).

    Raises:
        ConfigError: an unknown key, a value of the wrong type, or a malformed per-class entry.
    """
    where = _where(config_path)
    out: Dict[str, Any] = {}
    modules: Dict[Tuple[str, str], ModuleSpec] = {}
    for key, value in table.items():
        if "::" in key:
            path, _, cls = key.partition("::")
            if not path.endswith((".py", ".pyi")) or not _NAME_RE.match(cls):
                raise ConfigError(f"{where} entry {key!r} must be named \"path/to/file.py::ClassName\"")
            if not isinstance(value, dict):
                raise ConfigError(f"{where} entry {key!r} must be a table {{ factory = \"module:fn\", inputs = \"module:fn\" }}")
            for sub in value:
                if sub not in _ENTRY_KEYS:
                    raise ConfigError(f"{where} entry {key!r}: unknown key {sub!r} (expected factory, inputs)")
            factory = _check_fn_spec(value["factory"], where, f"{key}.factory") if "factory" in value else None
            inputs = _check_fn_spec(value["inputs"], where, f"{key}.inputs") if "inputs" in value else None
            rel = path[2:] if path.startswith("./") else path
            modules[(rel.replace(os.sep, "/"), cls)] = ModuleSpec(rel, cls, factory, inputs)
            continue
        if key not in _KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), _KEYS, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where} unknown key {key!r}{hint}")
        if key in ("factory", "inputs"):
            out[key] = _check_name(value, where, key)
        elif key == "device":
            out["device"] = check_device(value, where)
        elif key == "backend":
            if value not in BACKENDS:
                raise ConfigError(f"{where} 'backend' must be one of {', '.join(BACKENDS)}, not {value!r}")
            out["backend"] = value
        elif key == "timeout":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIMEOUT_S:
                raise ConfigError(f"{where} 'timeout' must be a positive number of seconds, not {value!r} (at most {MAX_TIMEOUT_S})")
            out["timeout"] = float(value)
        elif key == "jobs":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{where} 'jobs' must be a positive integer, not {value!r}")
            out["jobs"] = value
        elif key == "check-accuracy":
            if not isinstance(value, bool):
                raise ConfigError(f"{where} 'check-accuracy' must be true or false, not {value!r}")
            out["check_accuracy"] = value
        elif key == "memory-limit":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_MEMORY_LIMIT_MB:
                raise ConfigError(f"{where} 'memory-limit' must be a positive integer (MiB), not {value!r} (at most {MAX_MEMORY_LIMIT_MB})")
            out["memory_limit_mb"] = value
    out["modules"] = modules
    return out


def build_settings(
    table: Mapping[str, Any],
    *,
    config_path: Optional[str],
    root: str,
    target: str = "compile",
    factory: Optional[str] = None,
    inputs: Optional[str] = None,
    device: Optional[str] = None,
    backend: Optional[str] = None,
    timeout: Optional[float] = None,
    jobs: Optional[int] = None,
    check_accuracy: Optional[bool] = None,
    memory_limit_mb: Optional[int] = None,
) -> ConfirmSettings:
    """Merge the config table and command-line options (options win).

    Args:
        table: raw ``[tool.pt2lint.confirm]``.
        config_path: the config file, for messages.
        root: project root.
        target: the lint target; ``cudagraphs`` is confirmed as ``compile``.
        factory, inputs, device, backend, timeout, jobs, check_accuracy, memory_limit_mb:
            command-line values, None when not given.

    Raises:
        ConfigError: invalid table or option value.
    """
    values = parse_confirm_table(table, config_path, root)
    where = _where(config_path)
    for key in ("factory", "inputs"):
        if key in values:
            values[f"{key}_from"] = f"{where} {key!r}"
    if device is not None:
        values["device"] = check_device(device, "--device:")
    for key, val in (
        ("factory", factory),
        ("inputs", inputs),
        ("backend", backend),
        ("timeout", timeout),
        ("jobs", jobs),
        ("check_accuracy", check_accuracy),
        ("memory_limit_mb", memory_limit_mb),
    ):
        if val is not None:
            values[key] = val
            if key in ("factory", "inputs"):
                values[f"{key}_from"] = f"--{key}"
    if "factory" in values:
        _check_name(values["factory"], "--factory:", "factory")
    if "inputs" in values:
        _check_name(values["inputs"], "--inputs:", "inputs")
    values.setdefault("factory", DEFAULT_FACTORY)
    values.setdefault("inputs", DEFAULT_INPUTS)
    values.setdefault("jobs", default_jobs())
    values.setdefault("timeout", DEFAULT_TIMEOUTS.get(values.get("backend", "eager"), DEFAULT_TIMEOUT))
    values["target"] = "export" if target == "export" else "compile"
    return ConfirmSettings(root=os.path.abspath(root), config_path=config_path, **values)


__all__ = [
    "BACKENDS",
    "CONFIRM_TARGETS",
    "ConfirmSettings",
    "DEFAULT_FACTORY",
    "DEFAULT_INPUTS",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TIMEOUTS",
    "ModuleSpec",
    "build_settings",
    "check_device",
    "default_jobs",
    "parse_confirm_table",
]
