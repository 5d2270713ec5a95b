"""Ids that can be copied (issue 38, item 1): a table never cuts an id, handle or name a reader
must type next (other columns give way, empty ones take no room), Codex handles differ from the
first digit although Codex ids share their time prefix, and a unique prefix of an id or handle
is accepted where the whole one is."""

from __future__ import annotations

import re

import pytest

from helpers import A
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

