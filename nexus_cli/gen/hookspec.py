"""What nexus reads from each client's hook events and what it writes back: the source of
contract/hook.json (the installed definitions themselves are data in hooks/)."""

from __future__ import annotations

COMMON = ["hook_event_name", "session_id", "cwd", "transcript_path"]
CONTEXT = {"stdout": {"hookSpecificOutput": {"hookEventName": "<event>",
                                             "additionalContext": "<announcement>"}}}

EVENTS = {
    "SessionStart": {
        "reads": [*COMMON, "source"],
        "does": "registers or revives the session; any other conversation its client process "
                "ran goes offline (one at a time); with source clear (or startup, from a "
                "process that already ran one: Codex /new) the most recent of them is its "
                "predecessor and hands over (see lifecycle), its file reservations included; "
                "compact changes nothing",
        "writes": {**CONTEXT, "when": "always: your name and id, up to five peers, who can "
                                      "answer right away, how to use peers/send/read, any "
                                      "unread messages, and the project's file reservations"},
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
        "matcher": "^mcp__nexus__ (nexus's own MCP tools only)",
        "does": "status working; binds tool_use_id to the session (the MCP server's caller)",
        "writes": {"stdout": None, "when": "never"},
    },
    "PreToolUse (file edits)": {
        "reads": [*COMMON, "tool_name", "tool_input"],
        "matcher": "Edit|MultiEdit|NotebookEdit|Write|apply_patch|Bash (exact names; Codex "
                   "matches its apply_patch under apply_patch, Edit and Write, and its shell "
                   "tool under Bash)",
        "guard": "the installed command first tests <store>/reserved in the client's shell and "
                 "exits 0 without starting Python while no file reservation may be active",
        "tool_input": {"claude": "Write, Edit, MultiEdit: file_path; NotebookEdit: "
                                 "notebook_path (absolute); Bash: {\"command\": ...}, the files "
                                 "it visibly writes (as for Codex)",
                       "codex": "apply_patch: {\"command\": <the patch>}; the files are on its "
                                "*** Add File: / Update File: / Delete File: / Move to: lines "
                                "(read liberally: padded, tabbed, any case), relative to cwd; "
                                "Bash (the shell tool): {\"command\": ..., \"workdir\"?}, read "
                                "as bash reads it for the files it visibly writes "
                                "(redirections, tee, sed -i, cp/mv, apply_patch, editors ..., "
                                "after cd, env -C, bash -c and variables it sets); a file it "
                                "writes that cannot be named counts as anything under the "
                                "deepest directory known"},
        "does": "looks each file up by its path and its directories (read-only, one indexed "
                "query); records nothing about the session; with autoReserve on, takes a shared "
                "automatic reservation of each file it does not hold (a write, admitted like "
                "every hook event)",
        "writes": {"stdout": {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                     "permissionDecision": "deny",
                                                     "permissionDecisionReason": "[nexus] <file> "
                                                     "is reserved by <name> (<handle>) until "
                                                     "<HH:MM> for \"<reason>\"; ask it with "
                                                     "`nexus ask <handle> ...` or pick other "
                                                     "work"}},
                   "when": "another session holds one of the files exclusively (both clients "
                           "block the tool and show the model the reason; no PostToolUse "
                           "follows)"},
    },
    "PostToolUse": {
        "reads": [*COMMON, "tool_name"],
        "guard": "the installed command first tests <store>/news/$PPID in the client's shell and "
                 "exits 0 without starting Python when the client process has no news (raised "
                 "by a message's INSERT, lowered by a hook once all is announced); so last_tool "
                 "and activity are recorded only for nexus's tools and calls with news. In team "
                 "mode (team.url exists or NEXUS_DATABASE_URL is set) it also passes, and the "
                 "hook asks the team database in one round trip before anything else: nothing "
                 "new, and it exits 0 there",
        "does": "status working; lowers the news marker once nothing is left to announce. A "
                "subagent's (Task tool: `agent_id` set) tool call is its session's activity "
                "only: nothing is announced into the subagent's context, which is not the "
                "conversation that owns the inbox",
        "writes": {**CONTEXT, "when": "messages never announced before have arrived (tasks "
                                      "delegated in queue mode wait for the next turn), in the "
                                      "main conversation"},
    },
    "Stop": {
        "reads": [*COMMON, "stop_hook_active", "last_assistant_message"],
        "does": "status idle; idle notices to senders who asked (--notify-when-idle); in listen "
                "mode, unattended (`claude -p`, `codex exec`), waits up to 590 s for a message "
                "(a person's session listens in its background Stop hook instead)",
        "writes": {"claude": {"stdout": {"hookSpecificOutput": {
                       "hookEventName": "Stop",
                       "additionalContext": "<announcement>, Automatic turn n of N"}},
                       "shown": "Stop hook says: <announcement>"},
                   "codex": {"stdout": {"decision": "block",
                                        "reason": "<announcement>, Automatic turn n of N"},
                             "shown": "Blocked by hook (0.171.0 has no other reply that "
                                      "continues a turn)"},
                   "when": "messages never announced before (one that may wake it: not all "
                           "`send --no-wake`, and the session accepts waking) and "
                           "stop_hook_active is false, or a message arrived while listening; "
                           "never past maxAutoTurns; mail already announced forces no turn"},
    },
    "PermissionRequest": {
        "reads": [*COMMON, "tool_name", "tool_input", "permission_mode"],
        "does": "status waiting, with what it waits for (the tool and its command or file), "
                "until its transcript grows again or another event arrives (nobody waits in an "
                "unattended `claude -p`: status working); from a subagent as from its session. "
                "For a run started with --approvals nexus, and only from the very client "
                "process it started: records the request (tool, a one-line summary of "
                "tool_input, session), sends its dispatcher a notice, and waits (up to "
                "approvalTimeout) for `nexus approve`; anyone else's request: no answer",
        "writes": {"stdout": {"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow | deny", "message": "<why, when denied>"}}},
            "when": "a routed request was answered (allow-once: allow; reject: deny), or its "
                    "time ran out (deny, never allow); no output otherwise (the client decides "
                    "as it would)"},
    },
    "Stop --wait": {
        "reads": [*COMMON],
        "does": "background idle wait (up to an hour; the session shows as listening "
                "meanwhile), and the listen mode of a person's session (interactive Claude Code; "
                "the Codex TUI, whose rollout says `source: cli`); ends on any new activity, "
                "when the client exits; not started in unattended Claude runs "
                "(CLAUDE_CODE_SESSION_ATTENDED=0) or for a session that does not want to be "
                "woken; a `send --no-wake` message does not end it; the automatic turn is "
                "counted in the write that composes the announcement. In a person's Claude Code "
                "session new activity pauses it instead: it follows the turn (a look every 2 s) "
                "and waits again when the turn ends without a Stop hook (Esc; the client's "
                "registry says idle), or leaves when the turn's Stop runs",
        "writes": {"claude": {"exit": 2, "stderr": "<announcement>",
                              "shown": "the hook definition's rewakeSummary (nexus: news for "
                                       "this session)"},
                   "codex": {"runs": "codex queue --thread <session id> --message "
                                     "<announcement> (NEXUS_CODEX_COMMAND overrides codex); on "
                                     "failure exit 1, stderr names why, and the session's and "
                                     "tasks' records say so"},
                   "when": "a message arrives and the automatic turn limit allows a wake"},
    },
    "SessionEnd": {
        "reads": [*COMMON, "reason"],
        "does": "status offline, the reason kept (a `clear` pairs with the next SessionStart of "
                "the same process within 60 s); idle notices to senders who asked; its file "
                "reservations end (after a `clear` that hands over, the successor takes them)",
        "writes": {"stdout": None, "when": "never"},
    },
}

