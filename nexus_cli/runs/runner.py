"""The process that carries one run: `python -m nexus_cli.runs.runner STORE RUN_ID`.

Started by `nexus run` in a session of its own, it forks at once, before importing anything (the
caller waits only for that fork, so nothing is left a zombie of a long-lived MCP server; see
BOOT), and the child, re-parented, claims
the queued record (status `running`, its pid and start time), starts the client in a process
group of its own with nexus's hooks, keeps the client's event stream in `<store>/runs/<id>.jsonl`,
and writes the structured result when the client exits. Every step is a committed record: a
runner killed at any point leaves a run that the next look finds and marks `error` (see
`ledger.reap`). Stdlib only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from .. import clients
from ..approvals import ledger as approvals
from ..clients.claude import headless as claude
from ..clients.codex import headless as codex
from ..core.proctable import table
from ..core.store import wake
from ..core.store.db import Store
from . import ledger, procs, result

HEADLESS = {"claude": claude, "codex": codex}
# what a client's environment must not carry into a run: the caller's own session variables
# (the run is a session of its own, and nexus would refuse a process claiming another session)
SCRUB = tuple(sorted({v for a in clients.ADAPTERS.values()
                      for v in (*a.ENV_SESSION, *a.ENV_MARKERS)}
                     | {"CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT"}))


def channel(run_id: str) -> str:
    return "run:" + run_id


def folder(root: str) -> str:
    return os.path.join(root, "runs")


def client_env(base: dict, run_id: str, approvals_to: str, client: str) -> dict:
    env = {k: v for k, v in base.items() if k not in SCRUB}
    env["NEXUS_RUN"] = run_id  # the PermissionRequest hook's shell guard, and which run this is
    return HEADLESS[client].run_env(env)


# The client is started behind a gate: `sh` waits for one line on a pipe from the runner and
# only then execs the client (same pid, same start time). The runner records the pid first, so a
# client never runs unrecorded; a runner killed before it says go closes the pipe and the gate
# exits without starting anything.
# (the pipe is named by its number through /dev/fd: sh redirects only fds 0-9 by number)
GATE = 'read -r go < "/dev/fd/$1" || exit 125; [ "$go" = go ] || exit 125; shift; exec "$@"'


def carry(root: str, run_id: str) -> None:
    store = Store(root)
    out_path = os.path.join(folder(root), f"{run_id}.jsonl")
    with store.write() as conn:
        row = ledger.get(conn, run_id)
        if row is None or row["status"] != "queued":
            return  # cancelled (or reaped) before it started
        assert row is not None
        me = os.getpid()
        ledger.change(conn, run_id, status="running", runner_pid=me,
                      runner_start=procs.start_of(me), started_at=time.time(), output=out_path)
    launch = json.loads(row["launch"])
    os.makedirs(folder(root), mode=0o700, exist_ok=True)
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    err_fd = os.open(out_path + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
                     0o600)
    env = client_env(dict(os.environ), run_id, row["approvals"], row["client"])
    started = time.time()
    gate_r, gate_w = os.pipe()
    # the prompt on standard input: an unlinked file, so nothing waits on a pipe
    with tempfile.TemporaryFile(dir=folder(root)) as prompt_in:
        prompt_in.write(str(launch.get("stdin") or "").encode("utf-8"))
        prompt_in.seek(0)
        try:
            proc = subprocess.Popen(["/bin/sh", "-c", GATE, "nexus-gate", str(gate_r),
                                     *launch["argv"]],
                                    cwd=row["cwd"], env=env, stdin=prompt_in,
                                    stdout=subprocess.PIPE, stderr=err_fd, pass_fds=(gate_r,),
                                    start_new_session=True)
        except OSError as exc:
            os.close(gate_w)
            with store.write() as conn:
                ledger.change(conn, run_id, status="error", finished_at=time.time(),
                              error=f"the client could not start: {exc.strerror or exc}")
            wake.poke(root, [channel(run_id)])
            return
        finally:
            os.close(gate_r)
            os.close(err_fd)
    client_start = procs.start_of(proc.pid)
    with store.write() as conn:
        row = ledger.get(conn, run_id)
        assert row is not None  # a run's record is never deleted while it runs
        ledger.change(conn, run_id, client_pid=proc.pid, client_start=client_start,
                      client_started_at=started)
        if row["approvals"] == "nexus":
            seen = table().get(proc.pid)  # the token the hooks' process table compares
            approvals.route(conn, run_id, proc.pid, seen.start if seen else None,
                            row["dispatcher"], row["project"], started)
        cancelled = row["status"] != "running"
    if not cancelled:  # recorded: now the client may start
        try:
            os.write(gate_w, b"go\n")
        except OSError:
            pass
    os.close(gate_w)  # cancelled while starting: the gate exits without starting the client
    reader = HEADLESS[row["client"]]
    events: list[tuple[float, dict]] = []
    session_known = row["session_id"] is not None
    assert proc.stdout is not None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        for raw in proc.stdout:
            at = time.time()
            try:
                event = json.loads(raw)
            except ValueError:
                event = {"type": "raw", "text": raw.decode("utf-8", "replace").rstrip("\n")}
            if not isinstance(event, dict):
                event = {"type": "raw", "text": str(event)}
            events.append((at, event))
            out.write(json.dumps([round(at, 3), event], ensure_ascii=False) + "\n")
            out.flush()
            if not session_known:
                found = reader.read([(at, event)])["session"]
                if found:
                    session_known = True
                    with store.write() as conn:
                        ledger.change(conn, run_id, session_id=f"{row['client']}:{found}")
                    wake.poke(root, [channel(run_id)])
    code = proc.wait()
    ended = time.time()
    parts = reader.read(events)
    with store.write() as conn:
        now_row = ledger.get(conn, run_id)
        approvals.unroute(conn, run_id)
        if now_row is not None and now_row["status"] == "running":
            session = now_row["session_id"] or (
                f"{row['client']}:{parts['session']}" if parts["session"] else None)
            built = result.build(parts, row["cwd"], started, ended, row["sandbox"], session)
            error = parts["error"]
            if code and not error:
                tail = _tail(out_path + ".err")
                error = f"the client exited with status {code}" + (f": {tail}" if tail else "")
            ledger.change(conn, run_id, status="error" if error else "done", exit_code=code,
                          error=error, result=json.dumps(built, ensure_ascii=False),
                          session_id=session, finished_at=ended)
    wake.poke(root, [channel(run_id)])


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 4000))
            lines = fh.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


# how `nexus run` starts this: fork before anything is imported (the caller waits only for that
# parent), then carry the run in the re-parented child
BOOT = ("import os\nif os.fork():\n    os._exit(0)\nimport sys\n"
        "from nexus_cli.runs.runner import main\nos._exit(main(sys.argv[1:]))")


def main(argv: list[str]) -> int:
    root, run_id = argv
    try:
        carry(root, run_id)
    except BaseException as exc:  # record why, never leave it `running`
        try:
            with Store(root).write() as conn:
                row = ledger.get(conn, run_id)
                if row is not None and row["status"] in ledger.ACTIVE:
                    ledger.change(conn, run_id, status="error", finished_at=time.time(),
                                  error=f"the runner failed: {type(exc).__name__}: {exc}")
            wake.poke(root, [channel(run_id)])
        except Exception:
            pass
        return 1
    return 0


if __name__ == "__main__":
    if os.fork():
        os._exit(0)
    os._exit(main(sys.argv[1:]))
