"""Direct messages between sessions: send, read, reply, receipts, idempotency, bad input."""

from __future__ import annotations

import json
import os
import threading

import pytest

from helpers import (
    A_ID,
    B_ID,
    A,
    B,
    call,
    codex_env,
    faked,
    sid,
    store_env,
    tree_bytes,
    until,
)


@pytest.mark.parametrize("target", [B_ID, "s-000000020000", "codex@work", "codex"])
def test_send_resolves_id_handle_name_and_substring(nx, pair, target):
    r = nx("send", target, "hello", "--json", env=A)
    assert r.code == 0, r.err
    assert r.json["to"]["id"] == B_ID and r.json["duplicate"] is False
    assert r.json["to"]["status"] == "idle"


def test_read_is_oldest_first_and_marks_read(nx, pair):
    ids = [nx("send", "codex", f"m{i}", "--json", env=A).json["message_id"] for i in range(3)]
    r = nx("read", "--count", "2", "--json", env=B).json
    assert [m["message_id"] for m in r["messages"]] == ids[:2]
    assert [m["text"] for m in r["messages"]] == ["m0", "m1"]
    assert r["messages"][0]["from"]["id"] == A_ID and r["remaining"] == 1
    r = nx("read", "--json", env=B).json
    assert [m["message_id"] for m in r["messages"]] == ids[2:] and r["remaining"] == 0
    assert nx("read", "--json", env=B).json["count"] == 0


def test_reply_goes_to_the_sender_with_reply_to(nx, pair):
    mid = nx("send", "codex", "question?", "--json", env=A).json["message_id"]
    r = nx("reply", mid, "answer!", "--json", env=B)
    assert r.code == 0 and r.json["to"]["id"] == A_ID and r.json["reply_to"] == mid
    got = nx("read", "--json", env=A).json["messages"]
    assert got[0]["text"] == "answer!" and got[0]["reply_to"] == mid
    # only the recipient may reply
    r = nx("reply", mid, "me too", env=A)
    assert r.code == 3 and "message_not_found" in r.err


def test_message_status_tells_the_sender_only(nx, pair, hook):
    mid = nx("send", "codex", "hi", "--json", env=A).json["message_id"]
    assert nx("message", "status", mid, "--json", env=A).json["state"] == "stored"
    assert nx("message", "status", mid, "--json", env=B).json["state"] == "unknown"
    assert nx("message", "status", "m-nope", "--json", env=A).json["state"] == "unknown"
    nx("read", env=B)
    st = nx("message", "status", mid, "--json", env=A).json
    assert st["state"] == "read" and st["read_at_epoch"] and st["read_at"].count(":") >= 2


def test_request_id_makes_a_retry_idempotent(nx, pair):
    first = nx("send", "codex", "once", "--request-id", "r1", "--json", env=A).json
    again = nx("send", "codex", "once", "--request-id", "r1", "--json", env=A).json
    assert again["message_id"] == first["message_id"] and again["duplicate"] is True
    assert nx("read", "--json", env=B).json["count"] == 1
    r = nx("send", "codex", "other text", "--request-id", "r1", env=A)
    assert r.code == 4 and "request_id_conflict" in r.err and first["message_id"] in r.err


def test_no_messages_to_yourself(nx, pair):
    r = nx("send", A_ID, "me", env=A)
    assert r.code == 2 and "target_is_self" in r.err


def test_ambiguous_target_lists_up_to_twelve_candidates(nx, hook, chdir_work):
    for n in range(1, 16):
        hook("claude", "SessionStart", sid(n), source="startup")
    hook("codex", "SessionStart", sid(99), source="startup")
    r = nx("send", "claude", "who?", "--json", env=codex_env(sid(99)))
    assert r.code == 4
    err = r.json["error"]
    assert err["code"] == "target_ambiguous" and "15 sessions match" in err["reason"]
    assert len(err["details"]["candidates"]) == 12 and "and 3 more" in err["reason"]
    assert "s-" in err["reason"]


def test_offline_recipient_gets_it_when_back(nx, hook, pair):
    hook("codex", "SessionEnd", sid(2), reason="exit")
    r = nx("send", B_ID, "while you were out", "--json", env=A).json
    assert r["to"]["status"] == "offline"
    hook("codex", "SessionStart", sid(2), source="resume")
    assert nx("read", "--json", env=B).json["messages"][0]["text"] == "while you were out"


