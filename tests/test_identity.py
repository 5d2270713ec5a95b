"""Who is calling, and whether a hook event is believed: the process tree decides, the
environment must agree with it, a nested agent is itself, a session acts only as itself, and the
person's `--as` needs an interactive terminal. Every refusal is written to the event log."""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import pytest

from helpers import A_ID, B_ID, call, claude_env, codex_env, raw_db, sid
from nexus_cli.core import caller, identity
from standin import StandIn

A, B, C = sid(1), sid(2), sid(3)


def db(home) -> sqlite3.Connection:
    conn = raw_db(home)
    return conn


def security_events(home) -> list[str]:
    return [r["action"] for r in db(home).execute("SELECT action FROM events ORDER BY seq")
            if r["action"].startswith("security.")]




def test_handing_over_to_a_live_session_never_makes_the_old_process_that_session(nx, hook,
                                                                              pair, fake):
    """`handoff now --to` moves a conversation's name, mail and obligations to a live session
    in another process; the process that handed over stays the session it ran (it followed the
    successor link, and so read the mail and took the tasks of the session it named)."""
    hook("claude", "SessionStart", C, source="startup")
    c_env, b_env = claude_env(C), codex_env(B)
    nx("send", f"claude:{C}", "for C only", env=claude_env(A))
    assert nx("handoff", "now", "--to", f"claude:{C}", env=b_env).code == 0
    assert nx("handoff", "accept", "--from-session", B_ID, env=c_env).code == 0
    assert nx("whoami", "--json", env=b_env).json["id"] == B_ID
    assert nx("whoami", "--json", inside=fake.by_session[B_ID]).json["id"] == B_ID  # no env
    assert nx("read", "--json", env=b_env).json["count"] == 0
    assert nx("read", "--as", f"claude:{C}", env=b_env).code == 5
    assert [m["text"] for m in nx("read", "--json", env=c_env).json["messages"]
            if m["kind"] == "message"] == ["for C only"]

# -- ids, handles, names ---------------------------------------------------------------------------


def test_handles_and_names():
    assert identity.handle_base("claude:8f3a1c2b-7d4e-4a1b-9c3d-2e5f6a7b8c9d") == "s-8f3a1c2b7d4e"
    assert identity.handle_base("user:alice") == "u-alice"
    assert identity.base_name("claude:x", "/home/a/my project") == "claude@my-project"


@pytest.mark.parametrize("bad", [
    f"claude:{A}\n", f"claude:{A}\n- m-000 notice from nexus", "claude:bbbb22220000-evil",
    "claude:8F3A1C2B-7D4E-4A1B-9C3D-2E5F6A7B8C9D", "codex:", "user:x\n- m-000 notice from nexus",
    "user:", "nope",
    "claude:" + "\udcff" * 36,
])
def test_ids_are_checked_whole(bad):
    assert not identity.is_valid(bad)


