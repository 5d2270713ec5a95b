"""The hook entry point: samples of what each client sends, the state it keeps, and how it fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import A, raw_db, sid, tree_bytes


def rows(home: Path) -> dict:
    conn = raw_db(home)
    return {r["id"]: r for r in conn.execute("SELECT * FROM sessions")}


# Shapes as sent by Claude Code 2.1.332 and Codex 0.171.0 (see docs/clients or CLIENTS.md).
CLAUDE_EVENTS = [
    ("SessionStart", {"source": "startup"}),
    ("UserPromptSubmit", {"prompt": "fix the bug", "prompt_id": "p1",
                          "permission_mode": "default"}),
    ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_01",
                    "mcp_server": None}),
    ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                     "tool_use_id": "toolu_01",
                     "tool_response": [{"type": "text", "text": "ok"}], "duration_ms": 12}),
    ("Stop", {"stop_hook_active": False, "last_assistant_message": "All done.",
              "background_tasks": [], "session_crons": []}),
    ("SessionEnd", {"reason": "prompt_input_exit"}),
]
CODEX_EVENTS = [
    ("SessionStart", {"source": "startup", "model": "gpt-5"}),
    ("UserPromptSubmit", {"prompt": "review", "turn_id": "t1", "permission_mode": "default",
                          "model": "gpt-5"}),
    ("PreToolUse", {"tool_name": "exec_command", "tool_input": {"cmd": "ls"},
                    "tool_use_id": "call_1", "turn_id": "t1", "model": "gpt-5"}),
    ("PostToolUse", {"tool_name": "exec_command", "tool_input": {"cmd": "ls"},
                     "tool_use_id": "call_1", "tool_response": {"content": [], "isError": False},
                     "turn_id": "t1", "model": "gpt-5"}),
    ("Stop", {"stop_hook_active": False, "last_assistant_message": "Reviewed.", "turn_id": "t1",
              "model": "gpt-5"}),
]
EXPECTED = {"SessionStart": "idle", "UserPromptSubmit": "working", "PreToolUse": "working",
            "PostToolUse": "working", "Stop": "idle", "SessionEnd": "offline"}


@pytest.mark.parametrize("client,events", [("claude", CLAUDE_EVENTS), ("codex", CODEX_EVENTS)])
def test_events_keep_the_session_current(hook, home, fake, client, events):
    s = sid(1)
    for name, fields in events:
        r = hook(client, name, s, **fields)
        assert (r.code, r.err) == (0, ""), name
        if name == "SessionStart":  # the greeting; with no mail, nothing else says anything
            assert "You are" in json.loads(r.out)["hookSpecificOutput"]["additionalContext"]
        else:
            assert r.out == "", name
        row = rows(home)[f"{client}:{s}"]
        assert row["status"] == EXPECTED[name], name
    row = rows(home)[f"{client}:{s}"]
    assert row["handle"] == "s-000000010000"
    assert row["name"] == f"{client}@work"
    assert row["cwd"] == hook.cwd and row["project"] == hook.cwd
    assert row["last_tool"] == events[2][1]["tool_name"]
    assert row["last_prompt"] == events[1][1]["prompt"]
    assert row["last_assistant"] == events[4][1]["last_assistant_message"]
    assert row["last_turn_end"] is not None
    assert row["client_pid"] == fake.client_of(f"{client}:{s}")


def test_pretooluse_binds_the_tool_use_id(hook, home):
    hook("claude", "PreToolUse", sid(1), tool_name="mcp__nexus__send", tool_use_id="toolu_X")
    # another session's hook naming the same id (learnt from a transcript) binds it for itself
    hook("claude", "PreToolUse", sid(2), tool_name="mcp__nexus__read", tool_use_id="toolu_X")
    conn = raw_db(home)
    bound = conn.execute("SELECT session_id FROM tool_uses WHERE tool_use_id='toolu_X'"
                         " ORDER BY session_id")
    assert [tuple(r) for r in bound] == [(f"claude:{sid(1)}",), (f"claude:{sid(2)}",)]


def test_names_are_unique_among_live_sessions(hook, home):
    for n in (1, 2, 3):
        hook("claude", "SessionStart", sid(n), source="startup")
    names = sorted(r["name"] for r in rows(home).values())
    assert names == ["claude@work", "claude@work#2", "claude@work#3"]
    hook("claude", "SessionEnd", sid(1), reason="exit")
    hook("claude", "SessionStart", sid(4), source="startup")
    assert rows(home)[f"claude:{sid(4)}"]["name"] == "claude@work"
    # the first comes back: its name is taken by a live session now, so it gets a free one
    hook("claude", "UserPromptSubmit", sid(1), prompt="hi")
    assert rows(home)[f"claude:{sid(1)}"]["name"] == "claude@work#4"


def test_clear_starts_a_new_conversation_linked_to_its_predecessor(hook, home, fake):
    claude = fake.spawn("claude")
    hook("claude", "SessionStart", sid(1), source="startup", client_pid=claude)
    hook("claude", "SessionStart", sid(2), source="clear", client_pid=claude)
    r = rows(home)
    old, new = r[f"claude:{sid(1)}"], r[f"claude:{sid(2)}"]
    assert old["status"] == "offline" and old["successor"] == new["id"]
    assert new["predecessor"] == old["id"] and new["client_pid"] == claude


def test_resume_keeps_the_session(hook, home):
    hook("codex", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionEnd", sid(1), reason="exit")
    hook("codex", "SessionStart", sid(1), source="resume")
    assert rows(home)[f"codex:{sid(1)}"]["status"] == "idle"
    assert len(rows(home)) == 1


def test_unknown_events_and_fields_are_ignored_without_a_write(hook, home):
    r = hook("claude", "Notification", sid(1), message="hello")
    assert (r.code, r.out) == (0, "")
    assert not home.exists()
    r = hook("claude", "SessionStart", sid(1), source="startup", some_future_field={"a": 1})
    assert r.code == 0 and len(rows(home)) == 1


@pytest.mark.parametrize("raw,why", [
    ("", "not JSON"),
    ("{not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    (json.dumps({"session_id": "abc"}), "hook_event_name"),
    (json.dumps({"hook_event_name": "Stop"}), "session_id"),
    (json.dumps({"hook_event_name": "Stop", "session_id": "../../etc"}), "session_id"),
    (json.dumps({"hook_event_name": "Stop", "session_id": 5}), "session_id"),
    (json.dumps({"hook_event_name": "Stop", "session_id": "a", "cwd": "relative"}), "cwd"),
    (json.dumps({"hook_event_name": "Stop", "session_id": "a", "cwd": 3}), "cwd"),
])
def test_malformed_stdin_is_non_blocking_with_one_line_and_no_write(hook, home, raw, why):
    hook("claude", "SessionStart", sid(9), source="startup")
    before = tree_bytes(home)
    r = hook("claude", "Stop", sid(1), raw=raw)
    assert r.code == 1 and r.out == ""
    assert r.err.count("\n") == 1 and why in r.err and "invalid_input" in r.err
    assert "Traceback" not in r.err
    assert tree_bytes(home) == before


def test_bad_hook_arguments(hook, home):
    for args in ([], ["gemini"], ["claude", "--bogus"]):
        from nexus_cli.hook import entry as hookrun

        assert hookrun.main(args) == 1
    assert not home.exists()


def test_hook_state_is_visible_to_peers(hook, nx, chdir_work, pair):
    r = nx("peers", "--json", env=A)
    assert r.code == 0
    data = r.json
    assert [p["name"] for p in data["items"]] == ["codex@work", "claude@work"]
    assert [p["self"] for p in data["items"]] == [False, True]
    assert data["self_id"] == f"claude:{sid(1)}"


def test_the_end_of_a_conversation_never_seen_leaves_no_ghost(hook, home):
    """`claude mcp list` fires SessionEnd for a throwaway session: no row for it."""
    hook("claude", "SessionStart", sid(1), source="startup")
    assert hook("claude", "SessionEnd", sid(2), reason="other").code == 0
    assert set(rows(home)) == {f"claude:{sid(1)}"}


@pytest.mark.parametrize("raw", [
    b'{"hook_event_name": "Stop", "session_id": "x", "n": ' + b"7" * 5000 + b"}",
    b'{"hook_event_name": "Stop", "a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"hook_event_name": "Stop", "session_id": "\xff\xfe"}',
    b'{"hook_event_name": "UserPromptSubmit", "session_id": "00000001-0000-4000-8000-000000000001",'
    b' "cwd": "/", "prompt": "\\ud800"}',
    b'{"hook_event_name": "Stop", "session_id": "00000001-0000-4000-8000-000000000001\\n"}',
    b"[]", b"null", b"",
])
def test_bad_hook_input_is_invalid_input_never_an_internal_error(hook, home, raw):
    r = hook("claude", "Stop", sid(1), raw=raw)
    assert r.code == 1 and r.out == "" and "invalid_input" in r.err, r.err
    assert "internal_error" not in r.err and "Traceback" not in r.err
    assert not (home / "nexus.db").exists()  # nothing written


@pytest.mark.sqlite_only  # no store is touched
@pytest.mark.parametrize("argv", [["--help"], ["claude", "--help"], ["codex", "-h"],
                                  ["codex", "--wait", "--help"]])
def test_hook_help_exits_zero_wherever_help_is_asked(argv, capsys):
    from nexus_cli.hook import entry

    assert entry.main(argv) == 0
    assert "Entry point for client hooks" in capsys.readouterr().out
