"""The ``pt2lint`` command line.

``pt2lint check PATHS`` lints files and prints findings like ruff;
``pt2lint rule CODE`` explains a rule.  Exit codes: 0 clean, 1 findings,
2 usage, config, read or internal error.  Nothing here prints a traceback:
every failure becomes one ``error: ...`` line on stderr.

Adding a command: decorate a function with ``@cli.command()``, reuse the
option decorators (:func:`config_options`, :func:`selection_options`,
:func:`discovery_options`), build settings with :func:`project_from_options`,
and wrap the body in :func:`guarded` so errors become exit code 2.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from dataclasses import replace
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import click

from pt2lint import __version__
from pt2lint.config import ConfigError, Overrides, Project, load_project
from pt2lint.diagnostics import Diagnostic, FileResult
from pt2lint.discovery import SourceFile, discover, is_excluded, project_relpath
from pt2lint.reporters import REPORTERS, ReportContext, get_reporter
from pt2lint.reporters.statistics import render_statistics_json, render_statistics_text
from pt2lint.reporters.text import RunStats, summary_line
from pt2lint.specs import TARGETS, RuleSpec, SpecError, load_specs

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

STDIN = "-"


class CliError(Exception):
    """A usage problem the command reports as one ``error:`` line and exit code 2."""


def echo_report(text: str, what: str = "the report", nl: bool = False) -> None:
    """Print a report (or ``what`` else the command's output is) on stdout as is, and flush it.

    As is: exactly what ``--output-file`` would write. click's ANSI stripping (which
    drops escape sequences when stdout is not a terminal) is turned off: a report is
    escaped by its format (the human ones escape control characters, github
    percent-encodes them), and stripping would change a file name in it into one
    that does not exist.

    A file name that is not valid UTF-8 reaches us with surrogate escapes, which a
    strict stdout (a UTF-8 locale) cannot encode; what the stream cannot encode is
    printed as a backslash escape (``\\udcff``: a valid JSON string escape too)
    instead of failing the run.

    Raises:
        CliError: stdout is closed (``>&-``) or the write fails (a full disk: ``ENOSPC``,
            an I/O error): ``cannot write <what> to standard output: <reason>``.
        BrokenPipeError: the reader went away (``| head``); :func:`main` ends quietly.
    """
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        raise CliError(f"cannot write {what} to standard output: standard output is closed")
    try:
        try:
            click.echo(text, nl=nl, color=True)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "utf-8"
            click.echo(text.encode(encoding, "backslashreplace").decode(encoding), nl=nl, color=True)
        stream.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:  # ValueError: a stream closed under us
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        # what the failed flush left in the buffer would be written again when the interpreter
        # exits, fail again, and turn the exit status into 120 (a buffered stdout: the default
        # unless PYTHONUNBUFFERED is set)
        _silence_stdout()
        raise CliError(f"cannot write {what} to standard output: {reason.lower()}") from None


def echo_error(message: str) -> None:
    """Print ``error: <message>`` on stderr, on one line, control characters escaped (a file
    name holding a newline or a terminal escape prints as ``\\n`` / ``\\x1b``)."""
    from pt2lint.reading import printable

    click.echo(f"error: {' '.join(printable(str(message)).split())}", err=True)


def echo_discovery_warnings(found, quiet: bool) -> None:
    """Print ``warning: <message>`` on stderr for each ``.gitignore`` discovery could not use
    (its patterns were not applied, so files it names may be linted), unless ``quiet``."""
    from pt2lint.reading import printable

    if quiet:
        return
    for message in found.warnings:
        click.echo(f"warning: {' '.join(printable(message).split())}", err=True)


def guarded(fn: Callable[..., int]) -> Callable[..., None]:
    """Run a command body that returns an exit code; turn every failure into ``error: ...`` and exit 2.

    Config, selection, spec and usage errors print their own message; any other
    exception prints ``error: internal error: <type>: <message>``.  Click's own
    exceptions (usage errors, ``--help``) and ``KeyboardInterrupt`` pass through.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = fn(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except (CliError, ConfigError, SpecError) as exc:
            echo_error(str(exc))
            code = EXIT_ERROR
        except BrokenPipeError:
            raise
        except Exception as exc:  # an internal bug: still one line, still exit 2
            echo_error(f"internal error: {type(exc).__name__}: {exc}")
            code = EXIT_ERROR
        click.get_current_context().exit(code)

    return wrapper


def split_csv(values: Iterable[str]) -> Tuple[str, ...]:
    """Flatten repeatable, comma-separated option values: ``("PTC1,PTC2", "PTC3")`` -> ``("PTC1", "PTC2", "PTC3")``."""
    out: List[str] = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return tuple(out)


def _apply(decorators: Sequence[Callable]) -> Callable:
    def decorate(fn: Callable) -> Callable:
        for dec in reversed(decorators):
            fn = dec(fn)
        return fn

    return decorate


def config_options(fn: Callable) -> Callable:
    """``--config PATH`` and ``--isolated``."""
    return _apply(
        [
            click.option(
                "--config",
                "config_path",
                type=click.Path(dir_okay=False),
                help="Use this config file instead of the nearest pyproject.toml / pt2lint.toml.",
            ),
            click.option("--isolated", is_flag=True, help="Ignore all config files."),
        ]
    )(fn)


def selection_options(fn: Callable) -> Callable:
    """Rule selection and the Dynamo knobs: ``--select/--extend-select/--ignore``, ``--target``, ``--capture-*``."""
    return _apply(
        [
            click.option(
                "--select", multiple=True, metavar="CODES",
                help="Rules to enable (codes, prefixes, names or ALL; comma-separated, repeatable). Replaces the config's select.",
            ),
            click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to enable on top of the selection."),
            click.option("--ignore", multiple=True, metavar="CODES", help="Rules to disable."),
            click.option("--target", type=click.Choice(TARGETS), default=None, help="What the code must survive (default: compile)."),
            click.option("--compute-dtype", type=click.Choice(("float32", "float16", "bfloat16")), default=None, help="The floating dtype the model is compiled in (default: float32); decides `x.dtype == torch.float16` guards."),
            click.option(
                "--capture-scalar-outputs/--no-capture-scalar-outputs", default=None,
                help="Assume torch._dynamo.config.capture_scalar_outputs=True (.item() is traced).",
            ),
            click.option(
                "--capture-dynamic-output-shape-ops/--no-capture-dynamic-output-shape-ops", default=None,
                help="Assume torch._dynamo.config.capture_dynamic_output_shape_ops=True (nonzero, unique, mask indexing are traced).",
            ),
            click.option(
                "--allow-rnn/--no-allow-rnn", default=None,
                help="Assume torch._dynamo.config.allow_rnn=True (nn.RNN/LSTM/GRU are traced).",
            ),
            click.option(
                "--assume-compiled/--no-assume-compiled", default=None,
                help="Treat every module and function as compiled: `cond` fixes are then not marked unsafe for "
                "torch.cond's eager-mode cost (default: only what a torch.compile call or decorator in the file compiles).",
            ),
            click.option(
                "--follow-imports", multiple=True, metavar="MODULES",
                help="Installed packages to follow calls into (comma-separated, repeatable; adds to the config's follow-imports).",
            ),
        ]
    )(fn)


def discovery_options(fn: Callable) -> Callable:
    """File discovery: ``--exclude``, ``--extend-exclude``, ``--force-exclude``, ``--no-respect-gitignore``."""
    return _apply(
        [
            click.option("--exclude", multiple=True, metavar="PATTERNS", help="Gitignore-style patterns to skip; replaces the defaults and the config's exclude."),
            click.option("--extend-exclude", multiple=True, metavar="PATTERNS", help="Patterns to skip on top of exclude."),
            click.option("--force-exclude", is_flag=True, help="Apply excludes and .gitignore to files named explicitly, too."),
            click.option("--respect-gitignore/--no-respect-gitignore", default=True, help="Skip files that .gitignore ignores (default: yes)."),
        ]
    )(fn)


def project_from_options(paths: Sequence[str], options: Dict[str, Any]) -> Project:
    """Load the config for ``paths`` and apply the command-line options collected by the option decorators.

    Raises:
        ConfigError: bad config file or selector (one-line message); ``--select`` given with
            no selector in it (``--select ""``), which would check nothing and pass.
    """
    if options.get("select") and not split_csv(options["select"]):
        raise ConfigError("--select: no rule selector given (use ALL for every rule, --ignore to turn rules off)")
    overrides = Overrides(
        select=split_csv(options["select"]) if options.get("select") else None,
        extend_select=split_csv(options.get("extend_select", ())),
        ignore=split_csv(options.get("ignore", ())),
        exclude=split_csv(options["exclude"]) if options.get("exclude") else None,
        extend_exclude=split_csv(options.get("extend_exclude", ())),
        capture_scalar_outputs=options.get("capture_scalar_outputs"),
        capture_dynamic_output_shape_ops=options.get("capture_dynamic_output_shape_ops"),
        allow_rnn=options.get("allow_rnn"),
        assume_compiled=options.get("assume_compiled"),
        target=options.get("target"),
        compute_dtype=options.get("compute_dtype"),
        follow_imports=split_csv(options.get("follow_imports", ())),
        force_exclude=bool(options.get("force_exclude")),
        respect_gitignore=options.get("respect_gitignore", True),
    )
    return load_project(paths, options.get("config_path"), overrides, isolated=bool(options.get("isolated")))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", "-V", prog_name="pt2lint", message="%(prog)s %(version)s")
def cli() -> None:
    """pt2lint: find what breaks torch.compile in PyTorch model code, without running it."""


def read_stdin(max_bytes: Optional[int] = None) -> bytes:
    """All of stdin's bytes, at most ``max_bytes`` (default: :data:`pt2lint.reading.DEFAULT_MAX_BYTES`).

    Raises:
        CliError: stdin is closed (``pt2lint check - <&-``), cannot be read, or holds more
            than the limit.
    """
    from pt2lint.reading import DEFAULT_MAX_BYTES, format_size

    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    stdin = sys.stdin
    if stdin is None or getattr(stdin, "closed", False):
        raise CliError("stdin is closed: nothing to read for '-' (pipe a file in, or give paths)")
    stream = getattr(stdin, "buffer", None)
    try:
        if stream is not None:
            data = stream.read(limit + 1)
        else:
            data = stdin.read(limit + 1).encode("utf-8", "surrogateescape")
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise CliError(f"cannot read stdin: {reason[0].lower() + reason[1:]}") from None
    if data is None:  # a non-blocking stdin with nothing to read yet
        raise CliError("cannot read stdin: it is in non-blocking mode and empty")
    if len(data) > limit:
        raise CliError(f"stdin holds more than {format_size(limit)} (the max-file-size limit); not checked")
    return data


def _lint_stdin(filename: str, project: Project, keep_source: bool) -> Tuple[Optional[FileResult], int]:
    """Lint stdin as ``filename``; returns ``(result, bytes read)``, or ``(None, 0)`` when force-excluded."""
    from pt2lint.engine import DecodeError, decode_source, judge_document, lint_source

    if filename != STDIN and project.discovery.force_exclude and is_excluded(filename, project.discovery):
        return None, 0
    data = read_stdin(getattr(project.settings, "max_file_size", None))
    relpath = project_relpath(filename, project.root) if filename != STDIN else STDIN
    try:
        text = decode_source(data)
    except DecodeError as exc:
        return FileResult(filename, error=f"{filename}: {exc}"), len(data)
    try:
        first = lint_source(text, filename, project.settings, relpath=relpath, keep_source=keep_source)
        result = first
        if filename != STDIN and first.error is None:
            # the text stands for ``filename``: the package's files that build or call it judge it
            result = judge_document(first, text, filename, relpath, project.settings)
            if keep_source and result.source is None:
                result = replace(result, source=first.source)  # re-analysed: the text the reporters show
        return result, len(data)
    except Exception as exc:  # same contract as the engine's workers
        return FileResult(filename, error=f"{filename}: internal error: {type(exc).__name__}: {exc}"), len(data)


def _usable_cache_dir(directory: str, quiet: bool) -> Optional[str]:
    """``directory`` when the result cache may live there; else ``None``, after one warning.

    See :func:`pt2lint.cache.cache_dir_problem` (a symbolic link, or a directory pt2lint
    did not create, is never written into).
    """
    from pt2lint.cache import cache_dir_problem
    from pt2lint.discovery import display_path
    from pt2lint.reading import printable

    problem = cache_dir_problem(directory)
    if problem is None:
        return directory
    if not quiet:
        click.echo(f"warning: {printable(display_path(directory))}: {problem}; running without the cache", err=True)
    return None


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@selection_options
@discovery_options
@config_options
@click.option(
    "--output-format", type=click.Choice(sorted(REPORTERS)), default="text", show_default=True,
    help="How findings are printed: " + "; ".join(f"{r.name}: {r.description}" for r in REPORTERS.values()),
)
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings (errors still exit 2).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings and errors only: no summary, no warnings.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, help="Worker processes (default: one per CPU; 0 = auto).")
@click.option("--stdin-filename", metavar="PATH", help="The name of the file read from stdin (for per-file-ignores and messages).")
@click.option("--show-files", is_flag=True, help="List the files that would be checked, and exit.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, help="Cache directory (default: $PT2LINT_CACHE_DIR or .pt2lint_cache in the project root).")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False), metavar="FILE", help="Write the report to FILE instead of stdout.")
@click.option("--add-noqa", is_flag=True, help="Add '# noqa: CODE' comments for the current findings to the files, and exit.")
@click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False), metavar="FILE", help="Report only findings that are not in this baseline file.")
@click.option("--write-baseline", type=click.Path(dir_okay=False), metavar="FILE", help="Record the current findings in a baseline file, and exit.")
@click.option("--hook", is_flag=True, help="Run as a git hook (pre-commit): check exactly the files given, none means nothing to do; implies --force-exclude.")
@click.option("--diff-base", metavar="REF", default=None, help="Report only findings on lines changed since git REF (working tree, untracked files too), or reached through a changed call.")
@guarded
def check(paths: Tuple[str, ...], **options: Any) -> int:
    """Lint PATHS (files or directories; default: .; '-' reads stdin) for torch.compile graph breaks."""
    started = time.perf_counter()
    stdin_filename: Optional[str] = options["stdin_filename"]
    if STDIN in paths and len(paths) > 1:
        raise CliError("'-' (stdin) cannot be combined with other paths")
    use_stdin = paths == (STDIN,) or (not paths and stdin_filename is not None)
    if options.get("diff_base") and use_stdin:
        raise CliError("--diff-base needs files in a git working tree, not stdin")
    if options.get("diff_base") and options.get("fix"):
        raise CliError("--diff-base cannot be combined with --fix (it would fix unchanged lines too)")
    if options.get("verify") and not options.get("fix"):  # --verify too
        raise CliError("--verify checks the rewrites of --fix; give --fix as well (or use `pt2lint fix --verify`)")
    if options.get("verify"):
        from pt2lint.confirm.verify import VerifyUnavailable, require_torch

        try:
            require_torch()
        except VerifyUnavailable as exc:
            raise CliError(str(exc)) from None
    if options.get("fix") and use_stdin:  # --fix is added by pt2lint.commands.fix
        raise CliError("--fix does not rewrite stdin; use `pt2lint fix -`, which prints the fixed code")
    if options["hook"]:
        if not paths and not use_stdin:
            return EXIT_CLEAN  # a hook with no staged files has nothing to check (never '.')
        options["force_exclude"] = True
    paths = paths or (".",)
    reporter = get_reporter(options["output_format"])
    quiet = options["quiet"]
    keep_source = reporter.needs_source or bool(options["add_noqa"] or options["baseline_file"] or options["write_baseline"])

    errors: List[str] = []
    results: List[FileResult] = []
    bytes_checked = 0
    if use_stdin:
        name = stdin_filename or STDIN
        project = project_from_options([name] if stdin_filename else [], options)
        result, size = _lint_stdin(name, project, keep_source)
        if result is not None:
            results.append(result)
            bytes_checked += size if result.error is None else 0
    else:
        project = project_from_options(paths, options)
        found = discover(paths, project.discovery)
        errors.extend(found.errors)
        echo_discovery_warnings(found, quiet)
        changes, discovered = None, len(found.files)
        if options.get("diff_base"):
            changes, found = _diff_base(options["diff_base"], found)
        if options["show_files"]:
            from pt2lint.reading import printable

            echo_report("".join(printable(f.path) + "\n" for f in found.files), what="the file list")
            for message in errors:
                echo_error(message)
            return EXIT_ERROR if errors else EXIT_CLEAN
        if not discovered and not found.errors and not quiet and not options["hook"]:
            click.echo("warning: no Python files found under the given paths", err=True)
        cache_dir = None
        if not options.get("no_cache"):
            from pt2lint.cache import default_cache_dir

            cache_dir = options.get("cache_dir") or default_cache_dir(project.root)
            cache_dir = _usable_cache_dir(cache_dir, quiet)
        if options.get("fix"):
            from pt2lint.commands.fix import fix_before_check

            errors.extend(fix_before_check(found.files, project, options))
        results = list(_lint_files(found.files, project, options["jobs"], keep_source, cache_dir, merge=changes is None))
        if changes is not None:
            from pt2lint.gitdiff import keep_changed

            results = keep_changed(results, changes)
        bytes_checked = sum(_file_size(r.filename) for r in results if r.error is None)

    errors.extend(r.error for r in results if r.error is not None)
    diagnostics: List[Diagnostic] = sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)
    confirm_summary = None
    if options.get("confirm"):  # added by pt2lint.commands.confirm
        from pt2lint.commands.confirm import run_confirm

        if use_stdin:
            raise CliError("--confirm needs files: code read from stdin cannot be imported")
        diagnostics, confirm_summary = run_confirm(diagnostics, found.files, project, options, quiet=quiet)
    context = ReportContext(
        sources={r.filename: r.source for r in results if r.source is not None},
        files=[r.filename for r in results if r.error is None],
        docs_url=project.docs_url,
    )
    given = ([stdin_filename] if stdin_filename else []) if use_stdin else [f.path for f in found.files]
    diagnostics, adopted = _adopt(diagnostics, context, options, errors, project.root, given)
    if adopted is not None:
        return adopted

    if options["statistics"]:
        out = render_statistics_json(diagnostics) if reporter.name == "json" else render_statistics_text(diagnostics)
    else:
        out = reporter.render(diagnostics, context)
    from pt2lint.reading import utf8_safe

    out = utf8_safe(out)  # a report is valid UTF-8 whatever the file names hold
    if options["output_file"]:
        _write_report(options["output_file"], out)
    elif out:
        echo_report(out)
    for message in errors:
        echo_error(message)
    if (reporter.human or options["output_file"]) and not quiet:  # with -o, stderr is free for people
        stats = RunStats(
            findings=len(diagnostics),
            files_with_findings=len({d.filename for d in diagnostics}),
            files_checked=sum(1 for r in results if r.error is None),
            errors=len(errors),
            seconds=time.perf_counter() - started,
            bytes_checked=bytes_checked,
            info=sum(1 for d in diagnostics if d.severity == "info"),
        )
        if confirm_summary:
            click.echo(confirm_summary, err=True)
        click.echo(summary_line(stats), err=True)
        if options["output_file"]:
            n = len(diagnostics)
            click.echo(f"wrote {n} finding{'s' if n != 1 else ''} to {options['output_file']}", err=True)
    if errors:
        return EXIT_ERROR
    # Info findings (host syncs under --target compile) are shown but never fail the run:
    # they cost speed, they do not break a graph.
    failing = [d for d in diagnostics if d.severity != "info"]
    if options.get("confirm"):
        from pt2lint.commands.confirm import failing_findings

        failing = failing_findings(failing, options)  # --fail-on
    if failing and not options["exit_zero"]:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _diff_base(ref: str, found: Any) -> Tuple[Any, Any]:
    """The changes since git ``ref`` and the discovered files narrowed to those that may hold a kept finding.

    Raises:
        CliError: git is missing, the working directory is not in a repository, or the ref is unknown.
    """
    from dataclasses import replace

    from pt2lint.gitdiff import GitDiffError, changes_since, narrow

    try:
        changes = changes_since(ref)
    except GitDiffError as exc:
        raise CliError(str(exc)) from None
    files = list(found.files)
    return changes, replace(found, files=[files[i] for i in narrow([f.path for f in files], changes)])


