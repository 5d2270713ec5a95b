"""Session insight: the transcript readers of both clients (on what the pinned clients wrote, in
tests/data/transcripts; tests/test_realclients.py reads what they write during the run), log
budgets and provenance, the tail scan, stats, the session list, search with and without the
index, titles, the wait graph, the board, and status filled from a transcript."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
import tracemalloc
from pathlib import Path

import pytest
from test_mcp import run, session  # the official SDK client (imported before capture starts)

from helpers import A, B, sid
from nexus_cli.clients import transcript as common
from nexus_cli.clients.claude import transcript as claude_t
from nexus_cli.clients.codex import transcript as codex_t
from nexus_cli.insight.stats import aggregate

DATA = Path(__file__).parent / "data" / "transcripts"
CLAUDE_MAIN = "20ed5f5a-0370-4cb7-94d4-707818a77a78"  # the session id inside claude-main.jsonl


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of our own: the clients' transcript directories live under it."""
    home = tmp_path / "userhome"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


def place(home: Path, name: str, cwd: str, session: str) -> Path:
    """A fixture transcript where its client would have written it, as session `session` that
    ran in `cwd`."""
    lines = []
    for line in (DATA / name).read_text().splitlines():
        r = json.loads(line)
        if "cwd" in r:
            r["cwd"] = cwd
        if "sessionId" in r:
            r["sessionId"] = session
        if r.get("type") in ("session_meta", "turn_context"):
            r["payload"]["cwd"] = cwd
            if r["type"] == "session_meta":
                r["payload"]["id"] = r["payload"]["session_id"] = session
        lines.append(json.dumps(r, separators=(",", ":"), ensure_ascii=False))
    if name.startswith("claude"):
        folder = home / ".claude" / "projects" / claude_t.slug(cwd)
        path = folder / f"{session}.jsonl"
    else:
        folder = home / ".codex" / "sessions" / "2026" / "11" / "30"
        path = folder / f"rollout-2026-11-30T12-00-00-{session}.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def events_of(path: Path | str, client: str) -> tuple[list[dict], common.Reader]:
    reader = (claude_t if client == "claude" else codex_t).reader()
    return list(common.read_all(str(path), reader)), reader


# -- the readers --------------------------------------------------------------------------------


@pytest.mark.parametrize("name,rounds,steps,calls,errors,messages", [
    ("claude-main.jsonl", 4, 14, 11, 3, (4, 5)),
    ("claude-stopblock-compact.jsonl", 3, 8, 4, 0, (3, 5)),
    ("claude-interactive.jsonl", 2, 3, 1, 0, (3, 2)),
    ("claude-api-error.jsonl", 1, 0, 0, 0, (1, 0)),
    ("codex-main.jsonl", 2, 11, 10, 3, (3, 3)),
    ("codex-stopblock-error-interrupt.jsonl", 6, 7, 2, 1, (6, 5)),
    ("codex-autocompact.jsonl", 2, 5, 1, 0, (2, 2)),
])
def test_readers_count_what_the_real_clients_wrote(name, rounds, steps, calls, errors, messages):
    client = name.split("-", 1)[0]
    events, reader = events_of(DATA / name, client)
    numbers = aggregate(events)
    assert (numbers["rounds"], numbers["steps"], numbers["tool_calls"],
            numbers["tool_errors"]) == (rounds, steps, calls, errors)
    assert (numbers["user_messages"], numbers["assistant_messages"]) == messages
    assert reader.counts["malformed"] == 0 and reader.counts["unknown"] == 0
    assert [e["seq"] for e in events] == list(range(len(events)))  # file order, no gaps
    offsets = [e["offset"] for e in events]
    raw = (DATA / name).read_bytes()
    assert all(raw[o - 1: o] in (b"", b"\n") for o in offsets)  # each points at a line start


def test_claude_usage_counts_once_per_message_and_prompt_tokens_include_the_cache():
    events, _ = events_of(DATA / "claude-main.jsonl", "claude")
    rows = [json.loads(x) for x in (DATA / "claude-main.jsonl").read_text().splitlines()]
    assistant_rows = [r for r in rows if r["type"] == "assistant"]
    messages = {r["message"]["id"] for r in assistant_rows}
    usage = [e for e in events if e["type"] == "usage"]
    assert len(assistant_rows) > len(messages) == len(usage) == 14  # one per message, not block
    first = assistant_rows[0]["message"]["usage"]
    assert usage[0]["usage"]["input"] == first["input_tokens"] + \
        first["cache_read_input_tokens"] + first["cache_creation_input_tokens"]
    assert all(e.get("llm_ms") is not None for e in usage)


def test_reasoning_is_stripped_and_compaction_output_is_not_an_answer():
    for name, client in (("claude-main.jsonl", "claude"), ("codex-main.jsonl", "codex")):
        events, reader = events_of(DATA / name, client)
        assert reader.counts["reasoning"] == 2
        assert not any("I should look around" in json.dumps(e) for e in events)
        assert not any("Looking around" in json.dumps(e) for e in events)
    events, _ = events_of(DATA / "codex-autocompact.jsonl", "codex")
    answers = [e["text"] for e in events if e["type"] == "assistant/message"]
    assert answers and not any("<summary>" in a or "<analysis>" in a for a in answers)
    assert any(e["type"] == "compaction" and e.get("subtype") == "summary" for e in events)


def test_turn_ends_follow_each_client():
    events, _ = events_of(DATA / "claude-stopblock-compact.jsonl", "claude")
    # the Stop hook that blocked kept the turn going: one round, not two
    assert sum(e["type"] == "turn/end" for e in events) == 3
    assert any(e["type"] == "system" and e.get("subtype") == "hook_feedback" for e in events)
    events, _ = events_of(DATA / "codex-stopblock-error-interrupt.jsonl", "codex")
    ends = [e for e in events if e["type"] == "turn/end"]
    assert [bool(e.get("error")) for e in ends].count(True) == 1
    assert [e.get("aborted") for e in ends].count("interrupted") == 1
    events, _ = events_of(DATA / "claude-interactive.jsonl", "claude")
    assert any(e["type"] == "turn/end" and e.get("duration_ms") for e in events)
    assert any(e["type"] == "user/message" and e.get("subtype") == "queued" for e in events)


