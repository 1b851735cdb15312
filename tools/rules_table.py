"""Regenerate the rule table in README.md from the specs in rules/.

    python tools/rules_table.py          # rewrite README.md in place
    python tools/rules_table.py --check  # exit 1 when README.md is out of date

The table sits between ``<!-- rules-table -->`` and ``<!-- /rules-table -->``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pt2lint.specs import load_specs  # noqa: E402

START, END = "<!-- rules-table -->", "<!-- /rules-table -->"


def render() -> str:
    """The markdown table: code, name, category, severity, targets, Dynamo GB ids, summary."""
    rows = [
        "| code | name | category | severity | targets | Dynamo GB | summary |",
        "|---|---|---|---|---|---|---|",
    ]
    for code, spec in load_specs().items():
        summary = " ".join(spec.summary.split()).replace("|", "\\|")
        rows.append(
            f"| {code} | `{spec.name}` | {spec.category} | {spec.severity} | {', '.join(spec.targets)} | "
            f"{', '.join(spec.gb_types) or '-'} | {summary} |"
        )
    return "\n".join(rows)


def updated(readme: str) -> str:
    table = f"{START}\n{render()}\n{END}"
    if END in readme:
        head, rest = readme.split(START, 1)
        _, tail = rest.split(END, 1)
        return head + table + tail
    return readme.replace(START, table, 1)


def main(argv) -> int:
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    new = updated(text)
    if "--check" in argv:
        if new != text:
            print("README.md rule table is out of date: run python tools/rules_table.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
