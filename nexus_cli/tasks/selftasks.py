"""Tasks a session tracks for itself (or its group) in the same ledger: create, show, update,
cancel; an optional TTL after which an unfinished task fails. Stdlib only."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..core import events
from ..core.context import Ctx
from ..core.errors import NexusError
from ..messages import mailbox
from ..workspace import streams
from . import ledger
from .ledger import FINAL, get, known, record

if TYPE_CHECKING:
    from .models import TaskCreateArgs, TaskIdArgs, TaskUpdateArgs


def _mine(conn: sqlite3.Connection, me: str, task_id: str) -> sqlite3.Row:
    task = get(conn, task_id)
    if task is None or me not in (task["sender"], task["target"]):
        raise NexusError("task_not_found", task_id, "no task with that id involves you",
                         "list yours with `nexus tasks` or `nexus tasks --self`")
    return task


def create(ctx: Ctx, a: TaskCreateArgs) -> dict:
    """Seed 004's create_task: `{task_id, status, message, task}`; a TTL in milliseconds."""
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        if a.source_meeting_id is not None:
            streams.need(conn, a.source_meeting_id)
        ledger.make_room(conn, me.id)
        task_id = ledger.insert(conn, sender=me.id, target=me.id, requested=me.id, text=a.text,
                                status="pending", mode="self", now=ctx.now, metadata=a.metadata,
                                expires_at=ctx.now + a.ttl / 1000 if a.ttl else None,
                                source_meeting_id=a.source_meeting_id)
        linked = {"source_meeting_id": a.source_meeting_id} if a.source_meeting_id else {}
        events.record(conn, ctx.now, me.id, "task.create", task_id, **linked)
        task = record(conn, known(conn, task_id))
        return {"task_id": task_id, "status": task["status"],
                "message": "Task created successfully.", "task": task}


def show(ctx: Ctx, a: TaskIdArgs) -> dict:
    with ctx.read() as conn:
        return record(conn, _mine(conn, ctx.me(conn).id, a.taskId))


def update(ctx: Ctx, a: TaskUpdateArgs) -> dict:
    """Change only the fields given. A self task is its creator's to change; on a delegated task
    the assignee may post progress and `running` (final outcomes go through `report`)."""
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        task = _mine(conn, me.id, a.taskId)
        if task["mode"] != "self":
            if me.id != task["target"] or a.status not in (None, "running") or \
                    a.metadata is not None:
                raise NexusError("not_assignee", a.taskId,
                                 "a delegated task takes only progress and `running` from its "
                                 "assignee", "close it with `nexus report`")
        elif me.id != task["sender"]:
            raise NexusError("not_assignee", a.taskId, "only its creator changes a self task",
                             "ask its creator")
        if task["status"] in FINAL:
            raise NexusError("task_already_reported", a.taskId, f"it is {task['status']} already",
                             "create a new task")
        fields = {k: getattr(a, k) for k in ("status", "progress", "result_uri", "metadata")
                  if getattr(a, k) is not None}
        if a.error_message is not None:
            fields["error"] = a.error_message
        ledger.change(conn, task["id"], ctx.now, **fields)
        events.record(conn, ctx.now, me.id, "task.update", task["id"], fields=sorted(fields))
        if task["mode"] != "self":
            ctx.wake_later(task["sender"])
        return record(conn, known(conn, task["id"]))


def cancel(ctx: Ctx, a: TaskIdArgs) -> dict:
    """Cancel an open task you created or dispatched; the assignee of a delegated one is told."""
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        task = _mine(conn, me.id, a.taskId)
        if me.id != task["sender"]:
            raise NexusError("not_assignee", a.taskId, "only whoever created or dispatched a "
                             "task may cancel it", "report it as blocked or failed instead")
        if task["status"] in FINAL:
            raise NexusError("task_already_reported", a.taskId, f"it is {task['status']} already",
                             "nothing to cancel")
        ledger.change(conn, task["id"], ctx.now, status="cancelled")
        events.record(conn, ctx.now, me.id, "task.cancel", task["id"])
        if task["target"] != me.id:
            mailbox.notice(conn, task["target"], f"task {task['id']} was cancelled by its "
                           "dispatcher: stop working on it", ctx.now, reply_to=task["message_id"],
                           by=me.id)
            ctx.wake_later(task["target"])
        return record(conn, known(conn, task["id"]))
