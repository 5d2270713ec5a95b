"""The edit check: the PreToolUse hook of the clients' file-editing tools. It runs only while a
reservation may be active (the installed command tests the marker first, see marker.py), reads
the store (no write, so it needs no proof of who runs it: it can only refuse its own caller's
edit) and looks each file up by its path and its ancestors: one indexed query. An edit of a file
another session holds exclusively is denied with a reason the model can act on; an edit of a
file nobody holds, or that the caller holds, passes. With `autoReserve` on, an agent's edit of a
file it does not hold yet (with a file-editing tool, not the shell) also takes a shared automatic
reservation of it (a write, admitted like any hook event), and two sessions editing one file are
each told of the other.

What each client sends (observed with the pinned versions, contract/hook.json): Claude Code's
Write, Edit (and MultiEdit where it exists) carry `file_path`, NotebookEdit `notebook_path`;
Codex reports its apply_patch tool as `apply_patch` with `{"command": "<the patch>"}`, whose
header lines name the files (patchnames.py). Both report their shell tool as `Bash` with
`{"command": "..."}` (Codex may add a `workdir`): the files the command visibly writes are
checked (shellwrites.py: redirections, tee, sed -i, cp/mv, apply_patch, editors, after cd, env
-C, bash -c ...); a file it writes that nexus cannot name is a write anywhere under the deepest
directory it can (fail closed). A program that writes a file itself is not seen: `nexus guard`
and the commit guard cover it. Stdlib only."""

from __future__ import annotations

import os
import sqlite3

from .. import clients
from ..core import identity, sessions, shellcmd
from ..core.proctable import table
from ..core.store.db import Store
from ..core.text import one_line
from ..messages import mailbox
from . import leases, marker, patchnames, patterns, shellwrites

# tool name -> the key of its one path (None: a patch naming its files inside; SHELL: a shell
# command, read for the files it writes)
SHELL = "shell"
TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
         "NotebookEdit": "notebook_path", "apply_patch": None, "Bash": SHELL}
AUTO_REASON = "automatic: editing it"
QUIET = (None, 0, None)


def targets(data: dict, cwd: str) -> list[tuple[str, bool]]:
    """What a tool call would change, as (path, tree) pairs: `tree` when it is some file under
    that directory that nexus cannot name (a shell command's); paths as the client wrote them,
    relative to `cwd`."""
    given = data.get("tool_input")
    if not isinstance(given, dict):
        return []
    key = TOOLS.get(data.get("tool_name") or "")
    if key == SHELL:
        workdir = given.get("workdir")
        if isinstance(workdir, str) and workdir.strip() and "\x00" not in workdir:
            cwd = os.path.join(cwd, workdir)
        return shellwrites.writes(given.get("command"), cwd)
    if key:
        value = given.get(key)
        ok = isinstance(value, str) and value.strip() and "\x00" not in value
        return [(value, False)] if ok else []  # type: ignore[list-item]
    text = next((given[k] for k in ("command", "patch", "input") if isinstance(given.get(k), str)),
                "")
    return [(name, False) for name in patchnames.headers(text)]


