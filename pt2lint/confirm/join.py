"""Join what Dynamo did with what the static pass said.

Each static finding gets a :class:`~pt2lint.diagnostics.Confirmation`:

* graph-break rules (PTC1xx-PTC3xx): ``confirmed`` when a module run logged a
  graph break at the finding's line (its start line, or a line of its range);
* input mutation (PTC4xx): when the dispatch-mode probe saw a write into a
  forward input there;
* recompile hazards (PTC5xx): when a recompile's failed guard came from there;
* export rules (PTC6xx, ``--target export``): when ``torch.export.export``
  failed there;

otherwise ``not-reproduced`` when the line ran (eagerly, with the same inputs)
and the compiled run did not show it, ``not-executed`` when it never ran — the
line, or, where the recorded instructions can tell, the finding's expression
itself (``mask.any()`` in ``mask is not None and mask.any()``) — and
``not-confirmed`` when no module that could run it was measured.

What the static pass missed becomes a ``PTC090`` (dynamic-only) finding: a graph
break at a line with no graph-break finding, a recompile whose guard is not
about tensor metadata and not at a flagged line, an export failure at a line
with no finding. A module that could not be measured (import error, crash,
timeout, no example inputs, compiler failure, accuracy mismatch, recompile
limit) becomes a ``PTC091`` (confirm-failed) finding with the next diagnostic to run.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from pt2lint.confirm import outcome as oc
from pt2lint.confirm.coverage import byte_column, code_spans, expression_ran
from pt2lint.confirm.plan import Job
from pt2lint.confirm.runner import JobOutcome
from pt2lint.confirm.settings import ConfirmSettings
from pt2lint.diagnostics import Confirmation, Diagnostic, Position

DYNAMIC_ONLY = "PTC090"
CONFIRM_FAILED = "PTC091"

_ERROR_CLASSES = frozenset(
    {oc.IMPORT_ERROR, oc.TIMEOUT, oc.RUNTIME_CRASH, oc.DYNAMO_INTERNAL_ERROR, oc.BACKEND_COMPILER_FAILURE, oc.ACCURACY_MISMATCH}
)


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


@dataclass
class ModuleReport:
    """One module run, summarised.

    Attributes:
        job: the job.
        label: ``path::Class`` / ``path::factory()``, with the built class when the factory named none.
        failure: failure class, or None (compiled in one graph); ``skipped`` runs have none.
        detail: one line.
        next_step: the next diagnostic to run.
        location: ``(absolute filename, line)`` the failure points at.
        result: the child's result (None when it died first).
        seconds: wall time of the run.
        skipped: why the job measured nothing on purpose (not an ``nn.Module``), or None.
    """

    job: Job
    label: str
    failure: Optional[str]
    detail: str
    next_step: Optional[str]
    location: Tuple[str, int]
    result: Optional[Dict[str, Any]]
    seconds: float = 0.0
    skipped: Optional[str] = None

    @property
    def ran_eager(self) -> bool:
        """The eager call finished, so its executed lines are known."""
        return bool(self.result and self.result.get("eager_ok"))

    @property
    def failed_importing(self) -> bool:
        """The file itself could not be imported (so every module of it fails the same way)."""
        if self.result is None:
            return self.failure in (oc.IMPORT_ERROR, oc.TIMEOUT) and "while importing the file" in self.detail
        return self.result.get("failed_stage") == "import"

    @property
    def compiled(self) -> bool:
        """The first compiled call finished, so its graph breaks are complete."""
        return bool(self.result and self.result.get("compiled"))


def repro_for(job: Job) -> oc.Repro:
    """How to rerun ``job`` by hand."""
    return oc.Repro(
        target=job.target_spec,
        factory=job.factory,
        inputs=job.inputs,
        device=job.device,
        backend=job.backend,
        target_kind=job.target,
    )


def _module_path(relpath: str) -> str:
    """``models.net`` for ``models/net.py`` when every part is an identifier, else the path itself."""
    stem = relpath[:-3] if relpath.endswith(".py") else relpath
    parts = stem.split("/")
    if all(p.isidentifier() for p in parts):
        return ".".join(parts)
    return relpath


def config_snippet(job: Job, class_name: Optional[str]) -> str:
    """The ``[tool.pt2lint.confirm]`` entry that gives ``class_name`` a factory and inputs (one line)."""
    cls = class_name or job.class_name or "ClassName"
    mod = _module_path(job.relpath)
    sep = ":"
    factory = f"{mod}{sep}{job.factory}" if job.factory and ":" not in job.factory else (job.factory or f"{mod}{sep}{cls}")
    return f'"{job.relpath}::{cls}" = {{ factory = "{factory}", inputs = "{mod}{sep}example_inputs" }}'


def summarize(out: JobOutcome) -> ModuleReport:
    """Classify one finished job (the child's own classification, or how it died)."""
    job = out.job
    result = out.result
    repro = repro_for(job)
    is_user = oc.user_code_filter()
    anchor = (job.path, job.anchor_line)
    label = job.label
    if result is not None and result.get("model_class") and not job.class_name:
        label = f"{job.label} -> {result['model_class']}"
    stage = (out.stage or (result or {}).get("stage") or "start").replace("done", "end")

    if result is not None and result.get("skipped"):
        why = result["skipped"]
        step = None
        if result.get("needs_arguments"):
            step = f"add to [tool.pt2lint.confirm] in pyproject.toml: {config_snippet(job, job.class_name)}"
        return ModuleReport(job, label, None, why, step, anchor, result, out.seconds, skipped=why)

    if result is None:
        frames = oc.crash_frames(out.log)
        frame = oc.innermost_user_frame(frames, is_user)
        where = f" at {os.path.basename(frame[0])}:{frame[1]} in {frame[2]}" if frame else ""
        location = (os.path.abspath(frame[0]), frame[1]) if frame else anchor
        during = "while importing the file" if stage == "import" else f"during stage '{stage}'"
        if out.timed_out:
            failure = oc.TIMEOUT
            detail = f"no result within {job.timeout:g}s {during}{where} (the process was killed)"
        else:
            fatal = oc.fatal_error(out.log)
            failure = oc.IMPORT_ERROR if stage == "import" else oc.RUNTIME_CRASH
            detail = f"the process {oc.describe_exit(out.exitcode)} {during}{where}"
            if fatal:
                detail += f" ({fatal})"
            elif out.exitcode == -9:
                detail += " (out of memory? the kernel's OOM killer sends SIGKILL)"
        cuda = oc.is_cuda_error(out.log)
        return ModuleReport(job, label, failure, detail, oc.next_step(failure, repro, cuda_error=cuda), location, None, out.seconds)

    failure = result.get("failure")
    detail = result.get("detail") or ""
    error = result.get("error") or {}
    location = anchor
    if error.get("filename") and error.get("lineno"):
        location = (error["filename"], int(error["lineno"]))
    elif result.get("class_file") and result.get("class_line") and failure not in (oc.IMPORT_ERROR,):
        location = (result["class_file"], int(result["class_line"]))
    if failure == oc.RECOMPILE_LIMIT:
        hazards = [r for r in result.get("recompiles", []) if not r.get("tensor_only") and r.get("filename")]
        if hazards:
            location = (hazards[-1]["filename"], int(hazards[-1]["lineno"]))
    if failure == oc.NO_INPUTS:
        snippet = config_snippet(job, result.get("model_class") or job.class_name)
        detail = f"{detail}; add to [tool.pt2lint.confirm]: {snippet}"
        next_step = f"add to [tool.pt2lint.confirm] in pyproject.toml: {snippet}"
    else:
        text = (error.get("traceback") or "") + detail
        next_step = oc.next_step(failure, repro, cuda_error=oc.is_cuda_error(text))
    if failure == oc.RUNTIME_CRASH and oc.is_out_of_memory((error.get("traceback") or "") + detail):
        detail += " (out of memory)"
    return ModuleReport(job, label, failure, detail, next_step, location, result, out.seconds)


# ---------------------------------------------------------------------------
# facts gathered over all runs


@dataclass
class _Fact:
    kind: str  # "break", "mutation", "recompile", "export"
    filename: str  # absolute
    line: int
    text: str
    report: ModuleReport
    evidence: Tuple[Tuple[str, Any], ...] = ()
    used: bool = False


@dataclass
class Facts:
    """Everything measured, indexed by ``(real path, line)``."""

    by_line: Dict[Tuple[str, int], List[_Fact]] = field(default_factory=dict)
    executed: Dict[str, Set[int]] = field(default_factory=dict)
    compiled_lines: Dict[str, Set[int]] = field(default_factory=dict)
    files_run: Set[str] = field(default_factory=set)
    files_compiled: Set[str] = field(default_factory=set)
    mutation_files: Set[str] = field(default_factory=set)
    export_runs: List[ModuleReport] = field(default_factory=list)
    reports_by_file: Dict[str, List[ModuleReport]] = field(default_factory=dict)
    other_shard_files: Set[str] = field(default_factory=set)
    spans: Dict[str, Set[Tuple[int, int, int, int]]] = field(default_factory=dict)
    compiled_spans: Dict[str, Tuple[Optional[Set[Tuple[int, int, int, int]]], List[str]]] = field(default_factory=dict)
    #: per module file: the recompiles on new batch sizes after the first one (a graph per
    #: size) that no user line could be named for, with the report that measured them
    size_hazards: Dict[str, List[Tuple[str, ModuleReport]]] = field(default_factory=dict)

    def add(self, fact: _Fact) -> None:
        """Index one fact."""
        self.by_line.setdefault((_real(fact.filename), fact.line), []).append(fact)

    def at(self, real: str, lines: Iterable[int], kinds: Iterable[str]) -> List[_Fact]:
        """Facts of ``kinds`` at any of ``lines`` of the file ``real``."""
        wanted = set(kinds)
        return [f for ln in lines for f in self.by_line.get((real, ln), []) if f.kind in wanted]


#: The name Dynamo gives the resume function after a graph break (``torch_dynamo_resume_in_forward_at_12``),
#: with the file it was compiled from: where a break inside a resumed frame really is.
RESUME_RE = re.compile(r"^torch_dynamo_resume_in_\w+?_at_(?P<line>\d+) \((?P<file>.+):\d+\)")


def _break_location(gb: Mapping[str, Any], is_user: Callable[[str], bool]) -> Tuple[str, int]:
    """Where to report a break: Dynamo's user frame, or, when that is in the standard
    library (``ctypes``, ``logging``), the innermost frame of the user's own code."""
    if is_user(gb["filename"]):
        return gb["filename"], int(gb["lineno"])
    for filename, lineno, _func in reversed(gb.get("user_stack") or []):
        if is_user(filename):
            return filename, int(lineno)
    return gb["filename"], int(gb["lineno"])


def gather(reports: Sequence[ModuleReport]) -> Facts:
    """Index the graph breaks, mutations, recompiles, export failures and executed lines of every run.

    Recompiles count when they happened on the second call (new values, same
    shapes: they would happen on every step), a guard other than tensor
    metadata failed and the child did not see it stop there (``repeats``: a cache
    filled once fails its guard on call 2 and never again), or on a new batch size after the first new one (automatic
    dynamic shapes had made the size symbolic: something specialised it again).
    A size recompile Dynamo names no user line for is kept per module file
    (``size_hazards``). A recompile of a resume function
    (``torch_dynamo_resume_in_forward_at_13``) is filed under the graph break it
    resumes from (line 13), as its consequence.
    """
    facts = Facts()
    is_user = oc.user_code_filter()
    for rep in reports:
        facts.reports_by_file.setdefault(_real(rep.job.path), []).append(rep)
        res = rep.result
        if not res:
            continue
        if rep.ran_eager:
            for filename, lines in (res.get("executed") or {}).items():
                real = _real(filename)
                facts.executed.setdefault(real, set()).update(lines)
                facts.files_run.add(real)
                if rep.compiled:
                    facts.compiled_lines.setdefault(real, set()).update(lines)
                    facts.files_compiled.add(real)
                if res.get("mutations_ok"):
                    facts.mutation_files.add(real)
            for filename, spans in (res.get("executed_spans") or {}).items():
                facts.spans.setdefault(_real(filename), set()).update(tuple(sp) for sp in spans)
            facts.files_run.add(_real(rep.job.path))
            if rep.compiled:
                facts.files_compiled.add(_real(rep.job.path))
        for gb in res.get("graph_breaks") or []:
            filename, line = _break_location(gb, is_user)
            ev = (("line", line), ("gb_type", gb.get("gb_type")), ("reason", gb.get("reason")), ("call", gb.get("call", 0) + 1))
            if filename != gb["filename"]:
                ev += (("dynamo_frame", f"{gb['filename']}:{gb['lineno']}"),)
            text = f"{gb.get('reason')} ({gb.get('gb_type') or 'no GB id'})"
            facts.add(_Fact("break", filename, line, text, rep, ev))
        for m in res.get("mutations") or []:
            ev = (("line", m["lineno"]), ("op", m["op"]), ("argument", m["argument"]))
            facts.add(_Fact("mutation", m["filename"], int(m["lineno"]), f"{m['op']} writes into input `{m['argument']}`", rep, ev))
        graphs = res.get("graphs") or []
        for r in res.get("recompiles") or []:
            size_hazard = bool(r.get("size_hazard"))
            if not size_hazard and (r.get("tensor_only") or r.get("call") not in (1, None) or r.get("repeats") is False):
                continue  # a shape change, a later call, or a cache filled once on call 2
            if size_hazard and not r.get("filename"):
                facts.size_hazards.setdefault(_real(rep.job.path), []).append((r["reason"], rep))
                continue
            resumed = RESUME_RE.match(r["reason"])
            if resumed:
                line = int(resumed.group("line"))
                ev = (("line", line), ("reason", r["reason"]))
                facts.add(_Fact("recompile-after-break", resumed.group("file"), line, r["reason"], rep, ev))
                continue
            if not r.get("filename") or not r.get("lineno"):
                continue
            ev = (("line", r["lineno"]), ("reason", r["reason"]), ("call", (r.get("call") or 0) + 1), ("graphs", list(graphs)))
            facts.add(_Fact("recompile", r["filename"], int(r["lineno"]), f"recompiled: {r['reason']}", rep, ev))
        exp = res.get("export")
        if exp is not None:
            facts.export_runs.append(rep)
            if not exp.get("ok") and exp.get("filename") and exp.get("lineno"):
                ev = (("line", exp["lineno"]), ("export_error", exp["message"]))
                facts.add(_Fact("export", exp["filename"], int(exp["lineno"]), f"torch.export.export: {exp['message']}", rep, ev))
    return facts


# ---------------------------------------------------------------------------
# the join


_FACT_FAILURE = {
    "break": oc.GRAPH_BREAK,
    "recompile": oc.RECOMPILE_LIMIT,
    "recompile-after-break": oc.RECOMPILE_LIMIT,
    "export": oc.EXPORT_FAILURE,
}


def _fact_next_step(fact: _Fact) -> Optional[str]:
    """The next diagnostic for one measured fact: the graph-break log for a break, the recompile log for a recompile."""
    failure = _FACT_FAILURE.get(fact.kind)
    if failure is None:
        return None
    return oc.next_step(failure, repro_for(fact.report.job))


def lines_of(d: Diagnostic) -> List[int]:
    """The finding's own line first, then the rest of its range and statement."""
    lines = [d.start.line]
    lines += [ln for ln in range(d.start.line + 1, d.end.line + 1)]
    if d.statement_lines:
        first, last = d.statement_lines
        lines += [ln for ln in range(first, last + 1) if ln not in lines]
    return lines


#: Recompile rules whose hazard is a graph per distinct input size: confirmed by the count of
#: graphs growing with new batch sizes even when Dynamo's guard names no user line
#: (``tensor 'x' size mismatch``, the guard of a size Dynamo specialised).
SIZE_RULES = frozenset({"PTC504", "PTC505"})

#: What Dynamo does that confirms a finding of each rule category (``break``, ``mutation``, ...).
KIND_OF_CATEGORY = {
    "data-dependent": "break",
    "dynamic-shape": "break",
    "side-effect": "break",
    "input-mutation": "mutation",
    "recompile": "recompile",
    "export": "export",
}


def _kind_of(d: Diagnostic) -> Optional[str]:
    """What confirm mode measures for ``d``: a ``break``, ``mutation``, ``recompile``, ``export``, or None."""
    if d.category == "amp-distributed":
        return "break" if oc.finding_failure(d.category, d.gb_types) == oc.GRAPH_BREAK else None
    return KIND_OF_CATEGORY.get(d.category)


def _facts_for(d: Diagnostic, real: str, facts: Facts, target: str) -> List[_Fact]:
    kind = _kind_of(d)
    kinds = {kind} if kind else set()
    if target == "export" and kind is not None:
        kinds.add("export")  # under --target export, an export failure at the line confirms any rule
    exact = facts.at(real, [d.start.line], kinds)
    return exact or facts.at(real, lines_of(d)[1:], kinds)


def _not_confirmed_reason(real: str, facts: Facts) -> Tuple[str, Optional[ModuleReport]]:
    reps = facts.reports_by_file.get(real, [])
    if not reps and real in facts.other_shard_files:
        return "its modules are confirmed in another shard (--shard)", None
    failed = [r for r in reps if r.failure in oc.NOT_RUN_CLASSES or (r.result is None and not r.skipped)]
    if failed:
        worst = min(failed, key=lambda r: oc.failure_rank(r.failure))
        return f"its module was not measured: {oc.FAILURE_TITLES.get(worst.failure or '', worst.failure)}: {worst.detail}", worst
    if reps and all(r.skipped for r in reps):
        return f"its module was skipped: {reps[0].skipped}", None
    if reps:
        worst = min(reps, key=lambda r: oc.failure_rank(r.failure))
        return f"the compiled run of its module failed: {worst.detail}", worst
    return "no module that runs this line was confirmed (give the file a factory, or confirm the file that uses it)", None


_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")


def expression_executed(d: Diagnostic, real: str, facts: Facts) -> Optional[bool]:
    """Whether the expression a finding points at ran, from the instructions recorded eagerly.

    Compiles the file (nothing runs) to know every instruction's span, converts the
    finding's character columns to UTF-8 byte columns, and asks
    :func:`pt2lint.confirm.coverage.expression_ran`. None when undecided (no
    instruction spans were recorded, the file cannot be read or compiled).
    """
    executed = facts.spans.get(real)
    if not executed:
        return None
    if real not in facts.compiled_spans:
        try:
            from pt2lint.engine import read_source

            source = read_source(real)
        except Exception:  # unreadable or undecodable: undecided
            facts.compiled_spans[real] = (None, [])
        else:
            facts.compiled_spans[real] = (code_spans(source, real), _LINE_BREAK_RE.split(source))
    compiled, text_lines = facts.compiled_spans[real]
    if compiled is None:
        return None

    def text(line: int) -> str:
        return text_lines[line - 1] if 1 <= line <= len(text_lines) else ""

    end = d.end if (d.end.line, d.end.column) > (d.start.line, d.start.column) else Position(d.start.line, d.start.column + 1)
    target = (d.start.line, byte_column(text(d.start.line), d.start.column), end.line, byte_column(text(end.line), end.column))
    return expression_ran(target, compiled, executed)


def confirm_static(d: Diagnostic, facts: Facts, target: str, earlier_breaks: Mapping[Tuple[str, Optional[str]], List[int]]) -> Optional[Confirmation]:
    """The confirmation of one static finding (None for internal findings such as PTC002)."""
    if d.category == "internal":
        return None
    real = _real(d.filename)
    kind = _kind_of(d)
    if kind is None:
        return Confirmation("not-confirmed", f"confirm mode does not measure {d.category} findings")
    if kind == "export" and target != "export":
        return Confirmation("not-confirmed", "export rules are confirmed with --target export")
    matched = _facts_for(d, real, facts, target)
    if matched:
        for f in matched:
            f.used = True
        first = matched[0]
        rep = first.report
        where = "" if first.line == d.start.line else f" (at line {first.line})"
        evidence = first.evidence
        if kind == "break":
            ids = tuple(dict.fromkeys(dict(f.evidence).get("gb_type") for f in matched if f.kind == "break"))
            evidence += (("gb_types", [i for i in ids if i]),)
        after = facts.at(real, [first.line], ["recompile-after-break"])
        if kind == "break" and after:
            for f in after:
                f.used = True
            evidence += (("recompiles_after_break", after[0].text),)
        return Confirmation(
            "confirmed",
            f"{first.text}{where}",
            module=rep.label,
            failure=rep.failure,
            next_step=_fact_next_step(first),
            evidence=evidence,
        )
    lines = lines_of(d)
    ran = facts.executed.get(real, set())
    if any(ln in ran for ln in lines) and expression_executed(d, real, facts) is False:
        return Confirmation(
            "not-executed",
            "the line ran, but this expression never did with the example inputs "
            "(a short-circuit `and`/`or`, or a branch of a conditional not taken)",
        )
    if kind == "recompile" and d.code in SIZE_RULES and any(ln in facts.compiled_lines.get(real, set()) for ln in lines):
        hazards = []
        for measured in facts.size_hazards.values():
            for reason, rep in measured:
                executed = (rep.result or {}).get("executed") or {}
                ran_here = {ln for f, ls in executed.items() if _real(f) == real for ln in ls}
                if rep.compiled and any(ln in ran_here for ln in lines):
                    hazards.append((reason, rep))
        if hazards:
            reason, rep = hazards[0]
            graphs = (rep.result or {}).get("graphs") or []
            return Confirmation(
                "confirmed",
                f"a new graph for each new batch size: {graphs[-1] if graphs else '?'} graphs over {len(graphs)} calls; "
                f"recompiled: {reason}",
                module=rep.label,
                failure=rep.failure,
                next_step=oc.next_step(oc.RECOMPILE, repro_for(rep.job)),
                evidence=(("reason", reason), ("graphs", list(graphs))),
            )
    needs_compile = kind in ("break", "recompile")
    if kind == "mutation":
        measured = real in facts.mutation_files
    elif kind == "export":
        measured = bool(facts.export_runs) and real in facts.files_run
    else:
        measured = real in facts.files_compiled
    if any(ln in ran for ln in lines):
        if not measured:
            reason, rep = _not_confirmed_reason(real, facts)
            return Confirmation("not-confirmed", reason, module=rep.label if rep else None, failure=rep.failure if rep else None,
                                next_step=rep.next_step if rep else None)
        compiled_ran = facts.compiled_lines.get(real, set())
        if needs_compile and not any(ln in compiled_ran for ln in lines):
            reason, rep = _not_confirmed_reason(real, facts)
            return Confirmation("not-confirmed", reason, module=rep.label if rep else None, failure=rep.failure if rep else None)
        detail = {
            "break": "the line ran and Dynamo compiled it without a graph break",
            "mutation": "the line ran and wrote into no forward input",
            "recompile": "the line ran and caused no recompile over the calls made",
            "export": "the line ran and torch.export.export did not fail there",
        }[kind]
        earlier = [ln for ln in earlier_breaks.get((real, d.symbol), []) if ln < d.start.line]
        if kind == "recompile":
            counted = [r.result.get("graphs") for r in facts.reports_by_file.get(real, []) if r.result and r.result.get("graphs")]
            if counted:
                detail += f" ({counted[0][-1]} graph(s) over {len(counted[0])} calls with varying inputs)"
        if kind == "break" and earlier:
            detail += f" (Dynamo may have run the rest of {d.symbol} eagerly after the break at line {earlier[-1]}: fix that one and confirm again)"
        if kind == "export":
            failed = [r for r in facts.export_runs if r.result and not r.result["export"]["ok"]]
            if failed:
                msg = failed[0].result["export"]["message"]
                return Confirmation("not-confirmed", f"torch.export.export stopped earlier: {msg}", module=failed[0].label)
        return Confirmation("not-reproduced", detail)
    if real in facts.files_run:
        return Confirmation("not-executed", "the line never ran with the example inputs")
    reason, rep = _not_confirmed_reason(real, facts)
    return Confirmation("not-confirmed", reason, module=rep.label if rep else None, failure=rep.failure if rep else None,
                        next_step=rep.next_step if rep else None)


@dataclass
class JoinResult:
    """The diagnostics after the join, and the per-module summary.

    Attributes:
        diagnostics: static findings with ``confirm`` set, plus PTC090/PTC091 findings.
        modules: one report per job that was not skipped.
        counts: ``{status: number of findings}``.
        skipped: the jobs that measured nothing on purpose (not an ``nn.Module``,
            a constructor that needs arguments).
    """

    diagnostics: List[Diagnostic]
    modules: List[ModuleReport]
    counts: Dict[str, int]
    skipped: List[ModuleReport] = field(default_factory=list)


def _display(filename: str, displays: Mapping[str, str], cwd: str) -> str:
    real = _real(filename)
    if real in displays:
        return displays[real]
    rel = os.path.relpath(filename, cwd)
    return filename if rel.startswith("..") else rel


def _line_text(filename: str, line: int, cache: Dict[str, List[str]]) -> str:
    if filename not in cache:
        try:
            from pt2lint.lines import SourceLines
            from pt2lint.reading import read_bytes

            # bounded and non-blocking, as every read of a user file (pt2lint.reading)
            text = read_bytes(filename).decode("utf-8", errors="replace")
            cache[filename] = SourceLines(text).texts()  # numbered as Python numbers lines
        except OSError:
            cache[filename] = []
    lines = cache[filename]
    return lines[line - 1] if 1 <= line <= len(lines) else ""


_SUPPRESS_RE = re.compile(r"#\s*(?:noqa(?::\s*(?P<noqa>[A-Za-z0-9_,\s-]+))?|pt2lint:\s*ignore(?:\[(?P<ign>[^\]]*)\])?)", re.I)


def _suppressed(code: str, filename: str, line: int, cache: Dict[str, List[str]], also: FrozenSet[str]) -> bool:
    """A ``# noqa`` / ``# pt2lint: ignore`` on the line (or alone on the line above) names ``code``, one of ``also``, or no code."""
    for ln, own_only in ((line, False), (line - 1, True)):
        text = _line_text(filename, ln, cache)
        if "#" not in text:
            continue
        if own_only and not text.lstrip().startswith("#"):
            continue
        for m in _SUPPRESS_RE.finditer(text):
            listed = m.group("noqa") if m.group("noqa") is not None else m.group("ign")
            if listed is None or not listed.strip():
                return True
            codes = {c.strip().upper() for c in re.split(r"[\s,]+", listed) if c.strip()}
            if code in codes or codes & also:
                return True
    return False


def join(
    diagnostics: Sequence[Diagnostic],
    outcomes: Sequence[JobOutcome],
    settings: ConfirmSettings,
    *,
    displays: Mapping[str, str],
    enabled_for: Callable[[str], FrozenSet[str]],
    graph_break_codes: FrozenSet[str] = frozenset(),
    cwd: Optional[str] = None,
    other_shards: Sequence[str] = (),
) -> JoinResult:
    """Give every static finding its confirmation and add the dynamic-only and confirm-failed findings.

    Args:
        diagnostics: the static findings.
        outcomes: the finished jobs.
        settings: confirm settings (target).
        displays: real path -> the path as reported, for the linted files.
        enabled_for: display path -> enabled codes (selection and per-file ignores).
        graph_break_codes: codes of graph-break rules; a ``# noqa`` naming one also
            silences a PTC090 break on that line.
        cwd: directory relative paths are shown from (default: the working directory).
        other_shards: files of the modules that ``--shard`` left to other shards.

    Returns:
        A :class:`JoinResult`; diagnostics are sorted.
    """
    cwd = cwd or os.getcwd()
    reports = [summarize(o) for o in outcomes]
    facts = gather(reports)
    facts.other_shard_files = {_real(p) for p in other_shards}
    earlier: Dict[Tuple[str, Optional[str]], List[int]] = {}
    static_lines: Dict[Tuple[str, int], List[Diagnostic]] = {}
    for d in diagnostics:
        for ln in lines_of(d):
            static_lines.setdefault((_real(d.filename), ln), []).append(d)
    for (real, ln), found in facts.by_line.items():
        for f in found:
            if f.kind == "break":
                for d in static_lines.get((real, ln), []):
                    earlier.setdefault((real, d.symbol), []).append(ln)
    for key in earlier:
        earlier[key].sort()

    out: List[Diagnostic] = []
    for d in diagnostics:
        conf = confirm_static(d, facts, settings.target, earlier)
        out.append(dataclasses.replace(d, confirm=conf) if conf is not None else d)

    cache: Dict[str, List[str]] = {}
    seen: Set[Tuple[str, int, str]] = set()
    for (real, ln), found in sorted(facts.by_line.items()):
        for f in found:
            if f.used:
                continue
            key = (real, ln, f.kind + f.text)
            if key in seen:
                continue
            seen.add(key)
            if f.kind == "recompile-after-break":
                continue  # a consequence of the break at this line, reported with it
            if settings.target == "export" and f.kind in ("break", "recompile"):
                continue  # torch.export does not care; the module summary still counts them
            if f.kind == "recompile" and any(g.kind == "break" for g in found):
                continue  # a value guard left by a graph break at the same line
            if f.kind == "recompile" and (real, ln) in static_lines:
                continue
            display = _display(f.filename, displays, cwd)
            if DYNAMIC_ONLY not in enabled_for(display):
                continue
            if _suppressed(DYNAMIC_ONLY, f.filename, ln, cache, graph_break_codes if f.kind == "break" else frozenset()):
                continue
            text = _line_text(f.filename, ln, cache)
            col = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
            end = Position(ln, len(text.rstrip()) + 1 if text.strip() else 2)
            message, severity, gb = {
                "break": (f"graph break the static pass missed: {f.text}", "error", dict(f.evidence).get("gb_type")),
                "recompile": (f"recompiles on a later call (not flagged statically): {f.text[len('recompiled: '):]}", "warning", None),
                "export": (f"torch.export.export fails here (not flagged statically): {f.text[len('torch.export.export: '):]}", "error", None),
                "mutation": (f"input mutation the static pass missed: {f.text}", "warning", None),
            }[f.kind]
            out.append(
                Diagnostic(
                    code=DYNAMIC_ONLY,
                    name="dynamic-only",
                    message=message,
                    filename=display,
                    start=Position(ln, col),
                    end=end,
                    severity=severity,
                    category="internal",
                    gb_types=(gb,) if gb else (),
                    confirm=Confirmation(
                        "dynamic-only",
                        f.text,
                        module=f.report.label,
                        failure=f.report.failure,
                        next_step=_fact_next_step(f),
                        evidence=f.evidence,
                    ),
                )
            )

    modules = [r for r in reports if not r.skipped]
    reported: Set[Tuple[Any, ...]] = set()
    for rep in modules:
        if rep.failure is None or rep.failure in (oc.GRAPH_BREAK, oc.EXPORT_FAILURE, oc.RECOMPILE):
            continue  # reported through the findings they confirm
        filename, line = rep.location
        display = _display(filename, displays, cwd)
        if CONFIRM_FAILED not in enabled_for(display):
            continue
        if _suppressed(CONFIRM_FAILED, filename, line, cache, frozenset()):
            continue
        text = _line_text(filename, line, cache)
        col = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
        title = oc.FAILURE_TITLES.get(rep.failure, rep.failure)
        prefix = "not confirmed: " if rep.failure == oc.NO_INPUTS else ""
        # A file that fails to import fails the same way for each of its modules: report it once.
        who = rep.job.display if rep.failed_importing else rep.label
        key = (display, line, rep.failure, who, rep.detail)
        if key in reported:
            continue
        reported.add(key)
        out.append(
            Diagnostic(
                code=CONFIRM_FAILED,
                name="confirm-failed",
                message=f"{prefix}{title} in {who}: {rep.detail}",
                filename=display,
                start=Position(line, col),
                end=Position(line, max(col + 1, len(text.rstrip()) + 1)),
                severity="error" if rep.failure in _ERROR_CLASSES else "warning",
                category="internal",
                confirm=Confirmation("failed", rep.detail, module=rep.label, failure=rep.failure, next_step=rep.next_step),
            )
        )
    out.sort(key=Diagnostic.sort_key)
    counts: Dict[str, int] = {}
    for d in out:
        if d.confirm is not None:
            counts[d.confirm.status] = counts.get(d.confirm.status, 0) + 1
    return JoinResult(out, modules, counts, [r for r in reports if r.skipped])


__all__ = [
    "CONFIRM_FAILED", "DYNAMIC_ONLY", "KIND_OF_CATEGORY", "RESUME_RE", "Facts", "JoinResult", "ModuleReport",
    "config_snippet", "gather", "join", "lines_of", "summarize",
]
