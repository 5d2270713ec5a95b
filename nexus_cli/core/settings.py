"""Every limit, wait and expiry nexus applies, in one place, and the user's settings file.

Help texts, the docs and the man pages quote these values (no test checks that they agree: change
them together). Stdlib only (the hooks read it)."""

from __future__ import annotations

import json
import os

from .store import paths

# presence
STALE_AFTER = 30 * 60  # working/idle with no activity this long counts as offline
RECENT_OFFLINE = 24 * 3600  # `peers --include-offline` shows sessions active this recently
# delivery
LISTEN_WAIT = 590  # a listening Stop hook waits this long (its hook timeout is 600 s)
IDLE_WAIT = 3600  # the background idle wait after a turn ends
WAITER_GRACE = 5  # seconds after a turn ends in which its background waiter is still starting
WOKEN_TURN = 60  # a prompt this soon after a wake is the woken turn itself
EXPIRE_AFTER = 24 * 3600  # unread messages expire; the sender gets a notice
IDLE_WATCH = 24 * 3600  # a `--notify-when-idle` subscription lapses
WATCH_MAX = 7 * 86400  # `watch --timeout` at most
HANDOFF_OFFER = 3600  # a handoff offered to a live session (`handoff now --to`) waits this long
ANNOUNCE_LISTED = 5  # messages (and peers) listed per announcement
ANNOUNCE_COUNTED = 100  # unread messages an announcement counts; beyond: "over 100" (bounded)
FIRST_LINE = 100  # characters of a message's first line in an announcement
# asking and binding
ASK_TIMEOUT = 60.0  # `ask` waits this long by default
ASK_MCP_MAX = 50.0  # and at most this long over MCP (Codex gives a tool call 60 s)
BINDING_TTL = 600  # a PreToolUse binding names the MCP caller this long
BINDING_PURGE = 3600  # bindings older than this are deleted
# tasks
TASK_HISTORY = 500  # task records kept per dispatcher (only finished, notified ones are evicted)
SELF_TASK_PURGE = 7 * 86400  # finished self tasks are deleted after this
MAX_TTL = 30 * 86400
# text
TEXT_MAX = 32_000
TASK_MAX = 24_000
NOTE_MAX = 200
METADATA_BYTES = 16_384  # a task's metadata, as JSON
METADATA_DEPTH = 8
# runs, approvals, files (seed 001)
RUN_OUTPUT_MAX = 8_000  # characters of a run's assistant_text
RUN_CALLS_MAX, RUN_CALL_CHARS = 50, 2_000  # tool calls kept in a result, characters each
RUN_RESULTS_MAX = 20  # tool results kept in a result (2,000 characters each)
RUN_MCP_WAIT = 50.0  # a synchronous run over MCP waits at most this long (Codex gives 60 s)
RUN_UNSTARTED = 60  # a queued run whose runner never recorded itself is an error after this
FS_READ_MAX = 8 * 1024 * 1024  # fs_read refuses larger files
FS_READ_BYTES = 48 * 1024  # content per fs_read
FS_WRITE_MAX = 4 * 1024 * 1024  # fs_write content
# maintenance
MAINTAIN_EVERY = 60  # lazy maintenance runs at most this often
# the shared workspace (seed 004)
CHAT_MAX = 32_000  # a chat or meeting message
DOC_MAX = 1_000_000  # a project's internal docs, a global doc, the strategy (characters)
ASSET_MAX = 10 * 1024 * 1024  # one project asset (bytes, decoded)
PROJECT_ASSETS_MAX = 100 * 1024 * 1024  # all assets of one project (bytes)
STRATEGY_KEPT = 50  # strategy versions kept (older ones go when a new one is written)

# file reservations
RESERVE_TTL = 3600  # a reservation lasts this long unless --ttl says otherwise
RESERVE_TTL_MAX = 7 * 86400
RESERVE_REASON_MAX = 500
RESERVE_PATHS_MAX = 100  # paths or globs per reserve, release or guard
RESERVE_WAIT_MAX = 3600  # `reserve --wait` (over MCP: ASK_MCP_MAX at most)

# insight
INDEX_BUDGET = 10.0  # seconds a search or listing may spend bringing the transcript index current

# every setting: its type, bounds, default and what it does (`nexus config list` shows them)
# the MCP tool groups served unless chosen otherwise (`--tools`): the daily work
DEFAULT_GROUPS = ("sessions", "messages", "tasks")
# every group with a tool served over MCP (tests/test_contract.py checks it against the
# registry): `nexus mcp --tools` checks its choice against it before it serves, without reading
# the contract, so a start with groups chosen costs what the default one does
GROUPS = ("approvals", "files", "insight", "lifecycle", "messages", "reservations", "runs",
          "sessions", "tasks", "workspace")

