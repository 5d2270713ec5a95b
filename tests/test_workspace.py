"""The shared workspace of seed 004, tool by tool from the seed's tables: defaults, ranges, error
texts and result shapes; the rename cascade; meeting initiator rights; one read cursor per
instance; send_message's routing; an event for every change; the rate limit across processes;
find's access rules; the hooks' brief chat announcements and who is woken."""

from __future__ import annotations

import base64
import contextlib
import json
import multiprocessing as mp
import sqlite3

import pytest
from test_mcp import run, session  # the official SDK client, as tests/test_mcp.py starts it

from helpers import A_ID, B_ID, C_ID, A, B, C, call, ctx_for, raw_db, sid
from nexus_cli.catalog import load
from nexus_cli.core.errors import NexusError
from nexus_cli.core.registry import invoke
from nexus_cli.messages import mailbox


@pytest.fixture
def trio(hook, chdir_work):
    for n, client in ((1, "claude"), (2, "codex"), (3, "claude")):
        hook(client, "SessionStart", sid(n), source="startup")


def manifest(pid: str, *relations: tuple[str, str], **extra: object) -> dict:
    return {"id": pid, "name": pid.split("_", 1)[1].title(), "description": f"about {pid}",
            "techStack": ["python"],
            "relations": [{"targetId": t, "type": k} for t, k in relations],
            "repositoryUrl": f"https://example.invalid/{pid}", "localPath": f"/src/{pid}",
            "endpoints": [], "apiSpec": [], **extra}


def fails(home, name: str, args: dict, env=A) -> NexusError:
    with pytest.raises(NexusError) as err:
        call(home, name, args, env)
    return err.value


def db(home) -> sqlite3.Connection:
    return raw_db(home)


# -- projects -------------------------------------------------------------------------------------


def test_manifest_v2_is_validated_as_the_seed_lists_it(home, trio):
    ok = call(home, "sync_project_assets", {"manifest": manifest(
        "web_example.com", billing={"plain": "pro", "price": 9.5}, feature_tier="team",
        apiDependencies={"api_user-auth": "^1.2"}, gatewayCompatibility=">=2",
        api_versions={"chat": "v2"}), "internalDocs": "# guide"}, A)
    assert ok == {"ok": True, "projectId": "web_example.com", "created": True}
    for bad, needle in [
        ({"id": "nounderscore"}, "[prefix]_[name]"),
        ({"id": "web_has space"}, "[prefix]_[name]"),
        ({"relations": [{"targetId": "api_x", "type": "friend"}]}, "dependency, parent, child"),
        ({"feature_tier": "gold"}, "standard, advanced, team"),
        ({"bogus": 1}, "is not an argument"),
    ]:
        err = fails(home, "sync_project_assets", {"manifest": {**manifest("web_a"), **bad},
                                                  "internalDocs": ""})
        assert err.code == "invalid_argument" and needle in err.message, err.message
    missing = manifest("web_a")
    del missing["techStack"]
    err = fails(home, "sync_project_assets", {"manifest": missing, "internalDocs": ""})
    assert "techStack" in err.key and "required" in err.reason
    assert "internalDocs" in fails(home, "sync_project_assets", {"manifest": manifest("web_a")}).key


def test_update_changes_only_what_it_names_and_never_the_id(home, trio):
    call(home, "sync_project_assets", {"manifest": manifest("web_a"), "internalDocs": "docs"}, A)
    err = fails(home, "update_project", {"projectId": "web_a", "patch": {"id": "web_b"}})
    assert err.key == "patch.id" and "Cannot change 'id' via patch" in err.reason
    assert "rename_project" in err.action
    assert "is not an argument" in fails(home, "update_project",
                                         {"projectId": "web_a", "patch": {"nope": 1}}).reason
    err = fails(home, "update_project", {"projectId": "web_zz", "patch": {"name": "Z"}})
    assert err.code == "project_not_found" and "Project 'web_zz' not found" in err.reason
    assert call(home, "update_project", {"projectId": "web_a", "patch": {"name": "Renamed"}},
                A) == {"ok": True, "projectId": "web_a", "created": False}
    got = call(home, "get_project", {"projectId": "web_a"}, B)
    assert got["manifest"]["name"] == "Renamed" and got["manifest"]["description"] == "about web_a"
    assert got["internalDocs"] == "docs" and got["manifest"]["lastUpdated"]
    assert "internalDocs" not in call(home, "get_project", {"projectId": "web_a",
                                                            "includeDocs": False}, B)


