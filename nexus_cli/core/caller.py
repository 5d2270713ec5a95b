"""Who is calling a command: an explicit `--as`, the client's environment, the process
ancestry (a registered client pid above us), else the shell user. Stdlib only."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping

from .. import clients
from . import identity, sessions
from .errors import NexusError
from .proctable import table
from .sessions import Caller


def from_env(env: Mapping[str, str]) -> str | None:
    for client, value in clients.env_claims(env):
        if value.strip():
            return identity.session_id(client, value.strip())
    return None


def from_ancestry(conn: sqlite3.Connection, now: float, pid: int | None = None) -> str | None:
    """The live session whose client process is our nearest ancestor."""
    for ancestor in table().ancestors(pid):
        found = sessions.live_of_client_pid(conn, ancestor.pid, now)
        if found:
            return found
    return None


def caller_for(conn: sqlite3.Connection, sid: str, source: str, cwd: str) -> Caller:
    """A Caller for a known id: its scope is its registered project (or where it stands now)."""
    row = sessions.get(conn, sid)
    if row is not None and row["project"] and identity.split_id(sid)[0] != identity.USER:
        return Caller(sid, row["cwd"], row["project"], source)
    return Caller(sid, cwd, identity.project_root(cwd), source)


def lookup_exact(conn: sqlite3.Connection, value: str) -> str:
    """`--as` takes an exact id, handle or name; a user id need not be registered yet."""
    row = conn.execute(
        "SELECT id FROM sessions WHERE id = ?1 OR handle = ?1 OR name = ?1"
        " ORDER BY (id = ?1) DESC, (handle = ?1) DESC, last_active DESC LIMIT 1",
        (value,),
    ).fetchone()
    if row:
        return row[0]
    client, rest = identity.split_id(value)
    if client in (*identity.CLIENTS, identity.USER) and rest:
        return value
    raise NexusError("target_not_found", value, "no session has that id, handle or name",
                     "pass an exact id such as claude:<session id>, or a handle from `nexus peers`")


def resolve(conn: sqlite3.Connection, now: float, explicit: str | None = None,
            env: Mapping[str, str] | None = None, cwd: str | None = None) -> Caller:
    env = os.environ if env is None else env
    cwd = cwd or os.getcwd()
    detected, source = from_env(env), "env"
    if detected is None:
        detected, source = from_ancestry(conn, now), "ancestry"
    if detected is not None:
        detected = sessions.follow_successors(conn, detected)
    if explicit:
        wanted = sessions.follow_successors(conn, lookup_exact(conn, explicit))
        if detected is not None and wanted != detected:
            raise NexusError(
                "impersonation_refused", explicit,
                f"this process runs inside session {detected} and may only act as itself",
                "drop --as; a session can only send, read and reply as itself",
            )
        return caller_for(conn, wanted, "option", cwd)
    if detected is not None:
        return caller_for(conn, detected, source, cwd)
    return Caller(identity.user_id(), cwd, identity.project_root(cwd), "user")


# -- over MCP -----------------------------------------------------------------------------------

def from_meta(conn: sqlite3.Connection, meta: Mapping[str, object], now: float) -> str | None:
    """The session a `tools/call` says it comes from: Claude Code's `claudecode/toolUseId` (bound
    to its session by the PreToolUse hook), or Codex's `sessionId`/`threadId`."""
    for name, adapter in clients.ADAPTERS.items():
        key = adapter.META_BINDING
        tool_use = meta.get(key) if key else None
        if isinstance(tool_use, str) and tool_use:
            found = sessions.bound_session(conn, tool_use, now)
            if found:
                return found
        raw = adapter.meta_session(meta)
        if raw:
            return identity.session_id(name, raw)
    return None


def anchors(conn: sqlite3.Connection, env: Mapping[str, str], pids: list[int]) -> set[str]:
    """The sessions this process can prove it belongs to: its environment's session (and that
    one's successors) and every session whose client process is one of its ancestors."""
    found: set[str] = set()
    env_id = from_env(env)
    if env_id:
        found.add(sessions.follow_successors(conn, env_id))
    found |= {r["id"] for r in sessions.by_client_pids(conn, pids)}
    return found


def resolve_mcp(conn: sqlite3.Connection, now: float, meta: Mapping[str, object],
                env: Mapping[str, str], pids: list[int], cwd: str) -> Caller:
    """The caller of an MCP tool call. `_meta` names it; a claim that contradicts what the server
    process itself belongs to is refused, so no call can act as another session."""
    claimed = from_meta(conn, meta, now)
    known = anchors(conn, env, pids)
    if claimed is not None:
        claimed = sessions.follow_successors(conn, claimed)
        if known and claimed not in known:
            raise NexusError(
                "impersonation_refused", claimed,
                f"this MCP server belongs to {', '.join(sorted(known))}, not to that session",
                "a session can only act as itself",
            )
        return caller_for(conn, claimed, "mcp", cwd)
    env_id = from_env(env)
    if env_id:
        return caller_for(conn, sessions.follow_successors(conn, env_id), "env", cwd)
    detected = from_ancestry(conn, now, os.getpid())
    if detected:
        return caller_for(conn, detected, "ancestry", cwd)
    raise NexusError(
        "caller_unknown", "tools/call",
        "the calling conversation could not be identified (no hook binding, session id or "
        "registered client process)",
        "run `nexus install claude` or `nexus install codex`, then restart the client",
    )
