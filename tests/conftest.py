"""Shared fixtures for the front-end tests (CLI, config, discovery, reporters).

``fake_specs`` points the rule catalog at a few throwaway specs, and
``fake_analysis`` replaces the analysis with a line matcher, so these tests
do not depend on the real catalog or analysis while those change.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

FAKE_SPECS = {
    "PTC001": ("syntax-error", "internal", "error"),
    "PTC002": ("unused-suppression", "internal", "error"),
    "PTC101": ("tensor-item", "data-dependent", "error"),
    "PTC102": ("tensor-tolist", "data-dependent", "error"),
    "PTC301": ("print-call", "side-effect", "error"),
    "PTC601": ("export-numpy", "export", "warning"),
}


def _spec_toml(code: str, name: str, category: str, severity: str) -> str:
    targets = '\ntargets = ["export"]' if category == "export" else ""
    return textwrap.dedent(
        f'''\
        code = "{code}"
        name = "{name}"
        category = "{category}"
        severity = "{severity}"
        summary = "Summary of {name}."
        why = "Why {name} is bad."
        fix = "How to fix {name}."
        gb_types = ["GB0001"]{targets}

        [[examples]]
        kind = "bad"
        code = "x.item()"
        flag = [1]
        '''
    )


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory, monkeypatch):
    """Each test gets its own result cache, so a cached result never leaks between tests."""
    monkeypatch.setenv("PT2LINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def fake_specs(tmp_path_factory, monkeypatch) -> Path:
    """Point :func:`pt2lint.specs.load_specs` at the throwaway catalog :data:`FAKE_SPECS`; returns its folder."""
    import pt2lint.specs

    folder = tmp_path_factory.mktemp("specs")
    for code, (name, category, severity) in FAKE_SPECS.items():
        (folder / f"{code}.toml").write_text(_spec_toml(code, name, category, severity))
    monkeypatch.setattr(pt2lint.specs, "specs_dir", lambda: folder)
    return folder


@pytest.fixture
def fake_analysis(monkeypatch):
    """Replace the analysis: ``.item()`` on a line is PTC101 (no fix), ``print(`` is PTC301 (with a safe fix)."""
    import pt2lint.analysis.driver
    from pt2lint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position

    def analyse_module(module, source, filename, settings, enabled):
        out = []
        for row, line in enumerate(source.splitlines(), start=1):
            col = line.find(".item()")
            if col >= 0 and "PTC101" in enabled:
                out.append(Diagnostic(
                    code="PTC101", name="tensor-item", message="`.item()` on a tensor breaks the graph",
                    filename=filename, start=Position(row, col + 1), end=Position(row, col + 8),
                    severity="error", category="data-dependent", gb_types=("GB0124",),
                    symbol="Net.forward", call_chain=("Net.forward", "Net._helper"),
                ))
            col = line.find("print(")
            if col >= 0 and "PTC301" in enabled:
                fix = Fix("remove the print", Applicability.SAFE, (Edit(Position(row, col + 1), Position(row, len(line) + 1), "pass"),))
                out.append(Diagnostic(
                    code="PTC301", name="print-call", message="`print` breaks the graph",
                    filename=filename, start=Position(row, col + 1), end=Position(row, len(line) + 1),
                    severity="error", category="side-effect", symbol="Net.forward", fix=fix,
                ))
        return out

    monkeypatch.setattr(pt2lint.analysis.driver, "analyse_module", analyse_module)
    # The fake flags text anywhere, so the engine's region prefilter must not skip files.
    import pt2lint.engine

    monkeypatch.setattr(pt2lint.engine, "_may_have_findings", lambda source: True)
    return analyse_module


@pytest.fixture(scope="module")
def tool():
    """``tools/gen_dynamo_facts.py`` imported as a module (needs torch and NumPy, else the test skips)."""
    import importlib.util
    import sys
    from pathlib import Path

    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    path = Path(__file__).resolve().parent.parent / "tools" / "gen_dynamo_facts.py"
    spec = importlib.util.spec_from_file_location("gen_dynamo_facts", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_dynamo_facts"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("gen_dynamo_facts", None)
