"""Codex: where its config lives and nexus's edits to it. In config.toml only nexus's own table
is rendered (with tomli-w); every other byte, comments included, stays as it was."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable

from ...core.errors import NexusError
from .. import hookdefs
from ..configfile import Change, config_error, finish, load_json, plan, shape_error
from . import trust
from .trust import config_path, home_dir, hooks_path  # noqa: F401  (they live there)

TABLE = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*nexus\s*(\]|\.)")
HEADER = re.compile(r"^\s*\[")


def server_table(command: str, home: str | None, tools: str | None = None) -> dict:
    table: dict = {"command": command, "args": ["mcp", *(["--tools", tools] if tools else [])],
                   # without it Codex refuses MCP calls under approval_policy = "never"
                   "default_tools_approval_mode": "approve"}
    if home:
        table["env"] = {"NEXUS_HOME": home}
    return table


def parse(path: str, text: str) -> dict:
    """config.toml as data, refused when it does not parse or nexus's part has an odd shape."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise config_error(path, f"not valid TOML ({exc})") from None
    servers = data.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise shape_error(path, f"`mcp_servers` is a {hookdefs.kind(servers)}, not a table")
    ours = servers.get("nexus") if isinstance(servers, dict) else None
    if ours is not None and not isinstance(ours, dict):
        raise shape_error(path, f"`mcp_servers.nexus` is a {hookdefs.kind(ours)}, not a table")
    return data


def without_nexus_table(text: str) -> str:
    """The text with every `[mcp_servers.nexus...]` table cut out, nothing else touched."""
    lines = text.splitlines(keepends=True)
    return "".join(_cut_tables(lines, [i for i, line in enumerate(lines) if TABLE.match(line)]))


def _cut_tables(lines: list[str], starts: list[int]) -> list[str]:
    """The lines without the tables whose headers are at `starts`: each header, its lines and
    the blank lines after them, up to the next header or to a comment after its last setting
    (a comment there heads what follows: it stays). A table that ended the file takes the one
    blank line before it too (nexus put it there)."""
    for index in sorted(starts, reverse=True):
        end = next((j for j in range(index + 1, len(lines)) if HEADER.match(lines[j])),
                   len(lines))
        last = max((j for j in range(index + 1, end) if lines[j].strip()
                    and not lines[j].lstrip().startswith("#")), default=index)
        end = next((j for j in range(last + 1, end) if lines[j].lstrip().startswith("#")), end)
        del lines[index:end]
        if index and index == len(lines) and not lines[-1].strip():
            lines.pop()
    return lines


def _others(data: dict) -> dict:
    """Everything but nexus's own table."""
    out = dict(data)
    servers = dict(out.get("mcp_servers") or {})
    servers.pop("nexus", None)
    if servers:
        out["mcp_servers"] = servers
    else:
        out.pop("mcp_servers", None)
    return out


def edit_config(path: str, text: str | None, install: bool, command: str,
                home: str | None, tools: str | None = None) -> str | None:
    import tomli_w

    original = parse(path, text or "")
    servers = original.get("mcp_servers") or {}
    ours = server_table(command, home, tools) if install else None
    if servers.get("nexus") == ours:
        return text  # already so: every byte stays
    rest = without_nexus_table(text or "")
    if install:
        if rest and not rest.endswith("\n"):
            rest += "\n"
        rest += ("\n" if rest else "") + tomli_w.dumps({"mcp_servers": {"nexus": ours}})
    try:
        result: dict | None = tomllib.loads(rest)
    except tomllib.TOMLDecodeError:
        result = None
    if result is None or _others(result) != _others(original) or (
            result.get("mcp_servers") or {}).get("nexus") != ours:
        raise NexusError(
            "config_conflict", path,
            "nexus's MCP server is defined there in a form nexus cannot edit without touching "
            "other settings (an inline table or dotted keys)",
            "remove `mcp_servers.nexus` by hand, then run the command again")
    return rest if rest.strip() else None


def edit_hooks(path: str, text: str | None, install: bool, filled: dict[str, str]) -> str | None:
    old = load_json(path, text)
    hookdefs.check_shape(path, old)
    return finish(text, old, hookdefs.edited(old, "codex", install, filled))


