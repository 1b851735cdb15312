"""The child side of confirm mode: import one file, build one module, and measure it under torch.

Each module runs in its own process (see :mod:`pt2lint.confirm.runner`), so
whatever the user code does — raise on import, ``sys.exit``, segfault, hang,
exhaust memory — ends this process only. The parent learns how far it got from
the ``("stage", name)`` messages sent before each step, and gets the
measurements in one ``("result", dict)`` message at the end.

The steps, in order (a failing step ends the job and names its failure class,
see :mod:`pt2lint.confirm.outcome`):

1. ``import``: load the file (by its dotted name inside a package, else by path).
2. ``build``: seed ``random``/``torch``/``numpy`` with 0 and call the factory (or
   ``Class()``), then move it to the device — the order ``fixtures/relabel.py`` uses.
3. ``inputs``: call the inputs function (or synthesise inputs,
   :mod:`pt2lint.confirm.inputs`) and remember the RNG state after it.
4. ``eager``: call a copy of the module eagerly while recording the executed
   user lines and instructions (:mod:`pt2lint.confirm.coverage`).
5. ``mutations``: :func:`pt2lint.confirm.dynamo.input_mutations` on another copy.
6. ``compile``: :func:`pt2lint.confirm.dynamo.compile_and_call` with six calls:
   the example inputs (the RNG restored to its state after step 3, so the first
   call sees what ``graph_breaks(make_model(), example_inputs())`` sees), fresh
   inputs of the same shapes (recompiles caused by values or module state), those
   with a batch one, two and three larger (the first new size is the one recompile
   automatic dynamic shapes costs; a recompile on the later ones is a graph per
   size), and fresh inputs of the first shapes again.  The graphs compiled after
   each call are counted; a module that recompiles for values or for each new size
   gets the ``recompile`` failure class.
7. ``recompile-limit``: when step 6 recompiled for a reason other than shapes,
   call a copy ``recompile_limit + 2`` times with fresh inputs (eager backend)
   to see whether Dynamo gives up.
8. ``accuracy`` (``--check-accuracy``) and ``export`` (``--target export``).

Run ``python -m pt2lint.confirm.child PATH[::Class]`` to repeat a job by hand
(``--plain`` compiles and calls without capturing Dynamo's logs, so
``TORCH_LOGS=...`` output reaches the terminal).
"""

from __future__ import annotations

import argparse
import copy
import faulthandler
import importlib
import importlib.util
import inspect
import json
import os
import random
import re
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

from pt2lint.confirm import outcome as oc
from pt2lint.confirm.coverage import Recorder
from pt2lint.confirm.plan import Job

_FAULT_FILE = None  # keeps the faulthandler file object alive


# ---------------------------------------------------------------------------
# what counts as user code

_IS_USER: Optional[Callable[[str], bool]] = None


def is_user_file(filename: str) -> bool:
    """True for user code: not torch, pt2lint or the standard library (see :func:`pt2lint.confirm.outcome.user_code_filter`)."""
    global _IS_USER
    if _IS_USER is None:
        _IS_USER = oc.user_code_filter()
    return _IS_USER(filename)


class LineRecorder(Recorder):
    """Records the user lines and instructions executed while it is active (see :class:`pt2lint.confirm.coverage.Recorder`)."""

    def __init__(self) -> None:
        super().__init__(is_user_file)


# ---------------------------------------------------------------------------
# loading user code


class ImportFailed(Exception):
    """Importing the file (or a ``module:fn`` spec) raised; ``__cause__`` is the original error."""


