"""The ``check`` codemod: data-dependent validation becomes a check that compiled code keeps.

With a constant message (or none) and an exception class module-level code can name, compiled
code calls a generated custom op (:mod:`pt2lint.fixes.check_op`, written after the imports) and
eager mode keeps the original ``if``/``raise``::

    if (x < 0).any():                          if torch.compiler.is_compiling():
        raise ValueError("negative input")  ->     _pt2lint_check_M_forward_12((x < 0).any())
                                               elif (x < 0).any():
                                                   raise ValueError("negative input")

Compiled (aot_eager, Inductor with ``fullgraph=True``) and exported code then raise the same
type and message (measured on torch 2.13; :mod:`pt2lint.fixes.check_op`).  That form is *safe*
when the predicate's translation is exact, the code before the check in its function writes no
state (a failing check in a compiled graph loses the writes made earlier in it, measured), and
the code after it can raise for no value (Inductor orders the op only by data dependencies and
may run a later kernel first: ``F.cross_entropy`` after a label-range check raised an
index-out-of-bounds ``RuntimeError``, measured); otherwise it is unsafe with the reason.  Eager
mode costs one ``is_compiling()`` test (under 1 us per call, measured), so unlike ``cond`` the
fix does not depend on the module being known to be compiled.

Where the op form does not apply (an f-string message, ``torch`` imported after the first
definition), the older form below is used, always unsafe::

    if (x < 0).any():                          torch._assert_async(
        raise ValueError("negative input")  ->     torch.logical_not((x < 0).any()), "negative input")

Measured on torch 2.13.0 (CPU; ``tests/test_fix_check.py`` repeats the measurements):

* ``torch._assert_async(cond, msg)`` with a one-element tensor ``cond``: no graph break
  (``torch._dynamo.explain``), ``fullgraph=True`` compiles (eager and inductor backends),
  ``torch.export.export`` succeeds; when ``cond`` is false, eager, compiled and exported code
  all raise ``RuntimeError(msg)``.
* ``torch._check``, ``torch._check_value`` and ``torch._check_with`` take only a Python bool:
  a tensor condition raises ``TypeError`` at once, in eager mode too.
* ``torch._check_tensor_all_with(ValueError, cond, msg)`` keeps the exception type in eager
  mode, but ``torch._dynamo.explain`` reports a graph break on it (``Tensor.item()`` with
  ``capture_scalar_outputs=False``) and compiled code raises ``RuntimeError`` with a
  message about a symbol (``u0 >= 1``) instead of the user's.

So the rewrite uses ``torch._assert_async``.  When the original raises something other
than ``RuntimeError``, or its message is an f-string, the check runs only under
``torch.compiler.is_compiling()`` and the original ``if ...: raise`` stays as its ``elif``::

    if torch.compiler.is_compiling():
        torch._assert_async(torch.logical_not((x < 0).any()), "negative input")
    elif (x < 0).any():
        raise ValueError("negative input")

Dynamo evaluates ``is_compiling()`` as True and traces only the check (no graph break,
``fullgraph=True`` compiles, ``torch.export`` succeeds, measured on torch 2.13); eager mode
runs the original test and ``raise`` unchanged (same type, same message).  It is always
*unsafe*: in compiled and exported code the exception type becomes ``RuntimeError`` (an
``except ValueError`` around a compiled call no longer catches it), and on CUDA,
per ``torch._assert_async``'s own documentation (not measured here: no GPU), the failure
is found only at a later kernel launch and "will trash your CUDA context".  The message must be a constant string (``_assert_async``
takes a ``str``): an f-string message keeps its ``{...}`` fields as text, without their
values; another computed message (``%``, ``.format``, a variable) is refused.
"""

from __future__ import annotations

import ast
import builtins
from typing import List, Optional, Tuple, Union

import libcst as cst

from pt2lint.analysis.kinds import Kind
from pt2lint.diagnostics import Applicability, Edit, Fix, Position
from pt2lint.fixes.check_op import FN_PREFIX, NS_PREFIX, check_op_source, function_name, op_name, op_namespace
from pt2lint.fixes.cond import python_test, target_if
from pt2lint.fixes.context import FixContext, Refuse, all_params
from pt2lint.fixes.edits import block_indent, comment_lines, sole_small_statement, split_keepends
from pt2lint.fixes.predicate import call_qualname, is_number_literal, translate_predicate

NAME = "check"
REFUSED = "not rewritten as a runtime check"
TARGET_CODES = frozenset({"PTC104", "PTC101", "PTC103", "PTC602"})

UNSAFE_NOTE = (
    "the check raises RuntimeError(msg) instead of {exc} (measured on torch 2.13, eager and compiled), so an "
    "`except {exc}` no longer catches it; on CUDA the failure shows up at a later kernel launch and leaves "
    "the CUDA context unusable (torch's `_assert_async` documentation; not measured here)"
)


