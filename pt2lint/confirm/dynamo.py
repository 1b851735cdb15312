"""Ground truth from torch: graph breaks, input mutations, recompiles and export errors.

This is the one module in pt2lint that runs user code under torch. torch is
imported inside the functions, so the module itself imports without torch.

Where each fact comes from (measured on torch 2.13):

* Graph breaks come from Dynamo's ``graph_breaks`` logging artifact (the loggers
  ``torch._dynamo.<module>.__graph_breaks`` that ``TORCH_LOGS=graph_breaks`` turns
  on), not from ``torch._dynamo.explain``: ``explain`` does not see a break that
  makes Dynamo skip the whole frame, which happens for a break inside a
  ``for``/``while`` loop ("graph break in loop", GB7000: "Skipping the frame and
  falling back to eager") and for a break at the first op of a frame.
* The graph-break type id (``GBnnnn``) is read from the link Dynamo prints with
  every break (``.../compile-graph-break-site/gb/gbNNNN.html``); when the log has
  no link, the reason is looked up by its ``Gb_type`` text in
  ``torch/_dynamo/graph_break_registry.json``.
* Input mutations come from an eager run under a ``TorchDispatchMode``: an aten op
  whose schema marks an argument as written (``alias_info.is_write``) and whose
  argument shares storage with a forward input is an input mutation.
* Recompile reasons come from the ``recompiles`` logging artifact.
* Host operations in a graph (:func:`host_ops`) come from the FX graphs Dynamo hands
  a recording backend when the model and its inputs live on the ``meta`` device: a
  node whose value is on the CPU there was put on the host by the code itself (a
  factory without ``device=``, ``.cpu()``, ``.to("cpu")``), which is what Inductor's
  "skipping cudagraphs due to cpu device" check finds on a CUDA machine; scalar reads
  (``item``, ``tolist``, ``_local_scalar_dense``) and device synchronisations are
  recorded by their targets.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import json
import logging
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator

__all__ = [
    "HostOp",
    "host_ops",
    "CompiledCalls",
    "ExportFailure",
    "GraphBreak",
    "InputMutation",
    "Recompile",
    "compile_and_call",
    "export_error",
    "export_failure",
    "graph_breaks",
    "input_mutations",
    "recompiles",
    "capture_artifacts",
    "parse_graph_break",
    "parse_recompile",
    "reset_dynamo",
]

_THIS_FILE = os.path.normcase(os.path.abspath(__file__))
if _THIS_FILE.endswith((".pyc", ".pyo")):
    _THIS_FILE = _THIS_FILE[:-1]


@dataclass(frozen=True)
class GraphBreak:
    """One graph break that Dynamo reported while compiling and running a callable.

    Attributes:
        filename: absolute path of the innermost user frame (outside torch and
            outside this module) where the break happened. For a break inside a
            helper called from ``forward`` this is the helper's file.
        lineno: 1-based line in ``filename``.
        reason: Dynamo's one-line graph-break type text (the registry's ``Gb_type``,
            e.g. ``"Unsupported Tensor.item() call with capture_scalar_outputs=False"``).
            For a break that made Dynamo skip the frame ("graph break in loop",
            "Failed to handle graph break gracefully"), this is the type of the
            break that caused the skip, reported at that break's line.
        gb_type: registry id such as ``"GB0124"``, or None when it cannot be
            determined.
        user_stack: ``(filename, lineno, function)`` user frames, outermost to
            innermost, starting at the compiled callable; empty when the log
            carried no stack.
    """

    filename: str
    lineno: int
    reason: str
    gb_type: str | None
    user_stack: tuple[tuple[str, int, str], ...] = ()


@dataclass(frozen=True)
class InputMutation:
    """One write by an aten op into the storage of a forward input.

    Attributes:
        filename: absolute path of the innermost frame outside torch and outside
            this module when the op ran (the user line that performed the write).
        lineno: 1-based line in ``filename``.
        op: aten overload name, e.g. ``"aten.add_.Tensor"``.
        argument: the forward input written: the parameter name (``"x"``), with a
            subscript for tensors inside containers (``"caches[1]"``,
            ``"state['k']"``), or the positional index as a string when the
            signature cannot be bound.
    """

    filename: str
    lineno: int
    op: str
    argument: str


# ---------------------------------------------------------------------------
# helpers shared by the measurements


@functools.lru_cache(maxsize=None)
def _internal_prefixes() -> tuple[str, ...]:
    """Directory prefixes whose frames are never user code (torch and friends)."""
    import torch

    prefixes = [os.path.dirname(os.path.abspath(torch.__file__))]
    for name in ("functorch", "torchgen"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            prefixes.append(os.path.dirname(os.path.abspath(mod.__file__)))
    return tuple(os.path.normcase(p) + os.sep for p in prefixes)


def _abspath(filename: str) -> str:
    """Absolute path, leaving pseudo-files such as ``<stdin>`` or ``<string>`` alone."""
    return filename if filename.startswith("<") else os.path.abspath(filename)


def _is_internal(filename: str) -> bool:
    """True for frames in torch, in this module, in frozen stdlib or in FX-generated code."""
    if not filename or filename.startswith(("<frozen ", "<eval_with_key>")):
        return True
    if filename.startswith("<"):  # <stdin>, <string>: code the user ran directly
        return False
    norm = os.path.normcase(os.path.abspath(filename))
    if norm == _THIS_FILE:
        return True
    return norm.startswith(_internal_prefixes())


@functools.lru_cache(maxsize=None)
def _registry_ids_by_text() -> dict[str, str]:
    """Map each ``Gb_type`` text of ``graph_break_registry.json`` to its id."""
    import torch._dynamo

    path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    try:
        with open(path, encoding="utf-8") as fh:
            registry = json.load(fh)
    except (OSError, ValueError):
        return {}
    by_text: dict[str, str] = {}
    for gb_id in sorted(registry):
        for entry in registry[gb_id]:
            text = entry.get("Gb_type")
            if text:
                by_text.setdefault(text.strip(), gb_id)
    return by_text


class _Recorder(logging.Handler):
    """A logging handler that keeps (message, exception) of every record."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, BaseException | None]] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # a malformed record must not break the measurement
            msg = str(record.msg)
        exc = record.exc_info[1] if record.exc_info else None
        self.records.append((msg, exc))


