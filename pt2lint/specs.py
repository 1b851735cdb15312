"""The rule catalog: one TOML spec per rule, in the top-level ``rules/`` folder.

The specs ship inside the wheel (as ``pt2lint/_rules``) and are the single
source of a rule's code, name, category, severity, predicted Dynamo
graph-break ids, explanation and examples.  ``pt2lint rule``, the reporters
(SARIF rule descriptions) and the test suite all read them from here.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older Pythons only
    import tomli as tomllib

CATEGORIES = (
    "internal",
    "data-dependent",
    "dynamic-shape",
    "side-effect",
    "input-mutation",
    "recompile",
    "export",
    "sync",
    "amp-distributed",
)
SEVERITIES = ("error", "warning", "info")
TARGETS = ("compile", "export", "cudagraphs")
#: Devices a spec's ``needs_device`` may name: the ``bad`` examples show what the rule
#: says only on that device (the evidence test skips them elsewhere).
DEVICES = ("cuda",)
EXAMPLE_CONFIG_KEYS = ("capture-scalar-outputs", "capture-dynamic-output-shape-ops", "allow-rnn", "target", "compute-dtype")

_REQUIRED = ("code", "name", "category", "severity", "summary", "why", "fix")
_OPTIONAL = ("targets", "target_severity", "gb_types", "knob", "references", "evidence", "examples", "needs_device")
_EXAMPLE_KEYS = ("kind", "code", "flag", "run", "config", "note")


class SpecError(ValueError):
    """A rule spec file is malformed (names the file and the key)."""


@dataclass(frozen=True)
class Example:
    """A code snippet from a spec.

    Attributes:
        kind: ``"bad"`` (must be flagged) or ``"good"`` (must not be).
        code: the snippet; line 1 is its first line.
        flag: 1-based lines of ``code`` that must carry a finding of the rule.
        run: Python expression giving ``(model, args)`` for the Dynamo evidence test.
        config: pt2lint config overrides for this example (kebab-case keys).
    """

    kind: str
    code: str
    flag: Tuple[int, ...] = ()
    run: Optional[str] = None
    config: Tuple[Tuple[str, object], ...] = ()
    note: str = ""


@dataclass(frozen=True)
class RuleSpec:
    """Metadata and documentation of one rule (see ``rules/*.toml``)."""

    code: str
    name: str
    category: str
    severity: str
    summary: str
    why: str
    fix: str
    targets: Tuple[str, ...] = TARGETS
    gb_types: Tuple[str, ...] = ()
    knob: Optional[str] = None
    references: Tuple[str, ...] = ()
    evidence: str = ""
    examples: Tuple[Example, ...] = ()
    path: str = ""
    target_severity: Tuple[Tuple[str, str], ...] = ()
    needs_device: Optional[str] = None

    def severity_for(self, target: str) -> str:
        """The severity findings get under ``target`` (``target_severity``, else ``severity``)."""
        for t, sev in self.target_severity:
            if t == target:
                return sev
        return self.severity

    @property
    def is_graph_break(self) -> bool:
        return self.category in ("data-dependent", "dynamic-shape", "side-effect")

    def explain(self) -> str:
        """The text ``pt2lint rule CODE`` prints (ruff's rule-doc layout)."""
        lines = [f"# {self.name} ({self.code})", "", f"Category: {self.category}   Severity: {self.severity}"]
        if self.gb_types:
            lines.append("Dynamo graph-break types: " + ", ".join(self.gb_types))
        if self.knob:
            lines.append(f"Made compilable by: torch._dynamo.config.{self.knob} = True")
        lines.append("Targets: " + ", ".join(self.targets))
        if self.target_severity:
            lines.append("Severity by target: " + ", ".join(f"{t}: {s}" for t, s in self.target_severity))
        if self.needs_device:
            lines.append(f"Measured on: {self.needs_device} (the evidence needs that device)")
        lines += ["", "## What it does", self.summary.strip(), "", "## Why is this bad?", self.why.strip()]
        bad = [e for e in self.examples if e.kind == "bad"]
        good = [e for e in self.examples if e.kind == "good"]
        if bad:
            lines += ["", "## Example", "```python", bad[0].code.rstrip(), "```"]
        if good:
            lines += ["", "## Not flagged", "```python", good[0].code.rstrip(), "```"]
        lines += ["", "## Use instead", self.fix.strip()]
        if self.evidence.strip():
            lines += ["", "## Measured on torch 2.13", self.evidence.strip()]
        if self.references:
            lines += ["", "## References"] + [f"- {r}" for r in self.references]
        return "\n".join(lines) + "\n"


def specs_dir() -> Path:
    """Directory holding the TOML specs: the wheel's package data, else the source tree's ``rules/``."""
    here = Path(__file__).resolve().parent
    packaged = here / "_rules"
    if packaged.is_dir():
        return packaged
    return here.parent / "rules"


def _parse_example(raw: Mapping, where: str) -> Example:
    for key in raw:
        if key not in _EXAMPLE_KEYS:
            raise SpecError(f"{where}: unknown example key {key!r}")
    kind = raw.get("kind")
    if kind not in ("bad", "good"):
        raise SpecError(f"{where}: example kind must be 'bad' or 'good', not {kind!r}")
    code = raw.get("code")
    if not isinstance(code, str) or not code.strip():
        raise SpecError(f"{where}: example needs a non-empty 'code' string")
    flag = tuple(int(n) for n in raw.get("flag", ()))
    if kind == "bad" and not flag:
        raise SpecError(f"{where}: a bad example needs 'flag' lines")
    from pt2lint.lines import split_lines

    n_lines = len(split_lines(code))
    for n in flag:
        if not 1 <= n <= n_lines:
            raise SpecError(f"{where}: flag line {n} is outside the {n_lines}-line example")
    config = raw.get("config", {})
    for key in config:
        if key not in EXAMPLE_CONFIG_KEYS:
            raise SpecError(f"{where}: unknown example config key {key!r}")
    return Example(
        kind=kind,
        code=code,
        flag=flag,
        run=raw.get("run"),
        config=tuple(sorted(config.items())),
        note=raw.get("note", ""),
    )


def parse_spec(data: Mapping, where: str) -> RuleSpec:
    """Validate one decoded spec.

    Raises:
        SpecError: a required key is missing, a key is unknown, or a value is out of range.
    """
    for key in data:
        if key not in _REQUIRED and key not in _OPTIONAL:
            raise SpecError(f"{where}: unknown key {key!r}")
    for key in _REQUIRED:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise SpecError(f"{where}: missing or empty {key!r}")
    if data["category"] not in CATEGORIES:
        raise SpecError(f"{where}: category {data['category']!r} is not one of {', '.join(CATEGORIES)}")
    if data["severity"] not in SEVERITIES:
        raise SpecError(f"{where}: severity {data['severity']!r} is not one of {', '.join(SEVERITIES)}")
    targets = tuple(data.get("targets", TARGETS))
    for t in targets:
        if t not in TARGETS:
            raise SpecError(f"{where}: target {t!r} is not one of {', '.join(TARGETS)}")
    examples = tuple(
        _parse_example(raw, f"{where} example {i + 1}") for i, raw in enumerate(data.get("examples", ()))
    )
    by_target = data.get("target_severity", {})
    if not isinstance(by_target, dict):
        raise SpecError(f"{where}: 'target_severity' must be a table of target = severity")
    for t, sev in by_target.items():
        if t not in targets:
            raise SpecError(f"{where}: target_severity names {t!r}, which is not one of the rule's targets")
        if sev not in SEVERITIES:
            raise SpecError(f"{where}: target_severity.{t} {sev!r} is not one of {', '.join(SEVERITIES)}")
    device = data.get("needs_device")
    if device is not None and device not in DEVICES:
        raise SpecError(f"{where}: needs_device {device!r} is not one of {', '.join(DEVICES)}")
    return RuleSpec(
        code=data["code"],
        name=data["name"],
        category=data["category"],
        severity=data["severity"],
        summary=data["summary"],
        why=data["why"],
        fix=data["fix"],
        targets=targets,
        gb_types=tuple(data.get("gb_types", ())),
        knob=data.get("knob"),
        references=tuple(data.get("references", ())),
        evidence=data.get("evidence", ""),
        examples=examples,
        path=where,
        target_severity=tuple(sorted(by_target.items())),
        needs_device=device,
    )


@functools.lru_cache(maxsize=None)
def _load(directory: str) -> Dict[str, RuleSpec]:
    specs: Dict[str, RuleSpec] = {}
    names: Dict[str, str] = {}
    for path in sorted(Path(directory).glob("*.toml")):
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SpecError(f"{path}: {exc}") from None
        spec = parse_spec(data, str(path))
        if spec.code in specs:
            raise SpecError(f"{path}: duplicate rule code {spec.code}")
        if spec.name in names:
            raise SpecError(f"{path}: duplicate rule name {spec.name} (also {names[spec.name]})")
        specs[spec.code] = spec
        names[spec.name] = spec.code
    return specs


def load_specs() -> Dict[str, RuleSpec]:
    """All rule specs, keyed by code, in code order.

    Raises:
        SpecError: a spec file is unreadable or malformed (a packaging bug, not a user error).
    """
    return dict(_load(str(specs_dir())))


def get_spec(code: str) -> RuleSpec:
    """The spec of ``code``; raises ``KeyError`` when there is no such rule."""
    return load_specs()[code]
