"""One error hierarchy with stable codes, one message shape, one table of exit codes.

Every failure nexus reports, on the CLI, over MCP or from a hook, is a `NexusError` whose text is
`<code>: <key> (<reason>; <next action>)`. Stdlib only: the hook hot path imports this module.
"""

from __future__ import annotations


class Exit:
    """Process exit codes, documented in docs/output.md and contract/errors.json. Plain numbers
    (an IntEnum's class costs a hook a tenth of a millisecond to build); `exits()` lists them."""

    OK = 0
    # a check failed (doctor), or a hook could not do its job (non-blocking for clients)
    FAILURE = 1
    USAGE = 2  # bad arguments or input: nothing was written
    NOT_FOUND = 3  # the target, message or task does not exist (or is not yours to see)
    CONFLICT = 4  # the request contradicts stored state (idempotency key reuse, name taken, ...)
    FORBIDDEN = 5  # the caller may not do this (acting as another session, ...)
    STORE = 6  # the store cannot be used as it is (corrupt, foreign, newer, insecure, read-only)
    TIMEOUT = 7  # a wait ended without an answer; the request stays pending
    CONFIG = 8  # a client's config file cannot be used as it is (does not parse, unwritable)
    INTERNAL = 70  # a bug in nexus: please report it
    OUTPUT = 74  # the result could not be written out (stdout closed or full); nothing consumed


def exits() -> dict[int, str]:
    """Every exit code and its name (`usage`, `not_found`, ...), in the order above."""
    return {v: k.lower() for k, v in vars(Exit).items() if k.isupper()}


