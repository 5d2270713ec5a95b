"""The commit guard in a real git repository: `nexus install git-hook` chains the pre-commit hook
already there, refuses a commit touching another session's exclusive reservation with the
message an edit gets (the holder itself commits freely, through a real client process), lets
`--no-verify` through, and `nexus uninstall git-hook` puts the folder back byte for byte;
what it cannot parse as its own it refuses."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import A, claude_env, sid, tree_bytes
from nexus_cli.reservations import githook

THEIRS = """#!/usr/bin/env python3
import pathlib, sys
pathlib.Path("chained-ran").write_text(" ".join(sys.argv[1:]) + "ran")
"""


def git(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def repo(tmp_path, monkeypatch, hook):
    root = tmp_path / "repo"
    root.mkdir()
    for args in (("init", "-q", "-b", "main"), ("config", "user.email", "t@example.com"),
                 ("config", "user.name", "t"), ("config", "commit.gpgsign", "false")):
        assert git(root, *args).returncode == 0
    (root / "src").mkdir()
    (root / "src" / "parser.py").write_text("x = 1\n")
    (root / "README.md").write_text("hi\n")
    git(root, "add", "-A")
    assert git(root, "commit", "-qm", "init", "--no-verify").returncode == 0
    monkeypatch.chdir(root)
    for var in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        monkeypatch.delenv(var, raising=False)
    return root


def hooks_dir(repo: Path) -> Path:
    return repo / ".git" / "hooks"


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), stat.S_IMODE(p.lstat().st_mode))
            for p in sorted(folder.iterdir()) if not p.name.endswith(".sample")}


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def test_the_guard_chains_refuses_and_goes_away_exactly(nx, hook, repo, fake, tmp_path):
    from standin import StandIn

    folder = hooks_dir(repo)
    (folder / "pre-commit").write_text(THEIRS)
    (folder / "pre-commit").chmod(0o750)
    before = snapshot(folder)
    r = nx("install", "git-hook", "--json")
    assert r.code == 0, r.err
    actions = {Path(f["path"]).name: f["action"] for f in r.json["files"]}
    assert actions == {"pre-commit.nexus-chained": "created", "pre-commit": "updated"}
    assert (folder / "pre-commit.nexus-chained").read_bytes() == before["pre-commit"][0]
    assert nx("install", "git-hook", "--json").json["files"][0]["action"] == "unchanged"

    # an unrelated commit passes, and the chained hook ran after the check
    (repo / "README.md").write_text("hello\n")
    git(repo, "add", "README.md")
    done = git(repo, "commit", "-qm", "readme")
    assert done.returncode == 0, done.stderr
    assert (repo / "chained-ran").read_text() == "ran"

    with StandIn("claude", str(tmp_path / "client")) as claude:
        fake.procs[claude.pid] = fake.real.get(claude.pid)
        hook("claude", "SessionStart", sid(1), source="startup", cwd=str(repo),
             client_pid=claude.pid)
        assert nx("reserve", "src/parser.py", "--reason", "refactor parser", env=A,
                  inside=claude.pid).code == 0
        name = nx("whoami", "--json", env=A, inside=claude.pid).json["name"]

        # the person's commit touching it is refused, with the message an edit gets
        (repo / "src" / "parser.py").write_text("x = 2\n")
        git(repo, "add", "src/parser.py")
        was = head(repo)
        refused = git(repo, "commit", "-qm", "parser")
        assert refused.returncode != 0 and head(repo) == was
        assert f"src/parser.py is reserved by {name}" in refused.stderr, refused.stderr
        assert '"refactor parser"' in refused.stderr and "pick other work" in refused.stderr

        # its holder commits it, from inside its own client process
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX", "CLAUDE"))}
        env.update(A, PYTHONPATH=os.pathsep.join(sys.path))
        mine = claude.run(["git", "commit", "-qm", "parser by its holder"], env, cwd=str(repo))
        assert mine["code"] == 0, mine["err"]
        assert head(repo) != was

    # a rename of a reserved file touches it too; --no-verify is the person's escape
    assert git(repo, "mv", "src/parser.py", "src/grammar.py").returncode == 0
    assert git(repo, "commit", "-qm", "rename").returncode != 0
    assert git(repo, "commit", "-qm", "rename", "--no-verify").returncode == 0

    r = nx("uninstall", "git-hook", "--json")
    assert r.code == 0, r.err
    assert snapshot(folder) == before  # theirs is back, byte for byte and mode; nothing else
    assert nx("uninstall", "git-hook", "--json").json["files"] == []


def test_without_a_hook_it_creates_one_and_removes_it(nx, repo):
    folder = hooks_dir(repo)
    before = snapshot(folder)
    dry = nx("install", "git-hook", "--dry-run", "--json")
    assert dry.code == 0 and "guard --staged" in dry.json["files"][0]["diff"]
    assert snapshot(folder) == before
    assert nx("install", "git-hook").code == 0
    assert stat.S_IMODE((folder / "pre-commit").stat().st_mode) & 0o111
    assert githook.parse((folder / "pre-commit").read_text())
    assert nx("uninstall", "git-hook").code == 0
    assert snapshot(folder) == before


def test_core_hooks_path_is_honoured(nx, repo):
    assert git(repo, "config", "core.hooksPath", "githooks").returncode == 0
    assert nx("install", "git-hook").code == 0
    assert (repo / "githooks" / "pre-commit").exists()
    assert not (hooks_dir(repo) / "pre-commit").exists()


def test_what_it_cannot_parse_it_refuses(nx, repo, tmp_path):
    folder = hooks_dir(repo)
    assert nx("install", "git-hook").code == 0
    guard = folder / "pre-commit"
    guard.write_text(guard.read_text().replace("exit 0\n", "echo mine\nexit 0\n"))
    before = tree_bytes(folder)
    for verb in ("uninstall", "install"):
        r = nx(verb, "git-hook", "--json")
        assert r.code == 8 and r.json["error"]["code"] == "config_conflict", r.out
        assert "edited by hand" in r.json["error"]["reason"]
    assert tree_bytes(folder) == before
    guard.unlink()
    (folder / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (folder / "pre-commit.nexus-chained").write_text("#!/bin/sh\nexit 0\n")
    before = tree_bytes(folder)
    r = nx("install", "git-hook", "--json")
    assert r.code == 8 and "pre-commit.nexus-chained" in r.json["error"]["key"]
    assert tree_bytes(folder) == before
    for extra in (("--scope", "project"), ("--tools", "all")):
        assert nx("install", "git-hook", *extra).code == 2
    outside = tmp_path / "plain"
    outside.mkdir()
    os.chdir(outside)
    r = nx("install", "git-hook", "--json")
    assert r.code == 2 and "not inside a git repository" in r.json["error"]["reason"]


def test_a_guard_that_cannot_check_lets_the_commit_through_and_says_so(nx, repo, home):
    assert nx("install", "git-hook").code == 0
    home.mkdir(mode=0o700, exist_ok=True)
    home.chmod(0o700)
    (home / "nexus.db").write_text("not a database")
    (home / "nexus.db").chmod(0o600)
    (repo / "README.md").write_text("changed\n")
    git(repo, "add", "README.md")
    done = git(repo, "commit", "-qm", "through")
    assert done.returncode == 0 and "could not check this commit" in done.stderr, done.stderr
    assert json.loads(nx("guard", "README.md", "--json").out)["error"]["code"] == \
        "store_unreadable"


def test_a_staged_link_to_a_reserved_file_is_the_link_not_its_target(nx, hook, repo):
    """A commit of a symbolic link changes the link, not the file it points to: committing
    a new link to another session's reserved file passes; a staged file is reported once however
    many names reach it."""
    B = claude_env(sid(2))
    for n in (1, 2):
        hook("claude", "SessionStart", sid(n), source="startup", cwd=str(repo))
    assert nx("reserve", "src/parser.py", env=A).code == 0
    os.symlink("src/parser.py", repo / "lnk.py")
    git(repo, "add", "lnk.py")
    r = nx("guard", "--staged", "--json", env=B)
    assert r.code == 0 and r.json["ok"] and r.json["checked"] == 1, r.out
    (repo / "src" / "parser.py").write_text("x = 2\n")
    git(repo, "add", "src/parser.py")
    r = nx("guard", "--staged", "src/parser.py", "lnk.py", "--json", env=B)
    assert r.code == 4 and [c["path"] for c in r.json["conflicts"]] == ["src/parser.py"], r.out
    assert nx("guard", "lnk.py", env=B).code == 4  # a shell command writes through the link
