"""Runs of heartbeat batches (fast/noop_runs.py, the engine's ``_apply_noops``):
a controller's one-NoOpRecord batches read as one, and everything the
session shows the same as when every batch is read on its own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.paths import CORPORA
from tests.support.corpora import needs_corpora
from metashell.fast import noop_runs
from metashell.fast.noop_runs import BATCH_SIZE, NOOP_RECORD, NoOpRun
from metashell.fast.store import RecordStore
from metashell.kraft.writer import encode_records
from metashell.session.files import open_session
from tests.support.controller_logs import heartbeats_log
from tests.support.replay import TS0, Log, leaves, same_replay, write_snapshot
from tests.support.records import change, noop, partition, topic, uid


def runs_of(path: Path) -> list[int]:
    """How many batches each heartbeat run of a deferred read holds."""
    return [b.records.noops for b in RecordStore().open(path, skip_damage=True)
            if type(b.records) is NoOpRun]


def test_the_record_is_the_one_the_writer_and_kafka_write():
    value, count = encode_records([noop()])
    assert (value, count) == (NOOP_RECORD, 1)
    assert BATCH_SIZE == 72


def test_runs_are_found_and_replay_as_batch_by_batch(tmp_path):
    path, beats = heartbeats_log(tmp_path)
    # the lone one goes with the batches around it (fast/batch_runs.py)
    assert runs_of(path) == [5, 7, 2, 4]
    eng = same_replay([path])
    assert eng.by_type["NoOpRecord"] == len(beats) == 19
    assert eng.image.last_offset == beats[-1]


@pytest.mark.parametrize("cut", range(0, 40))
def test_a_limit_anywhere_in_a_run(tmp_path, cut):
    """``until_offset`` and ``until_time`` before, inside and after every run
    (inside a transaction too)."""
    path, beats = heartbeats_log(tmp_path)
    same_replay([path], until_offset=cut)
    same_replay([path], until_time=TS0 + 1000 * cut - 1)
    same_replay([path], until_time=TS0 + 1000 * cut)


def _without_runs(monkeypatch):
    monkeypatch.setattr(noop_runs, "_RUN", re.compile(b"(?!)"))   # matches nothing


def _shown(session) -> tuple:
    return (leaves(session.root), json.dumps(session.summary(), sort_keys=True, default=str),
            session.warnings, session.image.last_offset, session.image.last_time,
            session.engine.applied, session.engine.by_type)


def same_session(monkeypatch, path, **kw):
    with_runs = _shown(open_session(path, **kw))
    with monkeypatch.context() as m:
        _without_runs(m)
        assert _shown(open_session(path, **kw)) == with_runs
    return with_runs


def test_a_snapshot_covering_part_of_a_run(tmp_path, monkeypatch):
    """The log starts before the snapshot's end offset, which falls inside a run."""
    a = uid(1)
    write_snapshot(tmp_path, 4, [topic("a", a), partition(a, 0)])
    log = Log()
    log.add(topic("a", a), partition(a, 0))
    log.each(*[noop() for _ in range(6)])   # offsets 2-7: the snapshot covers 2 and 3
    log.add(change(a, 0, leader=2))
    log.write(tmp_path)
    assert runs_of(next(tmp_path.glob("*.log"))) == [6]
    shown = same_session(monkeypatch, tmp_path)
    assert shown[6]["NoOpRecord"] == 4


def test_a_bad_crc_inside_a_run(tmp_path, monkeypatch):
    """The run stops before the damaged batch, which is reported where it is
    and skipped; the heartbeats after it are a run again."""
    path, beats = heartbeats_log(tmp_path)
    data = bytearray(path.read_bytes())
    pos = data.find(NOOP_RECORD, 0)
    second = data.find(NOOP_RECORD, pos + 1) - 61   # the second heartbeat batch
    data[second + 35] ^= 1                           # its maxTimestamp: the CRC no longer holds
    path.write_bytes(bytes(data))
    # one heartbeat before the damage goes with the batches around it (a BatchRun
    # of one), the three after it are a run
    assert runs_of(path) == [3, 7, 2, 4]
    shown = same_session(monkeypatch, path)
    assert any(f"byte {second}" in w and "CRC" in w for w in shown[2])
    assert shown[6]["NoOpRecord"] == len(beats) - 1


def test_the_store_still_knows_every_batch(tmp_path):
    """Batches after a run keep their numbers: refs resolve, and times and
    offsets are found in the run (as rewinding asks)."""
    path, beats = heartbeats_log(tmp_path, base=100)
    store = RecordStore()
    list(store.open(path))
    # batch 3 (its third heartbeat, offset 106) is the last appended by then
    assert store.offset_before_time(TS0 + 1000 * 3 + 1, [0]) == beats[2] == 106
    after = list(store.records_after(beats[2], [0]))
    assert [(r.offset, r.name) for r in after[:3]] == [
        (107, "NoOpRecord"), (108, "NoOpRecord"), (109, "PartitionChangeRecord")]


@needs_corpora
def test_a_real_heartbeats_log(monkeypatch):
    """Kafka 4.2's log of a controller that ran for hours: tens of thousands
    of heartbeats, read in runs, the same as batch by batch."""
    path = CORPORA / "kafka-4.2-logdir"
    runs = runs_of(path / "__cluster_metadata-0" / "00000000000000000000.log")
    assert sum(runs) > 50_000 and len(runs) < 100
    same_session(monkeypatch, path)
    same_session(monkeypatch, path, until_offset=30_000)
