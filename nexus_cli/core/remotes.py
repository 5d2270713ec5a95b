"""A project's git remote, as team mode scopes it across machines: the `url` of `[remote
"origin"]`, read from the repository's config (never with a `git` process), and one key for
every spelling of it. Stdlib only."""

from __future__ import annotations

import os
import re

SCP = r"\A(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>(?!//).*)\Z"  # git's user@host:path


def normalise_remote(url: str) -> str | None:
    """One key for every spelling of a remote: `git@github.com:a/b.git`,
    `https://github.com/a/b`, `ssh://git@github.com/a/b.git` are all `github.com/a/b`.
    Credentials (a user, a token, a password), the port of ssh, `.git` and trailing slashes
    are dropped; the host is lower-cased. A local path or a URL it cannot read: None."""
    url = url.strip()
    if not url or any(ord(c) < 32 for c in url):
        return None
    m = re.match(r"\A(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)\Z", url)
    if m:
        scheme = m["scheme"].lower()
        if scheme == "file":
            return None
        rest = m["rest"]
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]  # user, token and password are left behind
        if host.startswith("["):  # an IPv6 address keeps its colons
            end = host.find("]")
            host, port = host[:end + 1], host[end + 1:].lstrip(":")
        else:
            host, _, port = host.partition(":")
        if port and scheme in ("ssh", "git+ssh", "ssh+git"):
            port = ""  # ssh://host:22/ and host: are one server's one repository
        if port and scheme in ("http", "https") and port in ("80", "443"):
            port = ""
        path = path.split("?", 1)[0].split("#", 1)[0]
        if path.startswith("~"):
            path = path[1:]
    else:
        s = re.match(SCP, url)
        if not s or "/" in s["host"] or s["host"].startswith("."):
            return None  # a local path (/srv/repo.git, ../repo, C:...)
        if len(s["host"]) == 1:
            return None  # a Windows drive (C:\\repo)
        host, port, path = s["host"], "", s["path"].lstrip("~")
    host = host.lower().rstrip(".")
    path = re.sub(r"/+", "/", path).strip("/")
    if path.endswith(".git"):
        path = path[:-4].rstrip("/")
    if not host or not path or ".." in path.split("/"):
        return None
    return f"{host}{':' + port if port else ''}/{path}"


def git_dir(root: str) -> str | None:
    """The repository's own directory for the work tree at `root`: `.git`, or where a `.git`
    file points (a worktree, a submodule), and its `commondir` (a worktree shares the main
    repository's config)."""
    dot = os.path.join(root, ".git")
    if os.path.isfile(dot):
        try:
            with open(dot, encoding="utf-8", errors="replace") as fh:
                first = fh.read(4096).partition("\n")[0].strip()
        except OSError:
            return None
        if not first.startswith("gitdir:"):
            return None
        dot = os.path.normpath(os.path.join(root, first[len("gitdir:"):].strip()))
    if not os.path.isdir(dot):
        return None
    try:
        with open(os.path.join(dot, "commondir"), encoding="utf-8", errors="replace") as fh:
            common = fh.read(4096).strip()
        if common:
            dot = os.path.normpath(os.path.join(dot, common))
    except OSError:
        pass
    return dot


def remote_url(root: str, name: str = "origin") -> str | None:
    """The `url` of `[remote "origin"]` in the repository's config (read directly: stdlib)."""
    gd = git_dir(root)
    if gd is None:
        return None
    try:
        with open(os.path.join(gd, "config"), encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 16)  # a config is small; a huge one is read in part
    except OSError:
        return None
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head = re.match(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]', line)
            section = (head[1].lower(), head[2]) if head else None
            line = line[head.end():].strip() if head else ""
            if not line:
                continue
        if section != ("remote", name):
            continue
        key, eq, value = line.partition("=")
        if eq and key.strip().lower() == "url":
            value = value.split(" #", 1)[0].split(" ;", 1)[0].strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            return value
    return None
