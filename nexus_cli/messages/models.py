"""Argument and result models of direct messages, asking and receipts: the source of their
schemas in contract/tools.json (compiled by `python -m nexus_cli.gen`; never imported when a tool
runs)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from ..core.models import (
    DELIVERY,
    TEXT_MAX,
    AllWorkspaces,
    Args,
    DeliveryMode,
    Epoch,
    MessageId,
    NoWake,
    Page,
    PeerRef,
    RequestId,
    Result,
    Stamp,
    Status,
    Target,
)


class SendArgs(Args):
    target: str = Target
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="The message.")
    request_id: str | None = RequestId
    # steer by default: a message is announced as soon as the recipient can see it (a session
    # that looks idle may be mid-turn); `delegate` defaults to auto
    mode: DeliveryMode = Field("steer", description=DELIVERY)
    notify_when_idle: bool = Field(False, description="A notice when the recipient next goes "
                                   "idle (if offline: once it is back).")
    no_wake: bool = NoWake
    all_workspaces: bool = AllWorkspaces


class AskArgs(Args):
    target: str = Target
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="The question.")
    timeout: float = Field(60.0, ge=0, le=3600, description="Seconds to wait.")
    request_id: str | None = RequestId
    all_workspaces: bool = AllWorkspaces


class ReadArgs(Args):
    count: int = Field(10, ge=1, le=50, description="How many to take.")


class ReplyArgs(Args):
    message_id: str = MessageId
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="The reply.")
    request_id: str | None = RequestId


class MessageStatusArgs(Args):
    message_id: str = MessageId


class InboxArgs(Args):
    peer: str | None = Field(None, min_length=1, max_length=300,
                             description="Only the conversation with this session.")
    sent: bool = Field(False, description="Only messages you sent.")
    received: bool = Field(False, description="Only messages sent to you.")
    unread: bool = Field(False, description="Only messages not read yet.")
    all_workspaces: bool = AllWorkspaces
    limit: int = Field(20, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many.")


class MessageShowArgs(Args):
    message_id: str = MessageId


class Recipient(PeerRef):
    status: Status


class SendResult(Result):
    message_id: str
    to: Recipient
    reply_to: str | None
    request_id: str | None
    duplicate: bool = Field(description="True when this was a replay of an earlier request id.")
    mode: Literal["queue", "steer"] = Field(description="queue: it is announced at the "
                                            "recipient's next turn; steer: at its next tool call.")
    created_at: str | None = Stamp("When the message was stored")
    created_at_epoch: float | None = Epoch("When the message was stored")
    wake: bool = Field(description="Whether it may wake its recipient (false: `--no-wake`).")
    outlook: str = Field(description="When the recipient will see it, given its status (see "
                         "peers: status, status_reason).")


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
    open_work_count: int = Field(description="Tasks assigned to you and not yet reported.")
    open_work: list[str] = Field(description="The oldest of them (ids, at most 3): report each "
                                 "with `report` when done.")


State = Literal["stored", "delivered", "read", "expired"]


class Entry(Message):
    to: PeerRef
    direction: Literal["in", "out"] = Field(description="in: sent to you; out: sent by you.")
    state: State = Field(description="stored (in the inbox), delivered (announced into the "
                         "recipient's context), read (returned by its `read`), expired (unread).")
    delivered_at: str | None = Stamp("Announced into the recipient's context")
    delivered_at_epoch: float | None = Epoch("Announced into the recipient's context")
    read_at: str | None = Stamp("Returned by the recipient's read")
    read_at_epoch: float | None = Epoch("Returned by the recipient's read")
    expired_at: str | None = Stamp("Expired unread")
    expired_at_epoch: float | None = Epoch("Expired unread")


class InboxResult(Page):
    items: list[Entry] = Field(description="Newest first.")


class AskResult(Result):
    message_id: str = Field(description="The question.")
    to: PeerRef
    answered: bool = Field(description="False on time-out (the CLI then exits 7).")
    reply: Message | None
    waited_seconds: float
    timeout_seconds: float
    timeout_clamped_from: float | None = Field(
        description="The timeout asked for, when the face's time limit lowered it.")
    duplicate: bool = Field(description="True when this repeated an earlier request id: the "
                            "original question was waited on again, not asked twice.")
    outlook: str = Field(description="When the recipient sees the question, given its status: an "
                         "offline one is not waited for.")
    note: str | None


class MessageStatusResult(Result):
    message_id: str
    state: State | Literal["unknown"]
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
    expired_why: str | None = Field(None, description="Why it left the inbox unread: it aged out, "
                                    "or the task it carried was closed.")
