"""Direct messages: send, read, reply, and the receipts a sender may see. Stdlib only."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from ..core import availability, discovery, sessions, unseen
from ..core.context import Ctx
from ..core.discovery import peer_ref
from ..core.errors import NexusError
from ..core.listing import replayed
from ..tasks import ledger
from . import mailbox
from .mailbox import insert, notice

if TYPE_CHECKING:
    from .models import MessageStatusArgs, ReadArgs, ReplyArgs, SendArgs

OPEN_WORK_LISTED = 3  # the oldest open tasks a `read` names (seed 002: mail reminds of duties)


def outlook(seen: availability.Presence, wake: bool = True, handle: str | None = None) -> str:
    """When the recipient will see a message, given its presence (and whether the message may
    wake it): what `send`, `reply`, `ask` and `delegate` tell the sender. `handle`: the session
    was named by its name, which reaches live sessions only (what `status` tells)."""
    if seen.status == "offline" and handle:
        return (f"it is offline ({seen.reason}): a name reaches live sessions only, so a message "
                f"to its name is refused; sent to its handle {handle}, it is kept and reaches it "
                "when it resumes")
    if seen.status == "offline":
        return f"it is offline ({seen.reason}): the message is kept and reaches it when it resumes"
    if seen.status == "waiting":
        return (f"it waits for a person ({seen.waiting_for}) and cannot answer until that is "
                "answered; then it sees the announcement after its next tool call")
    if seen.status == "working":
        return "it is in a turn: it sees the announcement after its next tool call"
    if not wake:
        return "you asked not to wake it (--no-wake): the message waits for its next prompt"
    if seen.wakeable is None:  # a person, or another machine's session as it recorded itself
        return {"listening": "it is listening: it gets the message at once",
                "idle": "it sees the message when it next reads its inbox or starts a turn"}.get(
                    seen.status, "it sees the message at its next prompt")
    if not seen.wakeable:
        return f"nothing can wake it now: {seen.reason}" + (
            "" if seen.reason == availability.HOOKLESS
            else "; the message waits for its next prompt")
    if seen.status == "listening":
        return "it is listening: it is woken at once and can answer right away"
    return f"it is woken at once ({seen.reason})"


def _sent(ctx: Ctx, conn: sqlite3.Connection, mid: str, duplicate: bool,
          known: tuple[dict, sqlite3.Row] | None = None) -> dict:
    """What `send` and `reply` return; `known`: the message and its recipient's row, when the
    caller has them at hand (no second look at the store)."""
    msg, to = known if known else (mailbox.known(conn, mid), None)
    if to is None:
        to = sessions.get(conn, msg["recipient"])
    seen = availability.presence(to, ctx.now) if to is not None else availability.Presence(
        "offline", "no such session has been seen yet")
    return {
        "message_id": mid,
        "to": {**peer_ref(to, msg["recipient"]), "status": seen.status},
        "reply_to": msg["reply_to"],
        "request_id": msg["request_id"],
        "duplicate": duplicate,
        "mode": "queue" if msg["defer"] else "steer",
        "created_at_epoch": msg["created_at"],
        "wake": bool(msg["wake"]),
        "outlook": outlook(seen, bool(msg["wake"])) + watch_note(msg, seen)
        + (starting(ctx, conn, to) if seen.status == "offline" else ""),
    }


def starting(ctx: Ctx, conn: sqlite3.Connection, to: sqlite3.Row | None) -> str:
    """Sent to an offline session: whether a process of its client runs in its project that
    nexus has not seen yet (a Codex TUI before its first prompt), which is not this session."""
    if to is None or not to["client_pid"]:
        return ""
    found = unseen.running(conn, ctx.store.root, to["project"], to["client"])
    return f"; {unseen.said(found[0])}, as a session of its own (send to it then)" if found else ""


def watch_note(msg: sqlite3.Row | dict, seen: availability.Presence) -> str:
    """What `--notify-when-idle` will tell the sender, when it asked."""
    if not msg["notify_when_idle"]:
        return ""
    if seen.status == "offline":
        return "; you are told when it next ends a turn or listens after it resumes"
    return "; you are told when it next ends a turn, listens or goes offline"


def _replay(ctx: Ctx, conn: sqlite3.Connection, me: sessions.Caller, request_id: str | None,
            text: str, target: str, reply_to: str | None) -> dict | None:
    """With a request id already used by this sender: the original (same content) or an error."""
    if request_id is None:
        return None
    prior = mailbox.by_request(conn, me.id, request_id)
    same = prior is not None and (prior["text"], prior["target"], prior["reply_to"]) == (
        text, target, reply_to)
    if prior is None or not replayed(prior, same, request_id, "message"):
        return None
    return _sent(ctx, conn, prior["id"], duplicate=True)


def _post(ctx: Ctx, conn: sqlite3.Connection, me: sessions.Caller, to: sqlite3.Row | str,
          text: str, target: str, reply_to: str | None, request_id: str | None,
          notify_when_idle: bool = False, mode: str = "auto", wake: bool = True) -> dict:
    to_id = to if isinstance(to, str) else to["id"]
    defer = not isinstance(to, str) and mailbox.pick_mode(mode, to, ctx.now) == "queue"
    watch: int = int(notify_when_idle)
    if watch and not isinstance(to, str) and sessions.gone(to, ctx.now):
        watch = 2  # offline already: the notice waits for it to come back
    mid = insert(conn, sender=me.id, recipient=to_id, text=text, now=ctx.now, target=target,
                 reply_to=reply_to, request_id=request_id, notify_when_idle=watch,
                 known=None if isinstance(to, str) else to, defer=defer, wake=wake)
    if wake:
        ctx.wake_later(to_id)
    known = None
    if not isinstance(to, str) and not to["successor"]:  # not handed over: it went to `to`
        known = ({"recipient": to_id, "reply_to": reply_to, "request_id": request_id,
                  "created_at": ctx.now, "defer": defer, "wake": int(wake),
                  "notify_when_idle": watch}, to)
    return _sent(ctx, conn, mid, duplicate=False, known=known)


def send(ctx: Ctx, a: SendArgs) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        replay = _replay(ctx, conn, me, a.request_id, a.text, a.target, None)
        if replay is not None:
            return replay
        to = discovery.resolve_target(conn, me, a.target, ctx.now, a.all_workspaces)
        return _post(ctx, conn, me, to, a.text, a.target, None, a.request_id,
                     a.notify_when_idle, a.mode, wake=not a.no_wake)


def reply(ctx: Ctx, a: ReplyArgs) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        original = mailbox.get(conn, a.message_id)
        if original is not None and original["recipient"] != me.id:
            original = None
        if original is None or original["kind"] == "notice":
            raise NexusError(
                "message_not_found", a.message_id,
                "no message with that id was sent to you" if original is None
                else "notices from nexus cannot be replied to",
                "check the id in `nexus read` output",
            )
        sender = original["sender"]
        replay = _replay(ctx, conn, me, a.request_id, a.text, sender, a.message_id)
        if replay is not None:
            return replay
        sent = _post(ctx, conn, me, sender, a.text, sender, a.message_id, a.request_id)
        if original["ask_state"] == "timed_out":  # the asker stopped waiting: point at the answer
            notice(conn, sender,
                   f"late reply to your question {a.message_id}: {sent['message_id']} "
                   "has the answer (`nexus read`)", ctx.now, reply_to=sent["message_id"])
        if original["ask_state"]:
            mailbox.set_ask_state(conn, a.message_id, "answered")
        return sent


def read(ctx: Ctx, a: ReadArgs) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        rows = mailbox.take(conn, me.id, a.count, ctx.now)
        who = mailbox.holder()
        mailbox.lease(conn, rows, ctx.now, who)
        remaining = mailbox.unread_count(conn, me.id) - len(rows)
        owed, oldest = ledger.open_work(conn, me.id, OPEN_WORK_LISTED)
        return ctx.hand_over({"messages": [message(conn, r) for r in rows], "count": len(rows),
                              "remaining": remaining, "open_work_count": owed,
                              "open_work": oldest},
                             lambda again: mailbox.release(again, rows, who),
                             lambda done: mailbox.confirm(done, rows, ctx.now, who))


def message(conn: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
    """A message as `read` and `ask` return it."""
    return {"message_id": row["id"], "kind": row["kind"],
            "from": discovery.ref(conn, row["sender"]), "reply_to": row["reply_to"],
            "text": row["text"], "created_at_epoch": row["created_at"]}


def status(ctx: Ctx, a: MessageStatusArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        msg = mailbox.get(conn, a.message_id)
        if msg is None or msg["sender"] != me.id:
            return {"message_id": a.message_id, "state": "unknown",
                    "reason": "no message with this id was sent by you (mistyped, or not yours)"}
        to = sessions.get(conn, msg["recipient"])
        return {
            "message_id": msg["id"],
            "state": mailbox.state(msg),
            "to": peer_ref(to, msg["recipient"]),
            "created_at_epoch": msg["created_at"],
            "delivered_at_epoch": msg["delivered_at"],
            "delivered_via": msg["delivered_via"],
            "read_at_epoch": msg["read_at"],
            "expired_at_epoch": msg["expired_at"],
            "expired_why": msg["expired_why"],
        }
