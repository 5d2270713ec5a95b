"""Handoff fed the event sequences the pinned clients really send (contract/hook.json,
"lifecycle"): Claude Code /clear is SessionEnd(clear) then SessionStart(clear) from the same
process; Codex /new and /clear send only a lazy SessionStart(startup|clear) while the old thread
is still idle; compaction keeps the id; /resume switches to an existing id; a resumed
conversation in a new process is the same conversation."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from helpers import claude_env, codex_env, raw_db, sid

PEER = codex_env(sid(90))
OLD, NEW = 1, 2


def env_of(client: str, n: int) -> dict:
    return (claude_env if client == "claude" else codex_env)(sid(n))


def sid_of(client: str, n: int) -> str:
    return f"{client}:{sid(n)}"


@pytest.fixture
def world(hook, nx, fake, chdir_work):
    """An old conversation with everything a successor should inherit: a name and note, listen
    mode, a waiting message, an obligation it owes, a task it dispatched, a question it asked."""

    def make(client: str) -> SimpleNamespace:
        proc = fake.spawn(client)
        hook("codex", "SessionStart", sid(90), source="startup")
        hook(client, "SessionStart", sid(OLD), source="startup", client_pid=proc)
        old = env_of(client, OLD)
        nx("profile", "--name", "reviewer", "--note", "reviewing auth", env=old)
        hook(client, "Stop", sid(OLD), client_pid=proc)  # idle, as before /clear or /new
        nx("listen", "on", env=old)
        nx("send", "reviewer", "waiting for you", env=PEER)
        owed = nx("delegate", "reviewer", "review auth.py", "--json", env=PEER).json["id"]
        mine = nx("delegate", "codex", "fix the test", "--json", env=old).json["id"]
        nx("ask", "codex", "which branch?", "--timeout", "0", env=old)
        nx("reserve", "auth.py", "--reason", "reviewing auth", env=old)
        return SimpleNamespace(proc=proc, owed=owed, mine=mine)

    return make


def inherited(nx, hook, client: str, w: SimpleNamespace, reservations: bool = True) -> None:
    """The successor has the old conversation's name, note, mail, obligations, listen mode and
    (unless its end let them go: `reservations` False) its file reservations."""
    new, old_id = env_of(client, NEW), sid_of(client, OLD)
    me = nx("whoami", "--json", env=new).json
    assert me["name"] == "reviewer" and me["note"] == "reviewing auth"
    texts = [m["text"] for m in nx("read", "--json", env=new).json["messages"]]
    assert "waiting for you" in texts and any("review auth.py" in t for t in texts)
    owed = nx("tasks", "--open", "--json", env=new).json["items"]
    assert [t["id"] for t in owed] == [w.owed]
    r = nx("report", w.owed, "--status", "completed", "--result", "ok", "--json",
           env=new)
    assert r.code == 0, r.err
    # what is addressed to the old id from now on arrives at the successor
    nx("send", old_id, "after the handoff", env=PEER)
    nx("report", w.mine, "--status", "completed", "--result", "fixed", env=PEER)
    question = next(m for m in nx("read", "--json", env=PEER).json["messages"]
                    if m["text"] == "which branch?")
    nx("reply", question["message_id"], "main", env=PEER)
    texts = [m["text"] for m in nx("read", "--json", env=new).json["messages"]]
    assert "after the handoff" in texts and "main" in texts
    assert any(f"Report on task {w.mine}" in t for t in texts)
    assert nx("status", "reviewer", "--json", env=PEER).json["listen_mode"] is True
    # both ids show the link
    old_status = nx("status", nx("handoff", "status", "--json", env=new).json["predecessor"]
                    ["handle"], "--json", env=PEER).json
    assert old_status["state"] == "offline" and old_status["successor"] == sid_of(client, NEW)
    st = nx("handoff", "status", "--json", env=new).json
    assert st["predecessor"]["id"] == old_id and st["last"]["messages"] >= 1
    assert st["last"]["to"]["id"] == sid_of(client, NEW)
    peers = {p["id"]: p for p in nx("peers", "--include-offline", "--json", env=PEER).json["items"]}
    assert peers[old_id]["successor"]["id"] == sid_of(client, NEW)
    assert "replaced by" in nx("peers", "--include-offline", env=PEER).out
    # its file reservations moved too: the successor holds them, edits by others are refused
    held = nx("reservations", "--json", env=PEER).json["items"]
    if not reservations:
        assert held == []
        return
    assert [(r["pattern"], r["holder"]["id"], r["reason"]) for r in held] == \
        [("auth.py", sid_of(client, NEW), "reviewing auth")]
    assert st["last"]["to"]["id"] == sid_of(client, NEW)
    refused = hook("codex", "PreToolUse", sid(90), tool_name="apply_patch",
                   tool_input={"command": "*** Begin Patch\n*** Update File: auth.py\n"
                                          "@@\n-a\n+b\n*** End Patch\n"}).out
    assert "auth.py is reserved by reviewer" in refused


def test_claude_clear_as_observed(hook, nx, world):
    w = world("claude")
    proc = w.proc
    hook("claude", "SessionEnd", sid(OLD), reason="clear", client_pid=proc)
    hook("claude", "SessionStart", sid(NEW), source="clear", client_pid=proc)
    inherited(nx, hook, "claude", w)


@pytest.mark.parametrize("source", ["startup", "clear"])  # Codex /new, Codex /clear
def test_codex_new_and_clear_as_observed(hook, nx, world, source):
    w = world("codex")
    proc = w.proc
    hook("codex", "SessionStart", sid(NEW), source=source, client_pid=proc)
    hook("codex", "UserPromptSubmit", sid(NEW), prompt="next", client_pid=proc)
    inherited(nx, hook, "codex", w)
    # at exit Codex ends every thread it loaded: the old one's end changes nothing
    hook("codex", "SessionEnd", sid(NEW), reason="other", client_pid=proc)
    hook("codex", "SessionEnd", sid(OLD), reason="other", client_pid=proc)
    assert nx("status", sid_of("codex", OLD), "--json", env=PEER).json["successor"] == \
        sid_of("codex", NEW)


@pytest.mark.parametrize("source", ["startup", "clear"])
def test_codex_may_end_the_old_thread_before_the_new_one_starts(hook, nx, world, source):
    """Seen with the pinned Codex: after /new the old thread's SessionEnd(other) may come first,
    then the new thread's SessionStart at the next prompt, from the same running process. That
    end is an exit's too (Codex ends every thread it loaded): the reservations go with it."""
    w = world("codex")
    proc = w.proc
    hook("codex", "SessionEnd", sid(OLD), reason="other", client_pid=proc)
    hook("codex", "SessionStart", sid(NEW), source=source, client_pid=proc)
    inherited(nx, hook, "codex", w, reservations=False)