def _write_report(path: str, text: str) -> None:
    """Write the report to ``path`` with :func:`pt2lint.atomic.write_output` (a regular file or
    a link's target atomically; a device or a pipe written through).

    Raises:
        CliError: the file cannot be written (a full disk included).
    """
    from pt2lint.atomic import write_output

    try:
        write_output(path, text.encode("utf-8"))
    except OSError as exc:
        raise CliError(f"--output-file: {path}: {(exc.strerror or type(exc).__name__).lower()}") from None


def _adopt(
    diagnostics: List[Diagnostic], context: ReportContext, options: Dict[str, Any], errors: List[str],
    root: Optional[str] = None, given: Optional[Sequence[str]] = None,
) -> Tuple[List[Diagnostic], Optional[int]]:
    """Apply ``--baseline``, ``--write-baseline`` and ``--add-noqa`` (which edits only the files
    ``given`` on the command line, and none through a link out of the project ``root``).

    Returns:
        ``(findings left to report, exit code)``; the exit code is ``None`` when
        the run goes on to report, else the command's code (it wrote a baseline
        or added comments).

    Raises:
        CliError: conflicting options, or an unreadable or unwritable baseline.
    """
    from pt2lint.baseline import BaselineError, add_noqa, load_baseline, write_baseline

    quiet = options["quiet"]
    if options["add_noqa"] and options["write_baseline"]:
        raise CliError("--add-noqa and --write-baseline cannot be combined")
    try:
        if options["write_baseline"]:
            n = write_baseline(options["write_baseline"], diagnostics, context.sources)
            for message in errors:
                echo_error(message)
            if not quiet:
                click.echo(f"Wrote {n} finding{'s' if n != 1 else ''} to {options['write_baseline']}.", err=True)
            return diagnostics, EXIT_ERROR if errors else EXIT_CLEAN
        if options["baseline_file"]:
            diagnostics, dropped = load_baseline(options["baseline_file"]).filter(diagnostics, context.sources)
            if dropped and not quiet and get_reporter(options["output_format"]).human:
                click.echo(f"{dropped} finding{'s' if dropped != 1 else ''} in the baseline not shown.", err=True)
    except BaselineError as exc:
        raise CliError(str(exc)) from None
    if options["add_noqa"]:
        result = add_noqa(diagnostics, context.sources, root=root, given=given)
        for message in list(errors) + list(result.errors):
            echo_error(message)
        if not quiet:
            click.echo(
                f"Added {result.added} noqa directive{'s' if result.added != 1 else ''}"
                f" to {result.files} file{'s' if result.files != 1 else ''}.",
                err=True,
            )
        return diagnostics, EXIT_ERROR if (errors or result.errors) else EXIT_CLEAN
    return diagnostics, None


