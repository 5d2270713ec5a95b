"""`nexus run`, `delegate --spawn` and approvals with the real Claude Code and Codex CLIs (pinned,
from npm) against the scripted fake model on 127.0.0.1: the seed's result shape, a detached run
surviving its caller, cancel leaving no process behind, --resume continuing the conversation,
the report of a spawned worker reaching its dispatcher, and permission requests answered (or
not) through `nexus approve`."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from e2e.harness import NEXUS, World, available, client_bin, wait_until

pytestmark = pytest.mark.realclient
REASON = available()
if REASON:
    pytestmark = [pytestmark, pytest.mark.skip(reason=REASON)]


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    w.install()
    # the clients on PATH for `nexus run`; Codex runs this throwaway HOME's hooks unreviewed
    w.env["PATH"] = os.pathsep.join([os.path.dirname(client_bin("claude")), w.env["PATH"]])
    w.env["NEXUS_CODEX_FLAGS"] = "--dangerously-bypass-hook-trust"
    yield w
    w.close()


def run(world: World, *args: str, check: bool = True) -> dict:
    done = world.nexus("run", *args, "--json", check=check)
    return json.loads(done.stdout)


def result(world: World, run_id: str, timeout: float = 120) -> dict:
    box = {}

    def finished() -> bool:
        box["r"] = json.loads(world.nexus("run", "result", run_id, "--json").stdout)
        return box["r"]["status"] in ("done", "error", "cancelled")

    wait_until(finished, timeout, lambda: f"run {run_id} to finish: {box.get('r')}")
    return box["r"]


def alive_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_run_returns_the_seed_result_shape_and_is_a_session(world, client):
    world.script(a1=[{"shell": "echo hi > made.txt && echo RAN"},
                     {"tool": "mcp__nexus__whoami", "input": {}},
                     {"text": "I wrote made.txt"}])
    out = run(world, client, "[run:a1] make a file", "--sandbox", "danger-full-access",
              "--title", "first")
    assert out["status"] == "done", out
    res = out["result"]
    assert res["assistant_text"] == "I wrote made.txt"
    names = [c["name"] for c in res["tool_calls"]]
    assert names[0] in ("Bash", "shell") and names[1] == "mcp__nexus__whoami"
    assert any("RAN" in r["output"] for r in res["tool_results"])
    assert res["stats"]["steps"] >= 2 and res["stats"]["input_tokens"] > 0
    assert out["landing"]["likely_dir"] == str(world.work)
    assert (world.work / "made.txt").exists()
    # the run is a nexus session like any other: hooks ran, peers see it, its MCP call was its own
    session = next(s for s in world.sessions() if s["id"] == out["session_id"])
    assert session["client"] == client
    assert out["session_id"] in json.dumps(res["tool_results"])  # whoami named the run itself


@pytest.mark.realprocs
def test_a_detached_run_survives_its_caller_and_is_collected_later(world):
    # the tool call goes on until the test has seen the run outlive its caller (no guess how long)
    world.script(d1=[{"shell": "touch begun; until [ -e go ]; do sleep 0.05; done; echo WENT"},
                     {"text": "finished"}])
    caller = subprocess.Popen([NEXUS, "run", "claude", "[run:d1] slow", "--sandbox",
                               "danger-full-access", "--json"], env=world.env, cwd=world.work,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    wait_until(lambda: (world.work / "begun").exists(), 120, "the run's tool call")
    os.killpg(caller.pid, signal.SIGKILL)  # the caller (and anything in its group) dies
    caller.wait()
    runs = json.loads(world.nexus("run", "list", "--json").stdout)["items"]
    (world.work / "go").touch()
    assert runs[0]["status"] == "running"
    out = result(world, runs[0]["id"])
    assert out["status"] == "done" and out["result"]["assistant_text"] == "finished"


def test_cancel_kills_the_process_group_and_resume_continues_the_conversation(world):
    world.script(c1=[{"shell": "touch begun; sleep 301"}, {"text": "never"}],
                 c2=[{"text": "resumed"}])
    out = run(world, "claude", "[run:c1] wait forever", "--sandbox", "danger-full-access",
              "--detach")
    wait_until(lambda: (world.work / "begun").exists(), 120, "the run's tool call")
    assert alive_with("sleep 301")
    cancelled = json.loads(world.nexus("run", "cancel", out["id"], "--json").stdout)
    assert cancelled["ok"] and cancelled["was"] == "running"
    wait_until(lambda: not alive_with("sleep 301") and not alive_with(out["id"]), 30,
               "no process of the run left")
    session = cancelled["session_id"]
    again = run(world, "claude", "[run:c2] go on", "--resume", session, "--sandbox",
                "danger-full-access")
    assert again["status"] == "done" and again["session_id"] == session
    assert world.reached("c2", "wait forever")  # the earlier turn is in the resumed context


def test_codex_resume_continues_the_same_thread(world):
    world.script(x1=[{"text": "first answer"}], x2=[{"text": "second answer"}])
    first = run(world, "codex", "[run:x1] remember the word PAPAYA")
    second = run(world, "codex", "[run:x2] which word?", "--resume", first["session_id"])
    assert second["status"] == "done" and second["session_id"] == first["session_id"]
    assert world.reached("x2", "PAPAYA")


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_delegate_spawn_ends_with_the_report_at_the_dispatcher(world, client):
    open_id = (f"{NEXUS} tasks --open --json | python3 -c 'import json,sys; "
               "print(json.load(sys.stdin)[\"items\"][0][\"id\"])'")
    world.script(w1=[{"shell": f"{NEXUS} report \"$({open_id})\" --status completed "
                               "--result 'counted 3 files'"}, {"text": "reported"}])
    world.nexus("policy", "set", "danger-full-access")  # its shell command runs unasked
    task = json.loads(world.nexus("delegate", "--spawn", client, "[run:w1] count the files",
                                  "--json").stdout)
    assert task["target"]["id"].startswith(client + ":")

    def reported() -> bool:
        tasks = json.loads(world.nexus("tasks", "--sent", "--json").stdout)["items"]
        return tasks[0]["status"] == "completed"

    wait_until(reported, 120, "the worker's report")
    inbox = json.loads(world.nexus("read", "--json").stdout)["messages"]
    assert any("counted 3 files" in m["text"] and m["kind"] == "report" for m in inbox)


ESCALATE = {"tool": "exec_command", "input": {"cmd": "echo RAN > marker.txt",
                                            "sandbox_permissions": "require_escalated",
                                            "justification": "write a marker"}}


def approvals(world: World) -> dict:
    return json.loads(world.nexus("approvals", "--json").stdout)


def wait_request(world: World) -> dict:
    box = {}

    def there() -> bool:
        box["a"] = approvals(world)
        return box["a"]["pending"] > 0

    wait_until(there, 120, lambda: f"a pending approval: {box.get('a')}")
    return box["a"]["items"][0]


@pytest.mark.parametrize("client,step,sandbox", [
    ("claude", {"shell": "echo RAN > marker.txt"}, "read-only"),
    ("codex", ESCALATE, "workspace-write"),  # an escalation: Codex asks (--approve-for-me)
])
@pytest.mark.realprocs
def test_allow_once_lets_the_call_run_and_only_one_responder_wins(world, client, step, sandbox):
    world.script(p1=[step, {"text": "after the call"}])
    out = run(world, client, "[run:p1] needs permission", "--sandbox", sandbox, "--approvals",
              "nexus", "--detach")
    item = wait_request(world)
    assert item["run_id"] == out["id"] and item["session_id"] == result_session(world, out["id"])
    told = json.loads(world.nexus("read", "--json").stdout)["messages"]  # what `watch` shows
    assert any(f"nexus approve {item['id']}" in m["text"] for m in told)
    # the person answers at a terminal; without one (a script, a detached process) it is refused
    plain = world.nexus("approve", item["id"], "allow-once", "--session", item["session_id"],
                        check=False)
    assert plain.returncode == 5 and "interactive terminal" in plain.stderr, plain.stderr
    racers = [person(world, "approve", item["id"], outcome, "--session", item["session_id"],
                     "--json") for outcome in ("allow-once", "allow-once")]
    receipts = sorted(json.loads(p.communicate(timeout=60)[0])["receipt"] for p in racers)
    assert receipts == ["accepted", "not-pending"]
    done = result(world, out["id"])
    assert done["status"] == "done", done
    assert (world.work / "marker.txt").read_text().strip() == "RAN"


def person(world: World, *args: str) -> subprocess.Popen:
    """`nexus ARGS` as the person types it: at a terminal (a pty from script(1)), in its
    foreground."""
    import shlex

    return subprocess.Popen(["script", "-qec", shlex.join([NEXUS, *args]), "/dev/null"],
                            env=world.env, cwd=world.work, stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)


def result_session(world: World, run_id: str) -> str:
    return json.loads(world.nexus("run", "result", run_id, "--json").stdout)["session_id"]


@pytest.mark.parametrize("client,answer", [("claude", "reject"), ("claude", "timeout"),
                                           ("codex", "reject"), ("codex", "timeout")])
def test_reject_and_timeout_block_the_call(world, client, answer):
    if answer == "timeout":  # the shortest wait the setting allows (else the default, 300 s)
        world.nexus("config", "set", "approvalTimeout", "1")
    step = {"shell": "echo RAN > marker.txt"} if client == "claude" else ESCALATE
    world.script(q1=[step, {"text": "gave up"}])
    out = run(world, client, "[run:q1] needs permission", "--sandbox",
              "read-only" if client == "claude" else "workspace-write", "--approvals", "nexus",
              "--detach")
    if answer == "reject":
        item = wait_request(world)
        answered = person(world, "approve", item["id"], "reject", "--session",
                          item["session_id"])
        assert answered.wait(60) == 0
    done = result(world, out["id"])
    assert done["status"] == "done" and not (world.work / "marker.txt").exists()
    expected = "rejected by user:" if answer == "reject" else "no answer within 1 s"
    assert world.reached("q1", expected)
    assert approvals(world)["pending"] == 0


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_task_beginning_with_a_dash_or_over_the_argv_limit_reaches_the_model(world, client):
    """The prompt goes on the client's standard input: a task beginning with `-` is not read as
    an option, and a task plus context within nexus's caps (well over Linux's 128 KiB limit for
    one argument) starts."""
    world.script(d1=[{"text": "dash ok"}], d2=[{"text": "long ok"}])
    for task in ("- [run:d1] --dangerously-skip-permissions fix the bug",):
        done = world.nexus("run", client, "--json", "--", task)
        out = json.loads(done.stdout)
        assert out["status"] == "done" and out["result"]["assistant_text"] == "dash ok", out
        assert world.reached("d1", "--dangerously-skip-permissions fix the bug")
    task = "[run:d2] " + "😀" * 23_000
    out = run(world, client, task, "--context", "é" * 23_000)
    assert out["status"] == "done" and out["result"]["assistant_text"] == "long ok", out
    assert world.reached("d2", "😀" * 1000)


@pytest.fixture
def fresh(tmp_path):
    """As a user's fresh install: nexus's hooks in Codex not reviewed yet (no bypass flag)."""
    w = World(tmp_path)
    w.install()
    w.env["PATH"] = os.pathsep.join([os.path.dirname(client_bin("claude")), w.env["PATH"]])
    w.env.pop("NEXUS_CODEX_FLAGS", None)
    yield w
    w.close()


def test_codex_approvals_are_refused_while_the_hook_is_untrusted(fresh):
    """Codex skips an unreviewed hook silently and `--approve-for-me` would hand the request to
    its own reviewer: nexus refuses to start such a run rather than lose the approval."""
    fresh.script(u1=[ESCALATE, {"text": "after the call"}])
    for args in (("--approvals", "nexus"), ()):
        if not args:
            assert person(fresh, "config", "set", "runApprovals", "1").wait(60) == 0
        done = fresh.nexus("run", "codex", "[run:u1] needs permission", "--sandbox",
                           "workspace-write", *args, "--detach", "--json", check=False)
        assert done.returncode == 8, (done.stdout, done.stderr)
        err = json.loads(done.stdout)["error"]
        assert err["code"] == "approvals_unavailable" and "/hooks" in err["action"], err
    assert not fresh.requests("u1") and not (fresh.work / "marker.txt").exists()
    listed = json.loads(fresh.nexus("run", "list", "--json").stdout)
    assert listed["total"] == 0


def test_codex_approvals_reach_nexus_through_the_hook_install_trust_recorded(fresh):
    """No bypass flag: once the person ran `nexus install codex --trust`, Codex runs nexus's
    PermissionRequest hook (its hash is the one Codex checks) and the request waits for
    `nexus approve`."""
    assert person(fresh, "install", "codex", "--trust").wait(60) == 0
    fresh.script(t1=[ESCALATE, {"text": "after the call"}])
    out = run(fresh, "codex", "[run:t1] needs permission", "--sandbox", "workspace-write",
              "--approvals", "nexus", "--detach")
    item = wait_request(fresh)
    assert item["run_id"] == out["id"]
    answered = person(fresh, "approve", item["id"], "allow-once", "--session",
                      item["session_id"], "--json")
    assert json.loads(answered.communicate(timeout=60)[0])["receipt"] == "accepted"
    done = result(fresh, out["id"])
    assert done["status"] == "done", done
    assert (fresh.work / "marker.txt").read_text().strip() == "RAN"
