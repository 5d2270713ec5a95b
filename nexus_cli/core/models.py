"""The shapes every feature's models share. Models are the source of the schemas in
contract/tools.json (compiled by `python -m nexus_cli.gen`); a running tool never imports them:
arguments are checked against the compiled schemas by `core.validate`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from . import jsonstrict
from .availability import STATUS_HELP
from .settings import METADATA_BYTES, METADATA_DEPTH, TASK_MAX, TEXT_MAX  # noqa: F401


def _kinds(annotation: Any) -> set[type]:
    """The plain types an argument's annotation admits (`int | None` -> {int, NoneType})."""
    args = get_args(annotation)
    if get_origin(annotation) is Literal:
        return {type(a) for a in args}
    if args and get_origin(annotation) not in (list, dict):
        return {k for a in args for k in _kinds(a)}
    return {get_origin(annotation) or annotation}


class Args(BaseModel):
    """Arguments read as `core.validate` reads them at run time from the compiled schemas (the
    two must accept the same, tests/test_validate.py): null means "not given"; text for a number
    or a flag is read trimmed, a number only in plain decimal notation (no `1_000`, `nan` or
    `inf`: nothing non-finite at all), a flag also from 0/1 or t/f/y/n; a flag is never a
    number; text that must not be empty must not be blank either."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _as_run_time_reads(cls, data: Any) -> Any:
        from .validate import INT_TEXT, NUMBER_TEXT

        if not isinstance(data, dict):
            return data
        fields = {**cls.model_fields, **{f.alias: f for f in cls.model_fields.values() if f.alias}}
        out = {}
        for key, value in data.items():
            field = fields.get(key)
            if value is None or field is None:
                if value is not None:
                    out[key] = value  # not an argument: extra="forbid" refuses it
                continue
            kinds = _kinds(field.annotation)
            numeric = kinds & {int, float}
            if isinstance(value, bool) and numeric and bool not in kinds:
                raise ValueError(f"{key}: a flag is not a number")
            if isinstance(value, str) and (numeric or bool in kinds) and str not in kinds:
                value = value.strip()
                plain = NUMBER_TEXT if float in kinds else INT_TEXT
                if numeric and bool not in kinds and not plain.match(value):
                    raise ValueError(f"{key}: not a number in plain decimal notation")
            if isinstance(value, str) and str in kinds and not value.strip() and \
                    any(getattr(m, "min_length", 0) >= 1 for m in field.metadata):
                raise ValueError(f"{key}: must not be blank")
            out[key] = value
        return out


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


def Stamp(description: str) -> Any:  # a pydantic Field, typed as Field is
    return Field(None, description=f"{description} (ISO 8601 with offset)")


def Epoch(description: str) -> Any:
    return Field(None, description=f"{description} (seconds since the epoch)")


Status = Literal["working", "waiting", "listening", "idle", "offline"]


class PeerRef(Result):
    id: str = Field(description="Session id: claude:<id>, codex:<id> or user:<login> (in team "
                    "mode user:<login>@<machine> or user:<team name>).")
    handle: str = Field(description="Stable short form: s- plus 12 hex digits (u- and the user "
                        "id's part after user: for people).")
    name: str = Field(description="Display name, unique among live sessions.")


class Profile(PeerRef):
    client: str = Field(description="claude, codex or user.")
    cwd: str
    project: str = Field(description="Project root (git top level, else cwd), a path on the "
                         "session's machine.")
    scope: str = Field(description="The project as every machine names it, the default scope: "
                       "the project root; in team mode the normalised URL of the git remote "
                       "origin (host/path), else the root.")
    note: str
    status: Status = Field(description=STATUS_HELP)
    status_reason: str | None = Field(None, description="Why it has this status, where the "
                                      "status alone does not say: what ended it, what it waits "
                                      "for, what keeps it from being woken.")
    waiting_for: str | None = Field(None, description="waiting: what its client waits for a "
                                    "person to answer, as far as it says (a permission prompt "
                                    "and its tool).")
    wakeable: bool | None = Field(None, description="idle or listening agents: whether a "
                                  "message wakes it now; null for other statuses and for people.")
    wake: bool = Field(True, description="Whether it accepts being woken by messages (`profile "
                       "--wake off`: no).")
    last_active_at: str | None = Stamp("Last activity")
    last_active_at_epoch: float | None = Epoch("Last activity")
    parent: str | None = Field(None, description="The session whose agent started this one "
                               "(a nested agent), if any.")
    successor: PeerRef | None = Field(None, description="The conversation that replaced this "
                                      "one in its client (/clear, Codex /new), if any.")
    self: bool = Field(description="True for the calling session.")


class Page(Result):
    total: int = Field(description="Matches before the limit was applied.")
    count: int = Field(description="Items in this page.")
    offset: int
    limit: int
    truncated: bool = Field(description="True when more items follow.")
    next: str | None = Field(None, description="How to get the next page, when truncated.")


Target = Field(min_length=1, max_length=300,
               description="Session id, handle or name.")


AllWorkspaces = Field(False, description="All projects.")
DeliveryMode = Literal["auto", "queue", "steer"]
DELIVERY = "queue: its next turn; steer: its next tool call; auto: steer if it is working."
Delivery: Any = Field("auto", description=DELIVERY)


NoWake = Field(False, description="Do not wake the recipient (it sees it at its next prompt or "
               "tool call).")


RequestId = Field(None, min_length=1, max_length=200,
                  description="Idempotency key.")


MessageId = Field(min_length=1, max_length=64, description="Message id (m-...; a unique beginning "
                  "will do).", json_schema_extra={"x-refers": "message"})


class NoArgs(Args):
    pass


def _json_object(value: object) -> object:
    """The CLI passes metadata as JSON text; MCP passes an object."""
    if isinstance(value, str):
        try:
            return jsonstrict.loads(value)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"not JSON: {exc}") from None
    return value


def _bounded(value: dict[str, Any] | None) -> dict[str, Any] | None:
    from .validate import Problem, check

    try:
        check(JSON_BOUNDS, value)
    except Problem as exc:
        raise ValueError(exc.reason) from None
    return value


JSON_BOUNDS = {"type": "object", "x-json": True, "x-max-depth": METADATA_DEPTH,
               "x-max-bytes": METADATA_BYTES}
# a JSON object kept with a record: text on the CLI, an object over MCP; bounded in depth and size
JsonObject = Annotated[dict[str, Any] | None, BeforeValidator(_json_object),
                       AfterValidator(_bounded), Field(json_schema_extra=JSON_BOUNDS)]
