"""Runs, presets, policy, info and echo with stand-in clients (tests/fake_client.py on PATH):
the seed's result shape and caps, detach and collect, cancel of the whole process group, a
runner killed at any step never leaves a run `running`, the queue limit, resume, sandbox flags,
a caller's session variables kept out of the run, and `delegate --spawn`."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from test_mcp import A_ID, run, session  # imported before any capture: the SDK keeps stderr

from helpers import A, B, kill9, raw_db, sid, until
from nexus_cli.runs import procs


def db(home: Path) -> sqlite3.Connection:
    conn = raw_db(home)
    return conn


def row(home: Path, run_id: str) -> sqlite3.Row:
    with db(home) as conn:
        return conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()


def final(nx, run_id: str, env=None, timeout: float = 60) -> dict:
    box = {}

    def done() -> bool:
        box["r"] = nx("run", "result", run_id, "--json", env=env).json
        return box["r"]["status"] in ("done", "error", "cancelled")

    until(done, timeout, f"run {run_id} to finish")
    return box["r"]


def test_a_claude_run_returns_the_seed_result_shape(nx, clients, chdir_work, home):
    from schemas import validate

    r = nx("run", "claude", "write notes", "--title", "t1", "--json")
    assert r.code == 0, r.err
    validate("run", r.json)
    out = r.json
    assert out["status"] == "done" and out["title"] == "t1" and out["client"] == "claude"
    res = out["result"]
    assert res["assistant_text"] == "I wrote notes.md"
    assert res["tool_calls"][0]["name"] == "Write" and len(res["tool_calls"][0]["input"]) <= 2000
    assert res["changes"] == [{"path": os.path.join(chdir_work, "notes.md"), "kind": "write"}]
    assert res["stats"]["scope"] == "run" and res["stats"]["input_tokens"] == 10
    assert res["stats"]["cache_hit_rate"] == 0.75
    assert out["landing"]["likely_dir"] == chdir_work  # "wrote notes.md" without a path
    assert out["session_id"].startswith("claude:") and "--resume" in out["next"]
    logged = json.loads(clients.read_text().splitlines()[-1])
    argv = logged["argv"]
    assert argv[0] == "-p" and logged["stdin"] == "write notes" and "--session-id" in argv
    assert "write notes" not in argv  # the prompt is on standard input
    assert argv[argv.index("--output-format") + 1] == "stream-json"


def test_codex_detached_is_collected_later_and_listed(nx, clients, chdir_work, monkeypatch,
                                                     tmp_path):
    from schemas import validate

    go = tmp_path / "go"  # the client answers once the test has seen the run under way
    monkeypatch.setenv("FAKE_HOLD", str(go))
    r = nx("run", "codex", "look around", "--detach", "--json")
    go.touch()
    assert r.code == 0 and r.json["status"] in ("queued", "running"), r.err
    assert "run result" in r.json["next"]
    out = final(nx, r.json["id"])
    validate("run_result", out)
    assert out["status"] == "done" and out["session_id"].startswith("codex:")
    assert out["result"]["tool_calls"] == [{"name": "shell", "input": '{"command": "ls"}'}]
    listed = nx("run", "list", "--json").json
    validate("run_list", listed)
    assert listed["total"] == 1 and listed["active"] == 0 and listed["items"][0]["has_result"]


def test_output_fields_are_capped_one_by_one(nx, clients, chdir_work, monkeypatch):
    monkeypatch.setenv("FAKE_TEXT", "é" * 20_000)
    out = nx("run", "claude", "talk a lot", "--json").json
    text = out["result"]["assistant_text"]
    assert len(text) <= 8000 and out["result"]["truncated"]["assistant_text"]
    assert "output file" in text and os.path.exists(out["output_file"])
    json.dumps(out)  # still valid JSON


def test_an_agent_run_is_its_own_session_without_the_callers_variables(nx, hook, clients,
                                                                         chdir_work):
    hook("claude", "SessionStart", sid(1), source="startup")
    out = nx("run", "claude", "x", "--json", env=A).json
    logged = json.loads(clients.read_text().splitlines()[-1])
    assert logged["claude_sid"] is None and logged["run"] == out["id"]
    assert out["dispatcher"]["id"] == f"claude:{sid(1)}"
    # another agent does not see it; the person does
    hook("codex", "SessionStart", sid(2), source="startup")
    assert nx("run", "list", "--json", env=B).json["total"] == 0
    assert nx("run", "result", out["id"], env=B).code == 3
    assert nx("run", "list", "--json").json["total"] == 1


def test_cancel_ends_the_whole_process_group_and_keeps_the_session(nx, clients, chdir_work,
                                                                   monkeypatch, home):
    monkeypatch.setenv("FAKE_SLEEP", "120")
    monkeypatch.setenv("FAKE_CHILD", "1")
    run_id = nx("run", "claude", "long", "--detach", "--json").json["id"]
    until(lambda: row(home, run_id)["client_pid"] is not None, what="the client to start")
    client = row(home, run_id)["client_pid"]
    until(lambda: procs.descendants(client), what="the client's child")
    family = [client, *procs.descendants(client)]
    r = nx("run", "cancel", run_id, "--json")
    assert r.code == 0 and r.json["ok"] and r.json["was"] == "running", r.err
    from schemas import validate

    validate("run_cancel", r.json)
    assert r.json["session_id"] and "--resume" in r.json["next"]
    until(lambda: not any(procs.start_of(p) for p in family), 20, "no process of the run left")
    out = final(nx, run_id)
    assert out["status"] == "cancelled" and out["result"] is None
    again = nx("run", "cancel", run_id, "--json")
    assert again.code == 4 and not again.json["ok"]
    assert again.json["error"] == f"run {run_id} not cancellable (status=cancelled)"


def test_a_queued_run_is_cancelled_before_it_starts(nx, clients, chdir_work, monkeypatch, home):
    from nexus_cli.runs import runs

    monkeypatch.setattr(runs, "spawn", lambda root, run_id: None)  # the runner never came
    run_id = nx("run", "codex", "x", "--detach", "--json").json["id"]
    r = nx("run", "cancel", run_id, "--json").json
    assert r["ok"] and r["was"] == "queued" and r["note"] is None


@pytest.mark.parametrize("step", ["claimed", "client running"])
def test_a_runner_killed_at_any_step_never_leaves_a_run_running(nx, clients, chdir_work,
                                                                monkeypatch, home, tmp_path,
                                                                step):
    """Killed once it has claimed the run, and while its client works (held at a barrier until
    the runner is dead); tests/test_runs_hardening.py kills it before it records its client and
    before its last write."""
    started, go = tmp_path / "started", tmp_path / "go"
    monkeypatch.setenv("FAKE_STARTED", str(started))
    monkeypatch.setenv("FAKE_HOLD", str(go))
    run_id = nx("run", "claude", "x", "--detach", "--json").json["id"]
    if step == "claimed":
        until(lambda: row(home, run_id)["runner_pid"] is not None, what="the runner's claim")
    else:
        until(started.exists, what="the client to start")
    runner = row(home, run_id)["runner_pid"]
    assert runner and row(home, run_id)["status"] == "running"
    kill9(runner)
    go.touch()  # a client the runner started may answer now, to nobody
    out = final(nx, run_id)
    assert out["status"] == "error" and "killed" in out["error"], out
    # whether or not the client's pid was recorded yet, no process of the run is left
    until(lambda: not of_run(run_id), 20, f"the run's processes to be gone: {of_run(run_id)}")


def of_run(run_id: str) -> list[int]:
    """Processes whose environment carries NEXUS_RUN=<run_id> (the client and its children)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                ours = f"NEXUS_RUN={run_id}".encode() in fh.read().split(b"\0")
            if ours and procs.start_of(int(pid)) is not None:  # not a zombie
                found.append(int(pid))
        except OSError:
            pass
    return found


