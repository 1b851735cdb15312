"""What happened to one module in confirm mode: the failure classes and the next diagnostic to run.

This module is plain data and text (no torch), shared by the child process,
which classifies exceptions by their type name, and the parent, which
classifies deaths it only sees from outside (a signal, an exit status, a
timeout) and reads the crash report ``faulthandler`` left in the child's log.

The failure classes and their next steps follow the torch.compile
troubleshooting guide ("torch.compile Troubleshooting", docs.pytorch.org):
``TORCH_LOGS=graph_breaks`` / ``TORCH_LOGS=recompiles`` for what the logs show,
and the minifier (``TORCHDYNAMO_REPRO_AFTER`` / ``TORCHDYNAMO_REPRO_LEVEL``) for
compiler crashes (level 2) and accuracy failures (level 4).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

#: Failure classes, most severe first; a module gets the first that applies.
IMPORT_ERROR = "import-error"
TIMEOUT = "timeout"
RUNTIME_CRASH = "runtime-crash"
NO_INPUTS = "no-example-inputs"
DYNAMO_INTERNAL_ERROR = "dynamo-internal-error"
BACKEND_COMPILER_FAILURE = "backend-compiler-failure"
ACCURACY_MISMATCH = "accuracy-mismatch"
RECOMPILE_LIMIT = "recompile-limit"
#: recompiled on calls that changed nothing Dynamo should care about (new values of the same
#: shapes), or on every new size after automatic dynamic shapes made the size symbolic,
#: without reaching the recompile limit over the calls made
RECOMPILE = "recompile"
EXPORT_FAILURE = "export-failure"
GRAPH_BREAK = "graph-break"

FAILURE_CLASSES: Tuple[str, ...] = (
    IMPORT_ERROR,
    TIMEOUT,
    RUNTIME_CRASH,
    NO_INPUTS,
    DYNAMO_INTERNAL_ERROR,
    BACKEND_COMPILER_FAILURE,
    ACCURACY_MISMATCH,
    RECOMPILE_LIMIT,
    RECOMPILE,
    EXPORT_FAILURE,
    GRAPH_BREAK,
)

#: How each class is named in messages.
FAILURE_TITLES: Dict[str, str] = {
    IMPORT_ERROR: "import error",
    TIMEOUT: "timeout",
    RUNTIME_CRASH: "runtime crash",
    NO_INPUTS: "no example inputs",
    DYNAMO_INTERNAL_ERROR: "Dynamo internal error",
    BACKEND_COMPILER_FAILURE: "backend compiler failure",
    ACCURACY_MISMATCH: "accuracy mismatch",
    RECOMPILE_LIMIT: "recompile limit",
    RECOMPILE: "recompile",
    EXPORT_FAILURE: "torch.export failure",
    GRAPH_BREAK: "graph break",
}

#: The failure class each rule category's findings are confirmed as (``None``: confirm mode
#: does not measure the category, its evidence is the specs'). Mixed precision and distributed
#: rules (PTC8xx) are split by what they predict: those whose spec names graph-break ids
#: (GradScaler and optimizer calls, collectives Dynamo does not trace, autocast entered by hand)
#: are confirmed as graph breaks; deprecation warnings, rank-dependent graphs and FSDP options
#: are not something one process compiling one module can show.
CATEGORY_FAILURES: Dict[str, Optional[str]] = {
    "data-dependent": GRAPH_BREAK,
    "dynamic-shape": GRAPH_BREAK,
    "side-effect": GRAPH_BREAK,
    "recompile": RECOMPILE,
    "export": EXPORT_FAILURE,
    "amp-distributed": GRAPH_BREAK,
}


def finding_failure(category: str, gb_types: Sequence[str] = ()) -> Optional[str]:
    """The failure class that confirms a finding of ``category`` (see :data:`CATEGORY_FAILURES`).

    Args:
        category: the rule's spec category.
        gb_types: the Dynamo graph-break ids the rule predicts (its spec's ``gb_types``).

    Returns:
        One of :data:`FAILURE_CLASSES`, or None when confirm mode does not measure it.
    """
    failure = CATEGORY_FAILURES.get(category)
    if category == "amp-distributed" and not gb_types:
        return None
    return failure


#: Classes that make the module "not confirmed" (its findings could not be measured).
NOT_RUN_CLASSES = frozenset({IMPORT_ERROR, TIMEOUT, RUNTIME_CRASH, NO_INPUTS})


def failure_rank(failure: Optional[str]) -> int:
    """Position of ``failure`` in :data:`FAILURE_CLASSES` (lower is more severe; ``None`` last)."""
    return FAILURE_CLASSES.index(failure) if failure in FAILURE_CLASSES else len(FAILURE_CLASSES)


@dataclass(frozen=True)
class Repro:
    """How to rerun one module by hand: ``python -m pt2lint.confirm.child TARGET [options]``.

    Attributes:
        target: ``path`` or ``path::Class`` as the user wrote it.
        factory, inputs: the factory and inputs specs (a name in the file or ``module:fn``).
        device, backend, target_kind: only passed when not the default.
    """

    target: str
    factory: Optional[str] = None
    inputs: Optional[str] = None
    device: Optional[str] = None
    backend: str = "eager"
    target_kind: str = "compile"

    def command(
        self,
        env: str = "",
        plain: bool = True,
        backend: Optional[str] = None,
        python: str = "python",
        extra: Sequence[str] = (),
    ) -> str:
        """The shell command, prefixed by ``env`` (``"TORCH_LOGS=graph_breaks"``).

        Args:
            env: environment assignments put in front.
            plain: add ``--plain`` (compile and call without pt2lint's log capture,
                so ``TORCH_LOGS`` output reaches the terminal).
            backend: override the backend.
            python: the interpreter and its flags (``"python -X faulthandler"``).
            extra: more options for the child.
        """
        parts: List[str] = ["-m", "pt2lint.confirm.child", self.target]
        if self.factory:
            parts += ["--factory", self.factory]
        if self.inputs:
            parts += ["--inputs", self.inputs]
        if self.device:
            parts += ["--device", self.device]
        chosen = backend or self.backend
        if chosen != "eager":
            parts += ["--backend", chosen]
        if self.target_kind != "compile":
            parts += ["--target", self.target_kind]
        if plain:
            parts.append("--plain")
        parts += list(extra)
        text = python + " " + " ".join(shlex.quote(p) for p in parts)
        return f"{env} {text}" if env else text


def next_step(failure: Optional[str], repro: Repro, *, cuda_error: bool = False) -> Optional[str]:
    """The next diagnostic to run for a module that ended in ``failure``.

    Args:
        failure: one of :data:`FAILURE_CLASSES`, or None (nothing to do).
        repro: how to rerun the module by hand.
        cuda_error: the crash was a CUDA error (adds ``CUDA_LAUNCH_BLOCKING=1``).

    Returns:
        One line: a shell command, or advice when no command helps.
    """
    if failure is None:
        return None
    if failure == GRAPH_BREAK:
        return repro.command("TORCH_LOGS=graph_breaks")
    if failure in (RECOMPILE_LIMIT, RECOMPILE):
        return repro.command("TORCH_LOGS=recompiles")
    if failure == BACKEND_COMPILER_FAILURE:
        after = "aot" if repro.backend == "inductor" else "dynamo"
        return repro.command(f"TORCHDYNAMO_REPRO_AFTER={after} TORCHDYNAMO_REPRO_LEVEL=2")
    if failure == ACCURACY_MISMATCH:
        return repro.command("TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4", backend="inductor")
    if failure == DYNAMO_INTERNAL_ERROR:
        return repro.command("TORCHDYNAMO_VERBOSE=1 TORCH_LOGS=+dynamo")
    if failure == EXPORT_FAILURE:
        return repro.command("TORCH_LOGS=+dynamic") + "   # or torch.export.draft_export for every issue at once"
    if failure == RUNTIME_CRASH:
        env = "CUDA_LAUNCH_BLOCKING=1" if cuda_error else ""
        return repro.command(env, plain=False, python="python -X faulthandler", extra=("--eager-only",))
    if failure == TIMEOUT:
        return "raise --timeout, or see where it hangs: " + repro.command(plain=False, python="python -X faulthandler")
    if failure == IMPORT_ERROR:
        path = repro.target.split("::", 1)[0]
        return f"python {shlex.quote(path)}   # run the file on its own to see the import error"
    return None


# ---------------------------------------------------------------------------
# reading a dead child's log

_FAULT_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)', re.M)
_FATAL_RE = re.compile(r"^Fatal Python error: (?P<what>.+)$", re.M)


def crash_frames(log: str) -> List[Tuple[str, int, str]]:
    """Frames of the last ``faulthandler`` dump in ``log``, most recent call first.

    ``faulthandler`` writes ``File "PATH", line N in FUNC`` lines under
    ``Current thread ... (most recent call first):`` (or ``Thread ...`` /
    ``Stack (most recent call first):`` for ``dump_traceback_later``).
    """
    starts = [m.start() for m in re.finditer(r"^(?:Current thread|Thread|Stack) .*most recent call first", log, re.M)]
    if not starts:
        return []
    block = log[starts[-1]:]
    # Only the first thread's block (the one that crashed or was dumped first).
    nxt = re.search(r"^\s*$", block, re.M)
    if nxt is not None and nxt.start() > 0:
        block = block[: nxt.start()]
    return [(m.group("file"), int(m.group("line")), m.group("func")) for m in _FAULT_FRAME_RE.finditer(block)]


def fatal_error(log: str) -> Optional[str]:
    """The ``Fatal Python error: ...`` line of a crash log, if any."""
    found = _FATAL_RE.findall(log)
    return found[-1].strip() if found else None


def signal_name(exitcode: int) -> str:
    """``"SIGSEGV"`` for ``-11``; ``"signal 99"`` when unknown."""
    try:
        return signal.Signals(-exitcode).name
    except (ValueError, AttributeError):
        return f"signal {-exitcode}"


def _package_dir(name: str) -> Optional[str]:
    """Directory of an installed top-level package, found without importing it."""
    import importlib.util
    import sys

    mod = sys.modules.get(name)
    if mod is not None and getattr(mod, "__file__", None):
        return os.path.dirname(os.path.abspath(mod.__file__))
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return os.path.abspath(locations[0])
    return os.path.dirname(os.path.abspath(spec.origin)) if spec.origin else None


def user_code_filter() -> Callable[[str], bool]:
    """A predicate telling user code from torch, pt2lint and the standard library, by filename.

    Not user code: ``<...>`` pseudo-files, torch and its companions (functorch,
    torchgen, triton, sympy), pt2lint itself, and the standard library (but not
    a ``site-packages``/``dist-packages`` folder inside it, where installed
    libraries live). Packages are located with ``importlib.util.find_spec``, so
    nothing is imported.
    """
    import sysconfig

    internal = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    for name in ("torch", "functorch", "torchgen", "triton", "sympy"):
        found = _package_dir(name)
        if found:
            internal.append(found)
    stdlib = [sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")]
    internal_prefixes = tuple(os.path.normcase(d) + os.sep for d in internal)
    stdlib_prefixes = tuple(os.path.normcase(os.path.abspath(d)) + os.sep for d in stdlib if d)
    cache: Dict[str, bool] = {}

    def is_user(filename: str) -> bool:
        hit = cache.get(filename)
        if hit is None:
            if not filename or filename.startswith("<"):
                hit = False
            else:
                norm = os.path.normcase(os.path.abspath(filename))
                if norm.startswith(internal_prefixes):
                    hit = False
                elif norm.startswith(stdlib_prefixes):
                    hit = "site-packages" in norm or "dist-packages" in norm
                else:
                    hit = True
            cache[filename] = hit
        return hit

    return is_user


def innermost_user_frame(
    frames: Sequence[Tuple[str, int, str]], is_user: Callable[[str], bool], most_recent_first: bool = True
) -> Optional[Tuple[str, int, str]]:
    """The innermost frame that ``is_user`` accepts (see :func:`user_code_filter`).

    Args:
        frames: ``(filename, lineno, function)``.
        is_user: the user-code predicate.
        most_recent_first: order of ``frames`` (faulthandler: most recent first;
            ``traceback``: most recent last).
    """
    ordered = list(frames) if most_recent_first else list(reversed(frames))
    for filename, lineno, func in ordered:
        if is_user(filename):
            return filename, lineno, func
    return None


def describe_exit(exitcode: Optional[int]) -> str:
    """How a child that sent no result died: ``"was killed by SIGSEGV"``, ``"exited with status 3 ..."``."""
    if exitcode is None:
        return "did not exit"
    if exitcode < 0:
        return f"was killed by {signal_name(exitcode)}"
    return f"exited with status {exitcode} without reporting (os._exit or a crash at exit)"


def is_cuda_error(text: str) -> bool:
    """The message looks like a CUDA error (``CUDA error: ...``, ``CUDA out of memory``, ``cudaError``)."""
    return bool(re.search(r"\bCUDA (?:error|out of memory)|cudaError|CUBLAS_STATUS|CUDNN_STATUS|device-side assert", text))


def is_out_of_memory(text: str) -> bool:
    """The message looks like an allocation failure (``MemoryError``, ``can't allocate memory``, ``out of memory``)."""
    return bool(re.search(r"MemoryError|can't allocate memory|out of memory|std::bad_alloc|Cannot allocate memory", text, re.I))


__all__ = [
    "ACCURACY_MISMATCH",
    "BACKEND_COMPILER_FAILURE",
    "DYNAMO_INTERNAL_ERROR",
    "EXPORT_FAILURE",
    "FAILURE_CLASSES",
    "FAILURE_TITLES",
    "GRAPH_BREAK",
    "IMPORT_ERROR",
    "NOT_RUN_CLASSES",
    "NO_INPUTS",
    "RECOMPILE_LIMIT",
    "RUNTIME_CRASH",
    "Repro",
    "TIMEOUT",
    "crash_frames",
    "describe_exit",
    "failure_rank",
    "fatal_error",
    "innermost_user_frame",
    "is_cuda_error",
    "is_out_of_memory",
    "next_step",
    "signal_name",
    "user_code_filter",
]
