"""Codex's hook trust: the hash nexus computes is the one the pinned Codex computes (vectors it
reported), doctor tells trusted / changed since review / not reviewed / turned off apart, and
`nexus install codex --trust` records the hashes for nexus's handlers only, only for the person
at a terminal, keeping every other byte of config.toml."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from helpers import B, sid
from nexus_cli.clients.codex import trust
from nexus_cli.core import caller

VECTORS = json.loads((Path(__file__).parent / "data" / "codex_hook_hashes.json").read_text())


@pytest.mark.parametrize("vectors", VECTORS["sets"], ids=lambda v: v["what"].split(":")[0][:24])
def test_the_hash_is_the_one_the_pinned_codex_computes(vectors):
    ours = {}
    for event, groups in vectors["hooks"].items():
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group["hooks"]):
                ours[f"{trust.label(event)}:{gi}:{hi}"] = trust.hook_hash(event, group, handler)
    assert ours == vectors["hashes"]


def test_every_field_codex_hashes_changes_the_hash_and_the_others_do_not():
    group, handler = {"matcher": "^mcp__nexus__"}, {"type": "command", "command": "x",
                                                   "timeout": 10}
    base = trust.hook_hash("PreToolUse", group, handler)
    for changed in ({**handler, "command": "y"}, {**handler, "timeout": 11},
                    {**handler, "async": True}, {**handler, "statusMessage": "s"}):
        assert trust.hook_hash("PreToolUse", group, changed) != base
    assert trust.hook_hash("PreToolUse", {"matcher": "Bash"}, handler) != base
    assert trust.hook_hash("PreToolUse", group, {**handler, "once": True}) == base
    assert trust.hook_hash("PreToolUse", group, {**handler, "commandWindows": "z"}) == base
    # Codex ignores a matcher on Stop and UserPromptSubmit, and the default timeout is 600
    assert trust.hook_hash("Stop", {"matcher": "x"}, {"command": "a"}) == \
        trust.hook_hash("Stop", {}, {"command": "a", "timeout": 600, "async": False})


def test_keys_name_the_real_folder_of_the_hooks_file(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert trust.key_source(str(tmp_path / "link" / "hooks.json")) == \
        str(tmp_path / "real" / "hooks.json")


def _state(fakehome: Path) -> dict:
    return tomllib.loads((fakehome / ".codex" / "config.toml").read_text())["hooks"]["state"]


def _trust_check(nx) -> dict:
    return {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}[
        "codex hook trust"]


def _record(fakehome: Path, hashes: dict[str, str]) -> None:
    config = fakehome / ".codex" / "config.toml"
    config.write_text(config.read_text() + "".join(
        f'\n[hooks.state."{k}"]\ntrusted_hash = "{v}"\n' for k, v in hashes.items()))


def test_doctor_tells_trusted_changed_unreviewed_and_turned_off_apart(nx, fakehome):
    assert nx("install", "codex").code == 0
    hooks_file = fakehome / ".codex" / "hooks.json"
    check = _trust_check(nx)
    assert check["status"] == "warn" and "9 not reviewed" in check["detail"]
    assert "nexus install codex --scope user --trust" in check["fix"] and "/hooks" in check["fix"]
    table = json.loads(hooks_file.read_text())
    expected = {k: h for _, k, h in trust.hashes(str(hooks_file), table)}
    # the presence of a key is not trust: a hash recorded for another definition is "changed"
    _record(fakehome, {k: ("sha256:" + "0" * 64 if ":stop:" in k else h)
                       for k, h in expected.items() if ":session_end:" not in k})
    check = _trust_check(nx)
    assert check["status"] == "warn", check
    assert "2 changed since review (Stop)" in check["detail"], check
    assert "1 not reviewed (SessionEnd)" in check["detail"], check
    assert "Codex skips them" in check["detail"]
    # all recorded as Codex would: trusted
    config = fakehome / ".codex" / "config.toml"
    config.write_text(config.read_text().replace("sha256:" + "0" * 64, expected[
        next(k for k in expected if k.endswith(":stop:0:0"))], 1))
    config.write_text(config.read_text().replace("sha256:" + "0" * 64, expected[
        next(k for k in expected if k.endswith(":stop:0:1"))], 1))
    _record(fakehome, {k: h for k, h in expected.items() if ":session_end:" in k})
    check = _trust_check(nx)
    assert check["status"] == "ok" and check["detail"] == "all 9 nexus hooks trusted", check
    # a reinstall that changes a handler (here its timeout) makes it "changed since review"
    table["hooks"]["PermissionRequest"][0]["hooks"][0]["timeout"] = 601
    hooks_file.write_text(json.dumps(table))
    check = _trust_check(nx)
    assert "1 changed since review (PermissionRequest)" in check["detail"], check
    # turned off in /hooks: skipped whatever its hash
    config.write_text(config.read_text().replace(
        f'[hooks.state."{next(k for k in expected if ":session_start:" in k)}"]\n',
        f'[hooks.state."{next(k for k in expected if ":session_start:" in k)}"]\n'
        "enabled = false\n"))
    check = _trust_check(nx)
    assert "1 turned off (SessionStart)" in check["detail"] and "back on" in check["fix"], check


def test_project_hooks_are_trusted_in_the_users_config(nx, fakehome, tmp_path, monkeypatch):
    """Codex reads the review of a project's .codex/hooks.json from the user's config.toml; the
    project's own config cannot trust its hooks."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    monkeypatch.chdir(proj)
    assert nx("install", "codex", "--scope", "project").code == 0
    hooks_file = proj / ".codex" / "hooks.json"
    expected = {k: h for _, k, h in trust.hashes(str(hooks_file),
                                                   json.loads(hooks_file.read_text()))}
    own = proj / ".codex" / "config.toml"
    own.write_text(own.read_text() + "".join(f'\n[hooks.state."{k}"]\ntrusted_hash = "{v}"\n'
                                             for k, v in expected.items()))
    assert "9 not reviewed" in _trust_check(nx)["detail"]
    (fakehome / ".codex").mkdir(exist_ok=True)
    (fakehome / ".codex" / "config.toml").write_text("")
    _record(fakehome, expected)
    assert _trust_check(nx)["status"] == "ok"


