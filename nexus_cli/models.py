"""Argument and result models of every tool: the single source of the CLI options, the MCP
`inputSchema`/`outputSchema`, `contract/tools.json` and the man pages."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

TEXT_MAX = 32_000


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


def Stamp(description: str) -> object:
    return Field(None, description=f"{description} (ISO 8601 with offset)")


def Epoch(description: str) -> object:
    return Field(None, description=f"{description} (seconds since the epoch)")


# -- shared shapes ------------------------------------------------------------------------------

Status = Literal["working", "idle", "listening", "offline"]


class PeerRef(Result):
    id: str = Field(description="Session id: claude:<id>, codex:<id> or user:<login>.")
    handle: str = Field(description="Stable short form: s- plus 12 hex digits (u- for users).")
    name: str = Field(description="Display name, unique among live sessions.")


class Profile(PeerRef):
    client: str = Field(description="claude, codex or user.")
    cwd: str
    project: str = Field(description="Project root (git top level, else cwd): the default scope.")
    note: str
    status: Status
    last_active_at: str | None = Stamp("Last activity")
    last_active_at_epoch: float | None = Epoch("Last activity")
    self: bool = Field(description="True for the calling session.")


class Page(Result):
    total: int = Field(description="Matches before the limit was applied.")
    count: int = Field(description="Items in this page.")
    offset: int
    limit: int
    truncated: bool = Field(description="True when more items follow.")
    next: str | None = Field(None, description="How to get the next page, when truncated.")


# -- arguments ----------------------------------------------------------------------------------

Target = Field(min_length=1, max_length=300,
               description="Exact session id, exact handle, exact name, or an unambiguous name "
               "substring.")
AllWorkspaces = Field(False, description="Look beyond the caller's project root.")
RequestId = Field(None, min_length=1, max_length=200,
                  description="Idempotency key: a retry with the same key and content returns "
                  "the original with duplicate=true.")
MessageId = Field(min_length=1, max_length=64, description="A message id (m-...).")


class NoArgs(Args):
    pass


class PeersArgs(Args):
    query: str | None = Field(None, max_length=300,
                              description="Case-insensitive substring over id, handle, name, cwd.")
    all_workspaces: bool = AllWorkspaces
    include_offline: bool = Field(False, description="Also offline sessions active in the last 24 h.")
    limit: int = Field(30, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many matches.")


class ProfileArgs(Args):
    name: str | None = Field(None, pattern=r"^[A-Za-z0-9._@#-]{1,48}$",
                             description="New name: 1-48 of A-Z a-z 0-9 . _ @ # -, unique among "
                             "live sessions.")
    note: str | None = Field(None, max_length=200, description="What you are doing (<= 200 chars).")


class StatusArgs(Args):
    target: str = Target
    all_workspaces: bool = AllWorkspaces


class ListenArgs(Args):
    state: Literal["on", "off"] = Field(description="on: wait for messages whenever a turn ends.")


class SendArgs(Args):
    target: str = Target
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="Message text (1-32,000 chars).")
    request_id: str | None = RequestId
    notify_when_idle: bool = Field(False, description="Get one notice when the recipient next ends "
                                   "a turn, starts listening or goes offline (lapses after 24 h).")
    all_workspaces: bool = AllWorkspaces


class AskArgs(Args):
    target: str = Target
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="The question (1-32,000 chars).")
    timeout: float = Field(60.0, ge=0, le=3600, description="Seconds to wait for the reply.")
    request_id: str | None = RequestId
    all_workspaces: bool = AllWorkspaces


class ReadArgs(Args):
    count: int = Field(10, ge=1, le=50, description="How many unread messages to take (1-50).")


class ReplyArgs(Args):
    message_id: str = MessageId
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="Reply text (1-32,000 chars).")
    request_id: str | None = RequestId


class MessageStatusArgs(Args):
    message_id: str = MessageId


# -- results ------------------------------------------------------------------------------------


class WhoamiResult(Result):
    id: str
    handle: str
    name: str
    client: str
    source: Literal["option", "env", "ancestry", "mcp", "user"] = Field(
        description="How the caller was identified.")
    registered: bool = Field(description="Whether the store knows this session yet.")
    status: Status | None
    cwd: str
    project: str
    note: str
    store: str = Field(description="The store directory.")


class PeersResult(Page):
    self_id: str = Field(description="The caller's id.")
    items: list[Profile]


class ProfileResult(Result):
    profile: Profile


class Pending(Result):
    unread: int = Field(description="Messages waiting in its inbox.")
    unannounced: int = Field(description="Of those, not yet announced into its context.")


class StatusResult(Result):
    session: Profile
    state: Status
    listen_mode: bool
    last_assistant_text: str | None = Field(description="Tail of its last assistant message "
                                            "(<= 5000 chars), as its Stop hook saw it.")
    last_user_text: str | None = Field(description="Tail of its last prompt (<= 1500 chars).")
    last_tool: str | None
    last_event: str | None
    last_turn_end: str | None = Stamp("When its last turn ended")
    last_turn_end_epoch: float | None = Epoch("When its last turn ended")
    last_prompt: str | None = Stamp("When it last got a prompt")
    last_prompt_epoch: float | None = Epoch("When it last got a prompt")
    pending: Pending
    transcript_path: str | None
    successor: str | None = Field(description="The conversation that replaced it, if any.")
    note: str


class ListenResult(Result):
    listening: bool
    profile: Profile
    note: str


class Recipient(PeerRef):
    status: Status


class SendResult(Result):
    message_id: str
    to: Recipient
    reply_to: str | None
    request_id: str | None
    duplicate: bool = Field(description="True when this was a replay of an earlier request id.")
    created_at: str | None = Stamp("When the message was stored")
    created_at_epoch: float | None = Epoch("When the message was stored")
    outlook: str = Field(description="When the recipient will see it, given its status.")


class Message(Result):
    message_id: str
    kind: Literal["message", "notice", "task", "report"]
    from_: PeerRef = Field(alias="from")
    reply_to: str | None
    text: str
    created_at: str | None = Stamp("When it was sent")
    created_at_epoch: float | None = Epoch("When it was sent")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ReadResult(Result):
    messages: list[Message]
    count: int
    remaining: int = Field(description="Unread messages still waiting after this read.")


class AskResult(Result):
    message_id: str = Field(description="The question.")
    to: PeerRef
    answered: bool = Field(description="False on time-out (the CLI then exits 7).")
    reply: Message | None
    waited_seconds: float
    timeout_seconds: float
    timeout_clamped_from: float | None = Field(
        description="The timeout asked for, when the face's time limit lowered it.")
    note: str | None


class MessageStatusResult(Result):
    message_id: str
    state: Literal["stored", "delivered", "read", "expired", "unknown"]
    reason: str | None = None
    to: PeerRef | None = None
    created_at: str | None = Stamp("Stored")
    created_at_epoch: float | None = Epoch("Stored")
    delivered_at: str | None = Stamp("Announced into the recipient's context")
    delivered_at_epoch: float | None = Epoch("Announced into the recipient's context")
    delivered_via: str | None = None
    read_at: str | None = Stamp("Returned by the recipient's read")
    read_at_epoch: float | None = Epoch("Returned by the recipient's read")
    expired_at: str | None = Stamp("Expired unread")
    expired_at_epoch: float | None = Epoch("Expired unread")


class PathResult(Result):
    home: str = Field(description="The store directory ($NEXUS_HOME or the platform data dir).")
    database: str
    exists: bool
    schema_version: int | None
    schema_current: int


# -- wiring the clients -------------------------------------------------------------------------


class InstallArgs(Args):
    client: Literal["claude", "codex"] = Field(description="Which client to wire up.")
    scope: Literal["user", "project"] = Field(
        "user", description="user: your own config (~/.claude, ~/.codex); project: this "
        "project's .claude/ or .codex/ and .mcp.json.")
    dry_run: bool = Field(False, description="Show the diff of every file, change nothing.")


class FileChange(Result):
    path: str
    action: Literal["created", "updated", "removed", "unchanged"]
    backup: str | None = Field(description="Copy of the file as it was before the write.")
    diff: str = Field(description="Unified diff of the change (empty when unchanged).")


class InstallResult(Result):
    client: str
    scope: str
    dry_run: bool
    installed: bool = Field(description="True for install, False for uninstall.")
    files: list[FileChange]
    notes: list[str]


class DoctorArgs(Args):
    quick: bool = Field(False, description="Skip the timed hook call.")


class Check(Result):
    name: str
    status: Literal["ok", "warn", "fail"]
    detail: str
    fix: str = Field(description="What to do about it (empty when nothing).")


class DoctorResult(Result):
    ok: bool = Field(description="False when any check failed (the command then exits 1).")
    failed: int
    warnings: int
    checks: list[Check]


class MaintenanceResult(Result):
    expired: int = Field(description="Unread messages expired (their senders got notices).")
    tasks_expired: int = Field(description="Open tasks failed for their TTL.")
    waiters_cleared: int = Field(description="Sessions stuck listening whose waiter had exited.")
    bindings_purged: int = Field(description="Old tool-use bindings removed.")
    channels_swept: int = Field(description="Wake channels left behind by killed waiters.")


# -- the task ledger ----------------------------------------------------------------------------

TaskStatus = Literal["preparing", "pending", "dispatched", "running", "delivery_uncertain",
                     "completed", "blocked", "failed", "cancelled"]


class DelegateArgs(Args):
    target: str = Target
    task: str = Field(min_length=1, max_length=24_000,
                      description="Scope, inputs, outputs, acceptance criteria (1-24,000 chars).")
    request_id: str | None = RequestId
    mode: Literal["auto", "queue", "steer"] = Field(
        "auto", description="queue: at the target's next turn; steer: at its next tool call; "
        "auto: steer a working session, queue for anyone else.")
    all_workspaces: bool = AllWorkspaces


class ReportArgs(Args):
    task_id: str = Field(min_length=1, max_length=64, description="The task id (t-...).")
    status: Literal["completed", "blocked", "failed"] = Field(description="The explicit outcome.")
    result: str = Field(min_length=1, max_length=24_000,
                        description="What was produced (absolute paths), what was verified, what "
                        "is still open (1-24,000 chars).")


class TasksArgs(Args):
    id: str | None = Field(None, max_length=64, description="Only this task.")
    sent: bool = Field(False, description="Only tasks you dispatched.")
    received: bool = Field(False, description="Only tasks assigned to you.")
    open: bool = Field(False, description="Obligations you own and have not closed, oldest first.")
    status: TaskStatus | None = Field(None, description="Only tasks in this status.")
    limit: int = Field(20, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many matches.")


class TaskRecord(Result):
    id: str
    sender: PeerRef = Field(description="Who dispatched it.")
    target: PeerRef = Field(description="Who must report it.")
    requested_target: str
    task: str
    status: TaskStatus
    mode: Literal["queue", "steer", "self"] = Field(
        description="queue/steer: delegated, reached at the next turn / tool call; self: a task "
        "its creator tracks.")
    message_id: str | None = Field(description="The message that delivered it.")
    request_id: str | None
    result: str | None
    notification: Literal["none", "pending", "delivered"] = Field(
        description="The report's way back: none yet, stored but not yet in the dispatcher's "
        "context, or delivered there.")
    error: str | None = Field(description="Why it failed (error message, TTL expired), or what to "
                              "inspect before re-dispatching.")
    progress: float | None = Field(description="0 to 1, as last reported.")
    result_uri: str | None
    metadata: dict[str, Any] | None
    expires_at: str | None = Stamp("When an open task fails for its TTL")
    expires_at_epoch: float | None = Epoch("When an open task fails for its TTL")
    created_at: str | None = Stamp("Dispatched")
    created_at_epoch: float | None = Epoch("Dispatched")
    updated_at: str | None = Stamp("Last change")
    updated_at_epoch: float | None = Epoch("Last change")
    closed_at: str | None = Stamp("Reported")
    closed_at_epoch: float | None = Epoch("Reported")
    duplicate: bool = Field(description="True when this was a replay (same request id or report).")


class TasksResult(Page):
    items: list[TaskRecord]


class HandoffArgs(Args):
    action: Literal["status", "enable", "disable", "now"] = Field(
        description="status: show; enable/disable: whether a replacement of this conversation "
        "(/clear, compaction) inherits its name, mail, obligations and listen mode (default on); "
        "now: hand over to --to at once.")
    to: str | None = Field(None, min_length=1, max_length=300,
                           description="With `now`: the live session that takes over.")
    all_workspaces: bool = AllWorkspaces


class Moved(Result):
    to: str
    messages: int = Field(description="Unread messages moved to the successor.")
    tasks: int = Field(description="Open obligations moved to the successor.")
    name: str = Field(description="The name the successor took over.")


class HandoffResult(Result):
    session: str
    enabled: bool
    predecessor: PeerRef | None
    successor: PeerRef | None
    last_handoff_at: str | None = Stamp("The last handoff from or to this session")
    last_handoff_at_epoch: float | None = Epoch("The last handoff from or to this session")
    moved: Moved | None = Field(description="What `now` moved.")


def _json_object(value: object) -> object:
    """The CLI passes metadata as JSON text; MCP passes an object."""
    if isinstance(value, str):
        import json

        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not JSON: {exc}") from None
    return value


class TaskCreateArgs(Args):
    text: str = Field("", max_length=24_000, description="What the task is (<= 24,000 chars).")
    metadata: dict[str, Any] | None = Field(None, description="A JSON object kept with the task.")
    ttl: float | None = Field(None, gt=0, le=30 * 24 * 3600,
                              description="Seconds until an unfinished task fails (TTL expired).")

    _metadata = field_validator("metadata", mode="before")(_json_object)


class TaskIdArgs(Args):
    task_id: str = Field(min_length=1, max_length=64, description="The task id (t-...).")


class TaskUpdateArgs(TaskIdArgs):
    status: Literal["pending", "running", "completed", "blocked", "failed", "cancelled"] | None = \
        Field(None, description="The new status.")
    progress: float | None = Field(None, ge=0, le=1, description="Progress from 0 to 1.")
    result_uri: str | None = Field(None, max_length=2000, description="Where the result is.")
    error_message: str | None = Field(None, max_length=2000, description="Why it failed.")
    metadata: dict[str, Any] | None = Field(None, description="Replaces the task's metadata "
                                            "(a JSON object).")

    _metadata = field_validator("metadata", mode="before")(_json_object)


class TaskListArgs(Args):
    status: TaskStatus | None = Field(None, description="Only tasks in this status.")
    limit: int = Field(20, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many matches.")
