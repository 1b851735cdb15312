"""Whole-project analysis: compiled regions followed into other modules of the project.

Each test writes a small package under ``tmp_path`` and lints it the way the CLI does
(``lint_paths`` over the discovered files), then names the (file, line, code) triples
that must appear -- and the near misses that must not.
"""

from __future__ import annotations

import json
import os
import textwrap
from typing import Dict, List, Tuple

import pytest

from pt2lint.engine import lint_paths, lint_source
from pt2lint.settings import LintSettings, resolve_selection

from clitools import cli_runner

SETTINGS = LintSettings(enabled=resolve_selection())


def write(root, files: Dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def lint_tree(root, paths: List[str], settings: LintSettings = SETTINGS, **kw) -> List:
    """Diagnostics of linting ``paths`` (relative to ``root``), with ``root`` as the working directory."""
    return [d for r in lint_results(root, paths, settings, **kw) for d in r.diagnostics]


def lint_results(root, paths: List[str], settings: LintSettings = SETTINGS, **kw) -> List:
    """The per-file results (diagnostics, and the error of a file that could not be checked) of
    linting ``paths`` (relative to ``root``; a folder stands for its ``.py`` files), with ``root``
    as the working directory."""
    old = os.getcwd()
    os.chdir(root)
    try:
        files = []
        for p in paths:
            if os.path.isdir(p):
                for dirpath, _dirs, names in os.walk(p):
                    files.extend(os.path.join(dirpath, n) for n in names if n.endswith(".py"))
            else:
                files.append(p)
        files.sort()
        s = settings if settings.project_root else LintSettings(enabled=settings.enabled, project_root=str(root), target=settings.target)
        return list(lint_paths(files, s, jobs=1, **kw))
    finally:
        os.chdir(old)


def found(diags) -> List[Tuple[str, int, str]]:
    return sorted((d.filename.replace(os.sep, "/"), d.start.line, d.code) for d in diags)


PYPROJECT = {"pyproject.toml": "[project]\nname = 'demo'\n"}


def test_relative_import_helper_break_is_reported_in_the_helper_with_the_chain(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/utils.py": """
            def clamp(x):
                s = x.sum().item()
                return x.clamp(max=s)
            """,
        "pkg/model.py": """
            from torch import nn
            from .utils import clamp

            class Net(nn.Module):
                def forward(self, x):
                    return clamp(x) + 1
            """,
    })
    diags = lint_tree(tmp_path, ["pkg"])
    assert found(diags) == [("pkg/utils.py", 2, "PTC101")]
    d = diags[0]
    assert d.call_chain == ("Net.forward", "clamp")
    assert d.call_sites[0][:4] == ("Net.forward", "pkg/model.py", 6, 16)
    assert "[via pkg/model.py:6 Net.forward -> pkg/utils.py:2 clamp]" in d.message
    assert d.anchor == ("pkg/model.py", 6, 16)


def test_entry_file_alone_resolves_its_imports_from_the_project(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/utils.py": """
            def clamp(x):
                return x.clamp(max=x.max().item())
            def unused(x):
                print(x)
            """,
        "pkg/model.py": """
            from torch import nn
            from pkg.utils import clamp

            class Net(nn.Module):
                def forward(self, x):
                    return clamp(x)
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/utils.py", 2, "PTC101")]
    # the helper module alone (a pre-commit run on it): its caller in the package is found
    # and analysed unreported, so the break it causes in the helper is reported, with the chain
    diags = lint_tree(tmp_path, ["pkg/utils.py"])
    assert found(diags) == [("pkg/utils.py", 2, "PTC101")]
    assert diags[0].call_chain == ("Net.forward", "clamp")
    # with no caller anywhere it has no compiled region: nothing to report, and no PTC002 either
    (tmp_path / "pkg" / "model.py").unlink()
    assert found(lint_tree(tmp_path, ["pkg/utils.py"])) == []


def test_module_alias_reexport_star_import_and_all(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": """
            from .ops.act import gelu_checked
            __all__ = ["gelu_checked"]
            """,
        "pkg/ops/__init__.py": "from .shapes import *\n",
        "pkg/ops/act.py": """
            import torch
            def gelu_checked(x):
                if torch.isnan(x).any():
                    raise ValueError("nan")
                return torch.nn.functional.gelu(x)
            """,
        "pkg/ops/shapes.py": """
            def flat(x):
                return x.tolist()
            """,
        "pkg/model.py": """
            import torch
            import pkg.ops as ops
            from pkg import gelu_checked

            class Net(torch.nn.Module):
                def forward(self, x):
                    y = gelu_checked(x)
                    return ops.flat(y)
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [
        ("pkg/ops/act.py", 3, "PTC104"),
        ("pkg/ops/shapes.py", 2, "PTC102"),
    ]


def test_inherited_forward_and_mixin_from_other_modules(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "lib/__init__.py": "",
        "lib/base.py": """
            import torch
            from torch import nn

            class LoggingMixin:
                def log(self, x):
                    print("mean", x.mean())

            class Base(nn.Module):
                def forward(self, x):
                    h = self.proj(x)
                    self.log(h)
                    return h
            """,
        "lib/model.py": """
            from torch import nn
            from .base import Base, LoggingMixin

            class Net(LoggingMixin, Base):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(4, 4)
            """,
    })
    diags = lint_tree(tmp_path, ["lib/model.py"])
    assert found(diags) == [("lib/base.py", 6, "PTC301")]
    assert diags[0].call_chain == ("Net.forward", "Net.log")


def test_submodule_from_other_module_writes_the_parent_input_through_a_helper(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "net/__init__.py": "",
        "net/ops.py": """
            def scale_(t):
                t.mul_(2.0)
                return t

            def scale_copy(t):
                t = t.clone()
                t.mul_(2.0)
                return t
            """,
        "net/layers.py": """
            from torch import nn
            from .ops import scale_, scale_copy

            class Block(nn.Module):
                def forward(self, x):
                    return scale_(x)

            class SafeBlock(nn.Module):
                def forward(self, x):
                    return scale_copy(x)
            """,
        "net/model.py": """
            from torch import nn
            from .layers import Block, SafeBlock

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block = Block()
                    self.safe = SafeBlock()

                def forward(self, x):
                    return self.safe(x) + self.block(x.clone())

            class Leaky(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block = Block()

                def forward(self, x):
                    return self.block(x)
            """,
    })
    diags = lint_tree(tmp_path, ["net/model.py"])
    assert found(diags) == [("net/ops.py", 2, "PTC401")]
    assert diags[0].call_chain == ("Leaky.forward", "Block.forward", "scale_")


def test_disabled_function_imported_from_another_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "app/__init__.py": "",
        "app/post.py": """
            import torch

            @torch.compiler.disable
            def report(x):
                print(x.sum().item())
                return x
            """,
        "app/model.py": """
            import torch
            from app.post import report

            class Net(torch.nn.Module):
                def forward(self, x):
                    return report(x * 2)
            """,
    })
    assert found(lint_tree(tmp_path, ["app/model.py"])) == [("app/model.py", 6, "PTC310")]


STAR_HELPERS = {
    **PYPROJECT,
    "pkg/good.py": """
        def helper(x):
            return x + 1
        """,
    "pkg/bad.py": """
        import torch.nn.functional as F

        def helper(x):
            return x + x.sum().item()

        def _private(x):
            return x.tolist()
        """,
}

STAR_MODEL = """
    from torch import nn
    {imports}

    class Net(nn.Module):
        def forward(self, x):
            return {body}
    """