def test_install_trust_is_refused_without_a_terminal_and_to_an_agent(nx, hook, fakehome,
                                                                   monkeypatch):
    monkeypatch.setattr(caller, "at_terminal", lambda: False)  # a script, a pipe, setsid
    r = nx("install", "codex", "--trust")
    assert r.code == 5 and "people_only" in r.err and "interactive terminal" in r.err, r.err
    assert not (fakehome / ".codex").exists()  # nothing written, not even the install
    monkeypatch.setattr(caller, "at_terminal", lambda: True)  # an agent's pty is no person
    hook("codex", "SessionStart", sid(2), source="startup")
    r = nx("install", "codex", "--trust", env=B)
    assert r.code == 5 and "people_only" in r.err and "may not trust hooks" in r.err, r.err
    assert not (fakehome / ".codex").exists()
    r = nx("install", "claude", "--trust")
    assert r.code == 2 and "invalid_argument" in r.err, r.err
    # a dry run writes nothing: it may show the edit to anyone
    monkeypatch.setattr(caller, "at_terminal", lambda: False)
    r = nx("install", "codex", "--trust", "--dry-run", "--json")
    assert r.code == 0 and "trusted_hash" in r.json["files"][1]["diff"], r.err
    assert not (fakehome / ".codex").exists()


def _configured(fakehome, command: str, reviewed: str) -> tuple:
    """~/.codex with one handler of another tool (`command`) reviewed with hash `reviewed`, a
    record of a handler elsewhere, comments and other settings: (~/.codex, hooks.json, the
    handler, its key, config.toml's text)."""
    codex = fakehome / ".codex"
    codex.mkdir()
    hooks_file = codex / "hooks.json"
    mine = {"type": "command", "command": command, "timeout": 5}
    hooks_file.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [mine]}]}}))
    key_of_mine = f"{trust.key_source(str(hooks_file))}:stop:0:0"
    before = ('# my settings\nmodel = "gpt-5"   # keep this comment\n\n'
              '[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:abc"\n\n'
              f'[hooks.state."{key_of_mine}"]\nenabled = true\n'
              f'trusted_hash = "sha256:{reviewed}"  # reviewed long ago\n\n[analytics]\n'
              'enabled = false\n')
    (codex / "config.toml").write_text(before)
    return codex, hooks_file, mine, key_of_mine, before


