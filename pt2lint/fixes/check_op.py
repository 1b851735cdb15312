"""The module-level custom op the ``check`` codemod writes, its name, and recognising it again.

A data-dependent validation ``if <tensor test>: raise E("msg")`` breaks the graph.  In compiled
code the ``check`` codemod calls, instead, an op that raises the same exception::

    @torch.library.custom_op("pt2lint_m_0a1b2c3d::check_Model_forward_12", mutates_args=())
    def _pt2lint_check_Model_forward_12(failed: torch.Tensor) -> None:
        \"\"\"...\"\"\"
        if failed:
            raise E("msg")


    @_pt2lint_check_Model_forward_12.register_fake
    def _pt2lint_check_Model_forward_12_fake(failed: torch.Tensor) -> None:
        return None


    torch.fx.node.has_side_effect(torch.ops.pt2lint_m_0a1b2c3d.check_Model_forward_12.default)

Measured on torch 2.13.0+cpu (``bench/convertible/RESULTS.md``, "A custom-op check", and
``tests/test_fix_check.py``): called with a one-element bool tensor, the op raises ``E`` with
its message in eager mode, with ``backend="aot_eager"``, with Inductor (``fullgraph=True``,
static and dynamic shapes) and in ``torch.export``, with 0 graph breaks, equal outputs and
gradients; ``ValueError``, ``IndexError``, ``TypeError``, ``KeyError``, ``AssertionError``,
``RuntimeError`` and a user-defined ``Exception`` subclass all keep their type.  Without
``has_side_effect`` (an op with no output and no declared effect) AOTAutograd and Inductor
drop the call, and compiled code does not raise at all.

Names are derived from the module's path, the function's qualified name and the line of the
``if`` (no hash seeds: the path's digest is SHA-1), so a fix is byte-identical on every run;
a name already defined in the module gets a ``_2``, ``_3``... suffix, so two fixes in one file
never share an op.  Every op of a file is inserted at the same point; :func:`join_insertions`
lets ``pt2lint fix`` write all of them in one round, in the order of the validations' lines, each
named from its line in the file as it was read.  :func:`recognise_check_ops` finds the blocks in a text and accepts one only
when :func:`check_op_source` regenerates it character for character: ``fix --verify`` accepts
the module-level functions a fix added only when they are these blocks.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple

#: Prefix of every generated op namespace and function name.
NS_PREFIX = "pt2lint_"
FN_PREFIX = "_pt2lint_check_"
_FN_HEAD = "_pt2lint_"

_HEAD = re.compile(
    r'^@(?P<torch>[A-Za-z_][A-Za-z0-9_]*)\.library\.custom_op\("(?P<ns>pt2lint_[A-Za-z0-9_]+)::(?P<op>[A-Za-z0-9_]+)", mutates_args=\(\)\)$'
)
_DEF = re.compile(r"^def (?P<fn>_pt2lint_check_[A-Za-z0-9_]+)\(failed: ")
_DOC = re.compile(r'^(?P<indent>[ \t]+)"""Raise as ``(?P<qual>[^`]+)`` does when ')
_RAISE = re.compile(r"^[ \t]+(?P<raise>raise .+)$")


def _slug(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_")


def op_namespace(path: str) -> str:
    """The op namespace of a module: ``pt2lint_<path as an identifier>_<8 hex digits of its SHA-1>``.

    Args:
        path: the module's path relative to the project root (``pkg/model.py``).

    The digest keeps two paths that spell the same identifier (``a-b.py``, ``a_b.py``) apart;
    the readable part is cut to its last 40 characters.
    """
    stem = path[:-3] if path.endswith(".py") else path
    slug = _slug(stem)[-40:].strip("_") or "module"
    digest = hashlib.sha1(path.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{NS_PREFIX}{slug}_{digest}"


def op_name(qualname: str, line: int, taken: Iterable[str] = ()) -> str:
    """``check_<qualname>_<line>`` (``.`` and other non-identifier characters as ``_``), with the
    first free ``_2``, ``_3``... suffix when ``_pt2lint_<name>`` is in ``taken``."""
    base = f"check_{_slug(qualname) or 'f'}_{line}"
    taken = set(taken)
    name, k = base, 1
    while _FN_HEAD + name in taken or _FN_HEAD + name + "_fake" in taken:
        k += 1
        name = f"{base}_{k}"
    return name


def function_name(op: str) -> str:
    """The Python name of the op's function (``_pt2lint_`` + the op name)."""
    return _FN_HEAD + op


def check_op_source(torch: str, ns: str, op: str, qualname: str, raise_text: str, indent: str = "    ", newline: str = "\n") -> str:
    """The text of the module-level op definition (ending with a newline, no blank lines around it).

    Args:
        torch: the module's name for ``torch``.
        ns: the op namespace (:func:`op_namespace`).
        op: the op name (:func:`op_name`).
        qualname: the validated function (``Model.forward``), for the docstring.
        raise_text: the ``raise`` statement, one line (``raise ValueError("msg")``).
        indent: one block indentation of the module.
        newline: the module's line ending.
    """
    fn = function_name(op)
    lines = [
        f'@{torch}.library.custom_op("{ns}::{op}", mutates_args=())',
        f"def {fn}(failed: {torch}.Tensor) -> None:",
        f'{indent}"""Raise as ``{qualname}`` does when ``failed`` (a one-element bool tensor) is true: an op, which compiled code keeps."""',
        f"{indent}if failed:",
        f"{indent}{indent}{raise_text}",
        "",
        "",
        f"@{fn}.register_fake",
        f"def {fn}_fake(failed: {torch}.Tensor) -> None:",
        f"{indent}return None",
        "",
        "",
        f"{torch}.fx.node.has_side_effect({torch}.ops.{ns}.{op}.default)",
    ]
    return newline.join(lines) + newline


def valid_raise(raise_text: str) -> bool:
    """Whether ``raise_text`` is what the codemod writes into an op: ``raise E``, ``raise E()`` or
    ``raise E("constant")``, ``E`` a name or a dotted name."""
    try:
        tree = ast.parse(raise_text)
    except SyntaxError:
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Raise) or tree.body[0].cause is not None:
        return False
    exc = tree.body[0].exc

    def dotted(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and dotted(node.value))

    if isinstance(exc, ast.Call):
        if exc.keywords or len(exc.args) > 1 or not dotted(exc.func):
            return False
        return not exc.args or (isinstance(exc.args[0], ast.Constant) and isinstance(exc.args[0].value, str))
    return exc is not None and dotted(exc)


@dataclass(frozen=True)
class CheckOp:
    """A generated op definition found in a text: its lines (1-based, inclusive) and names."""

    first: int
    last: int
    function: str
    namespace: str
    op: str

    @property
    def functions(self) -> Tuple[str, str]:
        """The module-level functions the block defines (the op and its fake implementation)."""
        return (self.function, self.function + "_fake")


def recognise_check_ops(text: str) -> List[CheckOp]:
    """The op definitions of :func:`check_op_source` in ``text``, each accepted only when
    regenerating it from the names it spells gives exactly its lines (at module level, with a
    raise of the form :func:`valid_raise` accepts)."""
    from pt2lint.fixes.edits import split_keepends

    lines = split_keepends(text)
    out: List[CheckOp] = []
    i = 0
    while i < len(lines):
        head = _HEAD.match(lines[i].rstrip("\r\n"))
        if head is None:
            i += 1
            continue
        found = _match_at(lines, i, head)
        if found is None:
            i += 1
            continue
        out.append(found)
        i = found.last
    return out


def _match_at(lines: List[str], i: int, head: "re.Match[str]") -> Optional[CheckOp]:
    if i + 12 >= len(lines):
        return None
    strip = [ln.rstrip("\r\n") for ln in lines[i : i + 13]]
    newline = lines[i][len(strip[0]):] or "\n"
    d, doc, rai = _DEF.match(strip[1]), _DOC.match(strip[2]), _RAISE.match(strip[4])
    if d is None or doc is None or rai is None:
        return None
    raise_text = rai.group("raise")
    if not valid_raise(raise_text):
        return None
    torch, ns, op = head.group("torch"), head.group("ns"), head.group("op")
    if d.group("fn") != function_name(op):
        return None
    expected = check_op_source(torch, ns, op, doc.group("qual"), raise_text, doc.group("indent"), newline)
    if "".join(lines[i : i + 13]) != expected:
        return None
    return CheckOp(i + 1, i + 13, function_name(op), ns, op)


def _op_insertion(content: str) -> Optional[Tuple[str, str, str, CheckOp]]:
    """``(newline, op block, tail, op)`` of the text the codemod inserts for one op: two newlines,
    one :func:`check_op_source` block, and two more newlines when code follows; else ``None``."""
    from pt2lint.fixes.edits import split_keepends

    newline = next((nl for nl in ("\r\n", "\n", "\r") if content.startswith(nl * 2)), None)
    if newline is None:
        return None
    body = content[2 * len(newline):]
    tail = newline * 2 if body.endswith(newline * 3) else ""
    block = body[: len(body) - len(tail)]
    ops = recognise_check_ops(block)
    if len(ops) != 1 or ops[0].first != 1 or len(split_keepends(block)) != ops[0].last:
        return None
    return newline, block, tail, ops[0]


def join_insertions(contents: Sequence[str]) -> Optional[str]:
    """The one insertion that writes every op definition of ``contents`` (the check codemod's
    insertions at the same point after the imports), in the given order, two blank lines apart as
    one op per fix round would leave them; ``None`` unless each is such an insertion, all with the
    same line ending and the same tail, and no two define the same function or op.

    This lets ``pt2lint fix`` apply every validation fix of a file in one round
    (:func:`pt2lint.fixes.edits.apply_fixes`), where each fix on its own still carries its own
    insertion.
    """
    parts = [_op_insertion(c) for c in contents]
    if not parts or any(p is None for p in parts):
        return None
    newline, tail = parts[0][0], parts[0][2]  # type: ignore[index]
    names: List[str] = []
    for nl, _block, t, op in parts:  # type: ignore[misc]
        if nl != newline or t != tail:
            return None
        names.extend(op.functions)
        names.append(f"{op.namespace}::{op.op}")
    if len(set(names)) != len(names):
        return None
    return newline * 2 + (newline * 2).join(p[1] for p in parts) + tail  # type: ignore[index]


__all__ = [
    "CheckOp",
    "FN_PREFIX",
    "NS_PREFIX",
    "check_op_source",
    "function_name",
    "join_insertions",
    "op_name",
    "op_namespace",
    "recognise_check_ops",
    "valid_raise",
]
