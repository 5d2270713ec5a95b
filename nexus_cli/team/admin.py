"""`nexus team join|status|leave|init`: choosing the team database, checking it, and the one
script its administrator runs (schema, roles, row-level security, nexus's functions: made from
the tables' declarations by team/security.py; what each table allows is said there and beside
the code that owns it)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.store import migrations, policy, team

if TYPE_CHECKING:
    from .models import TeamInitArgs, TeamJoinArgs, TeamMigrateArgs

ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def people_only(what: str) -> None:
    """Which database this user's agents use is the person's choice: a process running under a
    client (an agent's shell or tool) may look, not switch or rewrite it."""
    from ..core import identity
    from ..core.proctable import table

    if any(p.name in identity.CLIENTS for p in table().ancestors()):
        raise NexusError("people_only", what, "an agent may not change which database nexus "
                         "uses or copy stores around", "ask the person to run it in their shell")


def _server(info: dict) -> dict:
    return {**{k: info[k] for k in ("server_version", "schema_version", "schema_current",
                                     "connect_ms", "latency_ms", "tls", "tls_verification",
                                     "role")},
            "schema_name": info["schema"], "row_security": info["row_security"]}


def _check_url(url: str) -> str:
    url = url.strip()
    if not re.match(r"^postgres(ql)?://", url) or any(c in url for c in "\n\r\0"):
        raise NexusError("invalid_argument", "url", "not a PostgreSQL URL",
                         "pass postgresql://[user@]host[:port]/database "
                         "(or postgresql:///database?host=/socket/dir)")
    return url


def join(ctx: Ctx, a: TeamJoinArgs) -> dict:
    """Check the server, bring its schema current (as this role, when it may), keep the URL."""
    from ..core import identity
    from ..core.store import pg

    url = _check_url(a.url)
    people_only("team join")
    if a.name:
        identity.check_name(a.name)  # you are user:NAME, shown as NAME: not like a handle
    conn = pg.connect(url, ctx.store.root)
    try:
        if pg.schema_version(conn) < migrations.CURRENT:
            pg.migrate(conn, ctx.now)
        if a.name:
            _name_free(conn, a.name)
    finally:
        conn.close()
    info = pg.ping(url)
    file = team.url_file()
    from ..core import atomic
    from ..core.store import paths

    paths.ensure_private_dir(os.path.dirname(file))
    atomic.write(file, url + "\n", 0o600)
    if a.name:
        atomic.write(team.name_file(), a.name + "\n", 0o600)
    if team.pinned_machine() is None:  # the machine's name, fixed once (host names change)
        from ..core.proctable import machine_name

        atomic.write(team.machine_file(), machine_name() + "\n", 0o600)
    from ..core import identity

    person = identity.team_user_id()
    return {"url": team.redact(url), "file": file, "person": person, "server": _server(info)}


def _name_free(conn: object, name: str) -> None:
    """A team name is one person's: on a database `team init` secured it is the role's own name
    (row-level security takes no other); elsewhere refused when a session of another database
    role holds `user:NAME`."""
    if policy.secured(conn):
        role = policy.role(conn)
        if name != role:
            raise NexusError("name_taken", name, f"on this team database a person is their "
                             f"database role: your team name can only be {role}",
                             f"pass --name {role}, or no --name (user:{role}@<machine>)")
        return
    row = conn.execute("SELECT * FROM sessions WHERE id = ?",  # type: ignore[attr-defined]
                       (f"user:{name}",)).fetchone()
    if row is None or "db_role" not in row.keys():  # noqa: SIM118 (a tuple row: keys apart)
        return
    me = conn.execute("SELECT current_user").fetchone()[0]  # type: ignore[attr-defined]
    if row["db_role"] != me:
        raise NexusError("name_taken", name, f"user:{name} belongs to another member of the team "
                         f"(database role {row['db_role']})", "choose another --name")


def status(ctx: Ctx, a: object) -> dict:
    from ..core import identity

    url = team.url()
    if not url:
        return {"joined": False, "source": None, "url": None, "person": identity.user_id(),
                "reachable": None, "server": None, "error": None}
    from ..core.store import pg

    out = {"joined": True, "source": team.source(), "url": team.redact(url),
           "person": identity.user_id(), "server": None, "error": None}
    try:
        info = pg.ping(url)
    except NexusError as exc:
        return {**out, "reachable": False, "error": exc.message}
    return {**out, "reachable": True, "server": _server(info)}


def leave(ctx: Ctx, a: object) -> dict:
    people_only("team leave")
    file = team.url_file()
    try:
        with open(file, encoding="utf-8") as fh:
            url = fh.read().strip()
        os.unlink(file)
        left = True
    except FileNotFoundError:
        url, left = "", False
    except OSError as exc:
        raise NexusError("config_unwritable", file, f"it cannot be removed ({exc.strerror})",
                         "remove it by hand") from None
    try:  # the team name goes with the team
        os.unlink(team.name_file())
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise NexusError("config_unwritable", team.name_file(),
                         f"it cannot be removed ({exc.strerror})", "remove it by hand") from None
    return {"left": left, "url": team.redact(url) if url else None,
            "still_set": bool(os.environ.get(team.ENV, "").strip())}


def script(schema: str, roles: list[str], admins: list[str]) -> list[str]:
    """The administrator's SQL for `schema`: every migration (PostgreSQL's own DDL, each applied
    once), then the team's security (team/security.py). Idempotent."""
    from ..core.store.pgschema import DDL
    from .security import literal, statements

    out = ["CREATE TABLE IF NOT EXISTS migrations (version BIGINT PRIMARY KEY,"
           " name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"]
    for number, name, _ in migrations.MIGRATIONS:
        body = "".join(s.rstrip(";") + ";\n" for s in DDL[number])
        out.append(f"DO $nexus$ BEGIN IF NOT EXISTS (SELECT 1 FROM migrations WHERE version ="
                   f" {number}) THEN\n{body}INSERT INTO migrations VALUES ({number},"
                   f" {literal(name)}, extract(epoch FROM now()));\nEND IF; END $nexus$")
    return out + statements(schema, roles, admins)


def _roles(names: list[str], what: str) -> list[str]:
    bad = [r for r in names if not ROLE.match(r)]
    if bad:
        raise NexusError("invalid_argument", what, f"{bad[0]!r} is not a plain role name",
                         "use lower-case letters, digits and _ (a PostgreSQL identifier)")
    return list(names)


def init(ctx: Ctx, a: TeamInitArgs) -> dict:
    """The script (for a DBA to run), or with --apply: the schema brought current and the team's
    security made or remade, in one transaction, as the schema's owner."""
    roles, admins = _roles(a.roles or [], "ROLE"), _roles([a.admin] if a.admin else [], "--admin")
    if not a.apply:
        lines = ["-- nexus team database: run as the owner of its schema (here: public)",
                 "BEGIN;", *(s.rstrip(";") + ";" for s in script("public", roles, admins)),
                 "COMMIT;"]
        return {"sql": "\n".join(lines) + "\n", "applied": False, "schema_version": None,
                "administrator": None}
    people_only("team init --apply")
    url = team.url()
    if not url:
        raise NexusError("team_not_joined", "--apply", "no team database is configured",
                         "set NEXUS_DATABASE_URL to the database, as the owner of its schema")
    from ..core.store import pg
    from .security import prefix

    conn = pg.connect(url, ctx.store.root)
    try:
        schema = conn.execute("SELECT current_schema()").fetchone()[0]
        done = script(schema, roles, admins)
        pg.migrate(conn, ctx.now, secure=done[1 + len(migrations.MIGRATIONS):])
        version = pg.schema_version(conn)
    finally:
        conn.close()
    return {"sql": "\n".join(s.rstrip(";") + ";" for s in done) + "\n", "applied": True,
            "schema_version": version, "administrator": prefix(schema) + "_admin"}


def migrate(ctx: Ctx, a: TeamMigrateArgs) -> dict:
    """Copy the caller's data between the local store and the team database (team/move.py:
    which tables, how, and what stays behind), in batches of their own transactions: a run that
    stopped half way is finished by running it again, and nothing is copied twice. The person's
    own id is renamed on the way (`user:<login>` here, `user:<login>@<machine>` or the team name
    there)."""
    from ..core import identity
    from ..core.store import pg
    from ..core.store.db import LocalStore
    from . import move

    people_only("team migrate")
    url = team.url()
    if not url:
        raise NexusError("team_not_joined", "--to", "no team database is configured",
                         "run `nexus team join URL` (or set NEXUS_DATABASE_URL) first")
    local, remote = LocalStore(ctx.store.root), pg.PgStore(url, ctx.store.root)
    source, dest = (local, remote) if a.to == "team" else (remote, local)
    old, new = f"{identity.USER}:{identity.login()}", identity.team_user_id()
    if a.to == "local":
        old, new = new, old
    if not (source.check_dir() and source.check_file()):
        return {"to": a.to, "tables": [{"table": t[0], "copied": 0, "skipped": 0, "refused": 0}
                                       for t in move.TABLES]}
    return {"to": a.to, "tables": move.copy(source, dest, a.to, person=(old, new))}
