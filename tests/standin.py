"""A stand-in client process: a real process named `claude` or `codex` (the Python interpreter
started through a symlink of that name) that runs the commands it is sent, as its children.
Commands run this way have it in their process ancestry, exactly as commands an agent runs from
its shell tool have the real client.

Protocol: one JSON line per command on stdin, {"argv": [...], "env": {...}, "stdin": "..."}; one
JSON line back, {"code", "out", "err"}. Usable as a module (`StandIn`) by tests and scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

SERVE = r"""
import json, subprocess, sys
for line in sys.stdin:
    req = json.loads(line)
    done = subprocess.run(req["argv"], env=req["env"], input=req.get("stdin", ""),
                          capture_output=True, text=True, cwd=req.get("cwd"))
    sys.stdout.write(json.dumps({"code": done.returncode, "out": done.stdout,
                                 "err": done.stderr}) + "\n")
    sys.stdout.flush()
"""


class StandIn:
    def __init__(self, name: str, folder: str | None = None) -> None:
        self.folder = folder or tempfile.mkdtemp(prefix="nexus-standin-")
        exe = os.path.join(self.folder, name)
        if not os.path.exists(exe):
            os.symlink(os.path.realpath(sys.executable), exe)
        self.proc = subprocess.Popen([exe, "-S", "-c", SERVE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env={"PATH": os.defpath})
        self.pid = self.proc.pid

    def run(self, argv: list[str], env: dict[str, str], stdin: str = "",
            cwd: str | None = None) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"argv": argv, "env": env, "stdin": stdin,
                                          "cwd": cwd}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
