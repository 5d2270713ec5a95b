"""What nexus's tools cost every model request: install nexus into the real Claude Code and
Codex, capture one request each at the fake model, and print the bytes and estimated tokens
(bytes / 4) of nexus's tool definitions, their share of all tool definitions, and the largest,
with the default groups and with `--tools all` (the tests run Claude Code with tool search off,
so it sends every definition), and what Claude Code's default tool search leaves of them.
Budget: under 2,000 tokens by default.

Run it where the real-client tests run (loopback only):
  unshare -n -- python scripts/loopback.py python bench/tooldefs.py [--show]"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _util import table  # also puts tests/ on sys.path
from e2e.harness import World, available

BUDGET_TOKENS = 2000


def nexus_tools(client: str, body: dict) -> tuple[list[dict], list[dict]]:
    """(nexus's definitions, all definitions) as the client sent them to the model."""
    tools = body.get("tools", [])
    if client == "claude":
        return [t for t in tools if str(t.get("name", "")).startswith("mcp__nexus__")], tools
    ours = [t for t in tools if t.get("name") == "mcp__nexus" or
            str(t.get("name", "")).startswith("mcp__nexus")]
    return ours, tools


def measure(groups: str) -> dict[str, dict]:
    out = {}
    with tempfile.TemporaryDirectory(prefix="nexus-bench-tools-") as tmp:
        world = World(Path(tmp))
        try:
            for client in ("claude", "codex"):
                world.nexus("install", client, "--tools", groups)
            world.script(c=[{"text": "ok"}], x=[{"text": "ok"}])
            world.claude("c", "hello")
            world.codex("x", "hello")
            for client, run in (("claude", "c"), ("codex", "x")):
                body = world.requests(run)[0]["body"]
                ours, every = nexus_tools(client, body)
                size = sum(len(json.dumps(t, separators=(",", ":"))) for t in ours)
                total = sum(len(json.dumps(t, separators=(",", ":"))) for t in every)
                largest = sorted(((len(json.dumps(t, separators=(",", ":"))), t.get("name"))
                                  for t in ours), reverse=True)[:4]
                out[client] = {"bytes": size, "share": size / total if total else 0,
                               "largest": largest, "defs": ours}
        finally:
            world.close()
    return out


def deferred_claude() -> int:
    """Bytes nexus costs a Claude Code request with tool search on (its default): the names of
    deferred tools, listed in the system prompt; the schemas load when the model asks."""
    import re

    with tempfile.TemporaryDirectory(prefix="nexus-bench-tools-") as tmp:
        world = World(Path(tmp))
        try:
            world.install()
            world.env.pop("ENABLE_TOOL_SEARCH", None)
            world.script(d=[{"text": "ok"}])
            world.claude("d", "hello")
            body = json.dumps(world.requests("d")[0]["body"])
            if any(str(t.get("name", "")).startswith("mcp__nexus__")
                   for t in world.requests("d")[0]["body"].get("tools", [])):
                return -1  # not deferred after all
            return sum(len(m) + 2 for m in re.findall(r"mcp__nexus__\w+", body))
        finally:
            world.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", action="store_true", help="print nexus's definitions as sent")
    args = ap.parse_args()
    why = available()
    if why:
        sys.exit(f"bench: the real clients cannot run here: {why}")
    rows = []
    for groups in ("default", "all"):
        for client, m in measure(groups).items():
            tokens = m["bytes"] / 4
            rows.append((f"{client}, {groups} groups", f"{m['bytes']:,} B",
                         f"{tokens:,.0f} tokens ({m['share']:.0%} of all tools)",
                         f"< {BUDGET_TOKENS:,}" if groups == "default" else "report"))
            if args.show:
                print(json.dumps(m["defs"], indent=1))
            print(f"{client}, {groups}: largest "
                  + ", ".join(f"{name} {size} B" for size, name in m["largest"]))
    names = deferred_claude()
    rows.append(("claude, tool search on (its default)",
                 f"{names:,} B" if names >= 0 else "not deferred",
                 f"{max(names, 0) / 4:,.0f} tokens: names only", "report"))
    table(rows, ratio="estimate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
