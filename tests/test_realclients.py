"""End to end with the real Claude Code and Codex CLIs (pinned, from npm) against a scripted fake
model on 127.0.0.1: nexus installed into a throwaway HOME, sessions talking through hooks, the
shell tool and MCP. The tests marked realprocs also run with the hooks reading the process table
through ps(1) (tests/conftest.py)."""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Callable

import pytest

from e2e.harness import NEXUS, PY, World, available, wait_until
from helpers import kill9

pytestmark = pytest.mark.realclient
REASON = available()
if REASON and os.environ.get("NEXUS_REQUIRE_REALCLIENT"):
    raise RuntimeError(f"real-client tests required but unavailable: {REASON}")
if REASON:
    pytestmark = [pytestmark, pytest.mark.skip(reason=REASON)]

# a tool call that runs until the test has done its part (touched `sent`): no guess how long
HELD = "touch started; until [ -e sent ]; do sleep 0.05; done"
FIRST_ID = (f"{PY} -c 'import json,sys; "
            "print(json.load(sys.stdin)[\"messages\"][0][\"message_id\"])'")


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    w.install()
    yield w
    w.close()


def start(world: World, client: str, run: str, steps: list[dict] | None = None) -> str:
    """A first turn for a session of `client` (its steps: `steps`, or an answer); returns its
    nexus id."""
    world.script(**{run: steps or [{"text": "ready"}]})
    if client == "claude":
        sid = str(uuid.uuid4())
        world.claude(run, "hello", session_id=sid)
        return f"claude:{sid}"
    world.codex(run, "hello")
    return world.session("codex")["id"]


def resume(world: World, sid: str, run: str, prompt: str = "continue") -> None:
    client, _, raw = sid.partition(":")
    if client == "claude":
        world.claude(run, prompt, resume=raw)
    else:
        world.codex(run, prompt, resume=raw)


def test_mcp_list_shows_nexus_after_install_and_nothing_after_uninstall(world):
    out = world.run([world.claude_bin, "mcp", "list"]).stdout
    assert "nexus:" in out and "Connected" in out and NEXUS in out
    servers = json.loads(world.run([world.codex_bin, "mcp", "list", "--json"]).stdout)
    assert [s["transport"]["command"] for s in servers if s["name"] == "nexus"] == [NEXUS]
    world.nexus("uninstall", "claude")
    world.nexus("uninstall", "codex")
    assert "nexus" not in world.run([world.claude_bin, "mcp", "list"]).stdout
    assert not [s for s in json.loads(world.run([world.codex_bin, "mcp", "list", "--json"]).stdout)
                if s["name"] == "nexus"]


# (through ps one way round: either way both clients' hooks and shell commands are looked up)
@pytest.mark.realprocs(by=())
@pytest.mark.parametrize("sender,recipient", [("claude", "codex"), ("codex", "claude")])
def test_shell_message_is_announced_read_and_replied(world, sender, recipient):
    r_id = start(world, recipient, "r1")
    world.script(
        r2=[{"shell": f"{NEXUS} reply \"$({NEXUS} read --json | {FIRST_ID})\" "
                      "'reviewed: all good'"},
            {"text": "replied"}],
        s3=[{"text": "noted"}],
    )
    # the sender's first turn sends (its conversation is resumed below, for the reply)
    s_id = start(world, sender, "s2", [{"shell": f"{NEXUS} send {r_id} 'please review "
                                                 "checkout.py'"}, {"text": "sent"}])
    resume(world, r_id, "r2")
    # the announcement reached the recipient's model at its next prompt, with the sender named
    assert world.reached("r2", "[nexus] 1 unread message for you")
    assert world.reached("r2", "please review checkout.py")
    sender_name = next(s["name"] for s in world.sessions() if s["id"] == s_id)
    assert world.reached("r2", f"from {sender_name}")
    resume(world, s_id, "s3")
    assert world.reached("s3", "reviewed: all good")


# (through ps one way round: either way both clients' MCP servers find their callers)
@pytest.mark.realprocs(by=())
@pytest.mark.parametrize("sender,recipient", [("claude", "codex"), ("codex", "claude")])
def test_mcp_send_and_read_carry_the_right_sender(world, sender, recipient):
    r_id = start(world, recipient, "r1")
    world.script(r2=[{"tool": "mcp__nexus__read", "input": {}}, {"text": "read"}])
    s_id = start(world, sender, "s2", [  # the sender's first turn sends
        {"tool": "mcp__nexus__send", "input": {"target": r_id, "text": "over mcp"}},
        {"text": "sent"}])
    resume(world, r_id, "r2")
    last = world.requests("r2")[-1]["body"]
    assert "over mcp" in json.dumps(last) and s_id in json.dumps(last)  # the read's output
    assert not world.reached("s2", "impersonation_refused")
    assert not world.reached("s2", "caller_unknown")


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_message_sent_during_a_turn_arrives_after_the_next_tool_call(world, client):
    """Tool calls start Python only when there is news: a message sent while the turn runs
    reaches the model after the tool call that was running, not at the turn's end."""
    peer = start(world, "codex" if client == "claude" else "claude", "p1")
    world.script(m1=[{"shell": "echo busy"}, {"shell": HELD},
                     {"shell": "echo more work"}, {"shell": "echo and more"}, {"text": "done"}])
    proc = world.claude("m1", "work", session_id=str(uuid.uuid4()), background=True) \
        if client == "claude" else world.codex("m1", "work", background=True)
    wait_until(lambda: (world.work / "started").exists(), what="the turn's second tool call")
    me = next(s["id"] for s in world.sessions() if s["client"] == client and s["id"] != peer)
    assert not world.reached("m1", "[nexus] 1 unread")  # quiet calls announced nothing
    world.nexus("send", me, "news in the middle of the turn")
    (world.work / "sent").touch()  # the held tool call ends only now
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    seen = [i for i, r in enumerate(world.requests("m1"))
            if "news in the middle of the turn" in json.dumps(r["body"])]
    assert seen and seen[0] <= 3, seen  # right after the held call, before the turn ended
    assert not list((world.store / "news").iterdir())  # announced: no process has news left


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_every_group_is_one_flag_away(world, client):
    """The default groups leave the workspace tools out; `--tools all` serves them."""
    world.script(g1=[{"tool": "mcp__nexus__create_task", "input": {"text": "tracked"}},
                     {"text": "done"}])
    def turn(run: str) -> None:
        if client == "claude":
            world.claude(run, "go", session_id=str(uuid.uuid4()))
        else:
            world.codex(run, "go")

    turn("g1")
    tools = json.dumps(world.requests("g1")[0]["body"].get("tools", []))
    assert "create_task" not in tools and "delegate" in tools
    world.nexus("install", client, "--tools", "all")
    world.script(g2=[{"tool": "mcp__nexus__create_task", "input": {"text": "tracked"}},
                     {"text": "done"}])
    turn("g2")
    assert "create_task" in json.dumps(world.requests("g2")[0]["body"].get("tools", []))
    assert world.reached("g2", "tracked") and world.reached("g2", "pending")


def first_id_reply(text: str) -> str:
    return f"{NEXUS} reply \"$({NEXUS} read --json | {FIRST_ID})\" '{text}'"


@pytest.mark.realprocs
@pytest.mark.parametrize("listener,sender", [("claude", "codex"), ("codex", "claude")])
def test_a_listening_session_is_continued_by_the_reply(world, listener, sender):
    world.script(l1=[{"shell": f"{NEXUS} listen on"}, {"text": "listening now"},
                     {"shell": f"{NEXUS} listen off"}, {"text": "got the reply"}])
    if listener == "claude":
        l_id = f"claude:{uuid.uuid4()}"
        proc = world.claude("l1", "wait for news", session_id=l_id.split(":", 1)[1],
                            background=True)
    else:
        proc = world.codex("l1", "wait for news", background=True)
        wait_until(lambda: any(s["client"] == "codex" and s["status"] == "listening"
                               for s in world.sessions()), what="codex listening")
        l_id = world.session("codex", "listening")["id"]
    world.wait_status(l_id, "listening")
    # the sender's first turn sends
    start(world, sender, "s2", [{"shell": f"{NEXUS} send {l_id} 'here is your answer'"},
                                {"text": "sent"}])
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert world.reached("l1", "here is your answer")
    assert world.reached("l1", "Automatic turn 1 of 8")
    assert [e["step"] for e in world.requests("l1")][-1] == {"text": "got the reply"}