def _lint_files(
    files: Sequence[SourceFile], project: Project, jobs: Optional[int], keep_source: bool, cache_dir: Optional[str] = None,
    merge: bool = True,
) -> Iterable[FileResult]:
    from pt2lint.engine import lint_paths

    return lint_paths(
        [f.path for f in files],
        with_code_config(project, files),
        jobs=jobs or None,
        relpaths=[f.relpath for f in files],
        keep_source=keep_source,
        cache_dir=cache_dir,
        merge=merge,
    )


def with_code_config(project: Project, files: Sequence[SourceFile]):
    """The project's settings with the Dynamo config its linted files write applied.

    ``torch._dynamo.config.<knob> = ...`` anywhere in ``files`` applies project-wide;
    compile options and ``config.patch`` apply to the regions they govern (see
    :mod:`pt2lint.analysis.code_config`).
    """
    from pt2lint.analysis.code_config import apply_to_settings, scan_files

    settings = project.settings
    found = scan_files(
        ((f.path, f.path) for f in files), settings.project_root, settings.src, getattr(settings, "max_file_size", None)
    )
    return apply_to_settings(settings, found, settings.explicit_knobs)


def find_rule(query: str, specs: Dict[str, RuleSpec]) -> RuleSpec:
    """The spec whose code (any case) or name is ``query``.

    Raises:
        CliError: no rule has that code or name.
    """
    q = query.strip()
    if q.upper() in specs:
        return specs[q.upper()]
    for spec in specs.values():
        if spec.name == q.lower():
            return spec
    raise CliError(f"unknown rule {query!r} (see `pt2lint rule --all`)")


