"""Argument and result models of the approval tools (never imported when a tool runs)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..core.models import AllWorkspaces, Args, Epoch, Page, PeerRef, Result, Stamp


class ApprovalsArgs(Args):
    all_workspaces: bool = AllWorkspaces
    limit: int = Field(20, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many.")


class Approval(Result):
    id: str
    session_id: str
    session: PeerRef
    run_id: str | None
    tool_name: str
    summary: str = Field(description="What the tool would do (<= 300 chars).")
    reason: str | None
    requested_at: str | None = Stamp("Asked")
    requested_at_epoch: float | None = Epoch("Asked")
    deadline: str | None = Stamp("Rejected if unanswered by then")
    deadline_epoch: float | None = Epoch("Rejected if unanswered by then")
    waited_ms: int
    waited: str


class ApprovalsResult(Page):
    bridge: Literal["hook"]
    pending: int = Field(description="0: nothing to answer, stop polling.")
    timeout_ms: int
    timeout: str
    summary: str
    hint: str | None = Field(description="The exact answer for the oldest request.")
    items: list[Approval]


class ApproveArgs(Args):
    approval_id: str = Field(min_length=1, max_length=64, description="From approvals (a unique "
                             "beginning will do).", json_schema_extra={"x-refers": "approval"})
    outcome: Literal["allow-once", "reject"] = Field(description="Allow this one call, or "
                                                     "reject it.")
    session: str | None = Field(None, min_length=1, max_length=300,
                                description="The request's session id, as listed: it confirms "
                                "which session's call you answer (without it, the error names "
                                "it).")


class ApproveResult(Result):
    ok: bool
    receipt: Literal["accepted", "not-pending"] = Field(description="not-pending: already "
                                                        "answered, timed out or withdrawn.")
    approval_id: str
    session_id: str
    outcome: Literal["allow-once", "reject"]
    status: Literal["pending", "allowed", "rejected", "withdrawn"]
    answered_by: str | None
    pending_remaining: int
    pending_summary: str
    next: str