def test_tool_calls_and_results_pair_up_with_errors_marked():
    for name, client in (("claude-main.jsonl", "claude"), ("codex-main.jsonl", "codex")):
        events, _ = events_of(DATA / name, client)
        calls = {e["call_id"]: e for e in events if e["type"] == "tool/call"}
        results = [e for e in events if e["type"] == "tool/result"]
        assert {r["call_id"] for r in results} == set(calls)
        assert any(c["tool"] == "mcp__nexus__whoami" for c in calls.values())
        failed = [calls[r["call_id"]]["tool"] for r in results if r["is_error"]]
        assert len(failed) == 3 and "mcp__nexus__send" in failed


def test_malformed_and_unknown_lines_are_counted_never_fatal(tmp_path):
    path = tmp_path / "t.jsonl"
    good = (DATA / "claude-main.jsonl").read_text()
    path.write_text('not json at all\n[1, 2]\n{"no": "type"}\n' + good
                    + '{"type": "from-a-future-version", "x": 1}\n{"type": "user", "message": 5}\n'
                    + '{"type":"user","message":{"role":"user","content":"half written')
    events, reader = events_of(path, "claude")
    assert reader.counts["malformed"] == 4 and reader.counts["unknown"] == 1
    clean, _ = events_of(DATA / "claude-main.jsonl", "claude")
    assert [e["type"] for e in events] == [e["type"] for e in clean]  # the partial line waits
    path2 = tmp_path / "c.jsonl"
    path2.write_text((DATA / "codex-main.jsonl").read_text() + '{"timestamp":"x","type":'
                     '"event_msg","payload":7}\n{"type":"brand_new","payload":{}}\n')
    _, reader = events_of(path2, "codex")
    assert reader.counts["malformed"] == 1 and reader.counts["unknown"] == 1


def test_claude_slug_follows_the_client_rule():
    assert claude_t.slug("/tmp/x/claude_run.v2/work") == "-tmp-x-claude-run-v2-work"
    assert claude_t.slug("/a/ü b@c") == "-a---b-c"
    long = "/" + "L" * 250
    s = claude_t.slug(long)
    assert len(s) > 200 and s[:200] == "-" + "L" * 199 and s[200] == "-"


def test_a_rollout_is_found_by_its_id_whatever_its_date_folder(user_home):
    raw = "01a22c7e-25dc-77b0-b5dc-6af6f740c815"
    folder = user_home / ".codex" / "sessions" / "2026" / "12" / "01"  # local time: next day
    folder.mkdir(parents=True)
    (folder / f"rollout-2026-12-01T00-30-00-{raw}.jsonl").write_text("{}\n")
    assert codex_t.find(raw, {"HOME": str(user_home)}).endswith(f"{raw}.jsonl")
    assert codex_t.find("not-an-id", {"HOME": str(user_home)}) is None


def test_the_tail_is_the_end_of_a_full_read(tmp_path):
    """Read from the end in growing windows, the last n events are those of a whole read."""
    path = tmp_path / "big.jsonl"
    base = (DATA / "claude-main.jsonl").read_text()
    path.write_text(base * 40)  # ~3.4 MB, more than one window
    whole, _ = events_of(path, "claude")
    keep = set(common.DEFAULT_TYPES)
    wanted = [e for e in whole if e["type"] in keep]
    for n in (1, 7, 50, 400):
        got, matched, start, _ = common.tail(str(path), claude_t.reader,
                                                  lambda e: e["type"] in keep, n)
        assert matched > n and (start > 0 or n == 400)
        assert [(e["type"], e["offset"], e.get("text")) for e in got] == \
            [(e["type"], e["offset"], e.get("text")) for e in wanted[-n:]]


# -- log ----------------------------------------------------------------------------------------


def test_log_of_a_session_nexus_never_saw(nx, chdir_work, user_home):
    path = place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    r = nx("log", CLAUDE_MAIN, "--json")
    assert r.code == 0, r.err
    out = r.json
    p = out["provenance"]
    assert (p["transcript_path"], p["path_source"], p["resolved_by"]) == (
        str(path), "found", "transcript id")
    assert p["transcript_bytes"] == path.stat().st_size and p["transcript_age_seconds"] >= 0
    assert "not that it answered you" in p["warning"] and "inbox" in p["warning"]
    assert out["session"]["client"] == "claude" and out["session"]["cwd"] == chdir_work
    assert out["session"]["title"].startswith("[run:c1]")
    assert out["scan"] == "full" and out["total_exact"] and out["total"] == 31
    texts = [e.get("text") for e in out["events"]]
    assert "FINAL ANSWER turn 2." in texts
    assert all("time_epoch" not in e for e in out["events"])  # --timestamps adds them
    human = nx("log", "claude:" + CLAUDE_MAIN)
    assert "FINAL ANSWER turn 2." in human.out and "not that it answered you" in human.out


def test_log_budgets_and_what_to_do_next(nx, chdir_work, user_home):
    place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    out = nx("log", CLAUDE_MAIN, "--tail", "4", "--head", "2", "--json").json
    assert (out["order"], out["shown"], out["head_shown"], out["omitted"]) == (
        "head+tail", 6, 2, 25)
    assert out["count_truncated"] and out["truncated"] and not out["bytes_truncated"]
    assert "--tail 8" in out["next"]
    seqs = [e["seq"] for e in out["events"]]
    assert seqs == sorted(seqs) and seqs[:2] == [1, 3]
    out = nx("log", CLAUDE_MAIN, "--tail", "4", "--head", "0", "--json").json
    assert out["order"] == "tail" and out["shown"] == 4
    out = nx("log", CLAUDE_MAIN, "--tail", "500", "--messages", "3", "--head", "0", "--json").json
    assert sum(e["type"] in common.DIALOG for e in out["events"]) == 3 and out["count_truncated"]
    assert "--messages 6" in out["next"]
    out = nx("log", CLAUDE_MAIN, "--tail", "500", "--messages", "500", "--max-bytes", "2000",
             "--json").json
    assert out["bytes_truncated"] and len(json.dumps(out["events"]).encode()) <= 2000 + 200
    assert out["events"][-1]["text"] == "done"  # the newest stay, the oldest went
    assert "--max-bytes 61440" in out["next"]
    every = nx("log", CLAUDE_MAIN, "--tail", "500", "--messages", "500", "--json").json
    assert every["order"] == "all" and not every["truncated"] and every["next"] is None


