"""``pt2lint confirm`` and ``pt2lint check --confirm``: lint, then compile the modules for real.

Importing this module (``pt2lint.cli`` does, at its end) adds the confirm
options to ``check`` and registers ``confirm``, which is ``check`` with
``--confirm`` always on. The work happens in :func:`run_confirm`, which
``check`` calls after linting: plan one job per module
(:mod:`pt2lint.confirm.plan`), run each in a child process
(:mod:`pt2lint.confirm.runner`), and join what Dynamo did with the findings
(:mod:`pt2lint.confirm.join`).

Only the child processes import torch and the user's code; without
``--confirm``, ``check`` does neither.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import re
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import click

from pt2lint.confirm.settings import MAX_MEMORY_LIMIT_MB, MAX_TIMEOUT_S
from pt2lint.diagnostics import Diagnostic

CONFIRM_HELP = (
    "Confirm PATHS: lint them, then import each module in a child process, compile it with "
    "torch.compile on the target device, and mark every finding confirmed, not-reproduced or "
    "not-executed; breaks the static pass missed are reported as PTC090, modules that could not "
    "be measured as PTC091."
)


#: How to get torch for confirm mode (the ``confirm`` extra only requires ``torch>=2.4``).
#: pip's default on Linux is the multi-GB CUDA build, so the hint names the CPU index and
#: where the CUDA ones are listed; README.md, "Install", says the same.
TORCH_INSTALL_HINT = (
    "install the torch build you want, e.g. CPU only: "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu "
    "(CUDA builds: https://pytorch.org/get-started/locally/)"
)



def _not_nan(ctx, param, value):
    """Refuse ``--timeout nan`` (click's FloatRange compares, and NaN is in no range but passes)."""
    if value is not None and value != value:
        raise click.BadParameter("nan is not a number of seconds")
    return value

def confirm_params(with_flag: bool) -> List[click.Parameter]:
    """The confirm options as click parameters (``--confirm`` itself only for ``check``).

    Every option defaults to None so that ``[tool.pt2lint.confirm]`` fills what is not given.
    """
    params: List[click.Parameter] = []
    if with_flag:
        params.append(
            click.Option(["--confirm"], is_flag=True, default=False,
                         help="After linting, compile the modules for real and mark each finding confirmed / not-reproduced / not-executed (needs torch).")
        )
    params += [
        click.Option(["--device"], default=None, metavar="DEVICE",
                     help="[confirm] cpu, cuda, cuda:N or mps (default: cuda if available, else cpu)."),
        click.Option(["--backend"], type=click.Choice(["eager", "aot_eager", "inductor"]), default=None,
                     help="[confirm] torch.compile backend (default: eager, which shows every graph break and is fast; inductor is the real compile)."),
        click.Option(["--timeout"], type=click.FloatRange(min=0, min_open=True, max=MAX_TIMEOUT_S), default=None, metavar="SECONDS", callback=_not_nan,
                     help="[confirm] time limit per module (default: 120; 180 with aot_eager, 600 with inductor)."),
        click.Option(["--factory"], default=None, metavar="NAME",
                     help="[confirm] module-level function in each file that returns the nn.Module."),
        click.Option(["--inputs"], default=None, metavar="NAME",
                     help="[confirm] module-level function in each file that returns the forward arguments."),
        click.Option(["--check-accuracy/--no-check-accuracy"], default=None,
                     help="[confirm] compare compiled outputs with eager ones."),
        click.Option(["--memory-limit"], type=click.IntRange(min=1, max=MAX_MEMORY_LIMIT_MB), default=None, metavar="MIB",
                     help="[confirm] address space a module may allocate on top of torch, in MiB (Linux, cpu)."),
        click.Option(["--fail-on"], type=click.Choice(FAIL_ON), default=None,
                     help="[confirm] what sets exit status 1: any finding (default), or only findings Dynamo confirmed."),
        click.Option(["--shard"], default=None, metavar="K/N", callback=_parse_shard,
                     help="[confirm] confirm only the modules of shard K of N (split by a stable hash of path::Class), for a CI matrix."),
    ]
    return params


#: Values of ``--fail-on``.
FAIL_ON = ("any", "confirmed")

WARNING = (
    "warning: confirm imports and runs the linted files' code (and whatever it imports) in child processes; "
    "run it only on code you trust"
)


def _parse_shard(ctx: Any, param: Any, value: Optional[str]) -> Optional[Tuple[int, int]]:
    """``"K/N"`` -> ``(K, N)`` with ``1 <= K <= N`` (click callback of ``--shard``)."""
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not match:
        raise click.BadParameter(f"{value!r} is not K/N (for example 1/4)")
    k, n = int(match.group(1)), int(match.group(2))
    if n < 1 or not 1 <= k <= n:
        raise click.BadParameter(f"{value!r}: K must be between 1 and N, and N at least 1")
    return k, n


def failing_findings(diagnostics: Sequence[Diagnostic], options: Dict[str, Any]) -> List[Diagnostic]:
    """The findings that make the run exit 1 under ``--fail-on``.

    ``any`` (or no ``--fail-on``): all of them. ``confirmed``: only those whose
    confirmation status is ``confirmed`` (Dynamo did at that line what the
    finding says); ``dynamic-only`` (PTC090) and ``failed`` (PTC091) findings and
    static findings that were not reproduced do not count.
    """
    if options.get("fail_on") == "confirmed":
        return [d for d in diagnostics if d.confirm is not None and d.confirm.status == "confirmed"]
    return list(diagnostics)


def split_targets(paths: Sequence[str]) -> Tuple[Tuple[str, ...], Dict[str, List[str]]]:
    """Separate ``path::Class`` targets from plain paths.

    Returns:
        ``(paths, only)``: the paths with any ``::Class`` removed (each file once), and
        ``{absolute path: [class names]}`` for the files named with a class.

    Raises:
        click.BadParameter: the class part is not an identifier, or the path is not a file.
    """
    out: List[str] = []
    only: Dict[str, List[str]] = {}
    for path in paths:
        if "::" not in path:
            out.append(path)
            continue
        file_part, _, cls = path.partition("::")
        if not cls.isidentifier():
            raise click.BadParameter(f"{path!r}: the part after '::' must be a class name", param_hint="PATHS")
        if not os.path.isfile(file_part):
            raise click.BadParameter(f"{path!r}: {file_part!r} is not a file", param_hint="PATHS")
        names = only.setdefault(os.path.abspath(file_part), [])
        if cls not in names:
            names.append(cls)
        if file_part not in out:
            out.append(file_part)
    return tuple(out), only


class Progress:
    """A one-line progress bar on stderr (only drawn when stderr is a terminal)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled and total > 0
        self.started = time.perf_counter()

    def update(self, label: str) -> None:
        """Count one finished module and redraw."""
        self.done += 1
        if not self.enabled:
            return
        width = 24
        filled = int(width * self.done / max(1, self.total))
        bar = "#" * filled + "-" * (width - filled)
        shown = label if len(label) <= 50 else "..." + label[-47:]
        line = f"\rconfirm [{bar}] {self.done}/{self.total} {time.perf_counter() - self.started:5.1f}s {shown}"
        click.echo(line.ljust(110)[:130], err=True, nl=False)

    def close(self) -> None:
        """Erase the bar."""
        if self.enabled:
            click.echo("\r" + " " * 130 + "\r", err=True, nl=False)


def _settings(project: Any, options: Dict[str, Any]):
    from pt2lint.confirm.settings import build_settings

    jobs = options.get("jobs") or None
    return build_settings(
        project.config.confirm or {},
        config_path=project.config.path,
        root=project.root,
        target=project.settings.target,
        factory=options.get("factory"),
        inputs=options.get("inputs"),
        device=options.get("device"),
        backend=options.get("backend"),
        timeout=options.get("timeout"),
        jobs=jobs,
        check_accuracy=options.get("check_accuracy"),
        memory_limit_mb=options.get("memory_limit"),
    )


def summary_text(
    join_result: Any,
    settings: Any,
    seconds: float,
    *,
    skipped: Sequence[Tuple[str, str]] = (),
    shard: Optional[Tuple[int, int]] = None,
    other_shards: int = 0,
) -> str:
    """The confirm summary printed on stderr after the findings: modules, failures with next steps, statuses.

    Args:
        join_result: the :class:`~pt2lint.confirm.join.JoinResult`.
        settings: the confirm settings (device, backend, target).
        seconds: wall-clock time of the confirm run.
        skipped: ``(label, why)`` for what planning left out (classes built by another class,
            unparsable files); the child's own skips come from ``join_result.skipped``.
        shard: ``(K, N)`` of ``--shard``, or None.
        other_shards: how many planned modules belong to the other shards.

    A failed module is named with its failure class and next step; its detail
    is in its PTC091 finding and is not repeated here.
    """
    from pt2lint.confirm import outcome as oc

    mods = join_result.modules
    failed = [m for m in mods if m.failure not in (None, oc.GRAPH_BREAK, oc.EXPORT_FAILURE, oc.RECOMPILE)]
    recompiling = [m for m in mods if m.failure == oc.RECOMPILE]
    broke = [m for m in mods if m.result and m.result.get("graph_breaks")]
    clean = [m for m in mods if m.failure is None and m.compiled]
    device = settings.device or next((m.result.get("device") for m in mods if m.result and m.result.get("device")), "auto")
    export = ""
    if settings.target == "export":
        exported = [m for m in mods if m.result and (m.result.get("export") or {}).get("ok")]
        export = f", {len(exported)} exported"
    where = f" (shard {shard[0]}/{shard[1]}: {other_shards} more in the other shards)" if shard else ""
    lines = [
        f"Confirm: {len(mods)} module{'s' if len(mods) != 1 else ''}{where} on {device} (backend {settings.backend}, target "
        f"{settings.target}) in {seconds:.1f}s: {len(clean)} compiled in one graph, "
        f"{len(broke)} with graph breaks{export}, {len(recompiling)} recompiling, {len(failed)} failed."
    ]
    for m in failed:
        lines.append(f"  {m.label}: {oc.FAILURE_TITLES.get(m.failure or '', m.failure)} (see its PTC091 finding)")
        if m.next_step:
            lines.append(f"      next: {m.next_step}")
    for m in recompiling:
        lines.append(f"  {m.label}: recompile: {m.detail}")
        if m.next_step:
            lines.append(f"      next: {m.next_step}")
    counted = [(m, m.result["graphs"]) for m in mods if m.result and m.result.get("graphs")]
    if any(graphs[-1] > 1 for _, graphs in counted):
        # how the count of compiled graphs grew over the calls (varying values and batch sizes)
        lines.append("Graphs after each call:")
        for m, graphs in counted:
            if graphs[-1] > 1:
                lines.append(f"  {m.label}: {', '.join(str(g) for g in graphs)}")
    notes = list(skipped) + [(m.label, m.skipped) for m in getattr(join_result, "skipped", [])]
    if notes:
        lines.append(f"Skipped {len(notes)}:")
        for label, why in notes:
            lines.append(f"  {label}: {why}")
        for m in getattr(join_result, "skipped", []):
            if m.next_step:
                lines.append(f"      next: {m.next_step}")
    counts = join_result.counts
    order = ("confirmed", "not-reproduced", "not-executed", "not-confirmed", "dynamic-only", "failed")
    parts = [f"{counts.get(s, 0)} {s}" for s in order]
    lines.append("Findings: " + ", ".join(parts) + ".")
    return "\n".join(lines)


def run_confirm(
    diagnostics: Sequence[Diagnostic],
    files: Sequence[Any],
    project: Any,
    options: Dict[str, Any],
    *,
    quiet: bool = False,
) -> Tuple[List[Diagnostic], str]:
    """Confirm the linted files and join the results with their findings.

    Args:
        diagnostics: the static findings of ``files``.
        files: the discovered :class:`~pt2lint.discovery.SourceFile` objects.
        project: the loaded :class:`~pt2lint.config.Project`.
        options: the command's options (``device``, ``backend``, ``timeout``,
            ``factory``, ``inputs``, ``check_accuracy``, ``memory_limit``, ``jobs``,
            ``shard`` as ``(K, N)``, ``confirm_targets`` as ``{path: [classes]}`` from
            ``path::Class`` arguments).
        quiet: no progress bar.

    Returns:
        ``(diagnostics, summary)``: the findings with their confirmation plus the
        PTC090/PTC091 findings, and the summary text for stderr.

    Raises:
        pt2lint.cli.CliError: torch is not installed; a configured factory or inputs
            name that no file defines; a ``path::Class`` naming no class of the file.
        SystemExit: 128 + the signal number after SIGTERM/SIGHUP stopped the run
            (the children were killed first).
        pt2lint.config.ConfigError: invalid ``[tool.pt2lint.confirm]`` or option value.
    """
    from pt2lint.cli import CliError
    from pt2lint.confirm.join import join
    from pt2lint.confirm.plan import PlanError, plan_jobs, select_shard
    from pt2lint.confirm.runner import Terminated, run_jobs
    from pt2lint.discovery import project_relpath
    from pt2lint.specs import load_specs

    started = time.perf_counter()
    settings = _settings(project, options)
    if importlib.util.find_spec("torch") is None:
        raise CliError(f"confirm mode needs torch, which is not installed: {TORCH_INSTALL_HINT}")
    triples = [(f.path, f.path, f.relpath) for f in files]
    try:
        from pt2lint.cli import with_code_config

        lint_settings = with_code_config(project, files)  # knobs the code sets are measured with too
        jobs, skipped = plan_jobs(triples, settings, lint_settings, only=options.get("confirm_targets") or None)
    except PlanError as exc:
        raise CliError(str(exc)) from None
    shard = options.get("shard")
    others: List[Any] = []
    if shard:
        jobs, others = select_shard(jobs, *shard)
    if not quiet:
        click.echo(WARNING, err=True)
    progress = Progress(len(jobs), enabled=not quiet and sys.stderr.isatty())
    try:
        outcomes = run_jobs(jobs, parallel=settings.jobs, on_done=lambda o: progress.update(o.job.label))
    except Terminated as exc:
        progress.close()
        click.echo(f"error: confirm stopped by {exc}: its child processes were killed", err=True)
        raise SystemExit(128 + exc.signum) from None
    finally:
        progress.close()
    displays = {os.path.normcase(os.path.realpath(f.path)): f.path for f in files}
    specs = load_specs()
    graph_break_codes = frozenset(c for c, s in specs.items() if s.is_graph_break)

    def enabled_for(display: str):
        return project.settings.enabled_for(project_relpath(display, project.root))

    result = join(
        diagnostics, outcomes, settings, displays=displays, enabled_for=enabled_for, graph_break_codes=graph_break_codes,
        other_shards=[j.path for j in others],
    )
    text = summary_text(result, settings, time.perf_counter() - started, skipped=skipped, shard=shard, other_shards=len(others))
    return result.diagnostics, text


def _install() -> None:
    """Add the confirm options to ``check`` and register ``confirm``."""
    from pt2lint import cli as cli_module

    check = cli_module.check
    if any(p.name == "confirm" for p in check.params):
        return
    check.params.extend(confirm_params(with_flag=True))
    params = []
    for param in check.params:
        if param.name == "confirm":
            continue
        if param.name == "jobs":
            param = copy.copy(param)
            param.help = "Lint worker processes, and modules confirmed at once (default: half the CPUs, 1 to 4)."
        params.append(param)

    def callback(**kwargs: Any) -> Any:
        # Options that other modules add to `check` later are not on `confirm`: pass their defaults.
        for param in check.params:
            if param.name and param.name not in kwargs:
                default = param.default() if callable(param.default) else param.default
                kwargs[param.name] = default if default is not None or not getattr(param, "is_flag", False) else False
        kwargs["confirm"] = True
        kwargs["paths"], kwargs["confirm_targets"] = split_targets(kwargs.get("paths") or ())
        return check.callback(**kwargs)

    command = click.Command(
        "confirm",
        params=params,
        callback=callback,
        help=CONFIRM_HELP,
        short_help="Lint, then compile the modules for real and confirm each finding (needs torch).",
        context_settings=check.context_settings,
    )
    cli_module.cli.add_command(command)


_install()

__all__ = [
    "CONFIRM_HELP",
    "FAIL_ON",
    "Progress",
    "WARNING",
    "confirm_params",
    "failing_findings",
    "run_confirm",
    "split_targets",
    "summary_text",
]
