"""Which modules to confirm in each file, and how to build them — decided without running anything.

A file is read with :mod:`ast` (never imported) and gets:

* one **factory job** when it defines the module-level factory function
  (``--factory`` / ``factory =``): the factory builds the module and the inputs
  function (``--inputs`` / ``inputs =``), when the file defines it, the
  arguments; without one the inputs are synthesised;
* otherwise one **class job** per ``nn.Module``-looking class (a class that
  defines ``forward``, or derives from one in the same file): the per-class
  config entry ``"path.py::Class" = { factory, inputs }`` when there is one,
  else ``Class()`` with synthesised inputs. A class that another module class
  of the file builds (``self.block = Block(dim)``) gets no job of its own: it
  runs, and is confirmed, as part of the class that builds it.

The factory and inputs names default to ``make_model`` / ``example_inputs``;
a name given with ``--factory`` / ``--inputs`` or in the config that no file
defines is a :class:`PlanError`, not a silent fallback. ``path::Class``
targets restrict a file to the classes named. :func:`select_shard` splits the
jobs for a CI matrix by a stable hash of their names.

Files with neither (helpers, scripts) get no job; their lines are still
covered when another file's module runs them.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import os
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

from pt2lint.confirm.settings import ConfirmSettings


@dataclass(frozen=True)
class Job:
    """One module to confirm in one child process (picklable, torch-free).

    Attributes:
        path: absolute path of the file.
        display: the path as reported (as given on the command line).
        relpath: path relative to the project root, ``/``-separated.
        root: project root (put on ``sys.path`` for ``module:fn`` specs).
        class_name: the class for a class job; None for a factory job.
        factory: factory name in the file, or ``module:fn``; None: ``class_name()``.
        inputs: inputs function name in the file, or ``module:fn``; None: synthesised.
        anchor_line: line reported when a failure has no better location
            (the class or factory ``def``).
        device, backend, target, check_accuracy, memory_limit_mb, timeout: from the settings.
        threads: torch intra-op threads for the child.
        dynamo_config: ``torch._dynamo.config`` overrides matching the lint settings.
        log_path: where the child writes its stdout/stderr (set by the runner).
        token: a run-unique tag the child puts in its environment
            (``PT2LINT_CONFIRM_JOB``) so the runner can find and kill every
            process it started, even one that left its session (set by the runner).
    """

    path: str
    display: str
    relpath: str
    root: str
    class_name: Optional[str] = None
    factory: Optional[str] = None
    inputs: Optional[str] = None
    anchor_line: int = 1
    device: Optional[str] = None
    backend: str = "eager"
    target: str = "compile"
    check_accuracy: bool = False
    memory_limit_mb: Optional[int] = None
    timeout: float = 120.0
    threads: int = 1
    dynamo_config: Tuple[Tuple[str, object], ...] = ()
    log_path: Optional[str] = None
    token: Optional[str] = None

    @property
    def label(self) -> str:
        """How the module is named in reports: ``path::Class`` or ``path::factory()``."""
        if self.class_name:
            return f"{self.display}::{self.class_name}"
        return f"{self.display}::{self.factory}()"

    @property
    def shard_key(self) -> str:
        """The stable name a job is sharded by: ``relpath::Class`` or ``relpath::factory()``."""
        return f"{self.relpath}::{self.class_name}" if self.class_name else f"{self.relpath}::{self.factory}()"

    @property
    def target_spec(self) -> str:
        """The child's TARGET argument: ``path`` for a factory job, ``path::Class`` for a class job."""
        return f"{self.display}::{self.class_name}" if self.class_name else self.display


@dataclass
class FileShape:
    """What :func:`scan_source` found at the top level of one file.

    Attributes:
        functions: module-level function names and their ``def`` lines.
        classes: module-level classes that look like ``nn.Module`` subclasses, with their lines.
        built_by: for each of ``classes``, the other classes of ``classes`` whose body
            calls it (``self.block = Block(dim)``): it is one of their submodules.
        error: a one-line parse error, or None.
    """

    functions: Dict[str, int] = field(default_factory=dict)
    classes: Dict[str, int] = field(default_factory=dict)
    built_by: Dict[str, List[str]] = field(default_factory=dict)
    error: Optional[str] = None


class PlanError(ValueError):
    """A configured factory or inputs name, or a ``path::Class`` target, that the files do not define."""