def test_rename_rewrites_every_relation_in_one_transaction(home, trio):
    call(home, "sync_project_assets", {"manifest": manifest("api_pay"), "internalDocs": ""}, A)
    call(home, "sync_project_assets", {"manifest": manifest(
        "web_shop", ("api_pay", "dependency")), "internalDocs": ""}, A)
    call(home, "sync_project_assets", {"manifest": manifest(
        "app_admin", ("api_pay", "related"), ("web_shop", "child")), "internalDocs": ""}, B)
    call(home, "upload_project_asset", {"projectId": "api_pay", "fileName": "spec.yaml",
                                        "base64Content": base64.b64encode(b"openapi").decode()}, A)
    r = call(home, "rename_project", {"oldId": "api_pay", "newId": "api_payments"}, A)
    assert r == {"ok": True, "oldId": "api_pay", "newId": "api_payments", "relationsUpdated": 2}
    assert call(home, "get_project", {"projectId": "web_shop"}, A)["manifest"]["relations"] == [
        {"targetId": "api_payments", "type": "dependency"}]
    assert {x["targetId"] for x in call(home, "get_project", {"projectId": "app_admin"},
                                        A)["manifest"]["relations"]} == {"api_payments", "web_shop"}
    moved = call(home, "get_project", {"projectId": "api_payments"}, A)
    assert moved["manifest"]["id"] == "api_payments"
    assert moved["assets"][0]["fileName"] == "spec.yaml"
    topo = call(home, "get_global_topology", {}, A)
    assert {(e["from"], e["to"]) for e in topo["edges"]} == {
        ("web_shop", "api_payments"), ("app_admin", "api_payments"), ("app_admin", "web_shop")}
    assert topo["mode"] == "list" and topo["summary"]["totalProjects"] == 3
    assert not any(n["missing"] for n in topo["nodes"])
    assert fails(home, "rename_project", {"oldId": "api_pay", "newId": "api_x"}).code == \
        "project_not_found"
    assert fails(home, "rename_project", {"oldId": "web_shop", "newId": "app_admin"}).code == \
        "project_exists"
    # all or nothing: a rename that fails leaves every manifest as it was
    rows = "SELECT id, manifest FROM ws_projects ORDER BY id"
    before = [tuple(r) for r in db(home).execute(rows)]
    fails(home, "rename_project", {"oldId": "web_shop", "newId": "app_admin"})
    assert [tuple(r) for r in db(home).execute(rows)] == before


def test_topology_focus_dot_and_search(home, trio):
    call(home, "sync_project_assets", {"manifest": manifest("web_a", ("api_b", "dependency")),
                                       "internalDocs": "uses kafka"}, A)
    call(home, "sync_project_assets", {"manifest": manifest("web_c"), "internalDocs": ""}, A)
    focus = call(home, "get_global_topology", {"projectId": "web_a"}, A)
    assert focus["mode"] == "focused" and [n["id"] for n in focus["nodes"]] == ["web_a", "api_b"]
    assert focus["nodes"][1]["missing"] is True
    assert '"web_a" -> "api_b" [label="dependency"];' in focus["dot"]
    assert fails(home, "get_global_topology", {"projectId": "web_zz"}).code == "project_not_found"
    found = call(home, "search_projects", {"query": "KAFKA"}, A)
    assert (found["query"], found["count"], [p["id"] for p in found["results"]]) == (
        "KAFKA", 1, ["web_a"])
    assert set(found["results"][0]) == {"id", "name", "description", "techStack"}
    assert call(home, "search_projects", {"query": "web_"}, A)["count"] == 2  # _ is not a wildcard
    for limit in (0, 201):
        assert "limit" in fails(home, "search_projects", {"query": "x", "limit": limit}).key
    assert len(call(home, "search_projects", {"query": "about", "limit": 1}, A)["results"]) == 1


def test_assets_are_content_addressed_and_go_with_their_project(home, trio, nx):
    call(home, "sync_project_assets", {"manifest": manifest("web_a"), "internalDocs": ""}, A)
    b64 = base64.b64encode(b"\x89PNG binary").decode()
    first = call(home, "upload_project_asset", {"projectId": "web_a", "fileName": "../logo?.png",
                                                "base64Content": b64}, A)
    assert first["fileName"] == ".._logo_.png" and first["unchanged"] is False and first["ok"]
    again = call(home, "upload_project_asset", {"projectId": "web_a", "fileName": "../logo?.png",
                                                "base64Content": b64}, A)
    assert again["unchanged"] is True and again["sha256"] == first["sha256"]
    call(home, "upload_project_asset", {"projectId": "web_a", "fileName": "copy.png",
                                        "base64Content": b64}, A)
    assert db(home).execute("SELECT count(*) FROM ws_blobs").fetchone()[0] == 1
    call(home, "upload_project_asset", {"projectId": "web_a", "fileName": "copy.png",
                                        "base64Content": base64.b64encode(b"new").decode()}, A)
    assert db(home).execute("SELECT count(*) FROM ws_blobs").fetchone()[0] == 2
    assert fails(home, "upload_project_asset", {"projectId": "web_a", "fileName": ".",
                                                "base64Content": b64}).key == "fileName"
    assert "base64" in fails(home, "upload_project_asset", {
        "projectId": "web_a", "fileName": "x", "base64Content": "not base64!"}).reason
    assert fails(home, "upload_project_asset", {"projectId": "web_zz", "fileName": "x",
                                                "base64Content": b64}).code == "project_not_found"
    # an agent deletes only with confirm; the person at the shell without
    err = fails(home, "host_delete_project", {"projectId": "web_a"})
    assert err.code == "confirmation_required" and "confirm: true" in err.action
    r = nx("project", "delete", "web_a", "--json")
    assert r.code == 0 and r.json == {"ok": True, "projectId": "web_a", "assetsRemoved": 2}
    assert db(home).execute("SELECT count(*) FROM ws_blobs").fetchone()[0] == 0
    assert fails(home, "get_project", {"projectId": "web_a"}).code == "project_not_found"
    assert fails(home, "host_delete_project", {"projectId": "web_a", "confirm": True}).code == \
        "project_not_found"


# -- strategy and docs ----------------------------------------------------------------------------


