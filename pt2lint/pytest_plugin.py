"""A pytest plugin that fails a test when ``torch.compile`` breaks the graph (or recompiles).

Registered as the ``pytest11`` entry point ``pt2lint``, so installing pt2lint
with torch is enough. It offers:

* :func:`assert_no_graph_breaks` -- compile a module or function, call it, and
  raise :class:`GraphBreakError` naming every graph break;
* the marker ``@pytest.mark.no_graph_breaks(backend=..., allow_recompiles=...,
  include_library_frames=...)`` -- watch every ``torch.compile`` call made while
  the test runs and fail the test on a break;
* the fixture ``pt2_compile`` -- ``torch.compile`` with the marker's backend
  (``"eager"`` by default), which also turns the watch on for its test.

What Dynamo did comes from :mod:`pt2lint.confirm.dynamo`, the collector confirm
mode uses: graph breaks from Dynamo's ``graph_breaks`` logging artifact (which,
unlike ``torch._dynamo.explain``, also sees a break that makes Dynamo skip a
whole frame), each with the user stack Dynamo logs and the graph-break registry
id (``GB0124``) from the link Dynamo prints or from
``torch/_dynamo/graph_break_registry.json``; recompiles from the ``recompiles``
artifact. Each break is named at its innermost frame in the user's code: frames
in torch, pt2lint, the standard library and installed packages
(``site-packages``) are skipped unless ``include_library_frames=True``. Its
pt2lint rule is the static finding at that line, found the way confirm mode
joins a break to a finding: the files on the break's stack are linted with
their project's settings, and a graph-break finding whose line or statement
holds the break's line is its rule. A break no finding covers is what confirm
mode reports as ``PTC090`` (dynamic-only).

Dynamo is reset (``torch._dynamo.reset()``) before and after each check, so
compiled code and the duplicate-break filter do not leak between tests. torch
is imported only when a check runs: loading the plugin costs a ``pytest``
session nothing and works without torch.
"""

from __future__ import annotations

import contextlib
import functools
import linecache
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pytest

__all__ = [
    "BreakReport",
    "CompileReport",
    "GraphBreakError",
    "RecompileReport",
    "assert_no_graph_breaks",
    "check_compile",
]

MARKER = "no_graph_breaks"
_MARKER_OPTIONS = ("backend", "allow_recompiles", "include_library_frames")
_GB_PAGE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{num}.html"
_BREAK_KINDS = frozenset({"break"})
_RECOMPILE_KINDS = frozenset({"recompile"})

Frame = Tuple[str, int, str]


class GraphBreakError(AssertionError):
    """``torch.compile`` broke the graph (or recompiled, where that was not allowed).

    The message lists each break at its innermost user frame with Dynamo's GB id,
    Dynamo's reason and pt2lint's rule. The structured facts are on ``report``.
    """

    def __init__(self, message: str, report: "Optional[CompileReport]" = None) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class BreakReport:
    """One graph break, placed in the user's code.

    Attributes:
        filename: absolute path of the innermost frame in user code (or, with
            ``include_library_frames``, the innermost frame outside torch).
        lineno: 1-based line in ``filename``.
        function: the function name of that frame ("" when Dynamo's log gave none).
        reason: Dynamo's graph-break type text, e.g.
            ``"Unsupported Tensor.item() call with capture_scalar_outputs=False"``.
        gb_type: graph-break registry id such as ``"GB0124"``, or None.
        rule: the code of pt2lint's finding at that line (``"PTC101"``), or None
            when the static pass has none there (confirm mode's ``PTC090``).
        rule_name: that rule's name (``"tensor-item"``), or None.
        predicted_by: codes of the rules whose spec predicts ``gb_type``, for a
            break with no finding at its line.
        callers: user frames from the compiled callable down to the caller of
            ``filename:lineno``, outermost first.
        library_frame: the innermost frame outside torch when it is not user code
            (the break happened inside an installed library), else None.
        in_user_code: False when no frame of the break's stack is user code (then
            ``filename:lineno`` is the innermost frame outside torch).
    """

    filename: str
    lineno: int
    function: str
    reason: str
    gb_type: Optional[str]
    rule: Optional[str] = None
    rule_name: Optional[str] = None
    predicted_by: Tuple[str, ...] = ()
    callers: Tuple[Frame, ...] = ()
    library_frame: Optional[Frame] = None
    in_user_code: bool = True


