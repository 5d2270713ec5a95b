"""The run tools: headless runs and their results, presets, policy, info and echo."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import render, runs, toolsets

register(Tool(
    name="run", group="runs", title="Run a task headless",
    description="Start Claude Code or Codex headless on a task; waits for the structured result "
    "(or detach and collect it with run_result).",
    details="`nexus run claude TASK` starts `claude -p` (stream-json), `nexus run codex TASK` "
    "`codex exec --json`, with nexus's hooks: the run is a session like any other (peers see it, "
    "it can be messaged, delegated to and woken). The run is a record before its process "
    "starts and survives the caller; it waits up to `runWait` seconds (at most 50 over MCP), "
    "then goes on detached. --resume continues a session; --sandbox, --preset and --approvals "
    "nexus (permission requests wait for `nexus approve`) choose how it runs. The other run "
    "commands: `nexus run result ID`, `nexus run list`, `nexus run cancel ID`.",
    args="RunArgs", result="RunResult", run=runs.start, render=render.run,
    positional=("client", "task"), stdin=("task",), open_world=True,
    example="nexus run codex 'add type hints to cart.py; the tests must pass' --detach",
))
register(Tool(
    name="run_result", group="runs", title="A run's result",
    description="A run's status and, when done, its structured result; `next` says what to do "
    "for its status.",
    details="A run whose process died (killed, machine restarted) is reported as error with the "
    "reason, never as running. The client's whole event stream stays in `output_file`.",
    args="RunIdArgs", result="RunResult", run=runs.result, render=render.run,
    command=("run", "result"), positional=("run_id",), read_only=True, idempotent=True,
    example="nexus run result r-5e1d0c7b2a93",
))
register(Tool(
    name="run_list", group="runs", title="List runs",
    description="Runs you started (a person: runs in the project), newest first, with `active` "
    "(queued plus running).",
    details="Finished runs are kept `runRetention` seconds (default 7 days).",
    args="RunListArgs", result="RunList", run=runs.listing, render=render.runs,
    command=("run", "list"), read_only=True, idempotent=True,
    example="nexus run list --status running",
))
register(Tool(
    name="run_cancel", group="runs", title="Cancel a run",
    description="Stop a queued or running run: its client's whole process group ends; the "
    "session is kept for --resume.",
    details="A finished run is not cancellable: the answer says so with ok false (exit 4).",
    args="RunIdArgs", result="CancelResult", run=runs.cancel, render=render.cancelled,
    command=("run", "cancel"), positional=("run_id",), destructive=True, idempotent=True,
    exit_if=("ok", False, 4),
    example="nexus run cancel r-5e1d0c7b2a93",
))
register(Tool(
    name="preset_list", group="runs", title="List presets",
    description="The presets a run can use (model, sandbox tier, system prompt addition, "
    "allowed tools) and the default.",
    details="Built-in presets plus your own tables in presets.toml beside config.toml.",
    args="NoArgs", result="PresetList", run=runs.preset_list, render=render.presets,
    command=("preset", "list"), read_only=True, idempotent=True, needs_caller=False,
    example="nexus preset list",
))
register(Tool(
    name="preset_get", group="runs", title="Show a preset choice",
    description="The default preset, or the preset of one session.",
    args="PresetGetArgs", result="PresetGetResult", run=runs.preset_get, render=render.preset,
    command=("preset", "get"), read_only=True, idempotent=True, needs_caller=False,
    example="nexus preset get",
))
register(Tool(
    name="preset_set", group="runs", title="Choose a preset",
    description="Set the default preset for new runs, or the preset of one blank session.",
    details="Only a session that has not run a turn switches; otherwise pass --preset to the "
    "next `nexus run`.",
    args="PresetSetArgs", result="PresetSetResult", run=runs.preset_set,
    render=render.preset_set, command=("preset", "set"), positional=("preset_id",),
    idempotent=True,
    example="nexus preset set review",
))
register(Tool(
    name="policy_get", group="runs", title="Show the sandbox policy",
    description="The sandbox tier for new runs or one session, and the flags each client gets "
    "for it.",
    args="PolicyGetArgs", result="PolicyGetResult", run=runs.policy_get, render=render.policy,
    command=("policy", "get"), read_only=True, idempotent=True, needs_caller=False,
    example="nexus policy get",
))
register(Tool(
    name="policy_set", group="runs", title="Set the sandbox policy",
    description="Set the sandbox tier for new runs, or for one session; applied on its next run "
    "or resume.",
    details="read-only, workspace-write, danger-full-access: Codex's --sandbox, Claude Code's "
    "permission mode and rules (`nexus policy get` shows them).",
    args="PolicySetArgs", result="PolicySetResult", run=runs.policy_set, render=render.policy,
    command=("policy", "set"), positional=("mode",), idempotent=True,
    example="nexus policy set workspace-write",
))
register(Tool(
    name="info", group="runs", title="nexus status and configuration",
    description="Version, store, runs active, approvals pending, clients found and settings "
    "(secrets never echoed).",
    args="NoArgs", result="InfoResult", run=runs.info, render=render.info,
    read_only=True, idempotent=True, needs_caller=False,
    example="nexus info",
))
register(Tool(
    name="echo", group="runs", title="Echo",
    description="Echo the text back: the cheapest liveness check.",
    args="EchoArgs", result="EchoResult", run=runs.echo, render=render.echo,
    positional=("text",), read_only=True, idempotent=True, needs_caller=False,
    example="nexus echo hello",
))
register(Tool(
    name="run_tools", group="runs", title="What runs may use",
    description="The tools a run's client gets under each preset and tier: its flags, the tools "
    "allowed and refused, and nexus's own.",
    details="Seed 001's harness_list_tools, as it means here: a run is a real client, so its "
    "toolset is the client's own, shaped by the preset (allowed_tools: Claude Code only) and the "
    "tier (read-only removes Claude Code's Write, Edit and NotebookEdit; for Codex it is its OS "
    "sandbox), plus the nexus tools its installed MCP server serves.",
    args="RunToolsArgs", result="RunToolsResult", run=toolsets.toolsets, render=render.toolsets,
    command=("run", "tools"), read_only=True, idempotent=True,
    example="nexus run tools --client codex --sandbox read-only",
))