def _called_names(node: ast.AST) -> Set[str]:
    """Names called anywhere under ``node`` (``Block(...)``, ``nn.ModuleList([Block() ...])``)."""
    out: Set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            out.add(sub.func.id)
    return out


def _base_names(node: ast.ClassDef) -> List[str]:
    names = []
    for base in node.bases:
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Attribute):
            names.append(base.attr)
        elif isinstance(base, ast.Name):
            names.append(base.id)
    return names


def scan_source(source: str) -> FileShape:
    """Find top-level functions and ``nn.Module``-looking classes in ``source`` (parsed, never run).

    A class counts when it has a base and defines ``forward``, or derives from a
    class of the same file that does. The child process checks
    ``issubclass(cls, torch.nn.Module)`` before building it.
    """
    shape = FileShape()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError) as exc:
        shape.error = f"{type(exc).__name__}: {exc}"
        return shape
    has_forward: Dict[str, bool] = {}
    calls: Dict[str, Set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            shape.functions[node.name] = node.lineno
        elif isinstance(node, ast.ClassDef):
            bases = _base_names(node)
            own = any(
                isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward" for item in node.body
            )
            has_forward[node.name] = own or any(has_forward.get(b, False) for b in bases)
            if bases and has_forward[node.name]:
                shape.classes[node.name] = node.lineno
                calls[node.name] = set().union(*(_called_names(item) for item in node.body)) if node.body else set()
    for cls in shape.classes:
        shape.built_by[cls] = [other for other in shape.classes if other != cls and cls in calls.get(other, ())]
    return shape


def _roots(shape: FileShape) -> Dict[str, Optional[str]]:
    """Each class of ``shape`` -> None when it gets a job, or the class that builds it as a submodule.

    A class built by another is left to it, unless every class is built by
    another (a cycle), when all of them get jobs.
    """
    out = {cls: (shape.built_by.get(cls) or [None])[0] for cls in shape.classes}
    if shape.classes and all(v is not None for v in out.values()):
        return {cls: None for cls in shape.classes}
    return out


def _suggest(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def shard_of(job: Job, count: int) -> int:
    """The 1-based shard (of ``count``) that ``job`` belongs to.

    Decided by the SHA-256 of :attr:`Job.shard_key` (the project-relative path and
    the class or factory), so it is the same on every machine and Python run
    (unlike ``hash()``) and does not change when other modules are added.
    """
    digest = hashlib.sha256(job.shard_key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def select_shard(jobs: Sequence[Job], index: int, count: int) -> Tuple[List[Job], List[Job]]:
    """Split ``jobs`` into those of shard ``index`` of ``count`` and the rest.

    Args:
        jobs: the planned jobs.
        index: 1-based shard number, ``1 <= index <= count``.
        count: number of shards.

    Returns:
        ``(mine, others)``, each in the order of ``jobs``. Over ``index = 1 .. count``
        every job is in exactly one ``mine``.

    Raises:
        ValueError: ``index`` out of range.
    """
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: K must be between 1 and N")
    mine = [j for j in jobs if shard_of(j, count) == index]
    others = [j for j in jobs if shard_of(j, count) != index]
    return mine, others


def _dynamo_config(lint_settings) -> Tuple[Tuple[str, object], ...]:
    """The Dynamo knobs the lint assumed, so that confirm measures under the same assumptions."""
    if lint_settings is None:
        return ()
    out = []
    for knob in ("capture_scalar_outputs", "capture_dynamic_output_shape_ops", "allow_rnn"):
        if getattr(lint_settings, knob, False):
            out.append((knob, True))
    return tuple(out)


def plan_jobs(
    files: Sequence[Tuple[str, str, str]],
    settings: ConfirmSettings,
    lint_settings=None,
    read=None,
    only: Optional[Mapping[str, Sequence[str]]] = None,
) -> Tuple[List[Job], List[Tuple[str, str]]]:
    """The jobs for ``files``.

    Args:
        files: ``(path, display, relpath)`` per file (``relpath`` relative to the
            project root, ``/``-separated).
        settings: confirm settings (factory/inputs names, per-class entries, device, ...).
        lint_settings: the engine's :class:`~pt2lint.settings.LintSettings`, for the
            Dynamo knobs it assumed.
        read: ``read(path) -> str``; defaults to :func:`pt2lint.engine.read_source`.
        only: ``{absolute path: class names}`` from ``path::Class`` targets: those
            files get exactly these class jobs (their config entry when there is
            one, else ``Class()``), whatever else the file defines.

    Returns:
        ``(jobs, skipped)``: jobs in file order; ``skipped`` lists ``(label, why)``
        for files that could not be read or parsed and for classes left to the
        class that builds them.

    Raises:
        PlanError: ``settings.factory`` or ``settings.inputs`` was configured
            (``factory_from`` / ``inputs_from`` set) and no file defines it, or a
            ``path::Class`` target names a class the file does not define.
    """
    if read is None:
        from pt2lint.engine import read_source as read
    cpu = os.cpu_count() or 1
    threads = max(1, cpu // max(1, settings.jobs))
    common = dict(
        root=settings.root,
        device=settings.device,
        backend=settings.backend,
        target=settings.target,
        check_accuracy=settings.check_accuracy,
        memory_limit_mb=settings.memory_limit_mb,
        timeout=settings.timeout,
        threads=threads,
        dynamo_config=_dynamo_config(lint_settings),
    )
    only = {os.path.normcase(os.path.abspath(p)): list(v) for p, v in (only or {}).items()}
    for name, origin in ((settings.factory, settings.factory_from), (settings.inputs, settings.inputs_from)):
        if origin and name and ":" in name:
            raise PlanError(
                f"{origin}: {name!r} is a module:function spec; name a function that the files define, "
                "or give the class a per-class entry in [tool.pt2lint.confirm]"
            )
    jobs: List[Job] = []
    skipped: List[Tuple[str, str]] = []
    defined: Set[str] = set()
    for path, display, relpath in files:
        try:
            source = read(path)
        except Exception as exc:  # unreadable files are already reported by the lint
            skipped.append((display, f"cannot read: {exc}"))
            continue
        shape = scan_source(source)
        if shape.error:
            skipped.append((display, shape.error))
            continue
        defined.update(shape.functions)
        abspath = os.path.abspath(path)
        rel = relpath.replace(os.sep, "/")
        wanted = only.get(os.path.normcase(abspath))
        if wanted is not None:
            for cls in wanted:
                if cls not in shape.classes:
                    known = ", ".join(shape.classes) or "none"
                    raise PlanError(
                        f"{display}::{cls}: no nn.Module class {cls!r} with a forward in {display}{_suggest(cls, list(shape.classes))} "
                        f"(classes found: {known})"
                    )
                entry = settings.modules.get((rel, cls))
                factory, inputs = (entry.factory, entry.inputs) if entry is not None else (None, None)
                jobs.append(
                    Job(
                        path=abspath, display=display, relpath=rel, class_name=cls, factory=factory, inputs=inputs,
                        anchor_line=shape.classes[cls], **common,
                    )
                )
            continue
        if settings.factory and settings.factory in shape.functions:
            inputs = settings.inputs if settings.inputs and settings.inputs in shape.functions else None
            jobs.append(
                Job(
                    path=abspath, display=display, relpath=rel, factory=settings.factory, inputs=inputs,
                    anchor_line=shape.functions[settings.factory], **common,
                )
            )
            continue
        roots = _roots(shape)
        for cls, line in shape.classes.items():
            entry = settings.modules.get((rel, cls))
            if entry is None and roots[cls] is not None:
                skipped.append((f"{display}::{cls}", f"built inside {roots[cls]}, so it is confirmed as part of that module"))
                continue
            if entry is not None:
                factory, inputs = entry.factory, entry.inputs
            else:
                # An inputs function of the file is only meant for its one module.
                factory = None
                single = sum(1 for c in shape.classes if roots[c] is None) == 1
                inputs = settings.inputs if single and settings.inputs and settings.inputs in shape.functions else None
            jobs.append(
                Job(
                    path=abspath, display=display, relpath=rel, class_name=cls, factory=factory, inputs=inputs,
                    anchor_line=line, **common,
                )
            )
    for name, origin, what in (
        (settings.factory, settings.factory_from, "returns the nn.Module"),
        (settings.inputs, settings.inputs_from, "returns the forward arguments"),
    ):
        if origin and name and name not in defined and not (only and len(only) == len(files)):
            raise PlanError(
                f"{origin}: no linted file defines a function {name!r}{_suggest(name, sorted(defined))}; "
                f"it must be a module-level function that {what}"
            )
    return jobs, skipped


__all__ = ["FileShape", "Job", "PlanError", "plan_jobs", "scan_source", "select_shard", "shard_of"]