def test_scope_is_the_project_unless_widened(nx, hook, tmp_path, pair):
    other = tmp_path / "elsewhere"
    other.mkdir()
    hook("claude", "SessionStart", sid(7), source="startup", cwd=str(other))
    r = nx("send", f"claude:{sid(7)}", "hi", env=B)
    assert r.code == 3 and "target_not_found" in r.err
    assert nx("send", f"claude:{sid(7)}", "hi", "--all-workspaces", env=B).code == 0
    peers = nx("peers", "--json", env=B).json
    assert f"claude:{sid(7)}" not in [p["id"] for p in peers["items"]]
    peers = nx("peers", "--all-workspaces", "--json", env=B).json
    assert f"claude:{sid(7)}" in [p["id"] for p in peers["items"]]


def test_a_name_reaches_live_sessions_and_the_error_says_what_would_work(nx, hook, tmp_path, pair):
    """Seed 004's rule: an id or handle reaches any status, a name only live sessions. Every
    not-found error names what would have worked, never a flag already given."""
    hook("codex", "SessionEnd", sid(2), reason="exit")
    r = nx("send", "codex@work", "hi", "--json", env=A)
    assert r.code == 3
    assert "codex@work is offline" in r.err and "handle s-000000020000" in r.err
    assert nx("send", "s-000000020000", "hi", env=A).code == 0
    st = nx("status", "codex@work", "--json", env=A)  # the read-only probe sees offline ones
    assert st.code == 0 and st.json["state"] == "offline"
    other = tmp_path / "api"
    other.mkdir()
    hook("claude", "SessionStart", sid(7), source="startup", cwd=str(other))
    r = nx("send", "claude@api", "hi", env=B)
    assert r.code == 3 and "add --all-workspaces to reach it" in r.err
    hook("claude", "SessionEnd", sid(7), reason="exit")
    r = nx("send", "claude@api", "hi", "--all-workspaces", env=B)
    assert r.code == 3 and "claude@api is offline" in r.err and "s-000000070000" in r.err
    assert "add --all-workspaces" not in r.err
    assert nx("send", "s-000000070000", "hi", "--all-workspaces", env=B).code == 0
    r = nx("send", "nobody", "x", "--all-workspaces", env=B)
    assert "--all-workspaces`" not in r.err and "any workspace" in r.err


def test_shell_user_is_a_participant(nx, pair):
    r = nx("send", "codex", "from the human", "--json")
    assert r.code == 0
    msg = nx("read", "--json", env=B).json["messages"][0]
    assert msg["from"]["id"].startswith("user:")
    r = nx("reply", msg["message_id"], "hi human", "--json", env=B)
    assert r.json["to"]["id"].startswith("user:")
    assert nx("read", "--json").json["messages"][0]["text"] == "hi human"


def test_text_from_stdin(nx, pair):
    assert nx("send", "codex", "-", env=A, stdin="line one\nline two\n").code == 0
    assert nx("read", "--json", env=B).json["messages"][0]["text"] == "line one\nline two\n"


BAD = [
    (("send", "codex", ""), "TEXT"),
    (("send", "codex", "x" * 32_001), "TEXT"),
    (("send", "", "hi"), "TARGET"),
    (("send", "codex", "hi", "--request-id", ""), "--request-id"),
    (("send", "codex", "hi", "--request-id", "r" * 201), "--request-id"),
    (("send", "t" * 301, "hi"), "TARGET"),
    (("read", "--count", "0"), "--count"),
    (("read", "--count", "51"), "--count"),
    (("read", "--count", "many"), "--count"),
    (("reply", "", "x"), "MESSAGE_ID"),
    (("reply", "m-1", ""), "TEXT"),
    (("message", "status", ""), "MESSAGE_ID"),
    (("peers", "--limit", "0"), "--limit"),
    (("peers", "--limit", "101"), "--limit"),
    (("peers", "--offset", "-1"), "--offset"),
    (("profile", "--name", "has space"), "--name"),
    (("profile", "--name", "x" * 49), "--name"),
    (("profile", "--note", "n" * 201), "--note"),
    (("profile",), "profile"),
]


@pytest.mark.parametrize("args,key", BAD)
def test_bad_input_gives_a_coded_error_and_no_write(nx, pair, home, args, key):
    before = tree_bytes(home)
    r = nx(*args, "--json", env=A)
    assert r.code == 2, r.err
    assert r.json["error"]["code"] == "invalid_argument" and r.json["error"]["key"] == key
    line = r.err.strip()
    assert line.startswith("nexus: invalid_argument: ") and "(" in line and "; " in line
    assert "Traceback" not in r.err
    assert tree_bytes(home) == before