def test_the_automatic_turn_limit_stops_a_ping_pong(world):
    (world.store).mkdir(mode=0o700, exist_ok=True)
    (world.store / "settings.json").write_text(json.dumps({"maxAutoTurns": 2}))
    rounds = [{"shell": first_id_reply("pong")}, {"text": "replied"}] * 6
    world.script(b1=[{"shell": f"{NEXUS} listen on"}, {"text": "listening"}, *rounds])
    codex = world.codex("b1", "play ping-pong", background=True)
    wait_until(lambda: any(s["client"] == "codex" and s["status"] == "listening"
                           for s in world.sessions()), what="codex listening")
    b_id = world.session("codex", "listening")["id"]
    a_sid = str(uuid.uuid4())
    world.script(a1=[{"shell": f"{NEXUS} listen on"}, {"shell": f"{NEXUS} send {b_id} 'ping'"},
                     {"text": "sent"}, *rounds])
    claude = world.claude("a1", "play ping-pong", session_id=a_sid, background=True)
    players = {f"claude:{a_sid}": claude, b_id: codex}
    # A player that got two pongs in one turn used one automatic turn fewer: it listens on after
    # the other stopped at its limit. The game ends for it with one more message (load decides
    # which player that is, so the test does not assume either).
    wait_until(lambda: any(p.poll() is not None for p in players.values()), timeout=300,
               what="a player at its turn limit")
    first = next(s for s, p in players.items() if p.poll() is not None)
    for sid, proc in players.items():
        wait_until(lambda p=proc, s=sid: p.poll() is not None or any(
            x["id"] == s and x["status"] == "listening" for x in world.sessions()), timeout=300,
            what=f"{sid} to stop or listen")
        if proc.poll() is None:
            world.nexus("send", sid, "game over")
    for proc in players.values():
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    # under load two pongs can arrive in one automatic turn, so only one player is sure to use
    # both of its turns; neither may ever get a third
    assert any(world.reached(run, "Automatic turn 2 of 2") for run in ("a1", "b1"))
    for run in ("a1", "b1"):
        assert world.reached(run, "Automatic turn 1 of 2"), run
        assert not world.reached(run, "Automatic turn 3"), run
    # the reply that reached the first player after it stopped at its limit is stored, unread
    unread = world.db().execute("SELECT count(*) FROM messages WHERE recipient = ? AND read_at"
                                " IS NULL AND expired_at IS NULL", (first,)).fetchone()[0]
    assert unread >= 1


def test_an_idle_claude_session_is_woken_by_async_rewake(world):
    world.claude_onboarded()
    sid = str(uuid.uuid4())
    world.script(c1=[{"text": "first turn done"}, {"text": "woken and answering"}])
    world.tmux_start("claude", [world.claude_bin, "--session-id", sid,
                                "--dangerously-skip-permissions", "[run:c1] hello"])
    world.wait_status(f"claude:{sid}", "listening")  # idle, with the background wait running
    world.nexus("send", f"claude:{sid}", "wake up, claude")
    wait_until(lambda: world.reached("c1", "wake up, claude"), timeout=60, what="the wake")
    wait_until(lambda: len(world.requests("c1")) >= 2, what="the woken turn")
    assert world.reached("c1", "Automatic turn 1 of 8")
    mid = json.loads(world.nexus("send", f"claude:{sid}", "x", "--json").stdout)["message_id"]
    status = json.loads(world.nexus("message", "status", "--json", mid).stdout)
    assert status["state"] in ("stored", "delivered")


def test_an_idle_codex_thread_gets_the_queued_turn(world):
    world.script(t1=[{"text": "first turn done"}, {"text": "woken by the queue"}])
    screen = world.tmux_start("codex", [world.codex_bin, "--dangerously-bypass-hook-trust",
                                        "[run:t1] hello"])
    wait_until(lambda: any(s["client"] == "codex" and s["status"] == "listening"
                           for s in world.sessions()), what="codex idle and waiting")
    cid = world.session("codex", "listening")["id"]
    mid = json.loads(world.nexus("send", cid, "wake up, codex", "--json").stdout)["message_id"]
    # the running Codex app polls its queue (about every 10 s here)
    wait_until(lambda: world.reached("t1", "wake up, codex"), timeout=90,
               what=lambda: f"the queued turn; screen:\n{world.tmux_screen(screen)}\n"
                            f"{world.sessions()}")
    assert world.reached("t1", "Automatic turn 1 of 8")
    wait_until(lambda: json.loads(world.nexus("message", "status", mid, "--json").stdout)["state"]
               == "delivered", what="delivered receipt")
    assert (json.loads(world.nexus("message", "status", mid, "--json").stdout)["delivered_via"]
            == "wake")


FIRST_TASK = f"{PY} -c 'import json,sys; print(json.load(sys.stdin)[\"items\"][0][\"id\"])'"


def start_listening(world: World, client: str, run: str, steps: list[dict], others: set[str]):
    """Run a session in the background whose turn ends listening; returns (process, id)."""
    world.script(**{run: steps})
    if client == "claude":
        sid = f"claude:{uuid.uuid4()}"
        proc = world.claude(run, "go", session_id=sid.split(":", 1)[1], background=True)
    else:
        proc = world.codex(run, "go", background=True)
        wait_until(lambda: any(s["client"] == "codex" and s["id"] not in others
                               and s["status"] == "listening" for s in world.sessions()),
                   what="codex listening")
        sid = next(s["id"] for s in world.sessions() if s["client"] == "codex"
                   and s["id"] not in others and s["status"] == "listening")
    world.wait_status(sid, "listening")
    return proc, sid


def delegated_and_reported(world: World, dispatcher: str, worker: str) -> str:
    """A listening dispatcher delegates to a worker, which reports at its next prompt: the
    dispatcher's turn continues with the report. Its session id."""
    w_id = start(world, worker, "w1")
    proc, d_id = start_listening(world, dispatcher, "d1", [
        {"shell": f"{NEXUS} delegate {w_id} 'Write hello.txt saying hi; report the path.'"},
        {"shell": f"{NEXUS} listen on"}, {"text": "delegated; waiting for the report"},
        {"shell": f"{NEXUS} listen off"}, {"text": "the report is in"}], {w_id})
    world.script(w2=[
        {"shell": f"echo hi > hello.txt && {NEXUS} report \"$({NEXUS} tasks --open --json | "
                  f"{FIRST_TASK})\" --status completed --result \"wrote $PWD/hello.txt\""},
        {"text": "reported"}])
    resume(world, w_id, "w2", "what is next?")
    assert world.reached("w2", "TASK t-") and world.reached("w2", "You have 1 open task")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert world.reached("d1", "Report on task") and world.reached("d1", "completed")
    return d_id


@pytest.mark.parametrize("dispatcher,worker", [("claude", "codex"), ("codex", "claude")])
def test_delegation_is_reported_and_continues_the_listening_dispatcher(world, dispatcher, worker):
    d_id = delegated_and_reported(world, dispatcher, worker)
    ledger = world.db().execute(
        "SELECT t.status, t.result, m.delivered_at FROM tasks t JOIN messages m"
        " ON m.id = t.report_message_id WHERE t.sender = ?", (d_id,)).fetchall()
    assert [(t["status"], bool(t["delivered_at"])) for t in ledger] == [("completed", True)]
    assert "hello.txt" in ledger[0]["result"]


