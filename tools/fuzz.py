"""Fuzz ``pt2lint check`` (and ``pt2lint fix`` once it exists): never crash, never corrupt.

Run by hand, for minutes; the suite's bounded property tests live in ``tests/test_fuzz.py``::

    python tools/fuzz.py                       # 5 minutes, every source, failures under fuzz-failures/
    python tools/fuzz.py --minutes 30 --seed 7 --out /tmp/fuzz
    python tools/fuzz.py --sources mutate,bytes --timeout 10
    python tools/fuzz.py --replay tests/regressions   # re-run saved inputs (files or folders)

Inputs come from five sources (``--sources``, comma-separated):

``grammar``  hypothesmith ``from_grammar()`` modules, half of them wrapped as the body of
             ``forward`` in an ``nn.Module`` subclass;
``node``     hypothesmith ``from_node()`` modules (slower, always valid), wrapped the same way;
``torch``    random ``nn.Module`` classes built from torch-flavoured statements (``.item()``,
             branches on tensors, in-place ops, helpers, recursion, aliases, decorators,
             class-body ``forward = ...``/``del forward``, constant-string ``getattr``,
             NFKC-equivalent names, tensor methods called through the class
             (``torch.Tensor.item(t)``, an alias of it), helper chains past the depth limit, branch outputs of
             different dtype/rank/device, helpers writing module state) -- the code the
             analysis actually looks at;
``mutate``   ``fixtures/models/*.py`` (and earlier inputs) with 1-4 mutations: drop, duplicate,
             re-indent (spaces or tabs) or truncate lines, swap or replace tokens, splice
             lines of another file, change line endings (CRLF, CR, mixed), add a BOM or a
             PEP 263 coding line, nest an expression in brackets;
``bytes``    the same with random bytes inserted (NUL, invalid UTF-8, BOMs, control chars).

Each input runs in a long-lived worker process (in-process calls of the engine, not a
``pt2lint`` subprocess per input), under a per-input ``--timeout``; a worker that hangs is
killed and one that dies (a segfault in native code) is reported with its signal, and
both are restarted.  Checked, per input:

* ``check``: ``decode_source`` raises nothing but ``DecodeError``; ``lint_source`` raises
  nothing and returns no error; findings have sane positions; every reporter renders
  them; a text CPython's compiler rejects has a ``PTC001`` finding; the ``# noqa``
  comments ``--add-noqa`` would write change no code (no string, no statement); every few inputs, the whole CLI (``pt2lint check FILE``) exits 0/1, or 2 with a
  one-line ``error:`` that is not an internal error, and never prints a traceback.
* ``fix`` (when the CLI has a ``fix`` command and ``--no-fix`` is not given):
  ``fix --unsafe-fixes`` never fails internally, leaves a file without findings (or one that
  does not parse) byte for byte unchanged, produces text that parses (and compiles, when the
  original did), keeps CRLF line endings, and is idempotent (a second run changes nothing).
* ``seeds`` (every tenth input, with ``fix``): ``pt2lint fix --diff --unsafe-fixes`` in child
  processes under ``PYTHONHASHSEED`` 0, 1 and 2 prints the same bytes (set or dict
  iteration order never reaches a fix).

A failing input is shrunk by deleting lines (ddmin: halves, then quarters, ... down to
single lines) while the same failure (stage, exception type and innermost pt2lint frame)
still reproduces, and saved as ``<out>/<failure>-<hash>.py`` (minimal input, exact bytes),
``.orig.py`` (as generated) and ``.txt`` (what failed, the traceback, how to replay it).
Each distinct failure is saved once per run.  Turn every one into a regression test:
copy the minimal ``.py`` to ``tests/regressions/<name>.py`` (``tests/test_fuzz.py`` lints every
file there, in both modes) and list it in ``tests/regressions/README.md``.

Exit status: 0 when nothing failed, 1 when a failure was saved, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import io
import json
import multiprocessing
import os
import random
import re
import shutil
import sys
import tempfile
import textwrap
import time
import traceback
import warnings
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

FIXTURES = os.path.join(REPO, "fixtures", "models")

# --- the checks (run inside the worker) ----------------------------------------------------------


class Failure(Exception):
    """An invariant broke; ``kind`` names it for de-duplication."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def _settings_variants():
    from pt2lint.settings import LintSettings, resolve_selection

    return [
        LintSettings(enabled=resolve_selection(select=["ALL"])),
        LintSettings(
            enabled=resolve_selection(select=["ALL"], target="export"),
            target="export",
            capture_scalar_outputs=True,
            capture_dynamic_output_shape_ops=True,
        ),
    ]


def cpython_parses(text: str) -> bool:
    """Whether CPython's own parser accepts ``text`` (quietly: no SyntaxWarning on stderr)."""
    import ast

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
    return True


def libcst_parses(text: str) -> bool:
    """Whether LibCST parses ``text`` -- without letting its unbounded native recursion
    crash this process on deeply nested input (the same guard ``lint_source`` uses)."""
    import libcst as cst

    from pt2lint.nesting import looks_deeply_nested, run_on_big_stack

    try:
        if looks_deeply_nested(text) is not None:
            if not cpython_parses(text):
                return False  # too deep for CPython: never hand it to LibCST
            run_on_big_stack(cst.parse_module, text)
        else:
            cst.parse_module(text)
    except Exception:
        return False
    return True