@pytest.mark.parametrize("args", [("send",), ("send", "x"), ("read", "--nope"), ("nosuch",),
                                  ("message", "status")])
def test_usage_errors_are_coded_too(nx, args):
    r = nx(*args)
    assert r.code == 2 and "nexus: usage_error: nexus" in r.err and "Traceback" not in r.err


def test_a_group_alone_shows_its_commands_with_the_usage_exit_code(nx):
    r = nx("message")
    assert r.code == 2 and "Commands:" in r.out and "status" in r.out and not r.err


def test_profile_name_is_unique_among_live_sessions(nx, pair):
    assert nx("profile", "--name", "reviewer", "--note", "reviewing", env=A).code == 0
    r = nx("profile", "--name", "reviewer", env=B)
    assert r.code == 4 and "name_taken" in r.err
    p = nx("peers", "--json", env=B).json["items"]
    assert {x["name"]: x["note"] for x in p}["reviewer"] == "reviewing"
    assert nx("send", "reviewer", "by new name", env=B).code == 0


def test_a_name_cannot_pass_for_a_handle_nor_take_the_shape_of_one(nx, pair):
    b_handle = nx("whoami", "--json", env=B).json["handle"]
    for name in (b_handle, "u-root", "S-ABC", "s-", "u-me"):
        r = nx("profile", "--name", name, env=A)
        assert r.code == 2 and "invalid_argument" in r.err and "s- or u-" in r.err, (name, r.err)
    for name, why in (("", "must not be empty"), ("x" * 49, "at most 48 characters"),
                      ("a b", "may hold only")):
        r = nx("profile", "--name", name, env=A)
        assert r.code == 2 and why in r.err, (name, r.err)
    assert nx("profile", "--name", "us-east", env=A).code == 0  # only the handles' own prefixes


def as_b(tool: str, args: dict) -> dict:
    """Act as B from another thread (the nx helper's environment is process-wide)."""
    return call(None, tool, args, env=B)


def test_ask_returns_the_correlated_reply(nx, pair):
    import time

    def answer():
        for _ in range(400):
            got = [m for m in as_b("read", {})["messages"] if m["text"] == "what is the answer?"]
            if got:
                as_b("reply", {"message_id": got[0]["message_id"], "text": "42"})
                return
            time.sleep(0.02)

    nx("send", "codex", "unrelated chatter", env=A)
    helper = threading.Thread(target=answer)
    helper.start()
    r = nx("ask", "codex", "what is the answer?", "--timeout", "20", "--json", env=A)
    helper.join()
    assert r.code == 0, r.err
    assert r.json["answered"] is True and r.json["reply"]["text"] == "42"
    assert r.json["reply"]["reply_to"] == r.json["message_id"] and r.json["waited_seconds"] < 20
    assert nx("read", "--json", env=A).json["count"] == 0  # ask returned it: read


def test_ask_times_out_and_the_late_reply_points_back(nx, pair):
    r = nx("ask", "codex", "slow question", "--timeout", "0.3", "--json", env=A)
    assert r.code == 7 and r.json["answered"] is False and "stays open" in r.json["note"]
    mid = r.json["message_id"]
    later = nx("reply", mid, "sorry, late", "--json", env=B).json
    got = nx("read", "--json", env=A).json["messages"]
    assert [m["kind"] for m in got] == ["message", "notice"]
    assert got[0]["text"] == "sorry, late"
    assert mid in got[1]["text"] and later["message_id"] in got[1]["text"]


def test_watch_follows_the_inbox_and_shows_listening(nx, pair):
    def person() -> dict | None:
        found = as_b("peers", {"query": "user:", "all_workspaces": True})["items"]
        return found[0] if found else None

    def later():
        # the watcher shows as listening (a check of its own), then the messages go
        me = until(lambda: (p := person()) and p["status"] == "listening" and p, 60,
                   "the watching person to show as listening")
        for text in ("first for the human", "second for the human"):
            as_b("send", {"target": me["id"], "text": text, "all_workspaces": True})

    nx("send", "codex", "register me first")  # the person at the shell becomes a session
    assert person()["status"] != "listening"  # (before the watch)
    helper = threading.Thread(target=later)
    helper.start()
    r = nx("watch", "--timeout", "3", "--json")  # 3 s without a message: it ends
    helper.join()
    assert r.code == 0, r.err  # it ended by its time-out, having shown messages
    got = [json.loads(line) for line in r.out.splitlines()]
    assert [m["text"] for m in got] == ["first for the human", "second for the human"]
    assert r.err.startswith("watching messages to ") and "until 3 s pass" in r.err
    assert nx("watch", "--timeout", "0.2").code == 7  # nothing came: timed out