def spec_to_dict(spec: RuleSpec, docs_url: Optional[str] = None) -> Dict[str, Any]:
    """A rule's metadata and explanation as a JSON-ready dict; ``url`` follows the ``docs_url`` template."""
    from pt2lint.diagnostics import rule_url

    return {
        "code": spec.code,
        "name": spec.name,
        "category": spec.category,
        "severity": spec.severity,
        "targets": list(spec.targets),
        "gb_types": list(spec.gb_types),
        "knob": spec.knob,
        "summary": spec.summary.strip(),
        "why": spec.why.strip(),
        "fix": spec.fix.strip(),
        "references": list(spec.references),
        "url": rule_url(spec.code, docs_url, spec.name),
        "explanation": spec.explain(),
    }


@cli.command()
@click.argument("rule_id", metavar="CODE|NAME|GBnnnn", required=False)
@click.option("--all", "show_all", is_flag=True, help="Explain every rule, then list the graph-break coverage.")
@click.option(
    "--coverage", "show_coverage", is_flag=True,
    help="List every graph-break id of Dynamo's registry with how pt2lint covers it.",
)
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@guarded
def rule(rule_id: Optional[str], show_all: bool, show_coverage: bool, output_format: str) -> int:
    """Explain a rule: what it flags, why it breaks the graph, and what to write instead.

    Given a graph-break id from Dynamo's log (GB0142), say which rule reports it, or why none does.
    """
    import json
    import re

    from pt2lint import coverage

    specs = load_specs()
    if show_all + show_coverage + (rule_id is not None) != 1:
        raise CliError("give one rule code or name, a graph-break id (GB0142), --all or --coverage")
    if show_coverage or (rule_id is not None and re.fullmatch(r"(?i)GB\d{4}", rule_id.strip())):
        table = coverage.graph_break_coverage()
        if show_coverage:
            items = list(table.values())
        else:
            gb_id = rule_id.strip().upper()
            if gb_id not in table:
                raise CliError(f"{gb_id} is not a graph-break id of the torch {coverage.dynamo_facts.torch_version()} registry")
            items = [table[gb_id]]
        if output_format == "json":
            payload: Any = [i.to_dict() for i in items] if show_coverage else items[0].to_dict()
            echo_report(json.dumps(payload, indent=2, ensure_ascii=False), nl=True)
        else:
            text = coverage.render_text(table) if show_coverage else coverage.explain(items[0])
            echo_report(text, what="the coverage", nl=True)
        return EXIT_CLEAN
    chosen = list(specs.values()) if show_all else [find_rule(rule_id or "", specs)]
    if output_format == "json":
        docs_url = load_project(()).docs_url  # the working directory's project decides the links
        payload = [spec_to_dict(s, docs_url) for s in chosen] if show_all else spec_to_dict(chosen[0], docs_url)
        echo_report(json.dumps(payload, indent=2, ensure_ascii=False), nl=True)
    else:
        text = "\n".join(s.explain() for s in chosen)
        if show_all:
            text += "\n" + coverage.render_text() + "\n"
        echo_report(text, what="the explanation")
    return EXIT_CLEAN