def _only_raise(block: cst.BaseSuite) -> Optional[cst.Raise]:
    """The ``raise`` statement when it is the whole body of ``block``."""
    stmt = sole_small_statement(block)
    return stmt if isinstance(stmt, cst.Raise) else None


def constant_string(node: cst.BaseExpression) -> Optional[str]:
    """The value of a string literal (implicit concatenation included, no f-strings or bytes), else ``None``."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = constant_string(node.left), constant_string(node.right)  # type: ignore[arg-type]
        return None if left is None or right is None else left + right
    return None


def _exception(ctx: FixContext, raise_: cst.Raise):
    """``(exception class name, message expression or None)`` of ``raise E(msg)`` / ``raise E``.

    Raises:
        Refuse: a bare ``raise``, ``raise ... from ...``, a computed message, keyword
            arguments, or more than one argument.
    """
    exc = raise_.exc
    if exc is None:
        raise Refuse("a bare `raise` re-raises the exception being handled; it has no check form")
    if raise_.cause is not None:
        raise Refuse("`raise ... from ...` sets a cause that a runtime assertion cannot carry")
    if isinstance(exc, cst.Call):
        func, args = exc.func, list(exc.args)
    else:
        func, args = exc, []
    if not isinstance(func, (cst.Name, cst.Attribute)):
        raise Refuse("the raised exception is not a class named in the code")
    name = ctx.module.code_for_node(func).strip()
    if any(a.keyword is not None or a.star for a in args) or len(args) > 1:
        raise Refuse(f"`{name}(...)` takes more than one plain message argument")
    if not args:
        return name, None
    msg = args[0].value
    if constant_string(msg) is None and template_text(ctx, msg) is None:
        raise Refuse("the message is computed at run time; torch._assert_async takes a constant string")
    return name, msg


def template_text(ctx: FixContext, node: cst.BaseExpression) -> Optional[str]:
    """The text of an f-string with each replacement field kept as written (``f"bad {n}"`` -> ``"bad {n}"``).

    ``torch._assert_async`` needs a constant message: an f-string is evaluated when the
    line runs (at trace time under Dynamo), and with dynamic shapes an f-string of a
    shape fails to compile (measured on torch 2.13: "Failed to convert args/kwargs to
    proxy").  ``None`` for anything but a plain f-string (or concatenation with literals).
    """
    if isinstance(node, cst.FormattedString):
        if "b" in node.prefix.lower():
            return None
        out = []
        prefix = node.prefix.lower().replace("f", "")
        quote = node.start[len(node.prefix):]
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                try:
                    text = ast.literal_eval(prefix + quote + part.value + quote)
                except (SyntaxError, ValueError):
                    return None
                out.append(text.replace("{{", "{").replace("}}", "}"))
            else:
                out.append(ctx.module.code_for_node(part))
        return "".join(out)
    if isinstance(node, cst.ConcatenatedString):
        left = constant_string(node.left) if constant_string(node.left) is not None else template_text(ctx, node.left)  # type: ignore[arg-type]
        right = constant_string(node.right) if constant_string(node.right) is not None else template_text(ctx, node.right)  # type: ignore[arg-type]
        return None if left is None or right is None else left + right
    return None


def _assert_of(ctx: FixContext, finding) -> Optional[cst.Assert]:
    """The ``assert`` statement whose test is the finding's node (PTC602)."""
    stmt = finding.stmt
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assert):
        if stmt.body[0].test is finding.node:
            return stmt.body[0]
    return None


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The ``torch._assert_async`` fix for ``if <tensor test>: raise E("msg")`` or for ``assert <tensor test>, "msg"``
    (PTC602, ``--target export``); else ``None``.

    An ``else:`` block (not an ``elif``) is kept: its statements follow the check.
    Returns a display-only fix with the reason when the pattern matches but cannot be rewritten.
    """
    if finding.stmt is None or ctx.parent(finding.stmt) is None:
        return None  # a finding in another file of the project (its nodes are not this module's)
    if diagnostic.code == "PTC602":
        assert_ = _assert_of(ctx, finding)
        if assert_ is None:
            return None
        stmt = finding.stmt
        return ctx.fix_once(NAME, assert_, lambda: _build_assert(ctx, stmt, assert_), REFUSED)
    node = target_if(finding, ctx)
    if node is None or (node.orelse is not None and not isinstance(node.orelse, cst.Else)):
        return None
    raise_ = _only_raise(node.body)
    if raise_ is None:
        return None
    parent = ctx.parent(node)
    if isinstance(parent, cst.If) and parent.orelse is node:
        return None  # an ``elif``: the check would also run when an earlier test was true
    return ctx.fix_once(NAME, node, lambda: _build(ctx, node, raise_), REFUSED)


def _inside_try(ctx: FixContext, node: cst.CSTNode) -> Optional[cst.Try]:
    """The innermost ``try`` (in the same function) whose body holds ``node`` and that has ``except`` handlers."""
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if isinstance(parent, (cst.Try, cst.TryStar)) and parent.body is child and parent.handlers:
            return parent  # type: ignore[return-value]
        child, parent = parent, ctx.parent(parent)
    return None


def _build(ctx: FixContext, node: cst.If, raise_: cst.Raise) -> Fix:
    func = ctx.enclosing_function(node)
    if _inside_try(ctx, node) is not None:
        raise Refuse(
            "an enclosing `try` has `except` handlers, and compiled code raises from inside the graph (where the "
            "`try` was traced away) or a different exception (RuntimeError), asynchronously on CUDA"
        )
    exc_name, msg = _exception(ctx, raise_)
    torch, import_edits = ctx.torch_name(func)
    guard, test = python_guard(ctx, node.test)
    pred = translate_predicate(ctx, func, test, torch)
    try:
        return _build_op(ctx, node, raise_, func, exc_name, msg, torch, guard, test, pred)
    except Refuse as why:
        no_op = f"no custom-op check: {why}"
    ok = _negate(pred.expr, torch)
    message = msg if msg is not None else cst.SimpleString('""')
    template = msg is not None and constant_string(msg) is None
    if template:
        message = cst.SimpleString(_literal(template_text(ctx, msg) or ""))
    call = cst.Call(
        func=cst.Attribute(value=cst.Name(torch), attr=cst.Name("_assert_async")),
        args=[cst.Arg(ok), cst.Arg(message)],
    )
    new_stmt = cst.SimpleStatementLine(
        [cst.Expr(call)],
        leading_lines=comment_lines(node.with_changes(leading_lines=())),
    )
    eager_kept = exc_name != "RuntimeError" or template
    edits = _replace_if(ctx, node, test, guard, torch, new_stmt, eager_kept)
    if eager_kept:
        notes = [SPLIT_NOTE.format(exc=exc_name)] + pred.inexact
        if template:
            notes.append(TEMPLATE_NOTE.replace("message keeps", "message of compiled code keeps"))
        what = (
            f"check with `torch._assert_async(...)` under `{torch}.compiler.is_compiling()` and keep the `if ...: raise` "
            "for eager mode (no graph break, compiles with fullgraph=True and exports; eager mode raises as before, "
            "measured on torch 2.13)"
        )
    else:
        notes = [UNSAFE_NOTE.format(exc=exc_name)] + pred.inexact
        if template:
            notes.append(TEMPLATE_NOTE)
        what = (
            "replace the data-dependent `if ...: raise` by `torch._assert_async(...)` (no graph break, compiles with "
            "fullgraph=True and exports, measured on torch 2.13)"
        )
    notes.append(no_op)
    return Fix(
        what + "; unsafe: " + "; ".join(notes),
        Applicability.UNSAFE,
        tuple(edits) + tuple(import_edits),
        NAME,
    )


def _replace_if(
    ctx: FixContext,
    node: cst.If,
    test: cst.BaseExpression,
    guard: Optional[cst.BaseExpression],
    torch: str,
    check: cst.SimpleStatementLine,
    eager_kept: bool,
):
    """The edits replacing ``node`` by ``check`` (under :func:`_eager_split` when ``eager_kept``),
    inside ``if <guard>:`` when the test had leading Python conjuncts, followed by the statements
    of an ``else:`` block.

    Raises:
        Refuse: the ``else:`` body is on the ``else`` line.
    """
    new_stmt: cst.BaseStatement = check
    if eager_kept:
        new_stmt = _eager_split(node, test, torch, check)
    if guard is not None:
        new_stmt = cst.If(test=guard, body=cst.IndentedBlock(body=[new_stmt.with_changes(leading_lines=())]), leading_lines=new_stmt.leading_lines)
    rest = []
    if isinstance(node.orelse, cst.Else):
        body = node.orelse.body
        if not isinstance(body, cst.IndentedBlock):
            raise Refuse("the `else:` body is on the same line")
        rest = list(body.body)
        lost = comment_lines(node.orelse.with_changes(body=body.with_changes(body=[]))) if body.header.comment or node.orelse.leading_lines else []
        if lost and rest:
            rest[0] = rest[0].with_changes(leading_lines=[*lost, *rest[0].leading_lines])
        new_stmt = new_stmt.with_changes(leading_lines=comment_lines(node.with_changes(leading_lines=(), orelse=None)))
    return ctx.replace_statements([node], [new_stmt, *rest])


OP_EAGER_COST = (
    "eager mode runs the original `if`/`raise`, plus the `is_compiling()` test: under 1 us per call "
    "(measured on a 4x8 input; calling the op itself costs 10-14 us, only in compiled code)"
)
OP_MUTATION_NOTE = (
    "{why}: when the check fails in compiled code, writes made earlier in the same graph are not applied "
    "(measured on torch 2.13: an in-place write to an input and BatchNorm statistics before a failing check are "
    "lost under aot_eager and Inductor)"
)


def _dotted(node: cst.BaseExpression) -> Optional[List[str]]:
    """``["errors", "Bad"]`` for ``errors.Bad``; ``None`` for anything but a name or dotted name."""
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return None if head is None else head + [node.attr.value]
    return None


def _module_names(ctx: FixContext) -> frozenset:
    """Names bound at module level (imports, classes, functions, assignments)."""
    from pt2lint.analysis.names import bound_names

    return ctx.per_node("check-module-names", ctx.module, lambda: frozenset(bound_names(list(ctx.module.body))))


def _insertion_line(ctx: FixContext, torch: str) -> int:
    """The 1-based line after the last module-level import that precedes the first ``def``/``class``.

    Raises:
        Refuse: no such import binds ``torch`` (the op's decorator needs it there).
    """
    from pt2lint.analysis.names import bound_names

    body = list(ctx.module.body)
    last = -1
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value.startswith(FN_PREFIX):
            continue  # an op an earlier fix wrote: the new one goes after it
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            break
        if isinstance(stmt, cst.SimpleStatementLine) and stmt.body and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            last = i
        elif last >= 0 and _is_side_effect_mark(ctx, stmt, torch):
            last = i
    if last < 0 or torch not in bound_names(body[: last + 1]):
        raise Refuse(f"`{torch}` is not imported at module level before the first definition, where the op is written")
    prefix = cst.Module(body=[], header=ctx.module.header).code if ctx.module.header else ""
    prefix += "".join(ctx.module.code_for_node(s) for s in body[: last + 1])
    if not ctx.source.startswith(prefix):
        raise Refuse("cannot place the op after the imports")
    return len(split_keepends(prefix)) + 1


def _is_side_effect_mark(ctx: FixContext, stmt: cst.CSTNode, torch: str) -> bool:
    """Whether ``stmt`` is the ``torch.fx.node.has_side_effect(torch.ops.pt2lint_...)`` line of a generated op."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return False
    code = ctx.module.code_for_node(stmt.body[0])
    return code.startswith(f"{torch}.fx.node.has_side_effect({torch}.ops.{NS_PREFIX}")


def _validation_parts(stmt: cst.CSTNode) -> Optional[List[cst.BaseExpression]]:
    """The expressions an ``if`` evaluates when each of its branches is a sole ``raise`` or a sole call of
    a generated check op (a validation, rewritten or not: it writes nothing), else ``None``."""
    if not isinstance(stmt, cst.If):
        return None
    out: List[cst.BaseExpression] = []
    clause: Optional[cst.CSTNode] = stmt
    if _is_compiling_call(stmt.test) and isinstance(stmt.orelse, cst.If):
        # a rewritten validation: compiled code evaluates only the op's argument (the `elif` is eager-only)
        parts = _validation_parts(stmt.with_changes(orelse=None))
        return None if parts is None or _validation_parts(stmt.orelse) is None else parts
    while isinstance(clause, cst.If):
        out.append(clause.test)
        small = sole_small_statement(clause.body)
        if isinstance(small, cst.Raise):
            pass
        elif (
            isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Name)
            and small.value.func.value.startswith(FN_PREFIX)
        ):
            out.extend(a.value for a in small.value.args)
        else:
            return None
        clause = clause.orelse
    return out if clause is None else None


