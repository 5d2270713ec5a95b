"""A stand-in client process: a real process named `claude` or `codex` (the Python interpreter
started through a symlink of that name) that runs the commands it is sent, as its children.
Commands run this way have it in their process ancestry, exactly as commands an agent runs from
its shell tool have the real client.

Protocol: one JSON line per command on stdin, {"argv": [...], "env": {...}, "stdin": "..."}; one
JSON line back, {"code", "out", "err"}. With "background": true the command starts and the
answer is {"job": n} at once; {"collect": n} later waits for it and answers as above. Used by
the demo and the tests (`StandIn`, and `client_wrapper` for a stand-in that starts one command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

SERVE = r"""
import json, subprocess, sys
jobs = {}
for line in sys.stdin:
    req = json.loads(line)
    if "collect" in req:
        proc = jobs.pop(req["collect"])
        out, err = proc.stdout.read(), proc.stderr.read()
        answer = {"code": proc.wait(req.get("timeout")), "out": out, "err": err}
    else:
        proc = subprocess.Popen(req["argv"], env=req["env"], cwd=req.get("cwd"), text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        if req.get("background"):
            proc.stdin.write(req.get("stdin", ""))
            proc.stdin.close()
            jobs[len(jobs) + 1] = proc
            answer = {"job": len(jobs)}
        else:
            out, err = proc.communicate(req.get("stdin", ""))
            answer = {"code": proc.returncode, "out": out, "err": err}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"""


class StandIn:
    def __init__(self, name: str, folder: str | None = None) -> None:
        self.folder = folder or tempfile.mkdtemp(prefix="nexus-standin-")
        os.makedirs(self.folder, exist_ok=True)
        exe = os.path.join(self.folder, name)
        if not os.path.exists(exe):
            os.symlink(os.path.realpath(sys.executable), exe)
        self.proc = subprocess.Popen([exe, "-S", "-c", SERVE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env={"PATH": os.defpath})
        self.pid = self.proc.pid

    def _ask(self, request: dict) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def run(self, argv: list[str], env: dict[str, str], stdin: str = "",
            cwd: str | None = None) -> dict:
        """Run a command as this client's child; its code, stdout and stderr."""
        return self._ask({"argv": argv, "env": env, "stdin": stdin, "cwd": cwd})

    def start(self, argv: list[str], env: dict[str, str], stdin: str = "",
              cwd: str | None = None) -> int:
        """Start a command as this client's child and go on; `collect` it later."""
        return self._ask({"argv": argv, "env": env, "stdin": stdin, "cwd": cwd,
                          "background": True})["job"]

    def collect(self, job: int, timeout: float = 120) -> dict:
        return self._ask({"collect": job, "timeout": timeout})

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


WRAPPER = """#!{python} -S
# A stand-in {name}: fires the hook events it is given, as its children, then runs its command
# (stdio inherited) and exits with its status, like a client starting an MCP server.
import json, os, subprocess, sys
for hook in json.loads(os.environ.pop("STANDIN_HOOKS", "[]")):
    subprocess.run(hook["argv"], input=json.dumps(hook["event"]), text=True, check=True,
                   stdout=subprocess.DEVNULL)
sys.exit(subprocess.call(sys.argv[1:]))
"""


def client_wrapper(folder: str, name: str) -> str:
    """An executable named `name` (its process is `name`, so nexus takes it for that client)."""
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write(WRAPPER.format(python=os.path.realpath(sys.executable), name=name))
        os.chmod(path, 0o755)
    return path


def hook_events(client: str, session: str, cwd: str, bind: tuple[str, ...] = ()) -> str:
    """STANDIN_HOOKS for a client wrapper: a SessionStart, and a PreToolUse per tool-use id."""
    argv = [sys.executable, "-m", "nexus_cli", "hook", client]
    base = {"session_id": session, "cwd": cwd, "transcript_path": None}
    events = [{"argv": argv, "event": {**base, "hook_event_name": "SessionStart",
                                       "source": "startup"}}]
    events += [{"argv": argv, "event": {**base, "hook_event_name": "PreToolUse",
                                        "tool_name": "mcp__nexus__x", "tool_use_id": t}}
               for t in bind]
    return json.dumps(events)
