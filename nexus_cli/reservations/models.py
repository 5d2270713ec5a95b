"""Argument and result models of file reservations: the source of their schemas in
contract/tools.json (compiled by `python -m nexus_cli.gen`; never imported when a tool runs)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..core.models import AllWorkspaces, Args, Epoch, Page, PeerRef, Result, Stamp
from ..core.settings import (
    RESERVE_PATHS_MAX,
    RESERVE_REASON_MAX,
    RESERVE_TTL,
    RESERVE_TTL_MAX,
    RESERVE_WAIT_MAX,
)
from .patterns import MAX_LENGTH

PathOrGlob = Annotated[str, Field(min_length=1, max_length=MAX_LENGTH)]


class ReserveArgs(Args):
    paths: list[PathOrGlob] = Field(
        min_length=1, max_length=RESERVE_PATHS_MAX, description="Files, directories or globs "
        "(`*`, `?`, `[...]`, `**`), relative to your working directory.",
        json_schema_extra={"x-metavar": "PATH_OR_GLOB"})
    shared: bool = Field(False, description="Shared: others may hold it shared too, and nobody "
                         "is refused an edit; exclusive (the default) refuses others' edits.")
    ttl: float = Field(RESERVE_TTL, gt=0, le=RESERVE_TTL_MAX,
                       description="Seconds until it ends by itself.")
    reason: str = Field("", max_length=RESERVE_REASON_MAX,
                        description="Why: whoever is refused reads it.")
    wait: float = Field(0, ge=0, le=RESERVE_WAIT_MAX,
                        description="On a conflict, wait up to this long for it to end (0: "
                        "refuse at once).")
    all_workspaces: bool = Field(False, description="Allow paths outside your project "
                                 "(another project's files, or a directory above yours).")


class ReleaseArgs(Args):
    paths: list[PathOrGlob] = Field(
        [], max_length=RESERVE_PATHS_MAX, description="What you reserved, as you wrote it.",
        json_schema_extra={"x-metavar": "PATH_OR_GLOB"})
    all: bool = Field(False, description="Every reservation you hold.")


class ReservationsArgs(Args):
    all_workspaces: bool = AllWorkspaces
    mine: bool = Field(False, description="Only yours.")
    limit: int = Field(50, ge=1, le=500, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many.")


class GuardArgs(Args):
    paths: list[PathOrGlob] = Field(
        [], max_length=10_000, description="Files you are about to change.",
        json_schema_extra={"x-metavar": "PATH"})
    staged: bool = Field(False, description="Also the files staged in git (what the pre-commit "
                         "hook checks).")


class Reservation(Result):
    id: str = Field(description="r-...")
    holder: PeerRef
    machine: str | None = Field(None, description="The machine the holder runs on (team mode: "
                                "a reservation covers the same files in every clone of the "
                                "project).")
    root: str = Field(description="The project root the pattern is relative to (on the holder's "
                      "machine).")
    pattern: str = Field(description="The path or glob in normal form, relative to root.")
    exclusive: bool = Field(description="Exclusive: others' edits of its files are refused.")
    auto: bool = Field(description="Taken by an edit (autoReserve), not by `reserve`.")
    reason: str
    created_at: str | None = Stamp("Taken")
    created_at_epoch: float | None = Epoch("Taken")
    expires_at: str | None = Stamp("Ends by itself")
    expires_at_epoch: float | None = Epoch("Ends by itself")
    self: bool = Field(description="True when you hold it.")


class ReserveResult(Result):
    reserved: list[Reservation] = Field(description="What you hold now, one per path given.")
    renewed: list[str] = Field(description="Ids of those you already held (kind, reason and end "
                               "updated).")
    waited_seconds: float = Field(description="How long it waited for a conflict to end.")


class Holder(Result):
    path: str = Field(description="The path as you gave it.")
    reservation: Reservation
    message: str = Field(description="Who holds it, and how it ends.")


class ReleaseResult(Result):
    released: list[Reservation]
    not_held: list[str] = Field(description="Paths given that you hold no reservation of.")
    held_by_others: list[Holder] = Field(description="Of those, the ones other sessions hold: "
                                         "only they (or the person, with --as) can release them.")
    held: list[Reservation] = Field(description="What you still hold.")


class ReservationsResult(Page):
    items: list[Reservation]


class Conflict(Result):
    path: str = Field(description="The file, relative to the reservation's root.")
    reservation: Reservation
    message: str = Field(description="What an edit of it is told.")


class GuardResult(Result):
    ok: bool = Field(description="False when another session holds one of the files "
                     "exclusively (the command then exits 4).")
    checked: int = Field(description="Files checked.")
    conflicts: list[Conflict]