def test_log_presets_types_and_timestamps(nx, chdir_work, user_home):
    place(user_home, "codex-main.jsonl", chdir_work, sid(9))
    target = f"codex:{sid(9)}"
    dialog = nx("log", target, "--preset", "dialog", "--json").json
    assert {e["type"] for e in dialog["events"]} == set(common.DIALOG)
    assert dialog["preset"] == "dialog"
    tools = nx("log", target, "--preset", "tools", "--json").json
    assert {e["type"] for e in tools["events"]} == set(common.TOOLS)
    both = nx("log", target, "--preset", "dialog", "--types", "turn/end,usage", "--json").json
    assert {e["type"] for e in both["events"]} == {"turn/end", "usage"}  # --types wins
    assert both["types"] == ["turn/end", "usage"] and both["preset"] is None
    timed = nx("log", target, "--timestamps", "--json").json
    assert all("time_epoch" in e and "time" in e for e in timed["events"])
    bad = nx("log", target, "--types", "user/message,bogus", "--json")
    assert bad.code == 2 and bad.json["error"]["key"] == "--types"
    assert "bogus" in bad.json["error"]["reason"]


def test_long_fields_are_cut_with_a_pointer_to_the_record(nx, chdir_work, user_home):
    path = place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    long = "x" * 20_000
    row = {"type": "user", "cwd": chdir_work, "sessionId": CLAUDE_MAIN,
           "timestamp": "2026-11-30T12:50:00.000Z", "message": {"role": "user", "content": long}}
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")
    out = nx("log", CLAUDE_MAIN, "--tail", "1", "--json").json
    ev = out["events"][-1]
    assert ev["text_chars"] == 20_000 and len(ev["text"]) < 9_000
    with open(path, "rb") as fh:
        fh.seek(ev["offset"])
        assert json.loads(fh.readline())["message"]["content"] == long


def test_a_100_mb_transcript_is_tail_scanned_in_constant_memory(nx, chdir_work, user_home):
    raw = sid(77)
    folder = user_home / ".claude" / "projects" / claude_t.slug(chdir_work)
    folder.mkdir(parents=True)
    path = folder / f"{raw}.jsonl"
    filler = json.dumps({"type": "api-request-shape", "body": "y" * 500_000}) + "\n"
    row = {"type": "user", "cwd": chdir_work, "sessionId": raw,
           "timestamp": "2026-11-30T12:00:00.000Z", "message": {"role": "user",
                                                                 "content": "prompt {}"}}
    with open(path, "w") as fh:
        n = 0
        while fh.tell() < 100 * 1024 * 1024:
            row["message"]["content"] = f"prompt {n}"
            fh.write(json.dumps(row) + "\n")
            if n % 50 == 0:
                fh.write(filler)  # lines of half a megabyte, as a Write tool's are
            n += 1
    tracemalloc.start()
    try:
        started = time.monotonic()
        r = nx("log", raw, "--tail-scan", "--tail", "50", "--messages", "500", "--json")
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.code == 0, r.err
    out = r.json
    assert out["scan"] == "tail" and not out["total_exact"] and out["total"] >= 50
    texts = [e["text"] for e in out["events"] if e["seq"] < 0]
    assert texts[-1] == f"prompt {n - 1}" and len(texts) == 50 - 0
    assert out["events"][-1]["seq"] == -1
    assert "drop --tail-scan" in out["next"]
    assert peak < 24 * 1024 * 1024, peak  # a window and 50 events, not 100 MB
    assert elapsed < 60  # generous: the file is not read whole (bench/insight.py times it)


def test_log_of_a_nexus_session_uses_the_path_its_hooks_reported(nx, hook, chdir_work,
                                                                   user_home, tmp_path):
    elsewhere = tmp_path / "elsewhere" / f"{sid(1)}.jsonl"  # (a client names it by the id)
    elsewhere.parent.mkdir()
    elsewhere.write_text((DATA / "claude-main.jsonl").read_text())
    hook("claude", "SessionStart", sid(1), source="startup", transcript_path=str(elsewhere))
    r = nx("log", "claude@work", "--json")
    assert r.code == 0, r.err
    out = r.json
    p = out["provenance"]
    assert (p["path_source"], p["resolved_by"], p["transcript_path"]) == (
        "hook", "name", str(elsewhere))
    assert out["session"]["name"] == "claude@work"


@pytest.mark.parametrize("planted", ["passwd", "other's", "link", "hard link", "prefixed"])
def test_a_reported_transcript_path_is_believed_only_for_the_session_s_own_file(
        nx, hook, chdir_work, user_home, tmp_path, planted):
    """A hook may name any path: nexus reads through it only a regular file named after the
    session's id, never another file of the user's that any session could then `log`."""
    secret = tmp_path / "secret.jsonl"
    secret.write_text((DATA / "claude-main.jsonl").read_text())
    path = {"passwd": secret, "other's": tmp_path / f"{sid(3)}.jsonl",
            "prefixed": tmp_path / f"evil{sid(1)}.jsonl"}.get(planted, tmp_path / f"{sid(1)}.jsonl")
    if planted in ("other's", "prefixed"):
        path.write_text(secret.read_text())
    elif planted == "link":
        path.symlink_to(secret)
    elif planted == "hard link":
        os.link(secret, path)
    hook("claude", "SessionStart", sid(1), source="startup", transcript_path=str(path))
    r = nx("log", "claude@work", "--json")
    assert r.code == 3 and r.json["error"]["code"] == "transcript_not_found", r.out
    assert nx("status", "claude@work", "--json").json.get("last_assistant_text") is None


def test_scope_reaches_other_projects_only_when_asked(nx, chdir_work, user_home, tmp_path):
    other = tmp_path / "other-project"
    other.mkdir()
    place(user_home, "codex-main.jsonl", str(other), sid(5))
    r = nx("log", f"codex:{sid(5)}", "--json")
    assert r.code == 3 and "--all-workspaces" in r.json["error"]["action"]
    assert nx("log", f"codex:{sid(5)}", "--all-workspaces", "--json").code == 0
    missing = nx("log", f"codex:{sid(6)}", "--json")
    assert missing.code == 3 and missing.json["error"]["code"] == "target_not_found"


# -- stats --------------------------------------------------------------------------------------


