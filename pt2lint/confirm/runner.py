"""The parent side of confirm mode: run each job in its own child process, with a timeout.

Children are started from a ``multiprocessing`` fork server that has imported
torch and Dynamo once (Linux), so a module costs a fork, not a torch import;
on other systems they are spawned. A child starts its own session, so a
timeout kills its whole process group (compile workers included). Whatever a
child does — segfault, ``os.abort``, ``sys.exit``, hang, exhaust memory — only
its own job is affected: the parent notices the death (``exitcode``, the
``faulthandler`` report in the child's log) and goes on with the next job.

Nothing a child starts outlives the run. Each child carries a run-unique
token in its environment (:data:`TOKEN_ENV`), inherited by everything it
spawns; on Linux the parent is also a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``) while jobs run, so a grandchild that calls
``setsid`` and loses its parent is re-parented to this process instead of
init. When a job ends, and when the run ends or is interrupted, every process
with that token and every such orphan is killed (with its descendants) and
reaped. SIGTERM and SIGHUP stop the run the same way, fork server included
(:class:`Terminated`).

The parent never imports torch or user code.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

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
#: Environment variable holding a job's token in its child and the child's descendants.
TOKEN_ENV = "PT2LINT_CONFIRM_JOB"
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived while jobs ran; the children were killed before it propagates.

    Attributes:
        signum: the signal number.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)
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


# ---------------------------------------------------------------------------
# descendants that left the child's process group


def _prctl(option: int, value: int = 0) -> Optional[int]:
    """``prctl(option, value)`` through libc (Linux); None where it is not available."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if option == _PR_GET_CHILD_SUBREAPER:
            out = ctypes.c_int(0)
            if libc.prctl(option, ctypes.byref(out), 0, 0, 0) != 0:
                return None
            return out.value
        return None if libc.prctl(option, value, 0, 0, 0) != 0 else value
    except (OSError, AttributeError):
        return None


