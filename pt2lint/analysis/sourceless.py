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
  reached through the instance, under ``with torch.no_grad():``, with a loop later in the
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


def _born_entry_valid(frame, name: str) -> Optional[int]:
    """The graph-break count at which ``name`` was bound to an object built in ``frame``, when the
    name still holds that object; ``None`` otherwise."""
    entry = frame.born.get(name)
    if entry is None:
        return None
    stamp, bound = entry
    if frame.env.get(name) is not bound:
        return None
    return stamp


def note_binding(interp, targets: Sequence[cst.BaseExpression], rhs: cst.BaseExpression, value: Value, breaks_before: int) -> None:
    """Record (or forget) the local names of ``targets`` as bound to an object built in this frame.

    Args:
        interp: the :class:`~pt2lint.analysis.interp.Interpreter`, its frame current.
        targets: the assignment's targets; only plain names are tracked.
        rhs: the assigned expression: a call (a constructor or a function returning a new
            instance) or a name already tracked makes the binding fresh.
        value: the value assigned.
        breaks_before: ``interp.gb_events`` before ``rhs`` was evaluated: an object returned
            through a graph break reaches the resume function as an argument, which has a source.
    """
    frame = interp.frame
    if frame is None or interp.silent:
        return
    fresh = interp.gb_events == breaks_before and is_built_instance(value)
    if fresh:
        if isinstance(rhs, cst.Name):
            fresh = _born_entry_valid(frame, identifier(rhs.value)) is not None
        else:
            fresh = isinstance(rhs, cst.Call)
    for t in targets:
        if not isinstance(t, cst.Name):
            continue
        name = identifier(t.value)
        if fresh:
            frame.born[name] = (interp.gb_events, frame.env.get(name))
        else:
            frame.born.pop(name, None)


def _guarded_statements(interp, fn: FunctionInfo) -> set:
    """ids of the statements of ``fn`` inside a ``try`` or ``with`` block (nested definitions excluded)."""
    cache = interp.__dict__.setdefault("_sourceless_guarded", {})
    hit = cache.get(id(fn.node))
    if hit is not None and hit[0] is fn.node:
        return hit[1]
    out: set = set()

    def visit(node: cst.CSTNode, inside: bool) -> None:
        for child in node.children:
            if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(child, cst.BaseStatement) and inside:
                out.add(id(child))
            visit(child, inside or isinstance(child, (cst.Try, getattr(cst, "TryStar", cst.Try), cst.With)))

    visit(fn.node.body, False)
    cache[id(fn.node)] = (fn.node, out)
    return out


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
    if not is_built_instance(receiver):
        return
    methods = _bound_methods(callee)
    if methods is None:
        return
    if isinstance(receiver_node, cst.Name):
        stamp = _born_entry_valid(frame, identifier(receiver_node.value))
        if stamp is None or stamp != breaks_before:
            return
    elif not isinstance(receiver_node, cst.Call):
        return
    fn = frame.func
    if getattr(fn, "lambda_stmt", None) is None and id(interp.stmt) in _guarded_statements(interp, fn):
        return
    cls_names = []
    for c in objects.candidates(receiver):
        if c.ref.name not in cls_names:
            cls_names.append(c.ref.name)
    interp.emit("on_sourceless_call_break", SourcelessCallEvent(node, tuple(cls_names), methods[0].name))
    frame.skipped = True  # the whole function runs eagerly after the failure
