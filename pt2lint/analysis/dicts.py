"""Open dicts: keyword dicts whose entries are only partly known.

A closed dict value (``Value.keys`` set, see :func:`pt2lint.analysis.kinds.keyed_dict`) lists
every key.  Option dicts in library code are seldom like that: ``options = options.copy()``
of a caller's dict, then ``options["norm"] = _rms_norm``; or ``{}`` on one path and a dict
with an added entry on the other.  Python still calls what is stored under a key:
``f(**options)`` binds ``norm`` to ``_rms_norm`` and ``options["norm"](x)`` calls it, and
Dynamo inlines that call like any other (measured on torch 2.13: a data-dependent ``if``
inside a function reached only through ``solver = Solver(**options)`` and then
``self.norm(...)`` breaks there).

An open dict keeps the entries the analysis saw written, in :class:`Entries` stored in
``Value.const``; ``Value.keys`` stays ``None``, so code that needs the full key set (a
membership test, ``*d``, ``len``) still sees a dict of unknown keys.  Only the readers of
single entries (``d["k"]``, ``d.get("k")``, ``**d``) use what is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from pt2lint.analysis.kinds import UNKNOWN, Kind, Value, join


@dataclass(frozen=True)
class Entries:
    """The known entries of an open dict: ``keys[i]`` holds ``values[i]``."""

    keys: Tuple[str, ...]
    values: Tuple[Value, ...]


def known_entries(v: Optional[Value]) -> Optional[Dict[str, Value]]:
    """The entries of a dict value that the analysis knows, or ``None`` when it knows none.

    A closed dict (all keys known) gives all of them; an open dict the ones written to it.
    """
    if v is None or v.kind is not Kind.CONTAINER:
        return None
    if isinstance(v.const, Entries):
        return dict(zip(v.const.keys, v.const.values))
    if v.keys is not None and v.elts is not None and v.const is None:
        return dict(zip(v.keys, v.elts))
    return None


def is_open(v: Optional[Value]) -> bool:
    """Whether ``v`` is an open dict (some entries known, the full key set not)."""
    return v is not None and v.kind is Kind.CONTAINER and isinstance(v.const, Entries)


def open_dict(entries: Dict[str, Value], maybe_none: bool = False) -> Value:
    """An open dict holding ``entries`` besides keys of unknown value."""
    keys = tuple(entries)
    return Value(
        Kind.CONTAINER, elt=UNKNOWN, const=Entries(keys, tuple(entries[k] for k in keys)), maybe_none=maybe_none,
    )


def can_hold_entries(v: Value) -> bool:
    """A value that ``v["key"] = value`` (a string key) makes a dict with that entry: a dict of
    unknown keys, an open dict, a value of unknown kind or a guessed tensor (a string key is
    no tensor index)."""
    if v.kind is Kind.CONTAINER:
        return v.keys is None and v.elts is None and (v.const is None or is_open(v))
    return _unknown_or_guess(v)


def _unknown_or_guess(v: Value) -> bool:
    """A value of unknown kind, or one only guessed to be a tensor (a tensor takes no string key)."""
    return (v.kind is Kind.UNKNOWN and v.ref is None) or (v.kind is Kind.TENSOR and v.weak and v.alias_of is None)


def with_entry(d: Value, key: str, value: Value) -> Value:
    """The open dict ``d`` after ``d[key] = value`` (``d`` as accepted by :func:`can_hold_entries`)."""
    entries = known_entries(d) or {}
    entries = {k: v for k, v in entries.items() if k != key}
    entries[key] = value
    return open_dict(entries, maybe_none=False)


def join_dicts(a: Value, b: Value) -> Optional[Value]:
    """The join of two dicts of which one is open or whose key sets differ, else ``None``.

    The result is open: an entry known on both paths joins the two values; an entry known
    on one path only keeps that path's value (on the other the key may be absent, and a
    read of it fails there, or hold a value the analysis does not know).  An open dict
    joined with a value of unknown kind stays the open dict for the same reason.
    """
    for one, other in ((a, b), (b, a)):
        if is_open(one) and _unknown_or_guess(other):
            # ``options.copy()`` of a value of unknown kind on one path, entries written on the other
            return one
    if a.kind is not Kind.CONTAINER or b.kind is not Kind.CONTAINER:
        return None
    if not (is_open(a) or is_open(b)):
        if a.keys is None or b.keys is None or a.keys == b.keys:
            return None
    ea, eb = _entries_or_none_known(a), _entries_or_none_known(b)
    if ea is None or eb is None or not (ea or eb):
        return None
    out: Dict[str, Value] = {}
    for k in list(ea) + [k for k in eb if k not in ea]:
        if k in ea and k in eb:
            out[k] = join(ea[k], eb[k])
        else:
            # on the other path the key is absent or holds a value the analysis does not know:
            # the entry joins an unknown value (a function stays callable, but is no longer
            # surely given, e.g. to a ``grid_constructor=None`` parameter through ``**options``)
            out[k] = join(ea[k] if k in ea else eb[k], UNKNOWN)
    return open_dict(out, maybe_none=a.maybe_none or b.maybe_none)


def _entries_or_none_known(v: Value) -> Optional[Dict[str, Value]]:
    """Known entries of a dict value; ``{}`` for a dict of unknown keys with none known."""
    found = known_entries(v)
    if found is not None:
        return found
    if v.keys is None and v.elts is None and v.const is None:
        return {}
    return None


class OpenKwargs(dict):
    """The keyword arguments of a call that also passes ``**d`` of a dict whose keys are not
    all known (an open dict, a dict of unknown keys, a value of unknown kind).

    The mapping holds the keywords the analysis knows; any other parameter of the callee may
    still be given by ``d``, so a parameter left unbound holds its default *or* an unknown
    value, never surely the default (``Solver(**options)`` with ``options`` a caller's dict
    may set ``step_size``, which then is not ``None``).
    """


def open_kwargs(kwargs: Dict[str, Value]) -> "OpenKwargs":
    """``kwargs`` marked as a call's keywords that an open ``**d`` may extend (see :class:`OpenKwargs`)."""
    return kwargs if isinstance(kwargs, OpenKwargs) else OpenKwargs(kwargs)


def is_open_kwargs(kwargs) -> bool:
    """Whether a call's keyword mapping may hold keywords beyond those it lists."""
    return isinstance(kwargs, OpenKwargs)
