"""The reservation tools: reserve, release, the list, and the guard for changes no hook sees."""

from __future__ import annotations

from ..core.registry import Tool, register
from ..core.settings import RESERVE_TTL
from . import render, reserve

SYNTAX = ("Paths are relative to your working directory and stored relative to the project "
          "root, with `.`, `..` and symbolic links resolved; a directory (or a path ending in "
          "`/`) means everything under it. Globs: `*` and `?` match within one path component, "
          "`[abc]`, `[a-z]`, `[!abc]` one character, `**` any number of components "
          "(`src/**/test_*.py`); `[*]` matches a literal `*`.")

register(Tool(
    name="reserve", group="reservations", title="Reserve files",
    description="Reserve files or globs before editing them: other sessions' edits of an "
    "exclusive reservation are refused, naming you. A conflict is refused, or waited for.",
    details=f"Exclusive (the default) conflicts with any other session's reservation; --shared "
    "conflicts only with an exclusive one and refuses nobody's edits. All the paths are "
    f"reserved together or none. A reservation ends after --ttl seconds (default {RESERVE_TTL}), "
    "at `release`, when the session ends, or moves to its successor at a handoff. Reserving what "
    "you hold again renews it. In team mode a reservation covers the same files in every clone "
    "of the project (its git remote), on any machine. " + SYNTAX,
    args="ReserveArgs", result="ReserveResult", run=reserve.reserve, render=render.reserve,
    positional=("paths",), idempotent=True,
    example="nexus reserve src/checkout.py --ttl 1800 --reason 'refactoring totals'",
))
register(Tool(
    name="release", group="reservations", title="Release reservations",
    description="Release file reservations you hold (as you wrote them), or all of them.",
    details="Whoever waits for one of them (`reserve --wait`) is woken. A path you hold no "
    "reservation of is listed as not held.",
    args="ReleaseArgs", result="ReleaseResult", run=reserve.release, render=render.release,
    positional=("paths",), destructive=True, idempotent=True,
    example="nexus release src/checkout.py",
))
register(Tool(
    name="reservations", group="reservations", title="List file reservations",
    description="Who holds which files in your project, since and until when, and why.",
    details="--all-workspaces lists every project's; --mine only yours (everywhere). In team "
    "mode also those taken in another clone of the project, with the holder's machine.",
    args="ReservationsArgs", result="ReservationsResult", run=reserve.reservations,
    render=render.reservations, read_only=True, idempotent=True,
    example="nexus reservations --mine",
))
register(Tool(
    name="guard", group="reservations", title="Check files against reservations",
    description="Before a change the edit hooks cannot see (a program that writes files): "
    "which of these files another session holds exclusively (`ok` false; the CLI exits 4).",
    details="The edit tools, and the files a shell command visibly writes, are checked by the "
    "hooks; what a program writes itself cannot be, so check it here. --staged checks the "
    "files staged in git: the commit guard installed by `nexus install git-hook` runs `nexus "
    "guard --staged` and refuses the commit on a conflict (`git commit --no-verify` skips it).",
    args="GuardArgs", result="GuardResult", run=reserve.guard, render=render.guard,
    positional=("paths",), read_only=True, idempotent=True, exit_if=("ok", False, 4),
    example="nexus guard --staged",
))
