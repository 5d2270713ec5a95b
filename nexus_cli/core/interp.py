"""How nexus starts a Python of its own (the runner of `nexus run`, doctor's interpreter floor):
never with the caller's folder on `sys.path`. `python -c` puts the current folder first on the
module path, so a `subprocess.py` or `json.py` in a project would run, outside any sandbox,
when nexus starts there. Every such start is isolated (`-I`: no current folder, no PYTHON*
variables, no user site) or, when nexus itself is found only through the user site or
PYTHONPATH, at least `-P` (no current folder), and runs in SAFE_CWD. Stdlib only."""

from __future__ import annotations

import os
import sys

SAFE_CWD = "/"


def _under(path: str, folders: list[str]) -> bool:
    return any(f and (path == f or path.startswith(f.rstrip(os.sep) + os.sep)) for f in folders)


def flags() -> list[str]:
    """`-I` unless nexus is importable only through what `-I` turns off; then `-P`."""
    import site

    here = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outside = [os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
               if p]
    if site.ENABLE_USER_SITE:
        outside.append(os.path.realpath(site.getusersitepackages()))
    return ["-P"] if _under(here, outside) else ["-I"]


def argv(*args: str) -> list[str]:
    """The command line of a Python that nexus starts: run it with cwd=SAFE_CWD."""
    return [sys.executable, *flags(), *args]
