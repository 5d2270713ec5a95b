"""The presence tools: who am I, who is here, my name, what a session does, listen mode,
handoff."""

from __future__ import annotations

from ..core.registry import Tool, register
from ..core.settings import LISTEN_WAIT
from . import handoff, presence, render

register(Tool(
    name="whoami", group="sessions", title="Who am I",
    description="Show which session this call acts as, how that was established, and its scope.",
    args="NoArgs", result="WhoamiResult", run=presence.whoami, render=render.whoami,
    read_only=True, idempotent=True,
))
register(Tool(
    name="peers", group="sessions", title="List peer sessions",
    description="List the sessions in your project (or everywhere with --all-workspaces), most "
    "recently active first. Read-only: it never wakes anyone.",
    args="PeersArgs", result="PeersResult", run=presence.peers, render=render.peers,
    positional=("query",), read_only=True, idempotent=True,
))
register(Tool(
    name="profile", group="sessions", title="Set my name and note",
    description="Set this session's display name (unique among live sessions) and/or a short "
    "note on what it is doing.",
    args="ProfileArgs", result="ProfileResult", run=presence.set_profile,
    render=lambda r: render.profile(r["profile"]), destructive=True, idempotent=True,
))
register(Tool(
    name="status", group="sessions", title="Probe a session",
    description="What a session is doing, read-only and without waking it: its state, the tail of "
    "its last assistant message and prompt, last tool, last turn end and inbox depth. A finished "
    "turn is not a finished task.",
    args="StatusArgs", result="StatusResult", run=presence.status, render=render.status,
    positional=("target",), read_only=True, idempotent=True,
))
register(Tool(
    name="listen", group="sessions", title="Listen mode",
    description=f"Turn listen mode on or off. While on, each time your turn ends the Stop hook "
    f"waits (up to {LISTEN_WAIT} s) and continues the conversation as soon as a message arrives.",
    args="ListenArgs", result="ListenResult", run=presence.listen, render=render.listen,
    positional=("state",), destructive=True, idempotent=True,
))
register(Tool(
    name="handoff", group="tasks", title="Hand a conversation over",
    description="When a conversation is replaced (after /clear or compaction, or with `now`), "
    "its successor inherits its name, unread messages, open obligations and listen mode, and "
    "messages and reports addressed to the old id keep arriving at the successor.",
    args="HandoffArgs", result="HandoffResult", run=handoff.handoff, render=render.handoff,
    positional=("action",), destructive=True,
))