def _check_positions(result, text: str) -> None:
    n_lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    for d in result.diagnostics:
        if d.start.line < 1 or d.start.column < 1 or d.end < d.start or d.start.line > n_lines + 1:
            raise Failure("bad-position", f"{d.code} at {d.start}..{d.end} in a file of {n_lines} lines")


def _cpython_rejects(text: str) -> bool:
    """Whether CPython's whole compiler rejects ``text`` (a depth limit is not a rejection here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "fuzz.py", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return True
        except (RecursionError, MemoryError, OverflowError):
            return False
    return False


def _check_parser_agreement(result, text: str, settings) -> None:
    if "PTC001" in settings.enabled and _cpython_rejects(text) and not any(d.code == "PTC001" for d in result.diagnostics):
        raise Failure("cpython-rejects-no-ptc001", "CPython's compiler rejects the text, and there is no PTC001 finding")


def _check_noqa(result, text: str) -> None:
    """The comments ``--add-noqa`` writes change no code: the AST stays the same."""
    import ast

    from pt2lint.baseline import insert_noqa, noqa_targets

    targets = noqa_targets(d for d in result.diagnostics if d.filename == "fuzz.py").get("fuzz.py")
    if not targets or not cpython_parses(text):
        return
    new, _ = insert_noqa(text, targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            same = ast.dump(ast.parse(new)) == ast.dump(ast.parse(text))
        except (SyntaxError, ValueError) as exc:
            raise Failure("noqa-breaks-syntax", f"{type(exc).__name__}: {exc}") from None
        except (RecursionError, MemoryError):
            return
    if not same:
        raise Failure("noqa-changes-code", f"--add-noqa for {dict(targets)} changed the module's AST")


def check_input(data: bytes, variant: int = 0) -> Dict[str, object]:
    """Lint ``data`` in-process and render the findings with every reporter.

    Raises:
        Failure: an invariant broke (any exception escaping is a failure too).
    """
    from pt2lint.engine import DecodeError, decode_source, lint_source
    from pt2lint.reporters import REPORTERS, ReportContext

    try:
        text = decode_source(data)
    except DecodeError:
        return {"decoded": False}
    settings = _settings_variants()[variant % 2]
    result = lint_source(text, "fuzz.py", settings, keep_source=True)
    if result.error is not None:
        raise Failure("error-result", result.error)
    _check_positions(result, text)
    _check_parser_agreement(result, text, settings)
    _check_noqa(result, text)
    context = ReportContext(sources={"fuzz.py": text}, files=["fuzz.py"])
    for name, reporter in sorted(REPORTERS.items()):
        try:
            reporter.render(list(result.diagnostics), context)
        except Exception as exc:
            raise Failure(f"reporter-{name}", f"{type(exc).__name__}: {exc}") from exc
    return {"decoded": True, "codes": sorted({d.code for d in result.diagnostics})}


def _invoke(args: Sequence[str], cwd: str) -> Tuple[int, str, str]:
    """Run the CLI in-process (click's runner); returns ``(exit code, stdout, stderr)``."""
    from click.testing import CliRunner

    from pt2lint.cli import cli

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        res = runner.invoke(cli, list(args), catch_exceptions=True)
    finally:
        os.chdir(old)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        tb = "".join(traceback.format_exception(type(res.exception), res.exception, res.exception.__traceback__))
        raise Failure("cli-exception", tb)
    return res.exit_code, res.stdout, res.stderr


def _check_cli_output(code: int, out: str, err: str, what: str) -> None:
    if "Traceback" in out or "Traceback" in err:
        raise Failure(f"{what}-traceback", err[-2000:])
    if "internal error" in err:
        raise Failure(f"{what}-internal-error", err.strip().splitlines()[0])
    if code not in (0, 1, 2):
        raise Failure(f"{what}-exit-code", f"exit code {code}")
    if code == 2 and not any(line.startswith("error: ") for line in err.splitlines()):
        raise Failure(f"{what}-exit-2-without-message", err[-500:])


def fix_available() -> bool:
    from pt2lint.cli import cli

    return "fix" in cli.commands


def _fix_options() -> List[str]:
    from pt2lint.cli import cli

    names = {opt for p in cli.commands["fix"].params for opt in getattr(p, "opts", ())}
    out = [o for o in ("--isolated", "--no-cache", "-q") if o in names]
    return out + (["-j", "1"] if "-j" in names else [])


def cli_check_input(data: bytes, workdir: str, fmt: str = "text") -> int:
    path = os.path.join(workdir, "fuzz.py")
    with open(path, "wb") as fh:
        fh.write(data)
    code, out, err = _invoke(["check", "--isolated", "--no-cache", "--select", "ALL", "-j", "1", "--output-format", fmt, "fuzz.py"], workdir)
    _check_cli_output(code, out, err, "check")
    with open(path, "rb") as fh:
        if fh.read() != data:
            raise Failure("check-wrote-file", "pt2lint check changed the file")
    return code


def fix_input(data: bytes, workdir: str) -> Dict[str, object]:
    """``pt2lint fix --unsafe-fixes`` on ``data``: parses, idempotent, no change without findings, CRLF kept."""
    path = os.path.join(workdir, "fuzz.py")
    with open(path, "wb") as fh:
        fh.write(data)
    code, out, err = _invoke(["check", "--isolated", "--no-cache", "-q", "-j", "1", "--select", "ALL", "fuzz.py"], workdir)
    _check_cli_output(code, out, err, "check")
    had_findings = bool(out.strip())
    opts = _fix_options()
    code, out, err = _invoke(["fix", "--unsafe-fixes", *opts, "fuzz.py"], workdir)
    _check_cli_output(code, out, err, "fix")
    with open(path, "rb") as fh:
        fixed = fh.read()
    from pt2lint.engine import DecodeError, decode_source

    try:
        before = decode_source(data)
    except DecodeError:
        before = None
    if fixed != data:
        if not had_findings:
            raise Failure("fix-changed-clean-file", "fix changed a file that had no finding")
        if before is None or not libcst_parses(before):
            raise Failure("fix-changed-unparseable-file", "fix changed a file that does not parse")
        try:
            after = decode_source(fixed)
        except DecodeError as exc:
            raise Failure("fix-output-undecodable", str(exc)) from None
        if not libcst_parses(after):
            raise Failure("fix-output-does-not-parse", "LibCST cannot parse the fixed file")
        if cpython_parses(before) and not cpython_parses(after):
            raise Failure("fix-output-does-not-compile", "CPython cannot parse the fixed file")
        if b"\r\n" in data and re.search(rb"(?<!\r)\n", data) is None and re.search(rb"(?<!\r)\n", fixed):
            raise Failure("fix-changed-line-endings", "a CRLF file got LF line endings")
    code, out, err = _invoke(["fix", "--unsafe-fixes", *opts, "fuzz.py"], workdir)
    _check_cli_output(code, out, err, "fix")
    with open(path, "rb") as fh:
        again = fh.read()
    if again != fixed:
        raise Failure("fix-not-idempotent", "a second fix run changed the file again")
    return {"changed": fixed != data}


HASH_SEEDS = ("0", "1", "2")


def fix_seed_input(data: Union[bytes, Sequence[bytes]], workdir: str, seeds: Sequence[str] = HASH_SEEDS) -> Dict[str, object]:
    """``pt2lint fix --diff --unsafe-fixes`` on ``data`` (one input, or several as separate files
    fixed in one run) in one child process per hash seed: the outputs (diff, exit status and
    messages) must be byte-identical.

    Raises:
        Failure: ``fix-depends-on-hash-seed`` with the first two outputs that differ.
    """
    import subprocess

    inputs = [data] if isinstance(data, bytes) else list(data)
    names = ["fuzz.py"] if len(inputs) == 1 else [f"fuzz{i}.py" for i in range(len(inputs))]
    for name, item in zip(names, inputs):
        with open(os.path.join(workdir, name), "wb") as fh:
            fh.write(item)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pythonpath = os.pathsep.join(p for p in [repo] + os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    outputs = []
    for seed in seeds:
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=pythonpath)
        res = subprocess.run(
            [sys.executable, "-m", "pt2lint", "fix", "--diff", "--unsafe-fixes", *_fix_options(), *names],
            cwd=workdir, env=env, capture_output=True, timeout=120,
        )
        outputs.append((seed, res.returncode, res.stdout, res.stderr))
    first = outputs[0]
    for other in outputs[1:]:
        if other[1:] != first[1:]:
            raise Failure(
                "fix-depends-on-hash-seed",
                f"PYTHONHASHSEED={first[0]} and {other[0]} give different fixes:\n"
                f"--- seed {first[0]}\n{first[2].decode('utf-8', 'replace')}\n--- seed {other[0]}\n{other[2].decode('utf-8', 'replace')}",
            )
    return {"changed": b"\n+" in first[2]}


# --- the worker process ------------------------------------------------------------------------


def _innermost_pt2lint_frame(tb) -> str:
    frames = traceback.extract_tb(tb)
    for fr in reversed(frames):
        if os.sep + "pt2lint" + os.sep in fr.filename and "tools" + os.sep + "fuzz.py" not in fr.filename:
            return f"{os.path.basename(fr.filename)}:{fr.name}"
    return f"{os.path.basename(frames[-1].filename)}:{frames[-1].name}" if frames else "?"


def run_one(data: bytes, stage: str, variant: int, workdir: str) -> Optional[Dict[str, str]]:
    """Run one stage on one input; ``None`` when fine, else ``{"signature", "detail"}``."""
    try:
        if stage == "check":
            check_input(data, variant)
        elif stage == "cli":
            cli_check_input(data, workdir, ("text", "full", "json", "sarif", "github")[variant % 5])
        elif stage == "fix":
            fix_input(data, workdir)
        elif stage == "seeds":
            fix_seed_input(data, workdir)
        else:
            raise ValueError(stage)
    except Failure as exc:
        return {"signature": f"{stage}:{exc.kind}", "detail": exc.detail[-4000:]}
    except BaseException as exc:  # noqa: B036 - everything escaping is the finding (PanicException is a BaseException)
        if isinstance(exc, KeyboardInterrupt):
            raise
        sig = f"{stage}:{type(exc).__name__}@{_innermost_pt2lint_frame(exc.__traceback__)}"
        return {"signature": sig, "detail": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:]}
    return None


