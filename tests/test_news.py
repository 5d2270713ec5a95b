"""The news marker that lets a tool call skip Python: raised by a message's INSERT, lowered by
a hook once nothing is left to announce, tested by the installed guard in the client's shell.
A message is never hidden: one committed at any moment is announced at the latest at Stop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from helpers import B, sid
from nexus_cli.clients import hookdefs
from nexus_cli.core.store import news
from nexus_cli.core.store.db import Store
from nexus_cli.messages import announceable, mailbox


def marker(home, pid: int):
    return home / "news" / str(pid)


def test_a_message_raises_the_marker_and_the_announcing_hook_lowers_it(nx, hook, home, pair):
    assert not marker(home, pair).exists()
    nx("send", "claude", "hello", env=B)
    assert marker(home, pair).exists() and oct(marker(home, pair).stat().st_mode & 0o777) == "0o600"
    r = hook("claude", "PostToolUse", sid(1), tool_name="Bash")
    assert "hello" in r.out
    assert not marker(home, pair).exists()


def test_the_marker_stays_while_more_is_left_to_announce(nx, hook, home, pair):
    for i in range(8):  # more than one announcement lists
        nx("send", "claude", f"m{i}", env=B)
    hook("claude", "PostToolUse", sid(1), tool_name="Bash")
    assert marker(home, pair).exists()
    hook("claude", "PostToolUse", sid(1), tool_name="Bash")
    assert not marker(home, pair).exists()


def test_a_queued_task_raises_no_marker(nx, hook, home, pair):
    nx("delegate", "claude", "later", "--mode", "queue", env=B)
    assert not marker(home, pair).exists()  # tool calls would not announce it anyway


def test_a_message_the_guard_missed_is_announced_at_stop(nx, hook, home, pair):
    """The guard looked (no marker) and let the tool call go without Python; the message that
    commits just after is announced when the turn ends."""
    hook("claude", "UserPromptSubmit", sid(1), prompt="go")
    assert not marker(home, pair).exists()  # the guard's look: nothing, Python skipped
    nx("send", "claude", "just after the look", env=B)
    r = hook("claude", "Stop", sid(1), stop_hook_active=False)
    reply = json.loads(r.out)["hookSpecificOutput"]  # Claude Code: context, not a block
    assert reply["hookEventName"] == "Stop" and "just after the look" in reply["additionalContext"]


def test_concurrent_writers_and_hooks_never_hide_a_message(home, hook, pair, chdir_work):
    """Writers insert while a hook announces and lowers the marker, both under the write lock:
    afterwards, whatever is left to announce has its marker."""
    store = Store()
    me = f"claude:{sid(1)}"
    stop = threading.Event()

    def writer(n: int) -> None:
        for i in range(60):
            with store.write() as conn:
                mailbox.insert(conn, sender=f"codex:{sid(2)}", recipient=me, text=f"{n}-{i}",
                               now=0.0)

    def reader() -> None:
        while not stop.is_set():
            with store.write() as conn:
                rows, _ = mailbox.unread(conn, me, only_new=True)
                mailbox.mark_delivered(conn, [r["id"] for r in rows], 0.0, "tool")
                if not announceable(conn, me):
                    news.clear(conn, pair)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    hooker = threading.Thread(target=reader)
    hooker.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    hooker.join()
    with store.read() as conn:
        left = announceable(conn, me)
    assert not left or marker(home, pair).exists()


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_installed_guard_starts_the_hook_only_with_news(tmp_path, client):
    """The PostToolUse command as installed, run by sh as the client runs it: $PPID is the
    client process (here: this test process)."""
    folder = tmp_path / "news"
    folder.mkdir()
    joined = tmp_path / "team.url"
    table = hookdefs.hooks(client, {"{nexus}": "echo RAN", "{script}": sys.executable,
                                    "{news}": str(folder), "{team}": str(joined)})
    command = table["PostToolUse"][0]["hooks"][0]["command"]
    assert hookdefs.is_ours(hookdefs.hooks(client, hookdefs.fills(None))["PostToolUse"][0]
                            ["hooks"][0])

    def run(**env: str) -> subprocess.CompletedProcess:
        clean = {k: v for k, v in os.environ.items() if k != "NEXUS_DATABASE_URL"}
        return subprocess.run(["sh", "-c", command], input="{}", capture_output=True, text=True,
                              env={**clean, **env})

    quiet = run()
    assert quiet.returncode == 0 and quiet.stdout == ""
    assert run(NEXUS_DATABASE_URL="").stdout == ""  # set but empty: the local store
    (folder / str(os.getpid())).touch()
    assert run().stdout.strip() == f"RAN hook {client}"
    (folder / str(os.getpid())).unlink()
    # team mode: mail from another machine raises no marker here, so the hook asks the database
    assert run(NEXUS_DATABASE_URL="postgresql:///team").stdout.strip() == f"RAN hook {client}"
    joined.write_text("postgresql:///team\n")
    assert run().stdout.strip() == f"RAN hook {client}"


def test_only_nexus_tools_bind_and_old_tables_are_noticed(tmp_path):
    for client in ("claude", "codex"):
        table = hookdefs.hooks(client, hookdefs.fills(None))
        assert table["PreToolUse"][0]["matcher"] == "^mcp__nexus__"
        assert not hookdefs.outdated({"hooks": table}, client)
        old = json.loads(json.dumps(table))
        old["PreToolUse"][0]["matcher"] = "*"
        old["PostToolUse"][0]["hooks"][0]["command"] = f"nexus hook {client}"
        assert hookdefs.outdated({"hooks": old}, client)
        # install over an old table replaces nexus's handlers and keeps nothing of them twice
        again = hookdefs.edited({"hooks": old}, client, True, hookdefs.fills(None))
        assert hookdefs.shapes(again["hooks"]) == hookdefs.shapes(table)


def test_markers_of_gone_processes_are_swept(nx, home, pair, fake):
    nx("send", "claude", "hello", env=B)
    fake.kill(pair)
    assert nx("maintenance", "--json").json["channels_swept"] >= 1
    assert not marker(home, pair).exists()
