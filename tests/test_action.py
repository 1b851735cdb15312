"""The GitHub Action (``action.yml``): its shape, and its shell steps run here.

GitHub runs a composite action's steps in order, with ``${{ ... }}`` expressions
substituted and ``if:`` conditions evaluated.  :func:`run_action` does the same for the
expressions this action uses (``inputs.*``, ``github.action_path``,
``github.server_url``, ``github.action_repository``, ``steps.<id>.outputs.*``), runs
each ``run:`` step with bash as GitHub does (``bash --noprofile --norc -eo pipefail``),
and records ``uses:`` steps instead of running them (the SARIF upload needs GitHub).
The action's checkout is a git snapshot of this working tree.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

yaml = pytest.importorskip("yaml")
if shutil.which("git") is None or shutil.which("bash") is None:  # pragma: no cover
    pytest.skip("git and bash are needed", allow_module_level=True)

REPO = pathlib.Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
NETWORK_ERRORS = ("Could not find a version", "No matching distribution", "Failed to establish a new connection")

_spec = importlib.util.spec_from_file_location("pt2lint_readme_blocks", REPO / "tools" / "readme_blocks.py")
rb = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = rb
_spec.loader.exec_module(rb)

ITEM = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            scale = x.abs().max().item()
            return x / scale
    """
)
CLEAN = "import torch\n\n\ndef double(x):\n    return x * 2\n"


# --- the file --------------------------------------------------------------------------

def _expressions(value) -> list[str]:
    if isinstance(value, dict):
        return [e for v in value.values() for e in _expressions(v)]
    if isinstance(value, list):
        return [e for v in value for e in _expressions(v)]
    return EXPR.findall(value) if isinstance(value, str) else []


def test_action_is_a_composite_action_with_documented_inputs():
    assert isinstance(ACTION["name"], str) and ACTION["name"]
    assert isinstance(ACTION["description"], str) and len(ACTION["description"]) < 125  # the Marketplace's limit
    assert set(ACTION["inputs"]) == {"paths", "args", "version", "sarif", "sarif-file", "python", "working-directory"}
    for name, spec in ACTION["inputs"].items():
        assert re.fullmatch(r"[a-z][a-z0-9-]*", name), name
        assert spec["description"].strip(), name
        assert isinstance(spec.get("default", ""), str), f"input {name}: defaults are strings in action metadata"
        assert set(spec) <= {"description", "required", "default", "deprecationMessage"}, name
    assert ACTION["runs"]["using"] == "composite"
    for output in ACTION.get("outputs", {}).values():
        assert output["description"] and output["value"]


def test_every_step_is_well_formed_and_every_expression_resolves():
    steps = ACTION["runs"]["steps"]
    ids = [s["id"] for s in steps if "id" in s]
    assert len(ids) == len(set(ids))
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step["shell"] == "bash", step  # composite steps must name their shell
        else:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+", step["uses"]), step["uses"]
        assert set(step) <= {"name", "id", "if", "run", "shell", "env", "working-directory", "uses", "with", "continue-on-error"}
    known = set(ACTION["inputs"])
    for index, step in enumerate(steps):
        earlier = {s["id"] for s in steps[:index] if "id" in s}
        expressions = _expressions(step) + ([step["if"]] if "if" in step else [])
        for expr in expressions:
            for name in re.findall(r"inputs\.([\w-]+)", expr):
                assert name in known, f"step {step.get('name')}: unknown input {name}"
            for name in re.findall(r"steps\.([\w-]+)\.", expr):
                assert name in earlier, f"step {step.get('name')}: steps.{name} is not an earlier step"
        if "run" in step:
            # inputs reach scripts through env, never pasted into the script (no script injection)
            assert not EXPR.search(step["run"]), step["name"]
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif@") for s in steps)
    for expr in _expressions(ACTION.get("outputs", {})):
        assert re.fullmatch(r"steps\.[\w-]+\.outputs\.[\w-]+", expr) and expr.split(".")[1] in ids


# --- running it ----------------------------------------------------------------------------

def _evaluate(expr: str, context: dict) -> str:
    expr = expr.strip()
    match = re.fullmatch(r"inputs\.([\w-]+)", expr)
    if match:
        return context["inputs"][match[1]]
    match = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
    if match:
        return context["steps"].get(match[1], {}).get(match[2], "")
    match = re.fullmatch(r"github\.(\w+)", expr)
    if match:
        return context["github"][match[1]]
    raise AssertionError(f"expression not understood by this test: {expr}")


