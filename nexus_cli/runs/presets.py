"""Presets: a named set of run options (model, sandbox tier, system prompt addition, allowed
tools). Built-in ones, plus the user's own in `presets.toml` beside config.toml (read only:
people edit it). The default preset and each blank session's choice are kept in the store
(`run_policy`). Stdlib only."""

from __future__ import annotations

import os

from ..core import settings

TIERS = ("read-only", "workspace-write", "danger-full-access")
BUILTIN: dict[str, dict] = {
    "standard": {"name": "Standard", "description": "The client's own settings; nothing added.",
                 "model": None, "sandbox": None, "system": None, "allowed_tools": []},
    "code": {"name": "Code", "description": "Edits in the working folder; says what it verified.",
             "model": None, "sandbox": "workspace-write",
             "system": "Make the change, run the relevant tests, and end with what you changed "
                       "(absolute paths), what you verified and what is left.",
             "allowed_tools": []},
    "review": {"name": "Review", "description": "Read-only: reads and reports, changes nothing.",
               "model": None, "sandbox": "read-only",
               "system": "Review only: do not modify files. Report findings with absolute paths "
                         "and line numbers.", "allowed_tools": []},
    "minimal": {"name": "Minimal", "description": "Read-only with the reading tools only.",
                "model": None, "sandbox": "read-only", "system": None,
                "allowed_tools": ["Read", "Grep", "Glob"]},
}
DEFAULT = "standard"
FIELDS = ("name", "description", "model", "sandbox", "system", "allowed_tools")


def file(root: str) -> str:
    return os.path.join(os.path.dirname(settings.path(root)), "presets.toml")


def _checked(pid: str, raw: object) -> dict:
    """A user preset, or one marked broken with the reason."""
    if not isinstance(raw, dict):
        return {"broken": "not a table"}
    out: dict = {"name": pid, "description": "", "model": None, "sandbox": None, "system": None,
                 "allowed_tools": []}
    for key, value in raw.items():
        if key not in FIELDS:
            return {"broken": f"unknown key {key!r} (keys: {', '.join(FIELDS)})"}
        if key == "allowed_tools":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return {"broken": "allowed_tools must be a list of tool names"}
        elif not isinstance(value, str):
            return {"broken": f"{key} must be a string"}
        if key == "sandbox" and value not in TIERS:
            return {"broken": f"sandbox must be one of {', '.join(TIERS)}"}
        out[key] = value
    return out


def load(root: str) -> tuple[dict[str, dict], str]:
    """Every preset by id, and where they came from (`builtin` or `builtin+file`)."""
    presets = {k: dict(v) for k, v in BUILTIN.items()}
    path = file(root)
    if not os.path.exists(path):
        return presets, "builtin"
    try:
        import tomllib

        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError) as exc:
        presets["(presets.toml)"] = {"broken": f"the file cannot be read: {exc}"}
        return presets, "builtin+file"
    for pid, raw in data.items():
        presets[pid] = _checked(pid, raw)
    return presets, "builtin+file"
