"""One call of every MCP tool that succeeds, and one that fails, in an order where each call finds
what it needs (a message to reply to, a task to report, a meeting to end ...). The Python SDK
(tests/test_mcp.py) and the TypeScript SDK (tests/every_tool.mjs, the SDK the Inspector is built
on) run the same steps, and both validate every result against the tool's output schema.

A step is (label, tool, arguments); a string argument "$label.path" is a field of an earlier
step's result (dots go into objects, digits into lists), and "{work}" in one is the project
folder; `steps()` adds a call of each tool that needs no arguments and has no step. The caller is
the session the server was started for (claude, A); B is a codex session beside it; a run A
dispatched (WORKER) waits for an approval."""

from __future__ import annotations

from typing import Any

from helpers import A_ID, B_ID, WORKER, plain, sid

PROJECT = "web_example.com"

STEPS: list[tuple[str, str, dict[str, Any]]] = [
    ("whoami", "whoami", {}),
    # first: the request's run is the test's own stand-in, which a reaping tool (info, run_list)
    # in the server's real process table finds gone
    ("approvals", "approvals", {}),
    ("approve", "approve", {"approval_id": "$approvals.items.0.id", "outcome": "reject",
                            "session": f"claude:{WORKER}"}),
    ("peers", "peers", {}),
    ("profile", "profile", {"note": "every tool"}),
    ("status", "status", {"target": B_ID}),
    ("listen", "listen", {"state": "off"}),
    ("handoff", "handoff", {"action": "status"}),
    ("send", "send", {"target": B_ID, "text": "hello", "mode": "steer"}),
    ("message_status", "message_status", {"message_id": "$send.message_id"}),
    ("message_show", "message_show", {"message_id": "$send.message_id"}),
    ("inbox", "inbox", {}),
    ("ask", "ask", {"target": B_ID, "text": "ready?", "timeout": 0}),
    ("read", "read", {}),
    ("delegate", "delegate", {"target": B_ID, "task": "port the parser"}),
    ("tasks", "tasks", {}),
    ("create_task", "create_task", {"text": "a task of my own"}),
    ("get_task", "get_task", {"taskId": "$create_task.task_id"}),
    ("list_tasks", "list_tasks", {}),
    ("update_task", "update_task", {"taskId": "$create_task.task_id", "progress": 0.5}),
    ("cancel_task", "cancel_task", {"taskId": "$create_task.task_id"}),
    ("list_events", "list_events", {}),
    ("reserve", "reserve", {"paths": ["docs/"]}),
    ("reservations", "reservations", {}),
    ("guard", "guard", {"paths": ["README.md"]}),
    ("release", "release", {"all": True}),
    ("sync_project_assets", "sync_project_assets", {
        "manifest": {"id": PROJECT, "name": "Example", "description": "an example project",
                     "techStack": ["python"], "relations": [], "lastUpdated": "2026-12-01",
                     "repositoryUrl": "", "localPath": "", "endpoints": [],
                     "apiSpec": []},
        "internalDocs": "# Example\n"}),
    ("upload_project_asset", "upload_project_asset", {
        "projectId": PROJECT, "fileName": "note.txt", "base64Content": "aGVsbG8="}),
    ("update_project", "update_project", {"projectId": PROJECT,
                                          "patch": {"description": "still an example"}}),
    ("search_projects", "search_projects", {"query": "example"}),
    ("get_global_topology", "get_global_topology", {}),
    ("get_project", "get_project", {"projectId": PROJECT}),
    ("rename_project", "rename_project", {"oldId": PROJECT, "newId": "web_example.org"}),
    ("host_delete_project", "host_delete_project", {"projectId": "web_example.org",
                                                    "confirm": True}),
    ("update_global_strategy", "update_global_strategy", {"content": "# Strategy\n"}),
    ("get_global_strategy", "get_global_strategy", {}),
    ("sync_global_doc", "sync_global_doc", {"docId": "style", "title": "Style",
                                            "content": "short lines"}),
    ("list_global_docs", "list_global_docs", {}),
    ("get_global_doc", "get_global_doc", {"docId": "style"}),
    ("start_meeting", "start_meeting", {"topic": "api"}),
    ("send_message", "send_message", {"message": "REST?"}),
    ("read_messages", "read_messages", {}),
    ("list_meetings", "list_meetings", {}),
    ("end_meeting", "end_meeting", {"meetingId": "$start_meeting.meetingId"}),
    ("archive_meeting", "archive_meeting", {"meetingId": "$start_meeting.meetingId"}),
    ("reopen_meeting", "reopen_meeting", {"meetingId": "$start_meeting.meetingId"}),
    ("host_maintenance", "host_maintenance", {"action": "prune", "count": 1,
                                              "confirm": True}),
    ("find", "find", {"query": "REST"}),
    ("session_list", "session_list", {}),
    ("session_stats", "session_stats", {}),
    ("session_search", "session_search", {"query": "hello", "no_index": True}),
    ("session_rename", "session_rename", {"target": A_ID, "title": "every tool"}),
    ("session_log", "session_log", {"target": A_ID}),
    ("waits", "waits", {}),
    ("run", "run", {"client": "codex", "task": "over mcp"}),
    ("run_result", "run_result", {"run_id": "$run.id"}),
    ("run_list", "run_list", {}),
    ("run_cancel", "run_cancel", {"run_id": "$run.id"}),
    ("preset_list", "preset_list", {}),
    ("preset_get", "preset_get", {}),
    ("preset_set", "preset_set", {"preset_id": "review", "scope": "session", "session": B_ID}),
    ("policy_get", "policy_get", {}),
    ("policy_set", "policy_set", {"mode": "read-only", "session": A_ID}),
    ("info", "info", {}),
    ("echo", "echo", {"text": "ping"}),
    ("run_tools", "run_tools", {"client": "claude"}),
    ("fs_write", "fs_write", {"path": "{work}/notes/every.txt", "content": "written"}),
    ("fs_read", "fs_read", {"path": "{work}/notes/every.txt"}),
    ("fs_list", "fs_list", {"path": "{work}/notes"}),
    ("fs_stat", "fs_stat", {"path": "{work}/notes/every.txt"}),
    ("report", "report", {"task_id": "$delegate.id", "status": "completed", "result": "done"}),
    ("reply", "reply", {"message_id": "$ask.message_id", "text": "late answer"}),
]


