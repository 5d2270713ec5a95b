"""One adapter per client. Each `clients/<name>/runtime.py` is what nexus must know about that
client while it runs (stdlib only, the hooks use it): its session ids, the environment variables
its shell tool and MCP servers get, the `_meta` of its MCP calls, how to recognise its process,
and how to wake it. `clients/<name>/config.py` edits its configuration (install, doctor).
A third client is a third folder plus one line below."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

from .claude import runtime as claude
from .codex import runtime as codex

ADAPTERS: dict[str, ModuleType] = {"claude": claude, "codex": codex}
NAMES = tuple(ADAPTERS)


def env_claims(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """(client, raw session id) for every client session variable set in `env`, nearest client
    first is not knowable here: the caller sorts that out against the process ancestry."""
    found = []
    for name, adapter in ADAPTERS.items():
        for var in adapter.ENV_SESSION:
            value = env.get(var, "")
            if value:
                found.append((name, value))
    return found


def agent_markers(env: Mapping[str, str]) -> list[str]:
    """The variables that say "this process runs inside an agent session"."""
    return [v for adapter in ADAPTERS.values() for v in adapter.ENV_MARKERS if env.get(v)]
