"""``pt2lint fix --verify``: prove each rewritten function by running it against the original.

A fix is applied unverified only by a plain ``fix``; with ``--verify`` every
function a codemod rewrote (a *unit*: a module-level function or a method, the
helpers a codemod nests inside it included) is checked in a child process with
torch, and only the units that pass are written.

Parent side (no torch, no user code):

* :func:`rewritten_units` compares the original and the fixed text function by
  function and, for each changed unit, makes a text that holds the fix of that
  unit alone (the other units reverted), so that a wrong rewrite is blamed on
  its own function and not on a neighbour;
* :func:`plan_verify_jobs` plans one job per model the confirm machinery can
  build from the file (the ``make_model`` / ``example_inputs`` defaults, the
  per-class ``[tool.pt2lint.confirm]`` entries, ``Class()``) — the same jobs
  ``pt2lint confirm`` runs, carrying the units;
* the jobs run through :func:`pt2lint.confirm.runner.run_jobs` (isolated child
  processes, timeouts, a subreaper for what they leave behind);
* :func:`verdicts` merges what the children measured into one
  :class:`Verdict` per unit, and :func:`keep_verified` reverts every unit that
  did not pass.

Child side (:func:`run_verify_job`): import the original file, and, for each
unit, its fixed text as a second module object with the same name and package
(so relative imports resolve) executed from a temporary copy; build the model
once (seed 0), deep-copy it and switch the copies' instances of the file's
classes to the fixed classes, so both run with the same weights and buffers.
The inputs are the configured example inputs (or the ones confirm
synthesises) and deterministic perturbations of them (:data:`VARIANTS`:
negated, zeros, ones, scaled, shifted, fresh random values, inverted masks; then, while a
branch is still not taken, one NaN or +inf element, integers plus 100 and negated, and
the example inputs with the model's floating parameters zeroed or negated, in both the
original and the fixed copy).
While the original runs, ``sys.settrace`` line events on the rewritten ``if``
statements record which branch it took. For every input, outputs (every tensor
leaf, ``torch.testing.assert_close`` with its dtype-based tolerances), the
gradients of the parameters after ``backward`` of a fixed random projection of
the outputs (``None`` and zeros reported distinctly), the buffers after the
call (running statistics), the input tensors (in-place writes), the modules'
Python attributes, the file's module globals (a counter or registry a call
updates; :func:`global_state_snapshot`) and raised exceptions (type) must agree. Finally the
fixed module is compiled (:func:`pt2lint.confirm.dynamo.graph_breaks`): a graph
break left on a line the fix wrote, or a compile error the original does not
have, rejects the fix (a break elsewhere in the function, at a finding the fix
did not touch, does not).

A unit is *verified* when it passed on every input, was reached by the
original and by the fixed code, and every rewritten ``if`` took both branches;
*rejected* when any check failed (with the evidence: which input, which
tensor, the max abs difference, or the exception); *unverifiable* otherwise
(no model factory, inputs that cannot be built, a branch never taken, ...).
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from pt2lint.confirm.plan import Job

VERIFIED = "verified"
REJECTED = "rejected"
UNVERIFIABLE = "unverifiable"
STATUSES = (VERIFIED, REJECTED, UNVERIFIABLE)

#: Evidence lines kept per unit (the first ones found, in input order).
MAX_EVIDENCE = 5
#: Inputs run at least before stopping early (when every rewritten branch was taken both ways).
MIN_VARIANTS = 3

#: How ``--verify`` says torch is missing (the ``confirm`` extra only requires torch; the
#: hint is confirm mode's, which names the CPU index and where the CUDA builds are listed).
NO_TORCH = (
    "--verify runs the original and the fixed code under torch, which is not installed "
    "(it is pt2lint's `confirm` extra): "
)


class VerifyUnavailable(Exception):
    """``--verify`` cannot run here (torch is not installed); the message says what to install."""


def torch_available() -> bool:
    """Whether ``import torch`` would find a module (checked without importing it)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def require_torch() -> None:
    """Raise :class:`VerifyUnavailable` (message: :data:`NO_TORCH` and how to install torch) when torch is not installed."""
    if not torch_available():
        from pt2lint.commands.confirm import TORCH_INSTALL_HINT

        raise VerifyUnavailable(NO_TORCH + TORCH_INSTALL_HINT)


# ---------------------------------------------------------------------------
# units: the functions a fix rewrote


def unit_of_symbol(symbol: Optional[str]) -> Optional[str]:
    """The unit a finding's ``symbol`` belongs to: ``"Net.forward.<locals>.inner"`` -> ``"Net.forward"``."""
    if not symbol:
        return None
    return symbol.split(".<locals>.", 1)[0]