@dataclass(frozen=True)
class RecompileReport:
    """One recompilation.

    Attributes:
        reason: Dynamo's recompile reason as :func:`pt2lint.confirm.dynamo.recompiles`
            words it: the recompiled function and the guard that failed per cache entry.
        filename: absolute path of the user line the failed guard came from, or None.
        lineno: 1-based line in ``filename``, or None.
        call: 0-based index of the call that recompiled, or None (marker mode).
        tensor_only: every failed guard is about a tensor's size, stride, dtype or
            device: an input changed shape or kind (``dynamic=True`` avoids the
            shape case), not a value that changes on every call.
        after_break: ``(filename, line)`` of the graph break whose resume function
            recompiled, or None.
        rule: the code of pt2lint's recompile finding at the guard's line, or None.
        rule_name: that rule's name, or None.
    """

    reason: str
    filename: Optional[str] = None
    lineno: Optional[int] = None
    call: Optional[int] = None
    tensor_only: bool = False
    after_break: Optional[Tuple[str, int]] = None
    rule: Optional[str] = None
    rule_name: Optional[str] = None


@dataclass(frozen=True)
class CompileReport:
    """What Dynamo did to one compiled callable (or during one marked test).

    Attributes:
        subject: what was compiled, as the message's headline names it:
            ``"torch.compile(backend='eager') of Model"`` for :func:`assert_no_graph_breaks`,
            ``"torch.compile calls in test_x"`` for a marked test.
        backend: the ``torch.compile`` backend as shown in messages: ``"'eager'"``, or a
            backend function's name.
        breaks: graph breaks, in the order Dynamo logged them.
        recompiles: recompilations, in order.
        notes: remarks on how the facts were obtained (e.g. a pt2lint config error
            that kept breaks from being matched to rules).
    """

    subject: str
    backend: str
    breaks: Tuple[BreakReport, ...]
    recompiles: Tuple[RecompileReport, ...]
    notes: Tuple[str, ...] = ()

    def failed(self, allow_recompiles: bool = True) -> bool:
        """True when there is a graph break, or a recompile and ``allow_recompiles`` is False."""
        return bool(self.breaks) or (not allow_recompiles and bool(self.recompiles))

    def format(self, allow_recompiles: bool = True) -> str:
        """The failure message: a headline, then each break and recompile in a few lines.

        Paths under the working directory are shown relative to it.
        """
        parts = []
        if self.breaks:
            parts.append(_plural(len(self.breaks), "graph break"))
        if self.recompiles:
            parts.append(_plural(len(self.recompiles), "recompile") + (" (allowed)" if allow_recompiles else ""))
        head = f"{self.subject}: " + (", ".join(parts) or "no graph break")
        lines = [head]
        for i, gb in enumerate(self.breaks, 1):
            lines.append("")
            lines.extend(_format_break(i, gb))
        for i, rc in enumerate(self.recompiles, 1):
            lines.append("")
            lines.extend(_format_recompile(i, rc))
        for note in self.notes:
            lines += ["", f"note: {note}"]
        lines += ["", "Dynamo's own log of these: rerun with TORCH_LOGS=graph_breaks,recompiles"]
        return "\n".join(lines)


def _backend_name(backend: Any) -> str:
    """``"'eager'"`` for a backend name, the function's name for a backend function."""
    if isinstance(backend, str):
        return repr(backend)
    return getattr(backend, "__name__", None) or repr(backend)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _display(path: Optional[str]) -> str:
    """``path`` relative to the working directory when it lies under it, else unchanged."""
    if not path or path.startswith("<"):
        return path or "?"
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith(os.pardir) else rel


