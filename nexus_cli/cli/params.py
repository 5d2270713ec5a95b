"""Click parameters from a tool's compiled input schema (contract/tools.json): positional
arguments, flags, choices (listed in --help and completed), required options marked, session
names and handles completed for targets. Values reach the tool as typed, and `core.validate`
checks them, so the CLI and MCP accept exactly the same."""

from __future__ import annotations

import re
from typing import Any

import click
from click.shell_completion import CompletionItem

METAVAR = {"integer": "N", "number": "NUMBER", "string": "TEXT", "object": "JSON"}
SECONDS = ("timeout", "ttl", "wait")
PATHS = ("cwd", "path", "dir")
TARGETS = ("target", "to", "peer")  # arguments that name a session
ALIASES = {"count": ("--limit",)}  # `read --limit`, as every other listing says it


def _kind(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return kind or "string"


def cli_words(text: str) -> str:
    """A tool's text as the command line says it: an MCP tool name that is not a command's
    (`run_result`) as its command (`nexus run result`)."""
    from ..core.specs import specs

    renamed = {name: "nexus " + " ".join(s["cli"]["path"]) for name, s in specs().items()
               if s["cli"] and "_" in name}
    if not renamed:
        return text
    pattern = r"`?\b(" + "|".join(map(re.escape, renamed)) + r")\b`?"
    return re.sub(pattern, lambda m: f"`{renamed[m.group(1)]}`", text)


def _help(prop: dict[str, Any]) -> str:
    text = cli_words(prop.get("description", ""))
    default = prop.get("default")
    if default not in (None, False, "", [], {}) and _kind(prop) != "boolean":
        text += f" [default: {default}]"
    return text


def _bounds(prop: dict[str, Any]) -> str:
    """What an argument's schema limits, for its help: " (at most 32,000 characters)"."""
    low, high = prop.get("minLength", 0), prop.get("maxLength")
    if high is not None:
        return f" ({low:,}-{high:,} characters)" if low > 1 else f" (at most {high:,} characters)"
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None and high is not None:
        return f" ({low:,} to {high:,})"
    return f" (at least {low:,})" if low is not None else \
        f" (at most {high:,})" if high is not None else ""


def _metavar(name: str, prop: dict[str, Any]) -> str:
    if prop.get("x-metavar"):
        return str(prop["x-metavar"])
    if name.endswith(SECONDS):
        return "SECONDS"
    if name.endswith(PATHS):
        return "PATH"
    return METAVAR[_kind(prop)]


def dest(name: str) -> str:
    """The Python name of an argument: seed 004's camelCase (`projectId`) as `project_id`."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def flag(name: str) -> str:
    return "--" + dest(name).replace("_", "-")


def schema_names(spec: dict[str, Any]) -> dict[str, str]:
    """Click's parameter names back to the schema's argument names."""
    return {dest(n): n for n in spec["inputSchema"].get("properties", {})}


def complete_session(ctx: click.Context, param: click.Parameter,
                     incomplete: str) -> list[CompletionItem]:
    """Names and handles of the live sessions in this project (read-only; silent on trouble)."""
    try:
        import os
        import time

        from ..core import caller, discovery, identity
        from ..core.store.db import Store

        store = Store()
        if not (store.check_dir() and store.check_file()):
            return []
        with store.read() as conn:
            me = caller.standing(conn, identity.user_id(), os.getcwd(), "user")
            rows = discovery.scoped_rows(conn, me, time.time(), False, False)
    except Exception:
        return []
    found = []
    for row in rows:
        for value in (row["name"], row["handle"]):
            if value.startswith(incomplete):
                found.append(CompletionItem(value, help=f"{row['client']}, {row['status']}"))
    return found


def params(spec: dict[str, Any]) -> list[click.Parameter]:
    schema = spec["inputSchema"]
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    cli = spec["cli"]
    out: list[click.Parameter] = []
    for name in cli["positional"]:
        prop = props[name]
        choice = click.Choice(prop["enum"]) if "enum" in prop else None
        many = _kind(prop) == "array"  # any number of values (a list argument)
        meta = "{" + "|".join(prop["enum"]) + "}" if choice else \
            str(prop.get("x-metavar") or dest(name).upper()) + ("..." if many else "")
        meta = meta if name in required else f"[{meta}]"
        arg = click.Argument(
            [dest(name)], required=name in required, type=choice, metavar=meta,
            nargs=-1 if many else 1,
            shell_complete=complete_session if name in TARGETS else None)
        # shown under "Positional arguments" by click 8.5 and later (older ones leave it out)
        bounds = _bounds(prop.get("items", prop) if many else prop)
        text = cli_words(prop.get("description", ""))
        arg.help = (text.rstrip(".") + bounds + "." if bounds else  # type: ignore[attr-defined]
                    text)
        out.append(arg)
    for name, prop in props.items():
        if name in cli["positional"]:
            continue
        names = [flag(name), *ALIASES.get(name, ()), dest(name)]
        if _kind(prop) == "boolean" and prop.get("default") is True:  # on unless turned off
            names = [f"{flag(name)}/--no-{flag(name)[2:]}", dest(name)]
            out.append(click.Option(names, default=None, help=_help(prop)))
        elif _kind(prop) == "boolean":
            out.append(click.Option(names, is_flag=True, default=None, help=_help(prop)))
        elif "enum" in prop:
            out.append(click.Option(names, type=click.Choice(prop["enum"]), default=None,
                                    required=name in required, help=_help(prop)))
        else:
            out.append(click.Option(
                names, default=None, required=name in required, metavar=_metavar(name, prop),
                help=_help(prop), shell_complete=complete_session if name in TARGETS else None))
    out.append(click.Option(["--json", "as_json"], is_flag=True,
                            help="Print the result as JSON (the stable shape in contract/)."))
    if cli["caller"]:
        out.append(click.Option(["--as", "as_"], default=None, metavar="SESSION",
                                shell_complete=complete_session,
                                help="Act as this session (exact id, handle or name): yourself, "
                                "or, from an interactive terminal, a session you speak for."))
    return out


def namer(spec: dict[str, Any]):
    """How to name an argument in an error: as the person typed it (`--count`, `TARGET`)."""
    positional = set(spec["cli"]["positional"])

    def name(path: tuple) -> str:
        if not path:
            return "arguments"
        head = str(path[0])
        shown = dest(head).upper() if head in positional else flag(head)
        return shown + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:])

    return name
