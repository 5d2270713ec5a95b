"""The message tools."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import ask, direct, history, render

register(Tool(
    name="send", group="messages", title="Send a message",
    description="Send a message to another session.",
    details="It is stored at once and announced to the recipient by its hooks; the text itself "
    "arrives through `read`.",
    args="SendArgs", result="SendResult", run=direct.send, render=render.sent,
    positional=("target", "text"), stdin=("text",),
    example="nexus send claude@shop 'the tests pass on main'",
))
register(Tool(
    name="read", group="messages", title="Read my messages",
    description="Take your unread messages, oldest first (marked read once handed to you).",
    args="ReadArgs", result="ReadResult", run=direct.read, render=render.read,
    example="nexus read --limit 5",
))
register(Tool(
    name="reply", group="messages", title="Reply to a message",
    description="Reply to a message sent to you.",
    details="The reply goes to its sender with reply_to set.",
    args="ReplyArgs", result="SendResult", run=direct.reply, render=render.sent,
    positional=("message_id", "text"), stdin=("text",),
    example="nexus reply m-3f2a9c81d0e4 'done, see the PR'",
))
register(Tool(
    name="ask", group="messages", title="Ask and wait",
    description="Ask and wait for the reply; a late reply still arrives as a message.",
    details="Default 60 s; over MCP at most 50 s, reported as timeout_clamped_from. On time-out "
    "(exit 7) the question stays open: the late reply arrives as a message, with a notice "
    "pointing at it, and wakes you.",
    args="AskArgs", result="AskResult", run=ask.ask, render=render.ask,
    positional=("target", "text"), stdin=("text",), exit_if=("answered", False, 7),
    example="nexus ask codex@shop 'which branch has the fix?' --timeout 120",
))
register(Tool(
    name="message_status", group="messages", title="Message receipt",
    description="Receipt of a message you sent: stored, delivered, read or expired.",
    details="Delivered means announced into the recipient's context. `unknown` (exit 3) for an "
    "id that is not yours.",
    args="MessageStatusArgs", result="MessageStatusResult", run=direct.status,
    render=render.status, command=("message", "status"), positional=("message_id",),
    read_only=True, idempotent=True, exit_if=("state", "unknown", 3),
    example="nexus message status m-3f2a9c81d0e4",
))
register(Tool(
    name="inbox", group="messages", title="Message history",
    description="Recent messages to and from you, with receipts; marks nothing read.",
    details="Newest first, read or not, with where each stands (stored, delivered, read, "
    "expired).",
    args="InboxArgs", result="InboxResult", run=history.inbox, render=render.inbox,
    positional=("peer",), read_only=True, idempotent=True,
    example="nexus inbox claude@shop --unread",
))
register(Tool(
    name="message_show", group="messages", title="Show a message",
    description="One message to or from you, whole, with its receipt; marks nothing read.",
    args="MessageShowArgs", result="Entry", run=history.show, render=render.show,
    command=("message", "show"), positional=("message_id",), read_only=True, idempotent=True,
    example="nexus message show m-3f2a9c81d0e4",
))
