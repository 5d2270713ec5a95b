"""When upkeep last ran, and whether a round is due (at most once per MAINTAIN_EVERY). Kept apart
from the upkeep itself: every hook asks this, one in a thousand runs it. Stdlib only."""

from __future__ import annotations

import sqlite3

from ..core import store
from ..core.settings import MAINTAIN_EVERY


def last(conn: sqlite3.Connection) -> float:
    """When the last round ran: 0 when never, and when what is stored is no time a calendar
    shows (text, NaN, an infinity, 1e300: written by hand), so that a round is due at once."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'maintained_at'").fetchone()
    try:
        value = float(row[0]) if row else 0.0
    except (TypeError, ValueError):
        return 0.0
    return value if store.time(value) else 0.0


def due(conn: sqlite3.Connection, now: float) -> bool:
    """Whether a round is due: MAINTAIN_EVERY after the last, or at once when the last is in
    the future (a clock set back, or a time written by hand: upkeep never waits for it)."""
    return not 0 <= now - last(conn) < MAINTAIN_EVERY
