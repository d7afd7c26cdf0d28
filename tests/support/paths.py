"""Where the tests find the checkout and the inputs next to it."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
BENCH = REPO / "bench"
EXAMPLE = REPO / "examples" / "cluster"
# The shared reference files and real Kafka corpora live next to the
# checkout, never inside it.
SHARED = REPO.parent / "shared"
CORPORA = SHARED / "corpora"
