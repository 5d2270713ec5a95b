"""`nexus waits`: who waits on whom, and the cycles among them (deadlocks). Stdlib only.

An edge `a -> b` means a is owed something by b: an open delegation a gave b (the ledger's open
tasks), or a question a asked b that has no answer yet (an `ask` waiting or timed out).
Sessions with listen mode on are marked: they wait for any message. A cycle is a deadlock when
every session in it waits; while one of them still works it may yet resolve, and is flagged all
the same. `--on TARGET` asks before waiting: would my waiting on TARGET close a cycle?"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..core import availability, discovery, sessions
from ..core.context import Ctx
from ..core.human import plural
from ..core.sessions import Caller
from ..core.text import one_line

if TYPE_CHECKING:
    from .models import WaitsArgs

OPEN_TASKS = ("pending", "dispatched", "running", "delivery_uncertain")


def edges(conn: sqlite3.Connection) -> list[dict]:
    marks = ",".join("?" * len(OPEN_TASKS))
    out = []
    for r in conn.execute(f"SELECT id, sender, target, task, created_at FROM tasks WHERE status"
                          f" IN ({marks}) AND mode != 'self' AND sender != target ORDER BY seq",
                          OPEN_TASKS):
        out.append({"from": r["sender"], "to": r["target"], "kind": "delegation", "id": r["id"],
                    "since_epoch": r["created_at"], "text": one_line(r["task"], 100)})
    for r in conn.execute("SELECT m.id, m.sender, m.recipient, m.text, m.created_at FROM messages"
                          " m WHERE m.ask_state IN ('waiting', 'timed_out') AND m.sender !="
                          " m.recipient AND NOT EXISTS (SELECT 1 FROM messages r WHERE"
                          " r.reply_to = m.id) ORDER BY m.seq"):
        out.append({"from": r["sender"], "to": r["recipient"], "kind": "ask", "id": r["id"],
                    "since_epoch": r["created_at"], "text": one_line(r["text"], 100)})
    return out


def cycles(nodes: list[str], adj: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of two or more (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(adj.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(adj.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return [_cycle_in(g, adj) for g in groups]


def _cycle_in(group: list[str], adj: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the group's first member (breadth first inside the group)."""
    start = group[0]
    members = set(group)
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(adj.get(node, ())):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if child not in parent:
                    parent[child] = node
                    nxt.append(child)
        frontier = nxt
    return [start, start]


def path(adj: dict[str, set[str]], src: str, dst: str) -> list[str] | None:
    """A shortest path src -> dst, or None."""
    if src == dst:
        return [src]
    parent = {src: src}
    frontier = [src]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(adj.get(node, ())):
                if child in parent:
                    continue
                parent[child] = node
                if child == dst:
                    out = [child]
                    while out[-1] != src:
                        out.append(parent[out[-1]])
                    return list(reversed(out))
                nxt.append(child)
        frontier = nxt
    return None


def graph(conn: sqlite3.Connection, me: Caller, now: float, all_workspaces: bool) -> dict:
    """The wait graph of the caller's scope (edges with both ends in it)."""
    live = {r["id"]: r for r in discovery.scoped_rows(conn, me, now, all_workspaces, False)}
    rows: dict[str, sqlite3.Row | None] = dict(live)

    def row(sid: str) -> sqlite3.Row | None:
        if sid not in rows:
            rows[sid] = sessions.get(conn, sid)
        return rows[sid]

    def in_scope(sid: str) -> bool:
        r = row(sid)
        return r is not None and (all_workspaces or me.holds(r))

    kept = [e for e in edges(conn) if in_scope(e["from"]) and in_scope(e["to"])]
    ids = list(live)
    for e in kept:
        for end in (e["from"], e["to"]):
            if end not in ids:
                ids.append(end)
    adj: dict[str, set[str]] = {}
    for e in kept:
        adj.setdefault(e["from"], set()).add(e["to"])
    status = {sid: availability.effective_status(row(sid), now) for sid in ids}  # type: ignore[arg-type]
    nodes = []
    for sid in ids:
        r = row(sid)
        assert r is not None
        nodes.append({"id": sid, "handle": r["handle"], "name": r["name"], "client": r["client"],
                      "status": status[sid],
                      "listening": bool(r["listening"]) or status[sid] == "listening"})
    found = cycles(ids, adj)
    deadlocks = [{"sessions": [discovery.peer_ref(row(s), s) for s in sorted(set(c))],
                  "cycle": c, "blocked": all(status.get(s) != "working" for s in c)}
                 for c in found]
    return {"nodes": nodes,
            "edges": [{**e, "from": discovery.peer_ref(row(e["from"]), e["from"]),
                       "to": discovery.peer_ref(row(e["to"]), e["to"])} for e in kept],
            "deadlocks": deadlocks, "adj": adj}


def waits(ctx: Ctx, a: WaitsArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        g = graph(conn, me, ctx.now, a.all_workspaces)
        would, cycle = None, None
        if a.on is not None:
            target = discovery.resolve_target(conn, me, a.on, ctx.now, a.all_workspaces)
            back = path(g["adj"], target["id"], me.id)
            would = back is not None
            cycle = [me.id, *back] if back else None
    deadlocks = g["deadlocks"]
    note = (f"{plural(len(deadlocks), 'cycle')}: the sessions in each wait on one another; "
            "someone must report, answer or cancel to break it" if deadlocks else
            "no cycle: every wait can end")
    if would:
        note += "; waiting on it would close a cycle: do not wait, ask a person or cancel first"
    return {"nodes": g["nodes"], "edges": g["edges"], "deadlocks": deadlocks,
            "deadlock": bool(deadlocks), "would_deadlock": would, "would_cycle": cycle,
            "note": note}