EVIL = "a\x1b]0;pwned\x07b\x1b[2Jc\x9b31md\re\u202eT\x00"
FORGED = ("\x1b]0;pwned", "\x1b[2J", "\x9b31m", "\x07", "\r", "\u202e", "\x00")


@pytest.mark.parametrize("tty", [False, True])
def test_peer_text_never_reaches_a_terminal_raw(nx, pair, monkeypatch, tty):
    import sys

    nx("profile", "--note", EVIL, env=B)
    mid = nx("send", "codex", EVIL, "--json", env=A).json["message_id"]
    nx("delegate", "codex", EVIL, env=A)
    nx("send", "claude", EVIL, env=B)
    outputs = []
    with monkeypatch.context() as mp:
        if tty:
            mp.setattr(sys.stdout, "isatty", lambda: True, raising=False)
        for args, env in ((["peers"], A), (["status", "codex"], A), (["tasks"], A),
                          (["message", "status", mid], A), (["read"], B), (["read"], A)):
            r = nx(*args, env=env)
            assert r.code == 0, (args, r.err)
            outputs.append(r.out)
    for out in outputs:
        for seq in FORGED:
            assert seq not in out, (seq, out)
    assert "\\x1b]0;pwned" in "".join(outputs)  # shown, visibly escaped
    # --json stays exact
    nx("send", "codex", EVIL, env=A)
    assert nx("read", "--json", env=B).json["messages"][0]["text"] == EVIL