def test_stats_of_a_session_and_of_your_own(nx, hook, chdir_work, user_home, tmp_path):
    place(user_home, "codex-main.jsonl", chdir_work, sid(9))
    out = nx("stats", f"codex:{sid(9)}", "--json").json
    assert (out["rounds"], out["steps"], out["tool_calls"], out["tool_errors"]) == (2, 11, 10, 3)
    assert out["input_tokens"] == 18_250 and out["cache_read_tokens"] == 15_950
    assert out["cache_hit_rate"] == 0.874 and out["reasoning_tokens"] == 48
    assert out["llm_time_ms"] > 0 and out["tokens_per_sec"] and out["ttft_samples"] == 2
    assert out["llm_time_human"].endswith("s") and out["models"] == ["gpt-5.5"]
    mine = tmp_path / f"{sid(1)}.jsonl"
    mine.write_text((DATA / "claude-stopblock-compact.jsonl").read_text())
    hook("claude", "SessionStart", sid(1), source="startup", transcript_path=str(mine))
    own = nx("stats", "--json", env=A).json
    assert own["session"]["id"] == f"claude:{sid(1)}" and own["rounds"] == 3
    assert own["provenance"]["resolved_by"] == "self"
    person = nx("stats", "--json")
    assert person.code == 2 and "TARGET" in person.json["error"]["key"]


# -- the session list -----------------------------------------------------------------------------


def test_sessions_merge_nexus_and_the_transcript_directories(nx, hook, chdir_work, user_home,
                                                            tmp_path):
    hook("claude", "SessionStart", sid(1), source="startup")  # known to nexus, no transcript
    place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)  # never seen by nexus
    later = place(user_home, "codex-main.jsonl", chdir_work, sid(9))
    os.utime(later, (time.time() + 5, time.time() + 5))
    other = tmp_path / "other-project"
    other.mkdir()
    place(user_home, "codex-autocompact.jsonl", str(other), sid(8))
    broken = user_home / ".claude" / "projects" / "x" / f"{sid(7)}.jsonl"
    broken.mkdir(parents=True)  # a transcript that cannot be read
    out = nx("sessions", "--json").json
    ids = [s["id"] for s in out["items"]]
    assert ids[0] == f"codex:{sid(9)}"  # newest first
    assert set(ids) == {f"claude:{sid(1)}", f"claude:{CLAUDE_MAIN}", f"codex:{sid(9)}"}
    assert out["skipped"] == 1
    rows = {s["id"]: s for s in out["items"]}
    main = rows[f"claude:{CLAUDE_MAIN}"]
    assert not main["known"] and main["status"] is None and main["handle"] is None
    assert (main["message_count"], main["input_tokens"], main["output_tokens"]) == (9, 39_620, 480)
    assert main["llm_time_ms"] > 0 and main["llm_time_human"]
    assert main["title"].startswith("[run:c1]") and main["title_source"] == "prompt"
    known = rows[f"claude:{sid(1)}"]
    assert known["known"] and known["status"] == "idle" and known["transcript_path"] is None
    wide = nx("sessions", "--all-workspaces", "--json").json
    assert f"codex:{sid(8)}" in [s["id"] for s in wide["items"]]
    only = nx("sessions", "--all-workspaces", "--cwd", str(other), "--json").json
    assert [s["id"] for s in only["items"]] == [f"codex:{sid(8)}"]
    page = nx("sessions", "--limit", "1", "--json").json
    assert page["truncated"] and page["next"] == "--offset 1" and page["total"] == 3


# -- search -------------------------------------------------------------------------------------


@pytest.fixture
def corpus(nx, hook, chdir_work, user_home):
    nx("maintenance")  # a store exists: the index can live in it
    paths = {
        "claude-main": place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN),
        "codex-main": place(user_home, "codex-main.jsonl", chdir_work, sid(9)),
        "claude-compact": place(user_home, "claude-stopblock-compact.jsonl", chdir_work, sid(10)),
        "codex-interrupt": place(user_home, "codex-stopblock-error-interrupt.jsonl", chdir_work,
                                 sid(11)),
    }
    return paths


@pytest.mark.parametrize("backend", ["sqlite", "pg"], indirect=True)
def test_search_substring_regex_and_bad_queries(nx, corpus):
    out = nx("search", "HELLO-FROM", "--json").json
    hits = {h["session_id"]: h for h in out["results"]}
    assert set(hits) == {f"claude:{CLAUDE_MAIN}", f"codex:{sid(9)}"}
    assert out["total"] == out["scanned"] == 4 and out["matched"] == 2
    assert all(h["matched"] == "content" and h["hits"] >= 1 for h in hits.values())
    assert any("hello-from-bash" in s["snippet"] for s in hits[f"claude:{CLAUDE_MAIN}"]["snippets"])
    rx = nx("search", r"hello-from-(bash|exec)$", "--regex", "--json").json
    assert {h["session_id"] for h in rx["results"]} == set(hits)
    bad = nx("search", "(unclosed", "--regex", "--json")
    assert bad.code == 2 and bad.json["error"]["code"] == "invalid_argument"
    assert "regular expression" in bad.json["error"]["reason"]
    blank = nx("search", "   ", "--json")
    assert blank.code == 2 and "blank" in blank.json["error"]["reason"]


@pytest.mark.parametrize("backend", ["sqlite", "pg"], indirect=True)
def test_titles_match_first(nx, corpus):
    assert nx("rename", f"codex:{sid(11)}", "the hello investigation").code == 0
    out = nx("search", "hello", "--json").json
    assert out["results"][0]["session_id"] == f"codex:{sid(11)}"
    assert out["results"][0]["matched"] == "title"


@pytest.mark.parametrize("query,regex", [("hello", False), ("FINAL answer", False), ("ok", False),
                                         ("x", False), (r"exit code \d", True),
                                         ("run:c[0-9]", True), ("ü", False),
                                         ('say "hi"', False), ("nothing like this", False),
                                         ("_", False), ("%", False), ("\\", False),
                                         ("o_e", False), ("HÉLLO", False)])
@pytest.mark.parametrize("backend", ["sqlite", "pg"], indirect=True)
def test_the_index_answers_the_same_hits_as_a_scan(nx, corpus, query, regex):
    flags = ["--regex"] if regex else []
    indexed = nx("search", query, *flags, "--json").json
    scanned = nx("search", query, *flags, "--no-index", "--json").json
    assert indexed["index"]["used"] and not scanned["index"]["used"]
    assert indexed["results"] == scanned["results"]
    assert (indexed["matched"], indexed["hits"]) == (scanned["matched"], scanned["hits"])


