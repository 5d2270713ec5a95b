"""`nexus team join|status|leave|init`: choosing the team database, checking it, and the one
script its administrator runs (schema, member roles, row-level security).

Row-level security: every session row records the database role that created it (`db_role`,
the person). A member role reads and changes only the messages it sent or received, the tasks
it dispatched or was given, and the approvals, through its own sessions; it writes messages and
tasks only as one of them. The transcripts' search index (insight_files, insight_chunks: the
conversations' text) is each role's own. Presence (sessions), the shared workspace and the
activity log stay readable by every member: finding each other is the point. A session row is
changed or removed only by its own role, and never given to another (its `db_role`, its
`successor` and its name are what mail follows), so no member can take over another's session
and its inbox with it."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.store import migrations, team

if TYPE_CHECKING:
    from .models import TeamInitArgs, TeamJoinArgs, TeamMigrateArgs

ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

OWN = "(SELECT id FROM sessions WHERE db_role = current_user)"
RLS = f"""
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS db_role TEXT COLLATE "C" NOT NULL
    DEFAULT current_user;
CREATE INDEX IF NOT EXISTS sessions_by_role ON sessions (db_role);
ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS nexus_read ON sessions;
CREATE POLICY nexus_read ON sessions FOR SELECT USING (true);
DROP POLICY IF EXISTS nexus_join ON sessions;
CREATE POLICY nexus_join ON sessions FOR INSERT WITH CHECK (db_role = current_user);
DROP POLICY IF EXISTS nexus_change ON sessions;
CREATE POLICY nexus_change ON sessions FOR UPDATE
    USING (db_role = current_user) WITH CHECK (db_role = current_user);
DROP POLICY IF EXISTS nexus_remove ON sessions;
CREATE POLICY nexus_remove ON sessions FOR DELETE USING (db_role = current_user);
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS nexus_read ON messages;
CREATE POLICY nexus_read ON messages FOR SELECT
    USING (recipient IN {OWN} OR sender IN {OWN});
DROP POLICY IF EXISTS nexus_send ON messages;
CREATE POLICY nexus_send ON messages FOR INSERT
    WITH CHECK (sender IN {OWN} OR (sender = 'system' AND recipient IN {OWN})
                OR (sender = 'system' AND reply_to IS NOT NULL));
DROP POLICY IF EXISTS nexus_change ON messages;
CREATE POLICY nexus_change ON messages FOR UPDATE
    USING (recipient IN {OWN} OR sender IN {OWN});
DROP POLICY IF EXISTS nexus_remove ON messages;
CREATE POLICY nexus_remove ON messages FOR DELETE
    USING (recipient IN {OWN} OR sender IN {OWN});
ALTER TABLE tasks ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS nexus_read ON tasks;
CREATE POLICY nexus_read ON tasks FOR SELECT USING (sender IN {OWN} OR target IN {OWN});
DROP POLICY IF EXISTS nexus_send ON tasks;
CREATE POLICY nexus_send ON tasks FOR INSERT WITH CHECK (sender IN {OWN});
DROP POLICY IF EXISTS nexus_change ON tasks;
CREATE POLICY nexus_change ON tasks FOR UPDATE USING (sender IN {OWN} OR target IN {OWN});
DROP POLICY IF EXISTS nexus_remove ON tasks;
CREATE POLICY nexus_remove ON tasks FOR DELETE USING (sender IN {OWN});
ALTER TABLE approvals ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS nexus_own ON approvals;
CREATE POLICY nexus_own ON approvals USING (session_id IN {OWN}) WITH CHECK (session_id IN {OWN});
ALTER TABLE insight_files ADD COLUMN IF NOT EXISTS db_role TEXT COLLATE "C" NOT NULL
    DEFAULT current_user;
ALTER TABLE insight_files ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS nexus_own ON insight_files;
CREATE POLICY nexus_own ON insight_files
    USING (db_role = current_user) WITH CHECK (db_role = current_user);
ALTER TABLE insight_chunks ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS nexus_own ON insight_chunks;
CREATE POLICY nexus_own ON insight_chunks
    USING (file_id IN (SELECT id FROM insight_files))
    WITH CHECK (file_id IN (SELECT id FROM insight_files));
"""


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
    """A team name is one person's: refused when a session of another database role holds
    `user:NAME` (row-level security would refuse every write as it anyway)."""
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


def script(roles: list[str]) -> str:
    """The administrator's SQL: the schema (every migration, PostgreSQL dialect), the member
    roles and their rights, row-level security. Idempotent."""
    from ..core.store.pgschema import DDL

    parts = ["-- nexus team database: run as the database's administrator (owner of the schema)",
             "BEGIN;",
             "CREATE TABLE IF NOT EXISTS migrations (version BIGINT PRIMARY KEY,"
             " name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL);"]
    for number, name, _ in migrations.MIGRATIONS:
        body = "\n".join(s.rstrip(";") + ";" for s in DDL[number])
        parts.append(f"-- migration {number}: {name}\n"
                     f"DO $nexus$ BEGIN IF NOT EXISTS (SELECT 1 FROM migrations WHERE version ="
                     f" {number}) THEN\n{body}\nINSERT INTO migrations VALUES ({number}, "
                     f"'{name.replace(chr(39), chr(39) * 2)}', extract(epoch FROM now()));\n"
                     f"END IF; END $nexus$;")
    parts.append(RLS.strip())
    parts.append(grants(roles))
    parts.append("COMMIT;")
    return "\n".join(p for p in parts if p) + "\n"


def grants(roles: list[str]) -> str:
    out = []
    for role in roles:
        out.append(f"DO $nexus$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = "
                   f"'{role}') THEN CREATE ROLE {role} LOGIN; END IF; END $nexus$;")
        out.append(f"GRANT USAGE ON SCHEMA {SCHEMA} TO {role};")
        out.append(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {SCHEMA}"
                   f" TO {role};")
        out.append(f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {SCHEMA} TO {role};")
        out.append(f"REVOKE INSERT, UPDATE, DELETE ON migrations FROM {role};")
    return "\n".join(out)


SCHEMA = "current_schema()"


def init(ctx: Ctx, a: TeamInitArgs) -> dict:
    roles = list(a.roles or [])
    bad = [r for r in roles if not ROLE.match(r)]
    if bad:
        raise NexusError("invalid_argument", "ROLE", f"{bad[0]!r} is not a plain role name",
                         "use lower-case letters, digits and _ (a PostgreSQL identifier)")
    if not a.apply:
        return {"sql": _printable(script(roles)), "applied": False, "schema_version": None}
    people_only("team init --apply")
    url = team.url()
    if not url:
        raise NexusError("team_not_joined", "--apply", "no team database is configured",
                         "set NEXUS_DATABASE_URL to the database, as its administrator")
    from ..core.store import pg

    conn = pg.connect(url, ctx.store.root)
    try:
        if pg.schema_version(conn) < migrations.CURRENT:
            pg.migrate(conn, ctx.now)
        schema = conn.raw.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
        try:
            with conn.raw.transaction():
                conn.raw.execute(RLS)  # type: ignore[arg-type]
                conn.raw.execute(grants(roles).replace(SCHEMA, _ident(schema)))  # type: ignore[arg-type]
        except Exception as exc:  # psycopg.Error: translated like every server error
            raise pg.translate_error(exc, url) from None
        version = pg.schema_version(conn)
    finally:
        conn.close()
    return {"sql": _printable(script(roles)), "applied": True, "schema_version": version}


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _printable(sql: str) -> str:
    """GRANT ... IN SCHEMA needs a name: the printed script uses the default schema."""
    return sql.replace(SCHEMA, "public")


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
