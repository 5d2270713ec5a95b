"""File reservations: leases on paths or globs (exclusive or shared, with a TTL and a reason),
enforced where the edit happens (the PreToolUse hook of each client's file-editing tools) and at
the commit (a git pre-commit guard)."""
