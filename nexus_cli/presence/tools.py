"""The presence tools: who am I, who is here, my name, what a session does, listen mode,
handoff."""

from __future__ import annotations

from ..core.availability import STATUS_HELP
from ..core.registry import Tool, register
from ..core.settings import IDLE_WAIT, LISTEN_WAIT
from . import handoff, presence, render

STATUSES = ("Statuses, judged when read (the client process by pid and start time, Claude "
            "Code's own registry file, the waiter): " + STATUS_HELP)

register(Tool(
    name="whoami", group="sessions", title="Who am I",
    description="Which session you are, how nexus knows, and your project scope.",
    args="NoArgs", result="WhoamiResult", run=presence.whoami, render=render.whoami,
    read_only=True, idempotent=True,
    example="nexus whoami",
))
register(Tool(
    name="peers", group="sessions", title="List peer sessions",
    description="Sessions in your project, most recently active first.",
    details="--all-workspaces widens to every project; --include-offline adds sessions that "
    "ended in the last 24 h. Read-only: it never wakes anyone. " + STATUSES,
    args="PeersArgs", result="PeersResult", run=presence.peers, render=render.peers,
    positional=("query",), read_only=True, idempotent=True,
    example="nexus peers --include-offline",
))
register(Tool(
    name="profile", group="sessions", title="Set my name and note",
    description="Set your display name and/or a note on what you are doing.",
    details="Names are unique among live sessions. --wake off: no message wakes you or holds "
    "your turn open (they wait for your next prompt; listen mode, if on, still listens); "
    "`nexus config set wake 0` makes that every session's default.",
    args="ProfileArgs", result="ProfileResult", run=presence.set_profile,
    render=lambda r: render.profile(r["profile"]), destructive=True, idempotent=True,
    example="nexus profile --name reviewer --note 'reviewing the checkout PR'",
))
register(Tool(
    name="status", group="sessions", title="Probe a session",
    description="A session's state, last answer, last tool and inbox, without waking it.",
    details="A finished turn is not a finished task: only a report (or a reply) says the work "
    "is done. A name reaches offline sessions of the last 24 h too. It says why the session has "
    "its status and what a message sent now would meet. " + STATUSES,
    args="StatusArgs", result="StatusResult", run=presence.status, render=render.status,
    positional=("target",), read_only=True, idempotent=True,
    example="nexus status claude@shop",
))
register(Tool(
    name="listen", group="sessions", title="Listen mode",
    description="on: when your turn ends, wait for the next message and continue with it.",
    details="While on, each time your turn ends nexus waits for a message and continues the "
    f"conversation as soon as one arrives: an unattended run (`claude -p`, `codex exec`) in its "
    f"Stop hook, up to {LISTEN_WAIT} s; a person's session (interactive Claude Code, the Codex "
    f"TUI) in its background Stop hook, up to {IDLE_WAIT // 60} minutes, so its screen shows no "
    "hook running and Esc at its prompt does not end the wait. For agents; a person at a shell "
    "uses `nexus watch`.",
    args="ListenArgs", result="ListenResult", run=presence.listen, render=render.listen,
    positional=("state",), destructive=True, idempotent=True,
    example="nexus listen on",
))
register(Tool(
    name="handoff", group="lifecycle", title="Hand a conversation over",
    description="Show or switch whether your successor after /clear inherits your name, mail "
    "and tasks; or hand over to a live session that accepts.",
    details="When a client starts a new conversation in the same process (Claude Code /clear, "
    "Codex /new or /clear), the new one inherits the old one's name, note, listen mode, unread "
    "messages and open obligations, and what is addressed to the old id keeps arriving at the "
    "successor. Compaction keeps the conversation. `now --to S` hands over to S at once only "
    "when S runs in your own client process; any other session is offered it (a notice) and "
    "takes over with `accept --from-session YOU` within an hour: nothing moves without it.",
    args="HandoffArgs", result="HandoffResult", run=handoff.handoff, render=render.handoff,
    positional=("action",), destructive=True,
    example="nexus handoff now --to codex@shop",
))
