"""Property tests: target resolution, idempotency keys and the report rules against simple
models of what they must do."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import A_ID, B_ID, claude_env, codex_env, ctx_for, fake_table, sid
from nexus_cli.catalog import load
from nexus_cli.core import discovery, sessions
from nexus_cli.core.context import Ctx
from nexus_cli.core.errors import NexusError
from nexus_cli.core.registry import TOOLS, invoke
from nexus_cli.core.store.db import Store

load()
PROJECT = "/p"
NAMES = st.text(alphabet="abcxyz@#-", min_size=1, max_size=6)
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@contextmanager
def fresh_store():
    root = tempfile.mkdtemp(prefix="nexus-prop-")
    try:
        yield Store(root + "/home")
    finally:
        shutil.rmtree(root)


def handle(session: str) -> str:
    return "s-" + session.split(":")[1].replace("-", "")[:12]


def add_session(conn, sid: str, name: str, now: float) -> None:
    """A session as its hooks would register it, run by its own (fake) client process."""
    table = fake_table()
    pid = table.client_of(sid) if sid.split(":")[0] in ("claude", "codex") else None
    conn.execute("INSERT INTO sessions (id, client, handle, name, cwd, project, status, client_pid,"
                 " client_start, created_at, last_active) VALUES (?, ?, ?, ?, ?, ?, 'idle', ?, ?,"
                 " ?, ?)",
                 (sid, sid.split(":")[0], handle(sid), name, PROJECT,
                  PROJECT, pid, table.procs[pid].start if pid else None, now, now))


def model_resolve(names: dict[str, str], me: str, target: str) -> str:
    """What resolution must return: an id, or the error code."""
    if target in names:
        pick = target
    elif any(handle(sid) == target for sid in names):
        pick = next(sid for sid in names if handle(sid) == target)
    else:
        exact = [sid for sid, n in names.items() if n == target]
        found = exact or [sid for sid, n in names.items() if target.lower() in n.lower()]
        if len(found) > 1:
            return "target_ambiguous"
        if not found:
            return "target_not_found"
        pick = found[0]
    return "target_is_self" if pick == me else pick


@SETTINGS
@given(st.lists(NAMES, min_size=1, max_size=8), st.data())
def test_target_resolution_matches_the_model(names, data):
    ids = {f"codex:{sid(i)}": n for i, n in enumerate(names)}
    me = data.draw(st.sampled_from(sorted(ids)))
    target = data.draw(st.one_of(st.sampled_from(sorted(ids)), st.sampled_from(names), NAMES,
                                 st.sampled_from([handle(i) for i in ids])))
    now = time.time()
    with fresh_store() as store:
        with store.write() as conn:
            for session, n in ids.items():
                add_session(conn, session, n, now)
        with store.read() as conn:
            who = sessions.Caller(me, PROJECT, PROJECT, "test")
            try:
                got = discovery.resolve_target(conn, who, target, now)["id"]
            except NexusError as exc:
                got = exc.code
    assert got == model_resolve(ids, me, target)


def ctx(store: Store, sid: str) -> Ctx:
    env = claude_env(sid.split(":", 1)[1]) if sid.startswith("claude") else \
        codex_env(sid.split(":", 1)[1])
    return ctx_for(store.root, env, cwd=PROJECT)


A, B, C = A_ID, B_ID, f"codex:{sid(3)}"  # the third a second Codex session


def three_sessions(store: Store) -> None:
    now = time.time()
    with store.write() as conn:
        for sid, name in ((A, "alpha"), (B, "beta"), (C, "gamma")):
            add_session(conn, sid, name, now)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["r1", "r2", "r3"]), st.sampled_from(["x", "y"])),
                min_size=1, max_size=10))
def test_request_ids_make_retries_idempotent(sends):
    with fresh_store() as store:
        three_sessions(store)
        first: dict[str, str] = {}
        for rid, text in sends:
            try:
                r = invoke(TOOLS["send"], ctx(store, A),
                           {"target": B, "text": text, "request_id": rid})
                outcome = ("dup" if r["duplicate"] else "new", r["message_id"])
            except NexusError as exc:
                outcome = (exc.code, None)
            if rid not in first:
                first[rid] = text
                assert outcome[0] == "new"
            elif text == first[rid]:
                assert outcome[0] == "dup"
            else:
                assert outcome[0] == "request_id_conflict"
        got = invoke(TOOLS["read"], ctx(store, B), {"count": 50})["messages"]
        assert sorted(m["text"] for m in got) == sorted(first[r] for r in first)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([A, B, C]),
                          st.sampled_from(["completed", "blocked", "failed"]),
                          st.sampled_from(["r1", "r2"])), min_size=1, max_size=8))
def test_the_first_final_report_by_the_assignee_wins(attempts):
    with fresh_store() as store:
        three_sessions(store)
        task = invoke(TOOLS["delegate"], ctx(store, A), {"target": B, "task": "job"})["id"]
        final = None
        for who, status, result in attempts:
            try:
                r = invoke(TOOLS["report"], ctx(store, who),
                           {"task_id": task, "status": status, "result": result})
                outcome = "dup" if r["duplicate"] else "ok"
            except NexusError as exc:
                outcome = exc.code
            if who == A:
                assert outcome == "not_assignee"
            elif who == C:
                assert outcome == "task_not_found"
            elif final is None:
                assert outcome == "ok"
                final = (status, result)
            else:
                assert outcome == ("dup" if (status, result) == final else "task_already_reported")
        ledger = invoke(TOOLS["tasks"], ctx(store, A), {"id": task})["items"][0]
        assert (ledger["status"], ledger["result"]) == (final or ("dispatched", None))
        reports = [m for m in invoke(TOOLS["read"], ctx(store, A), {"count": 50})["messages"]
                   if m["kind"] == "report"]
        assert len(reports) == (1 if final else 0)
        assert json.dumps(reports)  # serialisable
