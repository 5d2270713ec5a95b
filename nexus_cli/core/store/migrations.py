"""Numbered schema migrations. Each runs in the caller's write transaction together with its
record in `migrations` and the new `user_version`, so a crash leaves either all or nothing.
Stdlib only (a hook may be the first process to touch a new store)."""

from __future__ import annotations

import sqlite3

# 'NXS1': written once at creation; a SQLite file without it is not a nexus store.
APPLICATION_ID = 0x4E585331

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
    (8, "runs, approvals and run policy", """
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

CURRENT = MIGRATIONS[-1][0]


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
