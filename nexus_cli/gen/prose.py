"""Prose that appears both in docs/ and in the man pages, kept once here (a test checks that
docs/security.md carries the security model word for word)."""

from __future__ import annotations

SECURITY = """\
nexus keeps the agents of one user on one machine honest with each other. What it guarantees,
and what it does not:

- **A session acts only as itself.** The process tree decides who calls: the nearest Claude Code
  or Codex process above a command, an MCP server or a hook. The client's session variables
  (`CLAUDE_CODE_SESSION_ID`, `CODEX_SESSION_ID`, `CODEX_THREAD_ID`) must name that client's
  session, or one of a client further up (a nested agent inherits them: they are ignored);
  anything else is refused (`impersonation_refused`, exit 5). An MCP call's `_meta` must name a
  session of the client that started the server. From inside a session, `--as` may only name
  itself.
- **The person is the person.** A command with no client above it and no client session
  variables is you, `user:<login>` (in team mode your database role: `user:<role>@<machine>`,
  or `user:<role>` with `team join --name`; one role on two machines is two participants).
  Acting for a session with `--as` needs an
  interactive terminal with the command in its foreground: an agent does not reach that power by
  unsetting a variable, detaching (`setsid`, a double fork, `nohup`) or piping. A process that
  left its session's tree but kept its variables is refused. (A terminal is a test a person
  passes, not a proof: see what it cannot stop, below.)
  The same holds for what only the person may do: answering a permission request as the person
  (`nexus approve`) and changing the settings that widen what agents may do (`nexus config set
  fsWrite|runApprovals`) need an interactive terminal, so a process that left an agent's tree
  (`setsid`, a double fork, `env -i`) is not taken for you. An agent changes no setting at all
  (`people_only`): the turn, rate and file limits it lives under are not its own. Only you at
  a terminal serve the web board (`nexus board --web`), which holds these powers for as long
  as it runs; its address carries a secret, and anyone who has that address while it runs can
  act as you on the page, like someone at your terminal.
- **Hook events are believed only from their session's own client process.** The first event
  records that process (pid and start time, so a reused pid does not count); an event for the
  session from any other process is refused (`hook_refused`). A session whose client exited moves
  to a new process only with a SessionStart that is that process's own first event (how
  `claude --resume` and `codex resume` start), and the move is recorded; a start fed by hand
  from an agent's shell, into the client that runs the agent, is refused. A client process that
  has run no hook is never a registered session by its variable or `_meta` alone, and a process
  that runs a shell is no client, whatever it is named (`ln -s /bin/sh claude`, or a copy of a
  shell the system lists in /etc/shells). A hook fed by
  hand at a shell is refused and registers nothing. The transcript path a hook
  reports is read only when it is the session's own file: on this machine, a regular file (not a
  link) named after the session's id; `nexus log` reads nothing else through it.
- **Nobody is given what it did not ask for, nor takes what is not its own.** An agent's name is
  never a person's (your login, any account of the machine, `u-`/`user:` shapes, a person's name
  in nexus), and a name that reads as a person is that person. A handoff to a live session
  moves nothing until that session accepts it (`handoff accept`), unless it runs in the caller's
  own client process.
- **What an agent starts is no wider than the agent.** A run a session starts has at most the
  session's own tier (its run's; Codex's turn sandbox; Claude Code's permission mode), unless
  you allow more (`widerRuns`); flags from the environment never widen a tier, so a run's
  record says what its client got. `nexus fs` keeps an agent in the project its session was
  registered in at its start: no later hook event's `cwd` moves it.
- **What nexus cannot establish is the narrowest; an agent's word about itself is no evidence.**
  A tier nexus cannot establish is read-only, and so is every run it starts: a command from an
  agent's shell, Claude Code's `default` mode (which asks per call), a call with no binding. The
  tier in an MCP call's `_meta` is believed only by a server the client itself started and
  feeds (its parent, holding the pipe the requests come by), never by one the agent ran or
  `exec`ed from its shell. A new conversation starts in a running client only between
  turns: a SessionStart fed by hand from an agent's shell in the middle of its turn is refused.
  A consuming read (`read`, `ask`'s answer) is at least once: what it takes is leased to its
  process (machine, pid, start time) until its output is written; a read killed before then
  leaves it to the next one (shown again under the same message ids), never lost. A secret never
  goes on a command line or into an environment another user can read: `board --web --open`
  hands the browser a file only you can read, never the address. A team server that answers a
  byte at a time holds a command no longer than one deadline (33 s) for all its statements.
- **Reservations see through names.** A hard link of a reserved file is the reserved file
  (device and inode); a shell command's writes are followed into every directory it moves to,
  and one nexus cannot name counts as anything under the deepest directory it knows.
- **Input is JSON, whole.** `NaN`, `Infinity` and numbers past a float's range are refused
  wherever JSON comes in and never written out; every argument, durations included, is checked
  by one validation (`core/validate.py`, kept equal to the models by a differential test).
- **Text from peers is data.** Ids are checked whole against each client's id shape; a handle
  names one session (extended on collision), and no name may look like one; names, notes and
  message lines are quoted, one line each, in every announcement; a peer's text of several
  lines printed for people (a message, a task and its result, a doc, a meeting's summary, a
  session's last prompt and answer, a run's answer) is a quoted block (`> ` before every
  line), so no line of it passes for a line of nexus's own; control
  characters and Unicode's invisible format characters (zero-width spaces, the tag characters
  that can spell text a model reads and a person does not see) are shown escaped everywhere;
  `--json` keeps text exact.
- **Reads are input.** Every row nexus reads back, on either backend, is checked where it
  becomes a record: ids of the shapes nexus writes, a handle cut from its own session's id,
  names, known states, times a calendar shows (not NaN, an infinity or 1e300). A row that fails
  is read past (never announced, listed or acted on), said on stderr (`row_invalid`) and named
  by `nexus doctor`; the others are read as ever. A stored id or handle is printed as one
  harmless word wherever it reaches a terminal, a model's context or a command nexus suggests.
  In team mode the schema also refuses such rows (check constraints), a person's name is one
  person's whatever its case, and a row naming a client process is that process's only with
  its start time, on its machine.
- **The store is private** (0700/0600, refused otherwise); its files (the database, its WAL,
  shared-memory and journal files) are never symbolic links (`store_insecure`),
  nor are its folders (`wake/`, `news/`: nexus works in them through a descriptor of the folder
  itself, writes only to its own FIFOs and deletes only what it made there); a file that cannot
  be read is never overwritten.
- **Between team members, the server's roles decide.** Each person connects to the team
  database as a role of their own, and that role is who they are there, never a column they
  fill in: `nexus team init` makes the row-level security from every table's declared policy
  (who reads a row, inserts one and in whose name, changes or deletes it). A member cannot read
  another's mail, tasks, runs (their task, context and result), permission requests or
  transcript index; cannot write a message, a session, a person's id, a reservation, a chat line,
  a document or a log entry in another's name, nor change a message's text; does to another's
  task only what its assignee does (a report, once, through nexus's own functions); cannot pass
  a notice off as nexus's (nexus's own voice reaches only the caller's sessions; a notice one
  member's act owes another is shown as that member's); and cannot change what everyone's runs
  may do: the team-wide run policy is the administrator role's (`team init --admin ROLE`), a
  member's own `policy set` reaches only its own runs. A record that names a process (a
  session's client, a waiter, a run, an approval's hook) names its machine: it is judged and
  signalled only there, and a run's client only when it carries the run (`NEXUS_RUN`). Shared by
  design: presence, the workspace (which any member may edit), reservations (to see) and the
  activity log; a member can still fill shared space with noise, hold the writers' lock, or
  wake a waiter for nothing (a wake is only a hint).
- **Members write through functions only.** On a database `nexus team init` secured, a member's
  role holds no INSERT, UPDATE or DELETE on a table: each write nexus makes is declared once in
  its code, and `team init` makes it a function of its own that runs as the team's writer role
  (`<prefix>_writer`), with row-level security still deciding which rows it reaches, and that
  takes only the statement's values. Every function of nexus's runs with the search path
  `pg_catalog, <schema>, pg_temp`: a member's temporary table never stands in for a real one.
  After an upgrade, the team's administrator runs
  `nexus team init --apply` again: until then a write whose function is missing is refused
  (`store_outdated`), nothing written. The activity log takes an entry without a participant's
  id only from nexus's faces (`cli`, `mcp`, `web`, a client's hook) and only as `security.*`; a
  meeting is changed only by its initiator, and chat is pruned only by the administrator.
- **It is written down.** Refused impersonations and hook events, the person acting for a
  session, and sessions moved to another process are in the event log:
  `nexus events --action security`, `nexus events --action session`.
- **What it cannot stop:** a process of yours with direct file access can read and write the
  store, edit the clients' configuration, or run its own program named `claude`. Nor can the
  process tree tell a program written to escape it from you: an agent's command that detaches
  from its client and drops the client's variables is taken for you (it sends and reads as
  `user:<login>`), and one that also gives itself a terminal (a pseudo-terminal of its own:
  `script`, `expect`, a new tmux window) passes the terminal test too, and may act for sessions,
  approve, and change settings. A session whose client has exited can be resumed by any new
  client process of yours, at its first event (that is how `--resume` works, and an agent can
  start a client, or a program of its own named `claude`: the move is in the activity log). nexus
  stops every casual and accidental route (a stale variable, `--as`, `_meta`, a hook fed by
  hand, a nested agent) and records what it refuses; a per-user file cannot keep out its own
  user. For a hard boundary run agents as another user, or use team mode, where the server's
  roles decide.
"""

