"""Approvals: a routed run's PermissionRequest is registered and waits; `approve` answers it
(first responder wins); a timeout rejects it; only the dispatcher or the person may answer, never
the session itself; everyone else's request passes through untouched; the hook entry in
hooks/*.json is behind a shell guard that starts no Python outside a run."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time

import pytest

from helpers import RUN, WORKER, A, B, call, claude_env, run_hook_in_thread, sid, until
from nexus_cli.approvals import ledger
from nexus_cli.clients import hookdefs
from nexus_cli.core.store.db import Store

pytestmark = pytest.mark.usefixtures("terminal")  # the person at a terminal

def ask(env, tool="Bash", command="rm -rf build"):
    return run_hook_in_thread("claude", "PermissionRequest", WORKER, env=env, tool_name=tool,
                              tool_input={"command": command}, permission_mode="default")


def pending(nx, env=None) -> dict:
    return nx("approvals", "--json", env=env).json


def wait_pending(nx, env=None, n=1) -> dict:
    return until(lambda: (got := pending(nx, env))["pending"] >= n and got, 60,
                 "the request to show up")


def decision(box) -> dict:
    reply, code, _ = box["reply"]
    assert code == 0
    return reply["hookSpecificOutput"]["decision"]


def test_allow_once_reaches_the_waiting_hook(nx, routed):
    from schemas import validate

    thread, box = ask(routed)
    got = wait_pending(nx, A)
    validate("approvals", got)
    item = got["items"][0]
    assert item["tool_name"] == "Bash" and item["summary"] == "command: rm -rf build"
    assert item["session_id"] == f"claude:{WORKER}" and got["hint"].startswith(
        f"nexus approve {item['id']} --session claude:{WORKER}")
    assert thread.is_alive()  # the client is still waiting
    told = nx("read", "--json", env=A).json["messages"]
    assert told[0]["kind"] == "notice" and f"nexus approve {item['id']}" in told[0]["text"]
    r = nx("approve", item["id"], "allow-once", "--session", f"claude:{WORKER}", "--json",
           env=A)
    validate("approve", r.json)
    assert r.code == 0 and r.json["receipt"] == "accepted" and r.json["pending_remaining"] == 0
    thread.join(30)
    assert decision(box) == {"behavior": "allow"}
    again = nx("approve", item["id"], "reject", "--session", f"claude:{WORKER}", "--json")
    assert again.code == 4 and again.json["receipt"] == "not-pending"
    [logged] = nx("events", "--action", "approval", "--json").json["events"]  # the answer only
    assert logged["actor"] == f"claude:{sid(1)}" and logged["target"] == f"claude:{WORKER}"
    assert logged["detail"] == {"approval": item["id"], "outcome": "allow-once", "tool": "Bash"}


def test_reject_reaches_the_waiting_hook_with_a_message(nx, routed):
    thread, box = ask(routed)
    item = wait_pending(nx)["items"][0]
    assert nx("approve", item["id"], "reject", "--session", f"claude:{WORKER}").code == 0
    thread.join(30)
    got = decision(box)
    assert got["behavior"] == "deny" and "rejected by user:" in got["message"]


def test_no_answer_in_time_rejects_never_allows(nx, routed):
    nx("config", "set", "approvalTimeout", "1")  # the shortest wait the setting allows
    thread, box = ask(routed)
    thread.join(60)
    got = decision(box)
    assert got["behavior"] == "deny" and "no answer within 1 s" in got["message"]
    aid = re.search(r"\(approval (\S+)\)", got["message"])[1]  # type: ignore[index]
    told = nx("read", "--json", env=A).json["messages"]
    assert f"Permission request {aid} " in told[0]["text"]  # it was registered and announced
    r = nx("approve", aid, "allow-once", "--session", f"claude:{WORKER}", "--json")
    assert r.json["receipt"] == "not-pending" and r.json["status"] == "rejected"


def test_two_concurrent_responders_exactly_one_is_accepted(nx, routed, home):
    thread, box = ask(routed)
    item = wait_pending(nx)["items"][0]
    barrier = threading.Barrier(2)
    receipts: dict[str, str] = {}

    def respond(outcome: str) -> None:
        barrier.wait(30)
        receipts[outcome] = call(home, "approve", {"approval_id": item["id"], "outcome": outcome,
                                                   "session": f"claude:{WORKER}"})["receipt"]

    racers = [threading.Thread(target=respond, args=(o,)) for o in ("allow-once", "reject")]
    for t in racers:
        t.start()
    for t in racers:
        t.join(60)
    assert sorted(receipts.values()) == ["accepted", "not-pending"]
    thread.join(30)
    won = "allow" if receipts["allow-once"] == "accepted" else "deny"
    assert decision(box)["behavior"] == won


def test_who_may_answer(nx, routed):
    thread, box = ask(routed)
    item = wait_pending(nx)["items"][0]
    args = ("approve", item["id"], "allow-once", "--session", f"claude:{WORKER}")
    assert pending(nx, B)["pending"] == 0  # not its run: not listed
    r = nx(*args, env=B)
    assert r.code == 5 and "not_approver" in r.err
    r = nx(*args, env=claude_env(WORKER))
    assert r.code == 5 and "its own" in r.err
    r = nx("approve", item["id"], "allow-once", "--session", f"codex:{sid(2)}")
    assert r.code == 4 and "approval_mismatch" in r.err
    assert nx("approve", "a-nosuch", "reject", "--session", "x").code == 3
    nx(*args)  # the person may
    thread.join(30)
    assert decision(box)["behavior"] == "allow"


def test_a_request_outside_a_routed_run_passes_through(nx, routed):
    for env in ({}, {"NEXUS_RUN": "r-other"}):
        thread, box = ask(env)
        thread.join(30)
        assert box["reply"][0] is None  # no decision: the client does what it would
    # a routed run id claimed from another client process is not believed
    thread, box = run_hook_in_thread("codex", "PermissionRequest", sid(2), env=routed,
                                     tool_name="Bash", tool_input={})
    thread.join(30)
    assert box["reply"][0] is None and pending(nx)["pending"] == 0


def test_a_waiting_hook_that_died_is_withdrawn(nx, routed):
    with Store().write() as conn:
        aid = ledger.insert(conn, f"claude:{WORKER}", RUN, "Bash", "x", None, 999_999_999,
                            time.time(), time.time() + 300)
    assert pending(nx)["pending"] == 0
    r = nx("approve", aid, "allow-once", "--session", f"claude:{WORKER}", "--json")
    assert r.json["status"] == "withdrawn"


def test_a_waiting_hook_of_another_machine_is_not_taken_for_dead_here(nx, routed):
    """Its pid means something only on its own machine: the request stays pending (its
    deadline still ends it), where a dead hook of this machine's is withdrawn (above)."""
    with Store().write() as conn:
        aid = ledger.insert(conn, f"claude:{WORKER}", RUN, "Bash", "x", None, 999_999_999,
                            time.time(), time.time() + 300)
        conn.execute("UPDATE approvals SET machine = 'devbox/0123456789ab' WHERE id = ?", (aid,))
    assert pending(nx)["pending"] == 1
    assert nx("info", "--json").code == 0
    assert pending(nx)["pending"] == 1


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_hook_entry_reaches_nexus_for_every_permission_prompt(client, tmp_path, hook,
                                                                  chdir_work):
    """A permission prompt is where a session waits for a person (its status says so), in a run
    or not; outside a run nexus answers nothing and the client asks the person as it would."""
    table = hookdefs.hooks(client, hookdefs.fills(None))
    entry = table["PermissionRequest"][0]["hooks"][0]
    assert hookdefs.is_ours(entry) and entry["timeout"] > 590  # longer than any approval wait
    marker = tmp_path / "ran"
    command = entry["command"].replace(hookdefs.nexus_command(), f"touch {marker}; true")
    env = {k: v for k, v in os.environ.items() if k != "NEXUS_RUN"}
    subprocess.run(["/bin/sh", "-c", command], env=env, check=True, timeout=10)
    assert marker.exists()
    hook(client, "SessionStart", sid(9), source="startup")
    asked = hook(client, "PermissionRequest", sid(9), tool_name="Bash",
                 tool_input={"command": "make"})
    assert (asked.code, asked.out) == (0, "")