def test_an_ask_answered_after_its_timeout_wakes_the_asker(world):
    b_id = start(world, "codex", "b1")
    proc, _a_id = start_listening(world, "claude", "a1", [
        {"shell": f"{NEXUS} ask {b_id} 'Which port does the API use?' --timeout 1 || true"},
        {"shell": f"{NEXUS} listen on"}, {"text": "asked; will wait"},
        {"shell": f"{NEXUS} listen off"}, {"text": "got the late answer"}], {b_id})
    assert world.reached("a1", "stays open")  # the ask's own output, at the time-out
    world.script(b2=[{"shell": first_id_reply("port 8080")}, {"text": "answered"}])
    resume(world, b_id, "b2")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert world.reached("a1", "late reply to your question") and world.reached("a1", "port 8080")


@pytest.mark.realprocs
@pytest.mark.parametrize("outer,inner", [("claude", "codex"), ("codex", "claude"),
                                         ("claude", "claude"), ("codex", "codex")])
def test_a_nested_agent_is_itself(world, outer, inner, tmp_path):
    """An agent started from another agent's shell tool: its `nexus whoami` is itself, what it
    sends comes from it, and its `nexus read` takes nothing of the outer agent's mail."""
    o_id = start(world, outer, "o1")
    world.nexus("send", o_id, "for the outer agent only")
    evidence = tmp_path / "inner-whoami.json"
    inner_cmd = (world.claude_cmd("i1", "work", session_id=str(uuid.uuid4()))
                 if inner == "claude" else world.codex_cmd("i1", "work"))
    world.script(
        o2=[{"shell": shlex.join(inner_cmd)}, {"text": "the inner agent is done"}],
        i1=[{"shell": f"{NEXUS} whoami --json > {evidence}"},
            {"shell": f"{NEXUS} send {o_id} 'hello from the inner agent'"},
            {"shell": f"{NEXUS} read --json"}, {"tool": "mcp__nexus__whoami", "input": {}},
            {"text": "done"}])
    resume(world, o_id, "o2")
    who = json.loads(evidence.read_text())
    assert who["id"] != o_id and who["id"].startswith(f"{inner}:") and who["registered"]
    # its MCP server (started by the inner client) answers as the inner session too
    mcp_whoami = re.compile(r'id\\*":\s*\\*"' + re.escape(who["id"]) + r'\\*".{0,400}?'
                            r'source\\*":\s*\\*"mcp')
    assert any(mcp_whoami.search(json.dumps(e["body"])) for e in world.requests("i1"))
    rows = world.db().execute("SELECT sender, text, read_at FROM messages WHERE recipient = ?"
                              " ORDER BY seq", (o_id,)).fetchall()
    by_text = {r["text"]: r for r in rows}
    assert by_text["hello from the inner agent"]["sender"] == who["id"]
    assert by_text["for the outer agent only"]["read_at"] is None  # the inner read took none
    parent = world.db().execute("SELECT parent FROM sessions WHERE id = ?", (who["id"],))
    assert parent.fetchone()["parent"] == o_id


def type_line(world: World, screen: str, text: str, took: Callable[[], object]) -> None:
    """What a person does: type a line, see it (a slash command with its menu), press Enter, and
    see it take effect (`took()`). The TUI must be ready for it (after Codex's /new: the new
    thread's header drawn; an Enter before that is dropped)."""
    world.tmux_keys(screen, "-l", text)
    wait_until(lambda: text in world.tmux_screen(screen), 60,
               lambda: f"{text!r} on the screen:\n{world.tmux_screen(screen)}")
    world.tmux_keys(screen, "Enter")
    wait_until(took, 90, lambda: f"{text!r} to take effect:\n{world.tmux_screen(screen)}")


def answer(world: World, screen: str, key: str, asking: str, took: Callable[[], object]) -> None:
    """What a person does at a prompt drawn with `asking` on it: press `key`, and again if the
    prompt is still drawn 2 s later, until `took()`. Claude Code drops the keys of the first
    moment after it draws a permission prompt (measured with the pinned client: an Enter at once
    is lost, one 3 s later taken), so one press is not enough; once the prompt has gone from the
    screen no key is sent."""
    deadline, pressed = time.monotonic() + 60, float("-inf")
    while not took():
        now = time.monotonic()
        assert now < deadline, f"{key} to be taken:\n{world.tmux_screen(screen)}"
        if asking in world.tmux_screen(screen) and now - pressed >= 2:
            world.tmux_keys(screen, key)
            pressed = now
        time.sleep(0.1)


@pytest.mark.realprocs
@pytest.mark.parametrize("client,command", [("claude", "/clear"), ("codex", "/new")])
def test_the_conversation_after_clear_inherits_mail_and_obligations(world, client, command):
    """The person clears a conversation that has a message waiting and an obligation open: the
    new conversation is told about both at its first prompt, reads the message, reports the
    task, and what is sent to the old id afterwards reaches it."""
    world.nexus("config", "set", "maxAutoTurns", "0")  # no wake: the message waits for the clear
    report = (f"{NEXUS} report \"$({NEXUS} tasks --open --json | {FIRST_TASK})\" "
              "--status completed --result 'reviewed by the successor'")
    world.script(h1=[{"text": "first turn done"}],
                 h2=[{"shell": f"{NEXUS} read"}, {"shell": report}, {"text": "all handled"}])
    if client == "claude":
        world.claude_onboarded()
        old = f"claude:{uuid.uuid4()}"
        screen = world.tmux_start("claude", [world.claude_bin, "--session-id", old.split(":")[1],
                                             "--dangerously-skip-permissions", "[run:h1] hello"])
    else:
        screen = world.tmux_start("codex", [world.codex_bin, "--dangerously-bypass-hook-trust",
                                            "[run:h1] hello"])
        wait_until(lambda: any(s["client"] == "codex" for s in world.sessions()),
                   what="the codex session")
        old = world.session("codex")["id"]
    wait_until(lambda: any(s["id"] == old and s["status"] in ("idle", "listening")
                           for s in world.sessions()), what="the first turn's end")
    world.nexus("send", old, "the waiting message")
    task = json.loads(world.nexus("delegate", old, "review auth.py", "--json").stdout)["id"]
    def cleared() -> bool:  # the first turn gone from the screen, and a TUI that takes keys
        shown = world.tmux_screen(screen)  # (Codex's: once the new thread's header is drawn)
        return "first turn done" not in shown and (client == "claude" or "permissions:" in shown)

    type_line(world, screen, command, cleared)
    type_line(world, screen, "[run:h2] carry on", lambda: world.requests("h2"))
    wait_until(lambda: world.reached("h2", "reviewed by the successor"), timeout=90,
               what=lambda: f"the successor's turn:\n{world.tmux_screen(screen)}\n"
                            f"{world.sessions()}")
    new = next(s["id"] for s in world.sessions() if s["client"] == client and s["id"] != old)
    first = json.dumps(world.requests("h2")[0]["body"])
    assert "the waiting message" in first and f"TASK {task}" in first  # announced at once
    assert world.reached("h2", "the waiting message")  # and read
    row = world.db().execute("SELECT status, target, result FROM tasks WHERE id = ?",
                             (task,)).fetchone()
    assert (row["status"], row["target"]) == ("completed", new), dict(row)
    mid = json.loads(world.nexus("send", old, "after the clear", "--json").stdout)["message_id"]
    recipient = world.db().execute("SELECT recipient FROM messages WHERE id = ?",
                                   (mid,)).fetchone()[0]
    assert recipient == new
    assert json.loads(world.nexus("status", old, "--json").stdout)["successor"] == new


