"""The per-instance rate limit of seed 004: a token bucket per session (and for the person), kept
in the store so every process that serves a session draws on the same bucket (the CLI, each MCP
server). Refilled at `rateLimit` calls a second up to `rateBurst`; a call over the limit is
refused with the delay after which it would pass. Never on the hook path. Stdlib only."""

from __future__ import annotations

import math
import sqlite3

from ..core.errors import NexusError
from ..core.settings import load
from ..core.store import policy

# team mode (core/store/policy.py): a session's bucket is its own
TEAM_TABLES = {"ws_buckets": policy.Table(
    read=policy.own("instance"), insert=policy.own("instance"), update=policy.own("instance"),
    delete=policy.own("instance"))}


def take(conn: sqlite3.Connection, instance: str, now: float, root: str) -> None:
    """Inside the caller's write: spend one token of `instance`, or refuse the call."""
    settings = load(root)
    rate, burst = float(settings["rateLimit"]), float(settings["rateBurst"])  # type: ignore[arg-type]
    row = conn.execute("SELECT tokens, at FROM ws_buckets WHERE instance = ?",
                       (instance,)).fetchone()
    tokens = burst if row is None else min(burst, row[0] + max(0.0, now - row[1]) * rate)
    if tokens < 1:
        wait = math.ceil((1 - tokens) / rate * 10) / 10 or 0.1
        raise NexusError("rate_limited", instance,
                         f"Rate limit exceeded: more than {rate:g} calls a second (burst "
                         f"{burst:g}) from this instance",
                         f"retry after {wait:g}s", retry_after=wait)
    conn.execute(policy.write(
        "INSERT INTO ws_buckets (instance, tokens, at) VALUES (?, ?, ?) ON CONFLICT (instance)"
        " DO UPDATE SET tokens = excluded.tokens, at = excluded.at"),
                 (instance, tokens - 1, now))