def test_the_index_is_incremental_and_says_whether_it_was_current(nx, corpus, home):
    first = nx("search", "hello", "--json").json["index"]
    assert first["used"] and first["was_current"] is False and first["current"] is True
    assert first["updated_sessions"] == 4 and first["indexed_bytes"] > 0
    again = nx("search", "hello", "--json").json["index"]
    assert again["was_current"] is True and again["indexed_bytes"] == 0
    path = corpus["codex-main"]
    row = {"timestamp": "2026-11-30T13:00:00.000Z", "type": "response_item",
           "payload": {"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": "a brand new zebra answer"}]}}
    added = (json.dumps(row) + "\n").encode()
    with open(path, "ab") as fh:
        fh.write(added)
    grown = nx("search", "zebra", "--json").json
    assert grown["index"]["was_current"] is False and grown["index"]["updated_sessions"] == 1
    assert grown["index"]["indexed_bytes"] == len(added)  # only what the file gained
    assert [h["session_id"] for h in grown["results"]] == [f"codex:{sid(9)}"]
    # rewritten from scratch (same size or not): read again, the old entries go
    path.write_text((DATA / "codex-autocompact.jsonl").read_text().replace("hello", "HOLA"))
    assert nx("search", "zebra", "--json").json["matched"] == 0
    # removed: forgotten, index entries and all
    db = sqlite3.connect(str(home / "nexus.db"))
    fid = db.execute("SELECT id FROM insight_files WHERE path = ?", (str(path),)).fetchone()[0]
    assert db.execute("SELECT count(*) FROM insight_chunks WHERE file_id = ?", (fid,)).fetchone()[0]
    path.unlink()
    assert nx("search", "zebra", "--json").json["total"] == 3
    assert db.execute("SELECT count(*) FROM insight_files WHERE path = ?",
                      (str(path),)).fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM insight_chunks WHERE file_id = ?",
                      (fid,)).fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM insight_fts WHERE insight_fts MATCH '\"zebra\"'"
                      ).fetchone()[0] == 0


def test_a_per_session_time_limit_is_reported(nx, corpus, user_home, chdir_work):
    big = place(user_home, "claude-main.jsonl", chdir_work, sid(12))
    body = big.read_text()
    big.write_text(body * 60)
    out = nx("search", "never-found-anywhere", "--no-index", "--session-time-limit", "0.001",
             "--json").json
    assert out["timed_out"] >= 1
    assert "session-time-limit" in out["hint"]
    fine = nx("search", "never-found-anywhere", "--no-index", "--json").json
    assert fine["timed_out"] == 0


@pytest.mark.parametrize("backend", ["sqlite", "pg"], indirect=True)
def test_sql_and_like_metacharacters_are_searched_as_text(nx, corpus):
    """`%`, `_`, `\\`, quotes: text to find, never a pattern or SQL (PostgreSQL: ILIKE)."""
    text = "rate 100% of snake_case\\path, it's \"done\"; DROP TABLE insight_chunks; --"
    row = {"timestamp": "2026-11-30T13:00:00.000Z", "type": "response_item",
           "payload": {"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": text}]}}
    with open(corpus["codex-main"], "a") as fh:
        fh.write(json.dumps(row) + "\n")
    for query in ("100%", "e_c", "e\\p", "it's", '"done"', "; DROP TABLE insight_chunks; --"):
        out = nx("search", query, "--json").json
        assert out["index"]["used"] and out["index"]["current"], query
        assert [h["session_id"] for h in out["results"]] == [f"codex:{sid(9)}"], query
        assert out["results"][0]["hits"] == 1, query
        assert out["results"] == nx("search", query, "--no-index", "--json").json["results"]
    # never a wildcard (a wildcard's extra candidates would be dropped by the check each hit
    # gets: what must not happen is a text left out, and the scan's answer says what is in)
    for query, matched in (("%", 1), ("\\", 3), ("a%b", 0), ("x_y_z", 0)):
        out = nx("search", query, "--json").json
        assert out["results"] == nx("search", query, "--no-index", "--json").json["results"]
        assert out["matched"] == matched, query


def test_search_in_team_mode_under_a_member_role(nx, chdir_work, user_home, pg_cluster,
                                                 monkeypatch):
    """The transcript index is each role's own (row-level security): a member's search still
    indexes and finds."""
    from test_team import schema

    name, admin_url = schema(pg_cluster)
    alice = "alice_" + os.urandom(3).hex()
    monkeypatch.setenv("NEXUS_DATABASE_URL", admin_url)
    assert nx("team", "init", alice, "--apply", "--json").code == 0
    monkeypatch.setenv("NEXUS_DATABASE_URL", pg_cluster.url_for(name, user=alice))
    nx("maintenance")
    place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    for _ in range(2):  # indexing, then from the index
        out = nx("search", "HELLO-FROM", "--json").json
        assert out["index"]["used"] and out["index"]["current"] and out["matched"] == 1


@pytest.mark.parametrize("backend", ["sqlite", "pg"], indirect=True)
def test_search_limits_and_pages(nx, corpus):
    out = nx("search", "run:", "--limit", "2", "--json").json
    assert out["total"] == 2 and "--all-sessions" in out["hint"]
    every = nx("search", "run:", "--all-sessions", "--page-size", "3", "--json").json
    assert every["total"] == 4 and every["matched"] == 4 and every["count"] == 3
    assert every["truncated"] and every["next"] == "--offset 3"


def test_no_store_is_created_by_reading(nx, chdir_work, user_home, home):
    place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    for args in (("search", "hello"), ("sessions",), ("log", CLAUDE_MAIN), ("stats", CLAUDE_MAIN),
                 ("waits",), ("board", "--once")):
        assert nx(*args).code == 0, args
    assert not (home / "nexus.db").exists()
    out = nx("search", "hello", "--json").json
    assert not out["index"]["used"] and "no store" in out["index"]["reason"]


# -- titles -------------------------------------------------------------------------------------


def test_rename_rights(nx, hook, chdir_work, user_home, pair):
    place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    own = nx("rename", "claude@work", "auth refactor", "--json", env=A)
    assert own.code == 0 and own.json["set_by"] == f"claude:{sid(1)}"
    other = nx("rename", "claude@work", "hijacked", "--json", env=B)
    assert other.code == 5 and other.json["error"]["code"] == "not_your_session"
    person = nx("rename", "claude@work", "auth refactor,\n part two", "--json")
    assert person.code == 0 and person.json["previous"] == "auth refactor"
    assert person.json["title"] == "auth refactor, part two"  # one line
    never_seen = nx("rename", CLAUDE_MAIN, "found in a transcript", "--json")
    assert never_seen.code == 0
    items = nx("sessions", "--json").json["items"]
    titles = {s["id"]: (s["title"], s["title_source"]) for s in items}
    assert titles[f"claude:{sid(1)}"] == ("auth refactor, part two", "set")
    assert titles[f"claude:{CLAUDE_MAIN}"] == ("found in a transcript", "set")
    log = nx("events", "--action", "session.rename", "--json").json["events"]
    assert [e["target"] for e in log][:1] == [f"claude:{CLAUDE_MAIN}"]


