"""The pytest plugin: assert_no_graph_breaks, the no_graph_breaks marker and the pt2_compile fixture.

Each test writes a small project into a pytester directory and runs pytest on
it in a child process, loading the plugin with ``-p pt2lint.pytest_plugin`` when the
installed distribution predates the ``pytest11`` entry point. Models compile with the eager backend, so
a run costs Dynamo's tracing only. Where a failure must name a line, the line is
found in the written source, not assumed.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# Imported here, not in a test: pytester restores sys.modules after each test,
# and a torch first imported inside a test would be dropped and collected.
try:
    import torch
except ImportError:  # the entry-point tests still run
    torch = None

ROOT = Path(__file__).resolve().parents[1]

HELPERS = '''\
import torch


def scale(x):
    s = x.sum().item()
    return x * s
'''

MODELS = '''\
import torch
from torch import nn

from helpers import scale


class Broken(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        return scale(y) + 1


class Clean(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * self.calls
'''


def _line(source: str, needle: str) -> int:
    """1-based line of the only line of ``source`` containing ``needle``."""
    hits = [i for i, text in enumerate(source.splitlines(), 1) if needle in text]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def _installed_entry_point() -> bool:
    """Whether the installed pt2lint declares the ``pytest11`` entry point (so pytest loads the plugin)."""
    try:
        eps = importlib.metadata.distribution("pt2lint").entry_points
    except importlib.metadata.PackageNotFoundError:
        return False
    return any(ep.group == "pytest11" and ep.name == "pt2lint" for ep in eps)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in a child process on the pytester directory, with the plugin loaded exactly once.

    A child process, not ``runpytest_inprocess``: pytester drops the modules an
    in-process run imported, and dropped torch modules are not safe to collect
    (a segfault in a later garbage collection, seen here); a child also loads
    the plugin as a user's pytest does.

    An install with the entry point loads it by itself (a second ``-p`` would
    register the module twice); an older install needs ``-p``.
    """
    load = []
    if not _installed_entry_point() or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        load = ["-p", "pt2lint.pytest_plugin"]
    return pytester.runpytest_subprocess(*load, "-p", "no:cacheprovider", "-q", *args, timeout=300)


def _section(output: str, test_name: str) -> str:
    """The failure section pytest printed for ``test_name`` (header line ``___ test_name ___``)."""
    lines = output.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("_") and f" {test_name} " in ln)
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith(("___", "===")) and " " in lines[i].strip("_= ")),
        len(lines),
    )
    return "\n".join(lines[start:end])


TEST_HELPER = """\
import torch
from models import Broken, Clean
from pt2lint.pytest_plugin import assert_no_graph_breaks


def test_broken():
    assert_no_graph_breaks(Broken(), torch.randn(2, 4))


def test_clean():
    out = assert_no_graph_breaks(Clean(), torch.randn(2, 4))
    assert out.shape == (2, 4)
"""

TEST_MARKED = """\
import pytest
import torch
import models
from models import Broken, Clean


@pytest.mark.no_graph_breaks
def test_marked_broken():
    torch.compile(Broken(), backend="eager")(torch.randn(2, 4))


@pytest.mark.no_graph_breaks(backend=models.counting_backend)
def test_marked_backend_clean(pt2_compile):
    pt2_compile(Clean())(torch.randn(2, 4))
    assert models.COMPILED, "pt2_compile did not use the marker's backend"


def test_fixture_broken(pt2_compile):
    pt2_compile(Broken())(torch.randn(2, 4))


def test_unmarked_broken_is_not_watched():
    torch.compile(Broken(), backend="eager")(torch.randn(2, 4))


@pytest.mark.no_graph_breaks(backend="eager", fullgraph=True)
def test_bad_option():
    pass


@pytest.mark.no_graph_breaks
def test_marked_own_failure():
    torch.compile(Broken(), backend="eager")(torch.randn(2, 4))
    assert 1 == 2, "the test's own failure"
"""

TEST_RECOMPILE = """\
import pytest
import torch
from models import Counter
from pt2lint.pytest_plugin import assert_no_graph_breaks


def test_allowed():
    assert_no_graph_breaks(Counter(), torch.ones(3), calls=[(torch.ones(3),)])


def test_not_allowed():
    assert_no_graph_breaks(Counter(), torch.ones(3), calls=[(torch.ones(3),)], allow_recompiles=False)


@pytest.mark.no_graph_breaks(allow_recompiles=False)
def test_marked_not_allowed():
    m = torch.compile(Counter(), backend="eager")
    m(torch.ones(3))
    m(torch.ones(3))


def test_one_call():
    assert_no_graph_breaks(Counter(), torch.ones(3), allow_recompiles=False)
"""

FAKE_LIB = """\
def normalise(x):
    n = float(x.norm())
    return x / n
"""

