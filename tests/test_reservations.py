"""File reservations: reserve, release and list; the edit check in the PreToolUse hook of each
client's file-editing tools (fed the shapes the pinned clients send); the shared/exclusive
matrix; normalisation; TTL, waiting, SessionEnd and maintenance; the marker that lets an edit skip
Python while nothing is reserved; automatic reservations; exactly one winner among 8 processes."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_mcp import run as arun  # imported before any test captures stderr (the SDK's errlog)
from test_mcp import session

from helpers import A, B, C, call, claude_env, ctx_for, raw_db, sid, store_env, until
from nexus_cli.catalog import load
from nexus_cli.clients import hookdefs
from nexus_cli.core.registry import TOOLS, invoke
from nexus_cli.core.store import paths
from nexus_cli.reservations import marker, patterns, reserve

GOLDEN = Path(__file__).parent / "golden" / "reservations.txt"


@pytest.fixture
def trio(hook, chdir_work):
    """Three agent sessions in one project (the hook's work directory), with a src/ tree."""
    for client, n in (("claude", 1), ("codex", 2), ("claude", 3)):
        hook(client, "SessionStart", sid(n), source="startup")
    work = Path(chdir_work)
    (work / "src").mkdir()
    (work / "src" / "parser.py").write_text("x = 1\n")
    (work / "docs").mkdir()
    return work


def edit(hook, who: dict, path: str, tool: str = "Write", **extra) -> dict | None:
    """One file-editing tool call of the session `who`: the hook's reply (None: allowed)."""
    client = "claude" if "CLAUDE_CODE_SESSION_ID" in who else "codex"
    n = int(next(iter(who.values())).split("-")[0], 16)
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    given = {"command": path} if tool == "apply_patch" else {key: path, **extra}
    r = hook(client, "PreToolUse", sid(n), tool_name=tool, tool_use_id=f"toolu_{time.time_ns()}",
             tool_input=given)
    assert r.code == 0, r.err
    if not r.out:
        return None
    out = json.loads(r.out)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    return out


def reason(reply: dict | None) -> str:
    assert reply is not None, "the edit was not refused"
    return reply["permissionDecisionReason"]


def name_of(nx, env: dict) -> tuple[str, str]:
    me = nx("whoami", "--json", env=env).json
    return me["name"], me["handle"]


# -- the edit check ------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit", "NotebookEdit"])
def test_an_exclusive_reservation_refuses_another_sessions_edit_naming_holder_and_way_out(
        nx, hook, trio, tool):
    r = nx("reserve", "src/parser.py", "--reason", "refactor parser", "--ttl", "600", env=A)
    assert r.code == 0, r.err
    target = str(trio / "src" / "parser.py")
    name, handle = name_of(nx, A)
    text = reason(edit(hook, B, target, tool))
    until = time.strftime("%H:%M", time.localtime(nx("reservations", "--json", env=A)
                                                  .json["items"][0]["expires_at_epoch"]))
    assert f"src/parser.py is reserved by {name} ({handle}) until {until}" in text
    assert 'for "refactor parser"' in text and f"ask {handle}" in text and "pick other work" in text
    assert edit(hook, A, target, tool) is None  # the holder edits freely
    assert edit(hook, B, str(trio / "src" / "other.py"), tool) is None  # nobody holds that one
    assert nx("release", "src/parser.py", env=A).code == 0
    assert edit(hook, B, target, tool) is None


def test_codex_apply_patch_is_checked_for_every_file_it_names(nx, hook, trio):
    nx("reserve", "src/parser.py", env=A)
    patch = ("*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** Update File: src/lexer.py\n"
             "*** Move to: src/parser.py\n@@\n-a\n+b\n*** End Patch\n")
    assert "src/parser.py is reserved by" in reason(edit(hook, B, patch, "apply_patch"))
    delete = "*** Begin Patch\n*** Delete File: ./src/../src/parser.py\n*** End Patch\n"
    assert "src/parser.py" in reason(edit(hook, B, delete, "apply_patch"))
    fine = "*** Begin Patch\n*** Update File: src/lexer.py\n@@\n-a\n+b\n*** End Patch\n"
    assert edit(hook, B, fine, "apply_patch") is None


@pytest.mark.parametrize("header", ["  *** Update File: src/parser.py",
                                    "*** Update File:\tsrc/parser.py",
                                    "***  Update File: src/parser.py",
                                    "\t*** update file: src/parser.py  ",
                                    "*** Update File:  src/parser.py",
                                    "*** Update File: src/parser.py\r"])
def test_a_patch_header_is_read_as_liberally_as_codex_reads_it(nx, hook, trio, header):
    """Codex trims a header line and tolerates padding: every spelling of a header it could take
    as naming src/parser.py is checked."""
    nx("reserve", "src/parser.py", env=A)
    patch = f"*** Begin Patch\n{header}\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    assert "src/parser.py is reserved by" in reason(edit(hook, B, patch, "apply_patch"))


@pytest.mark.parametrize("command", [
    "apply_patch <<'EOF'\n{patch}EOF",
    "applypatch <<EOF\n{patch}EOF\n",
    'apply_patch <<"EOF"\n{patch}EOF',
    "cd src && apply_patch <<'EOF'\n{patch_here}EOF",
    "cd 'src' && apply_patch <<'EOF'\n{patch_here}EOF",
    "apply_patch '{patch}'",
    "cd src; apply_patch <<'EOF'\n{patch_here}EOF",
    "cd src\napply_patch <<'EOF'\n{patch_here}EOF",
    "pushd src && apply_patch <<'EOF'\n{patch_here}EOF",
    "pushd src >/dev/null; apply_patch <<'EOF'\n{patch_here}EOF",
    "cd lib && cd ../src && apply_patch <<'EOF'\n{patch_here}EOF",
    "cd {src} && apply_patch <<'EOF'\n{patch_here}EOF",
    "(cd src; apply_patch <<'EOF'\n{patch_here}EOF\n)",
    "if true; then cd src; fi; apply_patch <<'EOF'\n{patch_here}EOF",
])
def test_codex_patching_through_its_shell_tool_is_checked(nx, hook, trio, command):
    """gpt-5 has no apply_patch tool in Codex: it runs `apply_patch <<'EOF' ... EOF` with its
    shell tool, which Codex's PreToolUse reports as Bash; the patch's files are checked (in every
    directory the command's `cd` and `pushd` lead to, however they are chained), and any other
    shell command passes without a lookup."""
    nx("reserve", "src/parser.py", env=A)
    patch = "*** Begin Patch\n*** Update File: src/parser.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    text = command.format(patch=patch, patch_here=patch.replace("src/parser.py", "parser.py"),
                          src=trio / "src")
    r = hook("codex", "PreToolUse", sid(2), tool_name="Bash", tool_use_id="call_1",
             tool_input={"command": text})
    assert r.code == 0 and "src/parser.py is reserved by" in json.loads(r.out)[
        "hookSpecificOutput"]["permissionDecisionReason"], (r.out, r.err)
    for other in ("sed -n p src/parser.py", "echo '*** Update File: src/parser.py'",
                  "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/lexer.py\n"
                  "@@\n-a\n+b\n*** End Patch\nEOF"):
        r = hook("codex", "PreToolUse", sid(2), tool_name="Bash", tool_use_id="call_2",
                 tool_input={"command": other})
        assert (r.code, r.out) == (0, ""), (other, r.out, r.err)


