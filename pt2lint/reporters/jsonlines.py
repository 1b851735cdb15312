"""The ``json-lines`` output format: one JSON object per finding per line (the ``json`` format's fields).

Streams well into ``jq -c``, log shippers and line-oriented tools; an empty run prints nothing.
"""

from __future__ import annotations

import json
from typing import Sequence

from pt2lint.diagnostics import Diagnostic
from pt2lint.reporters import ReportContext, register
from pt2lint.reporters.json import diagnostic_to_dict, fingerprints


@register("json-lines", human=False, description="one JSON object per finding per line (the json format's fields)")
def render_json_lines(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """Each finding as compact JSON on its own line."""
    ids = fingerprints(diagnostics, context)
    return "".join(json.dumps(diagnostic_to_dict(d, context, f), ensure_ascii=False) + "\n" for d, f in zip(diagnostics, ids))
