"""man/: `nexus(1)` and one page per command group, generated from the live click tree, the
registry and the shared prose. `python -m nexus_cli.gen` writes them; a test fails on drift."""

from __future__ import annotations

import re

import click

from .. import __version__
from ..core.errors import exits
from ..core.registry import GROUP_TITLES
from . import generated, prose


def group_title(group: str) -> str:
    """A group's title for its man page and its docs section; a new group says where its title
    goes instead of failing with a KeyError."""
    try:
        return GROUP_TITLES[group]
    except KeyError:
        raise SystemExit(f"nexus_cli.gen: the tool group {group!r} has no title: add one to "
                         "GROUP_TITLES in nexus_cli/core/registry.py (and the group to "
                         "settings.GROUPS when it is served over MCP)") from None


def esc(text: str) -> str:
    """Plain text for roff, with Markdown's `code` and **bold** set in bold."""
    out = text.replace("\\", "\\e").replace("-", "\\-")
    out = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", out)
    out = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", out)
    return "\n".join(("\\&" + line) if line[:1] in ".'" else line for line in out.splitlines())


def markdown(text: str) -> list[str]:
    """Paragraphs and `- ` bullets of Markdown as roff."""
    out: list[str] = []
    for block in text.strip().split("\n\n"):
        items = re.split(r"\n(?=- )", block)
        if items[0].startswith("- "):
            for item in items:
                out += [".IP \\(bu 2", esc(" ".join(item[2:].split()))]
        else:
            out += [".PP", esc(" ".join(block.split()))]
    return out


def table(rows: list[tuple[str, str]]) -> list[str]:
    return [line for name, meaning in rows
            for line in (".TP", f"\\fB{esc(name)}\\fR", esc(meaning))]


def _commands(root: click.Group) -> list[tuple[str, click.Command]]:
    found = []

    def walk(group: click.Group, prefix: list[str]) -> None:
        ctx = click.Context(group, info_name=" ".join(["nexus", *prefix]))
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if isinstance(cmd, click.Group):
                tool = getattr(cmd, "tool", None)  # a tool that is also a group: `nexus run`
                if isinstance(tool, click.Command):
                    found.append((" ".join([*prefix, name]), tool))
                walk(cmd, [*prefix, name])
            elif cmd is not None:
                found.append((" ".join([*prefix, name]), cmd))

    walk(root, [])
    return found


def group_of(path: str, cmd: click.Command) -> str:
    from ..cli import group_of

    return group_of(path, cmd)


def _usage(path: str, cmd: click.Command) -> str:
    ctx = click.Context(cmd, info_name=f"nexus {path}")
    return " ".join([f"nexus {path}", *cmd.collect_usage_pieces(ctx)])


def _options(cmd: click.Command) -> list[str]:
    lines = []
    for p in cmd.params:
        if isinstance(p, click.Option):
            names = ", ".join(p.opts)
            meta = "" if p.is_flag else f" {p.metavar or 'VALUE'}"
            lines += [".TP", f"\\fB{esc(names)}\\fR{esc(meta)}", esc(p.help or "")]
    return lines


def _example(cmd: click.Command) -> list[str]:
    example = getattr(cmd, "example", "")
    return [".PP", "Example:", ".PP", ".RS 4", ".nf", esc(example), ".fi", ".RE"] if example else []


def page(title: str, name: str, description: str, body: list[str]) -> str:
    head = [f'.TH "{title.upper()}" "1" "" "nexus {__version__}" "nexus manual"', ".SH NAME",
            f"{esc(name)} \\- {esc(description)}"]
    return "\n".join([*head, *body]) + "\n"


def render(root: click.Group) -> dict[str, str]:
    commands = _commands(root)
    groups: dict[str, list[tuple[str, click.Command]]] = {}
    for path, cmd in commands:
        groups.setdefault(group_of(path, cmd), []).append((path, cmd))
    pages = {}
    main_body = [".SH SYNOPSIS", "\\fBnexus\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR]",
                 ".SH DESCRIPTION", esc(root.help or ""), ".SH COMMANDS"]
    for path, cmd in commands:
        main_body += [".TP", f"\\fBnexus {esc(path)}\\fR", esc(cmd.get_short_help_str(200))]
    from ..cli import EXIT_MEANINGS

    main_body += [".SH EXIT STATUS", *table([(str(c), EXIT_MEANINGS[c]) for c in exits()]),
                  ".SH ENVIRONMENT", *table(prose.ENVIRONMENT),
                  ".SH FILES", *table(prose.FILES),
                  ".SH SECURITY", *markdown(prose.SECURITY),
                  ".SH EXAMPLES", *table(prose.EXAMPLES),
                  ".SH SEE ALSO", ", ".join(f"\\fBnexus\\-{g}\\fR(1)" for g in sorted(groups))]
    pages["nexus.1"] = page("nexus", "nexus", "coordinate coding-agent sessions on one machine",
                            main_body)
    for group, members in sorted(groups.items()):
        body = []
        for path, cmd in members:
            body += [".SH " + esc(f"nexus {path}").upper(), ".nf", esc(_usage(path, cmd)), ".fi",
                     *markdown(cmd.help or ""), *_example(cmd), *_options(cmd)]
        body += [".SH SEE ALSO", "\\fBnexus\\fR(1)"]
        pages[f"nexus-{group}.1"] = page(f"nexus-{group}", f"nexus-{group}",
                                         group_title(group), body)
    return pages


def drift(directory: str) -> list[str]:
    from ..cli import build

    return generated.drift(directory, render(build()), ".1")


def write(directory: str) -> list[str]:
    from ..cli import build

    return generated.write(directory, render(build()), ".1")
