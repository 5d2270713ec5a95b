"""contract/ and man/ match the code; every --json output matches its published schema; every
command is documented; CLI output for people is stable (golden, volatile fields normalised)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import A, B, sid
from nexus_cli.catalog import load
from nexus_cli.cli import build
from nexus_cli.gen import contract, docs, manpages
from schemas import validate

ROOT = Path(__file__).resolve().parents[1]


def test_contract_files_match_the_registry():
    assert contract.drift(str(ROOT / "contract")) == [], "run `python -m nexus_cli.gen`"


def test_the_groups_mcp_checks_tools_against_are_the_registry_s():
    """`nexus mcp --tools` checks its choice against settings.GROUPS (not the contract, which it
    would have to read before answering): every group with a tool served over MCP, no other."""
    from nexus_cli.core.settings import DEFAULT_GROUPS, GROUPS

    served = sorted({t.group for t in load().values() if t.mcp})
    assert list(GROUPS) == served and set(DEFAULT_GROUPS) <= set(GROUPS)


def test_man_pages_match_the_cli():
    assert manpages.drift(str(ROOT / "man")) == [], "run `python -m nexus_cli.gen`"


def test_the_command_and_tool_references_match_the_cli():
    assert docs.drift(str(ROOT / "docs")) == [], "run `python -m nexus_cli.gen`"


def test_every_error_code_is_documented_and_has_an_exit_code():
    doc = json.loads((ROOT / "contract" / "errors.json").read_text())
    codes = {e["code"] for e in doc["errors"]}
    used = set(re.findall(r'NexusError\(\s*"([a-z_]+)"', "\n".join(
        p.read_text() for p in (ROOT / "nexus_cli").rglob("*.py"))))
    used |= set(re.findall(r'_fail\(\s*"([a-z_]+)"',
                           (ROOT / "nexus_cli/core/store/db.py").read_text()))
    assert used <= codes, used - codes


def test_every_command_has_help_that_runs(nx):
    """Every command is described (docs/commands.md is made from these texts), and its `--help`
    exits 0, the hook entry points' too (what a doc names must run)."""
    import subprocess
    import sys

    for path, cmd in manpages._commands(build()):
        assert cmd.help, path
        r = nx(*path.split(), "--help")
        assert r.code == 0 and r.out.startswith(f"Usage: nexus {path}"), (path, r.err)
    for args in (["hook", "--help"], ["hook", "claude", "--help"], ["hook", "codex", "--wait",
                                                                      "-h"], ["mcp", "--help"]):
        done = subprocess.run([sys.executable, "-m", "nexus_cli", *args], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=60)
        assert done.returncode == 0 and done.stdout.startswith("Usage: nexus "), (args, done)


def test_the_documented_exit_code_table_is_the_program_s():
    from nexus_cli.core.errors import exits

    table = re.findall(r"^\| (\d+) \| (.+) \|$", (ROOT / "docs" / "output.md").read_text(), re.M)
    assert [int(code) for code, _ in table] == [*exits(), 130]
    out = build().get_help(__import__("click").Context(build()))
    for code, _ in table:
        assert f"{code} " in out


