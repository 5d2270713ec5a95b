"""Human output of the workspace tools. Every name, topic and text came from a peer: it passes
through core.text (visible, one_line) before it reaches a terminal."""

from __future__ import annotations

from typing import Any

from ..core.human import Part, Table, ago, fields, plural
from ..core.text import block, labelled, one_line


def _size(n: int) -> str:
    return f"{n:,} B" if n < 1024 else f"{n / 1024:,.1f} KiB" if n < 1024**2 else \
        f"{n / 1024**2:,.1f} MiB"


def project_ack(r: dict[str, Any]) -> str:
    return f"project {one_line(r['projectId'])} " + ("created" if r.get("created") else "updated")


def asset(r: dict[str, Any]) -> str:
    state = "unchanged (same content)" if r["unchanged"] else "stored"
    return f"{one_line(r['fileName'])} {state}: {_size(r['size'])}, sha256 {r['sha256'][:12]}…"


def renamed(r: dict[str, Any]) -> str:
    return (f"renamed {one_line(r['oldId'])} -> {one_line(r['newId'])}; "
            f"{plural(r['relationsUpdated'], 'relation')} in other projects rewritten")


def search(r: dict[str, Any]) -> list[Part] | str:
    if not r["results"]:
        return f"no project matches {one_line(r['query'])!r}"
    rows = [[p["id"], p["name"], ", ".join(p["techStack"]), one_line(p["description"], 80)]
            for p in r["results"]]
    return [Table(["id", "name", "tech", "description"], rows, wide=("description", "tech")),
            f"{r['count']} of {plural(r['total'], 'project')}"]


def topology(r: dict[str, Any]) -> str:
    s = r["summary"]
    head = (f"{plural(s['totalProjects'], 'project')}, {plural(s['totalEdges'], 'relation')}"
            if r["mode"] == "list"
            else f"project {one_line(r['projectId'] or '')} and its neighbours")
    out: dict[str, list[dict]] = {n["id"]: [] for n in r["nodes"]}
    for e in r["edges"]:
        out.setdefault(e["from"], []).append(e)
    lines = [head]
    for n in r["nodes"]:
        mark = " (not registered)" if n["missing"] else ""
        lines.append(f"{one_line(n['id'])}  {one_line(n['name'])}{mark}")
        for e in out.get(n["id"], []):
            lines.append(f"  -{e['type']}-> {one_line(e['to'])}")
    if not r["nodes"]:
        lines.append("no projects yet: `nexus project sync --manifest JSON --internal-docs TEXT`")
    lines.append("(Graphviz: `nexus project topology --json | jq -r .dot | dot -Tsvg`)")
    return "\n".join(lines)


def project(r: dict[str, Any]) -> str:
    m = r["manifest"]
    rel = ", ".join(f"{x['type']} {x['targetId']}" for x in m.get("relations", []))
    head = fields([("id", m["id"]), ("name", m["name"]), ("description", one_line(
        m.get("description", ""), 200)), ("tech", ", ".join(m.get("techStack", []))),
        ("relations", rel), ("repository", m.get("repositoryUrl")), ("path", m.get("localPath")),
        ("updated", f"{ago(r['lastUpdated_epoch'])} by {r['updatedBy']}"),
        ("assets", ", ".join(f"{a['fileName']} ({_size(a['size'])})" for a in r["assets"]))])
    if r.get("internalDocs"):
        head += "\n\n" + block(r["internalDocs"])
    return head


def deleted(r: dict[str, Any]) -> str:
    return f"deleted project {one_line(r['projectId'])} and {plural(r['assetsRemoved'], 'asset')}"


def strategy_ack(r: dict[str, Any]) -> str:
    return f"strategy version {r['version']}" + (" (unchanged)" if r["unchanged"] else " saved")


