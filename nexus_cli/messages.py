"""Direct messages: send, read, reply, and the receipts a sender may see. Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from . import sessions
from .context import Ctx
from .errors import NexusError
from .mailbox import insert, mark_delivered, notice, peer_ref

OUTLOOK = {
    "listening": "it is woken at once and can answer right away",
    "working": "it sees the announcement after its next tool call",
    "idle": "it sees the announcement at its next prompt, or when woken",
    "offline": "it gets the message when it comes back",
}


def _sent(ctx: Ctx, conn: sqlite3.Connection, mid: str, duplicate: bool) -> dict:
    msg = conn.execute("SELECT * FROM messages WHERE id = ?", (mid,)).fetchone()
    to = sessions.get(conn, msg["recipient"])
    status = sessions.effective_status(to, ctx.now) if to is not None else "offline"
    return {
        "message_id": mid,
        "to": {**peer_ref(to, msg["recipient"]), "status": status},
        "reply_to": msg["reply_to"],
        "request_id": msg["request_id"],
        "duplicate": duplicate,
        "created_at_epoch": msg["created_at"],
        "outlook": OUTLOOK[status],
    }


def _replay(ctx: Ctx, conn: sqlite3.Connection, me: sessions.Caller, request_id: str | None,
            text: str, target: str, reply_to: str | None) -> dict | None:
    """With a request id already used by this sender: the original (same content) or an error."""
    if request_id is None:
        return None
    prior = conn.execute("SELECT * FROM messages WHERE sender = ? AND request_id = ?",
                         (me.id, request_id)).fetchone()
    if prior is None:
        return None
    if (prior["text"], prior["target"], prior["reply_to"]) == (text, target, reply_to):
        return _sent(ctx, conn, prior["id"], duplicate=True)
    raise NexusError("request_id_conflict", request_id,
                     f"it was already used for message {prior['id']} with other content",
                     "use a new request id for new content")


def _post(ctx: Ctx, conn: sqlite3.Connection, me: sessions.Caller, to_id: str, text: str,
          target: str, reply_to: str | None, request_id: str | None,
          notify_when_idle: bool = False) -> dict:
    mid = insert(conn, sender=me.id, recipient=to_id, text=text, now=ctx.now, target=target,
                 reply_to=reply_to, request_id=request_id, notify_when_idle=notify_when_idle)
    ctx.wake_later(to_id)
    return _sent(ctx, conn, mid, duplicate=False)


def send(ctx: Ctx, a: Any) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        replay = _replay(ctx, conn, me, a.request_id, a.text, a.target, None)
        if replay is not None:
            return replay
        to = sessions.resolve_target(conn, me, a.target, ctx.now, a.all_workspaces)
        return _post(ctx, conn, me, to["id"], a.text, a.target, None, a.request_id,
                     a.notify_when_idle)


def reply(ctx: Ctx, a: Any) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        original = conn.execute("SELECT * FROM messages WHERE id = ? AND recipient = ?",
                                (a.message_id, me.id)).fetchone()
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
            notice(conn, sender, f"late reply to your question {a.message_id}: {sent['message_id']} "
                   "has the answer (`nexus read`)", ctx.now, reply_to=sent["message_id"])
        if original["ask_state"]:
            conn.execute("UPDATE messages SET ask_state = 'answered' WHERE id = ?", (a.message_id,))
        return sent


def read(ctx: Ctx, a: Any) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        rows = conn.execute(
            "SELECT * FROM messages WHERE recipient = ? AND read_at IS NULL AND expired_at IS NULL"
            " ORDER BY seq LIMIT ?",
            (me.id, a.count),
        ).fetchall()
        ids = [r["id"] for r in rows]
        mark_delivered(conn, ids, ctx.now, "read")
        conn.executemany("UPDATE messages SET read_at = ? WHERE id = ?",
                         [(ctx.now, mid) for mid in ids])
        remaining = conn.execute(
            "SELECT count(*) FROM messages WHERE recipient = ? AND read_at IS NULL"
            " AND expired_at IS NULL", (me.id,)).fetchone()[0]
        senders = {r["sender"] for r in rows}
        known = {s: sessions.get(conn, s) for s in senders}
        messages = [
            {
                "message_id": r["id"],
                "kind": r["kind"],
                "from": peer_ref(known[r["sender"]], r["sender"]),
                "reply_to": r["reply_to"],
                "text": r["text"],
                "created_at_epoch": r["created_at"],
            }
            for r in rows
        ]
    return {"messages": messages, "count": len(messages), "remaining": remaining}


def status(ctx: Ctx, a: Any) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        msg = conn.execute("SELECT * FROM messages WHERE id = ? AND sender = ?",
                           (a.message_id, me.id)).fetchone()
        if msg is None:
            return {"message_id": a.message_id, "state": "unknown",
                    "reason": "no message with this id was sent by you (mistyped, or not yours)"}
        to = sessions.get(conn, msg["recipient"])
        state = ("read" if msg["read_at"] else "expired" if msg["expired_at"]
                 else "delivered" if msg["delivered_at"] else "stored")
        return {
            "message_id": msg["id"],
            "state": state,
            "to": peer_ref(to, msg["recipient"]),
            "created_at_epoch": msg["created_at"],
            "delivered_at_epoch": msg["delivered_at"],
            "delivered_via": msg["delivered_via"],
            "read_at_epoch": msg["read_at"],
            "expired_at_epoch": msg["expired_at"],
        }


ASK_MCP_MAX = 50.0  # Codex gives an MCP tool call 60 s by default: never outlast it


def ask(ctx: Ctx, a: Any) -> dict:
    """Send with a request id and wait for the correlated reply; on time-out the question stays
    open, and the late reply arrives as a message with a notice that points at it."""
    from .store import wake

    timeout, clamped = a.timeout, None
    if ctx.face == "mcp" and timeout > ASK_MCP_MAX:
        timeout, clamped = ASK_MCP_MAX, a.timeout
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        to = sessions.resolve_target(conn, me, a.target, ctx.now, a.all_workspaces)
        # the channel exists before COMMIT, so a reply cannot slip between send and wait
        channel = wake.Channel(ctx.store.root, me.id)
        try:
            mid = insert(conn, sender=me.id, recipient=to["id"], text=a.text, now=ctx.now,
                         target=a.target, request_id=a.request_id or "ask-" + os.urandom(6).hex())
            conn.execute("UPDATE messages SET ask_state = 'waiting' WHERE id = ?", (mid,))
        except BaseException:
            channel.close()
            raise
        ctx.wake_later(to["id"])
    started = time.monotonic()
    try:
        while True:
            with ctx.store.read() as conn:
                got = conn.execute("SELECT id FROM messages WHERE reply_to = ? AND recipient = ?"
                                   " ORDER BY seq LIMIT 1", (mid, me.id)).fetchone()
            waited = time.monotonic() - started
            if got or waited >= timeout or ctx.cancelled.is_set():
                break
            channel.wait(min(timeout - waited, 0.5))
    finally:
        channel.close()
    base = {"message_id": mid, "to": peer_ref(to, to["id"]), "waited_seconds": round(waited, 3),
            "timeout_seconds": timeout, "timeout_clamped_from": clamped}
    with ctx.write() as conn:
        if got is None:
            conn.execute("UPDATE messages SET ask_state = 'timed_out' WHERE id = ?", (mid,))
            return {**base, "answered": False, "reply": None,
                    "note": "no reply yet; the question stays open: the reply will arrive as a "
                            "message (announced, and waking you if you listen or idle)"}
        conn.execute("UPDATE messages SET ask_state = 'answered' WHERE id = ?", (mid,))
        mark_delivered(conn, [got["id"]], time.time(), "ask")
        conn.execute("UPDATE messages SET read_at = ? WHERE id = ?", (time.time(), got["id"]))
        row = conn.execute("SELECT * FROM messages WHERE id = ?", (got["id"],)).fetchone()
        return {**base, "answered": True, "note": None, "reply": {
            "message_id": row["id"], "kind": row["kind"],
            "from": peer_ref(sessions.get(conn, row["sender"]), row["sender"]),
            "reply_to": row["reply_to"], "text": row["text"], "created_at_epoch": row["created_at"]}}