def function_units(text: str) -> Dict[str, Tuple[int, int]]:
    """``{qualname: (first line, last line)}`` of the module-level functions and the methods
    (of classes at any class nesting) of ``text``; decorators included, nested functions are
    part of their enclosing unit.  A name defined twice keeps its last definition.

    Raises:
        SyntaxError: ``text`` does not parse.
    """
    tree = ast.parse(text)
    out: Dict[str, Tuple[int, int]] = {}

    def walk(body: Sequence[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out[prefix + node.name] = (first, node.end_lineno or node.lineno)
            elif isinstance(node, ast.ClassDef):
                walk(node.body, prefix + node.name + ".")

    walk(tree.body, "")
    return out


@dataclass(frozen=True)
class BranchTest:
    """A rewritten ``if`` of the original: its test spans lines ``start..end``; ``body`` is the
    first line of its body (the line executed next exactly when the test held)."""

    start: int
    end: int
    body: int

    @property
    def observable(self) -> bool:
        """Whether line events tell the branches apart (not for ``if c: x`` on one line)."""
        return not (self.start <= self.body <= self.end)


@dataclass(frozen=True)
class UnitSpec:
    """One rewritten function, as the child needs it (picklable, torch-free).

    Attributes:
        qualname: ``Class.method`` or ``function``.
        orig_span: its lines in the original file.
        fixed_span: its lines in ``alone_text``.
        alone_text: the file with this unit's rewrite only (other units as in the original,
            module-level additions such as ``import torch`` kept).
        tests: the rewritten ``if`` statements of the original unit.
        rewritten: the lines of ``alone_text`` the fix wrote (inserted or replaced), where a
            graph break left means the fix did not do its job.
        replaced: the lines of the original unit the fix replaced (or inserted before): the
            original must execute one of them for the rewrite to count as reached.
        check_ops: the generated check ops (:mod:`pt2lint.fixes.check_op`) the fixed unit calls;
            such a unit is also run compiled (Inductor) on the inputs where the original raised,
            which must raise the same exception type and message.
    """

    qualname: str
    orig_span: Tuple[int, int]
    fixed_span: Tuple[int, int]
    alone_text: str
    tests: Tuple[BranchTest, ...] = ()
    rewritten: Tuple[int, ...] = ()
    replaced: Tuple[int, ...] = ()
    check_ops: Tuple[str, ...] = ()


def _lines(text: str) -> List[str]:
    from pt2lint.fixes.edits import split_keepends

    return split_keepends(text)


def _changed_original_lines(orig: str, fixed: str) -> Set[int]:
    """1-based lines of ``orig`` that the fix replaced or deleted (and the line an insertion precedes)."""
    out: Set[int] = set()
    matcher = difflib.SequenceMatcher(None, _lines(orig), _lines(fixed), autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        out.update(range(i1 + 1, i2 + 1) if i2 > i1 else {i1 + 1})
    return out


def _written_lines(orig: str, fixed: str, span: Tuple[int, int]) -> Tuple[int, ...]:
    """1-based lines of ``fixed`` within ``span`` that are not lines of ``orig`` kept as they were."""
    out: Set[int] = set()
    matcher = difflib.SequenceMatcher(None, _lines(orig), _lines(fixed), autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            out.update(j for j in range(j1 + 1, j2 + 1) if span[0] <= j <= span[1])
    return tuple(sorted(out))


def _branch_tests(orig: str, span: Tuple[int, int], changed: Set[int]) -> Tuple[BranchTest, ...]:
    tests: List[BranchTest] = []
    for node in ast.walk(ast.parse(orig)):
        if isinstance(node, ast.If) and span[0] <= node.lineno <= span[1] and node.lineno in changed:
            end = node.test.end_lineno or node.test.lineno
            tests.append(BranchTest(node.lineno, end, node.body[0].lineno))
    return tuple(sorted(set(tests), key=lambda t: t.start))


def revert_units(fixed: str, orig: str, names: Iterable[str]) -> str:
    """``fixed`` with the units ``names`` put back as they are in ``orig``.

    Raises:
        SyntaxError: either text does not parse.
        KeyError: a name is not a unit of both texts.
    """
    f_units, o_units = function_units(fixed), function_units(orig)
    f_lines, o_lines = _lines(fixed), _lines(orig)
    for name in sorted(set(names), key=lambda n: f_units[n][0], reverse=True):
        fs, fe = f_units[name]
        os_, oe = o_units[name]
        f_lines[fs - 1 : fe] = o_lines[os_ - 1 : oe]
    return "".join(f_lines)


def rewritten_units(orig: str, fixed: str) -> Tuple[List[UnitSpec], List[str]]:
    """The units ``fixed`` rewrote, each with the text that holds its fix alone.

    Returns:
        ``(units, problems)``: units in line order; ``problems`` are one-line notes on
        rewrites outside any unit of both texts (module-level code, a function added
        or removed), which ``--verify`` cannot check: such a file is not written.

    Raises:
        SyntaxError: either text does not parse.
    """
    from pt2lint.fixes.check_op import recognise_check_ops

    o_units, f_units = function_units(orig), function_units(fixed)
    o_lines, f_lines = _lines(orig), _lines(fixed)
    changed = [
        n for n in o_units
        if n in f_units and o_lines[o_units[n][0] - 1 : o_units[n][1]] != f_lines[f_units[n][0] - 1 : f_units[n][1]]
    ]
    known = {op.function: op for op in recognise_check_ops(orig)}
    added_ops = [op for op in recognise_check_ops(fixed) if op.function not in known]
    generated = {name for op in added_ops for name in op.functions}
    problems = [f"function {n} was removed" for n in o_units if n not in f_units]
    problems += [f"function {n} was added" for n in f_units if n not in o_units and n not in generated]
    residual = _drop_check_ops(revert_units(fixed, orig, changed), {op.function for op in added_ops})
    if residual != orig:
        extra = [
            line.strip() for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, o_lines, _lines(residual), autojunk=False).get_opcodes()
            if tag != "equal" for line in _lines(residual)[j1:j2]
        ]
        deleted = any(
            tag in ("replace", "delete")
            for tag, *_ in difflib.SequenceMatcher(None, o_lines, _lines(residual), autojunk=False).get_opcodes()
        )
        if deleted or any(line and not line.startswith(("import ", "from ")) for line in extra):
            problems.append("module-level code outside any function was rewritten")
    marks = _changed_original_lines(orig, fixed)
    units: List[UnitSpec] = []
    for name in sorted(changed, key=lambda n: o_units[n][0]):
        alone = revert_units(fixed, orig, [n for n in changed if n != name])
        span = function_units(alone)[name]
        units.append(
            UnitSpec(
                qualname=name,
                orig_span=o_units[name],
                fixed_span=span,
                alone_text=alone,
                tests=_branch_tests(orig, o_units[name], marks),
                rewritten=_written_lines(orig, alone, span),
                replaced=tuple(sorted(n for n in _changed_original_lines(orig, alone) if o_units[name][0] <= n <= o_units[name][1])),
                check_ops=_calls_of(alone, span, {op.function for op in added_ops}),
            )
        )
    return units, problems


def _drop_check_ops(text: str, functions: Set[str]) -> str:
    """``text`` without the generated check-op blocks that define ``functions``."""
    from pt2lint.fixes.check_op import recognise_check_ops

    lines = _lines(text)
    for op in sorted(recognise_check_ops(text), key=lambda o: o.first, reverse=True):
        if op.function in functions:
            first = op.first - 1
            while first > 0 and op.first - 1 - first < 2 and not lines[first - 1].strip():
                first -= 1  # the two blank lines the codemod wrote above the block
            del lines[first : op.last]
    return "".join(lines)


def _calls_of(text: str, span: Tuple[int, int], names: Set[str]) -> Tuple[str, ...]:
    """Which of ``names`` are called (as plain names) within the lines ``span`` of ``text``."""
    if not names:
        return ()
    found: Set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
            and span[0] <= node.lineno <= span[1]
        ):
            found.add(node.func.id)
    return tuple(sorted(found))


@dataclass(frozen=True)
class VerifyJob(Job):
    """A confirm :class:`~pt2lint.confirm.plan.Job` that also carries the units to verify."""

    units: Tuple[UnitSpec, ...] = ()


def plan_verify_jobs(
    files: Sequence[Tuple[str, str, str, str, Tuple[UnitSpec, ...]]],
    settings: Any,
    lint_settings: Any = None,
) -> Tuple[List[VerifyJob], Dict[str, List[str]]]:
    """One job per model the confirm machinery can build from each file.

    Args:
        files: ``(path, display, relpath, original text, units)`` per file.
        settings: the :class:`~pt2lint.confirm.settings.ConfirmSettings`.
        lint_settings: the lint settings (Dynamo knobs the lint assumed).

    Returns:
        ``(jobs, unplanned)``: ``unplanned`` maps a path with no job to the reasons.

    Raises:
        pt2lint.confirm.plan.PlanError: a configured factory / inputs name no file defines.
    """
    from dataclasses import asdict

    from pt2lint.confirm.plan import plan_jobs

    texts = {os.path.abspath(p): t for p, _d, _r, t, _u in files}
    units = {os.path.abspath(p): u for p, _d, _r, _t, u in files}
    jobs, skipped = plan_jobs([(p, d, r) for p, d, r, _t, _u in files], settings, lint_settings, read=lambda p: texts[os.path.abspath(p)])
    out: List[VerifyJob] = []
    planned: Set[str] = set()
    for job in jobs:
        base = {k: v for k, v in asdict(job).items() if k in Job.__dataclass_fields__}
        out.append(VerifyJob(**base, units=units[job.path]))
        planned.add(job.path)
    unplanned: Dict[str, List[str]] = {}
    for p, d, _r, _t, _u in files:
        if os.path.abspath(p) not in planned:
            why = [f"{label}: {reason}" for label, reason in skipped if label.split("::")[0] == d]
            unplanned[os.path.abspath(p)] = why or [
                "no model factory: the file defines no make_model() (or configured factory) and no nn.Module class"
            ]
    return out, unplanned


# ---------------------------------------------------------------------------
# verdicts


@dataclass
class Verdict:
    """What ``--verify`` concluded about one rewritten function.

    Attributes:
        path: the file (as displayed).
        unit: ``Class.method`` or ``function``.
        line: the unit's first line in the original file.
        status: ``verified``, ``rejected`` or ``unverifiable``.
        reason: one line: why (the first evidence for a rejection).
        evidence: further lines (inputs, tensors, differences, exceptions), at most :data:`MAX_EVIDENCE`.
        fixes: the findings the rewrite fixes, as ``CODE:line``.
        inputs: how many inputs were compared.
    """

    path: str
    unit: str
    line: int
    status: str
    reason: str
    evidence: List[str] = field(default_factory=list)
    fixes: List[str] = field(default_factory=list)
    inputs: int = 0

    def as_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "path": self.path, "function": self.unit, "line": self.line, "status": self.status,
            "reason": self.reason, "evidence": list(self.evidence), "fixes": list(self.fixes), "inputs": self.inputs,
        }


def _job_problem(outcome: Any) -> Optional[str]:
    """Why a job measured nothing (died, timed out, failed to import or build), or None."""
    from pt2lint.confirm.child import shorten

    result = outcome.result
    if result is None:
        if outcome.timed_out:
            return f"{outcome.job.label}: timed out after {outcome.job.timeout:g}s (stage {outcome.stage or 'start'})"
        return f"{outcome.job.label}: the child process died (exit {outcome.exitcode}) at stage {outcome.stage or 'start'}"
    if result.get("failure"):
        return shorten(f"{outcome.job.label}: {result.get('detail') or result['failure']}", 300)
    return None


def verdicts(
    path: str,
    display: str,
    units: Sequence[UnitSpec],
    outcomes: Sequence[Any],
    fixes: Optional[Dict[str, List[str]]] = None,
    unplanned: Sequence[str] = (),
) -> List[Verdict]:
    """Merge the jobs' measurements of one file into one :class:`Verdict` per unit.

    Args:
        path: the file (absolute) the jobs ran.
        display: the file as reported.
        units: the file's rewritten units.
        outcomes: the :class:`~pt2lint.confirm.runner.JobOutcome` objects of the file's jobs.
        fixes: ``{unit: ["PTC104:22", ...]}`` for the report.
        unplanned: reasons the file got no job at all.
    """
    fixes = fixes or {}
    out: List[Verdict] = []
    problems = [p for p in (_job_problem(o) for o in outcomes) if p]
    for unit in units:
        mism: List[str] = []
        notes: List[str] = []
        executed = fixed_executed = False
        seen: Dict[int, Set[bool]] = {t.start: set() for t in unit.tests}
        inputs = 0
        blockers: List[str] = []
        returned = 0
        first_error: Optional[str] = None
        for o in outcomes:
            r = (o.result or {}).get("units", {}).get(unit.qualname)
            if r is None:
                continue
            if r.get("blocker"):
                blockers.append(r["blocker"])
            mism.extend(r.get("mismatches", []))
            notes.extend(r.get("notes", []))
            returned += int(r.get("returned", 0))
            first_error = first_error or r.get("first_error")
            executed = executed or bool(r.get("executed"))
            fixed_executed = fixed_executed or bool(r.get("fixed_executed"))
            inputs += int(r.get("inputs", 0))
            for start, taken in r.get("outcomes", {}).items():
                seen.setdefault(int(start), set()).update(bool(b) for b in taken)
        evidence: List[str] = []
        if mism:
            status, reason, evidence = REJECTED, mism[0], mism[1:MAX_EVIDENCE]
        elif not outcomes:
            status, reason = UNVERIFIABLE, "; ".join(unplanned) or "no model factory for this file"
        elif blockers and not executed:
            status, reason = UNVERIFIABLE, blockers[0]
        elif not executed:
            status = UNVERIFIABLE
            if inputs or not problems:
                # A model ran inputs through the unit: that other jobs of the file could not be built is evidence, not the reason.
                reason = "the rewritten lines of the original were never executed on the model's inputs"
                evidence = problems[: MAX_EVIDENCE - 1]
            else:
                reason, evidence = problems[0], problems[1:MAX_EVIDENCE]
        elif not fixed_executed:
            status, reason = UNVERIFIABLE, "the fixed function was never reached (the model calls it through another module)"
        elif not returned:
            status, reason = UNVERIFIABLE, f"the original raised on every input that reached the function: {first_error}"
        else:
            missing = []
            for t in unit.tests:
                if not t.observable:
                    missing.append(f"line {t.start}: its branches are on one line and cannot be told apart")
                    continue
                for want, word in ((True, "true"), (False, "false")):
                    if want not in seen.get(t.start, set()):
                        missing.append(f"line {t.start}: the {word} branch was never taken on {inputs} inputs")
            if missing:
                status, reason, evidence = UNVERIFIABLE, f"branch not reached: {missing[0]}", missing[1:MAX_EVIDENCE]
            else:
                status = VERIFIED
                reason = f"equal outputs, gradients and buffers on {inputs} inputs" + (
                    f"; both branches of {len(unit.tests)} rewritten if taken" if unit.tests else ""
                ) + "; no graph break left on the rewritten lines"
        evidence = (evidence + [n for n in notes if n not in evidence])[:MAX_EVIDENCE]
        out.append(Verdict(display, unit.qualname, unit.orig_span[0], status, reason, evidence, sorted(fixes.get(unit.qualname, [])), inputs))
    return out


def keep_verified(orig: str, fixed: str, results: Sequence[Verdict]) -> str:
    """``fixed`` with every unit that is not verified reverted; ``orig`` when none is verified.  A
    generated check op (:mod:`pt2lint.fixes.check_op`) that no kept unit calls any more is dropped too."""
    bad = [v.unit for v in results if v.status != VERIFIED]
    if len(bad) == len(results):
        return orig
    kept = revert_units(fixed, orig, bad)
    from pt2lint.fixes.check_op import recognise_check_ops

    known = {op.function for op in recognise_check_ops(orig)}
    added = [op for op in recognise_check_ops(kept) if op.function not in known]
    if not added:
        return kept
    called = set(_calls_of(kept, (1, len(_lines(kept))), {op.function for op in added}))
    return _drop_check_ops(kept, {op.function for op in added if op.function not in called})


def summary_line(results: Sequence[Verdict]) -> str:
    """``Verify: 3 functions: 2 verified, 1 rejected, 0 unverifiable.``"""
    counts = {s: sum(1 for v in results if v.status == s) for s in STATUSES}
    n = len(results)
    return f"Verify: {n} function{'s' if n != 1 else ''} rewritten: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES) + "."


def format_verdict(v: Verdict) -> str:
    """Text lines for one verdict (``path:line: function: status: reason`` and indented evidence)."""
    what = f" ({', '.join(v.fixes)})" if v.fixes else ""
    lines = [f"{v.path}:{v.line}: {v.unit}{what}: {v.status}: {v.reason}"]
    lines += [f"    {e}" for e in v.evidence]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# child side

#: ``(name, kind)`` of the inputs tried, in order; kinds are applied by :func:`_variant`.
VARIANTS: Tuple[Tuple[str, str], ...] = (
    ("example inputs", "same"),
    ("negated", "neg"),
    ("zeros", "zeros"),
    ("ones", "ones"),
    ("scaled by 10", "x10"),
    ("scaled by 0.01", "x0.01"),
    ("shifted by +3", "plus3"),
    ("shifted by -3", "minus3"),
    ("absolute values", "abs"),
    ("negated absolute values", "negabs"),
    ("random (seed 1)", "rand1"),
    ("random (seed 2)", "rand2"),
    ("boolean masks inverted", "invert"),
    # tried only while a rewritten `if` has a branch not yet taken (the loop stops once every
    # branch is covered): the tests of validation code (`isnan(x).any()`, `labels >= n`)
    ("one element NaN", "nan"),
    ("one element +inf", "inf"),
    ("integers plus 100", "int+100"),
    ("integers negated", "intneg"),
    # the model's floating parameters changed, the example inputs kept (the rewrite must agree for
    # every weight, so these are inputs too): a test of what a layer outputs (`not (relu(fc(x)) >
    # 0).any()`) is reached through its weights, not through ``x``
    ("parameters zeroed", "params-zeros"),
    ("parameters negated", "params-neg"),
)

#: The prefix of the :data:`VARIANTS` kinds that change the model's parameters (:func:`perturb_parameters`).
PARAM_KIND = "params-"


def perturb_parameters(model: Any, kind: str) -> bool:
    """Change ``model``'s floating-point parameters in place, without recording it in autograd:
    ``params-zeros`` sets them to zero, ``params-neg`` negates them.  Buffers (running
    statistics, masks) are left as they are.

    Returns:
        Whether the model has a floating parameter (False: the variant changes nothing).

    Raises:
        ValueError: for a kind that is not ``params-zeros`` or ``params-neg``.
    """
    import torch

    if kind not in ("params-zeros", "params-neg"):
        raise ValueError(f"unknown parameter variant {kind!r} (expected params-zeros or params-neg)")
    changed = False
    with torch.no_grad():
        for p in model.parameters():
            if not p.is_floating_point():
                continue
            changed = True
            if kind == "params-zeros":
                p.zero_()
            else:
                p.neg_()
    return changed


def _variant(kind: str, args: tuple, kwargs: Dict[str, Any]) -> Optional[Tuple[tuple, Dict[str, Any]]]:
    """The inputs perturbed by ``kind`` (floating tensors; ``invert`` flips boolean ones); None when
    it changes nothing (no such tensor).  The parameter kinds (:data:`PARAM_KIND`) return copies
    of the inputs: :func:`perturb_parameters` changes the model instead."""
    import torch

    from pt2lint.confirm.inputs import map_tensors

    if kind.startswith(PARAM_KIND):
        return map_tensors(args, lambda t: t.clone()), map_tensors(kwargs, lambda t: t.clone())
    changed = [False]
    gen = torch.Generator().manual_seed(int(kind[-1]) if kind.startswith("rand") else 0)

    def one(t):
        if kind == "same":
            return t.clone()
        if kind == "invert":
            if t.dtype is torch.bool:
                changed[0] = True
                return ~t
            return t.clone()
        if kind in ("int+100", "intneg"):
            if t.is_floating_point() or t.is_complex() or t.dtype is torch.bool:
                return t.clone()
            changed[0] = True
            return t + 100 if kind == "int+100" else -t
        if not t.is_floating_point():
            return t.clone()
        if kind in ("nan", "inf"):
            if t.numel() == 0:
                return t.clone()
            changed[0] = True
            out = t.detach().clone()
            out.view(-1)[0] = float("nan") if kind == "nan" else float("inf")
            return out.requires_grad_(t.requires_grad)
        changed[0] = True
        with torch.no_grad():
            if kind == "neg":
                return -t
            if kind == "zeros":
                return torch.zeros_like(t)
            if kind == "ones":
                return torch.ones_like(t)
            if kind == "x10":
                return t * 10
            if kind == "x0.01":
                return t * 0.01
            if kind == "plus3":
                return t + 3
            if kind == "minus3":
                return t - 3
            if kind == "abs":
                return t.abs()
            if kind == "negabs":
                return -t.abs()
            return torch.randn(t.shape, generator=gen, dtype=t.dtype).to(t.device)

    a, k = map_tensors(args, one), map_tensors(kwargs, one)
    if kind != "same" and not changed[0]:
        return None
    return a, k


class _Tracer:
    """``sys.settrace`` while active: the lines executed in ``path`` and, for each
    :class:`BranchTest`, the branches taken (True: the next line was its body's first)."""

    def __init__(self, path: str, tests: Sequence[BranchTest] = ()) -> None:
        self.path = path
        self.tests = {t.start: t for t in tests if t.observable}
        self.lines: Set[int] = set()
        self.outcomes: Dict[int, Set[bool]] = {}

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        if event != "call" or frame.f_code.co_filename != self.path:
            return None
        pending: List[Optional[BranchTest]] = [None]
        self.lines.add(frame.f_lineno)

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                line = frame.f_lineno
                self.lines.add(line)
                test = pending[0]
                if test is not None and not (test.start <= line <= test.end):
                    self.outcomes.setdefault(test.start, set()).add(line == test.body)
                    pending[0] = None
                if pending[0] is None and line in self.tests:
                    pending[0] = self.tests[line]
            elif event == "exception":
                pending[0] = None
            elif event == "return" and pending[0] is not None:
                self.outcomes.setdefault(pending[0].start, set()).add(False)
                pending[0] = None
            return local

        return local

    def __enter__(self) -> "_Tracer":
        self._saved = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.settrace(self._saved)


def _leaves(value: Any, path: str = "output", depth: int = 0) -> List[Tuple[str, Any]]:
    """``(path, leaf)`` of nested tuples/lists/dicts (``ModelOutput`` included), in order."""
    if depth < 8:
        if isinstance(value, dict):
            out: List[Tuple[str, Any]] = []
            for k in value:
                out += _leaves(value[k], f"{path}[{k!r}]", depth + 1)
            return out
        if isinstance(value, (list, tuple)):
            out = []
            for i, v in enumerate(value):
                out += _leaves(v, f"{path}[{i}]", depth + 1)
            return out
    return [(path, value)]


def _diff_tensors(what: str, expected: Any, actual: Any) -> Optional[str]:
    """Why ``actual`` differs from ``expected`` (assert_close with the dtype's default tolerances), or None."""
    import torch

    if not isinstance(actual, torch.Tensor):
        return f"{what}: a tensor in the original, {type(actual).__name__} in the fixed"
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return (
            f"{what}: {str(expected.dtype).replace('torch.', '')}{list(expected.shape)} in the original, "
            f"{str(actual.dtype).replace('torch.', '')}{list(actual.shape)} in the fixed"
        )
    try:
        torch.testing.assert_close(actual.detach(), expected.detach(), equal_nan=True, check_device=False)
    except AssertionError:
        if expected.is_floating_point() or expected.is_complex():
            diff = (actual.detach().double() - expected.detach().double()).abs()
            finite = diff[torch.isfinite(diff)]
            worst = float(finite.max()) if finite.numel() else float("nan")
            return f"{what}: max abs diff {worst:.3g}"
        wrong = int((actual.detach() != expected.detach()).sum())
        return f"{what}: {wrong} of {expected.numel()} elements differ"
    return None


def _compare_values(label: str, expected: Any, actual: Any) -> List[str]:
    import torch

    e_leaves, a_leaves = _leaves(expected), _leaves(actual)
    if [p for p, _ in e_leaves] != [p for p, _ in a_leaves]:
        return [f"{label}: the outputs have a different structure"]
    out = []
    for (p, e), (_p, a) in zip(e_leaves, a_leaves):
        if isinstance(e, torch.Tensor):
            why = _diff_tensors(f"{label}: {p}", e, a)
        elif isinstance(e, (int, float, str, bool, type(None))) and not isinstance(a, torch.Tensor):
            why = None if (e == a or (e != e and a != a)) else f"{label}: {p}: {e!r} in the original, {a!r} in the fixed"
        else:
            why = None if type(e) is type(a) else f"{label}: {p}: {type(e).__name__} in the original, {type(a).__name__} in the fixed"
        if why:
            out.append(why)
    return out


@dataclass
class _Run:
    output: Any = None
    error: Optional[BaseException] = None
    grads: Dict[str, Any] = field(default_factory=dict)
    grad_error: Optional[str] = None
    buffers: Dict[str, Any] = field(default_factory=dict)
    inputs: List[Tuple[str, Any]] = field(default_factory=list)
    state: Dict[str, Any] = field(default_factory=dict)
    globals_before: Dict[str, Any] = field(default_factory=dict)
    globals_after: Dict[str, Any] = field(default_factory=dict)
    lines: Set[int] = field(default_factory=set)
    outcomes: Dict[int, Set[bool]] = field(default_factory=dict)
    raised_here: bool = False


def _raised_in(exc: BaseException, path: str) -> bool:
    """Whether the innermost frame of ``exc``'s traceback is code of the file ``path`` (a ``raise`` of its own)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(path)


def _projection(output: Any) -> Any:
    """A scalar of the outputs: each differentiable floating leaf times fixed random weights, summed."""
    import torch

    total = None
    for i, (_p, leaf) in enumerate(_leaves(output)):
        if isinstance(leaf, torch.Tensor) and leaf.is_floating_point() and leaf.requires_grad:
            gen = torch.Generator().manual_seed(7 + i)
            w = torch.randn(leaf.shape, generator=gen, dtype=torch.float64).to(leaf.device)
            term = (leaf.double() * w).sum()
            total = term if total is None else total + term
    return total


def _run_model(model: Any, args: tuple, kwargs: Dict[str, Any], tracer: _Tracer, module: Any = None) -> _Run:
    """Call ``model`` once (seeded), then ``backward`` of a fixed projection of its outputs; what
    the caller can see afterwards is recorded, the globals of ``module`` (the file's module
    object whose code the call runs) included."""
    from pt2lint.confirm.child import seed_all

    run = _Run()
    model.zero_grad(set_to_none=True)
    if module is not None:
        run.globals_before = global_state_snapshot(module)
    seed_all(1234)
    try:
        with tracer:
            run.output = model(*args, **kwargs)
    except Exception as exc:
        run.error = exc
        run.raised_here = _raised_in(exc, tracer.path)
    if module is not None:
        run.globals_after = global_state_snapshot(module)
    run.lines, run.outcomes = tracer.lines, tracer.outcomes
    if run.error is None:
        loss = _projection(run.output)
        if loss is not None:
            try:
                loss.backward()
            except Exception as exc:
                run.grad_error = f"{type(exc).__name__}: {exc}"
    run.grads = {n: (None if p.grad is None else p.grad.detach().clone()) for n, p in model.named_parameters()}
    run.buffers = {n: b.detach().clone() for n, b in model.named_buffers()}
    run.inputs = input_snapshot(args, kwargs)
    run.state = module_state_snapshot(model)
    return run


def input_snapshot(args: tuple, kwargs: Dict[str, Any]) -> List[Tuple[str, Any]]:
    """``(path, copy)`` of every tensor the caller passed (``args[0]``, ``kwargs['mask'][1]``, ...),
    taken after the call: what the caller sees of in-place writes to its inputs."""
    import torch

    leaves = _leaves(list(args), "args") + _leaves(dict(kwargs), "kwargs")
    return [(p, v.detach().clone()) for p, v in leaves if isinstance(v, torch.Tensor)]


_STATE_SCALARS = (int, float, bool, str, type(None))


def module_state_snapshot(model: Any) -> Dict[str, Any]:
    """The Python state of ``model`` and its submodules outside parameters and buffers, after a
    call: each public instance attribute (``vars(module)``, not ``training``) that is a tensor (a
    copy), a Python scalar (its value) or a list/tuple/dict/set (its length and, when every element
    is a Python scalar, its contents).  A counter, a cached tensor or an appended history that the
    fixed code updates differently from the original shows here."""
    out: Dict[str, Any] = {}
    for mod_name, mod in model.named_modules():
        for key, value in vars(mod).items():
            if key.startswith("_") or key == "training":
                continue
            kept = _state_value(value)
            if kept is not _UNKEPT:
                out[f"{mod_name}.{key}" if mod_name else key] = kept
    return out


_UNKEPT = object()


def _state_value(value: Any) -> Any:
    """What a state snapshot keeps of ``value``: a tensor's copy, a Python scalar itself, a
    list/tuple/dict/set as ``(type name, length, contents when every element is a Python
    scalar)``; ``_UNKEPT`` for anything else (modules, functions, classes, other objects)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, _STATE_SCALARS):
        return value
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        items = list(value.items()) if isinstance(value, dict) else list(value)
        flat = all(isinstance(i, _STATE_SCALARS) or (isinstance(i, tuple) and all(isinstance(j, _STATE_SCALARS) for j in i)) for i in items)
        return (type(value).__name__, len(value), repr(sorted(map(repr, items))) if flat else None)
    return _UNKEPT


