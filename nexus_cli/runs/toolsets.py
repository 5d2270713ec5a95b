"""What a run's client may use (seed 001's `harness_list_tools`, as it means here): for each
client, preset and tier, the flags nexus starts it with, the tools the preset pre-approves and
the tier refuses, and the nexus tools its MCP server serves (as the client's config installs
it). Stdlib only."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..core import settings, specs
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope
from . import presets, runs
from .runner import HEADLESS

if TYPE_CHECKING:
    from .models import RunToolsArgs

NOTES = {
    "claude": "the client's built-in tools (Read, Grep, Bash, ...) stay; allowed_tools run "
              "without asking, refused_tools are removed, anything else asks (headless: refused "
              "unless approvals go to nexus)",
    "codex": "the tier is Codex's own sandbox (writes outside it fail); Codex has no per-tool "
             "list, so a preset's allowed_tools do not apply to it",
}


def served(client: str, project: str) -> tuple[list[str], str]:
    """nexus's MCP tools the client's runs get, and where that was read: the server the client's
    config installs (project scope first, as the client reads it), or none."""
    import importlib

    config = importlib.import_module(f"..clients.{client}.config", __package__)
    for scope in ("project", "user"):
        try:
            mcp = config.inspect(scope, project)["mcp"]
        except (NexusError, OSError, ValueError):
            continue
        if mcp:
            args = [str(x) for x in mcp.get("args") or []]
            chosen = args[args.index("--tools") + 1] if "--tools" in args[:-1] else "default"
            try:
                return list(specs.served(specs.chosen_groups(chosen))), f"{scope} config"
            except NexusError:
                return [], f"{scope} config (its --tools {chosen} names no group)"
    return [], f"not installed: `nexus install {client}`"


def toolsets(ctx: Ctx, a: RunToolsArgs) -> dict:
    table, _ = presets.load(ctx.store.root)
    ids = [a.preset] if a.preset else [p for p, v in table.items() if not v.get("broken")]
    conf_approvals = "nexus" if settings.load(ctx.store.root)["runApprovals"] else "client"
    project = os.getcwd()
    items: list[dict[str, Any]] = []
    with ctx.read() as conn:
        for pid in ids:
            _, preset, tier, source = runs.choose(conn, ctx.store.root, pid, a.sandbox, None)
            for client in [a.client] if a.client else list(HEADLESS):
                nexus, where = served(client, project)
                items.append({
                    "client": client, "preset": pid, "sandbox": tier, "sandbox_from": source,
                    "flags": HEADLESS[client].flags(tier, conf_approvals),
                    # only Claude Code takes a list of tools (Codex: NOTES)
                    "allowed_tools": list(preset.get("allowed_tools") or [])
                    if client == "claude" else [],
                    "refused_tools": list(getattr(HEADLESS[client], "WRITERS", ()))
                    if tier == "read-only" else [],
                    "nexus_tools": nexus, "nexus_tools_from": where, "note": NOTES[client]})
    return envelope(items, len(items), 0, len(items) or 1)
