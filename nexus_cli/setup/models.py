"""Argument and result models of wiring clients up and checking the set-up: the source of their
schemas in contract/tools.json (compiled by `python -m nexus_cli.gen`; never imported when a tool
runs)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..core.models import Args, Result


class UninstallArgs(Args):
    client: Literal["claude", "codex", "git-hook"] = Field(
        description="Which client; git-hook: the commit guard in this git repository's "
        "pre-commit hook (an existing one is chained).")
    scope: Literal["user", "project"] = Field(
        "user", description="user: your own config (~/.claude, ~/.codex); project: this "
        "project's .claude/ or .codex/ and .mcp.json.")
    dry_run: bool = Field(False, description="Show the diff of every file, change nothing.")


class InstallArgs(UninstallArgs):
    tools: str = Field("default", min_length=1, max_length=200,
                       description="MCP tool groups to serve: comma-separated names, `default` "
                       "(sessions, messages, tasks) or `all`.", json_schema_extra={
                           "x-metavar": "GROUPS"})
    trust: bool = Field(False, description="codex: also record that you trust nexus's own hooks "
                        "(Codex skips hooks you have not reviewed), as its /hooks review does. "
                        "Only at your own terminal; an agent may not.")


class FileChange(Result):
    path: str
    action: Literal["created", "updated", "removed", "unchanged"]
    backup: str | None = Field(description="Copy of the file as it was before the write.")
    diff: str = Field(description="Unified diff of the change (empty when unchanged).")


class InstallResult(Result):
    client: str
    scope: str
    dry_run: bool
    installed: bool = Field(description="True for install, False for uninstall.")
    files: list[FileChange]
    notes: list[str]


class DoctorArgs(Args):
    quick: bool = Field(False, description="Skip the timed hook call.")


class Check(Result):
    name: str
    status: Literal["ok", "warn", "fail"]
    detail: str
    fix: str = Field(description="What to do about it (empty when nothing).")


class DoctorResult(Result):
    ok: bool = Field(description="False when any check failed (the command then exits 1).")
    failed: int
    warnings: int
    checks: list[Check]
