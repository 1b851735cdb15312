"""The parent side of confirm mode: run each job in its own child process, with a timeout.

Children are started from a ``multiprocessing`` fork server that has imported
torch and Dynamo once (Linux), so a module costs a fork, not a torch import;
on other systems they are spawned. A child starts its own session, so a
timeout kills its whole process group (compile workers included). Whatever a
child does — segfault, ``os.abort``, ``sys.exit``, hang, exhaust memory — only
its own job is affected: the parent notices the death (``exitcode``, the
``faulthandler`` report in the child's log) and goes on with the next job.

The parent never imports torch or user code.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Optional, Sequence

from pt2lint.confirm.plan import Job

#: Modules the fork server imports before forking children (imports only: no threads, no CUDA).
PRELOAD = (
    "torch",
    "torch._dynamo",
    "torch._dynamo.convert_frame",
    "torch._dynamo.symbolic_convert",
    "torch._dynamo.backends.debugging",
    "torch.fx",
    "torch.export",
    "pt2lint.confirm.dynamo",
    "pt2lint.confirm.child",
    "pt2lint.confirm.inputs",
)
KILL_GRACE = 2.0  # seconds past the timeout before the child is killed
LOG_TAIL = 16000  # characters of a child's log kept for the report


@dataclass
class JobOutcome:
    """What the parent knows about one finished job.

    Attributes:
        job: the job.
        result: the child's result dict (:func:`pt2lint.confirm.child.new_result`),
            or None when the child died before sending it.
        stage: the last stage the child announced (``import``, ``build``, ``eager``, ``compile call 2``, ...).
        exitcode: the child's exit status (negative: killed by that signal), None if unknown.
        timed_out: the parent killed the child at the timeout.
        log: the tail of the child's stdout/stderr (with any ``faulthandler`` report).
        seconds: wall-clock time from start to end.
    """

    job: Job
    result: Optional[Dict[str, Any]] = None
    stage: Optional[str] = None
    exitcode: Optional[int] = None
    timed_out: bool = False
    log: str = ""
    seconds: float = 0.0


def start_method() -> str:
    """``forkserver`` on Linux (fast: torch is imported once), ``spawn`` elsewhere.

    ``PT2LINT_CONFIRM_START_METHOD`` overrides it (``spawn`` or ``forkserver``).
    """
    forced = os.environ.get("PT2LINT_CONFIRM_START_METHOD")
    if forced in ("spawn", "forkserver"):
        return forced
    return "forkserver" if sys.platform.startswith("linux") else "spawn"


def _context(backend: str):
    import multiprocessing

    method = start_method()
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        preload = list(PRELOAD)
        if backend == "inductor":
            preload.insert(preload.index("torch.export"), "torch._inductor.compile_fx")
        ctx.set_forkserver_preload(preload)
    return ctx


class _NoMainModule:
    """While active, ``multiprocessing`` sees a ``__main__`` without a file.

    A spawned or fork-server child normally re-imports the parent's main
    script (as ``__mp_main__``) before running its target; for a script
    without an ``if __name__ == "__main__"`` guard that would run the script
    again in every child. The child only needs ``pt2lint.confirm.child``, so the
    parent's ``__main__`` is swapped for an empty module while a child starts.
    """

    def __enter__(self) -> None:
        import types

        self._saved = sys.modules.get("__main__")
        stub = types.ModuleType("__main__")
        stub.__spec__ = None
        sys.modules["__main__"] = stub

    def __exit__(self, *exc: Any) -> None:
        if self._saved is not None:
            sys.modules["__main__"] = self._saved


@dataclass
class _Running:
    job: Job
    process: Any
    conn: Any
    started: float
    deadline: float
    stage: Optional[str] = None
    result: Optional[Dict[str, Any]] = None
    messages_done: bool = False


def _drain(run: _Running) -> None:
    """Read every message the child has sent so far."""
    while not run.messages_done:
        try:
            if not run.conn.poll():
                return
            kind, payload = run.conn.recv()
        except (EOFError, OSError):
            run.messages_done = True
            return
        except Exception:  # an unpicklable or truncated message: treat as the end
            run.messages_done = True
            return
        if kind == "stage":
            run.stage = payload
        elif kind == "result":
            run.result = payload


def _kill_group(process: Any) -> None:
    """SIGKILL the child's process group (it called ``setsid``), or the child alone."""
    pid = process.pid
    if pid is None:
        return
    try:
        if hasattr(os, "killpg"):
            os.killpg(pid, signal.SIGKILL)
            return
    except (ProcessLookupError, PermissionError, OSError):
        pass
    try:
        process.kill()
    except Exception:
        pass