def _worker_main(conn) -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    warnings.simplefilter("ignore")
    workdir = tempfile.mkdtemp(prefix="pt2lint-fuzz-")
    try:
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg is None:
                return
            data, stage, variant = msg
            conn.send(run_one(data, stage, variant, workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


class Worker:
    """A worker process that runs inputs, restarted after a hang or a crash."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        self.proc = None
        self.conn = None

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker_main, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def _kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
        self.proc = self.conn = None

    def run(self, data: bytes, stage: str, variant: int = 0) -> Optional[Dict[str, str]]:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        try:
            self.conn.send((data, stage, variant))
            if self.conn.poll(self.timeout):
                return self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            self.proc.join(5)
            code = self.proc.exitcode
            self._kill()
            return {"signature": f"{stage}:crash(exit {code})", "detail": f"the worker died with exit code {code} (negative: killed by that signal)"}
        self._kill()
        return {"signature": f"{stage}:timeout", "detail": f"no answer within {self.timeout:g} s"}

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        if self.proc is not None:
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()


# --- input sources ----------------------------------------------------------------------------

FORWARD_HEADER = "import torch\nimport torch.nn as nn\n\n\nclass Fuzzed(nn.Module):\n    def forward(self, x, mask=None):\n"


def wrap_as_forward(src: str) -> str:
    """``src`` as the body of ``forward`` in an ``nn.Module`` subclass (what the analysis walks)."""
    body = textwrap.indent(src, " " * 8, lambda line: True) if src.strip() else ""
    return FORWARD_HEADER + body + ("\n" if body and not body.endswith("\n") else "") + "        return x\n"


_NAMES = ["x", "y", "h", "mask", "out", "w", "n", "i", "self.w", "self.count", "cache", "k"]
_TENSOR_EXPRS = [
    "x", "y", "x + y", "x * 2", "torch.relu(x)", "F.relu(x)", "x.sum()", "x.mean(dim=0)", "x[0]", "x[:, 1:]",
    "x[mask]", "torch.nonzero(x)", "x.nonzero()", "torch.unique(x)", "torch.where(x > 0)", "torch.where(x > 0, x, y)",
    "x.view(-1)", "x.float()", "x.clone()", "self.lin(x)", "self.layers[0](x)", "torch.zeros(3)", "x.detach()",
    "torch.cat([x, y])", "x @ y", "x.masked_select(mask)", "torch.bincount(x)", "self.helper(x)", "helper(x, 1)",
]
_SCALAR_EXPRS = [
    "x.shape[0]", "x.size(1)", "x.dim()", "len(x)", "x.numel()", "1", "2.5", "None", "True", "'s'", "n + 1",
    "self.training", "x.item()", "int(x)", "float(x.sum())", "x.tolist()", "random.random()", "time.time()",
    "self.count", "id(x)", "x.numpy()", "bool(x)", "x.any()", "isinstance(x, torch.Tensor)",
    "torch.Tensor.item(x.sum())", "torch.Tensor.tolist(x)", "torch.Tensor.item(3)",
]
_TESTS = [
    "x.sum() > 0", "x.shape[0] > 1", "self.training", "torch.compiler.is_compiling()", "mask is None", "x.any()",
    "x", "n", "isinstance(x, list)", "x.dim() == 2", "x.item() > 0.5", "not self.training", "bool(x.max())",
    "torch.jit.is_scripting()", "y is not None and y.sum() > 0", "(z := x.sum()) > 0", "len(cache) > 3",
]
_WITH_ITEMS = ["torch.no_grad()", "torch.autocast('cpu')", "open(f) as fh", "ctx() as (a, b)", "a() as x, b() as y"]
_SIMPLE_STMTS = [
    "{t} = {e}", "{t} = {s}", "{t} += {e}", "x.add_(1)", "x[:, 0] = 0", "x[0] += 1", "torch.add(x, 1, out=x)",
    "F.relu(x, inplace=True)", "self.relu_(x)", "print({e})", "print('step', {s})", "logger.info('%s', {s})",
    "warnings.warn('w')", "breakpoint()", "torch.manual_seed(0)", "torch._dynamo.graph_break()",
    "self.count += 1", "self.history.append({e})", "cache[{s}] = {e}", "assert {c}", "assert (x >= 0).all(), 'neg'",
    "del {t}", "pass", "y = x if {c} else y", "y, *rest = x.unbind(0)", "a, b = {e}, {s}", "x = [v * 2 for v in {e}]",
    "d = {{k: v for k, v in zip(x, y)}}", "global gcount", "nonlocal_value = (lambda v: v.item())(x)",
    "torch.autograd.grad(x.sum(), [x])", "zlib.crc32(b'x')", "h = x; h.mul_(2)", "return {e}", "yield {e}",
    "raise ValueError({s})", "x = self.forward(x)", "x = self(x)", "x = super().forward(x)", "out = x.numpy()",
    "await {e}", "x = ({e}).item()", "setattr(self, 'w', {e})", "x.data = {e}", "return",
    "item = torch.Tensor.item; {t} = item(x.sum())", "{t} = {t}[0] if {t}.dim() > 1 else {t}; {t} += 1",
]


class TorchProgram:
    """A random ``nn.Module`` file with torch-flavoured statements, nested blocks and helpers."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def expr(self) -> str:
        r = self.rng
        e = r.choice(_TENSOR_EXPRS)
        for _ in range(r.randrange(3)):
            e = r.choice(["({} + {})", "torch.sigmoid({})", "({}).relu()", "({} * {})", "F.softmax({}, dim=-1)"]).format(e, r.choice(_TENSOR_EXPRS))
        return e

    def simple(self) -> str:
        r = self.rng
        return r.choice(_SIMPLE_STMTS).format(t=r.choice(_NAMES), e=self.expr(), s=r.choice(_SCALAR_EXPRS), c=r.choice(_TESTS))

    def block(self, depth: int, indent: int) -> List[str]:
        r = self.rng
        pad = " " * indent
        lines: List[str] = []
        for _ in range(r.randint(1, 5)):
            kind = r.random()
            if depth <= 0 or kind < 0.5:
                lines.append(pad + self.simple())
                continue
            inner = lambda: self.block(depth - 1, indent + 4)  # noqa: E731
            choice = r.randrange(10)
            if choice == 9 and r.random() < 0.5:  # what the check/item-branch/mask-index/print-hop codemods rewrite
                t = r.choice(["x.sum() > 0", "x.max() > 1", "(x > 0).any()", "x.mean().item() > 0.5"])
                name = r.choice(["y", "x", "out"])
                pattern = r.randrange(4)
                if pattern == 0:
                    lines.append(f"{pad}if {t}:")
                    lines.append(f"{pad}    raise {r.choice(['ValueError', 'RuntimeError'])}({r.choice(['', repr('bad input'), 'f' + repr('bad {x.shape}')])})")
                    if r.random() < 0.3:
                        lines.append(f"{pad}else:")
                        lines.append(f"{pad}    {name} = {self.expr()}")
                elif pattern == 1:
                    if r.random() < 0.4:  # a local one-element tensor, read, then unrelated statements before the if
                        lines.append(f"{pad}e = {r.choice(['x.pow(2).mean()', 'x.sum()', 'x.view(-1)', 'x * 2'])}")
                        lines.append(f"{pad}s = {r.choice(['e.item()', 'float(e)'])}")
                        lines.append(pad + self.simple())
                    else:
                        lines.append(f"{pad}s = {r.choice(['x.sum().item()', 'float(x.mean())', 'y.max().item()', 'bool(x.any())'])}")
                    lines.append(f"{pad}if {r.choice(['s > 0.5', 's', 's < 1e-6 or s > 2', 'not s'])}:")
                    lines.append(f"{pad}    {name} = {self.expr()}")
                    if r.random() < 0.7:
                        lines.append(f"{pad}else:")
                        lines.append(f"{pad}    {name} = {self.expr()}")
                    if r.random() < 0.3:
                        lines.append(f"{pad}{name} = {name} * s")
                elif pattern == 2:
                    mask = r.choice(["x > 0", "~torch.isnan(x)", "(x > 0) & (x < 1)", "y > 0", "mask"])
                    lines.append(f"{pad}{name} = x[{mask}].{r.choice(['sum()', 'mean()', 'max()', 'sum(0)'])}")
                else:
                    lines.append(f"{pad}print({r.choice(['x', repr('v'), '1'])}, {self.expr()})")
                continue
            if choice == 9:  # what the codemods rewrite: a tensor branch assigning the same names
                t = r.choice(["x.sum() > 0", "x.max() > 1", "(x > 0).any()", "x.mean().item() > 0.5"])
                name = r.choice(["y", "x", "out"])
                lines.append(f"{pad}if {t}:")
                lines.append(f"{pad}    {name} = {self.expr()}")
                if r.random() < 0.8:
                    lines.append(f"{pad}else:")
                    lines.append(f"{pad}    {name} = {self.expr()}")
                continue
            if choice == 0:
                lines.append(f"{pad}if {r.choice(_TESTS)}:")
                lines += inner()
                if r.random() < 0.4:
                    lines.append(f"{pad}elif {r.choice(_TESTS)}:")
                    lines += inner()
                if r.random() < 0.5:
                    lines.append(f"{pad}else:")
                    lines += inner()
            elif choice == 1:
                it = r.choice(["range(3)", "self.layers", "x", "range(x.shape[0])", "zip(x, y)", "enumerate(self.blocks)", "cache.items()", "x.tolist()"])
                lines.append(f"{pad}for {r.choice(['i', 'v', 'layer', 'i, v'])} in {it}:")
                lines += inner()
            elif choice == 2:
                lines.append(f"{pad}while {r.choice(_TESTS)}:")
                lines += inner()
                lines.append(f"{pad}    break")
            elif choice == 3:
                lines.append(f"{pad}with {r.choice(_WITH_ITEMS)}:")
                lines += inner()
            elif choice == 4:
                lines.append(f"{pad}try:")
                lines += inner()
                lines.append(f"{pad}except {r.choice(['Exception', 'ValueError as e', '(TypeError, KeyError)', ''])}:".replace("except :", "except:"))
                lines += inner()
                if r.random() < 0.3:
                    lines.append(f"{pad}finally:")
                    lines += inner()
            elif choice == 5:
                deco = r.choice(["", "@torch.compiler.disable\n", "@torch.compile\n", "@staticmethod\n", "@functools.lru_cache\n"])
                name = r.choice(["inner", "helper", "step"])
                for d in deco.splitlines():
                    lines.append(pad + d)
                lines.append(f"{pad}def {name}({r.choice(['x', 'x, y=None', '*args, **kw', 'self, x', 'x: int', 'x, /, n=1, *, flag=False'])}):")
                lines += inner()
                lines.append(f"{pad}x = {name}(x)")
            elif choice == 6:
                lines.append(f"{pad}match {r.choice(['n', 'x.shape', 'self.mode'])}:")
                lines.append(f"{pad}    case {r.choice(['1', '(a, b)', '[_, *rest]', 'str()', '_'])}:")
                lines += self.block(depth - 1, indent + 8)
            elif choice == 7:
                lines.append(f"{pad}class Inner({r.choice(['nn.Module', 'object', 'Fuzzed', 'Base'])}):")
                lines.append(f"{pad}    def forward(self, x):")
                lines += self.block(depth - 1, indent + 8)
            else:
                lines.append(f"{pad}async def agen(x):")
                lines += inner()
        return lines

    def module(self) -> str:
        r = self.rng
        head = [
            r.choice(["import torch", "import torch as t\ntorch = t", "from torch import nn, Tensor\nimport torch"]),
            r.choice(["import torch.nn as nn", "from torch import nn", "import torch.nn as N\nnn = N"]),
            "import torch.nn.functional as F",
            r.choice(["import random, time, logging, warnings, zlib, functools", "from random import random as rnd"]),
            "logger = logging.getLogger(__name__)",
        ]
        parts = ["\n".join(head), ""]
        bases = ["nn.Module", "torch.nn.Module", "Base", "N.Module", "nn.Sequential", "object", "Fuzzed"]
        if r.random() < 0.5:
            parts.append("class Base(nn.Module):\n    pass\n")
        for ci in range(r.randint(1, 3)):
            name = "Fuzzed" if ci == 0 else f"Fuzzed{ci}"
            deco = r.choice(["", "@torch.compile\n", "@dataclasses.dataclass\n"])
            lines = [f"{deco}class {name}({r.choice(bases)}):"]
            lines.append("    def __init__(self):\n        super().__init__()\n        self.count = 0\n        self.lin = nn.Linear(3, 3)")
            methods = ["forward"] + r.sample(["helper", "__call__", "_step", "relu_"], r.randint(0, 2))
            r.shuffle(methods)
            for mname in methods:
                sig = r.choice(["self, x", "self, x, mask=None", "self, x: torch.Tensor, n: int = 1", "self, *xs, **kw", "self, x, flag: bool = False"])
                if r.random() < 0.15:
                    lines.append(f"    @{r.choice(['torch.compiler.disable', 'torch._dynamo.disable', 'property', 'staticmethod'])}")
                lines.append(f"    def {mname}({sig}):")
                lines += self.block(r.randint(0, 3), 8)
            parts.append("\n".join(lines) + "\n")
        if r.random() < 0.5:
            parts.append("def helper(x, n=0):\n" + "\n".join(self.block(2, 4)) + "\n    return helper(x, n - 1)\n")
        if r.random() < 0.4:
            parts.append(r.choice(["compiled = torch.compile(helper)\n", "model = torch.compile(Fuzzed())\n", "f = torch.compile(lambda x: x.item())\n"]))
        return "\n\n".join(parts)


def _hypothesmith_example(strategy_name: str) -> Optional[str]:
    try:
        import hypothesmith
        from hypothesis.errors import NonInteractiveExampleWarning
    except ImportError:
        return None
    cache = _hypothesmith_example.__dict__.setdefault("strategies", {})
    if strategy_name not in cache:
        cache[strategy_name] = hypothesmith.from_grammar() if strategy_name == "grammar" else hypothesmith.from_node()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        try:
            return cache[strategy_name].example()
        except Exception:
            return None


_TOKEN = re.compile(rb"[A-Za-z_][A-Za-z_0-9]*|\d+|==|!=|<=|>=|\*\*|//|->|:=|[^\sA-Za-z_0-9]")
_VOCAB = [
    b"(", b")", b"[", b"]", b"{", b"}", b":", b",", b".", b"=", b"+=", b"if", b"else", b"for", b"in", b"def", b"class",
    b"return", b"yield", b"lambda", b"async", b"await", b"not", b"and", b"or", b"is", b"None", b"self", b"x", b"torch",
    b"item", b"forward", b"print", b"'", b'"', b'"""', b"\\", b"#", b"@", b"*", b"**", b"nonlocal", b"global", b"del",
    b"with", b"try", b"except", b"finally", b"match", b"case", b"f'{x}'", b"...", b":=", b"->", b"0x", b"1e9999",
]
_RANDOM_BYTES = [b"\x00", b"\xff", b"\xfe", b"\xef\xbb\xbf", b"\r", b"\t", b"\x0c", b"\x1a", b"\x85", b"\xc3\xa9",
                 b"\xe2\x80\xa8", b"\xed\xa0\x80", b"\xf0\x9f\x94\xa5", b"\xc0\x80", b"\x7f", b"\x0b",
                 # line breaks for str.splitlines that are none for CPython
                 b"\x1c", b"\x1d", b"\x1e", b"\xc2\x85", b"\xe2\x80\xa9"]


def _lines(data: bytes) -> List[bytes]:
    return data.splitlines(keepends=True) or [b""]


def mutate(data: bytes, rng: random.Random, corpus: Sequence[bytes], allow_bytes: bool) -> bytes:
    """Apply 1-4 random mutations to ``data``."""
    for _ in range(rng.randint(1, 4)):
        lines = _lines(data)
        n = len(lines)
        i = rng.randrange(n)
        j = min(n, i + rng.choice([1, 1, 1, 2, 3, 8]))
        op = rng.randrange(14 if allow_bytes else 12)
        if op == 0:  # drop lines
            del lines[i:j]
        elif op == 1:  # duplicate lines
            lines[i:i] = lines[i:j]
        elif op == 2:  # re-indent
            pad = rng.choice([b" ", b"    ", b"\t", b"  \t", b""])
            for k in range(i, j):
                stripped = lines[k].lstrip(b" \t") if rng.random() < 0.5 else lines[k]
                lines[k] = pad * rng.randint(0, 3) + stripped
        elif op == 3:  # truncate
            data = data[: rng.randrange(len(data) + 1)]
            continue
        elif op == 4:  # swap two tokens
            toks = list(_TOKEN.finditer(data))
            if len(toks) >= 2:
                a, b = sorted(rng.sample(range(len(toks)), 2))
                ta, tb = toks[a], toks[b]
                data = data[: ta.start()] + tb.group() + data[ta.end(): tb.start()] + ta.group() + data[tb.end():]
            continue
        elif op == 5:  # replace a token
            toks = list(_TOKEN.finditer(data))
            if toks:
                t = rng.choice(toks)
                data = data[: t.start()] + rng.choice(_VOCAB) + data[t.end():]
            continue
        elif op == 6:  # splice lines from another file
            other = _lines(rng.choice(corpus)) if corpus else lines
            k = rng.randrange(len(other))
            lines[i:i] = other[k: k + rng.randint(1, 10)]
        elif op == 7:  # line endings
            style = rng.choice([b"\r\n", b"\r", b"mixed"])
            out = []
            for line in lines:
                body = line.rstrip(b"\r\n")
                if body == line:
                    out.append(line)
                else:
                    out.append(body + (rng.choice([b"\n", b"\r\n", b"\r"]) if style == b"mixed" else style))
            lines = out
        elif op == 8:  # BOM or coding line
            head = rng.choice([b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n", b"# coding: utf-8\n", b"# coding: cp1252\n",
                               b"# vim: set fileencoding=utf-16 :\n", b"# coding: bogus\n", b"\xef\xbb\xbf# coding: latin-1\n",
                               b"# coding: undefined\n", b"# coding: punycode\n", b"# coding: idna\n", b"# coding: utf-7\n",
                               b"# coding: unicode_escape\n", b"# coding: hex\n", b"# coding: cp037\n"])
            lines.insert(0, head)
        elif op == 9:  # nest a line's expression in brackets
            depth = rng.choice([2, 10, 50, 150, 250]) if rng.random() < 0.9 else rng.choice([1000, 2000, 3000, 5000])
            body = lines[i].rstrip(b"\r\n")
            m = re.search(rb"=\s*(.+)$", body)
            if m:
                o, c = rng.choice([(b"(", b")"), (b"[", b"]"), (b"-(", b")"), (b"not (", b")")])
                lines[i] = body[: m.start(1)] + o * depth + m.group(1) + c * depth + lines[i][len(body):]
        elif op == 10:  # delete a span of characters
            a = rng.randrange(len(data) + 1)
            data = data[:a] + data[a + rng.randint(1, 40):]
            continue
        elif op == 11:  # insert a vocabulary token
            a = rng.randrange(len(data) + 1)
            data = data[:a] + rng.choice(_VOCAB) + data[a:]
            continue
        elif op == 12:  # insert random bytes
            a = rng.randrange(len(data) + 1)
            blob = rng.choice(_RANDOM_BYTES) if rng.random() < 0.7 else bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
            data = data[:a] + blob + data[a:]
            continue
        else:  # overwrite random bytes
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                if b:
                    b[rng.randrange(len(b))] = rng.randrange(256)
            data = bytes(b)
            continue
        data = b"".join(lines)
    return data


def load_corpus() -> List[bytes]:
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "*.py"))):
        with open(path, "rb") as fh:
            out.append(fh.read())
    return out


