"""Owner of the `runs` and `run_policy` tables: every run is a record before its process starts,
and a run whose process died is found out here and marked `error`, never left `running`. A run
names its machine (the dispatcher's, where its runner and client start): its processes are
judged, and signalled, only there. Stdlib only."""

from __future__ import annotations

import json
import os
import sqlite3

from ..core import discovery, sessions
from ..core.proctable import machine
from ..core.settings import RUN_UNSTARTED
from ..core.store import policy as rules
from . import procs, result

# team mode (core/store/policy.py): a run (its task, context and result) is its dispatcher's
# role's alone; the team-wide run policy (scope `*`) is the administrator's, a member's own
# default (`@<role>`) and a session's are their owner's
_SETS_POLICY = rules.either(rules.when("scope = '*'", rules.ADMIN),
                            "scope = '@' || session_user", rules.own("scope"))
TEAM_TABLES = {
    "runs": rules.Table(read=rules.OWNER, insert=rules.TEAM, update=rules.OWNER,
                        delete=rules.OWNER, owner=True),
    "run_policy": rules.Table(read=rules.TEAM, insert=_SETS_POLICY, update=_SETS_POLICY,
                              delete=_SETS_POLICY),
}
# what a run's record takes as it goes (its id, number, dispatcher and role stay)
_CHANGE = rules.Update("runs", (
    "title", "session_id", "task_id", "status", "error", "runner_pid", "runner_start",
    "client_pid", "client_start", "exit_code", "output", "result", "started_at",
    "client_started_at", "finished_at"))
_SET_POLICY = rules.Update("run_policy", ("preset", "sandbox", "updated_at"), key="scope")
_COLUMNS = ("id", "seq", "client", "task", "context", "cwd", "project", "title", "preset",
            "sandbox", "approvals", "resume", "launch", "dispatcher", "session_id", "task_id",
            "status", "created_at", "machine")
_INSERT = rules.write(f"INSERT INTO runs ({', '.join(_COLUMNS)}) VALUES"
                      f" ({', '.join(':' + c for c in _COLUMNS)})")
ACTIVE = ("queued", "running")
FINAL = ("done", "error", "cancelled")
DIED = ("its process ended without recording a result (killed, or the machine restarted); "
        "the session is kept: resume it with --resume")


def new_id() -> str:
    return "r-" + os.urandom(6).hex()


def get(conn: sqlite3.Connection, run_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()


def insert(conn: sqlite3.Connection, **fields: object) -> None:
    fields["seq"] = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM runs").fetchone()[0]
    fields["machine"] = machine()
    unknown = set(fields) - set(_COLUMNS)
    if unknown:
        raise ValueError(f"not a run's first field: {', '.join(sorted(unknown))}")
    conn.execute(_INSERT, {c: fields.get(c) for c in _COLUMNS})


def change(conn: sqlite3.Connection, run_id: str, **fields: object) -> None:
    _CHANGE.run(conn, run_id, fields)


def active_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM runs WHERE status IN ('queued', 'running')"
                        ).fetchone()[0]


def of_session(conn: sqlite3.Connection, sid: str) -> sqlite3.Row | None:
    """The latest run of a session."""
    return conn.execute("SELECT * FROM runs WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
                        (sid,)).fetchone()


def dispatched_by(conn: sqlite3.Connection, sid: str, dispatcher: str) -> bool:
    """Whether `dispatcher` started a run of the session `sid`."""
    return conn.execute("SELECT 1 FROM runs WHERE session_id = ? AND dispatcher = ? LIMIT 1",
                        (sid, dispatcher)).fetchone() is not None


