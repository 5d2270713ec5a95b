"""Every tool nexus offers, defined once. Faces (CLI, MCP), the contract and the man pages are
generated from these definitions."""

from __future__ import annotations

from . import doctor, install, messages, models as m, presence, tasks
from .registry import Tool, register

register(Tool(
    name="whoami", group="sessions", title="Who am I",
    description="Show which session this call acts as, how that was established, and its scope.",
    args=m.NoArgs, result=m.WhoamiResult, run=presence.whoami,
    read_only=True, idempotent=True,
))
register(Tool(
    name="peers", group="sessions", title="List peer sessions",
    description="List the sessions in your project (or everywhere with --all-workspaces), most "
    "recently active first. Read-only: it never wakes anyone.",
    args=m.PeersArgs, result=m.PeersResult, run=presence.peers, positional=("query",),
    read_only=True, idempotent=True,
))
register(Tool(
    name="profile", group="sessions", title="Set my name and note",
    description="Set this session's display name (unique among live sessions) and/or a short "
    "note on what it is doing.",
    args=m.ProfileArgs, result=m.ProfileResult, run=presence.set_profile,
    destructive=True, idempotent=True,
))
register(Tool(
    name="status", group="sessions", title="Probe a session",
    description="What a session is doing, read-only and without waking it: its state, the tail of "
    "its last assistant message and prompt, last tool, last turn end and inbox depth. A finished "
    "turn is not a finished task.",
    args=m.StatusArgs, result=m.StatusResult, run=presence.status, positional=("target",),
    read_only=True, idempotent=True,
))
register(Tool(
    name="listen", group="sessions", title="Listen mode",
    description="Turn listen mode on or off. While on, each time your turn ends the Stop hook "
    "waits (up to 590 s) and continues the conversation as soon as a message arrives.",
    args=m.ListenArgs, result=m.ListenResult, run=presence.listen, positional=("state",),
    destructive=True, idempotent=True,
))
register(Tool(
    name="send", group="messages", title="Send a message",
    description="Send a direct message to another session. It is stored at once and announced to "
    "the recipient by its hooks; the text itself arrives through `read`.",
    args=m.SendArgs, result=m.SendResult, run=messages.send, positional=("target", "text"),
))
register(Tool(
    name="read", group="messages", title="Read my messages",
    description="Take your unread messages and notices, oldest first, marking them read.",
    args=m.ReadArgs, result=m.ReadResult, run=messages.read,
))
register(Tool(
    name="reply", group="messages", title="Reply to a message",
    description="Reply to a message that was sent to you; the reply goes to its sender with "
    "reply_to set.",
    args=m.ReplyArgs, result=m.SendResult, run=messages.reply, positional=("message_id", "text"),
))
register(Tool(
    name="message_status", group="messages", title="Message receipt",
    description="What happened to a message you sent: stored, delivered into the recipient's "
    "context, read, or expired, with times. `unknown` for an id that is not yours.",
    args=m.MessageStatusArgs, result=m.MessageStatusResult, run=messages.status,
    command=("message", "status"), positional=("message_id",), read_only=True, idempotent=True,
))
register(Tool(
    name="delegate", group="tasks", title="Delegate a task",
    description="Hand a session a tracked obligation: a durable task record and its message, "
    "committed together, announced to the target as a task. Only the target may close it, with "
    "`report`; the report comes back to you as a message and wakes you.",
    args=m.DelegateArgs, result=m.TaskRecord, run=tasks.delegate, positional=("target", "task"),
))
register(Tool(
    name="report", group="tasks", title="Report a task",
    description="Close a task assigned to you as completed, blocked or failed, with what you "
    "produced. The first final report wins; a different second one is refused (delegate a "
    "follow-up); an identical replay is harmless.",
    args=m.ReportArgs, result=m.TaskRecord, run=tasks.report, positional=("task_id",),
    destructive=True, idempotent=True,
))
register(Tool(
    name="tasks", group="tasks", title="The task ledger",
    description="Tasks you dispatched or were assigned, newest first; --open lists the "
    "obligations you own and have not closed, oldest first.",
    args=m.TasksArgs, result=m.TasksResult, run=tasks.ledger, read_only=True, idempotent=True,
))
register(Tool(
    name="path", group="store", title="Where the store lives",
    description="Print the store directory and database file (set NEXUS_HOME to move it).",
    args=m.NoArgs, result=m.PathResult, run=presence.store_path,
    read_only=True, idempotent=True, mcp=False, needs_caller=False,
))
register(Tool(
    name="install", group="clients", title="Wire a client up",
    description="Install nexus's hooks and MCP server into Claude Code or Codex (idempotent; "
    "unrelated settings kept; atomic write with a backup; --dry-run shows the diff).",
    args=m.InstallArgs, result=m.InstallResult, run=install.install, positional=("client",),
    destructive=True, idempotent=True, mcp=False, needs_caller=False,
))
register(Tool(
    name="uninstall", group="clients", title="Unwire a client",
    description="Remove exactly what `nexus install` added to a client's configuration.",
    args=m.InstallArgs, result=m.InstallResult, run=install.uninstall, positional=("client",),
    destructive=True, idempotent=True, mcp=False, needs_caller=False,
))
register(Tool(
    name="doctor", group="clients", title="Check the set-up",
    description="Read-only health check: the store, each client's hooks and MCP registration, "
    "hook trust, hook speed, stuck sessions. One line per check with a fix; exits 1 when any "
    "check fails.",
    args=m.DoctorArgs, result=m.DoctorResult, run=doctor.doctor,
    read_only=True, idempotent=True, mcp=False, needs_caller=False, exit_false="ok",
))
register(Tool(
    name="maintenance", group="store", title="Run maintenance now",
    description="Expire unread messages older than 24 h (notifying their senders), clear "
    "sessions stuck listening after their waiter exited, purge old tool-use bindings. Normal "
    "commands do this lazily; this does it now. Also migrates an older store.",
    args=m.NoArgs, result=m.MaintenanceResult, run=presence.maintenance,
    destructive=True, idempotent=True, mcp=False, needs_caller=False,
))
