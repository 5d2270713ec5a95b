"""The reservation tools: reserve (refused, or waiting, on a conflict), release, the list, and the
guard that checks files before a change no hook sees (a shell command, a commit). All of the
paths of one `reserve` are taken together or none. Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import TYPE_CHECKING

from ..core import discovery, events, sessions, shellcmd
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope
from ..core.settings import ASK_MCP_MAX
from ..core.store import inlist
from ..core.text import one_line
from ..core.timefmt import human_duration
from . import leases, marker, patterns
from .patterns import Spec

if TYPE_CHECKING:
    from ..core.sessions import Caller
    from .models import GuardArgs, ReleaseArgs, ReservationsArgs, ReserveArgs

SAFETY_POLL = 2.0  # a waiting reserve looks again this often even when nothing pokes it
SYNTAX = "paths, directories (`src/`) or globs (`*`, `?`, `[...]`, `**`): `nexus man reserve`"


def item(conn: sqlite3.Connection, row: sqlite3.Row, me: str) -> dict:
    holder = sessions.get(conn, row["session_id"])
    return {"id": row["id"], "holder": discovery.peer_ref(holder, row["session_id"]),
            "machine": holder["machine"] if holder is not None else None,
            "root": leases.taken_root(row),
            "pattern": row["pattern"], "exclusive": bool(row["exclusive"]),
            "auto": bool(row["auto"]), "reason": row["reason"],
            "created_at_epoch": row["created_at"], "expires_at_epoch": row["expires_at"],
            "self": row["session_id"] == me}


def specs(raws: list[str], me: Caller, anywhere: bool = False) -> list[Spec]:
    """The normal forms of what a caller typed (relative to its working directory), one per
    distinct pattern; `invalid_argument` naming the one that is not a path. A path outside the
    caller's project (`/`, `..`, another project) is refused unless `anywhere`: it would refuse
    edits in projects whose sessions never see it in their own `reservations`."""
    out: dict[tuple[str, str], Spec] = {}
    cwd = me.cwd or os.getcwd()
    project = os.path.realpath(me.project or cwd)
    for raw in raws:
        try:
            spec = patterns.normalise(raw, cwd, project)
        except ValueError as exc:
            raise NexusError("invalid_argument", raw, str(exc), f"give {SYNTAX}") from None
        if spec.root != project and not anywhere:
            raise NexusError("path_outside_roots", raw, f"{leases.shown(spec.anchor)} is outside "
                             f"your project ({leases.shown(project)}); a reservation there "
                             "refuses edits in other projects", "reserve files inside your "
                             "project, or add --all-workspaces if you mean to reserve there; "
                             "nothing was reserved")
        out.setdefault((spec.root, spec.pattern), spec)
    return list(out.values())


def _holder(conn: sqlite3.Connection, sid: str) -> tuple[str, str]:
    row = sessions.get(conn, sid)
    if row is None:
        return sid, sid
    return f"{one_line(row['name'])} ({row['handle']}){leases.where(row)}", row["handle"]


def conflict(conn: sqlite3.Connection, me: str, clashes: list[tuple[Spec, sqlite3.Row]],
             now: float) -> NexusError:
    lines, found = [], []
    for spec, row in clashes:
        who, _ = _holder(conn, row["session_id"])
        why = f" for {leases.said(row['reason'], 120)}" if row["reason"] else ""
        held = f"{leases.shown(row['pattern'])}, " if row["pattern"] != spec.pattern else ""
        lines.append(f"{leases.shown(spec.pattern)} is held {held}"
                     f"{'exclusively' if row['exclusive'] else 'shared'} by {who} until "
                     f"{leases.until(row['expires_at'], now)}{why}")
        found.append({"path": spec.pattern, "reservation": item(conn, row, me)})
    _, handle = _holder(conn, clashes[0][1]["session_id"])
    nexus = shellcmd.name(conn)
    return NexusError("reservation_conflict", clashes[0][0].pattern, "; ".join(lines),
                      f"wait for it (--wait SECONDS), ask its holder (`{nexus} ask {handle} "
                      "\"...\"`), or pick other work; nothing was reserved", conflicts=found)


def attempt(ctx: Ctx, a: ReserveArgs, waited: float) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        wanted = specs(a.paths, me, a.all_workspaces)
        steps = patterns.budget()  # one budget for the whole reserve: the write lock is held
        try:
            clashes = [(s, r) for s in wanted
                       for r in leases.conflicts(conn, me.id, s, not a.shared, ctx.now, steps)]
        except patterns.TooComplex:
            raise NexusError("invalid_argument", ", ".join(s.pattern for s in wanted)[:200],
                             "too complex to compare with the reservations near it (more than "
                             f"{patterns.OVERLAP_STEPS:,} steps)",
                             "reserve simpler globs (fewer `*`), or the directory; nothing was "
                             "reserved") from None
        if clashes:
            raise conflict(conn, me.id, clashes, ctx.now)
        marker.raise_(ctx.store.root)  # before COMMIT: edits reach the check from now on
        held, renewed = [], []
        for spec in wanted:
            row, what = leases.take(conn, me.id, spec, not a.shared, a.reason, ctx.now, a.ttl)
            held.append(item(conn, row, me.id))
            if what == "renewed":
                renewed.append(row["id"])
        events.record(conn, ctx.now, me.id, "reservation.take", None,
                      patterns=[h["pattern"] for h in held], exclusive=not a.shared, ttl=a.ttl,
                      reason=a.reason)
    return {"reserved": held, "renewed": renewed, "waited_seconds": round(waited, 3)}


def reserve(ctx: Ctx, a: ReserveArgs) -> dict:
    """Take every path or none; with `wait`, wait on the wake channel (and until the earliest
    end of what is in the way) for the conflict to go."""
    wait = min(a.wait, ASK_MCP_MAX) if ctx.face == "mcp" else a.wait
    channel = ctx.store.channel(leases.WAKE) if wait > 0 else None  # before a look
    started = time.monotonic()
    try:
        while True:
            try:
                return attempt(ctx, a, time.monotonic() - started)
            except NexusError as exc:
                waited = time.monotonic() - started
                if exc.code != "reservation_conflict" or channel is None:
                    raise
                if waited >= wait or ctx.cancelled.is_set():
                    raise NexusError(
                        "timeout", exc.key, f"still reserved after {human_duration(waited)}: "
                        f"{exc.reason}", "ask the holder, or try again later; nothing was "
                        "reserved", **exc.details) from None
                found: list[dict] = exc.details["conflicts"]  # type: ignore[assignment]
                ends = min(c["reservation"]["expires_at_epoch"] for c in found)
                if ctx.progress:
                    ctx.progress(f"waiting for {exc.key} to be released", waited)
                step = 0.2 if ctx.progress else SAFETY_POLL
                channel.wait(max(0.0, min(wait - waited, ends - time.time() + 0.01, step)))
                ctx.now = time.time()
    finally:
        if channel is not None:
            channel.close()
            if ctx.progress:
                ctx.progress("", -1)


def held_same(row: sqlite3.Row, spec: Spec) -> bool:
    """Whether another session's reservation is of the path given (or covers that one file)."""
    if (row["root"], row["pattern"]) == (spec.root, spec.pattern):
        return True
    return spec.exact and leases.overlaps(row, spec)