def global_state_snapshot(module: Any) -> Dict[str, Any]:
    """The globals of the file's ``module`` object as :func:`_state_value` keeps them (not the
    dunder names, nor the check ops a fix generates).  A counter, a registry or a cache at module
    level that a call updates shows here: a fix that drops such a write (``CALLS[0] += 1`` in a
    branch a ``torch.cond`` rewrite left out) changes what the caller sees."""
    out: Dict[str, Any] = {}
    for key, value in list(vars(module).items()):
        if (key.startswith("__") and key.endswith("__")) or key.startswith("_pt2lint"):
            continue
        kept = _state_value(value)
        if kept is not _UNKEPT:
            out[key] = kept
    return out


def _same_state(a: Any, b: Any) -> bool:
    """Two :func:`_state_value` results are equal (tensors: same dtype, shape and values, NaN equal to NaN)."""
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
            and bool(torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0)) and torch.equal(a.isnan(), b.isnan())))
        )
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def _compare_globals(label: str, orig: "_Run", fixed: "_Run") -> List[str]:
    """Differences in what a call did to the module globals: a global one call changed and the
    other did not, or both changed from the same value to different ones.  (The fixed module is a
    second copy of the file, so it may start from other values: building the model ran the
    original's code only.)"""
    out: List[str] = []
    missing = object()
    for key in sorted(set(orig.globals_after) | set(fixed.globals_after)):
        ob, oa = orig.globals_before.get(key, missing), orig.globals_after.get(key, missing)
        fb, fa = fixed.globals_before.get(key, missing), fixed.globals_after.get(key, missing)
        o_changed = (ob is missing) != (oa is missing) or (ob is not missing and oa is not missing and not _same_state(ob, oa))
        f_changed = (fb is missing) != (fa is missing) or (fb is not missing and fa is not missing and not _same_state(fb, fa))
        if o_changed != f_changed:
            who, other = ("the original", "the fixed") if o_changed else ("the fixed", "the original")
            out.append(f"{label}: module global {key} was written by {who} call and not by {other}")
        elif o_changed and ob is not missing and fb is not missing and _same_state(ob, fb) and (oa is missing) == (fa is missing) and oa is not missing and not _same_state(oa, fa):
            out.append(f"{label}: module global {key} after the call: {_state_text(oa)} in the original, {_state_text(fa)} in the fixed")
    return out