def test_strategy_keeps_its_versions_and_docs_list_newest_first(home, trio):
    assert call(home, "get_global_strategy", {}, A) == {"content": ""}
    assert call(home, "update_global_strategy", {"content": "# Plan\nship"}, A)["version"] == 1
    assert call(home, "update_global_strategy", {"content": "# Plan\nship"}, B)["unchanged"]
    call(home, "update_global_strategy", {"content": "# Plan\nship friday"}, B)
    got = call(home, "get_global_strategy", {}, A)
    assert got["content"] == "# Plan\nship friday" and got["updatedBy"] == B_ID
    hist = call(home, "get_global_strategy", {"history": 5}, A)
    assert [v["version"] for v in hist["history"]] == [2, 1]
    assert "-ship\n+ship friday" in hist["diff"]
    call(home, "sync_global_doc", {"docId": "arch", "title": "Architecture", "content": "a"}, A)
    call(home, "sync_global_doc", {"docId": "runbook", "title": "Runbook", "content": "r"}, B)
    listed = call(home, "list_global_docs", {}, A)
    assert listed["count"] == 2 and [d["docId"] for d in listed["docs"]] == ["runbook", "arch"]
    assert set(listed["docs"][0]) == {"docId", "title", "lastUpdated", "lastUpdated_epoch",
                                      "updatedBy"}
    doc = call(home, "get_global_doc", {"docId": "arch"}, B)
    assert (doc["title"], doc["content"], doc["updatedBy"]) == ("Architecture", "a", A_ID)
    err = fails(home, "get_global_doc", {"docId": "nope"})
    assert err.code == "doc_not_found" and "Document 'nope' not found" in err.reason
    for bad in ("a/b", "a..b", "../x"):
        assert fails(home, "sync_global_doc", {"docId": bad, "title": "t", "content": ""}
                     ).key.endswith("docId")


# -- meetings and chat ----------------------------------------------------------------------------


def test_only_the_initiator_or_the_person_ends_archives_and_reopens(home, trio, nx):
    m = call(home, "start_meeting", {"topic": "release"}, A)
    assert (m["ok"], m["status"], m["topic"], m["message"]) == (True, "active", "release",
                                                                "Meeting started: release")
    mid = m["meetingId"]
    assert m["meeting"]["initiator"] == A_ID
    for tool, args in (("end_meeting", {"meetingId": mid}), ("archive_meeting", {"meetingId": mid}),
                       ("reopen_meeting", {"meetingId": mid})):
        err = fails(home, tool, args, B)
        assert err.code == "not_initiator" and "Only the meeting initiator" in err.reason
    call(home, "send_message", {"message": "we ship friday", "category": "DECISION"}, B)
    call(home, "send_message", {"message": "and tell QA", "category": "DECISION"}, A)
    assert fails(home, "archive_meeting", {"meetingId": mid}).code == "meeting_state"
    ended = call(home, "end_meeting", {"summary": "friday"}, A)  # the active one by default
    rec = ended["meeting"]
    assert (ended["status"], rec["summary"], rec["decisionCount"]) == ("closed", "friday", 2)
    assert [d["text"] for d in rec["decisions"]] == ["we ship friday", "and tell QA"]
    assert rec["decisions"][0]["from"] == B_ID and set(rec["participants"]) == {A_ID, B_ID}
    assert call(home, "end_meeting", {"meetingId": mid}, A)["status"] == "closed"  # a replay
    err = fails(home, "end_meeting", {})
    assert err.code == "meeting_not_found" and "No active meeting found to end" in err.reason
    assert nx("meeting", "archive", mid, "--json").json["status"] == "archived"  # the person
    assert call(home, "reopen_meeting", {"meetingId": mid}, A)["status"] == "active"
    listed = call(home, "list_meetings", {}, B)
    assert listed["activeMeetingId"] == mid and listed["count"] == 1
    item = listed["meetings"][0]
    assert {"id", "topic", "status", "initiator", "startTime", "participants", "messageCount",
            "decisionCount"} <= set(item) and item["messageCount"] == 3
    assert call(home, "list_meetings", {"status": "closed"}, B)["meetings"] == []
    assert "status" in fails(home, "list_meetings", {"status": "open"}).key
    assert "limit" in fails(home, "list_meetings", {"limit": 201}).key
    assert fails(home, "reopen_meeting", {"meetingId": "mtg-none"}).code == "meeting_not_found"


def test_send_message_routes_as_the_seed_says(home, trio):
    g = call(home, "send_message", {"message": "hello all"}, A)
    assert (g["sentTo"], g["meetingId"], g["category"]) == ("global", None, "CHAT")
    assert isinstance(g["messageId"], int) and g["message"] == "hello all"
    first = call(home, "start_meeting", {"topic": "one"}, A)["meetingId"]
    second = call(home, "start_meeting", {"topic": "two"}, B)["meetingId"]
    active = call(home, "send_message", {"message": "to the active one"}, C)
    assert (active["sentTo"], active["meetingId"]) == ("meeting", second)
    named = call(home, "send_message", {"message": "to one", "meetingId": first}, C)
    assert (named["sentTo"], named["meetingId"]) == ("meeting", first)
    call(home, "end_meeting", {"meetingId": first}, A)
    err = fails(home, "send_message", {"message": "late", "meetingId": first}, C)
    assert err.code == "meeting_state" and "not active" in err.reason
    assert fails(home, "send_message", {"message": "x", "meetingId": "mtg-0"}).code == \
        "meeting_not_found"
    assert "category" in fails(home, "send_message", {"message": "x", "category": "NOISE"}).key
    assert "message" in fails(home, "send_message", {"message": ""}).key
    call(home, "end_meeting", {"meetingId": second}, B)
    assert call(home, "send_message", {"message": "back to global"}, C)["sentTo"] == "global"