def changes(scope: str, project: str, install: bool, home: str | None,
            tools: str | None = None, trusted: bool = False,
            told: list[str] | None = None) -> list[Change]:
    """The edits of an install (with `trusted`, also the trust of nexus's handlers in the
    user's config.toml) or an uninstall, with Codex's records in the user's config.toml kept
    true: those of the places nexus's handlers leave go, and those of the handlers the edit
    moves follow them (trust.moves; Codex keys a review by place). When a handler moves, a
    record nexus cannot edit cleanly refuses the whole change (nothing is written: the other
    hooks would be skipped); otherwise it is left as it is, and `told` says so."""
    command = hookdefs.nexus_command()
    filled = hookdefs.fills(home)
    hooks = hooks_path(scope, project)
    config = config_path(scope, project)
    out = [plan(hooks, lambda t: edit_hooks(hooks, t, install, filled)),
           plan(config, lambda t: edit_config(config, t, install, command, home, tools))]
    before = load_json(hooks, out[0].before)
    after = load_json(hooks, out[0].after) if out[0].after is not None else {}
    path = trust.state_path()
    moved = trust.moves(hooks, before, after)
    kept = {key for _, key in trust.keys(hooks, after)}
    gone = [key for _, key in trust.keys(hooks, before) if key not in kept and key not in moved]
    left = None if moved or trusted else \
        f"left Codex's records of nexus's hooks in {path} as they are"
    # first, so that a handler moving into one of those places keeps its own record
    if not _edit_state(out, lambda t: untrust_state(path, t, gone), told, left):
        return out
    _edit_state(out, lambda t: rekey_state(path, t, moved), told, None)
    if install and trusted:  # last: nexus's handlers are where they stay
        _edit_state(out, lambda t: trust_state(path, t, hooks, after), told, None)
    return out


def once_written(out: list[Change], project: str) -> tuple[bool, bool]:
    """(every nexus hook reviewed, the project trusted) as Codex will read them once `out` (an
    install's changes) is written: what the install's notes need say. Unreadable: (False,
    False), and the notes say it all."""
    try:
        hook_conf = load_json(out[0].path, out[0].after) if out[0].after is not None else {}
        conf = tomllib.loads(_pending(out)[1].after or "")
    except (NexusError, tomllib.TOMLDecodeError):
        return False, False
    projects = conf.get("projects")
    entry = projects.get(project) if isinstance(projects, dict) else None
    return (not trust.untrusted(out[0].path, hook_conf, conf),
            isinstance(entry, dict) and entry.get("trust_level") == "trusted")


def _pending(out: list[Change]) -> tuple[int | None, Change]:
    """The user's config.toml as `out` leaves it: (its place among them, its change), or (None,
    the file as it is)."""
    from ..configfile import read_text

    path = trust.state_path()
    at = next((i for i, c in enumerate(out) if c.target == os.path.realpath(path)), None)
    return (at, out[at]) if at is not None else (None, Change(path, *[read_text(path)] * 2))


def _edit_state(out: list[Change], edit: Callable[[str | None], str | None],
                told: list[str] | None, left: str | None) -> bool:
    """`edit` applied to the user's config.toml as `out` leaves it so far (its change added
    when it is not among them yet); False when it was refused: then with `left` (what to say)
    the file stays as it is and `told` says why (nexus never rewrites what it cannot read),
    else the refusal is raised."""
    try:
        at, current = _pending(out)
        change = Change(current.path, current.before, edit(current.after))
    except NexusError as exc:
        if left is None:
            raise
        if told is not None:
            told.append(f"{left}: {exc.reason}; {exc.action}")
        return False
    if at is not None:
        out[at] = change
    elif change.changed:
        out.append(change)
    return True


_STATE_KEY = re.compile(r"""^(\s*\[\s*hooks\s*\.\s*state\s*\.\s*)("(?:[^"\\]|\\.)*"|'[^']*')""")