@contextlib.contextmanager
def capture_artifacts(*artifacts: str) -> Iterator[_Recorder]:
    """Route the named torch logging artifacts into a recorder, then restore.

    This turns the artifacts on the way ``TORCH_LOGS=<artifact>`` does (the
    artifact is enabled in torch's log state and its ``<module>.__<artifact>``
    loggers are set to DEBUG) but sends the records only to the recorder: the
    loggers stop propagating while the measurement runs, so nothing is printed
    and a ``TORCH_LOGS`` setting (which makes ``torch._logging.set_logs`` a no-op)
    does not get in the way. Levels, propagation, handlers and the enabled
    artifacts are restored on exit.
    """
    # Import the modules that own the artifact loggers so that they are registered.
    import torch._dynamo.convert_frame  # noqa: F401
    import torch._dynamo.exc  # noqa: F401
    import torch._dynamo.guards  # noqa: F401
    import torch._dynamo.symbolic_convert  # noqa: F401
    import torch._logging._internal as log_internal

    recorder = _Recorder()
    state = getattr(log_internal, "log_state", None)
    saved_artifacts = set(state.artifact_names) if state is not None else set()
    saved_loggers: list[tuple[logging.Logger, int, bool, bool]] = []
    wanted = {f".__{name}" for name in artifacts}
    registry = getattr(log_internal, "log_registry", None)
    if registry is not None:
        qnames = set(registry.get_artifact_log_qnames())
    else:  # fall back to the loggers that exist, named <module>.__<artifact>
        qnames = set(logging.root.manager.loggerDict)
    for qname in sorted(qnames):
        if not any(qname.endswith(suffix) for suffix in wanted):
            continue
        logger = logging.getLogger(qname)
        saved_loggers.append((logger, logger.level, logger.propagate, logger.disabled))
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        logger.disabled = False
        logger.addHandler(recorder)
    if state is not None:
        for name in artifacts:
            state.enable_artifact(name)
    try:
        yield recorder
    finally:
        for logger, level, propagate, disabled in saved_loggers:
            logger.removeHandler(recorder)
            logger.setLevel(level)
            logger.propagate = propagate
            logger.disabled = disabled
        if state is not None:
            state.artifact_names.clear()
            state.artifact_names.update(saved_artifacts)


@contextlib.contextmanager
def _dynamo_config(config: dict[str, Any] | None) -> Iterator[None]:
    import torch._dynamo

    if config:
        with torch._dynamo.config.patch(**config):
            yield
    else:
        yield


# ---------------------------------------------------------------------------
# graph-break log parsing

_HEADER_RE = re.compile(
    r"^Graph break(?: \(user stack suppressed due to duplicate graph break\))? "
    r"in user code at (?P<file>.+):(?P<line>\d+)\s*$",
    re.M,
)
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$', re.M)
_GB_LINK_RE = re.compile(r"/gb/gb(?P<id>\d+)\.html", re.I)
_REASON_START = "Graph Break Reason:"
_REASON_END_MARKERS = ("\nUser code traceback:", "\nStack variable source attribution:")
_SKIP_MARKER = "The graph break occurred in the following user code:"


