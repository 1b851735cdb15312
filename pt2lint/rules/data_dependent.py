"""PTC1xx: Python values read out of tensor data, and control flow on them.

Dynamo cannot trace a Python scalar whose value lives in tensor data
(graph-break types "Unsupported Tensor.item() call with capture_scalar_outputs=False",
"Tensor.tolist() with non-integer tensor" / "Data dependent operator", and
"Data-dependent branching"; measured on torch 2.13, see the specs).
"""

from __future__ import annotations

import libcst as cst

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis import rank0
from pt2lint.analysis.kinds import Kind, is_random_draw
from pt2lint.rules.base import Rule
from pt2lint.rules.dynamic_shape import OPTION_KEYWORDS, arg_kind, derived_shape_break, shape_op_callee

# ``operator.index(t)`` reads the value as ``int(t)`` does (torch 2.13: "Unsupported Tensor.item()
# call with capture_scalar_outputs=False"; traced with capture_scalar_outputs=True)
_CAST_NAMES = {"builtins.int": "int", "builtins.float": "float", "builtins.bool": "bool", "builtins.complex": "complex", "operator.index": "operator.index"}
_TORCH_FOR_MATH = {"fabs": "abs"}  # math names whose torch function is spelled differently
_DATA_FUNCTIONS = {"torch.equal", "torch.allclose", "torch.is_nonzero"}


#: the op that reads a tensor as a Python number (``Tensor.item()``, ``__index__``)
_LOCAL_SCALAR = frozenset({"_local_scalar_dense"})


def _number_read_kind(v):
    """:func:`arg_kind`, with a value drawn from Python's ``random`` matched as the probes' 0-d tensor.

    Dynamo holds the draw as a tensor graph input: arithmetic on it stays in the graph, but
    where torch or Python needs a number (a size, a shift, ``k``, a slice bound, an integer
    index, ``range``) the draw is read with ``aten._local_scalar_dense`` as a 0-d tensor would
    be (measured on torch 2.13: ``torch.roll(x, r, 0)``, ``torch.arange(r)``,
    ``x.narrow(0, 0, r)``, ``x.topk(r)``, ``x.repeat(r, 1)``, ``x.view(r, -1)``: "Data dependent
    operator", GB0033; ``x[:r]``, ``x[r]``, ``range(r)``: a break as well; ``x * r`` traced)."""
    if is_random_draw(v):
        return "T"
    return _sequence_kind(v) or arg_kind(v)


def _sequence_kind(v):
    """The kind the facts table gives a tuple or list of sizes: ``"S"`` when each element is a
    Python number (``(3,)``, ``(b, 2)``), ``"S[T]"`` when a tensor (or a value drawn by
    ``random``) stands among them (``(0, n)`` with ``n`` a 0-d tensor), None when the value is
    no sequence of known elements or holds anything else.  Source: the ``shape_ops`` probes with
    a tuple argument (``torch.randint(0, n4, (3,))``, ``torch.nn.functional.pad(x, (0, n4))``)."""
    if v.kind is Kind.CONST and isinstance(v.const, tuple):
        return "S" if all(isinstance(e, int) and not isinstance(e, bool) for e in v.const) else None
    if v.kind is not Kind.CONTAINER or v.elts is None or not v.elts or v.keys is not None:
        return None
    kinds = [_number_read_kind(e) if e.kind is not Kind.CONTAINER else None for e in v.elts]
    if any(k not in ("py", "T") for k in kinds):
        return None
    return "S[T]" if "T" in kinds else "S"


def _numpy_test() -> str:
    """:data:`pt2lint.analysis.interp.NUMPY_TEST` (imported late: the interpreter imports the rules)."""
    from pt2lint.analysis.interp import NUMPY_TEST

    return NUMPY_TEST


def _numpy_element(v) -> bool:
    """``v`` is a part of a NumPy array read in compiled code, a 0-d tensor in Dynamo's graph
    (:data:`pt2lint.analysis.interp.NUMPY_ELEMENT`)."""
    from pt2lint.analysis.interp import NUMPY_ELEMENT, _numpy_ref

    return v is not None and _numpy_ref(v) == NUMPY_ELEMENT.ref


_NUMPY_HINT = "store the values as Python numbers when the module is built, e.g. tuple(arr.tolist())"