def _around(block: Union[cst.IndentedBlock, cst.Module], child: cst.CSTNode) -> Tuple[list, list]:
    """The statements of ``block`` before and after its statement ``child`` (both empty when
    ``child`` is not one of them)."""
    stmts = list(block.body)
    k = next((i for i, st in enumerate(stmts) if st is child), None)
    if k is None:
        return [], []
    return stmts[:k], stmts[k + 1 :]


def _qualname(ctx: FixContext, node: cst.CSTNode) -> str:
    """``Outer.Inner.method`` of the classes and functions around ``node``."""
    parts: List[str] = []
    p = ctx.parent(node)
    while p is not None:
        if isinstance(p, (cst.FunctionDef, cst.ClassDef)):
            parts.append(p.name.value)
        p = ctx.parent(p)
    return ".".join(reversed(parts))


def _raise_text(ctx: FixContext, raise_: cst.Raise, func: cst.FunctionDef, exc_name: str, msg) -> str:
    """The one-line ``raise`` the op runs: the same class and constant message.

    Raises:
        Refuse: the message is not a constant string; the class is not a (dotted) name that
            module-level code sees as the function does (a local or enclosing-function name).
    """
    if msg is not None and constant_string(msg) is None:
        raise Refuse(
            "the message is an f-string; only a constant message is written into the op (an f-string's "
            "values exist only where the `raise` runs)"
        )
    exc = raise_.exc
    func_node = exc.func if isinstance(exc, cst.Call) else exc
    parts = _dotted(func_node)  # type: ignore[arg-type]
    if parts is None:
        raise Refuse("the raised exception is not a class named in the code")
    root = parts[0]
    scope = ctx.parent(raise_)
    while scope is not None:
        if isinstance(scope, cst.FunctionDef):
            local = {p.name.value for p in all_params(scope)} | set(ctx.function_bound(scope))
            if root in local:
                raise Refuse(
                    f"`raise {exc_name}` raises what the local name `{root}` of `{scope.name.value}` holds; "
                    "the op is defined at module level, where that name is not bound"
                )
        elif isinstance(scope, cst.Lambda):
            raise Refuse("the `raise` is inside a lambda")
        scope = ctx.parent(scope)
    if root not in _module_names(ctx) and not hasattr(builtins, root):
        raise Refuse(f"`{root}` is neither a builtin nor bound at module level")
    name = ".".join(parts)
    if not isinstance(exc, cst.Call):
        return f"raise {name}"
    if msg is None:
        return f"raise {name}()"
    return f"raise {name}({_literal(constant_string(msg) or '')})"


