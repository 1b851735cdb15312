"""``pt2lint fix`` and ``pt2lint check --fix``: apply the codemods of :mod:`pt2lint.fixes`.

``pt2lint fix [PATHS|-] [--rule SEL ...] [--diff] [--unsafe-fixes]`` lints the
files, applies every selected fix (safe ones; unsafe ones too with
``--unsafe-fixes``; display-only ones never), lints again until nothing
changes, writes each changed file atomically, and prints the findings that are
left -- with the reason when a codemod refused.  ``--diff`` prints a unified
diff instead and writes nothing.  ``-`` reads stdin and prints the fixed code.

``--rule`` takes a code (``PTC104``), a prefix (``PTC1``), a rule name
(``data-dependent-branch``) or a codemod name (``cond``, ``where``,
``out-of-place``, ``scalar-tensor``, ``guard``); several are combined.  The
findings a run is about -- those it reports and that decide the exit code --
are the ones the selectors match (for a codemod name: the findings that
codemod handles or refused).

Exit codes: 0 nothing left, 1 findings left (or, with ``--diff``, changes
would be made), 2 a file could not be read, parsed or written, or a usage error.

Importing this module (``pt2lint.cli`` does, at its end) registers ``fix`` and
adds ``--fix``/``--unsafe-fixes`` to ``check``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

import click

from pt2lint.diagnostics import Applicability, Diagnostic, Position

FIX_HELP = (
    "Apply pt2lint's codemods to PATHS (files or directories; default: .; '-' reads stdin and prints the "
    "fixed code): torch.cond / torch.where for data-dependent branches, out-of-place writes, 0-d tensors "
    "instead of .item(), is_compiling() guards for prints and logging. Safe fixes only, unless --unsafe-fixes."
)


@dataclass(frozen=True)
class RuleSelection:
    """What ``--rule`` selected.

    Attributes:
        codes: rule codes selected by code, prefix or rule name.
        names: codemods selected by name.
    """

    codes: FrozenSet[str] = frozenset()
    names: FrozenSet[str] = frozenset()

    @property
    def everything(self) -> bool:
        """No ``--rule`` was given: every fix and finding is selected."""
        return not self.codes and not self.names

    def names_for(self, d: Diagnostic) -> Optional[List[str]]:
        """Codemods allowed for ``d`` (``None``: all of them)."""
        from pt2lint.fixes import CODEMOD_CODES

        if self.everything or d.code in self.codes:
            return None
        return [n for n in sorted(self.names) if d.code in CODEMOD_CODES[n]]

    def in_scope(self, d: Diagnostic) -> bool:
        """Whether the run is about ``d``: reported, and counted for the exit code."""
        if self.everything or d.code in self.codes:
            return True
        return d.fix is not None and d.fix.name in self.names


def parse_rule_selection(values: Sequence[str]) -> RuleSelection:
    """Resolve ``--rule`` values (repeatable, comma-separated).

    Raises:
        click.UsageError: a value is neither a codemod name nor a rule selector.
    """
    from pt2lint.fixes import FIX_NAMES
    from pt2lint.settings import SelectionError, resolve_selector, suggest_selector

    codes: set = set()
    names: set = set()
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            if part.lower() in FIX_NAMES:
                names.add(part.lower())
                continue
            try:
                codes |= resolve_selector(part)
            except SelectionError:
                raise click.UsageError(
                    f"unknown --rule {part!r}{suggest_selector(part)} (expected a codemod: {', '.join(FIX_NAMES)}; or a rule code, prefix or name)"
                ) from None
    return RuleSelection(frozenset(codes), frozenset(names))


@dataclass
class FileFix:
    """The result of fixing one file in a worker.

    Attributes:
        path: the file.
        src: how it was read (``None`` on error).
        text: the fixed text.
        applied: number of fixes applied.
        remaining: findings left, in scope of the selection.
        unsafe_left: of those, how many have an unsafe fix that was not applied.
        error: one-line reason the file could not be fixed.
        before: when fixes changed the text, the in-scope findings of the text as
            read (what is left if the fixed text is not written); else ``None``.
        used_suppressions: the suppressions in other files that the analysis of the
            text reported used (``before_used``: those of the text as read); another file's
            unused-suppression finding about one of them is not left.
        unwritten: the fixed text is not written (see :meth:`keep_original`).
    """

    path: str
    src: Any = None
    text: str = ""
    applied: int = 0
    remaining: Tuple[Diagnostic, ...] = ()
    unsafe_left: int = 0
    error: Optional[str] = None
    verify_units: Any = None
    verify_fixes: Any = None
    before: Optional[Tuple[Diagnostic, ...]] = None
    used_suppressions: Tuple[Tuple[str, int, str], ...] = ()
    before_used: Tuple[Tuple[str, int, str], ...] = ()
    unwritten: bool = False

    @property
    def changed(self) -> bool:
        """Whether fixes changed the file's text."""
        return self.src is not None and self.applied > 0 and self.text != self.src.text

    def keep_original(self) -> None:
        """The fixed text will not be written: the file stays as it was read, no fix counts, and
        the findings left are those of the text as read (at its lines), not of the fixed text."""
        if self.src is None:
            return
        if self.before is not None:
            self.remaining = self.before
            self.unsafe_left = _unsafe_count(self.before)
            self.used_suppressions = self.before_used
        self.text, self.applied, self.unwritten = self.src.text, 0, True


