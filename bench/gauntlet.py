"""The peers' own load test, MCP Agent Mail's "gauntlet": 30 agents, each its own `nexus mcp`
under its own stand-in Claude Code, send 5 messages each at once; then every recipient reads.
Printed per way in and per store: delivered, duplicates, misrouted, latency p50/p95/p99 (from
the burst's start to each send's answer), the burst's wall time and CPU seconds per message (the
servers', hooks' and commands' own, read from the process table). Then a mixed workload (send,
read, reply, inbox, peers over the agents' MCP servers) at the highest rate that holds p99
under 100 ms, held for `--seconds`.

Ways in:
- `mcp`: each agent writes its 5 `send` calls to its server at once;
- `mcp+hooks`: the same with the client's hooks firing as Claude Code fires them around
  parallel tool calls (5 PreToolUse at once, the calls bound to them through `_meta`, then 5
  PostToolUse), each hook a child of the agent's client process;
- `cli`: each agent runs 5 `nexus send` at once from its shell (150 cold processes), then
  `nexus read`.
Stores: the local SQLite file, and team mode (PostgreSQL on a throwaway cluster,
scripts/pgcluster.py).

Each agent is a stand-in client (a process named `claude`, AGENT below) that starts its own
`nexus mcp` as its child, relays JSON-RPC between this bench and it, and runs hooks and commands
as its children when asked, so nexus sees every call come from the session's own client.

Usage: python bench/gauntlet.py [--agents N] [--each N] [--ways mcp,mcp+hooks,cli]
       [--stores sqlite,team] [--seconds S] [--step S]"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(__file__))
from _util import compile_package, console_script, table

# The stand-in client: its process is named `claude` (the interpreter through a link of that
# name). argv: the MCP server's command. stdin: one JSON object a line, either {"rpc": message}
# (to the server) or {"ctl": n, ...}: "hooks": [event, ...] run at once as `<nexus> hook
# claude` children, "run": [argv, ...] at once (with "env"), "cpu": the CPU seconds of its
# children so far (the server's as it runs, the others' once reaped). stdout: the server's lines
# and {"ctl": n, ...} answers, each with "ends": seconds from its start to each child's exit.
AGENT = r"""
import json, os, resource, subprocess, sys, threading, time
nexus = sys.argv[1]
server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)
lock = threading.Lock()

def out(line):
    with lock:
        sys.stdout.buffer.write(line if isinstance(line, bytes) else line.encode() + b"\n")
        sys.stdout.flush()

def pump():
    for line in server.stdout:
        out(line)

threading.Thread(target=pump, daemon=True).start()

def at_once(jobs):
    start = time.perf_counter()
    procs = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env) for argv, _, env in jobs]
    got = [None] * len(procs)
    def finish(i):
        o, e = procs[i].communicate(jobs[i][1])
        got[i] = {"code": procs[i].returncode, "out": o.decode(errors="replace"),
                  "err": e.decode(errors="replace")[-2000:], "end": time.perf_counter() - start}
    threads = [threading.Thread(target=finish, args=(i,)) for i in range(len(procs))]
    for t in threads: t.start()
    for t in threads: t.join()
    return got

def cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(f"/proc/{server.pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return ru.ru_utime + ru.ru_stime + (int(fields[11]) + int(fields[12])) / tick

def control(req):
    if "hooks" in req:
        env = dict(os.environ)
        got = at_once([([nexus, "hook", "claude"], json.dumps(e).encode(), env)
                       for e in req["hooks"]])
    elif "run" in req:
        env = {**os.environ, **req.get("env", {})}
        got = at_once([(argv, b"", env) for argv in req["run"]])
    else:
        got = cpu()
    out(json.dumps({"ctl": req["ctl"], "got": got}))

for line in sys.stdin:
    req = json.loads(line)
    if "rpc" in req:
        server.stdin.write(json.dumps(req["rpc"]).encode() + b"\n")
        server.stdin.flush()
    else:
        threading.Thread(target=control, args=(req,), daemon=True).start()
server.stdin.close()
server.wait()
"""


class Agent:
    """One stand-in Claude Code and its `nexus mcp`, driven from this process."""

    def __init__(self, index: int, nexus: str, env: dict[str, str], cwd: str) -> None:
        self.index, self.nexus, self.cwd = index, nexus, cwd
        self.session = str(uuid.UUID(int=random.getrandbits(128), version=4))
        self.sid = f"claude:{self.session}"
        folder = tempfile.mkdtemp(prefix="nexus-agent-")
        exe = os.path.join(folder, "claude")
        os.symlink(os.path.realpath(sys.executable), exe)
        self.proc = subprocess.Popen([exe, "-S", "-c", AGENT, nexus, "mcp"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._waiting: dict[object, queue.Queue] = {}
        self._lock = threading.Lock()
        self._ids = iter(range(1, 1 << 30))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            now = time.perf_counter()
            msg = json.loads(line)
            key = ("ctl", msg["ctl"]) if "ctl" in msg else ("rpc", msg.get("id"))
            with self._lock:
                box = self._waiting.pop(key, None)
            if box is not None:
                box.put((now, msg))

    def _ask(self, key: tuple, request: dict) -> queue.Queue:
        box: queue.Queue = queue.Queue()
        with self._lock:
            self._waiting[key] = box
            assert self.proc.stdin
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
        return box

    def call(self, method: str, params: dict | None = None) -> queue.Queue:
        """A JSON-RPC request; its queue gets (arrival time, answer)."""
        n = next(self._ids)
        return self._ask(("rpc", n), {"rpc": {"jsonrpc": "2.0", "id": n, "method": method,
                                              **({"params": params} if params else {})}})

    def tool(self, name: str, args: dict, use_id: str | None = None) -> queue.Queue:
        params: dict = {"name": name, "arguments": args}
        if use_id:
            params["_meta"] = {"claudecode/toolUseId": use_id}
        return self.call("tools/call", params)

    def ctl(self, **request: object) -> object:
        n = next(self._ids)
        return self._ask(("ctl", n), {"ctl": n, **request}).get(timeout=600)[1]["got"]

    def event(self, name: str, **extra: object) -> dict:
        return {"hook_event_name": name, "session_id": self.session, "cwd": self.cwd,
                "transcript_path": None, **extra}

    def start(self) -> None:
        got = self.ctl(hooks=[self.event("SessionStart", source="startup")])
        assert got[0]["code"] == 0, got  # type: ignore[index]
        answer = self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "gauntlet", "version": "1"}})
        answer.get(timeout=120)
        assert self.proc.stdin
        with self._lock:
            self.proc.stdin.write(json.dumps({"rpc": {
                "jsonrpc": "2.0", "method": "notifications/initialized"}}).encode() + b"\n")
            self.proc.stdin.flush()

    def close(self) -> None:
        try:
            assert self.proc.stdin
            self.proc.stdin.close()
            self.proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def result(answer: dict) -> dict:
    """A tools/call answer's structured result; an error raises."""
    res = answer.get("result") or {}
    if "error" in answer or res.get("isError"):
        raise RuntimeError(f"tool call failed: {json.dumps(answer)[:500]}")
    return res.get("structuredContent") or {}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def burst(agents: list[Agent], each: int, way: str, tag: str) -> dict:
    """Every agent sends `each` messages at once (message j of agent i to agent i + j + 1), then
    every agent reads; what arrived where, the latencies, wall time and CPU."""
    n = len(agents)
    cpu0 = [a.ctl(cpu=True) for a in agents]
    latencies: list[float] = []
    failures: list[str] = []
    gate = threading.Barrier(n + 1)
    lock = threading.Lock()

    def text(i: int, j: int) -> str:
        return f"gauntlet {tag} {i}-{j}"

    def target(i: int, j: int) -> Agent:
        return agents[(i + j + 1) % n]

    def run(a: Agent) -> None:
        i = a.index
        gate.wait()
        start = time.perf_counter()
        try:
            if way == "cli":
                got = a.ctl(run=[[a.nexus, "send", target(i, j).sid, text(i, j), "--json"]
                                 for j in range(each)],
                            env={"CLAUDE_CODE_SESSION_ID": a.session})
                ends = []
                for g in got:  # type: ignore[attr-defined]
                    if g["code"] != 0:
                        raise RuntimeError(g["err"])
                    ends.append(g["end"])
            else:
                ids = [f"toolu_{tag}_{i}_{j}" for j in range(each)]
                if way == "mcp+hooks":
                    a.ctl(hooks=[a.event("PreToolUse", tool_name="mcp__nexus__send",
                                         tool_use_id=t, tool_input={}) for t in ids])
                boxes = [a.tool("send", {"target": target(i, j).sid, "text": text(i, j)},
                                ids[j] if way == "mcp+hooks" else None) for j in range(each)]
                ends = []
                for box in boxes:
                    when, answer = box.get(timeout=600)
                    result(answer)
                    ends.append(when - start)
                if way == "mcp+hooks":
                    a.ctl(hooks=[a.event("PostToolUse", tool_name="mcp__nexus__send",
                                         tool_use_id=t, tool_input={}) for t in ids])
            with lock:
                latencies.extend(ends)
        except Exception as exc:  # counted, not raised: the bench reports what was lost
            with lock:
                failures.append(f"agent {i}: {exc}"[:300])

    threads = [threading.Thread(target=run, args=(a,)) for a in agents]
    for t in threads:
        t.start()
    gate.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu = sum(a.ctl(cpu=True) - c for a, c in zip(agents, cpu0, strict=True))  # type: ignore[operator]
    seen: dict[tuple[int, int], list[int]] = {}
    for a in agents:
        for body in read_all(a, way):
            parts = body.split()
            if len(parts) == 3 and parts[0] == "gauntlet" and parts[1] == tag:
                i, j = (int(x) for x in parts[2].split("-"))
                seen.setdefault((i, j), []).append(a.index)
    expected = n * each
    misrouted = sum(1 for (i, j), where in seen.items()
                    for r in where if r != target(i, j).index)
    return {"expected": expected, "delivered": sum(1 for k in seen if k[0] < n and k[1] < each),
            "duplicates": sum(len(w) - 1 for w in seen.values()), "misrouted": misrouted,
            "latencies": latencies, "wall": wall, "cpu": cpu, "failures": failures}


def read_all(a: Agent, way: str) -> list[str]:
    """Every unread message of the agent, its texts (the read tool or `nexus read`)."""
    texts: list[str] = []
    for _ in range(100):
        if way == "cli":
            got = a.ctl(run=[[a.nexus, "read", "--json", "--count", "50"]],
                        env={"CLAUDE_CODE_SESSION_ID": a.session})[0]  # type: ignore[index]
            if got["code"] != 0:
                raise RuntimeError(got["err"])
            page = json.loads(got["out"])
        else:
            page = result(a.tool("read", {"count": 50}).get(timeout=600)[1])
        texts += [m.get("text", "") for m in page.get("messages", [])]
        if not page.get("remaining"):
            break
    return texts


def mixed(agents: list[Agent], rate: float, seconds: float) -> tuple[list[float], int]:
    """Send, read, reply, inbox and peers over the agents' MCP servers, `rate` calls a second
    in all, each agent on its own schedule: latencies from each call's scheduled time (a call
    that could not start on time counts its wait), and how many calls failed."""
    n = len(agents)
    latencies: list[float] = []
    failed = [0]
    lock = threading.Lock()
    interval = n / rate
    t0 = time.perf_counter() + 0.2
    last_read: dict[int, str] = {}

    def run(a: Agent) -> None:
        rnd = random.Random(a.index)
        k = 0
        mine: list[float] = []
        while True:
            due = t0 + (k + a.index / n) * interval
            if due - t0 >= seconds:
                break
            k += 1
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            op = rnd.choice(("send", "send", "read", "reply", "inbox", "peers"))
            pick = rnd.randrange(n - 1) if n > 1 else 0
            other = agents[pick + (pick >= a.index)] if n > 1 else a
            if op == "reply" and a.index not in last_read:
                op = "send"
            args = {"send": {"target": other.sid, "text": f"mixed {a.index}-{k}"},
                    "read": {"count": 5}, "inbox": {"limit": 5}, "peers": {"limit": 10},
                    "reply": {"message_id": last_read.get(a.index, ""),
                              "text": f"re {a.index}-{k}"}}[op]
            try:
                when, answer = a.tool(op, args).get(timeout=120)
                got = result(answer)
                mine.append(when - due)
                if op == "read" and got.get("messages"):
                    last_read[a.index] = got["messages"][-1]["message_id"]
            except Exception as exc:
                with lock:
                    failed[0] += 1
                    if failed[0] <= 3:
                        print(f"  mixed {op}: {exc}"[:400], file=sys.stderr)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=run, args=(a,)) for a in agents]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, failed[0]