def _state_before(ctx: FixContext, node: cst.If, func: cst.FunctionDef) -> List[str]:
    """Why the code that runs before ``node`` in ``func`` may write state (empty: proven not to).

    The statements before the ``if`` in each enclosing block, and the tests of enclosing ``if``\\ s,
    are checked with :class:`~pt2lint.fixes.purity.BranchChecker` (in-place writes, attribute
    assignments, container mutation, modules that write buffers, findings); a loop, ``with`` or
    ``try`` around the check is not analysed.  What a caller does before calling ``func`` is
    not seen here.
    """
    from pt2lint.fixes.purity import BranchChecker, side_effect

    entry = ctx.facts.if_entry.get(id(node))
    if entry is None:
        return ["this `if` is not reached from a compiled region, so pt2lint has no facts about the code before it"]
    self_names = {k for k, v in entry.items() if v is not None and v.kind is Kind.SELF}
    before: List[cst.BaseStatement] = []
    tests: List[cst.BaseExpression] = []
    child: cst.CSTNode = node
    parent = ctx.parent(node)
    while parent is not None and parent is not func:
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            before = _around(parent, child)[0] + before
        elif isinstance(parent, (cst.For, cst.While)):
            return ["the check is inside a loop, whose earlier iterations are not analysed"]
        elif isinstance(parent, (cst.With, cst.Try, cst.TryStar)):
            return ["the check is inside a `with`/`try` block, which is not analysed"]
        elif isinstance(parent, cst.If):
            tests.append(parent.test)
        child, parent = parent, ctx.parent(parent)
    kept: List[cst.BaseStatement] = []
    for stmt in before:
        parts = _validation_parts(stmt)
        if parts is None:
            kept.append(stmt)
        else:
            tests.extend(p for p in parts if not _is_compiling_call(p))
    checker = BranchChecker(ctx, self_names)
    try:
        checker.check(kept, allow_return=False, where="the code before the check")
    except Refuse as why:
        return [OP_MUTATION_NOTE.format(why=str(why))]
    if checker.unverified:
        names = ", ".join(f"`{n}`" for n in dict.fromkeys(checker.unverified))
        return [OP_MUTATION_NOTE.format(why=f"the code before the check calls {names}, which pt2lint cannot see into")]
    effect = side_effect(ctx, tests)
    if effect is not None:
        return [OP_MUTATION_NOTE.format(why=f"an enclosing `if` test may have a side effect ({effect.reason})")]
    return []


