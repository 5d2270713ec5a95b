"""Who is calling. Stdlib only. (Whether a hook event may be believed: core/sessions.py.)

The process tree decides. A command, an MCP server or a hook runs below some client process
(Claude Code, Codex); the nearest one is who it belongs to:

- inside a client that nexus registered, the caller is that client's current session. The
  client's session variables (`CLAUDE_CODE_SESSION_ID`, `CODEX_SESSION_ID`, ...) must name it,
  or a session of a client further up (a nested agent inherits its parent's variables: those
  are ignored); any other name is `impersonation_refused`. `--as` may only name itself.
- inside a client nexus has not registered (its hooks have not run), its own variables name it.
- below no client at all, a process that carries client session variables left its session's
  tree (setsid, a double fork) and is refused; without them it is the person at the shell,
  `user:<login>` (in team mode `user:<login>@<machine>` or the person's team name), who may
  act for another session with `--as` only from an interactive terminal
  (a script or a detached agent cannot reach that)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping, Sequence

from .. import clients
from . import identity, sessions
from .errors import NexusError
from .proctable import Proc, table
from .sessions import Caller, Found, hosted, kind_of, nearest_client


def env_claims(env: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(client, session id, variable) for each client session variable in the environment.
    A value that is not a session id of that client is bad input."""
    out = []
    for name, adapter in clients.ADAPTERS.items():
        for var in adapter.ENV_SESSION:
            value = env.get(var, "")
            if not value:
                continue
            try:
                out.append((name, identity.session_id(name, value), var))
            except NexusError:
                shown = value.encode("utf-8", "backslashreplace").decode()[:80]
                raise NexusError("invalid_input", var, f"{shown!r} is not a {name} session id",
                                 f"unset {var}, or set it to the id of the session") from None
    return out


def hosted_by(conn: sqlite3.Connection, proc: Proc) -> frozenset[str] | None:
    """The sessions a registered client process ran; None when nexus has not registered it."""
    rows = sessions.of_process(conn, proc)
    return hosted(rows) if rows else None


def own_successor(conn: sqlite3.Connection, sid: str, ran: frozenset[str]) -> str:
    """`sid`, or the last of its successors that the same client process ran (`ran`): a
    variable naming a conversation its client has since replaced (/clear) means the new one."""
    seen = {sid}
    while True:
        row = sessions.get(conn, sid)
        if row is None or row["successor"] not in ran or row["successor"] in seen:
            return sid
        sid = row["successor"]
        seen.add(sid)


def further_up(conn: sqlite3.Connection, claim: tuple[str, str, str], chain: Sequence[Proc],
               below: int) -> bool:
    """Whether a claimed session belongs to a client process further up than `below`: a
    variable a nested agent inherited from the agent that started it."""
    client, sid, _ = claim
    for proc in chain[below + 1:]:
        hosted = hosted_by(conn, proc)
        if hosted is not None and sid in hosted:
            return True
        if hosted is None and kind_of(proc) == client:
            return True  # a client nexus has not registered: its variables are its own
    return False


def refuse(claimed: str, reason: str,
           action: str = "a session can only act as itself") -> NexusError:
    return NexusError("impersonation_refused", claimed, reason, action)


def caller_for(conn: sqlite3.Connection, sid: str, source: str, cwd: str,
               row: sqlite3.Row | None = None) -> Caller:
    """A Caller for a known id: its scope is its registered project (or where it stands now).
    `row`: a row already read in this transaction (used when it is that session's)."""
    if row is None or row["id"] != sid:
        row = sessions.get(conn, sid)
    if row is not None and row["project"] and identity.split_id(sid)[0] != identity.USER:
        return Caller(sid, row["cwd"], row["project"], source, row["scope"] or row["project"])
    return standing(conn, sid, cwd, source)


def standing(conn: sqlite3.Connection, sid: str, cwd: str, source: str) -> Caller:
    """A Caller scoped by where it stands now (`cwd`): the person at a shell."""
    root = identity.project_root(cwd)
    return Caller(sid, cwd, root, source, sessions.scope_of(conn, root))