def test_install_trust_records_nexus_hooks_only_and_keeps_every_other_byte(nx, fakehome,
                                                                         terminal):
    codex, hooks_file, _, key_of_mine, before = _configured(
        fakehome, "audit.sh && nexus hook codex", "old")
    r = nx("install", "codex", "--trust", "--json")
    assert r.code == 0, r.err
    assert any("recorded as trusted" in n for n in r.json["notes"])
    assert "nexus install codex --trust" not in " ".join(r.json["notes"])
    after = (codex / "config.toml").read_text()
    assert after.startswith(before[:before.index(f'[hooks.state."{key_of_mine}"]')])
    assert '[analytics]\nenabled = false\n' in after
    state = _state(fakehome)
    # the user's own handler keeps what the user reviewed; the other file's key is untouched
    assert state[key_of_mine] == {"enabled": True, "trusted_hash": "sha256:old"}
    assert state["/elsewhere/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:abc"}
    table = json.loads(hooks_file.read_text())
    ours = trust.hashes(str(hooks_file), table)
    assert len(ours) == 9 and all(state[k] == {"trusted_hash": h} for _, k, h in ours)
    assert _trust_check(nx)["status"] == "ok"
    # again: nothing to do, every byte stays
    r = nx("install", "codex", "--trust", "--json")
    assert [f["action"] for f in r.json["files"]] == ["unchanged", "unchanged"]
    assert (codex / "config.toml").read_text() == after
    # a handler changed since: --trust replaces that one hash in its own table, in place
    for _, key, _ in ours:
        if key.endswith(":permission_request:0:0"):
            after = after.replace(f'[hooks.state."{key}"]\ntrusted_hash = "sha256:',
                                  f'[hooks.state."{key}"]\nenabled = true\n'
                                  'trusted_hash = "sha256:0', 1)
    (codex / "config.toml").write_text(after)
    assert "changed since review" in _trust_check(nx)["detail"]
    assert nx("install", "codex", "--trust").code == 0
    assert _trust_check(nx)["status"] == "ok"
    assert len((codex / "config.toml").read_text()) == len(after) - 1
    assert os.path.exists(str(codex / "config.toml") + ".nexus-backup")


def test_install_trust_refuses_a_state_it_cannot_edit_cleanly(nx, fakehome, terminal):
    assert nx("install", "codex").code == 0
    config = fakehome / ".codex" / "config.toml"
    key = trust.hashes(str(fakehome / ".codex" / "hooks.json"),
                       json.loads((fakehome / ".codex" / "hooks.json").read_text()))[0][1]
    text = config.read_text() + f'\n[hooks]\nstate = {{ "{key}" = {{ enabled = true }} }}\n'
    config.write_text(text)
    r = nx("install", "codex", "--trust")
    assert r.code != 0 and "config_conflict" in r.err and "/hooks" in r.err, r.err
    assert config.read_text() == text


def test_install_trust_of_a_project_records_it_in_the_users_config(nx, fakehome, tmp_path,
                                                                    monkeypatch, terminal):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    monkeypatch.chdir(proj)
    r = nx("install", "codex", "--scope", "project", "--trust", "--json")
    assert r.code == 0, r.err
    assert [f["path"] for f in r.json["files"]] == [
        str(proj / ".codex" / "hooks.json"), str(proj / ".codex" / "config.toml"),
        str(fakehome / ".codex" / "config.toml")]
    assert any("trusted projects" in n for n in r.json["notes"])
    assert "hooks" not in tomllib.loads((proj / ".codex" / "config.toml").read_text())
    assert len(_state(fakehome)) == 9
    assert _trust_check(nx)["status"] == "ok"


# -- uninstall takes out what --trust recorded -----------------------------------------------------


def test_uninstall_takes_out_nexus_trust_records_and_keeps_every_other_byte(nx, fakehome,
                                                                           terminal):
    codex, hooks_file, mine, _, before = _configured(fakehome, "audit.sh", "mine")
    assert nx("install", "codex", "--trust").code == 0
    ours = [k for _, k, _ in trust.hashes(str(hooks_file), json.loads(hooks_file.read_text()))]
    assert len(ours) == 9 and set(ours) <= set(_state(fakehome))
    # the person turned one of nexus's handlers off in /hooks since: its record goes too
    text = (codex / "config.toml").read_text().replace(
        f'[hooks.state."{ours[0]}"]\n', f'[hooks.state."{ours[0]}"]\nenabled = false\n', 1)
    (codex / "config.toml").write_text(text)
    r = nx("uninstall", "codex", "--json")
    assert r.code == 0, r.err
    assert (codex / "config.toml").read_text() == before  # byte for byte what was there
    assert not any("left" in n for n in r.json["notes"])
    assert json.loads(hooks_file.read_text()) == {"hooks": {"Stop": [{"hooks": [mine]}]}}
    # again: nothing left to take out
    r = nx("uninstall", "codex", "--json")
    assert [f["action"] for f in r.json["files"]] == ["unchanged", "unchanged"]