def _numpy_array_read(what: str) -> str:
    """The message of a read of a :data:`~pt2lint.analysis.interp.NUMPY_ARRAY`'s data into Python
    (``what``: "`.item()` of a NumPy array kept on the module reads its value")."""
    return f"{what} into Python: Dynamo traces the array as a tensor (aten::_local_scalar_dense, GB0033): graph break ({_NUMPY_HINT})"


def _numpy_array_method(rule, interp, ev, method: str, what: str) -> bool:
    """Whether ``ev`` is ``<array>.<method>()`` of a NumPy array kept on the module
    (:func:`_numpy_array`); such a read is reported for ``rule`` unless scalar outputs are
    captured (``what`` completes the message: "reads its value", "copies its data")."""
    if ev.method != method or ev.args or not _numpy_array(ev.receiver):
        return False
    if not rule.settings.capture_scalar_outputs:
        interp.report(rule.code, ev.node, _numpy_array_read(f"`.{method}()` of a NumPy array kept on the module {what}"))
    return True


def _numpy_array(v) -> bool:
    """``v`` is a NumPy array of one or more dimensions kept on the module and read in compiled
    code (:data:`pt2lint.analysis.interp.NUMPY_ARRAY`), which Dynamo wraps as a tensor."""
    from pt2lint.analysis.interp import NUMPY_ARRAY

    return v is not None and v == NUMPY_ARRAY


def _numpy_traced(v) -> bool:
    """``v`` is a NumPy value read in compiled code, or a part of one (see
    :data:`pt2lint.analysis.interp.NUMPY_ELEMENT`): ``range()`` of it breaks."""
    from pt2lint.analysis.interp import _numpy_ref

    return _numpy_ref(v) is not None


def _local_scalar_fact(ev):
    """The fact that this call reads a tensor argument as a Python number (and nothing else
    data-dependent), matched on the exact argument kinds, or None
    (:func:`~pt2lint.analysis.dynamo_facts.local_scalar_read`)."""
    callee = shape_op_callee(ev)
    if callee is None or callee in _DATA_FUNCTIONS:
        return None  # (``torch.is_nonzero``: PTC105's)
    if any(k not in OPTION_KEYWORDS and _number_read_kind(v) != "py" for k, v in ev.kwargs.items()):
        # the probes passed their arguments by position; a keyword may name another parameter
        # (``x.add(y, alpha=2)`` is not the deprecated ``x.add(alpha, other)`` the probe hit), so
        # a keyword holding a tensor (or a value of unknown kind) matches no probe.  One holding a
        # Python value is left out of the match, as if its default were taken: the positional
        # arguments decide whether a tensor among them is read as a number (measured on torch
        # 2.13: ``x.topk(k, dim=-1)`` and ``torch.chunk(x, k, dim=0)`` with ``k`` a 0-d tensor
        # break as ``x.topk(k)`` and ``torch.chunk(x, k)`` do; ``x.topk(3, dim=-1)`` traces)
        return None
    found = facts.local_scalar_read(callee, tuple(_number_read_kind(v) for v in ev.args))
    if found is None and len(ev.args) == 1:
        # ``torch.zeros((n, 3))``: the sizes as one tuple or list literal
        node = ev.node.args[0].value if isinstance(ev.node, cst.Call) and len(ev.node.args) >= 1 else None
        elts = ev.args[0].elts
        if (
            isinstance(node, (cst.Tuple, cst.List)) and not ev.node.args[0].star and elts is not None
            and len(elts) == len(node.elements) and not any(isinstance(e, cst.StarredElement) for e in node.elements)
        ):
            found = facts.size_sequence_read(callee, tuple(_number_read_kind(v) for v in elts))
    return found


class TensorItem(Rule):
    """PTC101: ``t.item()`` in a compiled region."""

    code = "PTC101"

    def on_call(self, interp, ev) -> None:
        if _numpy_array_method(self, interp, ev, "item", "reads its value"):
            return
        if ev.method == "item" and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR and not ev.args:
            if self.settings.capture_scalar_outputs or ev.receiver.py_float:
                # (a constant-folded floating NumPy scalar, ``np.ceil(n / k).item()``, reads back)
                return
            interp.report(
                self.code,
                ev.node,
                "`.item()` reads a tensor value into Python: graph break "
                "(keep it a 0-d tensor, or set capture_scalar_outputs=True)",
            )