@pytest.mark.parametrize(
    "imports, expected",
    [
        # a later star import rebinds the name an explicit import bound (Python runs the module in order)
        ("from .good import helper\nfrom .bad import *", [("pkg/bad.py", 4, "PTC101")]),
        # an explicit import after the star import wins over it
        ("from .bad import *\nfrom .good import helper", []),
        # a name bound only by a star import of the module itself
        ("from .bad import *", [("pkg/bad.py", 4, "PTC101")]),
        # a def after the star import wins; a def before it is rebound
        ("from .bad import *\ndef helper(x):\n    return x", []),
        ("def helper(x):\n    return x\nfrom .bad import *", [("pkg/bad.py", 4, "PTC101")]),
    ],
)
def test_star_import_binds_in_statement_order(tmp_path, imports, expected):
    write(tmp_path, {**STAR_HELPERS, "pkg/__init__.py": "",
                     "pkg/model.py": STAR_MODEL.format(imports=imports.replace("\n", "\n    "), body="helper(x)")})
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == expected


def test_star_import_through_the_package_and_all(tmp_path):
    # ``from . import helper``: the package's last binding of ``helper`` is its star import of ``bad``
    write(tmp_path, {**STAR_HELPERS,
        "pkg/__init__.py": "from .good import helper\nfrom .bad import *\n",
        "pkg/model.py": STAR_MODEL.format(imports="from . import helper", body="helper(x)"),
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/bad.py", 4, "PTC101")]
    # ``__all__`` of the star-imported module limits what it binds
    (tmp_path / "pkg/bad.py").write_text((tmp_path / "pkg/bad.py").read_text() + "__all__ = ['F']\n")
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == []


def test_star_import_exports_names_and_imports_but_not_private_ones(tmp_path):
    write(tmp_path, {**STAR_HELPERS, "pkg/__init__.py": "",
        # ``F`` comes from ``bad``'s own ``import torch.nn.functional as F``
        "pkg/model.py": STAR_MODEL.format(imports="from .bad import *", body="F.relu(x).sum().item()"),
        # ``_private`` is not bound by a star import (no ``__all__``): a NameError, not a break
        "pkg/model_private.py": STAR_MODEL.format(imports="from .bad import *", body="_private(x)"),
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/model.py", 6, "PTC101")]
    assert found(lint_tree(tmp_path, ["pkg/model_private.py"])) == []


def test_from_dot_import_name_resolves_in_the_package(tmp_path):
    # ``from . import helper`` names the package's attribute ``helper``, not a top-level module
    write(tmp_path, {**STAR_HELPERS,
        "pkg/__init__.py": "from .bad import helper\n",
        "pkg/model.py": STAR_MODEL.format(imports="from . import helper", body="helper(x)"),
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/bad.py", 4, "PTC101")]


@pytest.mark.parametrize("imp", ["from . import clamp", "from .. import clamp"], ids=["package", "parent-package"])
def test_a_name_imported_from_a_package_with_dots_alone_is_followed(tmp_path, imp):
    """``from . import clamp``: ``clamp`` is the attribute of the importing module's own package
    (re-exported by its ``__init__.py``), ``..`` the one above."""
    inner = imp.startswith("from ..")
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "from .utils import clamp\n",
        "pkg/utils.py": """
            def clamp(x):
                s = x.sum().item()
                return x.clamp(max=s)
            """,
        **({"pkg/sub/__init__.py": ""} if inner else {}),
        ("pkg/sub/model.py" if inner else "pkg/model.py"): f"""
            from torch import nn
            {imp}

            class Net(nn.Module):
                def forward(self, x):
                    return clamp(x) + 1
            """,
    })
    diags = lint_tree(tmp_path, ["pkg/sub/model.py" if inner else "pkg/model.py"])
    assert found(diags) == [("pkg/utils.py", 2, "PTC101")]


def test_import_cycle_terminates_and_is_followed(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "cyc/__init__.py": "from .a import Net\n",
        "cyc/a.py": """
            from torch import nn
            from . import b

            def head(x):
                return b.tail(x)

            class Net(nn.Module):
                def forward(self, x):
                    return head(x)
            """,
        "cyc/b.py": """
            from .a import head

            def tail(x):
                if x.max() > 1:
                    return x
                return head  # refers back
            """,
    })
    assert found(lint_tree(tmp_path, ["cyc"])) == [("cyc/b.py", 4, "PTC104")]


def test_src_layout_and_namespace_package(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "src/mypkg/__init__.py": "",
        "src/mypkg/model.py": """
            import torch
            from mypkg.layers.norm import rms

            class Net(torch.nn.Module):
                def forward(self, x):
                    return rms(x)
            """,
        # layers/ has no __init__.py: a namespace package
        "src/mypkg/layers/norm.py": """
            import torch
            def rms(x):
                return x[x > 0].sum()
            """,
    })
    assert found(lint_tree(tmp_path, ["src"])) == [("src/mypkg/layers/norm.py", 3, "PTC201")]


def test_returned_tensor_of_an_imported_helper_keeps_its_kind(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "m/__init__.py": "",
        "m/score.py": """
            import torch
            def score(x):
                return torch.sigmoid(x).mean()
            def width(x):
                return x.shape[-1]
            """,
        "m/model.py": """
            import torch
            from .score import score, width

            class Net(torch.nn.Module):
                def forward(self, x):
                    if width(x) > 4:
                        x = x * 2
                    if score(x) > 0.5:
                        return x
                    return -x
            """,
    })
    assert found(lint_tree(tmp_path, ["m"])) == [("m/model.py", 8, "PTC104")]


def test_near_misses_across_modules(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "q/__init__.py": "",
        "q/conf.py": """
            import torch
            USE_BIAS = True
            def init_scale(w):
                return float(w.abs().max().item())
            def pick(x):
                if x.dim() == 3:
                    return x.flatten(1)
                return x
            """,
        "q/model.py": """
            import torch
            from q import conf
            from q.conf import init_scale, pick

            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = torch.nn.Linear(4, 4, bias=conf.USE_BIAS)
                    self.scale = init_scale(self.lin.weight)

                def forward(self, x):
                    if conf.USE_BIAS:
                        x = pick(x)
                    return self.lin(x) * self.scale
            """,
    })
    assert found(lint_tree(tmp_path, ["q"])) == []


def test_suppression_at_the_finding_or_at_the_call_site(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "s/__init__.py": "",
        "s/h.py": """
            def a(x):
                return x.item()  # noqa: PTC101
            def b(x):
                return x.tolist()
            """,
        "s/model.py": """
            import torch
            from .h import a, b

            class Net(torch.nn.Module):
                def forward(self, x):
                    y = a(x)
                    z = b(x)  # noqa: PTC102
                    return y, z
            """,
    })
    # both suppressed; neither suppression is reported unused, when both files are linted or one
    assert found(lint_tree(tmp_path, ["s"])) == []
    assert found(lint_tree(tmp_path, ["s/model.py"])) == []
    assert found(lint_tree(tmp_path, ["s/h.py"])) == []