def test_each_instance_reads_every_message_once_oldest_first(home, trio, nx):
    for n in range(3):
        call(home, "send_message", {"message": f"m{n}"}, A)
    r = call(home, "read_messages", {"count": 2}, B)
    assert [m["text"] for m in r["messages"]] == ["m0", "m1"] and r["remaining"] == 1
    assert (r["source"], r["hub"], r["messages"][0]["from"]) == ("global", "Global", A_ID)
    assert [m["text"] for m in call(home, "read_messages", {}, B)["messages"]] == ["m2"]
    assert call(home, "read_messages", {}, B)["messages"] == []
    # another instance has its own cursor; so has the person at the shell
    assert [m["text"] for m in call(home, "read_messages", {"count": 500}, C)["messages"]] == [
        "m0", "m1", "m2"]
    assert [m["text"] for m in nx("chat", "read", "--json").json["messages"]] == ["m0", "m1", "m2"]
    assert nx("chat", "read", "--json").json["messages"] == []
    # a meeting is a stream of its own
    mid = call(home, "start_meeting", {"topic": "t"}, A)["meetingId"]
    call(home, "send_message", {"message": "in the meeting"}, A)
    got = call(home, "read_messages", {"meetingId": mid}, B)
    assert got["source"] == "meeting" and got["meeting"] == "t"
    assert [m["category"] for m in got["messages"]] == ["MEETING_START", "CHAT"]
    assert call(home, "read_messages", {}, B)["messages"] == []
    for count in (0, 501):
        assert "count" in fails(home, "read_messages", {"count": count}).key
    assert fails(home, "read_messages", {"meetingId": "mtg-none"}).code == "meeting_not_found"


def test_maintenance_prunes_and_clears_global_chat_only(home, trio, nx):
    for n in range(5):
        call(home, "send_message", {"message": f"g{n}"}, A)
    mid = call(home, "start_meeting", {"topic": "kept"}, A)["meetingId"]
    call(home, "send_message", {"message": "meeting text"}, A)
    err = fails(home, "host_maintenance", {"action": "prune", "count": 2})
    assert err.code == "confirmation_required"
    assert call(home, "host_maintenance", {"action": "prune", "confirm": True}, A) == {
        "ok": True, "removed": 0, "remaining": 5}  # count defaults to 0
    assert nx("chat", "maintenance", "prune", "--count", "2", "--json").json == {
        "ok": True, "removed": 2, "remaining": 3}
    assert [m["text"] for m in call(home, "read_messages", {}, B)["messages"]] == ["g2", "g3", "g4"]
    assert nx("chat", "maintenance", "clear", "--count", "1", "--json").json == {
        "ok": True, "removed": 3, "remaining": 0}
    assert len(call(home, "read_messages", {"meetingId": mid}, B)["messages"]) == 2
    assert "action" in fails(home, "host_maintenance", {"action": "wipe", "confirm": True}).key


# -- the activity log -----------------------------------------------------------------------------


def test_every_change_is_an_event_newest_first(home, trio, nx):
    call(home, "sync_project_assets", {"manifest": manifest("web_a"), "internalDocs": ""}, A)
    call(home, "update_project", {"projectId": "web_a", "patch": {"name": "A2"}}, A)
    call(home, "upload_project_asset", {"projectId": "web_a", "fileName": "f",
                                        "base64Content": "aGk="}, A)
    call(home, "rename_project", {"oldId": "web_a", "newId": "web_b"}, A)
    call(home, "sync_global_doc", {"docId": "d", "title": "t", "content": "c"}, A)
    call(home, "update_global_strategy", {"content": "s"}, A)
    mid = call(home, "start_meeting", {"topic": "t"}, A)["meetingId"]
    call(home, "send_message", {"message": "hi"}, B)
    call(home, "end_meeting", {}, A)
    call(home, "archive_meeting", {"meetingId": mid}, A)
    call(home, "reopen_meeting", {"meetingId": mid}, A)
    call(home, "host_maintenance", {"action": "prune", "count": 1, "confirm": True}, A)
    call(home, "host_maintenance", {"action": "clear", "confirm": True}, A)
    call(home, "host_delete_project", {"projectId": "web_b", "confirm": True}, A)
    task = call(home, "create_task", {"source_meeting_id": mid}, A)["task_id"]
    call(home, "update_task", {"taskId": task, "progress": 0.5}, A)
    call(home, "cancel_task", {"taskId": task}, A)
    everything = call(home, "list_events", {"limit": 500}, A)["events"]
    actions = [e["action"] for e in everything]
    assert actions == ["task.cancel", "task.update", "task.create", "project.delete",
                       "maintenance.clear", "maintenance.prune", "meeting.reopen",
                       "meeting.archive", "meeting.end", "chat.send", "meeting.start",
                       "strategy.update", "doc.sync", "project.rename", "project.asset",
                       "project.update", "project.sync"]
    assert all({"timestamp", "actor", "action", "target", "detail"} <= set(e) for e in everything)
    assert everything[-1]["actor"] == A_ID and everything[-1]["target"] == "web_a"
    assert [e["action"] for e in call(home, "list_events", {"action": "meeting"}, A)["events"]] == [
        "meeting.reopen", "meeting.archive", "meeting.end", "meeting.start"]
    assert [e["target"] for e in call(home, "list_events", {"action": "meeting.end"}, A)[
        "events"]] == [mid]
    assert call(home, "list_events", {}, A)["limit"] == 20
    assert len(call(home, "list_events", {"action": "project", "limit": 2}, A)["events"]) == 2
    for limit in (0, 501):
        assert "limit" in fails(home, "list_events", {"limit": limit}).key