def test_every_tool_in_one_project(nx, hook, chdir_work, tmp_path, monkeypatch):
    """Each tool's --json once, in one project (nx checks each output against its schema; the
    whole suite fails on a tool whose output no test checked: tests/schemas.py)."""
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")

    def run(*args: str, env=None) -> dict:
        r = nx(*args, "--json", env=env)
        assert r.code == 0, (args, r.err)
        return r.json

    run("whoami", env=A)
    run("status", "codex", env=A)
    run("peers", env=A)
    run("profile", "--note", "n", env=A)
    run("listen", "on", env=B)
    run("listen", "off", env=B)
    mid = run("send", "codex", "hi", env=A)["message_id"]
    run("message", "status", mid, env=A)
    run("inbox", env=B)
    run("message", "show", mid, env=B)
    r = nx("message", "status", "m-unknown", "--json", env=A)
    assert r.code == 3  # unknown: not found
    run("read", env=B)
    run("reply", mid, "back", env=B)
    task = run("delegate", "codex", "do it", env=A)["id"]
    run("tasks", "--open", env=B)
    run("report", task, "--status", "completed", "--result", "done", env=B)
    run("tasks", env=A)
    self_task = run("task", "create", "mine", "--ttl", "60000", env=A)["task_id"]
    run("task", "update", self_task, "--progress", "0.5", env=A)
    run("task", "get", self_task, env=A)
    run("tasks", "--self", env=A)
    run("task", "cancel", self_task, env=A)
    manifest = json.dumps({"id": "web_shop", "name": "Shop", "description": "the shop",
                           "techStack": ["python"], "relations": [{"targetId": "api_pay",
                           "type": "dependency"}], "repositoryUrl": "", "localPath": "/w",
                           "endpoints": [{"name": "n", "url": "u", "description": "d"}],
                           "apiSpec": [], "billing": {"plain": "free"}, "feature_tier": "team"})
    run("project", "sync", "--manifest", manifest, "--internal-docs",
        "checkout docs", env=A)
    run("project", "upload", "web_shop", "a.txt", "--base64-content",
        "aGk=", env=A)
    run("project", "update", "web_shop", "--patch", '{"name": "S"}', env=A)
    run("project", "rename", "web_shop", "web_store", env=A)
    run("project", "search", "shop", env=A)
    run("project", "topology", env=A)
    run("project", "get", "web_store", env=A)
    run("doc", "set-strategy", "# plan", env=A)
    run("doc", "strategy", "--history", "2", env=A)
    run("doc", "sync", "arch", "Architecture", "text", env=A)
    run("doc", "list", env=A)
    run("doc", "get", "arch", env=A)
    meeting = run("meeting", "start", "release", env=A)["meetingId"]
    run("chat", "send", "ship it @codex@work", "--category", "DECISION", env=A)
    run("chat", "read", "--meeting-id", meeting, env=B)
    run("meeting", "list", env=A)
    run("meeting", "end", "--summary", "done", env=A)
    run("meeting", "archive", meeting, env=A)
    run("meeting", "reopen", meeting, env=A)
    run("find", "checkout", env=A)
    run("chat", "maintenance", "prune", "--count", "1", "--confirm", env=A)
    run("project", "delete", "web_store", "--confirm", env=A)
    run("handoff", "status", env=A)
    r = nx("ask", "codex", "anyone?", "--timeout", "0", "--json", env=A)
    assert r.code == 7
    run("path")
    run("version")
    run("install", "claude", "--dry-run")
    run("uninstall", "codex", "--dry-run")
    run("doctor", "--quick")
    run("maintenance")
    run("config", "list")
    run("config", "set", "maxAutoTurns", "5")
    run("config", "get", "maxAutoTurns")
    run("events", "--action", "security")
    run("reserve", "src/", "--reason", "r", env=A)
    run("reservations", env=B)
    r = nx("guard", "src/x.py", "--json", env=B)
    assert r.code == 4  # held by another session
    run("status", "claude", env=B)
    run("release", "--all", env=A)
    transcript = tmp_path / "userhome" / ".claude" / "projects" / "p" / f"{sid(1)}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text((ROOT / "tests" / "data" / "transcripts" / "claude-main.jsonl")
                          .read_text().replace("/home/dev/work", chdir_work))
    run("log", f"claude:{sid(1)}", "--timestamps")
    run("log", f"claude:{sid(1)}", "--tail-scan", "--tail", "3")
    run("stats", env=A)
    run("sessions")
    run("search", "hello")
    run("search", "hello", "--no-index")
    run("rename", "claude@work", "a title")
    run("waits", "--on", "codex", env=A)
    run("run", "tools")
    run("run", "tools", "--client", "claude", "--preset", "minimal")
    run("team", "status")
    run("team", "leave")
    run("team", "init", "alice")


def normalise(text: str) -> str:
    text = re.sub(r"m-[0-9a-f]{12}", "m-XXXXXXXXXXXX", text)
    text = re.sub(r"just now|\d+(\.\d+)? [a-z]+ ago", "N ago", text)
    text = re.sub(r"/\S*/work\b", "<work>", text)
    return text


def test_golden_output_for_people(nx, hook, chdir_work, pair):
    sent = normalise(nx("send", "codex", "please review\nsecond line", env=A).out)
    assert sent == ("sent m-XXXXXXXXXXXX to codex@work (s-000000020000)\n"
                    "idle: nothing can wake it now: it has not ended a turn yet (nothing waits "
                    "before its first prompt); the message waits for its next prompt\n")
    # an outlook that says the status itself is not prefixed with it again
    from nexus_cli.messages import render

    again = render.sent({"message_id": "m-1", "duplicate": False, "outlook": "it is listening: "
                         "it is woken at once", "to": {"name": "codex@work", "status": "listening",
                                                      "handle": "s-000000020000"}})
    assert again.splitlines()[1] == "it is listening: it is woken at once", again
    peers = normalise(nx("peers", env=A).out)
    lines = [line.rstrip() for line in peers.splitlines()]
    assert re.match(r"\s+name\s+handle\s+client\s+status\s+active\s+cwd$", lines[0])  # no note
    assert re.match(r"\*\s+claude@work\s+s-000000010000\s+claude\s+idle, no wake\s+N ago\s+"
                    r"<work>$", lines[1])
    assert re.match(r"\s+codex@work\s+s-000000020000\s+codex\s+idle, no wake\s+N ago\s+<work>$",
                    lines[2])
    assert lines[3] == "2 of 2"
    got = normalise(nx("read", env=B).out)
    assert got == ("m-XXXXXXXXXXXX from claude@work (s-000000010000), N ago\n"
                   "> please review\n> second line\n")
    assert nx("read", env=B).out == "no unread messages\n"
    err = nx("send", "nobody", "x", env=A)
    assert err.out == "" and err.err == (
        "nexus: target_not_found: nobody (no session in project " + hook.cwd + " matches; run "
        "`nexus peers --include-offline --all-workspaces` and use a handle)\n")


