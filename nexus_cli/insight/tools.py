"""The insight tools: a session's log and numbers from its transcript, every session, search,
titles, and the wait graph."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import catalogue, log, render, search, stats, titles, waits

register(Tool(
    name="session_log", group="insight", title="Read a session's transcript",
    description="What a session did (prompts, answers, tool calls and results), from its "
    "transcript, newest last, within a size budget. Not proof it answered you.",
    details="TARGET is a session id, handle or name, or the id of a session nexus never saw "
    "(found among the clients' transcripts). By default the last 50 events, at most 20 of them "
    "messages, cut to 24 KB (--max-bytes up to 60 KB; the oldest go first), with the first 5 "
    "when the list was cut. --preset dialog shows the messages, tools the tool calls and their "
    "results, all every event (turn ends, usage, compactions, hook context). --tail-scan reads "
    "the end of the file only (then `total` is a lower bound and seq counts back from -1); a "
    "transcript over 16 MB is read that way unless --full. Every answer says which "
    "transcript it read, how the target was matched and how old the file is: a transcript is "
    "not proof that a peer answered you (your inbox is).",
    args="LogArgs", result="LogResult", run=log.log, render=render.log, command=("log",),
    positional=("target",), read_only=True, idempotent=True,
    example="nexus log claude@shop --tail 20",
))
register(Tool(
    name="session_list", group="insight", title="List sessions, with their transcripts",
    description="Sessions of both clients, nexus's and those only their transcripts know, "
    "newest first: title, messages, tokens, model time.",
    details="Merged by id from nexus and from ~/.claude/projects and ~/.codex/sessions (also "
    "sessions nexus never saw). --cwd keeps the sessions that ran in one directory (exact, after "
    "resolving links). `skipped` counts transcripts that could not be read. Totals come from "
    "the index, brought up to date for the page shown.",
    args="SessionsArgs", result="SessionsResult", run=catalogue.list_sessions,
    render=render.sessions, command=("sessions",), read_only=True, idempotent=True,
    example="nexus sessions --limit 10",
))
register(Tool(
    name="session_stats", group="insight", title="A session's numbers",
    description="Rounds, steps, model and tool time, time to first token, tokens per second, "
    "cache hit rate and token counts of a session (default: yours).",
    details="Read from the whole transcript. Rounds are ended turns; steps are model "
    "responses. Prompt tokens count cached ones too, for both clients; tool time counts "
    "parallel calls once.",
    args="StatsArgs", result="StatsResult", run=stats.stats, render=render.stats,
    command=("stats",), positional=("target",), read_only=True, idempotent=True,
    example="nexus stats codex@shop",
))
register(Tool(
    name="session_search", group="insight", title="Search sessions",
    description="Find sessions whose title or conversation holds a text (case-insensitive) or "
    "a --regex, newest first, with snippets.",
    details="Titles match first, then content (messages, tool calls and their output). The "
    "newest --limit sessions in scope are searched (--all-sessions: every one). A full-text "
    "index in the store answers in milliseconds; it is brought up to date from the transcripts "
    "as a search needs it (never by a hook), and what it does not cover yet is read directly: "
    "`index` says which. Each session's content may take --session-time-limit seconds (a "
    "--regex is matched in a child process stopped at that limit); `timed_out_sessions` names "
    "those cut short.",
    args="SearchArgs", result="SearchResult", run=search.search, render=render.search,
    command=("search",), positional=("query",), read_only=True, idempotent=True,
    example="nexus search 'flaky test'",
))
register(Tool(
    name="session_rename", group="insight", title="Title a session",
    description="Give a session a title (shown in listings, searched first). A session may "
    "title itself; the person at the shell any session.",
    details="A title is not a name: the name addresses a live session and stays unique; a "
    "title says what the conversation is about, also for sessions nexus never saw. One agent "
    "cannot retitle another's session (not_your_session).",
    args="RenameArgs", result="RenameResult", run=titles.rename, render=render.rename,
    command=("rename",), positional=("target", "title"), destructive=True, idempotent=True,
    example="nexus rename claude@shop 'checkout refactor'",
))
register(Tool(
    name="waits", group="insight", title="Who waits on whom",
    description="The wait graph (open delegations, unanswered asks, listening sessions) with "
    "cycles flagged as deadlocks. --on TARGET: would waiting on it deadlock?",
    details="An edge A -> B: A gave B a task still open, or asked B a question not answered "
    "yet. A cycle means the sessions in it wait on one another; `blocked` when none of them is "
    "working. Check before you wait.",
    args="WaitsArgs", result="WaitsResult", run=waits.waits, render=render.waits,
    read_only=True, idempotent=True,
    example="nexus waits",
))
