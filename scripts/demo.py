"""nexus at work, in under a minute: a Claude Code session and a Codex session in one project find
each other, talk, and hand each other a task that cannot get lost, while you watch from a shell.

The two sessions are simulated so the demo needs no model and no API key: two stand-in processes
named `claude` and `codex` play the clients, calling the very hook entry point the real clients
call (`nexus hook claude|codex`) and running the commands an agent would run from its shell
tool. (tests/test_realclients.py does the same with the real Claude Code and Codex.) Everything
happens in a throwaway store that is removed at the end."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
import textwrap
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from standin import StandIn

BIN = os.path.join(os.path.dirname(sys.executable), "nexus")
BOLD, DIM, END = ("\033[1m", "\033[2m", "\033[0m") if sys.stdout.isatty() else ("", "", "")


class Demo:
    def __init__(self, work: str) -> None:
        self.project = os.path.join(work, "shop")
        os.makedirs(os.path.join(self.project, ".git"))
        base = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))}
        self.base = {**base, "NEXUS_HOME": os.path.join(work, "store"), "COLUMNS": "100"}
        self.ids = {"claude": str(uuid.uuid4()), "codex": str(uuid.uuid4())}
        self.env = {"claude": {"CLAUDE_CODE_SESSION_ID": self.ids["claude"], "CLAUDECODE": "1"},
                    "codex": {"CODEX_SESSION_ID": self.ids["codex"]}}
        self.clients = {c: StandIn(c, os.path.join(work, c)) for c in ("claude", "codex")}

    def close(self) -> None:
        for client in self.clients.values():
            client.close()

    def event(self, client: str, name: str, **fields: object) -> str:
        return json.dumps({"hook_event_name": name, "session_id": self.ids[client],
                           "cwd": self.project, "transcript_path": None, **fields})

    def hook(self, client: str, name: str, **fields: object) -> str | None:
        """One hook event, as the client fires it; returns what reaches its model, if anything."""
        got = self.clients[client].run([BIN, "hook", client], self.base,
                                       self.event(client, name, **fields), self.project)
        if got["code"]:
            sys.exit(f"demo: the {client} hook failed: {got['err']}")
        if not got["out"]:
            return None
        reply = json.loads(got["out"])
        return reply.get("hookSpecificOutput", {}).get("additionalContext") or reply.get("reason")

    def nexus(self, who: str, *args: str, show: bool = True) -> dict | str:
        """A command, from an agent's shell tool (`who` = claude|codex) or yours (`you`)."""
        env = {**self.base, **self.env.get(who, {})}
        if show:
            print(f"{DIM}{who}${END} nexus {' '.join(shlex.quote(a) for a in args)}")
        if who == "you":
            import subprocess

            done = subprocess.run([BIN, *args], env=env, cwd=self.project, capture_output=True,
                                  text=True)
            got = {"code": done.returncode, "out": done.stdout, "err": done.stderr}
        else:
            got = self.clients[who].run([BIN, *args], env, "", self.project)
        if got["code"]:
            sys.exit(f"demo: `nexus {' '.join(args)}` failed: {got['err']}")
        if "--json" in args:
            result = json.loads(got["out"])
            if show:  # what the agent's tool really printed, on one line
                line = json.dumps(result, ensure_ascii=False)
                print(textwrap.indent(line if len(line) <= 150 else line[:149] + "…", "  "))
            return result
        if show:
            print(textwrap.indent(got["out"].rstrip(), "  "))
        return got["out"]


def say(text: str) -> None:
    print(f"\n{BOLD}{text}{END}")


def model_sees(client: str, text: str | None) -> None:
    print(f"{DIM}-> into {client}'s context:{END}")
    print(textwrap.indent(text or "(nothing)", "   | "))


def main() -> None:
    work = tempfile.mkdtemp(prefix="nexus-demo-")
    demo = Demo(work)
    try:
        story(demo)
    finally:
        demo.close()
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{DIM}(the demo's store was in {work}, now removed){END}")


def story(d: Demo) -> None:
    say("1. Two agents start in the same project. Their hooks register them; each is greeted.")
    print(f"{DIM}(simulated: stand-in processes named claude and codex play the clients){END}")
    d.hook("codex", "SessionStart", source="startup")
    model_sees("claude", d.hook("claude", "SessionStart", source="startup"))
    d.nexus("you", "peers")

    say("2. Claude asks Codex for a review, from its shell tool. The message is stored at once.")
    d.hook("claude", "UserPromptSubmit", prompt="refactor checkout, then get it reviewed")
    sent = d.nexus("claude", "send", "codex", "Please review checkout.py: I split pay() in two.",
                   "--json")
    print(f"{DIM}(stored as {sent['message_id']}; codex is {sent['to']['status']}: "
          f"{sent['outlook']}){END}")
    d.hook("claude", "Stop", stop_hook_active=False, last_assistant_message="Asked for a review.")

    say("3. Codex's next prompt carries the announcement; it reads and replies.")
    model_sees("codex", d.hook("codex", "UserPromptSubmit", prompt="continue"))
    got = d.nexus("codex", "read", "--json")
    d.nexus("codex", "reply", got["messages"][0]["message_id"], "Looks right; one nit in refund().")
    d.nexus("claude", "message", "status", sent["message_id"])
    d.nexus("claude", "read")

    say("4. A task that cannot get lost: Claude delegates, then listens. Its turn ends, and its "
        "background Stop hook waits for news (the person's screen stays free) instead of letting "
        "the conversation go idle.")
    task = d.nexus("claude", "delegate", "codex", "Add a regression test for refund(); report the "
                   "file and the test run.", "--json")
    print(f"{DIM}(task {task['id']}: its record and its message committed together){END}")
    d.nexus("claude", "listen", "on", show=False)
    d.hook("claude", "Stop", stop_hook_active=False, last_assistant_message="Delegated.")
    waiting = d.clients["claude"].start(
        [BIN, "hook", "claude", "--wait"], d.base,
        d.event("claude", "Stop", stop_hook_active=False, last_assistant_message="Delegated."),
        d.project)
    for _ in range(1200):  # until the waiting hook shows the session as listening
        if "is listening" in d.nexus("you", "status", "claude@shop", show=False):
            break
        time.sleep(0.05)
    else:
        sys.exit("demo: claude's Stop hook did not start waiting")
    d.nexus("you", "status", "claude@shop")

    say("5. Codex's next prompt shows the obligation; it does the work and reports.")
    model_sees("codex", d.hook("codex", "UserPromptSubmit", prompt="what next?"))
    d.nexus("codex", "report", task["id"], "--status", "completed", "--result",
            f"{d.project}/tests/test_refund.py added; 14 passed")

    say("6. The report wakes Claude at once: its waiting Stop hook starts its next turn with it.")
    done = d.clients["claude"].collect(waiting)
    if done["code"] != 2:  # asyncRewake: exit 2, the announcement on stderr
        sys.exit(f"demo: claude's waiting Stop hook did not wake it: {done}")
    model_sees("claude", done["err"].strip())
    d.nexus("claude", "listen", "off", show=False)
    d.nexus("claude", "tasks")


if __name__ == "__main__":
    main()
