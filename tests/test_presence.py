"""Presence that means "can answer now" (issue 29): a session whose client process is gone is
offline at once; one whose client waits for a person says so; an idle one that nothing can wake
says why; a sender may ask not to wake and a session may ask not to be woken; what a subagent
(Task tool) sees is not what its session sees. Judged where a status is read, never by a daemon,
with fake clients (a synthetic process table) and stand-in clients (real processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import (
    A_ID,
    B_ID,
    A,
    B,
    raw_db,
    recorded_waits,
    run_hook_in_thread,
    sid,
    store_env,
    until,
    wait_listening,
)
from nexus_cli.core import settings
from nexus_cli.core.proctable import Proc
from nexus_cli.maintenance import expiry


def seen(nx, sid_: str, env: dict | None = None) -> dict:
    """The session as `peers --include-offline` shows it."""
    items = nx("peers", "--include-offline", "--all-workspaces", "--json", env=env).json["items"]
    return next(p for p in items if p["id"] == sid_)


def sql(home, statement: str, *params) -> None:
    conn = raw_db(home)
    conn.execute(statement, params)
    conn.commit()
    conn.close()


def context_of(run) -> str:
    return json.loads(run.out)["hookSpecificOutput"]["additionalContext"]


# -- dead is offline, at once ----------------------------------------------------------------------


def test_a_killed_client_is_offline_at_once_everywhere_a_status_is_shown(nx, hook, pair, fake):
    """kill -9 (no SessionEnd): peers, status, the board, name resolution and send's outlook all
    say offline at the next look (nexus judged it idle for 30 minutes before)."""
    hook("codex", "Stop", sid(2), stop_hook_active=False)
    assert seen(nx, B_ID, A)["status"] == "idle"
    fake.kill(fake.client_of(B_ID))
    assert B_ID not in [p["id"] for p in nx("peers", "--json", env=A).json["items"]]
    gone = seen(nx, B_ID, A)
    assert gone["status"] == "offline" and "client process has exited" in gone["status_reason"]
    assert gone["wakeable"] is None
    st = nx("status", B_ID, "--json", env=A).json
    assert st["state"] == "offline" and "reaches it when it resumes" in st["outlook"]
    by_name = nx("send", "codex@work", "hello", "--json", env=A)
    assert by_name.code == 3 and "is offline" in by_name.err and "s-000000020000" in by_name.err
    sent = nx("send", "s-000000020000", "kept for you", "--json", env=A).json
    assert sent["to"]["status"] == "offline" and "kept and reaches it when it resumes" in \
        sent["outlook"]
    from helpers import ctx_for
    from nexus_cli.insight import board

    rows = {s["id"]: s for s in board.snapshot(ctx_for(None, A), False, True)["sessions"]}
    assert rows[B_ID]["status"] == "offline" and "exited" in rows[B_ID]["status_reason"]
    # its name is free for a live session, and its mail waits for its resume
    hook("codex", "SessionStart", sid(3), source="startup")
    assert seen(nx, f"codex:{sid(3)}", A)["name"] == "codex@work"
    resumed = fake.spawn("codex")
    greeting = context_of(hook("codex", "SessionStart", sid(2), source="resume",
                               client_pid=resumed))
    assert "kept for you" in greeting
    back = seen(nx, B_ID, A)
    assert back["status"] == "idle" and back["name"] == "codex@work#2"


def test_a_reused_pid_is_not_the_client(nx, hook, pair, fake):
    pid = fake.client_of(B_ID)
    fake.procs[pid] = Proc(pid, 1, "codex", "another start")  # same pid, another process
    assert seen(nx, B_ID, A)["status"] == "offline"


def test_a_live_client_is_never_offline_by_age_alone(nx, hook, pair, home):
    """Its process runs: 30 minutes without a hook event is an idle session, not a ghost; a
    session nexus cannot check (another machine's) keeps the 30-minute rule."""
    sql(home, "UPDATE sessions SET last_active = last_active - 7200")
    assert seen(nx, B_ID, A)["status"] == "idle"
    sql(home, "UPDATE sessions SET machine = 'far/away' WHERE id = ?", B_ID)
    far = seen(nx, B_ID, A)
    assert far["status"] == "offline" and "30 minutes" in far["status_reason"]


def test_maintenance_records_the_dead_as_offline(nx, hook, pair, fake, home):
    fake.kill(fake.client_of(B_ID))
    done = nx("maintenance", "--json").json
    assert done["sessions_retired"] == 1
    row = raw_db(home).execute("SELECT status, end_reason FROM sessions WHERE id = ?",
                               (B_ID,)).fetchone()
    assert tuple(row) == ("offline", "process-exited")
    assert "exited" in seen(nx, B_ID, A)["status_reason"]
    assert nx("maintenance", "--json").json["sessions_retired"] == 0


def test_an_ask_to_an_offline_session_returns_at_once(nx, hook, pair, fake):
    fake.kill(fake.client_of(B_ID))
    start = time.monotonic()
    r = nx("ask", "s-000000020000", "are you there?", "--timeout", "60", "--json", env=A)
    assert time.monotonic() - start < 30  # not its 60 s
    assert r.code == 7 and r.json["answered"] is False and r.json["waited_seconds"] == 0
    assert "offline" in r.json["outlook"] and "stays open" in r.json["note"]
    # the question is kept, and its late reply comes with a notice
    resumed = fake.spawn("codex")
    hook("codex", "SessionStart", sid(2), source="resume", client_pid=resumed)
    got = nx("read", "--json", env=B, inside=resumed).json["messages"]
    assert [m["text"] for m in got] == ["are you there?"]
    nx("reply", got[0]["message_id"], "yes", env=B, inside=resumed)
    texts = [m["text"] for m in nx("read", "--json", env=A).json["messages"]]
    assert "yes" in texts and any("late reply" in t for t in texts)


def test_an_ask_stops_waiting_when_its_target_goes_offline(nx, hook, pair, fake, home):
    import threading

    def kill_once_asked() -> None:
        conn = raw_db(home)
        until(lambda: conn.execute("SELECT 1 FROM messages WHERE text = 'still there?'"
                                   ).fetchone(), 60, "the question to be stored")
        conn.close()
        fake.kill(fake.client_of(B_ID))

    threading.Thread(target=kill_once_asked, daemon=True).start()
    start = time.monotonic()
    r = nx("ask", "codex", "still there?", "--timeout", "120", "--json", env=A)
    assert time.monotonic() - start < 60
    assert r.code == 7 and "went offline" in r.json["note"] and "offline" in r.json["outlook"]


def test_notify_when_idle_to_an_offline_session_waits_for_its_return(nx, hook, pair, fake,
                                                                      home):
    fake.kill(fake.client_of(B_ID))
    sent = nx("send", "s-000000020000", "when you are back", "--notify-when-idle", "--json",
              env=A).json
    assert "after it resumes" in sent["outlook"]
    sql(home, "UPDATE meta SET value = '0' WHERE key = 'maintained_at'")
    expiry.LAZY.not_before = 0
    assert nx("read", "--json", env=A).json["count"] == 0  # no "went offline": it was already
    resumed = fake.spawn("codex")
    hook("codex", "SessionStart", sid(2), source="resume", client_pid=resumed)
    hook("codex", "Stop", sid(2), stop_hook_active=True, client_pid=resumed)
    got = nx("read", "--json", env=A).json["messages"]
    assert len(got) == 1 and "ended its turn" in got[0]["text"]
    assert got[0]["reply_to"] == sent["message_id"]


# -- stuck is not idle -----------------------------------------------------------------------------


def test_a_permission_prompt_is_waiting_until_its_transcript_moves_on(nx, hook, pair, tmp_path):
    """Codex says nothing of a pending approval but its PermissionRequest hook: the session
    waits for a person, and senders are told it cannot answer, until its transcript grows."""
    transcript = tmp_path / "rollout.jsonl"
    transcript.write_text("{}\n")
    hook("codex", "UserPromptSubmit", sid(2), prompt="go", transcript_path=str(transcript))
    hook("codex", "PermissionRequest", sid(2), tool_name="Bash", transcript_path=str(transcript),
         tool_input={"command": "rm -rf build\n&& make", "description": "clean"})
    p = seen(nx, B_ID, A)
    assert p["status"] == "waiting" and p["waiting_for"] == "a permission prompt: Bash rm -rf " \
        "build && make"
    sent = nx("send", "codex", "quick question", "--json", env=A).json
    assert sent["to"]["status"] == "waiting" and "cannot answer until" in sent["outlook"]
    assert "a permission prompt: Bash rm" in nx("status", "codex", env=A).out
    later = time.time() + 5
    os.utime(transcript, (later, later))  # the person answered: the rollout goes on
    assert seen(nx, B_ID, A)["status"] == "working"


def test_nobody_waits_in_an_unattended_run(nx, hook, pair):
    hook("claude", "PermissionRequest", sid(1), tool_name="Bash", tool_input={"command": "ls"},
         env={"CLAUDE_CODE_SESSION_ATTENDED": "0"})
    assert seen(nx, A_ID, B)["status"] == "working"


def registry(folder, pid: int, session: str, start: str, status: str, **extra) -> None:
    """Claude Code's own file of a running process (`~/.claude/sessions/<pid>.json`, as the
    pinned client writes it)."""
    (folder / "sessions").mkdir(parents=True, exist_ok=True)
    (folder / "sessions" / f"{pid}.json").write_text(json.dumps({
        "pid": pid, "sessionId": session, "procStart": start, "status": status,
        "kind": "interactive", "version": "2.1.332",
        "statusUpdatedAt": int(time.time() * 1000) + 1000, **extra}))


def test_claude_codes_own_registry_says_waiting_and_ends_a_turn_hooks_missed(
        nx, hook, pair, fake, tmp_path, monkeypatch):
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    pid = fake.client_of(A_ID)
    start = fake.procs[pid].start
    hook("claude", "UserPromptSubmit", sid(1), prompt="go")
    registry(config, pid, sid(1), start, "waiting", waitingFor="dialog open")
    p = seen(nx, A_ID, B)
    assert (p["status"], p["waiting_for"]) == ("waiting", "dialog open")
    registry(config, pid, sid(1), start, "idle")  # Esc ended the turn: no Stop hook ran
    p = seen(nx, A_ID, B)
    assert (p["status"], p["wakeable"]) == ("idle", False) and "interrupted" in \
        p["status_reason"]
    registry(config, pid, sid(1), "another start", "waiting")  # not its process: not believed
    assert seen(nx, A_ID, B)["status"] == "working"
    registry(config, pid, sid(3), start, "waiting")  # another conversation of that process
    assert seen(nx, A_ID, B)["status"] == "working"
    (config / "sessions" / f"{pid}.json").write_text("{not json")
    assert seen(nx, A_ID, B)["status"] == "working"


# -- a waiter that died is visible -----------------------------------------------------------------


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True)
    return int(done.stdout)


