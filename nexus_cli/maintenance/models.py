"""Argument and result models of the store's place and upkeep: the source of their schemas in
contract/tools.json (compiled by `python -m nexus_cli.gen`; never imported when a tool runs)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..core.models import Args, Result


class PathResult(Result):
    home: str = Field(description="The store directory ($NEXUS_HOME or the platform data dir).")
    database: str
    exists: bool
    schema_version: int | None
    schema_current: int


class VersionResult(Result):
    version: str = Field(description="nexus's own version.")
    contract_version: int = Field(description="The version of the JSON shapes this nexus reads "
                                  "and writes (contract/tools.json): within one, shapes only "
                                  "gain (contract/README.md).")


class MaintenanceResult(Result):
    expired: int = Field(description="Unread messages expired (their senders got notices).")
    tasks_expired: int = Field(description="Open tasks failed for their TTL.")
    sessions_retired: int = Field(description="Sessions recorded offline because their client "
                                  "process exited without ending them (kill -9, a crash).")
    waiters_cleared: int = Field(description="Sessions stuck listening whose waiter had exited.")
    bindings_purged: int = Field(description="Old tool-use bindings removed.")
    reservations_ended: int = Field(description="File reservations past their TTL, or held by "
                                    "sessions that are gone, ended.")
    channels_swept: int = Field(description="Wake channels left behind by killed waiters, and "
                                "news markers of client processes that are gone.")



class ConfigGetArgs(Args):
    key: str = Field(min_length=1, max_length=64, description="The setting (`nexus config list`).")


class ConfigSetArgs(ConfigGetArgs):
    value: str | None = Field(None, max_length=64, description="Its new value; leave it out to "
                              "go back to the default.")


class Setting(Result):
    key: str
    value: int
    default: int
    source: Literal["file", "default"] = Field(description="Where the value comes from.")
    meaning: str
    range: str


class ConfigResult(Result):
    file: str = Field(description="The config file (`$NEXUS_HOME/config.toml`, else "
                      "`$XDG_CONFIG_HOME/nexus/config.toml`).")
    settings: list[Setting]
