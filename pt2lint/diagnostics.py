"""Findings and fixes: the data that flows from the engine to the front ends.

Everything here is plain, immutable data so it can cross process boundaries
(the worker pool pickles :class:`FileResult`) and be cached as JSON.
Reporters read these objects; they never look at rule internals.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

#: The project's repository; its ``docs/rules/`` folder holds a generated page per rule.
REPO_URL = "https://github.com/pt2lint/pt2lint"
#: Default of the ``docs-url`` setting: the rule's page in the repository's ``docs/rules/`` folder
#: (``tools/gen_docs.py`` writes ``docs/rules/<CODE>.md`` for every rule spec).
DEFAULT_DOCS_URL = REPO_URL + "/blob/main/docs/rules/{code}.md"
#: Kept for callers that format the default link themselves.
DOCS_URL = DEFAULT_DOCS_URL
#: Placeholders a ``docs-url`` template may use.
DOCS_URL_FIELDS = ("code", "name")


def check_docs_url(template: object) -> str:
    """Validate a ``docs-url`` template and return it.

    A template is an ``http://``, ``https://`` or ``file://`` URL containing ``{code}``
    (replaced by the rule code, ``PTC101``) and optionally ``{name}`` (the rule name,
    ``tensor-item``), each written alone, with no conversion or format spec (``{code!r}``,
    ``{code:>20}``); a literal brace is written ``{{`` or ``}}``.

    Raises:
        ValueError: not a string, another scheme, no ``{code}``, an unknown placeholder, a
            placeholder with a conversion or format spec, or an unbalanced brace (the
            message says which, without naming the setting).
    """
    import string

    if not isinstance(template, str):
        raise ValueError(f"must be a string, not {type(template).__name__}")
    if not template.startswith(("https://", "http://", "file://")):
        raise ValueError(f"must be an http(s):// or file:// URL, not {template!r}")
    try:
        parts = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ValueError(f"{template!r} is not a valid template: {exc}") from None
    fields = [f for f, _, _ in parts]
    unknown = [f for f in fields if f not in DOCS_URL_FIELDS]
    if unknown:
        raise ValueError(f"{template!r} has the unknown placeholder {{{unknown[0]}}} (use {{code}} and {{name}})")
    for f, spec, conv in parts:
        if spec or conv is not None:
            written = "{" + f + (f"!{conv}" if conv is not None else "") + (f":{spec}" if spec else "") + "}"
            raise ValueError(
                f"{template!r} has the placeholder {written}: a conversion or format spec is not allowed "
                "(write {code} or {name} alone)"
            )
    if "code" not in fields:
        raise ValueError(f"{template!r} must contain {{code}}, where the rule code goes")
    return template


def rule_url(code: str, template: Optional[str] = None, name: Optional[str] = None) -> str:
    """The documentation link of rule ``code``.

    Args:
        code: the rule code (``PTC101``).
        template: a ``docs-url`` template (see :func:`check_docs_url`); default :data:`DEFAULT_DOCS_URL`.
        name: the rule name for ``{name}``; looked up in the rule catalog when not given
            (a code outside the catalog uses the lower-cased code).
    """
    template = template or DEFAULT_DOCS_URL
    if name is None and "{name}" in template:
        from pt2lint.specs import load_specs

        spec = load_specs().get(code)
        name = spec.name if spec is not None else code.lower()
    return template.format(code=code, name=name or "")


@dataclass(frozen=True, order=True)
class Position:
    """A place in a source file.

    Attributes:
        line: 1-based line number.
        column: 1-based column, counted in characters (not bytes), as ruff does.
    """

    line: int
    column: int


class Applicability(str, enum.Enum):
    """How safe it is to apply a fix (the same three levels as ruff).

    ``safe`` fixes keep behaviour and are applied by default; ``unsafe`` fixes
    may change behaviour for some caller and need ``--unsafe-fixes``;
    ``display-only`` fixes are shown as a suggestion and never applied.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``start`` (inclusive) and ``end`` (exclusive) by ``content``."""

    start: Position
    end: Position
    content: str


@dataclass(frozen=True)
class Fix:
    """A fix for one finding: a message, its applicability and the text edits."""

    message: str
    applicability: Applicability
    edits: Tuple[Edit, ...]
    name: str = ""  # the codemod that produced it, e.g. "cond"


@dataclass(frozen=True)
class Diagnostic:
    """One finding.

    Attributes:
        code: rule code, e.g. ``"PTC101"``.
        name: rule name, e.g. ``"tensor-item"``.
        message: one-line message shown to the user.
        filename: the path as given on the command line (or ``--stdin-filename``).
        start, end: the flagged source range (1-based lines and columns; ``end`` exclusive).
        severity: ``"error"``, ``"warning"`` or ``"info"``.
        category: the rule's category (``"data-dependent"``, ``"dynamic-shape"``,
            ``"side-effect"``, ``"input-mutation"``, ``"recompile"``, ``"export"``,
            ``"sync"`` or ``"internal"``).
        gb_types: Dynamo graph-break registry ids the finding predicts (``"GB0124"``).
        symbol: the compiled function the finding sits in, e.g. ``"Model.forward"``.
        call_chain: how that function is reached from the compiled entry point,
            outermost first, e.g. ``("Model.forward", "Model._route")``; empty when
            the finding is in the entry point itself.
        fix: a fix, when one exists.
        statement_lines: first and last line of the enclosing statement, used by
            suppression comments that cover a whole statement.
        call_sites: where each function of ``call_chain`` but the innermost makes the
            call that leads here: ``(symbol, filename, line, column, first line, last
            line of the calling statement)``, outermost first; the first one lies in
            the file whose compiled region was analysed (the finding's anchor when the
            finding itself is in another file).  Empty when unknown or not a chain.
        confirm: what confirm mode (``--confirm``) measured for the finding;
            ``None`` in a static run.
    """

    code: str
    name: str
    message: str
    filename: str
    start: Position
    end: Position
    severity: str
    category: str
    gb_types: Tuple[str, ...] = ()
    symbol: Optional[str] = None
    call_chain: Tuple[str, ...] = ()
    fix: Optional[Fix] = None
    statement_lines: Optional[Tuple[int, int]] = None
    call_sites: Tuple[Tuple[str, str, int, int, int, int], ...] = field(default=(), compare=False)
    extra: Tuple[Tuple[str, Any], ...] = field(default=(), compare=False)
    confirm: Optional["Confirmation"] = field(default=None, compare=False)

    @property
    def url(self) -> str:
        """Link to the rule's documentation page under the default ``docs-url``.

        Reporters use :meth:`pt2lint.reporters.ReportContext.rule_url`, which honours the
        project's ``docs-url`` setting.
        """
        return rule_url(self.code, name=self.name)

    @property
    def is_graph_break(self) -> bool:
        """True for the categories that predict a Dynamo graph break (PTC1xx-PTC3xx)."""
        return self.category in GRAPH_BREAK_CATEGORIES

    @property
    def anchor(self) -> Optional[Tuple[str, int, int]]:
        """``(filename, line, column)`` of the call in the analysed file that leads to a finding in
        another file, or ``None`` when the finding is in the analysed file itself."""
        if self.call_sites and self.call_sites[0][1] != self.filename:
            s = self.call_sites[0]
            return (s[1], s[2], s[3])
        return None

    def sort_key(self) -> tuple:
        return (self.filename, self.start.line, self.start.column, self.code)


GRAPH_BREAK_CATEGORIES = frozenset({"data-dependent", "dynamic-shape", "side-effect"})

#: Confirm-mode statuses. A static finding is ``confirmed`` (Dynamo did what it
#: predicts at its line), ``not-reproduced`` (the line ran and compiled without it),
#: ``not-executed`` (the line never ran with the example inputs) or ``not-confirmed``
#: (its module could not be run, or confirm mode does not measure its category).
#: Findings only confirm mode produces are ``dynamic-only`` (PTC090) or ``failed`` (PTC091).
CONFIRM_STATUSES = ("confirmed", "not-reproduced", "not-executed", "not-confirmed", "dynamic-only", "failed")


def syntax_error(filename: str, message: str, start: Position, end: Optional[Position] = None) -> Diagnostic:
    """The ``PTC001`` finding for a file that cannot be parsed or compiled.

    Args:
        filename: the path as given.
        message: the whole message, e.g. ``"SyntaxError: invalid syntax"`` (CPython's
            wording where CPython rejects the file).
        start: where (1-based line and column).
        end: exclusive end; one column after ``start`` when ``None``.
    """
    return Diagnostic(
        code="PTC001",
        name="syntax-error",
        message=message,
        filename=filename,
        start=start,
        end=end if end is not None else Position(start.line, start.column + 1),
        severity="error",
        category="internal",
    )


@dataclass(frozen=True)
class Confirmation:
    """What confirm mode measured for one finding.

    Attributes:
        status: one of :data:`CONFIRM_STATUSES`.
        detail: one line: what Dynamo reported there, or why it could not tell.
        module: the module run it comes from, ``path::Class`` or ``path::factory()``.
        failure: that run's failure class (``graph-break``, ``runtime-crash``, ...;
            see ``pt2lint.confirm.outcome.FAILURE_CLASSES``), or ``None``.
        next_step: the next diagnostic to run (a shell command), or ``None``.
        evidence: measured facts as ``(key, value)`` pairs, e.g.
            ``(("line", 14), ("gb_type", "GB0170"), ("reason", "Data-dependent branching"))``.
    """

    status: str
    detail: str = ""
    module: Optional[str] = None
    failure: Optional[str] = None
    next_step: Optional[str] = None
    evidence: Tuple[Tuple[str, Any], ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict: ``status``, ``detail``, ``module``, ``failure``, ``next_step``, ``evidence`` (an object)."""
        return {
            "status": self.status,
            "detail": self.detail,
            "module": self.module,
            "failure": self.failure,
            "next_step": self.next_step,
            "evidence": {k: v for k, v in self.evidence},
        }


