"""How an agent's shell reaches nexus: `nexus`, when a login shell finds this very nexus on its
PATH, else the absolute path of the console script. Texts that tell a model to run nexus use it
(Codex's shell tool runs a login shell that resets PATH, so the client's own PATH proves
nothing). `nexus install` and `nexus doctor` probe it; the result is kept in the store, and in
team mode in this machine's store directory (a path of this machine, and a text nexus tells
models to run: not something another member may set). Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import sys

from .store import policy

KEY = "shell_command"
FILE = "shell-command"  # team mode: in the local store directory


def script() -> str:
    """The console script this process was started as (or the one beside the interpreter)."""
    argv0 = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(argv0) == "nexus" and os.access(argv0, os.X_OK):
        return argv0
    beside = os.path.join(os.path.dirname(sys.executable), "nexus")
    return beside if os.access(beside, os.X_OK) else "nexus"


def probe(timeout: float = 20) -> tuple[str, list[str]]:
    """(`nexus` or the absolute path, why): whether login shells (bash, and the user's $SHELL)
    find this very nexus. Spawns them: for install and doctor, never for a hook."""
    import shutil
    import subprocess

    mine = os.path.realpath(script())
    candidates = [shutil.which("bash") or "", os.environ.get("SHELL", "")]
    shells = list({os.path.realpath(s): s for s in candidates
                   if s and os.access(s, os.X_OK)}.values())
    notes = []
    for shell in shells:
        try:
            found = subprocess.run([shell, "-lc", "command -v nexus"], capture_output=True,
                                   text=True, timeout=timeout, stdin=subprocess.DEVNULL).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            notes.append(f"{shell} -l could not run ({exc})")
            continue
        where = found.strip().splitlines()[-1] if found.strip() else ""
        if not where:
            notes.append(f"a login {os.path.basename(shell)} does not find `nexus` on its PATH")
        elif os.path.realpath(where) != mine:
            notes.append(f"a login {os.path.basename(shell)} finds another nexus ({where})")
    return ("nexus" if shells and not notes else mine), notes


def profile(shell: str) -> str:
    """The file a login `shell` reads at start, as `~/...`: bash the first of ~/.bash_profile,
    ~/.bash_login, ~/.profile that exists (a ~/.profile beside a ~/.bash_profile is ignored),
    zsh ~/.zprofile, any other ~/.profile."""
    home = os.path.expanduser("~")
    name = os.path.basename(shell)
    if name == "bash":
        for file in (".bash_profile", ".bash_login"):
            if os.path.exists(os.path.join(home, file)):
                return "~/" + file
    return "~/.zprofile" if name == "zsh" else "~/.profile"


def path_fix(command: str) -> str:
    """What makes login shells find this nexus as `nexus`, as commands that work pasted: a link
    in ~/.local/bin (never the script's own folder on PATH: a virtual environment's bin would
    shadow python and pip there), and ~/.local/bin put first on PATH in the file each login shell
    reads (bash, and the user's $SHELL)."""
    import shlex
    import shutil

    shells = [shutil.which("bash") or "bash", os.environ.get("SHELL", "")]
    files = list(dict.fromkeys(profile(s) for s in shells if s))
    line = "export PATH=\"$HOME/.local/bin:$PATH\""
    return (f"run `mkdir -p ~/.local/bin && ln -sf {shlex.quote(command)} ~/.local/bin/nexus` and "
            f"`echo {shlex.quote(line)} | tee -a {' '.join(files)}`, open a new shell, then run "
            "`nexus install claude` (or codex) again")


def _local(conn: sqlite3.Connection) -> str | None:
    """The file that keeps it in team mode (None: the local store keeps it in `meta`)."""
    from .sessions import in_team

    root = getattr(conn, "local_root", None)
    return os.path.join(root, FILE) if in_team(conn) and root else None


def remember(conn: sqlite3.Connection, command: str) -> None:
    path = _local(conn)
    if path is not None:
        from . import atomic

        atomic.write(path, command + "\n", 0o600)
        return
    conn.execute(policy.write("INSERT INTO meta (key, value) VALUES (?, ?)"
                 " ON CONFLICT (key) DO UPDATE SET value = excluded.value"), (KEY, command))


def name(conn: sqlite3.Connection) -> str:
    """What to tell a model to run: as `nexus install` found it, else the absolute path."""
    path = _local(conn)
    if path is not None:
        try:
            with open(path, encoding="utf-8") as fh:
                return fh.read(4096).strip() or script()
        except OSError:
            return script()
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
    return row[0] if row else script()