def reap(conn: sqlite3.Connection, now: float) -> list[str]:
    """Inside a write: this machine's runs whose runner is gone become `error` (their client's
    process group is ended if it still runs, and is that run's: procs.end_group), or `done`
    with the result rebuilt from the output file when the client's stream there is complete.
    Another machine's runs are not judged here. Returns the runs changed."""
    changed = []
    for row in conn.execute("SELECT * FROM runs WHERE status IN ('queued', 'running')").fetchall():
        if not sessions.here(row):
            continue
        if row["runner_pid"]:
            if procs.alive(row["runner_pid"], row["runner_start"]):
                continue
            procs.end_group(row["client_pid"], row["client_start"], row["id"], grace=1.0)
            rebuilt = result.recover(row)
            if rebuilt is not None:  # the client finished; only the runner's last write is lost
                change(conn, row["id"], **rebuilt)
                changed.append(row["id"])
                continue
            reason = DIED
        elif now - row["created_at"] > RUN_UNSTARTED:
            reason = ("it never started (the process that queued it exited first, or the "
                      "machine restarted)")
        else:
            continue
        change(conn, row["id"], status="error", error=reason, finished_at=now)
        changed.append(row["id"])
    return changed


def purge(conn: sqlite3.Connection, now: float, retention: float) -> list[str]:
    """Finished runs older than the retention, with their output files."""
    rows = conn.execute("SELECT id, output FROM runs WHERE status IN ('done', 'error',"
                        " 'cancelled') AND finished_at < ?", (now - retention,)).fetchall()
    for row in rows:
        if row["output"]:
            for path in (row["output"], row["output"] + ".err"):
                try:
                    os.unlink(path)
                except OSError:
                    pass
        conn.execute(rules.write("DELETE FROM runs WHERE id = ?"), (row["id"],))
    return [r["id"] for r in rows]


def result_of(row: sqlite3.Row) -> dict | None:
    if not row["result"]:
        return None
    try:
        value = json.loads(row["result"])
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def summary(conn: sqlite3.Connection, row: sqlite3.Row) -> dict:
    """A run as `run list` shows it."""
    return {
        "id": row["id"], "status": row["status"], "client": row["client"],
        "title": row["title"], "preset": row["preset"], "sandbox": row["sandbox"],
        "approvals": row["approvals"], "cwd": row["cwd"], "session_id": row["session_id"],
        "session": discovery.ref(conn, row["session_id"]) if row["session_id"] else None,
        "dispatcher": discovery.ref(conn, row["dispatcher"]), "task_id": task_of(conn, row),
        "error": row["error"], "has_result": bool(row["result"]),
        "created_at_epoch": row["created_at"], "started_at_epoch": row["started_at"],
        "finished_at_epoch": row["finished_at"],
        "waited_ms": waited_ms(row),
    }


def task_of(conn: sqlite3.Connection, row: sqlite3.Row) -> str | None:
    """The task delegated to a `delegate --spawn` run (read from the task ledger)."""
    if row["task_id"] or not row["session_id"] or row["title"] != "delegated task":
        return row["task_id"]
    found = conn.execute("SELECT id FROM tasks WHERE target = ? AND sender = ? AND mode != 'self'"
                         " ORDER BY created_at LIMIT 1", (row["session_id"], row["dispatcher"])
                         ).fetchone()
    return found[0] if found else None


def waited_ms(row: sqlite3.Row) -> int | None:
    if row["finished_at"] is None:
        return None
    return round((row["finished_at"] - row["created_at"]) * 1000)


# -- run policy: the default preset and tier, and each session's own ----------------------------

DEFAULT_SCOPE = "*"


def member_scope(conn: sqlite3.Connection) -> str | None:
    """Team mode: the scope of the caller's own default (`@<role>`), reaching only its runs."""
    role = rules.role(conn)
    return f"@{role}" if role else None


def default_scope(conn: sqlite3.Connection) -> str:
    """Where a default the caller sets goes: the default of every run when it may set that (the
    local store; the team's administrator), else its own (team mode)."""
    if rules.is_admin(conn):
        return DEFAULT_SCOPE
    return member_scope(conn) or DEFAULT_SCOPE


def policy(conn: sqlite3.Connection, scope: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM run_policy WHERE scope = ?", (scope,)).fetchone()


def set_policy(conn: sqlite3.Connection, scope: str, now: float, **fields: object) -> None:
    conn.execute(rules.write(
        "INSERT INTO run_policy (scope, updated_at) VALUES (?, ?) ON CONFLICT DO NOTHING"),
                 (scope, now))
    fields["updated_at"] = now
    _SET_POLICY.run(conn, scope, fields)
