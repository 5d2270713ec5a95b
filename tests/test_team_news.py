"""The team-mode tool call (hook/quick.py) as the client runs it: a real `nexus hook` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import sid


def hook_process(event: dict, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nexus_cli", "hook", "claude"],
                          input=json.dumps(event), capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env})


def test_a_server_that_is_down_is_logged_once_and_the_client_goes_on(tmp_path, home):
    down = tmp_path / "no-server"
    down.mkdir()
    event = {"hook_event_name": "PostToolUse", "session_id": sid(1), "cwd": str(tmp_path),
             "transcript_path": None, "tool_name": "Bash", "tool_use_id": "t1",
             "tool_input": {}}
    done = hook_process(event, {"NEXUS_HOME": str(home),
                                "NEXUS_DATABASE_URL": f"postgresql:///nexus?host={down}"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    log = (home / "team-offline.log").read_text().splitlines()
    assert len(log) == 1 and "claude hook" in log[0] and "team_unreachable" in log[0]


def test_nothing_new_is_settled_before_the_hooks_write(tmp_path, home, pg_cluster):
    """One round trip: not even the session's row is written (as a local hook without a news
    marker never starts). With mail waiting the full hook announces it: test_team_machines."""
    import psycopg
    from test_team import schema

    _, url = schema(pg_cluster, migrate=True)
    env = {"NEXUS_HOME": str(home), "NEXUS_DATABASE_URL": url}
    event = {"hook_event_name": "PostToolUse", "session_id": sid(1), "cwd": str(tmp_path),
             "transcript_path": None, "tool_name": "Bash", "tool_use_id": "t1",
             "tool_input": {}}
    done = hook_process(event, env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
    assert not (home / "team-offline.log").exists()


def test_a_database_only_libpq_serves_is_asked_only_while_a_marker_is_raised(tmp_path, home):
    """A URL only psycopg serves (here a CRL): its import would cost more than the check saves:
    without a news marker on this machine the call ends at once (as before team-mode checks);
    with one, the full hook runs (here it finds the server refusing, and logs that)."""
    env = {"NEXUS_HOME": str(home), "NEXUS_DATABASE_URL":
           "postgresql://ann@127.0.0.1:1/nexus?sslmode=require&sslcrl=/nonexistent.crl"}
    event = {"hook_event_name": "PostToolUse", "session_id": sid(1), "cwd": str(tmp_path),
             "transcript_path": None, "tool_name": "Bash", "tool_use_id": "t1",
             "tool_input": {}}
    done = hook_process(event, env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (home / "team-offline.log").exists()  # the full hook never ran
    (home / "news").mkdir(parents=True, exist_ok=True)
    (home / "news" / "4242").touch()
    done = hook_process(event, env)
    assert done.returncode == 0 and done.stdout == ""
    assert "team_unreachable" in (home / "team-offline.log").read_text()


def test_a_tls_team_database_gets_the_quick_check_too(tmp_path, home):
    """TLS is pgwire's now: a tool call's hook asks the server without a news marker (here it
    cannot reach it, logs that at once and lets the client go on)."""
    env = {"NEXUS_HOME": str(home),
           "NEXUS_DATABASE_URL": "postgresql://ann@127.0.0.1:1/nexus?sslmode=require"}
    event = {"hook_event_name": "PostToolUse", "session_id": sid(1), "cwd": str(tmp_path),
             "transcript_path": None, "tool_name": "Bash", "tool_use_id": "t1",
             "tool_input": {}}
    done = hook_process(event, env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert "team_unreachable" in (home / "team-offline.log").read_text()
