"""Work that cannot get lost: a delegated task is a durable record and a message committed in one
transaction; only the assigned session may report it, and the first final report wins."""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from . import mailbox, sessions
from .context import Ctx
from .errors import NexusError

OPEN = sessions.OPEN_TASKS
FINAL = ("completed", "blocked", "failed", "cancelled")
HISTORY_CAP = 500  # task records per dispatcher


def new_id() -> str:
    return "t-" + os.urandom(6).hex()


def record(conn: sqlite3.Connection, row: sqlite3.Row, duplicate: bool = False) -> dict:
    """A task as the tools return it; `notification` is derived from the report's receipt."""
    refs = {sid: mailbox.peer_ref(sessions.get(conn, sid), sid) for sid in (row["sender"], row["target"])}
    notification = "none"
    if row["report_message_id"]:
        msg = conn.execute("SELECT delivered_at, read_at FROM messages WHERE id = ?",
                           (row["report_message_id"],)).fetchone()
        notification = "delivered" if msg and (msg["delivered_at"] or msg["read_at"]) else "pending"
    return {
        "id": row["id"], "sender": refs[row["sender"]], "target": refs[row["target"]],
        "requested_target": row["requested_target"], "task": row["task"], "status": row["status"],
        "mode": row["mode"], "message_id": row["message_id"], "request_id": row["request_id"],
        "result": row["result"], "notification": notification, "error": row["error"],
        "progress": row["progress"], "result_uri": row["result_uri"],
        "metadata": json.loads(row["metadata"]) if row["metadata"] else None,
        "expires_at_epoch": row["expires_at"],
        "created_at_epoch": row["created_at"], "updated_at_epoch": row["updated_at"],
        "closed_at_epoch": row["closed_at"], "duplicate": duplicate,
    }