def _unsafe_count(remaining: Sequence[Diagnostic]) -> int:
    """How many of ``remaining`` have an unsafe fix with edits (applied only with ``--unsafe-fixes``)."""
    return sum(1 for d in remaining if d.fix is not None and d.fix.applicability is Applicability.UNSAFE and d.fix.edits)


def _selector(selection: RuleSelection, unsafe: bool):
    from pt2lint.fixes.apply import applicable

    def select(d: Diagnostic) -> bool:
        return d.fix is not None and applicable(d.fix, unsafe) and (selection.everything or d.code in selection.codes or d.fix.name in selection.names)

    return select


def stdin_output(result: "FileFix", data: bytes) -> Tuple[bytes, Optional[str]]:
    """``(bytes fix - prints, problem or None)`` for stdin read as ``data``.

    Nothing fixed: ``data`` itself, byte for byte (a BOM, a coding line's encoding and
    the line endings are kept).  Fixed: the new text encoded as the input was
    (:func:`pt2lint.fixes.apply.encode_file`: same encoding, same BOM); when it cannot
    be, ``data`` unchanged and the reason.
    """
    from pt2lint.fixes.apply import FixError, encode_file

    if result.src is None or not result.changed:
        return data, None
    try:
        return encode_file(result.src, result.text), None
    except FixError as exc:
        return data, str(exc)


def _echo_bytes(data: bytes, what: str) -> None:
    """Write ``data`` to stdout as bytes (source code goes back in its own encoding).

    Raises:
        CliError: stdout is closed or the write fails, as :func:`pt2lint.cli.echo_report` says.
    """
    from pt2lint.cli import CliError

    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        raise CliError(f"cannot write {what} to standard output: standard output is closed")
    try:
        click.echo(data, nl=False)  # click writes bytes to the binary stream under stdout
        stream.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:  # ValueError: a stream closed under us
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise CliError(f"cannot write {what} to standard output: {reason.lower()}") from None


