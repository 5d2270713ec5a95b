"""The task tools: delegation with reports, the ledger, and self-managed tasks."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import delegation, render, selftasks

register(Tool(
    name="delegate", group="tasks", title="Delegate a task",
    description="Give a session a tracked task; it alone closes it, with `report`, which comes "
    "back to you.",
    details="The task record and its message are committed together and announced to the "
    "target as a task; the report wakes you.",
    args="DelegateArgs", result="TaskRecord", run=delegation.delegate, render=render.task,
    positional=("target", "task"), stdin=("task",), open_world=True,  # --spawn starts a run
    example="nexus delegate codex@shop 'add a test for the empty cart; report when it passes'",
))
register(Tool(
    name="report", group="tasks", title="Report a task",
    description="Close a task assigned to you, with its outcome and what you "
    "produced.",
    details="The first final report wins; a different second one is refused (delegate a "
    "follow-up); an identical replay is harmless.",
    args="ReportArgs", result="TaskRecord", run=delegation.report, render=render.task,
    positional=("task_id",), destructive=True, idempotent=True,
    example="nexus report t-820b50a89a1c --status completed --result 'fixed in 4e1c2d0'",
))
register(Tool(
    name="tasks", group="tasks", title="The task ledger",
    description="Tasks you dispatched or were assigned, newest first.",
    details="--open lists the obligations you own and have not closed, oldest first; --self "
    "the tasks you track for yourself.",
    args="TasksArgs", result="TasksResult", run=delegation.tasks, render=render.tasks,
    read_only=True, idempotent=True,
    example="nexus tasks --open",
))
register(Tool(
    name="create_task", group="workspace", title="Create Task",
    description="Track work you do yourself in the task ledger, optionally linked to a meeting, "
    "with metadata and a TTL in milliseconds.",
    details="Status goes from pending to completed, failed or cancelled; an unfinished task "
    "fails when its TTL (milliseconds, as seed 004 has it) passes. Finished self tasks are "
    "purged after 7 days. Returns {task_id, status, message, task}.",
    args="TaskCreateArgs", result="TaskCreated", run=selftasks.create, render=render.created,
    command=("task", "create"), positional=("text",),
    example="nexus task create 'index the docs' --ttl 3600",
))
register(Tool(
    name="get_task", group="workspace", title="Get Task",
    description="One task you created, dispatched or were assigned (taskId).",
    args="TaskIdArgs", result="TaskRecord", run=selftasks.show, render=render.task,
    command=("task", "get"), positional=("taskId",), read_only=True, idempotent=True,
    example="nexus task get t-820b50a89a1c",
))
register(Tool(
    name="list_tasks", group="workspace", title="List Tasks",
    description="The tasks you track for yourself, newest first (`nexus tasks` shows the whole "
    "ledger).",
    args="TaskListArgs", result="SelfTasksResult", run=delegation.self_tasks,
    render=render.self_tasks, command=("task", "list"), read_only=True, idempotent=True, cli=False,
))
register(Tool(
    name="update_task", group="workspace", title="Update Task",
    description="Change only the given fields of a task you created (or post progress and "
    "`running` on one assigned to you).",
    args="TaskUpdateArgs", result="TaskRecord", run=selftasks.update, render=render.task,
    command=("task", "update"), positional=("taskId",), idempotent=True,
    example="nexus task update t-820b50a89a1c --status running --progress 0.5",
))
register(Tool(
    name="cancel_task", group="workspace", title="Cancel Task",
    description="Cancel an open task you created or dispatched; the assignee of a delegated task "
    "gets a notice to stop.",
    args="TaskIdArgs", result="TaskRecord", run=selftasks.cancel, render=render.task,
    command=("task", "cancel"), positional=("taskId",), destructive=True, idempotent=True,
    example="nexus task cancel t-820b50a89a1c",
))