KEYS: dict[str, tuple[type, int, int, int, str]] = {
    "maxAutoTurns": (int, 0, 100, 8, "automatic turns (a wake, a listening or held Stop) "
                                     "allowed since the user's last prompt"),
    "wake": (int, 0, 1, 1, "1: a message wakes an idle session or holds its turn open; 0: "
                           "messages wait for its next prompt (a session's own `profile "
                           "--wake` wins; listen mode still listens)"),
    "rateLimit": (int, 1, 100_000, 20, "workspace tool calls per second allowed to one "
                                         "session (or you), refilled continuously"),
    "rateBurst": (int, 1, 1_000_000, 60, "workspace tool calls one session may make at once "
                                         "before rateLimit applies"),
    "handoff": (int, 0, 1, 1, "1: a new conversation in the same client process (Claude Code "
                              "/clear, Codex /new or /clear) inherits the old one's name, mail, "
                              "obligations and listen mode; 0: never"),
    "autoReserve": (int, 0, 86400, 0, "seconds: an agent's edit of a file nobody holds takes a "
                                      "shared automatic reservation of it, renewed by its "
                                      "edits, ending this long after the last one or with the "
                                      "session; 0: off"),
    "maxRuns": (int, 1, 1000, 100, "runs queued or running at once (`nexus run`)"),
    "runWait": (int, 0, 3600, 300, "seconds `nexus run` waits for the result before it leaves "
                                   "the run going detached"),
    "runRetention": (int, 600, 90 * 86400, 7 * 86400, "seconds a finished run's record and "
                                                      "result are kept"),
    "runApprovals": (int, 0, 1, 0, "1: runs route their permission requests to nexus "
                                   "(`nexus approvals`) unless `--approvals client`"),
    "approvalTimeout": (int, 1, 590, 300, "seconds a routed permission request waits for an "
                                          "answer before it is rejected"),
    "fsWrite": (int, 0, 1, 0, "1: `fs_write` may write files inside the caller's project"),
    "widerRuns": (int, 0, 1, 0, "1: an agent may start a run with a wider sandbox tier than its "
                                "own (its run's, or what its client states for the call: "
                                "Codex's turn sandbox, Claude Code's permission mode); 0: never"),
}
# settings that widen what agents may do: only the person changes them, at a terminal
PERSON_ONLY = ("fsWrite", "runApprovals", "widerRuns")
DEFAULTS: dict[str, object] = {k: v[3] for k, v in KEYS.items()}


def path(root: str | None = None) -> str:
    """`$NEXUS_HOME/config.toml` when NEXUS_HOME is set (one variable moves everything), else
    `$XDG_CONFIG_HOME/nexus/config.toml` (`~/.config/nexus/config.toml`)."""
    home = paths.explicit_home()
    if home:
        return os.path.join(home, "config.toml")
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "nexus", "config.toml")


def legacy_path(root: str) -> str:
    return os.path.join(root, "settings.json")  # nexus 0.1 kept settings beside the store


def check(key: str, value: object) -> object:
    """`value` as the setting `key` takes it, or ValueError saying why not."""
    if key not in KEYS:
        raise ValueError(f"no setting {key!r}; the settings are {', '.join(KEYS)}")
    kind, low, high, _, _ = KEYS[key]
    if isinstance(value, str):
        try:
            value = kind(value)
        except ValueError:
            raise ValueError(f"{key} takes a whole number from {low} to {high}") from None
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{key} takes a whole number from {low} to {high}")
    return value


def read_file(file: str) -> dict[str, object]:
    """The settings a file holds (raising ValueError when it does not parse)."""
    if not os.path.exists(file):
        return {}
    with open(file, encoding="utf-8") as fh:
        if file.endswith(".json"):
            data = json.load(fh)
        else:
            import tomllib

            data = tomllib.loads(fh.read())
    if not isinstance(data, dict):
        raise ValueError("not a table of settings")
    return data


_CACHED: dict[str, tuple[tuple, dict[str, object]]] = {}


def cached(root: str) -> dict[str, object]:
    """`load(root)`, read again only when a settings file changed (a long-running board or MCP
    server judges many sessions a second)."""
    key: list[tuple[int, int, int] | None] = []
    for file in (legacy_path(root), path(root)):
        try:
            st = os.stat(file)
            key.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            key.append(None)
    got = _CACHED.get(root)
    if got is None or got[0] != tuple(key):
        got = (tuple(key), load(root))
        _CACHED[root] = got
    return got[1]


def load(root: str) -> dict[str, object]:
    """The settings in force: config.toml over the 0.1 settings.json over the defaults. A file
    that cannot be read is reported by `nexus doctor` and ignored here (a hook must never fail
    on it, nor rewrite it); so is a value out of bounds."""
    out = dict(DEFAULTS)
    for file in (legacy_path(root), path(root)):
        try:
            data = read_file(file)
        except (OSError, ValueError, RecursionError):
            continue
        for key, value in data.items():
            try:
                out[key] = check(key, value)
            except ValueError:
                pass
    return out