def fix_one(path: str, relpath: str, settings, selection: RuleSelection, unsafe: bool, data: Optional[bytes] = None) -> FileFix:
    """Read (or take ``data``), fix and report one file; never raises for the file's own problems.

    Args:
        path: the file (or the name of stdin).
        relpath: path relative to the project root, for per-file ignores.
        settings: the lint settings.
        selection: ``--rule``.
        unsafe: apply unsafe fixes too.
        data: the bytes, when already read (stdin).
    """
    from pt2lint.fixes.apply import FixError, decode_file, fix_text, read_file

    try:
        src = decode_file(data) if data is not None else read_file(path, getattr(settings, "max_file_size", None))
        outcome = fix_text(src.text, path, settings, relpath=relpath, select_fix=_selector(selection, unsafe), names_for=selection.names_for)
    except FixError as exc:
        return FileFix(path, error=f"{path}: {exc}")
    except RecursionError:
        return FileFix(path, error=f"{path}: code nested too deeply to fix")
    except Exception as exc:  # a codemod bug must not stop the run or touch the file
        return FileFix(path, error=f"{path}: internal error while fixing: {type(exc).__name__}: {exc}")
    remaining = tuple(d for d in outcome.remaining if selection.in_scope(d))
    before = tuple(d for d in outcome.first if selection.in_scope(d)) if outcome.text != src.text else None
    return FileFix(
        path, src, outcome.text, len(outcome.applied), remaining, _unsafe_count(remaining), before=before,
        used_suppressions=outcome.used, before_used=outcome.first_used,
    )


def _worker(args) -> FileFix:
    return fix_one(*args)


def _died(item) -> FileFix:
    path = item[0]
    return FileFix(path, error=f"{path}: internal error: the process fixing this file died (a crash in native code, or out of memory); not fixed")


def cache_dir_for(project, options: Dict[str, Any]) -> Optional[str]:
    """The result cache ``fix`` reads: ``--cache-dir``, else ``$PT2LINT_CACHE_DIR`` or the project's
    ``.pt2lint_cache``; ``None`` with ``--no-cache``."""
    if options.get("no_cache"):
        return None
    from pt2lint.cache import default_cache_dir

    return options.get("cache_dir") or default_cache_dir(project.root)


def _unfixable_from_cache(files, project, selection: RuleSelection, cache_dir: str) -> Dict[str, FileFix]:
    """Files the result cache shows to have nothing any codemod could rewrite, as finished results.

    A cached result (keyed by the file's bytes and place, pt2lint's version and the settings, and valid
    while every file its analysis read is unchanged, as for ``check``) whose findings are all
    of rules no codemod handles cannot change under ``fix``, whatever ``--rule`` says; its
    in-scope findings are reported as left.  Any other file is fixed as usual.
    """
    from pt2lint.cache import DependencyHashes, ResultCache
    from pt2lint.fixes import FIXABLE_CODES

    from pt2lint.reading import DEFAULT_MAX_BYTES, read_bytes

    settings = project.settings
    cache = ResultCache(cache_dir, settings)
    current = DependencyHashes()
    out: Dict[str, FileFix] = {}
    for f in files:
        try:  # regular files only, within the size limit (what the worker would read)
            data = read_bytes(f.path, max_bytes=getattr(settings, "max_file_size", DEFAULT_MAX_BYTES))
        except OSError:
            continue
        hit = cache.get(cache.key_for(data, f.path, f.relpath), f.path, data, current)
        if hit is None:
            continue
        if any(d.code in FIXABLE_CODES for d in hit.diagnostics):
            continue
        remaining = tuple(d for d in hit.diagnostics if selection.in_scope(d))
        out[f.path] = FileFix(f.path, None, "", 0, remaining, 0, used_suppressions=hit.used_suppressions)
    return out


def fix_files(
    files, project, selection: RuleSelection, unsafe: bool, jobs: Optional[int] = None, cache_dir: Optional[str] = None
) -> Iterator[FileFix]:
    """Fix ``files`` (discovery results) in worker processes; yields results in input order (nothing written).

    With ``cache_dir``, files whose cached ``check`` result has no finding a codemod could
    rewrite are not re-analysed (see :func:`_unfixable_from_cache`); nothing is written to the cache.
    A worker that dies costs only the file it was fixing (an error result); the others are
    fixed in fresh processes, so no finished work is lost and the run never hangs.  Ctrl-C
    cancels the files not yet started (see :func:`pt2lint.pool.ordered_map`).
    """
    known = _unfixable_from_cache(files, project, selection, cache_dir) if cache_dir else {}
    work = [(f.path, f.relpath, project.settings, selection, unsafe) for f in files if f.path not in known]
    from pt2lint.pool import ordered_map

    computed = ordered_map(_worker, work, jobs, _died)
    for f in files:
        yield known[f.path] if f.path in known else next(computed)


