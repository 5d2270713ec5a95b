"""The shape of the code, as tests: dependencies point down the layers and form no circle, and the
hot paths (hooks, the MCP server's start) never import click, pydantic or rich."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nexus_cli"

# bottom to top; a module may import its own layer and the ones below, never above
LAYERS = [
    ("infra", ["core.errors", "core.record", "core.timefmt", "core.text", "core.settings",
               "core.proctable", "core.data", "core.store"]),
    ("client runtime", ["clients", "clients.claude", "clients.codex", "clients.claude.runtime",
                        "clients.codex.runtime", "clients.claude.headless",
                        "clients.codex.headless"]),
    ("core", ["core"]),
    ("features", ["messages", "tasks", "delivery", "maintenance", "presence", "activity",
                  "workspace", "reservations", "insight", "runs", "approvals", "files", "team"]),
    ("setup", ["setup", "clients.configfile", "clients.hookdefs", "clients.claude.config",
               "clients.codex.config", "catalog"]),
    ("faces", ["cli", "mcp", "hook", "gen", "web", "__main__"]),
]


def layer_of(module: str) -> int:
    best, depth = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = i, len(prefix)
    assert best >= 0, f"{module} is in no layer: add it to LAYERS"
    return best


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every nexus module `name` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("nexus_cli"):
                target = node.module.removeprefix("nexus_cli").lstrip(".")
            else:
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}" if target else alias.name
                found.add(full if full in known else target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("nexus_cli."):
                    found.add(alias.name.removeprefix("nexus_cli."))
    return {m for m in found if m and m in known and m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def test_dependencies_point_down():
    upward = [f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
              for a, deps in graph().items() for b in deps
              if layer_of(b) > layer_of(a) and not b.startswith(a + ".")]
    assert not upward, "\n".join(upward)


def test_there_is_no_import_circle():
    g = graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(g[node]):
            if node.startswith(dep + ".") or dep.startswith(node + "."):
                continue  # a package and its own modules
            if state.get(dep) == 1:
                return [*stack[stack.index(dep):], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(g):
        if node not in state:
            circle = visit(node)
            assert circle is None, " -> ".join(circle)


HEAVY = ("click", "pydantic", "rich", "portalocker", "tomli_w")
# the web board (`nexus board --web`) and its HTTP server load only when it is served
WEB = ("nexus_cli.web", "http", "socketserver", "email", "webbrowser", "secrets", "hmac")
# a hook also leaves out what stdlib costs milliseconds to import and it does not need
HOOK_HEAVY = (*HEAVY, *WEB, "typing", "subprocess", "shutil", "threading", "dataclasses",
              "shlex", "nexus_cli.core.context", "nexus_cli.cli", "nexus_cli.mcp")
PROBE = """
import io, json, os, sys
sys.argv = ["nexus"] + json.loads(sys.argv[1])
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv.pop().encode()))
exit_now = os._exit

def leave(code):
    raise SystemExit(code)

os._exit = leave
from nexus_cli import __main__
heavy = json.loads(os.environ["HEAVY"])  # null: every module
try:
    __main__.main(sys.argv[1:])
except SystemExit:
    pass
finally:
    loaded = sorted(m for m in sys.modules
                    if heavy is None or m in heavy or m.split(".")[0] in heavy)
    os.write(2, ("LOADED " + json.dumps(loaded) + "\\n").encode())
    exit_now(0)
"""


@pytest.mark.parametrize("argv,stdin", [
    (["hook", "claude"], {"hook_event_name": "PostToolUse",
                          "session_id": "00000001-0000-4000-8000-000000000001", "cwd": "/"}),
    (["hook", "codex", "--wait"], {"hook_event_name": "Notification", "session_id": "x"}),
    (["hook", "claude"], {"hook_event_name": "SessionStart",
                          "session_id": "00000001-0000-4000-8000-000000000001", "cwd": "/"}),
    (["--version"], None),
])
def test_hot_paths_import_nothing_heavy(tmp_path, argv, stdin):
    env = {"NEXUS_HOME": str(tmp_path / "store"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(PACKAGE.parent),
           "HEAVY": json.dumps(HOOK_HEAVY if argv[0] == "hook" else HEAVY)}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps([*argv, json.dumps(stdin)])],
                          env=env, capture_output=True, text=True, timeout=60)
    line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED "))
    assert json.loads(line.removeprefix("LOADED ")) == [], done.stderr


def test_the_mcp_server_answers_initialize_and_lists_tools_without_heavy_imports(tmp_path):
    probe = f"""