def test_a_run_whose_caller_died_before_its_runner_started_becomes_an_error(nx, clients,
                                                                          chdir_work, home,
                                                                          monkeypatch):
    from nexus_cli.runs import runs

    monkeypatch.setattr(runs, "spawn", lambda root, run_id: None)  # killed right after COMMIT
    run_id = nx("run", "codex", "x", "--detach", "--json").json["id"]
    assert nx("run", "result", run_id, "--json").json["status"] == "queued"
    with db(home) as conn:
        conn.execute("UPDATE runs SET created_at = created_at - 3600 WHERE id = ?", (run_id,))
    out = nx("run", "result", run_id, "--json").json
    assert out["status"] == "error" and "never started" in out["error"]


def test_the_queue_is_bounded(nx, clients, chdir_work, monkeypatch):
    nx("config", "set", "maxRuns", "1")
    monkeypatch.setenv("FAKE_SLEEP", "60")
    first = nx("run", "codex", "x", "--detach", "--json").json["id"]
    r = nx("run", "codex", "y", "--detach")
    assert r.code == 4 and "run_queue_full: 1/1" in r.err
    nx("run", "cancel", first)


def test_resume_continues_the_session_with_its_policy(nx, clients, chdir_work):
    first = nx("run", "claude", "one", "--json").json
    nx("policy", "set", "read-only", "--session", first["session_id"])
    second = nx("run", "claude", "two", "--resume", first["session_id"], "--json").json
    assert second["session_id"] == first["session_id"] and second["sandbox"] == "read-only"
    argv = json.loads(clients.read_text().splitlines()[-1])["argv"]
    raw = first["session_id"].split(":", 1)[1]
    assert argv[argv.index("--resume") + 1] == raw and "--session-id" not in argv
    assert argv[argv.index("--permission-mode") + 1] == "default" and "Write" in argv
    r = nx("run", "codex", "x", "--resume", first["session_id"])
    assert r.code == 2 and "not a codex session" in r.err


