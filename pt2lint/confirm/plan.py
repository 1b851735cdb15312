"""Which modules to confirm in each file, and how to build them — decided without running anything.

A file is read with :mod:`ast` (never imported) and gets:

* one **factory job** when it defines the module-level factory function
  (``--factory`` / ``factory =``): the factory builds the module and the inputs
  function (``--inputs`` / ``inputs =``), when the file defines it, the
  arguments; without one the inputs are synthesised;
* otherwise one **class job** per ``nn.Module``-looking class (a class that
  defines ``forward``, or derives from one in the same file): the per-class
  config entry ``"path.py::Class" = { factory, inputs }`` when there is one,
  else ``Class()`` with synthesised inputs.

Files with neither (helpers, scripts) get no job; their lines are still
covered when another file's module runs them.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

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

    @property
    def label(self) -> str:
        """How the module is named in reports: ``path::Class`` or ``path::factory()``."""
        if self.class_name:
            return f"{self.display}::{self.class_name}"
        return f"{self.display}::{self.factory}()"

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
        error: a one-line parse error, or None.
    """

    functions: Dict[str, int] = field(default_factory=dict)
    classes: Dict[str, int] = field(default_factory=dict)
    error: Optional[str] = None


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
    return shape


def _dynamo_config(lint_settings) -> Tuple[Tuple[str, object], ...]:
    """The Dynamo knobs the lint assumed, so that confirm measures under the same assumptions."""
    if lint_settings is None:
        return ()
    out = []
    for knob in ("capture_scalar_outputs", "capture_dynamic_output_shape_ops"):
        if getattr(lint_settings, knob, False):
            out.append((knob, True))
    return tuple(out)


def plan_jobs(
    files: Sequence[Tuple[str, str, str]],
    settings: ConfirmSettings,
    lint_settings=None,
    read=None,
) -> Tuple[List[Job], List[Tuple[str, str]]]:
    """The jobs for ``files``.

    Args:
        files: ``(path, display, relpath)`` per file (``relpath`` relative to the
            project root, ``/``-separated).
        settings: confirm settings (factory/inputs names, per-class entries, device, ...).
        lint_settings: the engine's :class:`~pt2lint.settings.LintSettings`, for the
            Dynamo knobs it assumed.
        read: ``read(path) -> str``; defaults to :func:`pt2lint.engine.read_source`.

    Returns:
        ``(jobs, skipped)``: jobs in file order; ``skipped`` lists ``(display, why)``
        for files that could not be read or parsed.
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
    jobs: List[Job] = []
    skipped: List[Tuple[str, str]] = []
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
        abspath = os.path.abspath(path)
        rel = relpath.replace(os.sep, "/")
        if settings.factory and settings.factory in shape.functions:
            inputs = settings.inputs if settings.inputs and settings.inputs in shape.functions else None
            jobs.append(
                Job(
                    path=abspath, display=display, relpath=rel, factory=settings.factory, inputs=inputs,
                    anchor_line=shape.functions[settings.factory], **common,
                )
            )
            continue
        for cls, line in shape.classes.items():
            entry = settings.modules.get((rel, cls))
            if entry is not None:
                factory, inputs = entry.factory, entry.inputs
            else:
                # An inputs function of the file is only meant for its one module.
                factory = None
                single = len(shape.classes) == 1
                inputs = settings.inputs if single and settings.inputs and settings.inputs in shape.functions else None
            jobs.append(
                Job(
                    path=abspath, display=display, relpath=rel, class_name=cls, factory=factory, inputs=inputs,
                    anchor_line=line, **common,
                )
            )
    return jobs, skipped


__all__ = ["FileShape", "Job", "plan_jobs", "scan_source"]
