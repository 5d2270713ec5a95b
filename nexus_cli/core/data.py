"""Files nexus reads at run time that live at the top of the repository (hooks/, contract/, man/):
shipped inside the package by pyproject's package-dir mapping, or read from the checkout in an
editable install. Stdlib only."""

from __future__ import annotations

import os

# top-level folder -> the package that ships it (see [tool.setuptools.package-dir])
SHIPPED = {"hooks": "hookdefs", "contract": "contractdata", "man": "mandata"}


def folder(name: str) -> str:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shipped = os.path.join(package, SHIPPED[name])
    if os.path.isdir(shipped):
        return shipped
    return os.path.join(os.path.dirname(package), name)


def path(name: str, file: str) -> str:
    return os.path.join(folder(name), file)
