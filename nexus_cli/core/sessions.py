"""The session core: owner of the `sessions` and `tool_uses` tables. Registration from hook events,
presence, names and handles, discovery, target resolution, successor routing. Every other module
reads and writes sessions through these functions. Stdlib only (the hooks use all of it)."""

from __future__ import annotations

import os
import sqlite3

from . import identity
from .errors import NexusError, invalid
from .proctable import Proc, machine, table
from .record import Record
from .settings import (
    BINDING_PURGE,
    BINDING_TTL,
    IDLE_WAIT,
    LISTEN_WAIT,
    RECENT_OFFLINE,
    STALE_AFTER,
    WAITER_GRACE,
    WOKEN_TURN,
)
from .store import policy
from .store.db import later, present

PROMPT_TAIL = 1500
ASSISTANT_TAIL = 5000
AMBIGUOUS_LIST = 12

# live as far as SQL can tell (`gone` decides): not ended, and recently active, or listening, or
# in a turn (tool calls need not reach nexus: a long turn is not staleness), or with a client
# process on this machine (whether it still runs is asked of the process table, not the clock);
# `:stale` is now - STALE_AFTER, `:machine` this machine (both from `stale`)
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

    _fields = __slots__ = ("id", "cwd", "project", "source", "scope", "tier", "agent")
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


STATUS_HELP = ("working: in a turn (it sees a message after its next tool call); waiting: its "
               "client waits for a person (a permission prompt) and it cannot answer until that "
               "is answered; listening: something waits to wake it (listen mode, or its "
               "background waiter): it can answer right away; idle: its turn ended and nothing "
               "wakes it now (see status_reason): a message waits for its next prompt; offline: "
               "its session ended or its client process is gone: mail waits for it to resume.")


class Presence(Record):
    """What a sender needs to know of a session, judged where it is read (never by a daemon):

    - `status`: working (in a turn), waiting (its client waits for a person: a permission
      prompt), listening (something waits to wake it: listen mode or its background waiter),
      idle (its turn ended and nothing wakes it now) or offline (ended, or its client is gone);
    - `reason`: why, in words, where the status alone does not say it;
    - `waiting_for`: what a waiting session waits for, as its client says it;
    - `wakeable`: for idle and listening agents, whether a message now wakes it."""

    _fields = __slots__ = ("status", "reason", "waiting_for", "wakeable")
    _defaults = (None, None, None)
    status: str
    reason: str | None
    waiting_for: str | None
    wakeable: bool | None


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


def effective_status(row: sqlite3.Row | dict, now: float) -> str:
    return presence(row, now).status


def presence(row: sqlite3.Row | dict, now: float) -> Presence:
    """The session's presence (see Presence): its hooks' record, corrected by what its client
    process says of itself where it says it (Claude Code's live registry file), by whether its
    processes still run, and by what keeps it from being woken."""
    why = gone(row, now)
    if why:
        return Presence("offline", why)
    status, local = row["status"], here(row)
    if not local:  # another machine's session: as it recorded itself
        return Presence(status, waiting_for=row["waiting_for"] if status == "waiting" else None)
    if row["client"] not in identity.CLIENTS:  # a person: `watch` listens while it runs
        dead = status == "listening" and not table().alive(row["waiter_pid"])
        return Presence("idle" if dead else status)
    live = _live(row)
    if live is not None and live[0] == "waiting":
        said = row["waiting_for"] if row["last_event"] == "PermissionRequest" else None
        return Presence("waiting", WAITING_TEXT, said or live[1] or "a person")
    if live is not None and live[2] > row["last_active"] and status != "listening":
        status = {"busy": "working", "idle": "idle"}.get(live[0], status)  # newer than hooks
    elif status == "waiting" and live is None and _moved_on(row):
        status = "working"  # its transcript grew since the prompt: it was answered
    if status == "waiting":
        return Presence("waiting", WAITING_TEXT, row["waiting_for"] or "a person")
    if status not in ("idle", "listening"):
        return Presence(status)
    return waking(row, status, now)


WAITING_TEXT = "its client waits for a person: it cannot answer until that is answered"


def _live(row: sqlite3.Row | dict) -> tuple[str, str | None, float] | None:
    from .. import clients  # only where a status is read

    adapter = clients.ADAPTERS.get(row["client"])
    return adapter.live(row) if adapter is not None and row["client_pid"] else None


