"""Human output of the activity log."""

from __future__ import annotations

import json
from typing import Any

from ..core.human import Part, Table, ago, page_footer


def events(r: dict[str, Any]) -> list[Part] | str:
    if not r["events"]:
        return "no events"
    rows = [[ago(e["timestamp_epoch"]), e["action"], e["actor"], e["target"] or "",
             json.dumps(e["detail"], ensure_ascii=False) if e["detail"] else ""]
            for e in r["events"]]
    return [Table(["when", "action", "actor", "target", "detail"], rows, wide=("detail",)),
            page_footer(r)]