@pytest.mark.parametrize("redirect", [">&-", "> /dev/full"])
@pytest.mark.parametrize("command", ["read", "watch --timeout 2"])
def test_output_that_cannot_be_written_consumes_nothing(nx, pair, home, redirect, command):
    import subprocess
    import sys

    me = nx("whoami", "--json").json["id"]
    nx("send", "claude", "registering the person")
    nx("send", me, "for the person", env=A)
    env = {"PATH": os.environ["PATH"], "NEXUS_HOME": str(home), **store_env(),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(["sh", "-c", f"{sys.executable} -m nexus_cli {command} {redirect}"],
                          env=env, capture_output=False, stderr=subprocess.PIPE, text=True,
                          timeout=120)
    assert done.returncode == 74 and "output_failed" in done.stderr, done.stderr
    got = nx("read", "--json").json["messages"]
    assert [m["text"] for m in got] == ["for the person"]  # still unread: nothing was lost


def test_a_person_reading_in_a_pager_does_not_hold_the_store(nx, pair, home, tmp_path, fake):
    """`nexus read` at a terminal pages what is taller than it; the pager waits for the person,
    and it runs once the read has committed: others write meanwhile (they waited the busy
    timeout, then failed, while a person read in `less`)."""
    import fcntl
    import pty
    import struct
    import subprocess
    import sys
    import termios

    me = nx("whoami", "--json").json["id"]
    nx("send", "claude", "registering the person")
    for n in range(40):
        nx("send", me, f"line {n}", env=A)
    env = {"PATH": os.environ["PATH"], "NEXUS_HOME": str(home), **store_env(), "TERM": "xterm",
           "PYTHONPATH": os.pathsep.join(sys.path), "HOME": str(tmp_path)}
    nexus = faked(fake)  # its sessions' clients are the fake ones
    env["PAGER"] = (f"cat > {tmp_path}/paged; {nexus} send claude 'while paging' "
                    f"> {tmp_path}/send.out 2>&1; echo $? > {tmp_path}/rc")
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    done = subprocess.run(["sh", "-c", f"{nexus} read"], env=env, stdin=child, stdout=child,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(child)
    os.close(main)
    assert done.returncode == 0, done.stderr
    assert "line 9" in (tmp_path / "paged").read_text()  # it went through the pager
    assert (tmp_path / "rc").read_text().strip() == "0", (tmp_path / "send.out").read_text()


def test_an_ask_whose_answer_cannot_be_printed_leaves_the_answer_unread(nx, pair, home, fake):
    import subprocess
    import sys

    assert nx("whoami", "--json").json["id"].startswith("user:")
    nx("send", "claude", "registering the person")
    env = {"PATH": os.environ["PATH"], "NEXUS_HOME": str(home), **store_env(),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    asker = subprocess.Popen(["sh", "-c", f"{faked(fake)} ask claude 'ready?' "
                              "--timeout 120 > /dev/full"], env=env, stderr=subprocess.PIPE,
                             text=True)
    got = until(lambda: [m for m in call(None, "read", {}, env=A)["messages"]
                         if m["text"] == "ready?"], 60, "the question to arrive")
    call(None, "reply", {"message_id": got[0]["message_id"], "text": "yes"}, env=A)
    _, err = asker.communicate(timeout=120)
    assert asker.returncode == 74 and "output_failed" in err, err
    assert [m["text"] for m in nx("read", "--json").json["messages"]] == ["yes"]


def test_inbox_looks_back_both_ways_without_consuming(nx, pair):
    out = nx("send", "codex", "first", "--json", env=A).json["message_id"]
    back = nx("reply", out, "answer", "--json", env=B).json["message_id"]
    nx("send", "codex", "from the person", env={})
    box = nx("inbox", "--json", env=A).json
    assert [(m["message_id"], m["direction"]) for m in box["items"]] == [(back, "in"), (out, "out")]
    assert box["items"][0]["state"] == "stored" and box["items"][1]["to"]["id"] == B_ID
    assert nx("read", "--json", env=A).json["count"] == 1  # the inbox consumed nothing
    assert nx("inbox", "--json", env=A).json["items"][0]["state"] == "read"
    assert nx("inbox", "--sent", "--json", env=A).json["total"] == 1
    assert nx("inbox", "--received", "--unread", "--json", env=A).json["total"] == 0
    assert nx("inbox", "codex", "--json", env=A).json["total"] == 2
    assert nx("inbox", "--json", env=B).json["total"] == 3
    assert nx("inbox", "claude", "--json", env=B).json["total"] == 2
    page = nx("inbox", "--limit", "1", "--json", env=B).json
    assert page["truncated"] and page["next"] == "--offset 1"
    shown = nx("message", "show", out, "--json", env=B).json
    assert shown["text"] == "first" and shown["direction"] == "in" and shown["state"] == "stored"
    assert nx("inbox", "--unread", "--json", env=B).json["total"] == 2  # show consumed nothing
    human = nx("message", "show", out, env=A).out
    assert "first" in human and "codex@work" in human
    r = nx("message", "show", out, env={})  # the person: neither sender nor recipient
    assert r.code == 3 and "message_not_found" in r.err


def test_an_interrupted_ask_leaves_the_question_open(nx, pair, monkeypatch):
    """Ctrl-C while asking: exit 130, and the late reply still arrives with a notice."""
    from nexus_cli.core.store import wake

    def interrupted(self, timeout):
        raise KeyboardInterrupt

    monkeypatch.setattr(wake.Channel, "wait", interrupted)
    if os.environ.get("NEXUS_DATABASE_URL"):
        from nexus_cli.core.store import pg

        monkeypatch.setattr(pg.Channel, "wait", interrupted)
    r = nx("ask", "codex", "still there?", env=A)
    assert r.code == 130 and "interrupted" in r.err
    question = nx("read", "--json", env=B).json["messages"][0]
    nx("reply", question["message_id"], "yes", env=B)
    texts = [m["text"] for m in nx("read", "--json", env=A).json["messages"]]
    assert "yes" in texts and any("late reply" in t for t in texts)


def test_a_reader_that_left_early_gets_no_complaint_and_nothing_is_consumed(nx, pair, home):
    """`nexus read | head -0`: the pipe's reader is gone before the write (EPIPE): exit 74
    without a message (as tools that die of SIGPIPE say nothing), and the mail stays unread."""
    import subprocess
    import sys

    me = nx("whoami", "--json").json["id"]
    nx("send", "claude", "registering the person")
    nx("send", me, "for the person", env=A)
    env = {"PATH": os.environ["PATH"], "NEXUS_HOME": str(home), **store_env(),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "nexus_cli", "read"], env=env,
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode == 74 and done.stderr == "", done.stderr
    assert [m["text"] for m in nx("read", "--json").json["messages"]] == ["for the person"]


# -- a consuming read is at least once (issue 37) -------------------------------------------------

READER = """
import json, os, signal, sys
from helpers import FakeTable, ctx_for
from nexus_cli.catalog import load
from nexus_cli.core.registry import TOOLS, invoke
from nexus_cli.messages import mailbox

step = sys.argv[1]
FakeTable.adopt(sys.argv[2])
load()

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def after(name):
    real = getattr(mailbox, name)
    def wrapped(*args, **kwargs):
        real(*args, **kwargs)
        die()  # inside its transaction: never committed
    setattr(mailbox, name, wrapped)

def deliver(result):
    if step == "committed":
        die()  # committed, nothing written yet
    print(json.dumps([m["message_id"] for m in result["messages"]]), flush=True)
    if step == "written":
        die()  # written, not yet confirmed

if step == "leasing":
    after("lease")
if step == "confirming":
    after("confirm")
ctx = ctx_for(None, json.loads(sys.argv[3]))
ctx.deliver = deliver
invoke(TOOLS["read"], ctx, {"count": 10})
"""


@pytest.mark.parametrize("step", ["leasing", "committed", "written", "confirming", "done"])
def test_a_read_killed_at_any_step_loses_no_message(nx, hook, pair, fake, step):
    """kill -9 of `read` inside its transaction, after its COMMIT, after writing its output and
    inside the confirming write: every message is shown again by the next read (under the same
    id: a duplicate is recognisable), or was shown and confirmed read. Never neither."""
    import subprocess
    import sys

    sent = [nx("send", B_ID, f"m{i}", "--json", env=A).json["message_id"] for i in range(3)]
    proc = subprocess.run([sys.executable, "-c", READER, step, fake.export(), json.dumps(B)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    shown = json.loads(proc.stdout) if proc.stdout.strip() else []
    assert proc.returncode == (0 if step == "done" else -9), proc.stderr
    assert shown == (sent if step in ("written", "confirming", "done") else [])
    if step != "done":  # unread: the next prompt announces them again
        told = hook("codex", "UserPromptSubmit", sid(2), prompt="next").out
        assert all(mid in told for mid in sent), told
    again = nx("read", "--json", env=B).json
    assert [m["message_id"] for m in again["messages"]] == ([] if step == "done" else sent)
    assert nx("read", "--json", env=B).json["count"] == 0  # read now, once confirmed
    assert nx("inbox", "--unread", "--json", env=B).json["total"] == 0


def test_a_living_reader_holds_what_it_took_and_a_dead_one_does_not(nx, pair, monkeypatch):
    """A lease held by a running process is skipped by a second read; one whose holder's pid is
    gone, or one past its time, is taken; one that claims more time than a lease has (a row
    written by hand) is no lease."""
    from nexus_cli.core.store.db import Store
    from nexus_cli.messages import mailbox

    mid = nx("send", B_ID, "held", "--json", env=A).json["message_id"]
    store = Store()
    alive = mailbox.holder()  # this very process: alive
    cases = [(alive, 300.0, False), (f"999999999|{alive.split('|', 2)[1]}|x", 300.0, True),
             (alive, -1.0, True), (alive, 10 * mailbox.LEASE_SECONDS, True)]
    import time

    for lease, ahead, taken in cases:
        with store.write() as conn:
            conn.execute("UPDATE messages SET read_lease = ?, read_lease_until = ?, read_at = NULL"
                         " WHERE id = ?", (lease, time.time() + ahead, mid))
        got = nx("read", "--json", env=B).json
        assert [m["message_id"] for m in got["messages"]] == ([mid] if taken else []), lease


def test_a_jammed_inbox_reads_a_page_at_a_time(nx, pair, monkeypatch):
    """Issue 37: ten 23 MB messages made the default read fail as one result too large; a read
    returns PAGE_CHARS of text at most (a larger message alone), the rest on the next."""
    from nexus_cli.messages import mailbox

    monkeypatch.setattr(mailbox, "PAGE_CHARS", 1000)
    ids = [nx("send", B_ID, str(i) * size, "--json", env=A).json["message_id"]
           for i, size in enumerate((400, 400, 400, 3000, 10))]
    pages = []
    while got := nx("read", "--json", env=B).json["messages"]:
        pages.append([m["message_id"] for m in got])
    assert pages == [ids[:2], ids[2:3], ids[3:4], ids[4:]]