def _state_text(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"a {str(value.dtype).replace('torch.', '')}{list(value.shape)} tensor"
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], str):
        return f"a {value[0]} of {value[1]}" + (f" {value[2]}" if value[2] is not None else "")
    return repr(value)


def _compare_inputs_and_state(label: str, orig: "_Run", fixed: "_Run") -> List[str]:
    """Differences in what the caller sees after the call: its input tensors (in-place writes) and
    the Python state of the modules (see :func:`module_state_snapshot`)."""
    import torch

    out: List[str] = []
    e_in, a_in = dict(orig.inputs), dict(fixed.inputs)
    for path in sorted(set(e_in) | set(a_in)):
        e, a = e_in.get(path), a_in.get(path)
        if e is None or a is None:
            out.append(f"{label}: input {path} after the call: missing in the {'original' if e is None else 'fixed'} run")
            continue
        why = _diff_tensors(f"{label}: input {path} after the call (written in place)", e, a)
        if why:
            out.append(why)
    for where in sorted(set(orig.state) | set(fixed.state)):
        missing = object()
        e, a = orig.state.get(where, missing), fixed.state.get(where, missing)
        if e is missing or a is missing:
            out.append(f"{label}: module attribute {where} exists after the call only in the {'fixed' if e is missing else 'original'} run")
        elif isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            if not (isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor)):
                out.append(f"{label}: module attribute {where} after the call: {type(e).__name__} in the original, {type(a).__name__} in the fixed")
            else:
                why = _diff_tensors(f"{label}: module attribute {where} after the call", e, a)
                if why:
                    out.append(why)
        elif not (e == a or (isinstance(e, float) and isinstance(a, float) and e != e and a != a)):
            out.append(f"{label}: module attribute {where} after the call: {e!r} in the original, {a!r} in the fixed")
    return out