def generate(source: str, rng: random.Random, corpus: Sequence[bytes], recent: Sequence[bytes]) -> Optional[bytes]:
    if source in ("grammar", "node"):
        src = _hypothesmith_example(source)
        if src is None:
            return None
        if rng.random() < 0.5:
            src = wrap_as_forward(src)
        return src.encode("utf-8", "surrogatepass")
    if source == "torch":
        return TorchProgram(rng).module().encode("utf-8")
    pool = list(corpus) + list(recent)
    base = rng.choice(pool) if pool else b""
    return mutate(base, rng, corpus, allow_bytes=(source == "bytes"))


# --- shrinking and saving ----------------------------------------------------------------------


def shrink(data: bytes, still_fails: Callable[[bytes], bool], budget_s: float) -> bytes:
    """Delete lines (ddmin: chunks of n/2, n/4, ... 1) while ``still_fails``; stop after ``budget_s``."""
    deadline = time.monotonic() + budget_s
    lines = _lines(data)
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        i = 0
        removed = False
        while i < len(lines) and time.monotonic() < deadline:
            candidate = lines[:i] + lines[i + chunk:]
            if candidate and still_fails(b"".join(candidate)):
                lines = candidate
                removed = True
            else:
                i += chunk
        if not removed:
            chunk //= 2
    return b"".join(lines)


