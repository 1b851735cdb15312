"""The documentation: generated rule pages match the specs, every finding link lands on a page,
the site builds in strict mode, and the README says what the code does."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clitools import cli_runner
from pt2lint.cli import cli
from pt2lint.diagnostics import DEFAULT_DOCS_URL, REPO_URL, check_docs_url, rule_url
from pt2lint.specs import load_specs

ROOT = Path(__file__).resolve().parent.parent
SPECS = load_specs()
#: How a default link maps back to a file of this repository.
BLOB = REPO_URL + "/blob/main/"


def _load_tool(name):
    spec = importlib.util.spec_from_file_location(f"_test_{name}", ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_tool("gen_docs")


def _page_for(url: str) -> Path:
    """The repository file a default-template link points at (fails for any other link)."""
    assert url.startswith(BLOB), url
    return ROOT / url[len(BLOB):]


def _generated_pages():
    return {p.name for p in (ROOT / "docs" / "rules").glob("*.md")}


# --------------------------------------------------------------------------- generated pages


def test_rule_pages_are_up_to_date_with_the_specs():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_docs.py"), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_the_freshness_check_catches_an_edited_a_missing_and_an_orphan_page(tmp_path):
    pages = GEN.render_all(SPECS)
    GEN.write(pages, tmp_path)
    assert GEN.stale(pages, tmp_path) == []
    (tmp_path / "PTC101.md").write_text("# hand edited\n")
    (tmp_path / "PTC301.md").unlink()
    (tmp_path / "PTC999.md").write_text("# a rule that no longer exists\n")
    assert sorted(GEN.stale(pages, tmp_path)) == ["PTC101.md", "PTC301.md", "PTC999.md"]
    assert sorted(GEN.write(pages, tmp_path)) == ["PTC101.md", "PTC301.md", "PTC999.md"]
    assert GEN.stale(pages, tmp_path) == [] and not (tmp_path / "PTC999.md").exists()


def test_every_rule_has_a_page_and_nothing_else_is_there():
    assert _generated_pages() == {f"{code}.md" for code in SPECS} | {"index.md", "coverage.md"}


@pytest.mark.parametrize("code", sorted(SPECS))
def test_a_rule_page_carries_its_spec(code):
    spec = SPECS[code]
    text = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    assert text.splitlines()[2] == f"# {code} `{spec.name}`"
    for section, body in (("What it does", spec.summary), ("Why is this bad?", GEN.link_gb_ids(spec.why)), ("Fix", spec.fix)):
        assert f"## {section}\n\n{body.strip()}\n" in text
    if spec.evidence.strip():
        assert f"## Measured on torch\n\n{GEN.link_gb_ids(spec.evidence.strip())}\n" in text
    for example in spec.examples:
        assert example.code.rstrip("\n") in text
        heading = "## Example" if example.kind == "bad" else "## Not flagged"
        assert heading in text
    for line in [e for e in spec.examples if e.kind == "bad"]:
        assert f'hl_lines="{" ".join(map(str, line.flag))}"' in text
    for gb in spec.gb_types:
        assert f"[{gb}](https://meta-pytorch.github.io/compile-graph-break-site/gb/{gb.lower()}.html)" in text
    for ref in spec.references:
        assert f"<{ref}>" in text
    if not spec.gb_types:
        assert "## Dynamo graph-break ids" not in text


def test_gb_links_follow_the_graph_break_site_layout():
    assert GEN.gb_url("GB0124") == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"
    assert GEN.gb_url("gb9186").endswith("/gb/gb9186.html")
    for bad in ("GB124", "GBX124", "0124", "GB01245"):
        with pytest.raises(ValueError, match="not a Dynamo graph-break id"):
            GEN.gb_url(bad)


def test_gb_ids_in_prose_are_linked_but_not_inside_code():
    text = GEN.link_gb_ids("breaks (GB0124); `GB0059` stays code; GB00591 is no id")
    assert text == (
        "breaks ([GB0124](https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html)); "
        "`GB0059` stays code; GB00591 is no id"
    )


def test_fixable_rules_name_their_codemods():
    from pt2lint.fixes import CODEMOD_CODES

    for name, codes in CODEMOD_CODES.items():
        for code in codes:
            assert f"`{name}`" in (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    assert "pt2lint fix" not in (ROOT / "docs" / "rules" / "PTC102.md").read_text(encoding="utf-8")


def test_ci_builds_the_site_strictly_before_the_tests():
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    build = next(i for i, line in enumerate(lines) if "mkdocs build --strict" in line)
    assert build < lines.index("python -m pytest -q")  # steps after the tests (the README blocks) may follow
    assert "mkdocs>=1.6" in (ROOT / "pyproject.toml").read_text() and "mkdocs-material" in (ROOT / "pyproject.toml").read_text()


def test_the_index_links_every_rule_page():
    index = (ROOT / "docs" / "rules" / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((PTC\d{3})\.md\)", index))
    assert linked == set(SPECS)


# --------------------------------------------------------------------------- finding links


def test_every_rule_url_maps_to_its_generated_page():
    for code, spec in SPECS.items():
        page = _page_for(rule_url(code))
        assert page.is_file(), f"{code}: {rule_url(code)} points at a page that does not exist"
        assert page.read_text(encoding="utf-8").splitlines()[2].startswith(f"# {code} ")


def _bad_examples_project(tmp_path):
    """Every spec's first flagged example as a file, so each rule with one produces a finding."""
    for code, spec in SPECS.items():
        bad = next((e for e in spec.examples if e.kind == "bad" and not e.config), None)
        if bad is not None:
            (tmp_path / f"ex_{code.lower()}.py").write_text(bad.code)
    (tmp_path / "pyproject.toml").write_text('[tool.pt2lint]\nselect = ["ALL"]\n')
    return tmp_path