def _source_line(path: str, lineno: int) -> str:
    return linecache.getline(path, lineno).strip()


def _gb_text(gb_type: Optional[str]) -> str:
    if not gb_type:
        return "no GB id"
    digits = gb_type[2:] if gb_type.upper().startswith("GB") else gb_type
    return f"{gb_type}, {_GB_PAGE.format(num=digits)}"


def _format_break(index: int, gb: BreakReport) -> List[str]:
    where = f"{_display(gb.filename)}:{gb.lineno}" + (f" in {gb.function}" if gb.function else "")
    lines = [f"graph break {index}: {where}"]
    text = _source_line(gb.filename, gb.lineno)
    if text:
        lines.append(f"    {text}")
    lines.append(f"  Dynamo: {gb.reason} ({_gb_text(gb.gb_type)})")
    if gb.rule:
        lines.append(f"  pt2lint: {gb.rule} {gb.rule_name or ''}".rstrip() + f" (`pt2lint rule {gb.rule}` explains it)")
    else:
        hint = f"; {gb.gb_type} is predicted by {', '.join(gb.predicted_by)}" if gb.predicted_by else ""
        lines.append(f"  pt2lint: PTC090 dynamic-only (no pt2lint finding at this line{hint})")
    if gb.library_frame is not None:
        lib = gb.library_frame
        lines.append(f"  inside library code at {_display(lib[0])}:{lib[1]}" + (f" in {lib[2]}" if lib[2] else ""))
    if not gb.in_user_code:
        lines.append("  (no frame of this break is in your code; shown at the innermost frame outside torch)")
    for filename, lineno, func in reversed(gb.callers):
        lines.append(f"  called from {_display(filename)}:{lineno}" + (f" in {func}" if func else ""))
    return lines


def _format_recompile(index: int, rc: RecompileReport) -> List[str]:
    when = f" (call {rc.call + 1})" if rc.call is not None else ""
    lines = [f"recompile {index}{when}: {rc.reason}"]
    if rc.filename and rc.lineno:
        lines.append(f"  guard from {_display(rc.filename)}:{rc.lineno}")
    if rc.after_break is not None:
        lines.append(f"  in the code resumed after the graph break at {_display(rc.after_break[0])}:{rc.after_break[1]}")
    if rc.tensor_only:
        lines.append("  an input's shape, stride, dtype or device changed (dynamic=True avoids shape recompiles)")
    if rc.rule:
        lines.append(f"  pt2lint: {rc.rule} {rc.rule_name or ''}".rstrip())
    return lines


# ---------------------------------------------------------------------------
# which frames are the user's


@functools.lru_cache(maxsize=1)
def _user_filter() -> Callable[[str], bool]:
    """True for user code: not torch, pt2lint, the standard library or an installed package."""
    from pt2lint.confirm.outcome import user_code_filter

    base = user_code_filter()

    def is_user(filename: str) -> bool:
        if not base(filename):
            return False
        parts = os.path.normcase(os.path.abspath(filename)).split(os.sep)
        return "site-packages" not in parts and "dist-packages" not in parts

    return is_user


def _place(gb: Any, include_library_frames: bool) -> Tuple[Frame, Tuple[Frame, ...], Optional[Frame], bool]:
    """(where to name the break, the user frames above it, the library frame it is inside, in user code).

    ``gb`` is a :class:`pt2lint.confirm.dynamo.GraphBreak`: its location is the
    innermost frame outside torch and its ``user_stack`` runs from the compiled
    callable inward.
    """
    frames: List[Frame] = [tuple(f) for f in gb.user_stack]  # type: ignore[misc]
    if not frames or (os.path.normcase(frames[-1][0]), frames[-1][1]) != (os.path.normcase(gb.filename), gb.lineno):
        frames.append((gb.filename, gb.lineno, ""))
    innermost = frames[-1]
    is_user = _user_filter()
    if include_library_frames:
        return innermost, tuple(frames[:-1]), None, any(is_user(f[0]) for f in frames)
    for i in range(len(frames) - 1, -1, -1):
        if is_user(frames[i][0]):
            callers = tuple(f for f in frames[:i] if is_user(f[0]))
            return frames[i], callers, (innermost if i != len(frames) - 1 else None), True
    return innermost, (), None, False