def _exc_text(exc: BaseException) -> str:
    from pt2lint.confirm.child import shorten

    first = (str(exc).strip().splitlines() or [""])[0]
    return shorten(f"{type(exc).__name__}: {first}" if first else type(exc).__name__, 240)


def compare_runs(label: str, orig: _Run, fixed: _Run) -> List[str]:
    """Evidence that ``fixed`` behaved differently from ``orig`` on one input (empty: the same)."""
    import torch

    if orig.error is not None or fixed.error is not None:
        if orig.error is not None and fixed.error is not None:
            if isinstance(fixed.error, type(orig.error)):
                if orig.raised_here and str(fixed.error) != str(orig.error):
                    # a `raise` of the file itself: its message is part of what the caller sees
                    return [f"{label}: the original raised {_exc_text(orig.error)}; the fixed raised {_exc_text(fixed.error)} (another message)"]
                return []
            return [f"{label}: the original raised {_exc_text(orig.error)}; the fixed raised {_exc_text(fixed.error)}"]
        if fixed.error is not None:
            return [f"{label}: the fixed code raised {_exc_text(fixed.error)} (the original returned)"]
        return [f"{label}: the original raised {_exc_text(orig.error)}; the fixed code returned"]
    out = _compare_values(label, orig.output, fixed.output)
    if orig.grad_error != fixed.grad_error:
        out.append(f"{label}: backward: {orig.grad_error or 'ran'} in the original, {fixed.grad_error or 'ran'} in the fixed")
    for name in sorted(set(orig.grads) | set(fixed.grads)):
        e, a = orig.grads.get(name), fixed.grads.get(name)
        if e is None and a is None:
            continue
        if e is None or a is None:
            def kind(g):
                if g is None:
                    return "None"
                return "zeros" if not bool(g.any()) else "nonzero"
            out.append(f"{label}: grad of parameter {name}: {kind(e)} in the original, {kind(a)} in the fixed")
            continue
        why = _diff_tensors(f"{label}: grad of parameter {name}", e, a)
        if why:
            out.append(why)
    for name in sorted(set(orig.buffers) | set(fixed.buffers)):
        e, a = orig.buffers.get(name), fixed.buffers.get(name)
        if e is None or a is None:
            out.append(f"{label}: buffer {name} exists only in the {'fixed' if e is None else 'original'} module")
            continue
        why = _diff_tensors(f"{label}: buffer {name} after the call", e, a)
        if why:
            out.append(why)
    out += _compare_inputs_and_state(label, orig, fixed)
    out += _compare_globals(label, orig, fixed)
    _ = torch
    return out


