"""nexus: coordinate Claude Code and Codex sessions on one machine, without a daemon."""

__version__ = "0.1.0"
CONTRACT_VERSION = 2  # of the JSON shapes (contract/README.md): not additive -> a new version
