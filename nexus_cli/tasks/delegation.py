"""Work that cannot get lost: a delegated task is a durable record and a message committed in one
transaction; only the assigned session may report it, and the first final report wins. Stdlib
only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import discovery, sessions, shellcmd
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope, replayed
from ..messages import mailbox
from ..messages.mailbox import pick_mode
from . import ledger
from .ledger import FINAL, OPEN, get, known, record

if TYPE_CHECKING:
    from .models import DelegateArgs, ReportArgs, TaskListArgs, TasksArgs


def delegate(ctx: Ctx, a: DelegateArgs) -> dict:
    if getattr(a, "spawn", False) and not _replay(ctx, a):
        from ..runs import workers

        a.target = workers.start(ctx, a.target, a.task)  # a new run's session, then as usual
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        if a.request_id is not None:
            prior = ledger.by_request(conn, me.id, a.request_id)
            same = prior is not None and (prior["task"], prior["requested_target"]) == (
                a.task, a.target)
            if prior is not None and replayed(prior, same, a.request_id, "task"):
                return record(conn, prior, duplicate=True)
        to = discovery.resolve_target(conn, me, a.target, ctx.now, a.all_workspaces)
        ledger.make_room(conn, me.id)
        mode = pick_mode(a.mode, to, ctx.now)
        task_id = ledger.insert(conn, sender=me.id, target=to["id"], requested=a.target,
                                text=a.task, status="preparing", mode=mode, now=ctx.now,
                                request_id=a.request_id)
        sender = sessions.known(conn, me.id)
        text = (f"Task {task_id} from {sender['name']} ({sender['handle']}):\n{a.task}\n\n"
                f"When it is done, or cannot be done, report it: {shellcmd.name(conn)} report "
                f"{task_id} --status "
                "completed|blocked|failed --result \"<what you produced, where, what you "
                "verified, what is still open>\"")
        mid = mailbox.insert(conn, sender=me.id, recipient=to["id"], text=text, now=ctx.now,
                             kind="task", target=a.target, task_id=task_id,
                             defer=mode == "queue", wake=not a.no_wake)
        ledger.change(conn, task_id, ctx.now, status="dispatched", message_id=mid)
        if not a.no_wake:
            ctx.wake_later(to["id"])
        return record(conn, known(conn, task_id))


def _replay(ctx: Ctx, a: DelegateArgs) -> bool:
    """A repeated `delegate --spawn` with the same request id starts no second worker."""
    if a.request_id is None:
        return False
    with ctx.read() as conn:
        prior = ledger.by_request(conn, ctx.me(conn).id, a.request_id)
    if prior is not None:
        a.target = prior["target"]
        a.spawn = False
    return prior is not None


def report(ctx: Ctx, a: ReportArgs) -> dict:
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
        me_row = sessions.known(conn, me.id)
        mid = mailbox.insert(
            conn, sender=me.id, recipient=task["sender"], now=ctx.now, kind="report",
            reply_to=task["message_id"], task_id=task["id"],
            text=f"Report on task {task['id']} from {me_row['name']}: {a.status}\n{a.result}")
        ledger.close(conn, task["id"], ctx.now, a.status, result=a.result, report=mid)
        ctx.wake_later(task["sender"])
        return record(conn, known(conn, task["id"]))


def tasks(ctx: Ctx, a: TasksArgs | TaskListArgs, kind: str = "all") -> dict:
    """The caller's tasks, newest first; --open: obligations it owns and has not closed, oldest
    first. `kind` self: only the tasks it tracks for itself (`nexus tasks --self`)."""
    with ctx.read() as conn:
        me = ctx.me(conn)
        where: list[str] = []
        params: list[object] = []
        order = "seq DESC"
        if kind != "all" or getattr(a, "self", False):
            where.append("mode = 'self'")
        if getattr(a, "id", None):
            where.append("id = ?")
            params.append(a.id)  # type: ignore[union-attr]
        sent, received = getattr(a, "sent", False), getattr(a, "received", False)
        if getattr(a, "open", False):
            where.append(f"target = ? AND status IN ({','.join('?' * len(OPEN))})")
            params += [me.id, *OPEN]
            order = "seq"
        elif sent and not received:
            where.append("sender = ?")
            params.append(me.id)
        elif received and not sent:
            where.append("target = ?")
            params.append(me.id)
        else:
            where.append("(sender = ? OR target = ?)")
            params += [me.id, me.id]
        if a.status:
            where.append("status = ?")
            params.append(a.status)
        rows, total = ledger.listing(conn, where, params, order, a.limit, a.offset)
        items = [record(conn, r) for r in rows]
    return envelope(items, total, a.offset, a.limit)


def self_tasks(ctx: Ctx, a: TaskListArgs) -> dict:
    """Seed 004's list_tasks: `{count, tasks}` (in the list envelope)."""
    out = tasks(ctx, a, kind="self")
    out["tasks"] = out.pop("items")
    return out
