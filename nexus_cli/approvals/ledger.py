"""Owner of the `approvals` and `approval_routes` tables. A route says that the client process a
run started sends its permission requests to nexus, and who may answer them (the run's
dispatcher, and the person). Stdlib only: the PermissionRequest hook uses it."""

from __future__ import annotations

import json
import os
import sqlite3

from ..core.proctable import machine, table
from ..core.sessions import here
from ..core.store import policy

# team mode (core/store/policy.py): a run's permission requests and their route are the run's
# role's alone (its dispatcher answers them)
TEAM_TABLES = {t: policy.Table(read=policy.OWNER, insert=policy.TEAM, update=policy.OWNER,
                               delete=policy.OWNER, owner=True)
               for t in ("approvals", "approval_routes")}

OUTCOMES = {"allow-once": "allowed", "reject": "rejected"}
SUMMARY_MAX = 300


def new_id() -> str:
    return "a-" + os.urandom(6).hex()


def route(conn: sqlite3.Connection, run_id: str, client_pid: int, client_start: str | None,
          dispatcher: str, project: str, now: float) -> None:
    conn.execute(policy.write(
        "INSERT INTO approval_routes (run_id, client_pid, client_start, dispatcher,"
        " project, created_at, machine) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT"
        " (run_id) DO UPDATE SET client_pid = excluded.client_pid, client_start ="
        " excluded.client_start, dispatcher = excluded.dispatcher, project ="
        " excluded.project, created_at = excluded.created_at, machine = excluded.machine"),
                 (run_id, client_pid, client_start, dispatcher, project, now, machine()))


def route_of(conn: sqlite3.Connection, run_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM approval_routes WHERE run_id = ?", (run_id,)).fetchone()


def unroute(conn: sqlite3.Connection, run_id: str) -> None:
    conn.execute(policy.write("DELETE FROM approval_routes WHERE run_id = ?"), (run_id,))


def summarize(tool_input: object) -> str:
    """One line saying what the tool would do (its command, path or arguments)."""
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "notebook_path", "path", "url"):
            if isinstance(tool_input.get(key), str):
                text = f"{key}: {tool_input[key]}"
                break
        else:
            text = json.dumps(tool_input, ensure_ascii=False, sort_keys=True)
    else:
        text = json.dumps(tool_input, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_MAX else text[: SUMMARY_MAX - 1] + "…"


def insert(conn: sqlite3.Connection, session_id: str, run_id: str | None, tool_name: str,
           summary: str, reason: str | None, hook_pid: int, now: float, deadline: float) -> str:
    aid = new_id()
    seq = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM approvals").fetchone()[0]
    conn.execute(policy.write(
        "INSERT INTO approvals (id, seq, session_id, run_id, tool_name, summary, reason,"
        " status, hook_pid, hook_start, machine, requested_at, deadline)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)"),
                 (aid, seq, session_id, run_id, tool_name, summary, reason, hook_pid,
                  _start(hook_pid), machine(), now, deadline))
    return aid


def _start(pid: int) -> str | None:
    proc = table().get(pid)
    return proc.start if proc else None


def get(conn: sqlite3.Connection, aid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM approvals WHERE id = ?", (aid,)).fetchone()


def settle(conn: sqlite3.Connection, aid: str, status: str, responder: str, now: float) -> bool:
    """First answer wins: True when this call settled it. Nothing is allowed after its deadline
    (by then the request is rejected as timed out, whether or not the hook noticed yet)."""
    cur = conn.execute(policy.write(
        "UPDATE approvals SET status = ?1, responder = ?2, answered_at = ?3 WHERE id = ?4 AND"
        " status = 'pending' AND (?1 <> 'allowed' OR deadline >= ?3)"),
        (status, responder, now, aid))
    return cur.rowcount == 1


def expire(conn: sqlite3.Connection, aid: str, now: float) -> bool:
    """A pending request past its deadline is rejected as timed out: True when this did it."""
    cur = conn.execute(policy.write(
        "UPDATE approvals SET status = 'rejected', responder = 'timeout',"
        " answered_at = ? WHERE id = ? AND status = 'pending' AND deadline < ?"),
                       (now, aid, now))
    return cur.rowcount == 1


def reap(conn: sqlite3.Connection, now: float) -> int:
    """Pending requests whose waiting hook is gone (the client ended, or killed it) are
    withdrawn: nothing waits for their answer. A hook of another machine is judged only by
    its deadline (its pid means something only there)."""
    gone = [r["id"] for r in conn.execute(
        "SELECT id, hook_pid, hook_start, machine, deadline FROM approvals WHERE"
        " status = 'pending'")
        if now > r["deadline"] + 30 or (here(r) and not table().alive(r["hook_pid"],
                                                                        r["hook_start"]))]
    for aid in gone:
        settle(conn, aid, "withdrawn", "nexus", now)
    return len(gone)


def pending_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM approvals WHERE status = 'pending'").fetchone()[0]
