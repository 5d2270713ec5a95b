"""The global strategy (one document, every version kept up to STRATEGY_KEPT, with a diff) and
the global shared docs. Owner of `ws_strategy` and `ws_docs`. Stdlib only."""

from __future__ import annotations

import difflib
import sqlite3
from typing import TYPE_CHECKING, Any

from ..core.context import Ctx
from ..core.errors import NexusError, invalid
from ..core.settings import STRATEGY_KEPT
from ..core.store import policy
from .base import reading, record, writing

if TYPE_CHECKING:
    from .models import DocIdArgs, GetStrategyArgs, NoArgs, StrategyArgs, SyncDocArgs

# team mode (core/store/policy.py): the team's documents and strategy, written in the name of
# one of the caller's own sessions
TEAM_TABLES = {
    "ws_docs": policy.Table(read=policy.TEAM, insert=policy.own("updated_by"),
                            update=policy.own("updated_by"), delete=policy.TEAM),
    "ws_strategy": policy.Table(read=policy.TEAM, insert=policy.own("updated_by"),
                                update=policy.FUNCTIONS, delete=policy.TEAM),
}


def latest(conn: sqlite3.Connection) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM ws_strategy ORDER BY version DESC LIMIT 1").fetchone()


def set_strategy(ctx: Ctx, a: StrategyArgs) -> dict:
    with writing(ctx) as (conn, me):
        current = latest(conn)
        if current is not None and current["content"] == a.content:
            return {"ok": True, "version": current["version"], "unchanged": True}
        version = conn.execute(policy.write(
            "INSERT INTO ws_strategy (content, updated_by, updated_at)"
            " VALUES (?, ?, ?) RETURNING version"),
                               (a.content, me.id, ctx.now)).fetchone()[0]
        conn.execute(policy.write(
            "DELETE FROM ws_strategy WHERE version <= ?"), (version - STRATEGY_KEPT,))
        record(conn, ctx, me, "strategy.update", "strategy", version=version,
               size=len(a.content))
    return {"ok": True, "version": version, "unchanged": False}


def get_strategy(ctx: Ctx, a: GetStrategyArgs) -> dict:
    with reading(ctx) as (conn, _):
        rows = conn.execute("SELECT * FROM ws_strategy ORDER BY version DESC LIMIT ?",
                            (max(a.history, 2),)).fetchall()
    if not rows:
        out: dict[str, Any] = {"content": ""}
        if a.history:
            out.update(history=[], diff=None)
        return out
    top = rows[0]
    out = {"content": top["content"], "version": top["version"], "updatedBy": top["updated_by"],
           "lastUpdated_epoch": top["updated_at"]}
    if a.history:
        out["history"] = [{"version": r["version"], "updatedBy": r["updated_by"],
                           "size": len(r["content"]), "lastUpdated_epoch": r["updated_at"]}
                          for r in rows[: a.history]]
        out["diff"] = None if len(rows) < 2 else "\n".join(difflib.unified_diff(
            rows[1]["content"].splitlines(), top["content"].splitlines(),
            f"strategy v{rows[1]['version']}", f"strategy v{top['version']}", lineterm=""))
    return out


def _info(r: sqlite3.Row) -> dict[str, Any]:
    return {"docId": r["id"], "title": r["title"], "updatedBy": r["updated_by"],
            "lastUpdated_epoch": r["updated_at"]}


def list_docs(ctx: Ctx, a: NoArgs) -> dict:
    with reading(ctx) as (conn, _):
        rows = conn.execute("SELECT id, title, updated_by, updated_at FROM ws_docs"
                            " ORDER BY updated_at DESC, id").fetchall()
    return {"count": len(rows), "docs": [_info(r) for r in rows]}


def get_doc(ctx: Ctx, a: DocIdArgs) -> dict:
    with reading(ctx) as (conn, _):
        row = conn.execute("SELECT * FROM ws_docs WHERE id = ?", (a.docId,)).fetchone()
    if row is None:
        raise NexusError("doc_not_found", a.docId, f"Document '{a.docId}' not found",
                         "list them with `nexus doc list` (list_global_docs)")
    return {**_info(row), "content": row["content"]}


def sync_doc(ctx: Ctx, a: SyncDocArgs) -> dict:
    if ".." in a.docId:
        raise invalid("docId", "Document ID cannot contain '..'", "use letters, digits, . _ -")
    with writing(ctx) as (conn, me):
        old = conn.execute("SELECT 1 FROM ws_docs WHERE id = ?", (a.docId,)).fetchone()
        if old is None:
            conn.execute(policy.write(
                "INSERT INTO ws_docs (id, title, content, updated_by, updated_at)"
                " VALUES (?, ?, ?, ?, ?)"), (a.docId, a.title, a.content, me.id, ctx.now))
        else:
            conn.execute(policy.write("UPDATE ws_docs SET title = ?, content = ?, updated_by = ?,"
                         " updated_at = ? WHERE id = ?"),
                         (a.title, a.content, me.id, ctx.now, a.docId))
        record(conn, ctx, me, "doc.sync", a.docId, title=a.title, created=old is None)
    return {"ok": True, "docId": a.docId, "created": old is None}