ENVIRONMENT = [
    ("NEXUS_HOME", "The store directory (default: `$XDG_DATA_HOME/nexus`, else "
                   "`~/.local/share/nexus`; `~/Library/Application Support/nexus` on macOS)."),
    ("XDG_DATA_HOME", "Where the store lives when `NEXUS_HOME` is not set."),
    ("CLAUDE_CODE_SESSION_ID", "Set by Claude Code for its hooks, Bash tool and MCP servers: the "
                               "session a command runs in (checked against the process tree)."),
    ("CODEX_SESSION_ID, CODEX_THREAD_ID", "Set by Codex for its shell tool: the thread a command "
                                          "runs in (checked against the process tree)."),
    ("NEXUS_CODEX_COMMAND", "The command that queues a turn for an idle Codex thread (default: "
                            "`codex`, else the running client's own binary)."),
    ("CLAUDE_CONFIG_DIR, CODEX_HOME", "Where the clients keep their transcripts (default "
                                      "`~/.claude`, `~/.codex`): `log`, `search` and the board "
                                      "read them there."),
    ("NEXUS_PROCESS_TABLE", "`ps` reads the process table with ps(1) instead of /proc."),
    ("NEXUS_DEBUG", "Show the traceback of an internal error."),
]

FILES = [
    ("$NEXUS_HOME/nexus.db", "The store (SQLite, WAL mode, 0600), with its -wal and -shm files."),
    ("$NEXUS_HOME/config.toml, else ~/.config/nexus/config.toml", "Settings (`nexus config`); "
     "`$XDG_CONFIG_HOME` moves the second. A settings.json beside the store (nexus 0.1) is "
     "still read; config.toml wins."),
    ("$NEXUS_HOME/wake/", "The wake channels (FIFOs) of waiting hooks."),
    ("~/.claude/settings.json, ~/.claude.json", "Where `nexus install claude` puts the hooks and "
                                                "the MCP server."),
    ("~/.codex/hooks.json, ~/.codex/config.toml", "Where `nexus install codex` puts them."),
    ("~/.claude/projects/, ~/.codex/sessions/", "The clients' transcripts, read (never written) "
                                               "by `log`, `stats`, `sessions`, `search` and "
                                               "`board`; search's index keeps a copy of their "
                                               "text in the store."),
]

EXAMPLES = [
    ("nexus peers", "Who is here (this project)."),
    ("nexus send codex@shop \"please review checkout.py\"", "A message, by name, handle or id."),
    ("nexus read", "Your unread messages, oldest first."),
    ("nexus delegate codex@shop \"add a test for refund()\" && nexus listen on",
     "An obligation, then wait for its report."),
    ("nexus status codex@shop", "What a session is doing, without waking it."),
    ("nexus events --action security", "What was refused."),
]