def _moved_on(row: sqlite3.Row | dict) -> bool:
    """Whether the session's transcript was written after its last hook event (a permission
    prompt it recorded was answered: the conversation went on)."""
    try:
        return os.stat(row["transcript_path"]).st_mtime > row["last_active"]
    except (OSError, TypeError, ValueError):
        return False


def waking(row: sqlite3.Row | dict, status: str, now: float) -> Presence:
    """An idle or listening agent on this machine: whether a message wakes it now, and if not,
    why not."""
    held = held_back(row)
    if status == "listening":
        if not table().alive(row["waiter_pid"]):
            return Presence("idle", "its waiter was stopped (killed) before a message woke it",
                            wakeable=False)
        if held:
            return Presence("idle", held, wakeable=False)
        return Presence("listening", "listen mode: its Stop hook waits for a message"
                        if row["listening"] else "its background waiter wakes it",
                        wakeable=True)
    if held:
        return Presence("idle", held, wakeable=False)
    end, woke = row["last_turn_end"], row["last_wake_at"]
    if woke and now - woke < WOKEN_TURN and not row["last_wake_error"]:
        return Presence("idle", "it has just been woken: its next turn is starting",
                        wakeable=True)
    if row["last_event"] == "Stop" and end and now - end < WAITER_GRACE:
        return Presence("idle", "its turn has just ended: its waiter is starting", wakeable=True)
    return Presence("idle", no_waiter(row, now), wakeable=False)


def held_back(row: sqlite3.Row | dict) -> str | None:
    """What keeps any message from waking the session, whatever waits: it asked not to be woken,
    or its automatic turns are used up."""
    from .settings import cached
    from .store import paths

    config = cached(paths.home())
    if not row["listening"] and not wants_waking(row, config):
        return ("it asked not to be woken (`nexus profile --wake off`)" if row["wake"] == 0
                else "waking is off for every session (`nexus config set wake 0`)")
    limit = int(config["maxAutoTurns"])  # type: ignore[call-overload]
    if row["auto_turns"] >= limit:
        return (f"its automatic turns are used up ({row['auto_turns']} of {limit} since its "
                "last prompt)")
    return None


def wants_waking(row: sqlite3.Row | dict, config: dict) -> bool:
    """The session's own choice (`profile --wake`), else the `wake` setting."""
    return bool(row["wake"]) if row["wake"] is not None else bool(config["wake"])


HOOKLESS = ("no hook of its client has reached nexus (hooks not installed, or not trusted): it "
            "sees messages only when it runs `nexus read`")


def no_waiter(row: sqlite3.Row | dict, now: float) -> str:
    """Why nothing waits to wake an idle agent."""
    end = row["last_turn_end"]
    if row["last_event"] is None:
        return HOOKLESS
    if row["last_wake_error"]:
        return f"its last wake failed ({row['last_wake_error']})"
    if row["status"] in ("working", "waiting"):  # its client says idle; no Stop hook ran
        return "its turn ended without its Stop hook (interrupted), so nothing waits to wake it"
    if end is None:
        return "it has not ended a turn yet (nothing waits before its first prompt)"
    if row["listening"] and now - end >= LISTEN_WAIT:
        return f"its listen wait ended {LISTEN_WAIT} s after its turn"
    if now - end >= IDLE_WAIT:
        return "its waiter gave up an hour after its turn ended"
    return ("no waiter runs since its turn ended (its background Stop hook did not start: not "
            "installed, not trusted, or an unattended run; `nexus doctor` checks)")