def _fixes_by_unit(result: FileFix, settings, relpath: str, selection: RuleSelection, unsafe: bool) -> Dict[str, List[str]]:
    """``{unit: ["PTC104:22", ...]}``: the selected fixable findings of the original text, by function."""
    from pt2lint.confirm.verify import unit_of_symbol
    from pt2lint.engine import lint_source

    select = _selector(selection, unsafe)
    out: Dict[str, List[str]] = {}
    try:
        found = lint_source(result.src.text, result.path, settings, relpath=relpath, fix_names=selection.names_for)
    except Exception:  # the counts are for the report only
        return out
    for d in found.diagnostics:
        unit = unit_of_symbol(d.symbol)
        if unit and d.fix is not None and d.fix.edits and select(d):
            out.setdefault(unit, []).append(f"{d.code}:{d.start.line}")
    return out


def verify_fixes(results: Sequence[FileFix], files, project, options: Dict[str, Any], selection: RuleSelection, unsafe: bool):
    """``--verify``: run each rewritten function against the original in child processes with torch,
    and keep only the rewrites that pass (:mod:`pt2lint.confirm.verify`).

    Changes ``results`` in place: a file's ``text`` loses every rewrite not verified, and
    ``applied`` counts the fixes kept.

    Returns:
        The :class:`~pt2lint.confirm.verify.Verdict` objects, sorted by path and line.

    Raises:
        CliError: torch is not installed, or a configured factory / inputs name no file defines.
        SystemExit: SIGTERM/SIGHUP stopped the children.
    """
    from pt2lint.cli import CliError
    from pt2lint.commands.confirm import _settings
    from pt2lint.confirm.plan import PlanError
    from pt2lint.confirm.runner import Terminated, run_jobs
    from pt2lint.confirm.verify import (
        UNVERIFIABLE, Verdict, VerifyUnavailable, keep_verified, plan_verify_jobs, require_torch, rewritten_units, run_verify_job, verdicts,
    )

    try:
        require_torch()
    except VerifyUnavailable as exc:
        raise CliError(str(exc)) from None
    relpaths = {f.path: f.relpath for f in files}
    changed = [r for r in results if r.error is None and r.changed]
    out: List[Verdict] = []
    planned = []
    for r in changed:
        try:
            units, problems = rewritten_units(r.src.text, r.text)
        except SyntaxError:
            units, problems = [], ["the fixed text does not parse"]
        r.verify_units = units
        r.verify_fixes = _fixes_by_unit(r, project.settings, relpaths.get(r.path, r.path), selection, unsafe)
        if problems:
            out.append(Verdict(r.path, "<module>", 1, UNVERIFIABLE, problems[0] + "; the file is not fixed", problems[1:]))
            r.verify_units = []
            r.keep_original()
            continue
        if units:
            planned.append((os.path.abspath(r.path), r.path, relpaths.get(r.path, r.path), r.src.text, tuple(units)))
    settings = _settings(project, options)
    try:
        jobs, unplanned = plan_verify_jobs(planned, settings, project.settings)
    except PlanError as exc:
        raise CliError(str(exc)) from None
    try:
        outcomes = run_jobs(jobs, parallel=settings.jobs, run=run_verify_job)
    except Terminated as exc:
        click.echo(f"error: --verify stopped by {exc}: its child processes were killed", err=True)
        raise SystemExit(128 + exc.signum) from None
    by_path: Dict[str, list] = {}
    for o in outcomes:
        by_path.setdefault(o.job.path, []).append(o)
    for r in changed:
        units = getattr(r, "verify_units", [])
        if not units:
            continue
        path = os.path.abspath(r.path)
        found = verdicts(path, r.path, units, by_path.get(path, []), r.verify_fixes, unplanned.get(path, []))
        out.extend(found)
        kept = keep_verified(r.src.text, r.text, found)
        if kept != r.text:  # the reverted functions' findings are left again
            from pt2lint.engine import lint_source

            r.text = kept
            again = lint_source(kept, r.path, project.settings, relpath=relpaths.get(r.path, r.path), fix_names=selection.names_for)
            r.remaining = tuple(d for d in again.diagnostics if selection.in_scope(d))
            r.unsafe_left = 0
        r.applied = sum(max(1, len(v.fixes)) for v in found if v.status == "verified")
    return sorted(out, key=lambda v: (v.path, v.line, v.unit))