class TensorTolist(Rule):
    """PTC102: ``t.tolist()`` in a compiled region."""

    code = "PTC102"

    def on_call(self, interp, ev) -> None:
        if _numpy_array_method(self, interp, ev, "tolist", "copies its data"):
            return
        if ev.method == "tolist" and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR and not ev.args:
            interp.report(
                self.code,
                ev.node,
                "`.tolist()` copies tensor data into Python values: graph break (keep the tensor; index it instead)",
            )


def _has_tensor_arg(ev) -> bool:
    """Whether a call event has a positional argument that is surely a tensor (not a weak guess)."""
    return any(a.kind is Kind.TENSOR and not a.weak for a in ev.args)


class TensorToPythonScalar(Rule):
    """PTC103: ``int(t)``, ``float(t)``, ``bool(t)``, ``complex(t)``, ``range(t)`` and slice bounds ``x[:t]`` of a tensor."""

    code = "PTC103"

    def _report_number_only_call(self, interp, ev, message) -> bool:
        """Report a call Dynamo folds on Python numbers only, given a tensor argument.

        Args:
            interp: the interpreter reporting the finding.
            ev: the call event (its ``qualname`` is looked up in the Dynamo facts table).
            message: builds the finding's message from the graph-break id the table records.

        Returns:
            Whether the table records a break for the callable (and a finding was reported).
            Source: ``tensor_calls`` of the shipped Dynamo facts, each probe-confirmed.
        """
        gb = facts.tensor_call_breaks(ev.qualname)
        if not gb:
            return False
        interp.report(self.code, ev.node, message(gb))
        return True

    def _reads_a_size(self, interp, ev) -> bool:
        """A torch (or NumPy) call given a tensor where it reads a Python number: ``torch.arange(n)``,
        ``x.view(n, -1)``, ``x.new_zeros(n)``, ``x.narrow(0, 0, n)`` with ``n`` a 0-d tensor.

        The Dynamo facts table's data-dependent-op scan (``shape_ops``) called every public torch
        callable on argument lists holding a 0-d integer tensor; where the only data-dependent op
        the call ran was ``aten::_local_scalar_dense`` (the tensor read as a Python number) and the
        probe broke with "Data dependent operator" (GB0033), the call breaks for arguments of those
        kinds.  With ``capture_scalar_outputs`` the value is an unbacked SymInt and the call traces
        (measured on torch 2.13 for ``arange``, ``zeros``, ``new_zeros``, ``view``, ``randn``).
        """
        fact = _local_scalar_fact(ev)
        if fact is None:
            return False
        name = ev.qualname if ev.qualname else f".{ev.method}"
        if any(is_random_draw(v) for v in ev.args):
            interp.report(
                self.code,
                ev.node,
                f"`{name}()` is given a value drawn by `random` where it needs a Python number: Dynamo holds "
                f"the draw as a tensor graph input and reads its value (aten::_local_scalar_dense, {fact.gb}): "
                "graph break (draw with torch.randint and keep it a tensor, or draw outside the compiled region)",
            )
            return True
        if any(_numpy_element(v) for v in ev.args):
            interp.report(
                self.code,
                ev.node,
                f"`{name}()` is given an element of a NumPy array where it needs a Python number: Dynamo "
                f"traces the array as a tensor and reads the element's value (aten::_local_scalar_dense, "
                f"{fact.gb}): graph break ({_NUMPY_HINT})",
            )
            return True
        interp.report(
            self.code,
            ev.node,
            f"`{name}()` is given a tensor where it needs a Python number, and reads its value "
            f"(aten::_local_scalar_dense, {fact.gb}): graph break (pass an int, e.g. from a shape, "
            "or set capture_scalar_outputs=True)",
        )
        return True

    def on_call(self, interp, ev) -> None:
        q = ev.qualname
        positions = {"narrow": 1, "select": 1}
        if ev.method in positions and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR and not ev.receiver.weak:
            at = positions[ev.method]
            if len(ev.args) > at and _int_scalar_tensor(ev.args[at]):
                interp.report(
                    self.code,
                    ev.node,
                    f"`.{ev.method}()` with a 0-d integer tensor as its index reads it into Python as a SymInt "
                    "(aten._local_scalar_dense, GB0033): graph break (use torch.index_select with a "
                    "1-element tensor, or pass the index as an int)",
                )
                return
        if q == "torch._assert" and ev.args and ev.args[0].kind is Kind.TENSOR and not ev.args[0].weak:
            # ``torch._assert(cond, msg)`` runs ``assert cond``: the truth of a tensor condition is read
            # into Python (measured on torch 2.13: "Data dependent operator", GB0033; with
            # capture_scalar_outputs it still broke); a Python condition (a shape test) traces
            interp.report(
                self.code,
                ev.node,
                "`torch._assert()` of a tensor condition reads its truth into Python: graph break "
                "(use torch._assert_async(cond), or an `assert cond, \"message\"` with a constant message)",
            )
            return
        if not self.settings.capture_scalar_outputs and self._reads_a_size(interp, ev):
            return
        if q and q.startswith("math.") and _has_tensor_arg(ev):
            # Dynamo folds math functions on Python numbers only; a tensor argument is read
            # with __float__ (Dynamo facts table, probe-confirmed; the knob does not help).
            self._report_number_only_call(
                interp, ev, lambda gb: (
                    f"`{q}()` of a tensor reads its value into Python: graph break ({gb}), also with "
                    f"capture_scalar_outputs (use the torch function on the tensor, e.g. "
                    f"torch.{_TORCH_FOR_MATH.get(q[5:], q[5:])})"
                ),
            )
            return
        if (
            q and q.startswith("builtins.") and self.settings.target != "export"  # export runs them on the tensor
            and _has_tensor_arg(ev)
        ):
            # chr/hex/oct/bin/pow/ascii: Dynamo folds them on Python numbers only (Dynamo facts
            # table, tensor_calls: probe-confirmed); abs/len/min/max/sum handle tensors and
            # have no confirmed break.
            if self._report_number_only_call(
                interp, ev, lambda gb: (
                    f"`{q[9:]}()` of a tensor needs a Python number, read out of the tensor: graph break ({gb}) "
                    f"(use the torch operator on the tensor, or call it on an int outside the compiled region)"
                ),
            ):
                return
        if q == "builtins.range" and any(_numpy_traced(a) for a in ev.args):
            # ``range(self.n)`` with ``self.n = np.int64(...)`` set in ``__init__``: measured on torch
            # 2.13, a break (``x.view(self.n, -1)`` with the same value traced)
            interp.report(
                self.code,
                ev.node,
                "`range()` of a NumPy value needs a Python int, and Dynamo traces the NumPy value as a tensor: "
                "graph break (store it as int(...) when the module is built)",
            )
            return
        if q == "builtins.range" and _has_tensor_arg(ev):
            interp.report(
                self.code,
                ev.node,
                "`range()` over a tensor value needs a Python int: graph break (loop over a static size, e.g. x.shape[0])",
            )
            return
        if q == "builtins.range" and any(is_random_draw(a) for a in ev.args):
            interp.report(
                self.code,
                ev.node,
                "`range()` over a value drawn by `random` needs a Python int, and Dynamo holds the draw as a "
                "tensor graph input: graph break (draw outside the compiled region and pass the count in)",
            )
            return
        if q in ("builtins.format", "builtins.str", "builtins.repr") and len(ev.args) >= 1 and not ev.kwargs:
            self.on_format(interp, ev, ev.args[0])
            return
        if q in _CAST_NAMES and len(ev.args) == 1 and not ev.kwargs:
            arg = ev.args[0]
            if _numpy_array(arg) and _CAST_NAMES[q] in ("int", "float") and not self.settings.capture_scalar_outputs:
                interp.report(
                    self.code,
                    ev.node,
                    _numpy_array_read(f"`{_CAST_NAMES[q]}()` of a NumPy array kept on the module reads its value"),
                )
                return
            if arg.kind is not Kind.TENSOR or arg.weak:
                return
            name = _CAST_NAMES[q]
            if arg.py_float and name in ("int", "float"):
                # ``int(np.ceil(n / k))``: Dynamo constant-folds the floating NumPy scalar
                return
            if name != "complex" and self.settings.capture_scalar_outputs:
                return
            if _numpy_element(arg):
                interp.report(
                    self.code,
                    ev.node,
                    f"`{name}()` of an element of a NumPy array reads its value into Python: Dynamo traces "
                    f"the array as a tensor (aten::_local_scalar_dense): graph break ({_NUMPY_HINT})",
                )
                return
            interp.report(
                self.code,
                ev.node,
                f"`{name}()` of a tensor reads its value into Python: graph break "
                f"(keep it a tensor{'; use torch.where for choices' if name == 'bool' else ''})",
            )


    def on_format(self, interp, ev, value=None) -> None:
        """``"%d" % t``, ``f"{t}"``, ``"{}".format(t)``, ``format(t)``, ``str(t)``, ``repr(t)`` of a tensor: the text
        needs its value (each breaks on torch 2.13, also with capture_scalar_outputs)."""
        v = ev.value if value is None else value
        if v.kind is not Kind.TENSOR or v.weak:
            return
        interp.report(
            self.code,
            ev.node,
            "formatting a tensor into a string reads its value into Python: graph break "
            "(format it outside the compiled region, or key on shapes/ints instead)",
        )

    def on_tensor_contains(self, interp, ev) -> None:
        """``v in t`` (or ``not in``) with ``t`` a tensor: ``Tensor.__contains__`` is
        ``(t == v).any().item()``, a read of the answer into Python whether or not a branch uses
        it (measured on torch 2.13: "Unsupported Tensor.item() call", GB0124, for ``a = 3 in ids``
        and ``if 0 not in ids:``; ``x.shape[0] in (2, 4)`` traced).  The break is inside
        ``__contains__``, which Dynamo cannot resume from: it compiles no graph for the function and
        runs all of it eagerly (measured: zero graphs)."""
        interp.report(
            self.code,
            ev.node,
            "`in` on a tensor reads its answer into Python (`Tensor.__contains__` is "
            "`(t == v).any().item()`): graph break (GB0124), and the function runs eagerly (keep it a "
            "tensor: `(t == v).any()`, and use torch.where for choices)",
        )
        interp.end_frame(self.code, ev.node)

    def on_sequence_index(self, interp, ev) -> None:
        """``sizes[i]`` with ``sizes`` a Python list or tuple and ``i`` a tensor: Python asks the
        tensor for ``__index__``, which reads it (``Tensor.item()``, GB0124; measured on torch 2.13
        for ``i = x.argmax() % 2`` and for an element of an input tensor, while
        ``sizes[x.shape[0] % 2]`` traced)."""
        interp.report(
            self.code,
            ev.index_node,
            "a tensor used as the index of a Python list, tuple or module container is converted to a "
            "Python int (`__index__`, `Tensor.item()`): graph break (GB0124) (index a tensor instead, e.g. "
            "`torch.tensor(sizes, device=...)[i]`, or pass the index as an int)",
        )

    def on_index(self, interp, ev) -> None:
        """Slice bounds that are tensors, and integer indices that are 0-d integer tensors."""
        self._int_scalar_indices(interp, ev)
        for bound, value in ev.slice_bounds:
            what = (
                "a value drawn by `random` (Dynamo holds it as a tensor graph input)" if is_random_draw(value)
                else "an element of a NumPy array (Dynamo traces the array as a tensor)" if _numpy_element(value)
                else "a tensor"
            )
            interp.report(
                self.code,
                bound,
                f"{what} used as a slice bound is converted to a Python int (`__index__`): graph break "
                "(use torch.narrow/index_select with tensor indices, or pass the bound as an int)",
            )

    def on_index_store(self, interp, ev) -> None:
        """``x[i] = v`` with ``i`` a 0-d integer tensor computed in the graph: the store reads
        ``i`` into Python as ``x[i]`` does (measured on torch 2.13: "Data dependent operator",
        ``aten._local_scalar_dense``; ``x[i] = v`` with a 1-d ``i`` stays in the graph)."""
        self._int_scalar_indices(interp, ev)

    def _int_scalar_indices(self, interp, ev) -> None:
        index = ev.index
        elements = list(ev.node.slice) if isinstance(ev.node, cst.Subscript) else []
        if len(elements) == 1:
            pairs = [(elements[0], index)]
        else:
            pairs = list(zip(elements, index.elts or ())) if index.kind is Kind.CONTAINER else []
        for el, v in pairs:
            if isinstance(el.slice, cst.Index) and is_random_draw(v) and ev.base.kind is Kind.TENSOR and not ev.base.weak:
                interp.report(
                    self.code,
                    el.slice.value,
                    "a value drawn by `random` used as an integer index is read into Python: Dynamo holds the "
                    "draw as a tensor graph input (aten._local_scalar_dense): graph break (draw with "
                    "torch.randint and index with a 1-element tensor, or draw outside the compiled region)",
                )
            elif isinstance(el.slice, cst.Index) and (_int_scalar_tensor(v) or rank0.is_zero_d(v)):
                what = "a 0-d integer tensor" if _int_scalar_tensor(v) else "a 0-d tensor (a full reduction, or computed from one)"
                interp.report(
                    self.code,
                    el.slice.value,
                    f"{what} used as an index is read into Python as a SymInt "
                    "(aten._local_scalar_dense, GB0033): graph break (index with a 1-element tensor, "
                    "e.g. x[i.view(1)] or torch.index_select, or pass the index as an int)",
                )


