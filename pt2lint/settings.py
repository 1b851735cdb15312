"""Resolved lint settings: which rules run on which file, and the Dynamo knobs.

The front ends (CLI, LSP, pre-commit) turn ``[tool.pt2lint]`` and command-line
options into one :class:`LintSettings`; the engine only reads it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from pt2lint.reading import DEFAULT_MAX_BYTES
from pt2lint.specs import RuleSpec, load_specs


#: settings.regions -> key -> options (built once per distinct tuple).
_REGIONS: Dict[Tuple[Any, ...], Dict[str, Any]] = {}

#: per-file-ignores table -> its globs, each compiled once (one entry per config, whatever its size).
_COMPILED: Dict[Tuple[Tuple[str, FrozenSet[str]], ...], List[Tuple[Any, FrozenSet[str]]]] = {}


def _compiled(per_file_ignores: Tuple[Tuple[str, FrozenSet[str]], ...]) -> List[Tuple[Any, FrozenSet[str]]]:
    """``(Globs, codes)`` for each per-file-ignores entry, compiled on first use.

    Keyed by the whole table, so a config with any number of globs compiles each one
    once per process (an ``lru_cache`` per pattern thrashed beyond its size).
    """
    found = _COMPILED.get(per_file_ignores)
    if found is None:
        from pt2lint.globs import compile_patterns

        found = [(compile_patterns([pattern]), codes) for pattern, codes in per_file_ignores]
        if len(_COMPILED) > 64:  # many configs in one process (the LSP): forget the old ones
            _COMPILED.clear()
        _COMPILED[per_file_ignores] = found
    return found


class SelectionError(ValueError):
    """A selector (code, prefix or rule name) names no rule."""


def resolve_selector(selector: str, specs: Optional[Mapping[str, RuleSpec]] = None) -> FrozenSet[str]:
    """Codes matched by one selector.

    A selector is ``ALL``, a full code (``PTC101``), a code prefix (``PTC1``,
    ``PTC``), or a rule name (``tensor-item``).

    Raises:
        SelectionError: nothing matches.
    """
    specs = load_specs() if specs is None else specs
    sel = selector.strip()
    if sel.upper() == "ALL":
        return frozenset(specs)
    up = sel.upper()
    if up.startswith("PTC"):
        codes = frozenset(c for c in specs if c.startswith(up))
        if codes:
            return codes
    by_name = frozenset(c for c, s in specs.items() if s.name == sel.lower())
    if by_name:
        return by_name
    raise SelectionError(
        f"unknown rule selector {selector!r}{suggest_selector(sel, specs)} "
        "(expected ALL, a code such as PTC101, a prefix such as PTC1, or a rule name)"
    )


def suggest_selector(selector: str, specs: Optional[Mapping[str, RuleSpec]] = None) -> str:
    """``" (did you mean 'tensor-item'?)"`` for a selector that names no rule, or ``""``.

    A selector that looks like a code (``PTC1O1``) gets the first code that differs from it
    in one character; any other gets the closest rule name by :func:`difflib.get_close_matches`
    (ratio 0.6 or more, as for config keys).
    """
    import difflib

    specs = load_specs() if specs is None else specs
    sel = selector.strip()
    if sel.upper().startswith("PTC"):
        up = sel.upper()
        close = [c for c in specs if len(c) == len(up) and sum(a != b for a, b in zip(c, up)) == 1][:1]
    else:
        names = [s.name for s in specs.values()]
        close = difflib.get_close_matches(sel.lower().replace("_", "-"), names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def resolve_selection(
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    target: str = "compile",
    specs: Optional[Mapping[str, RuleSpec]] = None,
) -> FrozenSet[str]:
    """Enabled codes: ``select`` (default: every rule for ``target``) plus ``extend_select`` minus ``ignore``.

    Rules whose spec does not list ``target`` are left out unless selected by
    their exact code or name (an export-only rule can still be asked for by name).

    Raises:
        SelectionError: a selector names no rule.
    """
    specs = load_specs() if specs is None else specs

    def expand(selectors: Iterable[str], explicit: bool) -> set:
        out: set = set()
        for sel in selectors:
            codes = resolve_selector(sel, specs)
            exact = len(codes) == 1 and (sel.upper() in specs or specs[next(iter(codes))].name == sel.lower())
            for c in codes:
                if exact or target in specs[c].targets:
                    out.add(c)
        return out

    chosen = expand(select if select is not None else ["ALL"], True)
    chosen |= expand(extend_select, True)
    for sel in ignore:
        chosen -= set(resolve_selector(sel, specs))
    return frozenset(chosen)


@dataclass(frozen=True)
class LintSettings:
    """What the engine needs to lint one file.

    Attributes:
        enabled: codes that run (already resolved from select/ignore/target).
        per_file_ignores: ``(glob, codes)`` pairs; a file matching the glob
            (gitignore-style, like ``exclude``: relative to the project root, and a
            pattern without ``/`` matches at any depth) drops those codes.
        capture_scalar_outputs: mirrors ``torch._dynamo.config.capture_scalar_outputs``:
            when True, ``.item()``/``int(t)`` are traced as unbacked SymInts, so
            only branching on the result breaks.
        capture_dynamic_output_shape_ops: mirrors
            ``torch._dynamo.config.capture_dynamic_output_shape_ops``: ``nonzero``,
            ``unique`` and boolean-mask indexing are traced with unbacked sizes.
        allow_rnn: mirrors ``torch._dynamo.config.allow_rnn``: ``nn.RNN``/``LSTM``/``GRU``
            modules are traced instead of breaking the graph (measured on torch 2.13).
        target: ``"compile"``, ``"export"`` or ``"cudagraphs"``.
        compute_dtype: the floating dtype the compiled model runs in (``"float32"``,
            ``"float16"``, ``"bfloat16"``).  Dynamo specialises on dtypes, so a
            ``x.dtype == torch.float16`` test is a constant guard, and the code it
            guards is dead when the model runs in another dtype.
        project_root: directory that per-file-ignore globs are relative to.
        src: extra import roots relative to ``project_root`` (the ``src`` setting).
        follow_imports: installed packages whose source the analysis follows into
            (dotted names; a package name covers its submodules).
        max_file_size: largest file read, in bytes (the ``max-file-size`` setting); a
            larger one is an error, not read (see :mod:`pt2lint.reading`).
        explicit_knobs: knob names the command line set (code in the project does not override them).
        code_knobs: ``(knob, value, "file:line")`` of the knobs the project's code assigns
            (:mod:`pt2lint.analysis.code_config`); already folded into the knob fields.
        code_scanned: the project's files were scanned for such config already (the engine
            then does not scan the linted file again).
        regions: :class:`~pt2lint.analysis.code_config.RegionOptions` of the compile calls and
            config patches found in the project (mode, fullgraph, dynamic, knobs per region).
        config_sites: :class:`~pt2lint.analysis.code_config.ConfigSite` records: what the
            project passes where it builds its config dataclasses (a field set to another
            value than its default is read as either).
        assume_compiled: the ``assume-compiled`` setting: every module and function runs
            under ``torch.compile``.  When False (the default) a ``cond`` fix is unsafe unless
            the file compiles the class or function it rewrites (``torch.compile(Model(...))``,
            ``@torch.compile``, ``model = Model(); torch.compile(model)``), since
            ``torch.cond`` is much slower than the ``if`` in eager mode
            (``bench/cond_overhead.py``).
        built_elsewhere: names of the linted file's ``nn.Module`` classes that a class of
            another linted file builds as a submodule (set per file by
            :func:`pt2lint.engine.lint_paths`, never by configuration).  Such a class is not
            a top-level model: its ``forward`` is called from the parent's compiled code
            with the arguments the parent passes, so its own analysis takes untyped
            parameters as unknown, not as tensors (as for a class its own file builds).
        reached_elsewhere: names of the linted file's ``nn.Module`` classes whose ``forward``
            the analysis of another linted file followed, with the arguments and constructor
            values it passes (set with :attr:`built_elsewhere`): a class that file builds, or
            a submodule of one (``Attention`` built in ``Block.__init__``, ``Block`` built in
            ``model.py``).  That analysis reports what their code does there; the file's own
            analysis does not run a submodule among them again with those unknown.
    """

    enabled: FrozenSet[str] = field(default_factory=lambda: resolve_selection())
    per_file_ignores: Tuple[Tuple[str, FrozenSet[str]], ...] = ()
    capture_scalar_outputs: bool = False
    capture_dynamic_output_shape_ops: bool = False
    allow_rnn: bool = False
    target: str = "compile"
    compute_dtype: str = "float32"
    project_root: str = ""
    src: Tuple[str, ...] = ()
    follow_imports: Tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_BYTES
    explicit_knobs: FrozenSet[str] = frozenset()
    code_knobs: Tuple[Tuple[str, object, str], ...] = ()
    code_scanned: bool = False
    regions: Tuple[Any, ...] = ()
    config_sites: Tuple[Any, ...] = ()

    assume_compiled: bool = False
    built_elsewhere: FrozenSet[str] = frozenset()
    reached_elsewhere: FrozenSet[str] = frozenset()

    def region(self, key: str):
        """The :class:`~pt2lint.analysis.code_config.RegionOptions` of the region ``key``
        (``"<module>.<Class>.forward"``, ``"<module>.<function>"``), or ``None``."""
        if not self.regions:
            return None
        table = _REGIONS.get(self.regions)
        if table is None:
            table = {r.key: r for r in self.regions}
            if len(_REGIONS) > 16:
                _REGIONS.clear()
            _REGIONS[self.regions] = table
        return table.get(key)

    def knobs(self) -> Dict[str, bool]:
        """The Dynamo knobs pt2lint models, by ``torch._dynamo.config`` name."""
        return {
            "capture_scalar_outputs": self.capture_scalar_outputs,
            "capture_dynamic_output_shape_ops": self.capture_dynamic_output_shape_ops,
            "allow_rnn": self.allow_rnn,
        }

    def enabled_for(self, relpath: str) -> FrozenSet[str]:
        """Codes enabled for a file, after per-file ignores (``relpath`` uses ``/``)."""
        if not self.per_file_ignores:
            return self.enabled
        dropped: set = set()
        for spec, codes in _compiled(self.per_file_ignores):
            if spec.match_file(relpath):
                dropped |= codes
        return self.enabled - dropped

    #: Fields that do not change a file's findings, left out of :meth:`fingerprint`:
    #: ``code_scanned`` (unscanned, the engine applies the file's own Dynamo config, which a
    #: scan of the files linted would have put into the knobs and ``regions`` that the key
    #: holds; ``fix`` reads the entries ``check`` wrote this way) and ``code_knobs`` (where
    #: the knobs' values, also in the key, were set).
    NOT_IN_KEY = frozenset({"code_scanned", "code_knobs"})

    def fingerprint(self) -> str:
        """A stable hash of every setting (for the cache key): each field of this class but
        :attr:`NOT_IN_KEY`, so none is forgotten.

        Sets are sorted and nested dataclasses (the ``regions`` options) taken field by field,
        so the hash is the same in every process; it is the first 32 hex digits of a sha256
        of their JSON.
        """
        import dataclasses

        def plain(value: Any) -> Any:
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
            if isinstance(value, (set, frozenset)):
                return sorted((plain(v) for v in value), key=repr)
            if isinstance(value, (tuple, list)):
                return [plain(v) for v in value]
            if isinstance(value, dict):
                return {str(k): plain(v) for k, v in value.items()}
            return value

        payload = json.dumps(
            {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name not in self.NOT_IN_KEY},
            sort_keys=True, default=repr,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:32]