def _on_original_lines(d: Diagnostic, old: str, new: str) -> Diagnostic:
    """``d``, found in the fixed text ``new``, moved to the matching lines of ``old`` (a line of a
    rewritten block maps to the first line of the block it replaced)."""
    from pt2lint.fixes.edits import split_keepends

    matcher = difflib.SequenceMatcher(None, split_keepends(old), split_keepends(new), autojunk=False)
    mapping = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            mapping[j + 1] = (i1 + (j - j1) + 1) if tag == "equal" else i1 + 1

    def move(pos: Position) -> Position:
        line = mapping.get(pos.line, pos.line)
        return Position(line, pos.column) if line != pos.line else pos

    start, end = move(d.start), move(d.end)
    if end < start:
        end = start
    lines = d.statement_lines
    if lines is not None:
        lines = (mapping.get(lines[0], lines[0]), max(mapping.get(lines[1], lines[1]), mapping.get(lines[0], lines[0])))
    return dataclasses.replace(d, start=start, end=end, statement_lines=lines)


def unified_diff(path: str, old: str, new: str) -> str:
    """A ``diff -u`` of one file (``a/PATH`` -> ``b/PATH``) that ``patch`` and ``git apply`` take.

    Lines are split at ``\\n`` only, as those tools split them: a lone ``\\r`` (a line break for
    CPython) stays inside its line, so a file with old Mac line endings gives a diff that applies
    byte for byte instead of one whose lines end without a newline."""
    from pt2lint.reading import printable

    shown = printable(path)  # a name with a newline would end the header line
    lines = difflib.unified_diff(_newline_lines(old), _newline_lines(new), fromfile=f"a/{shown}", tofile=f"b/{shown}")
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _newline_lines(text: str) -> List[str]:
    """``text`` cut after each ``\\n`` (the last piece may have none)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def describe(d: Diagnostic, unsafe: bool, verdict: Optional[str] = None, unwritten: bool = False) -> str:
    """A remaining finding as text: the ``check`` line, then why its fix was not applied.

    ``verdict`` is the ``--verify`` status of the finding's function (``rejected``,
    ``unverifiable``), when that is why its fix was not kept; ``unwritten``: the finding's
    file was not written (read-only, a link out of the project, ...).
    """
    from pt2lint.fixes.apply import applicable
    from pt2lint.reporters.text import format_line

    line = format_line(d)
    fix = d.fix
    if fix is None:
        return line + "\n"
    if unwritten and fix.edits and applicable(fix, unsafe):
        return f"{line}\n  = {fix.name}: {fix.message} (not applied: the file was not written)\n"
    if verdict is not None and fix.edits and fix.applicability is not Applicability.DISPLAY_ONLY:
        return f"{line}\n  = {fix.name}: {fix.message} (not applied: --verify found the rewrite of this function {verdict})\n"
    if fix.applicability is Applicability.DISPLAY_ONLY or not fix.edits:
        return f"{line}\n  = {fix.name}: {fix.message}\n"
    if fix.applicability is Applicability.UNSAFE and not unsafe:
        return f"{line}\n  = {fix.name} (unsafe, apply with --unsafe-fixes): {fix.message}\n"
    return f"{line}\n  = {fix.name}: {fix.message} (not applied: it overlaps another fix or did not converge)\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def run_fix(paths: Tuple[str, ...], options: Dict[str, Any]) -> int:
    """The body of ``pt2lint fix``; returns the exit code.

    Raises:
        CliError, ConfigError, click.UsageError: bad options or config (exit 2 via ``guarded``).
    """
    from pt2lint.cli import (
        EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, STDIN, CliError, echo_discovery_warnings, echo_error, echo_report,
        project_from_options, read_stdin,
    )
    from pt2lint.discovery import discover, project_relpath
    from pt2lint.fixes.apply import FixError, write_fixed

    started = time.perf_counter()
    selection = parse_rule_selection(options.get("rule") or ())
    unsafe = bool(options.get("unsafe_fixes"))
    show_diff = bool(options.get("diff"))
    quiet = bool(options.get("quiet"))
    stdin_filename = options.get("stdin_filename")
    if STDIN in paths and len(paths) > 1:
        raise CliError("'-' (stdin) cannot be combined with other paths")
    use_stdin = paths == (STDIN,) or (not paths and stdin_filename is not None)
    verify = bool(options.get("verify"))
    as_json = options.get("output_format") == "json"
    verified: List[Any] = []
    if verify:
        from pt2lint.confirm.verify import VerifyUnavailable, require_torch

        if use_stdin:
            raise CliError("--verify imports the fixed module, so it needs files, not stdin")
        try:
            require_torch()
        except VerifyUnavailable as exc:
            raise CliError(str(exc)) from None
    if as_json and use_stdin:
        raise CliError("--output-format json reports on files; with stdin the fixed code is the output")

    errors: List[str] = []
    results: List[FileFix] = []
    if use_stdin:
        name = stdin_filename or STDIN
        project = project_from_options([name] if stdin_filename else [], options)
        data = read_stdin(getattr(project.settings, "max_file_size", None))
        relpath = project_relpath(name, project.root) if name != STDIN else STDIN
        result = fix_one(name, relpath, project.settings, selection, unsafe, data=data)
        results.append(result)
        if result.error is not None:
            errors.append(result.error)
            if not show_diff:
                _echo_bytes(data, what="the code")  # unchanged code back
        elif show_diff:
            if result.changed:
                echo_report(unified_diff(name, result.src.text, result.text), what="the diff")
        else:
            out, problem = stdin_output(result, data)
            if problem is not None:
                errors.append(f"{name}: {problem}")
            _echo_bytes(out, what="the fixed code")
        report_stream_err = True
    else:
        project = project_from_options(paths or (".",), options)
        found = discover(paths or (".",), project.discovery)
        errors.extend(found.errors)
        echo_discovery_warnings(found, quiet)
        if not found.files and not found.errors and not quiet:
            click.echo("warning: no Python files found under the given paths", err=True)
        fixed_files = fix_files(found.files, project, selection, unsafe, options.get("jobs"), cache_dir_for(project, options))
        if verify:  # nothing is written until the rewrites are proven
            fixed_files = list(fixed_files)
            verified = verify_fixes(fixed_files, found.files, project, options, selection, unsafe)
        for result in fixed_files:
            results.append(result)
            if result.error is not None:
                errors.append(result.error)
                continue
            if not result.changed:
                continue
            if show_diff:
                if not as_json:
                    echo_report(unified_diff(result.path, result.src.text, result.text), what="the diff")
                continue
            try:
                write_fixed(result.path, result.src, result.text, project.root)
            except FixError as exc:
                errors.append(f"{result.path}: {exc}")
                result.keep_original()  # report the file as it is on disk
        report_stream_err = show_diff

    used = {u for r in results if r.error is None for u in r.used_suppressions}
    if used:  # a suppression another file's analysis used is not unused
        from pt2lint.engine import suppression_used_elsewhere

        for r in results:
            if r.error is None:
                r.remaining = tuple(d for d in r.remaining if not suppression_used_elsewhere(d, used))
    if show_diff:
        # Nothing was written: report what is left at the lines of the files as they are on disk.
        for r in results:
            if r.error is None and r.changed:
                r.remaining = [_on_original_lines(d, r.src.text, r.text) for d in r.remaining]
    remaining = sorted((d for r in results if r.error is None for d in r.remaining), key=Diagnostic.sort_key)
    changed = [r for r in results if r.error is None and r.changed]
    applied = sum(r.applied for r in changed)
    if as_json:
        echo_report(json_report(results, remaining, verified if verify else None, project, show_diff), nl=True)
    else:
        from pt2lint.confirm.verify import unit_of_symbol

        unproven = {(v.path, v.unit): v.status for v in verified if v.status != "verified"}
        unwritten = {r.path for r in results if r.error is None and r.unwritten}
        report = "".join(
            describe(d, unsafe, unproven.get((d.filename, unit_of_symbol(d.symbol) or "")), d.filename in unwritten) for d in remaining
        )
        if report and (use_stdin or report_stream_err):
            click.echo(report, nl=False, err=True)
        elif report:
            echo_report(report)
        if verify:
            from pt2lint.confirm.verify import format_verdict

            click.echo("".join(format_verdict(v) for v in verified), nl=False, err=True)
    for message in errors:
        echo_error(message)
    if verify and not quiet:
        from pt2lint.confirm.verify import summary_line

        click.echo(summary_line(verified), err=True)
    if not quiet:
        verb = "Would fix" if show_diff else "Fixed"
        head = f"{verb} {_plural(applied, 'finding')} in {_plural(len(changed), 'file')}"
        left = f"{_plural(len(remaining), 'finding')} left" if remaining else "nothing left"
        unsafe_left = sum(r.unsafe_left for r in results if r.error is None)
        hint = f" ({unsafe_left} with an unsafe fix: --unsafe-fixes)" if unsafe_left and not unsafe else ""
        errs = f"; {_plural(len(errors), 'path')} could not be fixed" if errors else ""
        click.echo(f"{head}; {left}{hint}{errs} ({time.perf_counter() - started:.2f}s).", err=True)
    if errors:
        return EXIT_ERROR
    if show_diff and changed:
        return EXIT_FINDINGS
    return EXIT_FINDINGS if remaining else EXIT_CLEAN


def json_report(results: Sequence[FileFix], remaining: Sequence[Diagnostic], verified: Optional[Sequence[Any]], project, show_diff: bool) -> str:
    """``fix --output-format json``: files changed, findings left and, with ``--verify``, one entry per
    rewritten function and the counts (keys sorted, so the same run gives the same bytes)."""
    from pt2lint.reporters import ReportContext
    from pt2lint.reporters.json import diagnostic_to_dict

    context = ReportContext()
    doc: Dict[str, Any] = {
        "mode": "diff" if show_diff else "write",
        "files": [
            {"path": r.path, "fixes_applied": r.applied} for r in results if r.error is None and r.changed
        ],
        "errors": [r.error for r in results if r.error is not None],
        "remaining": [diagnostic_to_dict(d, context) for d in remaining],
    }
    if verified is not None:
        from pt2lint.confirm.verify import STATUSES

        doc["verify"] = {
            "functions": [v.as_dict() for v in verified],
            "counts": {s: sum(1 for v in verified if v.status == s) for s in STATUSES},
        }
    return json.dumps(doc, indent=2, sort_keys=True)


def fix_before_check(files, project, options: Dict[str, Any]) -> List[str]:
    """``check --fix``: apply the selected fixes to ``files`` and write them; returns error lines.

    ``check`` then lints the fixed files and reports what is left as usual.
    """
    from pt2lint.fixes.apply import FixError, write_fixed

    errors: List[str] = []
    selection = RuleSelection()
    cache_dir = cache_dir_for(project, options)
    unsafe = bool(options.get("unsafe_fixes"))
    fixed_files = fix_files(files, project, selection, unsafe, options.get("jobs"), cache_dir)
    if options.get("verify"):
        from pt2lint.confirm.verify import format_verdict, summary_line

        fixed_files = list(fixed_files)
        verified = verify_fixes(fixed_files, files, project, options, selection, unsafe)
        click.echo("".join(format_verdict(v) for v in verified) + summary_line(verified), err=True)
    for result in fixed_files:
        if result.error is not None:
            errors.append(result.error)
        elif result.changed:
            try:
                write_fixed(result.path, result.src, result.text, project.root)
            except FixError as exc:
                errors.append(f"{result.path}: {exc}")
    return errors


def _install() -> None:
    """Register ``pt2lint fix`` and add ``--fix``/``--unsafe-fixes`` to ``check``."""
    from pt2lint import cli as cli_module
    from pt2lint.cli import config_options, discovery_options, guarded, selection_options

    check = cli_module.check
    if not any(p.name == "fix" for p in check.params):
        check.params.extend([
            click.Option(["--fix"], is_flag=True, default=False, help="Apply safe fixes (and unsafe ones with --unsafe-fixes), then report what is left."),
            click.Option(["--unsafe-fixes"], is_flag=True, default=False, help="With --fix: apply unsafe fixes too."),
            click.Option(["--verify"], is_flag=True, default=False, help="With --fix: run each rewritten function against the original under torch and keep only the rewrites proven equivalent (needs the confirm extra)."),
        ])
    if "fix" in cli_module.cli.commands:
        return

    @click.command("fix", help=FIX_HELP, short_help="Apply codemods that remove graph breaks (safe fixes unless --unsafe-fixes).")
    @click.argument("paths", nargs=-1, type=click.Path(readable=False))
    @click.option("--rule", multiple=True, metavar="SEL", help="Only these fixes: a codemod (cond, where, out-of-place, scalar-tensor, guard), a rule code, prefix or name; comma-separated, repeatable.")
    @click.option("--diff", is_flag=True, help="Print a unified diff of the fixes and write nothing (exit 1 when there would be changes).")
    @click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that can change behaviour for some caller.")
    @click.option("--verify", is_flag=True, help="Run each rewritten function and the original under torch (child processes) on inputs that take each branch; write only the rewrites whose outputs, gradients and buffers match and that compile without the break (needs the confirm extra).")
    @click.option("--timeout", type=click.FloatRange(min=1), default=None, metavar="SECONDS", help="[--verify] seconds per model (default: [tool.pt2lint.confirm] timeout, else confirm's default).")
    @click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True, help="json: one object with the files fixed, the findings left and the --verify verdicts.")
    @selection_options
    @discovery_options
    @config_options
    @click.option("-q", "--quiet", is_flag=True, help="Print remaining findings and errors only, no summary.")
    @click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, help="Worker processes (default: one per CPU; 0 = auto).")
    @click.option("--stdin-filename", metavar="PATH", help="The name of the file read from stdin (for per-file-ignores and messages).")
    @click.option("--no-cache", is_flag=True, help="Do not read the result cache (by default, files whose cached check result has nothing a codemod could fix are not re-analysed).")
    @click.option("--cache-dir", type=click.Path(file_okay=False), default=None, help="Cache directory (default: $PT2LINT_CACHE_DIR or .pt2lint_cache in the project root).")
    @guarded
    def fix(paths: Tuple[str, ...], **options: Any) -> int:
        """See :data:`FIX_HELP` and :func:`run_fix`."""
        return run_fix(paths, options)

    cli_module.cli.add_command(fix)


_install()

__all__ = ["FIX_HELP", "FileFix", "RuleSelection", "describe", "fix_before_check", "fix_files", "fix_one", "parse_rule_selection", "run_fix", "unified_diff"]