# code -> (exit code, what it means). The single source for contract/errors.json.
CODES: dict[str, tuple[int, str]] = {
    "invalid_argument": (Exit.USAGE, "An argument is missing, of the wrong type or out of range."),
    "invalid_input": (Exit.USAGE, "Input read from stdin or a file is not what was expected."),
    "usage_error": (Exit.USAGE, "The command line could not be parsed."),
    "unknown_tool": (Exit.USAGE, "No tool of that name exists (or it is not served here)."),
    "target_not_found": (Exit.NOT_FOUND, "No session in scope matches the target."),
    "target_ambiguous": (Exit.CONFLICT, "Several sessions match the target; the error lists them."),
    "id_ambiguous": (Exit.CONFLICT, "A shortened id begins several ids; the error lists them."),
    "target_is_self": (Exit.USAGE, "The target resolves to the caller itself."),
    "agents_only": (Exit.USAGE, "The tool works through a client's hooks; a person at a shell "
                                "has another (the error names it)."),
    "message_not_found": (Exit.NOT_FOUND, "No message with that id was sent to the caller."),
    "task_not_found": (Exit.NOT_FOUND, "No task with that id involves the caller."),
    "not_assignee": (Exit.FORBIDDEN, "Only the session a task was assigned to may report it."),
    "task_already_reported": (Exit.CONFLICT, "The task already has a different final report."),
    "task_history_full": (Exit.CONFLICT, "Every task record is unfinished; none can be evicted."),
    "request_id_conflict": (Exit.CONFLICT, "The request id was already used for other content."),
    "name_taken": (Exit.CONFLICT, "Another live session already uses that name."),
    "reservation_conflict": (Exit.CONFLICT, "Another session holds a conflicting file "
                                            "reservation; the error lists the holders."),
    "caller_unknown": (Exit.FORBIDDEN, "The caller could not be identified for a tool that "
                                       "needs one."),
    "impersonation_refused": (Exit.FORBIDDEN, "A session tried to act as another session."),
    "people_only": (Exit.FORBIDDEN, "Only the person may do this (an agent may not), e.g. change "
                                    "a setting."),
    "hook_refused": (Exit.FORBIDDEN, "A hook event did not come from its session's own client "
                                     "process."),
    "subagent_refused": (Exit.FORBIDDEN, "A Claude Code subagent (Task tool) called a tool that "
                                         "changes something: only the conversation that owns the "
                                         "inbox may."),
    "store_unreadable": (Exit.STORE, "The store file exists but cannot be read as a nexus store."),
    "store_newer": (Exit.STORE, "The store was written by a newer nexus with a newer schema."),
    "store_outdated": (Exit.STORE, "The store predates this nexus; a write command migrates it."),
    "store_insecure": (Exit.STORE, "The store directory or file is accessible to other users."),
    "store_readonly": (Exit.STORE, "The store cannot be written (read-only file system or file)."),
    "store_full": (Exit.STORE, "The disk holding the store is full."),
    "store_io": (Exit.STORE, "A disk I/O error while using the store; nothing was committed."),
    "row_invalid": (Exit.STORE, "A row of the store is not what nexus writes (written by hand, "
                                "or by a team member with plain SQL): nexus reads past it; "
                                "`nexus doctor` names it."),
    "store_busy": (Exit.STORE, "The store stayed locked by another process past the busy timeout."),
    "config_invalid": (Exit.CONFIG, "A client's config file does not parse; it was not touched."),
    "config_unwritable": (Exit.CONFIG, "A client's config file cannot be read or written."),
    "man_unwritable": (Exit.CONFIG, "The manual pages could not be written where man(1) looks."),
    "config_changed": (Exit.CONFIG, "A config file changed while nexus was editing it."),
    "config_conflict": (Exit.CONFIG, "The config defines nexus in a form nexus cannot edit "
                                     "safely."),
    "project_not_found": (Exit.NOT_FOUND, "No project with that id in the shared workspace."),
    "project_exists": (Exit.CONFLICT, "A project with that id already exists."),
    "doc_not_found": (Exit.NOT_FOUND, "No global document with that id."),
    "meeting_not_found": (Exit.NOT_FOUND, "No meeting with that id (or no active meeting)."),
    "meeting_state": (Exit.CONFLICT, "The meeting is not in a state that allows this."),
    "not_initiator": (Exit.FORBIDDEN, "Only the meeting's initiator (or the person at the shell) "
                                      "may end, archive or reopen it."),
    "confirmation_required": (Exit.FORBIDDEN, "A destructive workspace tool needs the person at "
                                              "the shell or an explicit confirm argument."),
    "rate_limited": (Exit.CONFLICT, "Too many workspace calls from one session; retry after the "
                                    "delay the error gives."),
    "transcript_not_found": (Exit.NOT_FOUND, "The session's transcript could not be found or "
                                             "read."),
    "not_your_session": (Exit.FORBIDDEN, "Only the session itself, or the person at the shell, "
                                         "may change it."),
    "run_not_found": (Exit.NOT_FOUND, "No run with that id is visible to the caller (or it "
                                      "was purged)."),
    "run_queue_full": (Exit.CONFLICT, "As many runs as `maxRuns` allows are queued or running."),
    "run_elsewhere": (Exit.CONFLICT, "The run's processes are on another machine: nexus judges "
                                     "and ends a process only on its own machine."),
    "client_unavailable": (Exit.NOT_FOUND, "The client program for a run is not installed."),
    "unknown_preset": (Exit.USAGE, "No preset has that id."),
    "session_started": (Exit.CONFLICT, "The session already ran a turn; only a blank one switches "
                                       "preset."),
    "handoff_not_offered": (Exit.CONFLICT, "That session offers no handoff to the caller (never "
                                           "offered, already taken, or lapsed)."),
    "approval_not_found": (Exit.NOT_FOUND, "No permission request has that id."),
    "approval_mismatch": (Exit.CONFLICT, "The permission request belongs to another session."),
    "not_approver": (Exit.FORBIDDEN, "The caller may not answer that permission request."),
    "approvals_unavailable": (Exit.CONFIG, "A run's permission requests cannot reach nexus: its "
                              "hook is not installed, or Codex has not trusted it."),
    "path_outside_roots": (Exit.FORBIDDEN, "The path is outside the caller's project roots."),
    "path_denied": (Exit.FORBIDDEN, "The path has a sensitive name (keys, tokens, .env), is a "
                    "place that runs code (writes), or a hard-linked file."),
    "path_not_found": (Exit.NOT_FOUND, "No file or directory at that path."),
    "path_kind": (Exit.USAGE, "A directory where a file is needed, or the other way round."),
    "file_too_large": (Exit.USAGE, "The file or content is over the size limit."),
    "file_exists": (Exit.CONFLICT, "create-new found a file already there."),
    "fs_write_disabled": (Exit.FORBIDDEN, "fs_write is off (`nexus config set fsWrite 1`)."),
    "team_unreachable": (Exit.STORE, "The team database server cannot be reached (down, wrong "
                                     "URL, network); nothing was written."),
    "team_url_invalid": (Exit.USAGE, "The team database URL (given, NEXUS_DATABASE_URL or the "
                                     "joined one) is not one PostgreSQL takes; nothing was "
                                     "written."),
    "team_denied": (Exit.FORBIDDEN, "The team database refused the role this (row-level "
                                    "security or missing rights)."),
    "team_auth_failed": (Exit.FORBIDDEN, "The team database server refused the login (a wrong "
                                         "or missing password, an unknown role); nothing was "
                                         "written."),
    "team_server_invalid": (Exit.STORE, "What answers at the team database URL does not speak "
                                        "PostgreSQL's protocol as it must; nothing was "
                                        "written."),
    "team_row_too_large": (Exit.STORE, "A row or a result of the team database is past what "
                                       "one may hold (written or read); nothing was written."),
    "team_unsupported": (Exit.STORE, "The feature needs the local SQLite store; not available in "
                                     "team mode yet."),
    "team_not_joined": (Exit.USAGE, "No team database is configured (`nexus team join URL`)."),
    "timeout": (Exit.TIMEOUT, "A wait ended without an answer."),
    "output_failed": (Exit.OUTPUT, "The result could not be written; nothing was consumed."),
    "internal_error": (Exit.INTERNAL, "An unexpected failure inside nexus."),
}


class NexusError(Exception):
    """A failure with a stable code, the thing it concerns, why, and what to do next."""

    def __init__(self, code: str, key: str, reason: str, action: str, **details: object) -> None:
        if code not in CODES:
            raise ValueError(f"undeclared error code {code!r}")
        self.code, self.key, self.reason, self.action = code, key, reason, action
        self.details = details
        super().__init__(self.message)

    @property
    def exit_code(self) -> int:
        return CODES[self.code][0]

    @property
    def message(self) -> str:
        return f"{self.code}: {self.key} ({self.reason}; {self.action})"

    @property
    def shown(self) -> str:
        """The message for a person's terminal: the key, reason and action may carry text from
        a peer or an argument, so control characters are shown escaped (see core.text)."""
        from .text import visible

        return (f"{self.code}: {visible(self.key, False)} ({visible(self.reason, False)}; "
                f"{visible(self.action, False)})")

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "code": self.code,
            "key": self.key,
            "reason": self.reason,
            "action": self.action,
            "message": self.message,
            "exit_code": self.exit_code,
        }
        if self.details:
            out["details"] = self.details
        return out


def invalid(key: str, reason: str, action: str = "fix the argument and retry") -> NexusError:
    return NexusError("invalid_argument", key, reason, action)
