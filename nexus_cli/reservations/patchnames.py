"""The files an apply_patch text names. Codex's apply_patch tool (and the `apply_patch` command
its shell offers) takes a patch whose `*** Add File:`, `*** Update File:`, `*** Delete File:`
and `*** Move to:` lines name the files, relative to the directory it runs in. Codex's own
parser trims a header line and is lenient, so the headers are read liberally (padding, tabs,
case): a line read as a header that is not one only costs a lookup. Stdlib only."""

from __future__ import annotations

import re

# a patch's file header, as liberally as a lenient parser could take it: `*** Update File: x`,
# padded, tabbed, any case; `*** Move to: x` too
HEADER = re.compile(r"\s*\*{2,}\s*(?:(?:add|update|delete)\s*file|move\s*to)\s*:(.*)",
                    re.IGNORECASE)


def headers(text: str) -> list[str]:
    """The files a patch's header lines name. A name is taken trimmed and, where it differs, as
    Codex takes it (only the one space after the colon removed): either could be the file."""
    out: list[str] = []
    # Codex splits at `\n` alone (a `\v` or `\x1c` inside a line is part of a name); Python's
    # lines also break at those: either could be how the patch is read
    for line in [*text.split("\n"), *text.splitlines()]:
        found = HEADER.match(line)
        if found is None:
            continue
        rest = found.group(1).rstrip()
        for name in (rest.strip(), rest[1:] if rest[:1] in " \t" else rest):
            if name.strip() and name not in out and "\x00" not in name:
                out.append(name)
    return out