def test_sandbox_tiers_map_to_each_clients_flags(nx, clients, chdir_work, monkeypatch,
                                                 tmp_path):
    from test_runs_hardening import codex_hooks

    from schemas import validate

    codex_hooks(nx, monkeypatch, tmp_path, trust=True)  # approvals nexus needs them trusted

    got = nx("policy", "get", "--json").json
    validate("policy_get", got)
    assert got["sandbox"] is None and got["flags"] == {"claude": [], "codex": []}
    r = nx("policy", "set", "workspace-write", "--json").json
    validate("policy_set", r)
    assert r["flags"]["claude"] == ["--permission-mode", "acceptEdits"]
    assert r["flags"]["codex"] == ["--sandbox", "workspace-write"]
    nx("run", "codex", "x", "--approvals", "nexus")
    argv = json.loads(clients.read_text().splitlines()[-1])["argv"]
    assert 'sandbox_mode="workspace-write"' in argv and "--approve-for-me" in argv
    nx("run", "codex", "x")
    argv = json.loads(clients.read_text().splitlines()[-1])["argv"]
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    nx("run", "claude", "x", "--sandbox", "danger-full-access")
    argv = json.loads(clients.read_text().splitlines()[-1])["argv"]
    assert argv[argv.index("--permission-mode") + 1] == "bypassPermissions"


def test_presets(nx, hook, clients, chdir_work, home):
    from schemas import validate

    listed = nx("preset", "list", "--json").json
    validate("preset_list", listed)
    assert {"standard", "code", "review", "minimal"} <= {p["id"] for p in listed["presets"]}
    assert listed["default"] == "standard"
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "presets.toml").write_text('[mine]\nsandbox = "read-only"\nmodel = "m1"\n'
                                       '[bad]\nsandbox = "nope"\n')
    listed = nx("preset", "list", "--json").json
    assert listed["source"] == "builtin+file"
    assert {p["id"]: p["broken"] for p in listed["presets"]}["bad"]
    r = nx("preset", "set", "mine", "--json").json
    validate("preset_set", r)
    assert r["previous"] == "standard"
    validate("preset_get", nx("preset", "get", "--json").json)
    out = nx("run", "claude", "x", "--json").json
    assert out["preset"] == "mine" and out["sandbox"] == "read-only"
    argv = json.loads(clients.read_text().splitlines()[-1])["argv"]
    assert argv[argv.index("--model") + 1] == "m1"
    assert nx("run", "claude", "x", "--preset", "bad").code == 2
    r = nx("preset", "set", "nosuch")
    assert r.code == 2 and "unknown_preset: nosuch" in r.err
    # scope session: only a blank session switches
    hook("claude", "SessionStart", sid(3), source="startup")
    assert nx("preset", "set", "code", "--scope", "session").code == 2  # needs --session
    ok = nx("preset", "set", "code", "--scope", "session", "--session", f"claude:{sid(3)}",
            "--json").json
    assert ok["session_id"] == f"claude:{sid(3)}"
    assert nx("preset", "get", "--session", f"claude:{sid(3)}", "--json").json["preset"] == "code"
    hook("claude", "UserPromptSubmit", sid(3), prompt="go")
    r = nx("preset", "set", "review", "--scope", "session", "--session", f"claude:{sid(3)}")
    assert r.code == 4 and "session_started" in r.err


def test_info_never_echoes_secrets_and_echo_echoes(nx, clients, chdir_work, monkeypatch):
    from schemas import validate

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-very-secret")
    r = nx("info", "--json")
    validate("info", r.json)
    assert "sk-very-secret" not in r.out and r.json["credentials_set"]["ANTHROPIC_API_KEY"]
    assert r.json["clients"]["claude"].endswith("/claude")
    e = nx("echo", "héllo\x1b[31m", "--json").json
    validate("echo", e)
    assert e["text"] == "héllo\x1b[31m"
    assert "\x1b" not in nx("echo", "héllo\x1b[31m").out  # escaped for people