def load_file(path: str, root: str) -> Any:
    """Import the file at ``path``.

    Inside a package (``__init__.py`` files up the tree) it is imported by its
    dotted name with the package's parent on ``sys.path``, so relative imports
    work; otherwise its directory and ``root`` go on ``sys.path`` and it is
    loaded from its path, under its own name unless that name is taken (stdlib,
    an installed package), then as ``pt2lint_confirm_<stem>``.

    Raises:
        BaseException: whatever the module's top-level code raises (also ``SystemExit``).
    """
    path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    directory = os.path.dirname(path)
    parts = [stem]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parts.insert(0, os.path.basename(directory))
        directory = os.path.dirname(directory)
    if len(parts) > 1 and all(p.isidentifier() for p in parts):
        if directory not in sys.path:
            sys.path.insert(0, directory)
        name = ".".join(parts)
        module = importlib.import_module(name)
        if os.path.abspath(getattr(module, "__file__", "") or "") == path:
            return module
    for extra in (os.path.abspath(root), directory):
        if extra not in sys.path:
            sys.path.insert(0, extra)
    name = stem if stem.isidentifier() else "pt2lint_confirm_" + "".join(c if c.isalnum() else "_" for c in stem)
    existing = sys.modules.get(name)
    if existing is not None and os.path.abspath(getattr(existing, "__file__", "") or "") == path:
        return existing
    taken = existing is not None or name in getattr(sys, "stdlib_module_names", ())
    if not taken:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        taken = found is not None and os.path.abspath(found.origin or "") != path
    if taken:
        name = "pt2lint_confirm_" + name
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def resolve_callable(spec: str, job: Job, own_module: Any) -> Callable[..., Any]:
    """The function a spec names: a name in the job's file, ``module:fn``, or ``path/to/file.py:fn``.

    Raises:
        ImportFailed: the module of a ``module:fn`` spec cannot be imported.
        AttributeError: the function does not exist.
    """
    if ":" not in spec:
        return getattr(own_module, spec)
    module_part, _, attr = spec.rpartition(":")
    try:
        if module_part.endswith((".py", ".pyi")) or "/" in module_part or os.sep in module_part:
            path = module_part if os.path.isabs(module_part) else os.path.join(job.root, module_part)
            module = own_module if os.path.abspath(path) == job.path else load_file(path, job.root)
        else:
            if job.root not in sys.path:
                sys.path.insert(0, job.root)
            module = importlib.import_module(module_part)
    except BaseException as exc:
        raise ImportFailed(f"cannot import {module_part!r} for {spec!r}: {type(exc).__name__}: {exc}") from exc
    obj: Any = module
    for name in attr.split("."):
        obj = getattr(obj, name)
    return obj


# ---------------------------------------------------------------------------
# small helpers


def seed_all(seed: int = 0) -> None:
    """Seed ``random``, ``torch`` (all devices) and ``numpy`` when it is installed (as ``fixtures/relabel.py`` does)."""
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except Exception:  # numpy missing or broken: nothing to seed
        pass


def _rng_state() -> Tuple[Any, ...]:
    import torch

    np = sys.modules.get("numpy")
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    return (random.getstate(), torch.get_rng_state(), cuda, np.random.get_state() if np is not None else None)


def _set_rng_state(state: Tuple[Any, ...]) -> None:
    import torch

    py, cpu, cuda, nps = state
    random.setstate(py)
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
    np = sys.modules.get("numpy")
    if np is not None and nps is not None:
        np.random.set_state(nps)


def resolve_device(requested: Optional[str]) -> str:
    """``requested``, or ``cuda`` when available and ``cpu`` otherwise."""
    import torch

    if requested:
        return requested
    return "cuda" if torch.cuda.is_available() else "cpu"


def _device_problem(device: str) -> Optional[str]:
    """Why ``device`` cannot be used here, or None."""
    import torch

    try:
        kind, _, index = device.partition(":")
        if kind == "cuda":
            if not torch.cuda.is_available():
                return f"device {device!r} is not available here (torch.cuda.is_available() is False)"
            if index and int(index) >= torch.cuda.device_count():
                return f"device {device!r} is not available here ({torch.cuda.device_count()} CUDA devices)"
        elif kind == "mps":
            if not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
                return "device 'mps' is not available here (torch.backends.mps.is_available() is False)"
    except Exception as exc:  # a driver problem is also a reason
        return f"device {device!r} cannot be used: {_first_line(exc)}"
    return None


#: Characters of an exception message kept in a report; the rest is cut with a note.
MESSAGE_LIMIT = 1000


def shorten(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [message truncated: {len(text) - limit:,} more characters]"


def _first_line(exc: BaseException) -> str:
    try:
        message = str(exc)
    except Exception:  # a broken __str__ of user code
        message = ""
    text = ""
    for line in message.splitlines():
        if line.strip():
            text = line.strip()
            break
    text = shorten(text)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def error_info(exc: BaseException) -> Dict[str, Any]:
    """Type, first message line, the innermost user frame and the last traceback lines of ``exc``."""
    frames = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    user = oc.innermost_user_frame(frames, is_user_file, most_recent_first=False)
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "type": type(exc).__name__,
        "module": type(exc).__module__,
        "message": _first_line(exc),
        "filename": os.path.abspath(user[0]) if user else None,
        "lineno": user[1] if user else None,
        "traceback": tb[-4000:],
    }


