"""Never crash, never corrupt: bounded property tests and the fuzzers' regressions.

Generated modules (hypothesmith), the same as the body of ``forward`` in an
``nn.Module``, random torch-flavoured modules and mutated fixtures must never make
``lint_source`` or ``pt2lint check`` raise: a syntax error is a ``PTC001`` finding.
``pt2lint fix --unsafe-fixes`` on them must yield code that parses, be idempotent and
leave a file without findings untouched (those tests skip while the CLI has no ``fix``).
Every input the long fuzzer (``tools/fuzz.py``) found failing lives in
``tests/regressions/`` and is linted (and fixed) here.

Budgets are small (the whole file runs in well under a minute); ``tools/fuzz.py`` is the
long run.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import random
import tempfile

import pytest

hypothesis = pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pt2lint.engine import DecodeError, decode_source, lint_source  # noqa: E402
from pt2lint.settings import LintSettings, resolve_selection  # noqa: E402

# hypothesmith compiles what it generates; CPython's warnings about that code are noise here
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGRESSIONS = os.path.join(REPO, "tests", "regressions")


def _load_tool():
    spec = importlib.util.spec_from_file_location("pt2lint_fuzz_tool", os.path.join(REPO, "tools", "fuzz.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fuzz = _load_tool()

ALL = LintSettings(enabled=resolve_selection(select=["ALL"]))
EXPORT = LintSettings(
    enabled=resolve_selection(select=["ALL"], target="export"),
    target="export",
    capture_scalar_outputs=True,
    capture_dynamic_output_shape_ops=True,
)
QUICK = dict(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def assert_lints(source: str, lint_settings: LintSettings = ALL):
    """``lint_source`` returns (never raises), with no error, sane positions, and PTC001 when LibCST cannot parse."""
    result = lint_source(source, "fuzz.py", lint_settings, keep_source=True)
    assert result.error is None, result.error
    n_lines = len(source.splitlines()) + 1
    for d in result.diagnostics:
        assert 1 <= d.start.line <= n_lines + 1 and d.start.column >= 1 and d.start <= d.end, d
    if not fuzz.libcst_parses(source) and not fuzz.cpython_parses(source):
        assert any(d.code == "PTC001" for d in result.diagnostics), "an unparseable module must be a PTC001 finding"
    return result


def fix_command_available() -> bool:
    return fuzz.fix_available()


needs_fix = pytest.mark.skipif(not fix_command_available(), reason="`pt2lint fix` does not exist yet")


# --- check: never raises -------------------------------------------------------------------------


@settings(max_examples=40, **QUICK)
@given(hypothesmith.from_grammar())
def test_generated_module_never_raises(source):
    assert_lints(source)


@settings(max_examples=40, **QUICK)
@given(hypothesmith.from_grammar())
def test_generated_module_as_forward_body_never_raises(source):
    assert_lints(fuzz.wrap_as_forward(source), EXPORT)


@settings(max_examples=6, **QUICK)
@given(hypothesmith.from_node())
def test_generated_syntax_tree_as_forward_body_never_raises(source):
    wrapped = fuzz.wrap_as_forward(source)
    result = assert_lints(wrapped)
    if fuzz.libcst_parses(wrapped) and fuzz.cpython_parses(wrapped):
        assert not any(d.code == "PTC001" for d in result.diagnostics), "PTC001 on code both parsers accept"


@settings(max_examples=30, **QUICK)
@given(st.integers(min_value=0, max_value=2**32))
def test_random_torch_module_never_raises(seed):
    source = fuzz.TorchProgram(random.Random(seed)).module()
    assert_lints(source, ALL if seed % 2 else EXPORT)


CORPUS = fuzz.load_corpus()


@settings(max_examples=60, **QUICK)
@given(st.integers(min_value=0, max_value=2**32), st.booleans())
def test_mutated_fixture_never_raises(seed, with_bytes):
    rng = random.Random(seed)
    data = fuzz.mutate(rng.choice(CORPUS), rng, CORPUS, allow_bytes=with_bytes)
    try:
        source = decode_source(data)
    except DecodeError:
        return  # an error message for the user, never an exception (see test_bad_input.py)
    assert_lints(source, ALL if seed % 2 else EXPORT)


@settings(max_examples=30, **QUICK)
@given(hypothesmith.from_grammar(), st.data())
def test_damaged_module_is_a_finding_not_an_exception(source, data):
    """Cut the module anywhere and insert a token anywhere: still findings, never an exception."""
    cut = data.draw(st.integers(min_value=0, max_value=len(source)), label="cut")
    at = data.draw(st.integers(min_value=0, max_value=cut), label="at")
    token = data.draw(st.sampled_from(["(", ")", ":", "\\", "'", '"""', "\t", "\x00", "\ufeff", "lambda", "else", "\r"]), label="token")
    assert_lints(fuzz.wrap_as_forward(source[:at] + token + source[at:cut]))


