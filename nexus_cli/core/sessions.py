"""The session core: owner of the `sessions` and `tool_uses` tables. Registration from hook events,
liveness, names and handles, successor routing. Every other module reads and writes sessions
through these functions, and through core/availability.py (a session's status as shown) and
core/discovery.py (listings, target resolution), which a tool call's hook does not load.
Stdlib only (the hooks use it).

A hook event is believed only from its session's own client process: the first event of a
session records that process (pid and start time); a live one is never replaced, a dead one
only by a SessionStart that is its new process's own first event (`claude --resume`, `codex
resume`: never into a process that runs other sessions, as a start fed by hand from an agent's
shell would), which is recorded in the event log. A client process nexus has not registered is
never a registered session by its variable or `_meta` alone, and a process that runs a shell is
no client, whatever its name."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from .. import clients
from . import identity, store
from .errors import NexusError
from .proctable import Proc, machine, table
from .record import Record
from .settings import (
    BINDING_PURGE,
    BINDING_TTL,
    STALE_AFTER,
)
from .store import policy
from .store.db import later, present

PROMPT_TAIL = 1500
ASSISTANT_TAIL = 5000
LIVE_SQL = ("(status != 'offline' AND (last_active >= :stale"
            " OR status IN ('listening', 'working', 'waiting')"
            " OR (client_pid IS NOT NULL AND (machine IS NULL OR machine = :machine))))")

EVENT_STATUS = {
    "SessionStart": "idle",
    "UserPromptSubmit": "working",
    "PreToolUse": "working",
    "PostToolUse": "working",
    "PermissionRequest": "waiting",  # a person is asked (unattended runs: `attended` False)
    "Stop": "idle",
    "SessionEnd": "offline",
}
# the columns other modules may set through `update`
SETTABLE = frozenset({
    "status", "name", "note", "listening", "waiter_pid", "auto_turns", "last_wake_at",
    "last_wake_error", "handoff", "handoff_at", "predecessor", "successor", "offered_to",
    "offered_at", "waiting_for", "wake",
})
# what a session's own hooks and tools change of its row (its id, role and birth stay)
_UPDATE = policy.Update("sessions", SETTABLE)
_HOOKED = policy.Update("sessions", SETTABLE | {
    "client", "cwd", "project", "scope", "client_pid", "client_start", "machine",
    "start_project", "transcript_path", "last_event", "last_tool", "last_prompt",
    "last_prompt_at", "last_assistant", "last_turn_end", "last_active", "end_reason"})
_TOUCH = policy.write("UPDATE sessions SET last_active = ? WHERE id = ?")
# `end_reason` of a session nexus found without its client process (maintenance writes it; no
# client sends it)
EXITED = "process-exited"
WAITING_FOR_MAX = 200  # characters of what a waiting session waits for


# team mode (core/store/policy.py): presence is for everyone to read; a row is its role's (the
# server records it), never given to another, and a person's id is the role's own; nexus's own
# id is nobody's. A tool use is bound by, and for, the session's own role.
TEAM_TABLES = {
    "sessions": policy.Table(
        read=policy.TEAM, update=policy.OWNER, delete=policy.OWNER, owner=True,
        insert=f"id NOT LIKE 'nexus:%' AND (id NOT LIKE 'user:%' OR {policy.person('id')})"),
    "tool_uses": policy.Table(read=policy.own("session_id"), insert=policy.own("session_id"),
                              update=policy.FUNCTIONS, delete=policy.own("session_id")),
}


class Caller(Record):
    """The participant a call acts as, its project root (a path), how it was established
    (`source`: option | env | ancestry | mcp | user | hook), its scope: the project as every
    machine names it (`identity.scope_of`; the root path on the local store), and `tier`: the
    sandbox tier its client states for this very call (Codex's turn `sandbox_mode`, Claude
    Code's permission mode), None when it states none, and `agent`: the Claude Code subagent
    (Task tool) an MCP call came from, which acts as its session."""

    __slots__ = ()
    _fields = ("id", "cwd", "project", "source", "scope", "tier", "agent")
    _defaults = ("", None, "")
    id: str
    cwd: str
    project: str
    source: str
    scope: str
    tier: str | None
    agent: str

    @property
    def key(self) -> str:
        """What `sessions.scope` is compared with: the scope, else the project root."""
        return self.scope or self.project

    def holds(self, row: sqlite3.Row | dict) -> bool:
        """Whether the session `row` is in this caller's project."""
        return (row["scope"] or row["project"]) == self.key

    @property
    def client(self) -> str:
        return identity.split_id(self.id)[0]

    @property
    def is_agent(self) -> bool:
        return self.client in identity.CLIENTS


def in_team(conn: object) -> bool:
    """Whether `conn` is the team store's (several machines share it), not a SQLite store's."""
    return not isinstance(conn, sqlite3.Connection)


def scope_of(conn: object, root: str) -> str:
    """The scope of the project at `root` in the store of `conn` (see identity.scope_of)."""
    return identity.scope_of(root, in_team(conn))


def stale(now: float) -> dict[str, object]:
    """The parameters every use of LIVE_SQL needs."""
    return {"stale": now - STALE_AFTER, "machine": machine()}


def tail(text: object, limit: int) -> str | None:
    if not isinstance(text, str) or not text:
        return None
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def here(row: sqlite3.Row | dict) -> bool:
    """Whether the session runs on this machine (its pids can be checked here); a session of
    another machine sharing the team database is believed as it recorded itself."""
    try:
        where = row["machine"]
    except (KeyError, IndexError):
        return True
    return where is None or where == machine()


def ended(row: sqlite3.Row | dict) -> str:
    """Why a session recorded as offline is."""
    if row["successor"]:
        return "replaced by a new conversation of its client (handoff)"
    if row["end_reason"] == EXITED:
        return EXITED_TEXT
    return "its session ended" + (f" ({row['end_reason']})" if row["end_reason"] else "")


EXITED_TEXT = ("its client process has exited without ending the session (killed, crashed, or "
               "its terminal closed)")
QUIET_TEXT = "no activity for 30 minutes, and its client process cannot be checked from here"


def gone(row: sqlite3.Row | dict, now: float, proc: Proc | None = None) -> str | None:
    """Why the session is offline, or None. A session whose client process runs on this machine
    is judged by that process (pid and start time: a reused pid is not it), whatever its age;
    `proc`: the process known to run now (a hook's own client: nothing to look up). Another
    machine's session, or one without a process (a person), is believed as it recorded itself
    until 30 minutes without activity."""
    if row["status"] == "offline":
        return ended(row)
    pid, local = row["client_pid"], here(row)
    if pid and local:
        if proc is not None and (proc.pid, proc.start) == (pid, row["client_start"]):
            return None
        return None if table().alive(pid, row["client_start"]) else EXITED_TEXT
    if row["last_active"] >= now - STALE_AFTER:
        return None
    if row["status"] == "listening" and (not local or table().alive(row["waiter_pid"])):
        return None
    if row["status"] in ("working", "waiting") and pid:
        return None  # another machine's turn: believed (its pid is not ours to check)
    return QUIET_TEXT


def wants_waking(row: sqlite3.Row | dict, config: dict) -> bool:
    """The session's own choice (`profile --wake`), else the `wake` setting."""
    return bool(row["wake"]) if row["wake"] is not None else bool(config["wake"])


def get(conn: sqlite3.Connection, sid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()


# What judging a session's liveness (`gone`) needs of its row, and a caller's scope
# (`caller.caller_for`): the look every tool call makes at its caller takes these alone. A whole
# row is 37 columns, and each costs SQLite and Python as much as a short statement's own work (a
# whole row read by id: 87 k instructions; these: 40 k).
LOOK = ("id, client, cwd, project, scope, status, client_pid, client_start, machine, last_active,"
        " waiter_pid, successor, end_reason")


def known(conn: sqlite3.Connection, sid: str) -> sqlite3.Row:
    """The row of a session the caller registered or resolved in this transaction."""
    return present(get(conn, sid), f"session {sid}")


def update(conn: sqlite3.Connection, sid: str, **fields: object) -> None:
    _UPDATE.run(conn, sid, fields)


def name_holder(conn: sqlite3.Connection, name: str, now: float, exclude: str = "") -> str | None:
    """The live session other than `exclude` that uses `name`, if any."""
    rows = conn.execute(f"SELECT * FROM sessions WHERE name = :n AND id != :me AND {LIVE_SQL}",
                        {"n": name, "me": exclude, **stale(now)}).fetchall()
    return next((r["id"] for r in rows if gone(r, now) is None), None)


def person_names(conn: sqlite3.Connection) -> frozenset[str]:
    """The names of the people who have used this store (`user:…` sessions)."""
    return frozenset(r[0] for r in conn.execute(
        "SELECT name FROM sessions WHERE client = ?", (identity.USER,)))


def unique_name(conn: sqlite3.Connection, base: str, now: float, exclude: str = "") -> str:
    """`base`, else `base#2`, `base#3`, ... : the first not held by another live session."""
    rows = conn.execute(
        f"SELECT * FROM sessions WHERE (name = :b OR substr(name, 1, :n) = :p)"
        f" AND id != :me AND {LIVE_SQL}",
        {"b": base, "n": len(base) + 1, "p": base + "#", "me": exclude, **stale(now)},
    ).fetchall()
    taken = {r["name"] for r in rows if gone(r, now) is None}
    if base not in taken:
        return base
    n = 2
    while f"{base}#{n}" in taken:
        n += 1
    return f"{base}#{n}"


def unique_handle(conn: sqlite3.Connection, sid: str) -> str:
    """`s-` and 12 hex digits of the client id (identity.handle_digits: the first ones, or a
    UUIDv7's random ones), extended one digit at a time while another session holds it: one
    handle names one session, always."""
    if identity.split_id(sid)[0] == identity.USER:
        return identity.handle_base(sid)  # u-<login>: one login, one handle
    digits = identity.handle_digits(sid)
    for length in range(identity.HANDLE_DIGITS, len(digits) + 1):
        handle = identity.handle_base(sid, length)
        holder = conn.execute("SELECT id FROM sessions WHERE handle = ?", (handle,)).fetchone()
        if holder is None or holder[0] == sid:
            return handle
    return "s-" + digits + "-" + str(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])


def ensure(conn: sqlite3.Connection, sid: str, cwd: str, now: float,
           client: Proc | None = None, touch: bool = True,
           parent: str | None = None) -> sqlite3.Row:
    """The session's row, created (with a unique name and handle) when missing, revived when
    offline. A row of its own that nexus would not have written is no reason to write another:
    `row_invalid` (core/store)."""
    row = get(conn, sid)
    if row is None:
        if store.last_skipped is not None:
            raise store.row_error(store.last_skipped)
        base = identity.base_name(sid, cwd)  # a person's name is its own: no agent holds it
        name = base if identity.split_id(sid)[0] == identity.USER else unique_name(conn, base, now)
        root = identity.project_root(cwd) if cwd else ""
        conn.execute(
            policy.write(
                "INSERT INTO sessions (id, client, handle, name, cwd, project, scope, status,"
                " client_pid, client_start, parent, created_at, last_active, machine,"
                " start_project) VALUES (?, ?, ?, ?, ?, ?, ?, 'idle', ?, ?, ?, ?, ?, ?, ?)"),
            (sid, identity.split_id(sid)[0], unique_handle(conn, sid), name, cwd, root,
             scope_of(conn, root), client.pid if client else None,
             client.start if client else None, parent, now, now, machine(),
             start_project(conn, client, root)),
        )
    elif touch:
        if _stale(row, now, cwd, client):
            revive(conn, row, now, client)
            if cwd and cwd != row["cwd"]:
                root = identity.project_root(cwd)
                conn.execute(policy.write(
                    "UPDATE sessions SET cwd = ?, project = ?, scope = ? WHERE id = ?"),
                             (cwd, root, scope_of(conn, root), sid))
        else:  # the common case: one write (the row returned shows last_active as it was)
            later(conn, _TOUCH, (now, sid))
            return row
        conn.execute(_TOUCH, (now, sid))
    row = get(conn, sid)
    if row is None:  # what was just written fails its own check: a bug, said as what it is
        raise store.row_error(store.last_skipped or ("sessions", sid, "id"))
    return row


def _stale(row: sqlite3.Row, now: float, cwd: str, client: Proc | None = None) -> bool:
    """Whether a known session must be revived or moved (offline, or in another directory),
    not only touched: what `ensure` and `refresh` decide alike."""
    return bool(gone(row, now, client) or (cwd and cwd != row["cwd"]))


def refresh(conn: sqlite3.Connection, sid: str, cwd: str, now: float) -> None:
    """`ensure` for a caller about to act as itself (`Ctx.me`), which needs no row back: in the
    common case (live, where it was) one narrow look and one write."""
    row = conn.execute(_LOOK_BY_ID, (sid,)).fetchone()
    if row is None or _stale(row, now, cwd):
        ensure(conn, sid, cwd, now)
    else:
        later(conn, _TOUCH, (now, sid))


_LOOK_BY_ID = f"SELECT {LOOK} FROM sessions WHERE id = ?"


def start_project(conn: sqlite3.Connection, client: Proc | None, root: str) -> str:
    """Where a new conversation starts for good (`nexus fs` keeps to it): its project, unless its
    client process already ran one (a /clear, a Codex /new, or a start fed by hand from the
    agent's shell), whose start it keeps: no event of a running client moves it."""
    hosted = of_process(conn, client) if client is not None else []
    return hosted[-1]["start_project"] or hosted[-1]["project"] if hosted else root


def jail(row: sqlite3.Row | None, caller: Caller) -> str:
    """The project `nexus fs` keeps an agent in: its start (`start_project`); the person's, where
    the person stands."""
    if row is None or not caller.is_agent:
        return caller.project
    return row["start_project"] or row["project"]


def revive(conn: sqlite3.Connection, row: sqlite3.Row, now: float,
           client: Proc | None = None) -> None:
    """A session coming back from offline keeps its name unless a live session took it."""
    if not gone(row, now, client):
        return
    name = unique_name(conn, row["name"], now, exclude=row["id"])
    conn.execute(policy.write(
        "UPDATE sessions SET status = 'idle', name = ? WHERE id = ?"), (name, row["id"]))


def subagent(data: dict) -> str | None:
    """The Claude Code subagent (Task tool) a hook event comes from: its `agent_id` (the main
    conversation's events have none). A subagent's context is not its session's: what is
    announced there never reaches the conversation that owns the inbox."""
    agent = data.get("agent_id")
    return agent[:100] if isinstance(agent, str) and agent else None


def record_event(conn: sqlite3.Connection, sid: str, data: dict, now: float,
                 client: Proc, parent: str | None = None,
                 row: sqlite3.Row | None = None, attended: bool = True) -> sqlite3.Row | None:
    """Apply one hook event, run by the client process `client`, to its session's row. Returns
    the row, or None when the event is one nexus does not track (nothing is written then).
    `row`: the session's row as the caller has just read it in this transaction. `attended`:
    False in an unattended run, where no person answers a permission prompt. An event of a
    subagent (Task tool) is the session's activity, but neither its status nor its waits."""
    event = data["hook_event_name"]
    status = EVENT_STATUS.get(event)
    if status is None:
        return None
    if row is None:
        row = get(conn, sid)
    if event == "SessionEnd" and row is None:
        return None  # the end of a conversation nexus never saw (`claude mcp list` sends one)
    cwd = data.get("cwd") or ""
    if row is None or gone(row, now, client) or (cwd and cwd != row["cwd"]):
        row = ensure(conn, sid, cwd, now, client, parent=parent)  # new, revived or moved
    agent = subagent(data)
    if agent is not None and event != "PermissionRequest":
        if event == "PreToolUse" and isinstance(data.get("tool_use_id"), str):
            bind(conn, data["tool_use_id"], sid, now, identity.adapter(sid).hook_tier(data),
                 agent)
        later(conn, _TOUCH, (now, sid))
        return row
    if status == "waiting" and not attended:
        status = "working"  # nobody is asked: the client decides at once
    sets: dict[str, object] = {"status": status, "last_event": event, "last_active": now,
                               "client_pid": client.pid, "client_start": client.start,
                               "waiting_for": waiting_for(data) if status == "waiting"
                               else None}
    if row["machine"] != machine():  # its client process runs here (now)
        sets["machine"] = machine()
    if (row["client_pid"], row["client_start"]) != (client.pid, client.start):
        # it starts in this client process (a resume in a new process, admitted only as that
        # process's own first event; or a run's session at its first): its start is here
        sets["start_project"] = identity.project_root(cwd) if cwd else row["start_project"]
    if isinstance(data.get("transcript_path"), str):
        sets["transcript_path"] = data["transcript_path"]
    if event == "UserPromptSubmit":
        sets["last_prompt"] = tail(data.get("prompt"), PROMPT_TAIL)
        sets["last_prompt_at"] = now
    elif event in ("PreToolUse", "PostToolUse"):
        if isinstance(data.get("tool_name"), str):
            sets["last_tool"] = data["tool_name"]
        if event == "PreToolUse" and isinstance(data.get("tool_use_id"), str):
            bind(conn, data["tool_use_id"], sid, now, identity.adapter(sid).hook_tier(data))
    elif event == "SessionEnd":
        sets["end_reason"] = data.get("reason") if isinstance(data.get("reason"), str) else None
    elif event == "SessionStart":
        sets["end_reason"] = None
        if row["project"]:  # (team mode) a remote added since, or a row from before scopes
            sets["scope"] = scope_of(conn, row["project"])
    elif event == "Stop":
        sets["last_turn_end"] = now
        sets["last_assistant"] = tail(data.get("last_assistant_message"), ASSISTANT_TAIL)
    if row["waiter_pid"]:
        if event != "Stop":
            sets["waiter_pid"] = None  # new activity ends any wait
        elif row["status"] == "listening" and (not here(row) or table().alive(row["waiter_pid"])):
            sets["status"] = "listening"  # a waiter that registered first keeps waiting
    _HOOKED.run(conn, sid, sets)
    return get(conn, sid)  # (a read back: SQLite prepares RETURNING as a trigger, costlier)


def waiting_for(data: dict) -> str:
    """What a PermissionRequest asks the person, in one line: the tool and what it would do."""
    tool = data.get("tool_name") if isinstance(data.get("tool_name"), str) else "a tool"
    given = data.get("tool_input")
    what = next((given[k] for k in ("command", "cmd", "file_path", "path", "url")
                 if isinstance(given, dict) and isinstance(given.get(k), str)), "")
    text = f"a permission prompt: {tool}" + (f" {what}" if what else "")
    text = " ".join(text.split())  # one line, whatever the command held
    return text if len(text) <= WAITING_FOR_MAX else text[:WAITING_FOR_MAX - 1] + "…"


def of_process(conn: sqlite3.Connection, proc: Proc, columns: str = "*") -> list[sqlite3.Row]:
    """The sessions this very process ran (a reused pid with another start time does not count),
    most recently active first; `columns`: what of them is read (`LOOK`: enough to judge them).
    Only an agent's row that names the process's start time, on this machine, is one: a row
    without a start time (which no hook writes) or a person's could be anyone's forgery, naming
    another member's client to become that member's session."""
    return conn.execute(f"SELECT {columns} FROM sessions WHERE client_pid = ? AND client_start ="
                        " ? AND client IN ('claude', 'codex') AND (machine IS NULL OR machine = ?)"
                        " ORDER BY last_active DESC", (proc.pid, proc.start, machine())).fetchall()


def current_of(hosted: list[sqlite3.Row], now: float) -> sqlite3.Row:
    """Of the sessions one client process ran, the one it runs now: the most recently active live
    one (after /clear its successor, which the same process registered), else the most recent.
    A successor in another process (`handoff now --to`) is never this process's: a process is
    only ever the sessions it ran itself."""
    live = [r for r in hosted if gone(r, now) is None]
    return (live or hosted)[0]


def client_alive(row: sqlite3.Row | dict) -> bool:
    if not here(row):
        return bool(row["client_pid"])  # another machine's process: not ours to check
    return bool(row["client_pid"]) and table().alive(row["client_pid"], row["client_start"])


def hand_over(conn: sqlite3.Connection, old: sqlite3.Row, new_id: str, now: float) -> None:
    """The session half of a handoff: the successor takes the name, note and listen mode; the old
    conversation goes offline and routes what is addressed to it to the successor."""
    conn.execute(policy.write(
        "UPDATE sessions SET status = 'offline', successor = ?, handoff_at = ?,"
        " waiter_pid = NULL WHERE id = ?"), (new_id, now, old["id"]))
    conn.execute(policy.write(
        "UPDATE sessions SET name = ?, note = ?, listening = ?, predecessor = ?,"
        " handoff_at = ? WHERE id = ?"),
                 (old["name"], old["note"], old["listening"], old["id"], now, new_id))


def mail_row(conn: sqlite3.Connection, sid: str) -> sqlite3.Row | None:
    """What mail for `sid` needs of its row: where it goes (`route`) and whose client to tell
    (the news marker)."""
    return conn.execute("SELECT id, successor, handoff_at, client_pid, machine FROM sessions"
                        " WHERE id = ?", (sid,)).fetchone()


def route(conn: sqlite3.Connection, sid: str, row: sqlite3.Row | None = None) -> str:
    """Where something addressed to `sid` goes: its successor, when it was handed over. `row`:
    the session's row when the caller has just read it in this transaction (no second look)."""
    seen = {sid}
    while True:
        if row is None or row["id"] != sid:
            row = conn.execute("SELECT id, successor, handoff_at FROM sessions WHERE id = ?",
                               (sid,)).fetchone()
        if not row or not row["successor"] or row["handoff_at"] is None \
                or row["successor"] in seen:
            return sid
        sid = row["successor"]
        seen.add(sid)


def follow_successors(conn: sqlite3.Connection, sid: str) -> str:
    """Where what is addressed to `sid` goes now: the end of its chain of handoffs."""
    seen = {sid}
    while True:
        row = conn.execute("SELECT successor FROM sessions WHERE id = ?", (sid,)).fetchone()
        if not row or not row[0] or row[0] in seen:
            return sid
        sid = row[0]
        seen.add(sid)


def start_waiting(conn: sqlite3.Connection, sid: str, pid: int) -> None:
    conn.execute(policy.write(
        "UPDATE sessions SET status = 'listening', waiter_pid = ? WHERE id = ?"),
                 (pid, sid))


def end_waiting(conn: sqlite3.Connection, sid: str, pid: int) -> None:
    """The waiter `pid` is done: a session still shown as listening because of it is idle."""
    conn.execute(policy.write(
        "UPDATE sessions SET status = CASE WHEN status = 'listening' THEN 'idle'"
        " ELSE status END, waiter_pid = NULL WHERE id = ? AND waiter_pid = ?"), (sid, pid))


def clear_dead_waiters(conn: sqlite3.Connection) -> list[str]:
    """Sessions whose waiter was killed (kill -9) without ending its wait."""
    stuck = [r["id"] for r in conn.execute(  # only here: another machine's pids are not ours
        "SELECT id, waiter_pid, machine FROM sessions WHERE waiter_pid IS NOT NULL")
        if here(r) and not table().alive(r["waiter_pid"])]
    for sid in stuck:
        conn.execute(policy.write(
            "UPDATE sessions SET waiter_pid = NULL, status = CASE WHEN status ="
            " 'listening' THEN 'idle' ELSE status END WHERE id = ?"), (sid,))
    return stuck


def retire_dead(conn: sqlite3.Connection) -> list[str]:
    """Sessions of this machine whose client process has exited without a SessionEnd (kill -9,
    a crash, a closed terminal), recorded as offline: what every look already judged, written
    down so that no later look asks the process table again. Only a pid that no longer exists
    is retired here (a reused pid is told apart where a status is read)."""
    dead = [r["id"] for r in conn.execute(
        "SELECT id, client_pid, machine FROM sessions WHERE status != 'offline'"
        " AND client_pid IS NOT NULL") if here(r) and not table().alive(r["client_pid"])]
    for sid in dead:
        conn.execute(policy.write(
            "UPDATE sessions SET status = 'offline', end_reason = ?, waiter_pid = NULL"
            " WHERE id = ?"), (EXITED, sid))
    return dead


def troubled(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Sessions shown as listening, or whose last wake failed (for doctor)."""
    return conn.execute("SELECT * FROM sessions WHERE status = 'listening'"
                        " OR last_wake_error IS NOT NULL").fetchall()


def live_count(conn: sqlite3.Connection, now: float) -> int:
    return conn.execute(f"SELECT count(*) FROM sessions WHERE {LIVE_SQL}", stale(now)).fetchone()[0]


# -- tool-use bindings (the MCP caller of Claude Code) ----------------------------------------


def bind(conn: sqlite3.Connection, tool_use_id: str, sid: str, now: float,
         tier: str | None = None, agent: str | None = None) -> None:
    """The PreToolUse hook's binding of a tool use to its session, one per (id, session): a hook
    of another session naming the same id (learnt from a transcript) adds a binding of its own,
    which the MCP server of the rightful session never picks (`caller.resolve_mcp`). `tier`: the
    sandbox tier its client states for the call (the first binding's stays); `agent`: the
    subagent (Task tool) whose call it is."""
    conn.execute(policy.write(
        "INSERT INTO tool_uses (tool_use_id, session_id, created_at, tier, agent)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (tool_use_id, session_id) DO NOTHING"),
                 (tool_use_id, sid, now, tier, agent))


def bound_tier(conn: sqlite3.Connection, tool_use_id: str, sid: str) -> str | None:
    """The tier the client stated at the PreToolUse of this tool call of `sid`."""
    row = conn.execute("SELECT tier FROM tool_uses WHERE tool_use_id = ? AND session_id = ?",
                       (tool_use_id, sid)).fetchone()
    return row[0] if row else None


def bound_sessions(conn: sqlite3.Connection, tool_use_id: str, now: float) -> list[str]:
    """The sessions a tool use was bound to lately (one, unless a hook of another named it)."""
    return [r[0] for r in conn.execute(
        "SELECT session_id FROM tool_uses WHERE tool_use_id = ? AND created_at >= ?"
        " ORDER BY created_at, session_id", (tool_use_id, now - BINDING_TTL))]


def bound_agent(conn: sqlite3.Connection, tool_use_id: str, sid: str) -> str | None:
    """The subagent a tool use of `sid` was bound from, if it came from one."""
    got = conn.execute("SELECT agent FROM tool_uses WHERE tool_use_id = ? AND session_id = ?",
                       (tool_use_id, sid)).fetchone()
    return got[0] if got else None


def purge_bindings(conn: sqlite3.Connection, now: float) -> int:
    """Bindings only matter for the call they precede: drop those over an hour old."""
    return conn.execute(policy.write("DELETE FROM tool_uses WHERE created_at < ?"),
                        (now - BINDING_PURGE,)).rowcount


# -- hook events: whether one may be believed -------------------------------------------------


class Found(Record):
    __slots__ = ()
    _fields = ("proc", "client", "depth", "current", "hosted")
    proc: Proc  # the nearest client process above us
    client: str  # its kind
    depth: int  # its place in the ancestry (0: our parent)
    current: sqlite3.Row | None  # the session it runs now (its LOOK columns), when registered
    hosted: frozenset[str]  # every session it ran, and their successors


def kind_of(proc: Proc) -> str | None:
    for name, adapter in clients.ADAPTERS.items():
        if adapter.is_client(proc):
            return name
    return None


def nearest_client(conn: sqlite3.Connection, chain: Sequence[Proc], now: float) -> Found | None:
    """The nearest ancestor that is a client process: registered by its hooks (a session names
    its pid and start time), or recognised by its name."""
    for depth, proc in enumerate(chain):
        rows = of_process(conn, proc, LOOK)
        if rows:
            return Found(proc, rows[0]["client"], depth, current_of(rows, now),
                         hosted(rows))
        kind = kind_of(proc)
        if kind:
            return Found(proc, kind, depth, None, frozenset())
    return None


def hosted(rows: Sequence[sqlite3.Row]) -> frozenset[str]:
    """The sessions a client process ran. Its successors after /clear are among them (the same
    process registered them); a successor elsewhere (`handoff now --to`) is not: handing over
    never makes a process another session."""
    return frozenset(r["id"] for r in rows)


def admit_hook(conn: sqlite3.Connection, sid: str, event: str, client: str, proc: Proc | None,
               now: float, row: sqlite3.Row | None) -> str | None:
    """Whether a hook event for `sid` (its row: `row`, None when new), run below `proc` (the
    client process among this process's ancestors), may be believed; returns the session that
    started this one's client (a nested agent's parent), if any. Raises `hook_refused`."""
    if proc is None:
        raise NexusError("hook_refused", sid, f"no {client} process runs this hook",
                         f"hooks are for {client} to call; nothing was recorded")
    if row is not None and row["client_pid"] is not None and \
            (row["client_pid"], row["client_start"]) != (proc.pid, proc.start):
        if client_alive(row):
            raise NexusError("hook_refused", sid,
                             f"the session runs in {client} process {row['client_pid']}, not in "
                             f"process {proc.pid}", "nothing was recorded")
        if event != "SessionStart":
            raise NexusError("hook_refused", sid,
                             f"the session's {client} process {row['client_pid']} has exited; "
                             "only a SessionStart (a resume) may move it to another process",
                             "nothing was recorded")
        if of_process(conn, proc):  # a resume is believed from a client's own start
            raise NexusError("hook_refused", sid,
                             f"the session's {client} process {row['client_pid']} has exited, "
                             f"and process {proc.pid} runs other sessions already: a "
                             "conversation moves to a client process only as that process's "
                             "first event (`claude --resume`, `codex resume`), never into a "
                             "running one (a start fed by hand from an agent's shell)",
                             f"resume it in a new {client} process; nothing was recorded")
        from . import events  # rare: a session resumed in another process

        events.record(conn, now, sid, "session.moved", sid, from_pid=row["client_pid"],
                      to_pid=proc.pid)
    if row is not None:
        return row["parent"]  # set when the session was first seen (one lookup per ancestor)
    chain = table().ancestors()  # (a session's first event: the rest of the ancestry)
    depth = next((i for i, p in enumerate(chain) if p.pid == proc.pid), len(chain))
    above = nearest_client(conn, chain[depth + 1:], now)
    return above.current["id"] if above and above.current is not None else None