@cli.command()
@click.option(
    "--debounce-ms", type=click.IntRange(min=0), default=None, metavar="MS",
    help="Wait this long after the last edit of a document before linting it (default: $PT2LINT_LSP_DEBOUNCE_MS or 300).",
)
@click.option(
    "--lint-timeout", type=click.FloatRange(min=0, min_open=True, max=3600), default=None, metavar="SECONDS",
    help="Stop a lint that takes longer and say so on the document (default: $PT2LINT_LSP_LINT_TIMEOUT_S or 10).",
)
@guarded
def lsp(debounce_ms: Optional[int], lint_timeout: Optional[float]) -> int:
    """Run the language server on stdio (diagnostics, quick fixes, suppressions, hover). Needs the 'lsp' extra."""
    from pt2lint.lsp import LspUnavailable, serve

    try:
        return serve(None if debounce_ms is None else debounce_ms / 1000.0, lint_timeout)
    except LspUnavailable as exc:
        raise CliError(str(exc)) from None


@cli.command()
@click.argument("old", metavar="OLD", type=click.Path(dir_okay=False))
@click.argument("new", metavar="NEW", type=click.Path(dir_okay=False))
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--output-file", "-o", type=click.Path(dir_okay=False), metavar="FILE", help="Write the comparison to FILE instead of stdout.")
@guarded
def compare(old: str, new: str, output_format: str, output_file: Optional[str]) -> int:
    """Compare two reports of `check` (json, json-lines or sarif): new, fixed and unchanged findings.

    Findings match by fingerprint (rule, file, the flagged line's text), so moved lines
    stay unchanged.  Exits 1 when NEW has findings OLD lacks, else 0.
    """
    from pt2lint.compare import CompareError, compare_reports, load_report, render_comparison_json, render_comparison_text

    try:
        before, after = load_report(old), load_report(new)
    except CompareError as exc:
        raise CliError(str(exc)) from None
    result = compare_reports(before, after)
    out = render_comparison_json(result) if output_format == "json" else render_comparison_text(result, before, after)
    if output_file:
        _write_report(output_file, out)
        click.echo(f"Wrote the comparison to {output_file}.", err=True)
    else:
        echo_report(out)
    return EXIT_FINDINGS if result.new else EXIT_CLEAN


