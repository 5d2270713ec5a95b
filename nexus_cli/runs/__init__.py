"""Headless runs of Claude Code and Codex (seed 001's `agent_run`, `task_inbox`, `task_result`,
`task_list`, `task_cancel`), presets, run policy, `info` and `echo`."""