# ---------------------------------------------------------------------------
# pt2lint's rule for a break: the static finding at its line (as confirm mode joins them)


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


class _StaticFindings:
    """Lints the files a break's stack passes through, once each, and finds the finding at a line.

    Linting the outermost file (the compiled ``forward``) reaches helpers in other
    modules, as Dynamo does, so a break in a helper meets the finding the static
    pass reports there through the call chain.
    """

    def __init__(self) -> None:
        self._linted: set = set()
        self._by_line: Dict[Tuple[str, int], List[Any]] = {}
        self.notes: List[str] = []

    def _settings(self, path: str) -> Any:
        from pt2lint.config import ConfigError, load_project

        try:
            return load_project([path]).settings
        except ConfigError as exc:
            note = f"pt2lint's config for {_display(path)} is invalid ({exc}); its default rules were used"
            if note not in self.notes:
                self.notes.append(note)
            return load_project([path], isolated=True).settings

    def _lint(self, path: str) -> None:
        real = _real(path)
        if real in self._linted or path.startswith("<") or not os.path.isfile(path):
            return
        self._linted.add(real)
        from pt2lint.confirm.join import lines_of
        from pt2lint.engine import lint_path

        try:
            result = lint_path(path, self._settings(path))
        except Exception as exc:  # the rule is a bonus: a lint problem must not hide the break
            self.notes.append(f"pt2lint could not lint {_display(path)}: {type(exc).__name__}: {exc}")
            return
        if result.error:
            self.notes.append(f"pt2lint could not lint {result.error}")
        for d in result.diagnostics:
            target = _real(d.filename)
            for line in lines_of(d):
                found = self._by_line.setdefault((target, line), [])
                if d not in found:
                    found.append(d)

    def finding_at(self, stack_files: Sequence[str], filename: str, lineno: int, kinds: frozenset) -> Any:
        """The first finding of ``kinds`` covering ``filename:lineno``, linting ``stack_files`` in turn."""
        from pt2lint.confirm.join import KIND_OF_CATEGORY

        real = _real(filename)
        for path in list(dict.fromkeys(stack_files)) + [filename]:
            self._lint(path)
            found = self._by_line.get((real, lineno), [])
            exact = [d for d in found if KIND_OF_CATEGORY.get(d.category) in kinds and d.start.line == lineno]
            near = [d for d in found if KIND_OF_CATEGORY.get(d.category) in kinds]
            if exact or near:
                return (exact or near)[0]
        return None


@functools.lru_cache(maxsize=1)
def _rules_by_gb() -> Dict[str, Tuple[str, ...]]:
    """GB id -> codes of the rules whose spec lists it in ``gb_types``."""
    from pt2lint.specs import load_specs

    by_gb: Dict[str, List[str]] = {}
    for code, spec in load_specs().items():
        for gb in spec.gb_types:
            by_gb.setdefault(gb, []).append(code)
    return {gb: tuple(codes) for gb, codes in by_gb.items()}