def test_an_idle_session_nothing_can_wake_says_why(nx, hook, pair, home):
    hook("codex", "Stop", sid(2), stop_hook_active=False)
    p = seen(nx, B_ID, A)  # its waiter is starting
    assert (p["status"], p["wakeable"]) == ("idle", True)
    sql(home, "UPDATE sessions SET last_turn_end = last_turn_end - 60 WHERE id = ?", B_ID)
    p = seen(nx, B_ID, A)  # it never started (hooks not installed or not trusted)
    assert (p["status"], p["wakeable"]) == ("idle", False)
    assert "no waiter runs since its turn ended" in p["status_reason"]
    sent = nx("send", "codex", "hi", "--json", env=A).json
    assert sent["outlook"].startswith("nothing can wake it now") and "next prompt" in \
        sent["outlook"]
    assert "idle, no wake" in nx("peers", env=A).out
    sql(home, "UPDATE sessions SET status = 'listening', waiter_pid = ? WHERE id = ?",
        dead_pid(), B_ID)  # its waiter was killed (kill -9)
    p = seen(nx, B_ID, A)
    assert (p["status"], p["wakeable"]) == ("idle", False) and "killed" in p["status_reason"]
    sql(home, "UPDATE sessions SET status = 'idle', waiter_pid = NULL,"
        " last_turn_end = last_turn_end - 3600 WHERE id = ?", B_ID)
    assert "gave up an hour after" in seen(nx, B_ID, A)["status_reason"]
    sql(home, "UPDATE sessions SET auto_turns = 8 WHERE id = ?", B_ID)
    assert "automatic turns are used up (8 of 8" in seen(nx, B_ID, A)["status_reason"]


