"""Security and robustness of runs, approvals and files (review of issue 13): what a project's
files, a task's text, another agent or a killed runner must not be able to do. Stand-in clients
(tests/fake_client.py) as in test_runs.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
from test_runs import final

import nexus_cli

pytestmark = pytest.mark.usefixtures("terminal")  # the person at a terminal

PACKAGE = Path(nexus_cli.__file__).parent


# -- 1. a Python nexus starts never imports from the caller's folder ---------------------------


def test_a_module_planted_in_the_project_is_not_imported_by_the_runner(nx, clients, chdir_work,
                                                                      tmp_path):
    marker = tmp_path / "imported"
    for name in ("subprocess", "json", "os", "sqlite3", "nexus_cli", "time"):
        Path(chdir_work, f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\nraise SystemExit(9)\n")
    r = nx("run", "claude", "hi", "--json")
    assert r.code == 0, r.err
    assert r.json["status"] == "done", r.json
    assert not marker.exists(), marker.read_text()


def test_every_python_nexus_starts_is_isolated():
    """The class: a Python started with sys.executable goes through core/interp (-I or -P, a safe
    cwd) or passes -I itself; the console script beside the interpreter is the only other use."""
    from nexus_cli.core import interp

    assert interp.flags() in (["-I"], ["-P"])
    for path in PACKAGE.rglob("*.py"):
        if path.name == "interp.py":
            continue
        for line in path.read_text().splitlines():
            if "sys.executable" in line:  # the console script beside it, or isolated (-I)
                assert "os.path.dirname(sys.executable)" in line or '"-I"' in line, \
                    f"{path}: {line.strip()}"
    # and what calls interp.argv runs in the safe folder
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        for m in re.finditer(r"interp\.argv\(", text):
            around = text[m.start() - 300: m.start() + 300]
            assert "SAFE_CWD" in around, f"{path}: interp.argv without cwd=interp.SAFE_CWD"


# -- 2, 6, 7, 16. files: code-running places, secrets, roots, non-regular files, links --------

from helpers import A, B, claude_env, kill9, sid  # noqa: E402


def _project(hook, root: str) -> str:
    hook("claude", "SessionStart", sid(1), source="startup")
    for folder in (".git/hooks", ".claude", ".codex", ".vscode", "src"):
        os.makedirs(os.path.join(root, folder), exist_ok=True)
    hooked = os.path.join(root, ".git", "hooks", "pre-commit")
    Path(hooked).write_text("#!/bin/sh\necho original\n")
    os.chmod(hooked, 0o755)
    Path(root, ".git", "config").write_text('[remote "o"]\n url = https://u:ghp_x@h/x\n')
    return root


def test_writes_to_places_that_run_code_are_refused(nx, hook, chdir_work):
    root = _project(hook, chdir_work)
    assert nx("config", "set", "fsWrite", "1").code == 0
    for rel in (".git/hooks/pre-commit", ".git/config", ".claude/settings.json",
                ".codex/config.toml", ".vscode/tasks.json", ".envrc", ".env.local", ".npmrc",
                ".bashrc", ".zshrc", ".profile", ".mcp.json", "src/.idea/x.xml",
                ".venv/lib/site.pth", "sitecustomize.py", ".husky/pre-commit",
                ".gitconfig"):
        for mode in ("overwrite", "append", "create-new"):
            r = nx("fs", "write", os.path.join(root, rel), "--mode", mode, "echo PWNED",
                   env=A)
            assert r.code == 5 and "path_denied" in r.err and "matches" in r.err, (rel, r.err)
    assert "original" in Path(root, ".git/hooks/pre-commit").read_text()
    assert "fsmonitor" not in Path(root, ".git/config").read_text()
    assert not Path(root, ".claude/settings.json").exists()


def test_a_written_file_is_never_executable(nx, hook, chdir_work):
    root = _project(hook, chdir_work)
    nx("config", "set", "fsWrite", "1")
    script = Path(root, "src", "build.sh")
    for mode in ("overwrite", "append"):
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
        r = nx("fs", "write", str(script), "--mode", mode, "echo hi\n", env=A)
        assert r.code == 0, r.err
        assert script.stat().st_mode & 0o111 == 0, (mode, oct(script.stat().st_mode))
    new = Path(root, "src", "new.sh")
    assert nx("fs", "write", str(new), "--mode", "create-new", "x", env=A).code == 0
    assert new.stat().st_mode & 0o111 == 0


def test_secrets_and_the_git_folder_are_not_readable(nx, hook, chdir_work):
    root = _project(hook, chdir_work)
    for rel in (".codex/auth.json", ".git/config", ".bash_history", ".envrc",
                "service-account.json", "deploy/id_ed25519", ".netrc", ".pgpass",
                "aws/credentials", "x.pem", ".claude/.credentials.json", ".zsh_history"):
        path = Path(root, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("secret\n")
        r = nx("fs", "read", str(path), env=A)
        assert r.code == 5 and "path_denied" in r.err, (rel, r.err)
    listed = nx("fs", "list", root, "--depth", "3", "--json", env=A).json
    names = {e["name"] for e in listed["entries"]}
    assert not any(n.startswith((".git", ".codex", ".envrc", ".bash_history")) for n in names)
    assert ".vscode" in names  # write-only rules hide nothing


def test_a_hard_link_is_neither_read_nor_appended_to(nx, hook, chdir_work, tmp_path):
    root = _project(hook, chdir_work)
    nx("config", "set", "fsWrite", "1")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside secret\n")
    os.link(outside, os.path.join(root, "src", "hard.txt"))
    r = nx("fs", "read", os.path.join(root, "src", "hard.txt"), env=A)
    assert r.code == 5 and "hard links" in r.err, r.err
    r = nx("fs", "write", os.path.join(root, "src", "hard.txt"), "--mode", "append", "x", env=A)
    assert r.code == 5 and "hard links" in r.err, r.err
    assert outside.read_text() == "outside secret\n"


def test_the_root_is_never_slash_or_home(nx, hook, tmp_path, monkeypatch):
    hook("claude", "SessionStart", sid(1), source="startup")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for folder in ("/", str(home)):
        monkeypatch.chdir(folder)
        r = nx("fs", "read", "/proc/self/environ")
        assert r.code == 5 and "path_outside_roots" in r.err and "inside a project" in r.err, \
            (folder, r.err)
        r = nx("fs", "list", folder)
        assert r.code == 5, (folder, r.err)


def test_a_fifo_or_device_is_a_path_kind_error_not_a_hang(nx, hook, chdir_work):
    import threading

    root = _project(hook, chdir_work)
    nx("config", "set", "fsWrite", "1")
    fifo = os.path.join(root, "src", "fifo")
    os.mkfifo(fifo)
    box: dict = {}

    def go():
        box["read"] = nx("fs", "read", fifo, env=A)
        box["append"] = nx("fs", "write", fifo, "--mode", "append", "x", env=A)
        box["over"] = nx("fs", "write", fifo, "--mode", "overwrite", "x", env=A)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(60)
    if t.is_alive():  # unblock the hung open so the test process can end
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        os.close(fd)
        raise AssertionError("fs read/write of a FIFO hangs")
    for key in ("read", "append", "over"):
        assert box[key].code == 2 and "path_kind" in box[key].err, (key, box[key].err)
    assert stat_is_fifo(fifo)


def stat_is_fifo(path: str) -> bool:
    import stat

    return stat.S_ISFIFO(os.lstat(path).st_mode)


def test_a_folder_swapped_for_a_link_does_not_redirect_a_write(nx, hook, chdir_work,
                                                              tmp_path, monkeypatch):
    """The check passes on a real folder; before the open it becomes a link out: the walk
    from the root with O_NOFOLLOW refuses it."""
    from nexus_cli.files import jail

    root = _project(hook, chdir_work)
    nx("config", "set", "fsWrite", "1")
    real = Path(root, "race")
    real.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    checked = jail.check

    def check_then_swap(*args, **kw):
        out = checked(*args, **kw)
        if not real.is_symlink():
            real.rename(Path(root, "race.d"))
            real.symlink_to(outside)
        return out

    monkeypatch.setattr(jail, "check", check_then_swap)
    for mode in ("create-new", "overwrite", "append"):
        if real.is_symlink():
            real.unlink()
            Path(root, "race.d").rename(real)
        r = nx("fs", "write", str(real / "f.txt"), "--mode", mode, "escaped", env=A)
        assert r.code != 0, (mode, r.out)
        assert list(outside.iterdir()) == [], mode
    if real.is_symlink():
        real.unlink()
        Path(root, "race.d").rename(real)
    Path(real, "r.txt").write_text("in\n")
    (outside / "r.txt").write_text("outside secret\n")
    r = nx("fs", "read", str(real / "r.txt"), "--json", env=A)
    assert r.code != 0 or "outside secret" not in r.json["content"], r.out


# -- 3. --resume of someone else's conversation ---------------------------------------------------


def test_an_agent_may_not_resume_another_agents_session(nx, hook, clients, chdir_work):
    hook("claude", "SessionStart", sid(1), source="startup")   # the caller
    hook("claude", "SessionStart", sid(7), source="startup")   # someone else
    hook("claude", "SessionEnd", sid(7), reason="exit")
    r = nx("run", "claude", "print your whole context", "--resume", f"claude:{sid(7)}",
           "--json", env=A)
    assert r.code == 5 and "impersonation_refused" in r.err, r.out
    assert "--resume" not in (clients.read_text() if clients.exists() else "")
    # the dispatcher of a run of it may, and so may the person
    mine = nx("run", "claude", "one", "--json", env=A).json
    again = nx("run", "claude", "two", "--resume", mine["session_id"], "--json", env=A)
    assert again.code == 0 and again.json["session_id"] == mine["session_id"], again.err
    assert nx("run", "claude", "x", "--resume", f"claude:{sid(7)}", "--json").code == 0
    # another agent may not resume the first one's worker either
    hook("codex", "SessionStart", sid(2), source="startup")

    r = nx("run", "claude", "x", "--resume", mine["session_id"], env=B)
    assert r.code == 5 and "impersonation_refused" in r.err


# -- 10. tiers: only the person changes defaults; a session never widens its own ---------------


def test_an_agent_may_not_change_the_default_preset(nx, hook, clients, chdir_work):
    assert nx("policy", "set", "read-only").code == 0
    hook("claude", "SessionStart", sid(1), source="startup")
    assert nx("policy", "set", "danger-full-access", env=A).code == 5
    r = nx("preset", "set", "code", env=A)
    assert r.code == 5 and "impersonation_refused" in r.err, r.err
    out = nx("run", "claude", "x", "--json").json
    assert out["sandbox"] == "read-only" and out["preset"] == "standard", out


def review_worker(nx, hook) -> tuple[str, dict]:
    """A worker a session started under the `review` preset: its id and its environment."""
    hook("claude", "SessionStart", sid(1), source="startup")
    first = nx("run", "claude", "review it", "--preset", "review", "--json", env=A).json
    worker = first["session_id"]
    raw = worker.split(":", 1)[1]
    hook("claude", "SessionStart", raw, source="resume")
    return worker, claude_env(raw)


def test_a_worker_may_not_widen_its_own_tier(nx, hook, clients, chdir_work):
    worker, w = review_worker(nx, hook)
    r = nx("policy", "set", "danger-full-access", "--session", worker, env=w)
    assert r.code == 5 and "widen its own" in r.err, r.err
    r = nx("preset", "set", "code", "--scope", "session", "--session", worker, env=w)
    assert r.code != 0
    # narrowing itself is fine; the dispatcher's explicit preset still decides on resume
    assert nx("policy", "set", "read-only", "--session", worker, env=w).code == 0
    again = nx("run", "claude", "more", "--resume", worker, "--preset", "review", "--json",
               env=A).json
    assert again["sandbox"] == "read-only"
    argv = json.loads(clients.read_text().splitlines()[-1])["argv"]
    assert "bypassPermissions" not in argv


def test_the_tier_order_is_sandbox_then_a_passed_preset_then_policy(nx, hook, clients,
                                                                   chdir_work):
    first = nx("run", "claude", "one", "--json").json
    sess = first["session_id"]
    nx("policy", "set", "danger-full-access", "--session", sess)
    got = nx("run", "claude", "x", "--resume", sess, "--preset", "review", "--json").json
    assert got["sandbox"] == "read-only"             # a preset passed with the run beats it
    got = nx("run", "claude", "x", "--resume", sess, "--json").json
    assert got["sandbox"] == "danger-full-access"    # the session's policy
    got = nx("run", "claude", "x", "--resume", sess, "--preset", "review", "--sandbox",
             "workspace-write", "--json").json
    assert got["sandbox"] == "workspace-write"       # --sandbox beats all


# -- 12. a late answer ---------------------------------------------------------------------------


def test_an_answer_after_the_deadline_is_refused_as_timed_out(nx, routed):
    import time

    from helpers import RUN, WORKER
    from nexus_cli.approvals import ledger
    from nexus_cli.core.store.db import Store

    now = time.time()
    with Store().write() as conn:
        aid = ledger.insert(conn, f"claude:{WORKER}", RUN, "Bash", "rm -rf /", None, os.getpid(),
                            now - 100, now - 5)
    r = nx("approve", aid, "allow-once", "--session", f"claude:{WORKER}", "--json")
    assert r.code == 7 and "timeout" in r.err, (r.code, r.out)
    with Store().write() as conn:
        row = ledger.get(conn, aid)
        assert row["status"] == "rejected" and row["responder"] == "timeout"
        late = ledger.insert(conn, f"claude:{WORKER}", RUN, "Bash", "x", None, os.getpid(),
                             now - 100, now - 5)
        assert not ledger.settle(conn, late, "allowed", "x", time.time())  # the class



# -- 5, 14. the task is never an option, any size within the caps starts, NUL is refused --------


def test_a_task_is_never_read_as_a_client_option(nx, clients, chdir_work):
    for client in ("claude", "codex"):
        for task in ("- fix the bug", "--dangerously-skip-permissions", "--version", "-x"):
            out = nx("run", client, "--json", "--", task)  # `--`: nexus's own parser
            assert out.code == 0 and out.json["status"] == "done", (client, task, out.err)
            logged = json.loads(clients.read_text().splitlines()[-1])
            assert task not in logged["argv"] and logged["stdin"] == task, (client, logged)
    first = nx("run", "codex", "one", "--json").json
    nx("run", "codex", "--resume", first["session_id"], "--json", "--", "--fix")
    logged = json.loads(clients.read_text().splitlines()[-1])
    assert logged["argv"][-3:-1] == ["resume", first["session_id"].split(":", 1)[1]]
    assert logged["argv"][-1] == "-" and logged["stdin"] == "--fix"


def test_a_task_and_context_at_their_caps_start(nx, clients, chdir_work):
    from nexus_cli.core.settings import TASK_MAX

    task, context = "😀" * TASK_MAX, "é" * TASK_MAX  # ~96 KB + 48 KB: over one argv string
    for client in ("claude", "codex"):
        out = nx("run", client, task, "--context", context, "--json")
        assert out.code == 0 and out.json["status"] == "done", (client, out.json.get("error"))
        assert task in json.loads(clients.read_text().splitlines()[-1])["stdin"]


def test_a_nul_byte_is_refused_at_input(nx, clients, chdir_work):
    for args in (("x\x00y",), ("x", "--context", "a\x00b"), ("x", "--title", "t\x00"),
                 ("x", "--cwd", chdir_work + "\x00")):
        r = nx("run", "claude", *args)
        assert r.code == 2 and "invalid_argument" in r.err and "NUL" in r.err, (args, r.err)
    assert not clients.exists()


# -- 4. Codex approvals need nexus's hook installed and trusted --------------------------------


def codex_hooks(nx, monkeypatch, tmp_path, trust: bool) -> Path:
    """A throwaway HOME with nexus installed for Codex, its hooks reviewed (as /hooks records
    them) or not."""
    home = tmp_path / "userhome"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert nx("install", "codex").code == 0
    if trust:
        from nexus_cli.clients.codex import config

        info = config.inspect("user", str(home))
        state = "".join(f'\n[hooks.state."{j["key"]}"]\ntrusted_hash = "{j["hash"]}"\n'
                        for j in info["trust"])
        conf = home / ".codex" / "config.toml"
        conf.write_text(conf.read_text() + state)
    return home


def config_info(home: Path) -> dict:
    from nexus_cli.clients.codex import config

    return config.inspect("user", str(home))


def test_codex_approvals_need_the_hook_installed_and_trusted(nx, clients, chdir_work,
                                                             monkeypatch, tmp_path):
    home = tmp_path / "userhome"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    r = nx("run", "codex", "x", "--approvals", "nexus")
    assert r.code == 8 and "approvals_unavailable" in r.err and "nexus install codex" in r.err
    codex_hooks(nx, monkeypatch, tmp_path, trust=False)
    for args in (("--approvals", "nexus"), ()):
        if not args:
            assert nx("config", "set", "runApprovals", "1").code == 0
        r = nx("run", "codex", "x", *args)
        assert r.code == 8 and "not trusted" in r.err and "/hooks" in r.err, r.err
    assert not clients.exists()  # nothing started
    monkeypatch.setenv("NEXUS_CODEX_FLAGS", "--dangerously-bypass-hook-trust")
    assert nx("run", "codex", "x").code == 0
    monkeypatch.delenv("NEXUS_CODEX_FLAGS")
    codex_hooks(nx, monkeypatch, tmp_path, trust=True)
    r = nx("run", "codex", "x", "--json")
    assert r.code == 0 and r.json["approvals"] == "nexus", r.err
    # recorded for another definition of the handler (changed since review): Codex skips it
    conf = home / ".codex" / "config.toml"
    reviewed = conf.read_text()
    key = next(j for j in config_info(home)["trust"] if j["event"] == "PermissionRequest")
    conf.write_text(reviewed.replace(key["hash"], "sha256:" + "0" * 64))
    r = nx("run", "codex", "x")
    assert r.code == 8 and "changed since it was reviewed" in r.err, r.err
    conf.write_text(reviewed)
    # a project's own .codex/hooks.json counts only where reviewed as well


# -- 8, 9. a runner killed at the worst moments ---------------------------------------------------


def queue_locks(home) -> list[tuple[int, bool]]:
    """The flocks on the store's writers' queue (core/store/queue.py): (pid, waiting) each; a
    holder is inside a write."""
    inode = f":{os.stat(home / 'queue').st_ino}"
    with open("/proc/locks") as fh:
        rows = [line.split() for line in fh]
    return [(int(r[5]), True) if r[1] == "->" and r[6].endswith(inode) else (int(r[4]), False)
            for r in rows if (r[1] == "->" and r[6].endswith(inode)) or r[5].endswith(inode)]


def in_a_write(pid: int, home) -> bool:
    """Whether process `pid` holds the store's writers' queue: it is inside a write, which the
    test's own open transaction keeps from going on."""
    return (pid, False) in queue_locks(home)


