"""What nexus reads from each client's hook events and what it writes back: the source of
contract/hook.json (the installed definitions themselves are data in hooks/)."""

from __future__ import annotations

COMMON = ["hook_event_name", "session_id", "cwd", "transcript_path"]
CONTEXT = {"stdout": {"hookSpecificOutput": {"hookEventName": "<event>",
                                             "additionalContext": "<announcement>"}}}

EVENTS = {
    "SessionStart": {
        "reads": [*COMMON, "source"],
        "does": "registers or revives the session; after source clear/compact in the same "
                "client process, links it to its predecessor (which goes offline)",
        "writes": {**CONTEXT, "when": "always: your name and id, up to five peers, who can "
                                      "answer right away, how to use peers/send/read, and any "
                                      "unread messages"},
    },
    "UserPromptSubmit": {
        "reads": [*COMMON, "prompt"],
        "does": "status working; resets the automatic turn count unless within 60 s of a wake",
        "writes": {**CONTEXT, "when": "unread messages, notices or tasks exist: the count and up "
                                      "to five listed (sender, time, first line), and a line "
                                      "about open tasks assigned to the session"},
    },
    "PreToolUse": {
        "reads": [*COMMON, "tool_name", "tool_use_id"],
        "does": "status working; binds tool_use_id to the session (the MCP server's caller)",
        "writes": {"stdout": None, "when": "never"},
    },
    "PostToolUse": {
        "reads": [*COMMON, "tool_name"],
        "does": "status working",
        "writes": {**CONTEXT, "when": "messages never announced before have arrived (tasks "
                                      "delegated in queue mode wait for the next turn)"},
    },
    "Stop": {
        "reads": [*COMMON, "stop_hook_active", "last_assistant_message"],
        "does": "status idle; idle notices to senders who asked (--notify-when-idle); in listen "
                "mode waits up to 590 s for a message",
        "writes": {"stdout": {"decision": "block", "reason": "<announcement>, Automatic turn n "
                                                              "of N"},
                   "when": "unread messages and stop_hook_active is false, or a message "
                           "arrived while listening; never past maxAutoTurns"},
    },
    "Stop --wait": {
        "reads": [*COMMON],
        "does": "background idle wait (up to an hour); ends on any new activity, when the "
                "client exits, or in unattended Claude runs (CLAUDE_CODE_SESSION_ATTENDED=0)",
        "writes": {"claude": {"exit": 2, "stderr": "<announcement>"},
                   "codex": {"runs": "codex queue --thread <session id> --message "
                                     "<announcement> (NEXUS_CODEX_COMMAND overrides codex); on "
                                     "failure exit 1, stderr names why, and the session's and "
                                     "tasks' records say so"},
                   "when": "a message arrives and the automatic turn limit allows a wake"},
    },
    "SessionEnd": {
        "reads": [*COMMON, "reason"],
        "does": "status offline; idle notices to senders who asked",
        "writes": {"stdout": None, "when": "never"},
    },
}

SPEC = {
    "entry": "nexus hook claude|codex [--wait] (stdin: the client's event JSON)",
    "clients": {
        "claude": {"config": "~/.claude/settings.json (or .claude/settings.json)",
                   "definitions": "hooks/claude.json", "events": EVENTS},
        "codex": {"config": "~/.codex/hooks.json (or .codex/hooks.json)",
                  "definitions": "hooks/codex.json", "events": EVENTS},
    },
    "ignored": "any other event, and unknown fields: no write, no output",
    "failure": "malformed stdin or an unusable store: one line on stderr, exit 1 "
               "(non-blocking for the client), nothing written",
    "settings": {"file": "$NEXUS_HOME/settings.json", "maxAutoTurns": 8},
}
