"""Human output of the file tools (file content and names escaped)."""

from __future__ import annotations

from typing import Any

from ..core.human import Part, Table, ago, page_footer
from ..core.text import one_line, visible


def read(r: dict[str, Any]) -> str:
    tail = f"\n[lines {r['offset']}-{r['offset'] + r['lines'] - 1} of {r['total_lines']}" + \
        (f"; next: {r['next']}]" if r["next"] else "]")
    return visible(r["content"]) + tail


def listing(r: dict[str, Any]) -> list[Part] | str:
    if not r["entries"]:
        return "empty"
    rows = [[one_line(e["name"]), e["type"], e["size"], ago(e["mtime_epoch"])]
            for e in r["entries"]]
    return [Table(["name", "type", "size", "modified"], rows, wide=("name",)), page_footer(r)]


def stat(r: dict[str, Any]) -> str:
    if not r["exists"]:
        return f"{visible(r['path'], False)}: does not exist"
    kind = "directory" if r["is_dir"] else "file" if r["is_file"] else "other"
    return f"{visible(r['path'], False)}: {kind}, {r['size']}, modified {ago(r['mtime_epoch'])}"


def written(r: dict[str, Any]) -> str:
    return f"wrote {r['bytes']} to {visible(r['path'], False)} ({r['mode']})"