@cli.command()
@click.argument("reports", metavar="REPORT...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--output-file", "-o", type=click.Path(dir_okay=False), metavar="FILE", help="Write the merged report to FILE instead of stdout.")
@guarded
def merge(reports: Tuple[str, ...], output_file: Optional[str]) -> int:
    """Join reports of `check` (all json/json-lines, or all sarif; e.g. from sharded runs) into one.

    A finding in several reports is kept once (by fingerprint), the copy with the most
    telling confirm status first.  The result is a json array, or one SARIF log for SARIF inputs.
    """
    from pt2lint.compare import CompareError, load_report, merge_reports

    try:
        out = merge_reports([load_report(path) for path in reports])
    except CompareError as exc:
        raise CliError(str(exc)) from None
    if output_file:
        _write_report(output_file, out)
        click.echo(f"Merged {len(reports)} report{'s' if len(reports) != 1 else ''} into {output_file}.", err=True)
    else:
        echo_report(out)
    return EXIT_CLEAN


def _silence_stdout() -> None:
    """After a broken pipe or a failed write, point stdout at /dev/null so the interpreter's final
    flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _reserve_closed_std_fds() -> None:
    """Open ``/dev/null`` on whichever of file descriptors 0-2 the caller closed.

    Else the next file the run opens (a report, a cache entry) would get that number, and
    whatever a child process or a library writes to "stdout" would land in it.
    ``sys.stdout`` stays ``None``, so writing the report is still refused with an error
    (:func:`echo_report`).
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDWR)
        except OSError:
            return
        if null != fd:
            os.dup2(null, fd)
            os.close(null)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point: run the CLI and exit with its code.

    Ctrl-C exits 130 without a traceback; a closed stdout pipe (``| head``) exits
    quietly; any other unexpected exception is one ``error:`` line and exit 2.

    Raises:
        SystemExit: always, carrying the exit code.
    """
    _reserve_closed_std_fds()
    try:
        code = cli.main(args=list(argv) if argv is not None else None, prog_name="pt2lint", standalone_mode=False)
    except click.exceptions.Abort:  # click turns Ctrl-C into Abort and has already ended the line
        code = EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("", err=True)
        code = EXIT_INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except BrokenPipeError:
        _silence_stdout()
        code = EXIT_FINDINGS
    except Exception as exc:  # pragma: no cover - guarded() catches command errors first
        echo_error(f"internal error: {type(exc).__name__}: {exc}")
        code = EXIT_ERROR
    sys.exit(code if isinstance(code, int) else EXIT_CLEAN)


__all__ = [
    "CliError",
    "check",
    "cli",
    "compare",
    "config_options",
    "discovery_options",
    "guarded",
    "main",
    "merge",
    "project_from_options",
    "rule",
    "selection_options",
]

# Confirm mode lives in its own module; importing it adds `pt2lint confirm` and check's --confirm options.
from pt2lint.commands import confirm as _confirm_command  # noqa: E402,F401

# `pt2lint fix` and check's --fix/--unsafe-fixes live in their own module too.
from pt2lint.commands import fix as _fix_command  # noqa: E402,F401
