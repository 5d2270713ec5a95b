"""Projects of the shared workspace: manifest v2, internal docs and binary assets, all in the
store. Owner of `ws_projects`, `ws_relations`, `ws_assets` and `ws_blobs` (assets are
content-addressed: an identical re-upload stores nothing new). Stdlib only."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any

from ..core.context import Ctx
from ..core.errors import NexusError, invalid
from ..core.settings import ASSET_MAX, PROJECT_ASSETS_MAX
from ..core.store import policy
from ..core.timefmt import iso
from .base import confirmed, reading, record, writing

if TYPE_CHECKING:
    from .models import (
        DeleteProjectArgs,
        GetProjectArgs,
        RenameProjectArgs,
        SearchProjectsArgs,
        SyncProjectArgs,
        TopologyArgs,
        UpdateProjectArgs,
        UploadAssetArgs,
    )

UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

# team mode (core/store/policy.py): the shared workspace is the whole team's to read and edit;
# what is added is added in the name of one of the caller's own sessions, and a file is stored
# under the digest of what it holds
TEAM_TABLES = {
    "ws_projects": policy.Table(read=policy.TEAM, update=policy.TEAM, delete=policy.TEAM,
                                insert=f"{policy.own('created_by')} AND"
                                       f" {policy.own('updated_by')}"),
    "ws_relations": policy.Table(read=policy.TEAM, insert=policy.TEAM, update=policy.TEAM,
                                 delete=policy.TEAM),
    "ws_blobs": policy.Table(read=policy.TEAM, update=policy.FUNCTIONS, delete=policy.TEAM,
                             insert="sha256 = encode(sha256(data), 'hex') AND size ="
                                    " length(data)"),
    "ws_assets": policy.Table(read=policy.TEAM, insert=policy.own("updated_by"),
                              update=policy.own("updated_by"), delete=policy.TEAM),
}


def get(conn: sqlite3.Connection, project_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM ws_projects WHERE id = ?", (project_id,)).fetchone()


def need(conn: sqlite3.Connection, project_id: str) -> sqlite3.Row:
    row = get(conn, project_id)
    if row is None:
        raise NexusError("project_not_found", project_id, f"Project '{project_id}' not found",
                         "list projects with `nexus project topology` (get_global_topology)")
    return row


def manifest_of(row: sqlite3.Row) -> dict[str, Any]:
    return json.loads(row["manifest"])


def _clean(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest as stored: fields that were not given are left out, not null."""
    out = {k: v for k, v in manifest.items() if v is not None}
    if isinstance(out.get("billing"), dict):
        out["billing"] = {k: v for k, v in out["billing"].items() if v is not None}
    return out


