"""Output for people (rich on a terminal, plain text otherwise) and for programs (`--json`).
stdout carries results only; errors and progress go to stderr."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from ..errors import NexusError
from ..timefmt import human_duration


def console() -> Any:
    from rich.console import Console

    return Console(file=sys.stdout, highlight=False, markup=False, emoji=False)


class Table:
    """Rows for people: rich on a terminal, plain aligned columns (never wrapped) otherwise."""

    def __init__(self, headers: list[str], rows: list[list[str]]) -> None:
        self.headers, self.rows = headers, rows

    def plain(self) -> str:
        widths = [max(len(str(r[i])) for r in [self.headers, *self.rows])
                  for i in range(len(self.headers))]
        return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                         for r in [self.headers, *self.rows])

    def rich(self) -> Any:
        from rich.table import Table as RichTable

        table = RichTable(box=None, pad_edge=False, show_edge=False)
        for h in self.headers:
            table.add_column(h, overflow="fold")
        for r in self.rows:
            table.add_row(*map(str, r))
        return table


def ago(epoch: float | None) -> str:
    return "-" if epoch is None else human_duration(time.time() - epoch) + " ago"


def who(ref: dict) -> str:
    return f"{ref['name']} ({ref['handle']})"


def _peers(r: dict) -> Any:
    if not r["items"]:
        return "no sessions in scope (try --include-offline or --all-workspaces)"
    rows = [["*" if p["self"] else "", p["name"], p["handle"], p["client"], p["status"],
             ago(p["last_active_at_epoch"]), p["cwd"], p["note"]] for p in r["items"]]
    footer = f"{r['count']} of {r['total']}" + (f"; next page: {r['next']}" if r["truncated"] else "")
    return [Table(["", "name", "handle", "client", "status", "active", "cwd", "note"], rows), footer]


def _sent(r: dict) -> str:
    dup = " (duplicate: the original is returned)" if r["duplicate"] else ""
    return f"sent {r['message_id']} to {who(r['to'])}{dup}\n{r['to']['status']}: {r['outlook']}"


def _read(r: dict) -> str:
    if not r["messages"]:
        return "no unread messages"
    parts = []
    for msg in r["messages"]:
        head = f"{msg['message_id']} from {who(msg['from'])}, {ago(msg['created_at_epoch'])}"
        if msg["reply_to"]:
            head += f", in reply to {msg['reply_to']}"
        parts.append(f"{head}\n{msg['text']}")
    tail = f"\n\n{r['remaining']} more unread: run `nexus read` again" if r["remaining"] else ""
    return "\n\n".join(parts) + tail


def _ask(r: dict) -> str:
    clamp = (f" (clamped from {r['timeout_clamped_from']:g} s)" if r["timeout_clamped_from"]
             else "")
    if not r["answered"]:
        return (f"no reply from {who(r['to'])} within {r['timeout_seconds']:g} s{clamp}: question "
                f"{r['message_id']} stays open; the reply will arrive as a message")
    reply = r["reply"]
    return f"{reply['message_id']} from {who(reply['from'])}, after {r['waited_seconds']:g} s:\n{reply['text']}"


def _task(r: dict) -> str:
    lines = [f"{r['id']} {r['status']}" + (" (duplicate: the original is returned)" if r["duplicate"] else ""),
             f"from {who(r['sender'])} to {who(r['target'])}, mode {r['mode']}"]
    if r["progress"] is not None:
        lines.append(f"progress {r['progress']:.0%}")
    if r["result"]:
        lines.append(f"result: {r['result']}")
    if r["error"]:
        lines.append(f"error: {r['error']}")
    if r["mode"] != "self":
        lines.append(f"report notification: {r['notification']}")
    lines.append(f"task: {r['task']}")
    return "\n".join(lines)


def _tasks(r: dict) -> Any:
    if not r["items"]:
        return "no tasks"
    rows = [[t["id"], t["status"], t["sender"]["name"], t["target"]["name"], t["mode"],
             ago(t["updated_at_epoch"]), (t["task"].splitlines() or [""])[0][:60]] for t in r["items"]]
    footer = f"{r['count']} of {r['total']}" + (f"; next page: {r['next']}" if r["truncated"] else "")
    return [Table(["id", "status", "from", "to", "mode", "updated", "task"], rows), footer]


def _generic(r: dict, indent: str = "") -> str:
    lines = []
    for key, value in r.items():
        if key.endswith("_epoch"):
            continue
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines.append(_generic(value, indent + "  "))
        elif isinstance(value, list):
            lines.append(f"{indent}{key}: {len(value)} item(s)")
            for item in value:
                lines.append(_generic(item, indent + "  - ") if isinstance(item, dict)
                             else f"{indent}  - {item}")
        else:
            lines.append(f"{indent}{key}: {'-' if value is None else value}")
    return "\n".join(lines)


def _install(r: dict) -> str:
    verb = "would be" if r["dry_run"] else "was"
    lines = []
    for f in r["files"]:
        lines.append(f"{f['path']}: {f['action'] if f['action'] == 'unchanged' else verb + ' ' + f['action']}"
                     + (f" (backup: {f['backup']})" if f["backup"] else ""))
        if r["dry_run"] and f["diff"]:
            lines.append(f["diff"].rstrip("\n"))
    lines += [f"note: {n}" for n in r["notes"]]
    return "\n".join(lines)


def _doctor(r: dict) -> str:
    lines = []
    for c in r["checks"]:
        lines.append(f"{c['status'].upper():4}  {c['name']:<18} {c['detail']}")
        if c["fix"]:
            lines.append(f"{'':24}fix: {c['fix']}")
    lines.append(f"{'all good' if r['ok'] else str(r['failed']) + ' failed'}, {r['warnings']} warning(s)")
    return "\n".join(lines)


HUMAN: dict[str, Callable[[dict], Any]] = {
    "listen": lambda r: f"listen mode {'on' if r['listening'] else 'off'}: {r['note']}",
    "ask": _ask,
    "delegate": _task,
    "report": _task,
    "task_create": _task,
    "task_get": _task,
    "task_update": _task,
    "task_cancel": _task,
    "tasks": _tasks,
    "task_list": _tasks,
    "doctor": _doctor,
    "install": _install,
    "uninstall": _install,
    "peers": _peers,
    "send": _sent,
    "reply": _sent,
    "read": _read,
    "profile": lambda r: _generic(r["profile"]),
}


def emit(tool_name: str, result: dict, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        return
    out = HUMAN.get(tool_name, _generic)(result)
    parts = out if isinstance(out, list) else [out]
    if sys.stdout.isatty():
        con = console()
        for part in parts:
            con.print(part.rich() if isinstance(part, Table) else part)
    else:  # scripts and pipes: plain text, and no rich import
        for part in parts:
            sys.stdout.write((part.plain() if isinstance(part, Table) else part) + "\n")


def emit_error(exc: NexusError, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps({"error": exc.to_dict()}, indent=2, ensure_ascii=False) + "\n")
    sys.stderr.write(f"nexus: {exc.message}\n")