@pytest.mark.parametrize("held", ["src/parser.py", "src/", "src/*.py"])
def test_a_hard_link_of_a_reserved_file_is_the_reserved_file(nx, hook, trio, held):
    """A hard link is the same file under another name (same device and inode): an edit through
    it and `nexus guard` of it are refused like the reserved name's (`fs write` refuses any file
    with more than one link), whether the reservation names the file, its directory or a glob."""
    assert nx("reserve", held, "--reason", "refactor parser", env=A).code == 0
    link = trio / "docs" / "alias.py"
    os.link(trio / "src" / "parser.py", link)
    text = reason(edit(hook, B, str(link)))
    assert "docs/alias.py (a hard link of src/parser.py" in text and "refactor parser" in text
    r = nx("guard", str(link), "--json", env=B)
    assert r.code == 4 and r.json["conflicts"][0]["path"] == "docs/alias.py", r.out
    assert edit(hook, A, str(link)) is None  # the holder edits freely
    (trio / "docs" / "own.py").write_text("y = 2\n")  # a file of its own: not held
    assert edit(hook, B, str(trio / "docs" / "own.py")) is None
    assert nx("guard", str(trio / "docs" / "own.py"), env=B).code == 0


SHELL_WRITES = [
    "echo hi >> src/parser.py",
    "printf 'x' > ./src/../src/parser.py 2>/dev/null",
    "cat notes.txt | tee -a src/parser.py >/dev/null",
    "sed -i 's/1/2/' src/parser.py",
    "sed -i.bak -e s/1/2/ src/parser.py",
    "perl -pi -e 's/1/2/' src/parser.py",
    "cp /etc/hostname src/parser.py",
    "cp docs/parser.py src/",
    "mv src/parser.py /tmp/elsewhere.py",
    "rm -f src/parser.py",
    "truncate -s 0 src/parser.py",
    "vim -es -c '%s/1/2/' -c wq src/parser.py",
    "ed -s src/parser.py <<'EOF'\n1d\nw\nq\nEOF",
    "cat > src/parser.py <<'EOF'\nx = 2\nEOF",
    "D=src; cd $D && echo x >> parser.py",
    "env -C src sh -c 'echo x > parser.py'",
    'bash -c "cd src && echo x >> parser.py"',
    "bash -lc 'cd src; sed -i s/1/2/ parser.py'",
    "sudo -u root tee src/parser.py </dev/null",
    "find src -name '*.py' -exec sed -i s/1/2/ {} +",
    "echo $(echo x > src/parser.py)",
    "sed -i s/1/2/ src/*.py",
]
# the cases of issue 37 class C: a Codex shell patch reaching the file after another directory
SHELL_PATCHES = ["D=src; cd $D && apply_patch <<'EOF'\n{patch}EOF",
                 "env -C src apply_patch <<'EOF'\n{patch}EOF",
                 "bash -c \"cd src && apply_patch <<'EOF'\n{patch}EOF\n\"",
                 "bash -lc 'cd src && apply_patch \"$0\"' '{patch}'",
                 "export D=src; cd \"$D\"; apply_patch '{patch}'"]
SHELL_READS = ["cat src/parser.py", "sed -n 1p src/parser.py", "grep -r x src > /tmp/found.txt",
               "echo '> src/parser.py'", "cp src/parser.py /tmp/copy.py",
               "find src -name '*.py' -exec grep -l x {} +", "python3 -m pytest -q",
               "cd src && ls > /dev/null", "echo x > docs/$NAME.md"]


@pytest.mark.parametrize("client", ["claude", "codex"])
@pytest.mark.parametrize("command", SHELL_WRITES + [p.format(patch="*** Begin Patch\n*** Update "
                                                             "File: parser.py\n@@\n-x = 1\n+x ="
                                                             " 2\n*** End Patch\n")
                                                    for p in SHELL_PATCHES])