def _build_report(subject: str, backend: Any, raw_breaks: Sequence[Any], raw_recompiles: Sequence[Any],
                  include_library_frames: bool) -> CompileReport:
    """Place the breaks in user code and give each break and recompile its pt2lint rule."""
    from pt2lint.confirm.join import RESUME_RE

    static = _StaticFindings()
    breaks: List[BreakReport] = []
    seen = set()
    for gb in raw_breaks:
        (filename, lineno, function), callers, library, in_user = _place(gb, include_library_frames)
        key = (_real(filename), lineno, gb.reason)
        if key in seen:  # two library breaks under one user line
            continue
        seen.add(key)
        stack_files = [f[0] for f in callers] + [filename]
        d = static.finding_at(stack_files, filename, lineno, _BREAK_KINDS)
        breaks.append(
            BreakReport(
                filename=filename,
                lineno=lineno,
                function=function,
                reason=gb.reason,
                gb_type=gb.gb_type,
                rule=d.code if d is not None else None,
                rule_name=d.name if d is not None else None,
                predicted_by=() if d is not None else _rules_by_gb().get(gb.gb_type or "", ()),
                callers=callers,
                library_frame=library,
                in_user_code=in_user,
            )
        )
    recompiles: List[RecompileReport] = []
    for rc in raw_recompiles:
        resumed = RESUME_RE.match(rc.reason)
        after = (os.path.abspath(resumed.group("file")), int(resumed.group("line"))) if resumed else None
        d = None
        if rc.filename and rc.lineno and after is None:
            d = static.finding_at([rc.filename], rc.filename, rc.lineno, _RECOMPILE_KINDS)
        recompiles.append(
            RecompileReport(
                reason=rc.reason,
                filename=rc.filename,
                lineno=rc.lineno,
                call=rc.call,
                tensor_only=rc.tensor_only,
                after_break=after,
                rule=d.code if d is not None else None,
                rule_name=d.name if d is not None else None,
            )
        )
    return CompileReport(subject, _backend_name(backend), tuple(breaks), tuple(recompiles), tuple(static.notes))


# ---------------------------------------------------------------------------
# the helper


@contextlib.contextmanager
def _no_foreign_trace_handlers() -> Iterator[None]:
    """Detach other libraries' handlers from torch's structured-trace logger for the block.

    ``torch.__trace`` never propagates and is always at DEBUG; torch writes its
    structured trace (``TORCH_TRACE``) whenever the logger has any handler
    (``torch/_logging/_internal.py``, ``trace_structured``). pytest's log capture
    (``_pytest/logging.py``, ``catching_logs``; pytest 9.2 here) attaches its handlers to
    every non-propagating logger, so without this each compile in a test would
    build the structured trace and fill the test's captured log with empty DEBUG
    records (125 for a two-frame model with one break, measured with torch 2.13).
    torch's own handlers stay; the others are put back on exit.
    """
    import logging

    trace_log = logging.getLogger("torch.__trace")
    foreign = [h for h in trace_log.handlers if not type(h).__module__.startswith("torch")]
    for handler in foreign:
        trace_log.removeHandler(handler)
    try:
        yield
    finally:
        for handler in foreign:
            if handler not in trace_log.handlers:
                trace_log.addHandler(handler)


def _require_torch() -> None:
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        from pt2lint.commands.confirm import TORCH_INSTALL_HINT

        raise ImportError(f"pt2lint's graph-break checks need torch: {TORCH_INSTALL_HINT}") from exc


def _target_name(fn: Any) -> str:
    """``"Model"`` for a module instance, the qualified name for a function."""
    import torch

    if isinstance(fn, torch.nn.Module):
        return type(fn).__name__
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def check_compile(
    fn_or_module: Callable[..., Any],
    calls: Sequence[Tuple[tuple, Dict[str, Any]]],
    *,
    backend: Union[str, Callable[..., Any]] = "eager",
    dynamic: Optional[bool] = None,
    include_library_frames: bool = False,
) -> Tuple[CompileReport, List[Any], Optional[BaseException]]:
    """Compile once, make each call, and report the graph breaks and recompiles Dynamo logged.

    Uses :func:`pt2lint.confirm.dynamo.compile_and_call` (Dynamo is reset before
    and after).

    Args:
        fn_or_module: an ``nn.Module`` or a function.
        calls: ``(args, kwargs)`` per call, in order; at least one.
        backend: ``torch.compile`` backend: a name (``"eager"``, ``"aot_eager"``,
            ``"inductor"``) or a backend function.
        dynamic: passed to ``torch.compile(dynamic=...)``.
        include_library_frames: name each break at its innermost frame outside
            torch even when that frame is in the standard library or an installed
            package, instead of at the innermost frame in the user's code.

    Returns:
        ``(report, outputs, error)``: outputs of the calls that finished, and the
        exception a call raised (the calls stop there), or None.

    Raises:
        ImportError: torch is not installed.
        ValueError: ``calls`` is empty.
        Exception: what ``torch.compile`` raises for a bad backend.
    """
    if not calls:
        raise ValueError("check_compile needs at least one call")
    _require_torch()
    from pt2lint.confirm.dynamo import compile_and_call

    with _no_foreign_trace_handlers():
        result = compile_and_call(fn_or_module, list(calls), backend=backend, dynamic=dynamic)
    subject = f"torch.compile(backend={_backend_name(backend)}) of {_target_name(fn_or_module)}"
    report = _build_report(
        subject, backend, result.all_graph_breaks(), result.recompiles, include_library_frames
    )
    return report, result.outputs, result.error


