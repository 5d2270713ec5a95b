"""The shared workspace's tools: seed 004's names, arguments and annotations, in the
`workspace` group (served with `--tools default,workspace` or `all`)."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import chat, docs, find, meetings, projects, render

G = "workspace"

register(Tool(
    name="sync_project_assets", group=G, title="Sync Project Assets",
    description="Create or replace a project: its full manifest (id [prefix]_[name], relations, "
    "endpoints, ...) and its internal docs.",
    details="The manifest's fields are seed 004's manifest v2; unknown fields are refused. "
    "Relations are dependency, parent, child or related. Internal docs are Markdown, at most "
    "1,000,000 characters. Recorded as project.sync.",
    args="SyncProjectArgs", result="ProjectAck", run=projects.sync, render=render.project_ack,
    command=("project", "sync"), stdin=("internalDocs",), destructive=True, idempotent=True,
    example="nexus project sync --manifest \"$(cat manifest.json)\" --internal-docs - < NOTES.md",
))
register(Tool(
    name="upload_project_asset", group=G, title="Upload Project Asset",
    description="Store a file (base64) with a project, replacing an asset of the same name; "
    "the same content again stores nothing new.",
    details="Assets are kept in the store, content-addressed (sha256): at most 10 MiB a file and "
    "100 MiB a project. Unsafe characters in the name become _; `.` is refused. Renaming or "
    "deleting the project renames or deletes its assets.",
    args="UploadAssetArgs", result="AssetAck", run=projects.upload, render=render.asset,
    command=("project", "upload"), positional=("projectId", "fileName"),
    stdin=("base64Content",), destructive=True, idempotent=True,
    example="nexus project upload shop hello.txt --base64-content aGVsbG8=",
))
register(Tool(
    name="update_project", group=G, title="Update Project",
    description="Change some fields of a project's manifest; the id changes only through "
    "rename_project.",
    args="UpdateProjectArgs", result="ProjectAck", run=projects.update,
    render=render.project_ack, command=("project", "update"), positional=("projectId",),
    destructive=True, idempotent=True,
    example="nexus project update shop --patch '{\"description\": \"the web shop\"}'",
))
register(Tool(
    name="rename_project", group=G, title="Rename Project",
    description="Change a project's id; every other project's relations to it and its assets "
    "follow in the same transaction.",
    args="RenameProjectArgs", result="RenameAck", run=projects.rename, render=render.renamed,
    command=("project", "rename"), positional=("oldId", "newId"), destructive=True,
    example="nexus project rename shop web-shop",
))
register(Tool(
    name="search_projects", group=G, title="Search Projects",
    description="Projects whose id, name, summary, tech stack or internal docs contain the "
    "query.",
    args="SearchProjectsArgs", result="SearchProjectsResult", run=projects.search,
    render=render.search, command=("project", "search"), positional=("query",),
    read_only=True, idempotent=True,
    example="nexus project search payments",
))
register(Tool(
    name="get_global_topology", group=G, title="Project Topology",
    description="Projects and their relations as a graph (with Graphviz DOT); with projectId, "
    "that project's neighbourhood.",
    args="TopologyArgs", result="TopologyResult", run=projects.topology, render=render.topology,
    command=("project", "topology"), positional=("projectId",), read_only=True, idempotent=True,
    example="nexus project topology",
))
register(Tool(
    name="get_project", group=G, title="Get Project",
    description="One project's manifest, internal docs (unless includeDocs is false) and "
    "assets.",
    args="GetProjectArgs", result="ProjectResult", run=projects.show, render=render.project,
    command=("project", "get"), positional=("projectId",), read_only=True, idempotent=True,
    example="nexus project get shop",
))
register(Tool(
    name="host_delete_project", group=G, title="Delete Project",
    description="Delete a project and its assets, irreversibly. An agent passes confirm: true "
    "once the person agreed.",
    args="DeleteProjectArgs", result="DeleteAck", run=projects.delete, render=render.deleted,
    command=("project", "delete"), positional=("projectId",), destructive=True,
    example="nexus project delete shop --confirm",
))
register(Tool(
    name="update_global_strategy", group=G, title="Update Global Strategy",
    description="Replace the global strategy document (Markdown); earlier versions are kept.",
    details="The last 50 versions are kept; `nexus doc strategy --history N` lists them with "
    "the diff from the previous one. Recorded as strategy.update.",
    args="StrategyArgs", result="StrategyAck", run=docs.set_strategy,
    render=render.strategy_ack, command=("doc", "set-strategy"), positional=("content",),
    stdin=("content",), destructive=True, idempotent=True,
    example="nexus doc set-strategy \"$(cat STRATEGY.md)\"",
))
register(Tool(
    name="get_global_strategy", group=G, title="Get Global Strategy",
    description="The global strategy document; with history, its last versions and the diff "
    "from the previous one.",
    args="GetStrategyArgs", result="StrategyResult", run=docs.get_strategy,
    render=render.strategy, command=("doc", "strategy"), read_only=True, idempotent=True,
    example="nexus doc strategy",
))
register(Tool(
    name="list_global_docs", group=G, title="List Global Docs",
    description="The global shared documents, most recently updated first.",
    args="NoArgs", result="DocsResult", run=docs.list_docs, render=render.docs,
    command=("doc", "list"), read_only=True, idempotent=True,
    example="nexus doc list",
))
register(Tool(
    name="get_global_doc", group=G, title="Get Global Doc",
    description="One global shared document, whole.",
    args="DocIdArgs", result="DocResult", run=docs.get_doc, render=render.doc,
    command=("doc", "get"), positional=("docId",), read_only=True, idempotent=True,
    example="nexus doc get api-style",
))
register(Tool(
    name="sync_global_doc", group=G, title="Sync Global Doc",
    description="Create or replace a global shared document (Markdown) under a stable id.",
    args="SyncDocArgs", result="DocAck", run=docs.sync_doc, render=render.doc_ack,
    command=("doc", "sync"), positional=("docId", "title", "content"), stdin=("content",),
    destructive=True, idempotent=True,
    example="nexus doc sync api-style 'API style' \"$(cat api-style.md)\"",
))
register(Tool(
    name="list_meetings", group=G, title="List Meetings",
    description="Meetings, newest first, with participants, message and decision counts; "
    "filter by status.",
    details="Read a meeting's messages with read_messages(meetingId) (`nexus chat read "
    "--meeting-id ID`).",
    args="ListMeetingsArgs", result="MeetingsResult", run=meetings.list_meetings,
    render=render.meetings, command=("meeting", "list"), read_only=True, idempotent=True,
    example="nexus meeting list --status active",
))
register(Tool(
    name="start_meeting", group=G, title="Start Meeting",
    description="Open a meeting on a topic; you are its initiator, and messages go to it while "
    "it is the active one.",
    args="StartMeetingArgs", result="MeetingAck", run=meetings.start, render=render.meeting,
    command=("meeting", "start"), positional=("topic",),
    example="nexus meeting start 'release 2.0 plan'",
))
register(Tool(
    name="end_meeting", group=G, title="End Meeting",
    description="Close a meeting (the active one by default) with an optional summary; its "
    "DECISION messages go into its record.",
    details="Only the initiator, or the person at the shell, may end, archive or reopen a "
    "meeting.",
    args="EndMeetingArgs", result="MeetingAck", run=meetings.end, render=render.meeting,
    command=("meeting", "end"), positional=("meetingId",), destructive=True, idempotent=True,
    example="nexus meeting end --summary 'ship on Friday'",
))
register(Tool(
    name="archive_meeting", group=G, title="Archive Meeting",
    description="Archive a closed meeting (initiator only).",
    args="MeetingIdArgs", result="MeetingAck", run=meetings.archive, render=render.meeting,
    command=("meeting", "archive"), positional=("meetingId",), destructive=True, idempotent=True,
    example="nexus meeting archive mtg-1a2b3c4d",
))
register(Tool(
    name="reopen_meeting", group=G, title="Reopen Meeting",
    description="Make a closed or archived meeting active again (initiator only).",
    args="MeetingIdArgs", result="MeetingAck", run=meetings.reopen, render=render.meeting,
    command=("meeting", "reopen"), positional=("meetingId",), destructive=True, idempotent=True,
    example="nexus meeting reopen mtg-1a2b3c4d",
))
register(Tool(
    name="send_message", group=G, title="Send Message",
    description="Post to a meeting (the one named, else the active one) or else to global chat; "
    "@name wakes that session. For one session, use send.",
    details="Categories: MEETING_START, PROPOSAL, DECISION, UPDATE, CHAT (the default). Others "
    "are told briefly by their hooks, without being woken, unless addressed by @name or "
    "handle, or a DECISION is posted in a meeting they joined.",
    args="SendMessageArgs", result="SentMessage", run=chat.send, render=render.sent,
    command=("chat", "send"), positional=("message",), stdin=("message",),
    example="nexus chat send 'tests green, merging' --category UPDATE",
))
register(Tool(
    name="read_messages", group=G, title="Read Messages",
    description="Meeting or global chat messages not yet returned to you, oldest first "
    "(count 1-500); each call moves your own cursor.",
    args="ReadMessagesArgs", result="ReadMessagesResult", run=chat.read, render=render.messages,
    command=("chat", "read"),
    example="nexus chat read --count 20",
))
register(Tool(
    name="host_maintenance", group=G, title="Host Maintenance",
    description="Prune the oldest global chat messages or clear them all. An agent passes "
    "confirm: true once the person agreed.",
    args="MaintenanceArgs", result="MaintenanceResult", run=chat.maintain,
    render=render.maintenance, command=("chat", "maintenance"), positional=("action",),
    destructive=True,
    example="nexus chat maintenance prune --count 100",
))
register(Tool(
    name="find", group=G, title="Find in the workspace",
    description="Full-text search over project docs, the strategy, global docs, meeting and "
    "global chat and your direct messages; ranked, with snippets.",
    details="Words must all match; \"a phrase\", prefix*, OR and NOT work as in SQLite FTS5 "
    "(in team mode too). "
    "--kind narrows to one kind; --project-id to a project's docs and what sessions in its "
    "localPath wrote. `total` is counted up to 1,000.",
    args="FindArgs", result="FindResult", run=find.find, render=render.find,
    command=("find",), positional=("query",), read_only=True, idempotent=True,
    example="nexus find checkout --kind doc",
))