def _slug(signature: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", signature).strip("-").lower()[:60]


def save_failure(out_dir: str, failure: Dict[str, str], original: bytes, minimal: bytes, label: str, seed: int) -> str:
    os.makedirs(out_dir, exist_ok=True)
    digest = hashlib.sha256(minimal).hexdigest()[:8]
    stem = os.path.join(out_dir, f"{_slug(failure['signature'])}-{digest}")
    with open(stem + ".py", "wb") as fh:
        fh.write(minimal)
    with open(stem + ".orig.py", "wb") as fh:
        fh.write(original)
    with open(stem + ".txt", "w", encoding="utf-8") as fh:
        fh.write(f"failure: {failure['signature']}\nsource: {label} (seed {seed})\n")
        fh.write(f"minimal input: {len(minimal)} bytes, {len(_lines(minimal))} lines (original {len(original)} bytes)\n")
        fh.write(f"replay: python tools/fuzz.py --replay {stem}.py\n\n{failure['detail']}\n")
    return stem + ".py"


# --- the driver ------------------------------------------------------------------------------

SOURCES = ("grammar", "node", "torch", "mutate", "bytes")
_SOURCE_WEIGHTS = {"grammar": 3, "node": 1, "torch": 3, "mutate": 4, "bytes": 2}


def _stages(with_fix: bool, n: int) -> List[Tuple[str, int]]:
    stages = [("check", n % 2)]
    if n % 5 == 0:
        stages.append(("cli", n // 5))
    if with_fix and n % 2 == 0:
        stages.append(("fix", 0))
    if with_fix and n % 10 == 0:
        stages.append(("seeds", 0))
    return stages


def replay(paths: Sequence[str], timeout: float, with_fix: bool) -> int:
    files: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(f for f in glob.glob(os.path.join(p, "*.py")) if not f.endswith(".orig.py"))
        else:
            files.append(p)
    worker = Worker(timeout)
    bad = 0
    try:
        for path in files:
            with open(path, "rb") as fh:
                data = fh.read()
            for stage, variant in [("check", 0), ("check", 1), ("cli", 0), ("cli", 2)] + ([("fix", 0), ("seeds", 0)] if with_fix else []):
                t0 = time.monotonic()
                failure = worker.run(data, stage, variant)
                took = time.monotonic() - t0
                status = "ok" if failure is None else f"FAIL {failure['signature']}"
                print(f"{path}: {stage}/{variant}: {status} ({took:.1f} s)")
                if failure is not None:
                    bad += 1
                    print(textwrap.indent(failure["detail"][-1500:], "    "))
    finally:
        worker.close()
    return 1 if bad else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=5.0, help="how long to fuzz (default 5)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock; printed)")
    parser.add_argument("--out", default="fuzz-failures", help="where minimal reproducers go (default ./fuzz-failures)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per input and stage (default 20)")
    parser.add_argument("--sources", default=",".join(SOURCES), help=f"comma-separated, from {', '.join(SOURCES)}")
    parser.add_argument("--no-fix", action="store_true", help="do not run `pt2lint fix` even when it exists")
    parser.add_argument("--shrink-seconds", type=float, default=60.0, help="time budget to shrink one failure (default 60)")
    parser.add_argument("--replay", nargs="+", metavar="PATH", help="run saved inputs (files or folders) once and exit")
    args = parser.parse_args(argv)

    with_fix = not args.no_fix and fix_available()
    if args.replay:
        return replay(args.replay, args.timeout, with_fix)
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    unknown = sorted(set(sources) - set(SOURCES))
    if unknown or not sources:
        parser.error(f"unknown source(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(SOURCES)}")
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    corpus = load_corpus()
    print(f"pt2lint fuzz: seed {seed}, {args.minutes:g} min, sources {','.join(sources)}, fix {'on' if with_fix else 'off (no fix command)' if not args.no_fix else 'off'}, out {args.out}")
    worker = Worker(args.timeout)
    seen: Dict[str, str] = {}
    counts: Dict[str, int] = {s: 0 for s in sources}
    recent: List[bytes] = []
    deadline = time.monotonic() + args.minutes * 60
    last_report = time.monotonic()
    n = 0
    try:
        while time.monotonic() < deadline:
            source = rng.choices(sources, weights=[_SOURCE_WEIGHTS[s] for s in sources])[0]
            data = generate(source, rng, corpus, recent)
            if data is None:
                continue
            n += 1
            counts[source] += 1
            if source in ("grammar", "node", "torch") and len(recent) < 200:
                recent.append(data)
            for stage, variant in _stages(with_fix, n):
                failure = worker.run(data, stage, variant)
                if failure is None:
                    continue
                sig = failure["signature"]
                if sig in seen:
                    continue
                print(f"[{n}] {source}: {sig} -- shrinking")

                def still_fails(candidate: bytes, _stage=stage, _variant=variant, _sig=sig) -> bool:
                    again = worker.run(candidate, _stage, _variant)
                    return again is not None and again["signature"] == _sig

                minimal = shrink(data, still_fails, args.shrink_seconds)
                final = worker.run(minimal, stage, variant) or failure
                seen[sig] = save_failure(args.out, final, data, minimal, source, seed)
                print(f"    saved {seen[sig]} ({len(minimal)} bytes)")
            if time.monotonic() - last_report > 30:
                last_report = time.monotonic()
                print(f"  {n} inputs ({', '.join(f'{k} {v}' for k, v in counts.items())}), {len(seen)} distinct failures", flush=True)
    except KeyboardInterrupt:
        print("interrupted")
    finally:
        worker.close()
    print(f"done: {n} inputs, {len(seen)} distinct failures" + "".join(f"\n  {s}: {p}" for s, p in sorted(seen.items())))
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main())