# -- the wait graph and the board ---------------------------------------------------------------


@pytest.fixture
def deadlock(nx, hook, chdir_work):
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    hook("claude", "SessionStart", sid(3), source="startup")
    assert nx("delegate", "codex", "review auth.py and tell me", env=A).code == 0
    assert nx("delegate", "claude@work", "first fix the tests I depend on", env=B).code == 0
    return chdir_work


def test_a_deadlock_between_two_sessions_is_reported(nx, deadlock):
    out = nx("waits", "--json").json
    assert out["deadlock"] and len(out["deadlocks"]) == 1
    d = out["deadlocks"][0]
    assert {p["id"] for p in d["sessions"]} == {f"claude:{sid(1)}", f"codex:{sid(2)}"}
    assert d["cycle"][0] == d["cycle"][-1] and len(d["cycle"]) == 3
    assert d["blocked"]  # both idle: nothing moves without someone
    kinds = {(e["from"]["id"], e["to"]["id"], e["kind"]) for e in out["edges"]}
    assert kinds == {(f"claude:{sid(1)}", f"codex:{sid(2)}", "delegation"),
                     (f"codex:{sid(2)}", f"claude:{sid(1)}", "delegation")}
    human = nx("waits").out
    assert "DEADLOCK" in human


def test_waits_on_asks_and_would_deadlock_before_waiting(nx, hook, chdir_work, pair):
    assert nx("ask", "codex", "which port?", "--timeout", "0", env=A).code == 7  # stays open
    out = nx("waits", "--json").json
    assert [(e["kind"], e["from"]["id"]) for e in out["edges"]] == [("ask", f"claude:{sid(1)}")]
    assert not out["deadlock"]
    check = nx("waits", "--on", "claude@work", "--json", env=B).json
    assert check["would_deadlock"] is True
    assert check["would_cycle"] == [f"codex:{sid(2)}", f"claude:{sid(1)}", f"codex:{sid(2)}"]
    assert nx("waits", "--on", "codex", "--json", env=A).json["would_deadlock"] is False
    # the answer ends the wait
    mid = out["edges"][0]["id"]
    assert nx("reply", mid, "8080", env=B).code == 0
    assert nx("waits", "--json").json["edges"] == []


def test_the_board_once_fits_80_columns_and_shows_the_deadlock(nx, deadlock, user_home,
                                                               monkeypatch):
    nx("profile", "--note", "x", env=A)
    out = nx("board", "--once", "--width", "80")
    assert out.code == 0, out.err
    lines = out.out.splitlines()
    assert all(len(line) <= 80 for line in lines), out.out
    assert lines[0].startswith("nexus board: 3 sessions")
    assert any("claude@work" in line and "idle" in line for line in lines)
    assert any(line.strip().startswith("DEADLOCK") for line in lines)
    assert any("delegation" in line for line in lines)
    assert "\x1b" not in out.out  # no terminal: plain text
    monkeypatch.setenv("COLUMNS", "60")
    narrow = nx("board", "--once").out.splitlines()
    assert all(len(line) <= 60 for line in narrow)


def test_the_board_focuses_a_session_and_opens_its_log(nx, hook, chdir_work, user_home,
                                                       tmp_path):
    mine = tmp_path / f"{sid(1)}.jsonl"
    mine.write_text((DATA / "claude-main.jsonl").read_text())
    hook("claude", "SessionStart", sid(1), source="startup", transcript_path=str(mine))
    out = nx("board", "--once", "--focus", "claude@work", "--width", "80").out
    assert "log of claude@work" in out and "done" in out
    assert all(len(line) <= 80 for line in out.splitlines())
    # the last answer and tool come from the transcript: the hooks saw none
    row = next(line for line in out.splitlines() if "claude@work" in line and "idle" in line)
    assert "done" in row


# -- status, filled from the transcript ---------------------------------------------------------


def test_status_shows_the_transcript_s_last_answer_and_tool(nx, hook, chdir_work, tmp_path):
    mine = tmp_path / f"rollout-2026-01-01T00-00-00-{sid(2)}.jsonl"
    mine.write_text((DATA / "codex-main.jsonl").read_text())
    hook("codex", "SessionStart", sid(2), source="startup", transcript_path=str(mine))
    out = nx("status", "codex", "--json").json
    assert out["last_assistant_text"] == "FINAL ANSWER turn 2."
    assert out["last_tool"] == "exec_command"
    assert sorted(out["transcript_fields"]) == ["last_assistant_text", "last_tool"]
    hook("codex", "Stop", sid(2), last_assistant_message="seen by the hook")
    out = nx("status", "codex", "--json").json
    assert out["last_assistant_text"] == "seen by the hook"
    assert out["transcript_fields"] == ["last_tool"]
    assert "from the transcript" in nx("status", "codex").out


# -- MCP ------------------------------------------------------------------------------------------


def test_waits_and_sessions_over_mcp(home, hook, nx, deadlock, user_home):
    async def go():
        async with session(home, f"claude:{sid(1)}", args=("--tools", "default,insight"),
                           bind=("toolu_I1",)) as s:
            tools = {t.name for t in (await s.list_tools()).tools}
            meta = {"claudecode/toolUseId": "toolu_I1"}
            return tools, [await s.call_tool(name, args, meta=meta) for name, args in
                           (("waits", {}), ("waits", {"on": f"codex:{sid(2)}"}),
                            ("session_list", {}))]  # (by id: its fake client is not the
    # server's to see, which judges the real process table)

    tools, (waits, check, listing) = run(go)
    assert {"waits", "session_log", "session_search", "session_list", "session_stats",
            "session_rename"} <= tools
    for r in (waits, check, listing):
        assert not r.is_error, r.content
        assert json.loads(r.content[0].text) == r.structured_content
    assert waits.structured_content["deadlock"] is True
    assert check.structured_content["would_deadlock"] is True
    assert {s["id"] for s in listing.structured_content["items"]} >= {f"claude:{sid(1)}"}


