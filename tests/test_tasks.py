"""The task ledger: delegate, report, tasks --open; idempotency, who may report, the first final
report winning under concurrency, the history cap, and hooks announcing open work."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from helpers import (
    A_ID,
    B_ID,
    A,
    B,
    C,
    claude_env,
    ctx_for,
    raw_db,
    run_hook_in_thread,
    sid,
    wait_listening,
)
from nexus_cli.catalog import load
from nexus_cli.core.registry import TOOLS, invoke
from nexus_cli.core.store.db import Store
from nexus_cli.tasks import ledger


@pytest.fixture
def trio(hook, chdir_work):
    for n, client in ((1, "claude"), (2, "codex"), (3, "claude")):
        hook(client, "SessionStart", sid(n), source="startup")


def context_of(run) -> str:
    return json.loads(run.out)["hookSpecificOutput"]["additionalContext"]


def test_delegate_report_round_trip(nx, hook, trio):
    t = nx("delegate", "codex", "Split pay() in checkout.py; tests must pass.", "--json",
           env=A).json
    assert t["status"] == "dispatched" and t["target"]["id"] == B_ID and t["sender"]["id"] == A_ID
    assert t["mode"] == "queue" and t["notification"] == "none" and t["id"].startswith("t-")
    # the target sees it as an obligation at its next prompt, and in --open until it reports
    text = context_of(hook("codex", "UserPromptSubmit", sid(2), prompt="go"))
    assert f"TASK {t['id']}" in text and "You have 1 open task" in text
    got = nx("read", "--json", env=B).json["messages"][0]
    assert got["kind"] == "task" and "Split pay()" in got["text"]
    assert f"nexus report {t['id']}" in got["text"]
    assert [x["id"] for x in nx("tasks", "--open", "--json", env=B).json["items"]] == [t["id"]]
    r = nx("report", t["id"], "--status", "completed",
           "--result", "Done: /w/checkout.py, 12 tests pass", "--json", env=B).json
    assert r["status"] == "completed" and r["notification"] == "pending" and r["closed_at"]
    assert nx("tasks", "--open", "--json", env=B).json["total"] == 0
    assert "open task" not in hook("codex", "UserPromptSubmit", sid(2), prompt="next").out
    # the report comes back to the dispatcher as a message
    text = context_of(hook("claude", "UserPromptSubmit", sid(1), prompt="any news?"))
    assert f"Report on task {t['id']}" in text
    assert (nx("tasks", "--id", t["id"], "--json", env=A).json["items"][0]["notification"]
            == "delivered")


def test_request_id_replays_and_conflicts(nx, trio):
    first = nx("delegate", "codex", "job", "--request-id", "r1", "--json", env=A).json
    again = nx("delegate", "codex", "job", "--request-id", "r1", "--json", env=A).json
    assert again["id"] == first["id"] and again["duplicate"] is True
    assert nx("tasks", "--sent", "--json", env=A).json["total"] == 1
    r = nx("delegate", "codex", "another job", "--request-id", "r1", env=A)
    assert r.code == 4 and "request_id_conflict" in r.err


def test_only_the_assignee_reports_and_the_first_final_report_wins(nx, trio):
    t = nx("delegate", "codex", "job", "--json", env=A).json["id"]
    r = nx("report", t, "--status", "completed", "--result", "mine", env=A)
    assert r.code == 5 and "not_assignee" in r.err
    r = nx("report", t, "--status", "completed", "--result", "x", env=C)
    assert r.code == 3 and "task_not_found" in r.err
    assert nx("report", t, "--status", "blocked", "--result", "no access", env=B).code == 0
    replay = nx("report", t, "--status", "blocked", "--result", "no access", "--json", env=B)
    assert replay.code == 0 and replay.json["duplicate"] is True
    r = nx("report", t, "--status", "completed", "--result", "after all", env=B)
    assert r.code == 4 and "task_already_reported" in r.err and "follow-up" in r.err


def test_steer_mode_reaches_a_working_session_at_its_next_tool_call(nx, hook, trio):
    hook("codex", "UserPromptSubmit", sid(2), prompt="busy")
    t = nx("delegate", "codex", "urgent", "--json", env=A).json
    assert t["mode"] == "steer"
    assert f"TASK {t['id']}" in context_of(hook("codex", "PostToolUse", sid(2), tool_name="x"))
    queued = nx("delegate", "codex", "later", "--mode", "queue", "--json", env=A).json
    assert queued["mode"] == "queue"
    assert hook("codex", "PostToolUse", sid(2), tool_name="x").out == ""  # waits for the turn
    text = context_of(hook("codex", "UserPromptSubmit", sid(2), prompt="next turn"))
    assert f"TASK {queued['id']}" in text and "You have 2 open tasks" in text


def test_history_cap_evicts_finished_records_and_refuses_when_all_are_open(nx, trio, monkeypatch):
    monkeypatch.setattr(ledger, "TASK_HISTORY", 3)
    ids = [nx("delegate", "codex", f"job {i}", "--json", env=A).json["id"] for i in range(3)]
    r = nx("delegate", "codex", "one too many", env=A)
    assert r.code == 4 and "task_history_full" in r.err
    nx("report", ids[0], "--status", "completed", "--result", "ok", env=B)
    r = nx("delegate", "codex", "one too many", env=A)
    assert r.code == 4  # finished but the report is not yet in the dispatcher's context
    nx("read", env=A)  # now it is
    assert nx("delegate", "codex", "one too many", env=A).code == 0
    left = {x["id"] for x in nx("tasks", "--sent", "--json", env=A).json["items"]}
    assert ids[0] not in left and set(ids[1:]) <= left


def _report(home: str, task_id: str, n: int, start, out) -> None:
    load()
    env = {"CODEX_SESSION_ID": sid(2)}
    start.wait()
    ctx = ctx_for(home, env, cwd="/")
    try:
        r = invoke(TOOLS["report"], ctx, {"task_id": task_id, "status": "completed",
                                          "result": f"result {n}"})
        out.put(("ok", r["duplicate"]))
    except Exception as exc:  # the losers
        out.put(("err", getattr(exc, "code", repr(exc))))


def _delegate(home: str, n: int, start, out) -> None:
    load()
    env = {"CLAUDE_CODE_SESSION_ID": sid(1)}
    start.wait()
    ctx = ctx_for(home, env, cwd="/")
    r = invoke(TOOLS["delegate"], ctx, {"target": B_ID, "task": "same job", "request_id": "once",
                                        "all_workspaces": True})
    out.put((r["id"], r["duplicate"]))


@pytest.mark.slow
def test_concurrent_reports_exactly_one_wins(nx, trio, home):
    t = nx("delegate", "codex", "race", "--json", env=A).json["id"]
    fork = mp.get_context("fork")
    start, out = fork.Event(), fork.Queue()
    procs = [fork.Process(target=_report, args=(str(home), t, n, start, out)) for n in range(8)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    results = [out.get(timeout=5) for _ in procs]
    assert results.count(("ok", False)) == 1
    assert all(r == ("err", "task_already_reported") for r in results if r != ("ok", False))
    reports = raw_db(home).execute(
        "SELECT count(*) FROM messages WHERE kind = 'report'").fetchone()[0]
    assert reports == 1


@pytest.mark.slow
def test_concurrent_delegates_with_one_request_id_make_one_task(nx, trio, home):
    fork = mp.get_context("fork")
    start, out = fork.Event(), fork.Queue()
    procs = [fork.Process(target=_delegate, args=(str(home), n, start, out)) for n in range(8)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    results = [out.get(timeout=5) for _ in procs]
    assert len({r[0] for r in results}) == 1 and sum(not r[1] for r in results) == 1
    conn = raw_db(home)
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM messages WHERE kind = 'task'").fetchone()[0] == 1


KILLER = textwrap.dedent("""
    import sys
    from helpers import FakeTable, ctx_for
    from nexus_cli.catalog import load
    from nexus_cli.core.registry import TOOLS, invoke
    from nexus_cli.core.store.db import Store
    FakeTable.adopt(sys.argv[3])
    load()
    a = {"CLAUDE_CODE_SESSION_ID": sys.argv[1]}
    b = {"CODEX_SESSION_ID": sys.argv[2]}
    store = Store(reuse=True)  # one connection, as the MCP server keeps: killed in a write, mostly
    def ctx(env):
        return ctx_for(None, env, cwd="/", store=store)
    i = 0
    while True:
        t = invoke(TOOLS["delegate"], ctx(a), {"target": "codex:" + sys.argv[2], "task": "t%d" % i,
                                               "all_workspaces": True})
        invoke(TOOLS["report"], ctx(b), {"task_id": t["id"], "status": "completed", "result": "r"})
        print(t["id"], flush=True)
        i += 1
