"""Owner of the `tasks` table: delegated obligations and self-managed tasks in one ledger.
Stdlib only (the hooks count open obligations; maintenance expires TTLs).

A task is its dispatcher's row; what its assignee does to it (closing it, its delivery found
uncertain, moving it to the conversation that took over) goes through CLOSE, UNCERTAIN and
MOVE, which on a team database run as nexus's own functions: an open task is closed once, and
the assignee changes nothing else of it."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Sequence

from ..core.errors import NexusError
from ..core.settings import SELF_TASK_PURGE, TASK_HISTORY
from ..core.store import policy
from ..core.store.db import present
from ..messages import mailbox

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from typing import Any

# tasks whose assignee still owes an outcome (delivery_uncertain: a wake for it failed)
OPEN = ("pending", "dispatched", "running", "delivery_uncertain")
FINAL = ("completed", "blocked", "failed", "cancelled")
_OPEN_SQL = "(" + ", ".join(f"'{s}'" for s in OPEN) + ")"
_FINAL_SQL = "(" + ", ".join(f"'{s}'" for s in FINAL) + ")"

# team mode (core/store/policy.py): a task is read by its two participants and changed or
# deleted through its dispatcher's own sessions; its assignee's part is the functions below
TEAM_TABLES = {"tasks": policy.Table(
    read=policy.participants("sender", "target"), insert=policy.own("sender"),
    update=policy.own("sender"), delete=policy.own("sender"))}
CLOSE = policy.Function(
    "task_close",
    "UPDATE tasks SET status = :status, result = coalesce(:result, result),"
    " error = coalesce(:error, error), report_message_id = coalesce(:report, report_message_id),"
    f" updated_at = :now, closed_at = CASE WHEN :status IN {_FINAL_SQL} THEN :now ELSE"
    f" closed_at END WHERE id = :id AND status IN {_OPEN_SQL} AND ({{guard}})",
    policy.participants("target", "sender"),
    {"status": "text", "result": "text", "error": "text", "report": "text",
     "now": "double precision", "id": "text"})
UNCERTAIN = policy.Function(
    "task_uncertain",
    "UPDATE tasks SET status = CASE status WHEN 'dispatched' THEN 'delivery_uncertain' ELSE"
    f" status END, error = :error WHERE message_id = :message AND status IN {_OPEN_SQL}"
    " AND ({guard})", policy.participants("target", "sender"),
    {"error": "text", "message": "text"})
MOVE = policy.Function(
    "task_move",
    f"UPDATE tasks SET target = :new, updated_at = :now WHERE target = :old AND status IN"
    f" {_OPEN_SQL} AND ({{guard}})", f"{policy.own(':old')} AND {policy.own(':new')}",
    {"new": "text", "now": "double precision", "old": "text"})
TEAM_FUNCTIONS = (CLOSE, UNCERTAIN, MOVE)
# what its dispatcher changes of a task (its id, number, sender and text stay)
_CHANGE = policy.Update("tasks", (
    "target", "status", "mode", "message_id", "result", "report_message_id", "error",
    "progress", "result_uri", "metadata", "expires_at", "updated_at", "closed_at"))


def new_id() -> str:
    return "t-" + os.urandom(6).hex()


def get(conn: sqlite3.Connection, task_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()


def known(conn: sqlite3.Connection, task_id: str) -> sqlite3.Row:
    """A task written or found in this transaction."""
    return present(get(conn, task_id), f"task {task_id}")


def _metadata(text: str | None) -> dict[str, Any] | None:
    """Stored metadata as an object; whatever is stored, a listing never fails on it."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {"unreadable": "the stored metadata is not valid JSON"}
    return value if isinstance(value, dict) else {"value": value}


def notification(conn: sqlite3.Connection, row: sqlite3.Row) -> str:
    """The report's way back: none yet, pending, delivered, or expired unread."""
    if not row["report_message_id"]:
        return "none"
    msg = mailbox.get(conn, row["report_message_id"])
    if msg is None or msg["delivered_at"] or msg["read_at"]:
        return "delivered"
    return "expired" if msg["expired_at"] else "pending"


def record(conn: sqlite3.Connection, row: sqlite3.Row, duplicate: bool = False) -> dict:
    """A task as the tools return it."""
    from ..core import discovery  # (the hooks' announcements show no task record)

    return {
        "id": row["id"], "sender": discovery.ref(conn, row["sender"]),
        "target": discovery.ref(conn, row["target"]),
        "requested_target": row["requested_target"], "task": row["task"], "status": row["status"],
        "mode": row["mode"], "message_id": row["message_id"], "request_id": row["request_id"],
        "result": row["result"], "notification": notification(conn, row), "error": row["error"],
        "progress": row["progress"], "result_uri": row["result_uri"],
        "metadata": _metadata(row["metadata"]),
        "expires_at_epoch": row["expires_at"],
        "created_at_epoch": row["created_at"], "updated_at_epoch": row["updated_at"],
        "closed_at_epoch": row["closed_at"], "duplicate": duplicate,
        "source_meeting_id": row["source_meeting_id"], "error_message": row["error"],
        "ttl": None if row["expires_at"] is None
        else round((row["expires_at"] - row["created_at"]) * 1000),
    }


def by_request(conn: sqlite3.Connection, sender: str, request_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM tasks WHERE sender = ? AND request_id = ?",
                        (sender, request_id)).fetchone()