def deny(text: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": text}}


def refusals(conn: sqlite3.Connection, sid: str, located: list[tuple[str, list[str], bool]],
             rows: list[sqlite3.Row], now: float) -> list[str]:
    """One line per file another session holds exclusively (the first holder found), by its
    path or under another hard link of it."""
    out = []
    nexus = None
    for real, _, _ in located:
        held = leases.exclusive_holder(conn, sid, rows, real, now)
        if held is not None:
            r, name = held
            nexus = nexus or shellcmd.name(conn)
            out.append(leases.refusal(conn, leases.shown_path(r, name), r, now, nexus,
                                      via="" if name == real else leases.shown_path(r, real)))
    return out


def below(conn: sqlite3.Connection, sid: str, trees: list[str], now: float,
          told: set[str]) -> list[str]:
    """One line per reservation of another session, held exclusively, of a file under one of
    these (real) directories: a shell command writes there a file nexus cannot name."""
    out = []
    nexus = None
    for d in trees:
        try:
            spec = patterns.normalise(patterns.escape(d) + "/", "/", d)
        except ValueError:
            continue
        try:
            rows = leases.conflicts(conn, sid, spec, False, now, patterns.budget())
        except patterns.TooComplex:  # too complex to decide: each one there may be it
            rows = [r for r in leases.near(conn, spec, now) if r["session_id"] != sid and
                    r["exclusive"]]
        for r in rows:
            if r["id"] in told:
                continue
            told.add(r["id"])
            nexus = nexus or shellcmd.name(conn)
            path = leases.shown_path(r, d if not r["exact"] else r["anchor"])
            where = leases.shown(leases.shown_path(r, d).rstrip("/") or ".")
            out.append(leases.refusal(conn, path, r, now, nexus) + f" (this command writes "
                       f"under {where}/ a file nexus cannot name: name the files it writes "
                       "plainly)")
    return out


def held(conn: sqlite3.Connection, sid: str, files: list[str], now: float) -> list[str]:
    """What another session holds exclusively of these (absolute) files, one refusal line each:
    for edits no hook sees, such as `fs_write`."""
    located = [patterns.locate(f, "/") for f in files]
    anchors = list(dict.fromkeys(a for _, found, _ in located for a in found))
    rows = leases.under(conn, anchors, now, [real for real, _, _ in located])
    return refusals(conn, sid, located, rows, now)


def pre_edit(client: str, sid: str, data: dict, store: Store, env: dict | os._Environ,
             now: float) -> tuple:
    """The hook's reply to one file-editing tool call: (stdout JSON, exit code, stderr)."""
    cwd = data.get("cwd") or os.getcwd()
    wanted = targets(data, cwd)
    if not wanted or not (store.check_dir() and store.check_file()):
        return QUIET
    located = [patterns.locate(f, cwd) for f, _ in wanted]
    trees = list(dict.fromkeys(located[i][0] for i, (_, tree) in enumerate(wanted) if tree))
    anchors = list(dict.fromkeys(a for _, found, _ in located for a in found))
    with store.read() as conn:
        rows = leases.under(conn, anchors, now, [real for real, _, _ in located])
        refused = refusals(conn, sid, located, rows, now)
        if trees:
            told = {r["id"] for r in rows}
            refused += below(conn, sid, trees, now, told)
        idle = not rows and not leases.any_active(conn, now)
    if refused:
        return deny("[nexus] " + "\n".join(refused)), 0, None
    ttl = marker.auto_reserve(store.root)
    if ttl and TOOLS.get(data.get("tool_name") or "") != SHELL:  # a shell's files: not its own
        return auto_reserve(client, sid, located, rows, store, env, now, float(ttl))
    if idle:  # the marker outlived the last reservation: lower it, edits skip Python again
        marker.settle(store, now)
    return QUIET


def auto_reserve(client: str, sid: str, located: list[tuple[str, list[str], bool]],
                 rows: list[sqlite3.Row], store: Store, env: dict | os._Environ, now: float,
                 ttl: float) -> tuple:
    """autoReserve: a shared automatic reservation of each edited file the session does not hold
    yet (renewed when half its time has passed), and a notice to each side when another session
    holds the file too. A write: admitted like every hook event (only the session's own client
    process may take reservations for it)."""
    need = []
    for real, _, _ in located:
        mine = [r for r in leases.covering(rows, real) if r["session_id"] == sid]
        if not any(not r["auto"] or r["expires_at"] - now > ttl / 2 for r in mine):
            need.append(real)
    if not need:
        return QUIET
    proc = clients.ADAPTERS[client].hook_client(table().climb(), env)
    told: list[str] = []
    with store.write() as conn:
        me = sessions.get(conn, sid)
        sessions.admit_hook(conn, sid, "PreToolUse", client, proc, now, me)
        if me is None:
            return QUIET  # a conversation nexus has not seen start: nothing to hold it for
        marker.raise_(store.root)
        for real in need:
            spec = patterns.normalise(patterns.escape(real), "/", me["project"] or real)
            if leases.conflicts(conn, sid, spec, False, now):
                continue  # taken exclusively meanwhile: the next edit is refused
            others = [r for r in leases.near(conn, spec, now)
                      if r["session_id"] != sid and leases.overlaps(r, spec)]
            _, what = leases.take(conn, sid, spec, False, AUTO_REASON, now, ttl, auto=True)
            if what == "taken" and others:
                told += tell(conn, me, spec, others, now)
    store.poke(told)
    return QUIET


def tell(conn: sqlite3.Connection, me: sqlite3.Row, spec: patterns.Spec,
         others: list[sqlite3.Row], now: float) -> list[str]:
    """Two sessions editing one file learn of each other: a notice to each. Returns whom to wake."""
    nexus = shellcmd.name(conn)
    path = leases.shown(spec.pattern)
    holders: list[sqlite3.Row] = []
    for r in others:
        row = sessions.get(conn, r["session_id"])
        if row is not None and r["session_id"] not in [h["id"] for h in holders]:
            holders.append(row)
    if not holders:
        return []
    names = ", ".join(f"{one_line(h['name'])} ({h['handle']})" for h in holders)
    mailbox.notice(conn, me["id"], f"{path} is being edited by {names} too: agree who does what "
                   f"(`{nexus} send {holders[0]['handle']} \"...\"`), or `{nexus} reserve "
                   f"{path}` once it is yours alone.", now)
    for h in holders:
        if identity.split_id(h["id"])[0] == identity.USER:
            continue
        mailbox.notice(conn, h["id"], f"{one_line(me['name'])} ({me['handle']}) started editing "
                       f"{path}, which you hold too: agree who does what (`{nexus} send "
                       f"{me['handle']} \"...\"`).", now, by=me["id"])
    return [me["id"], *(h["id"] for h in holders)]
