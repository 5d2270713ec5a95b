"""Files generated from the code and checked in (contract/, man/): find drift, write changes."""

from __future__ import annotations

import os


def drift(directory: str, files: dict[str, str], suffix: str | None) -> list[str]:
    """Generated files that are missing or differ, and stale ones (`suffix`) no longer made
    (None: the folder holds other files too, and nothing there is stale)."""
    out = []
    for name, text in files.items():
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as fh:
                if fh.read() == text:
                    continue
        except FileNotFoundError:
            pass
        out.append(name)
    if suffix and os.path.isdir(directory):
        out += sorted(n for n in os.listdir(directory) if n.endswith(suffix) and n not in files)
    return out


def write(directory: str, files: dict[str, str], suffix: str | None) -> list[str]:
    os.makedirs(directory, exist_ok=True)
    changed = drift(directory, files, suffix)
    for name in changed:
        path = os.path.join(directory, name)
        if name not in files:
            os.unlink(path)
            continue
        tmp = os.path.join(directory, f".{name}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(files[name])
        os.replace(tmp, path)
    return changed