def test_a_session_without_hooks_is_idle_and_told_apart(nx, pair, home):
    sql(home, "UPDATE sessions SET last_event = NULL WHERE id = ?", B_ID)
    p = seen(nx, B_ID, A)
    assert p["wakeable"] is False and "no hook of its client has reached nexus" in \
        p["status_reason"]


def test_a_live_waiter_is_listening_and_wakes(nx, hook, pair):
    thread, _ = run_hook_in_thread("codex", "Stop", sid(2), wait=True,
                                     env={"NEXUS_CODEX_COMMAND": "true"})
    wait_listening(nx, A, B_ID)
    p = seen(nx, B_ID, A)
    assert (p["wakeable"], p["status_reason"]) == (True, "its background waiter wakes it")
    assert "woken at once" in nx("send", "codex", "wake", "--json", env=A).json["outlook"]
    thread.join(30)
    assert not thread.is_alive()


# -- waking on request -----------------------------------------------------------------------------


def test_send_no_wake_is_stored_announced_at_the_next_prompt_and_wakes_nobody(nx, hook, pair,
                                                                            monkeypatch):
    from nexus_cli.delivery import waiting

    looks: list = []  # what each look of the waiter (the hook's thread, in this process) found
    real = waiting._state
    monkeypatch.setattr(waiting, "_state", lambda *a: looks.append(real(*a)) or looks[-1])
    thread, _ = run_hook_in_thread("codex", "Stop", sid(2), wait=True,
                                     env={"NEXUS_CODEX_COMMAND": "true"})
    wait_listening(nx, A, B_ID)
    sent = nx("send", "codex", "no hurry", "--no-wake", "--json", env=A).json
    before = len(looks)  # from here on, every look finds the message stored
    assert sent["wake"] is False and "--no-wake" in sent["outlook"]
    # no poke; the waiter's safety poll sees the store change, looks, and keeps waiting
    until(lambda: len(looks) > before, 60, "the waiter to look at the changed store")
    assert looks[before:] == [None] * (len(looks) - before)
    assert thread.is_alive() and seen(nx, B_ID, A)["status"] == "listening"
    nx("send", "codex", "now please", env=A)  # a message that may wake: both are announced
    thread.join(30)
    assert not thread.is_alive()
    # at a Stop, a no-wake message alone holds nothing open; at the next prompt it is announced
    nx("send", "claude", "later", "--no-wake", env=B)
    assert hook("claude", "Stop", sid(1), stop_hook_active=False).out == ""
    assert "later" in context_of(hook("claude", "UserPromptSubmit", sid(1), prompt="hi"))


