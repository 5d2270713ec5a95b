"""Argument and result models of who is here, who am I, what a session is doing, listen mode,
handoff: the source of their schemas in contract/tools.json (compiled by
`python -m nexus_cli.gen`; never imported when a tool runs)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from ..core.models import (
    AllWorkspaces,
    Args,
    Epoch,
    Page,
    PeerRef,
    Profile,
    Result,
    Stamp,
    Status,
    Target,
)
from ..reservations.models import Reservation


class PeersArgs(Args):
    query: str | None = Field(None, max_length=300,
                              description="Part of an id, handle, name or directory.")
    all_workspaces: bool = AllWorkspaces
    include_offline: bool = Field(False, description="Also sessions that ended in the last 24 h.")
    limit: int = Field(30, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many.")


class ProfileArgs(Args):
    name: str | None = Field(None, min_length=1, max_length=48, pattern=r"^[A-Za-z0-9._@#-]+$",
                             json_schema_extra={"x-hint": "may hold only A-Z a-z 0-9 . _ @ # -"},
                             description="New name, unique among live sessions; not starting "
                             "with s- or u- (handles).")
    note: str | None = Field(None, max_length=200, description="What you are doing (<= 200 chars).")
    wake: Literal["on", "off"] | None = Field(
        None, description="off: messages wait for your next prompt, never waking you (listen "
        "mode still listens).")


class StatusArgs(Args):
    target: str = Target
    all_workspaces: bool = AllWorkspaces


class ListenArgs(Args):
    state: Literal["on", "off"]


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
    scope: str = Field(description="The project as every machine names it (team mode: the "
                       "normalised git remote origin, else the root path): peers, send and names "
                       "are scoped by it.")
    note: str
    store: str = Field(description="The store directory.")
    subagent: str | None = Field(None, description="The Claude Code subagent (Task tool) this "
                                 "MCP call came from: it acts as its main conversation, which "
                                 "owns the inbox (tools that change anything are refused).")


class Unseen(Result):
    client: Literal["claude", "codex"]
    pid: int = Field(description="Its client process (on this machine).")
    cwd: str
    since: str | None = Stamp("When its MCP server started (nexus noted it then)")
    since_epoch: float = Epoch("When its MCP server started")
    note: str = Field(description="What a sender should know: it has no session nexus knows "
                      "yet, and appears at its first prompt.")


class PeersResult(Page):
    self_id: str = Field(description="The caller's id.")
    items: list[Profile]
    unseen: list[Unseen] = Field(description="Client processes running in this project whose "
                                 "first hook has not reached nexus yet (a Codex TUI before its "
                                 "first prompt): no session to send to yet.")


class ProfileResult(Result):
    profile: Profile


class Pending(Result):
    unread: int = Field(description="Messages waiting in its inbox.")
    unannounced: int = Field(description="Of those, not yet announced into its context.")


class StatusResult(Result):
    session: Profile
    state: Status = Field(description="The session's status, as session.status (why: "
                          "session.status_reason).")
    outlook: str = Field(description="What a message sent to it now would do (as `send` says).")
    listen_mode: bool
    last_assistant_text: str | None = Field(description="Tail of its last assistant message "
                                            "(<= 5000 chars), as its Stop hook saw it.")
    last_user_text: str | None = Field(description="Tail of its last prompt (<= 1500 chars).")
    last_tool: str | None
    transcript_fields: list[str] = Field(description="Which of last_assistant_text and "
                                         "last_tool were read from its transcript (its hooks "
                                         "had not seen them).")
    last_event: str | None
    last_turn_end: str | None = Stamp("When its last turn ended")
    last_turn_end_epoch: float | None = Epoch("When its last turn ended")
    last_prompt: str | None = Stamp("When it last got a prompt")
    last_prompt_epoch: float | None = Epoch("When it last got a prompt")
    pending: Pending
    transcript_path: str | None
    successor: str | None = Field(description="The conversation that replaced it, if any.")
    reservations: list[Reservation] = Field(description="The files it holds (`reserve`).")
    note: str


class ListenResult(Result):
    listening: bool
    profile: Profile
    note: str


class HandoffArgs(Args):
    action: Literal["status", "enable", "disable", "now", "accept"] = Field(
        description="status; enable or disable inheritance (default on); now: hand over to `to` "
        "(it takes over once it accepts); accept: take over from `from_session`.")
    to: str | None = Field(None, min_length=1, max_length=300,
                           description="With now: the live session to hand over to.")
    from_session: str | None = Field(None, min_length=1, max_length=300,
                                     description="With accept: the session whose handoff "
                                     "offer you take.")
    all_workspaces: bool = AllWorkspaces


class Moved(Result):
    to: str
    messages: int = Field(description="Unread messages moved to the successor.")
    tasks: int = Field(description="Open obligations moved to the successor.")
    name: str = Field(description="The name the successor took over.")


class HandoffRecord(Result):
    from_: PeerRef = Field(alias="from")
    to: PeerRef
    trigger: str = Field(description="clear, startup (Codex /new) or now.")
    messages: int
    tasks: int

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Offer(Result):
    to: PeerRef = Field(description="The session it is offered to.")
    expires_at: str | None = Stamp("When the offer lapses")
    expires_at_epoch: float = Field(description="When the offer lapses (seconds since the "
                                    "epoch).")


class HandoffResult(Result):
    session: str
    switch: bool = Field(description="The master switch (`nexus config get handoff`).")
    enabled: bool = Field(description="This conversation's own switch.")
    trigger: str = Field(description="What starts a handoff.")
    deferred: list[str] = Field(description="Why a handoff of this conversation would not "
                                "happen now (empty: it would).")
    predecessor: PeerRef | None
    successor: PeerRef | None
    last_handoff_at: str | None = Stamp("The last handoff from or to this session")
    last_handoff_at_epoch: float | None = Epoch("The last handoff from or to this session")
    last: HandoffRecord | None = Field(description="The last handoff from or to this session.")
    moved: Moved | None = Field(description="What `now` or `accept` moved.")
    offered: Offer | None = Field(description="This conversation's handoff waiting for its "
                                  "receiver's `handoff accept`.")
    offers: list[PeerRef] = Field(description="Sessions offering you their handoff (`nexus "
                                  "handoff accept --from-session S`).")
