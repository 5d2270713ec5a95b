"""Human output of the presence tools."""

from __future__ import annotations

from typing import Any

from ..core.human import Part, Table, ago, fields, home_short, page_footer, who
from ..core.text import block, one_line


def peers(r: dict[str, Any]) -> list[Part] | str:
    starting = [f"unseen: {u['client']} process {u['pid']} in "
                f"{one_line(home_short(u['cwd']))}, started {ago(u['since_epoch'])}: {u['note']}"
                for u in r.get("unseen", [])]
    if not r["items"]:
        return "\n".join(["no sessions in scope (try --include-offline or --all-workspaces)",
                          *starting])
    rows = [["*" if p["self"] else "", p["name"], p["handle"], p["client"], shown(p),
             ago(p["last_active_at_epoch"]), home_short(p["cwd"]),
             f"replaced by {p['successor']['handle']}" if p.get("successor") else p["note"]]
            for p in r["items"]]
    table = Table(["", "name", "handle", "client", "status", "active", "cwd", "note"], rows,
                  wide=("cwd", "note"))
    return [table, page_footer(r), *starting]


def shown(p: dict[str, Any]) -> str:
    """A status as a table cell: what a sender must know at a glance (the reason: `status`)."""
    if p["status"] == "waiting":
        return "waiting"  # for a person: `nexus status` says what for
    return p["status"] + (", no wake" if p.get("wakeable") is False else "")


def profile(p: dict[str, Any]) -> str:
    return fields([("name", p["name"]), ("handle", p["handle"]), ("id", p["id"]),
                   ("client", p["client"]), ("status", p["status"]),
                   ("why", one_line(p["status_reason"]) if p.get("status_reason") else None),
                   ("woken by messages", None if p.get("wake", True) else "no (--wake off)"),
                   ("cwd", p["cwd"]), ("note", p["note"])])


def whoami(r: dict[str, Any]) -> str:
    how = {"option": "named with --as", "env": "from the client's environment",
           "ancestry": "from the client process above this one", "mcp": "from the MCP call",
           "user": "you, at a shell", "hook": "from a hook"}
    return fields([("you are", f"{one_line(r['name'])} ({r['handle']})"), ("id", r["id"]),
                   ("known by", how.get(r["source"], r["source"])),
                   ("registered", "yes" if r["registered"] else "not yet (the first write "
                    "registers you)"), ("status", r["status"]),
                   ("from a subagent", f"{one_line(r['subagent'])} (acting as its main "
                    "conversation; tools that change anything are refused)"
                    if r.get("subagent") else None), ("project", r["project"]),
                   ("scope", r["scope"] if r["scope"] != r["project"] else None),
                   ("store", r["store"])])


def status(r: dict[str, Any]) -> str:
    s = r["session"]
    head = f"{who(s)} is {r['state']}" + (" (listen mode on)" if r["listen_mode"] else "")
    body = fields([
        ("why", one_line(s["status_reason"]) if s.get("status_reason") else None),
        ("waiting for", one_line(s["waiting_for"]) if s.get("waiting_for") else None),
        ("a message now", one_line(r["outlook"])),
        ("last prompt", ago(r["last_prompt_epoch"]) if r["last_prompt_epoch"] else None),
        ("last tool", (r["last_tool"] + (" (from the transcript)" if "last_tool" in
                                          r["transcript_fields"] else ""))
         if r["last_tool"] else None),
        ("turn ended", ago(r["last_turn_end_epoch"]) if r["last_turn_end_epoch"] else None),
        ("inbox", f"{r['pending']['unread']} unread, {r['pending']['unannounced']} not yet "
                  "announced to it"),
        ("replaced by", r["successor"]),
        ("holds", ", ".join(f"{one_line(x['pattern'])} "
                            f"({'exclusive' if x['exclusive'] else 'shared'})"
                            for x in r["reservations"]) or None),
        ("transcript", r["transcript_path"]),
    ])
    parts = [head, body]
    if r["last_user_text"]:
        parts.append("last prompt:\n" + block(r["last_user_text"]))
    if r["last_assistant_text"]:
        source = " (from the transcript)" if "last_assistant_text" in r["transcript_fields"] \
            else ""
        parts.append(f"last answer{source}:\n" + block(r["last_assistant_text"]))
    parts.append(r["note"])
    return "\n".join(parts)


def listen(r: dict[str, Any]) -> str:
    return f"listen mode {'on' if r['listening'] else 'off'}: {r['note']}"


def handoff(r: dict[str, Any]) -> str:
    last = r["last"]
    pairs: list[tuple[str, object]] = [
        ("handoff", ("on" if r["enabled"] else "off for this conversation")
         + ("" if r["switch"] else "; off for everyone (config handoff = 0)")),
        ("when", r["trigger"]),
        ("predecessor", who(r["predecessor"]) if r["predecessor"] else None),
        ("successor", who(r["successor"]) if r["successor"] else None),
        ("last handoff", f"{ago(r['last_handoff_at_epoch'])}: {who(last['from'])} to "
         f"{who(last['to'])} ({last['trigger']}; {last['messages']} messages, {last['tasks']} "
         "tasks)" if last else None),
        ("would not now", "; ".join(r["deferred"]) or None),
    ]
    if r["moved"]:
        m = r["moved"]
        pairs.append(("moved", f"{m['messages']} unread messages and {m['tasks']} open tasks to "
                               f"{m['to']}, with the name {m['name']}"))
    if r["offered"]:
        pairs.append(("offered", f"to {who(r['offered']['to'])}, until "
                                 f"{r['offered']['expires_at']}: nothing moves until it runs "
                                 "`nexus handoff accept`"))
    if r["offers"]:
        pairs.append(("offered to you", ", ".join(who(o) for o in r["offers"])
                      + " (`nexus handoff accept --from-session S`)"))
    return fields(pairs)
