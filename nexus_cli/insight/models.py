"""Argument and result models of session insight (transcripts, stats, search, titles, the wait
graph): the source of their schemas in contract/tools.json (compiled by `python -m
nexus_cli.gen`; never imported when a tool runs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from ..core.models import AllWorkspaces, Args, Epoch, PeerRef, Result, Stamp, Status, Target

EventType = Literal["user/message", "assistant/message", "tool/call", "tool/result", "turn/end",
                    "turn/start", "usage", "compaction", "system", "error"]


class Usage(Result):
    input: int = Field(description="Prompt tokens, cached ones included.")
    output: int = Field(description="Output tokens (reasoning included).")
    cache_read: int
    cache_write: int
    reasoning: int


class TranscriptEvent(Result):
    seq: int = Field(description="Position in the transcript's events from 0; counted from "
                     "the end (-1 the newest) when only the end was read (`scan: tail`).")
    type: EventType
    time: str | None = Stamp("When the client wrote it (with --timestamps)")
    time_epoch: float | None = Epoch("When the client wrote it (with --timestamps)")
    offset: int = Field(description="Byte offset of the transcript line it came from: the "
                        "whole record is there.")
    text: str | None = None
    text_chars: int | None = Field(None, description="The text's full length, when it was cut "
                                   "to fit (the whole text is at `offset`).")
    tool: str | None = None
    args: Any = Field(None, description="The tool call's arguments (long values cut).")
    call_id: str | None = None
    is_error: bool | None = None
    model: str | None = None
    usage: Usage | None = None
    turn_id: str | None = None
    subtype: str | None = None
    duration_ms: float | None = None
    ttft_ms: float | None = None
    llm_ms: float | None = None
    aborted: str | None = None
    error: str | None = None


class Provenance(Result):
    session_id: str
    resolved_by: str = Field(description="How the target was matched: id, handle, name (nexus "
                             "knows it), transcript id or transcript handle (a session nexus "
                             "never saw), self.")
    transcript_path: str
    path_source: Literal["hook", "found"] = Field(description="hook: the path its hooks "
                                                  "reported; found: looked up by its id.")
    transcript_mtime: str | None = Stamp("When the transcript last changed")
    transcript_mtime_epoch: float | None = Epoch("When the transcript last changed")
    transcript_age_seconds: float = Field(description="How long ago that was.")
    transcript_bytes: int
    warning: str = Field(description="A transcript is not proof that a peer answered you.")


class SessionInfo(Result):
    id: str
    client: Literal["claude", "codex"]
    handle: str | None = Field(description="nexus's handle, when nexus knows the session.")
    name: str | None = Field(description="nexus's name, when nexus knows the session.")
    title: str | None = Field(description="The title given with `nexus rename`, else the first "
                              "line of its first prompt.")
    cwd: str | None
    version: str | None = Field(None, description="The client's version that wrote it.")
    model: str | None = None


class Counts(Result):
    unknown: int = Field(description="Records of a type this reader does not know: skipped.")
    malformed: int = Field(description="Lines that are not a JSON record: skipped.")
    reasoning: int = Field(description="Reasoning or thinking blocks: stripped.")
    oversize: int = Field(0, description="Lines over 16 MB: not read (each stands as a system "
                          "event `oversize_line` giving its offset), so memory stays bounded.")


Preset = Literal["dialog", "tools", "all"]


class LogArgs(Args):
    target: str = Target
    tail: int = Field(50, ge=1, le=500, description="The last N matching events.")
    head: int = Field(5, ge=0, le=200, description="When cut, also the first N (0: newest only).")
    preset: Preset | None = Field(None, description="dialog (messages), tools (calls and "
                                  "results) or all; default: both.")
    types: list[EventType] | str | None = Field(
        None, description="Exact event types, comma-separated on the CLI; wins over --preset.")
    messages: int = Field(20, ge=1, le=500, description="At most this many user and assistant "
                          "messages among them.")
    max_bytes: int = Field(24_000, ge=2_000, le=61_440, description="Byte budget of the events "
                           "as JSON (60 KB at most); the oldest go first.")
    timestamps: bool = Field(False, description="Include each event's time.")
    tail_scan: bool = Field(False, description="Read from the end without parsing the whole "
                            "file (then total is a lower bound); the default above 16 MB.")
    full: bool = Field(False, description="Read the whole file even when it is large (an exact "
                       "total).")
    all_workspaces: bool = AllWorkspaces


class LogResult(Result):
    session: SessionInfo
    provenance: Provenance
    preset: Preset | None
    types: list[str] = Field(description="The type filter applied.")
    scan: Literal["full", "tail"] = Field(description="full: the whole file was read; tail: only "
                                          "its end (and its start for --head).")
    total: int = Field(description="Matching events in what was read.")
    total_exact: bool = Field(description="False when only the end was read: total is then "
                              "a lower bound.")
    shown: int
    head_shown: int = Field(description="Of `events`, how many are the oldest (--head), "
                            "before the gap of `omitted` events.")
    order: Literal["all", "tail", "head+tail"] = Field(description="What `events` holds: every "
                                                       "match, the newest, or the oldest and the "
                                                       "newest with `omitted` between.")
    truncated: bool
    count_truncated: bool = Field(description="--tail, --head or --messages cut the list.")
    bytes_truncated: bool = Field(description="--max-bytes dropped the oldest events.")
    omitted: int = Field(description="Matching events not shown (a lower bound when not exact).")
    next: str | None = Field(description="How to see more, when something was left out.")
    counts: Counts
    events: list[TranscriptEvent]


class SessionsArgs(Args):
    cwd: str | None = Field(None, min_length=1, max_length=4096,
                            description="Only sessions that ran in this directory (exact, after "
                            "resolving links).")
    all_workspaces: bool = AllWorkspaces
    limit: int = Field(20, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many.")


class SessionRow(Result):
    id: str
    client: Literal["claude", "codex"]
    title: str | None
    title_source: Literal["set", "prompt"] | None = Field(
        description="set: given with `nexus rename`; prompt: its first prompt.")
    handle: str | None
    name: str | None
    known: bool = Field(description="Whether nexus has seen the session (its hooks or commands).")
    status: Status | None = Field(description="nexus's view of it; null when nexus never saw it.")
    cwd: str
    project: str
    transcript_path: str | None
    created_at: str | None = Stamp("Its first record")
    created_at_epoch: float | None = Epoch("Its first record")
    updated_at: str | None = Stamp("Its last activity")
    updated_at_epoch: float | None = Epoch("Its last activity")
    message_count: int | None = Field(description="User and assistant messages.")
    input_tokens: int | None
    output_tokens: int | None
    llm_time_ms: int | None
    llm_time_human: str | None


class SessionsResult(Result):
    total: int = Field(description="Sessions matching, before the page was cut.")
    count: int
    offset: int
    limit: int
    truncated: bool
    next: str | None
    skipped: int = Field(description="Transcripts that could not be read (0: all were).")
    items: list[SessionRow]


class StatsArgs(Args):
    target: str | None = Field(None, min_length=1, max_length=300,
                               description="Session id, handle or name (default: your own).")
    all_workspaces: bool = AllWorkspaces


class StatsResult(Result):
    session: SessionInfo
    provenance: Provenance
    rounds: int = Field(description="Turns that ended (an aborted or failed turn counts).")
    steps: int = Field(description="Model responses.")
    user_messages: int
    assistant_messages: int
    tool_calls: int
    tool_errors: int
    compactions: int = Field(description="Compaction records (a summary and its boundary may "
                             "both count).")
    errors: int = Field(description="Turns that ended in an error (the model API failed).")
    llm_time_ms: int
    llm_time_human: str
    tool_time_ms: int = Field(description="Wall time with a tool running (parallel calls once).")
    tool_time_human: str
    ttft_ms: float | None = Field(description="Average time to first token, where recorded "
                                  "(Codex: per turn; Claude Code: to the first complete block "
                                  "of each response, an upper bound).")
    ttft_human: str | None
    ttft_samples: int
    tokens_per_sec: float | None = Field(description="Output tokens per second of model time.")
    cache_hit_rate: float | None = Field(description="Cached prompt tokens / prompt tokens.")
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    models: list[str]
    first_at: str | None = Stamp("Its first record")
    first_at_epoch: float | None = Epoch("Its first record")
    last_at: str | None = Stamp("Its last record")
    last_at_epoch: float | None = Epoch("Its last record")
    counts: Counts


class SearchArgs(Args):
    query: str = Field(min_length=1, max_length=500,
                       description="Text to find (case-insensitive), or a regex with --regex.")
    regex: bool = Field(False, description="QUERY is a regular expression (case-insensitive).")
    cwd: str | None = Field(None, min_length=1, max_length=4096,
                            description="Only sessions that ran in this directory (exact).")
    limit: int = Field(50, ge=1, le=200, description="Sessions to search, newest first.")
    all_sessions: bool = Field(False, description="Search every session in scope, not only the "
                               "newest --limit.")
    offset: int = Field(0, ge=0, description="Skip this many results.")
    page_size: int = Field(20, ge=1, le=100, description="Results per page.")
    session_time_limit: float = Field(2.0, ge=0.001, le=60, description="Seconds a session's "
                                      "content may take; past it its hits are partial.")
    no_index: bool = Field(False, description="Scan the transcripts; do not use or update the "
                           "index.")
    all_workspaces: bool = AllWorkspaces


class Snippet(Result):
    seq: int
    type: EventType
    time: str | None = Stamp("When")
    time_epoch: float | None = Epoch("When")
    snippet: str


class SearchHit(Result):
    session_id: str
    client: Literal["claude", "codex"]
    title: str | None
    name: str | None
    handle: str | None
    cwd: str
    updated_at: str | None = Stamp("Its last activity")
    updated_at_epoch: float | None = Epoch("Its last activity")
    matched: Literal["title", "content"] = Field(description="Where it matched first.")
    hits: int = Field(description="Matching events in its content.")
    timed_out: bool = Field(description="Its content took longer than --session-time-limit: "
                            "hits are partial.")
    snippets: list[Snippet]


class IndexUse(Result):
    used: bool = Field(description="Whether the full-text index answered (else a scan).")
    was_current: bool | None = Field(description="Whether the index already covered every "
                                     "searched transcript when the search began (null: unused).")
    current: bool | None = Field(description="Whether it covered them all when it answered "
                                 "(what it did not cover was scanned; null: unused).")
    updated_sessions: int
    indexed_bytes: int
    scanned_bytes: int = Field(description="Transcript bytes read directly.")
    reason: str | None = Field(description="Why the index was not used or not updated.")


class SearchResult(Result):
    query: str
    regex: bool
    total: int = Field(description="Sessions searched.")
    scanned: int = Field(description="The same as total.")
    matched: int = Field(description="Sessions that matched.")
    hits: int = Field(description="Matching events in all.")
    count: int
    offset: int
    limit: int
    page_size: int
    truncated: bool
    next: str | None
    content_search: bool = Field(description="False when only titles were searched.")
    timed_out: int = Field(description="Sessions whose content search hit the time limit.")
    timed_out_sessions: list[str] = Field(description="Their ids: their hits are partial "
                                          "(those with no hit are not in `results`).")
    index: IndexUse
    hint: str
    results: list[SearchHit]


class RenameArgs(Args):
    target: str = Target
    title: str = Field(min_length=1, max_length=120, description="The new title (one line).")
    all_workspaces: bool = AllWorkspaces


class RenameResult(Result):
    session_id: str
    title: str
    previous: str | None
    set_by: str
    note: str


class WaitsArgs(Args):
    on: str | None = Field(None, min_length=1, max_length=300,
                           description="Would waiting on this session close a cycle?")
    all_workspaces: bool = AllWorkspaces


class WaitNode(PeerRef):
    client: str
    status: Status
    listening: bool = Field(description="Its listen mode is on: it waits for any message.")


class WaitEdge(Result):
    from_: PeerRef = Field(alias="from")
    to: PeerRef
    kind: Literal["delegation", "ask"] = Field(description="delegation: an open task `from` "
                                               "gave `to`; ask: a question not answered yet.")
    id: str = Field(description="The task or message id.")
    since: str | None = Stamp("Since when")
    since_epoch: float | None = Epoch("Since when")
    text: str = Field(description="Its first line.")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Deadlock(Result):
    sessions: list[PeerRef] = Field(description="The sessions waiting on each other.")
    cycle: list[str] = Field(description="Ids along one cycle, the first repeated at the end.")
    blocked: bool = Field(description="True when none of them is working: nothing will move "
                          "without a person or a new message.")


class WaitsResult(Result):
    nodes: list[WaitNode]
    edges: list[WaitEdge]
    deadlocks: list[Deadlock]
    deadlock: bool = Field(description="Whether any cycle exists.")
    would_deadlock: bool | None = Field(description="With --on: whether you waiting on it "
                                        "would close a cycle.")
    would_cycle: list[str] | None = Field(description="With --on: that cycle.")
    note: str
