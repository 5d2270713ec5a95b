"""nexus: coordinate Claude Code and Codex sessions on one machine, without a daemon."""

__version__ = "0.1.0"
