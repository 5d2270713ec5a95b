"""Argument and result models of the task ledger: the source of their schemas in
contract/tools.json (compiled by `python -m nexus_cli.gen`; never imported when a tool runs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from ..core.models import (
    TASK_MAX,
    AllWorkspaces,
    Args,
    Delivery,
    DeliveryMode,
    Epoch,
    JsonObject,
    NoWake,
    Page,
    PeerRef,
    RequestId,
    Result,
    Stamp,
    Target,
)

TaskStatus = Literal["preparing", "pending", "dispatched", "running", "delivery_uncertain",
                     "completed", "blocked", "failed", "cancelled"]

TaskId = Field(min_length=1, max_length=64, description="The task id (t-...; a unique beginning "
               "will do).", json_schema_extra={"x-refers": "task"})


class DelegateArgs(Args):
    target: str = Target
    task: str = Field(min_length=1, max_length=TASK_MAX,
                      description="Scope, inputs, outputs, acceptance criteria.")
    request_id: str | None = RequestId
    mode: DeliveryMode = Delivery
    all_workspaces: bool = AllWorkspaces
    spawn: bool = Field(False, description="TARGET is claude or codex: start a new run for it.")
    no_wake: bool = NoWake


class ReportArgs(Args):
    task_id: str = TaskId
    status: Literal["completed", "blocked", "failed"] = Field(description="The explicit outcome.")
    result: str = Field(min_length=1, max_length=TASK_MAX,
                        description="What you produced (absolute paths), verified, left open.")


class TasksArgs(Args):
    id: str | None = Field(None, max_length=64, description="Only this task (a unique beginning of "
                           "its id will do).", json_schema_extra={"x-refers": "task"})
    sent: bool = Field(False, description="Only tasks you dispatched.")
    received: bool = Field(False, description="Only tasks assigned to you.")
    open: bool = Field(False, description="Only what you still owe, oldest first.")
    self: bool = Field(False, description="Only the tasks you track for yourself.")
    status: TaskStatus | None = Field(None, description="Only tasks in this status.")
    limit: int = Field(20, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many.")


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
    notification: Literal["none", "pending", "delivered", "expired"] = Field(
        description="The report's way back: none yet, stored but not yet in the dispatcher's "
        "context, delivered there, or expired unread after 24 h.")
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
    source_meeting_id: str | None = Field(None, description="The meeting it came from, if any.")
    error_message: str | None = Field(None, description="Seed 004's name for `error`.")
    ttl: int | None = Field(None, description="Time to live given at creation, in milliseconds.")


class TasksResult(Page):
    items: list[TaskRecord]


class TaskCreateArgs(Args):
    text: str = Field("", max_length=TASK_MAX, description="What the task is (<= 24,000 chars).")
    source_meeting_id: str | None = Field(None, max_length=64, description="Link the task to "
                                          "this meeting (it must exist).")
    metadata: JsonObject = Field(None, description="A JSON object kept with the task.")
    ttl: int | None = Field(None, gt=0, le=30 * 24 * 3600 * 1000,
                            description="Milliseconds until an unfinished task fails (TTL "
                            "expired).", json_schema_extra={"x-metavar": "MS"})


class TaskCreated(Result):
    task_id: str
    status: TaskStatus
    message: str
    task: TaskRecord


def _task_id_alias(value: Any) -> Any:
    if isinstance(value, dict) and "task_id" in value and "taskId" not in value:
        value = {**value, "taskId": value["task_id"]}
        del value["task_id"]
    return value


class TaskIdArgs(Args):
    """Seed 004 names the task `taskId`; `task_id` is accepted too."""
    model_config = ConfigDict(extra="forbid",
                              json_schema_extra={"x-aliases": {"task_id": "taskId"}})
    taskId: str = TaskId

    @model_validator(mode="before")
    @classmethod
    def _alias(cls, value: Any) -> Any:
        return _task_id_alias(value)


class TaskUpdateArgs(TaskIdArgs):
    status: Literal["pending", "running", "completed", "blocked", "failed", "cancelled"] | None = \
        Field(None, description="The new status.")
    progress: float | None = Field(None, ge=0, le=1, description="Progress from 0 to 1.")
    result_uri: str | None = Field(None, max_length=2000, description="Where the result is.")
    error_message: str | None = Field(None, max_length=2000, description="Why it failed.")
    metadata: JsonObject = Field(None, description="Replaces the task's metadata (a JSON object).")


class TaskListArgs(Args):
    status: TaskStatus | None = Field(None, description="Only tasks in this status.")
    limit: int = Field(50, ge=1, le=500, description="At most this many (1-500).")
    offset: int = Field(0, ge=0, description="Skip this many.")


class SelfTasksResult(Page):
    tasks: list[TaskRecord]
