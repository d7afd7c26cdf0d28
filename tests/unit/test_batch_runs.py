"""Runs of a controller's small batches (fast/batch_runs.py, the
batch loader's ``_apply_run``): batches of one CreateTopics, one partition change
or one heartbeat read in one loop and applied as one, and everything the
session shows the same as through the general path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fast_path import assert_fast_path_agrees, fast_path, outputs
from metashell.fast import deferred
from metashell.fast.batch_runs import MAX_BATCHES, BatchRun
from metashell.fast.partition_runs import VERSIONS as RUN_VERSIONS
from metashell.fast.store import RecordStore
from metashell.session.files import open_session
from tests.support.controller_logs import SMALL_BATCH_TOPICS, small_batches_log
from tests.support.replay import TS0, same_replay, write_snapshot
from tests.support.records import partition, topic, uid
from tests.support.cli import run_cli



def runs_of(path: Path) -> list[tuple[int, int, int]]:
    """(batches, heartbeats, topics) of each run of a deferred read."""
    return [(len(b.records), b.records.noops, sum(len(e) == deferred.TOPIC_WITH_RUN for e in b.records.entries))
            for b in RecordStore().open(path, skip_damage=True) if type(b.records) is BatchRun]


def test_runs_are_found(tmp_path):
    small_batches_log(tmp_path)
    path = next(tmp_path.glob("*.log"))
    runs = runs_of(path)
    assert runs and max(n for n, _, _ in runs) > 10
    assert all(n <= MAX_BATCHES for n, _, _ in runs)
    assert sum(t for _, _, t in runs) >= SMALL_BATCH_TOPICS - 17   # those after the TopicRun is made
    with fast_path(False):
        assert not runs_of(path)


def test_the_fast_path_agrees(tmp_path):
    small_batches_log(tmp_path)
    path = next(tmp_path.glob("*.log"))
    assert_fast_path_agrees(path)
    assert_fast_path_agrees(tmp_path)


@pytest.mark.parametrize("version", RUN_VERSIONS["PartitionRecord"].reads)
def test_every_partition_record_version(tmp_path, version):
    small_batches_log(tmp_path, partition_version=version)
    assert_fast_path_agrees(next(tmp_path.glob("*.log")))


def _provenance(session) -> tuple:
    image = session.image
    return (image.last_offset, image.last_time, image.data_offset, image.data_time, image.last_epoch)


@pytest.mark.parametrize("cut", range(0, 164, 7))
def test_time_travel_anywhere_in_a_run(tmp_path, cut):
    log = small_batches_log(tmp_path)
    path = next(tmp_path.glob("*.log"))
    assert cut < log.next_offset
    same_replay([path], until_offset=cut)
    same_replay([path], until_time=TS0 + 1000 * (cut // 3))
    if cut % 5 == 0 and not 126 <= cut <= 140:   # (see the test below)
        assert_fast_path_agrees(path, until_offset=cut)


def test_a_change_of_no_partition_pending_at_the_limit_is_a_problem_when_filed(tmp_path):
    """A change of no known partition still pending where the load stops
    (fast/pending.py files changes when they are needed): the general
    path warns of it at load, the fast path once it is filed, by
    ``summary`` or by ``--strict``, which looks at everything first. Either
    way it is one problem, and ``--strict`` fails on it."""
    small_batches_log(tmp_path)
    path = next(tmp_path.glob("*.log"))
    problem = "offset 126: PartitionChangeRecord: unable to find partition"
    got = {}
    for on in (True, False):
        got[on] = outputs(path, fast=on, until_offset=126)
        assert [p for p in got[on]["problems"] if problem in p], got[on]["problems"]
        with fast_path(on):
            status, out, err = run_cli(["-s", str(path), "--until-offset", "126", "--strict",
                                        "ls", "/topics"])
            assert status == 1 and "t00" in out, err
            assert err.count(problem) == 1 and "--strict" in err.splitlines()[-1], err
    assert [problem in w for w in got[True]["warnings"]] == []
    assert [problem in w for w in got[False]["warnings"]] == [True]
    assert got[True]["problems"] == got[False]["problems"]


def test_provenance_is_the_last_batch(tmp_path):
    small_batches_log(tmp_path)
    path = next(tmp_path.glob("*.log"))
    shown = []
    for on in (True, False):
        with fast_path(on):
            shown.append(_provenance(open_session(path)))
    assert shown[0] == shown[1]


def test_a_damaged_batch_inside_a_run(tmp_path):
    """The run stops before the damaged batch, which is reported where it is
    (file, byte, what was expected) and skipped, as the general path does."""
    small_batches_log(tmp_path)
    path = next(tmp_path.glob("*.log"))
    data = bytearray(path.read_bytes())
    inside = next(b for b in RecordStore().open(path) if type(b.records) is BatchRun
                  and len(b.records) > 4).records.positions[3]
    data[inside + 40] ^= 1   # its maxTimestamp: the CRC no longer holds
    path.write_bytes(bytes(data))
    fast = assert_fast_path_agrees(path)
    assert [w for w in fast["warnings"] if f"(byte {inside}" in w], fast["warnings"]


def test_a_snapshot_covering_part_of_a_run(tmp_path):
    """The log starts before the snapshot's end offset, which falls inside a run."""
    log = small_batches_log(tmp_path / "x")
    end = log.next_offset // 2
    write_snapshot(tmp_path, end, [topic("t0", uid(0)), partition(uid(0), 0)])
    (tmp_path / "x" / "00000000000000000000.log").rename(tmp_path / "00000000000000000000.log")
    assert_fast_path_agrees(tmp_path)
