"""Deeply nested code must not crash or hang the linter.

LibCST's native parser recurses once per nesting level on the thread's C stack and
has no depth limit of its own: 2000 nested parentheses, or ~10000 nested ``not``/
``-``/``lambda``/``and``, overflow the 8 MiB main-thread stack and kill the process
with SIGSEGV (libcst 1.9, measured here); far below that, long chains take it
seconds to minutes (quadratic).  The analysis, in turn, is recursive Python and
hits the interpreter's recursion limit on an expression ~300 levels deep.

CPython's own compiler does have limits: 200 nested brackets (``SyntaxError: too
many nested parentheses``) and about 3000 levels of any expression
(``RecursionError``/``MemoryError`` "during compilation").  So :func:`guard_deep_nesting`
wraps ``lint_source``:

1. a cheap text scan (:func:`looks_deeply_nested`) picks the files that could be deep:
   brackets nested 100 deep, a line of 1000+ characters, one bracketed expression
   spanning 10000+ characters, or 200+ backslash continuations;
2. those are compiled by CPython first; what it rejects for depth is a ``PTC001``
   finding (Python could not import the file either), never handed to LibCST;
3. what it accepts is linted on a thread with a 512 MiB stack and a recursion limit
   of 50000, as is any file whose ordinary lint ran out of recursion;
4. a file that still runs out of recursion there gets a one-line error, not a traceback.

Nothing here changes what an ordinary file produces, or how fast.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import warnings
from typing import Any, Callable, Optional, Tuple

from pt2lint.diagnostics import Diagnostic, FileResult, Position, syntax_error
from pt2lint.pycompile import compile_module

#: Bracket depth from which a file is compiled by CPython first (CPython allows 200; LibCST dies near 2000).
DEEP_BRACKETS = 100
#: A line this long can hold an expression nested thousands of levels deep (``-`` * 3000).
LONG_LINE = 1000
#: A bracketed expression this long can hold a chain thousands of operators long.
LONG_SPAN = 10_000
#: This many backslash continuations can too.
MANY_CONTINUATIONS = 200
#: The stack and recursion limit deep files are linted with.
BIG_STACK_BYTES = 512 * 1024 * 1024
BIG_RECURSION_LIMIT = 50_000

_BRACKET = re.compile(r"[()\[\]{}]")
_LONG_LINE = re.compile(r"(?:^|(?<=\r))[^\r\n]{%d}" % LONG_LINE, re.MULTILINE)


def _long_line_at(source: str) -> Optional[int]:
    """Offset of the first line of :data:`LONG_LINE` or more characters, or ``None``."""
    if len(source) < LONG_LINE:
        return None
    if "\r" not in source or source.count("\r") == source.count("\r\n"):
        # the common case, an order of magnitude faster than the regex
        if max(map(len, source.split("\n"))) < LONG_LINE + 1:
            return None
    m = _LONG_LINE.search(source)
    return m.start() if m is not None else None


def looks_deeply_nested(source: str) -> Optional[int]:
    """Where ``source`` may be nested deeply enough to need care, as a character offset; ``None`` if it cannot be.

    A cheap over-approximation: brackets inside strings and comments count too.
    """
    long_line = _long_line_at(source)
    if long_line is not None:
        return long_line
    if source.count("\\\n") + source.count("\\\r") >= MANY_CONTINUATIONS:
        return source.index("\\")
    if len(source) < LONG_SPAN and source.count("(") + source.count("[") + source.count("{") < DEEP_BRACKETS:
        return None
    depth = 0
    start = 0
    for b in _BRACKET.finditer(source):
        if b.group() in "([{":
            if depth == 0:
                start = b.start()
            depth += 1
            if depth >= DEEP_BRACKETS:
                return b.start()
        elif depth > 0:
            depth -= 1
            if depth == 0 and b.start() - start >= LONG_SPAN:
                return start
    if depth > 0 and len(source) - start >= LONG_SPAN:
        return start
    return None


def _position(source: str, offset: int) -> Position:
    line = source.count("\n", 0, offset) + 1
    return Position(line, offset - (source.rfind("\n", 0, offset) + 1) + 1)


#: CPython's default recursion limit: the one ``python`` imports a module under.
DEFAULT_RECURSION_LIMIT = 1000
#: Python frames between a script's top level and the compiler when it imports a module
#: (the script's own, then importlib's ``_find_and_load`` ... ``source_to_code``), measured
#: on CPython 3.11: ``import m`` of a 2,975-deep attribute chain compiles, 2,980 does not.
IMPORT_FRAMES = 8


def _frame_depth() -> int:
    depth, frame = 0, sys._getframe(1)
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


#: Verdicts of :func:`compile_as_imported` by text digest: a deep file is judged by the nesting
#: guard and again by the syntax check on the big stack.
_JUDGED: "dict[str, Optional[BaseException]]" = {}
_JUDGED_LOCK = threading.Lock()


def compile_as_imported(source: str, filename: str = "<pt2lint>") -> Optional[BaseException]:
    """Compile ``source`` under the limits ``import`` has in a fresh ``python``; its error, or ``None``.

    CPython 3.11's compiler allows three levels of nesting per frame of recursion left
    (``sys.getrecursionlimit()`` minus the current depth), so its verdict on a file nested
    about 3000 deep depends on who compiles it: a fresh process importing it, or pt2lint
    deep in its own call stack, maybe under a raised limit (the language server runs under
    :data:`BIG_RECURSION_LIMIT`).  This compiles on a fresh thread (the calling thread's
    depth does not count) and, under a raised limit, first recurses until the frames left
    are those of an ``import`` under :data:`DEFAULT_RECURSION_LIMIT` (Python calls cost no
    C stack on 3.11).  On CPython 3.12 and later the compiler's limit is fixed and no
    padding is needed; on 3.9 and 3.10 (Python calls do use the C stack) none is done.
    No process-wide setting is changed, so any thread may call it.

    Returns:
        The ``SyntaxError``, ``RecursionError``, ``MemoryError``, ``ValueError`` or
        ``OverflowError`` CPython raised, or ``None`` when it compiles.
    """
    import hashlib

    key = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    with _JUDGED_LOCK:
        if key in _JUDGED:
            return _JUDGED[key]
    box: dict = {}
    pad_frames = sys.version_info[:2] == (3, 11)

    def judge() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are not ours to print
            try:
                compile_module(source, filename)  # CPython's compile, without its exponential `finally` copies
            except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError) as exc:
                box["error"] = exc

    def descend(frames: int) -> None:
        if frames > 0:
            descend(frames - 1)  # one Python frame per level
        else:
            judge()

    def target() -> None:
        if pad_frames:
            extra = sys.getrecursionlimit() - DEFAULT_RECURSION_LIMIT + IMPORT_FRAMES - _frame_depth() - 3  # judge() and compile_module()
            if extra > 0:
                descend(extra)
                return
        judge()

    thread = threading.Thread(target=target, name="pt2lint-judge", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # no thread to be had: judge here, under the caller's limits
        judge()
    else:
        thread.join()
    error = box.get("error")
    if error is not None:
        error = error.with_traceback(None)  # keeps no frames (the padding's) alive
    with _JUDGED_LOCK:
        if len(_JUDGED) >= 64:
            _JUDGED.pop(next(iter(_JUDGED)))
        _JUDGED[key] = error
    return error


def too_deep_for_python(source: str, filename: str, offset: int = 0) -> Optional[Diagnostic]:
    """A ``PTC001`` finding when CPython refuses ``source`` for its nesting depth, else ``None``.

    Any other compile error is left to the ordinary parse, which reports it as before.
    ``offset`` is where the nesting is (for the position when CPython gives none).  The
    verdict is that of :func:`compile_as_imported`, whatever the caller's own depth.
    """
    exc = compile_as_imported(source, filename)
    if isinstance(exc, SyntaxError):
        if "too many nested parentheses" not in (exc.msg or ""):
            return None
        where = Position(exc.lineno or 1, exc.offset or 1)
        message = f"SyntaxError: {exc.msg}"
    elif isinstance(exc, (RecursionError, MemoryError)):
        where = _position(source, offset)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        message = f"SyntaxError: code nested too deeply for Python to compile ({detail})"
    else:
        return None  # CPython accepts it (LibCST gets it, on a big stack), or not a depth error
    return syntax_error(filename, message, where)


#: Threads started by :func:`start_big_stack_thread`: they have a big stack already, under the
#: big recursion limit, so deep code runs on them directly.
_BIG_STACK_THREADS: "set[int]" = set()
_BIG_STACK_LOCK = threading.Lock()


def start_big_stack_thread(target: Callable[[], Any], name: str) -> threading.Thread:
    """Start a daemon thread running ``target`` with a :data:`BIG_STACK_BYTES` stack, and raise the
    process's recursion limit to :data:`BIG_RECURSION_LIMIT` for good.

    Both are process-wide settings, so this may be called only from the main thread (a
    server calls it at start-up, once per long-lived thread, before any work is spread
    over threads); deep code then runs on such a thread with no setting changed again.

    Raises:
        RuntimeError: called from another thread, or the thread cannot be started.
        ValueError: the platform refuses that stack size.
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("big-stack threads are started from the main thread only")

    def run() -> None:
        ident = threading.get_ident()
        with _BIG_STACK_LOCK:
            _BIG_STACK_THREADS.add(ident)
        try:
            target()
        finally:  # a later thread may get the same ident
            with _BIG_STACK_LOCK:
                _BIG_STACK_THREADS.discard(ident)

    old_size = threading.stack_size(BIG_STACK_BYTES)
    try:
        sys.setrecursionlimit(max(sys.getrecursionlimit(), BIG_RECURSION_LIMIT))
        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
    finally:
        threading.stack_size(old_size)
    return thread