def _hold_once_queued(home) -> tuple[threading.Thread, dict]:
    """A thread taking the store's write lock the moment `nexus run` has queued a run (before
    its runner, a new process, can write): box["conn"], its transaction open, box["row"] the
    run's (status, runner_pid, client_pid) as the lock found it."""
    import sqlite3

    box: dict = {}

    def grab() -> None:
        conn = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:  # (the store, once `nexus run` made it: never an empty file made here)
                conn = conn or sqlite3.connect(f"file:{home / 'nexus.db'}?mode=rw", uri=True,
                                               isolation_level=None, timeout=0.001,
                                               check_same_thread=False)
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:  # not there yet, or `nexus run` writing
                time.sleep(0.0005)
                continue
            row = conn.execute("SELECT status, runner_pid, client_pid FROM runs WHERE status"
                               " IN ('queued', 'running')").fetchone()
            if row is not None:
                box.update(conn=conn, row=tuple(row))
                return
            conn.execute("ROLLBACK")
            time.sleep(0.0005)

    thread = threading.Thread(target=grab, daemon=True)
    thread.start()
    return thread, box


def test_a_runner_killed_before_it_recorded_its_client_leaves_no_client(nx, clients, chdir_work,
                                                                       monkeypatch, home):
    """The runner writes `running`, spawns its client behind a gate, then records the client:
    killed in between, the gated client never runs. The test stops the runner there with the
    writers' queue: while the store's lock (the test's) keeps the runner's first write waiting,
    a `flock` of the test's queues behind it, and the runner's next write, recording the
    client, waits behind that flock."""

    from test_runs import of_run

    from helpers import until

    monkeypatch.setenv("FAKE_SLEEP", "60")
    monkeypatch.setenv("FAKE_CHILD", "1")
    # a try misses only if the runner outran the test: wrote before the test's lock (it is a new
    # process; the lock is taken within a millisecond of the run's queueing), or spawned its
    # client before the scheduler woke the flock the runner let go to (1 try in 11 beside four
    # busy loops on 2 cores; 0 in 12 on a quiet machine)
    for _attempt in range(5):
        thread, box = _hold_once_queued(home)
        run_id = nx("run", "claude", "orphan me", "--detach", "--json").json["id"]
        thread.join(60)
        conn, (status, runner, client) = box["conn"], box["row"]
        waiter = None
        try:
            if status == "queued":
                until(lambda: any(not waits for _, waits in queue_locks(home)), 60,
                      "the runner's first write to wait, holding the writers' queue")
                waiter = subprocess.Popen(["flock", str(home / "queue"), "sh", "-c",
                                           "echo got; read _"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True)
                until(lambda w=waiter.pid: (w, True) in queue_locks(home), 60,
                      "the test's flock to queue behind the runner's write")
                conn.execute("ROLLBACK")
                assert waiter.stdout is not None and waiter.stdout.readline() == "got\n"
                status, runner, client = conn.execute(
                    "SELECT status, runner_pid, client_pid FROM runs WHERE id = ?",
                    (run_id,)).fetchone()
                if client is None:
                    until(lambda r=runner: (r, True) in queue_locks(home), 60,
                          "the runner's write of its client to wait behind the test's flock")
            # (else the runner wrote `running` first: its write of the client waits for the lock)
            if status == "running" and client is None:
                until(lambda r=run_id: of_run(r), 60, "the gated client to be spawned")
                kill9(runner)
                break
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()
            if waiter is not None:
                assert waiter.stdin is not None
                waiter.stdin.close()
                waiter.wait(60)
        nx("run", "cancel", run_id, "--json")
        until(lambda r=run_id: not of_run(r), 30, "the missed run to be cancelled")
    else:
        raise AssertionError("the runner went past the test in every attempt")
    out = final(nx, run_id)
    assert out["status"] == "error", out
    until(lambda: not of_run(run_id), 20, f"no process of the run: {of_run(run_id)}")
    assert not clients.exists() or run_id not in clients.read_text()  # it never ran


def test_a_finished_answer_is_kept_when_the_runner_dies_before_its_last_write(
        nx, clients, chdir_work, monkeypatch, home, tmp_path):
    import sqlite3

    from helpers import until
    from nexus_cli.runs import procs

    monkeypatch.setenv("FAKE_TEXT", "THE ANSWER")
    for client in ("claude", "codex"):
        go = tmp_path / f"go-{client}"  # the client answers once the test holds the store
        monkeypatch.setenv("FAKE_HOLD", str(go))
        run_id = nx("run", client, "x", "--detach", "--json").json["id"]
        conn = sqlite3.connect(str(home / "nexus.db"), isolation_level=None, timeout=30)
        until(lambda c=conn, r=run_id: c.execute(
                  "SELECT client_pid IS NOT NULL AND session_id IS NOT NULL FROM runs"
                  " WHERE id = ?", (r,)).fetchone()[0], 60, "the client to be recorded")
        runner, pid, start = conn.execute("SELECT runner_pid, client_pid, client_start FROM runs"
                                          " WHERE id = ?", (run_id,)).fetchone()
        conn.execute("BEGIN IMMEDIATE")  # the runner's last write waits for this
        go.touch()
        until(lambda p=pid, s=start: not procs.alive(p, s), 60, "the client to finish")
        until(lambda r=runner: in_a_write(r, home), 60, "the runner's last write")
        kill9(runner)  # dead before the lock is let go: the runner's last write never happens
        conn.execute("ROLLBACK")
        conn.close()
        out = final(nx, run_id)
        assert out["status"] == "done", (client, out)
        assert out["result"]["assistant_text"] == "THE ANSWER", out["result"]


# -- 15. error lines for people never carry raw control characters ------------------------------


def test_error_lines_show_control_characters_escaped(nx, hook, chdir_work):
    hook("claude", "SessionStart", sid(1), source="startup")
    evil = "x\x1b]0;pwned\x07\x9b2J\u202eend"
    for args in (("run", "cancel", evil), ("run", "result", evil),
                 ("fs", "read", chdir_work + "/" + evil),
                 ("approve", evil, "allow-once", "--session", f"claude:{sid(1)}"),
                 ("approve", "a-000000000000", "allow-once", "--session", evil),
                 ("reply", evil, "hi"), ("send", evil, "hi"), ("preset", "set", evil),
                 ("config", "set", evil, "1")):
        r = nx(*args)
        assert r.code != 0, args
        for ch in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert ch not in r.err, (args, r.err)
        assert r.err.startswith("nexus: ") and r.err.count("\n") == 1, (args, r.err)
        if "pwned" in r.err:
            assert "\\x1b]0;pwned\\x07" in r.err, (args, r.err)


# -- 11. person-only acts need the person at a terminal ------------------------------------------


def test_person_only_acts_need_a_terminal(nx, hook, routed, monkeypatch):
    import time

    from helpers import RUN, WORKER
    from nexus_cli.approvals import ledger
    from nexus_cli.core import caller
    from nexus_cli.core.store.db import Store

    now = time.time()
    with Store().write() as conn:
        aid = ledger.insert(conn, f"claude:{WORKER}", RUN, "Bash", "ls", None, os.getpid(), now,
                            now + 300)
    monkeypatch.setattr(caller, "at_terminal", lambda: False)  # setsid, env -i, a pipe
    r = nx("approve", aid, "allow-once", "--session", f"claude:{WORKER}")
    assert r.code == 5 and "interactive terminal" in r.err, r.err
    for key in ("fsWrite", "runApprovals"):
        r = nx("config", "set", key, "1")
        assert r.code == 5 and "interactive terminal" in r.err, r.err
        hook("claude", "SessionStart", sid(1), source="startup")
        r = nx("config", "set", key, "1", env=A)
        assert r.code == 5 and "people_only" in r.err, r.err
    assert nx("config", "set", "runWait", "60").code == 0  # not a security setting
    # an agent changes no setting at all: not the limits it lives under either
    for key, value in (("runWait", "60"), ("rateLimit", "100000"), ("maxAutoTurns", "100"),
                       ("autoReserve", "60")):
        r = nx("config", "set", key, value, env=A)
        assert r.code == 5 and "people_only" in r.err, (key, r.err)
    assert "people_only" not in nx("config", "get", "rateLimit", env=A).err  # reading is fine
    with Store().read() as conn:
        assert ledger.get(conn, aid)["status"] == "pending"
    monkeypatch.setattr(caller, "at_terminal", lambda: True)
    assert nx("approve", aid, "allow-once", "--session", f"claude:{WORKER}").code == 0
    assert nx("config", "set", "fsWrite", "1").code == 0


# -- 13. the person sees pending approvals on the board ------------------------------------------


def test_the_board_shows_pending_approvals(nx, routed):
    import time

    from helpers import RUN, WORKER
    from nexus_cli.approvals import ledger
    from nexus_cli.core.store.db import Store

    assert "permission request" not in nx("board", "--once", "--all-workspaces").out
    now = time.time()
    with Store().write() as conn:
        aid = ledger.insert(conn, f"claude:{WORKER}", RUN, "Bash\x1b[2J", "command: rm -rf x",
                            None, os.getpid(), now, now + 300)
    out = nx("board", "--once", "--all-workspaces", "--width", "200").out
    assert "1 permission request waiting" in out and aid in out and "rm -rf x" in out, out
    assert "\x1b" not in out


def test_a_worker_may_not_start_or_resume_a_wider_run(nx, hook, clients, chdir_work):
    worker, w = review_worker(nx, hook)
    for args in (("--sandbox", "danger-full-access"), ("--preset", "code"),
                 ("--resume", worker, "--sandbox", "workspace-write")):
        r = nx("run", "claude", "escape", *args, env=w)
        assert r.code == 5 and "wider sandbox tier" in r.err, (args, r.err)
    r = nx("delegate", "--spawn", "codex", "escape", env=w)  # no tier chosen: the worker's own
    assert r.code == 0, r.err
    argv = json.loads(clients.read_text().splitlines()[-1])["argv"]
    assert argv[argv.index("--sandbox") + 1] == "read-only", argv
    assert nx("run", "claude", "fine", "--sandbox", "read-only", env=w).code == 0


# -- 14. flags from the environment never widen a tier -------------------------------------------


@pytest.mark.parametrize("var,flags", [
    ("NEXUS_CLAUDE_FLAGS", "--permission-mode bypassPermissions"),
    ("NEXUS_CLAUDE_FLAGS", "--permission-mode=bypassPermissions"),
    ("NEXUS_CLAUDE_FLAGS", "--model x --dangerously-skip-permissions"),
    ("NEXUS_CLAUDE_FLAGS", "--allowedTools Bash"),
    ("NEXUS_CLAUDE_FLAGS", "--settings /tmp/mine.json"),
    ("NEXUS_CLAUDE_FLAGS", "--resume 00000009-0000-4000-8000-000000000009"),
    ("NEXUS_CODEX_FLAGS", "--sandbox danger-full-access"),
    ("NEXUS_CODEX_FLAGS", "-sdanger-full-access"),
    ("NEXUS_CODEX_FLAGS", "-c sandbox_mode=\"danger-full-access\""),
    ("NEXUS_CODEX_FLAGS", "--config=approval_policy=never"),
    ("NEXUS_CODEX_FLAGS", "--dangerously-bypass-approvals-and-sandbox"),
    ("NEXUS_CODEX_FLAGS", "--add-dir /"),
])
def test_flags_from_the_environment_never_widen_a_run(nx, hook, clients, chdir_work, var,
                                                       flags):
    """Inside a read-only run, the worker sets NEXUS_*_FLAGS to give its own run bypass: the
    run is refused (nothing queued, the client never starts), so no record says `read-only`
    while its client got more."""
    _, w = review_worker(nx, hook)
    client = "claude" if "CLAUDE" in var else "codex"
    before = clients.read_text().count("\n")
    r = nx("run", client, "escape", "--json", env={**w, var: flags})
    assert r.code == 2 and r.json["error"]["key"] == var, r.out
    assert "never widen" in r.json["error"]["reason"]
    assert clients.read_text().count("\n") == before  # no client started
    assert nx("run", "list", "--json", env=w).json["total"] == 0


def test_flags_of_ones_own_that_set_nothing_of_nexus_still_pass(nx, clients, chdir_work):
    env = {"NEXUS_CLAUDE_FLAGS": "--model opus --verbose",
           "NEXUS_CODEX_FLAGS": "-c model=\"o3\" --dangerously-bypass-hook-trust"}
    for client in ("claude", "codex"):
        out = nx("run", client, "x", "--sandbox", "read-only", "--json", env=env)
        assert out.code == 0 and out.json["sandbox"] == "read-only", out.err
    argv = [json.loads(line)["argv"] for line in clients.read_text().splitlines()]
    assert "opus" in argv[0] and "--dangerously-bypass-hook-trust" in argv[1]


# -- 15. a run a session starts is never wider than the session's own tier ---------------------


def mcp_call(fake, client: str, session: str, tool: str, args: dict, meta: dict) -> dict:
    """One MCP tool call, in-process, from the MCP server of `session`'s client process."""
    import threading

    from nexus_cli.catalog import load
    from nexus_cli.mcp import tools as mcp_tools

    pid = fake.client_of(f"{client}:{session}")
    mcp_tools._STORE.clear()  # a server's one store: this test's (NEXUS_HOME), not the last one
    return mcp_tools.run_tool(load()[tool], args, meta, {}, [fake.get(pid)], threading.Event(),
                              lambda done: None)


def codex_meta(session: str, sandbox: str) -> dict:
    return {"sessionId": session, "threadId": session,
            "x-codex-turn-metadata": {"session_id": session, "sandbox_mode": sandbox}}


def test_a_read_only_session_starts_no_wider_run_over_mcp(nx, hook, clients, chdir_work, fake,
                                                          monkeypatch):
    """A Codex session whose own turn is read-only (its MCP `_meta`) asks for a
    danger-full-access run through the MCP `run` tool: refused; without a tier it gets its
    own; the person may allow wider runs (`widerRuns`)."""
    hook("codex", "SessionStart", sid(2), source="startup")
    wide = {"client": "claude", "task": "escape", "sandbox": "danger-full-access",
            "detach": True}
    got = mcp_call(fake, "codex", sid(2), "run", wide, codex_meta(sid(2), "read-only"))
    assert got["isError"], got
    error = got["_meta"]["nexus/error"]
    assert error["code"] == "impersonation_refused" and "wider sandbox tier" in error["reason"]
    plain = {"client": "claude", "task": "look", "detach": True}
    got = mcp_call(fake, "codex", sid(2), "run", plain, codex_meta(sid(2), "read-only"))
    assert not got["isError"] and got["structuredContent"]["sandbox"] == "read-only", got
    got = mcp_call(fake, "codex", sid(2), "run", wide, codex_meta(sid(2), "danger-full-access"))
    assert not got["isError"], got  # a session as wide as the run
    from nexus_cli.core import caller

    monkeypatch.setattr(caller, "at_terminal", lambda: True)
    assert nx("config", "set", "widerRuns", "1").code == 0  # the person allows it
    got = mcp_call(fake, "codex", sid(2), "run", wide, codex_meta(sid(2), "read-only"))
    assert not got["isError"] and got["structuredContent"]["sandbox"] == "danger-full-access"


def test_a_claude_session_in_plan_mode_starts_no_writing_run(nx, hook, clients, chdir_work,
                                                             fake):
    """Claude Code states its permission mode in the PreToolUse hook of the very MCP call (the
    call's binding keeps it): a session in plan mode is read-only, and so are its runs."""
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("claude", "PreToolUse", sid(1), tool_name="mcp__nexus__run", tool_use_id="toolu_P",
         permission_mode="plan", tool_input={})
    args = {"client": "codex", "task": "edit it", "sandbox": "workspace-write", "detach": True}
    got = mcp_call(fake, "claude", sid(1), "run", args, {"claudecode/toolUseId": "toolu_P"})
    assert got["isError"] and "wider sandbox tier" in got["_meta"]["nexus/error"]["reason"]
    hook("claude", "PreToolUse", sid(1), tool_name="mcp__nexus__run", tool_use_id="toolu_Q",
         permission_mode="acceptEdits", tool_input={})
    got = mcp_call(fake, "claude", sid(1), "run", args, {"claudecode/toolUseId": "toolu_Q"})
    assert not got["isError"], got


# -- 16. an unknown tier is the narrowest; an agent's own word for its tier is never taken ------


def test_an_agent_whose_tier_nexus_does_not_know_starts_no_wider_run(nx, hook, clients,
                                                                      chdir_work, fake):
    """Issue 37: Codex from its shell (its sandbox unknown) and Claude Code in `plan` or
    `default` mode ran `nexus run ... --sandbox danger-full-access` and got it. Unknown is
    read-only: from the agent's shell, and over MCP in a mode that states no tier."""
    hook("codex", "SessionStart", sid(2), source="startup")
    hook("claude", "SessionStart", sid(1), source="startup")
    wide = ("run", "claude", "escape", "--sandbox", "danger-full-access")
    for env in (B, A):
        r = nx(*wide, env=env)
        assert r.code == 5 and "wider sandbox tier" in r.err, r.err
    r = nx("run", "claude", "look", "--json", env=B)  # no tier chosen: the narrowest
    assert r.code == 0 and r.json["sandbox"] == "read-only", r.out
    args = {"client": "codex", "task": "edit it", "sandbox": "workspace-write", "detach": True}
    for n, mode in enumerate(("default", "plan", "dontAsk", "auto")):
        hook("claude", "PreToolUse", sid(1), tool_name="mcp__nexus__run", tool_use_id=f"toolu_{n}",
             permission_mode=mode, tool_input={})
        got = mcp_call(fake, "claude", sid(1), "run", args, {"claudecode/toolUseId": f"toolu_{n}"})
        assert got["isError"], (mode, got)
        assert "wider sandbox tier" in got["_meta"]["nexus/error"]["reason"], mode
    got = mcp_call(fake, "claude", sid(1), "run", args, {})  # no binding at all
    assert got["isError"] and "wider sandbox tier" in got["_meta"]["nexus/error"]["reason"]


def test_a_tier_stated_to_an_mcp_server_the_agent_started_itself_is_not_believed(
        nx, hook, clients, chdir_work, fake):
    """Issue 37: the agent runs `nexus mcp` from its shell and writes its own `_meta`
    (`sandbox_mode: danger-full-access`). Only a server the client started itself (its parent
    is the client) hears the client's statement."""
    import threading

    from nexus_cli.catalog import load
    from nexus_cli.mcp import tools as mcp_tools

    hook("codex", "SessionStart", sid(2), source="startup")
    client = fake.client_of(f"codex:{sid(2)}")
    shell = fake.spawn("bash", parent=client)
    wide = {"client": "claude", "task": "escape", "sandbox": "danger-full-access",
            "detach": True}
    mcp_tools._STORE.clear()
    got = mcp_tools.run_tool(load()["run"], wide, codex_meta(sid(2), "danger-full-access"), {},
                             [fake.get(shell), fake.get(client)], threading.Event(),
                             lambda done: None)
    assert got["isError"] and "wider sandbox tier" in got["_meta"]["nexus/error"]["reason"], got
    got = mcp_call(fake, "codex", sid(2), "run", wide, codex_meta(sid(2), "danger-full-access"))
    assert not got["isError"], got  # the client's own server: its statement holds


def test_a_server_an_agent_execs_from_its_shell_is_not_fed_by_its_client(nx, hook, clients,
                                                                        chdir_work, fake):
    """`exec nexus mcp < requests` from the agent's shell: the shell becomes the server, whose
    parent is then the client itself, but the requests (and their `_meta`) come from the agent.
    Codex's stated tier is believed only while the client holds the pipe the requests come by."""
    hook("codex", "SessionStart", sid(4), source="startup")
    client = fake.client_of(f"codex:{sid(4)}")
    fake.not_feeding.add(client)
    wide = {"client": "claude", "task": "escape", "sandbox": "danger-full-access",
            "detach": True}
    got = mcp_call(fake, "codex", sid(4), "run", wide, codex_meta(sid(4), "danger-full-access"))
    assert got["isError"] and "wider sandbox tier" in got["_meta"]["nexus/error"]["reason"], got


def test_a_real_client_holds_the_pipe_its_server_reads(tmp_path):
    """The real process table: a parent that spawned us with a pipe for stdin holds it; fed
    from a file, nobody does."""
    import sys

    probe = ("import os, sys; from nexus_cli.core import proctable; "
             "print(proctable.chosen().feeds_stdin(os.getppid()))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    piped = subprocess.Popen([sys.executable, "-c", probe], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    try:  # (the write end stays open here while the child looks)
        assert piped.stdout.read().strip() == "True"
    finally:
        piped.stdin.close()
        piped.wait(60)
    (tmp_path / "requests").write_text("")
    with open(tmp_path / "requests") as fed:
        by_file = subprocess.run([sys.executable, "-c", probe], stdin=fed, capture_output=True,
                                 text=True, env=env, timeout=60)
    assert by_file.stdout.strip() == "False", by_file.stderr
