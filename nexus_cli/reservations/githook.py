"""The commit guard: a git pre-commit hook that refuses a commit touching a file another session
holds exclusively, with the message an edit of it gets (`nexus guard --staged`). It catches what
the edit hooks cannot see: files changed by shell commands.

`nexus install git-hook` writes the repository's `pre-commit` (in the hooks folder git itself
uses: core.hooksPath and worktrees honoured). A pre-commit hook already there is chained: moved,
byte for byte and mode kept, to `pre-commit.nexus-chained`, and run by the guard after its check
with the same arguments, whatever language it is in. `nexus uninstall git-hook` removes the guard
and moves the chained hook back, so the folder is as it was. Only a `pre-commit` that is exactly
what nexus writes is touched: one that names the guard but was edited is refused, and so is a
chained slot already taken. A commit passes when nexus itself cannot check it (a store in
trouble): the guard says so and gets out of the way; `git commit --no-verify` skips it."""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess

from ..core import atomic
from ..core.errors import NexusError

HOOK = "pre-commit"
CHAINED = "pre-commit.nexus-chained"
MARK = "nexus commit guard"
_SENTINEL = "\x00COMMAND\x00"


def script(command: str) -> str:
    """The pre-commit hook nexus writes, running `command` (the nexus console script, with
    NEXUS_HOME when one was set at install)."""
    return f"""#!/bin/sh
# {MARK}: refuses a commit that touches a file another session holds exclusively
# (`nexus reservations`). `git commit --no-verify` skips it; `nexus uninstall git-hook` removes
# it and puts back the hook it chains ({CHAINED}).
out=$({command} guard --staged 2>&1)
status=$?
if [ "$status" -eq 4 ]; then printf '%s\\n' "$out" >&2; exit 1; fi
if [ "$status" -ne 0 ]; then
  printf 'nexus: the commit guard could not check this commit; committing:\\n%s\\n' "$out" >&2
fi
chained="$(dirname "$0")/{CHAINED}"
if [ -x "$chained" ]; then exec "$chained" "$@"; fi
exit 0
"""


_SHAPE = re.compile(re.escape(script(_SENTINEL)).replace(re.escape(_SENTINEL), "(?P<cmd>[^\n]+)"))


def parse(text: str) -> str | None:
    """The command of a hook nexus wrote, or None when `text` is not exactly one."""
    found = _SHAPE.fullmatch(text)
    if found is None:
        return None
    try:
        words = shlex.split(found["cmd"])
    except ValueError:
        return None
    if words and words[0].startswith("NEXUS_HOME="):
        words = words[1:]
    if len(words) != 1 or os.path.basename(words[0]) != "nexus":
        return None
    return found["cmd"]


def folder(cwd: str | None = None) -> str:
    """The hooks folder git runs hooks from, for the repository around `cwd`."""
    try:
        done = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-path", "hooks"],
                              capture_output=True, text=True, cwd=cwd, timeout=60)
    except FileNotFoundError:
        raise NexusError("invalid_argument", "git-hook", "git is not installed",
                         "install git, or use `nexus guard` by hand") from None
    if done.returncode:
        raise NexusError("invalid_argument", "git-hook", "not inside a git repository ("
                         + (done.stderr.strip().splitlines() or ["git said nothing"])[-1] + ")",
                         "run it in the repository to guard")
    return done.stdout.strip()


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NexusError("config_unwritable", path, f"cannot read it: {exc.strerror}",
                         "check its permissions; nothing was changed") from None


def _diff(path: str, before: str | None, after: str | None) -> str:
    return "".join(difflib.unified_diff(
        (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
        fromfile=f"{path} (now)" if before is not None else "/dev/null",
        tofile=f"{path} (after)" if after is not None else "/dev/null"))


def _change(path: str, action: str, before: str | None, after: str | None,
            backup: str | None = None) -> dict:
    return {"path": path, "action": action, "backup": backup,
            "diff": _diff(path, before, after) if action != "unchanged" else ""}


def _refuse(path: str, reason: str, action: str) -> NexusError:
    return NexusError("config_conflict", path, f"{reason}; nothing was changed", action)


def install(command: str, dry_run: bool, cwd: str | None = None) -> list[dict]:
    """Put the guard in front of the repository's pre-commit hook (chaining one already there)."""
    where = folder(cwd)
    hook, chained = os.path.join(where, HOOK), os.path.join(where, CHAINED)
    ours = script(command)
    kind = _kind(hook)
    if kind == "other":
        raise _refuse(hook, "it is not a file", "move it aside, then retry")
    before = _read(hook) if kind else None
    if before is not None and MARK in before:
        if parse(before) is None:
            raise _refuse(hook, "it names the nexus commit guard but is not what nexus wrote "
                          "(edited by hand?)", f"restore it by hand (uninstalling puts back "
                          f"{CHAINED} when there is one), then retry")
        if before == ours:
            return [_change(hook, "unchanged", before, ours)]
        if not dry_run:
            atomic.write(hook, ours, 0o755)
        return [_change(hook, "updated", before, ours)]
    if os.path.lexists(chained):
        raise _refuse(chained, "a hook chained by an earlier install is still there"
                      + (" while pre-commit is not nexus's guard" if kind else ""),
                      f"move {CHAINED} back to {HOOK} (or remove it) by hand, then retry")
    if kind is None:
        if not dry_run:
            os.makedirs(where, exist_ok=True)
            atomic.write(hook, ours, 0o755)
        return [_change(hook, "created", None, ours)]
    out = [_change(chained, "created", None, before),
           _change(hook, "updated", before, ours, backup=chained)]
    if not dry_run:
        os.link(hook, chained, follow_symlinks=False)  # theirs, exactly (fails if taken)
        try:
            atomic.write(hook, ours, 0o755)
        except BaseException:
            os.unlink(chained)
            raise
    return out


def uninstall(dry_run: bool, cwd: str | None = None) -> list[dict]:
    """Remove the guard; the hook it chained goes back to its place."""
    where = folder(cwd)
    hook, chained = os.path.join(where, HOOK), os.path.join(where, CHAINED)
    before = _read(hook) if _kind(hook) == "file" else None
    if before is None or MARK not in before:
        return []  # nothing of nexus's here
    if parse(before) is None:
        raise _refuse(hook, "it names the nexus commit guard but is not what nexus wrote "
                      "(edited by hand?)", f"remove it by hand (and move {CHAINED} back to "
                      f"{HOOK} if it is there)")
    if os.path.lexists(chained):
        theirs = _read(chained)
        if not dry_run:
            os.rename(chained, hook)  # atomic: pre-commit is theirs again, as it was
        return [_change(hook, "updated", before, theirs), _change(chained, "removed", theirs, None)]
    if not dry_run:
        os.unlink(hook)
    return [_change(hook, "removed", before, None)]


def _kind(path: str) -> str | None:
    """None (absent), `file` (a regular file, or a link to one), `other`."""
    if not os.path.lexists(path):
        return None
    return "file" if os.path.isfile(path) or os.path.islink(path) else "other"
