"""The approval tools: pending permission requests of runs, and the answer."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import answer, render

register(Tool(
    name="approvals", group="approvals", title="Pending permission requests",
    description="Permission requests of runs waiting for an answer (yours to answer: runs you "
    "started; a person: the project's).",
    details="A run started with `--approvals nexus` (or the runApprovals setting) sends each "
    "permission request of its client here and waits; unanswered after approvalTimeout seconds "
    "it is rejected, never allowed. `pending` 0 means nothing to answer.",
    args="ApprovalsArgs", result="ApprovalsResult", run=answer.listing,
    render=render.approvals, read_only=True, idempotent=True,
    example="nexus approvals",
))
register(Tool(
    name="approve", group="approvals", title="Answer a permission request",
    description="Allow one call, or reject it. First answer wins; the loser gets not-pending.",
    details="--session must be the request's session (without it, the error names it). A "
    "session never answers its own request; an agent answers only for the runs it started; the "
    "person for any.",
    args="ApproveArgs", result="ApproveResult", run=answer.respond, render=render.approved,
    positional=("approval_id", "outcome"), destructive=True, exit_if=("ok", False, 4),
    example="nexus approve a-9b8c7d6e5f40 allow-once --session codex@shop",
))