def test_a_suppression_used_by_another_files_region_is_not_unused_in_a_file_with_regions_of_its_own(tmp_path, monkeypatch):
    """helpers.py has a compiled region of its own (Other), which does not call scale; model.py's
    does, and the noqa on scale's line suppresses that finding: it is used, in this run."""
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/helpers.py": """
            from torch import nn

            def scale(x):
                return x * x.sum().item()  # noqa: PTC101

            class Other(nn.Module):
                def forward(self, x):
                    return x  # noqa: PTC102
            """,
        "pkg/model.py": """
            from torch import nn
            from .helpers import scale

            class Net(nn.Module):
                def forward(self, x):
                    return scale(x)
            """,
    })
    # the noqa that suppresses nothing anywhere is still reported
    assert found(lint_tree(tmp_path, ["pkg"])) == [("pkg/helpers.py", 8, "PTC002")]
    cache = str(tmp_path / "cache")
    assert found(lint_tree(tmp_path, ["pkg"], cache_dir=cache)) == [("pkg/helpers.py", 8, "PTC002")]
    assert found(lint_tree(tmp_path, ["pkg"], cache_dir=cache)) == [("pkg/helpers.py", 8, "PTC002")]  # from the cache
    from pt2lint.cli import cli

    monkeypatch.chdir(tmp_path)
    out = cli_runner().invoke(cli, ["check", "--no-cache", "."], catch_exceptions=False)
    assert [row.split()[:2] for row in out.stdout.splitlines()] == [["pkg/helpers.py:8:19:", "PTC002"]], out.stdout
    out = cli_runner().invoke(cli, ["fix", "--no-cache", "--diff", "."], catch_exceptions=False)  # left: on stderr
    assert [row.split()[:2] for row in out.stderr.splitlines() if row.startswith("pkg/")] == [["pkg/helpers.py:8:19:", "PTC002"]], out.stderr
    # without it, the finding it suppressed comes back: the comment was needed
    helpers = tmp_path / "pkg" / "helpers.py"
    helpers.write_text(helpers.read_text().replace("  # noqa: PTC101", ""))
    assert found(lint_tree(tmp_path, ["pkg"])) == [("pkg/helpers.py", 4, "PTC101"), ("pkg/helpers.py", 8, "PTC002")]


def test_unused_suppression_in_the_entry_file_is_still_reported(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "u/__init__.py": "",
        "u/h.py": "def a(x):\n    return x + 1\n",
        "u/model.py": """
            import torch
            from .h import a

            class Net(torch.nn.Module):
                def forward(self, x):
                    return a(x)  # noqa: PTC101
            """,
    })
    assert found(lint_tree(tmp_path, ["u"])) == [("u/model.py", 6, "PTC002")]


def test_cache_entry_depends_on_the_helper_it_reaches(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "c/__init__.py": "",
        "c/h.py": "def a(x):\n    return x + 1\n",
        "c/model.py": """
            import torch
            from .h import a

            class Net(torch.nn.Module):
                def forward(self, x):
                    return a(x)
            """,
    })
    cache = str(tmp_path / "cache")
    assert found(lint_tree(tmp_path, ["c/model.py"], cache_dir=cache)) == []
    (tmp_path / "c/h.py").write_text("def a(x):\n    return x.item()\n", encoding="utf-8")
    assert found(lint_tree(tmp_path, ["c/model.py"], cache_dir=cache)) == [("c/h.py", 2, "PTC101")]
    # warm and unchanged: the same answer from the cache
    assert found(lint_tree(tmp_path, ["c/model.py"], cache_dir=cache)) == [("c/h.py", 2, "PTC101")]
    (tmp_path / "c/h.py").write_text("def a(x):\n    return x - 1\n", encoding="utf-8")
    assert found(lint_tree(tmp_path, ["c/model.py"], cache_dir=cache)) == []


def test_a_finding_reached_from_two_files_is_reported_once(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "d/__init__.py": "",
        "d/h.py": "def a(x):\n    return x.item()\n",
        "d/m1.py": "import torch\nfrom .h import a\nclass A(torch.nn.Module):\n    def forward(self, x):\n        return a(x)\n",
        "d/m2.py": "import torch\nfrom .h import a\nclass B(torch.nn.Module):\n    def forward(self, x):\n        return a(x)\n",
    })
    diags = lint_tree(tmp_path, ["d"])
    assert found(diags) == [("d/h.py", 2, "PTC101")]
    assert diags[0].call_chain == ("A.forward", "a")


def test_imported_function_passed_to_torch_compile(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "f/__init__.py": "",
        "f/ops.py": "def fused(x):\n    print(x)\n    return x * 2\n",
        "f/run.py": "import torch\nfrom .ops import fused\nfast = torch.compile(fused)\n",
    })
    assert found(lint_tree(tmp_path, ["f/run.py"])) == [("f/ops.py", 2, "PTC301")]


def test_project_decorator_wrapper_in_another_module_is_followed(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "w/__init__.py": "",
        "w/deco.py": """
            import functools
            def timed(fn):
                @functools.wraps(fn)
                def wrapper(*args, **kwargs):
                    print("call")
                    return fn(*args, **kwargs)
                return wrapper
            """,
        "w/model.py": """
            import torch
            from .deco import timed

            class Net(torch.nn.Module):
                @timed
                def forward(self, x):
                    return x * 2
            """,
    })
    assert found(lint_tree(tmp_path, ["w/model.py"])) == [("w/deco.py", 5, "PTC301")]


def test_stdin_and_single_snippets_are_unchanged(tmp_path):
    result = lint_source("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x.item()\n", "-", SETTINGS)
    assert [(d.start.line, d.code) for d in result.diagnostics] == [(4, "PTC101")]


def test_json_sarif_and_full_carry_the_call_sites(tmp_path):
    from pt2lint.cli import cli

    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/utils.py": "def clamp(x):\n    return x.item()\n",
        "pkg/model.py": "import torch\nfrom .utils import clamp\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return clamp(x)\n",
    })
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        runner = cli_runner()
        res = runner.invoke(cli, ["check", "--no-cache", "--output-format", "json", "pkg/model.py"])
        items = json.loads(res.stdout)
        assert [(os.path.relpath(i["filename"], tmp_path), i["location"]["row"]) for i in items] == [(os.path.join("pkg", "utils.py"), 2)]
        assert items[0]["call_sites"] == [
            {"symbol": "Net.forward", "filename": str(tmp_path / "pkg" / "model.py"), "location": {"row": 5, "column": 16}}
        ]
        res = runner.invoke(cli, ["check", "--no-cache", "--output-format", "sarif", "pkg/model.py"])
        result = json.loads(res.stdout)["runs"][0]["results"][0]
        assert result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/model.py"
        assert result["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 5
        flow = result["codeFlows"][0]["threadFlows"][0]["locations"]
        assert [f["location"]["physicalLocation"]["artifactLocation"]["uri"] for f in flow] == ["pkg/model.py", "pkg/utils.py"]
        res = runner.invoke(cli, ["check", "--no-cache", "--output-format", "full", "pkg/model.py"])
        assert "called from: pkg/model.py:5:16 (Net.forward)" in res.stdout
    finally:
        os.chdir(old)


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_do_not_depend_on_the_job_count(tmp_path, jobs):
    files = {**PYPROJECT, "p/__init__.py": "", "p/h.py": "def a(x):\n    return x.item()\ndef b(x):\n    print(x)\n"}
    for i in range(6):
        files[f"p/m{i}.py"] = f"import torch\nfrom .h import a, b\nclass M{i}(torch.nn.Module):\n    def forward(self, x):\n        return {'a' if i % 2 else 'b'}(x)\n"
    write(tmp_path, files)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        paths = sorted(os.path.join("p", n) for n in os.listdir("p"))
        s = LintSettings(enabled=SETTINGS.enabled, project_root=str(tmp_path))
        diags = [d for r in lint_paths(paths, s, jobs=jobs) for d in r.diagnostics]
    finally:
        os.chdir(old)
    assert sorted((d.filename, d.start.line, d.code, d.call_chain) for d in diags) == [
        (os.path.join("p", "h.py"), 2, "PTC101", ("M1.forward", "a")),
        (os.path.join("p", "h.py"), 4, "PTC301", ("M0.forward", "b")),
    ]


#: An installed package whose function breaks inside (a data-dependent ``if``, line 2 of core.py).
FANCYOPS = {
    "fancyops/__init__.py": "from .core import fused_norm\n",
    "fancyops/core.py": """
        def fused_norm(x):
            if x.abs().max() > 1e4:
                raise ValueError("overflow")
            return x / x.norm()
        """,
}


def _fancyops_project(tmp_path, monkeypatch, forward: str):
    """A project whose ``net/model.py`` ``Net.forward`` (parameters and body as ``forward``, on
    lines 5-) calls the installed :data:`FANCYOPS`; returns the project root."""
    site = tmp_path / "env" / "lib" / "site-packages"
    write(site, FANCYOPS)
    model = "import torch\nfrom fancyops import fused_norm\n\nclass Net(torch.nn.Module):\n" + textwrap.indent(
        textwrap.dedent(forward).strip("\n") + "\n", "    "
    )
    write(tmp_path / "proj", {**PYPROJECT, "net/__init__.py": "", "net/model.py": model})
    monkeypatch.syspath_prepend(str(site))
    return tmp_path / "proj"


def test_follow_imports_reads_an_installed_package_and_reports_at_the_call_site(tmp_path, monkeypatch):
    root = _fancyops_project(tmp_path, monkeypatch, """
        def forward(self, x):
            return fused_norm(x) * 2
        """)
    # not followed: an installed function is opaque, as before
    assert found(lint_tree(root, ["net"])) == []
    followed = LintSettings(enabled=SETTINGS.enabled, project_root=str(root), follow_imports=("fancyops",))
    diags = lint_tree(root, ["net"], followed)
    assert found(diags) == [("net/model.py", 6, "PTC104")]
    assert "(inside " in diags[0].message and "fancyops" in diags[0].message and "core.py:2" in diags[0].message
    assert diags[0].fix is None
    # a package that is not followed stays opaque even when its parent is
    other = LintSettings(enabled=SETTINGS.enabled, project_root=str(root), follow_imports=("fancyops.other",))
    assert found(lint_tree(root, ["net"], other)) == []


def test_follow_imports_reports_each_project_call_of_a_breaking_library_function(tmp_path, monkeypatch):
    """Dynamo breaks at every call of an inlined library function that breaks inside: two calls
    from project code are two findings, each at its own call site, though the library line is one."""
    root = _fancyops_project(tmp_path, monkeypatch, """
        def forward(self, x, y):
            a = fused_norm(x)
            b = fused_norm(y)
            return a + b
        """)
    followed = LintSettings(enabled=SETTINGS.enabled, project_root=str(root), follow_imports=("fancyops",))
    diags = lint_tree(root, ["net"], followed)
    assert found(diags) == [("net/model.py", 6, "PTC104"), ("net/model.py", 7, "PTC104")]
    assert all("core.py:2" in d.message for d in diags)


def test_submodule_built_in_another_file_is_judged_in_its_parents_context(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "v/__init__.py": "",
        "v/mlp.py": """
            from torch import nn

            class ScaleInPlace(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gamma = nn.Parameter(nn.init.ones_(nn.Parameter(__import__("torch").empty(4))))

                def forward(self, x):
                    return x.mul_(self.gamma)
            """,
        "v/model.py": """
            from torch import nn
            from .mlp import ScaleInPlace

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(4, 4)
                    self.scale = ScaleInPlace()

                def forward(self, x):
                    return self.scale(self.proj(x))
            """,
    })
    # with the parent linted too, the write is into a tensor the parent made: no input mutation
    assert found(lint_tree(tmp_path, ["v"])) == []
    # linted alone, its parent in the package is found all the same
    assert found(lint_tree(tmp_path, ["v/mlp.py"])) == []
    # with no parent anywhere, the submodule's own input is all there is to go by
    (tmp_path / "v" / "model.py").unlink()
    assert found(lint_tree(tmp_path, ["v/mlp.py"])) == [("v/mlp.py", 9, "PTC401")]


def test_follow_imports_leaves_functions_a_library_registers_with_allow_in_graph_opaque(tmp_path, monkeypatch):
    """einops-style: ``allow_in_graph(rearrange)`` called when the library is imported makes
    Dynamo put the call in the graph without tracing it; a registration of a value built at
    run time names no function and changes nothing."""
    site = tmp_path / "env" / "lib" / "site-packages"
    write(site, {
        "fancyops/__init__.py": "from .core import fused_norm, plain_norm\nfrom . import _torch_specific\n",
        "fancyops/core.py": """
            def fused_norm(x):
                if x.abs().max() > 1e4:
                    raise ValueError("overflow")
                return x / x.norm()


            def plain_norm(x):
                if x.abs().max() > 1e4:
                    raise ValueError("overflow")
                return x / x.norm()
            """,
        "fancyops/_torch_specific.py": """
            import torch


            def register():
                from torch._dynamo import allow_in_graph
                from .core import fused_norm
                allow_in_graph(fused_norm)
                for op in [abs]:
                    torch.compiler.allow_in_graph(op)


            register()
            """,
    })
    write(tmp_path / "proj", {**PYPROJECT,
        "net/__init__.py": "",
        "net/model.py": """
            import torch
            from fancyops import fused_norm, plain_norm

            class Net(torch.nn.Module):
                def forward(self, x):
                    return fused_norm(x) * 2 + plain_norm(x)
            """,
    })
    monkeypatch.syspath_prepend(str(site))
    root = tmp_path / "proj"
    followed = LintSettings(enabled=SETTINGS.enabled, project_root=str(root), follow_imports=("fancyops",))
    diags = lint_tree(root, ["net"], followed)
    assert found(diags) == [("net/model.py", 6, "PTC104")]
    assert "plain_norm" in diags[0].message and "fused_norm" not in diags[0].message


def test_imports_spelled_with_nfkc_equivalent_identifiers_resolve(tmp_path):
    """Python normalises identifiers to NFKC in import statements too: ``from .ｈｅｌｐｅｒｓ import
    scale`` imports ``helpers.py`` and ``from .helpers import ｓｃａｌｅ`` binds ``scale``."""
    helper = """
        def scale(x):
            return x * x.sum().item()
        """
    model = """
        import torch
        {line}

        class Net(torch.nn.Module):
            def forward(self, x):
                return scale(x)
        """
    files = {**PYPROJECT, "pkg/__init__.py": "", "pkg/helpers.py": helper}
    files["pkg/model_mod.py"] = model.format(line="from .\uff48\uff45\uff4c\uff50\uff45\uff52\uff53 import scale")
    files["pkg/model_name.py"] = model.format(line="from .helpers import \uff53\uff43\uff41\uff4c\uff45")
    write(tmp_path, files)
    for entry in ("pkg/model_mod.py", "pkg/model_name.py"):
        assert found(lint_tree(tmp_path, [entry])) == [("pkg/helpers.py", 2, "PTC101")], entry


def test_a_def_after_an_import_of_the_same_name_is_what_the_name_means(tmp_path):
    # Python runs the module in order: ``def act`` below ``from .util import act`` rebinds ``act``
    # (measured on torch 2.13: Dynamo breaks at the late def's print, not in util)
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/util.py": """
            def act(x):
                print("util")
                return x
            """,
        "pkg/model.py": """
            from torch import nn
            from .util import act


            class LateDef(nn.Module):
                def forward(self, x):
                    return act(x)


            def act(x):
                return x + x.sum().item()
            """,
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/model.py", 11, "PTC101")]


@pytest.mark.parametrize("imports", [
    "try:\n    from .fast import *\nexcept ImportError:\n    from .slow import *",
    "try:\n    from .fast import fused\nexcept ImportError:\n    from .slow import fused",
])
def test_an_optional_import_that_works_is_what_runs(tmp_path, imports):
    # ``pkg/fast.py`` exists, so the ``try`` import runs and the ``except`` fallback does not
    # (measured on torch 2.13: Dynamo breaks at fast.py's print only)
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/fast.py": """
            def fused(x):
                print("fast")
                return x * 2
            """,
        "pkg/slow.py": """
            def fused(x):
                if x.max() > 1:
                    return x
                return x * 2
            """,
        "pkg/model.py": "from torch import nn\n" + imports + "\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        return fused(x)\n",
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/fast.py", 2, "PTC301")]


@pytest.mark.parametrize("grow", ['__all__ += ["gate"]', '__all__.extend(["gate"])', '__all__.append("gate")'])
def test_a_star_import_exports_names_added_to_all(tmp_path, grow):
    # ``__all__`` grown after its literal lists more names than the literal: ``from .ops import *``
    # binds ``gate`` (Dynamo breaks at its data-dependent ``if``, measured on torch 2.13)
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/ops.py": (
            "def scale(x):\n    return x * 2\n\n\n"
            "def gate(x):\n    if x.max() > 1:\n        return x\n    return x * 2\n\n\n"
            '__all__ = ["scale"]\n' + grow + "\n"
        ),
        "pkg/model.py": "from torch import nn\nfrom .ops import *\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        return gate(scale(x))\n",
    })
    assert found(lint_tree(tmp_path, ["pkg/model.py"])) == [("pkg/ops.py", 6, "PTC104")]


# ------------------------------------------- a block class built by a class of another file
# (``unflatten``, defined in Python, says nothing of H and W; ``x.view(B, H, W, C)`` would make them
# numbers whoever builds the block: ATen's ``view`` takes ints there, tests/test_schema_argument_uses.py)
BLOCK_PACKAGE = {
    **PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/layers.py": """
        from torch import nn

        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x, H, W):
                B, L, C = x.shape
                if H * W != L:
                    raise ValueError("bad size")
                x = x.unflatten(1, (H, W))
                pad = int(H % 2)
                x = x[:, : H - pad]
                if x.sum() > 0:
                    x = x * 2
                return self.proj(x).flatten(1, 2)
        """,
    "pkg/model.py": """
        from torch import nn
        from .layers import Block

        class Net(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.block = Block(dim)

            def forward(self, x):
                B, C, H, W = x.shape
                x = x.flatten(2).transpose(1, 2)
                return self.block(x, H, W)
        """,
}


def test_block_built_by_another_files_class_takes_the_parents_arguments(tmp_path):
    # Block is Net's submodule: H and W are the ints of x.shape there, so only the
    # `if x.sum() > 0` (a tensor test whatever the arguments are) breaks
    write(tmp_path, BLOCK_PACKAGE)
    diags = lint_tree(tmp_path, ["pkg"])
    assert found(diags) == [("pkg/layers.py", 15, "PTC104")]
    assert diags[0].call_chain[0] == "Net.forward"
    # the same from the cache: the second analysis is keyed by what it knew
    cache = str(tmp_path / "cache")
    assert found(lint_tree(tmp_path, ["pkg"], cache_dir=cache)) == [("pkg/layers.py", 15, "PTC104")]
    assert found(lint_tree(tmp_path, ["pkg"], cache_dir=cache)) == [("pkg/layers.py", 15, "PTC104")]


BLOCK_ALONE = [
    ("pkg/layers.py", 10, "PTC104"), ("pkg/layers.py", 13, "PTC103"), ("pkg/layers.py", 14, "PTC103"),
    ("pkg/layers.py", 15, "PTC104"),
]


def test_block_file_that_nothing_in_its_package_builds_is_a_top_level_model(tmp_path):
    # torch.compile(Block(8))(x, H, W) with tensors is all that can be said of it then
    files = {k: v for k, v in BLOCK_PACKAGE.items() if k != "pkg/model.py"}
    write(tmp_path, files)
    assert found(lint_tree(tmp_path, ["pkg/layers.py"])) == BLOCK_ALONE


def test_block_file_linted_alone_is_judged_in_the_context_of_its_unlinted_parent(tmp_path):
    # `pt2lint check pkg/layers.py` (a pre-commit run on the one changed file): model.py,
    # not linted, builds Block, so the answer is the one of linting the whole package
    write(tmp_path, BLOCK_PACKAGE)
    whole = [f for f in found(lint_tree(tmp_path, ["pkg"])) if f[0] == "pkg/layers.py"]
    assert found(lint_tree(tmp_path, ["pkg/layers.py"])) == whole == [("pkg/layers.py", 15, "PTC104")]


def test_block_file_linted_alone_gets_the_breaks_its_unlinted_parent_causes(tmp_path):
    # the parent passes a tensor for H: the breaks it causes in layers.py are found, with the
    # chain from the parent; model.py's own lines are not reported (not asked for)
    files = dict(BLOCK_PACKAGE)
    files["pkg/model.py"] = files["pkg/model.py"].replace(
        "return self.block(x, H, W)", "n = x.sum().item()\n                return self.block(x, (x[0, 0] > 0).sum() + H - 1, W)")
    write(tmp_path, files)
    whole = found(lint_tree(tmp_path, ["pkg"]))
    assert ("pkg/model.py", 12, "PTC101") in whole
    diags = lint_tree(tmp_path, ["pkg/layers.py"])
    assert found(diags) == [f for f in whole if f[0] == "pkg/layers.py"]
    assert ("pkg/layers.py", 10, "PTC104") in found(diags)
    assert all(d.call_chain[0] == "Net.forward" for d in diags if d.start.line == 10)


def test_a_same_named_class_of_another_file_does_not_make_a_builder(tmp_path):
    files = {k: v for k, v in BLOCK_PACKAGE.items() if k != "pkg/model.py"}
    files["pkg/other.py"] = """
        from torch import nn

        class Block(nn.Module):
            def forward(self, x):
                return x

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return self.block(x)
        """
    write(tmp_path, files)
    assert found(lint_tree(tmp_path, ["pkg/layers.py"])) == BLOCK_ALONE


def test_a_builder_found_outside_the_run_is_rechecked_when_it_changes(tmp_path):
    write(tmp_path, BLOCK_PACKAGE)
    cache = str(tmp_path / "cache")
    for _ in range(2):
        assert found(lint_tree(tmp_path, ["pkg/layers.py"], cache_dir=cache)) == [("pkg/layers.py", 15, "PTC104")]
    # the parent stops building Block: the layers.py entry in the cache must not keep the old answer
    model = tmp_path / "pkg" / "model.py"
    model.write_text(model.read_text().replace("self.block = Block(dim)", "self.block = nn.Identity()"), encoding="utf-8")
    for _ in range(2):
        assert found(lint_tree(tmp_path, ["pkg/layers.py"], cache_dir=cache)) == BLOCK_ALONE


def test_check_of_the_block_file_alone_from_the_command_line(tmp_path, monkeypatch):
    from pt2lint.cli import cli

    write(tmp_path, BLOCK_PACKAGE)
    monkeypatch.chdir(tmp_path)
    out = cli_runner().invoke(cli, ["check", "--no-cache", "--output-format", "json", "pkg/layers.py"], catch_exceptions=False)
    got = sorted((os.path.relpath(d["filename"], tmp_path), d["location"]["row"], d["code"]) for d in json.loads(out.stdout))
    assert got == [(os.path.join("pkg", "layers.py"), 15, "PTC104")]
    assert out.exit_code == 1


def test_stdin_of_the_block_file_shows_its_source_when_judged_by_its_parent(tmp_path, monkeypatch):
    # the text is analysed again once the parent is found: `full` still shows the lines
    from pt2lint.cli import cli

    write(tmp_path, BLOCK_PACKAGE)
    monkeypatch.chdir(tmp_path)
    text = (tmp_path / "pkg" / "layers.py").read_text(encoding="utf-8")
    out = cli_runner().invoke(
        cli, ["check", "--no-cache", "--output-format", "full", "--stdin-filename", "pkg/layers.py", "-"], input=text, catch_exceptions=False,
    )
    assert "PTC104" in out.stdout and "15 |" in out.stdout, out.stdout


def test_block_given_a_tensor_by_its_parent_breaks_where_the_parent_says(tmp_path):
    files = dict(BLOCK_PACKAGE)
    files["pkg/model.py"] = files["pkg/model.py"].replace("self.block(x, H, W)", "self.block(x, (x[0, 0] > 0).sum() + H - 1, W)")
    write(tmp_path, files)
    got = found(lint_tree(tmp_path, ["pkg"]))
    assert ("pkg/layers.py", 10, "PTC104") in got


def test_dynamo_agrees_on_the_block_built_by_another_file(tmp_path):
    torch = pytest.importorskip("torch")
    import sys

    write(tmp_path, BLOCK_PACKAGE)
    sys.path.insert(0, str(tmp_path))
    try:
        from pkg.model import Net

        torch._dynamo.reset()
        x = -torch.ones(2, 8, 4, 4)  # x.sum() <= 0: the test's value does not matter to where it breaks
        out = torch._dynamo.explain(Net())(x)
        layers = str(tmp_path / "pkg" / "layers.py")
        lines = sorted({[f for f in b.user_stack if f.filename == layers][-1].lineno for b in out.break_reasons})
        assert lines == [15]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            del sys.modules[name]


CONFIGURED_BLOCK = {
    **PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/layers.py": """
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self, dim, verbose=True, norm=None):
                super().__init__()
                self.lin = nn.Linear(dim, dim)
                self.verbose = verbose
                self.norm = norm

            def forward(self, x):
                if self.verbose:
                    print("block", x.shape)
                if self.norm is None:
                    x = x / x.sum().item()
                return self.lin(x)
        """,
    "pkg/net.py": """
        from torch import nn
        from .layers import Block


        class Net(nn.Module):
            def __init__(self, dim=4):
                super().__init__()
                self.block = Block(dim, verbose=False, norm=nn.LayerNorm(dim))

            def forward(self, x):
                return self.block(x)
        """,
}


def test_constructor_arguments_passed_by_another_file_decide_the_blocks_attributes(tmp_path):
    # Net builds Block(verbose=False, norm=nn.LayerNorm(dim)): no print, no .item() in its graph
    write(tmp_path, CONFIGURED_BLOCK)
    assert found(lint_tree(tmp_path, ["pkg"])) == []
    assert found(lint_tree(tmp_path, ["pkg/layers.py"])) == []
    assert found(lint_tree(tmp_path, ["pkg/net.py"])) == []


def test_a_block_built_differently_by_another_file_keeps_its_attributes_unknown(tmp_path):
    # a Stage of another file builds Block with the defaults: the print and .item() run there
    files = dict(CONFIGURED_BLOCK)
    files["pkg/stages.py"] = """
        from torch import nn
        from .layers import Block


        class Stage(nn.Module):
            def __init__(self, dim=4):
                super().__init__()
                self.inner = Block(dim)

            def forward(self, x):
                return self.inner(x)
        """
    files["pkg/net.py"] = files["pkg/net.py"].replace(
        "from .layers import Block\n", "from .layers import Block\n        from .stages import Stage\n"
    ).replace(
        "self.block = Block(dim, verbose=False, norm=nn.LayerNorm(dim))\n",
        "self.block = Block(dim, verbose=False, norm=nn.LayerNorm(dim))\n                self.stage = Stage(dim)\n",
    ).replace("return self.block(x)", "return self.stage(self.block(x))")
    write(tmp_path, files)
    expected = [("pkg/layers.py", 14, "PTC301"), ("pkg/layers.py", 16, "PTC101")]
    assert found(lint_tree(tmp_path, ["pkg"])) == expected
    assert found(lint_tree(tmp_path, ["pkg/layers.py"])) == expected


def test_dynamo_agrees_on_constructor_arguments_from_another_file():
    pytest.importorskip("torch")
    from linttools import dynamo_break_lines_many

    # the two files as one module (layers.py's lines first, at the same numbers): Dynamo's
    # breaks do not depend on the file a class is written in
    layers = textwrap.dedent(CONFIGURED_BLOCK["pkg/layers.py"]).lstrip("\n")
    net = textwrap.dedent(CONFIGURED_BLOCK["pkg/net.py"]).lstrip("\n").replace("from .layers import Block\n", "")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'
    configured, defaults = dynamo_break_lines_many([
        (layers + net, call),
        (layers + net.replace("Block(dim, verbose=False, norm=nn.LayerNorm(dim))", "Block(dim)"), call),
    ])
    assert configured == [] and defaults == [14, 16]


def test_block_built_in_a_branch_the_defaults_leave_dead_is_still_a_submodule(tmp_path):
    # `Block(dim) if cfg.use_block else None` with the config class's default False: the
    # parent's call is not followed, but Block is still only ever called by Net, with shape ints
    files = dict(BLOCK_PACKAGE)
    files["pkg/model.py"] = """
        from torch import nn
        from . import layers

        class Cfg:
            use_block: bool = False

        class Net(nn.Module):
            def __init__(self, cfg: Cfg, dim=8):
                super().__init__()
                self.block = layers.Block(dim) if cfg.use_block else None

            def forward(self, x):
                B, C, H, W = x.shape
                x = x.flatten(2).transpose(1, 2)
                if self.block is not None:
                    x = self.block(x, H, W)
                return x
        """
    write(tmp_path, files)
    assert found(lint_tree(tmp_path, ["pkg"])) == [("pkg/layers.py", 15, "PTC104")]


def test_editor_document_of_the_block_file_is_judged_in_the_context_of_its_parent(tmp_path):
    # the language server lints one document: Block is still Net's submodule, and the
    # analyses read the document's unsaved text (a new `.item()` on H is no tensor read there)
    from pt2lint.config import load_project
    from pt2lint.lsp import lint_document_result

    write(tmp_path, BLOCK_PACKAGE)
    path = str(tmp_path / "pkg" / "layers.py")
    text = (tmp_path / "pkg" / "layers.py").read_text(encoding="utf-8")
    shown, deps = lint_document_result(text, path, "file://" + path, load_project([path]))
    assert [(d.start.line, d.code) for d in shown] == [(15, "PTC104")]
    assert str(tmp_path / "pkg" / "model.py") in deps  # editing the parent re-lints the document
    edited = text.replace("pad = int(H % 2)", "pad = int(H % 2) + int(x.amax().item())")
    shown, _deps = lint_document_result(edited, path, "file://" + path, load_project([path]))
    assert [(d.start.line, d.code) for d in shown] == [(13, "PTC101"), (15, "PTC104")]
    (tmp_path / "pkg" / "model.py").unlink()
    shown, _deps = lint_document_result(text, path, "file://" + path, load_project([path]))
    assert [(d.start.line, d.code) for d in shown] == [(r[1], r[2]) for r in BLOCK_ALONE]


@pytest.mark.parametrize("where, spelled", [
    ("pkg/nets/net.py", "from ..layers import Block"),  # a subpackage, relative import
    ("pkg/net.py", "from pkg import Block"),  # re-exported by the package's __init__
    ("pkg/net.py", "import pkg.layers as L\nBlock = L.Block"),
])
def test_parents_found_however_they_import_the_block(tmp_path, where, spelled):
    files = {k: v for k, v in BLOCK_PACKAGE.items() if k != "pkg/model.py"}
    files["pkg/__init__.py"] = "from .layers import Block\n"
    if where.startswith("pkg/nets/"):
        files["pkg/nets/__init__.py"] = ""
    files[where] = spelled + """