def _store(conn: sqlite3.Connection, manifest: dict[str, Any], docs: str | None, me: str,
           now: float) -> bool:
    """Insert or replace the project's row and its relations; True when it is new."""
    pid = manifest["id"]
    row = get(conn, pid)
    fields = (manifest["name"], manifest.get("description", ""),
              " ".join(manifest.get("techStack", [])), json.dumps(manifest, ensure_ascii=False))
    if row is None:
        conn.execute(policy.write("INSERT INTO ws_projects (id, name, description, tech, manifest,"
                     " internal_docs, created_by, updated_by, created_at, updated_at)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                     (pid, *fields, docs or "", me, me, now, now))
    else:
        conn.execute(policy.write(
            "UPDATE ws_projects SET name = ?, description = ?, tech = ?, manifest = ?,"
            " internal_docs = ?, updated_by = ?, updated_at = ? WHERE id = ?"),
                     (*fields, row["internal_docs"] if docs is None else docs, me, now, pid))
    conn.execute(policy.write("DELETE FROM ws_relations WHERE source = ?"), (pid,))
    conn.executemany(policy.write("INSERT INTO ws_relations (source, target, type) VALUES (?, ?, ?)"
                     " ON CONFLICT DO NOTHING"),
                     [(pid, r["targetId"], r["type"]) for r in manifest.get("relations", [])])
    return row is None


def sync(ctx: Ctx, a: SyncProjectArgs) -> dict:
    manifest = _clean(dict(a.manifest))
    manifest["lastUpdated"] = manifest.get("lastUpdated") or iso(ctx.now)
    with writing(ctx) as (conn, me):
        created = _store(conn, manifest, a.internalDocs, me.id, ctx.now)
        record(conn, ctx, me, "project.sync", manifest["id"], created=created)
    return {"ok": True, "projectId": manifest["id"], "created": created}


def sanitise(name: str) -> str:
    clean = UNSAFE.sub("_", name)
    if not clean.strip("."):
        raise invalid("fileName", f"{name!r} is not a file name", "give a file name, like "
                      "diagram.png")
    return clean


def upload(ctx: Ctx, a: UploadAssetArgs) -> dict:
    name = sanitise(a.fileName)
    try:
        data = base64.b64decode(a.base64Content.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise invalid("base64Content", "not valid base64", "encode the file with base64 "
                      "(`base64 -w0 FILE`)") from None
    if len(data) > ASSET_MAX:
        raise invalid("base64Content", f"the file has {len(data):,} bytes; at most "
                      f"{ASSET_MAX:,}", "store a link to larger files in the manifest")
    digest = hashlib.sha256(data).hexdigest()
    with writing(ctx) as (conn, me):
        need(conn, a.projectId)
        old = conn.execute("SELECT sha256 FROM ws_assets WHERE project = ? AND name = ?",
                           (a.projectId, name)).fetchone()
        unchanged = old is not None and old[0] == digest
        if not unchanged:
            others = conn.execute("SELECT coalesce(sum(size), 0) FROM ws_assets WHERE project = ?"
                                  " AND name != ?", (a.projectId, name)).fetchone()[0]
            if others + len(data) > PROJECT_ASSETS_MAX:
                raise invalid("base64Content", f"the project's assets would take "
                              f"{others + len(data):,} bytes; at most {PROJECT_ASSETS_MAX:,}",
                              "no command removes one asset: upload a smaller file under the "
                              "name of a large one to replace it (`nexus project get "
                              f"{a.projectId}` lists their sizes), or have the person at the "
                              f"shell delete the project (`nexus project delete {a.projectId}`, "
                              "every asset goes) and sync it again")
            conn.execute(policy.write("INSERT INTO ws_blobs (sha256, size, data) VALUES (?, ?, ?)"
                         " ON CONFLICT DO NOTHING"), (digest, len(data), data))
            conn.execute(policy.write(
                "INSERT INTO ws_assets (project, name, sha256, size, updated_by,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project, name) DO"
                " UPDATE SET sha256 = excluded.sha256, size = excluded.size,"
                " updated_by = excluded.updated_by, updated_at = excluded.updated_at"),
                         (a.projectId, name, digest, len(data), me.id, ctx.now))
            if old is not None:
                _drop_orphans(conn, [old[0]])
            record(conn, ctx, me, "project.asset", a.projectId, fileName=name, size=len(data),
                   sha256=digest)
    return {"ok": True, "projectId": a.projectId, "fileName": name, "size": len(data),
            "sha256": digest, "unchanged": unchanged}


def _drop_orphans(conn: sqlite3.Connection, digests: list[str]) -> None:
    conn.executemany(policy.write("DELETE FROM ws_blobs WHERE sha256 = ? AND NOT EXISTS"
                     " (SELECT 1 FROM ws_assets WHERE sha256 = ?)"), [(d, d) for d in digests])


def update(ctx: Ctx, a: UpdateProjectArgs) -> dict:
    patch = _clean(dict(a.patch))
    if "id" in patch:
        raise invalid("patch.id", "Cannot change 'id' via patch", "use rename_project "
                      "(`nexus project rename OLD_ID NEW_ID`)")
    if not patch:
        raise invalid("patch", "names no field to change", "give at least one manifest field")
    with writing(ctx) as (conn, me):
        manifest = manifest_of(need(conn, a.projectId))
        manifest.update(patch)
        manifest["lastUpdated"] = patch.get("lastUpdated") or iso(ctx.now)
        _store(conn, manifest, None, me.id, ctx.now)
        record(conn, ctx, me, "project.update", a.projectId, fields=sorted(patch))
    return {"ok": True, "projectId": a.projectId, "created": False}


def rename(ctx: Ctx, a: RenameProjectArgs) -> dict:
    """The id changes everywhere in one transaction: the project, its assets, and every other
    project's relations to it."""
    if a.oldId == a.newId:
        raise invalid("newId", "Old and new IDs are identical", "give a different new id")
    with writing(ctx) as (conn, me):
        row = need(conn, a.oldId)
        if get(conn, a.newId) is not None:
            raise NexusError("project_exists", a.newId, f"Project '{a.newId}' already exists",
                             "pick another id, or delete that project first")
        manifest = manifest_of(row)
        manifest["id"] = a.newId
        conn.execute(policy.write(
            "UPDATE ws_projects SET id = ?, manifest = ?, updated_by = ?, updated_at = ?"
            " WHERE id = ?"), (a.newId, json.dumps(manifest, ensure_ascii=False), me.id,
                                       ctx.now, a.oldId))
        conn.execute(policy.write(
            "UPDATE ws_assets SET project = ? WHERE project = ?"), (a.newId, a.oldId))
        _rename_relations(conn, "source", a.oldId, a.newId)
        updated = 0
        for other in conn.execute("SELECT DISTINCT source FROM ws_relations WHERE target = ?",
                                  (a.oldId,)).fetchall():
            theirs = get(conn, other[0])
            if theirs is None:
                continue
            m = manifest_of(theirs)
            for rel in m.get("relations", []):
                if rel.get("targetId") == a.oldId:
                    rel["targetId"] = a.newId
                    updated += 1
            conn.execute(policy.write("UPDATE ws_projects SET manifest = ? WHERE id = ?"),
                         (json.dumps(m, ensure_ascii=False), other[0]))
        _rename_relations(conn, "target", a.oldId, a.newId)
        record(conn, ctx, me, "project.rename", a.oldId, newId=a.newId, relationsUpdated=updated)
    return {"ok": True, "oldId": a.oldId, "newId": a.newId, "relationsUpdated": updated}


def _rename_relations(conn: sqlite3.Connection, column: str, old: str, new: str) -> None:
    """The relations naming `old` in `column` name `new` instead (one already there stays)."""
    copy, drop = _RENAMES[column]
    conn.execute(copy, (new, old))
    conn.execute(drop, (old,))


# by the column that names the renamed project: its relations copied, then the old ones dropped
_RENAMES = {column: (
    policy.write(f"INSERT INTO ws_relations ({column}, {other}, type) SELECT ?, {other}, type"
                 f" FROM ws_relations WHERE {column} = ? ON CONFLICT DO NOTHING"),
    policy.write(f"DELETE FROM ws_relations WHERE {column} = ?"))
    for column, other in (("source", "target"), ("target", "source"))}


def search(ctx: Ctx, a: SearchProjectsArgs) -> dict:
    from ..core.store.fulltext import like

    where = " OR ".join(f"lower({c}) LIKE :q ESCAPE '\\'"
                        for c in ("id", "name", "description", "tech", "internal_docs"))
    with reading(ctx) as (conn, _):
        total = conn.execute(f"SELECT count(*) FROM ws_projects WHERE {where}",
                             {"q": like(a.query)}).fetchone()[0]
        rows = conn.execute(f"SELECT * FROM ws_projects WHERE {where} ORDER BY updated_at DESC,"
                            " id LIMIT :limit", {"q": like(a.query), "limit": a.limit}).fetchall()
    results = [{"id": r["id"], "name": r["name"], "description": r["description"],
                "techStack": manifest_of(r).get("techStack", [])} for r in rows]
    return {"query": a.query, "count": len(results), "total": total, "results": results}


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def dot(nodes: list[dict[str, Any]], edges: list[dict[str, str]]) -> str:
    lines = ["digraph projects {", "  rankdir=LR;"]
    for n in nodes:
        style = ", style=dashed" if n.get("missing") else ""
        lines.append(f"  {_dot_id(n['id'])} [label={_dot_id(n['name'])}{style}];")
    for e in edges:
        lines.append(f"  {_dot_id(e['from'])} -> {_dot_id(e['to'])} [label={_dot_id(e['type'])}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def topology(ctx: Ctx, a: TopologyArgs) -> dict:
    with reading(ctx) as (conn, _):
        if a.projectId:
            need(conn, a.projectId)
            rels = conn.execute("SELECT source, target, type FROM ws_relations WHERE source = ?"
                                " OR target = ? ORDER BY source, target, type",
                                (a.projectId, a.projectId)).fetchall()
        else:
            rels = conn.execute("SELECT source, target, type FROM ws_relations"
                                " ORDER BY source, target, type").fetchall()
        rows = {r["id"]: r for r in conn.execute("SELECT id, name FROM ws_projects ORDER BY id")}
        counts = dict(conn.execute("SELECT source, count(*) FROM ws_relations GROUP BY source")
                      .fetchall())
        total_edges = conn.execute("SELECT count(*) FROM ws_relations").fetchone()[0]
    edges = [{"from": s, "to": t, "type": k} for s, t, k in rels]

    def node(pid: str) -> dict[str, Any]:
        row = rows.get(pid)
        return {"id": pid, "name": row["name"] if row else pid,
                "relationsCount": counts.get(pid, 0), "missing": row is None}

    if a.projectId:
        ids = [a.projectId, *sorted({e["to"] for e in edges} | {e["from"] for e in edges}
                                    - {a.projectId})]
    else:
        ids = sorted(set(rows) | {e["to"] for e in edges})
    nodes = [node(i) for i in ids]
    projects = [n for n in nodes if not n["missing"]]
    hint = ("Call with projectId for one project's neighbourhood" if not a.projectId
            else "Call without projectId for every project")
    return {"mode": "focused" if a.projectId else "list", "projectId": a.projectId,
            "summary": {"totalProjects": len(rows), "totalEdges": total_edges, "hint": hint},
            "projects": projects, "nodes": nodes, "edges": edges, "dot": dot(nodes, edges)}


def show(ctx: Ctx, a: GetProjectArgs) -> dict:
    with reading(ctx) as (conn, _):
        row = need(conn, a.projectId)
        assets = conn.execute("SELECT * FROM ws_assets WHERE project = ? ORDER BY name",
                              (a.projectId,)).fetchall()
    out: dict[str, Any] = {"manifest": manifest_of(row)}
    if a.includeDocs:
        out["internalDocs"] = row["internal_docs"]
    out["assets"] = [{"fileName": r["name"], "size": r["size"], "sha256": r["sha256"],
                      "updatedBy": r["updated_by"], "lastUpdated_epoch": r["updated_at"]}
                     for r in assets]
    out.update(updatedBy=row["updated_by"], lastUpdated_epoch=row["updated_at"])
    return out


def delete(ctx: Ctx, a: DeleteProjectArgs) -> dict:
    with writing(ctx) as (conn, me):
        confirmed(me, a.confirm, "host_delete_project", f"deleting project {a.projectId}")
        need(conn, a.projectId)
        digests = [r[0] for r in conn.execute("SELECT sha256 FROM ws_assets WHERE project = ?",
                                              (a.projectId,))]
        conn.execute(policy.write("DELETE FROM ws_assets WHERE project = ?"), (a.projectId,))
        _drop_orphans(conn, digests)
        conn.execute(policy.write("DELETE FROM ws_relations WHERE source = ?"), (a.projectId,))
        conn.execute(policy.write("DELETE FROM ws_projects WHERE id = ?"), (a.projectId,))
        record(conn, ctx, me, "project.delete", a.projectId, assetsRemoved=len(digests))
    return {"ok": True, "projectId": a.projectId, "assetsRemoved": len(digests)}


def local_path(conn: sqlite3.Connection, project_id: str) -> str | None:
    row = get(conn, project_id)
    return manifest_of(row).get("localPath") if row else None