def test_claude_and_codex_hold_a_meeting_through_mcp_tools(world):
    """Seed 004's workspace over MCP with the real clients: Claude Code starts a meeting and
    proposes, Codex (a participant by posting) decides, Claude ends it: the decision is in the
    meeting's record, and it reached Claude's model as the announcement of a DECISION."""
    world.nexus("install", "claude", "--tools", "default,workspace")
    world.nexus("install", "codex", "--tools", "default,workspace")
    x_id = start(world, "codex", "x0")
    world.script(
        x1=[{"tool": "mcp__nexus__list_meetings", "input": {"status": "active"}},
            {"tool": "mcp__nexus__find", "input": {"query": "gRPC", "kind": "meeting"}},
            {"tool": "mcp__nexus__send_message",
             "input": {"message": "agreed: REST", "category": "DECISION"}},
            {"text": "decided"}],
        c2=[{"tool": "mcp__nexus__end_meeting", "input": {"summary": "REST it is"}},
            {"text": "ended"}],
    )
    c_id = start(world, "claude", "c1", [  # its first turn starts the meeting
        {"tool": "mcp__nexus__start_meeting", "input": {"topic": "api style"}},
        {"tool": "mcp__nexus__send_message",
         "input": {"message": "proposal: REST over gRPC", "category": "PROPOSAL"}},
        {"text": "proposed"}])
    resume(world, x_id, "x1")
    resume(world, c_id, "c2")
    meetings = json.loads(world.nexus("meeting", "list", "--json").stdout)["meetings"]
    assert len(meetings) == 1, meetings
    m = meetings[0]
    assert (m["status"], m["topic"], m["initiator"], m["summary"]) == (
        "closed", "api style", c_id, "REST it is")
    assert set(m["participants"]) == {c_id, x_id}
    assert [(d["from"], d["text"]) for d in m["decisions"]] == [(x_id, "agreed: REST")]
    # codex's model saw the meeting through its tools; claude's was told of the decision
    assert world.reached("x1", "proposal: REST over [gRPC]")  # find's snippet of the meeting
    assert world.reached("x1", '\\"api style\\" started')  # its hook told it the meeting began
    assert world.reached("c2", "DECISION in meeting")
    assert world.reached("c2", "agreed: REST")  # end_meeting's result carries the record
    assert not world.reached("c1", "caller_unknown") and not world.reached("x1", "caller_unknown")
    actions = [e["action"] for e in json.loads(world.nexus("events", "--action", "meeting",
                                                           "--json").stdout)["events"]]
    assert actions == ["meeting.end", "meeting.start"]


# -- file reservations: the edit refused at the edit -------------------------------------------

PARSER, REPLACED = "x = 1\n", "x = 2\n"
PATCH = "*** Begin Patch\n*** Update File: src/parser.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"


def reserved(world: World) -> list[dict]:
    return json.loads(world.nexus("reservations", "--all-workspaces", "--json").stdout)["items"]


def hold_parser(world: World, client: str) -> tuple[str, dict]:
    """An interactive session (in tmux: it outlives its turns, as a person's session does) whose
    first turn reserves src/parser.py from its shell; returns its screen and the holder."""
    world.script(h1=[{"shell": f"{NEXUS} reserve src/parser.py --reason 'refactor parser'"},
                     {"text": "reserved"}])
    if client == "claude":
        world.claude_onboarded()
        screen = world.tmux_start("claude", [world.claude_bin, "--session-id", str(uuid.uuid4()),
                                             "--dangerously-skip-permissions", "[run:h1] reserve"])
    else:
        screen = world.tmux_start("codex", [world.codex_bin, "--dangerously-bypass-hook-trust",
                                            "[run:h1] reserve"])
    wait_until(lambda: reserved(world), timeout=90,
               what=lambda: f"the reservation; screen:\n{world.tmux_screen(screen)}")
    return screen, reserved(world)[0]["holder"]


def edit_parser(world: World, client: str, run: str, session: str | None) -> str:
    """One turn of `client` that edits src/parser.py with its own edit tool (Claude Code: Read
    then Write; Codex: apply_patch); a new conversation unless `session` names one."""
    path = str(world.work / "src" / "parser.py")
    steps = ([{"tool": "Read", "input": {"file_path": path}},
              {"tool": "Write", "input": {"file_path": path, "content": REPLACED}}]
             if client == "claude" else [{"patch": PATCH}])
    world.script(**{run: [*steps, {"text": "edited"}]})
    if session:
        resume(world, session, run)
        return session
    if client == "claude":
        sid = str(uuid.uuid4())
        world.claude(run, "edit the parser", session_id=sid)
        return f"claude:{sid}"
    before = {s["id"] for s in world.sessions()}
    world.codex(run, "edit the parser")
    return next(s["id"] for s in world.sessions() if s["id"] not in before)


@pytest.mark.parametrize("holder,editor", [("claude", "claude"), ("codex", "claude"),
                                           ("claude", "codex")])
def test_an_edit_of_a_reserved_file_is_refused_until_it_is_released(world, holder, editor):
    """A session holds src/parser.py exclusively; another real session's edit tool call is
    denied by its PreToolUse hook (the file unchanged, the reason, naming the holder, reaching
    its model); after the release the same edit goes through."""
    (world.work / "src").mkdir()
    parser = world.work / "src" / "parser.py"
    parser.write_text(PARSER)
    if editor == "codex":  # Codex offers apply_patch only for models whose metadata has it
        config = world.home / ".codex" / "config.toml"
        config.write_text(config.read_text().replace('model = "gpt-5"\n',
                                                     'model = "gpt-5.5"\n', 1))
    screen, who = hold_parser(world, holder)
    session = edit_parser(world, editor, "e1", None)
    assert parser.read_text() == PARSER
    assert world.reached("e1", f"src/parser.py is reserved by {who['name']} ({who['handle']})")
    assert world.reached("e1", '\\"refactor parser\\"; ask it with')
    world.script(h2=[{"shell": f"{NEXUS} release src/parser.py"}, {"text": "released"}])
    type_line(world, screen, "[run:h2] release it", lambda: world.requests("h2"))
    wait_until(lambda: not reserved(world), timeout=90,
               what=lambda: f"the release; screen:\n{world.tmux_screen(screen)}")
    edit_parser(world, editor, "e2", session)  # the same conversation, the same edit
    assert parser.read_text() == REPLACED


@pytest.mark.parametrize("how", ["padded", "shell"])
def test_a_codex_patch_of_a_reserved_file_is_refused_in_every_form_codex_applies(world, how):
    """Codex applies a patch whose header is padded (its parser trims it), and with gpt-5 (no
    apply_patch tool) it patches through its shell tool, `apply_patch <<'EOF' ... EOF`, which
    its PreToolUse reports as Bash: both are denied while another session holds the file, and
    the same step edits it once released (so the form really is one Codex applies)."""
    (world.work / "src").mkdir()
    parser = world.work / "src" / "parser.py"
    parser.write_text(PARSER)
    if how == "padded":  # the freeform apply_patch tool: a model whose metadata has it
        config = world.home / ".codex" / "config.toml"
        config.write_text(config.read_text().replace('model = "gpt-5"\n',
                                                     'model = "gpt-5.5"\n', 1))
        step = {"patch": PATCH.replace("*** Update File:", "  *** Update File:")}
    else:  # the default gpt-5: the shell tool
        step = {"shell": "apply_patch <<'EOF'\n" + PATCH + "EOF"}
    screen, who = hold_parser(world, "claude")
    world.script(e1=[step, {"text": "edited"}])
    world.codex("e1", "edit the parser")
    assert parser.read_text() == PARSER
    assert world.reached("e1", f"src/parser.py is reserved by {who['name']} ({who['handle']})")
    world.script(h2=[{"shell": f"{NEXUS} release src/parser.py"}, {"text": "released"}])
    type_line(world, screen, "[run:h2] release it", lambda: world.requests("h2"))
    wait_until(lambda: not reserved(world), timeout=90,
               what=lambda: f"the release; screen:\n{world.tmux_screen(screen)}")
    world.script(e2=[step, {"text": "edited"}])
    world.codex("e2", "edit the parser")
    assert parser.read_text() == REPLACED