def test_delegate_no_wake(nx, hook, pair):
    task = nx("delegate", "claude", "review it when you can", "--no-wake", "--json", env=B).json
    assert task["status"] == "dispatched"
    assert hook("claude", "Stop", sid(1), stop_hook_active=False).out == ""
    assert f"TASK {task['id']}" in context_of(hook("claude", "UserPromptSubmit", sid(1),
                                                   prompt="next"))


def test_a_session_can_ask_not_to_be_woken(nx, hook, pair, home, monkeypatch):
    assert nx("profile", "--wake", "off", "--json", env=B).json["profile"]["wake"] is False
    with monkeypatch.context() as patched:
        waits = recorded_waits(patched)
        thread, box = run_hook_in_thread("codex", "Stop", sid(2), wait=True)
        thread.join(60)
    assert box["reply"] == (None, 0, None) and waits == []  # no waiter at all
    p = seen(nx, B_ID, A)
    assert p["wakeable"] is False and "asked not to be woken" in p["status_reason"]
    nx("send", "codex", "for later", env=A)
    assert hook("codex", "Stop", sid(2), stop_hook_active=False).out == ""  # not held open
    assert "for later" in context_of(hook("codex", "UserPromptSubmit", sid(2), prompt="hi"))
    nx("profile", "--wake", "on", env=B)
    hook("codex", "Stop", sid(2), stop_hook_active=False)
    assert seen(nx, B_ID, A)["wakeable"] is True


def test_the_wake_setting_is_everyones_default(nx, hook, pair, home):
    nx("config", "set", "wake", "0")
    hook("claude", "Stop", sid(1), stop_hook_active=False)
    assert "waking is off for every session" in seen(nx, A_ID, B)["status_reason"]
    nx("profile", "--wake", "on", env=A)  # a session's own choice wins
    assert seen(nx, A_ID, B)["wakeable"] is True
    settings._CACHED.clear()


# -- subagents -------------------------------------------------------------------------------------


