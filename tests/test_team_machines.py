"""Two machines simulated on one: two homes, two machine ids, real hook and CLI processes run
as children of stand-in clients (`claude` on machine A, `codex` on machine B), each process in
a network namespace of its own (as root: `unshare -n`), so the only thing the two machines share
is the team database's Unix socket. A message, a delegation with its report, an ask and a wake
go both ways; with the server stopped mid-run, coded errors, nothing half written, and
everything resumes when it returns."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys

import pytest

import helpers

pytestmark = pytest.mark.slow

SA = "a1a1a1a1-0000-4000-8000-00000000000a"
SB = "b2b2b2b2-0000-4000-8000-00000000000b"
A_ID, B_ID = f"claude:{SA}", f"codex:{SB}"


def _isolated() -> list[str]:
    """`unshare -n --` where it works (root): a process with no network at all."""
    if os.geteuid() == 0 and shutil.which("unshare") and subprocess.run(
            ["unshare", "-n", "true"], capture_output=True).returncode == 0:
        return ["unshare", "-n", "--"]
    return []


class Machine:
    def __init__(self, name: str, client: str, session: str, base, url: str, cwd: str) -> None:
        from standin import StandIn

        self.client, self.session, self.cwd = client, session, cwd
        self.sid = f"{client}:{session}"
        home = base / name
        (home / "nexus").mkdir(parents=True)
        self.env = {"PATH": os.environ["PATH"], "HOME": str(home),
                    "NEXUS_HOME": str(home / "nexus"),
                    "NEXUS_MACHINE_ID": f"{name}-machine-id", "NEXUS_DATABASE_URL": url,
                    "PYTHONPATH": os.pathsep.join(sys.path)}
        self.agent = {**self.env, **({"CLAUDE_CODE_SESSION_ID": session} if client == "claude"
                                     else {"CODEX_SESSION_ID": session,
                                           "CODEX_THREAD_ID": session})}
        self.proc = StandIn(client, str(base / f"bin-{name}"))
        self.prefix = _isolated()
        self.nexus = os.path.join(os.path.dirname(sys.executable), "nexus")

    def hook(self, event: str, wait: bool = False, **fields: object) -> dict:
        payload = {"hook_event_name": event, "session_id": self.session, "cwd": self.cwd,
                   "transcript_path": None, **fields}
        return self.proc.run([*self.prefix, self.nexus, "hook", self.client], self.env,
                             json.dumps(payload), cwd=self.cwd)

    def installed(self, event: str, **fields: object) -> dict:
        """The hook command as `nexus install` writes it (its shell guard included), run by sh
        as the client runs it."""
        from nexus_cli.clients import hookdefs

        command = hookdefs.hooks(self.client, hookdefs.fills(self.env["NEXUS_HOME"]))[event][0][
            "hooks"][0]["command"]
        payload = {"hook_event_name": event, "session_id": self.session, "cwd": self.cwd,
                   "transcript_path": None, **fields}
        return self.proc.run([*self.prefix, "sh", "-c", command], self.env, json.dumps(payload),
                             cwd=self.cwd)

    def start_hook(self, event: str, env: dict | None = None, **fields: object) -> int:
        payload = {"hook_event_name": event, "session_id": self.session, "cwd": self.cwd,
                   "transcript_path": None, **fields}
        return self.proc.start([*self.prefix, self.nexus, "hook", self.client],
                               {**self.env, **(env or {})}, json.dumps(payload), cwd=self.cwd)

    def nx(self, *args: str) -> dict:
        got = self.proc.run([*self.prefix, self.nexus, *args], self.agent, cwd=self.cwd)
        if "--json" in args and got["code"] in (0,) and got["out"].strip():
            got["json"] = json.loads(got["out"])
        return got

    def start(self, *args: str) -> int:
        return self.proc.start([*self.prefix, self.nexus, *args], self.agent, cwd=self.cwd)

    def close(self) -> None:
        self.proc.close()


def until(check, what: str, limit: float = 90.0):  # type: ignore[no-untyped-def]
    return helpers.until(check, limit, what, every=0.1)


@contextlib.contextmanager
def two_machines(tmp_path, url: str, one: str, two: str):  # type: ignore[no-untyped-def]
    """The laptop (claude, in folder `one`) and the devbox (codex, in `two`) on the team
    database at `url`, both sessions started."""
    a = Machine("laptop", "claude", SA, tmp_path, url, one)
    b = Machine("devbox", "codex", SB, tmp_path, url, two)
    try:
        for m in (a, b):
            r = m.hook("SessionStart", source="startup")
            assert r["code"] == 0, r["err"]
        yield a, b
    finally:
        a.close()
        b.close()


@pytest.fixture
def team_url(pg_schemas):
    """A fresh schema of the shared test cluster (one a test before used, emptied: conftest)."""
    url = pg_schemas.take()
    yield url
    pg_schemas.give_back(url)


@pytest.fixture
def machines(tmp_path, team_url):
    """Two machines in one folder, on a fresh schema of the shared test cluster: (a, b, url)."""
    work = tmp_path / "work"
    work.mkdir()
    with two_machines(tmp_path, team_url, str(work), str(work)) as (a, b):
        yield a, b, team_url


@pytest.fixture
def machines_own_server(tmp_path, pg_cluster):
    """As `machines`, on a cluster of their own (the test stops the server): (a, b, cluster)."""
    import pgcluster

    from nexus_cli.core.store import pg

    cluster = pgcluster.start()
    try:
        conn = pg.connect(cluster.url, "/nonexistent")
        pg.migrate(conn, 0.0)
        conn.close()
        work = tmp_path / "work"
        work.mkdir()
        with two_machines(tmp_path, cluster.url, str(work), str(work)) as (a, b):
            yield a, b, cluster
    finally:
        cluster.stop()


def test_two_machines_message_delegate_ask_and_wake_both_ways(machines):
    a, b, _ = machines
    peers = {p["id"]: p for p in a.nx("peers", "--json")["json"]["items"]}
    assert B_ID in peers  # a session on another machine is a peer
    for me, other, text in ((a, b, "hello from the laptop"), (b, a, "hello from the devbox")):
        # a message: announced by the other machine's real hook
        r = me.nx("send", other.sid, text, "--json")
        assert r["code"] == 0, r["err"]
        got = other.hook("PostToolUse", tool_name="Bash", tool_use_id="t1", tool_input={})
        assert got["code"] == 0 and text in got["out"], got
        # a delegation with its report
        task = me.nx("delegate", other.sid, f"a job for {other.client}", "--json")["json"]["id"]
        r = other.nx("report", task, "--status", "completed", "--result", "done", "--json")
        assert r["code"] == 0, r["err"]
        t = me.nx("task", "get", task, "--json")["json"]
        assert (t["status"], t["result"]) == ("completed", "done")
        # an ask, woken by the reply from the other machine
        job = me.start("ask", other.sid, f"ready, {other.client}?", "--timeout", "120", "--json")

        def question(other: Machine = other):  # type: ignore[no-untyped-def]
            got = other.nx("read", "--json")
            return [m for m in got.get("json", {}).get("messages", [])
                    if m["text"].startswith("ready")]

        q = until(question, "the question never arrived")
        assert other.nx("reply", q[0]["message_id"], "yes")["code"] == 0
        answer = me.proc.collect(job, timeout=120)
        assert answer["code"] == 0, answer["err"]
        assert json.loads(answer["out"])["reply"]["text"] == "yes"
    for sleeper, waker in ((b, a), (a, b)):
        # a wake: the listening Stop hook on one machine, the message from the other
        sleeper.nx("read", "--count", "50")  # nothing unread: the Stop hook then waits
        assert sleeper.nx("listen", "on")["code"] == 0
        job = sleeper.start_hook("Stop", stop_hook_active=False, last_assistant_message="done",
                                 env={"CLAUDE_CODE_SESSION_ATTENDED": "0"})  # a `-p` run
        until(lambda s=sleeper, w=waker: any(
            p["id"] == s.sid and p["status"] == "listening"
            for p in w.nx("peers", "--json")["json"]["items"]), "never listening")
        assert waker.nx("send", sleeper.sid, f"wake up, {sleeper.client}")["code"] == 0
        woke = sleeper.proc.collect(job, timeout=120)
        assert woke["code"] == 0, woke["err"]
        reply = json.loads(woke["out"])  # Claude Code: context; Codex: a block
        text = reply["hookSpecificOutput"]["additionalContext"] if sleeper.client == "claude" \
            else reply["reason"]
        assert f"wake up, {sleeper.client}" in text
        assert sleeper.nx("listen", "off")["code"] == 0


def test_mail_from_another_machine_is_announced_after_the_next_tool_call(machines):
    """No news marker can be raised across machines: the installed PostToolUse guard lets a
    team-mode call through, and with nothing new the hook ends after one round trip (it does
    not even record the tool call, as a local hook without a marker never starts)."""
    import psycopg

    a, b, url = machines

    def last_tool() -> str | None:
        with psycopg.connect(url, autocommit=True) as conn:
            return conn.execute("SELECT last_tool FROM sessions WHERE id = %s",
                                (B_ID,)).fetchone()[0]

    quiet = b.installed("PostToolUse", tool_name="Quiet", tool_use_id="q1", tool_input={})
    assert (quiet["code"], quiet["out"], quiet["err"]) == (0, "", "")
    assert last_tool() != "Quiet"  # settled by the quick check, before the hook's write
    assert a.nx("send", B_ID, "news from the laptop")["code"] == 0
    assert not os.path.exists(os.path.join(b.env["NEXUS_HOME"], "news", str(b.proc.pid)))
    got = b.installed("PostToolUse", tool_name="Bash", tool_use_id="t1", tool_input={})
    assert got["code"] == 0 and "news from the laptop" in got["out"], got
    assert last_tool() == "Bash"
    again = b.installed("PostToolUse", tool_name="Quiet", tool_use_id="q2", tool_input={})
    assert (again["code"], again["out"]) == (0, "")  # announced once
    assert last_tool() == "Bash"
    # chat in the project is news too: the full hook runs and says so
    assert a.nx("chat", "send", "standup in five")["code"] == 0
    chat = b.installed("PostToolUse", tool_name="Bash", tool_use_id="t2", tool_input={})
    assert chat["code"] == 0 and "global chat" in chat["out"], chat


def test_two_machines_survive_the_server_going_away(machines_own_server):
    a, b, cluster = machines_own_server
    assert a.nx("send", B_ID, "before")["code"] == 0
    cluster.pause()
    r = a.nx("send", B_ID, "during")
    assert r["code"] == 6 and "team_unreachable" in r["err"] and "Traceback" not in r["err"]
    r = a.nx("delegate", B_ID, "during the outage")
    assert r["code"] == 6 and "team_unreachable" in r["err"]
    h = b.hook("PostToolUse", tool_name="Bash", tool_use_id="t2", tool_input={})
    assert h["code"] == 0 and h["out"] == "" and h["err"] == ""  # the client goes on
    cluster.resume()
    assert a.nx("send", B_ID, "after")["code"] == 0
    texts = [m["text"] for m in b.nx("read", "--json")["json"]["messages"]]
    assert texts == ["before", "after"]  # nothing half written, nothing lost
    assert a.nx("tasks", "--json")["json"]["total"] == 0
    assert "could not reach" in "".join(
        c["detail"] for c in b.nx("doctor", "--quick", "--json")["json"]["checks"]
        if c["name"] == "hooks offline")


def test_a_reservation_on_one_machine_stops_an_edit_on_the_other(machines):
    a, b, _ = machines
    os.makedirs(os.path.join(a.cwd, "src"), exist_ok=True)
    target = os.path.join(a.cwd, "src", "parser.py")
    r = a.nx("reserve", "src/parser.py", "--reason", "refactor")
    assert r["code"] == 0, r["err"]
    got = b.hook("PreToolUse", tool_name="Edit", tool_use_id="t3",
                 tool_input={"file_path": target, "old_string": "a", "new_string": "b"})
    assert got["code"] == 0 and '"permissionDecision": "deny"' in got["out"], got
    assert "refactor" in got["out"]


def person(m: Machine, *args: str) -> dict:
    """`nexus ARGS` run by the person at a shell on machine `m` (below no client)."""
    got = subprocess.run([*m.prefix, m.nexus, *args], env=m.env, cwd=m.cwd, capture_output=True,
                         text=True, timeout=120)
    out = {"code": got.returncode, "out": got.stdout, "err": got.stderr}
    if "--json" in args and got.returncode == 0 and got.stdout.strip():
        out["json"] = json.loads(got.stdout)
    return out


def clone(root, url: str) -> str:
    os.makedirs(os.path.join(root, ".git"))
    with open(os.path.join(root, ".git", "config"), "w") as fh:
        fh.write(f'[remote "origin"]\n\turl = {url}\n')
    return str(root)


@pytest.fixture
def clones(tmp_path, team_url):
    """Two machines, each with its own clone of one repository (other root paths, the remote
    spelled differently), on a fresh schema of the shared test cluster."""
    one = clone(tmp_path / "laptop-src" / "widget", "git@github.com:acme/widget.git")
    two = clone(tmp_path / "devbox-src" / "widget-ci",
                "https://ci-token:SECRET@github.com/acme/widget.git")
    with two_machines(tmp_path, team_url, one, two) as pair:
        yield pair


def test_two_clones_on_two_machines_are_one_project_and_one_login_is_two_people(clones):
    a, b = clones
    # the project: the normalised remote on both machines (no token kept), the root a path
    for m, other in ((a, b), (b, a)):
        me = m.nx("whoami", "--json")["json"]
        assert me["scope"] == "github.com/acme/widget" and me["project"] == m.cwd
        seen = {p["id"]: p for p in m.nx("peers", "--json")["json"]["items"]}
        assert other.sid in seen and seen[other.sid]["scope"] == "github.com/acme/widget"
        assert "SECRET" not in json.dumps(seen)
    # a name reaches the other machine's session without --all-workspaces
    name = a.nx("peers", "--json")["json"]["items"]
    name = next(p["name"] for p in name if p["id"] == B_ID)
    assert a.nx("send", name, "found you by name")["code"] == 0
    assert [m["text"] for m in b.nx("read", "--json")["json"]["messages"]] == [
        "found you by name"]
    # the person: one login on two machines is two participants
    pa, pb = (person(m, "whoami", "--json")["json"] for m in (a, b))
    assert pa["id"] != pb["id"] and pa["handle"] != pb["handle"]
    for p in (pa, pb):
        assert p["id"].startswith("user:") and "@" in p["id"] and p["source"] == "user"
        assert p["scope"] == "github.com/acme/widget"
    assert person(b, "send", B_ID, "the devbox person is here")["code"] == 0  # registers
    r = person(a, "send", pb["id"], "for the person at the devbox")
    assert r["code"] == 0, r["err"]
    assert [m["text"] for m in person(a, "read", "--json")["json"]["messages"]] == []
    got = person(b, "read", "--json")["json"]["messages"]
    assert [m["text"] for m in got] == ["for the person at the devbox"]
    assert got[0]["from"]["id"] == pa["id"]
    # each person's inbox and tasks are their own: a task for one is not the other's
    task = a.nx("delegate", pb["id"], "a job for the devbox person", "--json")["json"]["id"]
    assert [t["id"] for t in person(b, "tasks", "--json")["json"]["items"]] == [task]
    assert person(a, "tasks", "--json")["json"]["total"] == 0


def test_a_reservation_in_one_clone_stops_the_edit_of_the_same_file_in_the_other(clones):
    """The same project at other paths on two machines: a reservation taken in the laptop's clone
    covers the same relative file in the devbox's clone, and back."""
    a, b = clones
    for m in (a, b):
        os.makedirs(os.path.join(m.cwd, "src"), exist_ok=True)
    r = a.nx("reserve", "src/parser.py", "--reason", "refactor")
    assert r["code"] == 0, r["err"]
    theirs = os.path.join(b.cwd, "src", "parser.py")
    got = b.hook("PreToolUse", tool_name="apply_patch", tool_use_id="t1",
                 tool_input={"command": "*** Begin Patch\n*** Update File: src/parser.py\n"})
    assert got["code"] == 0 and '"permissionDecision": "deny"' in got["out"], got
    reason = json.loads(got["out"])["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("[nexus] src/parser.py is reserved by") and "refactor" in reason
    assert " on " in reason and "/laptop-machi" in reason  # the holder's machine
    free = b.hook("PreToolUse", tool_name="apply_patch", tool_use_id="t2",
                  tool_input={"command": "*** Begin Patch\n*** Add File: src/other.py\n"})
    assert (free["code"], free["out"]) == (0, ""), free
    r = b.nx("reserve", "src/", "--json")
    assert r["code"] != 0 and "reservation_conflict" in r["out"] + r["err"], r
    listed = b.nx("reservations", "--json")["json"]["items"]
    assert [(x["holder"]["id"], x["root"], x["pattern"]) for x in listed] == [
        (A_ID, a.cwd, "src/parser.py")]
    assert listed[0]["machine"].endswith("/laptop-machi")
    guard = b.nx("guard", theirs, "--json")
    assert guard["code"] != 0 and json.loads(guard["out"])["ok"] is False, guard
    # and back: the devbox's reservation stops the laptop's edit; released, it passes
    assert a.nx("release", "src/parser.py")["code"] == 0
    assert b.nx("reserve", "src/parser.py")["code"] == 0
    mine = os.path.join(a.cwd, "src", "parser.py")
    got = a.hook("PreToolUse", tool_name="Write", tool_use_id="t3",
                 tool_input={"file_path": mine, "content": "x"})
    assert '"permissionDecision": "deny"' in got["out"] and "/devbox-machi" in got["out"], got
    assert b.nx("release", "--all")["code"] == 0
    got = a.hook("PreToolUse", tool_name="Write", tool_use_id="t4",
                 tool_input={"file_path": mine, "content": "x"})
    assert (got["code"], got["out"]) == (0, ""), got


def test_a_run_on_one_machine_is_not_judged_dead_by_another(machines, tmp_path):
    """A run started on the laptop, its runner alive there: the devbox (a process namespace of
    its own, so none of the laptop's processes are in its process table) lists it and asks for
    info without taking it for dead, and the laptop collects its result."""
    from conftest import FAKE_CLIENT

    a, b, _ = machines
    elsewhere = ["unshare", "-p", "-f", "--mount-proc", "-n", "--"] if b.prefix else []
    if not elsewhere:
        pytest.skip("needs root for a process namespace of the devbox's own")
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    script = folder / "claude"
    script.write_text(f"#!{sys.executable}\nimport sys; sys.argv[0] = __file__\n"
                      f"exec(compile(open({str(FAKE_CLIENT)!r}).read(), 'fake_client.py',"
                      " 'exec'))\n")
    script.chmod(0o755)
    go = tmp_path / "go"  # the run goes on until the devbox has looked (no guess how long)
    laptop = {**a.env, "PATH": f"{folder}{os.pathsep}{a.env['PATH']}", "FAKE_HOLD": str(go)}
    started = subprocess.run([*a.prefix, a.nexus, "run", "claude", "a long job", "--detach",
                              "--json"], env=laptop, cwd=a.cwd, capture_output=True, text=True,
                             timeout=120)
    assert started.returncode == 0, started.stderr
    run_id = json.loads(started.stdout)["id"]

    def status() -> str:
        got = subprocess.run([*a.prefix, a.nexus, "run", "result", run_id, "--json"], env=laptop,
                             cwd=a.cwd, capture_output=True, text=True, timeout=120)
        return json.loads(got.stdout)["status"]

    try:
        until(lambda: status() == "running", "the laptop's runner to claim the run")
        for args in (("run", "list", "--all-workspaces", "--json"), ("info", "--json")):
            got = subprocess.run([*elsewhere, b.nexus, *args], env=b.env, cwd=b.cwd,
                                 capture_output=True, text=True, timeout=120)
            assert got.returncode == 0, got.stderr
        listed = subprocess.run([*elsewhere, b.nexus, "run", "list", "--all-workspaces", "--json"],
                                env=b.env, cwd=b.cwd, capture_output=True, text=True, timeout=120)
        assert [(r["id"], r["status"]) for r in json.loads(listed.stdout)["items"]] == [
            (run_id, "running")]
    finally:
        go.touch()  # (a failed check leaves no client holding on)
    assert until(lambda: (s := status()) != "running" and s, "the run to finish") == "done"