TEST_LIB = """\
import torch
from fakelib import normalise
from pt2lint.pytest_plugin import assert_no_graph_breaks


def step(x):
    return normalise(x) + 1


def test_user_frame():
    assert_no_graph_breaks(step, torch.ones(3))


def test_library_frame():
    assert_no_graph_breaks(step, torch.ones(3), include_library_frames=True)
"""

def _readme_blocks() -> tuple:
    """(the python example, the sample failure) of the README's "pytest plugin" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## pytest plugin\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", section, re.S | re.M)
    python = [body for lang, body in blocks if lang == "python"]
    plain = [body for lang, body in blocks if lang == ""]
    assert len(python) == 1 and len(plain) == 1, blocks
    return python[0], plain[0]


EXPECTED_FAILED = {
    "test_helper.py::test_broken",
    "test_marked.py::test_marked_broken",
    "test_marked.py::test_fixture_broken",
    "test_marked.py::test_bad_option",
    "test_marked.py::test_marked_own_failure",
    "test_recompile.py::test_not_allowed",
    "test_recompile.py::test_marked_not_allowed",
    "test_lib.py::test_user_frame",
    "test_lib.py::test_library_frame",
}
EXPECTED_PASSED = {
    "test_helper.py::test_clean",
    "test_marked.py::test_marked_backend_clean",
    "test_marked.py::test_unmarked_broken_is_not_watched",
    "test_recompile.py::test_allowed",
    "test_recompile.py::test_one_call",
    "test_readme.py::test_net_has_no_graph_breaks",
    "test_readme.py::test_no_recompiles_over_calls",
    "test_readme.py::test_training_loop",
}


def _outcomes(output: str) -> dict:
    """``nodeid -> "PASSED"/"FAILED"`` from the ``-rA`` short summary."""
    found = {}
    for line in output.split("short test summary info")[-1].splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR"):
            found[rest.split(" - ")[0].strip()] = word
    return found


def test_plugin_on_a_project(pytester: pytest.Pytester) -> None:
    """One child pytest run over a small project (one torch import for all cases)."""
    if torch is None:
        pytest.skip("needs torch")
    models = MODELS + (
        "\n\nCOMPILED = []\n\n\n"
        "def counting_backend(gm, example_inputs):\n"
        "    COMPILED.append(gm)\n"
        "    return gm.forward\n"
    )
    lib_dir = pytester.path / "venv" / "lib" / "site-packages"
    lib_dir.mkdir(parents=True)
    (lib_dir / "fakelib.py").write_text(FAKE_LIB)
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(lib_dir)!r})\n")
    readme_example, readme_failure = _readme_blocks()
    pytester.makepyfile(
        helpers=HELPERS, models=models, test_helper=TEST_HELPER, test_marked=TEST_MARKED,
        test_recompile=TEST_RECOMPILE, test_lib=TEST_LIB, test_readme=readme_example,
    )
    result = _run(pytester, "-rA")
    out = result.stdout.str()
    outcomes = _outcomes(out)
    assert outcomes == {**{n: "FAILED" for n in EXPECTED_FAILED}, **{n: "PASSED" for n in EXPECTED_PASSED}}, out

    item_line = _line(HELPERS, ".item()")
    call_line = _line(MODELS, "scale(y)")

    # A model that breaks in a helper of another module: named at the helper's line.
    failure = _section(out, "test_broken")
    assert f"graph break 1: helpers.py:{item_line} in scale" in failure, failure
    assert "s = x.sum().item()" in failure
    assert f"called from models.py:{call_line} in forward" in failure
    assert "Unsupported Tensor.item() call with capture_scalar_outputs=False" in failure
    assert "GB0124" in failure
    assert "pt2lint: PTC101 tensor-item" in failure
    assert "graph break 2" not in failure
    named = [ln for ln in failure.splitlines() if ln.lstrip().startswith(("graph break", "called from"))]
    assert named and not any("torch" + os.sep in ln or "site-packages" in ln for ln in named), named
    # The README shows this very failure.
    shown = [ln.rstrip() for ln in failure.splitlines()]
    for line in readme_failure.splitlines():
        assert any(got.endswith(line.rstrip()) for got in shown), (line, failure)

    # The marker and the fixture watch what the test compiles.
    for name in ("test_marked_broken", "test_fixture_broken"):
        failure = _section(out, name)
        assert f"graph break 1: helpers.py:{item_line} in scale" in failure, failure
        assert "GB0124" in failure and "PTC101" in failure
        assert f"in {name}" in failure  # the outermost user frame is the test itself
    own = _section(out, "test_marked_own_failure")
    assert "the test's own failure" in own and "graph break 1" not in own, own
    bad = _section(out, "test_bad_option")
    assert "unknown option 'fullgraph'" in bad and "Traceback" not in bad, bad

    # Recompiles fail only when asked, with the guard's line and pt2lint's rule.
    guard_line = _line(MODELS, "self.calls += 1")
    for name in ("test_not_allowed", "test_marked_not_allowed"):
        failure = _section(out, name)
        headline = failure.splitlines()[1] if name == "test_marked_not_allowed" else failure
        assert "1 recompile" in headline, failure
        assert "graph break" not in headline.split("recompile")[0].split(":")[-1]
        assert "self.calls == 0" in failure
        assert f"guard from models.py:{guard_line}" in failure
        assert "PTC501" in failure
    assert "recompile 1 (call 2)" in _section(out, "test_not_allowed")

    # Frames in installed packages are skipped unless asked for.
    lib_call = _line(TEST_LIB, "normalise(x) + 1")
    lib_line = _line(FAKE_LIB, "float(")
    user = _section(out, "test_user_frame")
    assert f"graph break 1: test_lib.py:{lib_call} in step" in user, user
    assert f"inside library code at {os.path.join('venv', 'lib', 'site-packages', 'fakelib.py')}:{lib_line}" in user
    lib = _section(out, "test_library_frame")
    assert f"graph break 1: {os.path.join('venv', 'lib', 'site-packages', 'fakelib.py')}:{lib_line} in normalise" in lib, lib
    assert f"called from test_lib.py:{lib_call} in step" in lib


def test_pyproject_declares_the_pytest11_entry_point():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["entry-points"]["pytest11"] == {"pt2lint": "pt2lint.pytest_plugin"}
    try:
        dist = importlib.metadata.distribution("pt2lint")
    except importlib.metadata.PackageNotFoundError:
        return
    declared = [ep for ep in dist.entry_points if ep.group == "pytest11" and ep.name == "pt2lint"]
    if declared:  # an install made after the entry point was added (CI's fresh venv)
        import pt2lint.pytest_plugin

        assert declared[0].value == "pt2lint.pytest_plugin"
        assert declared[0].load() is pt2lint.pytest_plugin


def test_loading_the_plugin_does_not_import_torch():
    code = textwrap.dedent(
        """\
        import sys
        import pt2lint.pytest_plugin as plugin
        print(sorted(m for m in ("torch", "libcst") if m in sys.modules))
        sys.modules["torch"] = None  # as if torch were not installed
        try:
            plugin.assert_no_graph_breaks(len, ())
        except ImportError as exc:
            print(exc)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "[]",
        "pt2lint's graph-break checks need torch: install the torch build you want, e.g. CPU only: "
        "pip install torch --index-url https://download.pytorch.org/whl/cpu "
        "(CUDA builds: https://pytorch.org/get-started/locally/)",
    ]