SHELL_WRITES = {
    "claude": ["echo 'x = 2' > src/parser.py", "D=src; cd $D && sed -i s/1/2/ parser.py",
               "bash -c 'cd src && tee parser.py <<< \"x = 2\" >/dev/null'"],
    "codex": ["echo 'x = 2' > src/parser.py",
              "D=src; cd $D && apply_patch <<'EOF'\n" + PATCH.replace("src/", "") + "EOF",
              "env -C src apply_patch <<'EOF'\n" + PATCH.replace("src/", "") + "EOF",
              "bash -c \"cd src && apply_patch <<'EOF'\n" + PATCH.replace("src/", "") + "EOF\n\""],
}


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_shell_command_writing_a_reserved_file_is_refused_in_both_clients(world, client):
    """Claude Code's Bash and Codex's shell tool: a redirection, sed -i, tee, and Codex's shell
    patches after `D=src; cd $D`, `env -C src` or `bash -c "cd src && ..."` are denied while
    another session holds the file (the file unchanged, the reason reaching the model); once
    released, the first of them writes it (so the form is one the client really runs)."""
    (world.work / "src").mkdir()
    parser = world.work / "src" / "parser.py"
    parser.write_text(PARSER)
    screen, who = hold_parser(world, "codex" if client == "claude" else "claude")
    for i, command in enumerate(SHELL_WRITES[client]):
        run = f"w{i}"
        world.script(**{run: [{"shell": command}, {"text": "written"}]})
        (world.claude(run, "write the parser", session_id=str(uuid.uuid4()))
         if client == "claude" else world.codex(run, "write the parser"))
        assert parser.read_text() == PARSER, command
        assert world.reached(run, f"src/parser.py is reserved by {who['name']} ({who['handle']})"
                             ), command
    world.script(h2=[{"shell": f"{NEXUS} release src/parser.py"}, {"text": "released"}])
    type_line(world, screen, "[run:h2] release it", lambda: world.requests("h2"))
    wait_until(lambda: not reserved(world), timeout=90,
               what=lambda: f"the release; screen:\n{world.tmux_screen(screen)}")
    world.script(done=[{"shell": SHELL_WRITES[client][0]}, {"text": "written"}])
    (world.claude("done", "write the parser", session_id=str(uuid.uuid4()))
     if client == "claude" else world.codex("done", "write the parser"))
    assert parser.read_text() == REPLACED


# -- session insight: the transcripts the real clients write -----------------------------------


def insight(world: World, *args: str) -> dict:
    return json.loads(world.nexus(*args, "--json").stdout)


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_log_stats_and_search_read_what_the_real_client_wrote(world, client):
    """The prompt, the answer and the tool calls of scripted turns come back from `nexus log`
    for the transcript the pinned client wrote in this run; stats count the turns that ran; the
    index answers what a scan answers."""
    world.script(x1=[{"shell": "echo hello-from-$((20+22))"},
                     {"tool": "mcp__nexus__whoami", "input": {}},
                     {"text": "FIRST ANSWER from the scripted turn"}],
                 x2=[{"text": "SECOND ANSWER after the resume"}])
    if client == "claude":
        sid = f"claude:{uuid.uuid4()}"
        world.claude("x1", "do the scripted work", session_id=sid.split(":", 1)[1])
    else:
        world.codex("x1", "do the scripted work")
        sid = world.session("codex")["id"]
    resume(world, sid, "x2", "and once more")
    out = insight(world, "log", sid, "--tail", "500", "--messages", "500")
    assert out["provenance"]["path_source"] == "hook" and out["total_exact"]
    assert out["counts"]["malformed"] == 0 and out["counts"]["unknown"] == 0, out["counts"]
    events = out["events"]
    prompts = [e["text"] for e in events if e["type"] == "user/message"]
    assert "[run:x1] do the scripted work" in prompts and "[run:x2] and once more" in prompts
    answers = [e["text"] for e in events if e["type"] == "assistant/message"]
    assert answers[-2:] == ["FIRST ANSWER from the scripted turn", "SECOND ANSWER after the resume"]
    calls = [e for e in events if e["type"] == "tool/call"]
    assert [c["tool"] for c in calls] == [("Bash" if client == "claude" else "exec_command"),
                                          "mcp__nexus__whoami"]
    assert "hello-from-$((20+22))" in json.dumps(calls[0]["args"])
    results = {e["call_id"]: e for e in events if e["type"] == "tool/result"}
    assert "hello-from-42" in results[calls[0]["call_id"]]["text"]
    assert sid in results[calls[1]["call_id"]]["text"]
    assert not results[calls[1]["call_id"]]["is_error"]
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    stats = insight(world, "stats", sid)
    assert stats["rounds"] == 2 and stats["steps"] == 4 and stats["tool_calls"] == 2
    assert stats["user_messages"] == 2 and stats["tool_errors"] == 0
    assert stats["input_tokens"] > 0 and stats["output_tokens"] > 0
    tail = insight(world, "log", sid, "--tail-scan", "--tail", "2", "--preset", "dialog")
    assert [e["text"] for e in tail["events"][-1:]] == ["SECOND ANSWER after the resume"]
    indexed = insight(world, "search", "hello-from-42")
    scanned = insight(world, "search", "hello-from-42", "--no-index")
    assert [h["session_id"] for h in indexed["results"]] == [sid]
    assert indexed["results"] == scanned["results"] and indexed["index"]["used"]
    listed = {s["id"]: s for s in insight(world, "sessions")["items"]}
    assert listed[sid]["known"] and listed[sid]["message_count"] == 4
    board = world.nexus("board", "--once", "--include-offline", "--width", "80").stdout
    assert all(len(line) <= 80 for line in board.splitlines())
    name = next(s["name"] for s in world.sessions() if s["id"] == sid)
    assert any(line.lstrip("*").startswith(name) and "SECOND ANSWER" in line
               for line in board.splitlines()), board


def test_sessions_nexus_never_saw_are_listed_and_read(world):
    """Without nexus's hooks (installed after the session ran, or not at all) a session is still
    found through its client's transcript directory, by id or handle."""
    world.nexus("uninstall", "claude")
    world.nexus("uninstall", "codex")
    steps = [{"shell": "echo unseen-by-nexus"}, {"text": "UNSEEN ANSWER"}]
    world.script(u1=steps, u2=steps)
    raw = str(uuid.uuid4())
    world.claude("u1", "work without nexus", session_id=raw)
    world.codex("u2", "work without nexus")
    listed = insight(world, "sessions")["items"]
    assert {s["client"] for s in listed} == {"claude", "codex"}
    assert all(not s["known"] and s["status"] is None for s in listed)
    assert {s["title"] for s in listed} == {"[run:u1] work without nexus",
                                            "[run:u2] work without nexus"}
    for s in listed:
        out = insight(world, "log", s["id"], "--preset", "dialog")
        assert out["provenance"]["path_source"] == "found"
        assert out["events"][-1]["text"] == "UNSEEN ANSWER"
    handle = "s-" + raw.replace("-", "")[:12]
    assert insight(world, "log", handle)["session"]["id"] == f"claude:{raw}"
    assert insight(world, "stats", f"claude:{raw}")["rounds"] == 1


def board_row(screen: str, name: str) -> list[str]:
    line = next(x for x in screen.splitlines() if name in x)
    return re.split(r"\s{2,}", line.strip())


