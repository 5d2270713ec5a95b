"""Owner of the `reservations` table: every reservation is taken, renewed, looked up, moved and
ended through these functions. A row is live until `expires_at`; ending one deletes it (the
event log keeps the history). Exclusive conflicts with anything another session holds; shared
conflicts with another session's exclusive; a session never conflicts with itself. Stdlib only
(the PreToolUse hook looks files up here).

Whoever waits for a reservation to end (`reserve --wait`) listens on the wake channel WAKE; every
write that ends reservations pokes it after COMMIT (an expiry is foreseen by the waiter itself,
which wakes at the earliest `expires_at` in its way).

Across machines (team mode) one project sits at a different path on each machine: a row also
keeps its project's `scope` (sessions.scope_of: the normalised git remote) and its `place` (the
anchor relative to the root). A file is covered by the rows of its own root (the indexed anchor
lookup, as locally) and by the rows of the same scope taken at another root, which `elsewhere`
reads by (scope, place) and hands back as if taken at this root (`localise`). On the local store
the scope is the root itself: nothing more is read."""

from __future__ import annotations

import os
import sqlite3
import stat
import time

from ..core import availability, identity, sessions
from ..core.store import policy
from ..core.text import one_line, party, token, visible
from . import patterns
from .patterns import Spec

WAKE = "nexus:reservations"  # the wake channel of everyone waiting for a reservation to end
LIVE = "expires_at > :now"

# team mode (core/store/policy.py): everyone sees every reservation (that is what stops an edit);
# one is taken, changed and released by its session's own role; anyone may clear one that has
# ended by the server's clock or whose session is gone (offline, or never there)
TEAM_TABLES = {"reservations": policy.Table(
    read=policy.TEAM, insert=policy.own("session_id"), update=policy.own("session_id"),
    delete=policy.either(policy.own("session_id"), "expires_at <= extract(epoch FROM now())",
                         "NOT EXISTS (SELECT 1 FROM sessions AS s WHERE s.id ="
                         " reservations.session_id AND s.status <> 'offline')"))}


def new_id() -> str:
    return "r-" + os.urandom(6).hex()