def test_insight_is_not_in_the_default_tools():
    from nexus_cli.core.specs import served

    assert not {"waits", "session_log"} & set(served(("default",)))
    assert {"waits", "session_log"} <= set(served(("insight",)))


def test_text_from_transcripts_is_escaped_for_people(nx, chdir_work, user_home):
    path = place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    row = {"type": "user", "cwd": chdir_work, "sessionId": CLAUDE_MAIN,
           "timestamp": "2026-11-30T12:50:00.000Z",
           "message": {"role": "user", "content": "evil \x1b]0;pwned\x07 \x1b[2J text"}}
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")
    out = nx("log", CLAUDE_MAIN, "--tail", "2").out
    assert "\x1b" not in out and "\\x1b" in out
    assert "\x1b" in nx("log", CLAUDE_MAIN, "--tail", "1", "--json").json["events"][-1]["text"]
    assert re.search(r"evil", nx("search", "evil").out)


def test_types_as_a_list_over_mcp(home, chdir_work, user_home):
    """Over MCP `types` is a list (the CLI writes it comma-separated); an unknown type is named
    the MCP way."""
    from helpers import ctx_for
    from nexus_cli.catalog import load
    from nexus_cli.core.errors import NexusError
    from nexus_cli.core.registry import invoke

    place(user_home, "codex-main.jsonl", chdir_work, sid(9))
    tool = load()["session_log"]
    out = invoke(tool, ctx_for(home, face="mcp"),
                 {"target": f"codex:{sid(9)}", "types": ["tool/call", "turn/end"]})
    assert {e["type"] for e in out["events"]} == {"tool/call", "turn/end"}
    with pytest.raises(NexusError) as bad:
        invoke(tool, ctx_for(home, face="mcp"), {"target": f"codex:{sid(9)}", "types": ["nope"]})
    assert bad.value.key.startswith("session_log.types")


def test_one_huge_event_still_fits_the_byte_budget(nx, chdir_work, user_home):
    path = place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    edits = [{"old_string": f"old {i} " * 300, "new_string": f"new {i} " * 300} for i in range(40)]
    row = {"type": "assistant", "cwd": chdir_work, "sessionId": CLAUDE_MAIN,
           "timestamp": "2026-11-30T12:50:00.000Z",
           "message": {"id": "msg_huge", "role": "assistant", "stop_reason": "tool_use",
                       "content": [{"type": "tool_use", "id": "toolu_huge", "name": "MultiEdit",
                                    "input": {"file_path": "/x", "edits": edits}}]}}
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")
    for budget in (2000, 61440):
        out = nx("log", CLAUDE_MAIN, "--tail", "1", "--head", "0", "--max-bytes", str(budget),
                 "--json").json
        (ev,) = out["events"]
        assert ev["tool"] == "MultiEdit" and len(json.dumps(ev).encode()) <= budget


# -- review findings: what a transcript path may be, how long a regex may take, a huge line ------


@pytest.fixture
def unblock():
    """Fails the test rather than hanging it: after 60 s a writer opens (and closes) each FIFO
    registered, which ends any read blocked on it."""
    import threading

    fifos: list[str] = []
    fired = threading.Event()

    def fire() -> None:
        fired.set()
        for f in fifos:
            try:
                os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass

    timer = threading.Timer(60, fire)
    timer.start()
    yield fifos
    timer.cancel()
    assert not fired.is_set(), "a read blocked on a FIFO"


def test_open_regular_refuses_fifos_and_directories_without_blocking(tmp_path, unblock):
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    unblock.append(str(fifo))
    folder = tmp_path / "d.jsonl"
    folder.mkdir()
    for path in (fifo, folder):
        with pytest.raises(OSError):
            common.open_regular(str(path))
        with pytest.raises(OSError):
            list(common.read_all(str(path), claude_t.reader()))
    regular = tmp_path / "r.jsonl"
    regular.write_bytes(b'{"type":"summary"}\n')
    with common.open_regular(str(regular)) as fh:
        assert fh.read() == b'{"type":"summary"}\n' and os.get_blocking(fh.fileno())


def test_a_fifo_named_like_a_transcript_is_skipped_everywhere(nx, hook, home, chdir_work,
                                                              user_home, tmp_path, unblock):
    """Review finding: `mkfifo ~/.claude/projects/x/<uuid>.jsonl` hung `nexus sessions` and
    `nexus search` (and their MCP tools) forever. Every reader skips it, counted as unreadable;
    naming it gives a coded error; a hook that reported a FIFO as its transcript changes
    nothing."""
    from helpers import ctx_for
    from nexus_cli.catalog import load
    from nexus_cli.core.registry import invoke

    nx("maintenance")  # a store: the index is tried too
    place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    folder = user_home / ".claude" / "projects" / claude_t.slug(chdir_work)
    fifo = folder / f"{sid(7)}.jsonl"
    os.mkfifo(fifo)
    odd = tmp_path / f"{sid(1)}.jsonl"
    os.mkfifo(odd)
    unblock.extend([str(fifo), str(odd)])
    hook("claude", "SessionStart", sid(1), source="startup", transcript_path=str(odd))
    listing = nx("sessions", "--json").json
    assert listing["skipped"] == 1 and f"claude:{CLAUDE_MAIN}" in \
        [s["id"] for s in listing["items"]]
    for args in (("hello-from",), ("hello-from", "--no-index"), ("hello.from", "--regex")):
        out = nx("search", *args, "--json").json
        assert [h["session_id"] for h in out["results"]] == [f"claude:{CLAUDE_MAIN}"], args
    for args in (("log", sid(7)), ("stats", sid(7))):
        r = nx(*args, "--json")
        assert r.code == 3 and r.json["error"]["code"] == "transcript_not_found", args
        assert "not a regular file" in r.json["error"]["reason"]
    assert nx("status", "claude@work", "--json").code == 0
    assert nx("board", "--once").code == 0
    assert nx("log", "claude@work", "--json").json["error"]["code"] == "transcript_not_found"
    for name, args in (("session_list", {}), ("session_search", {"query": "hello-from"})):
        out = invoke(load()[name], ctx_for(home, face="mcp"), args)
        assert out["total"] >= 1, name


