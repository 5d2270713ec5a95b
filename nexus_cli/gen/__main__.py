"""`python -m nexus_cli.gen [--check]`: write (or check) contract/, man/ and the command and
tool references in docs/ from the registry and the CLI. Run it after changing a tool; the tests
fail while they drift."""

from __future__ import annotations

import argparse
import os
import sys


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m nexus_cli.gen", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail (exit 1) when out of date")
    parser.add_argument("--root", default=os.getcwd(), help="the repository (default: here)")
    opts = parser.parse_args()
    from . import contract

    folder = os.path.join(opts.root, "contract")
    changed = contract.drift(folder) if opts.check else contract.write(folder)
    # the CLI is built from contract/tools.json: reload it before rendering the man pages
    from ..core import specs

    specs._SPECS.clear()
    from . import manpages

    mandir = os.path.join(opts.root, "man")
    changed += manpages.drift(mandir) if opts.check else manpages.write(mandir)
    from . import docs

    docdir = os.path.join(opts.root, "docs")
    changed += docs.drift(docdir) if opts.check else docs.write(docdir)
    if opts.check and changed:
        print(f"out of date: {', '.join(changed)} (run `python -m nexus_cli.gen`)", file=sys.stderr)
        return 1
    print("up to date" if not changed else f"wrote {', '.join(changed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
