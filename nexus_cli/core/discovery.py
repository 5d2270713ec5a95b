"""Finding sessions: a session as listings show it, the sessions in a caller's scope, and the
target a name, handle or id means (its errors say what would have matched). Stdlib only."""

from __future__ import annotations

import re
import sqlite3

from . import availability, identity, sessions, suggest
from .errors import NexusError, invalid
from .sessions import Caller
from .settings import RECENT_OFFLINE

AMBIGUOUS_LIST = 12

# live as far as SQL can tell (`gone` decides): not ended, and recently active, or listening, or
# in a turn (tool calls need not reach nexus: a long turn is not staleness), or with a client
# process on this machine (whether it still runs is asked of the process table, not the clock);
# `:stale` is now - STALE_AFTER, `:machine` this machine (both from `stale`)


def person_named(conn: sqlite3.Connection, name: str) -> sqlite3.Row | None:
    """The person a name reads as, whatever its case: a person of that name, else a person
    whose name is that login at a machine (`bob` is `bob@laptop`: in team mode a person is
    named `login@machine`, and no agent named `bob@host` takes mail meant for that person),
    else, for this machine's login, the person at this machine."""
    row = conn.execute("SELECT * FROM sessions WHERE client = ? AND (lower(name) = lower(?)"
                       " OR lower(substr(name, 1, ?)) = lower(?)) ORDER BY lower(name) ="
                       " lower(?) DESC, last_active DESC LIMIT 1",
                       (identity.USER, name, len(name) + 1, name + "@", name)).fetchone()
    if row is None and name.lower() == identity.login().lower():
        row = sessions.get(conn, identity.user_id())
    return row


def profile(row: sqlite3.Row, now: float, caller_id: str = "",
            conn: sqlite3.Connection | None = None) -> dict:
    """A session as listings show it; with `conn`, also the conversation that replaced it."""
    seen = availability.presence(row, now)
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
    return peer_ref(sessions.get(conn, sid), sid)


def scoped_rows(conn: sqlite3.Connection, caller: Caller, now: float, all_workspaces: bool,
                include_offline: bool) -> list[sqlite3.Row]:
    """Sessions in the caller's scope, most recently active first."""
    where = ["id != :system"]
    params: dict[str, object] = {**sessions.stale(now), "system": identity.SYSTEM_ID}
    if not all_workspaces:  # (a row written without a scope is scoped by its root)
        where.append("(scope = :scope OR (scope = '' AND project = :project))")
        params["scope"], params["project"] = caller.key, caller.project
    if include_offline:
        where.append(f"({sessions.LIVE_SQL} OR last_active >= :recent)")
        params["recent"] = now - RECENT_OFFLINE
    else:
        where.append(sessions.LIVE_SQL)
    rows = conn.execute(
        f"SELECT * FROM sessions WHERE {' AND '.join(where)} ORDER BY last_active DESC, id",
        params,
    ).fetchall()
    if include_offline:
        return rows
    return [r for r in rows if sessions.gone(r, now) is None]


def matches(row: sqlite3.Row, query: str) -> bool:
    q = query.lower()
    return any(q in (row[k] or "").lower() for k in ("id", "handle", "name", "cwd"))


def resolve_target(conn: sqlite3.Connection, caller: Caller, target: str, now: float,
                   all_workspaces: bool = False, allow_self: bool = False,
                   include_offline: bool = False) -> sqlite3.Row:
    """Exact id -> exact handle -> the one handle a prefix begins (`s-7e0f`) -> a person's name
    -> exact name -> unambiguous name substring.

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

    row = sessions.get(conn, target)
    if not in_scope(row):
        row = conn.execute("SELECT * FROM sessions WHERE handle = ?", (target,)).fetchone()
    if not in_scope(row) and is_handle_prefix(target):  # `s-7e0f` for the one handle it begins
        begun = conn.execute("SELECT * FROM sessions WHERE lower(handle) LIKE ? ORDER BY handle",
                             (target.lower() + "%",)).fetchall()
        found = [r for r in begun if in_scope(r)]
        if len(found) > 1:
            shown = ", ".join(f"{r['handle']} ({r['name']})" for r in found[:AMBIGUOUS_LIST])
            raise NexusError("id_ambiguous", target, f"it begins {shown}"
                             + (" and more" if len(found) > AMBIGUOUS_LIST else ""),
                             "give more of the handle (`nexus peers --include-offline` lists "
                             "them)", candidates=[r["handle"] for r in found[:AMBIGUOUS_LIST]])
        row = found[0] if found else None
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


def is_handle_prefix(target: str) -> bool:
    """`s-` and 1 to 11 hex digits: the beginning of a session's handle (a name never looks
    like one: identity.check_name)."""
    return re.fullmatch(f"s-[0-9a-f]{{1,{identity.HANDLE_DIGITS - 1}}}", target) is not None


def by_name(rows: list[sqlite3.Row], target: str) -> list[sqlite3.Row]:
    exact = [r for r in rows if r["name"] == target]
    return exact or [r for r in rows if target.lower() in r["name"].lower()]


def near(conn: sqlite3.Connection, caller: Caller, target: str, now: float,
         all_workspaces: bool) -> list[str]:
    """The names and handles closest to a mistyped target, the caller's own aside, as they are
    to be typed: a live session's name, an offline one's handle (a name reaches live sessions
    only)."""
    live = {r["id"] for r in scoped_rows(conn, caller, now, all_workspaces, False)}
    words: dict[str, sqlite3.Row] = {}
    for row in scoped_rows(conn, caller, now, all_workspaces, True):
        if row["id"] == caller.id:
            continue
        words.setdefault(row["name"], row)
        words.setdefault(row["handle"], row)
    close = suggest.nearest(target, words)
    return list(dict.fromkeys(f"`{w if words[w]['id'] in live else words[w]['handle']}`"
                              for w in close))


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
    hint = suggest.phrase(near(conn, caller, target, now, all_workspaces))
    return NexusError("target_not_found", target, f"no session in {scope} matches",
                      (hint + " " if hint else "") + "run `nexus peers --include-offline"
                      + ("" if all_workspaces else " --all-workspaces") + "` and use a handle")