def get(conn: sqlite3.Connection, sid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()


def known(conn: sqlite3.Connection, sid: str) -> sqlite3.Row:
    """The row of a session the caller registered or resolved in this transaction."""
    return present(get(conn, sid), f"session {sid}")


def update(conn: sqlite3.Connection, sid: str, **fields: object) -> None:
    unknown = set(fields) - SETTABLE
    if unknown:
        raise ValueError(f"not settable: {', '.join(sorted(unknown))}")
    conn.execute(f"UPDATE sessions SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?",
                 (*fields.values(), sid))


def name_holder(conn: sqlite3.Connection, name: str, now: float, exclude: str = "") -> str | None:
    """The live session other than `exclude` that uses `name`, if any."""
    rows = conn.execute(f"SELECT * FROM sessions WHERE name = :n AND id != :me AND {LIVE_SQL}",
                        {"n": name, "me": exclude, **stale(now)}).fetchall()
    return next((r["id"] for r in rows if gone(r, now) is None), None)


def person_names(conn: sqlite3.Connection) -> frozenset[str]:
    """The names of the people who have used this store (`user:…` sessions)."""
    return frozenset(r[0] for r in conn.execute(
        "SELECT name FROM sessions WHERE client = ?", (identity.USER,)))


def person_named(conn: sqlite3.Connection, name: str) -> sqlite3.Row | None:
    """The person a name reads as: a person of that name, else, for this machine's login, the
    person at this machine (in team mode named `login@machine`)."""
    row = conn.execute("SELECT * FROM sessions WHERE client = ? AND lower(name) = lower(?)"
                       " ORDER BY last_active DESC LIMIT 1", (identity.USER, name)).fetchone()
    if row is None and name.lower() == identity.login().lower():
        row = get(conn, identity.user_id())
    return row


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
    """`s-` and the first 12 hex digits of the client id, extended one digit at a time while
    another session holds it: one handle names one session, always."""
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
    offline."""
    row = get(conn, sid)
    if row is None:
        base = identity.base_name(sid, cwd)  # a person's name is its own: no agent holds it
        name = base if identity.split_id(sid)[0] == identity.USER else unique_name(conn, base, now)
        root = identity.project_root(cwd) if cwd else ""
        conn.execute(
            "INSERT INTO sessions (id, client, handle, name, cwd, project, scope, status,"
            " client_pid, client_start, parent, created_at, last_active, machine, start_project)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'idle', ?, ?, ?, ?, ?, ?, ?)",
            (sid, identity.split_id(sid)[0], unique_handle(conn, sid), name, cwd, root,
             scope_of(conn, root), client.pid if client else None,
             client.start if client else None, parent, now, now, machine(),
             start_project(conn, client, root)),
        )
    elif touch:
        if gone(row, now, client) or (cwd and cwd != row["cwd"]):
            revive(conn, row, now, client)
            if cwd and cwd != row["cwd"]:
                root = identity.project_root(cwd)
                conn.execute("UPDATE sessions SET cwd = ?, project = ?, scope = ? WHERE id = ?",
                             (cwd, root, scope_of(conn, root), sid))
        else:  # the common case: one write (the row returned shows last_active as it was)
            later(conn, "UPDATE sessions SET last_active = ? WHERE id = ?", (now, sid))
            return row
        conn.execute("UPDATE sessions SET last_active = ? WHERE id = ?", (now, sid))
    return get(conn, sid)  # type: ignore[return-value]


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
    conn.execute("UPDATE sessions SET status = 'idle', name = ? WHERE id = ?", (name, row["id"]))


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
        later(conn, "UPDATE sessions SET last_active = ? WHERE id = ?", (now, sid))
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
    conn.execute(
        f"UPDATE sessions SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
        (*sets.values(), sid),
    )
    return get(conn, sid)


def waiting_for(data: dict) -> str:
    """What a PermissionRequest asks the person, in one line: the tool and what it would do."""
    tool = data.get("tool_name") if isinstance(data.get("tool_name"), str) else "a tool"
    given = data.get("tool_input")
    what = next((given[k] for k in ("command", "cmd", "file_path", "path", "url")
                 if isinstance(given, dict) and isinstance(given.get(k), str)), "")
    text = f"a permission prompt: {tool}" + (f" {what}" if what else "")
    text = " ".join(text.split())  # one line, whatever the command held
    return text if len(text) <= WAITING_FOR_MAX else text[:WAITING_FOR_MAX - 1] + "…"


def of_process(conn: sqlite3.Connection, proc: Proc) -> list[sqlite3.Row]:
    """The sessions this very process ran (a reused pid with another start time does not count),
    most recently active first."""
    return conn.execute("SELECT * FROM sessions WHERE client_pid = ? AND (client_start = ? OR"
                        " client_start IS NULL) ORDER BY last_active DESC",
                        (proc.pid, proc.start)).fetchall()


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
    conn.execute("UPDATE sessions SET status = 'offline', successor = ?, handoff_at = ?,"
                 " waiter_pid = NULL WHERE id = ?", (new_id, now, old["id"]))
    conn.execute("UPDATE sessions SET name = ?, note = ?, listening = ?, predecessor = ?,"
                 " handoff_at = ? WHERE id = ?",
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
    conn.execute("UPDATE sessions SET status = 'listening', waiter_pid = ? WHERE id = ?",
                 (pid, sid))


def end_waiting(conn: sqlite3.Connection, sid: str, pid: int) -> None:
    """The waiter `pid` is done: a session still shown as listening because of it is idle."""
    conn.execute("UPDATE sessions SET status = CASE WHEN status = 'listening' THEN 'idle'"
                 " ELSE status END, waiter_pid = NULL WHERE id = ? AND waiter_pid = ?", (sid, pid))


def clear_dead_waiters(conn: sqlite3.Connection) -> list[str]:
    """Sessions whose waiter was killed (kill -9) without ending its wait."""
    stuck = [r["id"] for r in conn.execute(  # only here: another machine's pids are not ours
        "SELECT id, waiter_pid, machine FROM sessions WHERE waiter_pid IS NOT NULL")
        if here(r) and not table().alive(r["waiter_pid"])]
    for sid in stuck:
        conn.execute("UPDATE sessions SET waiter_pid = NULL, status = CASE WHEN status ="
                     " 'listening' THEN 'idle' ELSE status END WHERE id = ?", (sid,))
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
        conn.execute("UPDATE sessions SET status = 'offline', end_reason = ?, waiter_pid = NULL"
                     " WHERE id = ?", (EXITED, sid))
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
    conn.execute("INSERT INTO tool_uses (tool_use_id, session_id, created_at, tier, agent)"
                 " VALUES (?, ?, ?, ?, ?) ON CONFLICT (tool_use_id, session_id) DO NOTHING",
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
    return conn.execute("DELETE FROM tool_uses WHERE created_at < ?",
                        (now - BINDING_PURGE,)).rowcount


# -- descriptors and discovery -----------------------------------------------------------------


def profile(row: sqlite3.Row, now: float, caller_id: str = "",
            conn: sqlite3.Connection | None = None) -> dict:
    """A session as listings show it; with `conn`, also the conversation that replaced it."""
    seen = presence(row, now)
    return {
        "id": row["id"],
        "handle": row["handle"],
        "name": row["name"],
        "client": row["client"],
        "cwd": row["cwd"],
        "project": row["project"],
        "scope": row["scope"] or row["project"],
        "note": row["note"],
        "status": seen.status,
        "status_reason": seen.reason,
        "waiting_for": seen.waiting_for,
        "wakeable": seen.wakeable,
        "wake": row["wake"] != 0,
        "last_active_at_epoch": row["last_active"],
        "parent": row["parent"],
        "successor": ref(conn, row["successor"]) if conn and row["successor"] else None,
        "self": row["id"] == caller_id,
    }


def peer_ref(row: sqlite3.Row | None, sid: str) -> dict:
    if row is None:
        return {"id": sid, "handle": identity.handle_base(sid), "name": sid}
    return {"id": row["id"], "handle": row["handle"], "name": row["name"]}


def ref(conn: sqlite3.Connection, sid: str) -> dict:
    return peer_ref(get(conn, sid), sid)


def scoped_rows(conn: sqlite3.Connection, caller: Caller, now: float, all_workspaces: bool,
                include_offline: bool) -> list[sqlite3.Row]:
    """Sessions in the caller's scope, most recently active first."""
    where = ["id != :system"]
    params: dict[str, object] = {**stale(now), "system": identity.SYSTEM_ID}
    if not all_workspaces:  # (a row written without a scope is scoped by its root)
        where.append("(scope = :scope OR (scope = '' AND project = :project))")
        params["scope"], params["project"] = caller.key, caller.project
    if include_offline:
        where.append(f"({LIVE_SQL} OR last_active >= :recent)")
        params["recent"] = now - RECENT_OFFLINE
    else:
        where.append(LIVE_SQL)
    rows = conn.execute(
        f"SELECT * FROM sessions WHERE {' AND '.join(where)} ORDER BY last_active DESC, id",
        params,
    ).fetchall()
    if include_offline:
        return rows
    return [r for r in rows if gone(r, now) is None]


def matches(row: sqlite3.Row, query: str) -> bool:
    q = query.lower()
    return any(q in (row[k] or "").lower() for k in ("id", "handle", "name", "cwd"))


def resolve_target(conn: sqlite3.Connection, caller: Caller, target: str, now: float,
                   all_workspaces: bool = False, allow_self: bool = False,
                   include_offline: bool = False) -> sqlite3.Row:
    """Exact id -> exact handle -> a person's name -> exact name -> unambiguous name substring.

    An id or handle reaches a session in any status (messages wait for it); a name reaches live
    sessions, and offline ones active in the last 24 h too when `include_offline`. Scope applies
    to every step: a session outside the caller's project is not found unless `all_workspaces`
    widens the search; a person (`user:…`) is one in every project, and a name that reads as a
    person is that person, whatever an agent calls itself. When nothing matches, the error says
    what would."""
    target = target.strip()
    if not target:
        raise invalid("target", "the target is empty", "pass a session id, handle or name")

    def in_scope(row: sqlite3.Row | None) -> bool:  # a person is one, in every project
        return row is not None and (all_workspaces or caller.holds(row)
                                    or row["client"] == identity.USER)

    row = get(conn, target)
    if not in_scope(row):
        row = conn.execute("SELECT * FROM sessions WHERE handle = ?", (target,)).fetchone()
    if not in_scope(row):  # a name that reads as a person is that person, before any agent's
        row = person_named(conn, target)
    if not in_scope(row):
        found = by_name(scoped_rows(conn, caller, now, all_workspaces, False), target)
        if not found and include_offline:  # a live session's name wins over an offline one's
            found = by_name(scoped_rows(conn, caller, now, all_workspaces, True), target)
        if len(found) > 1:
            shown = ", ".join(f"{r['name']} ({r['handle']})" for r in found[:AMBIGUOUS_LIST])
            more = f" and {len(found) - AMBIGUOUS_LIST} more" if len(found) > AMBIGUOUS_LIST else ""
            raise NexusError(
                "target_ambiguous", target, f"{len(found)} sessions match: {shown}{more}",
                "use an exact id or handle",
                candidates=[profile(r, now, caller.id) for r in found[:AMBIGUOUS_LIST]],
            )
        row = found[0] if found else None
    if row is None:
        raise not_found(conn, caller, target, now, all_workspaces, include_offline)
    if row["id"] == caller.id and not allow_self:
        raise NexusError("target_is_self", target, "that is the calling session itself",
                         "pick another session from `nexus peers`")
    return row


def by_name(rows: list[sqlite3.Row], target: str) -> list[sqlite3.Row]:
    exact = [r for r in rows if r["name"] == target]
    return exact or [r for r in rows if target.lower() in r["name"].lower()]


def not_found(conn: sqlite3.Connection, caller: Caller, target: str, now: float,
              all_workspaces: bool, include_offline: bool) -> NexusError:
    """The error for a target nothing matched, naming what would have worked: the handle of an
    offline session of that name, or the flag that widens to the project where it lives."""
    scope = "any workspace" if all_workspaces else f"project {caller.key}"

    def gone(rows: list[sqlite3.Row]) -> NexusError:
        r = rows[0]
        away = not all_workspaces and not caller.holds(r)
        return NexusError("target_not_found", target,
                          f"{r['name']} is offline"
                          + (f" in project {r['scope'] or r['project']}" if away else "")
                          + " (a name reaches live sessions only)",
                          f"address it by its handle {r['handle']}"
                          + (" with --all-workspaces" if away else "") + ": messages wait for it")

    if not include_offline:
        offline = by_name(scoped_rows(conn, caller, now, all_workspaces, True), target)
        if offline:
            return gone(offline)
    if not all_workspaces:
        elsewhere = by_name(scoped_rows(conn, caller, now, True, include_offline), target)
        if elsewhere:
            r = elsewhere[0]
            return NexusError("target_not_found", target,
                              f"no session in {scope} matches; {r['name']} ({r['handle']}) is "
                              f"in project {r['scope'] or r['project']}",
                              "add --all-workspaces to reach it")
        offline = by_name(scoped_rows(conn, caller, now, True, True), target)
        if offline:
            return gone(offline)
    return NexusError("target_not_found", target, f"no session in {scope} matches",
                      "run `nexus peers --include-offline"
                      + ("" if all_workspaces else " --all-workspaces") + "` and use a handle")
