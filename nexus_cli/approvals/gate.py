"""The PermissionRequest hook's side: a client started by `nexus run --approvals nexus` asks
nexus instead of a person at its terminal. The request is registered (tool, a summary of its
arguments, session), committed, and the hook waits on its wake channel for `nexus approve`; no
answer by the deadline settles it rejected, never allowed. Every other session's request passes
straight through (its hook records only that the session waits for a person): the run's route
must name this very client process. Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import time

from ..core import settings
from ..core.proctable import table
from ..core.sessions import here
from ..core.store.db import Store
from ..messages import mailbox
from . import ledger

ENV = "NEXUS_RUN"


def channel(aid: str) -> str:
    return "approval:" + aid


def started_by(client_pid: int, pid: int, levels: int = 4) -> bool:
    """Whether `pid` is `client_pid` or runs below it (Codex's npm launcher starts the native
    binary that runs the hooks)."""
    for _ in range(levels):
        if pid == client_pid:
            return True
        proc = table().get(pid)
        if proc is None:
            return False
        pid = proc.ppid
    return False


def request(conn: sqlite3.Connection, sid: str, data: dict, client_pid: int, now: float,
            root: str, env: dict | os._Environ) -> tuple[str, float, str] | None:
    """Inside the hook's write: register the request when this client's approvals are routed to
    nexus, and tell the run's dispatcher with a notice (an agent is woken by it; the person sees
    it in `nexus watch`); (approval id, deadline, dispatcher), or None to let the client decide
    as it would."""
    run_id = env.get(ENV) or ""
    route = ledger.route_of(conn, run_id) if run_id else None
    if route is None or not here(route) or \
            not table().alive(route["client_pid"], route["client_start"]) \
            or not started_by(route["client_pid"], client_pid):
        return None
    timeout = settings.load(root)["approvalTimeout"]
    tool: str = data["tool_name"] if isinstance(data.get("tool_name"), str) else "unknown"
    mode = data.get("permission_mode")
    reason = data.get("reason") if isinstance(data.get("reason"), str) else (
        f"asked in {mode} permission mode" if isinstance(mode, str) else None)
    deadline = now + float(timeout)  # type: ignore[arg-type]
    summary = ledger.summarize(data.get("tool_input"))
    aid = ledger.insert(conn, sid, run_id, tool, summary, reason, os.getpid(), now, deadline)
    mailbox.notice(conn, route["dispatcher"],
                   f"Permission request {aid} from run {run_id} ({sid}): {tool}: {summary}\n"
                   f"Answer within {timeout} s (unanswered: rejected): nexus approve {aid} "
                   f"--session {sid} allow-once|reject", now, by=sid)
    return aid, deadline, route["dispatcher"]


def decision(allow: bool, message: str = "") -> dict:
    verdict: dict = {"behavior": "allow"} if allow else {"behavior": "deny", "message": message}
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": verdict}}


def wait(store: Store, aid: str, deadline: float) -> dict:
    """After COMMIT: wait for the answer (a poke on the approval's channel; a slow look at the
    store as the safety net) and return the client's decision."""
    with store.channel(channel(aid)) as ch:
        while True:
            with store.read() as conn:
                row = ledger.get(conn, aid)
            if row is None or row["status"] != "pending":
                break
            left = deadline - time.time()
            if left <= 0:
                with store.write() as conn:
                    ledger.settle(conn, aid, "rejected", "timeout", time.time())
                continue
            ch.wait(min(left, 2.0))
    if row is not None and row["status"] == "allowed":
        return decision(True)
    if row is not None and row["responder"] == "timeout":
        why = f"no answer within {int(row['deadline'] - row['requested_at'])} s"
    elif row is not None:
        why = f"rejected by {row['responder']}"
    else:
        why = "the request was removed"
    return decision(False, f"nexus: permission {why} (approval {aid}); do not retry the same "
                           "call; say what you needed it for")