#: Tensor methods and ``torch.`` / ``torch.nn.functional.`` functions whose failure, if any, depends on
#: shapes and dtypes only, never on the values (no index bounds, no integer division, no
#: probability or matrix-property check): Inductor may run one of them before a check op that it
#: does not depend on, and it then cannot raise in the check's place.  (``item`` raises for a
#: tensor of more than one element: a shape, not a value.)
VALUE_TOTAL_OPS = frozenset(
    """abs neg negative exp exp2 expm1 log log1p log2 log10 sqrt rsqrt sigmoid tanh relu relu6 gelu silu mish elu
    leaky_relu softplus hardtanh sin cos tan sinh cosh asinh atan erf erfc floor ceil round trunc frac sign sgn square
    reciprocal clamp clamp_min clamp_max clip nan_to_num float double half bfloat16 bool to detach clone contiguous
    add sub mul multiply subtract true_divide maximum minimum fmax fmin lerp where masked_fill softmax log_softmax
    sum mean amax amin prod std var norm logsumexp any all isnan isinf isfinite logical_not logical_and logical_or
    eq ne lt le gt ge view reshape flatten transpose permute unsqueeze squeeze expand expand_as matmul mm bmm
    linear layer_norm rms_norm dropout cat stack zeros_like ones_like full_like item""".split()
)
_TOTAL_BUILTINS = frozenset({"builtins.float", "builtins.len", "builtins.tuple", "builtins.range", "builtins.isinstance"})
OP_ORDER_NOTE = (
    "{why}; Inductor orders the check op only by data dependencies, so compiled code may run that first "
    "(measured on torch 2.13: `F.cross_entropy` after a label-range check raised Inductor's index-out-of-bounds "
    "RuntimeError instead of the check's IndexError)"
)


