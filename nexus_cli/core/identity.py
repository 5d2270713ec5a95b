"""Who is who: session ids, handles, default names, project roots and scopes. Stdlib only (hot
path).

A session id is `<client>:<the client's own id>` (`claude:<uuid>`, `codex:<uuid>`), the person
at a shell is `user:<login>`, and nexus itself writes as `nexus:system`. Every id is checked
against its exact shape (whole string, no trailing newline): an id is data and can never carry
a line of an announcement.

Team mode (a store shared by several machines): one login on two machines is two people, so the
person is `user:<login>@<machine>` (the machine's short name, `proctable.machine_name()`), or
`user:<name>` when the person chose a team name (`nexus team join URL --name NAME`). A project
is the same project on every machine: its scope is the normalised URL of the git remote
`origin` (read from .git/config, never with a `git` process: core/remotes.py), else its root
path. On the local store the person stays `user:<login>` and a project's scope is its root path
(two clones of one repository on one machine stay two projects)."""

from __future__ import annotations

import os
import re
from types import ModuleType

from .. import clients
from . import store
from .errors import NexusError

CLIENTS = clients.NAMES
USER = "user"
SYSTEM_ID = "nexus:system"
LOGIN = r"\A[A-Za-z0-9._-]{1,64}\Z"
# what follows `user:`: a login or team name, and in team mode `@` and the machine's short name
PERSON = r"\A[A-Za-z0-9._-]{1,64}(@[A-Za-z0-9._-]{1,40})?\Z"
# (patterns, not compiled at import: `re` compiles and caches them at first use, and a hook's
# tool call never needs them: 0.6 ms of its start)
HANDLE_DIGITS = 12


def bad_id(value: str, why: str) -> NexusError:
    shown = value if len(value) <= 80 else value[:79] + "…"
    return NexusError("invalid_argument", repr(shown)[1:-1] or "(empty)", why,
                      "use an id such as claude:<uuid>, codex:<uuid>, user:<login> or "
                      "user:<login>@<machine> "
                      "(`nexus peers` lists them)")


def session_id(client: str, raw: str) -> str:
    """`<client>:<raw>` after checking `raw` against that client's id shape."""
    adapter = clients.ADAPTERS.get(client)
    if adapter is None:
        raise bad_id(f"{client}:{raw}", f"{client!r} is not a client nexus knows")
    if not isinstance(raw, str) or not adapter.is_id(raw):
        raise bad_id(f"{client}:{raw}", f"not a {client} session id (a lowercase UUID)")
    return f"{client}:{raw}"


def adapter(sid: str) -> ModuleType:
    """The client adapter of a session id (`clients/<client>/runtime.py`)."""
    return clients.ADAPTERS[split_id(sid)[0]]


def split_id(sid: str) -> tuple[str, str]:
    client, _, rest = sid.partition(":")
    return client, rest


def check_id(sid: str) -> str:
    """`sid` itself when it is a well-formed participant id, else a coded error."""
    client, sep, rest = sid.partition(":")
    if not sep:
        raise bad_id(sid, "an id has the form <client>:<id>")
    if client == USER:
        if not re.match(PERSON, rest):
            raise bad_id(sid, "a user id is user:<login> or user:<login>@<machine> (1-64 of "
                         "A-Z a-z 0-9 . _ -, and up to 40 after the @)")
        return sid
    return session_id(client, rest)


def is_valid(sid: str) -> bool:
    try:
        check_id(sid)
    except NexusError:
        return False
    return True


def handle_digits(sid: str) -> str:
    """The characters a handle is cut from: the client id's hex digits, those that differ
    first (store.id_digits: a UUIDv7's random ones), or a user's login."""
    client, rest = split_id(sid)
    return rest if client == USER else store.id_digits(rest)


def handle_base(sid: str, length: int = HANDLE_DIGITS) -> str:
    client, _ = split_id(sid)
    if client == USER:
        return "u-" + handle_digits(sid)
    return "s-" + handle_digits(sid)[:length]