# -- the rate limit -------------------------------------------------------------------------------


def _call_at(home: str, now: float, env: dict, text: str, q: mp.Queue) -> None:
    ctx = ctx_for(home, env)
    ctx.now = now
    try:
        invoke(load()["send_message"], ctx, {"message": text})
        q.put("ok")
    except NexusError as exc:
        q.put(exc.message)


def test_the_rate_limit_holds_across_processes_and_recovers(home, trio, nx):
    import time

    nx("config", "set", "rateLimit", "1")
    nx("config", "set", "rateBurst", "3")
    now = time.time() + 100  # one instant for every process: no refill between their calls
    q = mp.get_context("fork").Queue()
    procs = [mp.get_context("fork").Process(target=_call_at, args=(str(home), now, A, f"p{i}", q))
             for i in range(8)]
    for p in procs:
        p.start()
    got = [q.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=120)
    refused = [g for g in got if g != "ok"]
    assert got.count("ok") == 3 and len(refused) == 5, got
    assert all("rate_limited" in g and "Rate limit exceeded" in g and "retry after 1s" in g
               for g in refused), refused
    assert db(home).execute("SELECT count(*) FROM ws_chat").fetchone()[0] == 3  # refused: unwritten
    other = mp.get_context("fork").Queue()
    _call_at(str(home), now, B, "another instance", other)  # B has a bucket of its own
    assert other.get(timeout=10) == "ok"
    _call_at(str(home), now + 1.0, A, "a second later", q)  # one token back
    assert q.get(timeout=10) == "ok"
    _call_at(str(home), now + 1.0, A, "too soon", q)
    assert "retry after 1s" in q.get(timeout=10)


# -- find -----------------------------------------------------------------------------------------


def test_find_ranks_filters_and_shows_only_what_the_caller_may_read(home, trio, nx):
    call(home, "sync_project_assets", {"manifest": manifest("web_shop"),
                                       "internalDocs": "the checkout flow uses stripe"}, A)
    call(home, "sync_global_doc", {"docId": "pay", "title": "Payments", "content": "stripe keys"},
         A)
    call(home, "update_global_strategy", {"content": "move payments to stripe"}, A)
    call(home, "send_message", {"message": "stripe webhook is flaky"}, B)
    nx("send", "codex", "secret stripe token rotation", env=A)
    hits = call(home, "find", {"query": "stripe"}, A)
    assert {h["kind"] for h in hits["hits"]} == {"project", "doc", "strategy", "chat", "message"}
    assert hits["total"] == 5 and all("[stripe]" in h["snippet"] for h in hits["hits"])
    assert [h["score"] for h in hits["hits"]] == sorted(h["score"] for h in hits["hits"])
    # the direct message is A's and B's, not C's
    assert "message" not in {h["kind"] for h in call(home, "find", {"query": "stripe"}, C)["hits"]}
    assert call(home, "find", {"query": "stripe", "kind": "doc"}, C)["hits"][0]["ref"] == "pay"
    only = call(home, "find", {"query": "stripe", "projectId": "web_shop"}, A)["hits"]
    assert [h["kind"] for h in only] == ["project"]
    # the index follows changes
    call(home, "update_project", {"projectId": "web_shop", "patch": {"description": "paddle"}}, A)
    assert call(home, "find", {"query": "paddle"}, A)["hits"][0]["ref"] == "web_shop"
    call(home, "rename_project", {"oldId": "web_shop", "newId": "web_store"}, A)
    assert call(home, "find", {"query": "paddle"}, A)["hits"][0]["ref"] == "web_store"
    call(home, "host_delete_project", {"projectId": "web_store", "confirm": True}, A)
    assert call(home, "find", {"query": "paddle"}, A)["hits"] == []
    # not FTS syntax: taken as words; pages
    assert call(home, "find", {"query": '"stripe webhook'}, A)["hits"][0]["kind"] == "chat"
    page = call(home, "find", {"query": "stripe", "limit": 1, "offset": 1}, A)
    assert page["count"] == 1 and page["truncated"] is True and page["next"] == "--offset 2"
    assert fails(home, "find", {"query": "***"}).code == "invalid_argument"


@pytest.mark.sqlite_only  # team mode searches the messages table itself: nothing to catch up
def test_direct_messages_are_indexed_by_find_not_by_send(home, trio, nx):
    """Indexing a message as it is sent cost the send path a third of its time: `send` leaves
    the index alone, and the next `find` indexes everything sent since, once."""
    def indexed() -> int:
        with contextlib.closing(raw_db(home)) as db:
            return db.execute("SELECT count(*) FROM ws_fts WHERE kind = 'message'").fetchone()[0]

    before = indexed()
    for n in range(3):
        nx("send", "codex", f"invoice {n} is late", env=A)
    assert indexed() == before  # the send path never touched the index
    assert call(home, "find", {"query": "invoice"}, A)["total"] == 3
    assert indexed() == before + 3
    nx("send", "codex", "another invoice", env=A)
    assert call(home, "find", {"query": "invoice"}, B)["total"] == 4  # the recipient finds it too
    assert indexed() == before + 4  # each message indexed once