def test_an_announcement_is_never_shown_inside_a_subagent(nx, hook, pair, home):
    """A Claude Code subagent's tool calls carry agent_id: what is announced there reaches the
    subagent, not the conversation that owns the inbox; the receipt stays stored until the
    main conversation gets it."""
    hook("claude", "UserPromptSubmit", sid(1), prompt="use a subagent")
    mid = nx("send", "claude", "for the main agent", "--json", env=B).json["message_id"]
    sub = {"agent_id": "a83042e2320015815", "agent_type": "general-purpose"}
    got = hook("claude", "PostToolUse", sid(1), tool_name="Bash", tool_use_id="t1", **sub)
    assert got.code == 0 and got.out == ""
    assert nx("message", "status", mid, "--json", env=B).json["state"] == "stored"
    main = hook("claude", "PostToolUse", sid(1), tool_name="Agent", tool_use_id="t0")
    assert "for the main agent" in context_of(main)
    status = nx("message", "status", mid, "--json", env=B).json
    assert (status["state"], status["delivered_via"]) == ("delivered", "tool")


def test_a_subagents_activity_ends_no_wait_of_its_session(nx, hook, pair, home):
    thread, box = run_hook_in_thread("claude", "Stop", sid(1), wait=True)
    wait_listening(nx, B, A_ID)
    hook("claude", "PreToolUse", sid(1), tool_name="mcp__nexus__peers", tool_use_id="toolu_S",
         agent_id="a1", agent_type="Explore")
    assert seen(nx, A_ID, B)["status"] == "listening" and thread.is_alive()
    row = raw_db(home).execute("SELECT agent FROM tool_uses WHERE tool_use_id = 'toolu_S'")
    assert row.fetchone()[0] == "a1"
    nx("send", "claude", "wake the main one", env=B)
    thread.join(30)
    assert box["reply"][1] == 2 and "wake the main one" in box["reply"][2]


# -- stand-in clients: real processes --------------------------------------------------------------


@pytest.mark.realprocs
def test_a_stand_in_client_killed_with_9_is_offline_at_the_next_look(nx, home, tmp_path,
                                                                      chdir_work):
    from standin import StandIn

    nexus = os.path.join(os.path.dirname(sys.executable), "nexus")
    env = {"PATH": os.environ["PATH"], "NEXUS_HOME": str(home),
           "PYTHONPATH": os.pathsep.join(sys.path),
           **store_env()}
    client = StandIn("codex", str(tmp_path / "bin"))
    try:
        for event in ({"hook_event_name": "SessionStart", "source": "startup"},
                      {"hook_event_name": "Stop", "stop_hook_active": False}):
            got = client.run([nexus, "hook", "codex"], env, json.dumps(
                {**event, "session_id": sid(7), "cwd": chdir_work, "transcript_path": None}))
            assert got["code"] == 0, got["err"]
        assert seen(nx, f"codex:{sid(7)}")["status"] == "idle"
    finally:
        client.proc.kill()  # SIGKILL: no SessionEnd
        client.proc.wait()
    gone = seen(nx, f"codex:{sid(7)}")
    assert gone["status"] == "offline" and "exited" in gone["status_reason"]


# -- a client process nexus has not seen yet (issue 38) ------------------------------------------


def test_a_codex_before_its_first_prompt_is_seen_as_starting(nx, hook, pair, fake):
    """A Codex TUI runs no hook before its first prompt, but starts `nexus mcp` at launch: the
    server notes its client, so `peers` shows the process, and a send to an old offline Codex
    conversation of the project says a new one runs there. Once its first hook registers it,
    it is a session like any other; a process that exited is not shown."""
    from nexus_cli.mcp import server

    hook("codex", "SessionEnd", sid(2), reason="other")
    fake.kill(fake.client_of(B_ID))  # the old conversation's Codex has exited
    tui = fake.spawn("codex")
    with fake.inside(tui):  # (in the project: the pair's work folder)
        server.note_client(fake.ancestors())  # as `nexus mcp` does once it serves
    got = nx("peers", "--json", env=A).json
    assert [(u["client"], u["pid"]) for u in got["unseen"]] == [("codex", tui)]
    assert "a Codex process runs in this project; it appears at its first prompt" in \
        got["unseen"][0]["note"]
    assert f"unseen: codex process {tui}" in nx("peers", env=A).out
    sent = nx("send", B_ID, "for the old conversation", "--json", env=A).json
    assert sent["to"]["status"] == "offline"
    assert "a Codex process runs in this project; it appears at its first prompt" in \
        sent["outlook"]
    hook("codex", "SessionStart", sid(5), source="startup", client_pid=tui)
    assert nx("peers", "--json", env=A).json["unseen"] == []
    tui2 = fake.spawn("codex")
    with fake.inside(tui2):
        server.note_client(fake.ancestors())
    fake.kill(tui2)
    assert nx("peers", "--json", env=A).json["unseen"] == []
