"""Human output of the team tools."""

from __future__ import annotations

from typing import Any

from ..core.human import fields
from ..core.text import visible

_TLS = {"full": "yes, the server verified (certificate and name)",
        "ca": "yes, the server's certificate verified, not its name",
        "none": "yes, but the server not verified"}


def _server(s: dict[str, Any]) -> list:
    return [("server", f"PostgreSQL {visible(s['server_version'])}"),
            ("schema", f"{s['schema_version']} (this nexus: {s['schema_current']})"),
            ("role", visible(s["role"])), ("schema name", visible(s["schema_name"])),
            ("latency", f"{s['latency_ms']:.2f} ms (connect {s['connect_ms']:.1f} ms)"),
            ("tls", _TLS.get(s.get("tls_verification") or "", "yes") if s["tls"] else "no"),
            ("row security", "on" if s["row_security"] else "off")]


def join(r: dict[str, Any]) -> str:
    return fields([("joined", visible(r["url"])), ("kept in", r["file"]),
                   ("you are", visible(r["person"])), *_server(r["server"])])


def status(r: dict[str, Any]) -> str:
    if not r["joined"]:
        return "not in a team: the local store is used (`nexus team join URL` to join one)"
    rows = [("team", visible(r["url"] or "")), ("from", r["source"] or ""),
            ("you are", visible(r["person"]))]
    if r["server"]:
        rows += _server(r["server"])
    if r["error"]:
        rows.append(("error", visible(r["error"])))
    return fields(rows)


def leave(r: dict[str, Any]) -> str:
    text = f"left {visible(r['url'], False)}" if r["left"] else "no team URL was stored"
    if r["still_set"]:
        text += "; NEXUS_DATABASE_URL still selects a team database (unset it for the local store)"
    return text


def init(r: dict[str, Any]) -> str:
    if r["applied"]:
        return (f"applied: schema {r['schema_version']}, roles, row-level security and nexus's "
                f"functions in place; the administrator role is {visible(r['administrator'])} "
                "(team-wide settings are its alone)")
    return r["sql"]


def migrate(r: dict[str, Any]) -> str:
    where = "into the team database" if r["to"] == "team" else "into the local store"
    return fields([(t["table"], f"{t['copied']} copied, {t['skipped']} already there"
                    + (f", {t['refused']} refused by row-level security" if t["refused"] else ""))
                   for t in r["tables"]]) + \
        f"\n({where}; run it again to finish an interrupted copy)"