@settings(max_examples=6, **QUICK)
@given(st.integers(min_value=0, max_value=2**32))
def test_cli_check_never_raises(seed):
    """The whole ``pt2lint check`` (discovery, decoding, every reporter) on random and mutated files."""
    rng = random.Random(seed)
    data = fuzz.TorchProgram(rng).module().encode() if seed % 2 else fuzz.mutate(rng.choice(CORPUS), rng, CORPUS, True)
    with tempfile.TemporaryDirectory() as workdir:
        for fmt in ("text", "full", "json", "sarif"):
            assert fuzz.cli_check_input(data, workdir, fmt) in (0, 1, 2)


# --- fix: parses, idempotent, untouched without findings --------------------------------------------


def assert_fix_is_safe(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        try:
            fuzz.fix_input(data, workdir)
        except fuzz.Failure as exc:
            pytest.fail(f"{exc.kind}: {exc.detail}\n--- input ---\n{data.decode('utf-8', 'replace')}")


@needs_fix
@settings(max_examples=15, **QUICK)
@given(hypothesmith.from_grammar(), st.booleans())
def test_fix_on_generated_module_is_safe(source, as_forward):
    assert_fix_is_safe((fuzz.wrap_as_forward(source) if as_forward else source).encode("utf-8", "surrogatepass"))


@needs_fix
@settings(max_examples=10, **QUICK)
@given(st.integers(min_value=0, max_value=2**32))
def test_fix_on_random_torch_module_is_safe(seed):
    assert_fix_is_safe(fuzz.TorchProgram(random.Random(seed)).module().encode())


@needs_fix
@settings(max_examples=10, **QUICK)
@given(st.integers(min_value=0, max_value=2**32))
def test_fix_on_mutated_fixture_is_safe(seed):
    rng = random.Random(seed)
    assert_fix_is_safe(fuzz.mutate(rng.choice(CORPUS), rng, CORPUS, allow_bytes=False))


@needs_fix
@pytest.mark.parametrize("name", sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "fixtures", "models", "*.py"))))
def test_fix_on_fixture_is_safe(name):
    with open(os.path.join(REPO, "fixtures", "models", name), "rb") as fh:
        assert_fix_is_safe(fh.read())


# --- regressions: every failure the fuzzers found ---------------------------------------------------

REGRESSION_FILES = sorted(glob.glob(os.path.join(REGRESSIONS, "*.py")))


def test_regressions_are_listed_in_their_readme():
    with open(os.path.join(REGRESSIONS, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    missing = [os.path.basename(p) for p in REGRESSION_FILES if f"`{os.path.basename(p)}`" not in readme]
    assert not missing, f"describe these in tests/regressions/README.md: {missing}"


@pytest.mark.parametrize("path", REGRESSION_FILES, ids=os.path.basename)
def test_regression_check(path):
    with open(path, "rb") as fh:
        data = fh.read()
    for variant in (0, 1):
        try:
            fuzz.check_input(data, variant)
        except fuzz.Failure as exc:
            pytest.fail(f"{exc.kind}: {exc.detail}")
    with tempfile.TemporaryDirectory() as workdir:
        assert fuzz.cli_check_input(data, workdir, "full") in (0, 1, 2)


@needs_fix
@pytest.mark.parametrize("path", REGRESSION_FILES, ids=os.path.basename)
def test_regression_fix(path):
    with open(path, "rb") as fh:
        assert_fix_is_safe(fh.read())


# --- determinism: fixes do not depend on PYTHONHASHSEED ---------------------------------------------


@needs_fix
def test_fix_of_random_torch_modules_is_identical_under_three_hash_seeds():
    """``tools/fuzz.py``'s ``seeds`` stage on generated modules that have rewrites, plus the
    many-operand fixture (its branch parameters once followed a set's hash order)."""
    rng = random.Random(20261201)
    programs = [fuzz.TorchProgram(random.Random(rng.randrange(2**32))).module() for _ in range(3)]
    with open(os.path.join(REPO, "fixtures", "fix", "cond_many_operands.py"), encoding="utf-8") as fh:
        programs.append(fh.read())
    with tempfile.TemporaryDirectory() as workdir:
        try:
            out = fuzz.fix_seed_input([p.encode() for p in programs], workdir)
        except fuzz.Failure as exc:
            pytest.fail(f"{exc.kind}: {exc.detail[-3000:]}")
    assert out["changed"]
