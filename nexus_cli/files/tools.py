"""The file tools: read, list, stat and (opt-in) write inside the caller's project."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import fs, render

JAIL = ("Paths must be absolute and, with symlinks resolved, inside your project root; "
        "sensitive names (.ssh, .env, *.pem, *token*, keys, credentials) are refused and hidden "
        "from listings.")

register(Tool(
    name="fs_read", group="files", title="Read a file",
    description="Read lines of a file in your project (<= 2,000 lines, 48 KB per call; `next` "
    "gives the offset to continue).",
    details=JAIL + " Files over 8 MB are refused.",
    args="FsReadArgs", result="FsReadResult", run=fs.read, render=render.read,
    command=("fs", "read"), positional=("path",), read_only=True, idempotent=True,
    example="nexus fs read src/cart.py --limit 40",
))
register(Tool(
    name="fs_list", group="files", title="List a folder",
    description="List a folder in your project, down to `depth` levels (1-5), paged.",
    details=JAIL + " Up to 1,000 entries are gathered, then paged (at most 100 per page).",
    args="FsListArgs", result="FsListResult", run=fs.listing, render=render.listing,
    command=("fs", "list"), positional=("path",), read_only=True, idempotent=True,
    example="nexus fs list src --depth 2",
))
register(Tool(
    name="fs_stat", group="files", title="Probe a path",
    description="Whether a path in your project exists, its size, time and kind (cheap: probe "
    "before a big read).",
    details=JAIL,
    args="FsPathArgs", result="FsStatResult", run=fs.stat_, render=render.stat,
    command=("fs", "stat"), positional=("path",), read_only=True, idempotent=True,
    example="nexus fs stat src/cart.py",
))
register(Tool(
    name="fs_write", group="files", title="Write a file",
    description="Write text to a file in your project (overwrite, append or create-new); off "
    "unless the person sets fsWrite 1.",
    details=JAIL + " Content at most 4 MB; parent folders are created; create-new refuses an "
    "existing file atomically; an unreadable file is never overwritten.",
    args="FsWriteArgs", result="FsWriteResult", run=fs.write, render=render.written,
    command=("fs", "write"), positional=("path", "content"), stdin=("content",),
    destructive=True,
    example="nexus fs write notes/plan.md - --mode create-new < plan.md",
))
