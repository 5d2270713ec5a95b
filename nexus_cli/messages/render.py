"""Human output of the message tools. Message text is shown with controls escaped."""

from __future__ import annotations

from typing import Any

from ..core.human import Part, Table, ago, fields, page_footer, who
from ..core.text import block, one_line, token


def sent(r: dict[str, Any]) -> str:
    dup = (" (a repeat of an earlier request id: the original message is shown, nothing new was "
           "sent)" if r["duplicate"] else "")
    status, said = r["to"]["status"], r["outlook"]
    # the outlook that begins by saying the status ("it is listening: ...") is not prefixed twice
    head = "" if said.startswith(f"it is {status}") else f"{status}: "
    return f"sent {r['message_id']} to {who(r['to'])}{dup}\n{head}{said}"


def one_message(msg: dict[str, Any]) -> str:
    head = f"{token(msg['message_id'])} from {who(msg['from'])}, {ago(msg['created_at_epoch'])}"
    if msg["reply_to"]:
        head += f", in reply to {token(msg['reply_to'])}"
    return f"{head}\n{block(msg['text'])}"


def read(r: dict[str, Any]) -> str:
    owed = (f"you owe {r['open_work_count']} open task(s), oldest {', '.join(r['open_work'])}: "
            "`nexus tasks --open`" if r.get("open_work_count") else "")  # (`watch`: one message)
    if not r["messages"]:
        return "\n".join(x for x in ("no unread messages", owed) if x)
    tail = f"\n\n{r['remaining']} more unread: run `nexus read` again" if r["remaining"] else ""
    return "\n\n".join(one_message(m) for m in r["messages"]) + tail + (
        f"\n\n{owed}" if owed else "")


def ask(r: dict[str, Any]) -> str:
    clamp = (f" (clamped from {r['timeout_clamped_from']:g} s)" if r["timeout_clamped_from"]
             else "")
    if not r["answered"]:
        return (f"no reply from {who(r['to'])} within {r['timeout_seconds']:g} s{clamp}: question "
                f"{r['message_id']} stays open; the reply will arrive as a message")
    reply = r["reply"]
    return (f"{token(reply['message_id'])} from {who(reply['from'])}, after "
            f"{r['waited_seconds']:g} s:\n"
            f"{block(reply['text'])}")


STATES = {
    "stored": "stored in the recipient's inbox; not yet announced to it",
    "delivered": "announced into the recipient's context; not yet read",
    "read": "read by the recipient",
    "expired": "expired unread",
    "unknown": "unknown",
}


def status(r: dict[str, Any]) -> str:
    if r["state"] == "unknown":
        return f"{r['message_id']}: unknown ({r['reason']})"
    return fields([
        ("message", r["message_id"]), ("to", who(r["to"])), ("state", STATES[r["state"]]),
        ("sent", ago(r["created_at_epoch"])),
        ("announced", ago(r["delivered_at_epoch"]) + f" (via {r['delivered_via']})"
         if r["delivered_at_epoch"] else None),
        ("read", ago(r["read_at_epoch"]) if r["read_at_epoch"] else None),
        ("expired", ago(r["expired_at_epoch"]) + f" ({r['expired_why']})"
         if r["expired_at_epoch"] else None),
    ])


def _way(m: dict[str, Any]) -> str:
    return f"to {who(m['to'])}" if m["direction"] == "out" else f"from {who(m['from'])}"


def inbox(r: dict[str, Any]) -> list[Part] | str:
    if not r["items"]:
        return "no messages" + (" on this page" if r["offset"] else " yet")
    rows = [[m["message_id"], ago(m["created_at_epoch"]), _way(m), m["state"],
             one_line(m["text"])] for m in r["items"]]
    return [Table(["id", "when", "with", "state", "text"], rows, wide=("with", "text"),
                  styled=("state",)),
            page_footer(r) + "; `nexus message show ID` shows one whole"]


def show(m: dict[str, Any]) -> str:
    head = fields([("message", m["message_id"]), ("from", who(m["from"])), ("to", who(m["to"])),
                   ("sent", ago(m["created_at_epoch"])), ("in reply to", m["reply_to"]),
                   ("state", STATES[m["state"]]),
                   ("announced", ago(m["delivered_at_epoch"]) if m["delivered_at_epoch"] else None),
                   ("read", ago(m["read_at_epoch"]) if m["read_at_epoch"] else None),
                   ("expired", ago(m["expired_at_epoch"]) if m["expired_at_epoch"] else None)])
    return f"{head}\n\n{block(m['text'])}"