def _state_after(ctx: FixContext, node: cst.If, func: cst.FunctionDef) -> List[str]:
    """Why the code that runs after ``node`` in ``func`` might raise for some values (empty: proven not to).

    Every call must be a :data:`VALUE_TOTAL_OPS` method of a tensor or function of ``torch`` /
    ``torch.nn.functional``, a rank-keeping ``torch.nn`` submodule
    (:data:`~pt2lint.fixes.module_facts.RANK_KEEPING_MODULES`: ``nn.Linear``, convolutions, norms) or
    a builtin of :data:`_TOTAL_BUILTINS`; no ``//``/``%`` (integer division by zero raises) and no
    subscript by a computed index.  The function must be the compiled region's entry (a caller's
    code after the call is in the same graph and is not analysed here).  A later validation (an
    ``if`` whose branches only raise or call a generated check op) counts by its tests: Inductor
    keeps side-effect ops in program order (measured on torch 2.13 with six check ops in one
    graph: each failing input raised the first failing check's message).
    """
    from pt2lint.analysis.walk import walk
    from pt2lint.fixes.module_facts import RANK_KEEPING_MODULES, submodules_of

    after: List[cst.CSTNode] = []
    if isinstance(node.orelse, cst.Else):
        after.append(node.orelse.body)
    child: cst.CSTNode = node
    parent = ctx.parent(node)
    while parent is not None and parent is not func:
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            after.extend(_around(parent, child)[1])
        child, parent = parent, ctx.parent(parent)
    qual = _qualname(ctx, node)
    ids = ctx.subtree_ids(node.test)
    heads = {f.chain[0] for f in ctx.facts.findings if id(f.node) in ids and f.chain}
    if any(h != qual for h in heads):
        return [OP_ORDER_NOTE.format(why=f"the check is in a function that {', '.join(sorted(heads))} calls, and the caller's code after the call is not analysed")]
    modules = submodules_of(ctx, func, RANK_KEEPING_MODULES)
    roots: List[cst.CSTNode] = []
    for stmt in after:
        parts = _validation_parts(stmt)  # a later validation: raising there is the original's order too
        if parts is None and isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else):
            parts = _validation_parts(stmt.with_changes(orelse=None))
            if parts is not None:
                roots.append(stmt.orelse.body)
        roots.extend([stmt] if parts is None else [p for p in parts if not _is_compiling_call(p)])
    for root in roots:
        for n in walk(root):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.FloorDivide, cst.Modulo)):
                return [OP_ORDER_NOTE.format(why="the code after the check divides with `//` or `%`, which raises for an integer zero")]
            if isinstance(n, cst.Index) and not _constant_index(ctx, n.value):
                what = " ".join(ctx.module.code_for_node(n.value).split())
                return [OP_ORDER_NOTE.format(why=f"the code after the check indexes with `{what}`, which may be out of bounds for some values")]
            if not isinstance(n, cst.Call):
                continue
            func_node = n.func
            if isinstance(func_node, cst.Attribute) and isinstance(func_node.value, cst.Name) and func_node.value.value == "self" and func_node.attr.value in modules:
                continue
            q = call_qualname(ctx, n)
            if q is not None:
                head, _, last = q.rpartition(".")
                if head in ("torch", "torch.nn.functional", "torch.special") and last in VALUE_TOTAL_OPS:
                    continue
                if q in _TOTAL_BUILTINS:
                    continue
            elif isinstance(func_node, cst.Attribute) and func_node.attr.value in VALUE_TOTAL_OPS:
                v = ctx.facts.value(func_node.value)
                if v is not None and v.kind is Kind.TENSOR:
                    continue
            what = " ".join(ctx.module.code_for_node(func_node).split())
            return [OP_ORDER_NOTE.format(why=f"the code after the check calls `{what}`, which pt2lint does not know to raise for no value")]
    return []


