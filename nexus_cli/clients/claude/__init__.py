"""Claude Code: `runtime` (hooks, identity, waking) and `config` (install, doctor)."""