def test_a_catastrophic_regex_keeps_the_time_limit(nx, home, chdir_work, user_home,
                                                   monkeypatch):
    """Review finding: `--regex '(a+)+$'` on one 41-character prompt ran past 120 s whatever
    --session-time-limit said (Python's re cannot be interrupted from another thread). The
    pattern is matched in a child process killed at the limit; the answer names the sessions
    cut short. (30 and 44 characters here: minutes of backtracking each without the limit.)"""
    from helpers import ctx_for
    from nexus_cli.catalog import load
    from nexus_cli.core.registry import invoke
    from nexus_cli.insight import search

    raw = sid(40)
    folder = user_home / ".claude" / "projects" / claude_t.slug(chdir_work)
    folder.mkdir(parents=True)
    rows = [{"type": "user", "cwd": chdir_work, "sessionId": raw,
             "timestamp": "2026-11-30T12:00:00.000Z",
             "message": {"role": "user", "content": "a" * n + "!"}} for n in (30, 44)]
    (folder / f"{raw}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    place(user_home, "codex-main.jsonl", chdir_work, sid(9))
    for extra in (("--no-index",), ()):
        if not extra:
            nx("maintenance")  # now through the index
        for pattern in ("(a+)+$", "(a|aa)*b"):
            started = time.monotonic()
            r = nx("search", pattern, "--regex", "--session-time-limit", "0.5", *extra, "--json")
            assert time.monotonic() - started < 25, (pattern, extra)
            out = r.json
            assert r.code == 0 and out["timed_out_sessions"] == [f"claude:{raw}"], out
            assert out["timed_out"] == 1 and "time limit" in out["hint"]
    human = nx("search", "(a+)+$", "--regex", "--session-time-limit", "0.5").out
    assert f"cut short by the time limit: claude:{raw}" in human
    # a fine pattern still finds what it should, in the same run as a cut one
    fine = nx("search", r"hello-from-(bash|exec)$", "--regex", "--json").json
    assert [h["session_id"] for h in fine["results"]] == [f"codex:{sid(9)}"]
    assert fine["timed_out_sessions"] == []
    # over MCP the whole answer stays within the tool-call window, whatever the per-session limit
    monkeypatch.setattr(search, "ASK_MCP_MAX", 2.0)
    started = time.monotonic()
    out = invoke(load()["session_search"], ctx_for(home, face="mcp"),
                 {"query": "(a+)+$", "regex": True, "session_time_limit": 60})
    assert time.monotonic() - started < 25
    assert f"claude:{raw}" in out["timed_out_sessions"]


def test_an_over_long_line_is_skipped_unread_in_bounded_memory(nx, chdir_work, user_home,
                                                              monkeypatch):
    """Review finding: one 50 MB line peaked at 170 MB even with --tail-scan. A line over
    MAX_LINE (here 1 MB, 30 MB written) is read past in chunks, counted, and stands as a system
    event giving its offset; the lines after it are read as usual (offsets stay right)."""
    monkeypatch.setattr(common, "MAX_LINE", 1 << 20)
    path = place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    big = {"type": "assistant", "cwd": chdir_work, "sessionId": CLAUDE_MAIN,
           "timestamp": "2026-11-30T12:50:00.000Z",
           "message": {"id": "m_big", "role": "assistant", "stop_reason": "end_turn",
                       "content": [{"type": "text", "text": "A" * (30 << 20)}]}}
    after = {"type": "user", "cwd": chdir_work, "sessionId": CLAUDE_MAIN,
             "timestamp": "2026-11-30T12:51:00.000Z",
             "message": {"role": "user", "content": "after-the-long-line"}}
    with open(path, "a") as fh:
        offset = fh.tell()
        fh.write(json.dumps(big) + "\n")
        fh.write(json.dumps(after) + "\n")
    del big
    for args in (("--tail-scan",), ("--full",)):
        tracemalloc.start()
        try:
            r = nx("log", CLAUDE_MAIN, "--preset", "all", "--tail", "3", *args, "--json")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert r.code == 0, r.err
        assert peak < 12 << 20, (args, peak)  # the 30 MB line is never held
        out = r.json
        assert out["counts"]["oversize"] == 1
        marker = next(e for e in out["events"] if e.get("subtype") == "oversize_line")
        assert marker["offset"] == offset and f"offset {offset}" in marker["text"]
        assert out["events"][-1]["text"] == "after-the-long-line"
    assert "1 over-long" in nx("log", CLAUDE_MAIN, "--tail", "2").out
    nx("maintenance")
    for extra in ((), ("--no-index",)):
        hit = nx("search", "after-the-long-line", *extra, "--json").json
        assert hit["matched"] == 1, extra
    stats = nx("stats", CLAUDE_MAIN, "--json").json
    assert stats["counts"]["oversize"] == 1


def test_counts_in_human_output_agree_with_their_nouns(nx, chdir_work, user_home, tmp_path):
    """Review finding: "1 hits", and "belongs to project an unknown directory"."""
    from nexus_cli.insight import render

    result = {"results": [{"session_id": "claude:x", "name": None, "handle": None, "title": None,
                           "matched": "content", "hits": 1, "timed_out": False,
                           "updated_at_epoch": None, "snippets": []}],
              "index": {"used": False, "reason": "--no-index"}, "matched": 1, "total": 1,
              "hits": 1, "next": None, "hint": "h", "timed_out_sessions": []}
    out = render.search(result)
    assert "1 hit;" in out and "1 hits" not in out and "of 1 session matched (1 hit;" in out
    result["results"][0]["hits"] = result["hits"] = 2
    assert "2 hits" in render.search(result)
    # a transcript that never says where it ran, in no project of ours
    raw = sid(41)
    folder = user_home / ".claude" / "projects" / "elsewhere"
    folder.mkdir(parents=True)
    (folder / f"{raw}.jsonl").write_text(json.dumps(
        {"type": "user", "sessionId": raw, "message": {"role": "user", "content": "hi"}}) + "\n")
    err = nx("log", raw, "--json").json["error"]
    assert "an unknown directory" not in err["reason"]
    assert err["reason"] == ("its transcript does not say which directory it ran in, so it is "
                             "outside this project") and "--all-workspaces" in err["action"]
    place(user_home, "claude-main.jsonl", chdir_work, CLAUDE_MAIN)
    place(user_home, "codex-main.jsonl", chdir_work, sid(9))
    hint = nx("search", "zzz-nowhere", "--limit", "1", "--json").json["hint"]
    assert "1 older session was not searched" in hint, hint