""")


@pytest.mark.slow
def test_kill_9_mid_delegate_or_report_leaves_nothing_half_written(trio, home, fake):
    committed = []
    for _round in range(3):
        proc = subprocess.Popen([sys.executable, "-c", KILLER, sid(1), sid(2), fake.export()],
                                stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        while len(committed) < (_round + 1) * 40:
            line = proc.stdout.readline()
            assert line, "writer died"
            committed.append(line.strip())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        committed += proc.stdout.read().split()
    conn = raw_db(home)
    if not os.environ.get("NEXUS_DATABASE_URL"):
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = {r["id"]: r for r in conn.execute("SELECT * FROM tasks")}
    assert set(committed) <= set(rows)
    # every task is whole: dispatched with its message, or reported with its report
    for r in rows.values():
        assert r["status"] in ("dispatched", "completed") and r["message_id"]
        assert conn.execute("SELECT 1 FROM messages WHERE id = ?", (r["message_id"],)).fetchone()
        if r["status"] == "completed":
            assert conn.execute("SELECT 1 FROM messages WHERE id = ? AND kind = 'report'",
                                (r["report_message_id"],)).fetchone()
    orphans = conn.execute("SELECT count(*) FROM messages WHERE kind IN ('task', 'report') AND"
                           " task_id NOT IN (SELECT id FROM tasks)").fetchone()[0]
    assert orphans == 0


def test_a_report_continues_a_listening_dispatcher(nx, hook, trio):
    t = nx("delegate", "codex", "job", "--json", env=A).json["id"]
    nx("listen", "on", env=A)
    th, box = run_hook_in_thread("claude", "Stop", sid(1), stop_hook_active=False,
                                 env={"CLAUDE_CODE_SESSION_ATTENDED": "0"})  # `claude -p`
    wait_listening(nx, B, A_ID)
    nx("report", t, "--status", "completed", "--result", "all done", env=B)
    th.join(30)
    out, _code, _ = box["reply"]
    assert f"Report on task {t}" in out["hookSpecificOutput"]["additionalContext"]


def test_clear_hands_the_conversation_over_to_its_successor(nx, hook, trio, fake):
    claude = fake.spawn("claude")
    hook("claude", "SessionStart", sid(5), source="startup", client_pid=claude)
    old_env, new_env = claude_env(sid(5)), claude_env(sid(6))
    nx("profile", "--name", "reviewer", "--note", "reviewing auth", env=old_env)
    nx("listen", "on", env=old_env)
    nx("send", "reviewer", "before the clear", env=B)
    owed = nx("delegate", "reviewer", "review auth.py", "--json", env=B).json["id"]
    mine = nx("delegate", "codex", "fix the test", "--json", env=old_env).json["id"]
    hook("claude", "SessionStart", sid(6), source="clear", client_pid=claude)
    st = nx("handoff", "status", "--json", env=new_env).json
    assert st["predecessor"]["id"] == f"claude:{sid(5)}" and st["last_handoff_at"]
    peers = {p["id"]: p for p in nx("peers", "--json", env=B).json["items"]}
    assert peers[f"claude:{sid(6)}"]["name"] == "reviewer" and f"claude:{sid(5)}" not in peers
    got = nx("read", "--json", env=new_env).json["messages"]
    assert {m["text"] for m in got} >= {"before the clear"}
    assert any(m["kind"] == "task" for m in got)
    assert [t["id"] for t in nx("tasks", "--open", "--json", env=new_env).json["items"]] == [owed]
    # addressed to the old id afterwards: still arrives, at the successor
    nx("send", f"claude:{sid(5)}", "after the clear", env=B)
    nx("report", mine, "--status", "completed", "--result", "fixed", env=B)
    texts = [m["text"] for m in nx("read", "--json", env=new_env).json["messages"]]
    assert "after the clear" in texts and any(f"Report on task {mine}" in t for t in texts)
    assert nx("status", "reviewer", "--json", env=B).json["listen_mode"] is True


def test_handoff_can_be_disabled_and_done_explicitly(nx, hook, trio, fake):
    claude = fake.spawn("claude")
    hook("claude", "SessionStart", sid(7), source="startup", client_pid=claude)
    nx("handoff", "disable", env=claude_env(sid(7)))
    nx("send", f"claude:{sid(7)}", "stays with the old one", env=B)
    hook("claude", "SessionStart", sid(8), source="clear", client_pid=claude)
    assert nx("read", "--json", env=claude_env(sid(8))).json["count"] == 0
    # explicit: B offers its work to C, which takes it
    nx("send", "codex", "for codex", env=A)
    r = nx("handoff", "now", "--to", f"claude:{sid(3)}", "--json", env=B)
    assert r.code == 0 and r.json["moved"] is None
    assert r.json["offered"]["to"]["id"] == f"claude:{sid(3)}"
    r = nx("handoff", "accept", "--from-session", f"codex:{sid(2)}", "--json", env=C)
    assert r.code == 0 and r.json["moved"]["messages"] == 1, r.err
    assert r.json["moved"]["name"] == "codex@work"
    assert "for codex" in [m["text"] for m in nx("read", "--json", env=C).json["messages"]]
    assert nx("handoff", "now", env=B).code == 2


def test_self_managed_tasks_share_the_ledger(nx, trio, home):
    import time

    made = nx("task", "create", "write the docs", "--metadata", '{"area": "docs"}', "--ttl",
              "3600000", "--json", env=A).json
    t = made["task"]  # seed 004's create_task shape: {task_id, status, message, task}
    assert (made["task_id"], made["status"], made["message"]) == (
        t["id"], "pending", "Task created successfully.")
    assert (t["status"], t["mode"], t["metadata"], t["ttl"]) == ("pending", "self",
                                                                {"area": "docs"}, 3_600_000)
    u = nx("task", "update", t["id"], "--status", "running", "--progress", "0.5", "--json",
           env=A).json
    assert (u["status"], u["progress"], u["metadata"]) == ("running", 0.5, {"area": "docs"})
    assert nx("task", "update", t["id"], "--progress", "2", env=A).code == 2
    assert nx("task", "update", t["id"], "--metadata", "{nope", env=A).code == 2
    assert nx("task", "get", t["id"], env=B).code == 3  # not B's
    assert [x["id"] for x in nx("tasks", "--self", "--json", env=A).json["items"]] == [t["id"]]
    done = nx("task", "update", t["id"], "--status", "completed", "--result-uri", "file:///d.md",
              "--json", env=A).json
    assert done["closed_at"] and done["result_uri"] == "file:///d.md"
    assert nx("task", "cancel", t["id"], env=A).code == 4
    # a TTL makes an unfinished task fail at the next maintenance
    short = nx("task", "create", "quick", "--ttl", "1000", "--json", env=A).json["task_id"]
    from nexus_cli.maintenance import expiry

    with Store(str(home)).write() as conn:
        expiry.expire_tasks(conn, time.time() + 5)
    gone = nx("task", "get", short, "--json", env=A).json
    assert (gone["status"], gone["error"]) == ("failed", "TTL expired")


def test_delegated_task_progress_and_cancellation(nx, trio):
    t = nx("delegate", "codex", "long job", "--json", env=A).json["id"]
    r = nx("task", "update", t, "--status", "running", "--progress", "0.3", "--json", env=B)
    assert r.code == 0 and r.json["status"] == "running"
    assert nx("task", "update", t, "--status", "completed", env=B).code == 5  # use report
    assert nx("task", "cancel", t, env=B).code == 5  # only the dispatcher cancels
    c = nx("task", "cancel", t, "--json", env=A).json
    assert c["status"] == "cancelled"
    notices = [m for m in nx("read", "--json", env=B).json["messages"] if m["kind"] == "notice"]
    assert notices and t in notices[0]["text"] and "cancelled" in notices[0]["text"]
    assert nx("report", t, "--status", "completed", "--result", "late", env=B).code == 4


@pytest.mark.parametrize("metadata", [
    "[" * 300 + "]" * 300, '{"a": ' * 300 + "1" + "}" * 300,
    json.dumps({"blob": "x" * 20_000}), json.dumps({f"k{i}": i for i in range(5000)}),
])
def test_metadata_is_bounded_at_validation_and_nothing_is_written(nx, trio, home, metadata):
    before = raw_db(home).execute(
        "SELECT count(*) FROM tasks").fetchone()[0]
    r = nx("task", "create", "bounded", "--metadata", metadata, "--json", env=A)
    assert r.code == 2 and r.json["error"]["key"] == "--metadata", r.out
    assert raw_db(home).execute(
        "SELECT count(*) FROM tasks").fetchone()[0] == before


def test_listings_survive_any_stored_metadata(nx, trio, home):
    t = nx("task", "create", "odd", "--json", env=A).json["task_id"]
    conn = raw_db(home)
    conn.execute("UPDATE tasks SET metadata = ? WHERE id = ?", ("[" * 5000 + "]" * 5000, t))
    conn.commit()
    r = nx("tasks", "--json", env=A)
    assert r.code == 0 and r.json["items"][0]["metadata"] == {
        "unreadable": "the stored metadata is not valid JSON"}
    conn.execute("UPDATE tasks SET metadata = '[1, 2]' WHERE id = ?", (t,))
    conn.commit()
    assert nx("task", "get", t, "--json", env=A).json["metadata"] == {"value": [1, 2]}