def _reason_and_id(text: str) -> tuple[str, str | None]:
    """Pick the first graph-break type text and its ``GBnnnn`` id out of a reason.

    Dynamo formats an ``Unsupported`` as ``<Gb_type>\\n  Explanation: ...\\n
    ... please visit: .../gb/gbNNNN.html``, possibly after a one-line prefix
    ("Encountered graph break when attempting to trace CALL ...") and possibly
    followed by a second break that happened while handling the first ("graph
    break in loop"). The first type is the cause, so that is the one returned.
    """
    # Only look at the first break; the one raised while handling it comes after this marker.
    text = text.split("*** While handling this graph break", 1)[0]
    lines = text.splitlines()
    gb_text = None
    for i, line in enumerate(lines):
        if line.lstrip().startswith("Explanation:"):
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            if j >= 0:
                gb_text = lines[j].strip()
            break
    if gb_text is None:
        gb_text = next((ln.strip() for ln in lines if ln.strip()), "")
    link = _GB_LINK_RE.search(text)
    if link:
        gb_id: str | None = "GB" + link.group("id").zfill(4)
    else:
        gb_id = _registry_ids_by_text().get(gb_text)
    return gb_text, gb_id


def _user_frames(text: str) -> list[tuple[str, int, str]]:
    """User frames (outermost first) from a formatted traceback in a log message.

    Frames up to and including the last frame of this module are the caller's
    (pytest, scripts); frames in torch are Dynamo's and nn.Module's plumbing.
    Both are dropped, so the stack starts at the compiled callable.
    """
    frames = [
        (_abspath(m.group("file")), int(m.group("line")), m.group("func"))
        for m in _FRAME_RE.finditer(text)
    ]
    last_own = max(
        (i for i, f in enumerate(frames) if os.path.normcase(f[0]) == _THIS_FILE), default=-1
    )
    return [f for f in frames[last_own + 1 :] if not _is_internal(f[0])]


def parse_graph_break(msg: str, exc: BaseException | None) -> GraphBreak | None:
    """Turn one ``graph_breaks`` log record into a GraphBreak (None if unparseable)."""
    header = _HEADER_RE.search(msg)
    if header:
        body = msg[header.end() :]
        start = body.find(_REASON_START)
        reason_text = body[start + len(_REASON_START) :] if start >= 0 else body
        cut = min((p for p in (reason_text.find(m) for m in _REASON_END_MARKERS) if p >= 0), default=-1)
        if cut >= 0:
            stack_text = reason_text[cut:]
            reason_text = reason_text[:cut]
        else:
            stack_text = ""
        tb_at = stack_text.find("User code traceback:")
        stack = _user_frames(stack_text[tb_at:]) if tb_at >= 0 else []
        loc: tuple[str, int] | None = (_abspath(header.group("file")), int(header.group("line")))
    elif _SKIP_MARKER in msg:
        # convert_frame.py: a break raised while converting the frame, which makes
        # Dynamo skip the whole frame; the exception carries the reason.
        stack = _user_frames(msg[msg.index(_SKIP_MARKER) :])
        reason_text = ""
        if exc is not None:
            reason_text = getattr(exc, "msg", None) or str(exc)
        loc = None
    else:
        return None

    reason, gb_id = _reason_and_id(reason_text)
    if not reason and exc is not None:
        reason = (getattr(exc, "gb_type", None) or type(exc).__name__).strip()
        gb_id = gb_id or _registry_ids_by_text().get(reason)
    if loc is None or _is_internal(loc[0]):
        if not stack:
            return None
        loc = (stack[-1][0], stack[-1][1])
    return GraphBreak(
        filename=loc[0],
        lineno=loc[1],
        reason=reason,
        gb_type=gb_id,
        user_stack=tuple(stack),
    )


def reset_dynamo() -> None:
    """Forget every compiled frame, guard and graph-break record (``torch._dynamo.reset()``,
    plus the de-duplication of graph-break log records), so the next compile starts afresh."""
    import torch._dynamo

    torch._dynamo.reset()
    try:
        from torch._dynamo.utils import reset_graph_break_dup_checker
    except ImportError:  # older or newer torch without the helper
        return
    reset_graph_break_dup_checker()


# ---------------------------------------------------------------------------
# public API