def test_the_live_board_redraws_as_sessions_work_and_shows_their_deadlock(world):
    """Two real sessions delegate to each other: the board, running in a terminal, redraws on
    the wake channel and data_version as they do, shows the deadlock, and opens a log on a key."""
    a = start(world, "claude", "a1")
    b = start(world, "codex", "b1")
    names = {s["id"]: s["name"] for s in world.sessions()}
    screen = world.tmux_start("board", [NEXUS, "board", "--include-offline", "--width", "120"])
    wait_until(lambda: names[a] in world.tmux_screen(screen) and names[b] in
               world.tmux_screen(screen), what=lambda: world.tmux_screen(screen))
    assert board_row(world.tmux_screen(screen), names[a])[4] == "0"
    world.nexus("send", a, "ping from the shell")
    wait_until(lambda: board_row(world.tmux_screen(screen), names[a])[4] == "1", timeout=30,
               what=lambda: "the unread count: " + world.tmux_screen(screen))
    world.script(a2=[{"shell": f"{NEXUS} delegate {b} 'review the parser, then tell me'"},
                     {"text": "delegated"}],
                 b2=[{"shell": f"{NEXUS} delegate {a} 'first fix the tests I depend on'"},
                     {"text": "delegated back"}])
    resume(world, a, "a2")
    resume(world, b, "b2")
    waits = json.loads(world.nexus("waits", "--json").stdout)
    assert waits["deadlock"] and {p["id"] for p in waits["deadlocks"][0]["sessions"]} == {a, b}
    wait_until(lambda: "DEADLOCK" in world.tmux_screen(screen), timeout=30,
               what=lambda: world.tmux_screen(screen))
    first = board_row(world.tmux_screen(screen), names[a])[0].split(".", 1)[0]
    world.tmux_keys(screen, first)
    wait_until(lambda: f"log of {names[a]}" in world.tmux_screen(screen), timeout=30,
               what=lambda: world.tmux_screen(screen))
    assert "delegated" in world.tmux_screen(screen)
    world.tmux_keys(screen, "q")
    wait_until(lambda: subprocess.run(["tmux", "-S", world.tmux_socket, "has-session", "-t",
                                       screen], capture_output=True).returncode != 0,
               timeout=30, what="the board to quit on q")


# -- team mode: the same clients on the team database (PostgreSQL, tests/conftest.py pg_cluster:
# a Unix socket, reachable inside `unshare -n` as on loopback) ---------------------------------

@pytest.fixture
def team_world(tmp_path, pg_cluster):
    from test_team import schema

    _, url = schema(pg_cluster, migrate=True)
    w = World(tmp_path)
    w.env["NEXUS_DATABASE_URL"] = url
    w.install()
    w.url = url  # type: ignore[attr-defined]
    yield w
    w.close()


def other_machine(world: World) -> dict:
    """The environment of a person's shell on another machine: its own home and machine id."""
    home = world.root / "laptop"
    home.mkdir(exist_ok=True)
    return {"NEXUS_HOME": str(home), "NEXUS_MACHINE_ID": "laptop-machine-id"}


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_team_mail_from_another_machine_arrives_after_the_next_tool_call(team_world, client):
    """No marker can be raised across machines: in team mode the installed PostToolUse guard
    lets the call through and the hook asks the database (one round trip when nothing is new),
    so the message reaches the model after the running tool call, not at the turn's end."""
    world = team_world
    world.script(m1=[{"shell": "echo busy"}, {"shell": HELD},
                     {"shell": "echo more work"}, {"shell": "echo and more"}, {"text": "done"}])
    proc = world.claude("m1", "work", session_id=str(uuid.uuid4()), background=True) \
        if client == "claude" else world.codex("m1", "work", background=True)
    wait_until(lambda: (world.work / "started").exists(), what="the turn's second tool call")
    me = world.session(client)["id"]
    assert not world.reached("m1", "[nexus] 1 unread")
    world.nexus("send", me, "news from the laptop", "--all-workspaces",
                env=other_machine(world))
    (world.work / "sent").touch()  # the held tool call ends only now
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    seen = [i for i, r in enumerate(world.requests("m1"))
            if "news from the laptop" in json.dumps(r["body"])]
    assert seen and seen[0] <= 3, seen  # right after the held call, before the turn ended
    assert not (world.store / "news").exists() or not list((world.store / "news").iterdir())
    assert not (world.store / "nexus.db").exists()  # everything went to the team database


def test_team_delegation_is_reported_to_the_listening_dispatcher(team_world):
    import psycopg

    world = team_world
    d_id = delegated_and_reported(world, "claude", "codex")
    with psycopg.connect(world.url, autocommit=True) as conn:  # type: ignore[attr-defined]
        ledger = conn.execute(
            "SELECT t.status, t.result, m.delivered_at FROM tasks t JOIN messages m"
            " ON m.id = t.report_message_id WHERE t.sender = %s", (d_id,)).fetchall()
    assert [(status, bool(delivered)) for status, _, delivered in ledger] == [("completed", True)]
    assert "hello.txt" in ledger[0][1]
    assert not (world.store / "nexus.db").exists()


# -- Codex hook trust: the hash nexus records is the one Codex checks ----------------------------