def test_break_placed_at_the_innermost_user_frame_without_torch(tmp_path, monkeypatch):
    """The placement and the message, from a GraphBreak as the collector returns it (no torch run)."""
    from pt2lint.confirm.dynamo import GraphBreak
    from pt2lint.pytest_plugin import BreakReport, CompileReport, _place

    user = str(tmp_path / "proj" / "model.py")
    lib = str(tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "lib" / "ops.py")
    gb = GraphBreak(
        filename=lib, lineno=5, reason="Data dependent operator", gb_type="GB0033",
        user_stack=((user, 10, "forward"), (user, 20, "helper"), (lib, 5, "op")),
    )
    where, callers, library, in_user = _place(gb, include_library_frames=False)
    assert where == (user, 20, "helper") and callers == ((user, 10, "forward"),)
    assert library == (lib, 5, "op") and in_user
    where, callers, library, in_user = _place(gb, include_library_frames=True)
    assert where == (lib, 5, "op") and callers == ((user, 10, "forward"), (user, 20, "helper"))
    assert library is None
    only_lib = GraphBreak(filename=lib, lineno=5, reason="r", gb_type=None, user_stack=((lib, 5, "op"),))
    assert _place(only_lib, include_library_frames=False) == ((lib, 5, "op"), (), None, False)

    monkeypatch.chdir(tmp_path)
    report = CompileReport(
        "torch.compile(backend='eager') of Net", "'eager'",
        (
            BreakReport(user, 20, "helper", "Data dependent operator", "GB0033", callers=((user, 10, "forward"),),
                        library_frame=(lib, 5, "op"), predicted_by=("PTC102",)),
            BreakReport(user, 12, "forward", "Unsupported Tensor.item() call", "GB0124", rule="PTC101", rule_name="tensor-item"),
        ),
        (),
    )
    assert report.failed() and not CompileReport("s", "'eager'", (), ()).failed(allow_recompiles=False)
    text = report.format()
    assert text.splitlines()[0] == "torch.compile(backend='eager') of Net: 2 graph breaks"
    model = os.path.join("proj", "model.py")
    assert f"graph break 1: {model}:20 in helper" in text
    assert "GB0033, https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0033.html" in text
    assert "pt2lint: PTC090 dynamic-only (no pt2lint finding at this line; GB0033 is predicted by PTC102)" in text
    assert f"called from {model}:10 in forward" in text
    assert f"graph break 2: {model}:12 in forward" in text and "pt2lint: PTC101 tensor-item" in text
