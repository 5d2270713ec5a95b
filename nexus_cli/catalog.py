"""The features nexus is made of. Each lists its tools in `<feature>/tools.py`; loading them
fills the registry. The faces, the generators and the tests start here."""

from __future__ import annotations

import importlib

from .core.registry import TOOLS, Tool

FEATURES = ("presence", "messages", "tasks", "maintenance", "activity", "reservations", "setup",
            "workspace", "insight", "runs", "approvals", "files", "team")


def load() -> dict[str, Tool]:
    for feature in FEATURES:
        importlib.import_module(f"{__package__}.{feature}.tools")
    return TOOLS


def tool(name: str, module: str) -> Tool:
    """One tool, importing only the feature that registers it (`module`, from its contract
    entry)."""
    if name not in TOOLS:
        importlib.import_module(module)
    return TOOLS[name]