# The tools that may reach beyond nexus and this machine (MCP's openWorldHint), and why: every
# other tool works on the store and the local files only.
OPEN_WORLD = {
    "run": "it starts Claude Code or Codex, which reach their model and act with their own tools",
    "delegate": "with spawn it starts a run for the task",
}


def tools_json() -> dict[str, dict]:
    """contract/tools.json by tool name."""
    return {t["name"]: t for t in json.loads((ROOT / "contract" / "tools.json").read_text())
            ["tools"]}


@pytest.mark.parametrize("tool", sorted(load()))
def test_tools_have_honest_annotations(tool):
    t = load()[tool]
    if t.read_only:
        assert not t.destructive
    assert t.annotations["openWorldHint"] is (tool in OPEN_WORLD), OPEN_WORLD.get(tool)
    assert tools_json()[tool]["annotations"] == t.annotations  # what clients are told


def test_the_security_model_doc_carries_it_word_for_word():
    """docs/security.md says what the man page says (nexus_cli/gen/prose.py holds it once)."""
    from nexus_cli.gen import prose

    assert prose.SECURITY in (ROOT / "docs" / "security.md").read_text()


COMMAND_SPAN = re.compile(r"`(nexus [^`\n]+)`")
FENCE = re.compile(r"^ *```[^\n]*\n(.*?)^ *```", re.M | re.S)
# a line of a fenced block that runs nexus: `nexus ...`, `$ nexus ...`, after VAR=value
# assignments, or inside `$(...)`; up to a comment, a pipe, a `;`, `&&` or the `)`
FENCED_COMMAND = re.compile(
    r"(?:^ *(?:\$ )?(?:[A-Za-z_][A-Za-z0-9_]*=\S* )*|\$\()(nexus(?: [^#|;&)\n]*)?)", re.M)


def fenced(text: str) -> list[str]:
    """The `nexus ...` commands on the lines of a text's fenced blocks."""
    return [c.strip() for block in FENCE.findall(text) for c in FENCED_COMMAND.findall(block)]


def commands_named(text: str) -> list[str]:
    """The `nexus ...` commands a text names: in backticks, and on its fenced blocks' lines."""
    return [*COMMAND_SPAN.findall(text), *fenced(text)]


