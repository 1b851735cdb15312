"""Which lines, and which expressions, of the user's code ran in the eager call.

Lines alone cannot tell whether ``mask.any()`` ran in
``if mask is not None and mask.any():`` — the line runs either way. So the
recorder also notes each bytecode instruction that executed, and CPython's
``co_positions()`` (3.11+) gives every instruction the source span it came
from (line, end line and UTF-8 byte columns). An expression ran when an
instruction whose span lies inside it ran:

* on Python 3.12+, ``sys.monitoring`` ``INSTRUCTION`` events, enabled only on
  user code objects (at ``PY_START``/``PY_RESUME``), each location disabled
  after its first event, so every instruction costs one callback;
* on 3.11, ``sys.settrace`` with ``f_trace_opcodes`` on user frames;
* before 3.11 there are no columns, and only lines are recorded.

:func:`expression_ran` makes the decision from the spans the child sent and the
spans compiled from the file (:func:`code_spans`); it answers None (undecided,
use the line) whenever the data cannot prove the expression did not run.

Nothing here imports torch; the recorder runs in the child, the rest in the parent.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

#: ``(line, byte column, end line, end byte column)``: 1-based lines, 0-based UTF-8 byte columns, end exclusive.
Span = Tuple[int, int, int, int]

_HAS_POSITIONS = hasattr(types.CodeType, "co_positions")


def _positions(code: types.CodeType) -> List[Optional[Span]]:
    """The span of each code unit (2 bytes) of ``code``; None where CPython records no columns."""
    out: List[Optional[Span]] = []
    for pos in code.co_positions():
        line, end_line, col, end_col = pos
        if line is None or end_line is None or col is None or end_col is None:
            out.append(None)
        else:
            out.append((line, col, end_line, end_col))
    return out


class Recorder:
    """Records the user lines and instructions executed while it is active (one thread).

    Args:
        is_user: ``is_user(filename)``: True for the files to record.

    Attributes:
        lines: ``{filename: set of lines}``.
    """

    TOOL_NAME = "pt2lint-confirm"

    def __init__(self, is_user: Callable[[str], bool]) -> None:
        self.lines: Dict[str, Set[int]] = {}
        self._is_user = is_user
        self._offsets: Dict[types.CodeType, Set[int]] = {}
        self._tool: Optional[int] = None
        self._old_trace = None
        self._instrumented: Set[types.CodeType] = set()

    # -- sys.monitoring (3.12+)

    def _start_monitoring(self) -> bool:
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None:
            return False
        for tool in (5, 4, 3):
            try:
                monitoring.use_tool_id(tool, self.TOOL_NAME)
            except ValueError:
                continue
            self._tool = tool
            break
        if self._tool is None:
            return False
        events = monitoring.events
        lines, offsets, is_user, disable, tool = self.lines, self._offsets, self._is_user, monitoring.DISABLE, self._tool
        instrumented = self._instrumented

        def instrument(code: types.CodeType) -> None:
            if code not in instrumented:
                instrumented.add(code)
                monitoring.set_local_events(tool, code, events.INSTRUCTION)

        def on_start(code: types.CodeType, _offset: int) -> Any:
            if not is_user(code.co_filename):
                return disable
            instrument(code)
            return None

        def on_line(code: types.CodeType, lineno: int) -> Any:
            if not is_user(code.co_filename):
                return disable
            lines.setdefault(code.co_filename, set()).add(lineno)
            instrument(code)
            return None

        def on_instruction(code: types.CodeType, offset: int) -> Any:
            offsets.setdefault(code, set()).add(offset)
            return disable

        monitoring.register_callback(tool, events.PY_START, on_start)
        monitoring.register_callback(tool, events.PY_RESUME, on_start)
        monitoring.register_callback(tool, events.LINE, on_line)
        monitoring.register_callback(tool, events.INSTRUCTION, on_instruction)
        monitoring.set_events(tool, events.PY_START | events.PY_RESUME | events.LINE)
        return True

    def _stop_monitoring(self) -> None:
        monitoring = sys.monitoring
        events = monitoring.events
        tool = self._tool
        monitoring.set_events(tool, 0)
        for code in self._instrumented:
            try:
                monitoring.set_local_events(tool, code, 0)
            except ValueError:
                pass
        for event in (events.PY_START, events.PY_RESUME, events.LINE, events.INSTRUCTION):
            monitoring.register_callback(tool, event, None)
        monitoring.free_tool_id(tool)
        monitoring.restart_events()

    # -- sys.settrace (before 3.12)

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        if not self._is_user(code.co_filename):
            return None
        lines = self.lines.setdefault(code.co_filename, set())
        offsets = self._offsets.setdefault(code, set()) if _HAS_POSITIONS else None
        if offsets is not None:
            frame.f_trace_opcodes = True

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                lines.add(frame.f_lineno)
            elif event == "opcode" and offsets is not None:
                offsets.add(frame.f_lasti)
            return local

        return local

    def __enter__(self) -> "Recorder":
        if not self._start_monitoring():
            self._old_trace = sys.gettrace()
            sys.settrace(self._global)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._tool is not None:
            self._stop_monitoring()
        else:
            sys.settrace(self._old_trace)

    def as_dict(self) -> Dict[str, List[int]]:
        """``{absolute filename: sorted lines}``."""
        return {os.path.abspath(f): sorted(v) for f, v in self.lines.items()}

    def spans(self) -> Dict[str, List[List[int]]]:
        """``{absolute filename: sorted executed instruction spans}`` (each ``[line, col, end line, end col]``)."""
        out: Dict[str, Set[Span]] = {}
        for code, offsets in self._offsets.items():
            if not offsets or not _HAS_POSITIONS:
                continue
            positions = _positions(code)
            bucket = out.setdefault(os.path.abspath(code.co_filename), set())
            for offset in offsets:
                index = offset // 2
                if 0 <= index < len(positions) and positions[index] is not None:
                    bucket.add(positions[index])  # type: ignore[arg-type]
        return {f: [list(s) for s in sorted(v)] for f, v in out.items()}


def code_spans(source: str, filename: str) -> Optional[Set[Span]]:
    """The spans of every instruction of every code object compiled from ``source``.

    Compiling runs nothing. Returns None when this Python has no
    ``co_positions`` or the source does not compile.
    """
    if not _HAS_POSITIONS:
        return None
    try:
        top = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: Set[Span] = set()
    stack = [top]
    while stack:
        code = stack.pop()
        out.update(p for p in _positions(code) if p is not None)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return out


def byte_column(line_text: str, column: int) -> int:
    """The 0-based UTF-8 byte offset of the 1-based character ``column`` of ``line_text``."""
    return len(line_text[: max(0, column - 1)].encode("utf-8", "surrogatepass"))


def _inside(span: Span, outer: Span) -> bool:
    return (span[0], span[1]) >= (outer[0], outer[1]) and (span[2], span[3]) <= (outer[2], outer[3])


def expression_ran(target: Span, compiled: Iterable[Span], executed: Set[Span]) -> Optional[bool]:
    """Whether the expression at ``target`` ran.

    Args:
        target: the expression's span (UTF-8 byte columns).
        compiled: the spans of all instructions of the file (:func:`code_spans`).
        executed: the spans of the instructions that ran (:meth:`Recorder.spans`).

    The instructions that stand for ``target`` are those whose span lies inside
    it; when there are none (the finding points at part of an expression, such
    as ``any()`` of ``mask.any()``), the innermost instructions whose span holds it.

    Returns:
        True when one of those instructions ran; False when none ran and some
        instruction of ``target``'s first line did (so instruction events were
        being recorded there); None when that cannot be decided (no instruction
        stands for ``target``, or none of its line was recorded).
    """
    compiled = list(compiled)
    inside = [s for s in compiled if _inside(s, target)]
    if not inside:
        around = [s for s in compiled if _inside(target, s)]
        if not around:
            return None
        size = lambda s: (s[2] - s[0], s[3] - s[1] if s[2] == s[0] else s[3])  # noqa: E731
        smallest = min(size(s) for s in around)
        inside = [s for s in around if size(s) == smallest]
    if any(s in executed for s in inside):
        return True
    if not any(s[0] == target[0] for s in executed):
        return None
    return False


__all__ = ["Recorder", "Span", "byte_column", "code_spans", "expression_ran"]
