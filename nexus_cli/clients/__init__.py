"""One adapter per client. Each `clients/<name>/runtime.py` is what nexus must know about that
client while it runs (stdlib only, the hooks use it): its session ids, the environment variables
its shell tool and MCP servers get, the `_meta` of its MCP calls, how to recognise its process,
and how to wake it. `clients/<name>/config.py` edits its configuration (install, doctor).
A third client is a third folder, its name in NAMES and one line in `_load`.

An adapter is imported when it is first asked for: a hook of one client loads that client's
alone."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import ModuleType

from ..core import store

NAMES = ("claude", "codex")
_LOADED: dict[str, ModuleType] = {}


is_uuid = store.uuid  # (both clients' session ids are lowercase UUIDs)


def _load(name: str) -> ModuleType:
    if name in _LOADED:
        return _LOADED[name]
    if name == "claude":
        from .claude import runtime as claude

        _LOADED[name] = claude
    elif name == "codex":
        from .codex import runtime as codex

        _LOADED[name] = codex
    else:
        raise KeyError(name)
    return _LOADED[name]


class _Adapters(Mapping[str, ModuleType]):
    """client name -> its runtime module, each imported at its first use."""

    def __getitem__(self, name: str) -> ModuleType:
        return _load(name)

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)


ADAPTERS: Mapping[str, ModuleType] = _Adapters()


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
