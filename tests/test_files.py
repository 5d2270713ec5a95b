"""fs_read, fs_list, fs_stat, fs_write: the path jail (.., symlinks, /proc/self/root), the
sensitive-name denylist (refused and hidden), the seed's limits and paging."""

from __future__ import annotations

import os

import pytest

from helpers import A, B, claude_env, sid

pytestmark = pytest.mark.usefixtures("terminal")  # the person at a terminal


@pytest.fixture
def work(hook, chdir_work):
    hook("claude", "SessionStart", sid(1), source="startup")
    root = chdir_work
    os.makedirs(os.path.join(root, "src", "deep", "er"))
    with open(os.path.join(root, "src", "a.txt"), "w") as fh:
        fh.write("".join(f"line {i}\n" for i in range(1, 3001)))
    for name in (".env", "server.pem", "api_token.txt", "ok.md"):
        with open(os.path.join(root, name), "w") as fh:
            fh.write("secret\n")
    os.makedirs(os.path.join(root, ".ssh"))
    return root




def read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def test_read_pages_by_lines_and_bytes(nx, work):
    from schemas import validate

    path = os.path.join(work, "src", "a.txt")
    r = nx("fs", "read", path, "--json", env=A)
    validate("fs_read", r.json)
    assert r.json["total_lines"] == 3000 and r.json["lines"] == 400 and r.json["truncated"]
    assert r.json["next"] == "--offset 401" and r.json["content"].startswith("line 1\n")
    r = nx("fs", "read", path, "--offset", "2990", "--limit", "2000", "--json", env=A).json
    assert r["lines"] == 11 and not r["truncated"] and r["next"] is None
    assert nx("fs", "read", path, "--limit", "2001", env=A).code == 2
    big = os.path.join(work, "big.txt")
    with open(big, "w") as fh:
        fh.write(("x" * 999 + "\n") * 100)  # 100 KB: more than 48 KB per call
    r = nx("fs", "read", big, "--limit", "2000", "--json", env=A).json
    assert len(r["content"].encode()) <= 48 * 1024 and r["truncated"] and r["next"]
    huge = os.path.join(work, "huge.bin")
    with open(huge, "wb") as fh:
        fh.truncate(8 * 1024 * 1024 + 1)
    r = nx("fs", "read", huge, env=A)
    assert r.code == 2 and "file too large" in r.err
    r = nx("fs", "read", os.path.join(work, "src"), env=A)
    assert r.code == 2 and "is a directory, use fs_list" in r.err
    r = nx("fs", "read", os.path.join(work, "nope"), env=A)
    assert r.code == 3 and "path not found" in r.err