def graph_breaks(
    fn: Callable[..., Any],
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    *,
    backend: str = "eager",
    dynamic: bool | None = None,
    config: dict[str, Any] | None = None,
) -> list[GraphBreak]:
    """Compile ``fn`` with ``torch.compile``, call it once, and return its graph breaks.

    Dynamo is reset before and after, so earlier compilations do not hide breaks
    and this call leaves no compiled code behind. Breaks are read from the
    ``graph_breaks`` logging artifact (what ``TORCH_LOGS=graph_breaks`` prints), so
    they include what ``torch._dynamo.explain`` misses: a break inside a
    ``for``/``while`` loop (Dynamo logs "graph break in loop", GB7000, and skips the
    frame) and a break at the first op of a frame are reported at the line of the
    op that broke, with that op's type (not GB7000).

    A break inside a helper function called from ``forward`` is reported at the
    helper's line: with the default ``nested_graph_breaks=False``, Dynamo's log
    header ("Graph break in user code at FILE:LINE") names the innermost frame of
    the traced call stack, and the full user stack is kept in ``user_stack``. A
    break inside torch's own Python code is reported at the innermost user frame.

    Args:
        fn: an ``nn.Module`` or a plain function.
        args: positional arguments for the call.
        kwargs: keyword arguments for the call.
        backend: ``torch.compile`` backend; ``"eager"`` (default) traces without
            generating code, which is enough to find graph breaks.
        dynamic: passed to ``torch.compile(dynamic=...)``.
        config: ``torch._dynamo.config`` overrides applied with
            ``torch._dynamo.config.patch``, e.g. ``{"capture_scalar_outputs": True}``.

    Returns:
        The breaks in the order Dynamo logged them, deduplicated by
        ``(filename, lineno, reason)``; ``[]`` when the call compiled into one graph.

    Raises:
        ImportError: torch is not installed.
        Exception: whatever ``fn`` (or Dynamo, for a hard error) raises when called.
    """
    import torch

    kwargs = dict(kwargs or {})
    reset_dynamo()
    try:
        with capture_artifacts("graph_breaks") as recorder, _dynamo_config(config):
            compiled = torch.compile(fn, backend=backend, dynamic=dynamic)
            compiled(*args, **kwargs)
    finally:
        reset_dynamo()

    found: list[GraphBreak] = []
    seen: set[tuple[str, int, str]] = set()
    for msg, exc in recorder.records:
        gb = parse_graph_break(msg, exc)
        if gb is None:
            continue
        key = (gb.filename, gb.lineno, gb.reason)
        if key not in seen:
            seen.add(key)
            found.append(gb)
    return found