def get(conn: sqlite3.Connection, rid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM reservations WHERE id = ?", (rid,)).fetchone()


def any_active(conn: sqlite3.Connection, now: float) -> bool:
    return conn.execute(f"SELECT 1 FROM reservations WHERE {LIVE} LIMIT 1",
                        {"now": now}).fetchone() is not None


def under(conn: sqlite3.Connection, anchors: list[str], now: float,
          reals: list[str] | None = None) -> list:
    """The live reservations anchored at any of `anchors` (a file's path and its ancestors): the
    one indexed lookup of the edit check. With `reals` (the files), only those naming one of
    them: the candidates are read lean (four columns, plain tuples) and only the few that match
    are read whole, so a thousand globs in one directory cost little more than none."""
    marks = ",".join("?" * len(anchors))
    if reals is None:
        return conn.execute(f"SELECT * FROM reservations WHERE anchor IN ({marks}) AND "
                            "expires_at > ?", (*anchors, now)).fetchall()
    if sessions.in_team(conn):
        return [*_under(conn, marks, anchors, now, reals), *elsewhere(conn, reals, now)]
    return _under(conn, marks, anchors, now, reals)


def _under(conn: sqlite3.Connection, marks: str, anchors: list[str], now: float,
           reals: list[str]) -> list[sqlite3.Row]:
    cur = conn.cursor()
    cur.row_factory = None
    lean = cur.execute(f"SELECT id, root, pattern, folded FROM reservations WHERE anchor IN "
                       f"({marks}) AND expires_at > ?", (*anchors, now)).fetchall()
    hits = sorted({rid for real in reals for rid in _naming(lean, real)})
    if not hits:
        return []
    return conn.execute(f"SELECT * FROM reservations WHERE id IN ({','.join('?' * len(hits))})"
                        " ORDER BY created_at, id", hits).fetchall()


def _naming(lean: list[tuple], real: str) -> list[str]:
    """The ids of (id, root, pattern, folded) candidates that name the file `real`: the
    path relative to each root is cut once, and a pattern whose literal head the path does not
    start with is ruled out before it is parsed (a thousand globs in one directory)."""
    rels: dict[str, str | None] = {}
    return [row[0] for row in lean if _names(row[1:], real, rels)]


def _names(row: tuple, real: str, rels: dict[str, str | None]) -> bool:
    root, pattern, folded = row
    if folded:
        return patterns.matches(root, pattern, True, real)
    rel = rels.get(root, "")
    if rel == "":
        base = root.rstrip("/") + "/"
        rel = rels[root] = real[len(base):] if real.startswith(base) else None
    if rel is None:
        return False
    first = patterns.SPECIAL.search(pattern)
    if first is None:
        return rel == pattern
    return rel.startswith(pattern[: first.start()]) and \
        patterns.matches(root, pattern, False, real)


def place(root: str, anchor: str) -> str:
    """An anchor relative to its root ("" for the root itself)."""
    base = root.rstrip("/") + "/"
    return anchor[len(base):] if len(anchor) >= len(base) else ""


def taken_root(row: sqlite3.Row | dict) -> str:
    """The root a reservation was taken at (on its holder's machine)."""
    return row["taken_at"] if isinstance(row, dict) else row["root"]


def where(holder: sqlite3.Row) -> str:
    """` on <machine>` when a holder's session runs on another machine (team mode), else ""."""
    from ..core.proctable import machine

    there = holder["machine"]
    return f" on {one_line(there)}" if there and there != machine() else ""


def localise(row: sqlite3.Row, root: str) -> dict:
    """A reservation taken in another clone of the project, as if taken at `root` (this
    machine's clone): its `root` and `anchor` rewritten, where it was taken kept in `taken_at`."""
    out = dict(zip(row.keys(), row, strict=True))
    out["taken_at"] = row["root"]
    out["root"] = root
    spot = os.path.join(root, row["place"]) if row["place"] else root
    out["anchor"] = spot.lower() if row["folded"] else spot
    return out


def _project(real: str, seen: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """(the real root of the project holding `real`, its scope in team mode)."""
    folder = os.path.dirname(real)
    if folder not in seen:
        root = os.path.realpath(identity.project_root(folder))
        seen[folder] = (root, identity.scope_of(root, True))
    return seen[folder]


def elsewhere(conn: sqlite3.Connection, reals: list[str], now: float) -> list[dict]:
    """Team mode: the live reservations of these files' projects taken in another clone (the same
    scope, another root: another machine, or another checkout), localised to this clone; those
    naming none of the files are left out. Nothing on the local store (the scope is the root)."""
    if not sessions.in_team(conn):
        return []
    seen: dict[str, tuple[str, str]] = {}
    wanted: dict[tuple[str, str], list[str]] = {}
    for real in reals:
        root, scope = _project(real, seen)
        if scope == root:
            continue
        base = root.rstrip("/") + "/"
        if not real.startswith(base):
            continue
        rel = real[len(base):]
        spots = wanted.setdefault((scope, root), [])
        for a in patterns.ancestors("/" + rel):
            for spot in dict.fromkeys((a[1:], a[1:].lower())):
                if spot not in spots:
                    spots.append(spot)
    out: dict[str, dict] = {}
    for (scope, root), spots in wanted.items():
        marks = ",".join("?" * len(spots))
        for row in conn.execute(f"SELECT * FROM reservations WHERE scope = ? AND root != ? AND"
                                f" place IN ({marks}) AND expires_at > ?",
                                (scope, root, *spots, now)).fetchall():
            here = localise(row, root)
            if any(patterns.matches(root, here["pattern"], bool(here["folded"]), real)
                   for real in reals):
                out.setdefault(here["id"], here)
    return sorted(out.values(), key=lambda r: (r["created_at"], r["id"]))


def exclusive_holder(conn: sqlite3.Connection, sid: str, rows: list[sqlite3.Row], real: str,
                     now: float) -> tuple[sqlite3.Row, str] | None:
    """The first exclusive reservation of another session that holds the file `real` (of `rows`,
    found by its path, else under another hard link of it), and the name it holds it by."""
    for r in covering(rows, real):
        if r["session_id"] != sid and r["exclusive"]:
            return r, real
    for name, r in linked(conn, sid, real, now):
        return r, name
    return None


def covering(rows: list[sqlite3.Row], real: str) -> list[sqlite3.Row]:
    """Of `rows`, those that name the file at the real path `real`."""
    return [r for r in rows if patterns.matches(r["root"], r["pattern"], bool(r["folded"]), real)]


# a file with several hard links is one file under several names: its other names are looked
# for among the files other sessions hold exclusively, at most this many directory entries
LINK_SCAN = 20_000


def linked(conn: sqlite3.Connection, sid: str, real: str,
           now: float) -> list[tuple[str, sqlite3.Row]]:
    """(the reserved name, the reservation) of each exclusive reservation of another session
    that holds the file at `real` under another name: a hard link is the same file (device and
    inode), however it is spelt. Nothing to do (no query) for a file with one link."""
    try:
        st = os.stat(real)
    except OSError:
        return []
    if not stat.S_ISREG(st.st_mode) or st.st_nlink < 2:
        return []
    rows = conn.execute(f"SELECT * FROM reservations WHERE {LIVE} AND exclusive = 1 AND"
                        " session_id != :me ORDER BY created_at", {"now": now, "me": sid}
                        ).fetchall()
    budget = [LINK_SCAN]
    out = []
    for row in rows:
        for name in _same_file(row["anchor"], bool(row["exact"]), st, budget):
            if name != real and patterns.matches(row["root"], row["pattern"], bool(row["folded"]),
                                                 name):
                out.append((name, row))
                break
    return out



def _same_file(anchor: str, exact: bool, st: os.stat_result, budget: list[int]) -> list[str]:
    """The names under `anchor` (the file itself, when `exact`) of the file `st` is."""
    if exact:
        try:
            return [anchor] if os.path.samestat(os.stat(anchor), st) else []
        except OSError:
            return []
    found, folders = [], [anchor]
    while folders and budget[0] > 0:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            budget[0] -= 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif entry.inode() == st.st_ino and \
                        os.path.samestat(entry.stat(follow_symlinks=False), st):
                    found.append(entry.path)
            except OSError:
                continue
    return found


def near(conn: sqlite3.Connection, spec: Spec, now: float) -> list[sqlite3.Row]:
    """Live reservations that could overlap `spec`: anchored at its anchor, above it or below."""
    above = patterns.ancestors(spec.anchor)
    prefix = spec.anchor.rstrip("/") + "/"
    marks = ",".join("?" * len(above))
    # below it: a range of bytes ("/" + 1 is "0"): text compares byte by byte in both stores
    # (SQLite's BINARY; a team database's text columns are all "C": migration 22)
    rows = conn.execute(
        f"SELECT * FROM reservations WHERE expires_at > ? AND (anchor IN ({marks})"
        " OR (anchor >= ? AND anchor < ?))",
        (now, *above, prefix, prefix[:-1] + "0")).fetchall()
    if not sessions.in_team(conn):
        return rows
    return [*rows, *near_elsewhere(conn, spec, now)]


def near_elsewhere(conn: sqlite3.Connection, spec: Spec, now: float) -> list[dict]:
    """Team mode: `near` in the other clones of the spec's project (the same scope, another
    root), localised to the spec's root."""
    scope = identity.scope_of(spec.root, True)
    if scope == spec.root:
        return []
    spot = place(spec.root, spec.anchor)
    above = [a[1:] for a in patterns.ancestors("/" + spot)] if spot else [""]
    prefix = spot + "/" if spot else ""
    marks = ",".join("?" * len(above))
    # below it: compared by its head, not by a range (a team database's collation need not
    # order `/` as bytes do); the scope's index narrows the rows first
    below = " OR substr(place, 1, ?) = ?" if prefix else " OR place != ''"
    params = (len(prefix), prefix) if prefix else ()
    rows = conn.execute(
        f"SELECT * FROM reservations WHERE scope = ? AND root != ? AND expires_at > ? AND"
        f" (place IN ({marks}){below})", (scope, spec.root, now, *above, *params)).fetchall()
    return [localise(r, spec.root) for r in rows]


def overlaps(row: sqlite3.Row, spec: Spec, steps: list[int] | None = None) -> bool:
    """Whether a reservation and a spec can name one file; two globs spend `steps` (see
    patterns.overlap: TooComplex when they run out)."""
    folded = spec.folded or bool(row["folded"])
    if row["exact"] and spec.exact:
        return (row["anchor"].lower() == spec.anchor.lower()) if folded else \
            row["anchor"] == spec.anchor
    if spec.exact:
        return patterns.matches(row["root"], row["pattern"], folded, spec.anchor)
    if row["exact"]:
        return patterns.matches(spec.root, spec.pattern, folded, row["anchor"])
    a = patterns.absolute(row["root"], row["pattern"])
    b = patterns.absolute(spec.root, spec.pattern)
    if folded:
        a, b = a.lower(), b.lower()
    return patterns.overlap(a, b, steps) is not None


def conflicts(conn: sqlite3.Connection, sid: str, spec: Spec, exclusive: bool,
              now: float, steps: list[int] | None = None) -> list[sqlite3.Row]:
    """Other sessions' live reservations that forbid `sid` holding `spec` (exclusive or not).
    Deciding them spends `steps` (patterns.TooComplex when they run out)."""
    return [r for r in near(conn, spec, now) if r["session_id"] != sid and
            (exclusive or r["exclusive"]) and overlaps(r, spec, steps)]


def own(conn: sqlite3.Connection, sid: str, spec: Spec) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM reservations WHERE session_id = ? AND root = ? AND"
                        " pattern = ?", (sid, spec.root, spec.pattern)).fetchone()


def take(conn: sqlite3.Connection, sid: str, spec: Spec, exclusive: bool, reason: str,
         now: float, ttl: float, auto: bool = False) -> tuple[sqlite3.Row, str]:
    """Hold `spec` (conflicts checked by the caller, in the same transaction). An existing
    reservation of the same pattern is renewed and takes the new kind and reason; an automatic
    one never replaces an explicit one. Returns the row and what happened (taken, renewed)."""
    mine = own(conn, sid, spec)
    if mine is None:
        rid = new_id()
        conn.execute(
            policy.write(
                "INSERT INTO reservations (id, session_id, root, pattern, anchor, exact, folded,"
                " exclusive, auto, reason, created_at, expires_at, scope, place)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
            (rid, sid, spec.root, spec.pattern, spec.anchor, int(spec.exact), int(spec.folded),
             int(exclusive), int(auto), reason, now, now + ttl,
             sessions.scope_of(conn, spec.root), place(spec.root, spec.anchor)))
        return get(conn, rid), "taken"  # type: ignore[return-value]
    if auto and not mine["auto"]:
        conn.execute(policy.write(
            "UPDATE reservations SET expires_at = ? WHERE id = ? AND expires_at < ?"),
                     (now + ttl, mine["id"], now + ttl))
    else:  # a new reason replaces the old one; none keeps it
        conn.execute(policy.write("UPDATE reservations SET exclusive = ?, auto = ?, expires_at = ?,"
                     " reason = CASE WHEN ? = '' THEN reason ELSE ? END WHERE id = ?"),
                     (int(exclusive), int(auto), now + ttl, reason, reason, mine["id"]))
    return get(conn, mine["id"]), "renewed"  # type: ignore[return-value]


def release(conn: sqlite3.Connection, sid: str, spec: Spec) -> sqlite3.Row | None:
    """End the caller's reservation of exactly this pattern; the row it was, or None."""
    mine = own(conn, sid, spec)
    if mine is not None:
        conn.execute(policy.write("DELETE FROM reservations WHERE id = ?"), (mine["id"],))
    return mine


def release_all(conn: sqlite3.Connection, sid: str) -> list[sqlite3.Row]:
    rows = conn.execute("SELECT * FROM reservations WHERE session_id = ? ORDER BY created_at,"
                        " root, pattern", (sid,)).fetchall()
    conn.execute(policy.write("DELETE FROM reservations WHERE session_id = ?"), (sid,))
    return rows


def held_by(conn: sqlite3.Connection, sid: str, now: float) -> list[sqlite3.Row]:
    return conn.execute(f"SELECT * FROM reservations WHERE session_id = :sid AND {LIVE}"
                        " ORDER BY created_at, pattern", {"sid": sid, "now": now}).fetchall()


def listed(conn: sqlite3.Connection, root: str | None, now: float) -> list[sqlite3.Row]:
    """Live reservations under one project root (every one with None), oldest first; in team
    mode also those taken in the project's other clones (its scope)."""
    if root is None:
        return conn.execute(f"SELECT * FROM reservations WHERE {LIVE}"
                            " ORDER BY created_at, root, pattern", {"now": now}).fetchall()
    scope = sessions.scope_of(conn, root)
    if scope != root:
        return conn.execute(f"SELECT * FROM reservations WHERE (root = :root OR scope = :scope)"
                            f" AND {LIVE} ORDER BY created_at, pattern, root",
                            {"root": root, "scope": scope, "now": now}).fetchall()
    return conn.execute(f"SELECT * FROM reservations WHERE root = :root AND {LIVE}"
                        " ORDER BY created_at, pattern", {"root": root, "now": now}).fetchall()


def covering_project(conn: sqlite3.Connection, root: str, rows: list[sqlite3.Row],
                     now: float) -> list[sqlite3.Row]:
    """`rows` (a project's own reservations) and the live reservations of other roots that can
    name a file in the project: anchored above it (`reserve /` from elsewhere) or inside it
    (from an enclosing project), oldest first. One too complex to decide is listed."""
    try:
        spec = patterns.normalise(patterns.escape(root) + "/", "/", root)
    except ValueError:
        return rows
    ids = {r["id"] for r in rows}
    steps = patterns.budget()
    more = []
    for r in near(conn, spec, now):
        if r["id"] in ids:
            continue
        try:
            if not overlaps(r, spec, steps):
                continue
        except patterns.TooComplex:
            pass
        more.append(r)
    if not more:
        return rows
    return sorted([*rows, *more], key=lambda r: (r["created_at"], r["root"], r["pattern"]))


def sample(conn: sqlite3.Connection, root: str, sid: str, mine: bool, now: float,
           limit: int) -> tuple[list[sqlite3.Row], int]:
    """Up to `limit` live reservations under `root` held by `sid` (or by others), oldest first,
    and how many there are (a greeting names a few, whatever the store holds); in team mode also
    those taken in the project's other clones (its scope)."""
    scope = sessions.scope_of(conn, root)
    here = "root = :root" if scope == root else "(root = :root OR scope = :scope)"
    where = f"{here} AND {LIVE} AND session_id {'=' if mine else '!='} :sid"
    params = {"root": root, "now": now, "sid": sid, "limit": limit,
              **({} if scope == root else {"scope": scope})}
    rows = conn.execute(f"SELECT * FROM reservations WHERE {where} ORDER BY created_at, pattern"
                        " LIMIT :limit", params).fetchall()
    if len(rows) < limit:
        return rows, len(rows)
    return rows, conn.execute(f"SELECT count(*) FROM reservations WHERE {where}",
                              params).fetchone()[0]


def transfer(conn: sqlite3.Connection, old_id: str, to: str) -> int:
    """Handoff: the replaced conversation's reservations become its successor's (where the
    successor holds the same pattern, the two merge: the stronger kind, the later end)."""
    moved = 0
    for row in conn.execute("SELECT * FROM reservations WHERE session_id = ?",
                            (old_id,)).fetchall():
        theirs = conn.execute("SELECT * FROM reservations WHERE session_id = ? AND root = ? AND"
                              " pattern = ?", (to, row["root"], row["pattern"])).fetchone()
        if theirs is None:
            conn.execute(policy.write(
                "UPDATE reservations SET session_id = ? WHERE id = ?"), (to, row["id"]))
        else:
            conn.execute(policy.write(
                "UPDATE reservations SET exclusive = ?, auto = ?, expires_at = ?,"
                " reason = ? WHERE id = ?"),
                         (max(theirs["exclusive"], row["exclusive"]),
                          min(theirs["auto"], row["auto"]),
                          max(theirs["expires_at"], row["expires_at"]),
                          theirs["reason"] or row["reason"], theirs["id"]))
            conn.execute(policy.write("DELETE FROM reservations WHERE id = ?"), (row["id"],))
        moved += 1
    return moved


def expire(conn: sqlite3.Connection, now: float) -> int:
    """Maintenance: reservations past their TTL, and those of agent sessions that are gone
    (offline, their client process exited without a SessionEnd), end."""
    ended = conn.execute(policy.write(
        "DELETE FROM reservations WHERE expires_at <= ?"), (now,)).rowcount
    for (sid,) in conn.execute("SELECT DISTINCT session_id FROM reservations").fetchall():
        row = sessions.get(conn, sid)
        if row is None or (row["client_pid"]
                           and availability.effective_status(row, now) == "offline"
                           and not sessions.client_alive(row)):
            ended += conn.execute(policy.write("DELETE FROM reservations WHERE session_id = ?"),
                                  (sid,)).rowcount
    return ended


# -- what people and models are told ------------------------------------------------------------


def shown(text: str) -> str:
    """A path or pattern on a human surface: every character kept, backslashes doubled and
    controls escaped (a newline shows as `\\n`), so two files never look the same."""
    return visible(text.replace("\\", "\\\\"), keep_lines=False)


def said(text: str, limit: int) -> str:
    """A reason, quoted: escaped as a whole rather than cut at its first line break."""
    line = visible(text.strip().replace("\\", "\\\\").replace('"', '\\"'), keep_lines=False)
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return f'"{line}"'


def until(epoch: float, now: float) -> str:
    fmt = "%H:%M" if epoch - now < 20 * 3600 else "%Y-%m-%d %H:%M"
    return time.strftime(fmt, time.localtime(epoch))


def shown_path(row: sqlite3.Row, real: str) -> str:
    """A file as the reservation's project names it."""
    base = row["root"].rstrip("/") + "/"
    return real[len(base):] if real.lower().startswith(base.lower()) else real


def refusal(conn: sqlite3.Connection, path: str, row: sqlite3.Row, now: float, nexus: str,
            via: str = "") -> str:
    """Why an edit (or a commit) of `path` is refused: who holds it, until when, why, and what
    to do; `via`: the name it was reached by, when that is another hard link of the file. The
    holder's name, the path and the reason are peer text: escaped, the reason quoted."""
    holder = sessions.get(conn, row["session_id"])
    who = f"{party(holder['name'], holder['handle'])}{where(holder)}" if holder else \
        token(row["session_id"])
    handle = token(holder["handle"] if holder else row["session_id"])
    what = shown(path) if row["exact"] else f"{shown(path)} (in {shown(row['pattern'])})"
    if via:
        what = f"{shown(via)} (a hard link of {what})"
    why = f" for {said(row['reason'], 120)}" if row["reason"] else ""
    auto = " (it is editing it)" if row["auto"] else ""
    return (f"{what} is reserved by {who}{auto} until {until(row['expires_at'], now)}{why}; "
            f"ask it with `{nexus} ask {handle} \"<your question>\"` or pick other work")
