"""Ids that can be copied (issue 38, item 1): a table never cuts an id, handle or name a reader
must type next (other columns give way, empty ones take no room), Codex handles differ from the
first digit although Codex ids share their time prefix, and a unique prefix of an id or handle
is accepted where the whole one is."""

from __future__ import annotations

import re

import pytest

from helpers import A, B, C, sid
from nexus_cli.core.human import Table

ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
# four Codex threads started within one millisecond: one time prefix, random tails
CODEX = ["019ae5f2-3c41-7a10-8b2e-5d1f0c9e7a31", "019ae5f2-3c41-7c52-9e07-12ab34cd56ef",
         "019ae5f2-3c41-7e93-a1f4-9087fedc6b52", "019ae5f2-3c41-7f0d-b3c8-aa55ee77cc99"]


def screen(nx, monkeypatch, columns: int, *args: str, env=None) -> list[str]:
    """What a terminal `columns` wide shows for `nexus ARGS`."""
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setenv("FORCE_COLOR", "1")
    r = nx(*args, env=env)
    assert r.code == 0, r.err
    lines = ANSI.sub("", r.out).splitlines()
    assert all(len(line) <= columns for line in lines), "\n" + "\n".join(lines)
    return lines


@pytest.fixture
def busy(nx, hook, pair, tmp_path):
    """A project with four Codex sessions that ended (one millisecond apart), long paths, tasks
    with long texts and messages both ways."""
    deep = tmp_path / "work" / "clients" / "northwind-traders" / "checkout-and-payments-api"
    deep.mkdir(parents=True)
    for thread in CODEX:
        hook("codex", "SessionStart", thread, source="startup")
        hook("codex", "SessionEnd", thread, reason="exit")
    for n in range(3):
        nx("delegate", "codex@work", f"rewrite the webhook verification ({n}) so that it accepts "
           "both signature versions during the migration window", env=A)
        nx("send", "codex@work", f"the staging keys rotate at noon ({n}); use the new ones", env=A)
    return deep


@pytest.mark.parametrize("columns", [60, 80])
def test_ids_handles_and_names_are_never_cut(nx, monkeypatch, busy, columns):
    tasks = nx("tasks", "--json", env=A).json["items"]
    shown = "\n".join(screen(nx, monkeypatch, columns, "tasks", env=A))
    assert all(t["id"] in shown for t in tasks), shown
    messages = nx("inbox", "--json", env=A).json["items"]
    shown = "\n".join(screen(nx, monkeypatch, columns, "inbox", env=A))
    assert all(m["message_id"] in shown for m in messages), shown
    peers = nx("peers", "--include-offline", "--json", env=A).json["items"]
    lines = screen(nx, monkeypatch, columns, "peers", "--include-offline", env=A)
    for p in peers:
        assert any(p["name"] in line and p["handle"] in line for line in lines), lines
    assert "note" not in lines[0].split()  # no session has a note: the column takes no room


def test_codex_handles_differ_from_their_first_digit(nx, busy):
    handles = [p["handle"] for p in nx("peers", "--include-offline", "--json", env=A).json["items"]
               if p["client"] == "codex" and p["id"].removeprefix("codex:") in CODEX]
    assert len(handles) == 4 and len({h[:3] for h in handles}) == 4, handles
    assert not any(h.startswith("s-019ae5f2") for h in handles)


def test_the_table_gives_way_in_order_and_keeps_what_must_be_typed():
    rows = [["t-820b50a89a1c", "completed", "claude@work", "x" * 70, ""]]
    table = Table(["id", "status", "to", "task", "note"], rows, wide=("task",))
    assert table.headers == ["id", "status", "to", "task"]  # the empty column is gone
    assert table.fit(200) == [14, 9, 11, 70]
    assert table.fit(60) == [14, 9, 11, 20]  # the wide column gives way first
    for limit in (40, 30, 20):  # then columns are left out, never cut to a stump
        widths = table.fit(limit)
        assert widths is not None and widths[0] == 14, (limit, widths)
        assert all(w in (0, n) for w, n in zip(widths[1:3], [9, 11], strict=True))
        shown = [w for w in widths if w]
        assert sum(shown) + 2 * (len(shown) - 1) <= limit
    assert table.fit(40) == [14, 9, 11, 0] and table.fit(20) == [14, 0, 0, 0]
    assert Table(["id", "name"], [["t-820b50a89a1c", "claude@work"]]).fit(10) is None