def test_doctor_sees_a_table_without_the_permission_entry_as_outdated():
    for client in ("claude", "codex"):
        table = hookdefs.hooks(client, {"{nexus}": "nexus", "{news}": "news"})
        assert not hookdefs.outdated({"hooks": table}, client)
        entry = table["PermissionRequest"][0]["hooks"][0]
        old = {**entry, "command": '[ -n "$NEXUS_RUN" ] || exit 0; ' + entry["command"]}
        assert hookdefs.outdated({"hooks": {**table, "PermissionRequest": [{"hooks": [old]}]}},
                                 client)  # the entry of 0.1, that reached nexus in runs only
        table.pop("PermissionRequest")
        assert hookdefs.outdated({"hooks": table}, client)


def test_answering_after_the_run_ended_is_not_pending_for_its_dispatcher(nx, routed):
    """The run ended: its route is gone and its waiting hook with it. Its dispatcher's answer is
    the first responder's loss (`not-pending`, exit 4), not `not_approver`: the request changes
    for nobody now."""
    thread, box = ask(routed)
    item = wait_pending(nx)["items"][0]
    with Store().write() as conn:
        ledger.unroute(conn, RUN)  # the runner's last write: the run is over
        # and its client with the waiting hook: gone
        conn.execute("UPDATE approvals SET hook_pid = 999999999 WHERE id = ?", (item["id"],))
    r = nx("approve", item["id"], "allow-once", "--session", f"claude:{WORKER}", "--json",
           env=A)
    assert r.code == 4 and r.json["receipt"] == "not-pending", r.err
    assert r.json["status"] == "withdrawn"
    thread.join(60)
    assert decision(box)["behavior"] == "deny"  # withdrawn: never allowed
