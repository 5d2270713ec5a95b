"""Every limit, wait and expiry nexus applies, in one place, and the user's settings file.

Help texts, the README's tables and the man pages quote these values; `tests/test_docs.py` checks
that they agree. Stdlib only (the hooks read it)."""

from __future__ import annotations

import json
import os

# presence
STALE_AFTER = 30 * 60  # working/idle with no activity this long counts as offline
RECENT_OFFLINE = 24 * 3600  # `peers --include-offline` shows sessions active this recently
# delivery
LISTEN_WAIT = 590  # a listening Stop hook waits this long (its hook timeout is 600 s)
IDLE_WAIT = 3600  # the background idle wait after a turn ends
WOKEN_TURN = 60  # a prompt this soon after a wake is the woken turn itself
EXPIRE_AFTER = 24 * 3600  # unread messages expire; the sender gets a notice
IDLE_WATCH = 24 * 3600  # a `--notify-when-idle` subscription lapses
ANNOUNCE_LISTED = 5  # messages (and peers) listed per announcement
FIRST_LINE = 100  # characters of a message's first line in an announcement
# asking and binding
ASK_TIMEOUT = 60.0  # `ask` waits this long by default
ASK_MCP_MAX = 50.0  # and at most this long over MCP (Codex gives a tool call 60 s)
BINDING_TTL = 600  # a PreToolUse binding names the MCP caller this long
BINDING_PURGE = 3600  # bindings older than this are deleted
# tasks
TASK_HISTORY = 500  # task records kept per dispatcher (only finished, notified ones are evicted)
SELF_TASK_PURGE = 7 * 86400  # finished self tasks are deleted after this
MAX_TTL = 30 * 86400
# text
TEXT_MAX = 32_000
TASK_MAX = 24_000
NOTE_MAX = 200
METADATA_BYTES = 16_384  # a task's metadata, as JSON
METADATA_DEPTH = 8
# maintenance
MAINTAIN_EVERY = 60  # lazy maintenance runs at most this often

DEFAULTS: dict[str, object] = {"maxAutoTurns": 8}
BOUNDS = {"maxAutoTurns": (0, 100)}


def path(root: str) -> str:
    return os.path.join(root, "settings.json")


def load(root: str) -> dict[str, object]:
    """`settings.json` in the store directory over the defaults. An unreadable file is reported by
    `nexus doctor` and ignored here (a hook must never fail on it, nor rewrite it)."""
    out = dict(DEFAULTS)
    try:
        with open(path(root), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return out
    if isinstance(data, dict):
        for key, (low, high) in BOUNDS.items():
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
                out[key] = value
    return out