def _docs(rows: list[tuple[str, str, str]]) -> None:
    """Docs written straight into the store (either backend), past the tools' rate limit."""
    from nexus_cli.core.store.db import Store

    with Store().write() as conn:
        conn.executemany("INSERT INTO ws_docs (id, title, content, updated_by, updated_at)"
                         " VALUES (?, ?, ?, 'test', 0)", rows)


def test_find_takes_sql_and_like_metacharacters_as_text(home, trio):
    _docs([("pct", "Coverage", "coverage is 100% now"),
           ("snake", "Names", "call snake_case_name here"),
           ("slash", "Paths", "the path a\\b\\c"),
           ("quote", "Quotes", "it's \"quoted\" text")])

    def refs(query: str) -> list[str]:
        return sorted(h["ref"] for h in call(home, "find", {"query": query}, A)["hits"])

    assert refs("100%") == ["pct"]  # not FTS5 syntax: its words
    assert refs("snake_case") == ["snake"]  # a phrase of two words
    assert refs("it's") == refs('"quoted"') == ["quote"]
    assert refs("a\\b") == ["slash"]
    assert refs("'; DROP TABLE ws_docs; --") == []
    assert refs("_") == refs("%_%") == []  # no word: nothing, and never everything
    assert refs("coverage") == ["pct"]  # all still there
    for query in ("%", "\\", '"', "'"):
        assert fails(home, "find", {"query": query}).code == "invalid_argument", query


def test_a_document_of_a_million_characters_is_written_and_found(home, trio):
    """PostgreSQL keeps at most 1 MB of words per row (an error past it): the write must not
    fail, and the document's words are found."""
    content = "zebra " + " ".join(f"{n:x}" for n in range(1, 160_000))
    assert 850_000 < len(content) <= 1_000_000
    _docs([("huge", "Huge", content)])
    assert [h["ref"] for h in call(home, "find", {"query": "zebra"}, A)["hits"]] == ["huge"]
    assert [h["ref"] for h in call(home, "find", {"query": "1f4a"}, A)["hits"]] == ["huge"]


def test_find_pages_a_large_corpus_in_a_stable_order(home, trio):
    _docs([(f"d{n:04}", f"Doc {n}", f"needle number {n} " + "hay " * (n % 7)) for n in range(1200)]
          + [("top", "Needle", "needle " * 5)])
    first = call(home, "find", {"query": "needle", "limit": 100}, A)
    assert first["total"] == 1000 and first["hits"][0]["ref"] == "top"  # counted up to 1,000
    seen, scores, page = [], [], first
    while True:
        seen += [h["ref"] for h in page["hits"]]
        scores += [h["score"] for h in page["hits"]]
        if not page["truncated"]:
            break
        page = call(home, "find", {"query": "needle", "limit": 100,
                                   "offset": int(page["next"].split()[-1])}, A)
    assert len(seen) == len(set(seen)) == 1000 and scores == sorted(scores)
    rest = call(home, "find", {"query": "needle", "limit": 100, "offset": 1100}, A)
    assert rest["count"] == 100 and not set(h["ref"] for h in rest["hits"]) & set(seen)
    assert call(home, "find", {"query": "needle number 7*", "limit": 100}, A)["count"] == 100


# -- tasks, seed 004 shapes -----------------------------------------------------------------------


def test_task_tools_take_seed_names_and_link_meetings(home, trio):
    mid = call(home, "start_meeting", {"topic": "t"}, A)["meetingId"]
    made = call(home, "create_task", {"source_meeting_id": mid, "metadata": {"k": 1},
                                      "ttl": 60_000}, A)
    assert set(made) == {"task_id", "status", "message", "task"} and made["status"] == "pending"
    task = made["task"]
    assert (task["source_meeting_id"], task["ttl"], task["metadata"]) == (mid, 60_000, {"k": 1})
    assert fails(home, "create_task", {"source_meeting_id": "mtg-none"}).code == "meeting_not_found"
    tid = made["task_id"]
    assert call(home, "get_task", {"taskId": tid}, A)["id"] == tid
    assert call(home, "get_task", {"task_id": tid}, A)["id"] == tid  # the old name works too
    up = call(home, "update_task", {"taskId": tid, "status": "failed", "error_message": "boom"}, A)
    assert {"id", "status", "progress", "source_meeting_id", "metadata", "result_uri",
            "error_message", "created_at", "updated_at", "ttl"} <= set(up)
    assert (up["status"], up["error_message"]) == ("failed", "boom")
    listed = call(home, "list_tasks", {}, A)
    assert listed["count"] == 1 and listed["tasks"][0]["id"] == tid and listed["limit"] == 50
    assert "limit" in fails(home, "list_tasks", {"limit": 501}).key
    assert call(home, "list_tasks", {"limit": 500, "status": "completed"}, A)["tasks"] == []
    assert "taskId" in fails(home, "get_task", {}).key


# -- hooks ----------------------------------------------------------------------------------------


def context_of(run) -> str:
    return json.loads(run.out)["hookSpecificOutput"]["additionalContext"] if run.out else ""


