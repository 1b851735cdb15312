"""The one worker pool: results in input order, a dead worker costs one item, Ctrl-C stops at once.

``check`` and ``fix`` fan files out with :func:`ordered_map`.  It uses
:class:`concurrent.futures.ProcessPoolExecutor`, which notices a worker that died (a
crash in native code, the OOM killer) and raises ``BrokenProcessPool`` where
``multiprocessing.Pool`` waits forever.  Then every item without a result is run again,
each in a process of its own, so the item that kills its process gets the caller's
error result and every other item still gets its real one.

Workers ignore SIGINT: Ctrl-C reaches the parent, which asks the executor to cancel the
work not started, terminates the workers and lets ``KeyboardInterrupt`` propagate (the CLI
exits 130).  The parent never cancels a future itself: on CPython before 3.12 the
executor's manager thread, finding the workers gone, sets ``BrokenProcessPool`` on every
future it still holds and raises ``InvalidStateError`` (a traceback on stderr) for one that
another thread cancelled in the meantime; ``Executor.map`` cancels its futures when its
iterator is closed, so chunks are submitted here instead of through ``map``.  On
normal completion the executor is shut down and waited for before returning, so no
manager thread is left running into interpreter shutdown (which used to print an
``OSError: Bad file descriptor`` traceback now and then).
"""

from __future__ import annotations

import os
import signal
from typing import Callable, Iterator, List, Optional, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _ignore_sigint() -> None:
    """Pool initializer: Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _context():
    import multiprocessing

    return multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")


def _stop(pool) -> None:
    """Cancel what has not started, end the workers now, and wait for the executor's thread."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public handle before 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.terminate()
        except (OSError, AttributeError, ValueError):
            pass
    for process in processes:
        try:
            process.join(timeout=2)
        except (OSError, AttributeError, ValueError, AssertionError):
            pass
    pool.shutdown(wait=True)


def _run_chunk(fn: Callable[[T], R], chunk: Sequence[T]) -> List[R]:
    """Worker side of :func:`ordered_map`: ``fn`` over one chunk of items, in order."""
    return [fn(item) for item in chunk]


def run_alone(fn: Callable[[T], R], item: T, dead: Callable[[T], R], ctx=None) -> R:
    """``fn(item)`` in a fresh worker process; ``dead(item)`` when that process dies.

    Raises:
        KeyboardInterrupt: Ctrl-C (the worker is terminated first).
    """
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    one = ProcessPoolExecutor(1, mp_context=ctx or _context(), initializer=_ignore_sigint)
    done = False
    try:
        try:
            result = one.submit(fn, item).result()
        except BrokenProcessPool:
            result = dead(item)
        done = True
        return result
    finally:
        if done:
            one.shutdown(wait=True)
        else:
            _stop(one)


def ordered_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    jobs: Optional[int],
    dead: Callable[[T], R],
    *,
    min_items: int = 4,
) -> Iterator[R]:
    """``fn`` over ``items`` in worker processes, yielding results in the order of ``items``.

    Args:
        fn: a module-level function (picklable), run once per item.
        items: the work; each item must be picklable.
        jobs: worker processes; ``None`` or 0: one per CPU core; 1: run in this process.
        dead: the result for an item whose process died while running it.
        min_items: below this many items, run in this process (a pool costs more).

    Yields:
        ``fn(item)`` (or ``dead(item)``) for each item, in order.

    Raises:
        KeyboardInterrupt: Ctrl-C; pending work is cancelled and the workers terminated.
    """
    n_jobs = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    if n_jobs == 1 or len(items) < min_items:
        for item in items:
            yield fn(item)
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ctx = _context()
    chunk = max(1, min(8, len(items) // (n_jobs * 16) or 1))
    pool = ProcessPoolExecutor(min(n_jobs, len(items)), mp_context=ctx, initializer=_ignore_sigint)
    finished = False
    try:
        starts = range(0, len(items), chunk)
        futures = [pool.submit(_run_chunk, fn, items[start : start + chunk]) for start in starts]
        broken_at: Optional[int] = None
        for start, future in zip(starts, futures):
            try:
                results = future.result()
            except BrokenProcessPool:
                broken_at = start
                break
            yield from results
        if broken_at is not None:
            _stop(pool)  # what it still holds is lost: run each remaining item on its own
            for item in items[broken_at:]:
                yield run_alone(fn, item, dead, ctx)
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:  # Ctrl-C, or the consumer stopped early
            _stop(pool)


__all__ = ["ordered_map", "run_alone"]