def codex_hooks_list(world: World) -> dict[str, str]:
    """Codex's own view of its hooks (app-server `hooks/list`): key -> trust status."""
    import select

    with subprocess.Popen([world.codex_bin, "app-server"], env=world.env, cwd=world.work,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as proc:
        try:
            assert proc.stdin and proc.stdout
            for message in ({"id": 1, "method": "initialize",
                             "params": {"clientInfo": {"name": "nexus-test", "version": "1"}}},
                            {"method": "initialized"},
                            {"id": 2, "method": "hooks/list",
                             "params": {"cwds": [str(world.work)]}}):
                proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            fd, pending = proc.stdout.fileno(), b""
            poller = select.poll()  # not select(): a worker's descriptors may be past 1023
            poller.register(fd, select.POLLIN)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if not poller.poll(1000):
                    continue
                chunk = os.read(fd, 1 << 16)
                assert chunk, "codex app-server ended before answering hooks/list"
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    reply = json.loads(line)
                    if reply.get("id") == 2:
                        return {h["key"]: h["trustStatus"]
                                for h in reply["result"]["data"][0]["hooks"]}
            raise AssertionError("codex app-server did not answer hooks/list")
        finally:
            proc.kill()


def codex_reviewed(world: World, run: str) -> None:
    """`codex exec` as a user runs it: hooks run only when reviewed (no bypass flag)."""
    world.run([world.codex_bin, "exec", "--skip-git-repo-check", f"[run:{run}] hello"])


def as_person(world: World, *args: str) -> subprocess.CompletedProcess:
    """`nexus ARGS` typed by the person at a terminal (a pty from script(1), in its foreground)."""
    return subprocess.run(["script", "-qec", shlex.join([NEXUS, *args]), "/dev/null"],
                          env=world.env, cwd=world.work, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


def test_codex_runs_the_hooks_install_trust_recorded_and_skips_a_changed_one(world):
    """Without --dangerously-bypass-hook-trust, Codex runs nexus's hooks once `nexus install
    codex --trust` recorded their hashes (Codex itself reports every handler trusted), skips them
    while unreviewed and again once a handler changed since; doctor says which."""
    world.script(c1=[{"text": "one"}], c2=[{"text": "two"}], c3=[{"text": "three"}],
                 c4=[{"text": "four"}])
    hooks_file = world.home / ".codex" / "hooks.json"
    assert set(codex_hooks_list(world).values()) == {"untrusted"}
    codex_reviewed(world, "c1")
    assert not [s for s in world.sessions() if s["client"] == "codex"]  # skipped, silently
    refused = world.nexus("install", "codex", "--trust", check=False)  # no terminal
    assert refused.returncode == 5 and "people_only" in refused.stderr, refused.stderr
    done = as_person(world, "install", "codex", "--trust")
    assert done.returncode == 0, done.stdout
    listed = codex_hooks_list(world)
    assert len(listed) == 9 and set(listed.values()) == {"trusted"}, listed
    codex_reviewed(world, "c2")
    first = world.session("codex")["id"]  # SessionStart and the prompt hook ran
    trust = {c["name"]: c for c in json.loads(world.nexus("doctor", "--quick", "--json").stdout)[
        "checks"]}["codex hook trust"]
    assert trust["status"] == "ok", trust
    # a reinstall that changed nexus's handlers (here a timeout each): trusted no more
    table = json.loads(hooks_file.read_text())
    for groups in table["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["timeout"] += 1 if handler["timeout"] < 3 else -1
    hooks_file.write_text(json.dumps(table))
    listed = codex_hooks_list(world)
    assert set(listed.values()) == {"modified"}, listed
    codex_reviewed(world, "c3")
    assert [s["id"] for s in world.sessions() if s["client"] == "codex"] == [first]
    trust = {c["name"]: c for c in json.loads(world.nexus("doctor", "--quick", "--json").stdout)[
        "checks"]}["codex hook trust"]
    assert trust["status"] == "warn" and "9 changed since review" in trust["detail"], trust
    # recording the new hashes makes them run again
    reviewed = (world.home / ".codex" / "config.toml").read_text()
    from nexus_cli.clients.codex import config

    conf = config.trust_state(str(world.home / ".codex" / "config.toml"), reviewed,
                              str(hooks_file), table)
    assert conf is not None
    (world.home / ".codex" / "config.toml").write_text(conf)
    assert set(codex_hooks_list(world).values()) == {"trusted"}
    codex_reviewed(world, "c4")
    assert len([s for s in world.sessions() if s["client"] == "codex"]) == 2


# -- presence that means "can answer now" (issue 29) ---------------------------------------------


def interactive(world: World, client: str, run: str, *flags: str) -> tuple[str, str]:
    """An interactive session in tmux whose first turn has ended; returns (screen, its id)."""
    world.script(**{run: [{"text": "first turn done"}]})
    if client == "claude":
        world.claude_onboarded()
        raw = str(uuid.uuid4())
        screen = world.tmux_start("claude", [world.claude_bin, "--session-id", raw, *flags,
                                             f"[run:{run}] hello"])
        sid = f"claude:{raw}"
    else:
        screen = world.tmux_start("codex", [world.codex_bin, "--dangerously-bypass-hook-trust",
                                            *flags, f"[run:{run}] hello"])
        wait_until(lambda: any(s["client"] == "codex" for s in world.sessions()),
                   what=lambda: f"the codex session; screen:\n{world.tmux_screen(screen)}")
        sid = world.session("codex")["id"]
    world.wait_status(sid, "listening")  # its turn ended; its background waiter runs
    return screen, sid


def row_of(world: World, sid: str) -> sqlite3.Row:
    return world.db().execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()


def shown(world: World, sid: str) -> dict:
    return next(s for s in world.sessions() if s["id"] == sid)


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_an_interactive_session_killed_with_9_is_offline_at_the_next_look(world, client):
    """kill -9 of the client (no SessionEnd runs): the next look says offline, with why; its
    name no longer reaches it, mail to its handle is kept, and its waiter has gone too."""
    _, sid = interactive(world, client, "k1", *(
        ["--dangerously-skip-permissions"] if client == "claude" else []))
    row = row_of(world, sid)
    kill9(row["client_pid"])
    gone = shown(world, sid)
    assert gone["status"] == "offline" and "exited" in gone["status_reason"], gone
    sent = json.loads(world.nexus("send", gone["handle"], "kept for you", "--json").stdout)
    assert sent["to"]["status"] == "offline" and "when it resumes" in sent["outlook"]
    by_name = world.nexus("send", gone["name"], "x", check=False)
    assert by_name.returncode == 3 and "is offline" in by_name.stderr
    waiter = row["waiter_pid"]
    wait_until(lambda: not os.path.exists(f"/proc/{waiter}"), timeout=30,
               what="the waiter noticing its client is gone")
    assert shown(world, sid)["status"] == "offline"


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_permission_prompt_left_unanswered_is_waiting(world, client):
    """The person has not answered a permission prompt: the session is `waiting`, with what
    for, and a sender is told it cannot answer until then; once answered it goes on. Claude Code
    says so in its own registry file (verified here as the pinned client writes it); Codex only
    through its PermissionRequest hook and its rollout."""
    target = world.root / "approved.txt"
    if client == "claude":
        screen, sid = interactive(world, client, "p1", "--permission-mode", "default")
        world.script(p2=[{"shell": f"touch {target}"}, {"text": "touched"}])
    else:
        screen, sid = interactive(world, client, "p1", "-c", 'approval_policy="on-request"',
                                  "-c", 'sandbox_mode="read-only"')
        world.script(p2=[{"tool": "exec_command", "input": {
            "cmd": f"touch {target}", "sandbox_permissions": "require_escalated",
            "justification": "write the file"}}, {"text": "touched"}])
    type_line(world, screen, "[run:p2] touch it", lambda: world.requests("p2"))
    world.wait_status(sid, "waiting")
    waiting = shown(world, sid)
    assert waiting["waiting_for"].startswith("a permission prompt: Bash touch "), waiting
    sent = json.loads(world.nexus("send", sid, "a question", "--json").stdout)
    assert sent["to"]["status"] == "waiting" and "cannot answer until" in sent["outlook"]
    if client == "claude":
        row = row_of(world, sid)
        file = world.home / ".claude" / "sessions" / f"{row['client_pid']}.json"
        data = json.loads(file.read_text())
        assert (data["pid"], str(data["procStart"]), data["sessionId"]) == (
            row["client_pid"], row["client_start"], sid.split(":", 1)[1])
        assert (data["status"], data["waitingFor"]) == ("waiting", "permission prompt")
    wait_until(lambda: "1. Yes" in world.tmux_screen(screen), 60,  # the prompt's choices drawn
               lambda: f"the permission prompt:\n{world.tmux_screen(screen)}")
    answer(world, screen, "Enter" if client == "claude" else "y", "1. Yes", target.exists)
    wait_until(lambda: shown(world, sid)["status"] != "waiting", timeout=60,
               what=lambda: f"the wait ending: {shown(world, sid)}")


def test_a_killed_waiter_is_visible_and_senders_are_told(world):
    _, sid = interactive(world, "claude", "w1", "--dangerously-skip-permissions")
    waiter = row_of(world, sid)["waiter_pid"]
    kill9(waiter)
    idle = shown(world, sid)
    assert (idle["status"], idle["wakeable"]) == ("idle", False) and "killed" in \
        idle["status_reason"], idle
    sent = json.loads(world.nexus("send", sid, "for your next prompt", "--json").stdout)
    assert sent["outlook"].startswith("nothing can wake it now") and "next prompt" in \
        sent["outlook"]
    board = world.nexus("board", "--once", "--width", "160").stdout
    assert "idle" in board and ", no wake" in board, board


def test_an_announcement_waits_for_the_main_conversation_not_a_subagent(world):
    """A message arrives while a subagent (Task tool) works: its tool calls' hooks announce
    nothing into its context, and the receipt says delivered only once the main conversation
    got it (after the Agent tool call). The subagent's MCP calls act as the main session:
    whoami says so, send is refused."""
    raw = str(uuid.uuid4())
    sid = f"claude:{raw}"
    gate, ready = world.root / "go", world.root / "ready"
    world.script(
        s1=[{"tool": "Agent", "input": {"description": "side work", "prompt": "[run:s2] do it",
                                        "subagent_type": "general-purpose",
                                        "run_in_background": False}},
            {"text": "main done"}],
        s2=[{"shell": f"touch {ready}; while [ ! -e {gate} ]; do sleep 0.1; done"},
            {"tool": "mcp__nexus__whoami", "input": {}},
            {"tool": "mcp__nexus__send", "input": {"target": sid, "text": "from the subagent"}},
            {"text": "sub done"}])
    run = world.claude("s1", "use a subagent", session_id=raw, background=True)
    wait_until(ready.exists, timeout=90, what="the subagent's shell")
    mid = json.loads(world.nexus("send", sid, "for the main agent", "--json").stdout)[
        "message_id"]
    gate.touch()
    assert run.wait(timeout=180) == 0, run.stderr.read()
    assert not world.reached("s2", "for the main agent")
    assert world.reached("s1", "for the main agent")
    receipt = json.loads(world.nexus("message", "status", mid, "--json").stdout)
    assert receipt["state"] == "delivered" and receipt["delivered_via"] in ("tool", "stop")
    results = [json.loads(b["content"]) for r in world.requests("s2")
               for m in r["body"]["messages"] if m["role"] == "user"
               for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result" and isinstance(b.get("content"), str)
               and b["content"].startswith("{")]
    who = next(r for r in results if "subagent" in r)
    assert who["id"] == sid and who["subagent"]  # acting as the main session, and saying so
    assert world.reached("s2", "subagent_refused")
    assert world.db().execute("SELECT count(*) FROM messages WHERE text = 'from the subagent'"
                              ).fetchone()[0] == 0


# -- wakes that read as news, not errors (issue 38) ----------------------------------------------


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_persons_listening_session_is_woken_with_news_not_errors(world, client):
    """A person's interactive session in listen mode: mail that arrived during its turn
    continues it (Claude Code: "Stop hook says", never "reported a problem"; Codex 0.171.0 has
    only "Blocked by hook"); then it listens in the background, its screen free (no hook
    running, Esc at the prompt ends nothing), and a message wakes it as news."""
    started, sent = world.work / "started", world.work / "sent"
    world.script(w1=[{"shell": f"{NEXUS} listen on"}, {"shell": HELD},
                     {"text": "first turn done"}, {"text": "saw the task"},
                     {"text": "woken while listening"}])
    if client == "claude":
        world.claude_onboarded()
        raw = str(uuid.uuid4())
        screen = world.tmux_start("claude", [world.claude_bin, "--session-id", raw,
                                             "--dangerously-skip-permissions", "[run:w1] hello"])
        sid = f"claude:{raw}"
    else:
        screen = world.tmux_start("codex", [world.codex_bin, "--dangerously-bypass-hook-trust",
                                            "[run:w1] hello"])
    wait_until(started.exists, timeout=90, what=lambda: world.tmux_screen(screen))
    if client == "codex":
        sid = world.session("codex")["id"]
    # queued for its next turn: no tool call announces it, the turn's Stop does
    world.nexus("delegate", sid, "a queued job", "--mode", "queue")
    sent.touch()
    wait_until(lambda: world.reached("w1", "TASK t-"), timeout=90,
               what=lambda: world.tmux_screen(screen))
    world.wait_status(sid, "listening")
    # the turn ends: its Stop hooks finish and the prompt is idle again (under load the screen
    # may show them running for a moment first)
    wait_until(lambda: ("saw the task" in (shown := world.tmux_screen(screen))
                        and "running Stop hooks" not in shown and "esc to interrupt" not in shown),
               timeout=60, what=lambda: world.tmux_screen(screen))
    listening = world.tmux_screen(screen)
    if client == "claude":
        # the Stop hook and the background wait beside it race for the news: either way, news
        assert ("Stop hook says: [nexus] 1 unread message" in listening
                or "nexus: news for this session" in listening), listening
        assert "running Stop hooks" not in listening and "esc to interrupt" not in listening
    else:
        assert "Blocked by hook" in listening and "Ask Codex to do anything" in listening
    waiter = row_of(world, sid)["waiter_pid"]
    world.tmux_keys(screen, "Escape")  # at the prompt: the background wait goes on
    assert shown(world, sid)["status"] == "listening" and os.path.exists(f"/proc/{waiter}")
    mid = json.loads(world.nexus("send", sid, "news while listening", "--json").stdout)[
        "message_id"]
    wait_until(lambda: world.reached("w1", "news while listening"), timeout=90,
               what=lambda: world.tmux_screen(screen))
    wait_until(lambda: "woken while listening" in world.tmux_screen(screen), timeout=60,
               what=lambda: world.tmux_screen(screen))
    woken = world.tmux_screen(screen)
    assert "reported a problem" not in woken and "Stop hook feedback" not in woken, woken
    if client == "claude":
        assert "nexus: news for this session" in woken, woken
    receipt = json.loads(world.nexus("message", "status", mid, "--json").stdout)
    assert receipt["delivered_via"] == "listen"


def test_a_fresh_codex_after_quit_is_a_new_session_seen_before_its_first_prompt(world):
    """The tour's case: a Codex conversation with mail waiting is quit, and a fresh `codex` starts
    in a new terminal in the same project. Before its first prompt (its first hook) `peers`
    shows the process as unseen and a send to the old conversation says a new one runs here;
    once prompted it is a session of its own: the old conversation's mail waits for the old
    one, and nothing forces turns to re-announce it."""
    world.script(q1=[{"text": "first turn done"}], q2=[{"text": "the new one answers"}])
    old_screen = world.tmux_start("codex", [world.codex_bin, "--dangerously-bypass-hook-trust",
                                            "[run:q1] hello"])
    wait_until(lambda: any(s["client"] == "codex" for s in world.sessions()),
               what=lambda: world.tmux_screen(old_screen))
    old = world.session("codex")["id"]
    world.wait_status(old, "listening")
    for n in range(3):
        world.nexus("send", old, f"for the old conversation {n}", "--no-wake")
    type_line(world, old_screen, "/quit", lambda: shown(world, old)["status"] == "offline")
    screen = world.tmux_start("codex2", [world.codex_bin, "--dangerously-bypass-hook-trust"])

    def unseen() -> list[dict]:
        return json.loads(world.nexus("peers", "--json").stdout)["unseen"]

    wait_until(lambda: unseen(), timeout=90,
               what=lambda: f"the unseen codex; screen:\n{world.tmux_screen(screen)}")
    assert unseen()[0]["client"] == "codex" and "appears at its first prompt" in \
        unseen()[0]["note"]
    assert "unseen: codex process" in world.nexus("peers").stdout
    sent = json.loads(world.nexus("send", old, "one more for the old", "--json").stdout)
    assert "a Codex process runs in this project; it appears at its first prompt" in \
        sent["outlook"], sent
    type_line(world, screen, "[run:q2] hi", lambda: world.reached("q2", "the new one") or
              world.requests("q2"))
    wait_until(lambda: len([s for s in world.sessions() if s["client"] == "codex"]) == 2,
               what=lambda: f"{world.sessions()}\n{world.tmux_screen(screen)}")
    new = next(s["id"] for s in world.sessions() if s["client"] == "codex" and s["id"] != old)
    world.wait_status(new, "listening")
    assert unseen() == []
    status = json.loads(world.nexus("status", new, "--json").stdout)
    assert row_of(world, new)["predecessor"] is None and status["pending"]["unread"] == 0
    assert json.loads(world.nexus("status", old, "--json").stdout)["pending"]["unread"] == 4
    assert row_of(world, new)["auto_turns"] == 0
    assert not world.reached("q2", "for the old conversation")


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_turn_the_person_interrupts_leaves_the_session_honest(world, client):
    """Esc during a turn ends it without a Stop hook. Claude Code: the waiter of the turn before
    comes back once the client says it is idle, and a message wakes the session. Codex 0.171.0
    runs no turn queued after an interrupted one: `status` says the turn was interrupted and
    that the message waits for its next prompt (not "working")."""
    flags = ["--dangerously-skip-permissions"] if client == "claude" else []
    screen, sid = interactive(world, client, "e1", *flags)
    world.script(e2=[{"shell": HELD}, {"text": "not reached"}, {"text": "woken after Esc"}])
    type_line(world, screen, "[run:e2] hold", (world.work / "started").exists)
    world.tmux_keys(screen, "Escape")
    if client == "codex":
        wait_until(lambda: "interrupted" in (shown(world, sid)["status_reason"] or ""), timeout=60,
                   what=lambda: f"{shown(world, sid)}\n{world.tmux_screen(screen)}")
        sent = json.loads(world.nexus("send", sid, "after Esc", "--json").stdout)
        assert sent["to"]["status"] == "idle" and "next prompt" in sent["outlook"], sent
        return
    wait_until(lambda: shown(world, sid)["status"] == "listening", timeout=60,
               what=lambda: f"{shown(world, sid)}\n{world.tmux_screen(screen)}")
    world.nexus("send", sid, "after Esc")
    wait_until(lambda: world.reached("e2", "after Esc"), timeout=90,
               what=lambda: f"{shown(world, sid)}\n{world.tmux_screen(screen)}")