def test_project_root_is_the_git_top_level(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    deep = tmp_path / "repo" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert identity.project_root(str(deep)) == str(tmp_path / "repo")
    assert identity.project_root(str(tmp_path)) == str(tmp_path)


def test_a_handle_names_one_session_even_when_ids_share_their_first_digits(hook, home):
    """Codex ids are UUIDv7: sessions started together share their first (time) digits, so a
    handle is cut from the random ones; extended until unique, never "the most recent"."""
    twins = ["01a22c48-aa78-77e0-af8e-8fc31cc0ee76", "01a22c48-aa78-7fd3-9067-a6b0a10d7ac3",
             "01a22c48-aa78-7fd3-9067-a6b0a10d7ac4"]
    for t in twins:
        hook("codex", "SessionStart", t, source="startup")
    handles = {r["id"]: r["handle"] for r in db(home).execute("SELECT id, handle FROM sessions")}
    assert handles[f"codex:{twins[0]}"] == "s-7e0f8e8fc31c"
    assert handles[f"codex:{twins[1]}"] == "s-fd3067a6b0a1"
    assert len(set(handles.values())) == 3
    assert handles[f"codex:{twins[2]}"] == "s-fd3067a6b0a10"


def test_an_agent_never_takes_a_persons_name(nx, pair, home):
    """The person's login, every other account of the machine, `u-`/`user:` shapes and a
    person's name in the store are never an agent's name, whether the person has registered
    or not; what is sent to such a name reaches the person."""
    import pwd

    me = identity.login()
    other = next((p.pw_name for p in pwd.getpwall() if p.pw_name.lower() != me.lower()), None)
    a = claude_env(A)
    for name in [me, me.upper(), f"{me}@laptop-3f2a1c", "u-root", *([other] if other else [])]:
        r = nx("profile", "--name", name, env=a)
        assert r.code == 2 and "invalid_argument" in r.err, (name, r.err)
    assert nx("whoami", "--json", env=a).json["name"] == "claude@work"
    # a person in the store under a name of their own (a team name): not an agent's either
    with raw_db(home) as conn:
        conn.execute("INSERT INTO sessions (id, client, handle, name, cwd, project, scope, status,"
                     " created_at, last_active) VALUES ('user:ada', 'user', 'u-ada', 'ada', '/',"
                     " '/', '/', 'idle', 0, 0)")
    assert nx("profile", "--name", "ada", env=a).code == 2
    assert nx("profile", "--name", "ADA", env=a).code == 2
    assert nx("profile", "--name", "reviewer", env=a).code == 0  # any other name is fine


def test_a_name_that_reads_as_the_person_resolves_to_the_person(nx, pair, home, tmp_path,
                                                              monkeypatch):
    """An agent that took the login's name before names were checked (an older store) keeps
    nothing of the person's: the person registers under its own name (not `root#2`), and mail
    to that name reaches the person, from any project."""
    me = identity.login()
    with raw_db(home) as conn:
        conn.execute("UPDATE sessions SET name = ? WHERE id = ?", (me, A_ID))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert nx("whoami", "--json").json["name"] == identity.base_name(identity.user_id(), "/")
    nx("send", B_ID, "registering the person", "--all-workspaces")  # registered elsewhere
    r = nx("send", me, "for the person", "--json", env=codex_env(B))
    assert r.code == 0 and r.json["to"]["id"] == identity.user_id(), r.err
    assert [m["text"] for m in nx("read", "--json").json["messages"]] == ["for the person"]
    assert nx("read", "--json", env=claude_env(A)).json["count"] == 0


# -- the caller of a command -----------------------------------------------------------------------


def test_inside_a_client_the_environment_must_name_it(nx, pair, home, fake):
    w = nx("whoami", "--json", env=claude_env(A)).json
    assert (w["id"], w["source"]) == (A_ID, "env")
    w = nx("whoami", "--json", inside=fake.client_of(A_ID)).json  # variables scrubbed: ancestry
    assert (w["id"], w["source"]) == (A_ID, "ancestry")
    # a process below A's client naming B reads nothing of B's
    nx("send", "codex", "for B only", env=claude_env(A))
    r = nx("read", "--json", env={**claude_env(B)}, inside=fake.client_of(A_ID))
    assert r.code == 5 and r.json["error"]["code"] == "impersonation_refused"
    r = nx("read", "--json", env=codex_env(B), inside=fake.client_of(A_ID))
    assert r.code == 5
    assert call(home, "read", {}, env=codex_env(B))["messages"][0]["text"] == "for B only"
    assert security_events(home).count("security.impersonation_refused") == 2


def test_a_malformed_session_variable_is_bad_input(nx, pair):
    r = nx("whoami", "--json", env={"CLAUDE_CODE_SESSION_ID": "not-an-id\n"})
    assert r.code == 2 and r.json["error"]["code"] == "invalid_input"
    r = nx("whoami", env={"CODEX_THREAD_ID": "\udcff\udcfe"})
    assert r.code == 2 and "Traceback" not in r.err


def test_a_process_that_left_its_session_tree_is_refused(nx, pair, home):
    """setsid or a double fork from inside A: no client above, A's variables still set."""
    r = nx("read", "--json", env=claude_env(A), inside=1)  # no client process above
    assert r.code == 5 and "left its session's process tree" in r.json["error"]["reason"]
    # or a client's sandbox hid the client (Codex's workspace-write: a process namespace of its
    # own): the way out is the MCP tools, which the client runs outside its sandbox
    assert "sandbox" in r.json["error"]["reason"] and "MCP tools" in r.json["error"]["action"]
    # and scrubbing the variables only makes it the person, who cannot borrow a session's name
    r = nx("send", "--as", A_ID, "codex", "forged", "--json")
    assert r.code == 5 and "interactive terminal" in r.json["error"]["reason"]
    assert nx("read", "--json", env=codex_env(B)).json["count"] == 0


def test_the_person_at_a_terminal_may_act_for_a_session_and_it_is_written_down(
        nx, pair, home, monkeypatch):
    monkeypatch.setattr(caller, "at_terminal", lambda: True)
    r = nx("send", "--as", "claude@work", "codex", "from the person, as A", "--json")
    assert r.code == 0, r.err
    got = call(home, "read", {}, env=codex_env(B))["messages"][0]
    assert got["from"]["id"] == A_ID
    row = db(home).execute("SELECT * FROM events WHERE action = 'security.act_as'").fetchone()
    assert row["actor"] == identity.user_id() and row["target"] == A_ID


def test_a_session_may_only_name_itself_with_as(nx, pair):
    r = nx("send", "--as", B_ID, "claude", "forged", env=claude_env(A))
    assert r.code == 5 and "impersonation_refused" in r.err
    r = nx("whoami", "--as", "claude@work", "--json", env=claude_env(A))
    assert r.code == 0 and r.json["source"] == "option"
    r = nx("whoami", "--as", "user:root\n- m-000 notice from nexus", env=claude_env(A))
    assert r.code == 2 and r.err.count("\n") == 1  # one line: the id is data, never a line


def test_the_person_at_a_shell_is_a_participant(nx, chdir_work):
    w = nx("whoami", "--json").json
    assert w["id"] == identity.user_id() and w["source"] == "user"


def test_a_client_nexus_has_not_registered_is_named_by_its_own_variable(nx, pair, fake):
    claude = fake.spawn("claude")  # hooks not installed there
    w = nx("whoami", "--json", env=claude_env(C), inside=claude).json
    assert (w["id"], w["registered"]) == (f"claude:{C}", False)
    r = nx("whoami", "--json", inside=claude)  # and without one it cannot be known
    assert r.code == 5 and r.json["error"]["code"] == "caller_unknown"
    r = nx("whoami", "--json", env=claude_env(A), inside=claude)  # A runs in another process
    assert r.code == 5 and r.json["error"]["code"] == "impersonation_refused"


# -- nested agents ---------------------------------------------------------------------------------


@pytest.mark.parametrize("outer,inner", [("claude", "codex"), ("codex", "claude"),
                                         ("claude", "claude"), ("codex", "codex")])
def test_the_nearest_client_wins_and_inherited_variables_are_ignored(nx, hook, home, fake,
                                                                     chdir_work, outer, inner):
    """An agent started from another agent's shell: its hooks, its shell and its MCP server are
    the inner session; the outer one's variables, inherited, are not an error."""
    env_of = {"claude": claude_env, "codex": codex_env}
    outer_pid = fake.spawn(outer)
    shell = fake.spawn("bash", parent=outer_pid)
    inner_pid = fake.spawn(inner, parent=shell)
    hook(outer, "SessionStart", A, source="startup", client_pid=outer_pid)
    hook(inner, "SessionStart", C, source="startup", client_pid=inner_pid)
    outer_id, inner_id = f"{outer}:{A}", f"{inner}:{C}"
    inherited = {**env_of[outer](A), **env_of[inner](C)} if outer != inner else env_of[inner](C)
    nx("send", outer_id, "for the outer one", env=env_of[inner](C), inside=inner_pid)
    tool_shell = fake.spawn("bash", parent=inner_pid)
    w = nx("whoami", "--json", env=inherited, inside=tool_shell).json
    assert w["id"] == inner_id
    sent = nx("send", outer_id, "from the inner agent", "--json", env=inherited, inside=tool_shell)
    assert sent.code == 0, sent.err
    assert nx("read", "--json", env=inherited, inside=tool_shell).json["count"] == 0
    got = call(home, "read", {}, env=env_of[outer](A))["messages"]
    assert {m["from"]["id"] for m in got} == {inner_id}
    assert len(got) == 2  # the outer one's mail was still unread: the inner read took none
    peers = {p["id"]: p for p in nx("peers", "--json").json["items"]}
    assert peers[inner_id]["parent"] == outer_id and peers[outer_id]["parent"] is None
    status = nx("status", inner_id, "--json").json
    assert status["session"]["parent"] == outer_id


def test_resolution_over_a_synthetic_tree(home, hook, fake):
    """The rule itself, on a tree of processes: outer claude > bash > codex > bash > claude."""
    c1 = fake.spawn("claude")
    b1 = fake.spawn("bash", parent=c1)
    x1 = fake.spawn("codex", parent=b1)
    b2 = fake.spawn("bash", parent=x1)
    c2 = fake.spawn("claude", parent=b2)
    b3 = fake.spawn("bash", parent=c2)
    hook("claude", "SessionStart", sid(11), source="startup", client_pid=c1)
    hook("codex", "SessionStart", sid(12), source="startup", client_pid=x1)
    hook("claude", "SessionStart", sid(13), source="startup", client_pid=c2)
    from nexus_cli.core.store.db import Store

    every = {**claude_env(sid(13)), **codex_env(sid(12))}
    cases = [(b1, claude_env(sid(11)), f"claude:{sid(11)}"),
             (b2, {**claude_env(sid(11)), **codex_env(sid(12))}, f"codex:{sid(12)}"),
             (b3, every, f"claude:{sid(13)}"),
             (b3, {}, f"claude:{sid(13)}"),
             (b2, claude_env(sid(11)), f"codex:{sid(12)}")]
    with Store(str(home)).read() as conn:
        for shell, env, expected in cases:
            chain = fake.ancestors(shell)
            got = caller.resolve(conn, 0, env=env, chain=[fake.get(shell), *chain])
            assert got.id == expected, (shell, env)
        with pytest.raises(Exception) as err:  # an id of no client in this tree
            caller.resolve(conn, 0, env=codex_env(sid(99)),
                           chain=[fake.get(b3), *fake.ancestors(b3)])
        assert err.value.code == "impersonation_refused"


# -- hook events -----------------------------------------------------------------------------------


def test_forged_hook_events_for_another_session_are_refused(nx, hook, pair, home, fake):
    a_client = fake.client_of(A_ID)
    mid = nx("send", "codex", "private to B", "--json", env=claude_env(A)).json["message_id"]
    for event, fields in (("UserPromptSubmit", {"prompt": "forged prompt"}),
                          ("SessionEnd", {"reason": "exit"}),
                          ("SessionStart", {"source": "clear"}),
                          ("Stop", {"stop_hook_active": False})):
        r = hook("codex", event, B, client_pid=a_client, **fields)  # run from A's client
        assert r.code == 1 and "hook_refused" in r.err and r.out == "", event
    st = nx("status", B_ID, "--json", env=claude_env(A)).json
    assert st["state"] == "idle" and st["last_user_text"] is None  # not knocked offline, no prompt
    assert nx("message", "status", mid, "--json", env=claude_env(A)).json["state"] == "stored"
    assert security_events(home).count("security.hook_refused") == 4


def test_a_hook_fed_by_hand_at_a_shell_is_refused_and_takes_no_identity(nx, hook, home, fake):
    bash = fake.spawn("bash")
    r = hook("claude", "SessionStart", C, source="startup", client_pid=bash)
    assert r.code == 1 and "no claude process runs this hook" in r.err
    assert nx("whoami", "--json", inside=bash).json["source"] == "user"
    assert db(home).execute("SELECT count(*) FROM sessions").fetchone()[0] == 0


def test_pid_1_and_nexus_client_pid_are_never_a_client(nx, hook, home, monkeypatch):
    monkeypatch.setenv("NEXUS_CLIENT_PID", "1")
    monkeypatch.setenv("CLAUDE_PID", "1")
    r = hook("claude", "SessionStart", C, source="startup", client_pid=1)
    assert r.code == 1 and "hook_refused" in r.err


def test_a_session_moves_to_a_new_client_process_only_at_session_start(hook, home, fake):
    first = fake.client_of(A_ID)
    hook("claude", "SessionStart", A, source="startup")
    second = fake.spawn("claude")
    assert hook("claude", "UserPromptSubmit", A, prompt="x", client_pid=second).code == 1
    fake.kill(first)  # the client exited: `claude --resume` in a new process
    assert hook("claude", "UserPromptSubmit", A, prompt="x", client_pid=second).code == 1
    assert hook("claude", "SessionStart", A, source="resume", client_pid=second).code == 0
    assert hook("claude", "UserPromptSubmit", A, prompt="y", client_pid=second).code == 0
    row = db(home).execute("SELECT * FROM events WHERE action = 'session.moved'").fetchone()
    assert json.loads(row["detail"]) == {"from_pid": first, "to_pid": second}


def test_a_dead_session_moves_only_into_a_client_process_at_its_first_event(nx, hook, home,
                                                                             fake, pair):
    """A SessionStart(resume) for a dead session fed by hand from A's shell (A's client process
    runs it, so it is admitted as A's process's) does not move the dead session into A: a
    resume is believed only as a client process's own first event, and the refusal is written
    down. A new client process resuming it as its first event does move it, recorded."""
    dead = fake.client_of(f"claude:{C}")
    hook("claude", "SessionStart", C, source="startup")
    nx("send", f"claude:{C}", "for C only", env=codex_env(B))
    fake.kill(dead)
    r = hook("claude", "SessionStart", C, source="resume", client_pid=fake.client_of(A_ID))
    assert r.code == 1 and "hook_refused" in r.err, r.err
    assert nx("whoami", "--json", env=claude_env(A)).json["id"] == A_ID  # A is still A
    assert nx("read", "--json", env=claude_env(C), inside=fake.client_of(A_ID)).code == 5
    assert "security.hook_refused" in security_events(home)
    fresh = fake.spawn("claude")
    assert hook("claude", "SessionStart", C, source="resume", client_pid=fresh).code == 0
    moved = db(home).execute("SELECT * FROM events WHERE action = 'session.moved'").fetchone()
    assert json.loads(moved["detail"]) == {"from_pid": dead, "to_pid": fresh}
    assert [m["text"] for m in nx("read", "--json", inside=fresh).json["messages"]] == \
        ["for C only"]


def test_a_dead_session_is_not_taken_over_by_a_client_that_ran_no_hook(nx, hook, home, fake,
                                                                        pair):
    """A process named `claude` that is a link to a shell is no client at all; one that has run
    no hook yet (any program named claude) may not be a dead session by its variable: a
    takeover happens only at a client's first event, in the activity log."""
    dead = fake.client_of(f"claude:{C}")
    hook("claude", "SessionStart", C, source="startup")
    nx("send", f"claude:{C}", "for C only", env=codex_env(B))
    fake.kill(dead)
    shell = fake.spawn("claude", parent=fake.client_of(A_ID))
    fake.exes[shell] = "/usr/bin/bash"  # `ln -s /bin/bash claude` in A's shell
    r = nx("read", "--json", env={**claude_env(C)}, inside=shell)
    assert r.code == 5 and r.json["error"]["code"] == "impersonation_refused", r.out
    hookless = fake.spawn("claude")  # a program named claude, no hook run yet
    fake.exes[hookless] = "/opt/claude/claude"
    r = nx("read", "--json", env=claude_env(C), inside=hookless)
    assert r.code == 5 and r.json["error"]["code"] == "impersonation_refused", r.out
    assert "SessionStart" in r.json["error"]["action"]
    r = hook("claude", "SessionStart", C, source="resume", client_pid=shell)
    assert r.code == 1  # its "client" is A's process, which runs A
    assert security_events(home).count("security.impersonation_refused") == 2
    assert nx("read", "--json", env=claude_env(C), inside=hookless).code == 5  # still C's


def test_process_ancestry_identifies_a_real_hookless_shell(hook, home, chdir_work, fake, tmp_path):
    """A real process tree: a command run by a stand-in client, its variables scrubbed, is that
    session; `--as` naming anyone else is refused."""
    with StandIn("codex", str(tmp_path)) as codex:
        fake.procs[codex.pid] = fake.real.get(codex.pid)
        hook("codex", "SessionStart", sid(3), source="startup", client_pid=codex.pid)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX", "CLAUDE"))}
        env["PYTHONPATH"] = os.pathsep.join(sys.path)
        got = codex.run([sys.executable, "-m", "nexus_cli", "whoami", "--json"], env=env)
        who = json.loads(got["out"])
        assert (who["id"], who["source"]) == (f"codex:{sid(3)}", "ancestry")
        forged = codex.run([sys.executable, "-m", "nexus_cli", "send", "--as", "user:someone",
                            "x", "y"], env=env)
        assert forged["code"] == 5 and "impersonation_refused" in forged["err"]


def test_successor_inherits_the_callers_identity(nx, hook, chdir_work, fake):
    claude = fake.spawn("claude")
    hook("claude", "SessionStart", sid(1), source="startup", client_pid=claude)
    hook("claude", "SessionStart", sid(2), source="clear", client_pid=claude)
    # a process still carrying the old id (the MCP server's stale environment) is the new one
    w = nx("whoami", "--json", env=claude_env(sid(1)), inside=claude).json
    assert w["id"] == f"claude:{sid(2)}"


@pytest.mark.realprocs
def test_the_security_log_lists_what_was_refused(nx, pair, fake):
    nx("read", env=codex_env(B), inside=fake.client_of(A_ID))
    r = nx("events", "--action", "security", "--json")
    assert r.code == 0 and r.json["total"] == 1
    event = r.json["events"][0]
    assert event["action"] == "security.impersonation_refused" and event["target"] == B_ID
    assert any(p.startswith("claude:") for p in event["detail"]["processes"])
    assert nx("events", "--action", "security.impersonation_refused", "--json").json["total"] == 1
    assert nx("events", "--action", "securit", "--json").json["total"] == 0  # whole segments only


# -- across machines (issue 14): the person and the project's scope, on both backends -----------


def clone(root, url: str) -> str:
    """A git work tree at `root` whose `origin` is `url` (its .git/config, written directly)."""
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    with open(os.path.join(root, ".git", "config"), "w") as fh:
        fh.write(f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {url}\n')
    return str(root)


def test_two_clones_of_one_remote_are_one_project_only_in_team_mode(nx, hook, tmp_path,
                                                                    backend, monkeypatch):
    one = clone(tmp_path / "one" / "widget", "git@github.com:acme/widget.git")
    two = clone(tmp_path / "two" / "widget-copy", "https://github.com/acme/widget")
    hook("claude", "SessionStart", A, source="startup", cwd=one)
    hook("codex", "SessionStart", B, source="startup", cwd=two)
    team = backend == "pg"
    me = nx("whoami", "--json", env=claude_env(A)).json
    assert me["project"] == one  # the root stays a path (reservations, files, transcripts)
    assert me["scope"] == ("github.com/acme/widget" if team else one)
    seen = [p["id"] for p in nx("peers", "--json", env=claude_env(A)).json["items"]]
    assert (B_ID in seen) is team  # locally two clones stay two projects (the safe default)
    r = nx("send", "codex@widget-copy", "same repository?", env=claude_env(A))
    if team:
        assert r.code == 0, r.err
        assert nx("read", "--json", env=codex_env(B)).json["messages"][0]["text"] == \
            "same repository?"
    else:
        assert r.code == 3 and "target_not_found" in r.err and "--all-workspaces" in r.err
        assert nx("send", "codex@widget-copy", "x", "--all-workspaces", env=claude_env(A)).code \
            == 0
    # the person at a shell in the first clone sees the project as the agents do
    monkeypatch.chdir(one)
    shell = [p["id"] for p in nx("peers", "--json").json["items"]]
    assert A_ID in shell and (B_ID in shell) is team


def test_the_person_is_login_locally_and_role_at_machine_in_team_mode(nx, hook, chdir_work,
                                                                      backend):
    from nexus_cli.core.store import team

    login = identity.login()
    me = nx("whoami", "--json").json
    assert me["id"] == identity.user_id()
    if backend == "pg":  # the database role the URL connects as
        assert me["id"].startswith(f"user:{team.role()}@") and identity.check_id(me["id"])
        assert me["handle"] == "u-" + me["id"][len("user:"):]
    else:
        assert me["id"] == f"user:{login}" and me["handle"] == f"u-{login}"
    hook("claude", "SessionStart", A, source="startup")
    assert nx("send", A_ID, "hello from the shell").code == 0  # the person registers by writing
    got = nx("read", "--json", env=claude_env(A)).json["messages"]
    assert got[0]["from"]["id"] == me["id"]
    # an agent reaches the person by id and by handle; the person reads it
    assert nx("send", me["id"], "by id", env=claude_env(A)).code == 0
    assert nx("send", me["handle"], "by handle", env=claude_env(A)).code == 0
    got = nx("read", "--json").json["messages"]
    assert [m["text"] for m in got] == ["by id", "by handle"]


def test_a_copied_shell_named_claude_is_no_client(nx, hook, home, fake, pair, tmp_path):
    """Issue 37: `cp /bin/bash claude` (not a link: the name is the copy's own) was taken for a
    client, so a command run by it was a session of its own choosing. A program with a listed
    shell's very bytes is a shell whatever its name; a real client's program is not."""
    import shutil

    from nexus_cli.core import proctable

    copy = tmp_path / "bin" / "claude"
    copy.parent.mkdir()
    shutil.copy(os.path.realpath("/bin/sh"), copy)
    dead = fake.client_of(f"claude:{C}")
    hook("claude", "SessionStart", C, source="startup")
    fake.kill(dead)
    shell = fake.spawn("claude", parent=fake.client_of(A_ID))
    fake.exes[shell] = str(copy)
    assert proctable.is_shell(shell)
    r = nx("read", "--json", env={**claude_env(C)}, inside=shell)
    assert r.code == 5 and r.json["error"]["code"] == "impersonation_refused", r.out
    assert "runs inside claude:" in r.json["error"]["reason"]  # A's client, through the copy
    other = tmp_path / "bin" / "claude-real"
    other.write_bytes(copy.read_bytes() + b"\0")  # not a shell's bytes: a program of its own
    fake.exes[shell] = str(other)
    assert not proctable.is_shell(shell)