def _condition(expr: str, context: dict) -> bool:
    expr = EXPR.sub(lambda m: m[1], expr).strip()
    terms = [t.strip() for t in expr.split("&&")]
    result = True
    for term in terms:
        match = re.fullmatch(r"(inputs\.[\w-]+|steps\.[\w-]+\.\w+)\s*(==|!=)\s*'([^']*)'", term)
        if match:
            left = _evaluate(match[1], context) if match[1].startswith("inputs.") else context["steps"].get(match[1].split(".")[1], {}).get("__" + match[1].split(".")[2], "")
            result &= (left == match[3]) == (match[2] == "==")
        elif term in ("always()", "success()"):
            pass
        else:
            raise AssertionError(f"condition not understood by this test: {term}")
    return result


def _substitute(value: str, context: dict) -> str:
    return EXPR.sub(lambda m: _evaluate(m[1], context), value)


def _outputs(path: pathlib.Path) -> dict:
    out = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        key, _, value = line.partition("=")
        out[key] = value
    return out


def run_action(inputs: dict, *, workspace: pathlib.Path, action_path: pathlib.Path, temp: pathlib.Path,
               server_url: str = "file://localhost", action_repository: str = "pt2lint/pt2lint",
               only: slice = slice(None), installed: dict | None = None) -> dict:
    """Run action.yml's steps as GitHub would, for the expressions it uses; return what happened.

    ``only`` picks the steps to run (``slice(1, None)``: all after the install, with the
    install step's outputs taken from ``installed``, an earlier run's ``record["steps_out"]``).
    Returns ``{"steps": [(name, status, exit code, output)], "uses": [(action, with)],
    "outputs": {...}, "steps_out": {id: outputs}}``.
    """
    context = {
        "inputs": {name: str(inputs.get(name, spec.get("default", ""))) for name, spec in ACTION["inputs"].items()},
        "github": {"action_path": str(action_path), "server_url": server_url, "action_repository": action_repository,
                   "workspace": str(workspace)},
        "steps": dict(installed or {}),
    }
    record = {"steps": [], "uses": []}
    failed = False
    temp.mkdir(parents=True, exist_ok=True)
    steps = list(enumerate(ACTION["runs"]["steps"]))[only]
    for index, step in steps:
        name = step.get("name", f"step {index}")
        if failed or ("if" in step and not _condition(step["if"], context)):
            record["steps"].append((name, "skipped", None, ""))
            continue
        if "uses" in step:
            record["uses"].append((step["uses"], {k: _substitute(str(v), context) for k, v in step.get("with", {}).items()}))
            record["steps"].append((name, "recorded", None, ""))
            continue
        output_file = temp / f"output-{index}"
        env = dict(os.environ)
        for var in ("PYTHONPATH", "PT2LINT_CACHE_DIR", "VIRTUAL_ENV"):
            env.pop(var, None)
        env.update(RUNNER_TEMP=str(temp), GITHUB_OUTPUT=str(output_file), GITHUB_WORKSPACE=str(workspace),
                   GITHUB_ACTION_PATH=str(action_path), CI="true", GITHUB_ACTIONS="true")
        env.update({k: _substitute(str(v), context) for k, v in step.get("env", {}).items()})
        cwd = workspace / _substitute(step.get("working-directory", "."), context)
        script = temp / f"step-{index}.sh"
        script.write_text(_substitute(step["run"], context))
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        outputs = _outputs(output_file)
        outputs["__outcome"] = "success" if proc.returncode == 0 else "failure"
        if "id" in step:
            context["steps"][step["id"]] = outputs
        record["steps"].append((name, outputs["__outcome"], proc.returncode, proc.stdout))
        failed = proc.returncode != 0
    record["outputs"] = {k: _substitute(v["value"], context) for k, v in ACTION.get("outputs", {}).items()}
    record["steps_out"] = context["steps"]
    return record


def _workspace(path: pathlib.Path) -> pathlib.Path:
    (path / "models").mkdir(parents=True)
    (path / "models" / "net.py").write_text(ITEM)
    (path / "models" / "util.py").write_text(CLEAN)
    (path / "scripts").mkdir()
    (path / "scripts" / "other.py").write_text(ITEM)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


def _install_ok(record):
    name, status, code, out = record["steps"][0]
    if status != "success" and any(e in out for e in NETWORK_ERRORS):
        pytest.skip("the package index is not reachable")
    assert status == "success", out


