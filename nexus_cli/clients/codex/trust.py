"""Whether Codex runs nexus's hooks (stdlib only). Codex runs a hook from hooks.json only after
the user reviewed it (`/hooks`), and records each reviewed handler in the user's config.toml as
`[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:<hex>"`. A handler
never reviewed, or whose definition changed since (the hash differs), is skipped silently; so is
one the user turned off (`enabled = false`). Doctor reports each state; a run with approvals
routed to nexus needs the PermissionRequest handler trusted (else `--approve-for-me` lets
Codex's own reviewer decide); `nexus install codex --trust` records the hashes for nexus's
handlers itself.

The hash (`hook_hash`), verified against the pinned Codex 0.171.0 (`codex app-server`
`hooks/list` reports the same `currentHash`, and `codex exec` without
--dangerously-bypass-hook-trust runs a handler trusted with it and skips one trusted with another:
tests/test_realclients.py): SHA-256 over the canonical JSON (keys sorted at every level, compact
separators, UTF-8, no ASCII escaping) of the normalised declaration

    {"event_name": <snake_case event: "post_tool_use">,
     "matcher": <the group's matcher, only when set; never for UserPromptSubmit and Stop>,
     "hooks": [{"type": "command", "command": <as written, before any ${VAR} expansion>,
                "timeout": <seconds: unset 600, at least 1; SessionEnd: unset 1, clamped 1..3>,
                "async": <false when unset>,
                "statusMessage": <only when set>,
                "additionalContextLimit": <only when set, not the default 2500, and the event
                                           can add context: PreToolUse, PostToolUse,
                                           SessionStart, UserPromptSubmit, SubagentStart>}]}

written `sha256:<lowercase hex>`. Fields Codex does not hash (`once`, `commandWindows`) are left
out. The key names the hooks.json by the real path of its folder (Codex resolves a symbolic link
in CODEX_HOME, not a link that is the file itself; nexus resolves a project's folder the same
way, not checked against Codex), and the state of a project's hooks is read from the user's
config.toml too (checked): a project's own config cannot trust its hooks."""

from __future__ import annotations

import hashlib
import json
import os
import re

from ..hookshape import positions

TRUSTED, CHANGED, UNREVIEWED, DISABLED = "trusted", "changed", "unreviewed", "disabled"

DEFAULT_TIMEOUT = 600
SESSION_END_TIMEOUT = (1, 3)  # (unset, the most Codex allows)
NO_MATCHER = ("UserPromptSubmit", "Stop")
CONTEXT_EVENTS = ("PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit",
                  "SubagentStart")
CONTEXT_LIMIT = 2500


def home_dir() -> str:
    return os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")


def hooks_path(scope: str, project: str) -> str:
    base = os.path.join(project, ".codex") if scope == "project" else home_dir()
    return os.path.join(base, "hooks.json")


def config_path(scope: str, project: str) -> str:
    base = os.path.join(project, ".codex") if scope == "project" else home_dir()
    return os.path.join(base, "config.toml")


def state_path() -> str:
    """Where Codex keeps what the user reviewed, for user and project hooks alike."""
    return os.path.join(home_dir(), "config.toml")


