"""What each hook event does, one function per event (and per client where they differ). Each
runs inside the hook's write transaction and returns an `Outcome`: the client's reply, whom to
wake after COMMIT, and whether a listening Stop should wait. Stdlib only."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..core import sessions
from ..core.proctable import Proc
from ..core.record import Record

# what only some events need is imported by their handlers: a tool call (PostToolUse, the hot
# path) with nothing to say loads neither the mailbox nor the chat feed (messages.news says so)


class Event(Record):
    __slots__ = ()
    _fields = ("client", "sid", "data", "me", "now", "root", "proc", "env")
    _defaults = (None,)
    client: str
    sid: str
    data: dict
    me: sqlite3.Row  # the session's row after the event was recorded
    now: float
    root: str  # the store directory (settings)
    proc: Proc  # the client process that ran the hook
    env: dict | None  # the hook's environment (the client's)


class Outcome(Record):
    __slots__ = ()
    _fields = ("reply", "wake", "listen", "then", "told")
    _defaults = (None, (), False, None, False)
    reply: dict | None
    wake: tuple[str, ...]
    listen: bool
    then: Callable | None  # after COMMIT: (store) -> the client's reply (a permission wait)
    told: bool  # the handler found nothing announceable left (the entry need not ask again)


def context(event: str, text: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def session_start(conn: sqlite3.Connection, ev: Event) -> Outcome:
    from ..delivery import announce
    from ..messages import mailbox
    from ..presence import succession
    from ..workspace import feed

    succession.on_session_start(conn, ev.sid, ev.data.get("source"), ev.proc, ev.now, ev.root)
    me = sessions.known(conn, ev.sid)
    text = announce.greeting(conn, me, ev.now)
    rows, total = mailbox.unread(conn, ev.sid, only_new=False)
    if total:
        text += "\n" + announce.announce(conn, me, rows, total, ev.now, "session-start")
    work = announce.open_work(conn, ev.sid)
    chat = feed.news(conn, me)  # a new session hears of chat from here on
    from ..reservations import lifecycle  # imported by the events that need it only

    held = lifecycle.session_start(conn, me, ev.now, ev.root)
    text += "".join("\n" + p for p in (work, chat, held) if p)
    return Outcome(context("SessionStart", text))


def user_prompt(conn: sqlite3.Connection, ev: Event) -> Outcome:
    from ..delivery import announce, turns
    from ..messages import mailbox
    from ..workspace import feed

    turns.user_prompt(conn, ev.me, ev.now)
    rows, total = mailbox.unread(conn, ev.sid, only_new=False)
    parts = [announce.announce(conn, ev.me, rows, total, ev.now, "prompt")] if rows else []
    work = announce.open_work(conn, ev.sid)
    parts += [p for p in (work, feed.news(conn, ev.me)) if p]
    return Outcome(context("UserPromptSubmit", "\n".join(parts)) if parts else None)


def post_tool(conn: sqlite3.Connection, ev: Event) -> Outcome:
    if sessions.subagent(ev.data) is not None:
        return Outcome()  # a subagent's context is not the inbox owner's: it waits for the main
    from .. import messages

    if not messages.news(conn, ev.sid):
        return Outcome(told=True)  # (no news: nothing announceable either)
    from ..messages import mailbox
    from ..workspace import feed

    rows, total = mailbox.unread(conn, ev.sid, only_new=True)
    parts = []
    if rows:
        from ..delivery import announce

        parts.append(announce.announce(conn, ev.me, rows, total, ev.now, "tool"))
    chat = feed.news(conn, ev.me)
    if chat:
        parts.append(chat)
    return Outcome(context("PostToolUse", "\n".join(parts)) if parts else None)


def stop(conn: sqlite3.Connection, ev: Event) -> Outcome:
    """The turn continues once when mail arrived that was never announced, unless it may not
    wake the session (`send --no-wake`, or a session that does not want to be woken); mail
    already announced waits to be read and forces no turn. A listening session waits: here when
    unattended, else in the background."""
    from .. import clients
    from ..delivery import announce, notify, turns
    from ..messages import mailbox

    adapter = clients.ADAPTERS[ev.client]
    woken = notify.idle(conn, ev.sid, ev.now, "ended its turn")
    turn = turns.allowed(ev.me, ev.root)
    waking = turns.wakes(conn, ev.me, ev.root)
    reply = None
    if waking and turn and not ev.data.get("stop_hook_active"):
        turns.count(conn, ev.sid, ev.now, wake=False)
        rows, total = mailbox.unread(conn, ev.sid, only_new=False)
        reply = adapter.continue_turn(announce.announce(conn, ev.me, rows, total, ev.now, "stop",
                                                        turn))
    # a person's session listens in its background Stop hook (hook/waits.py: idle)
    listen = bool(ev.me["listening"] and turn and not waking
                  and not adapter.listens_in_background(ev.data, ev.env or {}))
    return Outcome(reply, tuple(woken), listen)


def session_end(conn: sqlite3.Connection, ev: Event) -> Outcome:
    from ..delivery import notify
    from ..reservations import lifecycle

    woken = notify.idle(conn, ev.sid, ev.now, "went offline")
    woken += lifecycle.session_end(conn, ev.me, ev.data.get("reason"), ev.now, ev.root)
    return Outcome(wake=tuple(woken))


def permission(conn: sqlite3.Connection, ev: Event) -> Outcome:
    """A run whose approvals are routed to nexus waits for `nexus approve`; anyone else's request
    gets no answer from nexus (the client decides as it would without the hook)."""
    from ..approvals import gate

    asked = gate.request(conn, ev.sid, ev.data, ev.proc.pid, ev.now, ev.root, ev.env or {})
    if asked is None:
        return Outcome()
    aid, deadline, dispatcher = asked
    sessions.update(conn, ev.sid, status="waiting", waiting_for=f"{sessions.waiting_for(ev.data)}"
                    f", answered through `nexus approve {aid}`")
    return Outcome(wake=(dispatcher,), then=lambda store: gate.wait(store, aid, deadline))


def nothing(conn: sqlite3.Connection, ev: Event) -> Outcome:
    return Outcome()


Handler = Callable[[sqlite3.Connection, Event], Outcome]
# (event, client) -> handler; (event, None) serves every client
HANDLERS: dict[tuple[str, str | None], Handler] = {
    ("SessionStart", None): session_start,
    ("UserPromptSubmit", None): user_prompt,
    ("PreToolUse", None): nothing,  # recording the event binds tool_use_id (the MCP caller)
    ("PostToolUse", None): post_tool,
    ("Stop", None): stop,
    ("SessionEnd", None): session_end,
    ("PermissionRequest", None): permission,
}


def handler(event: str, client: str) -> Handler | None:
    return HANDLERS.get((event, client)) or HANDLERS.get((event, None))


TOOL_CALLS = ("PreToolUse", "PostToolUse")


def maintain(conn: sqlite3.Connection, event: str, now: float) -> list[str]:
    """Upkeep when a round is due (once a minute at most), at every event but a tool call's: the
    call an agent waits for most often never pays for a round (a prompt, a Stop, a session's
    start or end, and every command do). Its modules load only when it runs."""
    if event in TOOL_CALLS:
        return []
    from ..maintenance import schedule

    if not schedule.due(conn, now):
        return []
    from ..maintenance import expiry

    return expiry.lazily(conn, now)
