"""Codex: `runtime` (hooks, identity, waking) and `config` (install, doctor)."""