def label(event: str) -> str:
    """Codex's name of an event in keys and hashes: PreToolUse -> pre_tool_use."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def key_source(hooks_file: str) -> str:
    return os.path.join(os.path.realpath(os.path.dirname(hooks_file) or "."),
                        os.path.basename(hooks_file))


def keys(hooks_file: str, hook_conf: dict) -> list[tuple[str, str]]:
    """(event, the key Codex records when it is reviewed) of each nexus handler."""
    source = key_source(hooks_file)
    return [(event, f"{source}:{label(event)}:{gi}:{hi}")
            for event, gi, hi in positions(hook_conf)]


def moves(hooks_file: str, before: dict, after: dict) -> dict[str, str]:
    """Codex's keys of the handlers an edit of nexus's handlers moves, old -> new. Codex records
    a review by position, so a handler that moved would count as never reviewed, and be skipped,
    after nexus's were taken out or put back at the end. An edit keeps the other tools' handlers
    in their order, and a reinstall nexus's: the n-th of an event's others (or of nexus's) before
    is the n-th after, when they are the same handlers (checked one by one; an event where they
    are not is left alone: nexus's own after an upgrade that changed them)."""
    source = key_source(hooks_file)
    out = {}
    for ours in (False, True):
        found = [positions(before, ours), positions(after, ours)]
        for event in {e for e, _, _ in found[0]}:
            old, new = ([(g, h) for e, g, h in places if e == event] for places in found)
            if len(old) != len(new) or any(
                    _handler(before, event, g, h) != _handler(after, event, g2, h2)
                    for (g, h), (g2, h2) in zip(old, new, strict=True)):
                continue
            out.update({f"{source}:{label(event)}:{g}:{h}":
                        f"{source}:{label(event)}:{g2}:{h2}"
                        for (g, h), (g2, h2) in zip(old, new, strict=True) if (g, h) != (g2, h2)})
    return out


def _handler(conf: dict, event: str, group: int, index: int) -> tuple:
    """What Codex hashes of a handler comes from: the handler and its group's matcher."""
    return conf["hooks"][event][group]["hooks"][index], conf["hooks"][event][group].get("matcher")


def _timeout(event: str, value: object) -> object:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        return value  # not a number of seconds: Codex would not take it; never matches
    if event == "SessionEnd":
        low, high = SESSION_END_TIMEOUT
        return min(max(low if value is None else value, 1), high)
    return max(DEFAULT_TIMEOUT if value is None else value, 1)


def identity(event: str, group: dict, handler: dict) -> dict:
    """The declaration Codex hashes: one handler with Codex's defaults filled in."""
    normal: dict = {"type": "command", "command": handler.get("command"),
                    "timeout": _timeout(event, handler.get("timeout")),
                    "async": handler.get("async", False)}
    if handler.get("statusMessage") is not None:
        normal["statusMessage"] = handler["statusMessage"]
    limit = handler.get("additionalContextLimit")
    if limit is not None and limit != CONTEXT_LIMIT and event in CONTEXT_EVENTS:
        normal["additionalContextLimit"] = limit
    out = {"event_name": label(event), "hooks": [normal]}
    if group.get("matcher") is not None and event not in NO_MATCHER:
        out["matcher"] = group["matcher"]
    return out


def hook_hash(event: str, group: dict, handler: dict) -> str:
    text = json.dumps(identity(event, group, handler), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def hashes(hooks_file: str, hook_conf: dict) -> list[tuple[str, str, str]]:
    """(event, key, the hash Codex expects) of each nexus handler in a hooks.json."""
    source = key_source(hooks_file)
    out = []
    for event, gi, hi in positions(hook_conf):
        group = hook_conf["hooks"][event][gi]
        out.append((event, f"{source}:{label(event)}:{gi}:{hi}",
                    hook_hash(event, group, group["hooks"][hi])))
    return out


def state(conf: dict) -> dict:
    hooks = conf.get("hooks")
    table = hooks.get("state") if isinstance(hooks, dict) else None
    return table if isinstance(table, dict) else {}


def status(entry: object, expected: str) -> str:
    """trusted / changed (reviewed, but the handler is not what was reviewed) / unreviewed /
    disabled (turned off in /hooks)."""
    if not isinstance(entry, dict):
        return UNREVIEWED
    if entry.get("enabled") is False:
        return DISABLED
    recorded = entry.get("trusted_hash")
    if recorded is None:
        return UNREVIEWED
    return TRUSTED if recorded == expected else CHANGED


def judge(hooks_file: str, hook_conf: dict, conf: dict) -> list[dict]:
    """Each nexus handler in a hooks.json with how Codex treats it, given the user's config."""
    table = state(conf)
    return [{"event": event, "key": key, "hash": expected,
             "status": status(table.get(key), expected)}
            for event, key, expected in hashes(hooks_file, hook_conf)]


def untrusted(hooks_file: str, hook_conf: dict, conf: dict) -> list[str]:
    return [j["key"] for j in judge(hooks_file, hook_conf, conf) if j["status"] != TRUSTED]


def _load(path: str, parse) -> dict:
    try:
        with open(path, "rb") as fh:
            value = parse(fh.read())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def permission_hook(project: str, bypass: bool) -> tuple[str | None, str | None]:
    """(the hooks file holding nexus's PermissionRequest handler, how Codex treats it: TRUSTED,
    CHANGED, UNREVIEWED or DISABLED; None when not installed): user scope, then the project's
    `.codex/`. With `bypass` (--dangerously-bypass-hook-trust) an installed, enabled handler runs
    unreviewed."""
    import tomllib

    found: tuple[str | None, str | None] = (None, None)
    conf = _load(state_path(), lambda b: tomllib.loads(b.decode("utf-8")))
    for scope in ("user", "project"):
        hooks_file = hooks_path(scope, project)
        hook_conf = _load(hooks_file, json.loads)
        mine = [j for j in judge(hooks_file, hook_conf, conf)
                if j["event"] == "PermissionRequest"]
        if not mine:
            continue
        states = {j["status"] for j in mine}
        if states == {TRUSTED} or (bypass and DISABLED not in states):
            return hooks_file, TRUSTED
        worst = next(s for s in (DISABLED, CHANGED, UNREVIEWED) if s in states)
        found = found if found[0] else (hooks_file, worst)
    return found