def held_elsewhere(conn: sqlite3.Connection, raw: str, row: sqlite3.Row, me: str,
                   now: float) -> dict:
    """What `release` says of a path another session holds: who, until when, and how it ends."""
    who, handle = _holder(conn, row["session_id"])
    nexus = shellcmd.name(conn)
    return {"path": raw, "reservation": item(conn, row, me),
            "message": f"{leases.shown(row['pattern'])} is held by {who} until "
                       f"{leases.until(row['expires_at'], now)}, not by you: ask it to release it "
                       f"(`{nexus} ask {handle} \"...\"`); the person ends a stale one from a "
                       f"terminal with `{nexus} release --as {handle} --all`"}


def release(ctx: Ctx, a: ReleaseArgs) -> dict:
    if a.all == bool(a.paths):
        raise NexusError("invalid_argument", "paths", "name what to release, or give --all "
                         "(not both)", "`nexus reservations --mine` lists what you hold")
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        gone: list[sqlite3.Row] = []
        not_held: list[str] = []
        others: list[dict] = []
        if a.all:
            gone = leases.release_all(conn, me.id)
        else:
            cwd = me.cwd or os.getcwd()
            for raw in a.paths:
                try:
                    spec = patterns.normalise(raw, cwd, me.project or cwd)
                except ValueError as exc:
                    raise NexusError("invalid_argument", raw, str(exc), f"give {SYNTAX}") from None
                row = leases.release(conn, me.id, spec)
                if row is None:
                    not_held.append(raw)
                    others += [held_elsewhere(conn, raw, r, me.id, ctx.now) for r in
                               leases.near(conn, spec, ctx.now)
                               if r["session_id"] != me.id and held_same(r, spec)]
                elif row["id"] not in [g["id"] for g in gone]:
                    gone.append(row)
        if gone:
            events.record(conn, ctx.now, me.id, "reservation.release", None,
                          patterns=[r["pattern"] for r in gone])
            ctx.wake_later(leases.WAKE)
        released = [item(conn, r, me.id) for r in gone]
        held = [item(conn, r, me.id) for r in leases.held_by(conn, me.id, ctx.now)]
    if gone:
        marker.settle(ctx.store, time.time())
    return {"released": released, "not_held": not_held, "held_by_others": others, "held": held}