def process_table() -> Dict[int, Tuple[int, str]]:
    """``{pid: (parent pid, state letter)}`` of the processes visible in ``/proc`` (empty elsewhere)."""
    table: Dict[int, Tuple[int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2:
            table[int(name)] = (int(fields[1]), fields[0].decode("ascii", "replace"))
    return table


def process_token(pid: int) -> Optional[str]:
    """The :data:`TOKEN_ENV` value in ``pid``'s initial environment, or None (not set, or not readable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read()
    except OSError:
        return None
    key = TOKEN_ENV.encode() + b"="
    for item in env.split(b"\0"):
        if item.startswith(key):
            return item[len(key):].decode("ascii", "replace")
    return None


class Reaper:
    """Finds and kills what the jobs' children left behind (Linux; a no-op where ``/proc`` is missing).

    Args:
        keep: pids never to touch (this process's children from before the run,
            the fork server, multiprocessing's resource tracker).
    """

    def __init__(self, keep: Sequence[int] = ()) -> None:
        self.me = os.getpid()
        self.keep = set(keep)
        self.subreaper = False
        self._was_subreaper: Optional[int] = None

    def __enter__(self) -> "Reaper":
        self._was_subreaper = _prctl(_PR_GET_CHILD_SUBREAPER)
        if self._was_subreaper is not None:
            self.subreaper = _prctl(_PR_SET_CHILD_SUBREAPER, 1) == 1
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.subreaper and not self._was_subreaper:
            _prctl(_PR_SET_CHILD_SUBREAPER, 0)

    def sweep(self, tokens: Sequence[str], spare: Sequence[str] = ()) -> List[int]:
        """Kill (SIGKILL) every process carrying one of ``tokens``, every orphan re-parented here
        that carries none of ``spare`` (the tokens of jobs still running), and their descendants;
        then reap the ones that are this process's children.

        Returns:
            The pids killed.
        """
        table = process_table()
        if not table:
            return []
        wanted, keep_tokens = set(tokens), set(spare)
        targets: Set[int] = set()
        for pid, (ppid, state) in table.items():
            if pid == self.me or pid in self.keep:
                continue
            token = process_token(pid)
            if token is not None and token in wanted:
                targets.add(pid)
            elif self.subreaper and ppid == self.me and not (token is not None and token in keep_tokens):
                targets.add(pid)  # an orphan of a finished child (a grandchild that called setsid)
        children: Dict[int, List[int]] = {}
        for pid, (ppid, _state) in table.items():
            children.setdefault(ppid, []).append(pid)
        stack = list(targets)
        while stack:
            for sub in children.get(stack.pop(), []):
                if sub not in targets and sub != self.me and sub not in self.keep:
                    targets.add(sub)
                    stack.append(sub)
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.reap([pid for pid in targets if table.get(pid, (0, ""))[0] == self.me])
        return sorted(targets)

    def reap(self, pids: Sequence[int], wait: float = 2.0) -> None:
        """``waitpid`` ``pids`` (children of this process) for up to ``wait`` seconds, so none stays a zombie."""
        left = set(pids)
        deadline = time.monotonic() + wait
        while left:
            for pid in list(left):
                try:
                    done, _status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                except OSError:
                    done = pid
                if done:
                    left.discard(pid)
            if not left or time.monotonic() > deadline:
                return
            time.sleep(0.01)


def _helper_pids() -> List[int]:
    """The fork server's and the resource tracker's pids, when multiprocessing started them."""
    out = []
    try:
        from multiprocessing import forkserver, resource_tracker

        for owner, attr in ((getattr(forkserver, "_forkserver", None), "_forkserver_pid"),
                            (getattr(resource_tracker, "_resource_tracker", None), "_pid")):
            pid = getattr(owner, attr, None)
            if isinstance(pid, int) and pid > 0:
                out.append(pid)
    except ImportError:
        pass
    return out


def stop_fork_server() -> None:
    """Stop multiprocessing's fork server, if it runs (the next run starts a new one)."""
    try:
        from multiprocessing import forkserver

        server = getattr(forkserver, "_forkserver", None)
        pid = getattr(server, "_forkserver_pid", None)
        stop = getattr(server, "_stop", None)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if callable(stop):
            stop()
    except Exception:  # best effort: the process is exiting anyway
        pass


class _Signals:
    """While active (main thread only), SIGTERM and SIGHUP raise :class:`Terminated`."""

    SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))

    def __enter__(self) -> "_Signals":
        import threading

        self._saved: Dict[int, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return self

        def handler(signum: int, _frame: Any) -> None:
            raise Terminated(signum)

        for sig in self.SIGNALS:
            try:
                self._saved[sig] = signal.signal(sig, handler)
            except (OSError, ValueError):
                pass
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, old in self._saved.items():
            try:
                signal.signal(sig, old)
            except (OSError, ValueError):
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
    run: Optional[Callable[..., Dict[str, Any]]] = None,
) -> List[JobOutcome]:
    """Run ``jobs`` in child processes, at most ``parallel`` at a time, each within its ``timeout``.

    Args:
        jobs: what to run (their ``log_path`` and ``token`` are set here).
        parallel: children at once (>= 1).
        on_start: called when a job's child has started.
        on_done: called with each outcome as it finishes (for a progress bar).
        run: what the child does with its job, ``run(job, report) -> result dict``, a
            module-level function (picklable); default :func:`pt2lint.confirm.child.run_job`.

    Returns:
        One :class:`JobOutcome` per job, in the order of ``jobs``.

    Raises:
        KeyboardInterrupt: after killing the running children and what they started.
        Terminated: SIGTERM or SIGHUP, after killing the children, what they
            started, and the fork server.
    """
    if not jobs:
        return []
    from multiprocessing.connection import wait

    ctx = _context(jobs[0].backend)
    logdir = tempfile.mkdtemp(prefix="pt2lint-confirm-")
    pending = list(enumerate(jobs))
    running: Dict[int, _Running] = {}
    outcomes: Dict[int, JobOutcome] = {}
    run_id = f"{os.getpid()}-{secrets.token_hex(6)}"
    tokens: List[str] = []
    me = os.getpid()
    before = [pid for pid, (ppid, _state) in process_table().items() if ppid == me]
    reaper = Reaper(keep=before)
    try:
        with _Signals(), reaper:
            while pending or running:
                while pending and len(running) < max(1, parallel):
                    index, job = pending.pop(0)
                    token = f"{run_id}-{index}"
                    tokens.append(token)
                    job = replace(job, log_path=os.path.join(logdir, f"job{index}.log"), token=token)
                    from pt2lint.confirm.child import process_main

                    parent_conn, child_conn = ctx.Pipe(duplex=False)
                    process = ctx.Process(target=process_main, args=(job, child_conn, run), daemon=True, name=f"pt2lint-confirm-{index}")
                    with _NoMainModule():
                        process.start()
                    reaper.keep.update(_helper_pids())
                    if process.pid:
                        reaper.keep.add(process.pid)  # a spawned child is ours; multiprocessing reaps it
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
                    del running[index]
                    reaper.keep.discard(r.process.pid)  # joined: its pid may be reused by a stray
                    reaper.sweep([r.job.token or ""], spare=[o.job.token or "" for o in running.values()])
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
            reaper.sweep(tokens)
    except BaseException as exc:
        for r in running.values():
            _kill_group(r.process)
        if isinstance(exc, (Terminated, KeyboardInterrupt)):
            # First the fork server: a child it forked that was not yet recorded as running
            # is then re-parented here, and the sweep finds it.
            stop_fork_server()
        reaper.sweep(tokens)
        for r in running.values():
            r.process.join(1)
        raise
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    return [outcomes[i] for i in range(len(jobs))]


__all__ = [
    "JobOutcome",
    "PRELOAD",
    "Reaper",
    "TOKEN_ENV",
    "Terminated",
    "process_table",
    "process_token",
    "run_jobs",
    "start_method",
    "stop_fork_server",
]
