"""bench/gauntlet.py at a tiny size, so that it cannot rot: every way in (MCP, MCP with the
client's hooks, the CLI), on the local store and in team mode, and the mixed workload's rate
search. What it counts is checked (everything delivered once, to its recipient), never a time."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_PATH = list(sys.path)
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "scripts")]
import gauntlet  # noqa: E402
import pgcluster  # noqa: E402

sys.path[:] = _PATH  # (bench/mcp.py must not stand in for the MCP SDK in later tests)


@pytest.mark.parametrize("store", ["sqlite", "team"])
def test_the_gauntlet_runs_at_a_tiny_size(store):
    if store == "team" and pgcluster.bindir() is None:
        pytest.skip("PostgreSQL's server binaries are not installed")
    opts = argparse.Namespace(agents=3, each=2, ways=["mcp", "mcp+hooks", "cli"],
                              stores=[store], seconds=0.5, step=0.25)
    said: list[str] = []
    found = gauntlet.run(opts, said.append)
    assert [f["way"] for f in found] == opts.ways
    for f in found:
        res = f["burst"]
        assert res["failures"] == [], res["failures"]
        assert (res["delivered"], res["duplicates"], res["misrouted"]) == (6, 0, 0), (f, said)
        assert len(res["latencies"]) == 6 and res["cpu"] > 0
    rate, latencies, failed = found[0]["load"]
    assert rate > 0 and latencies and failed == 0
    assert all(f["load"] is None for f in found[1:])
    assert len(gauntlet.rows_of(found, opts.seconds)) == 4
