"""A throwaway world for the real clients: a HOME with nexus installed into Claude Code and Codex,
a private store, a scripted fake model on 127.0.0.1, and helpers to run the clients headless
(`claude -p`, `codex exec`) or interactive (in tmux)."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

from helpers import tables_read, until

ROOT = Path(__file__).resolve().parents[2]
NEXUS = str(Path(sys.executable).with_name("nexus"))
PY = sys.executable


def client_bin(name: str) -> str | None:
    explicit = os.environ.get("NEXUS_E2E_BIN")
    for folder in filter(None, [explicit, str(ROOT / ".e2e" / "node_modules" / ".bin")]):
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
    return None


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.work = root / "work"
        self.store = root / "nexus"
        for d in (self.home, self.work / ".git", root / "tmp"):
            d.mkdir(parents=True, exist_ok=True)
        self.script_path = root / "script.json"
        self.log_path = root / "model.log"
        self.script_path.write_text("{}")
        portfile = root / "port"
        self.fake = subprocess.Popen([PY, str(Path(__file__).with_name("fake_model.py")),
                                      str(self.script_path), str(self.log_path), str(portfile)])
        until(portfile.exists, 60, "the fake model to start")
        self.port = int(portfile.read_text())
        self.claude_bin, self.codex_bin = client_bin("claude"), client_bin("codex")
        self.env = {
            "HOME": str(self.home), "USER": os.environ.get("USER", "root"),
            "PATH": os.pathsep.join([str(Path(NEXUS).parent), "/usr/local/bin", "/usr/bin",
                                     "/bin"]),
            "TMPDIR": str(root / "tmp"), "CLAUDE_CODE_TMPDIR": str(root / "tmp"),
            "NEXUS_HOME": str(self.store), "CODEX_HOME": str(self.home / ".codex"),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}",
            "ANTHROPIC_API_KEY": "sk-ant-fake-local", "FAKE_OPENAI_API_KEY": "sk-fake-local",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ENABLE_TOOL_SEARCH": "false",
            "IS_SANDBOX": "1", "NO_COLOR": "1", "TERM": "xterm-256color", "LANG": "C.UTF-8",
            # how nexus reads the process table (the conftest runs these tests through both)
            **{k: os.environ[k] for k in ("NEXUS_PROCESS_TABLE",) if k in os.environ},
        }
        codex_home = self.home / ".codex"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "fake"\napproval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\ncheck_for_update_on_startup = false\n\n'
            '[model_providers.fake]\nname = "fake"\n'
            f'base_url = "http://127.0.0.1:{self.port}/v1"\n'
            'env_key = "FAKE_OPENAI_API_KEY"\nwire_api = "responses"\n'
            'request_max_retries = 0\nstream_max_retries = 0\n\n'
            '[analytics]\nenabled = false\n')  # else every exit waits ~5 s on a metrics export
        self.tmux: list[str] = []
        # a tmux server of our own: never one started elsewhere (another user, another namespace)
        self.tmux_socket = str(root / "tmux.sock")

    # -- nexus ------------------------------------------------------------------------------------

    def nexus(self, *args: str, env: dict | None = None,
              check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([NEXUS, *args], env={**self.env, **(env or {})}, cwd=self.work,
                              capture_output=True, text=True, timeout=60)
        if check and done.returncode:
            raise AssertionError(f"nexus {' '.join(args)} failed: {done.stderr}")
        return done

    def db(self) -> sqlite3.Connection:
        """The store, read directly (the test at its shell is not any agent session)."""
        conn = sqlite3.connect(str(self.store / "nexus.db"))
        conn.row_factory = sqlite3.Row
        return conn

    def install(self) -> None:
        """`nexus install claude` and `nexus install codex`, in one process (one start-up)."""
        done = subprocess.run(
            [PY, "-c", "import sys; from nexus_cli.cli import main; "
             "sys.exit(main(['install', 'claude']) or main(['install', 'codex']))"],
            env=self.env, cwd=self.work, capture_output=True, text=True, timeout=60)
        if done.returncode:
            raise AssertionError(f"nexus install failed: {done.stderr}")
        if "NEXUS_PROCESS_TABLE" in self.env:
            # Codex starts its MCP servers with a few variables of its own only: it passes on the
            # ones `env_vars` names (a machine has one kind of table; this test forces one)
            config = self.home / ".codex" / "config.toml"
            header = "[mcp_servers.nexus]\n"
            config.write_text(config.read_text().replace(
                header, header + 'env_vars = ["NEXUS_PROCESS_TABLE"]\n', 1))

    def sessions(self) -> list[dict]:
        out = self.nexus("peers", "--all-workspaces", "--include-offline", "--json",
                         "--limit", "100")
        return json.loads(out.stdout)["items"]

    def session(self, client: str, status: str | None = None) -> dict:
        """The most recent session of a client (optionally in a given status)."""
        for s in self.sessions():
            if s["client"] == client and (status is None or s["status"] == status):
                return s
        raise AssertionError(f"no {client} session {status or ''}: {self.sessions()}")

    def wait_status(self, sid: str, status: str, timeout: float = 60) -> None:
        until(lambda: any(s["id"] == sid and s["status"] == status for s in self.sessions()),
              timeout, lambda: f"{sid} to become {status}: {self.sessions()}\n"
              + "\n".join(self.tmux_screen(t) for t in self.tmux), every=0.1)

    # -- the fake model ---------------------------------------------------------------------------

    def script(self, **runs: list[dict]) -> None:
        current = json.loads(self.script_path.read_text())
        current.update(runs)
        tmp = self.script_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(current))
        os.replace(tmp, self.script_path)

    def requests(self, run: str) -> list[dict]:
        if not self.log_path.exists():
            return []
        return [e for e in map(json.loads, self.log_path.read_text().splitlines())
                if e["run"] == run]

    def reached(self, run: str, text: str) -> bool:
        """Did `text` reach the model in any request of this run?"""
        return any(text in json.dumps(e["body"], ensure_ascii=False) for e in self.requests(run))

    # -- clients ----------------------------------------------------------------------------------

    def claude_cmd(self, run: str, prompt: str, session_id: str | None = None,
                   resume: str | None = None, skip_permissions: bool = True) -> list[str]:
        cmd = [self.claude_bin, "-p", f"[run:{run}] {prompt}"]
        if session_id:
            cmd += ["--session-id", session_id]
        if resume:
            cmd += ["--resume", resume]
        if skip_permissions:
            cmd.append("--dangerously-skip-permissions")
        return cmd

    def codex_cmd(self, run: str, prompt: str, resume: str | None = None) -> list[str]:
        base = [self.codex_bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]
        if resume:
            return [*base, "resume", resume, f"[run:{run}] {prompt}"]
        return [*base, f"[run:{run}] {prompt}"]

    def run(self, cmd: list[str], env: dict | None = None, timeout: float = 180,
            background: bool = False):
        kwargs = dict(env={**self.env, **(env or {})}, cwd=self.work, stdin=subprocess.DEVNULL,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if background:
            return subprocess.Popen(cmd, **kwargs)
        done = subprocess.run(cmd, timeout=timeout, **kwargs)
        if done.returncode:
            raise AssertionError(f"{cmd[0]} exited {done.returncode}:\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done

    def claude(self, run: str, prompt: str, **kw) -> subprocess.CompletedProcess:
        env, background = kw.pop("env", None), kw.pop("background", False)
        return self.run(self.claude_cmd(run, prompt, **kw), env=env, background=background)

    def codex(self, run: str, prompt: str, **kw) -> subprocess.CompletedProcess:
        env, background = kw.pop("env", None), kw.pop("background", False)
        return self.run(self.codex_cmd(run, prompt, **kw), env=env, background=background)

    # -- interactive clients in tmux --------------------------------------------------------------

    def claude_onboarded(self) -> None:
        """What a person clicks through once in interactive Claude Code, done ahead."""
        path = self.home / ".claude.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        key = self.env["ANTHROPIC_API_KEY"]
        data.update({"hasCompletedOnboarding": True, "theme": "dark",
                     "bypassPermissionsModeAccepted": True,
                     "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
                     "projects": {str(self.work): {"hasTrustDialogAccepted": True,
                                                   "allowedTools": []}}})
        path.write_text(json.dumps(data))

    def tmux_start(self, name: str, cmd: list[str]) -> str:
        session = f"nx-{uuid.uuid4().hex[:8]}-{name}"
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        subprocess.run(["tmux", "-S", self.tmux_socket, "new-session", "-d", "-s", session,
                        "-x", "160", "-y", "50",
                        "-c", str(self.work), f"env -i {env} {shlex.join(cmd)}"], check=True)
        self.tmux.append(session)
        return session

    def tmux_keys(self, session: str, *keys: str) -> None:
        subprocess.run(["tmux", "-S", self.tmux_socket, "send-keys", "-t", session, *keys],
                       check=True)

    def tmux_screen(self, session: str) -> str:
        return subprocess.run(["tmux", "-S", self.tmux_socket, "capture-pane", "-p", "-t", session],
                              capture_output=True, text=True).stdout

    def process_tables(self) -> set[str]:
        """Which process table the hooks read the client processes from, by the start times they
        recorded: 'proc' (/proc's clock ticks) or 'ps' (ps(1)'s date and time)."""
        if not (self.store / "nexus.db").exists():
            return set()
        conn = self.db()
        try:
            starts = [r[0] for r in conn.execute(
                "SELECT client_start FROM sessions WHERE client_start IS NOT NULL")]
        finally:
            conn.close()
        return tables_read(starts)

    def close(self) -> None:
        if self.tmux:
            subprocess.run(["tmux", "-S", self.tmux_socket, "kill-server"], capture_output=True)
        self.fake.kill()
        self.fake.wait()
        wanted = self.env.get("NEXUS_PROCESS_TABLE") or "proc"
        seen = self.process_tables()
        if seen - {wanted}:  # the clients' hooks did not read the table they were meant to
            raise AssertionError(f"the hooks read the process table through {seen}, not {wanted}")


def available() -> str | None:
    """Why the real-client tests cannot run here, or None when they can."""
    missing = [n for n in ("claude", "codex") if client_bin(n) is None]
    if missing:
        return f"real clients not installed ({', '.join(missing)}): run scripts/clients.sh"
    if not os.path.exists(NEXUS):
        return f"{NEXUS} not found: install nexus into this environment"
    return None


def wait_until(predicate, timeout: float = 60, what=None) -> None:
    """Poll `predicate`; on time-out fail with `what` (a text, or a callable giving one)."""
    until(predicate, timeout, what, every=0.1)



