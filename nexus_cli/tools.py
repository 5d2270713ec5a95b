"""Every tool nexus offers, defined once. Faces (CLI, MCP), the contract and the man pages are
generated from these definitions."""

from __future__ import annotations

import functools

from . import doctor, install, messages, presence, tasks
from . import models as m
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
    name="ask", group="messages", title="Ask and wait",
    description="Send a question and wait for the reply to it (default 60 s; over MCP at most "
    "50 s, reported as timeout_clamped_from). On time-out (exit 7) the question stays open: the "
    "late reply arrives as a message, with a notice pointing at it, and wakes you.",
    args=m.AskArgs, result=m.AskResult, run=messages.ask, positional=("target", "text"),
    exit_false=("answered", 7),
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
    name="task_create", group="tasks", title="Create a task for yourself",
    description="Track work you (or your group) do yourself in the same ledger: status pending "
    "to completed/failed/cancelled, progress, a result URI, metadata, and an optional TTL after "
    "which an unfinished task fails. Finished self tasks are purged after 7 days.",
    args=m.TaskCreateArgs, result=m.TaskRecord, run=tasks.create, command=("task", "create"),
    positional=("text",),
))
register(Tool(
    name="task_get", group="tasks", title="Show a task",
    description="One task you created, dispatched or were assigned.",
    args=m.TaskIdArgs, result=m.TaskRecord, run=tasks.show, command=("task", "get"),
    positional=("task_id",), read_only=True, idempotent=True,
))
register(Tool(
    name="task_list", group="tasks", title="List your self tasks",
    description="The tasks you track for yourself, newest first (`nexus tasks` shows the whole "
    "ledger).",
    args=m.TaskListArgs, result=m.TasksResult, run=functools.partial(tasks.ledger, kind="self"),
    command=("task", "list"), read_only=True, idempotent=True,
))
register(Tool(
    name="task_update", group="tasks", title="Update a task",
    description="Change only the given fields of a task you created (or post progress and "
    "`running` on one assigned to you).",
    args=m.TaskUpdateArgs, result=m.TaskRecord, run=tasks.update, command=("task", "update"),
    positional=("task_id",), idempotent=True,
))
register(Tool(
    name="task_cancel", group="tasks", title="Cancel a task",
    description="Cancel an open task you created or dispatched; the assignee of a delegated task "
    "gets a notice to stop.",
    args=m.TaskIdArgs, result=m.TaskRecord, run=tasks.cancel, command=("task", "cancel"),
    positional=("task_id",), destructive=True, idempotent=True,
))
register(Tool(
    name="handoff", group="tasks", title="Hand a conversation over",
    description="When a conversation is replaced (after /clear or compaction, or with `now`), "
    "its successor inherits its name, unread messages, open obligations and listen mode, and "
    "messages and reports addressed to the old id keep arriving at the successor.",
    args=m.HandoffArgs, result=m.HandoffResult, run=presence.handoff, positional=("action",),
    destructive=True,
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
    read_only=True, idempotent=True, mcp=False, needs_caller=False, exit_false=("ok", 1),
))
register(Tool(
    name="maintenance", group="store", title="Run maintenance now",
    description="Expire unread messages older than 24 h (notifying their senders), clear "
    "sessions stuck listening after their waiter exited, purge old tool-use bindings. Normal "
    "commands do this lazily; this does it now. Also migrates an older store.",
    args=m.NoArgs, result=m.MaintenanceResult, run=presence.maintenance,
    destructive=True, idempotent=True, mcp=False, needs_caller=False,
))