#: Inputs on which the original raised that a unit with a generated check op also runs compiled.
MAX_RAISING = 3


def compiled_check_runs(
    model: Any,
    good: Tuple[tuple, Dict[str, Any]],
    good_run: "_Run",
    raising: Sequence[Tuple[str, Tuple[tuple, Dict[str, Any]], "_Run"]],
    config: Optional[Dict[str, Any]] = None,
) -> List[str]:
    """Run the fixed ``model`` under ``torch.compile`` (default backend, Inductor) and compare with the
    original's eager runs: on ``good`` (where the original returned) the outputs must agree; on each
    input of ``raising`` the compiled code must raise the original's exception type and, for a
    ``raise`` of the file itself, its message.

    This is the check a generated check op (:mod:`pt2lint.fixes.check_op`) needs: it runs only
    under ``torch.compiler.is_compiling()``, and an op without an output that Inductor drops
    would raise nothing (measured on torch 2.13 without ``has_side_effect``).

    Returns:
        Evidence lines, empty when everything agreed.
    """
    import copy

    import torch

    from pt2lint.confirm import dynamo

    out: List[str] = []
    dynamo.reset_dynamo()
    try:
        with dynamo._dynamo_config(dict(config or {})):
            compiled = torch.compile(copy.deepcopy(model))
            args, kwargs = copy.deepcopy(good)
            try:
                value = compiled(*args, **kwargs)
            except Exception as exc:
                return [f"compiled (inductor): the fixed code raised {_exc_text(exc)} where the original returned"]
            out += _compare_values("compiled (inductor)", good_run.output, value)
            for name, made, o_run in raising:
                args, kwargs = copy.deepcopy(made)
                try:
                    compiled(*args, **kwargs)
                except Exception as exc:
                    assert o_run.error is not None
                    same = isinstance(exc, type(o_run.error)) and (not o_run.raised_here or str(exc) == str(o_run.error))
                    if not same:
                        out.append(
                            f"input '{name}', compiled (inductor): the original raised {_exc_text(o_run.error)}; "
                            f"the fixed raised {_exc_text(exc)}"
                        )
                else:
                    out.append(f"input '{name}', compiled (inductor): the original raised {_exc_text(o_run.error)}; the fixed code returned")
    except Exception as exc:
        out.append(f"compiling the fixed code with the default backend raised {_exc_text(exc)}")
    finally:
        dynamo.reset_dynamo()
    return out