def steps() -> list[tuple[str, str, dict[str, Any]]]:
    """STEPS, then one call of each served tool that has no step of its own: with no arguments,
    or with plain values for the ones it requires (`plain`). A new tool of that kind needs no
    line here; one that requires what must exist first (an id, a session) fails with the line to
    add."""
    from nexus_cli.core.specs import served

    tools, stepped = served(("all",)), {tool for _, tool, _ in STEPS}
    extra: list[tuple[str, str, dict[str, Any]]] = []
    needing: dict[str, list[str]] = {}
    for name, tool in tools.items():
        if name in stepped:
            continue
        schema = tool["inputSchema"]
        args = {a: plain(schema["properties"][a]) for a in schema.get("required", [])}
        if None in args.values():
            needing[name] = list(args)
        extra.append((name, name, args))
    assert not needing, "tests/every_tool.py has no step for " + ", ".join(needing) + (
        ": add (label, tool, {arguments that work}) to STEPS, after the steps whose results "
        "it needs (\"$label.field\" reads one): " + "; ".join(
            f'("{name}", "{name}", {{{", ".join(f"{a!r}: ..." for a in required)}}})'
            for name, required in needing.items()))
    return [*STEPS, *extra]


# the steps B takes, on a server of its own (the codex session's), with its _meta
AS_B = {"report", "reply", "preset_set"}
B_META = {"sessionId": sid(2), "threadId": sid(2)}


def failing(tool: str) -> dict[str, Any]:
    """Arguments every tool refuses: one it does not have (invalid_argument, before any work)."""
    return {"no_such_argument": 1}


def resolve(value: Any, results: dict[str, Any], work: str) -> Any:
    if isinstance(value, dict):
        return {k: resolve(v, results, work) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, results, work) for v in value]
    if isinstance(value, str) and value.startswith("$"):
        label, *path = value[1:].split(".")
        found = results[label]
        for part in path:
            found = found[int(part)] if part.isdigit() else found[part]
        return found
    return value.replace("{work}", work) if isinstance(value, str) else value
