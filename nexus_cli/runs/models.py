"""Argument and result models of runs, presets, policy, info and echo: the source of their schemas
in contract/tools.json (never imported when a tool runs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..core.models import TASK_MAX, AllWorkspaces, Args, Epoch, Page, PeerRef, Result, Stamp

Client = Literal["claude", "codex"]
Tier = Literal["read-only", "workspace-write", "danger-full-access"]
RunStatus = Literal["queued", "running", "done", "error", "cancelled"]
RunId = Field(min_length=1, max_length=64, description="The run id (r-...; a unique beginning will "
              "do).", json_schema_extra={"x-refers": "run"})


class RunArgs(Args):
    client: Client = Field(description="claude (claude -p) or codex (codex exec).")
    task: str = Field(min_length=1, max_length=TASK_MAX,
                      description="The instruction: goal and acceptance criteria.")
    context: str | None = Field(None, max_length=TASK_MAX, description="Context put before "
                                "the task.")
    cwd: str | None = Field(None, max_length=4096, description="Working folder (default: "
                            "yours).")
    resume: str | None = Field(None, max_length=300, description="Continue this session "
                               "(id or handle).")
    title: str | None = Field(None, max_length=200, description="A title for the run.")
    preset: str | None = Field(None, max_length=100, description="Preset id (preset_list).")
    sandbox: Tier | None = Field(None, description="Sandbox tier for this run.")
    approvals: Literal["nexus", "client"] | None = Field(
        None, description="nexus: permission requests wait for `approve`.")
    detach: bool = Field(False, description="Return at once; collect with run_result.")


class RunIdArgs(Args):
    run_id: str = RunId


class RunListArgs(Args):
    status: RunStatus | None = Field(None, description="Only runs in this status.")
    all_workspaces: bool = AllWorkspaces
    limit: int = Field(20, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many.")


class ToolCall(Result):
    name: str
    input: str = Field(description="The call's arguments as JSON (<= 2,000 chars).")


class ToolOutput(Result):
    name: str
    output: str = Field(description="<= 2,000 chars.")
    is_error: bool


class Change(Result):
    path: str = Field(description="Absolute path.")
    kind: str


class Stats(Result):
    session_id: str | None
    scope: Literal["run"]
    rounds: int
    steps: int
    llm_time_ms: int
    llm_time: str
    tool_time_ms: int
    tool_time: str
    total_time_ms: int
    total_time: str
    ttft_ms: int | None
    ttft: str | None
    tokens_per_sec: float | None
    cache_hit_rate: float | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int


class Landing(Result):
    hint: str
    likely_dir: str
    mentioned_write: bool
    paths_in_result: list[str]
    changed: list[str]


class RunOutput(Result):
    session_id: str | None
    assistant_text: str = Field(description="<= 8,000 chars; thinking stripped.")
    tool_calls: list[ToolCall] = Field(description="At most 50.")
    tool_results: list[ToolOutput] = Field(description="The last 20 at most.")
    changes: list[Change]
    stats: Stats
    truncated: dict[str, bool] = Field(description="Which fields were cut.")
    tool_calls_total: int
    tool_results_total: int
    sandbox: str | None


class RunSummary(Result):
    id: str
    status: RunStatus
    client: Client
    title: str | None
    preset: str | None
    sandbox: str | None
    approvals: Literal["nexus", "client"]
    cwd: str
    session_id: str | None
    session: PeerRef | None
    dispatcher: PeerRef
    task_id: str | None = Field(description="The task, for `delegate --spawn`.")
    error: str | None
    has_result: bool
    created_at: str | None = Stamp("Queued")
    created_at_epoch: float | None = Epoch("Queued")
    started_at: str | None = Stamp("Its runner started")
    started_at_epoch: float | None = Epoch("Its runner started")
    finished_at: str | None = Stamp("Finished")
    finished_at_epoch: float | None = Epoch("Finished")
    waited_ms: int | None = Field(description="From queued to finished.")
    waited: str | None


class RunResult(RunSummary):
    result: RunOutput | None = Field(description="Only when done.")
    landing: Landing | None = Field(description="When the answer mentions writing a file "
                                    "without an absolute path.")
    retain_ms: int
    retain: str
    output_file: str | None = Field(description="The client's whole event stream.")
    next: str


class RunList(Page):
    active: int = Field(description="Queued plus running.")
    items: list[RunSummary]


class CancelResult(Result):
    ok: bool
    status: RunStatus
    was: RunStatus
    run_id: str
    session_id: str | None
    note: str | None
    error: str | None
    next: str


class PresetInfo(Result):
    id: str
    name: str
    description: str
    model: str | None
    sandbox: str | None
    system: str | None
    allowed_tools: list[str]
    broken: str | None = Field(description="Why a preset from presets.toml cannot be used.")
    builtin: bool


class PresetList(Result):
    source: Literal["builtin", "builtin+file"]
    file: str = Field(description="presets.toml: your own presets.")
    default: str
    presets: list[PresetInfo]


class PresetGetArgs(Args):
    session: str | None = Field(None, max_length=300, description="A session (default: the "
                                "default preset).")


class PresetGetResult(Result):
    session_id: str | None
    preset: str
    source: Literal["store", "builtin", "session", "run", "default"]
    note: str | None
    next: str | None


class PresetSetArgs(Args):
    preset_id: str = Field(min_length=1, max_length=100, description="An id from preset_list.")
    scope: Literal["new-default", "session"] = Field("new-default", description="new-default "
                                                     "or one blank session.")
    session: str | None = Field(None, max_length=300, description="Required with scope "
                                "session.")


class PresetSetResult(Result):
    ok: bool
    scope: Literal["new-default", "session"]
    preset: str
    previous: str | None
    session_id: str | None
    next: str


class PolicyGetArgs(Args):
    session: str | None = Field(None, max_length=300, description="A session (default: the "
                                "defaults).")


class PolicyGetResult(Result):
    session_id: str | None
    sandbox: Tier | None = Field(description="None: the client's own settings decide.")
    source: Literal["run", "override", "preset", "member", "default", "client"]
    approvals: Literal["nexus", "client"]
    flags: dict[str, list[str]] = Field(description="What each client is started with.")
    approval_timeout: int
    next: str


class PolicySetArgs(Args):
    mode: Tier = Field(description="The sandbox tier.")
    session: str | None = Field(None, max_length=300, description="Only this session (default: "
                                "every new run).")


class PolicySetResult(Result):
    ok: bool
    session_id: str | None
    sandbox: Tier
    source: Literal["override", "member", "default"] = Field(
        description="override: the session's own; member: the caller's own default (team mode, "
        "not the team's administrator); default: every new run's.")
    flags: dict[str, list[str]]
    next: str


class InfoResult(Result):
    version: str
    store: str
    pid: int
    python: str
    runs_active: int
    runs_total: int
    max_runs: int
    approvals_pending: int
    sessions_live: int
    clients: dict[str, str | None] = Field(description="Each client's program, if on PATH.")
    default_preset: str
    default_sandbox: str | None
    approvals: Literal["nexus", "client"]
    settings: dict[str, Any]
    settings_file: str
    credentials_set: dict[str, bool] = Field(description="Whether each is set; never its value.")


class EchoArgs(Args):
    text: str = Field(max_length=10_000, description="Echoed back verbatim.")


class EchoResult(Result):
    text: str
    at: str | None = Stamp("When it was answered")
    at_epoch: float | None = Epoch("When it was answered")


class RunToolsArgs(Args):
    client: Client | None = Field(None, description="Only this client.")
    preset: str | None = Field(None, min_length=1, max_length=64,
                               description="Only this preset (default: every preset).")
    sandbox: Tier | None = Field(None, description="As a run with --sandbox TIER would get.")


class RunToolset(Result):
    client: Client
    preset: str
    sandbox: Tier | None = Field(description="The tier (none: the client's own settings).")
    sandbox_from: str = Field(description="Where the tier comes from: run, preset, default or "
                              "client.")
    flags: list[str] = Field(description="The permission flags nexus starts the client with.")
    allowed_tools: list[str] = Field(description="Client tools that run without asking (empty: "
                                     "the client's own settings).")
    refused_tools: list[str] = Field(description="Client tools the tier removes.")
    nexus_tools: list[str] = Field(description="nexus's MCP tools the run's client gets.")
    nexus_tools_from: str = Field(description="Where that was read (the client's config).")
    note: str


class RunToolsResult(Page):
    items: list[RunToolset]