def test_a_shell_command_that_visibly_writes_a_reserved_file_is_refused(nx, hook, trio, client,
                                                                         command):
    """Claude Code's Bash and Codex's shell tool: a command that writes the reserved file by a
    redirection, tee, sed -i, cp/mv, an editor, apply_patch ... is refused, whatever directory
    it reaches it from (cd to a variable, env -C, bash -c)."""
    assert nx("reserve", "src/parser.py", "--reason", "refactor parser", env=A).code == 0
    (trio / "notes.txt").write_text("n\n")
    n = 3 if client == "claude" else 2  # another session than the holder's
    r = hook(client, "PreToolUse", sid(n), tool_name="Bash", tool_use_id="toolu_1",
             tool_input={"command": command})
    assert r.code == 0 and r.out, (command, r.err)
    text = json.loads(r.out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "src/parser.py is reserved by" in text and "refactor parser" in text, text
    r = hook("claude", "PreToolUse", sid(1), tool_name="Bash", tool_use_id="toolu_2",
             tool_input={"command": command})
    assert (r.code, r.out) == (0, ""), (command, r.out)  # the holder's own shell writes it
    assert (trio / "src" / "parser.py").read_text() == "x = 1\n"  # nothing ran


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_shell_command_that_only_reads_a_reserved_file_passes(nx, hook, trio, client):
    assert nx("reserve", "src/parser.py", env=A).code == 0
    n = 3 if client == "claude" else 2
    for command in SHELL_READS:
        r = hook(client, "PreToolUse", sid(n), tool_name="Bash", tool_use_id="toolu_1",
                 tool_input={"command": command})
        assert (r.code, r.out) == (0, ""), (command, r.out, r.err)


@pytest.mark.parametrize("command", ["echo x > src/$NAME", 'cd "$(git rev-parse --show-toplevel)"'
                                     " && echo x > src/parser.py",
                                     "for f in src/*.py; do echo >> \"$f\"; done",
                                     "find src -delete", "ls | xargs sed -i s/1/2/",
                                     "echo 'unclosed > src/parser.py"])
def test_a_shell_write_nexus_cannot_name_under_a_reserved_tree_is_refused(nx, hook, trio,
                                                                           command):
    """Fail closed: a file written that nexus cannot name (a variable set elsewhere, a
    substitution, a loop, find, xargs, quoting it cannot read) counts as anything under the
    deepest directory it knows; refused when another session holds something there, saying
    why and what to do."""
    assert nx("reserve", "src/parser.py", env=A).code == 0
    r = hook("codex", "PreToolUse", sid(2), tool_name="Bash", tool_use_id="call_1",
             tool_input={"command": command})
    text = json.loads(r.out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "src/parser.py is reserved by" in text and "a file nexus cannot name" in text, text
    assert nx("release", "src/parser.py", env=A).code == 0
    assert nx("reserve", "docs/", env=A).code == 0  # nothing held under src/ now
    r = hook("codex", "PreToolUse", sid(2), tool_name="Bash", tool_use_id="call_2",
             tool_input={"command": "echo x > src/$NAME"})
    assert (r.code, r.out) == (0, ""), r.out


@pytest.mark.sqlite_only  # no store: how a command is read
@pytest.mark.parametrize("command,written", [
    ("echo a > out.txt 2>/dev/null >&2 2>&1", ["W/out.txt", "/dev/null"]),
    ("echo '> quoted.txt' # > comment.txt", []),
    ("D=src; echo x > \"$D\"/a.py; echo y > '$D'/b.py", ["W/src/a.py", "W/$D/b.py"]),
    ("D=src echo x > $D/a.py", ["W/*"]),  # the assignment is the command's, not the shell's
    ("(cd src; echo x > a.py); echo y > b.py", ["W/src/a.py", "W/b.py"]),
    ("cd src | cat; echo y > b.py", ["W/b.py"]),  # a pipeline's cd is its subshell's
    ("cd missing && echo y > b.py", ["W/b.py", "W/missing/b.py"]),  # may fail, may be made
    ("pushd src; popd; echo y > b.py", ["W/b.py"]),
    ("cd ~ && echo > x", ["~/x"]),
    ("tee -a one two < /dev/null", ["W/one", "W/two"]),
    ("sed -e s/a/b/ -i src/parser.py; sed -n p src/lexer.py", ["W/src/parser.py"]),
    ("cp -t dest a b; mv a b", ["W/dest/a", "W/dest/b", "W/a", "W/b"]),
    ("rm -r src", ["W/src/*"]),
    ("cat <(echo x > w.txt) >(tee t.txt)", ["W/w.txt", "W/t.txt"]),
    ("echo `echo > bq.txt`", ["W/bq.txt"]),
    ("cat <<EOF > h.txt\n$(echo > inside.txt)\nEOF\necho > after.txt", ["W/h.txt", "W/after.txt"]),
    ("xargs -I{} cp {} dest/", ["W/dest/*"]),
    ("echo x > \"$(mktemp)\"", ["W/*"]),
    ("ls; find . -name '*.pyc' -delete", ["W/*"]),
    ("eval \"echo x > ev.txt\"", ["W/ev.txt"]),
    ("cd src && cat <<'EOF' | apply_patch\n*** Begin Patch\n*** Update File: parser.py\n@@\n"
     "-a\n+b\n*** End Patch\nEOF", ["W/src/parser.py"]),
    ("printf '*** Begin Patch\\n*** Delete File: a.py\\n*** End Patch\\n' | applypatch",
     ["W/a.py"]),
    ("curl -s https://example.com/p.diff | apply_patch", ["W/*"]),
    ("sh -c 'cd src && vim -es -c wq parser.py'", ["W/src/parser.py"]),
    (["bash", "-lc", "cd src && echo x > a.py"], ["W/src/a.py"]),
    ("python3 -c 'open(\"x.py\", \"w\")'; make; git checkout -- .", []),  # programs: unseen
])
def test_how_a_shell_command_is_read_for_the_files_it_writes(tmp_path, command, written):
    """The reader of shell commands (shellwrites.py), without hooks: which files a command
    writes (`W/...`: under the directory it starts in; `.../*`: anything under that directory,
    a file nexus cannot name)."""
    from nexus_cli.reservations import shellwrites

    work = tmp_path / "w"
    (work / "src").mkdir(parents=True)
    (work / "dest").mkdir()
    got = [p.replace(str(work), "W").replace(os.path.expanduser("~"), "~") + ("/*" if tree
                                                                               else "")
           for p, tree in shellwrites.writes(command, str(work))]
    assert got == written


def test_a_hook_table_without_the_shell_matcher_is_outdated():
    """An install from before Bash joined the edit matcher misses shell writes: doctor reports
    it outdated (reinstall), for both clients."""
    for client in ("claude", "codex"):
        table = hookdefs.hooks(client, {"{nexus}": "nexus", "{news}": "news",
                                        "{reserved}": "reserved"})
        assert not hookdefs.outdated({"hooks": table}, client)
        for group in table["PreToolUse"]:
            group["matcher"] = group["matcher"].replace("|Bash", "")
        assert hookdefs.outdated({"hooks": table}, client)


def test_a_shared_reservation_refuses_no_edit(nx, hook, trio):
    nx("reserve", "src/parser.py", "--shared", env=A)
    assert edit(hook, B, str(trio / "src" / "parser.py")) is None


@pytest.mark.parametrize("held,asked", [("shared", "shared"), ("shared", "exclusive"),
                                        ("exclusive", "shared"), ("exclusive", "exclusive")])
def test_shared_and_exclusive_matrix(nx, trio, held, asked):
    flag = ["--shared"] if held == "shared" else []
    assert nx("reserve", "src/parser.py", *flag, env=A).code == 0
    again = ["--shared"] if asked == "shared" else []
    r = nx("reserve", "src/parser.py", *again, "--json", env=B)
    if held == asked == "shared":
        assert r.code == 0, r.err
    else:
        assert r.code == 4
        err = r.json["error"]
        assert err["code"] == "reservation_conflict"
        holder = err["details"]["conflicts"][0]["reservation"]["holder"]
        assert holder["id"] == f"claude:{sid(1)}" and name_of(nx, A)[0] in err["reason"]
    # a session never conflicts with itself: it renews, upgrades or downgrades its own
    mine = nx("reserve", "src/parser.py", *again, "--json", env=A)
    assert mine.code == 0, mine.err


def test_a_reserve_takes_all_its_paths_or_none(nx, trio):
    nx("reserve", "src/parser.py", env=A)
    r = nx("reserve", "docs/", "src/parser.py", env=B)
    assert r.code == 4 and "nothing was reserved" in r.err
    assert nx("reservations", "--mine", "--json", env=B).json["items"] == []


def test_a_reserve_that_upgrades_past_anothers_shared_hold_is_refused(nx, trio):
    nx("reserve", "src/parser.py", "--shared", env=A)
    nx("reserve", "src/parser.py", "--shared", env=B)
    r = nx("reserve", "src/parser.py", "--json", env=A)
    assert r.code == 4 and r.json["error"]["details"]["conflicts"][0]["reservation"]["holder"][
        "id"] == f"codex:{sid(2)}"


# -- globs and normalisation ---------------------------------------------------------------------


def test_globs_and_directories(nx, hook, trio):
    assert nx("reserve", "src/**/test_*.py", "docs", env=A).code == 0
    held = {i["pattern"] for i in nx("reservations", "--json", env=B).json["items"]}
    assert held == {"src/**/test_*.py", "docs/**"}
    for path in ("src/test_a.py", "src/x/y/test_b.py", "docs/guide/intro.md"):
        assert reason(edit(hook, B, str(trio / path)))
    for path in ("src/x/a.py", "test_top.py", "docs"):
        assert edit(hook, B, str(trio / path)) is None
    assert nx("reserve", "src/*/test_q.py", env=B).code == 4  # overlaps src/**/test_*.py
    assert nx("reserve", "src/*.md", "docs2/", env=B).code == 0  # overlaps nothing held


def test_a_directory_finds_what_is_held_below_it_whatever_the_databases_collation(nx, trio):
    """`src/` against `src/zebra/x.py`: found by byte order, which the test cluster's collation
    (punctuation ignored first, as en_US.UTF-8 on many a server) does not follow."""
    assert nx("reserve", "src/zebra/x.py", "src/Ab.py", env=A).code == 0
    r = nx("reserve", "src/", "--json", env=B)
    assert r.code == 4
    held = {c["reservation"]["pattern"] for c in r.json["error"]["details"]["conflicts"]}
    assert held == {"src/zebra/x.py", "src/Ab.py"}


def test_dot_dotdot_and_symlinks_name_one_file(nx, hook, trio):
    (trio / "link.py").symlink_to(trio / "src" / "parser.py")
    r = nx("reserve", "./src/../link.py", "--json", env=A)
    assert r.json["reserved"][0]["pattern"] == "src/parser.py"
    assert nx("reserve", "src/./parser.py", "--json", env=A).json["renewed"]  # the same one
    assert reason(edit(hook, B, str(trio / "link.py")))
    assert reason(edit(hook, B, str(trio / "src" / ".." / "src" / "parser.py")))
    assert nx("release", "link.py", "--json", env=A).json["released"][0]["pattern"] == \
        "src/parser.py"


def test_case_does_not_count_where_the_file_system_ignores_it(nx, hook, trio, monkeypatch):
    monkeypatch.setattr(patterns, "case_insensitive", lambda path: True)
    nx("reserve", "SRC/Parser.py", env=A)
    assert reason(edit(hook, B, str(trio / "src" / "PARSER.PY")))
    assert nx("reserve", "src/parser.py", env=B).code == 4


def test_a_glob_too_complex_to_compare_is_refused_and_the_lock_is_not_held_long(nx, trio,
                                                                                 monkeypatch):
    """Two long globs made a reserve walk 7 million product states under the store's write
    lock (another session's send failed store_busy): globs are bounded, and the overlap
    decisions of one reserve share a budget; past it the reserve is refused, nothing written."""
    r = nx("reserve", "src/" + "*?" * 10 + "*Z", "--shared", "--json", env=A)
    assert r.code == 2 and r.json["error"]["code"] == "invalid_argument"
    assert "wildcards" in r.json["error"]["reason"]
    assert nx("reserve", "src/*a*b*.py", env=A).code == 0
    monkeypatch.setattr(patterns, "OVERLAP_STEPS", 20)
    r = nx("reserve", "src/*b*a*.py", "docs/x.md", "--json", env=B)
    assert r.code == 2 and r.json["error"]["code"] == "invalid_argument", r.out
    assert "too complex" in r.json["error"]["reason"] and "nothing was reserved" in r.err + r.out
    monkeypatch.setattr(patterns, "OVERLAP_STEPS", 100_000)
    assert nx("reserve", "src/*b*a*.py", env=B).code == 4  # `src/aba.py` is in both
    assert [i["pattern"] for i in nx("reservations", "--json", env=A).json["items"]] == [
        "src/*a*b*.py"]


def test_a_pathological_glob_in_the_store_does_not_slow_anyones_edit(nx, hook, trio, home):
    """A shared `src/*?*?...*Z` (taken before globs were bounded) made every other session's
    edit hook backtrack for 17 s, past the client's hook timeout: matching is linear now. The
    outer limit is generous (the old matcher took minutes on this one)."""
    from nexus_cli.core.store.db import Store
    from nexus_cli.reservations import leases

    nx("reserve", "docs/", env=A)  # A is known and the marker is up
    glob = "src/" + "*?" * 14 + "*Z"
    spec = patterns.Spec(str(trio), glob, str(trio / "src"), False, False)
    with Store(str(home)).write() as conn:
        leases.take(conn, f"claude:{sid(1)}", spec, False, "", time.time(), 600)
    started = time.monotonic()
    assert edit(hook, B, str(trio / "src" / ("x" * 80 + ".py"))) is None
    r = nx("guard", str(trio / "src" / ("x" * 80 + ".py")), env=B)
    assert r.code == 0, r.err
    assert time.monotonic() - started < 60


def test_a_reservation_outside_the_project_needs_all_workspaces_and_is_listed_where_it_covers(
        nx, hook, trio, tmp_path):
    """`reserve /` blocked edits in every project while their `reservations` showed nothing: a
    path outside the caller's project is refused (path_outside_roots, nothing reserved) unless
    --all-workspaces; one taken that way is listed in each project it covers."""
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    D = claude_env(sid(4))
    hook("claude", "SessionStart", sid(4), source="startup", cwd=str(other))
    for bad in ("/", "..", str(other / "x.py"), "src/../../other/"):
        r = nx("reserve", bad, "--json", env=A)
        assert r.code == 5 and r.json["error"]["code"] == "path_outside_roots", (bad, r.out)
        assert "--all-workspaces" in r.err + r.out
    assert nx("reservations", "--all-workspaces", "--json", env=A).json["total"] == 0
    assert edit(hook, D, str(other / "anything.py")) is None
    r = nx("reserve", "/", "--all-workspaces", "--reason", "mine now", env=A)
    assert r.code == 0, r.err
    for who in (D, B):  # the other project's session, and one in A's own project
        items = nx("reservations", "--json", env=who).json["items"]
        assert [(i["root"], i["pattern"]) for i in items] == [("/", "**")], items
    assert "reserved by" in reason(edit(hook, D, str(other / "anything.py")))
    assert nx("reserve", "src/parser.py", env=A).code == 0  # inside: no flag needed


def test_paths_and_reasons_with_line_breaks_are_escaped_not_cut(nx, hook, trio):
    """Two files that differ after a newline looked the same in denials and listings (the
    name was cut at its first line): paths and reasons are escaped whole."""
    assert nx("reserve", "src/a\nb.py", "--reason", "first\nsecond", env=A).code == 0
    assert nx("reserve", "src/a", env=A).code == 0
    text = reason(edit(hook, B, str(trio / "src" / "a\nb.py")))
    assert "src/a\\nb.py is reserved by" in text and '"first\\nsecond"' in text
    listing = nx("reservations", env=B).out
    assert "src/a\\nb.py" in listing and "first\\nsecond" in listing
    assert "src/a " in listing or "src/a\n" in listing  # the other one, on its own


def test_releasing_what_another_session_holds_says_who_holds_it(nx, trio):
    nx("reserve", "src/parser.py", env=A)
    name, handle = name_of(nx, A)
    r = nx("release", "src/parser.py", "--json", env=B)
    assert r.code == 0 and r.json["not_held"] == ["src/parser.py"]
    [other] = r.json["held_by_others"]
    assert other["reservation"]["holder"]["handle"] == handle
    assert f"release --as {handle} --all" in other["message"]
    text = nx("release", "src/parser.py", env=B).out
    assert f"held by {name} ({handle})" in text and "not by you" in text
    assert nx("release", "docs/none.md", env=B).out.strip() == "not held: docs/none.md"


def test_the_person_ends_an_agents_stale_reservation_as_the_docs_say(nx, trio, monkeypatch):
    """docs/reservations.md: `nexus release --as HANDLE --all` from a terminal ends an agent's
    reservations."""
    from nexus_cli.core import caller

    nx("reserve", "src/parser.py", env=A)
    _, handle = name_of(nx, A)
    assert nx("release", "--as", handle, "--all").code == 5  # not at a terminal: refused
    monkeypatch.setattr(caller, "at_terminal", lambda: True)
    r = nx("release", "--as", handle, "--all", "--json")
    assert r.code == 0 and [x["pattern"] for x in r.json["released"]] == ["src/parser.py"], r.err
    assert nx("reservations", "--json", env=B).json["total"] == 0


def test_the_lean_candidate_filter_agrees_with_the_full_match(trio, home, monkeypatch):
    """The edit check reads candidates lean and rules most out by their literal head before
    parsing them (1,000 globs in one directory): it finds exactly what matching every row finds,
    for one file or several, folded or not."""
    from nexus_cli.core.store.db import Store
    from nexus_cli.reservations import leases

    raws = ["src/m1_*.py", "src/*.md", "src/**/x.py", "**/y.py", "src/parser.py", "docs/",
            "src/[!m]*", "src/m?_[ab].py", "SRC/Up*.py", "src/[*]lit.py"]
    files = ["src/m1_a.py", "src/m2_a.py", "src/x.py", "src/a/x.py", "y.py", "src/q/y.py",
             "src/parser.py", "docs/a/b.md", "src/zzz.py", "src/m3_b.py", "src/UPPER.py",
             "src/*lit.py", "README.md"]
    now = time.time()
    for folded in (False, True):
        monkeypatch.setattr(patterns, "case_insensitive", lambda path, f=folded: f)
        store = Store(str(home))
        with store.write() as conn:
            conn.execute("DELETE FROM reservations")
            for raw in raws:
                spec = patterns.normalise(raw, str(trio), str(trio))
                leases.take(conn, f"claude:{sid(1)}", spec, True, "", now, 600)
        located = [patterns.locate(f, str(trio)) for f in files]
        with store.read() as conn:
            for real, above, _ in located:
                full = {r["id"] for r in leases.covering(leases.under(conn, above, now), real)}
                assert {r["id"] for r in leases.under(conn, above, now, [real])} == full, real
            every = list(dict.fromkeys(a for _, above, _ in located for a in above))
            reals = [real for real, _, _ in located]
            lean = {r["id"] for r in leases.under(conn, every, now, reals)}
            assert lean == {r["id"] for r in leases.under(conn, every, now)
                            if any(leases.covering([r], real) for real in reals)}
            assert lean


def test_bad_paths_are_refused_with_nothing_written(nx, trio):
    for bad in ("src/*/../x", "a\x00b", "  "):
        r = nx("reserve", bad, "--json", env=A)
        assert r.code == 2 and r.json["error"]["code"] == "invalid_argument", bad
    assert nx("release", env=A).code == 2
    assert nx("release", "x", "--all", env=A).code == 2
    assert nx("reservations", "--json", env=A).json["total"] == 0


# -- lifecycle -----------------------------------------------------------------------------------


def expire_all(home: Path) -> None:
    conn = raw_db(home)
    conn.execute("UPDATE reservations SET expires_at = ?", (time.time() - 1,))
    conn.commit()
    conn.close()


@pytest.mark.sqlite_only  # team mode keeps the marker raised (test_team.py)
def test_expired_reservations_refuse_nothing_and_maintenance_ends_them(nx, hook, trio, home):
    nx("reserve", "src/parser.py", env=A)
    expire_all(home)
    assert edit(hook, B, str(trio / "src" / "parser.py")) is None
    assert nx("reservations", "--json", env=B).json["total"] == 0
    assert nx("reserve", "src/parser.py", env=B).code == 0  # free again
    expire_all(home)
    assert nx("maintenance", "--json").json["reservations_ended"] == 2
    assert not marker.raised(str(home))


def test_session_end_releases_and_a_clear_hands_them_to_the_successor(nx, hook, trio, fake):
    nx("reserve", "src/parser.py", env=A)
    hook("claude", "SessionEnd", sid(1), reason="prompt_input_exit")
    assert nx("reservations", "--json", env=B).json["total"] == 0
    proc = fake.spawn("claude")
    hook("claude", "SessionStart", sid(5), source="startup", client_pid=proc)
    nx("reserve", "src/parser.py", env=claude_env(sid(5)))
    hook("claude", "SessionEnd", sid(5), reason="clear", client_pid=proc)
    items = nx("reservations", "--json", env=B).json["items"]
    assert [i["holder"]["id"] for i in items] == [f"claude:{sid(5)}"]  # kept for the successor
    hook("claude", "SessionStart", sid(6), source="clear", client_pid=proc)
    items = nx("reservations", "--json", env=B).json["items"]
    assert [i["holder"]["id"] for i in items] == [f"claude:{sid(6)}"]


def test_gone_sessions_lose_their_reservations_in_maintenance(nx, hook, trio, fake, home):
    nx("reserve", "src/parser.py", env=A)
    fake.kill(fake.by_session[f"claude:{sid(1)}"])  # the client died without a SessionEnd
    conn = raw_db(home)
    conn.execute("UPDATE sessions SET last_active = 0, status = 'idle' WHERE id = ?",
                 (f"claude:{sid(1)}",))
    conn.commit()
    conn.close()
    assert nx("maintenance", "--json").json["reservations_ended"] == 1


def test_status_and_the_greeting_show_reservations(nx, hook, trio):
    nx("reserve", "src/parser.py", "--reason", "refactor parser", env=A)
    st = nx("status", "claude@work", "--json", env=B).json
    assert [r["pattern"] for r in st["reservations"]] == ["src/parser.py"]
    assert "src/parser.py (exclusive)" in nx("status", f"claude:{sid(1)}", env=B).out
    greeting = hook("codex", "SessionStart", sid(7), source="startup").out
    text = json.loads(greeting)["hookSpecificOutput"]["additionalContext"]
    assert "Files reserved in this project: src/parser.py (exclusive" in text
    assert '"refactor parser"' in text
    board = nx("board", "--once", "--width", "200", env=B).out
    assert "1 file reservation (`nexus reservations`):" in board, board
    assert re.search(r"src/parser\.py  exclusive  claude@work  until .*refactor parser", board)
    nx("reserve", "src/a\x1b[2J.py", "--shared", env=C)
    board = nx("board", "--once", "--width", "200", env=B).out
    assert "2 file reservations" in board and "shared" in board and "\x1b" not in board


# -- waiting -------------------------------------------------------------------------------------


def reserve_in_thread(home: Path, env: dict, args: dict) -> tuple[threading.Thread, dict]:
    box: dict = {}

    def run() -> None:
        try:
            box["result"] = call(home, "reserve", args, env=env)
        except Exception as exc:
            box["error"] = exc
        box["at"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def wait_for_channel(home: Path, timeout: float = 60) -> None:
    folder = Path(paths.wake_dir(str(home)))
    until(lambda: folder.exists() and any(p.name.startswith("nexus_reservations.")
                                          for p in folder.iterdir()),
          timeout, "the waiter to register its channel", every=0.01)


@pytest.mark.sqlite_only  # it looks for the FIFO channel; team mode: test_team_machines
def test_a_waiting_reserve_is_woken_by_the_release(nx, trio, home, monkeypatch):
    monkeypatch.setattr(reserve, "SAFETY_POLL", 600.0)  # only a poke can end this wait in time
    nx("reserve", "src/parser.py", env=A)
    thread, box = reserve_in_thread(home, B, {"paths": ["src/parser.py"], "wait": 300})
    wait_for_channel(home)
    released = time.monotonic()
    assert nx("release", "--all", env=A).code == 0
    thread.join(120)
    assert not thread.is_alive() and "error" not in box, box
    assert box["result"]["reserved"][0]["holder"]["id"] == f"codex:{sid(2)}"
    assert box["at"] - released < 60  # woken, not timed out (the wait was 300 s)


def test_a_waiting_reserve_gets_it_when_the_holders_ttl_ends(nx, trio, home, monkeypatch):
    monkeypatch.setattr(reserve, "SAFETY_POLL", 600.0)
    nx("reserve", "src/parser.py", "--ttl", "1", env=A)
    thread, box = reserve_in_thread(home, B, {"paths": ["src/parser.py"], "wait": 300})
    thread.join(120)
    assert not thread.is_alive() and "error" not in box, box
    assert box["result"]["waited_seconds"] < 60


def test_a_wait_that_ends_first_is_a_timeout_listing_the_holders(nx, trio):
    nx("reserve", "src/parser.py", env=A)
    r = nx("reserve", "src/parser.py", "--wait", "0.2", "--json", env=B)
    assert r.code == 7 and r.json["error"]["code"] == "timeout"
    assert r.json["error"]["details"]["conflicts"][0]["reservation"]["pattern"] == "src/parser.py"


# -- the marker: no reservation, no Python -------------------------------------------------------


@pytest.mark.sqlite_only  # team mode keeps the marker raised (test_team.py)
def test_the_marker_follows_the_reservations(nx, hook, trio, home):
    assert edit(hook, B, str(trio / "src" / "parser.py")) is None
    assert not marker.raised(str(home))
    nx("reserve", "src/parser.py", env=A)
    assert marker.raised(str(home))
    nx("reserve", "docs/", env=B)
    nx("release", "--all", env=A)
    assert marker.raised(str(home))  # B still holds one
    nx("release", "docs/", env=B)
    assert not marker.raised(str(home))


@pytest.mark.sqlite_only  # team mode keeps the marker raised (test_team.py)
def test_a_marker_outliving_its_reservations_is_lowered_by_the_next_edit(nx, hook, trio, home):
    nx("reserve", "src/parser.py", env=A)
    expire_all(home)
    assert marker.raised(str(home))
    assert edit(hook, B, str(trio / "README.md")) is None
    assert not marker.raised(str(home))


def test_the_edit_check_creates_no_store(hook, home, chdir_work):
    assert edit(hook, B, os.path.join(chdir_work, "x.py")) is None
    assert not os.path.exists(paths.db_path(str(home)))


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_installed_edit_guard_starts_python_only_while_something_is_reserved(tmp_path,
                                                                                 client):
    table = hookdefs.hooks(client, {"{nexus}": "echo RAN", "{script}": sys.executable,
                                    "{news}": str(tmp_path / "news"),
                                    "{reserved}": str(tmp_path / "reserved")})
    group = next(g for g in table["PreToolUse"] if "Write" in g["matcher"])
    assert set(group["matcher"].split("|")) == {"Edit", "MultiEdit", "NotebookEdit", "Write",
                                                "apply_patch", "Bash"}
    command = group["hooks"][0]["command"]

    def run() -> str:
        return subprocess.run(["sh", "-c", command], input="{}", capture_output=True,
                              text=True).stdout.strip()

    assert run() == ""
    (tmp_path / "reserved").touch()
    assert run() == f"RAN hook {client}"


def test_the_hook_table_without_the_edit_check_is_outdated():
    for client in ("claude", "codex"):
        table = hookdefs.hooks(client, hookdefs.fills(None))
        assert table["PreToolUse"][0]["matcher"] == "^mcp__nexus__"
        assert not hookdefs.outdated({"hooks": table}, client)
        old = json.loads(json.dumps(table))
        old["PreToolUse"] = old["PreToolUse"][:1]  # the table before file reservations
        assert hookdefs.outdated({"hooks": old}, client)
        again = hookdefs.edited({"hooks": old}, client, True, hookdefs.fills(None))
        assert hookdefs.shapes(again["hooks"]) == hookdefs.shapes(table)
        assert hookdefs.edited({"hooks": table}, client, False, hookdefs.fills(None)) == {}


# -- automatic reservations ----------------------------------------------------------------------


@pytest.mark.sqlite_only  # team mode keeps the marker raised (test_team.py)
def test_auto_reservations_tell_two_editors_of_each_other(nx, hook, trio, home):
    assert nx("config", "set", "autoReserve", "300").code == 0
    assert marker.raised(str(home))  # every edit must reach nexus now
    os.unlink(marker.path(str(home)))
    hook("claude", "SessionStart", sid(1), source="resume")
    assert marker.raised(str(home))  # set by hand in config.toml: the next greeting raises it
    target = str(trio / "src" / "parser.py")
    assert edit(hook, A, target) is None
    mine = nx("reservations", "--mine", "--json", env=A).json["items"]
    assert [(i["pattern"], i["auto"], i["exclusive"]) for i in mine] == \
        [("src/parser.py", True, False)]
    assert edit(hook, B, target) is None  # shared: B edits too, and both are told
    a_name, a_handle = name_of(nx, A)
    b_name, b_handle = name_of(nx, B)
    told_b = [m["text"] for m in nx("read", "--json", env=B).json["messages"]]
    told_a = [m["text"] for m in nx("read", "--json", env=A).json["messages"]]
    assert any(f"being edited by {a_name} ({a_handle})" in t for t in told_b), told_b
    assert any(f"{b_name} ({b_handle}) started editing src/parser.py" in t for t in told_a), told_a
    assert edit(hook, B, target) is None  # once per pair and file
    assert nx("read", "--json", env=A).json["count"] == 0
    r = nx("reserve", "src/parser.py", "--json", env=A)  # making it A's alone needs B to let go
    assert r.code == 4 and b_name in r.json["error"]["reason"]
    hook("codex", "SessionEnd", sid(2), reason="other")
    assert nx("reserve", "src/parser.py", env=A).code == 0  # upgraded to an explicit one
    assert reason(edit(hook, C, target))
    nx("config", "set", "autoReserve")
    nx("release", "--all", env=A)
    nx("release", "--all", env=C)
    assert not marker.raised(str(home))


# -- 8 processes, one winner ---------------------------------------------------------------------


def _contend(home: str, n: int, start: mp.Event, out: mp.Queue) -> None:
    load()
    start.wait()
    try:
        invoke(TOOLS["reserve"], ctx_for(home, claude_env(sid(n))), {"paths": ["src/parser.py"]})
        out.put((n, "won"))
    except Exception as exc:
        out.put((n, getattr(exc, "code", repr(exc))))


@pytest.mark.slow
def test_eight_processes_reserving_one_path_make_exactly_one_winner(hook, home, trio):
    for n in range(10, 18):
        hook("claude", "SessionStart", sid(n), source="startup")
    fork = mp.get_context("fork")
    start, out = fork.Event(), fork.Queue()
    procs = [fork.Process(target=_contend, args=(str(home), n, start, out))
             for n in range(10, 18)]
    for p in procs:
        p.start()
    start.set()
    results = [out.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(180)
    assert sorted(r for _, r in results) == ["reservation_conflict"] * 7 + ["won"]
    winner = next(n for n, r in results if r == "won")
    conn = raw_db(home)
    assert [tuple(r) for r in conn.execute("SELECT session_id FROM reservations")] == \
        [(f"claude:{sid(winner)}",)]


# -- output --------------------------------------------------------------------------------------


def test_golden_human_output(nx, hook, trio, home, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    shown = []

    def run(*args: str, env: dict | None = None, code: int = 0) -> None:
        r = nx(*args, env=env)
        assert r.code == code, (args, r.err)
        who = {id(A): "claude", id(B): "codex"}.get(id(env), "person")
        shown.append(f"$ nexus {' '.join(args)}    # as {who}, exit {r.code}\n{r.out}{r.err}")

    run("reserve", "src/parser.py", "--reason", "refactor parser", env=A)
    run("reserve", "docs/", "src/**/test_*.py", "--shared", env=A)
    run("reserve", "src/parser.py", env=A)
    run("reserve", "src/parser.py", env=B, code=4)
    run("reservations", env=B)
    run("guard", "src/parser.py", "README.md", env=B, code=4)
    run("guard", "README.md", env=A)
    run("release", "docs", "nothing.py", env=A)
    run("release", "--all", env=A)
    run("reservations", env=B)
    from nexus_cli.core import shellcmd

    text = "\n".join(shown).replace(str(home), "<home>").replace(str(trio), "<work>")
    text = text.replace(shellcmd.script(), "nexus")
    text = re.sub(r"until \d\d:\d\d", "until <hh:mm>", text)
    text = re.sub(r"\d\d:\d\d:\d\d[+-]\d\d:\d\d", "<time>", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT", "", text)
    text = re.sub(r" {2,}", "  ", text)
    if os.environ.get("NEXUS_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "human output changed: review, then NEXUS_UPDATE_GOLDEN=1"


def test_the_list_fits_80_columns(nx, trio, monkeypatch):
    nx("reserve", "src/very/long/directory/name/that/goes/on/**/test_*.py", "--reason",
       "rewriting the webhook verification so that both signature versions pass", env=A)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", nx("reservations", env=B).out)
    assert out and all(len(line) <= 80 for line in out.splitlines()), out


# -- over MCP, and the handoff tool ------------------------------------------------------------


def test_the_reservations_group_over_mcp(home, hook, nx, trio):
    nx("reserve", "src/parser.py", "--reason", "refactor parser", env=A)

    async def go():
        async with session(home, f"codex:{sid(2)}", args=("--tools", "reservations")) as s:
            meta = {"sessionId": sid(2), "threadId": sid(2)}
            names = {t.name for t in (await s.list_tools()).tools}
            refused = await s.call_tool("reserve", {"paths": ["src/parser.py"]}, meta=meta)
            mine = await s.call_tool("reserve", {"paths": ["docs/"], "shared": True}, meta=meta)
            checked = await s.call_tool("guard", {"paths": [str(trio / "src" / "parser.py")]},
                                        meta=meta)
            listed = await s.call_tool("reservations", {}, meta=meta)
            gone = await s.call_tool("release", {"all": True}, meta=meta)
            return names, refused, mine, checked, listed, gone

    names, refused, mine, checked, listed, gone = arun(go)
    assert names == {"reserve", "release", "reservations", "guard"}
    assert refused.is_error
    assert refused.meta["nexus/error"]["code"] == "reservation_conflict"
    assert not mine.is_error and mine.structured_content["reserved"][0]["pattern"] == "docs/**"
    assert checked.structured_content["ok"] is False
    assert "refactor parser" in checked.structured_content["conflicts"][0]["message"]
    assert listed.structured_content["total"] == 2
    assert [r["pattern"] for r in gone.structured_content["released"]] == ["docs/**"]


def test_handoff_now_moves_them_to_the_session_named(nx, hook, trio):
    nx("reserve", "src/parser.py", "docs/", env=A)
    nx("reserve", "docs/", "--shared", "--ttl", "9999", env=B)  # refused: A holds it exclusively
    assert nx("handoff", "now", "--to", f"codex:{sid(2)}", env=A).code == 0
    assert nx("handoff", "accept", "--from-session", f"claude:{sid(1)}", env=B).code == 0
    held = nx("reservations", "--mine", "--json", env=B).json["items"]
    assert sorted(r["pattern"] for r in held) == ["docs/**", "src/parser.py"]
    assert reason(edit(hook, C, str(trio / "src" / "parser.py")))


@pytest.mark.parametrize("event,extra", [
    ("PostToolUse", {"tool_name": "Write"}),
    ("PreToolUse", {"tool_name": "mcp__nexus__send", "tool_use_id": "toolu_1"}),
    ("UserPromptSubmit", {"prompt": "hi"}),
])
def test_only_the_hooks_that_need_reservations_import_them(tmp_path, event, extra):
    """Every hook pays for what it imports: the reservation modules load for a file edit, a
    session's start and end, a handoff and a maintenance round only."""
    from test_architecture import PACKAGE, PROBE

    stdin = {"hook_event_name": event, "session_id": "00000001-0000-4000-8000-000000000001",
             "cwd": "/", **extra}
    env = {"NEXUS_HOME": str(tmp_path / "store"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(PACKAGE.parent), "HEAVY": json.dumps(["nexus_cli.reservations"])}
    done = subprocess.run([sys.executable, "-c", PROBE,
                           json.dumps(["hook", "claude", json.dumps(stdin)])],
                          env=env, capture_output=True, text=True, timeout=60)
    line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED "))
    assert json.loads(line.removeprefix("LOADED ")) == [], done.stderr


@pytest.mark.parametrize("client,file", [("claude", ".claude/settings.json"),
                                         ("codex", ".codex/hooks.json")])
def test_doctor_calls_the_table_before_reservations_outdated(nx, tmp_path, monkeypatch, client,
                                                             file):
    home = tmp_path / "userhome"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert nx("install", client).code == 0
    check = f"{client} hooks"

    def status() -> str:
        return {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}[check][
            "status"]

    assert status() == "ok"
    config = home / file
    data = json.loads(config.read_text())
    data["hooks"]["PreToolUse"] = [g for g in data["hooks"]["PreToolUse"]
                                   if g.get("matcher") == "^mcp__nexus__"]
    config.write_text(json.dumps(data))
    assert status() == "warn"
    assert nx("install", client).code == 0  # and installing again brings it up to date
    assert status() == "ok"


def test_odd_tool_input_is_let_through(nx, hook, trio):
    nx("reserve", "src/parser.py", env=A)
    for given in ({"file_path": 5}, {"file_path": "a\x00b"}, {}, {"file_path": " "}):
        r = hook("codex", "PreToolUse", sid(2), tool_name="Write", tool_input=given)
        assert (r.code, r.out) == (0, ""), (given, r.err)
    r = hook("codex", "PreToolUse", sid(2), tool_name="apply_patch", tool_input="not an object")
    assert (r.code, r.out) == (0, "")


def test_an_edit_check_loads_no_event_handlers(nx, trio, home):
    """A file edit's hook runs the reservation check alone: the event table (and the delivery,
    task and maintenance code behind it) is not imported."""
    from test_architecture import PACKAGE, PROBE

    nx("reserve", "docs/", env=A)
    stdin = {"hook_event_name": "PreToolUse", "session_id": sid(2), "cwd": str(trio),
             "tool_name": "Write", "tool_input": {"file_path": str(trio / "docs" / "a.md")}}
    env = {"NEXUS_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(PACKAGE.parent),
           **store_env(),
           "HEAVY": json.dumps(["nexus_cli.hook.handlers", "nexus_cli.delivery",
                                "nexus_cli.tasks", "nexus_cli.maintenance"])}
    done = subprocess.run([sys.executable, "-c", PROBE,
                           json.dumps(["hook", "codex", json.dumps(stdin)])],
                          env=env, capture_output=True, text=True, timeout=60)
    line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED "))
    assert json.loads(line.removeprefix("LOADED ")) == [], done.stderr
    assert '"permissionDecision": "deny"' in done.stdout  # and it did refuse the edit


def test_an_edit_reads_settings_only_when_they_mention_auto_reservations(nx, trio, home):
    """Parsing config.toml costs an edit's hook milliseconds (tomllib): it is read only when the
    file names autoReserve."""
    from test_architecture import PACKAGE, PROBE

    nx("reserve", "docs/", env=A)
    nx("config", "set", "maxAutoTurns", "5")
    stdin = {"hook_event_name": "PreToolUse", "session_id": sid(2), "cwd": str(trio),
             "tool_name": "apply_patch", "tool_input": {
                 "command": "*** Begin Patch\n*** Add File: new.py\n+x\n*** End Patch\n"}}

    def loaded() -> list[str]:
        env = {"NEXUS_HOME": str(home), "PATH": "/usr/bin:/bin", **store_env(),
               "PYTHONPATH": str(PACKAGE.parent), "HEAVY": json.dumps(["tomllib"])}
        done = subprocess.run([sys.executable, "-c", PROBE,
                               json.dumps(["hook", "codex", json.dumps(stdin)])],
                              env=env, capture_output=True, text=True, timeout=60)
        line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED "))
        return json.loads(line.removeprefix("LOADED "))

    assert loaded() == []
    nx("config", "set", "autoReserve", "0")
    assert "tomllib" in loaded()


def test_the_greeting_names_a_few_whatever_the_store_holds(nx, hook, trio):
    nx("reserve", *(f"src/m{i}.py" for i in range(12)), env=A)
    nx("reserve", "docs/", env=B)
    text = json.loads(hook("codex", "SessionStart", sid(2), source="resume").out)[
        "hookSpecificOutput"]["additionalContext"]
    assert "src/m0.py (exclusive" in text and "and 7 more" in text
    assert "You hold: docs/**;" in text


# -- one project in two clones (team mode: the same scope on another machine) --------------------

REMOTE = "git@github.com:acme/widget.git"


def _clone(path: Path, remote: str = REMOTE) -> Path:
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {remote}\n')
    (path / "src" / "deep").mkdir(parents=True)
    (path / "src" / "parser.py").write_text("x = 1\n")
    (path / "docs").mkdir()
    return Path(os.path.realpath(path))


@pytest.fixture
def clones(hook, tmp_path):
    """Two clones of one project at different paths, as on two machines sharing the team
    database (simulated in one store): A's session works in the first, B's in the second."""
    a = _clone(tmp_path / "laptop" / "home" / "a" / "widget")
    b = _clone(tmp_path / "server" / "srv" / "b" / "proj")
    hook("claude", "SessionStart", sid(1), source="startup", cwd=str(a))
    hook("codex", "SessionStart", sid(2), source="startup", cwd=str(b))
    return a, b


def edit_in(hook, n: int, client: str, path: Path, cwd: Path) -> str | None:
    """A file edit by session n in `cwd`: the denial's reason, None when allowed."""
    r = hook(client, "PreToolUse", sid(n), tool_name="Write", tool_use_id=f"t{time.time_ns()}",
             tool_input={"file_path": str(path)}, cwd=str(cwd))
    assert r.code == 0, r.err
    return json.loads(r.out)["hookSpecificOutput"]["permissionDecisionReason"] if r.out else None


def test_a_reservation_covers_the_same_file_in_another_clone_of_the_project_in_team_mode(
        nx, hook, clones, backend, monkeypatch):
    a, b = clones
    monkeypatch.chdir(a)
    assert nx("reserve", "src/parser.py", "--reason", "parser", env=A).code == 0
    team = backend == "pg"
    refused = edit_in(hook, 2, "codex", b / "src" / "parser.py", b)
    if team:  # the same file of the same project, at another path: refused, naming the holder
        name, handle = name_of(nx, A)
        assert refused is not None and refused.startswith("[nexus] src/parser.py is reserved by")
        assert name in refused and handle in refused and '"parser"' in refused
    else:  # locally a project is its root path: another checkout is another project, as ever
        assert refused is None
    assert edit_in(hook, 2, "codex", b / "docs" / "x.md", b) is None  # another file: free
    assert edit_in(hook, 1, "claude", a / "src" / "parser.py", a) is None  # its own holder
    monkeypatch.chdir(b)
    r = nx("reserve", "src/parser.py", "--json", env=B)
    if team:
        assert r.code != 0 and r.json["error"]["code"] == "reservation_conflict", r.err
    else:
        assert r.code == 0, r.err
    listed = nx("reservations", "--json", env=B).json["items"]
    theirs = [x for x in listed if x["holder"]["handle"] == name_of(nx, A)[1]]
    assert bool(theirs) == team
    if team:
        assert theirs[0]["root"] == str(a) and theirs[0]["pattern"] == "src/parser.py"
        assert theirs[0]["machine"]
    guard = nx("guard", "src/parser.py", "--json", env=B).json
    assert guard["ok"] is not team
    # a session starting in the other clone is greeted with it
    out = hook("claude", "SessionStart", sid(7), source="startup", cwd=str(b)).out
    greeted = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
    name, handle = name_of(nx, A)
    assert (f"src/parser.py (exclusive, {name} ({handle}) until" in greeted) == team, greeted


def test_globs_and_directories_cover_other_clones_and_another_project_is_not_covered(
        nx, hook, clones, backend, monkeypatch, tmp_path):
    if backend != "pg":
        pytest.skip("clones share a scope only in team mode")
    a, b = clones
    other = _clone(tmp_path / "elsewhere" / "gadget", "git@github.com:acme/gadget.git")
    hook("claude", "SessionStart", sid(3), source="startup", cwd=str(other))
    monkeypatch.chdir(a)
    assert nx("reserve", "src/deep/", "src/*.toml", env=A).code == 0
    assert edit_in(hook, 2, "codex", b / "src" / "deep" / "new" / "x.py", b) is not None
    assert edit_in(hook, 2, "codex", b / "src" / "pyproject.toml", b) is not None
    assert edit_in(hook, 2, "codex", b / "src" / "parser.py", b) is None
    assert edit_in(hook, 3, "claude", other / "src" / "deep" / "x.py", other) is None
    monkeypatch.chdir(b)
    # overlapping from above (src/), below (src/deep/x.py), and two globs; not a free file
    for raw in ("src/", "src/deep/x.py", "src/c*.toml"):
        assert nx("reserve", raw, env=B).code != 0, raw
    assert nx("reserve", "src/parser.py", "--json", env=B).code == 0
    assert nx("reserve", "--shared", "docs/", env=B).code == 0
    # and back: A cannot take what B holds in its clone
    monkeypatch.chdir(a)
    assert nx("reserve", "src/parser.py", env=A).code != 0
    assert nx("reserve", "--shared", "docs/a.md", env=A).code == 0  # shared with shared
    monkeypatch.chdir(other)
    assert nx("reserve", "src/", env=C).code == 0  # another project: nothing in the way
    # a release in one clone wakes the other: A's edit of parser.py passes once B releases
    monkeypatch.chdir(b)
    assert nx("release", "src/parser.py", env=B).code == 0
    assert edit_in(hook, 1, "claude", a / "src" / "parser.py", a) is None


def test_the_holders_machine_is_shown_where_it_is_another(nx, hook, clones, backend,
                                                          monkeypatch, home):
    if backend != "pg":
        pytest.skip("clones share a scope only in team mode")
    a, b = clones
    monkeypatch.chdir(a)
    assert nx("reserve", "src/parser.py", env=A).code == 0
    conn = raw_db(home)
    try:
        conn.execute("UPDATE sessions SET machine = ? WHERE id = ?",
                     ("laptop\x1b[31m/0123456789ab", f"claude:{sid(1)}"))
        conn.commit()
    finally:
        conn.close()
    refused = edit_in(hook, 2, "codex", b / "src" / "parser.py", b)
    assert refused is not None and " on laptop\\x1b[31m/0123456789ab until" in refused, refused
    monkeypatch.chdir(b)
    human = nx("reservations", env=B).out
    assert "on laptop" in human and "\x1b" not in human and str(a) in human
    item = nx("reservations", "--json", env=B).json["items"][0]
    assert item["machine"] == "laptop\x1b[31m/0123456789ab"
    err = nx("reserve", "src/parser.py", env=B).err
    assert "on laptop" in err and "\x1b" not in err


def test_the_migration_gives_old_rows_their_root_as_scope_and_their_place(nx, hook, trio, home):
    """Rows from before the migration that added a reservation's scope and place: its UPDATE
    gives each its root as scope and its anchor relative to the root; such a row still refuses
    an edit of its file."""
    from nexus_cli.core.store import migrations

    script = next(sql for _, _, sql in migrations.MIGRATIONS
                  if "ALTER TABLE reservations ADD COLUMN scope" in sql)
    update = next(s for s in migrations.statements(script) if s.startswith("UPDATE"))
    root = os.path.realpath(trio)
    conn = raw_db(home)
    try:
        for rid, at, pattern, anchor in (
                ("r-file", root, "src/parser.py", f"{root}/src/parser.py"),
                ("r-root", root, "**", root),
                ("r-dir", root, "docs/**", f"{root}/docs"),
                ("r-slash", "/", "etc/x", "/etc/x")):
            conn.execute("INSERT INTO reservations (id, session_id, root, pattern, anchor, exact,"
                         " exclusive, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)",
                         (rid, f"claude:{sid(1)}", at, pattern, anchor, int("*" not in pattern),
                          time.time(), time.time() + 600))
        conn.execute(update)
        conn.commit()
        got = {r["id"]: (r["scope"], r["place"]) for r in
               conn.execute("SELECT id, scope, place FROM reservations").fetchall()}
    finally:
        conn.close()
    assert got == {"r-file": (root, "src/parser.py"), "r-root": (root, ""),
                   "r-dir": (root, "docs"), "r-slash": ("/", "etc/x")}
    assert "src/parser.py is reserved by" in reason(edit(hook, B, str(trio / "src" / "parser.py")))