def _fixed_module(job: VerifyJob, unit: UnitSpec, original: Any, directory: str, index: int) -> Tuple[Any, str]:
    """Execute ``unit.alone_text`` as a module named like ``original`` (same package, so
    relative imports resolve), from a copy in ``directory``; returns ``(module, its path)``."""
    import types

    sub = os.path.join(directory, str(index))
    os.makedirs(sub, exist_ok=True)
    path = os.path.join(sub, os.path.basename(job.path))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(unit.alone_text)
    module = types.ModuleType(original.__name__)
    module.__file__ = path
    module.__package__ = getattr(original, "__package__", None)
    code = compile(unit.alone_text, path, "exec", dont_inherit=True)
    exec(code, module.__dict__)
    return module, path


def _swap_classes(model: Any, original: Any, fixed: Any) -> int:
    """Switch every submodule of ``model`` whose class is defined in ``original`` to the
    same-named class of ``fixed``; returns how many were switched."""
    import torch

    count = 0
    for sub in model.modules():
        cls = type(sub)
        if cls.__module__ != original.__name__ or "<locals>" in cls.__qualname__:
            continue
        target: Any = fixed
        for part in cls.__qualname__.split("."):
            target = getattr(target, part, None)
        if isinstance(target, type) and issubclass(target, torch.nn.Module):
            sub.__class__ = target
            count += 1
    return count