def test_delegate_spawn_delegates_to_the_new_run(nx, hook, clients, chdir_work):
    hook("claude", "SessionStart", sid(1), source="startup")
    a = A
    task = nx("delegate", "--spawn", "codex", "count the files", "--json", env=a).json
    assert task["sender"]["id"] == f"claude:{sid(1)}" and task["target"]["id"].startswith("codex:")
    runs = nx("run", "list", "--json", env=a).json["items"]
    assert runs[0]["session_id"] == task["target"]["id"] and runs[0]["task_id"] == task["id"]
    prompt = json.loads(clients.read_text().splitlines()[-1])["stdin"]
    assert "count the files" in prompt and "nexus report" in prompt
    once = [nx("delegate", "--spawn", "claude", "y", "--request-id", "k1", "--json", env=a).json
            for _ in range(2)]
    assert once[0]["id"] == once[1]["id"] and once[1]["duplicate"]
    assert nx("run", "list", "--json", env=a).json["total"] == 2  # no second worker
    r = nx("delegate", "--spawn", "gemini", "x", env=a)
    assert r.code == 2 and "claude or codex" in r.err


def test_a_missing_client_is_a_coded_error(nx, chdir_work, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    r = nx("run", "claude", "x")
    assert r.code == 3 and "client_unavailable: claude" in r.err


def test_a_run_over_mcp_with_the_official_client(home, hook, clients, chdir_work):
    from schemas import validate

    hook("claude", "SessionStart", sid(1), source="startup")

    async def go():
        async with session(home, A_ID, args=("--tools", "default,runs")) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            r = await s.call_tool("run", {"client": "codex", "task": "over mcp"})
            e = await s.call_tool("echo", {"text": "ping"})
            return names, r, e

    names, r, e = run(go)
    assert {"run", "run_result", "info", "echo"} <= names and "approve" not in names
    assert not r.is_error, r.content
    validate("run", r.structured_content)
    assert r.structured_content["status"] == "done"
    assert r.structured_content["dispatcher"]["id"] == A_ID
    assert e.structured_content["text"] == "ping"


def _planted(conn, run_id: str, victim: subprocess.Popen, machine: str) -> None:
    """A `runs` row naming a process nexus did not start (its pid and start time), with a runner
    that is gone: what another writer of the store could plant."""
    conn.execute("INSERT INTO runs (id, seq, client, task, cwd, project, launch, dispatcher,"
                 " status, runner_pid, runner_start, client_pid, client_start, created_at,"
                 " machine) VALUES (?, 1000, 'claude', 'x', '/', '/', '{}', 'user:x', 'running',"
                 " 999999, '1', ?, ?, 0, ?)",
                 (run_id, victim.pid, procs.start_of(victim.pid), machine))
    conn.commit()


def test_a_run_record_alone_never_makes_nexus_signal_a_process(nx, chdir_work, home):
    """Records that name a process are not proof: a run whose runner died ends its client only
    when that process carries the run (NEXUS_RUN in its environment), never another one whose
    pid and start time were written into a row."""
    nx("run", "list", "--json")  # the store exists
    victim = subprocess.Popen(["sleep", "120"])
    try:
        from nexus_cli.core.proctable import machine

        with db(home) as conn:
            _planted(conn, "r-planted0000", victim, machine())
        assert nx("run", "list", "--json").code == 0
        assert row(home, "r-planted0000")["status"] == "error"  # reaped, as a dead runner's
        assert victim.poll() is None, "a process nexus did not start was signalled"
        assert procs.carries(os.getpid(), "r-planted0000") is False
    finally:
        victim.kill()
        victim.wait()


def test_another_machines_run_is_neither_judged_nor_signalled_here(nx, chdir_work, home):
    """Liveness is judged only on a record's own machine: a run of another machine whose pids
    mean nothing here stays as it is (no `error`, no signal), and cancelling it here is refused
    with where to do it."""
    nx("run", "list", "--json")
    victim = subprocess.Popen(["sleep", "120"])
    try:
        with db(home) as conn:
            _planted(conn, "r-elsewhere000", victim, "devbox/0123456789ab")
        assert nx("info", "--json").code == 0 and nx("run", "list", "--json").code == 0
        assert row(home, "r-elsewhere000")["status"] == "running"
        r = nx("run", "cancel", "r-elsewhere000", "--json")
        assert r.code == 4 and r.json["error"]["code"] == "run_elsewhere", r.out
        assert "devbox/0123456789ab" in r.json["error"]["action"]
        assert row(home, "r-elsewhere000")["status"] == "running" and victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