def unique_prefix(ids: list[str], of: str) -> str:
    """The shortest beginning of `of` that no other of `ids` shares."""
    for n in range(3, len(of) + 1):
        if not any(i != of and i.startswith(of[:n]) for i in ids):
            return of[:n]
    return of


def shared_prefix(ids: list[str]) -> str:
    """A beginning (two characters past the dash) that several of `ids` share."""
    heads = [i[:3] for i in ids]
    return next(h for h in heads if heads.count(h) > 1)


def test_a_unique_prefix_of_an_id_is_the_id_and_an_ambiguous_one_lists_them(nx, pair):
    sent = [nx("send", "codex@work", f"note {n}", "--json", env=A).json["message_id"]
            for n in range(17)]  # 17 ids: two share their first digit, whatever they are
    short = unique_prefix(sent, sent[0])
    shown = nx("message", "show", short, "--json", env=A)
    assert shown.code == 0 and shown.json["message_id"] == sent[0]
    r = nx("message", "show", shared_prefix(sent), env=A)
    assert r.code == 4 and "id_ambiguous" in r.err and "`nexus inbox` lists them" in r.err
    assert sum(i in r.err for i in sent) >= 2
    # a reply by the recipient to the shortened id
    got = nx("reply", unique_prefix(sent, sent[1]), "thanks", "--json", env=B)
    assert got.code == 0, got.err
    assert nx("message", "show", got.json["message_id"], "--json", env=A).json["reply_to"] == \
        sent[1]


def test_a_task_id_prefix_works_for_every_task_command(nx, pair):
    tid = nx("delegate", "codex@work", "index the docs", "--json", env=A).json["id"]
    r = nx("tasks", "--id", tid[:4], "--json", env=A)
    assert r.code == 0 and [t["id"] for t in r.json["items"]] == [tid]
    done = nx("report", tid[:5], "--status", "completed", "--result", "indexed", env=B)
    assert done.code == 0, done.err
    own = nx("task", "create", "tidy up", "--json", env=A).json["task_id"]
    got = nx("task", "get", own[:6], "--json", env=A)
    assert got.code == 0 and got.json["id"] == own
    assert nx("task", "cancel", own[:6], env=A).code == 0


def test_a_prefix_reaches_only_what_the_caller_may_see(nx, hook, pair):
    hook("claude", "SessionStart", sid(3), source="startup")
    theirs = nx("send", "codex@work", "between us", "--json", env=C).json["message_id"]
    r = nx("message", "show", theirs[:6], env=A)  # not A's: not found, and not named
    assert r.code == 3 and theirs not in r.err


def test_a_handle_prefix_is_the_session(nx, hook, pair):
    for thread in CODEX[:2]:
        hook("codex", "SessionStart", thread, source="startup")
    peers = nx("peers", "--json", env=A).json["items"]
    handles = [p["handle"] for p in peers if p["id"].removeprefix("codex:") in CODEX]
    r = nx("send", handles[0][:5], "hi", "--json", env=A)
    assert r.code == 0 and r.json["to"]["handle"] == handles[0]
    r = nx("status", handles[1][:6], "--json", env=A)
    assert r.code == 0 and r.json["session"]["handle"] == handles[1]
    r = nx("send", "s-", "hi", env=A)  # no digit: no prefix, and no such session
    assert r.code in (2, 3)
    r = nx("send", "s-0", "hi", env=A)  # s-000000010000 (A itself) and s-000000020000
    assert r.code == 4 and "id_ambiguous" in r.err and "s-000000020000" in r.err