def rekey_state(path: str, text: str | None, moved: dict[str, str]) -> str | None:
    """config.toml with Codex's records (`[hooks.state."<key>"]` tables) of handlers that moved
    (`moved`: old key -> new) under their new keys, every other byte as it was. A record found at
    a new key and not moving itself (nexus's own, of where its handler was) goes: it would speak
    for the handler that moves there. A record nexus cannot rename without touching other
    settings (an inline table, dotted keys) is refused (config_conflict)."""
    import copy
    import json

    if not moved:
        return text  # nothing moves: the file is not even read
    original = parse(path, text or "")
    table = trust.state(original)
    present = {old: new for old, new in moved.items() if old in table}
    if not present:
        return text
    stale = [k for k in table if k in present.values() and k not in present]
    lines = _without_tables((text or "").splitlines(keepends=True), stale)
    for key, index in _state_headers(lines).items():
        if key in present:
            found = _STATE_KEY.match(lines[index])
            if found:  # the key as a TOML basic string: JSON's escapes, and DEL's, which TOML's
                quoted = json.dumps(present[key], ensure_ascii=False).replace("\x7f", "\\u007f")
                lines[index] = found.group(1) + quoted + lines[index][found.end():]
    rest = "".join(lines)
    expected = copy.deepcopy(original)
    state = trust.state(expected)
    for key in stale:
        state.pop(key)
    state.update({new: state.pop(old) for old, new in present.items()})
    try:
        result: dict | None = tomllib.loads(rest)
    except tomllib.TOMLDecodeError:
        result = None
    if result is None or _bare(result) != _bare(expected):
        raise NexusError(
            "config_conflict", path,
            "Codex's records of the hooks this change moves (`hooks.state`) are written there in "
            "a form nexus cannot rename without touching other settings (an inline table or "
            "dotted keys), and Codex would skip those hooks; nothing was changed",
            'write each as a table of its own (`[hooks.state."<key>"]`, as Codex writes them), '
            "then run the command again")
    return rest if rest.strip() else None


def untrust_state(path: str, text: str | None, keys: list[str]) -> str | None:
    """config.toml without Codex's records (`[hooks.state."<key>"]` tables) of these keys (nexus's
    handlers, being uninstalled), every other byte as it was; None when nothing is left. A record
    nexus cannot take out without touching other settings (an inline table, dotted keys) is
    refused (config_conflict); a file that does not parse too (config_invalid)."""
    if not keys:
        return text  # nothing to look for: the file is not even read
    original = parse(path, text or "")
    present = [k for k in keys if k in trust.state(original)]
    if not present:
        return text
    lines = _without_tables((text or "").splitlines(keepends=True), present)
    rest = "".join(lines)
    try:
        result: dict | None = tomllib.loads(rest)
    except tomllib.TOMLDecodeError:
        result = None
    if result is None or _bare(result) != _bare(_without_keys(original, present)):
        raise NexusError(
            "config_conflict", path,
            "Codex's records of nexus's hooks (`hooks.state`) are written there in a form nexus "
            "cannot take out without touching other settings (an inline table or dotted keys)",
            f"remove the `hooks.state` entries of {present[0].rsplit(':', 3)[0]} by hand")
    return rest if rest.strip() else None


def _without_tables(lines: list[str], keys: list[str]) -> list[str]:
    """The lines without the `[hooks.state."<key>"]` tables of these keys (_cut_tables)."""
    return _cut_tables(lines, [i for k, i in _state_headers(lines).items() if k in keys])


def _without_keys(data: dict, keys: list[str]) -> dict:
    import copy

    out = copy.deepcopy(data)
    table = trust.state(out)
    for key in keys:
        table.pop(key, None)
    return out