def _read_tail(path: Optional[str]) -> str:
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - LOG_TAIL))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _failed_importing(outcome: JobOutcome) -> bool:
    """The job died, hung or raised while importing its file (not a later, per-module stage)."""
    if outcome.result is None:
        return outcome.stage == "import"
    return outcome.result.get("failed_stage") == "import"


def _shared_result(outcome: JobOutcome, job: Job) -> Optional[Dict[str, Any]]:
    """``outcome``'s result relabelled for another job of the same file."""
    if outcome.result is None:
        return None
    from pt2lint.confirm.child import new_result

    shared = new_result(job)
    for key in ("stage", "failed_stage", "failure", "detail", "error", "device", "notes"):
        shared[key] = outcome.result.get(key)
    return shared


def run_jobs(
    jobs: Sequence[Job],
    *,
    parallel: int = 1,
    on_start: Optional[Callable[[Job], None]] = None,
    on_done: Optional[Callable[[JobOutcome], None]] = None,
) -> List[JobOutcome]:
    """Run ``jobs`` in child processes, at most ``parallel`` at a time, each within its ``timeout``.

    Args:
        jobs: what to run (their ``log_path`` is set here).
        parallel: children at once (>= 1).
        on_start: called when a job's child has started.
        on_done: called with each outcome as it finishes (for a progress bar).

    Returns:
        One :class:`JobOutcome` per job, in the order of ``jobs``.

    Raises:
        KeyboardInterrupt: after killing the running children.
    """
    if not jobs:
        return []
    from multiprocessing.connection import wait

    ctx = _context(jobs[0].backend)
    logdir = tempfile.mkdtemp(prefix="pt2lint-confirm-")
    pending = list(enumerate(jobs))
    running: Dict[int, _Running] = {}
    outcomes: Dict[int, JobOutcome] = {}
    try:
        while pending or running:
            while pending and len(running) < max(1, parallel):
                index, job = pending.pop(0)
                job = replace(job, log_path=os.path.join(logdir, f"job{index}.log"))
                from pt2lint.confirm.child import process_main

                parent_conn, child_conn = ctx.Pipe(duplex=False)
                process = ctx.Process(target=process_main, args=(job, child_conn), daemon=True, name=f"pt2lint-confirm-{index}")
                with _NoMainModule():
                    process.start()
                child_conn.close()
                now = time.monotonic()
                running[index] = _Running(job, process, parent_conn, now, now + job.timeout + KILL_GRACE)
                if on_start is not None:
                    on_start(job)
            now = time.monotonic()
            wait_for = max(0.0, min(r.deadline for r in running.values()) - now)
            handles = []
            for r in running.values():
                if not r.messages_done:
                    handles.append(r.conn)
                handles.append(r.process.sentinel)
            wait(handles, timeout=min(wait_for, 1.0))
            for index in list(running):
                r = running[index]
                _drain(r)
                finished = not r.process.is_alive()
                timed_out = not finished and time.monotonic() >= r.deadline
                if not finished and not timed_out:
                    continue
                if timed_out:
                    _kill_group(r.process)
                r.process.join(5)
                _drain(r)
                _kill_group(r.process)  # stray grandchildren (compile workers) of a finished child
                try:
                    r.conn.close()
                except OSError:
                    pass
                outcome = JobOutcome(
                    job=r.job,
                    result=r.result,
                    stage=r.stage,
                    exitcode=r.process.exitcode,
                    timed_out=timed_out and r.result is None,
                    log=_read_tail(r.job.log_path),
                    seconds=time.monotonic() - r.started,
                )
                outcomes[index] = outcome
                del running[index]
                if on_done is not None:
                    on_done(outcome)
                if _failed_importing(outcome):
                    # The other modules of this file would import it again and fail (or hang) the same way.
                    for other_index, other in [(i, j) for i, j in pending if j.path == r.job.path]:
                        pending.remove((other_index, other))
                        shared = replace(outcome, job=replace(other, log_path=None), result=_shared_result(outcome, other))
                        outcomes[other_index] = shared
                        if on_done is not None:
                            on_done(shared)
    except BaseException:
        for r in running.values():
            _kill_group(r.process)
            r.process.join(1)
        raise
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    return [outcomes[i] for i in range(len(jobs))]


__all__ = ["JobOutcome", "PRELOAD", "run_jobs", "start_method"]
