"""MkDocs hooks for the documentation site (``hooks:`` in ``mkdocs.yml``).

- Fails the build (an error, in any mode) when ``docs/rules/`` does not match the
  specs in ``rules/*.toml`` (``python tools/gen_docs.py`` regenerates it).
- Lists the graph-break coverage page and every rule page under "Rules" in the navigation, in code order, so a new
  rule needs no edit of ``mkdocs.yml``.
- Generates ``reference/cli.md``, the command-line reference, from the click
  commands themselves (every command, argument and option with its help text), at
  build time; it is not committed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import click  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402

CLI_PAGE = "reference/cli.md"


def _gen_docs():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_pt2lint_gen_docs", ROOT / "tools" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def render_cli_reference() -> str:
    """The command-line reference as Markdown, read from ``pt2lint.cli.cli`` (click's own help records)."""
    from pt2lint.cli import cli

    root = click.Context(cli, info_name="pt2lint")
    lines = [
        "# Command-line reference",
        "",
        "Generated from the command definitions when the site is built; `pt2lint COMMAND --help` prints the same.",
        "",
    ]
    for name in sorted(cli.commands):
        cmd = cli.commands[name]
        ctx = click.Context(cmd, info_name=name, parent=root)
        lines += [f"## `pt2lint {name}`", "", "```", cmd.get_usage(ctx).strip(), "```", ""]
        if cmd.help:
            lines += [" ".join(cmd.help.split()), ""]
        rows = []
        for param in cmd.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            opts, help_text = record
            rows.append(f"| `{opts}` | {' '.join(help_text.split()).replace('|', '&#124;')} |")
        if rows:
            lines += ["| option | meaning |", "|---|---|"] + rows + [""]
    return "\n".join(lines)


def on_config(config: Dict[str, Any], **kwargs: Any) -> Dict[str, Any]:
    """Check that the rule pages are current, and expand the ``Rules`` nav entry into every rule page."""
    gen = _gen_docs()
    from pt2lint.specs import load_specs

    specs = load_specs()
    out_of_date = gen.stale(gen.render_all(specs), ROOT / gen.RULES_DIR)
    if out_of_date:
        raise PluginError(f"docs/rules/ is out of date ({', '.join(out_of_date)}): run python tools/gen_docs.py")
    nav: List[Any] = config.get("nav") or []
    for i, entry in enumerate(nav):
        if isinstance(entry, dict) and entry.get("Rules") == "rules/index.md":
            pages: List[Any] = [{"All rules": "rules/index.md"}, {"Graph-break coverage": "rules/coverage.md"}]
            pages += [{f"{code} {spec.name}": f"rules/{gen.page_name(code)}"} for code, spec in specs.items()]
            nav[i] = {"Rules": pages}
    return config


def on_files(files, config, **kwargs: Any):
    """Add the generated command-line reference to the site."""
    files.append(File.generated(config, CLI_PAGE, content=render_cli_reference()))
    return files