def test_every_command_a_text_points_to_exists():
    """What an error, a help text, the README or a doc tells people to run (`nexus ...` in
    backticks or on a line of a fenced block) is a command nexus has, with options that command
    takes (an error said `nexus task list`)."""
    import click

    root = build()
    ctx = click.Context(root)

    def fault(span: str) -> str | None:
        cmd: click.Command = root
        for token in span.split()[1:]:
            if token in ("...", "…", "|"):
                return None
            if token.startswith("-"):
                name = token.split("=")[0].rstrip(",;:.)\"'")
                if not re.match(r"^--?[a-zA-Z]", name):
                    return None
                known = {o for c in (cmd, getattr(cmd, "tool", cmd)) for p in c.params
                         for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
                if name not in known and not (cmd is root and name in ("--version", "-V")):
                    return f"{cmd.name} takes no {name}"
            elif isinstance(cmd, click.Group):
                sub = cmd.get_command(ctx, token)
                if sub is not None:
                    cmd = sub
                elif getattr(cmd, "tool", None) is not None:
                    cmd = cmd.tool  # type: ignore[attr-defined]
                elif re.match(r"^[a-z][a-z0-9-]*$", token):
                    return f"{cmd.name} has no command {token}"
                else:
                    return None  # a placeholder: NAME, <id>, 'text'
        return None

    files = [*sorted((ROOT / "nexus_cli").rglob("*.py")), ROOT / "README.md",
             *sorted((ROOT / "docs").glob("*.md")), ROOT / "contract" / "README.md"]
    texts = {f: f.read_text() for f in files}
    named = [(f.name, span) for f, text in texts.items() for span in commands_named(text)]
    assert sum(len(fenced(text)) for text in texts.values()) > 100  # the fences are read
    faults = [(name, span, why) for name, span in named if (why := fault(span))]
    assert faults == []


def test_the_docs_name_every_command_without_json():
    import click

    from nexus_cli.cli import EXTRA

    root = build()
    ctx = click.Context(root)
    without = {name for name in EXTRA
               if "--json" not in {o for p in root.get_command(ctx, name).params for o in p.opts}}
    line = next(x for x in re.split(r"(?<=\.)\s", (ROOT / "docs" / "output.md").read_text().replace(
        "\n", " ")) if "are not tools and have no `--json`" in x)
    assert set(re.findall(r"`([a-z]+)`", line.split("are not tools")[0])) == without


SEEDS = ROOT.parent / "shared" / "seeds"  # beside the checkout, when it is there


def seed_tools() -> dict[str, list[str]]:
    """Every seed's tool names: tests/data/seed_tools.json, copied from ../shared/seeds/ (each
    tool's heading there); where the seeds are at hand, the copy must hold every heading."""
    import re

    copied = json.loads((Path(__file__).parent / "data" / "seed_tools.json").read_text())["seeds"]
    for path in sorted(SEEDS.glob("*.txt")) if SEEDS.is_dir() else []:
        headed = set(re.findall(r"#{2,4} `([a-z_]+)`", path.read_text(encoding="utf-8")))
        missing = headed - set(copied.get(path.name, []))
        assert not missing, f"tests/data/seed_tools.json lacks {sorted(missing)} of {path.name}"
    return copied


def test_the_docs_map_every_tool_of_every_seed():
    """docs/seeds.md's table names every seed tool (in its first column) with what answers it
    here."""
    import re

    section = (ROOT / "docs" / "seeds.md").read_text(encoding="utf-8")
    mapped = {name for line in section.splitlines() if line.startswith("| ")
              for name in re.findall(r"`([a-z_]+)`", line.split("|")[1])}
    missing = {seed: sorted(set(names) - mapped) for seed, names in seed_tools().items()
               if set(names) - mapped}
    assert not missing, f"add these to the mapping table of docs/seeds.md: {missing}"


# -- which shapes a program reads (contract/README.md) -----------------------------------------


def test_a_program_reads_the_contract_version_from_the_nexus_it_runs(nx):
    from nexus_cli import CONTRACT_VERSION, __version__

    r = nx("version", "--json")
    assert r.code == 0 and r.json == {"version": __version__,
                                      "contract_version": CONTRACT_VERSION}
    validate("version", r.json)
    assert nx("version").out == f"nexus {__version__} (contract {CONTRACT_VERSION})\n"
    for name in ("tools.json", "errors.json", "hook.json"):
        assert json.loads((ROOT / "contract" / name).read_text())["contract_version"] \
            == CONTRACT_VERSION
    import subprocess
    import sys

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    done = subprocess.run([sys.executable, "-m", "nexus_cli", "mcp"], capture_output=True,
                          input=json.dumps(init) + "\n", text=True, timeout=60)
    result = json.loads(done.stdout.splitlines()[0])["result"]
    assert result["_meta"] == {"nexus/contract_version": CONTRACT_VERSION}
    assert result["serverInfo"]["version"] == __version__


def test_within_a_contract_version_the_shapes_only_gain():
    """The shapes recorded for this contract_version (tests/data/contract-v<N>.json) are all
    still here, as they were: a change that is not additive needs a new contract_version."""
    import shapes

    current = shapes.shapes()
    recorded = shapes.recorded_path(current["contract_version"])
    assert recorded.exists(), (f"contract_version {current['contract_version']} has no recorded "
                               "shapes: run `python tests/shapes.py` (and say in CHANGELOG.md "
                               "what changed)")
    assert shapes.breaks(json.loads(recorded.read_text()), current) == []


def test_the_compatibility_check_tells_growth_from_breakage():
    import copy

    import shapes

    old = shapes.shapes()
    assert shapes.breaks(old, old) == []
    grown = copy.deepcopy(old)
    grown["tools"]["send"]["output"][".extra"] = {"type": ["string"], "required": True}
    grown["tools"]["send"]["input"][".extra"] = {"type": ["string"], "required": False}
    grown["tools"]["brand_new"] = {"input": {}, "output": {}}
    grown["errors"].append("brand_new_error")
    assert shapes.breaks(old, grown) == []
    cases = {
        "tool send removed": lambda s: s["tools"].pop("send"),
        "send: result field .message_id removed":
            lambda s: s["tools"]["send"]["output"].pop(".message_id"),
        "send: result field .message_id may now be ['null', 'string']":
            lambda s: s["tools"]["send"]["output"][".message_id"].update(type=["null", "string"]),
        "send: argument .text removed": lambda s: s["tools"]["send"]["input"].pop(".text"),
        "send: new required argument .urgent": lambda s: s["tools"]["send"]["input"].update(
            {".urgent": {"type": ["boolean"], "required": True}}),
        "error code invalid_argument removed": lambda s: s["errors"].remove("invalid_argument"),
    }
    for expected, change in cases.items():
        broken = copy.deepcopy(old)
        change(broken)
        assert shapes.breaks(old, broken) == [expected]