def test_the_start_may_come_before_the_end(hook, nx, world):
    w = world("claude")
    proc = w.proc
    hook("claude", "SessionStart", sid(NEW), source="clear", client_pid=proc)
    hook("claude", "SessionEnd", sid(OLD), reason="clear", client_pid=proc)
    inherited(nx, hook, "claude", w)


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_compaction_keeps_the_conversation(hook, nx, world, client):
    proc = world(client).proc
    hook(client, "SessionStart", sid(OLD), source="compact", client_pid=proc)
    st = nx("handoff", "status", "--json", env=env_of(client, OLD)).json
    assert st["successor"] is None and st["predecessor"] is None
    assert nx("read", "--json", env=env_of(client, OLD)).json["count"] >= 1


def test_claude_resume_inside_switches_without_handing_over(hook, nx, world, fake):
    """/resume inside a running Claude Code: the current conversation ends (offline, nothing
    handed over). A conversation this process ran before comes back; one whose own client has
    exited is not taken into a running process (a resume is believed only as a client process's
    first event: the same start fed by hand from an agent's shell would take it over): refused,
    it stays where it was, for `claude --resume` in a process of its own."""
    proc = world("claude").proc
    other = fake.spawn("claude")  # conversation 7, from an earlier process that exited
    hook("claude", "SessionStart", sid(7), source="startup", client_pid=other)
    hook("claude", "SessionEnd", sid(7), reason="prompt_input_exit", client_pid=other)
    fake.kill(other)
    hook("claude", "SessionEnd", sid(OLD), reason="resume", client_pid=proc)
    r = hook("claude", "SessionStart", sid(7), source="resume", client_pid=proc)
    assert r.code == 1 and "hook_refused" in r.err and "resume" in r.err, r.err
    assert nx("read", "--json", env=claude_env(sid(7)), inside=proc).code == 5
    st = nx("status", sid_of("claude", OLD), "--json", env=PEER).json
    assert st["state"] == "offline" and st["successor"] is None
    # the conversation it ran itself comes back to it
    hook("claude", "SessionEnd", sid(7), reason="resume", client_pid=proc)
    assert hook("claude", "SessionStart", sid(OLD), source="resume", client_pid=proc).code == 0
    assert nx("read", "--json", env=claude_env(sid(OLD)), inside=proc).code == 0


