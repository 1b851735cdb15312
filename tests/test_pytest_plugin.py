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
    in-process run imported, and torch submodules first imported by Dynamo
    inside the run do not survive being dropped and collected.

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

EXPECTED_FAILED = {
    "test_helper.py::test_broken",
    "test_marked.py::test_marked_broken",
    "test_marked.py::test_fixture_broken",
    "test_marked.py::test_bad_option",
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
    pytester.makepyfile(
        helpers=HELPERS, models=models, test_helper=TEST_HELPER, test_marked=TEST_MARKED,
        test_recompile=TEST_RECOMPILE, test_lib=TEST_LIB,
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

    # The marker and the fixture watch what the test compiles.
    for name in ("test_marked_broken", "test_fixture_broken"):
        failure = _section(out, name)
        assert f"graph break 1: helpers.py:{item_line} in scale" in failure, failure
        assert "GB0124" in failure and "PTC101" in failure
        assert f"in {name}" in failure  # the outermost user frame is the test itself
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
    code = "import sys, pt2lint.pytest_plugin; print(sorted(m for m in ('torch', 'libcst') if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