def _bare(data: dict) -> dict:
    """The data with an empty `hooks.state` and an empty `hooks` left out (a header alone)."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    out, inner = dict(data), dict(hooks)
    if inner.get("state") == {}:
        inner.pop("state")
    if inner:
        out["hooks"] = inner
    else:
        out.pop("hooks")
    return out


def trust_state(path: str, text: str | None, hooks_file: str, hook_conf: dict) -> str | None:
    """config.toml with `trusted_hash` recorded for each of nexus's handlers in `hook_conf` (as
    Codex's /hooks review records it), every other byte as it was. Another tool's handlers and
    their state are never touched; a state nexus cannot edit without touching other settings
    (an inline table, dotted keys) is refused."""
    import tomli_w

    original = parse(path, text or "")
    wanted = {key: value for _, key, value in trust.hashes(hooks_file, hook_conf)}
    done = trust.state(original)
    todo = {k: v for k, v in wanted.items()
            if not (isinstance(done.get(k), dict) and done[k].get("trusted_hash") == v)}
    if not todo:
        return text
    lines = (text or "").splitlines(keepends=True)
    headers = {k: i for k, i in _state_headers(lines).items() if k in todo}
    for key, index in sorted(headers.items(), key=lambda kv: -kv[1]):
        end = next((j for j in range(index + 1, len(lines)) if HEADER.match(lines[j])),
                   len(lines))
        body = [line for line in lines[index + 1:end] if not _sets_trusted_hash(line)]
        lines[index + 1:end] = [f"trusted_hash = {tomli_w.dumps({'v': todo.pop(key)})[4:]}",
                                *body]
    rest = "".join(lines)
    if todo:
        if rest and not rest.endswith("\n"):
            rest += "\n"
        rest += ("\n" if rest else "") + tomli_w.dumps(
            {"hooks": {"state": {k: {"trusted_hash": v} for k, v in todo.items()}}})
    try:
        result: dict | None = tomllib.loads(rest)
    except tomllib.TOMLDecodeError:
        result = None
    if result is None or _without_trust(result, wanted) != _without_trust(original, wanted) or \
            any((trust.state(result).get(k) or {}).get("trusted_hash") != v
                for k, v in wanted.items()):
        raise NexusError(
            "config_conflict", path,
            "Codex's hook state (`hooks.state`) is written there in a form nexus cannot edit "
            "without touching other settings (an inline table or dotted keys)",
            "review nexus's hooks in Codex instead: start `codex`, run /hooks and trust them")
    return rest


def _state_headers(lines: list[str]) -> dict[str, int]:
    """key -> index of its `[hooks.state."<key>"]` table header among `lines`."""
    out = {}
    for i, line in enumerate(lines):
        if HEADER.match(line) and not line.lstrip().startswith("[["):
            try:
                path_of = tomllib.loads(line)
            except tomllib.TOMLDecodeError:
                continue
            inner = path_of.get("hooks", {}).get("state") if len(path_of) == 1 else None
            if isinstance(inner, dict) and len(inner) == 1:
                out[next(iter(inner))] = i
    return out


def _sets_trusted_hash(line: str) -> bool:
    try:
        return set(tomllib.loads(line)) == {"trusted_hash"}
    except tomllib.TOMLDecodeError:
        return False


def _without_trust(data: dict, wanted: dict) -> dict:
    """The data with the `trusted_hash` of the given keys taken out."""
    import copy

    out = copy.deepcopy(data)
    table = trust.state(out)
    for key in wanted:
        entry = table.get(key)
        if isinstance(entry, dict):
            entry.pop("trusted_hash", None)
            if not entry:
                table.pop(key)
    if isinstance(out.get("hooks"), dict) and out["hooks"].get("state") == {}:
        out["hooks"].pop("state")
        if not out["hooks"]:
            out.pop("hooks")
    return out


def inspect(scope: str, project: str) -> dict:
    from ..configfile import read_text

    hooks = hooks_path(scope, project)
    config = config_path(scope, project)
    conf_text = read_text(config)
    conf = parse(config, conf_text) if conf_text else {}
    servers = conf["mcp_servers"] if isinstance(conf.get("mcp_servers"), dict) else {}
    hook_conf = load_json(hooks, read_text(hooks))
    hookdefs.check_shape(hooks, hook_conf)
    unread = ""  # why the user's config.toml, where a project's trust is, cannot be read
    if trust.state_path() != config:  # a project's hooks are trusted in the user's config
        try:
            state_text = read_text(trust.state_path())
            conf = parse(trust.state_path(), state_text) if state_text else {}
        except NexusError as exc:  # the project's own files are still worth a look
            conf, unread = {}, exc.message
    judged = trust.judge(hooks, hook_conf, conf)
    return {"hooks_file": hooks, "hooks": hookdefs.installed(hook_conf), "trust_unread": unread,
            "outdated": hookdefs.outdated(hook_conf, "codex"),
            "mcp_file": config, "mcp": servers.get("nexus"),
            "trust": judged, "untrusted": [j["key"] for j in judged
                                           if j["status"] != trust.TRUSTED],
            "handlers": len(judged)}