def test_codex_resume_picker_replaces_without_handing_over(hook, nx, world, fake):
    proc = world("codex").proc
    other = fake.spawn("codex")
    hook("codex", "SessionStart", sid(7), source="startup", client_pid=other)
    hook("codex", "SessionEnd", sid(7), reason="other", client_pid=other)
    fake.kill(other)
    r = hook("codex", "SessionStart", sid(7), source="resume", client_pid=proc)  # lazy
    assert r.code == 1 and "hook_refused" in r.err  # not into a running process (see above)
    st = nx("status", sid_of("codex", OLD), "--json", env=PEER).json
    assert st["successor"] is None
    assert nx("status", sid_of("codex", 7), "--json", env=PEER).json["state"] == "offline"


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_resume_in_a_new_process_is_the_same_conversation(hook, nx, world, fake, client):
    proc = world(client).proc
    hook(client, "SessionEnd", sid(OLD), reason="other", client_pid=proc)
    fake.kill(proc)
    again = fake.spawn(client)
    hook(client, "SessionStart", sid(OLD), source="resume", client_pid=again)
    old = env_of(client, OLD)
    assert nx("read", "--json", env=old, inside=again).json["count"] >= 1
    assert nx("handoff", "status", "--json", env=old, inside=again).json["successor"] is None


def test_never_across_processes(hook, nx, world, fake):
    world("claude")
    elsewhere = fake.spawn("claude")
    hook("claude", "SessionStart", sid(NEW), source="clear", client_pid=elsewhere)
    assert nx("read", "--json", env=claude_env(sid(NEW))).json["count"] == 0
    assert nx("status", "reviewer", "--json", env=PEER).json["session"]["id"] == \
        sid_of("claude", OLD)


@pytest.mark.parametrize("start", ["another", None])
def test_a_new_process_on_a_reused_pid_is_a_new_session(hook, nx, world, fake, home, start):
    """A fresh `codex` after /quit is a new session, even when it gets the old client's pid (pids
    wrap on a busy machine) or the old row names no start time (written by hand): it inherits
    nothing, and the old conversation's mail waits for it."""
    proc = world("codex").proc
    hook("codex", "SessionEnd", sid(OLD), reason="other", client_pid=proc)
    if start is None:
        with raw_db(home) as db:
            db.execute("UPDATE sessions SET client_start = NULL WHERE id = ?",
                       (sid_of("codex", OLD),))
            db.commit()
    else:
        fake.procs[proc] = fake.procs[proc]._replace(start="t-another")
    hook("codex", "SessionStart", sid(NEW), source="startup", client_pid=proc)
    new = env_of("codex", NEW)
    assert nx("read", "--json", env=new).json["count"] == 0
    assert nx("handoff", "status", "--json", env=new).json["predecessor"] is None
    assert nx("status", sid_of("codex", OLD), "--json", env=PEER).json["successor"] is None


def test_a_stale_clear_does_not_pair(hook, nx, world, monkeypatch):
    import time

    proc = world("claude").proc
    hook("claude", "SessionEnd", sid(OLD), reason="clear", client_pid=proc)
    later = time.time() + 120
    monkeypatch.setattr(time, "time", lambda: later)
    hook("claude", "SessionStart", sid(NEW), source="clear", client_pid=proc)
    assert nx("handoff", "status", "--json", env=claude_env(sid(NEW))).json["predecessor"] is None


@pytest.mark.parametrize("how", ["session", "everyone"])
def test_switched_off_links_but_moves_nothing(hook, nx, world, how):
    proc = world("claude").proc
    if how == "session":
        nx("handoff", "disable", env=claude_env(sid(OLD)))
    else:
        nx("config", "set", "handoff", "0")
    hook("claude", "SessionEnd", sid(OLD), reason="clear", client_pid=proc)
    hook("claude", "SessionStart", sid(NEW), source="clear", client_pid=proc)
    st = nx("handoff", "status", "--json", env=claude_env(sid(NEW))).json
    assert st["predecessor"]["id"] == sid_of("claude", OLD) and st["last"] is None
    assert nx("read", "--json", env=claude_env(sid(NEW))).json["count"] == 0
    old = nx("handoff", "status", "--json", env=claude_env(sid(OLD)))
    assert old.code == 0


def test_status_says_why_a_handoff_would_not_happen(nx, hook, world):
    world("claude")
    env = claude_env(sid(OLD))
    assert nx("handoff", "status", "--json", env=env).json["deferred"] == []
    nx("handoff", "disable", env=env)
    nx("config", "set", "handoff", "0")
    st = nx("handoff", "status", "--json", env=env).json
    assert len(st["deferred"]) == 2 and st["switch"] is False and st["enabled"] is False
    r = nx("handoff", "now", env=env)
    assert r.code == 2 and "never starts a conversation" in r.err and "/clear" in r.err


