"""Who and where across machines (issue 14): the person in team mode is
`user:<login>@<machine>` or a team name; a project's scope is the normalised URL of its git
remote `origin` (read from .git/config, worktrees and submodules included, credentials never
kept), else its root path. On the local store nothing changes. Tool-level behaviour is checked on
both backends (tests/test_identity.py runs on both) and across two machines in
tests/test_team_machines.py."""

from __future__ import annotations

import os
import re

import pytest

from nexus_cli.core import identity, proctable, remotes
from nexus_cli.core.store import team

KEY = "github.com/acme/widget"


@pytest.mark.parametrize("url", [
    "git@github.com:acme/widget.git",
    "git@github.com:acme/widget",
    "github.com:acme/widget.git",
    "https://github.com/acme/widget",
    "https://github.com/acme/widget.git",
    "https://github.com/acme/widget/",
    "https://GitHub.COM/acme/widget.git/",
    "http://github.com/acme/widget",
    "https://github.com:443/acme/widget",
    "ssh://git@github.com/acme/widget.git",
    "ssh://git@github.com:22/acme/widget.git",
    "git+ssh://git@github.com/acme/widget.git",
    "git://github.com/acme/widget.git",
    "https://x-access-token:ghp_SECRET123@github.com/acme/widget.git",
    "https://alice:hunter2@github.com/acme/widget",
    "https://ghp_SECRET123@github.com/acme/widget.git",
    "ssh://alice:pw@github.com/acme/widget.git",
    "https://github.com//acme//widget.git",
    "https://github.com/acme/widget.git?foo=bar#frag",
    "  git@github.com:acme/widget.git\n",
])
def test_every_spelling_of_a_remote_is_one_key(url):
    assert remotes.normalise_remote(url) == KEY


@pytest.mark.parametrize("url", [
    "https://x-access-token:ghp_SECRET123@github.com/acme/widget.git",
    "https://alice:hunter2@gitlab.example.com:8443/group/sub/repo.git",
    "ssh://deploy:s3cr3t@git.example.com:2222/srv/repo.git",
    "alice@git.example.com:repo.git",
])
def test_credentials_never_reach_the_key(url):
    key = remotes.normalise_remote(url)
    assert key and "@" not in key
    for secret in ("ghp_SECRET123", "hunter2", "s3cr3t", "alice", "deploy", "x-access-token"):
        assert secret not in key


def test_other_hosts_ports_and_paths_stay_apart():
    n = remotes.normalise_remote
    assert n("https://gitlab.example.com:8443/group/sub/repo.git") == \
        "gitlab.example.com:8443/group/sub/repo"
    assert n("https://gitlab.example.com/group/sub/repo") == "gitlab.example.com/group/sub/repo"
    assert n("git@github.com:acme/widget.git") != n("git@github.com:acme/gadget.git")
    assert n("git@github.com:acme/widget.git") != n("git@gitlab.com:acme/widget.git")
    assert n("https://[::1]:8080/a/b.git") == "[::1]:8080/a/b"


@pytest.mark.parametrize("url", [
    "/srv/git/widget.git", "../widget", "./widget", "file:///srv/git/widget.git",
    "C:\\repos\\widget", "C:/repos/widget", "", "   ", "https://github.com/",
    "https://github.com/a/../b", "git@github.com:acme/widget.git\nevil",
])
def test_local_paths_and_nonsense_have_no_key(url):
    assert remotes.normalise_remote(url) is None


def git_repo(root, url: str | None, extra: str = "") -> str:
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    remote = f'[remote "origin"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n' \
        if url else ""
    with open(os.path.join(root, ".git", "config"), "w") as fh:
        fh.write("[core]\n\tbare = false\n" + extra + remote)
    return str(root)


def test_the_remote_is_read_from_git_config(tmp_path):
    root = git_repo(tmp_path / "a", "git@github.com:acme/widget.git",
                    extra='[remote "upstream"]\n\turl = git@github.com:other/thing.git\n'
                          '# [remote "origin"] in a comment\n')
    assert remotes.remote_url(root) == "git@github.com:acme/widget.git"
    assert identity.scope_of(root, team=True) == KEY
    assert identity.scope_of(root, team=False) == root  # locally: the root path, as ever
    bare = git_repo(tmp_path / "b", None)
    assert remotes.remote_url(bare) is None
    assert identity.scope_of(bare, team=True) == bare  # no remote: the root path
    assert identity.scope_of(str(tmp_path / "not-a-repo"), team=True) == str(
        tmp_path / "not-a-repo")
    assert identity.scope_of("", team=True) == ""


def test_a_remote_with_a_token_is_scoped_without_it(tmp_path):
    root = git_repo(tmp_path / "a", "https://x-access-token:ghp_SECRET@github.com/acme/widget")
    assert identity.scope_of(root, team=True) == KEY


def test_config_syntax_variants(tmp_path):
    root = tmp_path / "a"
    os.makedirs(root / ".git")
    (root / ".git" / "config").write_text(
        '[Remote "origin"]\n    URL = "https://github.com/acme/widget.git"  ; a comment\n')
    assert identity.scope_of(str(root), team=True) == KEY