def test_traversal_and_escapes_are_refused(nx, work, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("no")
    os.symlink(str(outside), os.path.join(work, "link.txt"))
    os.symlink(str(tmp_path), os.path.join(work, "linkdir"))
    for path in (os.path.join(work, "..", "outside.txt"), os.path.join(work, "link.txt"),
                 os.path.join(work, "linkdir", "outside.txt"), "/etc/passwd",
                 "/proc/self/root" + os.path.join(work, "ok.md")):
        r = nx("fs", "read", path, env=A)
        assert r.code == 5 and r.err.startswith("nexus: path_outside_roots: "), (path, r.err)
    r = nx("fs", "read", "relative/path", env=A)
    assert r.code == 2 and "invalid_argument" in r.err and "not an absolute path" in r.err, r.err
    # a symlink that stays inside is fine
    os.symlink(os.path.join(work, "ok.md"), os.path.join(work, "alias.md"))
    assert nx("fs", "read", os.path.join(work, "alias.md"), env=A).code == 0


def test_sensitive_names_are_refused_and_hidden(nx, work):
    for name in (".env", "server.pem", "api_token.txt", ".ssh/id_rsa", ".ssh"):
        r = nx("fs", "stat", os.path.join(work, name), env=A)
        assert r.code == 5 and "path denied by policy" in r.err, name
    r = nx("fs", "list", work, "--json", env=A).json
    names = {e["name"] for e in r["entries"]}
    assert "ok.md" in names and not names & {".env", "server.pem", "api_token.txt", ".ssh"}
    # the store is never reachable through the file tools, even inside the project
    r = nx("fs", "stat", os.path.join(os.environ["NEXUS_HOME"], "nexus.db"), env=A)
    assert r.code == 5


def test_list_depth_and_paging(nx, work):
    from schemas import validate

    r = nx("fs", "list", work, "--depth", "3", "--limit", "2", "--json", env=A).json
    validate("fs_list", r)
    assert r["total"] >= 5 and r["count"] == 2 and r["truncated"] and r["next"] == "--offset 2"
    every = nx("fs", "list", work, "--depth", "3", "--json", env=A).json["entries"]
    assert {"src/deep", "src/deep/er"} <= {e["name"] for e in every}
    assert "src/deep/er" not in {e["name"] for e in nx("fs", "list", work, "--depth", "2",
                                                     "--json", env=A).json["entries"]}
    assert nx("fs", "list", work, "--depth", "6", env=A).code == 2
    assert nx("fs", "list", os.path.join(work, "ok.md"), env=A).code == 2


def test_stat_of_a_missing_path_is_not_an_error(nx, work):
    from schemas import validate

    r = nx("fs", "stat", os.path.join(work, "missing"), "--json", env=A)
    assert r.code == 0 and r.json["exists"] is False
    validate("fs_stat", r.json)
    r = nx("fs", "stat", os.path.join(work, "src"), "--json", env=A).json
    assert r["exists"] and r["is_dir"] and not r["is_file"]


def test_write_is_off_until_the_person_turns_it_on(nx, work):
    from schemas import validate

    path = os.path.join(work, "new", "dir", "out.txt")
    r = nx("fs", "write", path, "hello", env=A)
    assert r.code == 5 and "fs_write_disabled" in r.err and not os.path.exists(path)
    nx("config", "set", "fsWrite", "1")
    r = nx("fs", "write", path, "hello\n", "--mode", "create-new", "--json", env=A)
    validate("fs_write", r.json)
    assert r.code == 0 and read(path) == "hello\n" and r.json["bytes_raw"] == 6
    r = nx("fs", "write", path, "again", "--mode", "create-new", env=A)
    assert r.code == 4 and "file already exists" in r.err
    nx("fs", "write", path, "more\n", "--mode", "append", env=A)
    assert read(path) == "hello\nmore\n"
    nx("fs", "write", path, "fresh", env=A)
    assert read(path) == "fresh"
    r = nx("fs", "write", os.path.join(work, ".env"), "x", env=A)
    assert r.code == 5 and read(os.path.join(work, ".env")) == "secret\n"
    r = nx("fs", "write", os.path.join(work, "..", "escape.txt"), "x", env=A)
    assert r.code == 5
    r = nx("fs", "write", os.path.join(work, "big.txt"), "-", stdin="x" * (4 * 1024 * 1024 + 1),
           env=A)
    assert r.code == 2 and not os.path.exists(os.path.join(work, "big.txt"))


def test_fs_write_honours_file_reservations(nx, work, hook):
    """fs_write is an edit no hook sees: a file another session reserved is refused here as it
    would be at the edit, and nothing is written; the holder itself writes."""
    hook("codex", "SessionStart", sid(2), source="startup")
    assert nx("config", "set", "fsWrite", "1").code == 0
    path = os.path.join(work, "src", "a.txt")
    before = read(path)
    assert nx("reserve", "src/a.txt", "--reason", "refactor", env=A).code == 0
    r = nx("fs", "write", path, "mine now", "--mode", "overwrite", env=B)
    assert r.code == 4 and "reservation_conflict" in r.err and "refactor" in r.err, r.err
    assert read(path) == before
    r = nx("fs", "write", path, "tail\n", "--mode", "append", env=B)
    assert r.code == 4 and read(path) == before
    assert nx("fs", "write", path, "mine\n", "--mode", "overwrite", env=A).code == 0
    assert read(path) == "mine\n"
    assert nx("release", "--all", env=A).code == 0
    assert nx("fs", "write", path, "yours\n", "--mode", "overwrite", env=B).code == 0


def test_the_jail_is_the_project_of_the_sessions_start_and_no_hook_moves_it(nx, hook, work,
                                                                              tmp_path, fake):
    """`nexus fs` serves agents whose sandbox cannot see the project: a hook event fed from the
    agent's own shell (its client process is above it, so the event is admitted) with another
    cwd moves neither its jail nor that of a conversation it starts that way."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.txt").write_text("not yours\n")
    target = str(outside / "notes.txt")
    assert hook("claude", "UserPromptSubmit", sid(1), cwd=str(outside), prompt="x").code == 0
    r = nx("fs", "read", target, env=A)
    assert r.code == 5 and "path_outside_roots" in r.err, r.err
    assert nx("fs", "read", os.path.join(work, "ok.md"), env=A).code == 0  # its own still is
    # a conversation "started" in the same client process, by hand, somewhere else: mid-turn it
    # is refused (issue 37); between turns (a start fed from a process left running) it is
    # admitted, and still jailed where its client's session started
    client = fake.client_of(f"claude:{sid(1)}")
    r = hook("claude", "SessionStart", sid(9), client_pid=client, source="clear",
             cwd=str(outside))
    assert r.code == 1 and "hook_refused" in r.err, r.err
    assert hook("claude", "Stop", sid(1)).code == 0
    assert hook("claude", "SessionStart", sid(9), client_pid=client, source="clear",
                cwd=str(outside)).code == 0
    r = nx("fs", "read", target, env=claude_env(sid(9)), inside=client)
    assert r.code == 5 and "path_outside_roots" in r.err, r.err
