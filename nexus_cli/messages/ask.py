"""Ask and wait: a question with a request id, and a wait for the reply that names it. On
time-out the question stays open; the late reply arrives as a message with a notice that points
at it. Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import TYPE_CHECKING

from ..core import availability, discovery, sessions
from ..core.context import Ctx
from ..core.listing import replayed
from ..core.settings import ASK_MCP_MAX
from . import direct, mailbox
from .direct import message

if TYPE_CHECKING:
    from .models import AskArgs


OPEN = ("the question stays open: the reply will arrive as a message (announced, and waking "
        "you if you listen or idle)")


def ask(ctx: Ctx, a: AskArgs) -> dict:
    timeout, clamped = a.timeout, None
    if ctx.face == "mcp" and timeout > ASK_MCP_MAX:
        timeout, clamped = ASK_MCP_MAX, a.timeout
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        prior = mailbox.by_request(conn, me.id, a.request_id) if a.request_id else None
        same = prior is not None and (prior["text"], prior["target"]) == (a.text, a.target)
        duplicate = replayed(prior, same, str(a.request_id), "question")
        to_id = prior["recipient"] if prior is not None and duplicate else \
            discovery.resolve_target(conn, me, a.target, ctx.now, a.all_workspaces)["id"]
        to = sessions.known(conn, to_id)
        seen = availability.presence(to, ctx.now)
        request_id = a.request_id or "ask-" + os.urandom(6).hex()
        if seen.status == "offline" and not duplicate:  # nobody to wait for: the question waits
            mid = mailbox.insert(conn, sender=me.id, recipient=to_id, text=a.text,  # for it
                                 now=ctx.now, target=a.target, request_id=request_id, known=to)
            mailbox.set_ask_state(conn, mid, "timed_out")  # its late reply comes with a notice
            return {"message_id": mid, "to": discovery.peer_ref(to, to_id),
                    "waited_seconds": 0.0, "timeout_seconds": timeout,
                    "timeout_clamped_from": clamped, "duplicate": False, "answered": False,
                    "reply": None, "outlook": direct.outlook(seen),
                    "note": "not waited for: it is offline; " + OPEN}
        # the channel exists before COMMIT, so a reply cannot slip between send and wait
        channel = ctx.store.channel(me.id)
        try:
            if prior is not None and duplicate:  # asked again: wait for its reply, ask nothing new
                mid = prior["id"]
            else:
                mid = mailbox.insert(conn, sender=me.id, recipient=to_id, text=a.text,
                                     now=ctx.now, target=a.target, request_id=request_id)
                ctx.wake_later(to_id)
            if prior is None or prior["ask_state"] != "answered":
                mailbox.set_ask_state(conn, mid, "waiting")
        except BaseException:
            channel.close()
            raise
    started = time.monotonic()
    step = 0.1 if ctx.progress else 0.5
    try:
        while True:
            with ctx.store.read() as conn:
                got = mailbox.first_reply(conn, mid, me.id)
                now_row = sessions.get(conn, to["id"]) if got is None else None
            waited = time.monotonic() - started
            if now_row is not None and sessions.gone(now_row, time.time()):
                seen = availability.presence(now_row, time.time())  # it went away meanwhile
                break
            if got or waited >= timeout or ctx.cancelled.is_set():
                break
            if ctx.progress:
                ctx.progress(f"waiting for a reply from {to['name']} ({seen.status})", waited)
            channel.wait(min(timeout - waited, step))
    except KeyboardInterrupt:  # the asker gave up: the late reply still comes, with a notice
        with ctx.write() as conn:
            mailbox.set_ask_state(conn, mid, "timed_out")
        raise
    finally:
        channel.close()
        if ctx.progress:
            ctx.progress("", -1)
    base = {"message_id": mid, "to": discovery.peer_ref(to, to_id),
            "waited_seconds": round(waited, 3), "timeout_seconds": timeout,
            "timeout_clamped_from": clamped, "duplicate": duplicate,
            "outlook": direct.outlook(seen)}
    with ctx.write() as conn:
        if got is None:
            mailbox.set_ask_state(conn, mid, "timed_out")
            return {**base, "answered": False, "reply": None,
                    "note": ("stopped waiting: it went offline; " if seen.status == "offline"
                             else "no reply yet; ") + OPEN}
        mailbox.set_ask_state(conn, mid, "answered")
        answer, at, who = mailbox.known(conn, got["id"]), time.time(), mailbox.holder()
        mailbox.lease(conn, [answer], at, who, via="ask")

        def undo(again: sqlite3.Connection) -> None:  # the answer stays unread: a late reply
            mailbox.release(again, [answer], who)
            mailbox.set_ask_state(again, mid, "timed_out")

        return ctx.hand_over({**base, "answered": True, "note": None,
                              "reply": message(conn, mailbox.known(conn, answer["id"]))}, undo,
                             lambda done: mailbox.confirm(done, [answer], at, who))