@pytest.fixture(scope="module")
def action_checkout(tmp_path_factory):
    """The action's own checkout: what git tracks in this working tree (plus untracked, unignored files)."""
    return rb.copy_repo(REPO, tmp_path_factory.mktemp("action") / "pt2lint")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, action_checkout):
    """Two real installs at once: the whole action with its defaults (pt2lint from the
    action's checkout), and the install step alone with ``version`` set to a tag of a
    local git repository standing in for ``<server_url>/<action_repository>``."""
    from concurrent.futures import ThreadPoolExecutor

    root = tmp_path_factory.mktemp("action-run")
    workspace = _workspace(root / "workspace")
    origin = root / "server" / "pt2lint" / "pt2lint"
    subprocess.run(["git", "clone", "-q", "--bare", str(action_checkout), str(origin)], check=True)
    subprocess.run(["git", "tag", "v-test", "HEAD"], cwd=origin, check=True)
    with ThreadPoolExecutor(2) as pool:
        default = pool.submit(run_action, {"paths": "models", "args": "--select PTC1"}, workspace=workspace,
                              action_path=action_checkout, temp=root / "temp")
        versioned = pool.submit(run_action, {"version": "v-test"}, workspace=workspace, action_path=root / "nowhere",
                                temp=root / "temp-version", server_url=f"file://localhost{root / 'server'}",
                                action_repository="pt2lint/pt2lint", only=slice(0, 1))
        return {"workspace": workspace, "default": default.result(), "version": versioned.result(), "origin": origin}


@pytest.fixture(scope="module")
def default_run(runs):
    return runs["workspace"], runs["default"]


def test_action_installs_from_its_checkout_and_writes_sarif(default_run, action_checkout):
    workspace, record = default_run
    _install_ok(record)
    install_out = record["steps"][0][3]
    assert f"installing {action_checkout}" in install_out and "pt2lint " in install_out
    name, status, code, out = record["steps"][1]
    assert status == "success", out
    sarif_path = pathlib.Path(record["outputs"]["sarif-file"])
    assert sarif_path == workspace / "pt2lint.sarif"
    sarif = json.loads(sarif_path.read_text())
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [("PTC101", "models/net.py")]
    assert record["uses"] == [(next(s["uses"] for s in ACTION["runs"]["steps"] if "uses" in s), {"sarif_file": str(sarif_path), "category": "pt2lint"})]


def test_action_annotates_and_fails_on_findings(default_run):
    _, record = default_run
    _install_ok(record)
    name, status, code, out = record["steps"][-1]
    assert (status, code) == ("failure", 1), out
    annotations = [line for line in out.splitlines() if line.startswith("::")]
    assert len(annotations) == 1 and annotations[0].startswith("::error title=PTC101 tensor-item,file=models/net.py,line=7,"), out
    assert "scripts/other.py" not in out  # only `paths`


def test_action_annotations_only_and_args_reach_check(tmp_path, default_run, action_checkout):
    """``sarif: false``: no report, no upload; ``args`` and several ``paths`` reach ``check`` (the install is reused)."""
    _, first = default_run
    _install_ok(first)
    workspace = _workspace(tmp_path / "workspace")
    (workspace / "models" / "net.py").write_text(CLEAN)
    record = run_action({"sarif": "false", "paths": "models scripts", "args": "--exit-zero --ignore PTC104"},
                        workspace=workspace, action_path=action_checkout, temp=tmp_path / "temp",
                        only=slice(1, None), installed={"install": first["steps_out"]["install"]})
    statuses = [status for _, status, _, _ in record["steps"]]
    assert statuses == ["skipped", "skipped", "success"], record["steps"]
    out = record["steps"][-1][3]
    assert "::error title=PTC101 tensor-item,file=scripts/other.py,line=7," in out, out
    assert record["outputs"]["sarif-file"] == "" and not (workspace / "pt2lint.sarif").exists()


def test_action_installs_a_given_ref_from_git(runs):
    """``version: REF`` installs that ref from ``<server_url>/<action_repository>`` (here a local bare repository)."""
    record = runs["version"]
    _install_ok(record)
    out = record["steps"][0][3]
    assert f"installing pt2lint @ git+file://localhost{runs['origin']}@v-test" in out and "pt2lint 0." in out, out
    pt2lint = pathlib.Path(record["steps_out"]["install"]["pt2lint"])
    check = subprocess.run([str(pt2lint), "check", "models"], cwd=runs["workspace"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 1 and "models/net.py:7:" in check.stdout, check.stdout + check.stderr


def test_readme_workflow_uses_the_action_with_inputs_it_has():
    from markdown_it import MarkdownIt

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = [t.content for t in MarkdownIt("commonmark").parse(readme)
                if t.type == "fence" and t.info.strip() == "yaml" and "pt2lint/pt2lint@" in t.content]
    workflow = yaml.safe_load(block)
    assert workflow["permissions"]["security-events"] == "write"
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("uses", "").startswith("pt2lint/pt2lint@")]
    assert set(step["with"]) <= set(ACTION["inputs"])
    section = readme[readme.index("### CI: the GitHub Action"):]
    for name, spec in ACTION["inputs"].items():
        assert f"| `{name}` |" in section, f"input {name} is not documented in the README"