def on_big_stack_thread() -> bool:
    """Whether the calling thread was started by :func:`start_big_stack_thread`."""
    return threading.get_ident() in _BIG_STACK_THREADS


def run_on_big_stack(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` on a thread with a :data:`BIG_STACK_BYTES` stack and a
    :data:`BIG_RECURSION_LIMIT` recursion limit; returns its result or raises its exception.

    On a thread from :func:`start_big_stack_thread` that is the calling thread.  Elsewhere
    a thread is made for the call -- from the main thread only, since the stack size and
    the recursion limit are process-wide: another thread (whose neighbours may be deep in
    their own code) calls ``fn`` directly, under the limits it has, so deep code fails with
    ``RecursionError`` there instead of crashing the process.  Falls back to calling ``fn``
    directly where such a thread cannot be made.
    """
    if on_big_stack_thread() or threading.current_thread() is not threading.main_thread():
        return fn(*args, **kwargs)
    box: dict = {}

    def target() -> None:
        try:
            box["result"] = fn(*args, **kwargs)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    old_limit = sys.getrecursionlimit()
    try:
        old_size = threading.stack_size(BIG_STACK_BYTES)
    except (ValueError, RuntimeError):
        return fn(*args, **kwargs)
    try:
        thread = threading.Thread(target=target, name="pt2lint-deep", daemon=True)
        sys.setrecursionlimit(max(old_limit, BIG_RECURSION_LIMIT))
        try:
            thread.start()
        except RuntimeError:  # cannot start a thread: do what we can here
            sys.setrecursionlimit(old_limit)
            return fn(*args, **kwargs)
    finally:
        threading.stack_size(old_size)
    try:
        thread.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["result"]


def from_recursion(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``RecursionError``, or was raised while handling one.

    LibCST's position provider turns a ``RecursionError`` in code generation into a
    ``KeyError`` (its ``record_syntactic_position`` looks up a node it never finished).
    """
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, RecursionError):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _call_args(args: Tuple[Any, ...], kwargs: dict) -> Tuple[str, str, Any]:
    source = args[0] if args else kwargs["source"]
    filename = args[1] if len(args) > 1 else kwargs["filename"]
    settings = args[2] if len(args) > 2 else kwargs["settings"]
    return source, filename, settings


def guard_deep_nesting(lint_source: Callable[..., FileResult]) -> Callable[..., FileResult]:
    """Wrap ``lint_source(source, filename, settings, *, relpath=None, keep_source=False, ...)`` as the module docstring says."""

    @functools.wraps(lint_source)
    def wrapper(*args: Any, **kwargs: Any) -> FileResult:
        source, filename, settings = _call_args(args, kwargs)
        keep = source if kwargs.get("keep_source") else None
        offset = looks_deeply_nested(source)
        if offset is None:
            try:
                return lint_source(*args, **kwargs)
            except Exception as exc:
                if not from_recursion(exc):
                    raise
                # try again with room to recurse
        else:
            diag = too_deep_for_python(source, filename, offset)
            if diag is not None:
                relpath = kwargs.get("relpath") or filename
                enabled = settings.enabled_for(relpath.replace(os.sep, "/"))
                return FileResult(filename, (diag,) if "PTC001" in enabled else (), source=keep)
        try:
            return run_on_big_stack(lint_source, *args, **kwargs)
        except Exception as exc:
            if not from_recursion(exc):
                raise
            return FileResult(filename, error=f"{filename}: code nested too deeply to analyse (recursion limit)", source=keep)

    return wrapper