def _constant_index(ctx: FixContext, node: cst.BaseExpression) -> bool:
    """An index whose bounds check does not depend on tensor values: a number literal, ``None``,
    ``...``, or a name the analysis holds as a Python constant."""
    if is_number_literal(node) or isinstance(node, cst.Ellipsis):
        return True
    if isinstance(node, cst.Name):
        if node.value == "None":
            return True
        v = ctx.facts.value(node)
        return v is not None and v.kind is Kind.CONST
    return False


def _is_compiling_call(node: cst.BaseExpression) -> bool:
    """``<torch>.compiler.is_compiling()``, the test :func:`_eager_split` writes."""
    return (
        isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "is_compiling" and isinstance(node.func.value, cst.Attribute)
        and node.func.value.attr.value == "compiler"
    )


def _build_op(ctx: FixContext, node: cst.If, raise_: cst.Raise, func, exc_name: str, msg, torch: str, guard, test, pred) -> Fix:
    """The custom-op form (:mod:`pt2lint.fixes.check_op`): compiled code calls an op that raises
    the original exception, eager mode keeps the ``if``/``raise``.  Safe when the predicate's
    translation is exact and the code before the check writes no state.

    Raises:
        Refuse: the op cannot be written (a computed message, an exception class module-level
            code does not see, ``torch`` not imported before the first definition).
    """
    if func is None:
        raise Refuse("the `if` is not inside a function")
    raise_text = _raise_text(ctx, raise_, func, exc_name, msg)
    line = _insertion_line(ctx, torch)
    qual = _qualname(ctx, node)
    taken = {st.name.value for st in ctx.module.body if isinstance(st, cst.FunctionDef)} | set(_module_names(ctx))
    op = op_name(qual, ctx.stmt_line.get(id(node), 0), taken)
    fn = function_name(op)
    newline = ctx.module.default_newline
    source = check_op_source(torch, op_namespace(ctx.path or "module.py"), op, qual, raise_text, block_indent(ctx.module), newline)
    following = ctx.lines[line - 1] if line - 1 < len(ctx.lines) else ""
    insert = Edit(Position(line, 1), Position(line, 1), newline * 2 + source + (newline * 2 if following.strip() else ""))
    call = cst.Call(func=cst.Name(fn), args=[cst.Arg(_strip_parens(pred.expr))])
    check = cst.SimpleStatementLine([cst.Expr(call)], leading_lines=comment_lines(node.with_changes(leading_lines=())))
    edits = _replace_if(ctx, node, test, guard, torch, check, True)
    notes = list(pred.inexact) + _state_before(ctx, node, func) + _state_after(ctx, node, func)
    what = (
        f"check with the custom op `{fn}` (written after the imports) under `{torch}.compiler.is_compiling()` and keep "
        f"the `if ...: raise` for eager mode: compiled and exported code raise the same {exc_name} and message (measured on "
        f"torch 2.13: aot_eager, Inductor with fullgraph=True, torch.export; no graph break); {OP_EAGER_COST}"
    )
    if notes:
        return Fix(what + "; unsafe: " + "; ".join(notes), Applicability.UNSAFE, (insert,) + tuple(edits), NAME)
    return Fix(what, Applicability.SAFE, (insert,) + tuple(edits), NAME)


SPLIT_NOTE = (
    "compiled and exported code raises RuntimeError(msg) instead of {exc} (measured on torch 2.13), so an "
    "`except {exc}` around a compiled call no longer catches it; on CUDA the failure shows up at a later kernel "
    "launch and leaves the CUDA context unusable (torch's `_assert_async` documentation; not measured here)"
)


def _eager_split(node: cst.If, test: cst.BaseExpression, torch: str, check: cst.SimpleStatementLine) -> cst.If:
    """``if torch.compiler.is_compiling(): <check>`` ``elif <test>: raise E(msg)``.

    Dynamo evaluates ``is_compiling()`` as True while tracing, so compiled and exported code
    trace only the graph-native check (no graph break, ``fullgraph=True`` compiles, measured on
    torch 2.13); in eager mode it is False and the original test and ``raise`` run as written:
    the same exception type and message, f-string values included.  ``test`` is the original
    test without the Python conjuncts that :func:`python_guard` moved out.
    """
    is_compiling = cst.Call(
        func=cst.Attribute(
            value=cst.Attribute(value=cst.Name(torch), attr=cst.Name("compiler")), attr=cst.Name("is_compiling"),
        ),
    )
    eager = cst.If(test=test, body=node.body.with_changes(header=cst.TrailingWhitespace()) if isinstance(node.body, cst.IndentedBlock) else node.body)
    return cst.If(
        test=is_compiling,
        body=cst.IndentedBlock(body=[check.with_changes(leading_lines=())]),
        orelse=eager,
        leading_lines=check.leading_lines,
    )