class TensorEqualAllclose(Rule):
    """PTC105: ``torch.equal``, ``torch.allclose``, ``Tensor.equal`` -- a Python bool from tensor
    data -- and the other calls that read tensor data into Python inside the op.

    The second kind comes from the Dynamo facts table: a callee of ``torch``, ``torch.Tensor`` or
    NumPy whose probed argument lists reach an ATen overload tagged ``data_dependent_output``
    (``aten::equal`` in ``torch.cov``/``torch.corrcoef``/``np.cov``) and broke with "Data dependent
    operator" (GB0033), matched on the argument kinds as PTC202 matches dynamic-shape ops; a call
    whose only such op is ``aten::_local_scalar_dense`` (a tensor read as a number:
    ``torch.arange(n)``, ``np.pad(a, 0)``) is PTC103's.  Measured on torch 2.13: ``torch.cov`` and
    ``corrcoef`` break with and without ``capture_scalar_outputs``.
    """

    code = "PTC105"
    GB_IDS = frozenset({"GB0033"})

    def on_call(self, interp, ev) -> None:
        q = ev.qualname
        if q in _DATA_FUNCTIONS and any(a.kind is Kind.TENSOR for a in ev.args):
            name = f"torch.{q.rsplit('.', 1)[-1]}()"
        elif ev.method in ("equal", "allclose", "is_nonzero") and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR and not ev.receiver.weak:
            name = f".{ev.method}()"
        else:
            callee = shape_op_callee(ev)
            fact = derived_shape_break(callee, ev.args, ev.kwargs, self.GB_IDS) if callee else None
            name = f"{q}()" if callee == q else f".{ev.method}()"
            if fact is None or set(fact.aten) <= _LOCAL_SCALAR:
                return  # the tensor read as a Python number: PTC103's
            interp.report(
                self.code,
                ev.node,
                f"`{name}` reads tensor data into Python inside the op (aten::{fact.aten[0]}, {fact.gb}): "
                "graph break (compute it outside the compiled region, or with tensor ops that keep the "
                "result a tensor)",
            )
            return
        interp.report(
            self.code,
            ev.node,
            f"`{name}` returns a Python bool computed from tensor data: graph break "
            f"(compare as tensors, e.g. `(a == b).all()`, and keep the result a tensor)",
        )