def reservations(ctx: Ctx, a: ReservationsArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        if a.mine:
            rows = leases.held_by(conn, me.id, ctx.now)
        else:
            root = None if a.all_workspaces else os.path.realpath(me.project or me.cwd or "/")
            rows = leases.listed(conn, root, ctx.now)
            if root is not None:  # and those anchored above it (or from elsewhere) covering it
                rows = leases.covering_project(conn, root, rows, ctx.now)
        page = [item(conn, r, me.id) for r in rows[a.offset : a.offset + a.limit]]
    return envelope(page, len(rows), a.offset, a.limit)


def staged() -> tuple[str, list[str]]:
    """The repository's top level and the files staged for the commit (a rename as its two
    sides), the way a pre-commit hook sees them (git passes GIT_INDEX_FILE on)."""
    import subprocess

    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True, timeout=60).stdout.strip()
        out = subprocess.run(["git", "diff", "--cached", "--name-only", "-z", "--no-renames"],
                             capture_output=True, check=True, timeout=60, cwd=top).stdout
    except FileNotFoundError:
        raise NexusError("invalid_argument", "--staged", "git is not installed",
                         "name the files instead") from None
    except subprocess.SubprocessError as exc:
        err = getattr(exc, "stderr", b"") or b""
        text = err.decode("utf-8", "replace") if isinstance(err, bytes) else str(err)
        raise NexusError("invalid_argument", "--staged", "git could not list the staged files ("
                         + (one_line(text) or type(exc).__name__) + ")",
                         "run it inside a git repository, or name the files") from None
    return top, [n.decode("utf-8", "surrogateescape") for n in out.split(b"\0") if n]


def guard(ctx: Ctx, a: GuardArgs) -> dict:
    """Which of these files another session holds exclusively: what an edit of them would be
    told. For changes no hook sees: a shell command's files, a commit (`--staged`)."""
    if not a.paths and not a.staged:
        raise NexusError("invalid_argument", "paths", "name the files to check, or give --staged",
                         "e.g. `nexus guard src/parser.py`")
    top, names = staged() if a.staged else ("/", [])
    found = []
    with ctx.read() as conn:
        me = ctx.me(conn)
        cwd = me.cwd or os.getcwd()
        # a named file as a shell command would reach it (through a link, to its target); a
        # staged one as the commit changes it (a link is the link, not its target); each once
        located = list({found[0]: found for found in [
            *(patterns.locate(os.path.join(cwd, p), "/") for p in dict.fromkeys(a.paths)),
            *(patterns.locate(os.path.join(top, n), "/", follow=False) for n in names)]
        }.values())
        anchors = list(dict.fromkeys(x for _, above, _ in located for x in above))
        rows = [r for part in inlist.chunked(anchors)
                for r in leases.under(conn, list(part), ctx.now, [real for real, _, _ in located])]
        nexus = shellcmd.name(conn) if rows else "nexus"
        for real, _, _ in located:
            held = leases.exclusive_holder(conn, me.id, rows, real, ctx.now)
            if held is not None:
                r, name = held
                path = leases.shown_path(r, name)
                via = "" if name == real else leases.shown_path(r, real)
                found.append({"path": via or path, "reservation": item(conn, r, me.id),
                              "message": leases.refusal(conn, path, r, ctx.now, nexus, via)})
    return {"ok": not found, "checked": len(located), "conflicts": found}