def test_uninstall_of_a_project_takes_its_records_out_of_the_users_config(nx, fakehome, tmp_path,
                                                                          monkeypatch, terminal):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    monkeypatch.chdir(proj)
    assert nx("install", "codex", "--trust").code == 0  # the user scope's records stay
    user_records = dict(_state(fakehome))
    assert nx("install", "codex", "--scope", "project", "--trust").code == 0
    assert len(_state(fakehome)) == 18
    r = nx("uninstall", "codex", "--scope", "project", "--json")
    assert r.code == 0, r.err
    assert [f["path"] for f in r.json["files"]] == [
        str(proj / ".codex" / "hooks.json"), str(proj / ".codex" / "config.toml"),
        str(fakehome / ".codex" / "config.toml")]
    assert r.json["files"][2]["action"] == "updated"
    assert _state(fakehome) == user_records
    assert _trust_check(nx)["status"] == "ok"
    # and the user scope's: the file held only nexus's part, so it goes
    assert nx("uninstall", "codex").code == 0
    assert not (fakehome / ".codex" / "config.toml").exists()


@pytest.mark.parametrize("damage", ["unparsable", "inline"])
def test_uninstall_leaves_a_state_it_cannot_read_or_edit_cleanly_and_says_so(
        nx, fakehome, tmp_path, monkeypatch, terminal, damage):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    monkeypatch.chdir(proj)
    assert nx("install", "codex", "--scope", "project", "--trust").code == 0
    config = fakehome / ".codex" / "config.toml"
    key = next(iter(_state(fakehome)))
    text = config.read_text()
    text = text + "this is = = not toml\n" if damage == "unparsable" else \
        text.replace(f'[hooks.state."{key}"]\n', "", 1).replace(
            "trusted_hash", f'hooks.state."{key}".trusted_hash', 1)
    config.write_text(text)
    r = nx("uninstall", "codex", "--scope", "project", "--json")
    assert r.code == 0, r.err
    assert config.read_text() == text  # never rewritten
    assert not (proj / ".codex" / "hooks.json").exists()  # the rest of the uninstall is done
    assert [n for n in r.json["notes"] if n.startswith(f"left Codex's records of nexus's hooks "
                                                       f"in {config} as they are")], r.json


# -- a review follows its handler when nexus's edit moves it ---------------------------------------