def classify_compile_error(exc: BaseException) -> str:
    """The failure class of an exception raised by a compiled call that ran fine eagerly.

    ``BackendCompilerFailed`` is a backend compiler failure; the recompile-limit
    exceptions are the recompile limit; any other ``torch._dynamo`` exception
    (``InternalTorchDynamoError``, ``TorchRuntimeError`` from fake-tensor
    propagation, ...) and an exception raised from inside Dynamo or Inductor is a
    Dynamo internal error; the rest (CUDA errors, out of memory, user
    exceptions) is a runtime crash.
    """
    name = type(exc).__name__
    module = type(exc).__module__ or ""
    if name == "BackendCompilerFailed":
        return oc.BACKEND_COMPILER_FAILURE
    if name in ("FailOnRecompileLimitHit", "RecompileLimitExceeded", "CacheLimitExceeded"):
        return oc.RECOMPILE_LIMIT
    text = str(exc)
    if isinstance(exc, MemoryError) or oc.is_out_of_memory(text) or oc.is_cuda_error(text):
        return oc.RUNTIME_CRASH
    if module.startswith("torch._dynamo"):
        return oc.DYNAMO_INTERNAL_ERROR
    if module.startswith("torch._inductor"):
        return oc.BACKEND_COMPILER_FAILURE
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1].filename.replace(os.sep, "/")
        if "/torch/_inductor/" in last:
            return oc.BACKEND_COMPILER_FAILURE
        if "/torch/_dynamo/" in last:
            return oc.DYNAMO_INTERNAL_ERROR
    return oc.RUNTIME_CRASH


def guard_text(reason: str) -> str:
    """The newest failed guard of a recompile reason: ``"self.n == 7"`` from
    ``"forward (/m.py:8): 0/7: self.n == 7; 0/6: self.n == 6"``."""
    tail = reason.split("): ", 1)[1] if "): " in reason else reason
    first = tail.split("; ", 1)[0]
    parts = first.split(": ", 1)
    return parts[1] if len(parts) == 2 and "/" in parts[0] else first


def _copy_model(model: Any, rebuild: Callable[[], Any]) -> Any:
    try:
        return copy.deepcopy(model)
    except Exception:
        return rebuild()


def _copy_inputs(args: tuple, kwargs: Dict[str, Any]) -> Tuple[tuple, Dict[str, Any]]:
    try:
        return copy.deepcopy(args), copy.deepcopy(kwargs)
    except Exception:
        return args, kwargs


def compare_outputs(expected: Any, actual: Any) -> Tuple[bool, str]:
    """Whether compiled outputs match eager ones (``torch.testing.assert_close``, rtol/atol 1e-3).

    Returns:
        ``(ok, detail)``; ``detail`` is the first lines of the mismatch report.
    """
    import torch

    def plain(value: Any) -> Any:
        if hasattr(value, "to_tuple") and callable(value.to_tuple):  # transformers ModelOutput
            return value.to_tuple()
        return value

    try:
        torch.testing.assert_close(plain(actual), plain(expected), rtol=1e-3, atol=1e-3, equal_nan=True, check_device=False)
    except AssertionError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return False, "; ".join(lines[:3])
    except Exception as exc:  # outputs that assert_close cannot compare
        return True, f"outputs not compared ({type(exc).__name__})"
    return True, "outputs match (rtol=1e-3, atol=1e-3)"


# ---------------------------------------------------------------------------
# the job