def login() -> str:
    import getpass

    try:
        name = getpass.getuser()
    except Exception:  # no passwd entry (containers): fall back to the uid
        name = ""
    if not re.match(LOGIN, name):
        name = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:64]
    if not name:
        name = f"uid{os.getuid()}" if hasattr(os, "getuid") else "user"
    return name


def user_id() -> str:
    """The person at this shell: `user:<login>` on the local store; in team mode
    `user:<login>@<machine>`, or `user:<name>` with a team name the person chose."""
    from .store import team

    return team_user_id() if team.url() else f"{USER}:{login()}"


def team_user_id() -> str:
    """The person in team mode: `user:<name>` (a chosen team name), else
    `user:<role>@<machine>`: the database role the team URL connects as (a secured team database
    takes no other person id from it), or the login when the role is not a plain name."""
    from .store import team

    name = team.person()
    if name:
        return f"{USER}:{name}"
    from .proctable import machine_name

    role = team.role()
    who = role if role and re.fullmatch(r"[A-Za-z0-9._-]{1,64}", role) else login()
    return f"{USER}:{who}@{team.pinned_machine() or machine_name()}"


HANDLE_PREFIXES = ("s-", "u-")  # a session's handle, the person's


def check_name(name: str) -> None:
    """A name a session chooses: it may not look like a handle (`s-…`, `u-…`), so that no
    session can pass for another session or for the person in a listing or a message's sender."""
    if name.lower().startswith(HANDLE_PREFIXES):
        raise NexusError("invalid_argument", name, "names starting with s- or u- would read as "
                         "a session's or the person's handle",
                         "choose a name that does not start with s- or u-")


def accounts() -> frozenset[str]:
    """Every account name of this machine (the password database), lower-cased, and this
    person's login: the names that read as a person."""
    names = {login().lower()}
    try:
        import pwd

        names.update(p.pw_name.lower() for p in pwd.getpwall())
    except (ImportError, OSError):
        pass
    return frozenset(names)


def reads_as_person(name: str, people: frozenset[str] = frozenset()) -> bool:
    """Whether `name` reads as a person in a listing or as a message's sender: `user:…` or
    `u-…`, a local account's name (`root`, whoever has registered or not), in team mode a
    person's `login@machine`, or one of `people` (the names of the people in the store)."""
    low = name.lower()
    if low.startswith(("user:", "u-")) or low in {p.lower() for p in people}:
        return True
    known = accounts()
    return low in known or (low.partition("@")[0] in known and "@" in low)


def check_agent_name(name: str, people: frozenset[str] = frozenset()) -> None:
    """A name an agent chooses: not like a handle (`check_name`), and never a person's name,
    so that what is sent to the person reaches the person."""
    check_name(name)
    if reads_as_person(name, people):
        raise NexusError("invalid_argument", name, "it reads as a person (a login of this "
                         "machine, user:..., or a person's name in nexus): mail sent to it "
                         "would be meant for the person", "choose another name")


def base_name(sid: str, cwd: str) -> str:
    client, rest = split_id(sid)
    if client == USER:
        return rest[:48] or "user"
    folder = os.path.basename(cwd.rstrip(os.sep)) or "root"
    name = re.sub(r"[^A-Za-z0-9._@#-]", "-", f"{client}@{folder}")
    return name[:44]


def project_root(cwd: str) -> str:
    """The git top level above `cwd` (a `.git` directory or file), else `cwd` itself."""
    cwd = os.path.abspath(cwd)
    probe = cwd
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return cwd
        probe = parent


def scope_of(root: str, team: bool) -> str:
    """The project's scope: on the local store its root path; in team mode the normalised URL of
    its `origin` remote (the same on every machine), else its root path."""
    if not team or not root:
        return root
    from .remotes import normalise_remote, remote_url  # team mode only

    url = remote_url(root)
    key = normalise_remote(url) if url else None
    return key or root  # a root path is absolute: it never looks like host/path
