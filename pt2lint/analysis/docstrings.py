"""Parameter types a function's docstring declares, for parameters without an annotation.

Much model code documents its parameters' types in the docstring instead of annotating
them: ``target_is_real (bool): ...`` (Google style), ``S : int`` under a ``Parameters`` /
``Arguments`` heading underlined with dashes (NumPy style), ``:param int n:`` or
``:type n: int`` (Sphinx).  The author's word is better than the analysis's guess that an
unannotated ``forward`` parameter is a tensor: ``if target_is_real:`` on a ``bool`` is no
data-dependent branch.

Only the plain Python scalar types are read (``bool``, ``int``, ``float``, ``str``, with
``optional`` / ``or None`` / ``Optional[...]``); anything naming a tensor, an array, a union of
several types or a class says nothing here.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

import libcst as cst

from pt2lint.analysis.walk import walk

_SCALARS = {"bool": "bool", "boolean": "bool", "int": "int", "integer": "int", "float": "float", "str": "str", "string": "str"}

_GOOGLE_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters)\s*:\s*$")
_GOOGLE_ENTRY = re.compile(r"^\s*\*{0,2}(\w+)\s*\(([^()]*)\)\s*:")
#: ``length: int`` in a Google section: an entry whose whole description (or its first sentence)
#: is a type, as torchlibrosa and much research code write it.
_GOOGLE_PLAIN = re.compile(r"^(\s*)\*{0,2}(\w+)\s*:\s*(\S.*?)\s*$")
_NUMPY_HEADER = re.compile(r"^\s*(Parameters|Arguments|Args|Other Parameters|Keyword Arguments)\s*$")
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ENTRY = re.compile(r"^(\s*)(\w+)\s*:\s*(\S.*?)\s*$")
_SPHINX_PARAM = re.compile(r":param\s+([\w\[\], |.]+?)\s+(\w+)\s*:")
_SPHINX_TYPE = re.compile(r":type\s+(\w+)\s*:\s*(.+?)\s*$")
_ANY_HEADER = re.compile(r"^\s*[A-Z][A-Za-z ]*\s*:?\s*$")

_MEMO: Dict[int, Tuple[cst.CSTNode, Dict[str, Tuple[str, bool]]]] = {}
_MEMO_MAX = 4096  # entries keep their trees alive: bounded, for long-lived processes (the LSP server)


def scalar_type(text: str) -> Optional[Tuple[str, bool]]:
    """``(type, optional)`` when the type text names one Python scalar type (``"bool"``,
    ``"int, optional"``, ``"Optional[float]"``, ``"str or None"``, ``"int | None"``), else ``None``."""
    t = text.strip().strip("`").strip()
    optional = False
    m = re.fullmatch(r"Optional\[(.+)\]", t)
    if m:
        t, optional = m.group(1).strip(), True
    for suffix in (r",\s*optional", r",\s*default\b.*", r"\s+or\s+None", r"\s*\|\s*None", r"\s*,\s*None"):
        m = re.search(suffix + r"\s*$", t, flags=re.IGNORECASE)
        if m:
            optional = optional or "default" not in m.group(0).lower()
            t = t[: m.start()].strip()
    m = re.match(r"None\s*(\||or)\s*(.+)$", t)
    if m:
        t, optional = m.group(2).strip(), True
    kind = _SCALARS.get(t.strip("`").strip())
    return (kind, optional) if kind is not None else None


def _plain_description_type(text: str) -> Optional[Tuple[str, bool]]:
    """The scalar type a Google entry without parentheses states as its whole description
    (``int``, ``int, optional``, ``bool.``) or as its first sentence (``int. Length of the
    output``); None for a description that only begins with a type word (``float tensor of
    weights``, ``int64 indices``)."""
    kind = scalar_type(text.rstrip("."))
    if kind is None and ". " in text:
        kind = scalar_type(text.split(". ", 1)[0])
    return kind


def _parse(doc: str) -> Dict[str, Tuple[str, bool]]:
    found: Dict[str, Tuple[str, bool]] = {}
    lines = doc.splitlines()
    section = None  # "google" or "numpy" while inside a parameter section
    indent = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if _GOOGLE_HEADER.match(line):
            section, indent = "google", None
            i += 1
            continue
        if _NUMPY_HEADER.match(line) and i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]):
            section, indent = "numpy", None
            i += 2
            continue
        if section == "numpy" and i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]) and line.strip():
            section = None  # the next NumPy section (``Returns`` underlined)
        elif section == "google" and _ANY_HEADER.match(line) and line.strip().endswith(":") and not _GOOGLE_ENTRY.match(line):
            section = None  # ``Returns:``
        if section == "google":
            m = _GOOGLE_ENTRY.match(line)
            if m:
                if indent is None:
                    indent = len(line) - len(line.lstrip())
                kind = scalar_type(m.group(2))
                if kind is not None:
                    found.setdefault(m.group(1), kind)
            else:
                m = _GOOGLE_PLAIN.match(line)
                # an entry at the section's entry indent (not a continuation line of one)
                if m and (indent is None or len(m.group(1)) <= indent):
                    indent = len(m.group(1))
                    kind = _plain_description_type(m.group(3))
                    if kind is not None:
                        found.setdefault(m.group(2), kind)
        elif section == "numpy":
            m = _NUMPY_ENTRY.match(line)
            if m and (indent is None or len(m.group(1)) <= indent):
                indent = len(m.group(1))
                names = [n.strip() for n in m.group(2).split(",")]
                kind = scalar_type(m.group(3))
                if kind is not None:
                    for n in names:
                        found.setdefault(n, kind)
        i += 1
    for m in _SPHINX_PARAM.finditer(doc):
        kind = scalar_type(m.group(1))
        if kind is not None:
            found.setdefault(m.group(2), kind)
    for line in lines:
        m = _SPHINX_TYPE.search(line)
        if m:
            kind = scalar_type(m.group(2))
            if kind is not None:
                found.setdefault(m.group(1), kind)
    return found


def _type_tested(fn_node: cst.FunctionDef) -> set:
    """Names whose type the function's own code tests (``isinstance(q, (int, float))``,
    ``torch.is_tensor(q)``, ``type(q)``): it expects more than one type there, whatever its
    docstring says."""
    names = set()
    copies: Dict[str, set] = {}  # ``factor = quality``: factor -> {quality}
    for n in walk(fn_node.body):
        if isinstance(n, cst.Call) and n.args and isinstance(n.args[0].value, cst.Name):
            func = n.func
            last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
            if last in ("isinstance", "is_tensor", "type"):
                names.add(n.args[0].value.value)
        elif isinstance(n, cst.Assign) and isinstance(n.value, cst.Name):
            for t in n.targets:
                if isinstance(t.target, cst.Name):
                    copies.setdefault(t.target.value, set()).add(n.value.value)
    todo = list(names)
    while todo:
        for source in copies.get(todo.pop(), ()):
            if source not in names:
                names.add(source)
                todo.append(source)
    return names


def documented_scalars(fn_node: cst.CSTNode) -> Dict[str, Tuple[str, bool]]:
    """Parameter name -> ``(Python scalar type, may be None)`` that the docstring of ``fn_node`` (a
    ``FunctionDef``) declares; empty without a docstring.  A parameter whose type the function
    tests itself (``isinstance(quality, (int, float))`` before handling a tensor) is left out:
    the code says it takes other types too.  Memoised per node."""
    key = id(fn_node)
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is fn_node:
        return hit[1]
    doc = fn_node.get_docstring(clean=True) if isinstance(fn_node, cst.FunctionDef) else None
    result = _parse(doc) if doc else {}
    if result:
        tested = _type_tested(fn_node)
        result = {name: kind for name, kind in result.items() if name not in tested}
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = (fn_node, result)
    return result
