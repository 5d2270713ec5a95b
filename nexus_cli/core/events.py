"""Owner of the `events` table: what happened, who did it, to what. The activity log of state
changes, and the security log: impersonations and forged hook events refused, the person acting
for a session, sessions moved to another client process. `nexus events` lists it. Stdlib only."""

from __future__ import annotations

import json
import sqlite3
import time

from .errors import NexusError
from .store import policy
from .store.db import Store

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from typing import Any

KEEP = 100_000  # events kept; older ones go in maintenance
# team mode (core/store/policy.py): everyone reads the log; an entry is written by its actor's
# own role (one of its sessions, its person, or a face refusing an attempt: `cli`, `mcp`,
# `web`, `claude hook`, a `security.*` entry alone), and the server records whose it is
TEAM_TABLES = {"events": policy.Table(
    read=policy.TEAM, update=policy.FUNCTIONS, delete=policy.OWNER, owner=True,
    insert=policy.either(policy.own("actor"), policy.person("actor"),
                         "starts_with(action, 'security.') AND (actor IN ('cli', 'mcp', 'web')"
                         " OR actor ~ '^[a-z]{1,20} hook$')"))}


def record(conn: sqlite3.Connection, now: float, actor: str, action: str,
           target: str | None = None, **detail: Any) -> None:
    conn.execute(policy.write(
        "INSERT INTO events (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)"),
                 (now, actor, action, target,
                  json.dumps(detail, ensure_ascii=False, default=str) if detail else None))


def refused(store: Store, exc: NexusError, actor: str, **detail: Any) -> None:
    """Write down a refused attempt (in its own transaction: the refused one rolled back). Best
    effort: an unusable store must not hide the refusal itself."""
    if exc.code not in ("impersonation_refused", "hook_refused"):
        return
    from .proctable import table

    try:
        if not (store.check_dir() and store.check_file()):
            return
        chain = [f"{p.name}:{p.pid}" for p in table().ancestors()[:8]]
        with store.write() as conn:
            record(conn, time.time(), actor, f"security.{exc.code}", exc.key,
                   reason=exc.reason, processes=chain, **detail)
    except (NexusError, OSError, sqlite3.Error):
        pass


def trim(conn: sqlite3.Connection) -> int:
    return conn.execute(policy.write(
        "DELETE FROM events WHERE seq <= (SELECT max(seq) FROM events) - ?"),
                        (KEEP,)).rowcount
