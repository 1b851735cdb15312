"""Helpers shared by the tests that lint a source snippet and compare its findings."""

from __future__ import annotations

import textwrap
from typing import Collection, List, Optional, Tuple

from pt2lint.settings import LintSettings, resolve_selection
from pt2lint.engine import FileResult, lint_source

#: Every rule enabled, every other setting at its default.
DEFAULT = LintSettings(enabled=resolve_selection())


def lint_snippet(code: str, settings: LintSettings = DEFAULT) -> FileResult:
    """Lint ``code`` as the file ``m.py``.

    Args:
        code: Python source; common leading indentation and leading newlines are removed,
            so line 1 is the first non-blank line of the snippet.
        settings: the lint settings (default: every rule on).

    Returns:
        The engine's result for the snippet.
    """
    return lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", settings)


def found(
    code: str,
    settings: LintSettings = DEFAULT,
    *,
    codes: Optional[Collection[str]] = None,
) -> List[Tuple[int, str]]:
    """The sorted ``(line, code)`` pairs of the findings in a snippet.

    Args:
        code: the snippet (see :func:`lint_snippet`).
        settings: the lint settings.
        codes: keep only findings whose rule code is in this collection; ``None`` keeps all.
    """
    result = lint_snippet(code, settings)
    return sorted(
        (d.start.line, d.code) for d in result.diagnostics if codes is None or d.code in codes
    )


def found_with_messages(code: str, settings: LintSettings = DEFAULT) -> List[Tuple[int, str, str]]:
    """The sorted ``(line, code, message)`` triples of the findings in a snippet."""
    result = lint_snippet(code, settings)
    return sorted((d.start.line, d.code, d.message) for d in result.diagnostics)


_BREAK_LINES_PROBE = r"""
import json, logging, re, sys
import torch
import torch._dynamo.symbolic_convert
cases = json.loads(sys.stdin.read())
lines = []
class H(logging.Handler):
    def emit(self, rec):
        text = rec.getMessage()
        m = re.search(r"Graph break in user code at (\S+):(\d+)", text)
        if m and m.group(1) == "m.py":
            lines.append(int(m.group(2)))
        elif m:
            # logged inside torch (a container's __getitem__, a polyfill): the innermost m.py frame
            inner = re.findall(r'File "m\.py", line (\d+)', text)
            if inner:
                lines.append(int(inner[-1]))
torch._logging.set_logs(graph_breaks=True)
for n in [n for n in logging.root.manager.loggerDict if n.endswith("__graph_breaks")]:
    lg = logging.getLogger(n)
    for h in list(lg.handlers):
        lg.removeHandler(h)
    lg.addHandler(H())
    lg.propagate = False
out = []
for src, call in cases:
    torch._dynamo.reset()
    lines.clear()
    ns = {"__name__": "m", "torch": torch}
    exec(compile(src, "m.py", "exec"), ns)
    exec(call, ns)
    out.append(sorted(set(lines)))
print(json.dumps(out))
"""


def dynamo_break_lines(source: str, call: str, timeout: int = 300) -> List[int]:
    """The lines of ``source`` (compiled as the file ``m.py``) at which Dynamo's graph_breaks log
    reports a break while ``call`` runs, in a child process with torch; a break logged inside torch
    (``ModuleList.__getitem__``, the ``any()`` polyfill) counts at the innermost ``m.py`` frame of
    its user traceback.

    The log, not ``torch.compile(..., fullgraph=True)``, is the probe: on torch 2.13
    ``fullgraph=True`` captures a tensor read as a Python number (``int(t)`` used as a size,
    ``aten._local_scalar_dense``) as an unbacked SymInt and raises nothing, while the default
    compile, which users run, breaks there.

    Args:
        source: the module text (already dedented).
        call: a statement run in the module's namespace after it is executed, e.g.
            ``torch.compile(Model().eval(), backend="eager")(torch.randn(2, 8))``.
        timeout: seconds before the child is killed.

    Raises:
        AssertionError: the child failed (its stderr's tail is the message).
    """
    return dynamo_break_lines_many([(source, call)], timeout)[0]


def dynamo_break_lines_many(cases: List[Tuple[str, str]], timeout: int = 600) -> List[List[int]]:
    """:func:`dynamo_break_lines` of several ``(source, call)`` pairs in one child process
    (Dynamo is reset between them), in order."""
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _BREAK_LINES_PROBE], input=json.dumps(cases), capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


_FRAME_COUNT_PROBE = r"""
import json, sys
import torch
from torch._dynamo.testing import CompileCounter
torch.set_num_threads(1)
counts = []
for source, build, make_input, calls in json.loads(sys.stdin.read()):
    ns = {}
    exec(compile(source, "m.py", "exec"), ns)
    torch._dynamo.reset()
    counter = CompileCounter()
    model = torch.compile(eval(build, ns), backend=counter)
    for _ in range(calls):
        model(eval(make_input, ns))
    counts.append(counter.frame_count)
print(json.dumps(counts))
"""


def dynamo_frame_counts(cases: List[Tuple[str, str, str]], calls: int = 3, timeout: int = 600) -> List[int]:
    """How many frames Dynamo compiles for each ``(source, build, make_input)``: the module text
    (compiled as ``m.py``), an expression that builds the model in its namespace (``"Net()"``) and
    one that makes an input (``"torch.randn(2, 4)"``); the compiled model is called ``calls``
    times, each on a fresh input, in a child process with torch (``backend=CompileCounter``).
    More than one frame means Dynamo recompiled.

    Raises:
        AssertionError: the child failed (its stderr's tail is the message).
    """
    import json
    import subprocess
    import sys

    payload = json.dumps([[src, build, make_input, calls] for src, build, make_input in cases])
    proc = subprocess.run([sys.executable, "-c", _FRAME_COUNT_PROBE], input=payload, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def watched_mutations(tmp_path, name: str, source: str, make_args):
    """The input mutations the dispatch-mode watcher (:func:`pt2lint.confirm.dynamo.input_mutations`)
    records while ``M()`` of ``source`` runs on ``make_args(torch, module)``: the module is written
    to ``tmp_path/<name>.py`` and imported from there (registered in ``sys.modules`` while it runs,
    so dataclasses resolve their annotations).  Only the writes at lines of that file are kept.

    Returns:
        ``[InputMutation, ...]`` (``lineno``, ``op``, ``argument``), in the order recorded.
    """
    import importlib.util
    import sys

    import torch

    from pt2lint.confirm.dynamo import input_mutations

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
        return [m for m in input_mutations(mod.M(), make_args(torch, mod)) if m.filename == str(path)]
    finally:
        sys.modules.pop(name, None)
