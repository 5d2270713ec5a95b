"""Which handlers in a client's hook table are nexus's own (stdlib only): install, uninstall and
doctor edit and read them through hookdefs; a run reads them to know whether Codex trusts nexus's
PermissionRequest hook."""

from __future__ import annotations

import os
import re
import shlex

# a handler nexus installed is exactly `[<present>] [<guard>] [NEXUS_HOME=<dir>] <path>/nexus
# hook <client> [--wait]`: <present> the test that the script is there (`[ -x <path>/nexus ] ||
# exit 0; `: once nexus is removed without `nexus uninstall`, the client goes on silently), the
# guard one of the shell tests of hooks/*.json: the client process's news marker (PostToolUse;
# with the team database's file and variable beside it), the store's reservation marker
# (PreToolUse of the file-editing tools) or a run's variable (PermissionRequest: only `nexus
# run` clients ask nexus)
ENV_PREFIX = re.compile(r"\ANEXUS_HOME=")
_PATH = r'(?:\'[^\']*\'|"[^"]*"|[^\s\'"])+?'
PRESENT = re.compile(rf"\A\[ -x {_PATH} \] \|\| exit 0; ")
GUARD = re.compile(rf'\A\[ (?:-e {_PATH}(/"\$PPID"( -o -e {_PATH} -o -n "\$NEXUS_DATABASE_URL")?)?'
                   r'|(-n "\$NEXUS_RUN")) \] \|\| exit 0; ')


def unguarded(command: str) -> str:
    """A handler's command without its leading shell tests (what runs nexus)."""
    return GUARD.sub("", PRESENT.sub("", command, count=1), count=1)


def is_ours(handler: object) -> bool:
    """Whether a handler is one nexus installed: its command is exactly the shape nexus writes.
    A user's own handler that merely mentions nexus (`audit.sh && nexus hook claude`) is not."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    command = unguarded(handler["command"])
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if words and ENV_PREFIX.match(words[0]):
        words = words[1:]
    return (len(words) in (3, 4) and os.path.basename(words[0]) == "nexus"
            and words[1] == "hook" and words[2] in ("claude", "codex")
            and words[3:] in ([], ["--wait"]))


def positions(config: dict, ours: bool = True) -> list[tuple[str, int, int]]:
    """(event, group index, handler index) of every nexus handler in a hook table (`ours`
    False: of every other handler), in the table's order."""
    found = []
    table = config.get("hooks")
    for event, groups in (table.items() if isinstance(table, dict) else ()):
        for gi, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for hi, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if is_ours(handler) == ours:
                    found.append((event, gi, hi))
    return found
