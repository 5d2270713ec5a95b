"""Argument and result models of the team tools: the source of their schemas in
contract/tools.json (compiled by `python -m nexus_cli.gen`; never imported when a tool runs)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..core.models import Args, Result


class TeamJoinArgs(Args):
    url: str = Field(min_length=1, max_length=2000, description="The team database, as a "
                     "PostgreSQL URL (`postgresql://user@host/db`; keep the password in "
                     "~/.pgpass or PGPASSWORD rather than in the URL).")
    name: str | None = Field(None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._-]+$",
                             description="Your name "
                             "in the team (you are then user:NAME on every machine); without "
                             "it, user:<role>@<machine>. On a database `team init` secured, "
                             "only your database role's own name.", json_schema_extra={
                                 "x-metavar": "NAME", "x-hint": "may hold only A-Z a-z 0-9 . _ -"})


class TeamServer(Result):
    server_version: str = Field(description="The PostgreSQL server's version.")
    schema_version: int = Field(description="The nexus schema in the team database.")
    schema_current: int = Field(description="The schema this nexus uses.")
    connect_ms: float = Field(description="Time to connect, in milliseconds.")
    latency_ms: float = Field(description="One round trip (`SELECT 1`), in milliseconds.")
    tls: bool = Field(description="Whether the connection is encrypted.")
    tls_verification: Literal["full", "ca", "none", ""] = Field(
        description='How far the server was verified, as libpq verifies it: "full" (its '
        'certificate and host name: sslmode=verify-full), "ca" (its certificate only), "none" '
        '(encrypted, but anyone on the way could pose as the server), "" (no TLS).')
    role: str = Field(description="The database role nexus connects as: who you are to the team "
                      "(the person).")
    schema_name: str = Field(description="The schema holding nexus's tables.")
    row_security: bool = Field(description="Whether row-level security guards the inboxes.")


class TeamJoinResult(Result):
    url: str = Field(description="The team database (its password, if any, hidden).")
    file: str = Field(description="Where the URL is kept (0600).")
    person: str = Field(description="You in the team: user:NAME, or user:<login>@<machine>.")
    server: TeamServer


class TeamStatusResult(Result):
    joined: bool = Field(description="Whether a team database is in use.")
    source: Literal["env", "config"] | None = Field(
        description="Where the URL comes from: NEXUS_DATABASE_URL or `nexus team join`.")
    url: str | None = Field(description="The team database (its password, if any, hidden).")
    person: str = Field(description="You at this shell in the store in use: user:<login> "
                        "locally; in a team user:NAME or user:<login>@<machine>.")
    reachable: bool | None = Field(description="Whether the server answered.")
    server: TeamServer | None
    error: str | None = Field(description="Why the server could not be used, with what to do.")


class TeamLeaveResult(Result):
    left: bool = Field(description="Whether a stored team URL was removed.")
    url: str | None = Field(description="The team database that was left.")
    still_set: bool = Field(description="NEXUS_DATABASE_URL still selects a team database.")


Role = Field(min_length=1, max_length=63, pattern=r"^[a-z_][a-z0-9_]*$",
             json_schema_extra={"x-hint": "must start with a-z or _ and hold only a-z 0-9 _"})


class TeamInitArgs(Args):
    roles: list[Annotated[str, Role]] = Field(
                            default_factory=list, max_length=200,
                            description="A database role to create (if missing) and grant a "
                            "member's rights to; repeat for each person.",
                            json_schema_extra={"x-metavar": "ROLE"})
    admin: str | None = Field(None, min_length=1, max_length=63, pattern=r"^[a-z_][a-z0-9_]*$",
                              description="A database role to create (if missing) and make the "
                              "team's administrator as well as a member: team-wide settings (the "
                              "default run policy) are the administrator's alone (more: GRANT "
                              "the administrator role to them).",
                              json_schema_extra={"x-metavar": "ROLE", "x-hint": "must start with "
                                                 "a-z or _ and hold only a-z 0-9 _"})
    apply: bool = Field(False, description="Run the script against the team database (as its "
                        "administrator) instead of printing it.")


class TeamInitResult(Result):
    sql: str = Field(description="The administrator's script: schema, roles, row-level "
                     "security, nexus's functions.")
    applied: bool = Field(description="Whether it was run against the team database.")
    schema_version: int | None = Field(description="The schema after applying.")
    administrator: str | None = Field(description="The administrator role applied (grant it "
                                      "to a login role to make it an administrator).")


class TeamMigrateArgs(Args):
    to: Literal["team", "local"] = Field("team", description="Where to copy: into the team "
                                        "database (from the local store) or back out.")


class Moved(Result):
    table: str
    copied: int = Field(description="Rows copied.")
    skipped: int = Field(description="Rows already there (by id, or copied before): skipped.")
    refused: int = Field(0, description="Rows the team database's row-level security would not "
                         "take from this role (mail and tasks not sent as one of its sessions).")


class TeamMigrateResult(Result):
    to: Literal["team", "local"]
    tables: list[Moved]
