"""The manual pages where `man` looks: `nexus man --install` copies the pages the package ships
into ~/.local/share/man/man1, as pipx does its own (man-db finds it beside ~/.local/bin on
PATH), and `doctor` says whether `man nexus` finds them and whether they are this version's.
Stdlib only."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

from ..core import atomic, data, shellcmd
from ..core.errors import NexusError

INSTALL = "nexus man --install"


def folder() -> str:
    """Where the pages go: pipx's man folder (PIPX_MAN_DIR's default)."""
    return os.path.join(os.path.expanduser("~"), ".local", "share", "man", "man1")


def shipped() -> dict[str, str]:
    """The package's pages by file name."""
    source = data.folder("man")
    pages = {}
    for name in sorted(os.listdir(source)):
        if name.endswith(".1"):
            with open(os.path.join(source, name), encoding="utf-8") as fh:
                pages[name] = fh.read()
    return pages


def stale() -> list[str]:
    """The pages missing from the folder or differing from this version's."""
    out = []
    for name, text in shipped().items():
        try:
            with open(os.path.join(folder(), name), encoding="utf-8") as fh:
                same = fh.read() == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            out.append(name)
    return out


def found() -> str | None:
    """The page `man nexus` shows in a login shell (where man(1) finds ~/.local/share/man once
    ~/.local/bin is on PATH), or None (also when there is no man(1) to ask)."""
    shell = os.environ.get("SHELL") or shutil.which("bash")
    if not shutil.which("man") or not shell:
        return None
    try:
        done = subprocess.run([shell, "-lc", "man -w nexus"], capture_output=True, text=True,
                              timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1] if done.returncode == 0 and lines else None


def install() -> dict:
    """Write every page (atomically, 0644); `man_unwritable` when the folder cannot take them."""
    target = folder()
    pages = shipped()
    try:
        os.makedirs(target, exist_ok=True)
        for name, text in pages.items():
            atomic.write(os.path.join(target, name), text, 0o644)
    except OSError as exc:
        raise NexusError("man_unwritable", target, exc.strerror or str(exc),
                         f"make {target} a folder you can write, then run `{INSTALL}` again; "
                         "meanwhile `nexus man COMMAND` shows the pages") from None
    return {"folder": target, "pages": len(pages), "found": found()}


def check() -> tuple[str, str, str]:
    """doctor's line: (status, detail, fix)."""
    missing = stale()
    if missing:
        what = "not installed" if len(missing) == len(shipped()) else \
            f"{len(missing)} of another version ({', '.join(missing[:3])})"
        return ("warn", f"the manual pages in {folder()}: {what}", f"run `{INSTALL}`")
    page = found()
    if shutil.which("man") and page is None:
        base = os.path.dirname(folder())
        line = shlex.quote(f'export MANPATH="{base}:$MANPATH"')  # a colon left: the system's too
        files = " ".join(dict.fromkeys(shellcmd.profile(s) for s in (
            shutil.which("bash") or "bash", os.environ.get("SHELL", "")) if s))
        return ("warn", f"the pages are in {folder()}, but `man nexus` does not look there",
                f"run `echo {line} | tee -a {files}`, then open a new shell")
    return ("ok", f"`man nexus` shows {page}" if page else f"the pages are in {folder()}", "")