def inside(conn: sqlite3.Connection, now: float, env: Mapping[str, str],
           chain: Sequence[Proc]) -> tuple[str, str, sqlite3.Row | None] | None:
    """(session id, how it was found, its row when read on the way) of the client process this
    one runs below, or None when it runs below no client. Raises when the environment names a
    session that is not it."""
    found = nearest_client(conn, chain, now)
    claims = env_claims(env)
    if found is None:
        if claims:
            client, sid, var = claims[0]
            raise refuse(sid, f"{var} names {sid}, but this process does not run below any "
                         f"{client} process it can see (it left its session's process tree: "
                         "setsid, nohup or a double fork; or the client's sandbox hides it, as "
                         "Codex's workspace-write sandbox does)",
                         "use the nexus MCP tools (read, reply, send), which the client runs "
                         "outside its sandbox, or run nexus from the agent's own shell tool "
                         "with the sandbox off (Codex: sandbox_mode = \"danger-full-access\")")
        return None
    if found.current is not None:
        me = found.current["id"]
        for claim in claims:
            if claim[1] == found.current["id"]:  # the session it runs now
                me = claim[1]
                continue
            if claim[1] in found.hosted:  # one it ran: that one, or what replaced it here
                me = own_successor(conn, claim[1], found.hosted)
                continue
            if further_up(conn, claim, chain, found.depth):
                continue  # inherited from the agent that started this one: not ours, not an error
            raise refuse(claim[1], f"this process runs inside {me} (the {found.client} process "
                         f"{found.proc.pid}), but {claim[2]} names {claim[1]}")
        return me, "ancestry" if not claims else "env", found.current
    # a client nexus has not registered (no hooks ran yet): its own variable names it
    own = [c for c in claims
           if c[0] == found.client and not further_up(conn, c, chain, found.depth)]
    if not own:
        raise NexusError(
            "caller_unknown", f"{found.client} process {found.proc.pid}",
            f"this runs inside a {found.client} session that nexus has not registered (its hooks "
            "have not run)", f"run `nexus install {found.client}`, then restart the client")
    sid = own[0][1]
    not_taken_over(sessions.get(conn, sid), found)
    return sid, "env", None


def not_taken_over(row: sqlite3.Row | None, found: Found) -> None:
    """A session that ran in another client process is not this unregistered one's by its
    variable or `_meta` alone: a client takes a conversation over (a resume) only with its own
    first hook, a SessionStart, which the activity log records (`session.moved`)."""
    if row is None or row["client_pid"] is None or \
            (row["client_pid"], row["client_start"]) == (found.proc.pid, found.proc.start):
        return
    how = "runs" if sessions.client_alive(row) else "ran"
    raise refuse(row["id"], f"{row['id']} {how} in {found.client} process {row['client_pid']}, "
                 f"not in the process {found.proc.pid} this runs below, whose hooks have not run",
                 f"a client takes a conversation over only with its own SessionStart hook: "
                 f"`nexus install {found.client}`, then resume it there")


def at_terminal() -> bool:
    """Whether a person is typing this command: standard input is a terminal and this process is
    in its foreground group (an agent's tool never is, nor a detached process)."""
    try:
        return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


def person_at_terminal(me: object, what: str, key: str) -> None:
    """Acts only the person may do (answering a permission request as the person, turning on a
    security setting) need the person at an interactive terminal, as `--as` does: a process that
    left its agent's tree (setsid, a double fork, `env -i`) otherwise resolves as the person."""
    if getattr(me, "is_agent", False) or at_terminal():
        return
    raise NexusError("impersonation_refused", key,
                     f"{what} as the person needs an interactive terminal with the command in "
                     "its foreground; scripts and detached processes may not",
                     "run it yourself at a terminal")


def person_here(key: str, what: str, agent: str, action: str, at_terminal_action: str) -> None:
    """Acts that are the person's alone (trusting hooks, serving the web board): refused below
    a client process (`agent` says why: an agent's shell or tool) and without an interactive
    terminal with the command in its foreground (`what` needs one: a script, a detached
    process)."""
    if any(p.name in identity.CLIENTS for p in table().ancestors()):
        raise NexusError("people_only", key, agent, action)
    if not at_terminal():
        raise NexusError("people_only", key, f"{what} needs the person at an interactive "
                         "terminal with the command in its foreground; scripts and detached "
                         "processes may not", at_terminal_action)


def lookup_exact(conn: sqlite3.Connection, value: str) -> str:
    """`--as` takes an exact id, handle or name; a user id need not be registered yet."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise NexusError("invalid_argument", "--as", "not valid text",
                         "pass a session id, handle or name") from None
    row = conn.execute(
        "SELECT id FROM sessions WHERE id = ?1 OR handle = ?1 OR name = ?1"
        " ORDER BY (id = ?1) DESC, (handle = ?1) DESC, last_active DESC LIMIT 1",
        (value,),
    ).fetchone()
    if row:
        return row[0]
    if ":" in value:
        return identity.check_id(value)
    raise NexusError("target_not_found", identity.bad_id(value, "").key,
                     "no session has that id, handle or name",
                     "pass an exact id such as claude:<session id>, or a handle from `nexus peers`")


def resolve(conn: sqlite3.Connection, now: float, explicit: str | None = None,
            env: Mapping[str, str] | None = None, cwd: str | None = None,
            chain: Sequence[Proc] | None = None) -> Caller:
    env = os.environ if env is None else env
    cwd = cwd or os.getcwd()
    chain = table().ancestors() if chain is None else chain
    found = inside(conn, now, env, chain)
    if found is not None:
        me, source, row = found
        if explicit:
            wanted = lookup_exact(conn, explicit)
            if me not in (wanted, sessions.follow_successors(conn, wanted)):
                raise refuse(wanted,
                             f"this process runs inside session {me} and may only act as itself",
                             "drop --as; a session can only send, read and reply as itself")
            source = "option"
        return caller_for(conn, me, source, cwd, row)
    person = identity.user_id()
    if explicit:
        wanted = sessions.follow_successors(conn, lookup_exact(conn, explicit))
        if wanted != person and not at_terminal():
            raise refuse(wanted, "acting for another session needs a person at an "
                         "interactive terminal; scripts and agents act only as themselves",
                         f"run it yourself at a terminal, or drop --as to act as {person}")
        return caller_for(conn, wanted, "option", cwd)
    return standing(conn, person, cwd, "user")


# -- over MCP -----------------------------------------------------------------------------------


def from_meta(conn: sqlite3.Connection, meta: Mapping[str, object], now: float,
              ours: frozenset[str] = frozenset()) -> str | None:
    """The session a `tools/call` says it comes from: Claude Code's `claudecode/toolUseId` (bound
    to its session by the PreToolUse hook; of several bindings, the one of a session in `ours`,
    the sessions of the client that started this server), or Codex's `sessionId`/`threadId`."""
    for name, adapter in clients.ADAPTERS.items():
        key = adapter.META_BINDING
        tool_use = meta.get(key) if key else None
        if isinstance(tool_use, str) and tool_use:
            bound = sessions.bound_sessions(conn, tool_use, now)
            if bound:
                return next((s for s in bound if s in ours), bound[0])
        raw = adapter.meta_session(meta)
        if raw:
            return identity.session_id(name, raw)
    return None