_CONSTRUCT_TEXT = {
    "if": "`if` on a tensor value",
    "elif": "`elif` on a tensor value",
    "while": "`while` on a tensor value",
    "ifexp": "a conditional expression on a tensor value",
    "comprehension": "a comprehension `if` on a tensor value",
    "not": "`not` on a tensor value",
    "and": "`and` on a tensor value",
    "or": "`or` on a tensor value",
    "all": "`all()` over tensor values",
    "any": "`any()` over tensor values",
}


def _constant_message(msg) -> bool:
    """Whether an ``assert``'s message compiles to one constant (Python folds it into a ``LOAD_CONST``).

    ``None`` (no message), a string literal, implicitly concatenated literals and an
    f-string without replacement fields are constants; ``"...".format(x)``, an f-string
    with fields, a name or any other expression are not.
    """
    if msg is None or isinstance(msg, cst.SimpleString):
        return True
    if isinstance(msg, cst.ConcatenatedString):
        return _constant_message(msg.left) and _constant_message(msg.right)
    if isinstance(msg, cst.FormattedString):
        return all(isinstance(p, cst.FormattedStringText) for p in msg.parts)
    return False


class DataDependentBranch(Rule):
    """PTC104: Python control flow decided by a tensor's value."""

    code = "PTC104"

    def on_assert(self, interp, ev) -> None:
        """``assert <tensor>, <message>`` breaks only when the message is not one constant.

        Dynamo (torch 2.13, ``symbolic_convert._detect_and_normalize_assert_statement``)
        rewrites an assert on a tensor into ``torch._assert_async`` only when the bytecode
        after the jump is ``LOAD_ASSERTION_ERROR`` [``LOAD_CONST`` ``CALL``] ``RAISE_VARARGS``;
        any other message (``"...".format(x)``, an f-string with fields, a variable) leaves
        a plain jump on a tensor: "Data-dependent branching" (GB0170) at the assert.
        """
        v = ev.value
        if v.kind is Kind.TENSOR and not v.weak and not _constant_message(ev.node.msg):
            interp.report(
                self.code,
                ev.node.test,
                "`assert` on a tensor value with a computed message is data-dependent control flow: graph break "
                "(use a constant string message, which Dynamo turns into torch._assert_async)",
            )

    def on_test(self, interp, ev) -> None:
        v = ev.value
        if v.kind is Kind.TENSOR and not v.weak and v.ref == _numpy_test():
            what = _CONSTRUCT_TEXT.get(ev.construct, "a truth test on a tensor value").replace(
                "a tensor value", "a value of a NumPy array"
            )
            interp.report(
                self.code,
                ev.node,
                f"{what} is data-dependent control flow: graph break, since Dynamo traces NumPy arrays as tensors "
                f"(turn the values into Python numbers or a tuple when the module is built, e.g. tuple(arr.tolist()))",
                branch_test=True,
            )
        elif v.kind is Kind.TENSOR and not v.weak:
            what = _CONSTRUCT_TEXT.get(ev.construct, "a truth test on a tensor value")
            fix = "use torch.where or torch.cond" if ev.construct in ("if", "elif", "ifexp") else "keep the condition a tensor (torch.where / torch.cond)"
            generator = ev.construct in ("all", "any") and _over_generator(ev.node)
            if ev.construct in ("all", "any"):
                fix = f"reduce a tensor instead: torch.stack([...]).{ev.construct}()"
            if generator:
                # the break is inside Dynamo's any()/all() polyfill, which holds the generator: "Generator
                # reconstruction with mutations" (measured on torch 2.13), so Dynamo gives up on the frame
                interp.report(
                    self.code,
                    ev.node,
                    f"{what} is data-dependent control flow: graph break inside `{ev.construct}()`, where Dynamo "
                    f"cannot rebuild the generator, so the rest of the function runs eagerly ({fix})",
                    branch_test=True,
                )
                interp.end_frame(self.code, ev.node)
                return
            interp.report(self.code, ev.node, f"{what} is data-dependent control flow: graph break ({fix})", branch_test=True)
        elif is_random_draw(v):
            what = _CONSTRUCT_TEXT.get(ev.construct, "a truth test").replace("a tensor value", "a value drawn by `random`")
            interp.report(
                self.code,
                ev.node,
                f"{what} is data-dependent control flow: graph break, since Dynamo holds the draw as a graph input "
                f"(draw with torch.rand/torch.randint and use torch.where, or draw outside the compiled region)",
                branch_test=True,
            )
        elif v.kind is Kind.DATA and self.settings.capture_scalar_outputs:
            what = _CONSTRUCT_TEXT.get(ev.construct, "a truth test").replace("a tensor value", "a value read from a tensor")
            interp.report(
                self.code,
                ev.node,
                f"{what} branches on an unbacked SymInt/SymFloat: graph break even with capture_scalar_outputs "
                f"(use torch.cond, or torch._check to state what is known)",
                branch_test=True,
            )


def _over_generator(node) -> bool:
    """``node`` is ``any(<generator expression>)`` / ``all(...)`` (not a list or another iterable)."""
    return (
        isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].star
        and isinstance(node.args[0].value, cst.GeneratorExp)
    )


def _int_scalar_tensor(v) -> bool:
    """A value surely a 0-d integer tensor computed in the graph (``t.argmax()``, ``mask.sum()``)."""
    return v is not None and v.kind is Kind.TENSOR and not v.weak and (v.ref == "int-scalar" or _numpy_element(v))