def assert_no_graph_breaks(
    fn_or_module: Callable[..., Any],
    *args: Any,
    backend: Union[str, Callable[..., Any]] = "eager",
    allow_recompiles: bool = True,
    include_library_frames: bool = False,
    dynamic: Optional[bool] = None,
    calls: Sequence[tuple] = (),
    **kwargs: Any,
) -> Any:
    """Compile ``fn_or_module`` with ``torch.compile``, call it, and fail on a graph break.

    ``fn_or_module(*args, **kwargs)`` is called once through one
    ``torch.compile``; then once more per entry of ``calls`` (each a tuple of
    positional arguments, with the same ``kwargs``), which is what shows
    recompiles. Dynamo is reset before and after.

    Args:
        fn_or_module: an ``nn.Module`` or a function.
        *args: positional arguments of the first call.
        backend: ``torch.compile`` backend; ``"eager"`` (default) traces with
            Dynamo and runs the graphs as they are, which is all a graph-break
            check needs and the fastest.
        allow_recompiles: when False, a recompile fails the check too.
        include_library_frames: name breaks inside installed packages or the
            standard library at that frame instead of at the innermost frame in
            the user's code.
        dynamic: passed to ``torch.compile(dynamic=...)``.
        calls: further argument tuples to call with after the first.
        **kwargs: keyword arguments of every call. A keyword argument named like
            one of the options above must be bound with ``functools.partial``.

    Returns:
        The output of the first call.

    Raises:
        GraphBreakError: Dynamo broke the graph (or recompiled, when not allowed);
            the message names each break's innermost user frame (file:line), its
            GB id, Dynamo's reason and pt2lint's rule for it.
        ImportError: torch is not installed.
        TypeError: an entry of ``calls`` is not a tuple.
        Exception: whatever a call raises (raised as is, after Dynamo is reset).
    """
    __tracebackhide__ = True
    for i, c in enumerate(calls):
        if not isinstance(c, tuple):
            raise TypeError(f"calls[{i}] must be a tuple of positional arguments, got {type(c).__name__}")
    plan = [(tuple(args), dict(kwargs))] + [(tuple(c), dict(kwargs)) for c in calls]
    report, outputs, error = check_compile(
        fn_or_module, plan, backend=backend, dynamic=dynamic, include_library_frames=include_library_frames
    )
    if error is not None:
        raise error
    if report.failed(allow_recompiles):
        raise GraphBreakError(report.format(allow_recompiles), report)
    return outputs[0]


# ---------------------------------------------------------------------------
# the marker and the fixture


@dataclass(frozen=True)
class _Options:
    backend: Union[str, Callable[..., Any]] = "eager"
    allow_recompiles: bool = True
    include_library_frames: bool = False


