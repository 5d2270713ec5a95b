"""`nexus approvals` and `nexus approve`: the pending permission requests a caller may answer,
and the answer (first responder wins). The person answers for any run; an agent only for the
runs it started, never for its own session. Stdlib only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import caller, discovery, events, sessions, settings
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope
from ..core.timefmt import human_duration
from . import gate, ledger

if TYPE_CHECKING:
    from .models import ApprovalsArgs, ApproveArgs

VISIBLE = ("SELECT a.*, r.dispatcher, r.project FROM approvals a"
           " LEFT JOIN approval_routes r ON r.run_id = a.run_id")


def _scope(me, all_workspaces: bool) -> tuple[str, list]:
    if me.is_agent:
        return "r.dispatcher = ?", [me.id]
    if all_workspaces:
        return "TRUE", []
    return "r.project = ?", [me.project]


def item(conn, row, now: float) -> dict:
    waited = max(0.0, now - row["requested_at"])
    return {"id": row["id"], "session_id": row["session_id"],
            "session": discovery.ref(conn, row["session_id"]), "run_id": row["run_id"],
            "tool_name": row["tool_name"], "summary": row["summary"], "reason": row["reason"],
            "requested_at_epoch": row["requested_at"], "deadline_epoch": row["deadline"],
            "waited_ms": int(waited * 1000), "waited": human_duration(waited)}


def pending(conn, me, now: float, all_workspaces: bool, limit: int, offset: int):
    where, params = _scope(me, all_workspaces)
    base = f"{VISIBLE} WHERE a.status = 'pending' AND {where}"
    total = conn.execute(f"SELECT count(*) FROM ({base}) AS visible", params).fetchone()[0]
    rows = conn.execute(f"{base} ORDER BY a.seq LIMIT ? OFFSET ?",
                        (*params, limit, offset)).fetchall()
    return [item(conn, r, now) for r in rows], total


def summary_line(total: int) -> str:
    if not total:
        return "nothing is waiting for an answer"
    return f"{total} permission request{'s' if total != 1 else ''} waiting for an answer"


def listing(ctx: Ctx, a: ApprovalsArgs) -> dict:
    timeout = settings.load(ctx.store.root)["approvalTimeout"]
    with ctx.write() as conn:
        me = ctx.me(conn)
        ledger.reap(conn, ctx.now)
        items, total = pending(conn, me, ctx.now, a.all_workspaces, a.limit, a.offset)
    hint = None
    if items:
        first = items[0]
        hint = (f"nexus approve {first['id']} --session {first['session_id']} allow-once|reject"
                f" (approve over MCP: approval_id, session, outcome)")
    return envelope(items, total, a.offset, a.limit, bridge="hook", pending=total,
                    timeout_ms=int(timeout) * 1000,  # type: ignore[call-overload]
                    timeout=human_duration(float(timeout)),  # type: ignore[arg-type]
                    summary=summary_line(total), hint=hint)


def respond(ctx: Ctx, a: ApproveArgs) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        ledger.reap(conn, ctx.now)
        row = conn.execute(f"{VISIBLE} WHERE a.id = ?", (a.approval_id,)).fetchone()
        if row is None:
            raise NexusError("approval_not_found", a.approval_id, "no permission request has "
                             "that id", "list the pending ones with `nexus approvals`")
        if a.session is None:  # the answer is confirmed against the session it is meant for
            ref = discovery.ref(conn, row["session_id"])
            raise NexusError("invalid_argument", "--session",
                             f"{a.approval_id} is a permission request of session "
                             f"{row['session_id']} ({ref['handle']}): say that you answer it",
                             f"`nexus approve {a.approval_id} {a.outcome} --session "
                             f"{row['session_id']}`")
        wanted = sessions.follow_successors(conn, a.session)
        if a.session != row["session_id"] and wanted != row["session_id"]:
            raise NexusError("approval_mismatch", a.approval_id,
                             f"the request belongs to session {row['session_id']}",
                             "pass --session from the same `nexus approvals` row")
        # a request already answered, timed out or withdrawn (its run ended, and its route
        # with it) changes for nobody: `not-pending`, whoever asks, with nothing to authorise
        settled = row["status"] != "pending"
        if not settled:
            if me.id == row["session_id"]:
                raise NexusError("not_approver", a.approval_id, "a session may not answer its "
                                 "own permission request",
                                 "the run's dispatcher or the person answers")
            caller.person_at_terminal(me, "answering a permission request", a.approval_id)
            if me.is_agent and row["dispatcher"] != me.id:
                raise NexusError("not_approver", a.approval_id,
                                 "an agent may answer only for the runs it started",
                                 "the person or the run's dispatcher answers")
        expired = not settled and ledger.expire(conn, a.approval_id, ctx.now)
        accepted = not settled and not expired and ledger.settle(
            conn, a.approval_id, ledger.OUTCOMES[a.outcome], me.id, ctx.now)
        if accepted:  # who let which call of which session run (or stopped it), for the log
            events.record(conn, ctx.now, me.id, "approval.answer", row["session_id"],
                          approval=a.approval_id, outcome=a.outcome, tool=row["tool_name"])
        where, params = _scope(me, True)
        remaining = conn.execute(f"SELECT count(*) FROM ({VISIBLE} WHERE a.status = 'pending'"
                                 f" AND {where}) AS visible", params).fetchone()[0]
        now_row = ledger.get(conn, a.approval_id)
        assert now_row is not None
    if accepted or expired:
        ctx.store.poke([gate.channel(a.approval_id)])
    if expired:
        raise NexusError("timeout", a.approval_id, "the request's deadline passed before the "
                         "answer: it is rejected as timed out, never allowed",
                         "the run's client was told no; answer sooner next time (approvalTimeout)")
    return {"ok": accepted, "receipt": "accepted" if accepted else "not-pending",
            "approval_id": a.approval_id, "session_id": row["session_id"],
            "outcome": a.outcome, "status": now_row["status"],
            "answered_by": now_row["responder"], "pending_remaining": remaining,
            "pending_summary": summary_line(remaining),
            "next": ("the waiting client has its answer" if accepted else
                     f"it was already {now_row['status']} by {now_row['responder']}: "
                     "`nexus approvals` lists what is still pending")}
