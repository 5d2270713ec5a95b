"""Which of nexus's hooks Codex has trusted (stdlib only). Codex runs a hook only after the user
reviewed it (`/hooks`), and records each reviewed handler as
`[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` in config.toml; an unreviewed one is
skipped silently. Doctor reports the untrusted ones; a run with approvals routed to nexus needs
the PermissionRequest one (else `--approve-for-me` lets Codex's own reviewer decide)."""

from __future__ import annotations

import json
import os
import re

from ..hookshape import positions


def home_dir() -> str:
    return os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")


def hooks_path(scope: str, project: str) -> str:
    base = os.path.join(project, ".codex") if scope == "project" else home_dir()
    return os.path.join(base, "hooks.json")


def config_path(scope: str, project: str) -> str:
    base = os.path.join(project, ".codex") if scope == "project" else home_dir()
    return os.path.join(base, "config.toml")


def keys(hooks_file: str, hook_conf: dict) -> list[tuple[str, str]]:
    """(event, the key Codex records when it is reviewed) of each nexus handler."""
    return [(event, f"{hooks_file}:{re.sub(r'(?<!^)(?=[A-Z])', '_', event).lower()}:{gi}:{hi}")
            for event, gi, hi in positions(hook_conf)]


def reviewed(conf: dict) -> set[str]:
    hooks = conf.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return set(state) if isinstance(state, dict) else set()


def untrusted(hooks_file: str, hook_conf: dict, conf: dict) -> list[str]:
    done = reviewed(conf)
    return [k for _, k in keys(hooks_file, hook_conf) if k not in done]


def _load(path: str, parse) -> dict:
    try:
        with open(path, "rb") as fh:
            value = parse(fh.read())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def permission_hook(project: str, bypass: bool) -> tuple[str | None, bool]:
    """(the hooks file holding nexus's PermissionRequest handler, whether Codex runs it): user
    scope, then the project's `.codex/`. With `bypass` (--dangerously-bypass-hook-trust) an
    installed handler runs unreviewed."""
    import tomllib

    found = None
    for scope in ("user", "project"):
        hooks_file = hooks_path(scope, project)
        hook_conf = _load(hooks_file, json.loads)
        mine = [k for event, k in keys(hooks_file, hook_conf) if event == "PermissionRequest"]
        if not mine:
            continue
        found = found or hooks_file
        conf = _load(config_path(scope, project), lambda b: tomllib.loads(b.decode("utf-8")))
        if bypass or all(k in reviewed(conf) for k in mine):
            return hooks_file, True
    return found, False