import io, json, os, sys
from nexus_cli.mcp.server import Server
out = io.BytesIO()
server = Server(out)
server.handle_line(json.dumps({{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {{"protocolVersion": "2025-06-18"}}}}).encode())
server.handle_line(json.dumps({{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}}).encode())
heavy = {HEAVY!r}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
print(len(json.loads(out.getvalue().splitlines()[1])["result"]["tools"]), flush=True)
server.handle_line(json.dumps({{"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                               "params": {{"name": "waits", "arguments": {{}}}}}}).encode())
web = {WEB!r}
print(json.dumps(sorted(m for m in sys.modules if m in web or m.split(".")[0] in web)),
      flush=True)
os._exit(0)
"""
    env = {"NEXUS_HOME": str(tmp_path / "store"), "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout, done.stderr
    loaded, count, web = done.stdout.splitlines()
    assert json.loads(loaded) == [] and int(count) > 0, done.stderr
    assert json.loads(web) == [], "a tool call over MCP loaded the web board's modules"


def test_a_tool_call_loads_no_upkeep_and_no_activity_log(tmp_path):
    """Once a minute's upkeep is done, a tool call's hook asks only whether a round is due: the
    upkeep's modules (expiry, the task ledger, idle notices) and the activity log stay unloaded,
    and so do the announcement and its text helpers while there is nothing to announce."""
    sid = "00000001-0000-4000-8000-000000000001"
    lazy = ["nexus_cli.maintenance.expiry", "nexus_cli.tasks.ledger",
            "nexus_cli.delivery.notify", "nexus_cli.core.events", "nexus_cli.delivery.announce",
            "nexus_cli.core.shellcmd", "nexus_cli.core.text"]
    env = {"NEXUS_HOME": str(tmp_path / "store"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(PACKAGE.parent), "HEAVY": json.dumps(lazy)}
    from standin import StandIn

    seen = []
    with StandIn("claude", str(tmp_path / "bin")) as claude:  # the hooks' client process
        for event in ("SessionStart", "PostToolUse"):
            stdin = {"hook_event_name": event, "session_id": sid, "cwd": "/", "tool_name": "Bash"}
            done = claude.run([sys.executable, "-c", PROBE,
                               json.dumps(["hook", "claude", json.dumps(stdin)])], env)
            assert "refused" not in done["err"], done["err"]
            line = next(x for x in done["err"].splitlines() if x.startswith("LOADED "))
            seen.append(json.loads(line.removeprefix("LOADED ")))
    assert seen[0], "the first event of a new store runs the upkeep (the probe sees it)"
    assert seen[1] == [], seen


# what each event's hook may load beyond the interpreter's floor (`import json, sqlite3`): the
# store, the session and its admission, and the client's own adapter for every event; a tool
# call with nothing to say nothing more (no mailbox, no chat feed, no upkeep: its news check is
# one question); a prompt and a Stop their announcement. Each module costs every hook of every
# agent about 0.3 ms (bench/hotpath.py): a new one here is a decision, not an accident.
EVERY_EVENT = {"__future__", "fcntl", "gc", *(f"nexus_cli{m}" for m in (  # gc: built in
    "", ".__main__", ".hook", ".hook.entry", ".hook.handlers", ".clients", ".clients.claude",
    ".clients.claude.runtime", ".core", ".core.errors", ".core.record", ".core.identity",
    ".core.proctable", ".core.settings", ".core.jsonstrict", ".core.sessions",
    ".core.store", ".core.store.paths", ".core.store.team", ".core.store.policy",
    ".core.store.queue", ".core.store.wake", ".core.store.db", ".core.store.news",
    ".messages"))}
ANNOUNCING = {f"nexus_cli.{m}" for m in (
    "maintenance", "maintenance.schedule", "delivery", "delivery.announce", "delivery.turns",
    "messages.mailbox", "core.shellcmd", "core.text")}
HOT_EVENTS = {
    "PostToolUse": ({"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {}}, set()),
    "PreToolUse": ({"tool_name": "mcp__nexus__peers", "tool_use_id": "toolu_2",
                    "tool_input": {}}, set()),
    "UserPromptSubmit": ({"prompt": "hello"}, {*ANNOUNCING, "nexus_cli.workspace",
                                               "nexus_cli.workspace.feed", "nexus_cli.tasks",
                                               "nexus_cli.tasks.ledger"}),
    "Stop": ({"stop_hook_active": False}, {*ANNOUNCING, "nexus_cli.delivery.notify"}),
}


def loaded_by(client, argv: list[str], env: dict, stdin: object = None) -> set[str]:
    """Every module the probe's process holds once `nexus ARGV` is done (as a child of `client`)."""
    done = client.run([sys.executable, "-c", PROBE, json.dumps([*argv, json.dumps(stdin)])],
                      {**env, "HEAVY": "null"})
    assert "refused" not in done["err"] and "internal_error" not in done["err"], done["err"]
    line = next(x for x in done["err"].splitlines() if x.startswith("LOADED "))
    return set(json.loads(line.removeprefix("LOADED ")))


def test_each_hot_event_loads_what_it_needs_and_nothing_more(tmp_path):
    """A quiet tool call, a prompt and a Stop, after the session's start (whose upkeep round is
    done then, so none is due): what each loads beyond `python -c "import json, sqlite3"`."""
    sid = "00000001-0000-4000-8000-000000000001"
    env = {"NEXUS_HOME": str(tmp_path / "store"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(PACKAGE.parent)}
    floor = subprocess.run([sys.executable, "-c", "import json, sqlite3, sys; "
                            "print(json.dumps(sorted(sys.modules)))"], env=env,
                           capture_output=True, text=True, timeout=60, check=True)
    below = set(json.loads(floor.stdout)) | {"io"}
    from standin import StandIn

    with StandIn("claude", str(tmp_path / "bin")) as claude:
        start = {"hook_event_name": "SessionStart", "session_id": sid, "cwd": "/"}
        assert loaded_by(claude, ["hook", "claude"], env, start)
        for event, (fields, extra) in HOT_EVENTS.items():
            stdin = {"hook_event_name": event, "session_id": sid, "cwd": "/", **fields}
            beyond = loaded_by(claude, ["hook", "claude"], env, stdin) - below
            assert beyond <= EVERY_EVENT | extra, (event, sorted(beyond - EVERY_EVENT - extra))


MCP_START = """
import io, json, sys
argv = json.loads(sys.argv[1])
sys.stdin = io.TextIOWrapper(io.BytesIO((json.dumps({"jsonrpc": "2.0", "id": 1,
    "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
    + "\\n").encode()))
from nexus_cli.mcp import server
seen = []
def answered(self):  # called once the first answer is out
    specs = sys.modules.get("nexus_cli.core.specs")
    seen.append([sorted(sys.modules), bool(specs and specs._SPECS)])
server.Server.start_preparing = answered
from nexus_cli import __main__
__main__.main(argv)
sys.stderr.write("AT_ANSWER " + json.dumps(seen[0]) + "\\n")
"""


@pytest.mark.parametrize("tools", [[], ["--tools", "all"], ["--tools", "sessions,runs"]])
def test_nexus_mcp_as_its_client_starts_it_answers_with_its_server_alone(tmp_path, tools):
    """`nexus mcp` through the entry point, as a client spawns it: when `initialize` is
    answered, the server module and its strict JSON are all that loaded of nexus (the groups
    chosen are checked against settings.GROUPS, not the contract), and no typing (a fifth of
    the start): the start stays flat as groups are added."""
    env = {"NEXUS_HOME": str(tmp_path / "store"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run([sys.executable, "-c", MCP_START, json.dumps(["mcp", *tools])],
                          env=env, capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "nexus"
    line = next(x for x in done.stderr.splitlines() if x.startswith("AT_ANSWER "))
    modules, read_contract = json.loads(line.removeprefix("AT_ANSWER "))
    loaded = set(modules)
    assert not read_contract, "contract/tools.json was read before initialize was answered"
    ours = {m for m in loaded if m.startswith("nexus_cli")}
    allowed = {"nexus_cli", "nexus_cli.__main__", "nexus_cli.core", "nexus_cli.core.jsonstrict",
               "nexus_cli.mcp", "nexus_cli.mcp.server"}
    if tools:  # the choice checked before anything is served
        allowed |= {"nexus_cli.core.specs", "nexus_cli.core.data", "nexus_cli.core.errors",
                    "nexus_cli.core.settings", "nexus_cli.core.store",
                    "nexus_cli.core.store.paths"}
    assert ours <= allowed, sorted(ours - allowed)
    assert not loaded & {"typing", *HEAVY}, sorted(loaded & {"typing", *HEAVY})


def probed(tmp_path: Path, probe: str) -> subprocess.CompletedProcess:
    """`probe` run by a fresh interpreter on a store of its own; it must print and exit 0."""
    env = {"NEXUS_HOME": str(tmp_path / "store"), "PYTHONPATH": str(PACKAGE.parent),
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout, done.stderr
    return done


def test_the_mcp_server_answers_before_it_loads_what_the_tools_need(tmp_path):
    """`initialize` and `server/discover` are answered by the server module and its strict JSON
    parser alone (no typing, no registry, no feature); `tools/list` needs the contract only; a
    call loads its own tool's feature and no other."""
    probe = """
import io, json, os, sys
from nexus_cli.mcp.server import Server
def ours():
    return sorted(m for m in sys.modules if m.startswith("nexus_cli"))
out = io.BytesIO()
server = Server(out, ("sessions", "messages", "tasks", "runs"))
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
server.handle_line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"protocolVersion": "2025-11-25"}}).encode())
server.handle_line(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "server/discover",
                               "params": {"_meta": meta}}).encode())
answered = ours(), "typing" in sys.modules
server.handle_line(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).encode())
server._preparer.join()
listed = ours()
server.handle_line(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"text": "x"}}}).encode())
server.workers.shutdown()
print(json.dumps([answered, listed, ours()]), flush=True)
os._exit(0)
"""
    done = probed(tmp_path, probe)
    (answered, typing_loaded), listed, called = json.loads(done.stdout)
    # the server module and the strict JSON it parses every message with (stdlib json alone)
    assert answered == ["nexus_cli", "nexus_cli.core", "nexus_cli.core.jsonstrict", "nexus_cli.mcp",
                        "nexus_cli.mcp.server"] and not typing_loaded
    features = {m.split(".")[1] for m in listed if m.endswith(".tools") and m.count(".") == 2}
    assert "nexus_cli.core.registry" in listed and features <= {"maintenance", "mcp"}, listed
    called_features = {m.split(".")[1] for m in called if m.endswith(".tools")}
    assert called_features - features == {"runs"}, called  # echo's feature, and no other


def test_the_mcp_server_imports_one_feature_at_a_time_after_its_own_preparation(tmp_path):
    """Calls that arrive together on a fresh server import their features one after another, and
    only once the preparation's imports are done: two threads importing at once can each be
    handed the other's half-initialised module (CPython gh-83065), and a call that runs on one
    fails with a NameError of a name its module defines further down."""
    probe = """
import importlib, io, json, os, sys, threading, time
import nexus_cli.catalog as catalog
from nexus_cli.mcp.server import Server
state = {"now": 0, "most": 0, "early": 0}
lock = threading.Lock()
real = importlib.import_module
def slow(name, *rest):
    with lock:
        state["now"] += 1
        state["most"] = max(state["most"], state["now"])
        tools = sys.modules.get("nexus_cli.mcp.tools")
        if tools is None or getattr(tools.__spec__, "_initializing", False):
            state["early"] += 1
    try:
        time.sleep(0.05)
        return real(name, *rest)
    finally:
        with lock:
            state["now"] -= 1
catalog.importlib = type("I", (), {"import_module": staticmethod(slow)})
server = Server(io.BytesIO())
server.handle_line(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                               "params": {"protocolVersion": "2025-11-25"}}).encode())
server.start_preparing()
for i, name in enumerate(["peers", "inbox", "tasks", "events", "reservations", "waits"]):
    server.handle_line(json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                                   "params": {"name": name, "arguments": {}}}).encode())
server.workers.shutdown()
print(json.dumps(state), flush=True)
os._exit(0)
"""
    done = probed(tmp_path, probe)
    state = json.loads(done.stdout)
    assert state["most"] == 1 and state["early"] == 0, state


def test_every_package_of_the_source_tree_ships():
    """pyproject.toml lists the packages (setuptools cannot both find them and map the data
    folders hooks/, contract/ and man/ into the package): a folder of code missing from the list
    would be missing from every installed nexus, so the list is checked against the tree."""
    import tomllib

    conf = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(PACKAGE.parent).parts)
             for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts}
    listed = set(conf["packages"])
    assert found <= listed, f"add to pyproject.toml's packages: {sorted(found - listed)}"
    assert listed - found == set(conf["package-dir"]), sorted(listed - found)
