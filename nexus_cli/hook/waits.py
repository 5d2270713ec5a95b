"""The hooks that wait: a listening Stop holds the turn open until a message arrives; the
background idle wait (`--wait`) wakes an idle conversation the way its client allows (Claude
Code: exit 2 from an asyncRewake hook; Codex: `codex queue`). Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import time
from types import ModuleType

from .. import clients
from ..core import sessions, shellcmd, text
from ..core.settings import IDLE_WAIT, LISTEN_WAIT, load
from ..core.store.db import Store
from ..delivery import announce, turns, waiting
from ..messages import mailbox
from ..tasks import ledger

Reply = tuple  # (stdout JSON or None, exit code, stderr text or None)
QUIET: Reply = (None, 0, None)


def wake_text(conn: sqlite3.Connection, root: str, sid: str, via: str | None
              ) -> tuple[str, list[str]] | None:
    """Inside the write that ends the wait, once news arrived: the announcement for one
    automatic turn and the ids it lists, or None at the limit (or when it was read or announced
    meanwhile: a Stop hook beside this wait may have). The turn counts in this very write, so
    no other wake or Stop can take the same last turn."""
    now = time.time()
    me = sessions.known(conn, sid)
    turn = turns.allowed(me, root)
    if not turn or not mailbox.has_news(conn, sid):
        return None
    rows, total = mailbox.unread(conn, sid, only_new=False)
    text = announce.announce(conn, me, rows, total, now, via, turn)
    turns.count(conn, sid, now, wake=True)
    return text, [r["id"] for r in rows]


def news(store: Store, sid: str, timeout: float, via: str | None
         ) -> tuple[str, list[str]] | None:
    """Wait for news, then its announcement (`wake_text`), composed in the write that ends the
    wait; None when the wait ended otherwise. What the announcement needs is made ready before
    the wait (the patterns that render a peer's text, the statements it reads with), not after
    the poke."""
    return _waited(store, sid, timeout, via)[1]


def _waited(store: Store, sid: str, timeout: float, via: str | None, resumed: bool = False
            ) -> tuple[str, tuple[str, list[str]] | None]:
    """`news`, with how the wait ended (waiting.wait_for_news's state)."""
    text.prepare()
    state, woke = waiting.wait_for_news(
        store, sid, timeout, lambda conn: wake_text(conn, store.root, sid, via),
        lambda conn: (mailbox.unread(conn, sid, only_new=False), shellcmd.name(conn)), resumed)
    return state, woke if state == "news" else None  # type: ignore[return-value]


def back_at_idle(store: Store, sid: str, adapter: ModuleType, deadline: float) -> bool:
    """A person's session began a turn while this waiter waited: follow the turn, slowly (a look
    every SAFETY_POLL seconds), until it ends. True when it ended without its Stop hook (Esc:
    nothing else would wait to wake it, so this waiter waits again); False when its Stop ran
    (that Stop's own waiter takes over), the client is gone, or time is up."""
    me = os.getpid()
    while time.monotonic() < deadline:
        time.sleep(waiting.SAFETY_POLL)
        with store.read() as conn:
            row = sessions.get(conn, sid)
        if row is None or row["status"] == "offline" or row["last_event"] in ("Stop", None) \
                or row["waiter_pid"] not in (None, me) \
                or (row["client_pid"] and not sessions.client_alive(row)):
            return False
        if adapter.turn_interrupted(row):
            return True
    return False


def listen(client: str, store: Store, sid: str) -> Reply:
    """Listen mode, unattended: hold the Stop open until something arrives, then continue the
    conversation."""
    woke = news(store, sid, LISTEN_WAIT, "listen")
    return (clients.ADAPTERS[client].continue_turn(woke[0]), 0, None) if woke else QUIET


def idle(client: str, sid: str, row: sqlite3.Row, store: Store, env: dict | os._Environ,
         data: dict) -> Reply:
    """The background wait after a turn ends: wake the conversation when something arrives (a
    person's listening session waits here too: its screen shows no hook running, and Esc at
    its prompt does not end the wait). In a person's Claude Code session a turn that begins
    meanwhile is followed: when the person interrupts it (no Stop hook runs), the wait comes
    back."""
    adapter = clients.ADAPTERS[client]
    if adapter.unattended(env):
        return QUIET  # `claude -p` waits for async hooks before exiting: never hold it
    if row["listening"] and not adapter.listens_in_background(data, env):
        return QUIET  # listen mode, unattended: the synchronous Stop hook does the waiting
    if not row["listening"] and not sessions.wants_waking(row, load(store.root)):
        return QUIET  # it asked not to be woken: messages wait for its next prompt
    rewake = adapter.WAKE == "rewake"  # exit 2 injects stderr and starts a turn
    via = "listen" if row["listening"] else "wake"
    deadline, resumed = time.monotonic() + IDLE_WAIT, False
    while True:
        state, woke = _waited(store, sid, deadline - time.monotonic(), via if rewake else None,
                              resumed)
        # a turn the person interrupted (Esc) runs no Stop hook: this waiter comes back then
        # (Claude Code; Codex 0.171.0 does not start a queued turn after an interrupted one)
        resumed = state == "activity" and rewake and adapter.listens_in_background(data, env) \
            and back_at_idle(store, sid, adapter, deadline)
        if not resumed:
            break
    if rewake or not woke:
        return (None, 2, woke[0]) if woke else QUIET
    error = adapter.queue(row["client_pid"], sid.split(":", 1)[1], woke[0], env)
    now = time.time()
    with store.write() as conn:
        if error:
            sessions.update(conn, sid, last_wake_error=error)
            ledger.wake_failed(conn, woke[1], f"wake failed: {error}; the task is stored in its "
                               "inbox and announced at its next prompt: check the target "
                               "(`nexus status`) before re-dispatching")
        else:
            mailbox.mark_delivered(conn, woke[1], now, via)
    return (None, 1, f"nexus hook: wake failed: {error}") if error else QUIET
