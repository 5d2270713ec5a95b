"""The team tools: join a team database, see it, leave it, and the administrator's script."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import admin, render

register(Tool(
    name="team_join", group="team", title="Join a team database",
    description="Use a PostgreSQL team database from now on (checked, its schema brought "
    "current, the URL kept 0600); NEXUS_DATABASE_URL overrides it.",
    details="Every command, hook and MCP server of this user then works on the team database: "
    "sessions on other machines become peers. The URL is kept in `team.url` beside config.toml. "
    "Keep the password out of the URL (~/.pgpass, PGPASSWORD). In a team you, at a shell, are "
    "your database role: user:<role>@<machine> (one role on two machines is two participants), "
    "or user:<role> on every machine with --name <role> (kept in `team.name`; `team leave` "
    "forgets it; the machine name is fixed in `team.machine` at the first join). A project is the "
    "same project on every machine: the normalised URL of its git remote `origin`, else its "
    "root path.",
    args="TeamJoinArgs", result="TeamJoinResult", run=admin.join, render=render.join,
    command=("team", "join"), positional=("url",), destructive=True, idempotent=True, mcp=False,
    needs_caller=False,
    example="nexus team join postgresql://nexus.example.org/team --name ana",
))
register(Tool(
    name="team_status", group="team", title="Show the team database",
    description="Which store is in use; for a team database: reachable, server and schema "
    "version, latency, TLS, the role and whether row-level security is on.",
    args="NoArgs", result="TeamStatusResult", run=admin.status, render=render.status,
    command=("team", "status"), read_only=True, idempotent=True, mcp=False, needs_caller=False,
    example="nexus team status",
))
register(Tool(
    name="team_leave", group="team", title="Leave the team database",
    description="Forget the stored team URL: the local store is used again (unless "
    "NEXUS_DATABASE_URL is set). Nothing in either store is changed.",
    args="NoArgs", result="TeamLeaveResult", run=admin.leave, render=render.leave,
    command=("team", "leave"), destructive=True, idempotent=True, mcp=False, needs_caller=False,
    example="nexus team leave",
))
register(Tool(
    name="team_init", group="team", title="The team database administrator's script",
    description="Print (or with --apply run, as the schema's owner) the SQL that creates the "
    "schema, the member and administrator roles, row-level security and nexus's functions.",
    details="Made from every table's declared policy (who reads a row, inserts one and in whose "
    "name, changes or deletes it): a member reads and changes only the mail, tasks, runs and "
    "approvals of its own sessions and writes them only as one of them; presence, the shared "
    "workspace and the activity log are the team's; the team-wide run policy is the "
    "administrator's (--admin ROLE); what an assignee does to another's task, and the notice an "
    "expiry owes a sender, go through nexus's own functions. Idempotent: run it again (with "
    "--apply) after upgrading nexus, which migrates a secured database's schema.",
    args="TeamInitArgs", result="TeamInitResult", run=admin.init, render=render.init,
    command=("team", "init"), positional=("roles",), destructive=True, idempotent=True,
    mcp=False, needs_caller=False,
    example="nexus team init ana bob --admin lead",
))
register(Tool(
    name="team_migrate", group="team", title="Copy your nexus data in or out",
    description="Copy the local store's sessions, mail, tasks, activity, workspace, reservations "
    "and runs into the team database (--to local: yours back out). Rerun to resume.",
    details="Idempotent and resumable: rows go in batches of their own transactions; a row with "
    "an id is skipped when that id is there already, a row without one (activity, chat, "
    "strategy versions) is copied once (recorded in `team_moves`), so a run that was killed is "
    "finished by running it again and nothing is copied twice. References by id (a task's "
    "message and report, an approval's run) stay intact; sequence numbers are given anew by "
    "the destination (chat read cursors follow them). Row-level security: rows the team "
    "database would not take from your role are counted as refused; --to local copies what "
    "your role reads, and of the shared tables what your own sessions wrote or joined (a "
    "database without row-level security, `team init` not run, has no owners: all of it). Left "
    "behind: meta, tool_uses (calls in flight), ws_buckets (rate limits), ws_indexed, ws_fts, "
    "insight_files, insight_chunks, insight_fts (indexes and caches, rebuilt), approval_routes "
    "(a live run's routing on this machine), run_policy (this machine's security setting).",
    args="TeamMigrateArgs", result="TeamMigrateResult", run=admin.migrate, render=render.migrate,
    command=("team", "migrate"), destructive=False, idempotent=True, mcp=False,
    needs_caller=False,
    example="nexus team migrate --to team",
))