def test_chat_is_announced_briefly_and_wakes_only_for_name_or_decision(home, hook, trio, fake):
    mid = call(home, "start_meeting", {"topic": "release plan"}, A)["meetingId"]
    # C hears of the meeting's start at its next prompt, in one line, and is not woken
    text = context_of(hook("claude", "UserPromptSubmit", sid(3), prompt="go"))
    assert f'meeting {mid} "release plan" started' in text and "read_messages" in text
    call(home, "read_messages", {"meetingId": mid}, B)  # B joins by reading
    news_dir = home / "news"
    b_marker = news_dir / str(fake.client_of(B_ID))
    call(home, "send_message", {"message": "plain chat line"}, A)
    assert b_marker.exists()  # B's next tool call runs the hook...
    assert mailbox.unread_count(db_row(home), B_ID) == 0  # ...but nothing wakes it
    text = context_of(hook("codex", "PostToolUse", sid(2), tool_name="Bash"))
    assert f'1 new message in meeting {mid} "release plan"' in text
    assert "plain chat line" not in text  # the text comes through read_messages
    assert context_of(hook("codex", "PostToolUse", sid(2), tool_name="Bash")) == ""  # told once
    assert "plain chat line" not in context_of(hook("claude", "UserPromptSubmit", sid(3),
                                                    prompt="x"))  # C did not join it
    # addressed by name: a notice that wakes (and holds a Stop once); a DECISION: its participants
    call(home, "send_message", {"message": "@claude@work#2 can you check?"}, A)
    assert mailbox.unread_count(db_row(home), C_ID) == 1 and mailbox.has_news(db_row(home), C_ID)
    assert mailbox.unread_count(db_row(home), B_ID) == 0
    stop = json.loads(hook("claude", "Stop", sid(3)).out)["hookSpecificOutput"]
    assert stop["hookEventName"] == "Stop" and "@you in meeting" in stop["additionalContext"]
    call(home, "send_message", {"message": "we ship friday", "category": "DECISION"}, A)
    assert mailbox.unread_count(db_row(home), B_ID) == 1
    note = call(home, "read", {}, B)["messages"][0]
    assert "DECISION in meeting" in note["text"] and "we ship friday" in note["text"]
    assert mailbox.unread_count(db_row(home), A_ID) == 0  # never told of its own messages


def db_row(home) -> sqlite3.Connection:
    conn = db(home)
    conn.row_factory = sqlite3.Row
    return conn


def test_global_chat_reaches_the_sender_s_project_after_a_tool_call(home, hook, trio, fake):
    call(home, "send_message", {"message": "deploy at noon"}, A)
    assert (home / "news" / str(fake.client_of(B_ID))).exists()
    text = context_of(hook("codex", "PostToolUse", sid(2), tool_name="Bash"))
    assert "1 new message in global chat" in text
    call(home, "read_messages", {}, C)  # read already: nothing to announce
    assert "global chat" not in context_of(hook("claude", "UserPromptSubmit", sid(3), prompt="x"))


# -- over MCP, with the official SDK client -------------------------------------------------------

SEED_004 = {  # tool: (required arguments, optional arguments, readOnly, destructive)
    "sync_project_assets": ({"manifest", "internalDocs"}, set(), False, True),
    "upload_project_asset": ({"projectId", "fileName", "base64Content"}, set(), False, True),
    "update_project": ({"projectId", "patch"}, set(), False, True),
    "rename_project": ({"oldId", "newId"}, set(), False, True),
    "search_projects": ({"query"}, {"limit"}, True, False),
    "get_global_topology": (set(), {"projectId"}, True, False),
    "get_project": ({"projectId"}, {"includeDocs"}, True, False),
    "host_delete_project": ({"projectId"}, set(), False, True),
    "update_global_strategy": ({"content"}, set(), False, True),
    "get_global_strategy": (set(), set(), True, False),
    "list_global_docs": (set(), set(), True, False),
    "get_global_doc": ({"docId"}, set(), True, False),
    "sync_global_doc": ({"docId", "title", "content"}, set(), False, True),
    "list_meetings": (set(), {"status", "limit"}, True, False),
    "start_meeting": ({"topic"}, set(), False, False),
    "end_meeting": (set(), {"meetingId", "summary"}, False, True),
    "archive_meeting": ({"meetingId"}, set(), False, True),
    "reopen_meeting": ({"meetingId"}, set(), False, True),
    "send_message": ({"message"}, {"category", "meetingId"}, False, False),
    "read_messages": (set(), {"count", "meetingId"}, False, False),
    "list_events": (set(), {"limit", "action"}, True, False),
    "create_task": (set(), {"source_meeting_id", "metadata", "ttl"}, False, False),
    "get_task": ({"taskId"}, set(), True, False),
    "list_tasks": (set(), {"status", "limit"}, True, False),
    "update_task": ({"taskId"}, {"status", "progress", "result_uri", "error_message",
                                 "metadata"}, False, False),
    "cancel_task": ({"taskId"}, set(), False, True),
    "host_maintenance": ({"action"}, {"count"}, False, True),
}


def test_the_sdk_client_lists_seed_004_s_tools_with_their_schemas(home):
    async def go():
        async with session(home, args=("--tools", "default,workspace")) as s:
            return {t.name: t for t in (await s.list_tools()).tools}

    tools = run(go)
    assert set(SEED_004) <= set(tools)
    for name, (required, optional, read_only, destructive) in SEED_004.items():
        t = tools[name]
        props = set(t.input_schema["properties"])
        assert required <= props and optional <= props, (name, props)
        assert set(t.input_schema.get("required", [])) == required, name
        assert t.output_schema and t.output_schema["type"] == "object", name
        a = t.annotations
        assert (a.read_only_hint, a.destructive_hint, a.open_world_hint) == (
            read_only, destructive, False), name
        assert t.title and len(t.description) <= 160
    assert tools["update_task"].annotations.idempotent_hint is True
    send = tools["send_message"].input_schema["properties"]["category"]
    assert send["enum"] == ["MEETING_START", "PROPOSAL", "DECISION", "UPDATE", "CHAT"]


