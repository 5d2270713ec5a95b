"""Which store a process uses: the team database (PostgreSQL) when `NEXUS_DATABASE_URL` is set
or `nexus team join URL` stored one, else the per-user SQLite file. Stdlib only: every hook asks,
so the answer costs one environment lookup and one stat when no team is configured.

The URL is kept in its own file beside config.toml (`team.url`, 0600: it may hold a password),
not in config.toml itself: the hook hot path reads it without a TOML parser."""

from __future__ import annotations

import os

ENV = "NEXUS_DATABASE_URL"
FILE = "team.url"
NAME_FILE = "team.name"  # the person's team name (`nexus team join URL --name NAME`)
MACHINE_FILE = "team.machine"  # this machine's short name, fixed at the first `team join`


def url_file() -> str:
    from ..settings import path

    return os.path.join(os.path.dirname(path()), FILE)


def url() -> str | None:
    """The team database's URL in force, or None for the local store."""
    explicit = os.environ.get(ENV)
    if explicit is not None:
        return explicit.strip() or None  # set but empty: the local store, whatever is joined
    try:
        with open(url_file(), encoding="utf-8") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def name_file() -> str:
    return os.path.join(os.path.dirname(url_file()), NAME_FILE)


def _setting(file: str) -> str | None:
    """A one-line setting file beside team.url, when it holds a well-formed name."""
    import re

    try:
        with open(os.path.join(os.path.dirname(url_file()), file), encoding="utf-8") as fh:
            value = fh.read(200).strip()
    except OSError:
        return None
    return value if re.match(r"\A[A-Za-z0-9._-]{1,40}\Z" if file == MACHINE_FILE
                             else r"\A[A-Za-z0-9._-]{1,64}\Z", value) else None


def machine_file() -> str:
    return os.path.join(os.path.dirname(url_file()), MACHINE_FILE)


def pinned_machine() -> str | None:
    """This machine's name as the first `team join` fixed it: a host name that changes later
    (a laptop on another network) does not make the person someone else."""
    return _setting(MACHINE_FILE)


def person() -> str | None:
    """The team name the person chose at a terminal (`team join --name`), or None: then the
    person is `<login>@<machine>`. Only a file the person wrote decides it (an agent changes no
    setting); a name that is not well-formed counts as none."""
    return _setting(NAME_FILE)


def role(value: str | None = None) -> str | None:
    """The database role the team URL in force (or `value`) connects as, as libpq picks it: the
    URL's user, else PGUSER, else the login. None without a team URL."""
    value = value if value is not None else url()
    if not value:
        return None
    from . import pgwire

    p = pgwire.params(value)
    if p is not None:
        return p["user"]
    from urllib.parse import parse_qs, unquote, urlsplit

    try:
        parts = urlsplit(value)
        given = parse_qs(parts.query).get("user", [""])[0] or unquote(parts.username or "")
    except ValueError:
        given = ""
    return given or os.environ.get("PGUSER") or None


def source() -> str | None:
    """Where the URL in force comes from: 'env', 'config' or None."""
    if os.environ.get(ENV) is not None:
        return "env" if os.environ[ENV].strip() else None
    return "config" if url() else None


def redact(value: str) -> str:
    """The URL without its password, for messages and `team status`."""
    if "://" in value and "@" in value.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = value.split("://", 1)
        auth, host = rest.split("@", 1)
        if ":" in auth:
            auth = auth.split(":", 1)[0] + ":***"
        return f"{scheme}://{auth}@{host}"
    import re

    return re.sub(r"(password=)[^&\s]*", r"\1***", value)
