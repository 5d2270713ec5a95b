"""The edit check: the PreToolUse hook of the clients' file-editing tools. It runs only while a
reservation may be active (the installed command tests the marker first, see marker.py), reads
the store (no write, so it needs no proof of who runs it: it can only refuse its own caller's
edit) and looks each file up by its path and its ancestors: one indexed query. An edit of a file
another session holds exclusively is denied with a reason the model can act on; an edit of a
file nobody holds, or that the caller holds, passes. With `autoReserve` on, an agent's edit of a
file it does not hold yet also takes a shared automatic reservation of it (a write, admitted
like any hook event), and two sessions editing one file are each told of the other.

What each client sends (observed with the pinned versions, contract/hook.json): Claude Code's
Write, Edit (and MultiEdit where it exists) carry `file_path`, NotebookEdit `notebook_path`;
Codex reports its apply_patch tool as `apply_patch` with `{"command": "<the patch>"}`, whose
`*** Add File:`, `*** Update File:`, `*** Delete File:` and `*** Move to:` lines name the files
(relative to the session's cwd). Codex's own parser trims a header line and is lenient, so the
headers are read liberally (padding, tabs, case): a line read as a header that is not one only
costs a lookup. Models without the apply_patch tool (gpt-5) patch through the shell tool,
reported as `Bash` with `{"command": "apply_patch <<'EOF' ... EOF"}` (also `applypatch`, and
after `cd DIR &&`, `cd DIR;`, `pushd DIR`: Codex runs it in DIR, so every directory the command
moves to counts): a shell command that names apply_patch has the
headers of its text checked; any other shell command passes untouched (which files it changes
cannot be known: `nexus guard` and the commit guard cover them). Stdlib only."""

from __future__ import annotations

import os
import re
import sqlite3

from .. import clients
from ..core import identity, sessions, shellcmd
from ..core.proctable import table
from ..core.store.db import Store
from ..core.text import one_line
from ..messages import mailbox
from . import leases, marker, patterns

# tool name -> the key of its one path (None: a patch naming its files inside; SHELL: a shell
# command, checked only when it runs apply_patch)
SHELL = "shell"
TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
         "NotebookEdit": "notebook_path", "apply_patch": None, "Bash": SHELL}
# a patch's file header, as liberally as a lenient parser could take it: `*** Update File: x`,
# padded, tabbed, any case; `*** Move to: x` too
HEADER = re.compile(r"\s*\*{2,}\s*(?:(?:add|update|delete)\s*file|move\s*to)\s*:(.*)",
                    re.IGNORECASE)
# how a shell command runs a patch: the apply_patch command (Codex puts it on the PATH of its
# shell), in the directory the commands before it moved to (`cd DIR &&`, `cd DIR;`, `pushd DIR`,
# on a line of its own...: Codex applies the patch in the shell's current directory)
APPLY = re.compile(r"(?<![\w.-])(?:apply_patch|applypatch)(?![\w.-])")
# a cd, pushd or popd where a command starts (a line, or after ; & | ( { and the words that
# begin a compound command's body), with its arguments up to the end of that simple command
DIRCMD = re.compile(r"(?:^|[;&|({]|\b(?:then|do|else|elif)\b)\s*(cd|pushd|popd)(?![\w.-])"
                    r"((?:[^;&|()\n'\"]|'[^'\n]*'|\"[^\"\n]*\")*)", re.MULTILINE)
AUTO_REASON = "automatic: editing it"
QUIET = (None, 0, None)


def paths(data: dict) -> list[str]:
    """The files a tool call would change, as the client wrote them."""
    given = data.get("tool_input")
    if not isinstance(given, dict):
        return []
    key = TOOLS.get(data.get("tool_name") or "")
    if key == SHELL:
        return shell_paths(given)
    if key:
        value = given.get(key)
        return [value] if isinstance(value, str) and value.strip() and "\x00" not in value else []
    text = next((given[k] for k in ("command", "patch", "input") if isinstance(given.get(k), str)),
                "")
    return headers(text)


def headers(text: str) -> list[str]:
    """The files a patch's header lines name. A name is taken trimmed and, where it differs, as
    Codex takes it (only the one space after the colon removed): either could be the file."""
    out: list[str] = []
    # Codex splits at `\n` alone (a `\v` or `\x1c` inside a line is part of a name); Python's
    # lines also break at those: either could be how the patch is read
    for line in [*text.split("\n"), *text.splitlines()]:
        found = HEADER.match(line)
        if found is None:
            continue
        rest = found.group(1).rstrip()
        for name in (rest.strip(), rest[1:] if rest[:1] in " \t" else rest):
            if name.strip() and name not in out and "\x00" not in name:
                out.append(name)
    return out


def shell_paths(given: dict) -> list[str]:
    """The files a shell command patches when it runs apply_patch (a heredoc, or the patch as an
    argument), relative to the directory it runs in: its `workdir`, and a `cd DIR &&` before the
    patch. Any other command: none (its files cannot be known)."""
    command = given.get("command")
    if isinstance(command, list):
        command = "\n".join(c for c in command if isinstance(c, str))
    if not isinstance(command, str) or APPLY.search(command) is None:
        return []
    names = headers(command)
    if not names:
        return []
    workdir = given.get("workdir")
    bases = directories(command, workdir if isinstance(workdir, str) and workdir.strip() else "")
    out: list[str] = []
    for base in bases:
        for name in names:
            path = os.path.join(base, name) if base else name
            if path not in out and "\x00" not in path:
                out.append(path)
    return out


def directories(command: str, start: str) -> list[str]:
    """Every directory a shell command could be in where it runs a patch: where it starts, and
    each one its `cd`, `pushd` and `popd` commands lead to, in order (relative ones from the one
    before; "" is the session's cwd). Each could be the one: a file is checked in all of them,
    which costs a lookup each, never a missed conflict."""
    import shlex

    here, seen = start, [start]
    stack: list[str] = []
    for found in DIRCMD.finditer(command):
        verb = found.group(1)
        try:
            words = [w for w in shlex.split(found.group(2)) if not w.startswith(("-", "+"))
                     or w == "-"]
        except ValueError:  # an unclosed quote: the command fails, nothing is patched there
            continue
        if verb == "popd":
            here = stack.pop() if stack else here
        else:
            target = words[0] if words else "~"
            if target == "-":
                target = stack[-1] if stack else start
            if verb == "pushd":
                stack.append(here)
            here = os.path.join(here, os.path.expanduser(target))
        if here not in seen:
            seen.append(here)
    return seen


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
    files = paths(data)
    if not files or not (store.check_dir() and store.check_file()):
        return QUIET
    cwd = data.get("cwd") or os.getcwd()
    located = [patterns.locate(f, cwd) for f in files]
    anchors = list(dict.fromkeys(a for _, found, _ in located for a in found))
    with store.read() as conn:
        rows = leases.under(conn, anchors, now, [real for real, _, _ in located])
        refused = refusals(conn, sid, located, rows, now)
        idle = not rows and not leases.any_active(conn, now)
    if refused:
        return deny("[nexus] " + "\n".join(refused)), 0, None
    ttl = marker.auto_reserve(store.root)
    if ttl:
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
    chain = table().ancestors()
    proc = clients.ADAPTERS[client].hook_client(chain, env)
    told: list[str] = []
    with store.write() as conn:
        me = sessions.get(conn, sid)
        sessions.admit_hook(conn, sid, "PreToolUse", client, proc, chain, now, me)
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