def make_room(conn: sqlite3.Connection, sender: str) -> None:
    """Keep at most TASK_HISTORY records per dispatcher: the oldest final, notified one goes; when
    every record is unfinished the new task is refused rather than an obligation dropped."""
    count = conn.execute("SELECT count(*) FROM tasks WHERE sender = ?", (sender,)).fetchone()[0]
    if count < TASK_HISTORY:
        return
    marks = ",".join("?" * len(FINAL))
    for row in conn.execute(f"SELECT * FROM tasks WHERE sender = ? AND status IN ({marks})"
                            " ORDER BY seq", (sender, *FINAL)):
        if notification(conn, row) != "pending":
            retire(conn, row["id"], time.time(), "its task left the ledger (history full)")
            conn.execute(policy.write("DELETE FROM tasks WHERE id = ?"), (row["id"],))
            return
    raise NexusError("task_history_full", sender,
                     f"{count} task records and none is both finished and notified",
                     "close or cancel open tasks (`nexus tasks --sent --open`) before adding more")


def insert(conn: sqlite3.Connection, *, sender: str, target: str, requested: str, text: str,
           status: str, mode: str, now: float, request_id: str | None = None,
           metadata: dict | None = None, expires_at: float | None = None,
           source_meeting_id: str | None = None) -> str:
    task_id = new_id()
    conn.execute(
        policy.write(
            "INSERT INTO tasks (id, sender, target, requested_target, task, status, mode,"
            " request_id, metadata, expires_at, created_at, updated_at, source_meeting_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        (task_id, sender, target, requested, text, status, mode, request_id,
         json.dumps(metadata) if metadata else None, expires_at, now, now, source_meeting_id))
    return task_id


def change(conn: sqlite3.Connection, task_id: str, now: float, **fields: object) -> None:
    """Set fields (and `updated_at`). A final status also sets `closed_at`, and retires the task's
    message if it is still unread: a closed task is never announced as work to do again."""
    fields["updated_at"] = now
    if fields.get("status") in FINAL:
        fields["closed_at"] = now
        retire(conn, task_id, now, f"its task was {fields['status']}")
    if "metadata" in fields and fields["metadata"] is not None:
        fields["metadata"] = json.dumps(fields["metadata"])
    _CHANGE.run(conn, task_id, fields)


def close(conn: sqlite3.Connection, task_id: str, now: float, status: str,
          result: str | None = None, error: str | None = None, report: str | None = None) -> bool:
    """The assignee's (or maintenance's) close of an open task, once; its message is retired
    when the status is final. True when this closed it."""
    done = policy.call(conn, CLOSE, {"status": status, "result": result, "error": error,
                                     "report": report, "now": now, "id": task_id}) > 0
    if done and status in FINAL:
        retire(conn, task_id, now, f"its task was {status}")
    return done


def retire(conn: sqlite3.Connection, task_id: str, now: float, why: str) -> None:
    row = conn.execute("SELECT message_id FROM tasks WHERE id = ?", (task_id,)).fetchone()
    if row and row[0]:
        mailbox.expire(conn, row[0], now, why)


def count_open(conn: sqlite3.Connection, target: str) -> int:
    return conn.execute(f"SELECT count(*) FROM tasks WHERE target = ? AND status IN {_OPEN_SQL}",
                        (target,)).fetchone()[0]


def listing(conn: sqlite3.Connection, where: Sequence[str], params: Sequence[object], order: str,
            limit: int, offset: int) -> tuple[list[sqlite3.Row], int]:
    clause = " AND ".join(where) or "TRUE"
    total = conn.execute(f"SELECT count(*) FROM tasks WHERE {clause}", params).fetchone()[0]
    rows = conn.execute(f"SELECT * FROM tasks WHERE {clause} ORDER BY {order} LIMIT ? OFFSET ?",
                        (*params, limit, offset)).fetchall()
    return rows, total


def open_work(conn: sqlite3.Connection, owner: str, listed: int) -> tuple[int, list[str]]:
    """How many tasks `owner` was assigned and has not closed, and the ids of the oldest few."""
    where = f"target = ? AND status IN {_OPEN_SQL} AND mode <> 'self'"
    count = conn.execute(f"SELECT count(*) FROM tasks WHERE {where}", (owner,)).fetchone()[0]
    rows = conn.execute(f"SELECT id FROM tasks WHERE {where} ORDER BY seq LIMIT ?",
                        (owner, listed)).fetchall() if count else []
    return count, [r["id"] for r in rows]


def move_open(conn: sqlite3.Connection, old_id: str, new_id: str, now: float) -> int:
    """Handoff: the open obligations of a replaced conversation go to its successor."""
    return policy.call(conn, MOVE, {"new": new_id, "now": now, "old": old_id})


def wake_failed(conn: sqlite3.Connection, message_ids: Sequence[str], error: str) -> None:
    """A wake carrying these task messages failed: their dispatched tasks become uncertain."""
    for mid in message_ids:
        policy.call(conn, UNCERTAIN, {"error": error, "message": mid})


def expire_ttl(conn: sqlite3.Connection, now: float) -> list[sqlite3.Row]:
    """Open tasks past their TTL fail ("TTL expired"); finished self tasks go after 7 days.
    Returns the tasks that failed."""
    rows = conn.execute(f"SELECT * FROM tasks WHERE expires_at < ? AND status IN {_OPEN_SQL}",
                        (now,)).fetchall()
    for row in rows:
        close(conn, row["id"], now, "failed", error="TTL expired")
    conn.execute(policy.write("DELETE FROM tasks WHERE mode = 'self' AND closed_at < ?"),
                 (now - SELF_TASK_PURGE,))
    return rows
