"""Human output of install, uninstall and doctor."""

from __future__ import annotations

from typing import Any

from ..core.human import Part, Table


def install(r: dict[str, Any]) -> str:
    verb = "would be" if r["dry_run"] else "was"
    lines = []
    for f in r["files"]:
        action = f["action"] if f["action"] == "unchanged" else f"{verb} {f['action']}"
        lines.append(f"{f['path']}: {action}"
                     + (f" (backup: {f['backup']})" if f["backup"] else ""))
        if r["dry_run"] and f["diff"]:
            lines.append(f["diff"].rstrip("\n"))
    lines += [f"note: {n}" for n in r["notes"]]
    return "\n".join(lines)


def doctor(r: dict[str, Any]) -> list[Part]:
    rows = []
    for c in r["checks"]:
        rows.append([c["status"].upper(), c["name"], c["detail"]])
        if c["fix"]:
            rows.append(["", "", f"fix: {c['fix']}"])
    return [Table(["", "check", "detail"], rows, wrap=("detail",), styled=("",)),
            summary(r["failed"], r["warnings"])]


def summary(failed: int, warnings: int) -> str:
    """`all good` only when it is: no failure and no warning (each warning has its fix above)."""
    said = [f"{failed} failed"] if failed else []
    said += [f"{warnings} warning{'s' if warnings > 1 else ''}"] if warnings else []
    return ", ".join(said) if said else "all good"
