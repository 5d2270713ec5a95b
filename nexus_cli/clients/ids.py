"""The shape of the session ids both clients use (a lowercase UUID). Stdlib only."""

import re

UUID_RE = re.compile(r"\A[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