def strategy(r: dict[str, Any]) -> str:
    if r.get("version") is None:
        return "no strategy yet: `nexus doc set-strategy TEXT`"
    out = [f"strategy version {r['version']}, {ago(r['lastUpdated_epoch'])} by "
           f"{one_line(r['updatedBy'])}", "", block(r["content"])]
    for v in r.get("history") or []:
        out.append(f"v{v['version']}  {ago(v['lastUpdated_epoch'])}  {one_line(v['updatedBy'])}"
                   f"  {_size(v['size'])}")
    if r.get("diff"):
        out += ["", block(r["diff"])]
    return "\n".join(out)


def docs(r: dict[str, Any]) -> list[Part] | str:
    if not r["docs"]:
        return "no global docs yet"
    return [Table(["id", "title", "updated", "by"],
                  [[d["docId"], d["title"], ago(d["lastUpdated_epoch"]), d["updatedBy"]]
                   for d in r["docs"]], wide=("title",))]


def doc(r: dict[str, Any]) -> str:
    return (f"{one_line(r['docId'])}: {one_line(r['title'])} ({ago(r['lastUpdated_epoch'])} by "
            f"{one_line(r['updatedBy'])})\n\n{block(r['content'])}")


def doc_ack(r: dict[str, Any]) -> str:
    return f"doc {one_line(r['docId'])} " + ("created" if r["created"] else "updated")


def meetings(r: dict[str, Any]) -> list[Part] | str:
    if not r["meetings"]:
        return "no meetings"
    rows = [[("* " if m["id"] == r["activeMeetingId"] else "  ") + m["id"], m["status"],
             one_line(m["topic"], 50), m["initiator"], ago(m["startTime_epoch"]),
             str(m["messageCount"]), str(m["decisionCount"])] for m in r["meetings"]]
    return [Table(["id", "status", "topic", "initiator", "started", "msgs", "decisions"], rows,
                  wide=("topic",)), f"{plural(r['count'], 'meeting')}; * marks the active one"]


def meeting(r: dict[str, Any]) -> str:
    m = r["meeting"]
    lines = [f"{one_line(r['message'])} ({m['id']}, {m['status']})"]
    if m.get("summary"):
        lines.append(labelled("summary", m["summary"]))
    for d in m["decisions"]:
        lines.append(f"DECISION #{d['messageId']} by {one_line(d['from'])}: {one_line(d['text'])}")
    return "\n".join(lines)


def sent(r: dict[str, Any]) -> str:
    where = f"meeting {r['meetingId']}" if r["meetingId"] else "global chat"
    told = f"; addressed: {', '.join(r['mentioned'])}" if r["mentioned"] else ""
    return f"posted #{r['messageId']} ({r['category']}) to {where}{told}"


def messages(r: dict[str, Any]) -> str:
    where = (f"meeting {r['meetingId']} {one_line(r['meeting'] or '')!r}" if r["meetingId"]
             else "global chat")
    if not r["messages"]:
        return f"nothing new in {where}"
    out = []
    for m in r["messages"]:
        out.append(f"#{m['id']} {m['category']} from {one_line(m['name'])}, "
                   f"{ago(m['timestamp_epoch'])}:\n{block(m['text'])}")
    tail = f"{r['remaining']} more unread: run it again" if r["remaining"] else "all read"
    return "\n\n".join(out) + f"\n\n{where}: {tail}"


def maintenance(r: dict[str, Any]) -> str:
    return (f"removed {plural(r['removed'], 'global chat message')}; {r['remaining']} "
            f"{'remains' if r['remaining'] == 1 else 'remain'}")


def find(r: dict[str, Any]) -> list[Part] | str:
    if not r["hits"]:
        return f"nothing matches {one_line(r['query'])!r}"
    rows = [[h["kind"], one_line(h["ref"], 30), one_line(h["title"], 30), one_line(h["snippet"])]
            for h in r["hits"]]
    return [Table(["kind", "ref", "title", "snippet"], rows, wide=("snippet",)),
            f"{r['count']} of {plural(r['total'], 'hit')}"
            + (f"; next page: {r['next']}" if r["truncated"] else "")]
