"""Output readable at a glance: ``log`` and ``log --batches`` in columns,
a long record shown whole with ``--full``; ``summary`` opens with the cluster id (and
the node id of a metadata dir), as ``kafka-metadata-quorum describe
--status`` does; its brokers' starts are in columns, a broker in
controlled shutdown is marked as a fenced one is, and why a start time is
unknown is said once, each row pointing to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.commands import run_command
from metashell.session.files import open_session

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "cluster"
SNAPSHOT = (REPO.parent / "shared" / "corpora" / "kafka-3.8-three-controllers-snapshot"
            / "00000000000000007268-0000000001.checkpoint")


@pytest.fixture(scope="module")
def example():
    return open_session(EXAMPLE)


def started_rows(out: str) -> dict[str, str]:
    lines = out[out.index("  started:"):].splitlines()[1:]
    rows = {}
    for line in lines:
        if not line.startswith("    "):
            break
        broker, _, rest = line.strip().partition(": ")
        rows[broker] = line
    return rows


def test_summary_opens_with_the_cluster_and_node_id(example):
    meta = dict(line.split("=", 1) for line in
                (EXAMPLE / "meta.properties").read_text().splitlines() if "=" in line)
    out = run_command(example, "summary")[1].splitlines()
    assert out[0].split() == ["clusterId:", meta["cluster.id"]]
    assert out[1].split() == ["nodeId:", meta["node.id"]]
    data = json.loads(run_command(example, "summary", output="json")[1])
    assert list(data)[:2] == ["clusterId", "nodeId"]
    assert (data["clusterId"], data["nodeId"]) == (meta["cluster.id"], int(meta["node.id"]))


def test_summary_starts_in_columns_with_every_state_marked(example):
    data = json.loads(run_command(example, "summary", output="json")[1])["brokers"]
    assert data["fenced"] == [4] and data["inControlledShutdown"] == [3]
    rows = started_rows(run_command(example, "summary")[1])
    assert rows["4"].endswith("  fenced") and rows["3"].endswith("  in controlled shutdown")
    assert not rows["1"].endswith(("fenced", "shutdown"))
    for word in ("offset", "registered"):
        assert len({line.index(word) for line in rows.values()}) == 1, word
    assert "offset  19" in rows["3"] and "offset 343" in rows["1"]


@pytest.mark.skipif(not SNAPSHOT.is_file(), reason=f"{SNAPSHOT} is not there")
def test_why_a_start_time_is_unknown_is_said_once():
    out = run_command(open_session(SNAPSHOT), "summary")[1]
    rows = started_rows(out)
    assert len(rows) == 3
    assert all(line.split(": ", 1)[1].startswith("time unknown [1]  offset ") for line in rows.values())
    assert max(len(line) for line in rows.values()) < 40
    assert out.count("no log segment was loaded") == 1
    assert "  timeUnknown:\n    [1]: no log segment was loaded" in out


def columns(lines: list[str], *words: str) -> list[set[int]]:
    return [{line.index(w) for line in lines} for w in words]


def test_log_is_in_columns(example):
    lines = run_command(example, "log")[1].splitlines()
    assert len(lines) == 523
    times = {line.index("2026-") for line in lines}
    assert times == {lines[0].index("2026-")}
    versions = {line.index(" v", line.index("Z ") + 2) for line in lines}
    assert len(versions) == 1
    summaries = {len(line.split(" v", 1)[0]) for line in lines}   # up to the version
    assert len(summaries) == 1
    batches = run_command(example, "log", "--batches")[1].splitlines()
    assert len(batches) > 100
    for word in (" count ", " epoch ", " time ", " size ", " position ", " crc "):
        assert len({line.index(word) for line in batches}) == 1, word


def test_log_full_shows_a_long_record_whole(example):
    cut = run_command(example, "log", "--from-offset", "11", "--to-offset", "11")[1]
    whole = run_command(example, "log", "--full", "--from-offset", "11", "--to-offset", "11")[1]
    assert cut.rstrip().endswith("...") and len(cut) < len(whole)
    fields = json.loads(whole.split(" v0  ", 1)[1])
    [doc] = [json.loads(line) for line in
             run_command(example, "log", "--from-offset", "11", "--to-offset", "11", output="json")[1]
             .splitlines()]
    assert fields["controllerId"] == doc["data"]["controllerId"] == 101
    assert len(fields["features"]) == len(doc["data"]["features"])
    assert not any(line.endswith("...") for line in
                   run_command(example, "log", "--full")[1].splitlines())