def _named_inputs(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
    """Name each positional/keyword input after the forward (or function) parameter."""
    target = getattr(fn, "forward", fn)
    named: list[tuple[str, Any]] = []
    try:
        bound = inspect.signature(target).bind(*args, **kwargs)
    except (TypeError, ValueError):
        named.extend((str(i), a) for i, a in enumerate(args))
        named.extend((k, v) for k, v in kwargs.items())
        return named
    params = inspect.signature(target).parameters
    for name, value in bound.arguments.items():
        kind = params[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            named.extend((f"{name}[{i}]", v) for i, v in enumerate(value))
        elif kind is inspect.Parameter.VAR_KEYWORD:
            named.extend((k, v) for k, v in value.items())
        else:
            named.append((name, value))
    return named


def _flatten_tensors(name: str, value: Any, depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Yield (name, tensor) for a tensor or tensors inside lists/tuples/dicts and the fields of
    dataclass instances (``batch.tokens``)."""
    import dataclasses

    import torch

    if isinstance(value, torch.Tensor):
        yield name, value
    elif depth < 4 and isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _flatten_tensors(f"{name}[{i}]", item, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten_tensors(f"{name}[{key!r}]", item, depth + 1)
    elif depth < 4 and dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _flatten_tensors(f"{name}.{f.name}", getattr(value, f.name, None), depth + 1)


def _storage_ptr(tensor: Any) -> int:
    try:
        return int(tensor.untyped_storage().data_ptr())
    except Exception:  # sparse, meta or other storage-less tensors
        return 0


def _user_location() -> tuple[str, int] | None:
    """Innermost frame of the current Python stack outside torch and this module."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _is_internal(filename):
            return _abspath(filename), frame.f_lineno
        frame = frame.f_back
    return None


def input_mutations(
    fn: Callable[..., Any], args: tuple = (), kwargs: dict[str, Any] | None = None
) -> list[InputMutation]:
    """Run ``fn`` eagerly and return every aten-level write into a forward input.

    The call runs under a ``TorchDispatchMode``. For each aten op, every argument
    whose schema ``alias_info.is_write`` is set (the ``(a!)`` annotation: in-place
    ``self``, ``out=`` tensors, ``inplace=True`` activations, ``copy_`` from
    ``x[i] = v``) is compared by ``untyped_storage().data_ptr()`` with the tensors
    passed in (also those inside list/tuple/dict arguments). A match is an input
    mutation; views and aliases of an input share its storage and so count, while
    a clone or a fresh tensor does not. Note that the call really mutates the
    tensors passed in. Ops inside the branches of an eager ``torch.cond`` (which
    compiles itself) and inside other ``torch.compile``d code are not seen; such
    branches may not mutate their inputs anyway.

    Args:
        fn: an ``nn.Module`` (inputs named after ``forward``'s parameters) or a function.
        args: positional arguments for the call.
        kwargs: keyword arguments for the call.

    Returns:
        Mutations in execution order, deduplicated by (filename, lineno, op, argument),
        located at the innermost Python frame outside torch and this module.

    Raises:
        ImportError: torch is not installed.
        Exception: whatever ``fn`` raises when called eagerly.
    """
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    kwargs = dict(kwargs or {})
    owner_by_storage: dict[int, str] = {}
    for name, value in _named_inputs(fn, tuple(args), kwargs):
        for tname, tensor in _flatten_tensors(name, value):
            ptr = _storage_ptr(tensor)
            if ptr:
                owner_by_storage.setdefault(ptr, tname)

    found: list[InputMutation] = []
    seen: set[tuple[str, int, str, str]] = set()

    def written_values(func: Any, op_args: tuple, op_kwargs: dict[str, Any]) -> Iterator[Any]:
        schema = getattr(func, "_schema", None)
        if schema is None:  # a higher-order operator such as torch.cond
            return
        for index, sarg in enumerate(schema.arguments):
            alias = sarg.alias_info
            if alias is None or not alias.is_write:
                continue
            if not sarg.kwarg_only and index < len(op_args):
                yield op_args[index]
            elif sarg.name in op_kwargs:
                yield op_kwargs[sarg.name]

    class _WriteWatcher(TorchDispatchMode):
        # Eager torch.cond compiles itself; a mode that stays on during compilation
        # makes that fail, so step aside while torch.compile traces and let
        # higher-order operators pass through __torch_dispatch__ unchanged.
        supports_higher_order_operators = True

        @classmethod
        def ignore_compile_internals(cls) -> bool:
            return True

        def __torch_dispatch__(self, func, types, op_args=(), op_kwargs=None):  # type: ignore[override]
            op_kwargs = op_kwargs or {}
            for value in written_values(func, op_args, op_kwargs):
                for _, tensor in _flatten_tensors("", value):
                    owner = owner_by_storage.get(_storage_ptr(tensor))
                    if owner is None:
                        continue
                    loc = _user_location()
                    if loc is None:
                        continue
                    key = (loc[0], loc[1], str(func), owner)
                    if key not in seen:
                        seen.add(key)
                        found.append(InputMutation(loc[0], loc[1], str(func), owner))
            return func(*op_args, **op_kwargs)

    if owner_by_storage:
        with _WriteWatcher():
            fn(*args, **kwargs)
    else:
        fn(*args, **kwargs)
    return found


def recompiles(fn: Callable[..., Any], calls: list[tuple], *, backend: str = "eager") -> list[str]:
    """Compile ``fn`` once, call it with each argument tuple, return the recompile reasons.

    Reasons come from the ``recompiles`` logging artifact (``TORCH_LOGS=recompiles``):
    one string per recompilation naming the recompiled function and the guard
    that failed for each cached entry, newest first, e.g.
    ``"forward (/m.py:10): 0/1: self.step == 1; 0/0: self.step == 0"``.
    Dynamo is reset before and after.

    Args:
        fn: an ``nn.Module`` or a function.
        calls: argument tuples, one per call, in order.
        backend: ``torch.compile`` backend.

    Returns:
        The reasons in the order they happened; ``[]`` when no call recompiled.

    Raises:
        ImportError: torch is not installed.
        Exception: whatever a call raises.
    """
    import torch

    reset_dynamo()
    try:
        with capture_artifacts("recompiles") as recorder:
            compiled = torch.compile(fn, backend=backend)
            for call_args in calls:
                compiled(*call_args)
    finally:
        reset_dynamo()
    return [r for r in (_recompile_reason(msg) for msg, _ in recorder.records) if r]


_RECOMPILE_HEAD_RE = re.compile(r"Recompiling function (?P<func>\S+) in (?P<where>.+?)\s*$", re.M)
_GUARD_FAILURE_RE = re.compile(r"^\s*- (?P<entry>\d+/\d+): (?P<guard>.*)$", re.M)


def _recompile_reason(msg: str) -> str:
    """``"forward (/m.py:8): 0/1: self.n == 1; 0/0: self.n == 0"`` from a ``recompiles`` record.

    Dynamo lists one failed guard per cache entry, newest entry first; the
    source comment it appends to each guard (``# self.n += 1 # file:line``) is dropped.
    """
    head = _RECOMPILE_HEAD_RE.search(msg)
    failures = []
    for m in _GUARD_FAILURE_RE.finditer(msg):
        guard = re.split(r"\s+#\s", m.group("guard"), maxsplit=1)[0].strip()
        failures.append(f"{m.group('entry')}: {guard}")
    if head is None:
        return " ".join(msg.split())
    where = f"{head.group('func')} ({head.group('where')})"
    return f"{where}: {'; '.join(failures)}" if failures else where


def export_error(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any] | None = None) -> str | None:
    """Try ``torch.export.export`` and return None on success or a one-line error.

    A plain function is wrapped in an ``nn.Module`` first, as ``torch.export``
    only takes modules. Dynamo is reset before and after.

    Args:
        fn: an ``nn.Module`` or a function.
        args: positional example inputs.
        kwargs: keyword example inputs.

    Returns:
        None when export succeeds, else ``"<ExceptionType>: <first line of message>"``.

    Raises:
        ImportError: torch is not installed.
    """
    failure = export_failure(fn, args, kwargs)
    return None if failure is None else failure.message


@dataclass(frozen=True)
class ExportFailure:
    """Why ``torch.export.export`` rejected a module, and the user line it stopped at.

    Attributes:
        message: ``"<ExceptionType>: <first line of message>"`` (what :func:`export_error` returns).
        filename: absolute path of the user line that raised: the innermost
            traceback frame outside torch and this module, else the last
            ``File "...", line N`` that the message quotes (export's
            "The following call raised this error"); None when neither names one.
        lineno: 1-based line in ``filename``, or None.
    """

    message: str
    filename: str | None = None
    lineno: int | None = None


_QUOTED_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _export_location(exc: BaseException) -> tuple[str | None, int | None]:
    """The user line an export error points at (see :class:`ExportFailure`)."""
    import traceback

    user = [
        (f.filename, f.lineno)
        for f in traceback.extract_tb(exc.__traceback__)
        if f.lineno and not _is_internal(f.filename)
    ]
    if user:
        return _abspath(user[-1][0]), int(user[-1][1])
    quoted = [
        (m.group("file"), int(m.group("line")))
        for m in _QUOTED_FRAME_RE.finditer(str(exc))
        if not _is_internal(m.group("file"))
    ]
    if quoted:
        return _abspath(quoted[-1][0]), quoted[-1][1]
    return None, None


def export_failure(
    fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any] | None = None
) -> ExportFailure | None:
    """Try ``torch.export.export`` (non-strict, the 2.13 default); None on success.

    Like :func:`export_error`, but also names the user line the failure came
    from, so a front end can put it next to a static finding. Measured on torch
    2.13: ``.numpy()`` fails inside the user frame (``RuntimeError: .numpy() is
    not supported for tensor subclasses.``, located by the traceback), while a
    data-dependent ``assert`` fails in ``symbolic_shapes`` and is located by the
    ``File "...", line N`` the message quotes.

    Args:
        fn: an ``nn.Module`` or a function (wrapped in a module first).
        args: positional example inputs.
        kwargs: keyword example inputs.

    Returns:
        None when export succeeds, else an :class:`ExportFailure`.

    Raises:
        ImportError: torch is not installed.
    """
    import torch

    if isinstance(fn, torch.nn.Module):
        module = fn
    else:

        class _Wrapped(torch.nn.Module):
            def forward(self, *a: Any, **kw: Any) -> Any:
                return fn(*a, **kw)

        module = _Wrapped()

    reset_dynamo()
    try:
        torch.export.export(module, tuple(args), kwargs=dict(kwargs) if kwargs else None)
    except Exception as exc:  # any failure is the answer, not an error of ours
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
        message = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        filename, lineno = _export_location(exc)
        return ExportFailure(message, filename, lineno)
    finally:
        reset_dynamo()
    return None


# ---------------------------------------------------------------------------
# one compilation, several calls: what confirm mode measures


@dataclass(frozen=True)
class Recompile:
    """One recompilation, as the ``recompiles`` logging artifact reported it.

    Attributes:
        reason: the same text :func:`recompiles` returns, e.g.
            ``"forward (/m.py:10): 0/0: self.step == 0"``.
        filename: absolute path of the innermost user frame of the failed
            guard's source (Dynamo's "User stack trace" under the guard), or None.
        lineno: 1-based line in ``filename``, or None.
        tensor_only: every failed guard is about a tensor's metadata (``"tensor 'x'
            size mismatch"``, stride, dtype, device, ``requires_grad``,
            ``___check_tensors``): the expected one-off recompile after an input
            changes shape (dynamic shapes) or a frame is entered with a different
            kind of tensor, not a hazard that repeats with every new value.
        call: 0-based index of the call that recompiled (:func:`compile_and_call`), or None.
    """

    reason: str
    filename: str | None = None
    lineno: int | None = None
    tensor_only: bool = False
    call: int | None = None


@dataclass
class CompiledCalls:
    """What :func:`compile_and_call` saw.

    Attributes:
        graph_breaks: one list per call made, each break listed under the first
            call that logged it (deduplicated by ``(filename, lineno, reason)``).
        recompiles: recompilations in order.
        recompile_limit_hit: Dynamo gave up recompiling a frame ("hit
            config.recompile_limit") and ran it eagerly from then on.
        outputs: the return value of each call that finished.
        error: the exception a call raised (calls stop there), or None.
        failed_call: 0-based index of that call, or None.
        graphs: after each call made, how many graphs Dynamo had compiled so far
            (``torch._dynamo.utils.counters["stats"]["unique_graphs"]``, all frames).
    """

    graph_breaks: list[list[GraphBreak]]
    recompiles: list[Recompile]
    recompile_limit_hit: bool
    outputs: list[Any]
    error: BaseException | None = None
    failed_call: int | None = None
    graphs: list[int] = dataclasses.field(default_factory=list)

    def all_graph_breaks(self) -> list[GraphBreak]:
        """Every break of every call, in order."""
        return [gb for per_call in self.graph_breaks for gb in per_call]


_RECOMPILE_STACK_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in ')
_TENSOR_GUARD_RE = re.compile(r"^tensor '[^']*' .*mismatch|___check_tensors|check_tensor", re.I)


def is_tensor_guard(guard: str) -> bool:
    """Whether one failed guard is about a tensor's metadata (size, stride, dtype, ...), as
    Dynamo words it in the ``recompiles`` log (``tensor 'x' size mismatch at index 0``)."""
    return bool(_TENSOR_GUARD_RE.search(guard.strip()))


def parse_recompile(msg: str) -> Recompile | None:
    """A :class:`Recompile` from one ``recompiles`` record (None when it carries no reason)."""
    reason = _recompile_reason(msg)
    if not reason:
        return None
    frames = [
        (_abspath(m.group("file")), int(m.group("line")))
        for m in _RECOMPILE_STACK_RE.finditer(msg)
        if not _is_internal(m.group("file"))
    ]
    guards = [m.group("guard") for m in _GUARD_FAILURE_RE.finditer(msg)]
    tensor_only = bool(guards) and all(_TENSOR_GUARD_RE.search(g.strip()) for g in guards)
    filename, lineno = frames[0] if frames else (None, None)
    return Recompile(reason, filename, lineno, tensor_only)


class _LimitWatcher(logging.Handler):
    """Notices Dynamo's "hit config.recompile_limit" warning."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.hit = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:
            msg = str(record.msg)
        if "recompile_limit" in msg or "cache_size_limit" in msg:
            self.hit = True


def compile_and_call(
    fn: Callable[..., Any],
    calls: list[tuple[tuple, dict[str, Any]]],
    *,
    backend: str = "eager",
    dynamic: bool | None = None,
    config: dict[str, Any] | None = None,
    before_call: Callable[[int], None] | None = None,
) -> CompiledCalls:
    """Compile ``fn`` once, call it with each ``(args, kwargs)``, and record what Dynamo did.

    One ``torch.compile`` serves all calls, so the second call with
    differently-shaped inputs shows the recompiles a user would get. Graph
    breaks are read from the ``graph_breaks`` artifact exactly as in
    :func:`graph_breaks` (so the first call reports the same breaks), recompiles
    from the ``recompiles`` artifact as in :func:`recompiles`, and the
    recompile limit from Dynamo's "hit config.recompile_limit" warning
    (``torch._dynamo.convert_frame``). Dynamo is reset before and after.

    Unlike the other functions here, an exception raised by a call does not
    propagate: it is returned in ``error`` with what was measured up to then.

    Args:
        fn: an ``nn.Module`` or a function.
        calls: ``(args, kwargs)`` per call, in order.
        backend: ``torch.compile`` backend (``"eager"``, ``"aot_eager"``, ``"inductor"``).
        dynamic: passed to ``torch.compile(dynamic=...)``.
        config: ``torch._dynamo.config`` overrides.
        before_call: called with the call's index before each call (to reseed RNGs).

    Returns:
        A :class:`CompiledCalls`.

    Raises:
        ImportError: torch is not installed.
    """
    import torch

    reset_dynamo()
    from torch._dynamo.utils import counters

    graphs_before = counters["stats"]["unique_graphs"]
    graphs: list[int] = []
    per_call: list[list[GraphBreak]] = []
    recompiled: list[Recompile] = []
    outputs: list[Any] = []
    error: BaseException | None = None
    failed: int | None = None
    seen: set[tuple[str, int, str]] = set()
    watcher = _LimitWatcher()
    limit_logger = logging.getLogger("torch._dynamo.convert_frame")
    limit_logger.addHandler(watcher)
    try:
        with capture_artifacts("graph_breaks", "recompiles") as recorder, _dynamo_config(config):
            compiled = torch.compile(fn, backend=backend, dynamic=dynamic)
            for index, (call_args, call_kwargs) in enumerate(calls):
                if before_call is not None:
                    before_call(index)
                start = len(recorder.records)
                try:
                    outputs.append(compiled(*call_args, **dict(call_kwargs or {})))
                except Exception as exc:  # the caller classifies it
                    error, failed = exc, index
                graphs.append(counters["stats"]["unique_graphs"] - graphs_before)
                found: list[GraphBreak] = []
                for msg, exc in recorder.records[start:]:
                    if msg.lstrip().startswith("Recompiling"):
                        rec = parse_recompile(msg)
                        if rec is not None:
                            recompiled.append(dataclasses.replace(rec, call=index))
                        continue
                    gb = parse_graph_break(msg, exc)
                    if gb is None:
                        continue
                    key = (gb.filename, gb.lineno, gb.reason)
                    if key not in seen:
                        seen.add(key)
                        found.append(gb)
                per_call.append(found)
                if error is not None:
                    break
    finally:
        limit_logger.removeHandler(watcher)
        reset_dynamo()
    limit_hit = watcher.hit or type(error).__name__ in ("FailOnRecompileLimitHit", "RecompileLimitExceeded")
    return CompiledCalls(per_call, recompiled, limit_hit, outputs, error, failed, graphs)


@dataclass(frozen=True)
class HostOp:
    """One node of a Dynamo graph that runs on, or waits for, the host (see :func:`host_ops`).

    Attributes:
        filename, lineno: the innermost user frame the node was traced from.
        kind: ``"cpu-tensor"`` (the node's value is a CPU tensor although every input is on
            another device), ``"scalar-read"`` (``item``/``tolist``: the value is copied to
            Python) or ``"synchronize"`` (a device synchronisation).
        target: the node's target, as text.
    """

    filename: str
    lineno: int
    kind: str
    target: str


_SCALAR_READS = frozenset({"item", "tolist", "_local_scalar_dense"})


def _node_location(node: Any) -> tuple[str, int] | None:
    trace = node.meta.get("stack_trace") or ""
    found = re.findall(r'File "([^"]+)", line (\d+)', trace)
    for filename, line in reversed(found):
        if not _is_internal(filename):
            return _abspath(filename), int(line)
    return None


def _to_meta(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.to("meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_to_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_meta(v) for k, v in value.items()}
    return value


def host_ops(
    fn: Callable[..., Any],
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    *,
    config: dict[str, Any] | None = None,
) -> list[HostOp]:
    """Trace ``fn`` with Dynamo on the ``meta`` device and return the nodes that put work on the host.

    The model (a deep copy, for an ``nn.Module``) and the tensors among ``args`` are moved to
    the ``meta`` device, so every tensor the code derives from them is on ``meta``; a node
    whose value is a CPU tensor was created on the host by the code itself.  The backend
    only records the graphs (nothing runs), so a device synchronisation can be traced on a
    machine without a GPU.  Dynamo is reset before and after.

    Args:
        fn: an ``nn.Module`` or a plain function.
        args, kwargs: the call's arguments (CPU tensors are fine: they are moved).
        config: ``torch._dynamo.config`` overrides, e.g. ``{"capture_scalar_outputs": True}``.

    Returns:
        The host operations in graph order (an empty list for a graph that stays on the device).

    Raises:
        ImportError: torch is not installed.
        Exception: whatever Dynamo raises while tracing.
    """
    import copy

    import torch

    graphs: list[Any] = []

    def record(gm: Any, example_inputs: Any) -> Callable[..., Any]:
        graphs.append(gm)

        def run(*_a: Any, **_k: Any) -> Any:
            raise _Traced()

        return run

    target = fn
    if isinstance(fn, torch.nn.Module):
        target = copy.deepcopy(fn).to("meta")
    meta_args = _to_meta(tuple(args))
    meta_kwargs = _to_meta(dict(kwargs or {}))
    reset_dynamo()
    try:
        with _dynamo_config(config):
            try:
                torch.compile(target, backend=record)(*meta_args, **meta_kwargs)
            except _Traced:
                pass
    finally:
        reset_dynamo()
    out: list[HostOp] = []
    for gm in graphs:
        for node in gm.graph.nodes:
            if node.op not in ("call_function", "call_method"):
                continue
            where = _node_location(node)
            if where is None:
                continue
            name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", str(node.target))
            value = node.meta.get("example_value")
            if name in _SCALAR_READS:
                kind = "scalar-read"
            elif "synchronize" in str(name):
                kind = "synchronize"
            elif isinstance(value, torch.Tensor) and value.device.type == "cpu":
                kind = "cpu-tensor"
            else:
                continue
            out.append(HostOp(where[0], where[1], kind, str(name)))
    return out


class _Traced(Exception):
    """Raised by the recording backend's compiled function: the graph was recorded, nothing runs."""