def _options(item: pytest.Item) -> Optional[_Options]:
    """The marker's options, or defaults when only the fixture asks; None when neither."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        if "pt2_compile" not in getattr(item, "fixturenames", ()):
            return None
        return _Options()
    if marker.args:
        pytest.fail(
            f"{item.nodeid}: @pytest.mark.{MARKER} takes keyword options only ({', '.join(_MARKER_OPTIONS)})",
            pytrace=False,
        )
    unknown = sorted(set(marker.kwargs) - set(_MARKER_OPTIONS))
    if unknown:
        pytest.fail(
            f"{item.nodeid}: @pytest.mark.{MARKER}: unknown option {unknown[0]!r} "
            f"(options: {', '.join(_MARKER_OPTIONS)})",
            pytrace=False,
        )
    opts = _Options(**marker.kwargs)
    for name in ("allow_recompiles", "include_library_frames"):
        if not isinstance(getattr(opts, name), bool):
            pytest.fail(
                f"{item.nodeid}: @pytest.mark.{MARKER}: {name} must be True or False, not {getattr(opts, name)!r}",
                pytrace=False,
            )
    if not (isinstance(opts.backend, str) and opts.backend) and not callable(opts.backend):
        pytest.fail(
            f"{item.nodeid}: @pytest.mark.{MARKER}: backend must be a backend name such as 'eager' "
            f"or a backend function, not {opts.backend!r}",
            pytrace=False,
        )
    return opts


@contextlib.contextmanager
def _watch() -> Iterator[Tuple[List[Any], List[Any]]]:
    """Collect the graph breaks and recompiles logged inside the block, Dynamo reset around it.

    The same artifacts and parsers as :func:`pt2lint.confirm.dynamo.compile_and_call`;
    the lists are filled when the block ends.
    """
    from pt2lint.confirm.dynamo import capture_artifacts, parse_graph_break, parse_recompile, reset_dynamo

    breaks: List[Any] = []
    recompiles: List[Any] = []
    reset_dynamo()
    try:
        with _no_foreign_trace_handlers(), capture_artifacts("graph_breaks", "recompiles") as recorder:
            yield breaks, recompiles
    finally:
        reset_dynamo()
        seen = set()
        for msg, exc in recorder.records:
            if msg.lstrip().startswith("Recompiling"):
                rc = parse_recompile(msg)
                if rc is not None:
                    recompiles.append(rc)
                continue
            gb = parse_graph_break(msg, exc)
            if gb is not None and (gb.filename, gb.lineno, gb.reason) not in seen:
                seen.add((gb.filename, gb.lineno, gb.reason))
                breaks.append(gb)


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``no_graph_breaks`` marker."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(backend='eager', allow_recompiles=True, include_library_frames=False): "
        "fail the test when a torch.compile call made while it runs breaks the graph "
        "(or recompiles, with allow_recompiles=False); see pt2lint's README, 'pytest plugin'",
    )


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Run a marked test (or one using ``pt2_compile``) under the watch and fail it on a break.

    An old-style hook wrapper, which every pluggy version pytest 7 and 8 use
    understands, so installing pt2lint never breaks an older pytest. A test that
    failed by itself keeps its own failure.
    """
    opts = _options(item)
    if opts is None:
        yield
        return
    try:
        _require_torch()
    except ImportError as exc:
        pytest.fail(f"{item.nodeid}: {exc}", pytrace=False)
    with _watch() as (breaks, recompiles):
        outcome = yield
    if outcome.excinfo is not None:
        return
    subject = f"torch.compile calls in {item.name}"
    report = _build_report(subject, opts.backend, breaks, recompiles, opts.include_library_frames)
    if not report.failed(opts.allow_recompiles):
        return
    try:
        pytest.fail(report.format(opts.allow_recompiles), pytrace=False)
    except pytest.fail.Exception as exc:
        force = getattr(outcome, "force_exception", None)  # pluggy >= 1.1
        if force is None:
            raise
        force(exc)


@pytest.fixture
def pt2_compile(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``torch.compile`` with the ``no_graph_breaks`` marker's backend (default ``"eager"``).

    Using it turns the graph-break watch on for the test, marked or not:
    ``model = pt2_compile(Model()); model(x)`` fails the test on a break.
    Other keyword arguments go to ``torch.compile``.
    """
    opts = _options(request.node) or _Options()

    def compile_(fn: Callable[..., Any], **compile_kwargs: Any) -> Any:
        import torch

        compile_kwargs.setdefault("backend", opts.backend)
        return torch.compile(fn, **compile_kwargs)

    return compile_