def test_an_agent_holds_a_meeting_over_mcp(home, hook):
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    hook("claude", "PreToolUse", sid(1), tool_name="mcp__nexus__start_meeting",
         tool_use_id="toolu_M1")
    args = ("--tools", "default,workspace")

    async def claude_side():
        async with session(home, A_ID, args=args, bind=("toolu_M1",)) as s:
            meta = {"claudecode/toolUseId": "toolu_M1"}
            started = await s.call_tool("start_meeting", {"topic": "api"}, meta=meta)
            said = await s.call_tool("send_message",
                                     {"message": "use REST", "category": "PROPOSAL"}, meta=meta)
            task = await s.call_tool("create_task",
                                     {"source_meeting_id": started.structured_content["meetingId"],
                                      "ttl": 3_600_000}, meta=meta)
            got = await s.call_tool("get_task", {"taskId": task.structured_content["task_id"]},
                                    meta=meta)
            return started, said, task, got

    started, said, task, got = run(claude_side)
    assert not started.is_error and not said.is_error and not task.is_error, started.content
    mid = started.structured_content["meetingId"]
    assert said.structured_content["sentTo"] == "meeting"
    assert got.structured_content["source_meeting_id"] == mid

    async def codex_side():
        async with session(home, B_ID, args=args) as s:
            meta = {"sessionId": sid(2), "threadId": sid(2)}
            read = await s.call_tool("read_messages", {"meetingId": mid}, meta=meta)
            decided = await s.call_tool("send_message", {"message": "agreed: REST",
                                                         "category": "DECISION"}, meta=meta)
            refused = await s.call_tool("end_meeting", {}, meta=meta)
            return read, decided, refused

    read, decided, refused = run(codex_side)
    assert [m["text"] for m in read.structured_content["messages"]] == [
        "Meeting started: api", "use REST"]
    assert not decided.is_error and refused.is_error and "not_initiator" in refused.content[0].text

    async def no_caller():
        async with session(home, args=args) as s:
            return await s.call_tool("read_messages", {})

    r = run(no_caller)
    assert r.is_error and "read_messages needs an instanceId: unread cursors are kept per " \
        "instance" in r.content[0].text


# -- one try to fix a manifest; a next action that exists --------------------------------------


def test_project_sync_names_every_manifest_field_at_fault_in_one_error(home, trio, nx):
    """Review finding: sync reported one missing field per try (repositoryUrl, then localPath,
    then endpoints)."""
    bare = {"id": "web_new", "name": "New", "description": "d", "techStack": [],
            "relations": [{"type": "bogus"}], "lastUpdated": "2026-01-01"}
    err = fails(home, "sync_project_assets", {"manifest": bare, "internalDocs": ""})
    assert err.code == "invalid_argument" and err.key == "sync_project_assets.manifest"
    for field in ("repositoryUrl is required", "localPath is required", "endpoints is required",
                  "apiSpec is required", "relations.0.targetId is required",
                  "relations.0.type must be one of"):
        assert field in err.reason, (field, err.reason)
    r = nx("project", "sync", "--manifest", json.dumps(bare), "--internal-docs", "d", "--json")
    assert r.code == 2 and r.json["error"]["key"] == "--manifest"
    assert "6 fields to fix" in r.json["error"]["reason"]
    # one field at fault is still named on its own, as before
    one = dict(manifest("web_one"))
    del one["apiSpec"]
    err = fails(home, "sync_project_assets", {"manifest": one, "internalDocs": ""})
    assert err.key == "sync_project_assets.manifest.apiSpec" and err.reason == "is required"


def test_the_asset_cap_error_names_commands_that_exist(home, trio, nx, monkeypatch):
    """Review finding: "remove assets first" named no command (none removes one asset)."""
    from nexus_cli.workspace import projects

    monkeypatch.setattr(projects, "PROJECT_ASSETS_MAX", 10)
    call(home, "sync_project_assets", {"manifest": manifest("web_a"), "internalDocs": ""}, A)
    call(home, "upload_project_asset", {"projectId": "web_a", "fileName": "a.bin",
                                        "base64Content": base64.b64encode(b"12345678").decode()},
         A)
    err = fails(home, "upload_project_asset", {"projectId": "web_a", "fileName": "b.bin",
                                               "base64Content": base64.b64encode(b"123").decode()})
    assert "remove assets first" not in err.action
    commands = {" ".join(c.split()[1:4]) for c in err.action.split("`")[1::2]}
    assert commands == {"project get web_a", "project delete web_a"}, err.action
    paths_ = {t.command for t in load().values()}
    assert {("project", "get"), ("project", "delete")} <= paths_
    # what it says works: a smaller file under the large one's name fits
    call(home, "upload_project_asset", {"projectId": "web_a", "fileName": "a.bin",
                                        "base64Content": base64.b64encode(b"1").decode()}, A)
    call(home, "upload_project_asset", {"projectId": "web_a", "fileName": "b.bin",
                                        "base64Content": base64.b64encode(b"123").decode()}, A)