def test_a_worktree_and_a_submodule_use_the_main_repository_config(tmp_path):
    main = git_repo(tmp_path / "main", "ssh://git@github.com/acme/widget.git")
    # a worktree: .git is a file naming .git/worktrees/<name>, whose commondir is ../..
    wt_meta = tmp_path / "main" / ".git" / "worktrees" / "feature"
    wt_meta.mkdir(parents=True)
    (wt_meta / "commondir").write_text("../..\n")
    wt = tmp_path / "elsewhere" / "feature"
    wt.mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {wt_meta}\n")
    assert identity.project_root(str(wt)) == str(wt)  # still its own root path
    assert identity.scope_of(str(wt), team=True) == KEY == identity.scope_of(main, team=True)
    # a relative gitdir (a submodule's: ../.git/modules/lib), with its own config
    sub_meta = tmp_path / "main" / ".git" / "modules" / "lib"
    sub_meta.mkdir(parents=True)
    (sub_meta / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/lib.git\n')
    lib = tmp_path / "main" / "lib"
    lib.mkdir()
    (lib / ".git").write_text("gitdir: ../.git/modules/lib\n")
    assert identity.scope_of(str(lib), team=True) == "github.com/acme/lib"
    # a .git file that names nothing usable: the root path
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / ".git").write_text("not a gitdir line\n")
    assert identity.scope_of(str(odd), team=True) == str(odd)


# -- the person ------------------------------------------------------------------------------------


@pytest.mark.parametrize("good", ["user:alice", "user:alice@laptop-3f2a9c", "user:a.b_c-d@x",
                                  "user:alice@" + "m" * 40])
def test_user_ids_with_a_machine_are_well_formed(good):
    assert identity.check_id(good) == good


@pytest.mark.parametrize("bad", ["user:alice@", "user:@laptop", "user:a@b@c", "user:alice@lap top",
                                 "user:alice@" + "m" * 41, "user:alice@x\n- m-000 notice",
                                 "user:alice@x/y"])
def test_malformed_user_ids_are_refused(bad):
    assert not identity.is_valid(bad)


def test_handles_and_names_of_a_person_on_a_machine():
    assert identity.handle_base("user:alice@laptop-3f2a9c") == "u-alice@laptop-3f2a9c"
    name = identity.base_name("user:alice@laptop-3f2a9c", "/x")
    assert name == "alice@laptop-3f2a9c" and re.fullmatch(r"[A-Za-z0-9._@#-]{1,48}", name)


@pytest.fixture
def parts(monkeypatch):
    def use(node: str, ident: str) -> str:
        monkeypatch.setattr(proctable, "_PARTS", [(node, ident)])
        return proctable.machine_name()
    return use


def test_the_machine_name_is_short_valid_and_keeps_same_named_hosts_apart(parts):
    assert parts("Laptop.example.com", "3F2A9C0123456789") == "laptop-3f2a9c"
    assert parts("runner", "aaaaaa11") != parts("runner", "bbbbbb22")
    assert parts("", "") == "host"
    assert parts("we ird_/host\n", "") == "we-ird-host"
    assert parts("x" * 80, "0" * 32) == "x" * 24 + "-000000"
    for node, ident in (("a--", "-"), ("-", "zz-99"), ("ünï", "ab")):
        name = parts(node, ident)
        assert identity.is_valid(f"user:alice@{name}"), name


def test_the_person_is_the_login_locally_and_login_at_machine_in_a_team(monkeypatch, home, parts):
    parts("devbox", "0123456789abcdef")
    login = identity.login()
    monkeypatch.delenv(team.ENV, raising=False)
    assert identity.user_id() == f"user:{login}"
    monkeypatch.setenv(team.ENV, "postgresql:///nexus?host=/nonexistent")
    assert identity.user_id() == f"user:{login}@devbox-012345"
    assert identity.check_id(identity.user_id())
    # a team name the person chose (`team join --name`) is the person on every machine
    os.makedirs(os.path.dirname(team.name_file()), exist_ok=True)
    with open(team.name_file(), "w") as fh:
        fh.write("alice\n")
    assert identity.user_id() == "user:alice"
    with open(team.name_file(), "w") as fh:
        fh.write("not a name\n")  # malformed: ignored, never half used
    assert identity.user_id() == f"user:{login}@devbox-012345"
    monkeypatch.setenv(team.ENV, "")  # set but empty: the local store, and the login alone
    assert identity.user_id() == f"user:{login}"


def test_the_machine_name_is_pinned_at_join_so_a_new_host_name_changes_nobody(
        monkeypatch, home, parts):
    parts("laptop", "abcdef99")
    monkeypatch.setenv(team.ENV, "postgresql:///nexus?host=/nonexistent")
    login = identity.login()
    os.makedirs(os.path.dirname(team.machine_file()), exist_ok=True)
    with open(team.machine_file(), "w") as fh:
        fh.write("laptop-abcdef\n")  # what `team join` wrote
    parts("alices-mbp", "abcdef99")  # the host name changed (another network)
    assert identity.user_id() == f"user:{login}@laptop-abcdef"
    with open(team.machine_file(), "w") as fh:
        fh.write("bad name/\n")  # malformed: the computed name, never half of it
    assert identity.user_id() == f"user:{login}@alices-mbp-abcdef"
