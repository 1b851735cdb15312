"""A ``cond`` fix is safe only when proven: module state, totality, dtypes, gradients, compilation.

The three rewrites the issue found broken -- a branch that indexes with a boolean mask
valid only when its predicate holds, a ``BatchNorm`` called in a branch in train mode,
and a branch that changes its output's dtype -- are never applied by default here.  Each
static case has a near miss that must stay safe, and each hazard has a companion that
runs the naive rewrite on torch 2.13 and shows the failure it would have caused, so the
verdicts rest on what ``torch.cond`` does.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from pt2lint.config import ConfigError, load_project
from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.fixes.cond import EAGER_COST
from pt2lint.settings import LintSettings, resolve_selection
from test_fix import fix as apply_fix

COMPILED = LintSettings(enabled=resolve_selection(), assume_compiled=True)
DEFAULT = LintSettings(enabled=resolve_selection())
CAPTURE = LintSettings(enabled=resolve_selection(), assume_compiled=True, capture_dynamic_output_shape_ops=True)
HEADER = "import torch\nimport torch.nn as nn\n\n\n"


def src(forward: str, init: str = "", pre: str = "", args: str = "x", post: str = "") -> str:
    text = HEADER + textwrap.dedent(pre).lstrip("\n") + "class M(nn.Module):\n"
    if init:
        text += "    def __init__(self):\n        super().__init__()\n" + textwrap.indent(textwrap.dedent(init).strip("\n"), " " * 8) + "\n\n"
    text += f"    def forward(self, {args}):\n" + textwrap.indent(textwrap.dedent(forward).strip("\n"), " " * 8) + "\n"
    return text + textwrap.dedent(post)


def cond_fix(text: str, settings: LintSettings = COMPILED):
    diags = lint_source(text, "m.py", settings, fix_names=lambda d: ["cond"]).diagnostics
    fixes = [d.fix for d in diags if d.fix is not None and d.fix.name == "cond"]
    assert fixes, [(d.code, d.message) for d in diags]
    return fixes[0]


def branches(true: str, false: str, pred: str = "x.sum() > 0") -> str:
    return f"if {pred}:\n    {true}\nelse:\n    {false}\nreturn y"


# ------------------------------------------------------------------ the three failures of the issue

MASKED = src(branches("y = x[mask] + x", "y = x * 2", pred="mask.all()"), args="x, mask")
BATCHNORM = src(branches("y = self.bn(x)", "y = x * 2"), init="self.bn = nn.BatchNorm1d(4)")
DTYPE = src(branches("y = x.half()", "y = x * 2"))


def test_masked_branch_is_refused_or_unsafe_never_safe():
    # without capture_dynamic_output_shape_ops the mask is a graph break of its own: refused
    f = cond_fix(MASKED)
    assert f.applicability is Applicability.DISPLAY_ONLY and "PTC201" in f.message, f.message
    # with it, torch.cond traces the mask with an unbacked size: unsafe, with the reason
    f = cond_fix(MASKED, CAPTURE)
    assert f.applicability is Applicability.UNSAFE and "boolean-mask indexing" in f.message, f.message
    assert apply_fix(MASKED, "cond", unsafe=False) == MASKED


def test_batchnorm_in_a_branch_is_refused_with_the_measured_reason():
    f = cond_fix(BATCHNORM)
    assert f.applicability is Applicability.DISPLAY_ONLY, f.message
    assert "torch.nn.BatchNorm1d" in f.message and "running_mean" in f.message and "train mode" in f.message
    assert "track_running_stats=False" in f.message
    assert apply_fix(BATCHNORM, "cond", unsafe=True) == BATCHNORM


def test_dtype_changing_branch_is_refused():
    f = cond_fix(DTYPE)
    assert f.applicability is Applicability.DISPLAY_ONLY and "float16 in one branch" in f.message, f.message
    assert apply_fix(DTYPE, "cond", unsafe=True) == DTYPE


# ------------------------------------------------------------------ module state, and near misses

STATE_CASES = [
    # (id, source, applicability, words of the reason)
    ("batchnorm2d-in-helper-module", src(
        branches("y = self.block(x)", "y = x * 2"), init="self.block = Block()",
        pre="class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.norm = nn.BatchNorm2d(4)\n\n"
            "    def forward(self, x):\n        return self.norm(x).relu()\n\n\n"), Applicability.DISPLAY_ONLY, "torch.nn.BatchNorm2d"),
    ("project-module-writes-buffer", src(
        branches("y = self.track(x)", "y = x * 2"), init="self.track = Tracker()",
        pre="class Tracker(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.register_buffer('seen', torch.zeros(()))\n\n"
            "    def forward(self, x):\n        self.seen.add_(1)\n        return x * 3\n\n\n"), Applicability.DISPLAY_ONLY, "Tracker"),
    ("lazy-module", src(branches("y = self.lin(x)", "y = self.lin(x * 2)"), init="self.lin = nn.LazyLinear(4)"), Applicability.DISPLAY_ONLY, "<parameters>"),
    ("unmeasured-container", src(branches("y = self.seq(x)", "y = self.seq(x * 2)"), init="self.seq = nn.Sequential(*layers())",
        pre="def layers():\n    return [nn.ReLU()]\n\n\n"), Applicability.UNSAFE, "not measured"),
    ("sequential-holding-batchnorm", src(branches("y = self.seq(x)", "y = self.seq(x * 2)"), init="self.seq = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))"),
     Applicability.DISPLAY_ONLY, "holds a torch.nn.BatchNorm1d"),
    ("near-miss-sequential-of-measured-modules", src(branches("y = self.seq(x)", "y = self.seq(x * 2)"), init="self.seq = nn.Sequential(nn.Linear(4, 4), nn.GELU())"),
     Applicability.UNSAFE, "not proven safe"),
    ("near-miss-modulelist-no-running-stats", src(branches("y = self.seq[0](x)", "y = self.seq[0](x * 2)"), init="self.seq = nn.ModuleList([nn.BatchNorm1d(4, track_running_stats=False)])"),
     Applicability.UNSAFE, "not proven safe"),
    # near misses: no running statistics, or modules measured to keep their buffers
    ("near-miss-no-running-stats", src(branches("y = self.bn(x)", "y = self.bn(x * 2)"), init="self.bn = nn.BatchNorm1d(4, track_running_stats=False)"), Applicability.SAFE, ""),
    ("near-miss-layernorm-both", src(branches("y = self.ln(x)", "y = self.ln(x * 2)"), init="self.ln = nn.LayerNorm(4)"), Applicability.SAFE, ""),
    ("near-miss-relu-one-branch", src(branches("y = self.act(x)", "y = x * 2"), init="self.act = nn.ReLU()"), Applicability.SAFE, ""),
]


@pytest.mark.parametrize("text, applicability, reason", [pytest.param(*c[1:], id=c[0]) for c in STATE_CASES])
def test_module_state_in_branches(text, applicability, reason):
    f = cond_fix(text)
    assert f.applicability is applicability, f.message
    assert reason in f.message


# ------------------------------------------------------------------ totality, gradients, dtypes

OTHER_CASES = [
    ("zero-d-index", src("if x.sum() > 0:\n    i = x.sum(1).argmax()\n    y = x[i] * 2\nelse:\n    y = x[0] * 3\nreturn y"), COMPILED, Applicability.DISPLAY_ONLY, "0-d integer tensor"),
    ("tensor-index", src(branches("y = x[idx] * 2", "y = x[:2] * 3"), args="x, idx"), COMPILED, Applicability.UNSAFE, "indexes with a tensor"),
    ("nonzero", src(branches("y = x.nonzero().sum() + x", "y = x * 2"), args="x"), CAPTURE, Applicability.UNSAFE, "data-dependent size"),
    ("view-literal-sizes", src(branches("y = x.view(2, -1).sum(0)", "y = x.sum(0)")), COMPILED, Applicability.UNSAFE, "literal sizes"),
    ("near-miss-view-from-shape", src(branches("y = x.view(x.shape[0], -1) * 2", "y = x.reshape(x.shape[0], -1) - 1")), COMPILED, Applicability.UNSAFE, "not proven safe"),
    ("one-branch-parameter", src(branches("y = self.lin(x) * self.scale", "y = x * 2"), init="self.lin = nn.Linear(4, 4)\nself.scale = nn.Parameter(torch.ones(4))"),
     COMPILED, Applicability.UNSAFE, "zero `.grad` instead of None"),
    ("near-miss-parameter-used-before", src("h = self.lin(x)\n" + branches("y = self.lin(h) * 2", "y = h * 2"), init="self.lin = nn.Linear(4, 4)"), COMPILED, Applicability.UNSAFE, "not proven safe"),
    ("near-miss-parameter-in-both", src(branches("y = self.lin(x) * 2", "y = self.lin(x) - 1"), init="self.lin = nn.Linear(4, 4)"), COMPILED, Applicability.SAFE, ""),
    ("near-miss-same-cast", src(branches("y = x.half() * 2", "y = x.half() - 1")), COMPILED, Applicability.SAFE, ""),
    # a float32 buffer promotes a float16 `x` (`x * 2` does not), a Python float an int64 one:
    # torch.cond raises for those inputs (measured in test_naive_promoting_rewrites_raise)
    ("buffer-one-branch", src(branches("y = x * self.mean", "y = x * 2"), init="self.register_buffer('mean', torch.zeros(4))"), COMPILED, Applicability.UNSAFE, "not proven to keep one dtype"),
    ("config-constant-unknown-input", src(branches("y = x * self.eps", "y = x * 2"), init="self.eps = 0.5"), COMPILED, Applicability.UNSAFE, "not proven to keep one dtype"),
    ("near-miss-config-constant-floating", src("h = self.lin(x)\n" + branches("y = h * self.eps", "y = h * 2"), init="self.lin = nn.Linear(4, 4)\nself.eps = 0.5"), COMPILED, Applicability.SAFE, ""),
]


@pytest.mark.parametrize("text, settings, applicability, reason", [pytest.param(*c[1:], id=c[0]) for c in OTHER_CASES])
def test_totality_gradients_and_dtypes(text, settings, applicability, reason):
    f = cond_fix(text, settings)
    assert f.applicability is applicability, f.message
    assert reason in f.message


# ------------------------------------------------------------------ compiled or not (assume-compiled)

PLAIN = src(branches("y = x * 2", "y = x - 1"))


def test_cond_fix_of_code_not_known_to_be_compiled_is_unsafe_by_default():
    f = cond_fix(PLAIN, DEFAULT)
    assert f.applicability is Applicability.UNSAFE
    assert "not known to run under torch.compile" in f.message and "assume-compiled" in f.message
    assert EAGER_COST in f.message
    assert cond_fix(PLAIN, COMPILED).applicability is Applicability.SAFE
    assert EAGER_COST in cond_fix(PLAIN, COMPILED).message  # the cost is stated on every rewrite


@pytest.mark.parametrize(
    "post",
    [
        "\n\nmodel = torch.compile(M())\n",
        "\n\ndef build():\n    m = M()\n    m = torch.compile(m, mode='max-autotune')\n    return m\n",
        "\n\nm = M()\nm.compile()\n",
        "\n\nclass Outer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.inner = M()\n\n"
        "    def forward(self, x):\n        return self.inner(x)\n\n\nouter = torch.compile(Outer())\n",
    ],
    ids=["compile-instance", "compile-bound-name", "module-compile-method", "submodule-of-compiled"],
)
def test_cond_fix_of_a_module_the_file_compiles_is_safe(post):
    assert cond_fix(PLAIN + post, DEFAULT).applicability is Applicability.SAFE


def test_compiling_another_class_does_not_count():
    text = PLAIN + "\n\nclass Other(nn.Module):\n    def forward(self, x):\n        return x\n\n\nother = torch.compile(Other())\n"
    assert cond_fix(text, DEFAULT).applicability is Applicability.UNSAFE


def test_decorated_function_is_compiled():
    text = HEADER + "@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        y = x * 2\n    else:\n        y = x - 1\n    return y\n"
    assert cond_fix(text, DEFAULT).applicability is Applicability.SAFE
    plain = text.replace("@torch.compile\n", "") + "\n\ng = torch.compile(f)\n"
    assert cond_fix(plain, DEFAULT).applicability is Applicability.SAFE


def test_assume_compiled_setting_is_read_and_validated(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\nassume-compiled = true\n")
    assert load_project([str(tmp_path)]).settings.assume_compiled is True
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\nassume-compiled = \"yes\"\n")
    with pytest.raises(ConfigError, match="'assume-compiled' must be true or false"):
        load_project([str(tmp_path)])
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\n")
    assert load_project([str(tmp_path)]).settings.assume_compiled is False
    assert LintSettings(assume_compiled=True).fingerprint() != LintSettings().fingerprint()


def test_assume_compiled_flag_applies_the_fix(tmp_path, monkeypatch):
    from clitools import cli_runner
    from pt2lint.cli import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\n")
    (tmp_path / "m.py").write_text(PLAIN)
    runner = cli_runner()
    plain = runner.invoke(cli, ["fix", "--no-cache", "--rule", "cond", "--diff", "m.py"], catch_exceptions=False)
    assert plain.stdout == "" and "not known to run under torch.compile" in plain.stderr  # unsafe: not applied
    flagged = runner.invoke(cli, ["fix", "--no-cache", "--rule", "cond", "--diff", "--assume-compiled", "m.py"], catch_exceptions=False)
    assert flagged.exit_code == 1 and "+        y = torch.cond(x.sum() > 0, _true_fn, _false_fn, (x,))" in flagged.stdout


# ------------------------------------------------------------------ ground truth (torch 2.13)

def _cls(text: str, name: str = "M"):
    scope: dict = {}
    exec(compile(text, "m.py", "exec"), scope)
    return scope[name]


NAIVE_BATCHNORM = src(
    "def _true_fn(x):\n    return self.bn(x)\ndef _false_fn(x):\n    return x * 2\nreturn torch.cond(x.sum() > 0, _true_fn, _false_fn, (x,))",
    init="self.bn = nn.BatchNorm1d(4)",
)


def test_naive_batchnorm_rewrite_raises_in_train_mode_eager_and_compiled():
    torch = pytest.importorskip("torch")
    x = torch.rand(3, 4) + 0.1
    _cls(BATCHNORM)().train()(x)  # the original trains
    model = _cls(NAIVE_BATCHNORM)().train()
    with pytest.raises(Exception, match="higher order operator|mutat"):
        model(x)
    torch._dynamo.reset()
    with pytest.raises(Exception):
        torch.compile(model, backend="eager", fullgraph=True)(x)
    # measured near misses: eval mode, and no running statistics, run
    torch._dynamo.reset()
    model.eval()(x)
    free = _cls(NAIVE_BATCHNORM.replace("nn.BatchNorm1d(4)", "nn.BatchNorm1d(4, track_running_stats=False)"))().train()
    free(x)


NAIVE_MASKED = src(
    "def _true_fn(x, mask):\n    return x[mask] + x\ndef _false_fn(x, mask):\n    return x * 2\nreturn torch.cond(mask.all(), _true_fn, _false_fn, (x, mask))",
    args="x, mask",
)


def test_masked_branch_rewrite_as_torch_2_13_runs_it():
    """What torch 2.13 does with the naive rewrite of the masked branch: it traces ``x[mask]``
    with an unbacked size and checks the size against ``x`` at run time, in the branch that
    runs.  For these inputs it runs and agrees with the original (the failure the issue saw
    does not reproduce on torch 2.13); pt2lint cannot prove such a branch total in general,
    so the fix is unsafe (with the capture knob) or refused (without it), never safe."""
    torch = pytest.importorskip("torch")
    x = torch.arange(1.0, 5.0)
    original, naive = _cls(MASKED)(), _cls(NAIVE_MASKED)()
    for mask in (torch.ones(4, dtype=torch.bool), torch.tensor([True, False, True, False])):
        torch.testing.assert_close(naive(x, mask), original(x, mask))


NAIVE_DTYPE = src("def _true_fn(x):\n    return x.half()\ndef _false_fn(x):\n    return x * 2\nreturn torch.cond(x.sum() > 0, _true_fn, _false_fn, (x,))")


def test_naive_dtype_changing_rewrite_raises():
    torch = pytest.importorskip("torch")
    x = torch.arange(1.0, 5.0)
    for inp in (x, -x):
        _cls(DTYPE)()(inp)
        with pytest.raises(Exception):
            _cls(NAIVE_DTYPE)()(inp)


def test_one_branch_parameters_get_zero_grad_instead_of_none_after_the_rewrite():
    torch = pytest.importorskip("torch")
    text = next(c[1] for c in OTHER_CASES if c[0] == "one-branch-parameter")
    rewritten = apply_fix(text, "cond", unsafe=True)
    assert "torch.cond(" in rewritten
    torch.manual_seed(0)
    m1 = _cls(text)()
    m2 = _cls(rewritten)()
    m2.load_state_dict(m1.state_dict())
    for compiled in (False, True):
        torch._dynamo.reset()
        for m in (m1, m2):
            m.zero_grad(set_to_none=True)
            x = -torch.ones(3, 4, requires_grad=True)  # takes the `else` branch
            (torch.compile(m, backend="eager") if compiled else m)(x).sum().backward()
        assert m1.lin.weight.grad is None and m1.scale.grad is None
        assert m2.lin.weight.grad is not None and not m2.lin.weight.grad.any()
        assert m2.scale.grad is not None and not m2.scale.grad.any()


def test_naive_view_with_literal_sizes_raises_for_inputs_it_does_not_fit():
    torch = pytest.importorskip("torch")
    text = next(c[1] for c in OTHER_CASES if c[0] == "view-literal-sizes")
    rewritten = apply_fix(text, "cond", unsafe=True)
    assert "torch.cond(" in rewritten
    x = torch.ones(3, 3)  # 9 elements: `view(2, -1)` does not fit
    _cls(text)()(-x)  # the original takes the `else` branch and never views
    with pytest.raises(Exception):
        _cls(rewritten)()(-x)


def test_naive_zero_d_index_rewrite_raises():
    torch = pytest.importorskip("torch")
    text = next(c[1] for c in OTHER_CASES if c[0] == "zero-d-index")
    naive = src(
        "def _true_fn(x):\n    i = x.sum(1).argmax()\n    return x[i] * 2\ndef _false_fn(x):\n    return x[0] * 3\n"
        "return torch.cond(x.sum() > 0, _true_fn, _false_fn, (x,))"
    )
    x = torch.rand(3, 4)
    for inp in (x, -x):
        _cls(text)()(inp)
        with pytest.raises(Exception):
            _cls(naive)()(inp)


# ------------------------------------------------------------------ helpers imported from other project files

# The codemod's facts come from the project model the rules use: a branch calling a helper of
# another file is judged by that helper's findings and writes, as one of this file would be.
PROJECT_MODEL = HEADER + "{imp}\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            y = helper(x)\n        else:\n            y = x * 2\n        return y\n"


def _package(root, name: str, helper: str, init: str = "", imp: str = "from .utils import helper", extra=None) -> str:
    """A package ``name`` under ``root`` (a ``pyproject.toml`` above it): ``utils.py`` holds
    ``helper``, ``model.py`` (returned) calls it in the `if` branch of a compiled forward."""
    (root / "pyproject.toml").write_text("[tool.pt2lint]\nassume-compiled = true\n")
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(init)
    (pkg / "utils.py").write_text(textwrap.dedent(helper).lstrip("\n"))
    for fname, text in (extra or {}).items():
        (pkg / fname).write_text(textwrap.dedent(text).lstrip("\n"))
    model = PROJECT_MODEL.format(imp=imp.replace("PKG", name))
    (pkg / "model.py").write_text(model)
    return model


def project_cond_fix(root, name: str):
    text = (root / name / "model.py").read_text()
    diags = lint_source(text, f"{name}/model.py", COMPILED, fix_names=lambda d: ["cond"]).diagnostics
    fixes = [d.fix for d in diags if d.fix is not None and d.fix.name == "cond"]
    assert fixes, [(d.code, d.message) for d in diags]
    return fixes[0]


BREAKING_HELPERS = [
    # (id, helper source, words of the reason)
    ("item", "def helper(x):\n    return x * x.sum().item()\n", "PTC101"),
    ("print", "def helper(x):\n    print('h', x)\n    return x * 3\n", "PTC301"),
    ("data-dependent-if", "def helper(x):\n    if x.max() > 1:\n        return x * 3\n    return x - 1\n", "PTC104"),
    ("writes-its-input", "def helper(x):\n    x.add_(1)\n    return x * 3\n", "PTC401"),
    ("appends-to-a-global", "SEEN = []\n\n\ndef helper(x):\n    SEEN.append(x)\n    return x * 3\n", "SEEN.append"),
    # (a store on a function object is a graph break of its own, GB0467: PTC330 is the reason given)
    ("sets-an-attribute", "def helper(x):\n    helper.calls = 1\n    return x * 3\n", "PTC330"),
]


@pytest.mark.parametrize("helper, reason", [pytest.param(*c[1:], id=c[0]) for c in BREAKING_HELPERS])
@pytest.mark.parametrize(
    "init, imp",
    [("", "from .utils import helper"), ("from .utils import helper\n", "from PKG import helper"), ("from .utils import helper\n", "from . import helper")],
    ids=["relative-import", "re-exported-by-the-package", "re-exported-from-dot"],
)
def test_branch_calling_a_breaking_helper_of_another_file_is_refused(tmp_path, monkeypatch, helper, reason, init, imp):
    monkeypatch.chdir(tmp_path)
    _package(tmp_path, "pkg", helper, init, imp)
    f = project_cond_fix(tmp_path, "pkg")
    assert f.applicability is Applicability.DISPLAY_ONLY and not f.edits, f.message
    assert "`helper` (pkg/utils.py, called from the `if` branch)" in f.message and reason in f.message, f.message


def test_a_break_two_files_away_names_the_function_and_its_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _package(
        tmp_path, "pkg", "from .deep import inner\n\n\ndef helper(x):\n    return inner(x) + 1\n",
        extra={"deep.py": "def inner(x):\n    return x * x.sum().item()\n"},
    )
    f = project_cond_fix(tmp_path, "pkg")
    assert f.applicability is Applicability.DISPLAY_ONLY, f.message
    assert "`inner` (pkg/deep.py, called from the `if` branch) has PTC101" in f.message


PURE_HELPER = "import torch\n\n\ndef helper(x):\n    return torch.tanh(x) * 3\n"


@pytest.mark.parametrize(
    "init, imp",
    [("", "from .utils import helper"), ("from .utils import helper\n", "from PKG import helper"), ("from .utils import helper\n", "from . import helper")],
    ids=["relative-import", "re-exported-by-the-package", "re-exported-from-dot"],
)
def test_branch_calling_a_pure_helper_of_another_file_is_rewritten(tmp_path, monkeypatch, init, imp):
    monkeypatch.chdir(tmp_path)
    _package(tmp_path, "pkg", PURE_HELPER, init, imp)
    f = project_cond_fix(tmp_path, "pkg")
    # offered (the helper is followed and pure), unsafe: a call of a helper is outside what
    # pt2lint.fixes.cond_proof proves (a helper's writes through aliases were missed before)
    assert f.applicability is Applicability.UNSAFE and "not proven safe" in f.message and f.edits, f.message
    assert "torch.cond(x.sum() > 0, _true_fn, _false_fn, (x,))" in "".join(e.content for e in f.edits)


def test_fix_command_refuses_the_rewrite_and_check_reports_why(tmp_path, monkeypatch):
    """The issue's commands: ``fix --rule cond --diff --unsafe-fixes`` proposed a rewrite whose
    branch calls a helper that breaks the graph (torch.cond then raises, see the ground truth below)."""
    from clitools import cli_runner
    from pt2lint.cli import cli

    monkeypatch.chdir(tmp_path)
    _package(tmp_path, "pkg", BREAKING_HELPERS[0][1])
    (tmp_path / "pyproject.toml").write_text("[project]\nname = \"pkg\"\n")
    runner = cli_runner()
    fixed = runner.invoke(cli, ["fix", "--no-cache", "--rule", "cond", "--diff", "--unsafe-fixes", "pkg/model.py"], catch_exceptions=False)
    assert fixed.stdout == "", fixed.stdout
    assert "not rewritten as torch.cond: `helper` (pkg/utils.py, called from the `if` branch) has PTC101" in fixed.stderr
    checked = runner.invoke(cli, ["check", "--no-cache", "--output-format", "json", "pkg/model.py"], catch_exceptions=False)
    fixes = [d["fix"] for d in json.loads(checked.stdout) if d["code"] == "PTC104"]
    assert fixes and fixes[0]["applicability"] == "display-only" and fixes[0]["edits"] == []
    assert "pkg/utils.py" in fixes[0]["message"]


@pytest.fixture
def importer(monkeypatch):
    """``importer(root, dotted)`` imports module ``dotted`` from directory ``root``; the modules
    imported are forgotten after the test."""
    import importlib
    import sys

    before = set(sys.modules)

    def load(root, dotted: str):
        monkeypatch.syspath_prepend(str(root))
        return importlib.import_module(dotted)

    yield load
    for name in set(sys.modules) - before:
        if name.startswith("pt2l_"):
            del sys.modules[name]


def test_naive_rewrite_with_a_breaking_helper_raises_and_a_pure_one_runs(tmp_path, monkeypatch, importer):
    """Ground truth on torch 2.13: the rewrite the codemod used to offer fails under
    torch.compile (the helper's `.item()` breaks the graph inside the branch), while the
    rewrite it still offers for a pure helper of another file runs and agrees with the `if`."""
    torch = pytest.importorskip("torch")
    from clitools import cli_runner
    from pt2lint.cli import cli

    monkeypatch.chdir(tmp_path)
    naive = _package(tmp_path, "pt2l_breaking", BREAKING_HELPERS[0][1]).replace(
        "        if x.sum() > 0:\n            y = helper(x)\n        else:\n            y = x * 2\n",
        "        def _true_fn(x):\n            return helper(x)\n        def _false_fn(x):\n            return x * 2\n"
        "        y = torch.cond(x.sum() > 0, _true_fn, _false_fn, (x,))\n",
    )
    assert "torch.cond(" in naive
    (tmp_path / "pt2l_breaking" / "model.py").write_text(naive)
    model = importer(tmp_path, "pt2l_breaking.model").M()
    x = torch.ones(3)
    torch._dynamo.reset()
    with pytest.raises(Exception, match="higher order operator"):
        torch.compile(model, backend="eager")(x)

    other = tmp_path / "pure"
    other.mkdir()
    monkeypatch.chdir(other)
    original = _package(other, "pt2l_pure", PURE_HELPER)
    result = cli_runner().invoke(cli, ["fix", "--no-cache", "--unsafe-fixes", "--rule", "cond", "pt2l_pure/model.py"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    rewritten = (other / "pt2l_pure" / "model.py").read_text()
    assert "torch.cond(" in rewritten and rewritten != original
    (other / "pt2l_pure" / "original.py").write_text(original)
    fixed = importer(other, "pt2l_pure.model").M()
    plain = importer(other, "pt2l_pure.original").M()
    for inp in (x, -x):
        torch._dynamo.reset()
        torch.testing.assert_close(torch.compile(fixed, backend="eager", fullgraph=True)(inp), plain(inp))


LAYERS = """
from torch import nn as tnn


class Block(tnn.Module):
    def __init__(self):
        super().__init__()
        self.seq = tnn.Sequential(tnn.Linear(4, 4), {second})

    def forward(self, x):
        return self.seq(x)
"""


@pytest.mark.parametrize(
    "second, applicability, reason",
    [
        ("tnn.BatchNorm1d(4)", Applicability.DISPLAY_ONLY, "`Block.forward` (pkg/layers.py, called from the `if` branch) calls `self.seq`, which holds a torch.nn.BatchNorm1d"),
        ("tnn.GELU()", Applicability.UNSAFE, "`self.block` is used in some branches only"),
    ],
    ids=["holds-batchnorm", "near-miss-holds-gelu"],
)
def test_submodule_class_of_another_file_is_judged_with_that_files_imports(tmp_path, monkeypatch, second, applicability, reason):
    """``self.block = Block()`` with ``Block`` in ``layers.py``, which spells ``torch.nn`` as ``tnn``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\nassume-compiled = true\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "layers.py").write_text(LAYERS.format(second=second).lstrip("\n"))
    text = src(branches("y = self.block(x)", "y = x * 2"), init="self.block = Block()", pre="from .layers import Block\n\n\n")
    (tmp_path / "pkg" / "model.py").write_text(text)
    f = project_cond_fix(tmp_path, "pkg")
    assert f.applicability is applicability, f.message
    assert reason in f.message, f.message
