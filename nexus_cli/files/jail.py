"""The path jail: a path is used only when both its written form and its real path (symlinks
resolved) lie inside one of the caller's project roots, and no part of it has a sensitive name.
Stdlib only."""

from __future__ import annotations

import fnmatch
import os

from ..core.errors import NexusError

# sensitive names, matched case-insensitively against every part of the path below the root
DENY = (".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".npmrc", ".pypirc",
        ".git-credentials", ".pgpass", ".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx",
        "*.keystore", "*.jks", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*token*",
        "*secret*", "*credential*", "*password*", ".htpasswd")


def sensitive(name: str) -> bool:
    low = name.lower()
    return any(fnmatch.fnmatchcase(low, pattern) for pattern in DENY)


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check(raw: str, roots: list[str], store: str, key: str = "path") -> str:
    """The real path to use, or a coded error. `raw` must be absolute."""
    if not os.path.isabs(raw):
        raise NexusError("invalid_argument", key, f"{raw!r} is not an absolute path",
                         "pass an absolute path inside your project")
    if "\x00" in raw:
        raise NexusError("invalid_argument", key, "the path holds a NUL byte", "fix the path")
    written = os.path.normpath(raw)
    real = os.path.realpath(written)
    real_roots = [os.path.realpath(r) for r in roots]
    for root, real_root in zip(roots, real_roots, strict=True):
        if (inside(written, root) or inside(written, real_root)) and inside(real, real_root):
            break
    else:
        raise NexusError("path_outside_roots", raw,
                         "path outside allowed roots (" + ", ".join(real_roots) + ")",
                         "use a path inside your project (`nexus info` and `whoami` show it)")
    below = os.path.relpath(real, real_root)
    parts = [] if below == "." else below.split(os.sep)
    parts += os.path.relpath(written, root).split(os.sep) if inside(written, root) else []
    if any(sensitive(p) for p in parts if p not in (".", "")) or \
            inside(real, os.path.realpath(store)):
        raise NexusError("path_denied", raw, "path denied by policy (sensitive name)",
                         "choose another file")
    return real
