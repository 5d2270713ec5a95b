"""A transcript of nexus at work: a Claude Code session and a Codex session (driven through the
same hook entry points and CLI the real clients use) find each other and exchange messages,
while the person at the shell watches and joins in. Runs in a throwaway store."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import uuid

BIN = os.path.join(os.path.dirname(sys.executable), "nexus")
WORK = tempfile.mkdtemp(prefix="nexus-demo-")
PROJECT = os.path.join(WORK, "shop")
os.makedirs(os.path.join(PROJECT, ".git"))
BASE = {**{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))},
        "NEXUS_HOME": os.path.join(WORK, "store"), "COLUMNS": "110"}
CLAUDE, CODEX = str(uuid.uuid4()), str(uuid.uuid4())
AS = {"claude": {"CLAUDE_CODE_SESSION_ID": CLAUDE}, "codex": {"CODEX_SESSION_ID": CODEX}, "you": {}}
# stand-ins for the two client processes (the hooks record them as each session's client pid)
STAND_IN = {c: subprocess.Popen(["sleep", "300"]) for c in ("claude", "codex")}


def show(title: str) -> None:
    print(f"\n\033[1m## {title}\033[0m" if sys.stdout.isatty() else f"\n## {title}")


def hook(client: str, event: str, **fields: object) -> None:
    payload = {"hook_event_name": event, "session_id": CLAUDE if client == "claude" else CODEX,
               "cwd": PROJECT, "transcript_path": None, **fields}
    print(f"[{client} hook] {event}")
    out = subprocess.run([BIN, "hook", client], input=json.dumps(payload), text=True,
                         capture_output=True,
                         env={**BASE, **AS[client], "NEXUS_CLIENT_PID": str(STAND_IN[client].pid)})
    if out.returncode:
        sys.exit(f"hook failed: {out.stderr}")
    if out.stdout:
        reply = json.loads(out.stdout)
        text = reply.get("hookSpecificOutput", {}).get("additionalContext") or reply.get("reason")
        print("  -> into the model's context:\n" + "\n".join("     " + l for l in str(text).splitlines()))


def nexus(who: str, *args: str) -> dict | None:
    print(f"[{who}] $ nexus {' '.join(shlex.quote(a) for a in args)}")
    out = subprocess.run([BIN, *args], text=True, capture_output=True, cwd=PROJECT,
                         env={**BASE, **AS[who]})
    if out.returncode:
        print("  " + out.stderr.strip())
        sys.exit(f"demo step failed with exit {out.returncode}")
    if "--json" in args:
        data = json.loads(out.stdout)
        print("  (JSON) " + ", ".join(f"{k}: {data[k]}" for k in ("message_id", "id", "status")
                                      if k in data and not isinstance(data[k], dict)))
        return data
    print("\n".join("  " + line for line in out.stdout.rstrip().splitlines()))
    return None


def hook_in_background(client: str, event: str, **fields: object) -> subprocess.Popen:
    """A hook that blocks (a listening Stop): runs while the others carry on."""
    payload = {"hook_event_name": event, "session_id": CLAUDE if client == "claude" else CODEX,
               "cwd": PROJECT, "transcript_path": None, **fields}
    print(f"[{client} hook] {event} (waiting in the background)")
    proc = subprocess.Popen([BIN, "hook", client], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**BASE, **AS[client],
                                            "NEXUS_CLIENT_PID": str(STAND_IN[client].pid)})
    proc.stdin.write(json.dumps(payload))
    proc.stdin.close()
    return proc


def main() -> None:
    show("Two agent sessions start in the same project; their hooks register them")
    hook("claude", "SessionStart", source="startup")
    hook("codex", "SessionStart", source="startup")
    nexus("you", "peers")

    show("Claude Code asks Codex for a review (from its shell tool)")
    hook("claude", "UserPromptSubmit", prompt="refactor checkout, then get it reviewed")
    sent = nexus("claude", "send", "codex", "Please review checkout.py: I split pay() in two.",
                 "--request-id", "review-1", "--json")
    nexus("claude", "send", "codex", "Please review checkout.py: I split pay() in two.",
          "--request-id", "review-1")
    hook("claude", "Stop", stop_hook_active=False, last_assistant_message="Asked codex for a review.")

    show("Codex's next prompt; it reads and replies")
    hook("codex", "UserPromptSubmit", prompt="continue")
    nexus("claude", "message", "status", sent["message_id"])
    got = nexus("codex", "read", "--json")
    nexus("codex", "reply", got["messages"][0]["message_id"], "Reviewed: looks right, one nit in refund().")
    nexus("claude", "message", "status", sent["message_id"])

    show("Claude reads the answer; the person at the shell joins in")
    nexus("claude", "read")
    nexus("you", "send", "claude@shop", "Thanks both. Ship it after lunch.")
    nexus("claude", "read")
    nexus("claude", "profile", "--name", "checkout-dev", "--note", "refactoring checkout")

    show("Claude delegates a tracked task to Codex and waits, listening")
    task = nexus("claude", "delegate", "codex", "Add a regression test for refund(); report the "
                 "file and the test run.", "--json")
    nexus("claude", "listen", "on")
    stop = hook_in_background("claude", "Stop", stop_hook_active=False,
                              last_assistant_message="Delegated the test; waiting for the report.")
    while "listening" not in subprocess.run([BIN, "status", "checkout-dev", "--json"], cwd=PROJECT,
                                            env=BASE, capture_output=True, text=True).stdout:
        time.sleep(0.05)
    nexus("you", "status", "checkout-dev")

    show("Codex's next prompt carries the obligation; it reports")
    hook("codex", "UserPromptSubmit", prompt="what next?")
    nexus("codex", "tasks", "--open")
    nexus("codex", "report", task["id"], "--status", "completed", "--result",
          f"{PROJECT}/tests/test_refund.py added; 14 passed")
    reply = json.loads(stop.stdout.read())
    stop.wait(30)
    print("[claude hook] Stop returned: the conversation continues with\n"
          + "\n".join("     " + line for line in reply["reason"].splitlines()))
    nexus("claude", "listen", "off")
    nexus("claude", "read")
    nexus("claude", "tasks")
    nexus("you", "peers")
    print(f"\n(store: {BASE['NEXUS_HOME']})")


if __name__ == "__main__":
    try:
        main()
    finally:
        for proc in STAND_IN.values():
            proc.kill()