# What the pinned clients send when a conversation is replaced, compacted or resumed (observed
# with Claude Code 2.1.332 and Codex 0.171.0 in tmux; tests/test_handoff.py feeds these).
LIFECYCLE = {
    "claude": {
        "/clear": "SessionEnd(reason clear, old id) then SessionStart(source clear, new id) from "
                  "the same process, ~0.1 s apart (the SessionEnd hook is awaited first): a "
                  "handoff",
        "/compact and auto-compaction": "PreCompact, SessionStart(source compact, same id), "
                                        "PostCompact; no SessionEnd: the same conversation",
        "/resume inside a session": "SessionEnd(reason resume, current id) then "
                                    "SessionStart(source resume, the resumed existing id), same "
                                    "process: a switch, not a handoff",
        "claude --resume / --continue": "SessionStart(source resume, the same id) from a new "
                                        "process at launch: the same conversation, moved",
        "exit": "SessionEnd(prompt_input_exit), or other on SIGHUP and at the end of claude -p",
    },
    "codex": {
        "/new, /clear": "at most SessionEnd(reason other, old id), some time after; "
                        "SessionStart(source startup for /new, clear for /clear, new id) just "
                        "before the next prompt, the old thread still idle or just ended: a "
                        "handoff",
        "/compact and auto-compaction": "PreCompact, PostCompact, then SessionStart(source "
                                        "compact, same id) at the next prompt: the same "
                                        "conversation",
        "/resume (picker)": "nothing at selection; SessionStart(source resume, existing id) at "
                            "the next prompt, same process: a switch",
        "codex resume / codex exec resume": "SessionStart(source resume, the same id) from a "
                                            "new process at the first prompt: the same "
                                            "conversation, moved",
        "exit": "SessionEnd(reason other) for every thread the process loaded (none on "
                "SIGHUP); SessionEnd hooks are cut off after 3 s",
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
    "installed": "each handler's command starts with `[ -x <the nexus script> ] || exit 0;`: "
                 "once nexus is removed without `nexus uninstall`, it exits 0 with no output",
    "ignored": "any other event, and unknown fields: no write, no output",
    "failure": "malformed stdin or an unusable store: one line on stderr, exit 1 "
               "(non-blocking for the client), nothing written",
    "lifecycle": LIFECYCLE,
    "settings": {"file": "config.toml (`nexus config list`)", "maxAutoTurns": 8, "handoff": 1,
                 "autoReserve": 0},
}