def subagent_of(conn: sqlite3.Connection, meta: Mapping[str, object], sid: str) -> str | None:
    """The Claude Code subagent whose tool use this call is (its PreToolUse hook said so)."""
    for adapter in clients.ADAPTERS.values():
        key = adapter.META_BINDING
        tool_use = meta.get(key) if key else None
        if isinstance(tool_use, str) and tool_use:
            return sessions.bound_agent(conn, tool_use, sid)
    return None


def resolve_mcp(conn: sqlite3.Connection, now: float, meta: Mapping[str, object],
                env: Mapping[str, str], chain: Sequence[Proc], cwd: str) -> Caller:
    """The caller of an MCP tool call: the conversation its `_meta` names, which must be one the
    client process that started this server runs; without `_meta`, that client's session. Its
    `tier` is what its client states for the call (`stated_tier`), believed only when the client
    itself started this server: a server an agent started from its shell carries in `_meta`
    what the agent wrote there (its tier is then unknown: the narrowest)."""
    me = _resolve_mcp(conn, now, meta, env, chain, cwd)
    return me._replace(tier=stated_tier(conn, meta, me.id, chain)) if me.is_agent else me


_FED: dict[tuple[int, str], bool] = {}  # (client pid, start): it feeds this server's stdin


def stated_tier(conn: sqlite3.Connection, meta: Mapping[str, object], sid: str,
                chain: Sequence[Proc]) -> str | None:
    """The sandbox tier the calling client states for this tool call, to a server it started
    itself (its parent; none: not stated): Claude Code's permission mode, recorded with the
    call's binding by its PreToolUse hook (the call's own id: no earlier hook could know it);
    Codex's turn sandbox in `_meta`, which whoever writes the requests writes, so it is believed
    only while the client itself holds the pipe they come in by (an agent that `exec`s `nexus
    mcp` from its shell has the client as its parent too, but feeds it itself)."""
    if not chain or kind_of(chain[0]) is None:
        return None
    adapter = identity.adapter(sid)
    tier = adapter.meta_tier(meta)
    if tier is not None:
        client = (chain[0].pid, chain[0].start)
        if client not in _FED:
            _FED[client] = table().feeds_stdin(chain[0].pid)
        return tier if _FED[client] else None
    key = adapter.META_BINDING
    tool_use = meta.get(key) if key else None
    if isinstance(tool_use, str) and tool_use:
        return sessions.bound_tier(conn, tool_use, sid)
    return None


def _resolve_mcp(conn: sqlite3.Connection, now: float, meta: Mapping[str, object],
                 env: Mapping[str, str], chain: Sequence[Proc], cwd: str) -> Caller:
    found = nearest_client(conn, chain, now)
    claimed = from_meta(conn, meta, now, found.hosted if found is not None else frozenset())
    if claimed is not None:
        if found is not None and found.current is not None:
            bound = claimed
            claimed = own_successor(conn, claimed, found.hosted)
            if claimed not in found.hosted:
                raise refuse(claimed, f"this MCP server belongs to {found.current['id']} (the "
                             f"{found.client} process {found.proc.pid}), not to that session")
            return caller_for(conn, claimed, "mcp", cwd, found.current)._replace(
                agent=subagent_of(conn, meta, bound) or "")
        if found is None:
            raise refuse(claimed, "this MCP server runs below no client process, so no call to it "
                         "can act as a session", "start it from Claude Code or Codex")
        not_taken_over(sessions.get(conn, claimed), found)
        return caller_for(conn, claimed, "mcp", cwd)
    me = inside(conn, now, env, chain)
    if me is not None:
        return caller_for(conn, *me[:2], cwd, me[2])
    raise NexusError(
        "caller_unknown", "tools/call",
        "the calling conversation could not be identified (no hook binding, session id or "
        "registered client process)",
        "run `nexus install claude` or `nexus install codex`, then restart the client",
    )