def run_verify_job(job: VerifyJob, report: Callable[[str, Any], None] = lambda kind, payload: None) -> Dict[str, Any]:
    """Build the job's model, run the original and each unit's fixed code on the inputs, compare.

    Returns:
        ``{"label", "stage", "failed_stage", "failure", "detail", "inputs", "notes",
        "units": {qualname: {"executed", "fixed_executed", "outcomes": {line: [bool]},
        "inputs", "mismatches": [...], "notes": [...]}}}``.  A failure before any
        comparison (import, build, inputs) sets ``failure`` and ``detail``; user code's
        exceptions never escape.
    """
    import copy
    import shutil
    import tempfile

    from pt2lint.confirm import outcome as oc

    result: Dict[str, Any] = {
        "label": job.label, "stage": None, "failed_stage": None, "failure": None, "detail": None,
        "inputs": None, "notes": [], "units": {},
    }

    def stage(name: str) -> None:
        result["stage"] = name
        report("stage", name)

    def fail(failure: str, detail: str) -> Dict[str, Any]:
        from pt2lint.confirm.child import shorten

        result["failed_stage"] = result["stage"]
        result["failure"] = failure
        result["detail"] = shorten(detail, 400)
        stage("done")
        return result

    stage("setup")
    try:
        import torch

        from pt2lint.confirm import dynamo
        from pt2lint.confirm.child import (
            ImportFailed, _call_inputs_fn, load_file, required_arguments, resolve_callable, resolve_device, seed_all,
        )
        from pt2lint.confirm.inputs import NoExampleInputs, describe, map_tensors, normalize_inputs, synthesize_inputs
    except BaseException as exc:
        return fail(oc.IMPORT_ERROR, f"torch cannot be imported: {_exc_text(exc)}")
    try:
        torch.set_num_threads(max(1, job.threads))
    except Exception:
        pass
    device = resolve_device(job.device)

    stage("import")
    try:
        original = load_file(job.path, job.root)
    except BaseException as exc:
        return fail(oc.IMPORT_ERROR, f"importing the file failed: {_exc_text(exc)}")
    workdir = tempfile.mkdtemp(prefix="pt2lint-verify-")
    try:
        fixed_mods: Dict[str, Tuple[Any, str]] = {}
        for index, unit in enumerate(job.units):
            try:
                fixed_mods[unit.qualname] = _fixed_module(job, unit, original, workdir, index)
            except BaseException as exc:
                rec = {"executed": False, "fixed_executed": False, "outcomes": {}, "inputs": 0, "mismatches": [], "notes": []}
                try:  # does the unchanged file survive a second import the same way?
                    with open(job.path, encoding="utf-8") as fh:
                        again = UnitSpec(unit.qualname, unit.orig_span, unit.orig_span, fh.read())
                    _fixed_module(job, again, original, workdir, f"{index}-original")
                except BaseException as again_exc:
                    rec["blocker"] = f"the file cannot be imported a second time, as --verify needs: {_exc_text(again_exc)}"
                else:
                    rec["mismatches"].append(f"importing the fixed module failed: {_exc_text(exc)}")
                result["units"][unit.qualname] = rec

        stage("build")
        try:
            if job.factory:
                make = resolve_callable(job.factory, job, original)
            else:
                cls = getattr(original, job.class_name or "")
                if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
                    return fail(oc.NO_INPUTS, f"no model factory: {job.class_name} is not a torch.nn.Module subclass")
                needs = required_arguments(cls)
                if needs:
                    return fail(
                        oc.NO_INPUTS,
                        f"no model factory: {job.class_name}() needs {', '.join(needs)} "
                        "(define make_model()/example_inputs(), or a per-class entry in [tool.pt2lint.confirm])",
                    )
                make = cls
            seed_all(0)
            model = make()
        except ImportFailed as exc:
            return fail(oc.IMPORT_ERROR, str(exc))
        except BaseException as exc:
            return fail(oc.RUNTIME_CRASH, f"building the model failed: {_exc_text(exc)}")
        if not isinstance(model, torch.nn.Module):
            return fail(oc.NO_INPUTS, f"no model factory: the factory returned {type(model).__name__}, not an nn.Module")
        model = model.to(device)

        stage("inputs")
        try:
            seed_all(0)
            if job.inputs:
                args, kwargs = normalize_inputs(_call_inputs_fn(resolve_callable(job.inputs, job, original), model))
            else:
                args, kwargs, _note = synthesize_inputs(model, device)
            to_device = lambda t: t.to(device)  # noqa: E731
            args, kwargs = map_tensors(args, to_device), map_tensors(kwargs, to_device)
        except NoExampleInputs as exc:
            return fail(oc.NO_INPUTS, f"could not build inputs: {exc}")
        except BaseException as exc:
            return fail(oc.RUNTIME_CRASH, f"could not build inputs: {_exc_text(exc)}")
        result["inputs"] = describe(args, kwargs)

        fixed_models: Dict[str, Any] = {}
        for unit in job.units:
            if unit.qualname not in fixed_mods:
                continue
            try:
                twin = copy.deepcopy(model)
            except Exception as exc:
                return fail(oc.RUNTIME_CRASH, f"the model cannot be copied (copy.deepcopy): {_exc_text(exc)}")
            _swap_classes(twin, original, fixed_mods[unit.qualname][0])
            fixed_models[unit.qualname] = twin
            result["units"][unit.qualname] = {
                "executed": False, "fixed_executed": False, "outcomes": {}, "inputs": 0, "mismatches": [], "notes": [],
            }
        all_tests = [t for u in job.units for t in u.tests]
        first_ok: Optional[Tuple[tuple, Dict[str, Any]]] = None
        first_ok_run: Optional[_Run] = None
        raising: List[Tuple[str, Tuple[tuple, Dict[str, Any]], _Run]] = []  # inputs the original raised on
        tried = 0
        for name, kind in VARIANTS:
            stage(f"inputs: {name}")
            made = _variant(kind, args, kwargs)
            if made is None:
                continue
            o_model = copy.deepcopy(model)
            if kind.startswith(PARAM_KIND) and not perturb_parameters(o_model, kind):
                continue
            tried += 1
            o_run = _run_model(o_model, *copy.deepcopy(made), _Tracer(job.path, all_tests), original)
            if o_run.error is None and first_ok is None and not kind.startswith(PARAM_KIND):
                first_ok, first_ok_run = made, o_run
            if o_run.error is not None and not kind.startswith(PARAM_KIND) and len(raising) < MAX_RAISING:
                raising.append((name, made, o_run))
            for unit in job.units:
                if unit.qualname not in fixed_models:
                    continue
                rec = result["units"][unit.qualname]
                if rec["mismatches"]:
                    continue  # rejected already: one input's evidence is enough
                lo, hi = unit.orig_span
                wanted = set(unit.replaced)
                reached = any(ln in wanted for ln in o_run.lines) if wanted else any(lo <= ln <= hi for ln in o_run.lines)
                f_path = fixed_mods[unit.qualname][1]
                f_model = copy.deepcopy(fixed_models[unit.qualname])
                if kind.startswith(PARAM_KIND):
                    perturb_parameters(f_model, kind)
                f_run = _run_model(f_model, *copy.deepcopy(made), _Tracer(f_path), fixed_mods[unit.qualname][0])
                f_lo, f_hi = unit.fixed_span
                f_reached = any(f_lo <= ln <= f_hi for ln in f_run.lines)
                rec["executed"] = rec["executed"] or reached
                rec["fixed_executed"] = rec["fixed_executed"] or f_reached
                if reached or f_reached:
                    rec["inputs"] += 1
                    if o_run.error is None:
                        rec["returned"] = rec.get("returned", 0) + 1
                    elif not rec.get("first_error"):
                        rec["first_error"] = _exc_text(o_run.error)
                    for t in unit.tests:
                        got = o_run.outcomes.get(t.start)
                        if got:
                            rec["outcomes"].setdefault(str(t.start), [])
                            rec["outcomes"][str(t.start)] = sorted(set(rec["outcomes"][str(t.start)]) | got)
                    rec["mismatches"].extend(compare_runs(f"input '{name}'", o_run, f_run)[:MAX_EVIDENCE])
            done = all(
                result["units"][u.qualname]["mismatches"]
                or all(set(result["units"][u.qualname]["outcomes"].get(str(t.start), [])) == {False, True} for t in u.tests if t.observable)
                for u in job.units if u.qualname in fixed_models
            )
            if done and tried >= MIN_VARIANTS:
                break

        stage("compile")
        if first_ok is None:
            result["notes"].append("not compiled: the original raised on every input")
        else:
            config = dict(job.dynamo_config)
            try:
                dynamo.graph_breaks(copy.deepcopy(model), *copy.deepcopy(first_ok), config=config)
                orig_compiles: Optional[str] = None
            except Exception as exc:
                orig_compiles = _exc_text(exc)
            for unit in job.units:
                if unit.qualname not in fixed_models:
                    continue
                rec = result["units"][unit.qualname]
                if not rec["fixed_executed"] or rec["mismatches"]:
                    continue
                f_path = os.path.abspath(fixed_mods[unit.qualname][1])
                try:
                    breaks = dynamo.graph_breaks(copy.deepcopy(fixed_models[unit.qualname]), *copy.deepcopy(first_ok), config=config)
                except Exception as exc:
                    if orig_compiles is None:
                        rec["mismatches"].append(f"compiling the fixed code raised {_exc_text(exc)} (the original compiles)")
                    else:
                        rec["notes"].append(f"compile check not possible: the original does not compile either ({orig_compiles})")
                    continue
                lo, hi = unit.fixed_span
                written = set(unit.rewritten)
                for gb in breaks:
                    if os.path.abspath(gb.filename) == f_path and gb.lineno in written:
                        rec["mismatches"].append(
                            f"graph break left in the fixed function, at its line {gb.lineno - lo + 1} "
                            f"(line {gb.lineno} of the fixed file): {gb.reason}"
                        )
                if unit.check_ops and not rec["mismatches"]:
                    stage(f"compile: {unit.qualname} (inductor)")
                    assert first_ok_run is not None
                    rec["mismatches"].extend(
                        compiled_check_runs(fixed_models[unit.qualname], first_ok, first_ok_run, raising, config)[:MAX_EVIDENCE]
                    )
                    if not raising:
                        rec["notes"].append("compiled run: no input made the original raise")
        stage("done")
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


__all__ = [
    "BranchTest",
    "MAX_EVIDENCE",
    "NO_TORCH",
    "REJECTED",
    "STATUSES",
    "UNVERIFIABLE",
    "UnitSpec",
    "PARAM_KIND",
    "VARIANTS",
    "VERIFIED",
    "Verdict",
    "VerifyJob",
    "VerifyUnavailable",
    "compare_runs",
    "compiled_check_runs",
    "format_verdict",
    "perturb_parameters",
    "function_units",
    "keep_verified",
    "plan_verify_jobs",
    "require_torch",
    "revert_units",
    "rewritten_units",
    "run_verify_job",
    "summary_line",
    "torch_available",
    "unit_of_symbol",
    "verdicts",
]