def required_arguments(cls: type) -> List[str]:
    """The constructor parameters of ``cls`` that have no default (``[]`` when ``cls()`` binds).

    Read from ``inspect.signature(cls)`` without calling anything; a class whose
    signature cannot be read counts as buildable (calling it decides).
    """
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in sig.parameters.values()
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _call_inputs_fn(fn: Callable[..., Any], model: Any) -> Any:
    """Call an inputs function; one that takes a required argument gets the module."""
    try:
        params = [
            p for p in inspect.signature(fn).parameters.values()
            if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return fn(model) if len(params) == 1 else fn()


def _gb_dict(gb: Any, call: int) -> Dict[str, Any]:
    return {
        "filename": gb.filename,
        "lineno": gb.lineno,
        "reason": gb.reason,
        "gb_type": gb.gb_type,
        "call": call,
        "user_stack": [list(f) for f in gb.user_stack],
    }


def _recompile_dict(r: Any) -> Dict[str, Any]:
    return {"reason": r.reason, "filename": r.filename, "lineno": r.lineno, "tensor_only": r.tensor_only, "call": r.call}


def new_result(job: Job) -> Dict[str, Any]:
    """The empty result of ``job`` (what the parent gets even when the child dies early)."""
    return {
        "label": job.label,
        "stage": None,
        "failure": None,
        "detail": None,
        "error": None,
        "skipped": None,
        "needs_arguments": None,
        "failed_stage": None,
        "device": job.device,
        "backend": job.backend,
        "model_class": None,
        "class_file": None,
        "class_line": None,
        "inputs": None,
        "inputs_note": None,
        "synthesised": False,
        "eager_ok": False,
        "compiled": False,
        "mutations_ok": False,
        "calls": 0,
        "graph_breaks": [],
        "recompiles": [],
        "recompile_limit": False,
        "graphs": [],
        "call_inputs": [],
        "second_call_error": None,
        "mutations": [],
        "executed": {},
        "executed_spans": {},
        "accuracy": None,
        "export": None,
        "notes": [],
        "seconds": {},
    }


def run_job(job: Job, report: Callable[[str, Any], None] = lambda kind, payload: None) -> Dict[str, Any]:
    """Import, build, run and compile one module; return what was measured.

    Args:
        job: what to run.
        report: ``report("stage", name)`` is called before each step.

    Returns:
        The result dict (see :func:`new_result`): ``failure`` is one of
        :data:`pt2lint.confirm.outcome.FAILURE_CLASSES` (or None) with ``detail``
        and ``error``; ``skipped`` is set when the class is not an ``nn.Module``.
        Exceptions of user code never escape, ``SystemExit`` included.
    """
    result = new_result(job)
    clock = time.perf_counter()

    def stage(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        if result["stage"]:
            result["seconds"][result["stage"]] = round(now - clock, 3)
        clock = now
        result["stage"] = name
        report("stage", name)

    def fail(failure: str, detail: str, exc: Optional[BaseException] = None) -> Dict[str, Any]:
        result["failed_stage"] = result["stage"]
        result["failure"] = failure
        result["detail"] = detail
        if exc is not None:
            result["error"] = error_info(exc)
        stage("done")
        return result

    stage("setup")
    try:
        import torch

        from pt2lint.confirm import dynamo
        from pt2lint.confirm.inputs import (
            NoExampleInputs,
            describe,
            map_tensors,
            normalize_inputs,
            synthesize_inputs,
            with_bigger_batch,
        )
    except BaseException as exc:
        return fail(oc.IMPORT_ERROR, f"torch cannot be imported: {_first_line(exc)}", exc)
    try:
        torch.set_num_threads(max(1, job.threads))
    except Exception:
        pass
    device = resolve_device(job.device)
    result["device"] = device
    unavailable = _device_problem(device)
    if unavailable:
        return fail(oc.RUNTIME_CRASH, unavailable)

    # 1. import
    stage("import")
    try:
        module = load_file(job.path, job.root)
    except BaseException as exc:
        what = "called sys.exit(%r) at import" % (exc.code,) if isinstance(exc, SystemExit) else _first_line(exc)
        return fail(oc.IMPORT_ERROR, f"importing the file failed: {what}", exc)

    # 2. build
    stage("build")
    try:
        if job.factory:
            make = resolve_callable(job.factory, job, module)
        else:
            cls = getattr(module, job.class_name or "")
            if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
                result["skipped"] = f"{job.class_name} is not a torch.nn.Module subclass"
                stage("done")
                return result
            needs = required_arguments(cls)
            if needs:
                result["skipped"] = (
                    f"{job.class_name}() cannot be built alone: its constructor needs {', '.join(needs)} "
                    "(give it a factory in [tool.pt2lint.confirm], or confirm the module that builds it)"
                )
                result["needs_arguments"] = needs
                stage("done")
                return result
            make = cls
    except ImportFailed as exc:
        return fail(oc.IMPORT_ERROR, str(exc), exc.__cause__ or exc)
    except AttributeError as exc:
        return fail(oc.IMPORT_ERROR, f"{job.factory or job.class_name} not found: {_first_line(exc)}", exc)

    def build() -> Any:
        seed_all(0)
        built = make()
        if isinstance(built, torch.nn.Module):
            built = built.to(device)
        return built

    try:
        model = build()
    except BaseException as exc:
        if isinstance(exc, SystemExit):
            return fail(oc.RUNTIME_CRASH, f"user code called sys.exit({exc.code!r}) while building the module", exc)
        if not job.factory and isinstance(exc, TypeError):
            return fail(oc.NO_INPUTS, f"{job.class_name}() cannot be built without arguments: {_first_line(exc)}", exc)
        return fail(oc.RUNTIME_CRASH, f"building the module failed: {_first_line(exc)}", exc)
    if not callable(model):
        return fail(oc.RUNTIME_CRASH, f"the factory returned {type(model).__name__}, which is not callable")
    cls = type(model) if isinstance(model, torch.nn.Module) else None
    if cls is not None:
        result["model_class"] = cls.__qualname__
        try:
            result["class_file"] = os.path.abspath(inspect.getsourcefile(cls) or "")
            result["class_line"] = inspect.getsourcelines(cls)[1]
        except (OSError, TypeError):
            pass

    # 3. inputs
    stage("inputs")
    to_device = lambda t: t.to(device)  # noqa: E731
    inputs_fn: Optional[Callable[..., Any]] = None
    try:
        if job.inputs:
            inputs_fn = resolve_callable(job.inputs, job, module)
            args, kwargs = normalize_inputs(_call_inputs_fn(inputs_fn, model))
            result["inputs_note"] = f"from {job.inputs}()"
        else:
            if not isinstance(model, torch.nn.Module):
                return fail(oc.NO_INPUTS, "the factory returned a function, and no inputs function is configured")
            args, kwargs, note = synthesize_inputs(model, device)
            result["synthesised"] = True
            result["inputs_note"] = f"synthesised: {note}"
        args, kwargs = map_tensors(args, to_device), map_tensors(kwargs, to_device)
    except NoExampleInputs as exc:
        return fail(oc.NO_INPUTS, str(exc))
    except ImportFailed as exc:
        return fail(oc.IMPORT_ERROR, str(exc), exc.__cause__ or exc)
    except BaseException as exc:
        if isinstance(exc, SystemExit):
            return fail(oc.RUNTIME_CRASH, f"user code called sys.exit({exc.code!r}) while making the inputs", exc)
        return fail(oc.RUNTIME_CRASH, f"the inputs function failed: {_first_line(exc)}", exc)
    result["inputs"] = describe(args, kwargs)
    after_inputs = _rng_state()

    def fresh_inputs() -> Tuple[tuple, Dict[str, Any]]:
        if inputs_fn is not None:
            a, k = normalize_inputs(_call_inputs_fn(inputs_fn, model))
        else:
            a, k, _ = synthesize_inputs(model, device)
        return map_tensors(a, to_device), map_tensors(k, to_device)

    # 4. eager, recording executed lines
    stage("eager")
    eager_model = _copy_model(model, build)
    e_args, e_kwargs = _copy_inputs(args, kwargs)
    recorder = LineRecorder()
    _set_rng_state(after_inputs)
    try:
        with recorder:
            eager_out = eager_model(*e_args, **e_kwargs)
    except BaseException as exc:
        result["executed"] = recorder.as_dict()
        result["executed_spans"] = recorder.spans()
        if isinstance(exc, SystemExit):
            return fail(oc.RUNTIME_CRASH, f"user code called sys.exit({exc.code!r}) in the eager call", exc)
        if result["synthesised"]:
            return fail(oc.NO_INPUTS, f"the synthesised inputs ({result['inputs']}) do not fit: {_first_line(exc)}", exc)
        return fail(oc.RUNTIME_CRASH, f"the eager call failed: {_first_line(exc)}", exc)
    result["executed"] = recorder.as_dict()
    result["executed_spans"] = recorder.spans()
    result["eager_ok"] = True
    del eager_model

    # 5. input mutations
    stage("mutations")
    try:
        m_args, m_kwargs = _copy_inputs(args, kwargs)
        _set_rng_state(after_inputs)
        found = dynamo.input_mutations(_copy_model(model, build), m_args, m_kwargs)
        result["mutations"] = [
            {"filename": m.filename, "lineno": m.lineno, "op": m.op, "argument": m.argument} for m in found
        ]
        result["mutations_ok"] = True
    except Exception as exc:  # not a failure of the module: the probe is extra
        result["notes"].append(f"input-mutation probe failed: {_first_line(exc)}")

    # 6. compile and call three times
    stage("compile")
    c_args, c_kwargs = _copy_inputs(args, kwargs)
    calls: List[Tuple[tuple, Dict[str, Any]]] = [(c_args, c_kwargs)]
    try:
        second = fresh_inputs()
    except Exception as exc:
        second = None
        result["notes"].append(f"second inputs could not be made: {_first_line(exc)}")
    size_calls: List[int] = []  # indexes of the calls with a batch size not seen before (after the first one)
    if second is not None:
        calls.append(second)
        bigger = with_bigger_batch(*_copy_inputs(*second))
        for _ in range(3):
            if bigger is None:
                break
            size_calls.append(len(calls))
            calls.append(bigger)
            bigger = with_bigger_batch(*_copy_inputs(*bigger))
        try:
            calls.append(fresh_inputs())
        except Exception as exc:
            result["notes"].append(f"last inputs could not be made: {_first_line(exc)}")

    def before_call(index: int) -> None:
        if index == 0:
            _set_rng_state(after_inputs)
        report("stage", f"compile call {index + 1}")

    calls_made = [_copy_inputs(a, k) for a, k in calls]
    patches = []
    if job.check_accuracy and job.backend == "inductor":
        try:
            import torch._inductor.config as inductor_config

            patches.append(inductor_config.patch(fallback_random=True))
        except Exception:
            pass
    for p in patches:
        p.__enter__()
    try:
        run = dynamo.compile_and_call(
            model, calls, backend=job.backend, config=dict(job.dynamo_config) or None, before_call=before_call
        )
    finally:
        for p in reversed(patches):
            p.__exit__(None, None, None)
    result["graph_breaks"] = [_gb_dict(gb, i) for i, per_call in enumerate(run.graph_breaks) for gb in per_call]
    # A recompile on a new size after the first new size: automatic dynamic shapes had made
    # the dimension symbolic, so something specialised it again (a graph per size).
    result["recompiles"] = [
        dict(_recompile_dict(r), size_hazard=r.call in size_calls[1:]) for r in run.recompiles
    ]
    # A recompile on call 2 (new values, same shapes) is a hazard when the module goes on
    # recompiling for something other than a shape on a later call; once only, it was a
    # cache filled on the first call (``if k not in cache``).  Judged by the newest failed
    # guard of each recompile (the last graph's): older graphs' guards are listed again on
    # every later recompile, a cache's filled key among them.
    if len(run.graphs) > 2:
        goes_on = any(
            (r["call"] or 0) >= 2 and not dynamo.is_tensor_guard(guard_text(r["reason"])) for r in result["recompiles"]
        )
        for r in result["recompiles"]:
            if r["call"] == 1 and not r["tensor_only"]:
                r["repeats"] = goes_on
    result["recompile_limit"] = run.recompile_limit_hit
    result["graphs"] = list(run.graphs)
    result["call_inputs"] = [describe(*c) for c in calls_made[: len(run.graphs)]]
    result["compiled"] = run.failed_call != 0
    result["calls"] = len(run.outputs)
    if run.error is not None:
        exc = run.error
        if isinstance(exc, SystemExit):
            return fail(oc.RUNTIME_CRASH, f"user code called sys.exit({exc.code!r}) in the compiled call", exc)
        failure = classify_compile_error(exc)
        eager_too = None
        if run.failed_call:
            # Later calls use inputs the module never ran with: if it rejects them
            # eagerly as well, the inputs are at fault, not the compiler.
            try:
                again_args, again_kwargs = _copy_inputs(*calls_made[run.failed_call])
                _copy_model(model, build)(*again_args, **again_kwargs)
            except BaseException as eager_exc:  # noqa: B036 - anything counts as "rejects"
                eager_too = eager_exc
        if eager_too is None:
            where = "" if run.failed_call == 0 else f" (call {run.failed_call + 1}, {describe(*calls_made[run.failed_call])})"
            return fail(failure, f"the compiled call failed{where}: {_first_line(exc)}", exc)
        result["second_call_error"] = (
            f"call {run.failed_call + 1} ({describe(*calls_made[run.failed_call])}) fails eagerly too: {_first_line(eager_too)}"
        )
    if run.recompile_limit_hit:
        result["failure"] = oc.RECOMPILE_LIMIT
    hazard_recompiles = [
        r for r in result["recompiles"] if (r["call"] == 1 and not r["tensor_only"] and r.get("repeats", True)) or r["size_hazard"]
    ]
    if hazard_recompiles and result["failure"] is None:
        result["failure"] = oc.RECOMPILE
        result["detail"] = (
            f"{run.graphs[-1]} graphs over {len(run.graphs)} calls with varying inputs "
            f"({', '.join(result['call_inputs'])}); the first failed guard: `{guard_text(hazard_recompiles[0]['reason'])}`"
        )

    # 7. recompile limit
    # Call 2 has new values of the same shapes: what recompiles there recompiles on every step.
    repeating = {(r["reason"], r["call"]) for r in result["recompiles"] if r.get("repeats", True)}
    hazards = [r for r in run.recompiles if not r.tensor_only and r.call == 1 and (r.reason, r.call) in repeating]
    if hazards and not run.recompile_limit_hit:
        stage("recompile-limit")
        import torch._dynamo

        limit = int(getattr(torch._dynamo.config, "recompile_limit", getattr(torch._dynamo.config, "cache_size_limit", 8)))
        try:
            probe_calls = [fresh_inputs() for _ in range(limit + 2)]
            probe = dynamo.compile_and_call(
                _copy_model(model, build), probe_calls, backend="eager", config=dict(job.dynamo_config) or None
            )
            if probe.recompile_limit_hit:
                result["recompile_limit"] = True
                result["failure"] = oc.RECOMPILE_LIMIT
                last = [r for r in probe.recompiles if not r.tensor_only]
                newest = last[-1] if last else hazards[0]
                where = f" (line {newest.lineno})" if newest.lineno else ""
                resumed = re.match(r"torch_dynamo_resume_in_\w+?_at_(\d+) ", newest.reason)
                cause = (
                    f"the code resumed after the graph break at line {resumed.group(1)} guards on the value it produced, so it "
                    if resumed
                    else ""
                )
                result["detail"] = (
                    f"{cause}recompiled on every call with new inputs until Dynamo's recompile_limit ({limit}) "
                    f"and ran eagerly from then on; the guard that kept failing: `{guard_text(newest.reason)}`{where}"
                )
                result["recompiles"].extend(_recompile_dict(r) for r in last[-1:])
        except Exception as exc:
            result["notes"].append(f"recompile-limit probe failed: {_first_line(exc)}")

    # 8. accuracy and export
    if job.check_accuracy and run.outputs:
        stage("accuracy")
        ok, detail = compare_outputs(eager_out, run.outputs[0])
        result["accuracy"] = {"ok": ok, "detail": detail}
        if not ok and oc.failure_rank(oc.ACCURACY_MISMATCH) < oc.failure_rank(result["failure"]):
            result["failure"] = oc.ACCURACY_MISMATCH
            result["detail"] = f"compiled outputs differ from eager: {detail}"
    if job.target == "export":
        stage("export")
        x_args, x_kwargs = _copy_inputs(args, kwargs)
        try:
            failure = dynamo.export_failure(_copy_model(model, build), x_args, x_kwargs)
        except Exception as exc:
            result["notes"].append(f"export probe failed: {_first_line(exc)}")
            failure = None
            result["export"] = {"ok": False, "message": _first_line(exc), "filename": None, "lineno": None}
        else:
            result["export"] = (
                {"ok": True, "message": "torch.export.export succeeded", "filename": None, "lineno": None}
                if failure is None
                else {"ok": False, "message": failure.message, "filename": failure.filename, "lineno": failure.lineno}
            )
    if result["failure"] is None and result["graph_breaks"]:
        result["failure"] = oc.GRAPH_BREAK
        n = len(result["graph_breaks"])
        result["detail"] = f"{n} graph break{'s' if n != 1 else ''}"
    if result["failure"] is None and result["export"] is not None and not result["export"]["ok"]:
        result["failure"] = oc.EXPORT_FAILURE
        result["detail"] = result["export"]["message"]
    stage("done")
    return result


# ---------------------------------------------------------------------------
# process entry points


def _limit_memory(megabytes: Optional[int], device: Optional[str]) -> Optional[str]:
    """Cap the address space at its current size plus ``megabytes`` MiB (Linux); a note when not applied."""
    if not megabytes:
        return None
    if device and not device.startswith("cpu"):
        return "memory limit not applied: it would also limit the accelerator driver's address space"
    try:
        import resource

        with open("/proc/self/status", encoding="ascii") as fh:
            vm_kb = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = vm_kb * 1024 + megabytes * 1024 * 1024
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, StopIteration, ValueError) as exc:
        return f"memory limit not applied: {exc}"
    return None


def process_main(job: Job, conn: Any, run: Optional[Callable[..., Dict[str, Any]]] = None) -> None:
    """Entry point of the child process (``multiprocessing`` target).

    ``run(job, report)`` does the work (default :func:`run_job`; ``pt2lint fix --verify``
    passes :func:`pt2lint.confirm.verify.run_verify_job`); everything around it is the same.

    Starts a new session (so the parent can kill the whole process group),
    puts the job's token in the environment (see :mod:`pt2lint.confirm.runner`), sends stdout/stderr and ``faulthandler`` crash reports to ``job.log_path``,
    arms ``faulthandler.dump_traceback_later`` just before the timeout (so a hang
    leaves the stack it hung in), applies the memory limit, runs the job and
    sends ``("result", dict)``.
    """
    global _FAULT_FILE
    try:
        os.setsid()
    except (OSError, AttributeError):
        pass
    if job.token:
        from pt2lint.confirm.runner import TOKEN_ENV

        os.environ[TOKEN_ENV] = job.token  # inherited by what the module starts, so the parent can find it
    if job.log_path:
        fd = os.open(job.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    _FAULT_FILE = open(job.log_path, "a", buffering=1) if job.log_path else sys.stderr
    faulthandler.enable(file=_FAULT_FILE, all_threads=False)
    if job.timeout and job.timeout > 2:
        faulthandler.dump_traceback_later(job.timeout - 1.0, exit=False, file=_FAULT_FILE)

    def report(kind: str, payload: Any) -> None:
        try:
            conn.send((kind, payload))
        except (OSError, ValueError):
            pass

    note = _limit_memory(job.memory_limit_mb, job.device)
    try:
        result = (run or run_job)(job, report)
    except BaseException as exc:  # a bug of ours, or an exception escaping user __del__ etc.
        result = new_result(job)
        result["failure"] = oc.RUNTIME_CRASH
        result["detail"] = f"confirm child failed: {_first_line(exc)}"
        result["error"] = error_info(exc)
    if note:
        result["notes"].append(note)
    faulthandler.cancel_dump_traceback_later()
    report("result", result)
    try:
        conn.close()
    except OSError:
        pass
    sys.stdout.flush()
    sys.stderr.flush()


def _parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m pt2lint.confirm.child",
        description="Confirm one module by hand: import it, build it, run it eagerly and compiled, print the result as JSON.",
    )
    parser.add_argument("target", help="PATH (with --factory) or PATH::ClassName")
    parser.add_argument("--factory", help="factory: a function name in the file, or module:fn")
    parser.add_argument("--inputs", help="example inputs: a function name in the file, or module:fn")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps (default: cuda if available)")
    parser.add_argument("--backend", default="eager", choices=("eager", "aot_eager", "inductor"))
    parser.add_argument("--target", dest="target_kind", default="compile", choices=("compile", "export"))
    parser.add_argument("--check-accuracy", action="store_true")
    parser.add_argument("--plain", action="store_true", help="just torch.compile and call (TORCH_LOGS output is not captured)")
    parser.add_argument("--eager-only", action="store_true", help="just build and call eagerly")
    parser.add_argument("--root", default=".", help="directory that module:fn specs are imported from (default: .)")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m pt2lint.confirm.child``: run one job in this process and print its result.

    Returns:
        0 when the module ran (graph breaks included), 1 when it failed.
    """
    opts = _parse_args(argv)
    path, _, cls = opts.target.partition("::")
    if not cls and not opts.factory:
        print("error: give PATH::ClassName or --factory NAME", file=sys.stderr)
        return 2
    root = os.path.abspath(opts.root)
    job = Job(
        path=os.path.abspath(path), display=path, relpath=path, root=root, class_name=cls or None,
        factory=opts.factory, inputs=opts.inputs, device=opts.device, backend=opts.backend,
        target=opts.target_kind, check_accuracy=opts.check_accuracy, threads=os.cpu_count() or 1,
    )
    if opts.plain or opts.eager_only:
        import torch

        from pt2lint.confirm.inputs import map_tensors, normalize_inputs, synthesize_inputs

        module = load_file(job.path, root)
        make = resolve_callable(job.factory, job, module) if job.factory else getattr(module, cls)
        device = resolve_device(job.device)
        seed_all(0)
        model = make()
        if isinstance(model, torch.nn.Module):
            model = model.to(device)
        if job.inputs:
            args, kwargs = normalize_inputs(_call_inputs_fn(resolve_callable(job.inputs, job, module), model))
        else:
            args, kwargs, _ = synthesize_inputs(model, device)
        args = map_tensors(args, lambda t: t.to(device))
        kwargs = map_tensors(kwargs, lambda t: t.to(device))
        if opts.eager_only:
            model(*args, **kwargs)
            print("eager call finished", file=sys.stderr)
            return 0
        if job.target == "export":
            torch.export.export(model, args, kwargs=kwargs or None)
        else:
            torch.compile(model, backend=job.backend)(*args, **kwargs)
        print("compiled call finished", file=sys.stderr)
        return 0
    result = run_job(job)
    result.pop("executed", None)
    result.pop("executed_spans", None)
    print(json.dumps(result, indent=2, default=str))
    return 1 if result["failure"] not in (None, oc.GRAPH_BREAK) else 0


if __name__ == "__main__":
    sys.exit(main())