@dataclass(frozen=True)
class FileResult:
    """Everything the engine learned about one file.

    Attributes:
        filename: the path as it is reported.
        diagnostics: findings, sorted by position.
        error: a one-line message when the file could not be read or decoded
            (the file is then skipped, and the run exits 2); ``None`` otherwise.
        source: the decoded text, kept only when a front end asked for it (fixes, LSP).
        dependencies: ``(abs path, sha256 or None)`` of the other files the analysis
            read or looked for (the imports its compiled regions reach); the result
            holds only while they are unchanged.
        has_regions: the file has compiled regions of its own (an ``nn.Module``
            ``forward``, a ``torch.compile``d function).
        submodules: ``(abs path, class name)`` of the project classes its analysis saw
            built as submodules of another class.
        reached: ``(abs path, class name)`` of the module classes of other project files
            whose own ``forward`` its analysis followed from a compiled region.
        used_suppressions: ``(abs path, line, code as written)`` of the suppression
            comments in other files that suppressed a finding its compiled regions reach
            (``"*"``: a blanket one); such a comment is used in the run, whatever the
            analysis of its own file found.
    """

    filename: str
    diagnostics: Tuple[Diagnostic, ...] = ()
    error: Optional[str] = None
    source: Optional[str] = None
    dependencies: Tuple[Tuple[str, Optional[str]], ...] = ()
    has_regions: bool = False
    submodules: Tuple[Tuple[str, str], ...] = ()
    used_suppressions: Tuple[Tuple[str, int, str], ...] = ()
    reached: Tuple[Tuple[str, str], ...] = ()
