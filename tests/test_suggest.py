"""A typo gets help (issue 38, item 8): a mistyped command, session name, setting or preset is
answered with the nearest ones; and what a name reaches (live sessions only) is what `send` does
and what `status` says."""

from __future__ import annotations

from helpers import A, B, sid
from nexus_cli.core import suggest


def test_nearest_words_closest_first_and_none_when_nothing_is_close() -> None:
    assert suggest.nearest("sned", ["send", "read", "tasks"]) == ["send"]
    assert suggest.nearest("RUNWAIT", ["runWait", "maxRuns"]) == ["runWait"]
    assert suggest.nearest("xyzzy", ["send", "read"]) == []
    assert suggest.phrase(["`a`", "`b`", "`c`"]) == "did you mean `a`, `b` or `c`?"
    assert suggest.phrase([]) == ""


def test_a_mistyped_command_names_the_nearest(nx) -> None:
    r = nx("sned", "claude@shop", "hi")
    assert r.code == 2 and "no command `sned`" in r.err and "did you mean `nexus send`?" in r.err
    r = nx("task", "crate", "x")
    assert r.code == 2 and "did you mean `nexus task create`?" in r.err
    assert "did you mean `nexus send`?" in nx("help", "sned").err
    assert "did you mean `nexus send`?" in nx("man", "sned").err
    r = nx("xyzzy")
    assert r.code == 2 and "did you mean" not in r.err and "`nexus --help` lists them" in r.err
    r = nx("task", "list", "--json")  # a script asking for JSON gets its error as JSON too
    assert r.code == 2 and r.json["error"]["code"] == "usage_error"


def test_a_mistyped_name_names_the_session_meant(nx, hook, pair) -> None:
    r = nx("send", "cluade@work", "hi", env=B)
    assert r.code == 3 and "target_not_found" in r.err
    assert "did you mean `claude@work`?" in r.err
    hook("claude", "SessionEnd", sid(1), reason="exit")  # an offline one: its handle, which works
    r = nx("send", "cluade@work", "hi", env=B)
    assert "did you mean `s-000000010000`?" in r.err
    assert nx("send", "s-000000010000", "hi", env=B).code == 0


def test_a_mistyped_setting_or_preset_names_the_nearest(nx) -> None:
    r = nx("config", "get", "runwiat")
    assert r.code == 2 and "did you mean `runWait`?" in r.err
    r = nx("preset", "set", "reveiw", env=A)
    assert "unknown_preset" in r.err and "did you mean `review`?" in r.err


def test_send_and_status_agree_on_what_a_name_reaches(nx, hook, pair) -> None:
    """`send claude@shop` right after its /exit was refused while `status claude@shop` said the
    message "is kept": a name reaches live sessions only, and status says so."""
    hook("codex", "SessionEnd", sid(2), reason="exit")
    assert nx("send", "codex@work", "hi", env=A).code == 3
    said = nx("status", "codex@work", "--json", env=A).json["outlook"]
    assert "a name reaches live sessions only" in said and "s-000000020000" in said
    by_handle = nx("status", "s-000000020000", "--json", env=A).json["outlook"]
    assert "is kept" in by_handle and "a name reaches" not in by_handle
    assert nx("send", "s-000000020000", "hi", env=A).code == 0
