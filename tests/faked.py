"""`nexus` run as a subprocess of a test, inside the test's synthetic process tree: the client
processes of the sessions its hooks registered are the fake ones, alive until the test kills
them (a real process table has no such pids: every one of them would look exited).

    python tests/faked.py TABLE ARGS...   (TABLE: `FakeTable.export()`; see helpers.faked)"""

import sys

from helpers import FakeTable

FakeTable.adopt(sys.argv.pop(1))

from nexus_cli.__main__ import main  # noqa: E402  (after the table is in place)

sys.exit(main())
