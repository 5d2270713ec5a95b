"""What a new user meets first: the documented install puts `nexus` on a login shell's PATH,
agents are told a command their shell can run, and `nexus` follows the conventions people know
(help, completion, exit codes, output without escapes when not on a terminal)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import A, sid

ROOT = Path(__file__).resolve().parents[1]


def managed_python() -> str:
    """The distribution's python3 when it refuses `pip install --user` (PEP 668), else ''."""
    found = subprocess.run(["/usr/bin/python3", "-c", "import sysconfig; print(sysconfig."
                            "get_path('stdlib'))"], capture_output=True, text=True)
    stdlib = found.stdout.strip()
    return "/usr/bin" if stdlib and os.path.exists(f"{stdlib}/EXTERNALLY-MANAGED") else ""


@pytest.mark.slow
@pytest.mark.parametrize("python", ["ours", "managed"])
def test_the_documented_install_puts_nexus_on_a_login_shell_path(tmp_path, python):
    """scripts/install.sh (pipx, fetched from the package index when missing: here from the
    wheelhouse scripts/test.sh made), then the greeting of a Claude Code session names `nexus`,
    which a login shell finds. With a distribution's python3 too (Debian's: PEP 668 refuses
    `pip install --user pipx`, so pipx installs itself from a throwaway venv)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("")
    (home / ".profile").write_text('[ -f "$HOME/.bashrc" ] && . "$HOME/.bashrc"\n')
    python_dir = os.path.dirname(os.path.realpath(sys.executable))
    if python == "managed":
        python_dir = managed_python()
        if not python_dir:
            pytest.skip("no externally managed /usr/bin/python3 here")
    env = {"HOME": str(home), "PATH": f"{python_dir}:/usr/local/bin:/usr/bin:/bin",
           "PYTHONUSERBASE": str(home / ".local"), "NEXUS_HOME": str(tmp_path / "store"),
           "LANG": "C.UTF-8", "PIPX_HOME": str(home / ".local/share/pipx")}
    wheelhouse = os.environ.get("NEXUS_WHEELHOUSE")
    if wheelhouse:  # scripts/test.sh made it: the suite runs without a network
        env.update(PIP_FIND_LINKS=wheelhouse, PIP_NO_INDEX="1")
    done = subprocess.run([str(ROOT / "scripts" / "install.sh")], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    # this shell's PATH is the one it had: the message says a new shell is needed, and the next
    # commands are the README's, --trust included
    assert "open a new shell" in done.stdout, done.stdout
    # and the command it gives for this shell, run as printed, finds the installed nexus
    export = re.search(r"run `(export PATH=[^`]+)`", done.stdout).group(1)
    here = subprocess.run(["bash", "-c", f"{export}; command -v nexus"], env=env,
                          capture_output=True, text=True)
    assert here.stdout.strip() == str(home / ".local" / "bin" / "nexus"), (export, here)
    assert "next: nexus install claude; nexus install codex --trust; nexus doctor" in done.stdout
    assert "ensurepath" not in done.stdout + done.stderr  # pipx's hints, wrong once it ran
    assert (home / ".local/share/man/man1/nexus.1").exists()  # `man nexus` works: doctor is OK
    login = subprocess.run(["bash", "-lc", "command -v nexus"], env=env, capture_output=True,
                           text=True)
    nexus = login.stdout.strip()
    assert nexus == str(home / ".local" / "bin" / "nexus"), login.stderr
    assert subprocess.run(["bash", "-lc", "nexus install claude"], env=env,
                          capture_output=True).returncode == 0
    sys.path.insert(0, str(ROOT / "scripts"))
    from standin import StandIn

    with StandIn("claude", str(tmp_path / "client")) as claude:
        event = json.dumps({"hook_event_name": "SessionStart", "session_id": sid(1),
                            "cwd": str(tmp_path), "source": "startup"})
        got = claude.run([nexus, "hook", "claude"], {**env, **A}, event)
    greeting = json.loads(got["out"])["hookSpecificOutput"]["additionalContext"]
    assert "`nexus peers` lists sessions" in greeting, greeting


@pytest.mark.realprocs
def test_without_a_path_agents_are_told_the_absolute_path(hook, chdir_work):
    greeting = json.loads(hook("claude", "SessionStart", sid(1), source="startup").out)
    text = greeting["hookSpecificOutput"]["additionalContext"]
    command = re.search(r"`(\S+) peers` lists sessions", text).group(1)
    assert os.path.isabs(command) and os.access(command, os.X_OK), command
    assert "MCP tools peers, send, read" in text


# -- every fix doctor prints works when followed literally ---------------------------------------


def fixes(text: str, installs: bool = False) -> list[str]:
    """The commands a fix names (in backquotes) in its first way that names any (`A, or B`),
    but the `nexus install` a PATH fix ends with (unless `installs`)."""
    for way in re.split(r",? or ", text):
        found = [c for c in re.findall(r"`([^`]+)`", way) if installs or
                 not c.startswith("nexus install")]
        if found:
            return found
    return []


def scratch_env(home: Path, store: Path) -> dict[str, str]:
    """A login environment of a new user: no nexus on PATH, bash as the shell."""
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "LANG": "C.UTF-8",
            "NEXUS_HOME": str(store)}


def doctor_check(env: dict, name: str) -> dict:
    script = os.path.join(os.path.dirname(sys.executable), "nexus")
    done = subprocess.run([script, "doctor", "--quick", "--json"], env=env, capture_output=True,
                          text=True, timeout=300, cwd=env["HOME"])
    return next(c for c in json.loads(done.stdout)["checks"] if c["name"] == name)


@pytest.mark.parametrize("profiles", [(".bash_profile", ".profile"), (".profile",), ()])
def test_doctors_path_fix_works_when_followed_literally(tmp_path, profiles):
    """`nexus on PATH`: the fix links the script into ~/.local/bin (never the virtual
    environment's bin on PATH, which would shadow python and pip) and puts that folder on PATH
    in the file a login bash really reads (~/.bash_profile when it exists: ~/.profile is then
    ignored). Run as printed, a new login shell finds this nexus and doctor says so."""
    home = tmp_path / "home"
    home.mkdir()
    for name in profiles:
        (home / name).write_text("# the user's own\n")
    env = scratch_env(home, tmp_path / "store")
    check = doctor_check(env, "nexus on PATH")
    assert check["status"] == "warn", check
    venv_bin = os.path.dirname(sys.executable)
    assert f"PATH={venv_bin}" not in check["fix"] and f"{venv_bin}:" not in check["fix"]
    commands = fixes(check["fix"])
    assert commands, check["fix"]
    for command in commands:
        done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True,
                              cwd=home, timeout=60)
        assert done.returncode == 0, (command, done.stderr)
    assert doctor_check(env, "nexus on PATH")["status"] == "ok"
    login = subprocess.run(["bash", "-lc", "command -v nexus; command -v python3"], env=env,
                           capture_output=True, text=True, timeout=60).stdout.split()
    assert login[0] == str(home / ".local" / "bin" / "nexus")
    assert login[1] != os.path.join(venv_bin, "python3")  # the venv's python is not shadowing
    if ".bash_profile" in profiles:
        assert (home / ".profile").read_text() == "# the user's own\n"  # the ignored file


def empty_trees(db: Path) -> None:
    """Damage that SQLite reads as no rows: the root pages of sessions, messages and tasks (and
    their indexes) made empty leaves, the pages of their rows cut off."""
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    roots = [r for _, table, r in conn.execute("SELECT name, tbl_name, rootpage FROM "
                                               "sqlite_master") if r and table in
             ("sessions", "messages", "tasks")]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(db, "r+b") as fh:
        for page in roots:
            fh.seek((page - 1) * size)
            kind = fh.read(1)[0]
            fh.seek((page - 1) * size)
            fh.write(bytes([0x0D if kind in (0x05, 0x0D) else 0x0A, 0, 0, 0, 0,
                            size >> 8 & 0xFF, size & 0xFF, 0]) + bytes(size - 8))


def not_a_database(db: Path) -> None:
    db.write_bytes(b"this is not SQLite" * 100)


@pytest.mark.parametrize("damage", [empty_trees, not_a_database])
def test_a_damaged_store_is_an_error_everywhere_and_the_fix_works(nx, hook, home, damage):
    """A store whose pages are damaged: `peers`, `inbox` and `tasks` do not say "no sessions",
    "no messages", "no tasks" (exit 0) but store_unreadable with a fix; doctor fails with the
    same fix; followed literally, nexus starts an empty store and the damaged files are kept."""
    from helpers import B

    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    for i in range(40):
        assert nx("send", "codex@work", f"message {i} " + "x" * 600, env=A).code == 0
    db = home / "nexus.db"
    damage(db)
    fix = ""
    for command in ("peers", "inbox", "tasks"):
        r = nx(command, env=B)
        assert r.code == 6 and "store_unreadable" in r.err and r.out == "", (command, r)
        fix = fixes(r.err)[0]
    check = next(c for c in nx("doctor", "--quick", "--json").json["checks"]
                 if c["status"] == "fail")
    assert check["name"] in ("integrity", "schema", "store") and fixes(check["fix"]), check
    done = subprocess.run(["sh", "-c", fix], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (fix, done.stderr)
    kept = [p for p in home.iterdir() if p.name.startswith("damaged-")]
    assert len(kept) == 1 and (kept[0] / "nexus.db").exists()
    for command in ("peers", "inbox", "tasks"):
        assert nx(command, env=B).code == 0
    checks = nx("doctor", "--quick", "--json").json["checks"]
    assert all(c["status"] != "fail" for c in checks), checks


def test_every_fix_doctor_prints_works_when_followed_literally(tmp_path):
    """A new user's scratch HOME with what doctor finds wrong on a first run: nexus not on a
    login shell's PATH, a store directory open to others, neither client wired, Codex's hooks
    not trusted. Each fix doctor prints is run as printed, at a terminal (`script`), in a login
    shell; then every check passes (the clients' own programs aside: they are not installed
    here)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bash_profile").write_text("")
    store = tmp_path / "store"
    env = scratch_env(home, store)
    script = os.path.join(os.path.dirname(sys.executable), "nexus")
    assert subprocess.run([script, "maintenance"], env=env, capture_output=True).returncode == 0
    store.chmod(0o755)

    def checks() -> list[dict]:
        done = subprocess.run([script, "doctor", "--quick", "--json"], env=env,
                              capture_output=True, text=True, timeout=300, cwd=home)
        return json.loads(done.stdout)["checks"]

    followed = []
    for _ in range(4):
        todo = [c for c in checks() if c["status"] != "ok" and fixes(c["fix"], True)]
        if not todo:
            break
        for check in todo:
            for command in fixes(check["fix"], True):
                done = subprocess.run(["script", "-qec", f"bash -lc {shlex.quote(command)}",
                                       "/dev/null"], env=env, capture_output=True, text=True,
                                      cwd=home, timeout=300, stdin=subprocess.DEVNULL)
                assert done.returncode == 0, (check, command, done.stdout, done.stderr)
                followed.append(command)
    left = [c for c in checks() if c["status"] != "ok" and c["name"] not in ("claude", "codex")]
    assert not left, (left, followed)
    assert any(c.startswith("chmod 700") for c in followed), followed
    assert any("ln -sf" in c for c in followed) and "nexus install codex" in " ".join(followed)
