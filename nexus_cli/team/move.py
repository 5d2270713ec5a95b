"""`nexus team migrate`: copying a person's data between the local store and the team database,
both ways. Owner of `team_moves` (what was copied, for the rows that have no id of their own).
Stdlib only.

Every table is decided on (TABLES below, and SKIPPED with the reason a table stays behind).
Rows go in batches, each batch one write transaction of the destination, so a run killed half
way keeps whole batches only and the next run goes on from there:

- a row with an id of its own (sessions, messages, tasks, projects, docs, meetings, runs ...)
  is inserted unless a row with that key is there already (`ON CONFLICT DO NOTHING`):
  references by id (a task's message, an approval's run, a reply's message) stay intact on both
  sides. Sequence
  numbers the stores assign themselves (messages.seq, tasks.seq, ws_meetings.seq) are given
  anew by the destination; runs and approvals are numbered on after the destination's last;
- a row without one (the activity log, chat, strategy versions) is copied once: the copy and
  its record in the destination's `team_moves` (origin store, table, source seq -> new seq)
  commit together, and a row that came from the destination in the first place (its record is
  in the source) is not sent back. Read cursors of chat streams follow the new numbers.

Row-level security: into the team database, a row its policies refuse (mail not sent as one of
the role's own sessions, a chat line or a reservation of a session another role holds ...) is
counted as `refused`: each row goes in a savepoint of its batch, so the policies themselves
decide and nothing else of the batch is lost; out of it, only what the caller's role reads, and
of the shared tables (presence, activity, workspace) only what its own sessions wrote or took
part in."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable

from ..core.store import pgwire, policy

# team mode (core/store/policy.py): what a member copied is that member's record
TEAM_TABLES = {"team_moves": policy.Table(read=policy.OWNER, insert=policy.TEAM,
                                          update=policy.OWNER, delete=policy.OWNER, owner=True)}
BATCH = 500
BLOBS = 20  # workspace files (up to the asset size limit each) per batch
ORIGIN = "store_id"  # meta key: this store's identity as an origin of copied rows

# table, key ("id" columns, or None: copied once through team_moves), identity column the
# destination assigns (left out), the caller's own rows (SQL over `{own}`, the set of own
# session ids) when copying out of the team database
Spec = tuple[str, tuple[str, ...] | None, str | None, str | None]
TABLES: tuple[Spec, ...] = (
    ("sessions", ("id",), None, "id IN {own}"),
    ("messages", ("id",), "seq", None),  # row-level security already limits what is read
    ("tasks", ("id",), "seq", None),
    ("events", None, "seq", "actor IN {own}"),
    ("ws_projects", ("id",), None, "created_by IN {own}"),
    ("ws_relations", ("source", "target", "type"), None,
     "source IN (SELECT id FROM ws_projects WHERE created_by IN {own})"),
    ("ws_blobs", ("sha256",), None, "sha256 IN (SELECT sha256 FROM ws_assets WHERE updated_by"
     " IN {own})"),
    ("ws_assets", ("project", "name"), None, "updated_by IN {own}"),
    ("ws_docs", ("id",), None, "updated_by IN {own}"),
    ("ws_strategy", None, "version", "updated_by IN {own}"),
    ("ws_meetings", ("id",), "seq", "initiator IN {own} OR id IN (SELECT meeting FROM"
     " ws_participants WHERE session IN {own})"),
    ("ws_participants", ("meeting", "session"), None, "session IN {own} OR meeting IN (SELECT id"
     " FROM ws_meetings WHERE initiator IN {own})"),
    ("ws_chat", None, "seq", "sender IN {own} OR meeting IN (SELECT meeting FROM"
     " ws_participants WHERE session IN {own})"),
    ("ws_cursors", ("reader", "stream"), None, "reader IN {own}"),
    ("reservations", ("id",), None, "session_id IN {own}"),
    ("insight_titles", ("session_id",), None, "session_id IN {own}"),
    ("runs", ("id",), None, "dispatcher IN {own} OR session_id IN {own}"),
    ("approvals", ("id",), None, None),  # row-level security: the approvals of own sessions
)

# what stays behind, and why (`nexus team migrate --help` and docs/team.md say the same)
SKIPPED = {
    "meta": "the store's own bookkeeping (maintenance time, store id)",
    "migrations": "each store's schema history",
    "tool_uses": "bindings of tool calls in flight, kept for seconds",
    "ws_buckets": "rate-limit state, refilled in seconds",
    "ws_indexed": "how far this store's full-text index has read; rebuilt by `nexus find`",
    "ws_fts": "a full-text index, rebuilt from the rows it indexes",
    "insight_files": "a cache of transcripts on this machine, rebuilt by reading them",
    "insight_chunks": "the same cache's text",
    "insight_fts": "the full-text index of that cache",
    "approval_routes": "where a live run on this machine waits for answers",
    "run_policy": "a security setting of this machine's runs: set it again where wanted",
    "team_moves": "this copying's own record",
}

# where a participant id stands in the rows copied: the person's own is renamed on the way
# (`user:<login>` locally, `user:<role>@<machine>` or a team name in the team database)
PERSON_COLUMNS = {"sessions": ("id",), "tasks": ("sender", "target"),
                  "messages": ("sender", "recipient", "target"), "events": ("actor",),
                  "ws_projects": ("created_by", "updated_by"), "ws_assets": ("updated_by",),
                  "ws_docs": ("updated_by",), "ws_strategy": ("updated_by",),
                  "ws_meetings": ("initiator",), "ws_participants": ("session",),
                  "ws_chat": ("sender",), "ws_cursors": ("reader",),
                  "reservations": ("session_id",), "insight_titles": ("session_id", "set_by"),
                  "runs": ("dispatcher",)}
RENUMBERED = ("runs", "approvals")  # seq NOT NULL, max + 1 of their own store
ANNOUNCED = "@announced"  # workspace/feed.py: the cursor of what a session was told


def columns(table: str) -> list[str]:
    from ..core.store import migrations  # the columns both stores have (no server asked)

    return migrations.columns(table)


def copying(table: str, ident: str | None, keyed: bool) -> str:
    """The statement that copies one row of `table` (declared: on a secured team database a
    member writes through nexus's functions only): a keyed row unless there, else the row with
    the number the destination gives it."""
    cols = [c for c in columns(table) if c != ident]
    into = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"
    return policy.write(f"{into} ON CONFLICT DO NOTHING" if keyed else f"{into} RETURNING {ident}")


for _table, _key, _ident, _ in TABLES:
    copying(_table, _ident, _key is not None)


def store_id(conn: sqlite3.Connection) -> str:
    """Inside a write: this store's identity as an origin (created on first use)."""
    conn.execute(policy.write("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING"),
                 (ORIGIN, uuid.uuid4().hex))
    return conn.execute("SELECT value FROM meta WHERE key = ?", (ORIGIN,)).fetchone()[0]


def own_sessions(conn: sqlite3.Connection, team: bool) -> list[str] | None:
    """The session ids of the caller's role (team database with row-level security), or None:
    every session is the caller's (the local store; a team database without `team init`)."""
    if not team or not policy.secured(conn):
        return None
    return [r[0] for r in conn.execute(f"SELECT id FROM sessions WHERE {policy.OWNER}")]


def _where(template: str | None, own: list[str] | None) -> tuple[str, tuple]:
    """A filter over the caller's sessions, as SQL and its parameters."""
    if template is None or own is None:
        return "", ()
    if not own:
        return " AND 0 = 1", ()
    marks = "(" + ", ".join("?" for _ in own) + ")"
    count = template.count("{own}")
    return f" AND ({template.replace('{own}', marks)})", tuple(own) * count


def as_person(table: str, values: dict, person: tuple[str, str] | None, to: str) -> None:
    """A row as the destination names it: the person's own id (old, new) renamed, and a
    session's (or a reservation's) project scope as the destination keeps it."""
    from ..core import identity

    if person is not None:
        old, new = person
        for col in PERSON_COLUMNS.get(table, ()):
            if values.get(col) == old:
                values[col] = new
    if table == "reservations" and "scope" in values:  # its clone's scope, as taken there
        values["scope"] = identity.scope_of(values.get("root") or "", to == "team")
    if table != "sessions":
        return
    if "scope" in values:
        values["scope"] = identity.scope_of(values.get("project") or "", to == "team")
    if person is not None and values["id"] == person[1]:
        values["handle"] = identity.handle_base(person[1])
        if values.get("name") == identity.base_name(person[0], ""):
            values["name"] = identity.base_name(person[1], "")


def copy(source, dest, to: str, progress: Callable[[str], None] | None = None,
         person: tuple[str, str] | None = None) -> list[dict]:
    """Copy every table of TABLES from `source` to `dest` (stores with read()/write()); `to` is
    'team' or 'local'; `person`: (the person's id in the source, in the destination). Returns
    one {table, copied, skipped, refused} per table."""
    with pgwire.outside_budget():  # long by nature, and resumable: each statement's own deadline
        return _copy(source, dest, to, progress, person)


def _copy(source, dest, to: str, progress: Callable[[str], None] | None,
          person: tuple[str, str] | None) -> list[dict]:
    with source.write() as conn:
        source_id = store_id(conn)
        own_out = own_sessions(conn, to == "local")
    with dest.write() as conn:
        dest_id = store_id(conn)
        own_in = own_sessions(conn, to == "team")
    out = []
    for table, key, ident, mine in TABLES:
        if progress:
            progress(table)
        where, params = _where(mine, own_out)
        guarded = own_in is not None  # into a secured team database: its policies decide
        if key is None:
            counts = _copy_once(source, dest, table, ident, where, params, source_id, dest_id,
                                person, to, guarded)
        else:
            counts = _copy_keyed(source, dest, table, key, ident, where, params, source_id,
                                 dest_id, person, to, guarded)
        out.append({"table": table, **counts})
    return out


def _put(dest, conn: sqlite3.Connection, write: Callable[[sqlite3.Connection], bool],
         guarded: bool) -> bool | None:
    """One row's write (True: copied, False: there already), in a savepoint of the batch when
    the destination's row-level security decides (`guarded`); None when it refused the row."""
    from ..core.errors import NexusError

    if not guarded:
        return write(conn)
    try:
        with dest.write() as inner:
            return write(inner)
    except NexusError as exc:
        if exc.code != "team_denied":
            raise
        return None


def _copy_keyed(source, dest, table: str, key: tuple[str, ...], ident: str | None, where: str,
                params: tuple, source_id: str, dest_id: str, person: tuple[str, str] | None,
                to: str, guarded: bool) -> dict:
    from ..core.proctable import machine

    cols = [c for c in columns(table) if c != ident]
    order = ", ".join(key)
    here = machine()
    batch = BLOBS if table == "ws_blobs" else BATCH
    copied = skipped = refused = 0
    after: tuple | None = None
    moved: list[tuple[int, int]] = []
    while True:
        page = ""
        page_params: tuple = ()
        if after is not None:
            page = f" AND ({order}) > ({', '.join('?' for _ in key)})"
            page_params = after
        with source.read() as conn:
            rows = conn.execute(f"SELECT * FROM {table} WHERE 1 = 1{where}{page} ORDER BY"
                                f" {order} LIMIT {batch}", params + page_params).fetchall()
        if not rows:
            break
        with dest.write() as conn:
            if table == "ws_cursors":
                moved = _chat_numbers(source, conn, source_id, dest_id)
            for row in rows:
                values = {c: row[c] for c in cols}
                if table in RENUMBERED:
                    if conn.execute(f"SELECT 1 FROM {table} WHERE id = ?",
                                    (row["id"],)).fetchone():
                        skipped += 1
                        continue
                    values["seq"] = conn.execute(f"SELECT coalesce(max(seq), 0) + 1 FROM"
                                                 f" {table}").fetchone()[0]
                if table == "ws_cursors":
                    values["seq"] = _cursor(conn, moved, row["stream"], row["seq"])
                if table == "sessions" and values.get("machine") is None:
                    values["machine"] = here  # a session from before machines were recorded
                as_person(table, values, person, to)

                def keyed(c: sqlite3.Connection, values: dict = values) -> bool:
                    return c.execute(copying(table, ident, True),
                                     tuple(values.values())).rowcount > 0

                put = _put(dest, conn, keyed, guarded)
                refused += put is None
                copied += put is True
                skipped += put is False
        after = tuple(rows[-1][k] for k in key)
    return {"copied": copied, "skipped": skipped, "refused": refused}


def _copy_once(source, dest, table: str, ident: str | None, where: str, params: tuple,
               source_id: str, dest_id: str, person: tuple[str, str] | None, to: str,
               guarded: bool) -> dict:
    """Rows without an id: copied once each, recorded in the destination's team_moves."""
    assert ident is not None
    cols = [c for c in columns(table) if c != ident]
    with dest.read() as conn:
        done = {r[0] for r in conn.execute("SELECT src FROM team_moves WHERE origin = ? AND"
                                           " tbl = ?", (source_id, table))}
    with source.read() as conn:  # rows that came from the destination: not sent back
        back = {r[0] for r in conn.execute("SELECT dst FROM team_moves WHERE origin = ? AND"
                                           " tbl = ?", (dest_id, table))}
    copied = skipped = refused = 0
    after = -1
    while True:
        with source.read() as conn:
            rows = conn.execute(f"SELECT * FROM {table} WHERE {ident} > ?{where} ORDER BY"
                                f" {ident} LIMIT {BATCH}", (after, *params)).fetchall()
        if not rows:
            break
        with dest.write() as conn:
            for row in rows:
                if str(row[ident]) in done or str(row[ident]) in back:
                    skipped += 1
                    continue
                values = {c: row[c] for c in cols}
                as_person(table, values, person, to)

                def once(c: sqlite3.Connection, values: dict = values, src: str = str(row[ident])
                         ) -> bool:  # the copy and its record, together
                    new = c.execute(copying(table, ident, False),
                                    tuple(values.values())).fetchone()[0]
                    c.execute(policy.write("INSERT INTO team_moves (origin, tbl, src, dst) VALUES"
                              " (?, ?, ?, ?)"), (source_id, table, src, str(new)))
                    return True

                put = _put(dest, conn, once, guarded)
                refused += put is None
                copied += put is not None
        after = rows[-1][ident]
    return {"copied": copied, "skipped": skipped, "refused": refused}


def _chat_numbers(source, conn: sqlite3.Connection, source_id: str,
                  dest_id: str) -> list[tuple[int, int]]:
    """(source seq, destination seq) of every chat row the two stores share, by source seq."""
    pairs = [(int(s), int(d)) for s, d in conn.execute(
        "SELECT src, dst FROM team_moves WHERE origin = ? AND tbl = 'ws_chat'", (source_id,))]
    with source.read() as src:
        pairs += [(int(s), int(d)) for d, s in src.execute(
            "SELECT src, dst FROM team_moves WHERE origin = ? AND tbl = 'ws_chat'", (dest_id,))]
    return sorted(pairs)


def _cursor(conn: sqlite3.Connection, moved: list[tuple[int, int]], stream: str,
            seq: int) -> int:
    """A read cursor in the destination's numbers: past every copied row it was past. What a
    session was told (`@announced`) starts at the destination's newest chat."""
    if stream == ANNOUNCED:
        return conn.execute("SELECT coalesce(max(seq), 0) FROM ws_chat").fetchone()[0]
    return max((d for s, d in moved if s <= seq), default=0)