from torch import nn

class Net(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.block = Block(dim)

    def forward(self, x):
        B, C, H, W = x.shape
        return self.block(x.flatten(2).transpose(1, 2), H, W)
"""
    write(tmp_path, files)
    assert found(lint_tree(tmp_path, ["pkg/layers.py"])) == [("pkg/layers.py", 15, "PTC104")]


def test_unreadable_or_broken_files_in_the_package_are_no_parents_and_no_errors(tmp_path):
    files = {k: v for k, v in BLOCK_PACKAGE.items() if k != "pkg/model.py"}
    files["pkg/broken.py"] = "from .layers import Block\nclass Net(nn.Module:\n    self.b = Block(4)\n"
    write(tmp_path, files)
    (tmp_path / "pkg" / "latin.py").write_bytes(b"from .layers import Block\nx = '\xe9'\nb = Block(4)\n")
    os.symlink(tmp_path / "pkg" / "layers.py", tmp_path / "pkg" / "alias.py")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        results = list(lint_paths(["pkg/layers.py"], LintSettings(enabled=SETTINGS.enabled, project_root=str(tmp_path)), jobs=1))
    finally:
        os.chdir(old)
    assert [r.error for r in results] == [None]
    assert found(results[0].diagnostics) == BLOCK_ALONE


HELPERS_ALONE = {
    **PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/utils.py": """
        import torch

        def scale_(x, s):
            x.mul_(s)
            return x

        def count(x):
            return int((x > 0).sum())

        def build_table(n):
            return torch.arange(n).tolist()
        """,
    "pkg/model.py": """
        from torch import nn
        from . import utils

        class Net(nn.Module):
            def __init__(self, n=4):
                super().__init__()
                self.table = utils.build_table(n)  # at construction: no compiled region

            def forward(self, x):
                y = utils.scale_(x, 2.0)
                return y * utils.count(y)
        """,
}


def test_helper_file_alone_is_judged_by_the_forward_that_calls_it(tmp_path):
    # pre-commit on utils.py: Net.forward (model.py, not linted) passes its input to scale_
    # (an input mutation) and calls count (a tensor read as int); build_table runs in __init__
    write(tmp_path, HELPERS_ALONE)
    whole = [f for f in found(lint_tree(tmp_path, ["pkg"])) if f[0] == "pkg/utils.py"]
    alone = found(lint_tree(tmp_path, ["pkg/utils.py"]))
    assert alone == whole == [("pkg/utils.py", 4, "PTC401"), ("pkg/utils.py", 8, "PTC103")]


def test_stdin_with_a_filename_is_judged_by_the_forward_that_calls_that_file(tmp_path, monkeypatch):
    # an editor integration pipes the buffer: what it holds is judged, not the file on disk
    from pt2lint.cli import cli

    write(tmp_path, HELPERS_ALONE)
    monkeypatch.chdir(tmp_path)
    buffer = (tmp_path / "pkg" / "utils.py").read_text(encoding="utf-8").replace("x.mul_(s)", "x = x * s")

    def run(*extra):
        out = cli_runner().invoke(cli, ["check", "--no-cache", "--output-format", "json", *extra, "-"], input=buffer, catch_exceptions=False)
        return sorted((os.path.relpath(d["filename"], tmp_path).replace(os.sep, "/"), d["location"]["row"], d["code"]) for d in json.loads(out.stdout))

    assert run("--stdin-filename", "pkg/utils.py") == [("pkg/utils.py", 8, "PTC103")]
    assert run() == []  # no file named: no package to judge it by
    # the buffer defines the functions, the file on disk not yet: the buffer's definitions are looked for
    (tmp_path / "pkg" / "utils.py").write_text("def unrelated():\n    pass\n", encoding="utf-8")
    assert run("--stdin-filename", "pkg/utils.py") == [("pkg/utils.py", 8, "PTC103")]


def test_helper_defined_in_a_module_level_block_is_looked_for(tmp_path):
    # the fallback of an optional fused kernel: a def inside ``except ImportError:``
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/utils.py": """
            import torch

            try:
                from fused_ops_not_installed import helper
            except ImportError:
                def helper(x):
                    s = x.sum().item()
                    return x / s
            """,
        "pkg/net.py": """
            from torch import nn
            from .utils import helper

            class Net(nn.Module):
                def forward(self, x):
                    return helper(x)
            """,
    })
    whole = found(lint_tree(tmp_path, ["pkg"]))
    assert whole == [("pkg/utils.py", 7, "PTC101")]
    assert found(lint_tree(tmp_path, ["pkg/utils.py"])) == whole


def test_block_in_a_namespace_package_alone_is_judged_by_its_parent(tmp_path):
    # no __init__.py anywhere: net.py imports pkg.sub.layers from the project root
    write(tmp_path, {**PYPROJECT,
        "pkg/sub/layers.py": SHARED_LAYERS,
        "pkg/utils.py": SHARED_UTILS,
        "pkg/net.py": "from torch import nn\nfrom pkg.utils import helper, scale_\nfrom pkg.sub.layers import Block\n"
        + NET_BODY.format(block="Block", scale="scale_", helper="helper"),
    })
    whole = found(lint_tree(tmp_path, ["pkg"]))
    assert [f for f in whole if f[0] == "pkg/sub/layers.py"] == []
    assert found(lint_tree(tmp_path, ["pkg/sub/layers.py"])) == []  # H, W: ints from Net's x.shape
    assert found(lint_tree(tmp_path, ["pkg/utils.py"])) == [f for f in whole if f[0] == "pkg/utils.py"] != []


def test_helper_file_alone_forgets_a_caller_that_stops_calling(tmp_path):
    write(tmp_path, HELPERS_ALONE)
    cache = str(tmp_path / "cache")
    assert len(found(lint_tree(tmp_path, ["pkg/utils.py"], cache_dir=cache))) == 2
    model = tmp_path / "pkg" / "model.py"
    model.write_text(model.read_text().replace("return y * utils.count(y)", "return y"), encoding="utf-8")
    assert found(lint_tree(tmp_path, ["pkg/utils.py"], cache_dir=cache)) == [("pkg/utils.py", 4, "PTC401")]


def test_mixin_file_alone_is_judged_by_the_models_that_derive_from_it(tmp_path):
    # pre-commit on mixins.py: its methods run in EncoderBlock.forward (blocks.py, not linted)
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/mixins.py": """
            class MaskingMixin:
                def _ensure_cls(self, mask):
                    mask[:, 0] = True
                    return mask

                def _valid_tokens(self, x, mask):
                    return x[mask]
            """,
        "pkg/blocks.py": """
            from torch import nn
            from . import mixins

            class EncoderBlock(mixins.MaskingMixin, nn.Module):
                def forward(self, x, mask):
                    mask = self._ensure_cls(mask)
                    return self._valid_tokens(x, mask).sum()
            """,
    })
    whole = [f for f in found(lint_tree(tmp_path, ["pkg"])) if f[0] == "pkg/mixins.py"]
    assert found(lint_tree(tmp_path, ["pkg/mixins.py"])) == whole == [("pkg/mixins.py", 3, "PTC401"), ("pkg/mixins.py", 7, "PTC201")]


SHARED_LAYERS = """
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.lin = nn.Linear(dim, dim)

        def forward(self, x, H, W):
            if H > 8:
                x = x * 2
            y = x.reshape(x.shape[0], H, W, -1)
            return self.lin(y)
    """

SHARED_UTILS = """
    import torch


    def helper(x):
        s = x.sum().item()
        return x / s


    def scale_(x):
        x.mul_(2)
        return x
    """

NET_BODY = textwrap.dedent("""
    class Net(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.block = {block}(dim)

        def forward(self, x):
            B, H, W, C = x.shape
            x = {scale}(x)
            x = {helper}(x)
            return self.block(x, H, W)
    """)

USER_LAYOUTS = {
    "aliased imports": {
        "pkg/net.py": "from torch import nn\nfrom .layers import Block as B\nfrom .utils import helper as h, scale_ as sc\n"
        + NET_BODY.format(block="B", scale="sc", helper="h"),
    },
    "star re-export": {
        "pkg/__init__.py": "from .layers import *\nfrom .utils import *\n",
        "pkg/net.py": "from torch import nn\nfrom pkg import Block, helper, scale_\n" + NET_BODY.format(block="Block", scale="scale_", helper="helper"),
    },
    "a renamed re-export": {
        "pkg/__init__.py": "from .layers import Block as TBlock\nfrom .utils import helper as norm_helper, scale_ as scale_inplace\n",
        "pkg/net.py": "from torch import nn\nfrom pkg import TBlock, norm_helper, scale_inplace\n"
        + NET_BODY.format(block="TBlock", scale="scale_inplace", helper="norm_helper"),
    },
    "a re-export renamed twice": {
        "pkg/__init__.py": "from .layers import Block as TBlock\nfrom .utils import helper as norm_helper, scale_ as scale_inplace\n",
        "pkg/api.py": "from pkg import TBlock as ApiBlock, norm_helper as api_helper  # noqa\nfrom pkg import scale_inplace\n",
        "pkg/net.py": "from torch import nn\nfrom .api import ApiBlock, api_helper, scale_inplace\n"
        + NET_BODY.format(block="ApiBlock", scale="scale_inplace", helper="api_helper"),
    },
    "a sibling module re-exporting": {
        "pkg/api.py": "from .layers import Block\nfrom .utils import helper, scale_\n",
        "pkg/net.py": "from torch import nn\nfrom pkg.api import Block, helper, scale_\n" + NET_BODY.format(block="Block", scale="scale_", helper="helper"),
    },
    "a commented, CRLF parenthesised import": {
        "pkg/net.py": ("from torch import nn\nfrom pkg import (  # submodules\n    layers,\n    utils,\n)\n"
                       + NET_BODY.format(block="layers.Block", scale="utils.scale_", helper="utils.helper")),
        "crlf": True,
    },
    "a builder one step removed and a caller that passes the call on": {
        "pkg/stages.py": """
            from torch import nn
            from .layers import Block
            from .ops import prep

            class Stage(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.blocks = nn.ModuleList([Block(dim) for _ in range(2)])

                def forward(self, x, H, W):
                    x = prep(x)
                    for b in self.blocks:
                        x = b(x, H, W)
                    return x
            """,
        "pkg/ops.py": """
            from .utils import helper, scale_

            def prep(x):
                return helper(scale_(x))
            """,
        "pkg/net.py": """
            from torch import nn
            from .stages import Stage

            class Net(nn.Module):
                def __init__(self, dim=4):
                    super().__init__()
                    self.stage = Stage(dim)

                def forward(self, x):
                    B, H, W, C = x.shape
                    return self.stage(x, H, W)
            """,
    },
}


@pytest.mark.parametrize("layout", sorted(USER_LAYOUTS))
def test_each_file_alone_gets_what_the_whole_package_reports_in_it(tmp_path, layout):
    files = {**PYPROJECT, "pkg/__init__.py": "", "pkg/layers.py": SHARED_LAYERS, "pkg/utils.py": SHARED_UTILS}
    extra = dict(USER_LAYOUTS[layout])
    crlf = extra.pop("crlf", False)
    files.update(extra)
    write(tmp_path, files)
    if crlf:
        net = tmp_path / "pkg" / "net.py"
        net.write_bytes(net.read_bytes().replace(b"\n", b"\r\n"))
    whole = found(lint_tree(tmp_path, ["pkg"]))
    assert [f for f in whole if f[0] == "pkg/utils.py"] == [("pkg/utils.py", 5, "PTC101"), ("pkg/utils.py", 10, "PTC401")]
    for rel in ("pkg/layers.py", "pkg/utils.py"):
        alone = found(lint_tree(tmp_path, [rel]))
        assert alone == [f for f in whole if f[0] == rel], rel


FORWARDED_FLAG = {
    **PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/layers.py": """
        import torch
        from torch import nn


        class Attention(nn.Module):
            def __init__(self, dim, verbose=True):
                super().__init__()
                self.proj = nn.Linear(dim, dim)
                self.verbose = verbose

            def forward(self, x):
                if self.verbose:
                    print("attention", x.shape)
                return self.proj(x)


        class Block(nn.Module):
            def __init__(self, dim, verbose=True):
                super().__init__()
                self.attn = Attention(dim, verbose=verbose)

            def forward(self, x):
                return x + self.attn(x)
    """,
    "pkg/model.py": """
        from torch import nn

        from .layers import Block


        class Net(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.blocks = nn.ModuleList([Block(dim, verbose={flag}) for _ in range(2)])

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x
    """,
}


def _forwarded(flag: str) -> Dict[str, str]:
    return {k: v.replace("{flag}", flag) for k, v in FORWARDED_FLAG.items()}


@pytest.mark.parametrize("paths", [["pkg"], ["pkg/model.py"], ["pkg/layers.py"]])
@pytest.mark.parametrize("flag,expected", [("False", []), ("True", [("pkg/layers.py", 13, "PTC301")])])
def test_a_flag_forwarded_by_a_constructor_of_another_module(tmp_path, paths, flag, expected):
    # model.py builds Block(verbose=...), whose __init__ in layers.py builds Attention(verbose=verbose):
    # the attention holds the flag model.py passes, whichever file is checked
    write(tmp_path, _forwarded(flag))
    assert found(lint_tree(tmp_path, paths)) == expected


def test_a_flag_forwarded_by_a_constructor_of_another_module_dynamo_agrees(tmp_path):
    torch = pytest.importorskip("torch")
    import importlib
    import sys

    breaks = {}
    for flag in ("False", "True"):
        root = tmp_path / flag
        write(root, _forwarded(flag))
        sys.path.insert(0, str(root))
        try:
            for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
                del sys.modules[name]
            model = importlib.import_module("pkg.model")
            torch._dynamo.reset()
            explained = torch._dynamo.explain(model.Net())(torch.randn(2, 8))
            breaks[flag] = explained.graph_break_count > 0
        finally:
            sys.path.remove(str(root))
            for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
                del sys.modules[name]
    assert breaks == {"False": False, "True": True}


SUBCLASS_OF_A_FOREIGN_BASE = {
    **PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/layers.py": """
        from torch import nn


        class MLP(nn.Module):
            def __init__(self, in_dim, out_dim):
                super().__init__()
                self.out_dim = out_dim
                self.net = nn.Linear(in_dim, out_dim)

            def forward(self, x):
                return self.net(x)
    """,
    "pkg/model.py": """
        from dataclasses import dataclass

        from torch import nn

        from .layers import MLP


        @dataclass
        class Config:
            obs_dim: int = 4
            act_dim: int = 3


        class Head(MLP):
            def __init__(self, in_dim):
                super().__init__(in_dim, 1)


        class Net(nn.Module):
            def __init__(self, cfg: Config):
                super().__init__()
                self.mu = MLP(cfg.obs_dim, cfg.act_dim)
                self.value = Head(cfg.act_dim)

            def forward(self, x):
                return self.value(self.mu(x)).sum().item()
    """,
}


@pytest.mark.parametrize("paths", [["pkg"], ["pkg/model.py"]])
def test_a_subclass_of_a_base_built_from_a_config_field_elsewhere(tmp_path, paths):
    # model.py subclasses layers.MLP and builds MLP(cfg.obs_dim, cfg.act_dim) from an annotated
    # config parameter: collecting the subclass's attributes asks what MLP's construction sites pass,
    # before any function is analysed; the file is analysed (not an internal error) and the break
    # in forward is found
    write(tmp_path, SUBCLASS_OF_A_FOREIGN_BASE)
    results = lint_results(tmp_path, paths)
    assert [r.error for r in results if r.error] == []
    assert found([d for r in results for d in r.diagnostics]) == [("pkg/model.py", 26, "PTC101")]