def test_handoff_to_a_live_session_needs_its_consent(hook, nx, world, fake):
    """`handoff now --to V` onto a live session that never asked moves nothing: V is offered
    the handoff (a notice) and takes it with `accept`; nobody else can, nor twice, nor after
    the offer lapsed. Only a successor the caller's own client process made takes over at once."""
    w = world("claude")
    old = env_of("claude", OLD)
    receiver = fake.spawn("codex")
    hook("codex", "SessionStart", sid(50), source="startup", client_pid=receiver)
    v = env_of("codex", 50)
    was = nx("whoami", "--json", env=v).json["name"]
    r = nx("handoff", "now", "--to", sid_of("codex", 50), "--json", env=old)
    assert r.code == 0 and r.json["moved"] is None
    assert r.json["offered"]["to"]["id"] == sid_of("codex", 50)
    assert nx("whoami", "--json", env=v).json["name"] == was  # nothing moved
    assert nx("whoami", "--json", env=old).json["name"] == "reviewer"
    told = nx("read", "--json", env=v).json["messages"]
    assert [m["kind"] for m in told] == ["notice"] and "handoff accept" in told[0]["text"]
    st = nx("handoff", "status", "--json", env=v).json
    assert [o["id"] for o in st["offers"]] == [sid_of("claude", OLD)]
    # nobody else takes it
    r = nx("handoff", "accept", "--from-session", sid_of("claude", OLD), env=PEER)
    assert r.code == 4 and "handoff_not_offered" in r.err
    r = nx("handoff", "accept", "--from-session", "reviewer", "--json", env=v)
    assert r.code == 0 and r.json["moved"]["name"] == "reviewer", r.err
    assert nx("whoami", "--json", env=v).json["name"] == "reviewer"
    assert [t["id"] for t in nx("tasks", "--open", "--json", env=v).json["items"]] == [w.owed]
    r = nx("handoff", "accept", "--from-session", sid_of("claude", OLD), env=v)
    assert r.code == 4  # taken: not twice


def test_a_handoff_offer_lapses(hook, nx, world, fake, home):
    world("claude")
    hook("codex", "SessionStart", sid(50), source="startup", client_pid=fake.spawn("codex"))
    nx("handoff", "now", "--to", sid_of("codex", 50), env=env_of("claude", OLD))
    with raw_db(home) as conn:
        conn.execute("UPDATE sessions SET offered_at = offered_at - 3601")
    r = nx("handoff", "accept", "--from-session", sid_of("claude", OLD), env=env_of("codex", 50))
    assert r.code == 4 and "handoff_not_offered" in r.err


def test_a_successor_the_client_itself_made_takes_over_at_once(hook, nx, world):
    """A second thread of the caller's own client process (a Codex app server) is the client's
    own successor: `now --to` it moves at once."""
    w = world("codex")
    hook("codex", "SessionStart", sid(NEW), source="resume", client_pid=w.proc)
    hook("codex", "UserPromptSubmit", sid(NEW), prompt="x", client_pid=w.proc)
    hook("codex", "UserPromptSubmit", sid(OLD), prompt="y", client_pid=w.proc)
    r = nx("handoff", "now", "--to", sid_of("codex", NEW), "--json", env=env_of("codex", OLD),
           inside=w.proc)
    assert r.code == 0 and r.json["moved"]["name"] == "reviewer", r.err


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_start_fed_by_hand_mid_turn_takes_nothing_over(hook, nx, world, client):
    """Issue 37: the agent pipes a SessionStart(clear) with a new id into `nexus hook` from its
    own shell, in the middle of its turn, under its own client process: it would become the
    client's conversation and take the agent's name, mail and obligations. A new conversation
    starts in a running client only between turns: refused, nothing moves."""
    w = world(client)
    proc = w.proc
    hook(client, "UserPromptSubmit", sid(OLD), prompt="go on", client_pid=proc)  # in a turn
    r = hook(client, "SessionStart", sid(NEW), source="clear", client_pid=proc)
    assert r.code != 0 and "hook_refused" in r.err and "in a turn" in r.err, r.err
    old = env_of(client, OLD)
    assert nx("whoami", "--json", env=old).json["name"] == "reviewer"
    assert nx("status", sid_of(client, OLD), "--json", env=PEER).json["successor"] is None
    assert nx("whoami", "--json", env=env_of(client, NEW)).code != 0  # not its client's
    nx("listen", "off", env=old)  # its mail was announced: a listening Stop would hold for news
    hook(client, "Stop", sid(OLD), client_pid=proc)  # the turn ends: a real /clear may come
    nx("listen", "on", env=old)
    hook(client, "SessionStart", sid(NEW), source="clear", client_pid=proc)
    inherited(nx, hook, client, w)