TEMPLATE_NOTE = (
    "the f-string message keeps its `{...}` fields as text, without their values (an f-string is "
    "evaluated at trace time, and with dynamic shapes one of a shape fails to compile)"
)
ASSERT_NOTE = (
    "the check raises RuntimeError(msg) instead of AssertionError, and it also runs under `python -O`, which "
    "drops asserts; on CUDA the failure shows up at a later kernel launch and leaves the CUDA context unusable "
    "(torch's `_assert_async` documentation; not measured here)"
)


def _build_assert(ctx: FixContext, stmt: cst.SimpleStatementLine, assert_: cst.Assert) -> Fix:
    func = ctx.enclosing_function(stmt)
    if _inside_try(ctx, stmt) is not None:
        raise Refuse("an enclosing `try` has `except` handlers, and the check raises a different exception (RuntimeError), asynchronously on CUDA")
    template = assert_.msg is not None and constant_string(assert_.msg) is None
    if template and template_text(ctx, assert_.msg) is None:  # type: ignore[arg-type]
        raise Refuse("the message is computed at run time; torch._assert_async takes a constant string")
    torch, import_edits = ctx.torch_name(func)
    pred = translate_predicate(ctx, func, assert_.test, torch)
    message = assert_.msg if assert_.msg is not None else cst.SimpleString('""')
    if template:
        message = cst.SimpleString(_literal(template_text(ctx, assert_.msg) or ""))  # type: ignore[arg-type]
    call = cst.Call(
        func=cst.Attribute(value=cst.Name(torch), attr=cst.Name("_assert_async")),
        args=[cst.Arg(_strip_parens(pred.expr)), cst.Arg(message)],
    )
    new_stmt = stmt.with_changes(leading_lines=(), body=[cst.Expr(call)])
    edits = ctx.replace_statements([stmt], [new_stmt])
    notes = [ASSERT_NOTE] + pred.inexact + ([TEMPLATE_NOTE] if template else [])
    return Fix(
        "replace the data-dependent `assert` by `torch._assert_async(...)` (exports, measured on torch 2.13); unsafe: "
        + "; ".join(notes),
        Applicability.UNSAFE,
        tuple(edits) + tuple(import_edits),
        NAME,
    )


def _conjuncts(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """``a and b and c`` -> ``[a, b, c]`` (an unparenthesized ``and`` chain; anything else is one conjunct)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and not test.lpar:
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]


def python_guard(ctx: FixContext, test: cst.BaseExpression) -> Tuple[Optional[cst.BaseExpression], cst.BaseExpression]:
    """Split ``A and B`` into the leading Python conjuncts ``A`` (``None`` when there are none) and the rest ``B``.

    ``if A and B: raise`` is ``if A: (if B: raise)``: Python evaluates ``B`` only when ``A``
    holds, so ``if A:`` stays a Python ``if`` around the check of ``B``.
    """
    parts = _conjuncts(test)
    k = 0
    while k < len(parts) - 1 and python_test(ctx, parts[k]):
        k += 1
    if k == 0:
        return None, test

    def join(items: List[cst.BaseExpression]) -> cst.BaseExpression:
        out = items[0]
        for item in items[1:]:
            out = cst.BooleanOperation(left=out, operator=cst.And(), right=item)
        return out

    return join(parts[:k]), join(parts[k:])


def _negate(expr: cst.BaseExpression, torch: str) -> cst.BaseExpression:
    """``torch.logical_not(expr)``, or the operand ``a`` when ``expr`` is ``torch.logical_not(a)``.

    ``not logical_not(a)`` is true exactly when ``a`` is nonzero, and ``torch._assert_async(a)``
    passes exactly when its one-element operand is nonzero, whatever its dtype (measured on
    torch 2.13: a float operand fails only when it is 0).
    """
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and isinstance(expr.func.value, cst.Name)
        and expr.func.value.value == torch
        and expr.func.attr.value == "logical_not"
        and len(expr.args) == 1
        and not expr.lpar
    ):
        return expr.args[0].value
    return cst.Call(
        func=cst.Attribute(value=cst.Name(torch), attr=cst.Name("logical_not")),
        args=[cst.Arg(_strip_parens(expr))],
    )


def _literal(text: str) -> str:
    """A Python string literal for ``text``: double-quoted when that needs no escapes, else ``repr``."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return repr(text)


def _strip_parens(node: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(node, "lpar", None) and len(node.lpar) == 1:
        return node.with_changes(lpar=[], rpar=[])
    return node


__all__ = ["NAME", "TARGET_CODES", "UNSAFE_NOTE", "constant_string", "propose"]