def get(conn: sqlite3.Connection, task_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()


def make_room(conn: sqlite3.Connection, sender: str) -> None:
    """Keep at most HISTORY_CAP records per dispatcher: the oldest final, notified one goes; when
    every record is unfinished the new task is refused rather than an obligation dropped."""
    count = conn.execute("SELECT count(*) FROM tasks WHERE sender = ?", (sender,)).fetchone()[0]
    if count < HISTORY_CAP:
        return
    marks = ",".join("?" * len(FINAL))
    for row in conn.execute(f"SELECT * FROM tasks WHERE sender = ? AND status IN ({marks})"
                            " ORDER BY seq", (sender, *FINAL)):
        if record(conn, row)["notification"] != "pending":
            conn.execute("DELETE FROM tasks WHERE id = ?", (row["id"],))
            return
    raise NexusError("task_history_full", sender,
                     f"{count} task records and none is both finished and notified",
                     "close or cancel open tasks (`nexus tasks --sent --open`) before adding more")


def pick_mode(mode: str, target: sqlite3.Row, now: float) -> str:
    """auto: a working session is reached at its next tool call (steer), anyone else at its
    next turn (queue)."""
    if mode != "auto":
        return mode
    return "steer" if sessions.effective_status(target, now) == "working" else "queue"


def delegate(ctx: Ctx, a: Any) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        if a.request_id is not None:
            prior = conn.execute("SELECT * FROM tasks WHERE sender = ? AND request_id = ?",
                                 (me.id, a.request_id)).fetchone()
            if prior is not None:
                if (prior["task"], prior["requested_target"]) == (a.task, a.target):
                    return record(conn, prior, duplicate=True)
                raise NexusError("request_id_conflict", a.request_id,
                                 f"it was already used for task {prior['id']} with other content",
                                 "use a new request id for a new task")
        to = sessions.resolve_target(conn, me, a.target, ctx.now, a.all_workspaces)
        make_room(conn, me.id)
        task_id, mode = new_id(), pick_mode(a.mode, to, ctx.now)
        conn.execute(
            "INSERT INTO tasks (id, sender, target, requested_target, task, status, mode,"
            " request_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'preparing', ?, ?, ?, ?)",
            (task_id, me.id, to["id"], a.target, a.task, mode, a.request_id, ctx.now, ctx.now))
        sender = sessions.get(conn, me.id)
        text = (f"Task {task_id} from {sender['name']} ({sender['handle']}):\n{a.task}\n\n"
                f"When it is done, or cannot be done, report it: nexus report {task_id} --status "
                "completed|blocked|failed --result \"<what you produced, where, what you "
                "verified, what is still open>\"")
        mid = mailbox.insert(conn, sender=me.id, recipient=to["id"], text=text, now=ctx.now,
                             kind="task", target=a.target)
        conn.execute("UPDATE messages SET defer = ?, task_id = ? WHERE id = ?",
                     (int(mode == "queue"), task_id, mid))
        conn.execute("UPDATE tasks SET status = 'dispatched', message_id = ? WHERE id = ?",
                     (mid, task_id))
        ctx.wake_later(to["id"])
        return record(conn, get(conn, task_id))


def report(ctx: Ctx, a: Any) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        task = get(conn, a.task_id)
        if task is None or me.id not in (sessions.follow_successors(conn, task["target"]),
                                         task["target"], task["sender"]):
            raise NexusError("task_not_found", a.task_id, "no task with that id involves you",
                             "check the id in `nexus tasks --open`")
        if me.id == task["sender"] and me.id != task["target"]:
            raise NexusError("not_assignee", a.task_id,
                             "only the assigned session may report a task; you dispatched it",
                             "wait for its report, or delegate a follow-up task")
        if task["status"] in FINAL:
            if (task["status"], task["result"]) == (a.status, a.result):
                ctx.wake_later(task["sender"])  # the report is durable: a replay only re-pokes
                return record(conn, task, duplicate=True)
            raise NexusError("task_already_reported", a.task_id,
                             f"it was already closed as {task['status']}",
                             "delegate a follow-up task instead of a second report")
        me_row = sessions.get(conn, me.id)
        mid = mailbox.insert(
            conn, sender=me.id, recipient=task["sender"], now=ctx.now, kind="report",
            reply_to=task["message_id"],
            text=f"Report on task {task['id']} from {me_row['name']}: {a.status}\n{a.result}")
        conn.execute("UPDATE messages SET task_id = ? WHERE id = ?", (task["id"], mid))
        conn.execute("UPDATE tasks SET status = ?, result = ?, report_message_id = ?,"
                     " updated_at = ?, closed_at = ? WHERE id = ?",
                     (a.status, a.result, mid, ctx.now, ctx.now, task["id"]))
        ctx.wake_later(task["sender"])
        return record(conn, get(conn, task["id"]))


def ledger(ctx: Ctx, a: Any, kind: str = "all") -> dict:
    """The caller's tasks, newest first; --open: obligations it owns and has not closed, oldest
    first. `kind` self: only the tasks it tracks for itself (`nexus task list`)."""
    with ctx.read() as conn:
        me = ctx.me(conn)
        where, params, order = [], [], "seq DESC"
        if kind != "all":
            where.append("mode = 'self'" if kind == "self" else "mode != 'self'")
        if getattr(a, "id", None):
            where.append("id = ?")
            params.append(a.id)
        if getattr(a, "open", False):
            where.append(f"target = ? AND status IN ({','.join('?' * len(OPEN))})")
            params += [me.id, *OPEN]
            order = "seq"
        elif getattr(a, "sent", False) and not getattr(a, "received", False):
            where.append("sender = ?")
            params.append(me.id)
        elif getattr(a, "received", False) and not getattr(a, "sent", False):
            where.append("target = ?")
            params.append(me.id)
        else:
            where.append("(sender = ? OR target = ?)")
            params += [me.id, me.id]
        if a.status:
            where.append("status = ?")
            params.append(a.status)
        clause = " AND ".join(where)
        total = conn.execute(f"SELECT count(*) FROM tasks WHERE {clause}", params).fetchone()[0]
        rows = conn.execute(f"SELECT * FROM tasks WHERE {clause} ORDER BY {order} LIMIT ? OFFSET ?",
                            (*params, a.limit, a.offset)).fetchall()
        items = [record(conn, r) for r in rows]
    truncated = a.offset + len(items) < total
    return {"total": total, "count": len(items), "offset": a.offset, "limit": a.limit,
            "truncated": truncated, "next": f"offset={a.offset + len(items)}" if truncated else None,
            "items": items}



# -- self-managed tasks (work a session tracks for itself or its group) ----------------------------

MAX_TTL = 30 * 24 * 3600


def _mine(conn: sqlite3.Connection, me: str, task_id: str) -> sqlite3.Row:
    task = get(conn, task_id)
    if task is None or me not in (task["sender"], task["target"]):
        raise NexusError("task_not_found", task_id, "no task with that id involves you",
                         "list yours with `nexus tasks` or `nexus task list`")
    return task


def create(ctx: Ctx, a: Any) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        make_room(conn, me.id)
        task_id = new_id()
        conn.execute(
            "INSERT INTO tasks (id, sender, target, requested_target, task, status, mode, metadata,"
            " expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 'self', ?, ?, ?, ?)",
            (task_id, me.id, me.id, me.id, a.text, json.dumps(a.metadata) if a.metadata else None,
             ctx.now + a.ttl if a.ttl else None, ctx.now, ctx.now))
        return record(conn, get(conn, task_id))


def show(ctx: Ctx, a: Any) -> dict:
    with ctx.read() as conn:
        return record(conn, _mine(conn, ctx.me(conn).id, a.task_id))


def update(ctx: Ctx, a: Any) -> dict:
    """Change only the fields given. A self task is its creator's to change; on a delegated task
    the assignee may post progress and `running` (final outcomes go through `report`)."""
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        task = _mine(conn, me.id, a.task_id)
        if task["mode"] != "self":
            if me.id != task["target"] or a.status not in (None, "running") or a.metadata is not None:
                raise NexusError("not_assignee", a.task_id,
                                 "a delegated task takes only progress and `running` from its "
                                 "assignee", "close it with `nexus report`")
        elif me.id != task["sender"]:
            raise NexusError("not_assignee", a.task_id, "only its creator changes a self task",
                             "ask its creator")
        if task["status"] in FINAL:
            raise NexusError("task_already_reported", a.task_id, f"it is {task['status']} already",
                             "create a new task")
        sets: dict[str, object] = {"updated_at": ctx.now}
        for field in ("status", "progress", "result_uri"):
            if getattr(a, field) is not None:
                sets[field] = getattr(a, field)
        if a.error_message is not None:
            sets["error"] = a.error_message
        if a.metadata is not None:
            sets["metadata"] = json.dumps(a.metadata)
        if sets.get("status") in FINAL:
            sets["closed_at"] = ctx.now
        conn.execute(f"UPDATE tasks SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                     (*sets.values(), task["id"]))
        if task["mode"] != "self":
            ctx.wake_later(task["sender"])
        return record(conn, get(conn, task["id"]))


def cancel(ctx: Ctx, a: Any) -> dict:
    """Cancel an open task you created or dispatched; the assignee of a delegated one is told."""
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        task = _mine(conn, me.id, a.task_id)
        if me.id != task["sender"]:
            raise NexusError("not_assignee", a.task_id, "only whoever created or dispatched a "
                             "task may cancel it", "report it as blocked or failed instead")
        if task["status"] in FINAL:
            raise NexusError("task_already_reported", a.task_id, f"it is {task['status']} already",
                             "nothing to cancel")
        conn.execute("UPDATE tasks SET status = 'cancelled', updated_at = ?, closed_at = ?"
                     " WHERE id = ?", (ctx.now, ctx.now, task["id"]))
        if task["target"] != me.id:
            mailbox.notice(conn, task["target"], f"task {task['id']} was cancelled by its "
                           "dispatcher: stop working on it", ctx.now, reply_to=task["message_id"])
            ctx.wake_later(task["target"])
        return record(conn, get(conn, task["id"]))