def highest_rate(agents: list[Agent], step: float, seconds: float,
                 say: Callable[[str], None]) -> tuple[float, list[float], int]:
    """Double the rate while a `step`-second run holds p99 under 100 ms, then hold the last rate
    that did for `seconds` (one step down if the long run does not)."""
    rate, good = 10.0, 0.0
    while rate <= 5000:
        lat, failed = mixed(agents, rate, step)
        p99 = percentile(lat, 0.99)
        say(f"  mixed {rate:.0f}/s for {step:.0f} s: p99 {p99 * 1000:.0f} ms, {failed} failed")
        if p99 >= 0.1 or failed:
            break
        good, rate = rate, rate * 2
    rate = good or 5.0
    for _ in range(3):
        lat, failed = mixed(agents, rate, seconds)
        if percentile(lat, 0.99) < 0.1 and not failed:
            break
        rate *= 0.75
    return rate, lat, failed


def environment(home: str, url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE", "CODEX")) and k != "NEXUS_DATABASE_URL"}
    env["NEXUS_HOME"] = home
    if url:
        env["NEXUS_DATABASE_URL"] = url
    return env


def one(opts: argparse.Namespace, store: str, way: str, url: str | None, tag: str,
        say: Callable[[str], None]) -> tuple[dict, tuple | None]:
    nexus = console_script()
    env = environment(tempfile.mkdtemp(prefix="nexus-gauntlet-"), url)
    project = tempfile.mkdtemp(prefix="nexus-gauntlet-work-")
    agents = [Agent(i, nexus, env, project) for i in range(opts.agents)]
    try:
        for a in agents:
            a.start()
        res = burst(agents, opts.each, way, tag)
        load = None
        if way == "mcp" and opts.seconds > 0:
            load = highest_rate(agents, opts.step, opts.seconds, say)
    finally:
        for a in agents:
            a.close()
        shutil.rmtree(project, ignore_errors=True)
    return res, load


def run(opts: argparse.Namespace, say: Callable[[str], None] = print) -> list[dict]:
    """Every way in on every store: for each, {"store", "way", "burst": burst's counts,
    "load": highest_rate's (rate, latencies, failed) for the `mcp` way, else None}."""
    compile_package()
    found: list[dict] = []
    for store in opts.stores:
        cluster = None
        url = None
        try:
            if store == "team":
                import pgcluster  # (scripts/, on the path through _util)

                from nexus_cli.core.store import pg

                cluster = pgcluster.start()
                conn = pg.connect(cluster.url, "/nonexistent")
                pg.migrate(conn, time.time())
                conn.close()
                url = cluster.url
            for way in opts.ways:
                res, load = one(opts, store, way, url, uuid.uuid4().hex[:8], say)
                for failure in res["failures"][:5]:
                    say(f"  {failure}")
                found.append({"store": store, "way": way, "burst": res, "load": load})
        finally:
            if cluster is not None:
                cluster.stop()
    return found


def rows_of(found: list[dict], seconds: float) -> list[tuple[str, str, str, str]]:
    rows = []
    for f in found:
        res, store = f["burst"], f["store"]
        lat = res["latencies"]
        rows.append((f"[{store}] gauntlet via {f['way']}",
                     f"{res['delivered']}/{res['expected']} delivered, {res['duplicates']} "
                     f"duplicates, {res['misrouted']} misrouted",
                     "p50/p95/p99 " + "/".join(f"{percentile(lat, q) * 1000:.0f}"
                                               for q in (.5, .95, .99)) + " ms",
                     f"wall {res['wall']:.2f} s, CPU {res['cpu'] / res['expected'] * 1000:.0f}"
                     " ms/msg"))
        if f["load"] is not None:
            rate, lat, failed = f["load"]
            rows.append((f"[{store}] mixed workload, {seconds:g} s", f"{rate:.0f} calls/s",
                         f"p99 {percentile(lat, .99) * 1000:.0f} ms ({len(lat)} calls, "
                         f"{failed} failed)", "p99 < 100 ms"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=30)
    parser.add_argument("--each", type=int, default=5, help="messages each agent sends")
    parser.add_argument("--ways", default="mcp,mcp+hooks,cli")
    parser.add_argument("--stores", default="sqlite,team")
    parser.add_argument("--seconds", type=float, default=30.0,
                        help="the mixed workload's length at its rate (0: none)")
    parser.add_argument("--step", type=float, default=5.0,
                        help="seconds of each try while the rate is searched")
    opts = parser.parse_args()
    opts.ways = opts.ways.split(",")
    opts.stores = opts.stores.split(",")
    if "team" in opts.stores:
        import pgcluster

        if pgcluster.bindir() is None:
            sys.exit("bench: team mode needs PostgreSQL's server binaries (scripts/pgcluster.py)")
    table(rows_of(run(opts), opts.seconds), ratio="latency")


if __name__ == "__main__":
    main()