def _check(tmp_path, *args):
    result = cli_runner().invoke(cli, ["check", "--no-cache", "-j", "1", *args, str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 1, result.stderr
    return result.stdout


def test_links_in_json_sarif_and_lsp_output_land_on_generated_pages(tmp_path):
    project = _bad_examples_project(tmp_path)
    findings = json.loads(_check(project, "--output-format", "json"))
    assert len({f["code"] for f in findings}) >= 15  # the examples cover most rules
    for f in findings:
        assert f["url"] == rule_url(f["code"]) and _page_for(f["url"]).is_file()
    sarif = json.loads(_check(project, "--output-format", "sarif"))
    help_uris = {r["id"]: r["helpUri"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert set(SPECS) <= set(help_uris)
    for code, uri in help_uris.items():
        assert _page_for(uri).is_file(), code
    lsp = json.loads(_check(project, "--output-format", "lsp"))
    hrefs = [d["codeDescription"]["href"] for item in lsp for d in item["diagnostics"]]
    assert hrefs and all(_page_for(h).is_file() for h in hrefs)


def test_docs_url_setting_moves_every_link(tmp_path, monkeypatch):
    project = _bad_examples_project(tmp_path)
    (project / "pyproject.toml").write_text(
        '[tool.pt2lint]\nselect = ["ALL"]\ndocs-url = "https://docs.example.com/pt2lint/rules/{code}/#{name}"\n'
    )
    findings = json.loads(_check(project, "--output-format", "json"))
    assert findings and all(f["url"] == f"https://docs.example.com/pt2lint/rules/{f['code']}/#{f['name']}" for f in findings)
    sarif = json.loads(_check(project, "--output-format", "sarif"))
    for rule in sarif["runs"][0]["tool"]["driver"]["rules"]:
        assert rule["helpUri"] == f"https://docs.example.com/pt2lint/rules/{rule['id']}/#{rule['name']}"
    lsp = json.loads(_check(project, "--output-format", "lsp"))
    hrefs = {d["codeDescription"]["href"] for item in lsp for d in item["diagnostics"]}
    assert hrefs and all(h.startswith("https://docs.example.com/pt2lint/rules/PTC") for h in hrefs)
    monkeypatch.chdir(project)
    rule = cli_runner().invoke(cli, ["rule", "PTC101", "--output-format", "json"], catch_exceptions=False)
    assert json.loads(rule.stdout)["url"] == "https://docs.example.com/pt2lint/rules/PTC101/#tensor-item"


def test_the_lsp_server_helpers_take_the_project_template():
    from pt2lint.lsp import hover_markdown, to_lsp_diagnostics

    assert f"[Documentation]({DEFAULT_DOCS_URL.format(code='PTC101')})" in hover_markdown("PTC101")
    assert "[Documentation](https://x.test/PTC101)" in hover_markdown("tensor-item", "https://x.test/{code}")
    assert to_lsp_diagnostics([], "", "utf-16", "https://x.test/{code}") == []


@pytest.mark.parametrize(
    "value,message",
    [
        (3, "must be a string"),
        ("docs/rules/{code}.md", "must be an http(s):// or file:// URL"),
        ("https://x.test/rules/", "must contain {code}"),
        ("https://x.test/{rule}.html", "unknown placeholder {rule}"),
        ("https://x.test/{code", "is not a valid template"),
        # a conversion or format spec would be applied to every finding's link: quoted,
        # padded to a huge width (megabytes per finding), or an internal error
        ("https://x.test/{code!r}", "placeholder {code!r}: a conversion or format spec is not allowed"),
        ("https://x.test/{code:>99999999}", "placeholder {code:>99999999}: a conversion"),
        ("https://x.test/{code}/{name:>9999999999999999999}", "placeholder {name:>9999999999999999999}"),
        ("https://x.test/{code!s:^{name}}", "placeholder {code!s:^{name}}"),
    ],
)
def test_a_bad_docs_url_is_a_one_line_config_error(tmp_path, value, message):
    literal = json.dumps(value)
    (tmp_path / "pyproject.toml").write_text(f"[tool.pt2lint]\ndocs-url = {literal}\n")
    (tmp_path / "m.py").write_text("x = 1\n")
    result = cli_runner().invoke(cli, ["check", "--no-cache", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and "[tool.pt2lint] 'docs-url' " in line and message in line
    with pytest.raises(ValueError, match=re.escape(message)):
        check_docs_url(value)


# --------------------------------------------------------------------------- the site


def test_configuration_page_documents_every_key():
    from pt2lint.config import KNOWN_KEYS
    from pt2lint.confirm import settings as confirm_settings

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for key in KNOWN_KEYS + confirm_settings._KEYS:
        assert f"| `{key}`" in text or f"`{key}`," in text, f"docs/configuration.md does not document {key!r}"
    assert DEFAULT_DOCS_URL in text


def test_cli_reference_lists_every_option_of_every_command():
    hooks = _load_tool("mkdocs_hooks")
    text = hooks.render_cli_reference()
    for name, command in cli.commands.items():
        assert f"## `pt2lint {name}`" in text
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("-") and not getattr(param, "hidden", False):
                    assert opt in text, f"{name} {opt}"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed")
def test_the_site_builds_in_strict_mode_with_a_page_per_rule(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    site = tmp_path / "site"
    for code in SPECS:
        page = (site / "rules" / code / "index.html").read_text(encoding="utf-8")
        assert f"{code}" in page and SPECS[code].name in page
    assert (site / "reference" / "cli" / "index.html").is_file()
    for page in ("usage", "configuration", "integrations", "accuracy", "dynamo-2.13-facts"):
        assert (site / page / "index.html").is_file(), page
    nav = (site / "index.html").read_text(encoding="utf-8")
    assert all(f"rules/{code}/" in nav for code in SPECS)  # every rule page is in the navigation
    assert "rules/coverage/" in nav and (site / "rules" / "coverage" / "index.html").is_file()


# --------------------------------------------------------------------------- README


def _check_options_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("Useful `check` options:")
    table = readme[start:readme.index("### Which files are checked", start)]
    return [line for line in table.splitlines() if line.startswith("| `")]


def test_readme_check_options_table_lists_each_option_once():
    seen = {}
    for row in _check_options_table():
        cell = row.split("|")[1].replace("`--no-...`", "")  # "(and `--no-...`)": the negated flags
        for opt in re.findall(r"(?<![\w-])(-{1,2}[a-z][\w-]*)", cell):
            seen[opt] = seen.get(opt, 0) + 1
    assert seen.get("-j") == 1 and seen.get("--jobs") == 1
    assert {opt: n for opt, n in seen.items() if n > 1} == {}
    check = cli.commands["check"]
    known = {opt for p in check.params for opt in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])}
    assert set(seen) - known == set(), "the README names check options that do not exist"


def test_readme_documents_ruff_interop_and_installed_code_skipping():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'external = ["PTC"]' in readme and "RUF100" in readme
    assert "`site-packages` is not excluded" not in readme and "pyvenv.cfg" in readme
    integrations = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    assert 'external = ["PTC"]' in integrations
