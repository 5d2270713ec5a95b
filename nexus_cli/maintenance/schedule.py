"""When upkeep last ran, and whether a round is due (at most once per MAINTAIN_EVERY). Kept apart
from the upkeep itself: every hook asks this, one in a thousand runs it. Stdlib only."""

from __future__ import annotations

import sqlite3

from ..core.settings import MAINTAIN_EVERY


def last(conn: sqlite3.Connection) -> float:
    """When the last round ran (0 when never)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'maintained_at'").fetchone()
    return float(row[0]) if row else 0.0


def due(conn: sqlite3.Connection, now: float) -> bool:
    return now - last(conn) >= MAINTAIN_EVERY
