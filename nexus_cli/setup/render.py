"""Human output of install, uninstall and doctor."""

from __future__ import annotations

from typing import Any


def install(r: dict[str, Any]) -> str:
    verb = "would be" if r["dry_run"] else "was"
    lines = []
    for f in r["files"]:
        action = f["action"] if f["action"] == "unchanged" else f"{verb} {f['action']}"
        lines.append(f"{f['path']}: {action}" + (f" (backup: {f['backup']})" if f["backup"] else ""))
        if r["dry_run"] and f["diff"]:
            lines.append(f["diff"].rstrip("\n"))
    lines += [f"note: {n}" for n in r["notes"]]
    return "\n".join(lines)


def doctor(r: dict[str, Any]) -> str:
    lines = []
    for c in r["checks"]:
        lines.append(f"{c['status'].upper():4}  {c['name']:<18} {c['detail']}")
        if c["fix"]:
            lines.append(f"{'':24}fix: {c['fix']}")
    lines.append(f"{'all good' if r['ok'] else str(r['failed']) + ' failed'}, "
                 f"{r['warnings']} warning(s)")
    return "\n".join(lines)
