"""Numbered schema migrations. Each runs in the caller's write transaction together with its
record in `migrations` and the new `user_version`, so a crash leaves either all or nothing.
Stdlib only (a hook may be the first process to touch a new store)."""

from __future__ import annotations

import sqlite3

from . import SCHEMA, policy

# team mode (core/store/policy.py): the schema's history is the administrator's; of the store's
# bookkeeping a member writes only when maintenance last ran and, once, the store's id
TEAM_TABLES = {
    "migrations": policy.Table(read=policy.TEAM, insert=policy.FUNCTIONS,
                               update=policy.FUNCTIONS, delete=policy.FUNCTIONS),
    "meta": policy.Table(read=policy.TEAM, insert="key IN ('maintained_at', 'store_id')",
                         update="key = 'maintained_at'", delete=policy.FUNCTIONS),
}

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "sessions, tool-use bindings, messages",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            client TEXT NOT NULL,
            handle TEXT NOT NULL,
            name TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            cwd TEXT NOT NULL DEFAULT '',
            project TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'idle',
            listening INTEGER NOT NULL DEFAULT 0,
            waiter_pid INTEGER,
            client_pid INTEGER,
            transcript_path TEXT,
            last_event TEXT,
            last_tool TEXT,
            last_prompt TEXT,
            last_assistant TEXT,
            last_turn_end REAL,
            last_prompt_at REAL,
            auto_turns INTEGER NOT NULL DEFAULT 0,
            last_wake_at REAL,
            last_wake_error TEXT,
            predecessor TEXT,
            successor TEXT,
            created_at REAL NOT NULL,
            last_active REAL NOT NULL
        );
        CREATE INDEX sessions_by_project ON sessions (project, last_active);
        CREATE INDEX sessions_by_pid ON sessions (client_pid);
        CREATE INDEX sessions_by_name ON sessions (name);
        CREATE INDEX sessions_by_handle ON sessions (handle);
        CREATE TABLE tool_uses (
            tool_use_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX tool_uses_by_age ON tool_uses (created_at);
        CREATE TABLE messages (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL DEFAULT 'message',
            sender TEXT NOT NULL,
            recipient TEXT NOT NULL,
            target TEXT,
            text TEXT NOT NULL,
            reply_to TEXT,
            request_id TEXT,
            created_at REAL NOT NULL,
            delivered_at REAL,
            delivered_via TEXT,
            read_at REAL,
            expired_at REAL,
            notify_when_idle INTEGER NOT NULL DEFAULT 0,
            notified_at REAL,
            UNIQUE (sender, request_id)
        );
        CREATE INDEX messages_unread ON messages (recipient, seq)
            WHERE read_at IS NULL AND expired_at IS NULL;
        CREATE INDEX messages_undelivered ON messages (recipient, seq)
            WHERE delivered_at IS NULL AND read_at IS NULL AND expired_at IS NULL;
        CREATE INDEX messages_by_sender ON messages (sender, seq);
        CREATE INDEX messages_expiry ON messages (created_at)
            WHERE read_at IS NULL AND expired_at IS NULL;
        CREATE INDEX messages_idle_watch ON messages (recipient)
            WHERE notify_when_idle = 1 AND notified_at IS NULL;
        """,
    ),
    (
        2,
        "the task ledger (delegated and self-managed), handoff, deferred and ask messages",
        """
        CREATE TABLE tasks (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            sender TEXT NOT NULL,
            target TEXT NOT NULL,
            requested_target TEXT NOT NULL,
            task TEXT NOT NULL,
            status TEXT NOT NULL,
            mode TEXT NOT NULL,
            message_id TEXT,
            request_id TEXT,
            result TEXT,
            report_message_id TEXT,
            error TEXT,
            progress REAL,
            result_uri TEXT,
            metadata TEXT,
            expires_at REAL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            closed_at REAL,
            UNIQUE (sender, request_id)
        );
        CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
        CREATE INDEX tasks_by_target ON tasks (target, status, seq);
        CREATE INDEX tasks_by_sender ON tasks (sender, seq);
        ALTER TABLE messages ADD COLUMN defer INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN task_id TEXT;
        ALTER TABLE messages ADD COLUMN ask_state TEXT;
        CREATE INDEX messages_by_reply ON messages (reply_to) WHERE reply_to IS NOT NULL;
        ALTER TABLE sessions ADD COLUMN handoff INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE sessions ADD COLUMN handoff_at REAL
        """,
    ),
)

MIGRATIONS += (
    (
        3,
        "identity: client start times, nested sessions, one handle per session; the event log; "
        "retired messages",
        """
        ALTER TABLE sessions ADD COLUMN client_start TEXT;
        ALTER TABLE sessions ADD COLUMN parent TEXT;
        UPDATE sessions SET handle = handle || '-' || substr(replace(id, '-', ''), -8)
            WHERE rowid NOT IN (SELECT min(rowid) FROM sessions GROUP BY handle);
        DROP INDEX sessions_by_handle;
        CREATE UNIQUE INDEX sessions_by_handle ON sessions (handle);
        CREATE INDEX sessions_by_parent ON sessions (parent) WHERE parent IS NOT NULL;
        ALTER TABLE messages ADD COLUMN expired_why TEXT;
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT,
            detail TEXT
        );
        CREATE INDEX events_by_action ON events (action, seq);
        """,
    ),
)

MIGRATIONS += (
    (
        4,
        "message history in both directions; why a conversation ended",
        """
        CREATE INDEX messages_by_recipient ON messages (recipient, seq);
        ALTER TABLE sessions ADD COLUMN end_reason TEXT;
        """,
    ),
)

MIGRATIONS += (
    (
        7,
        "the shared workspace (seed 004): projects, assets, docs, strategy, meetings, chat, read "
        "cursors, rate buckets, one full-text index; tasks link to meetings",
        """
        CREATE TABLE ws_projects (
            id TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            tech TEXT NOT NULL DEFAULT '',
            manifest TEXT NOT NULL,
            internal_docs TEXT NOT NULL DEFAULT '',
            created_by TEXT NOT NULL,
            updated_by TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE ws_relations (
            source TEXT NOT NULL,
            target TEXT NOT NULL,
            type TEXT NOT NULL,
            PRIMARY KEY (source, target, type)
        ) WITHOUT ROWID;
        CREATE INDEX ws_relations_by_target ON ws_relations (target);
        CREATE TABLE ws_blobs (
            sha256 TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            data BLOB NOT NULL
        );
        CREATE TABLE ws_assets (
            project TEXT NOT NULL,
            name TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            updated_by TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (project, name)
        ) WITHOUT ROWID;
        CREATE INDEX ws_assets_by_blob ON ws_assets (sha256);
        CREATE TABLE ws_docs (
            id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            content TEXT NOT NULL,
            updated_by TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX ws_docs_by_time ON ws_docs (updated_at);
        CREATE TABLE ws_strategy (
            version INTEGER PRIMARY KEY AUTOINCREMENT,
            content TEXT NOT NULL,
            updated_by TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE ws_meetings (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            topic TEXT NOT NULL,
            status TEXT NOT NULL,
            initiator TEXT NOT NULL,
            started_at REAL NOT NULL,
            ended_at REAL,
            summary TEXT,
            decisions TEXT,
            updated_at REAL NOT NULL
        );
        CREATE INDEX ws_meetings_by_status ON ws_meetings (status, seq);
        CREATE TABLE ws_participants (
            meeting TEXT NOT NULL,
            session TEXT NOT NULL,
            joined_at REAL NOT NULL,
            PRIMARY KEY (meeting, session)
        ) WITHOUT ROWID;
        CREATE INDEX ws_participants_by_session ON ws_participants (session);
        CREATE TABLE ws_chat (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            meeting TEXT,
            sender TEXT NOT NULL,
            project TEXT NOT NULL DEFAULT '',
            category TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX ws_chat_by_meeting ON ws_chat (meeting, seq);
        CREATE TABLE ws_cursors (
            reader TEXT NOT NULL,
            stream TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (reader, stream)
        ) WITHOUT ROWID;
        CREATE TABLE ws_buckets (
            instance TEXT PRIMARY KEY,
            tokens REAL NOT NULL,
            at REAL NOT NULL
        ) WITHOUT ROWID;
        CREATE VIRTUAL TABLE ws_fts USING fts5(
            title, body, kind UNINDEXED, ref UNINDEXED, project UNINDEXED,
            tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER ws_fts_project_in AFTER INSERT ON ws_projects BEGIN
            INSERT INTO ws_fts (rowid, title, body, kind, ref, project) VALUES (new.rowid * 8 + 1,
                new.id || ' ' || new.name, new.description || ' ' || new.tech || ' '
                || new.internal_docs, 'project', new.id, new.id);
        END;
        CREATE TRIGGER ws_fts_project_up AFTER UPDATE ON ws_projects BEGIN
            DELETE FROM ws_fts WHERE rowid = old.rowid * 8 + 1;
            INSERT INTO ws_fts (rowid, title, body, kind, ref, project) VALUES (new.rowid * 8 + 1,
                new.id || ' ' || new.name, new.description || ' ' || new.tech || ' '
                || new.internal_docs, 'project', new.id, new.id);
        END;
        CREATE TRIGGER ws_fts_project_out AFTER DELETE ON ws_projects BEGIN
            DELETE FROM ws_fts WHERE rowid = old.rowid * 8 + 1;
        END;
        CREATE TRIGGER ws_fts_doc_in AFTER INSERT ON ws_docs BEGIN
            INSERT INTO ws_fts (rowid, title, body, kind, ref) VALUES (new.rowid * 8 + 2,
                new.title, new.content, 'doc', new.id);
        END;
        CREATE TRIGGER ws_fts_doc_up AFTER UPDATE ON ws_docs BEGIN
            DELETE FROM ws_fts WHERE rowid = old.rowid * 8 + 2;
            INSERT INTO ws_fts (rowid, title, body, kind, ref) VALUES (new.rowid * 8 + 2,
                new.title, new.content, 'doc', new.id);
        END;
        CREATE TRIGGER ws_fts_strategy_in AFTER INSERT ON ws_strategy BEGIN
            DELETE FROM ws_fts WHERE rowid = 3;
            INSERT INTO ws_fts (rowid, title, body, kind, ref) VALUES (3, 'global strategy',
                new.content, 'strategy', new.version);
        END;
        CREATE TRIGGER ws_fts_chat_in AFTER INSERT ON ws_chat BEGIN
            INSERT INTO ws_fts (rowid, title, body, kind, ref, project) VALUES (new.seq * 8 + 4,
                coalesce(new.meeting, 'global chat'), new.text,
                CASE WHEN new.meeting IS NULL THEN 'chat' ELSE 'meeting' END, new.seq,
                new.project);
        END;
        CREATE TRIGGER ws_fts_chat_out AFTER DELETE ON ws_chat BEGIN
            DELETE FROM ws_fts WHERE rowid = old.seq * 8 + 4;
        END;
        CREATE TRIGGER ws_fts_message_in AFTER INSERT ON messages
            WHEN new.kind IN ('message', 'task', 'report') BEGIN
            INSERT INTO ws_fts (rowid, title, body, kind, ref, project) VALUES (new.seq * 8 + 5,
                new.id, new.text, 'message', new.id,
                (SELECT project FROM sessions WHERE id = new.sender));
        END;
        INSERT INTO ws_fts (rowid, title, body, kind, ref, project)
            SELECT m.seq * 8 + 5, m.id, m.text, 'message', m.id, s.project
            FROM messages m LEFT JOIN sessions s ON s.id = m.sender
            WHERE m.kind IN ('message', 'task', 'report');
        ALTER TABLE tasks ADD COLUMN source_meeting_id TEXT;
        """,
    ),
)

MIGRATIONS += (
    (
        8,
        "file reservations",
        """
        CREATE TABLE reservations (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            root TEXT NOT NULL,
            pattern TEXT NOT NULL,
            anchor TEXT NOT NULL,
            exact INTEGER NOT NULL,
            folded INTEGER NOT NULL DEFAULT 0,
            exclusive INTEGER NOT NULL,
            auto INTEGER NOT NULL DEFAULT 0,
            reason TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            UNIQUE (session_id, root, pattern)
        );
        CREATE INDEX reservations_by_anchor ON reservations (anchor, expires_at);
        CREATE INDEX reservations_by_root ON reservations (root, expires_at);
        CREATE INDEX reservations_by_expiry ON reservations (expires_at);
        """,
    ),
)

MIGRATIONS += (
    (
        9,
        "insight: what nexus read of each transcript, the full-text index, session titles",
        """
        CREATE TABLE insight_files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL,
            client TEXT NOT NULL,
            cwd TEXT NOT NULL DEFAULT '',
            project TEXT NOT NULL DEFAULT '',
            first_prompt TEXT,
            model TEXT,
            started_at REAL,
            updated_at REAL,
            indexed_to INTEGER NOT NULL DEFAULT 0,
            state TEXT,
            head TEXT,
            file_size INTEGER,
            file_mtime REAL,
            messages INTEGER NOT NULL DEFAULT 0,
            tokens_in INTEGER NOT NULL DEFAULT 0,
            tokens_out INTEGER NOT NULL DEFAULT 0,
            llm_ms INTEGER NOT NULL DEFAULT 0,
            events INTEGER NOT NULL DEFAULT 0,
            indexed_at REAL NOT NULL
        );
        CREATE INDEX insight_files_by_session ON insight_files (session_id);
        CREATE TABLE insight_chunks (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            at REAL,
            offset INTEGER NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX insight_chunks_by_file ON insight_chunks (file_id, seq);
        CREATE VIRTUAL TABLE insight_fts USING fts5 (
            text, content = 'insight_chunks', content_rowid = 'id', tokenize = 'trigram'
        );
        CREATE TRIGGER insight_chunks_added AFTER INSERT ON insight_chunks BEGIN
            INSERT INTO insight_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER insight_chunks_removed AFTER DELETE ON insight_chunks BEGIN
            INSERT INTO insight_fts (insight_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TABLE insight_titles (
            session_id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            set_by TEXT NOT NULL,
            set_at REAL NOT NULL
        );
        """,
    ),
)

MIGRATIONS += (
    (10, "runs, approvals and run policy", """
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    client TEXT NOT NULL,
    task TEXT NOT NULL,
    context TEXT,
    cwd TEXT NOT NULL,
    project TEXT NOT NULL,
    title TEXT,
    preset TEXT,
    sandbox TEXT,
    approvals TEXT NOT NULL DEFAULT 'client',
    resume TEXT,
    launch TEXT NOT NULL,
    dispatcher TEXT NOT NULL,
    session_id TEXT,
    task_id TEXT,
    status TEXT NOT NULL,
    error TEXT,
    runner_pid INTEGER,
    runner_start TEXT,
    client_pid INTEGER,
    client_start TEXT,
    exit_code INTEGER,
    output TEXT,
    result TEXT,
    created_at REAL NOT NULL,
    started_at REAL,
    client_started_at REAL,
    finished_at REAL
);
CREATE INDEX runs_by_status ON runs (status, seq);
CREATE INDEX runs_by_session ON runs (session_id);
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    run_id TEXT,
    tool_name TEXT NOT NULL,
    summary TEXT NOT NULL,
    reason TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    responder TEXT,
    hook_pid INTEGER,
    hook_start TEXT,
    requested_at REAL NOT NULL,
    deadline REAL NOT NULL,
    answered_at REAL
);
CREATE INDEX approvals_by_status ON approvals (status, seq);
CREATE TABLE approval_routes (
    run_id TEXT PRIMARY KEY,
    client_pid INTEGER NOT NULL,
    client_start TEXT,
    dispatcher TEXT NOT NULL,
    project TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE run_policy (
    scope TEXT PRIMARY KEY,
    preset TEXT,
    sandbox TEXT,
    updated_at REAL NOT NULL
);
""",
    ),
)

MIGRATIONS += (
    (
        11,
        "direct messages join the workspace's full-text index when `find` runs, not at send",
        """
        DROP TRIGGER ws_fts_message_in;
        CREATE TABLE ws_indexed (
            source TEXT PRIMARY KEY,
            seq INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO ws_indexed VALUES ('messages', (SELECT coalesce(max(seq), 0) FROM messages));
        """,
    ),
)

MIGRATIONS += (
    (
        12,
        "team mode: the machine a session runs on (its process ids mean something only there)",
        """
        ALTER TABLE sessions ADD COLUMN machine TEXT;
        """,
    ),
)

MIGRATIONS += (
    (
        13,
        "a message is written to 7 B-trees, not 9: expiry scans the unread index, and a "
        "sender's history is found through (sender, request_id)",
        """
        DROP INDEX messages_expiry;
        DROP INDEX messages_by_sender;
        """,
    ),
)

MIGRATIONS += (
    (
        14,
        "full-text search in team mode: nexus_words(), ws_words (GIN) and the triggers that keep "
        "it, on PostgreSQL (SQLite has FTS5 since 7 and 9: nothing to do)",
        "",  # PostgreSQL only: POSTGRESQL[14]
    ),
)

MIGRATIONS += (
    (
        15,
        "a session's scope: its project as every machine names it (team mode: the normalised "
        "git remote; locally: the root path, which `project` keeps as a path)",
        """
        ALTER TABLE sessions ADD COLUMN scope TEXT NOT NULL DEFAULT '';
        UPDATE sessions SET scope = project;
        CREATE INDEX sessions_by_scope ON sessions (scope, last_active);
        """,
    ),
)

MIGRATIONS += (
    (
        16,
        "team migrate: which rows without an id of their own were copied from another store",
        """
        CREATE TABLE team_moves (
            origin TEXT NOT NULL,
            tbl TEXT NOT NULL,
            src TEXT NOT NULL,
            dst TEXT NOT NULL,
            PRIMARY KEY (origin, tbl, src)
        ) WITHOUT ROWID;
        """,
    ),
)

MIGRATIONS += (
    (
        17,
        "the inbox's partial indexes are the ones used: without statistics SQLite took the full "
        "(recipient, seq) index for unread and unannounced mail and read every message a session "
        "ever received (a tool call's hook with 1,000 unread read all 1,000); statistics of the "
        "shape `ANALYZE` would write tell it which is smaller (a later `ANALYZE` replaces them)",
        """
        ANALYZE sqlite_schema;
        INSERT OR REPLACE INTO sqlite_stat1 (tbl, idx, stat) VALUES
            ('messages', 'messages_by_recipient', '100000 1000 1'),
            ('messages', 'messages_unread', '1000 10 1'),
            ('messages', 'messages_undelivered', '100 2 1');
        ANALYZE sqlite_schema;
        """,
    ),
)

MIGRATIONS += (
    (
        18,
        "the sessions' project and scope indexes without last_active: every tool call's hook and "
        "every send rewrites last_active, which moved two index entries each time (two pages "
        "more in the WAL per send); peers are sorted after the lookup instead",
        """
        DROP INDEX sessions_by_project;
        CREATE INDEX sessions_by_project ON sessions (project);
        DROP INDEX sessions_by_scope;
        CREATE INDEX sessions_by_scope ON sessions (scope);
        """,
    ),
)

MIGRATIONS += (
    (
        19,
        "a reservation's scope and its anchor relative to its root: in team mode the same project "
        "sits at another path on each machine, and a reservation taken in one clone covers the "
        "same files in every clone of the scope (old rows: the scope is their root)",
        """
        ALTER TABLE reservations ADD COLUMN scope TEXT NOT NULL DEFAULT '';
        ALTER TABLE reservations ADD COLUMN place TEXT NOT NULL DEFAULT '';
        UPDATE reservations SET scope = root, place = CASE
            WHEN length(anchor) <= length(rtrim(root, '/')) + 1 THEN ''
            ELSE substr(anchor, length(rtrim(root, '/')) + 2) END;
        CREATE INDEX reservations_by_scope ON reservations (scope, place, expires_at);
        """,
    ),
)

MIGRATIONS += (
    (
        20,
        "a team database finds the reservations below a directory by byte order whatever its "
        "collation: an index of `anchor` in the \"C\" collation, on PostgreSQL (SQLite compares "
        "bytes already)",
        "",  # PostgreSQL only: POSTGRESQL[20]
    ),
)

MIGRATIONS += (
    (
        21,
        "a tool use is bound per session: (tool_use_id, session_id), so that another session's "
        "hook naming the same id (learnt from a transcript) neither takes the call over nor "
        "blocks it, whichever binds first (bindings live seconds: the old ones are dropped)",
        """
        DROP TABLE tool_uses;
        CREATE TABLE tool_uses (
            tool_use_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (tool_use_id, session_id)
        );
        CREATE INDEX tool_uses_by_age ON tool_uses (created_at);
        """,
    ),
)

MIGRATIONS += (
    (
        22,
        "every record that names a process names its machine: a run (its runner and client), an "
        "approval (its hook), an approval route (the run's client); their pids are judged, and "
        "signalled, only there (team mode: every text column compares bytes, old databases too)",
        """
        ALTER TABLE runs ADD COLUMN machine TEXT;
        ALTER TABLE approvals ADD COLUMN machine TEXT;
        ALTER TABLE approval_routes ADD COLUMN machine TEXT;
        """,
    ),
)

MIGRATIONS += (
    (
        23,
        "team mode: the rows that are a member's own record the role that wrote them (db_role, "
        "which the server fills in): sessions, the activity log, runs, approvals and their "
        "routes, the transcript cache and titles, team_moves (SQLite: one user, nothing to do)",
        "",  # PostgreSQL only: pgschema.DDL[23]
    ),
)

MIGRATIONS += (
    (
        24,
        "a session's project as registered at its start (its client process's first hook, or the "
        "project of the conversation it succeeded in that process): `nexus fs` keeps to it, and "
        "no later hook event's cwd moves it (old rows: their project now)",
        """
        ALTER TABLE sessions ADD COLUMN start_project TEXT NOT NULL DEFAULT '';
        UPDATE sessions SET start_project = project;
        """,
    ),
)

MIGRATIONS += (
    (
        25,
        "a handoff offered to a live session (`handoff now --to`), which moves nothing until "
        "that session accepts it (`handoff accept`)",
        """
        ALTER TABLE sessions ADD COLUMN offered_to TEXT;
        ALTER TABLE sessions ADD COLUMN offered_at REAL;
        """,
    ),
)

MIGRATIONS += (
    (
        26,
        "the sandbox tier a client states for a tool call at its PreToolUse (Claude Code's "
        "permission mode): a run that call starts is no wider than its caller's own tier",
        """
        ALTER TABLE tool_uses ADD COLUMN tier TEXT;
        """,
    ),
)

MIGRATIONS += (
    (
        27,
        "presence that means \"can answer now\": what a session waiting for a person waits for "
        "(its client's permission prompt), whether it accepts being woken (NULL: the `wake` "
        "setting), whether a message may wake its recipient (`send --no-wake`: 0), which "
        "Claude Code subagent (Task tool) a bound tool use came from; `--notify-when-idle` 2 "
        "(sent while its recipient was offline) is watched as 1 is",
        """
        ALTER TABLE sessions ADD COLUMN waiting_for TEXT;
        ALTER TABLE sessions ADD COLUMN wake INTEGER;
        ALTER TABLE messages ADD COLUMN wake INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE tool_uses ADD COLUMN agent TEXT;
        DROP INDEX messages_idle_watch;
        CREATE INDEX messages_idle_watch ON messages (recipient)
            WHERE notify_when_idle > 0 AND notified_at IS NULL;
        """,
    ),
)

MIGRATIONS += (
    (
        28,
        "a consuming read is at least once: what `read` or `ask` took is leased to the process "
        "that took it (machine, pid, start time) until its output is written and confirmed; a "
        "lease whose process died, or older than 10 minutes, is taken again",
        """
        ALTER TABLE messages ADD COLUMN read_lease TEXT;
        ALTER TABLE messages ADD COLUMN read_lease_until REAL;
        """,
    ),
)

MIGRATIONS += (
    (
        29,
        "a person's name is one person's whatever its case (`Bob` is `bob`): unique among the "
        "people, lower-cased (two people whose names differed only in case before: the later "
        "gets `#<n>` after it); team mode also checks the shapes of new sessions, messages and "
        "tasks (ids, handles, names, finite times)",
        """
        UPDATE sessions SET name = name || '#' || rowid WHERE client = 'user' AND rowid NOT IN
            (SELECT min(rowid) FROM sessions WHERE client = 'user' GROUP BY lower(name));
        CREATE UNIQUE INDEX sessions_person_name ON sessions (lower(name)) WHERE client = 'user';
        """,
    ),
)

CURRENT = MIGRATIONS[-1][0]
if CURRENT != SCHEMA:  # what every open of a store compares its version with, without this module
    raise ImportError(f"nexus_cli.core.store.SCHEMA is {SCHEMA}, but the last migration is "
                      f"{CURRENT}: set SCHEMA = {CURRENT}")


def statements(script: str) -> list[str]:
    """A script cut into complete statements (a trigger's body holds `;` of its own)."""
    out, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            if current.strip().rstrip(";").strip():
                out.append(current.strip())
            current = ""
    if current.strip():
        out.append(current.strip())
    return out


_COLUMNS: dict[str, list[str]] = {}


def tables() -> dict[str, list[str]]:
    """Every table the migrations make (full-text tables included, not their shadow tables),
    with its columns in order: an empty store in memory, asked."""
    if not _COLUMNS:
        conn = sqlite3.connect(":memory:")
        try:
            apply(conn, 0.0)
            rows = conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND"
                                " name NOT LIKE 'sqlite_%'").fetchall()
            virtual = [n for n, sql in rows if sql.upper().startswith("CREATE VIRTUAL")]
            for name, _ in rows:
                if not any(name.startswith(v + "_") for v in virtual):
                    _COLUMNS[name] = [r[1] for r in conn.execute(f"PRAGMA table_info({name})")]
        finally:
            conn.close()
    return _COLUMNS


def columns(table: str) -> list[str]:
    """The columns of `table` in order, as the migrations make it."""
    return list(tables()[table])


def pending(version: int) -> list[tuple[int, str, str]]:
    """The migrations a store at `version` still needs (read-only: it only looks)."""
    return [m for m in MIGRATIONS if m[0] > version]


def apply(conn: sqlite3.Connection, now: float) -> int:
    """Bring the store to CURRENT inside the open write transaction; returns the version reached."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS migrations"
            " (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
        )
    for number, name, sql in pending(version):
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute("INSERT INTO migrations VALUES (?, ?, ?)", (number, name, now))
        conn.execute(f"PRAGMA user_version = {number}")
    return CURRENT
