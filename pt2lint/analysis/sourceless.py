"""Calls Dynamo cannot resume after: a method of an object built in the frame that graph-breaks.

When a graph break happens inside a function that Dynamo inlines, it gives up on the inlined
call as a whole and breaks in the compiled frame at the call instruction instead: the graph is
compiled up to that instruction, the call itself runs eagerly, and a resume function takes over
after it.  To make the eager call, Dynamo has to rebuild what is on the frame's stack at that
point, the callee first.  A bound method of a user-defined object that the compiled frame
created itself (``s = Solver(x)``, ``make_solver(x)``, ``Solver(x)``) has no source -- it is
neither an input, nor a global, nor reached from one -- and Dynamo has no bytecode rule for
rebuilding such a method: "Reconstruction failure" (GB0092), reported at the call's line; the
whole function then runs eagerly, and the method is compiled as a frame of its own, where its
own break is reported too.

Measured on torch 2.13 with the ``graph_breaks`` log (``torch._dynamo.explain`` does not list
the reconstruction failure, only the breaks of the frames compiled after it):

* break at the call site: ``s = Solver(x); s.integrate(t)`` where ``integrate`` (or a method
  it calls) prints, calls ``.item()`` or branches on a tensor; the same through a factory
  (``s = make(x)``), on ``Solver(x).integrate(t)``, on a ``@dataclass`` instance, on a method of
  an ``nn.Module`` built in the frame (``m = Sub(); m.helper(t)``), on a ``@staticmethod``
  reached through the instance, under ``with torch.no_grad():`` (see below), with a loop later in the
  function, and when the object was created after an earlier break of the frame (in the resume
  function).  The rest of the function runs eagerly: a ``print`` after the call is not reported,
  a function it calls later is compiled as its own frame and its breaks are.
* no break at the call site (the method's own break only): the object is ``self``, an input,
  a global or an attribute of ``self`` set outside the region; a graph break of the frame
  falls between the object's creation and the call (the resume function receives it as an
  argument, which has a source); the call is a module call ``m(t)``, ``s(t)`` (``__call__``),
  a ``@classmethod`` or ``Solver.integrate(s, t)`` (the callee is the class's attribute); the
  call is in a ``for``/``while`` body (Dynamo skips the whole frame instead) or in a ``try``
  block (no partial graph there); nested functions, lambdas and ``functools.partial`` objects
  created in the frame are rebuilt fine.

Inside a ``with`` block the call-site break happens for the context managers Dynamo can
re-enter in the resume function -- measured for ``torch.no_grad()``, ``torch.enable_grad()``,
``torch.set_grad_enabled(False)``, ``torch.autocast("cpu")``, ``torch.inference_mode()`` and
``contextlib.nullcontext()`` (:data:`RESUMABLE_MANAGERS`) -- but not under a context manager
class of the user's or a ``@contextlib.contextmanager`` function (only the method's own break
is reported there); the analysis stays quiet under any other manager.

The analysis tracks, per frame, the local names bound to an object built in that frame and
the number of graph breaks seen when they were bound (``Frame.born``); a method call on such a
name (or directly on the constructing call) whose arguments or body graph-break, with no break
since the binding, gets the call-site finding.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from pt2lint.analysis import objects
from pt2lint.analysis.events import SourcelessCallEvent
from pt2lint.analysis.index import ClassInfo, FunctionInfo, identifier
from pt2lint.analysis.kinds import Kind, Value

#: context managers under which the call-site break was measured (torch 2.13): Dynamo resumes
#: inside them, so it rebuilds the stack at the call
RESUMABLE_MANAGERS = frozenset({
    "torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.autocast",
    "torch.inference_mode", "contextlib.nullcontext",
})

#: method kinds whose bound form has no source when the instance has none (a classmethod is
#: bound to the class, which does)
_UNRECONSTRUCTABLE_KINDS = ("method", "staticmethod")


def is_built_instance(value: Optional[Value]) -> bool:
    """Whether ``value`` is (each candidate of it is) an instance of a project class constructed
    inside the compiled region (``Value.const`` :data:`~pt2lint.analysis.objects.BUILT`)."""
    if value is None:
        return False
    cands = objects.candidates(value)
    return bool(cands) and all(
        c.kind is Kind.MODULE and isinstance(c.ref, ClassInfo) and c.const == objects.BUILT for c in cands
    )


def _bound_methods(callee: Optional[Value]) -> Optional[Sequence[FunctionInfo]]:
    """The methods ``callee`` may be when it is a method of an instance (each candidate), else ``None``."""
    if callee is None:
        return None
    out = []
    for c in objects.candidates(callee):
        fn = c.ref
        if c.kind is not Kind.FUNCTION or not isinstance(fn, FunctionInfo) or fn.cls is None:
            return None
        if fn.kind not in _UNRECONSTRUCTABLE_KINDS or c.const is not None:
            return None
        out.append(fn)
    return out or None


def note_candidates(interp, node: cst.Call, start: int, outcomes) -> None:
    """Remember which candidates of a "one of these" call graph-broke (``SOLVERS[method](...)``).

    Args:
        interp: the interpreter.
        node: the call.
        start: ``interp.gb_events`` before the first candidate was called.
        outcomes: ``(candidate value, whether a graph break was seen during its call)``, in order.

    Only one class is really constructed (one method really called); an instance of a class
    whose constructor did not break is built in the frame, and a call of one of its methods
    that breaks is a call-site break, whatever the other candidates do.
    """
    if interp.silent:
        return
    interp.__dict__.setdefault("_sourceless_candidates", {})[id(node)] = (node, start, tuple(outcomes))


def _candidate_outcomes(interp, node: cst.CSTNode, breaks_before: int):
    """The ``(candidate, broke)`` pairs of the last "one of these" call at ``node``, when no graph
    break happened in it before its candidates were called; ``None`` otherwise."""
    hit = interp.__dict__.get("_sourceless_candidates", {}).get(id(node))
    if hit is None or hit[0] is not node or hit[1] != breaks_before:
        return None
    return hit[2]


def _classes(value: Value) -> tuple:
    return tuple(c.ref for c in objects.candidates(value))


def _clean_classes(interp, rhs: cst.BaseExpression, value: Value, breaks_before: int) -> tuple:
    """The classes ``value`` may be an instance of whose construction at ``rhs`` saw no graph break."""
    classes = _classes(value)
    if interp.gb_events == breaks_before:
        return classes
    outcomes = _candidate_outcomes(interp, rhs, breaks_before)
    if outcomes is None:
        return ()
    clean = [c.ref for c, broke in outcomes if not broke and c.kind is Kind.CLASS and isinstance(c.ref, ClassInfo)]
    return tuple(cls for cls in classes if any(cls is c for c in clean))


def _born_entry(frame, name: str) -> Optional[tuple]:
    """``(graph-break count when bound, classes built without a break)`` of ``name`` when it still
    holds the object built in ``frame`` it was bound to; ``None`` otherwise."""
    entry = frame.born.get(name)
    if entry is None:
        return None
    stamp, bound, clean = entry
    if frame.env.get(name) is not bound:
        return None
    return stamp, clean


def note_binding(interp, targets: Sequence[cst.BaseExpression], rhs: cst.BaseExpression, value: Value, breaks_before: int) -> None:
    """Record (or forget) the local names of ``targets`` as bound to an object built in this frame.

    Args:
        interp: the :class:`~pt2lint.analysis.interp.Interpreter`, its frame current.
        targets: the assignment's targets; only plain names are tracked.
        rhs: the assigned expression: a call (a constructor or a function returning a new
            instance) or a name already tracked makes the binding fresh.
        value: the value assigned.
        breaks_before: ``interp.gb_events`` before ``rhs`` was evaluated: an object returned
            through a graph break reaches the resume function as an argument, which has a
            source (for a "one of these" constructor call, the candidates that did not break
            still build the object in the frame).
    """
    frame = interp.frame
    if frame is None or interp.silent:
        return
    clean: tuple = ()
    if is_built_instance(value):
        if isinstance(rhs, cst.Name):
            entry = _born_entry(frame, identifier(rhs.value))
            clean = entry[1] if entry is not None else ()
        elif isinstance(rhs, cst.Call):
            clean = _clean_classes(interp, rhs, value, breaks_before)
    for t in targets:
        if not isinstance(t, cst.Name):
            continue
        name = identifier(t.value)
        if clean:
            frame.born[name] = (interp.gb_events, frame.env.get(name), clean)
        else:
            frame.born.pop(name, None)


def _enclosing_blocks(interp, fn: FunctionInfo) -> dict:
    """id of each statement of ``fn`` -> the ``try``/``with`` statements around it (nested definitions excluded)."""
    cache = interp.__dict__.setdefault("_sourceless_blocks", {})
    hit = cache.get(id(fn.node))
    if hit is not None and hit[0] is fn.node:
        return hit[1]
    out: dict = {}
    blocks = (cst.Try, getattr(cst, "TryStar", cst.Try), cst.With)

    def visit(node: cst.CSTNode, around: tuple) -> None:
        for child in node.children:
            if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(child, cst.BaseStatement) and around:
                out[id(child)] = around
            visit(child, around + (child,) if isinstance(child, blocks) else around)

    visit(fn.node.body, ())
    cache[id(fn.node)] = (fn.node, out)
    return out


def _resumable_here(interp, fn: FunctionInfo) -> bool:
    """Whether Dynamo can break and resume at the current statement of ``fn``: not in a ``try``
    block, and in ``with`` blocks of :data:`RESUMABLE_MANAGERS` only."""
    if getattr(fn, "lambda_stmt", None) is not None:
        return True
    for block in _enclosing_blocks(interp, fn).get(id(interp.stmt), ()):
        if not isinstance(block, cst.With):
            return False
        for item in block.items:
            call = item.item
            if not isinstance(call, cst.Call) or interp.qualname(call.func) not in RESUMABLE_MANAGERS:
                return False
    return True


def _broken_classes(interp, node: cst.Call, callee: Value, clean: tuple, breaks_before: int) -> tuple:
    """The classes of ``clean`` whose method, called at ``node``, saw a graph break (in the call or
    in its arguments, evaluated while the bound method is already on Dynamo's stack)."""
    outcomes = _candidate_outcomes(interp, node, breaks_before) if objects.is_one_of(callee) else None
    if outcomes is None:
        return clean  # one method, or a break in the arguments: every candidate broke here
    broke = [c.elt.ref for c, b in outcomes if b and c.elt is not None]
    return tuple(cls for cls in clean if any(cls is b for b in broke))


def check_call(interp, node: cst.Call, receiver_node: cst.BaseExpression, receiver: Value, callee: Optional[Value], breaks_before: int) -> None:
    """After a method call ``receiver.m(...)`` during which a graph break was seen: emit
    ``on_sourceless_call_break`` when Dynamo breaks at this call with "Reconstruction failure"
    (see the module docstring for the measured conditions), then skip the rest of the frame.

    Args:
        interp: the interpreter, the calling frame current again.
        node: the call.
        receiver_node: the expression before ``.m``; a local name bound to an object built in
            this frame, or the constructing call itself.
        receiver: its value; ``callee`` the value of ``receiver.m``.
        breaks_before: ``interp.gb_events`` before the call's arguments were evaluated.
    """
    frame = interp.frame
    if frame is None or interp.silent or frame.loop_depth or frame.skipped or frame.func is None:
        return
    if not is_built_instance(receiver) or _bound_methods(callee) is None:
        return
    if isinstance(receiver_node, cst.Name):
        entry = _born_entry(frame, identifier(receiver_node.value))
        if entry is None or entry[0] != breaks_before:
            return
        clean = entry[1]
    elif isinstance(receiver_node, cst.Call):
        clean = _classes(receiver)  # its construction did not break (the caller checks)
    else:
        return
    if not _resumable_here(interp, frame.func):
        return
    broken = _broken_classes(interp, node, callee, clean, breaks_before)
    if not broken:
        return
    names = []
    for cls in broken:
        if cls.name not in names:
            names.append(cls.name)
    method = node.func.attr.value if isinstance(node.func, cst.Attribute) else _bound_methods(callee)[0].name
    interp.emit("on_sourceless_call_break", SourcelessCallEvent(node, tuple(names), method))
    frame.skipped = True  # the whole function runs eagerly after the failure