def _others_added_after_nexus(fakehome: Path) -> tuple[Path, dict[str, str]]:
    """nexus installed and trusted, then another tool's handlers added after it, reviewed in
    /hooks: a Stop group of its own and one handler in nexus's PostToolUse group. (~/.codex,
    the others' keys -> their hashes)."""
    codex = fakehome / ".codex"
    hooks_file = codex / "hooks.json"
    table = json.loads(hooks_file.read_text())
    table["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "audit.sh stop"}]})
    table["hooks"]["PostToolUse"][0]["hooks"].append({"type": "command", "command": "fmt.sh"})
    hooks_file.write_text(json.dumps(table, indent=2))
    source = trust.key_source(str(hooks_file))
    theirs = {}
    for event, gi, hi in trust.positions(table, ours=False):
        group = table["hooks"][event][gi]
        theirs[f"{source}:{trust.label(event)}:{gi}:{hi}"] = trust.hook_hash(
            event, group, group["hooks"][hi])
    assert len(theirs) == 2
    _record(fakehome, theirs)
    return codex, theirs


def _their_status(codex: Path) -> dict[str, str]:
    """What Codex would make of the other tool's handlers now: command -> status."""
    hooks_file = codex / "hooks.json"
    table = json.loads(hooks_file.read_text())
    state = tomllib.loads((codex / "config.toml").read_text())["hooks"]["state"]
    source = trust.key_source(str(hooks_file))
    out = {}
    for event, gi, hi in trust.positions(table, ours=False):
        group = table["hooks"][event][gi]
        key = f"{source}:{trust.label(event)}:{gi}:{hi}"
        out[group["hooks"][hi]["command"]] = trust.status(
            state.get(key), trust.hook_hash(event, group, group["hooks"][hi]))
    return out


def test_uninstall_moves_the_reviews_of_the_hooks_that_move_up(nx, fakehome, terminal):
    """Taking nexus's handlers out moves the others up a place: Codex keys a review by place, so
    without their records following them it would skip them, silently, as never reviewed."""
    assert nx("install", "codex", "--trust").code == 0
    codex, _ = _others_added_after_nexus(fakehome)
    assert set(_their_status(codex).values()) == {trust.TRUSTED}
    r = nx("uninstall", "codex", "--json")
    assert r.code == 0, r.err
    assert not r.json["notes"] or not any("left" in n for n in r.json["notes"]), r.json
    assert _their_status(codex) == {"audit.sh stop": trust.TRUSTED, "fmt.sh": trust.TRUSTED}
    assert len(_state(fakehome)) == 2  # theirs only: nexus's went
    assert json.loads((codex / "hooks.json").read_text())["hooks"]["Stop"][0]["hooks"][0][
        "command"] == "audit.sh stop"


def test_a_reinstall_that_moves_nexus_last_keeps_every_review(nx, fakehome, terminal):
    assert nx("install", "codex", "--trust").code == 0
    codex, _ = _others_added_after_nexus(fakehome)
    r = nx("install", "codex", "--json")  # nexus's groups go to the end of each event again
    assert r.code == 0, r.err
    assert json.loads((codex / "hooks.json").read_text())["hooks"]["Stop"][0]["hooks"][0][
        "command"] == "audit.sh stop"
    assert _their_status(codex) == {"audit.sh stop": trust.TRUSTED, "fmt.sh": trust.TRUSTED}
    assert _trust_check(nx)["status"] == "ok"  # nexus's own reviews moved with them too
    assert len(_state(fakehome)) == 11


@pytest.mark.parametrize("form", ["dotted", "inline"])
def test_a_review_that_cannot_follow_its_moved_hook_refuses_the_change(nx, fakehome, terminal,
                                                                      form):
    """Nothing is written: else Codex would skip the hook that moved, without a word."""
    assert nx("install", "codex", "--trust").code == 0
    codex, theirs = _others_added_after_nexus(fakehome)
    config, hooks_file = codex / "config.toml", codex / "hooks.json"
    key = next(k for k in theirs if ":stop:" in k)
    text = config.read_text().replace(f'[hooks.state."{key}"]\ntrusted_hash = "{theirs[key]}"\n',
                                      "", 1)
    text = f'hooks.state."{key}".trusted_hash = "{theirs[key]}"\n' + text if form == "dotted" \
        else text + f'\n[hooks.state]\n"{key}" = {{ trusted_hash = "{theirs[key]}" }}\n'
    config.write_text(text)
    assert tomllib.loads(text)["hooks"]["state"][key] == {"trusted_hash": theirs[key]}
    table = hooks_file.read_text()
    for command in (("uninstall", "codex"), ("install", "codex")):
        r = nx(*command, "--json")
        assert r.code == 8 and r.json["error"]["code"] == "config_conflict", r.out
        assert "nothing was changed" in r.json["error"]["reason"]
        assert config.read_text() == text and hooks_file.read_text() == table


def test_records_of_places_nexus_left_go_and_an_upgrade_leaves_none(nx, fakehome, terminal,
                                                                   monkeypatch, tmp_path):
    """A reinstall whose handlers changed (another NEXUS_HOME) moves nexus to the end: the
    records of where it was go (a moved hook takes one of those places with its own)."""
    assert nx("install", "codex", "--trust").code == 0
    codex, _ = _others_added_after_nexus(fakehome)
    old = {k for _, k, _ in trust.hashes(str(codex / "hooks.json"),
                                         json.loads((codex / "hooks.json").read_text()))}
    monkeypatch.setenv("NEXUS_HOME", str(tmp_path / "elsewhere"))
    assert nx("install", "codex").code == 0
    table = json.loads((codex / "hooks.json").read_text())
    now = {k for _, k, _ in trust.hashes(str(codex / "hooks.json"), table)}
    assert now != old
    assert _their_status(codex) == {"audit.sh stop": trust.TRUSTED, "fmt.sh": trust.TRUSTED}
    theirs = {f"{trust.key_source(str(codex / 'hooks.json'))}:{trust.label(e)}:{g}:{h}"
              for e, g, h in trust.positions(table, ours=False)}
    assert set(_state(fakehome)) <= theirs | now  # nothing of where nexus was
    assert nx("uninstall", "codex").code == 0
    assert _their_status(codex) == {"audit.sh stop": trust.TRUSTED, "fmt.sh": trust.TRUSTED}
    assert len(_state(fakehome)) == 2  # theirs, and nothing of nexus's anywhere


def test_a_comment_after_a_record_that_goes_stays_with_what_it_heads(nx, fakehome, terminal):
    assert nx("install", "codex", "--trust").code == 0
    config = fakehome / ".codex" / "config.toml"
    config.write_text(config.read_text() + "\n# ---- my profiles (keep) ----\n[profiles.fast]\n"
                      'model = "small"\n')
    assert nx("uninstall", "codex").code == 0
    assert config.read_text().endswith("# ---- my profiles (keep) ----\n[profiles.fast]\n"
                                       'model = "small"\n')
    assert "hooks" not in tomllib.loads(config.read_text())


def test_a_config_nexus_cannot_read_gets_no_note_when_no_record_moves(nx, fakehome, tmp_path,
                                                                    monkeypatch):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    monkeypatch.chdir(proj)
    (fakehome / ".codex").mkdir()
    (fakehome / ".codex" / "config.toml").write_text("this is = = not toml\n")
    r = nx("install", "codex", "--scope", "project", "--json")
    assert r.code == 0, r.err
    assert not any("records" in n for n in r.json["notes"]), r.json["notes"]


def test_trust_is_refused_when_a_moved_review_cannot_follow_its_hook(nx, fakehome, terminal):
    """Else nexus's hash would be written over the record of the hook that moved away."""
    assert nx("install", "codex", "--trust").code == 0
    codex, theirs = _others_added_after_nexus(fakehome)
    config = codex / "config.toml"
    key = next(k for k in theirs if ":post_tool_use:" in k)
    text = config.read_text() + f'\n[hooks.state."{key}".note]\nwhy = "mine"\n'
    config.write_text(text)
    r = nx("install", "codex", "--trust")
    assert r.code != 0 and "config_conflict" in r.err, r.err
    assert config.read_text() == text


def test_a_key_with_a_character_toml_escapes_is_written_escaped(tmp_path):
    from nexus_cli.clients.codex import config

    path = str(tmp_path / "config.toml")
    text = '[hooks.state."/h/hooks.json:stop:1:0"]\ntrusted_hash = "sha256:a"\n'
    out = config.rekey_state(path, text, {"/h/hooks.json:stop:1:0": "/h\x7f/hooks.json:stop:0:0"})
    assert tomllib.loads(out)["hooks"]["state"] == {
        "/h\x7f/hooks.json:stop:0:0": {"trusted_hash": "sha256:a"}}


def test_the_install_notes_say_only_what_is_left_to_do(nx, fakehome, terminal, tmp_path,
                                                     monkeypatch):
    r = nx("install", "codex", "--json")
    assert any("restart Codex" in n for n in r.json["notes"])
    assert any("Codex skips hooks you have not reviewed" in n for n in r.json["notes"])
    assert nx("install", "codex", "--trust").code == 0
    again = nx("install", "codex", "--json").json  # nothing changes, every hook is reviewed
    assert [f["action"] for f in again["files"]] == ["unchanged", "unchanged"]
    assert not any("restart" in n or "skips hooks" in n for n in again["notes"]), again["notes"]
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    monkeypatch.chdir(proj)
    told = nx("install", "codex", "--scope", "project", "--json").json["notes"]
    assert any("only in trusted projects" in n for n in told)
    config = fakehome / ".codex" / "config.toml"
    config.write_text(config.read_text() + f'\n[projects."{proj}"]\ntrust_level = "trusted"\n')
    assert nx("uninstall", "codex", "--scope", "project").code == 0
    told = nx("install", "codex", "--scope", "project", "--json").json["notes"]
    assert not any("only in trusted projects" in n for n in told), told


def test_doctor_checks_a_project_when_the_users_config_does_not_parse(nx, fakehome, tmp_path,
                                                                     monkeypatch):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    monkeypatch.chdir(proj)
    assert nx("install", "codex", "--scope", "project").code == 0
    config = fakehome / ".codex" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text("broken = = 1\n")
    checks = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}
    assert checks["codex config (user)"]["status"] == "fail"
    assert checks["codex hooks"]["status"] == "ok" and "(project)" in checks["codex hooks"][
        "detail"]
    trust_row = checks["codex hook trust"]
    assert trust_row["status"] == "fail" and str(config) in trust_row["detail"], trust_row
