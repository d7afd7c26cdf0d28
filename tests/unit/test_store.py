"""Deferred partition records (fast/store.py, the reader's ``defer``, the
engine's fast path): a record brought back from its ref is the record the
plain reader reads, and replaying deferred files builds the same image as
replaying the same files record by record."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import CORPORA
from tests.support.corpora import needs_corpora
from metashell.loader.reader import read_file
from metashell.fast.store import RecordStore, ref_file
from metashell.kraft.writer import LogWriter, Out, build_batch, encode_records, record, write_file
from tests.support.deferred_reads import compare_file, entries_of, opened
from tests.support.replay import TS0, Log, engine_over, problems, same_replay, write_snapshot
from tests.support.records import change, partition, reframed, topic, uid
from metashell.session.files import open_session


def cluster(topics: int = 3, partitions: int = 90):
    """Topics whose partitions fill batches past 64 records (two-byte offset
    deltas) with both short (v0) and long (v2, directories) bodies."""
    out = []
    for t in range(topics):
        tid = uid(t)
        out.append(topic(f"t{t}", tid))
        for p in range(partitions):
            if p % 2:
                out.append(partition(tid, p, version=0))
            else:
                out.append(partition(tid, p, version=2, directories=[uid(900 + r) for r in (1, 2, 3)]))
        out.append(change(tid, 0, leader=2, isr=[2, 3]))
    return out


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4], ids=["none", "gzip", "snappy", "lz4", "zstd"])
def test_deferred_records_come_back_as_the_reader_reads_them(tmp_path, codec):
    w = LogWriter(1000, epoch=7, timestamp=TS0, codec=codec)
    w.records(cluster(), per_batch=150)
    path = tmp_path / "00000000000000001000.log"
    w.write(path)
    assert compare_file(path) == 3 * 91


def test_partition_records_without_key_or_headers_are_deferred(tmp_path):
    tid = uid(1)
    plain = partition(tid, 0, [1])
    odd = [
        reframed(plain, key=b"k"),
        reframed(plain, headers=(("h", b"v"),)),
        reframed(plain, attributes=1),
        reframed(plain, timestamp_delta=5),
    ]
    payload, n = encode_records([topic("t", tid), plain, *odd])
    path = tmp_path / "00000000000000000000.log"
    write_file(path, build_batch(0, payload, n, base_timestamp=TS0))
    entries = entries_of(*opened(path))
    # the store reads a record's framing again: attributes and a timestamp delta come back
    assert [type(e) is tuple for e in entries] == [True, True, False, False, True, True]
    assert compare_file(path) == 3


def test_log_append_time_batches_take_the_batch_time(tmp_path):
    tid = uid(1)
    payload, n = encode_records([topic("t", tid), partition(tid, 0), partition(tid, 1)])
    path = tmp_path / "00000000000000000000.log"
    write_file(path, build_batch(0, payload, n, base_timestamp=TS0, max_timestamp=TS0 + 99,
                                 attributes=0x08))
    assert compare_file(path) == 2
    store = RecordStore()
    refs = [e[0] for e in entries_of(store.open(path), store) if type(e) is tuple]
    assert {store.record(r).timestamp for r in refs} == {TS0 + 99}


def test_refs_name_their_file(tmp_path):
    paths = []
    for i in range(3):
        log = Log(base_offset=100 * i)
        tid = uid(i)
        log.add(topic(f"t{i}", tid), partition(tid, 0))
        paths.append(log.write(tmp_path / str(i)))
    store = RecordStore()
    refs = [e[0] for p in paths for e in entries_of(store.open(p), store) if type(e) is tuple]
    assert [ref_file(r) for r in refs] == [0, 0, 1, 1, 2, 2]   # each file's topic and partition
    assert [store.record(r).offset for r in refs] == [0, 1, 100, 101, 200, 201]


def busy_log(tmp_path: Path) -> Path:
    """Partitions and their changes, an unknown topic and partition, a
    transaction that commits and one that aborts, ClearElr over deferred
    partitions, a topic removed and created again."""
    a, b, ghost = uid(1), uid(2), uid(3)
    log = Log()
    log.add(topic("a", a), *[partition(a, p) for p in range(5)], partition(ghost, 0))
    log.add(change(a, 1, leader=2), change(a, 9, leader=2), change(ghost, 0, leader=1),
            partition(a, 2, replicas=(3, 1), eligibleLeaderReplicas=[1]))
    log.add(record("BeginTransactionRecord", name="t1"), topic("b", b), partition(b, 0), change(b, 0, isr=[1]))
    log.add(record("EndTransactionRecord"))
    log.add(record("BeginTransactionRecord", name="t2"), partition(b, 1), change(a, 0, leader=3))
    log.add(record("AbortTransactionRecord"))
    log.add(record("ClearElrRecord", topicName="a"), change(a, 3, leader=1))
    log.add(record("RemoveTopicRecord", topicId=b), topic("b", b), partition(b, 7))
    return log.write(tmp_path)


def test_replaying_deferred_records_builds_the_same_image(tmp_path):
    eng = same_replay([busy_log(tmp_path)])
    assert any("unable to find partition" in str(p) for p in eng.problems)
    assert "PartitionChangeRecord" in eng.by_type


def test_time_travel_inside_batches_of_deferred_records(tmp_path):
    path = busy_log(tmp_path)
    last = max(r.offset for r in (rec for b in read_file(path) for rec in b.records))
    for until in range(last + 1):
        same_replay([path], until_offset=until)


def test_snapshot_then_log_with_deferred_records(tmp_path):
    a = uid(1)
    write_snapshot(tmp_path / "__cluster_metadata-0", 50,
                   [topic("a", a), *[partition(a, p) for p in range(200)]],
                   timestamp=TS0 + 5, per_batch=70)
    log = Log(base_offset=40)
    for i in range(20):
        log.add(change(a, i % 3, leader=i % 3 + 1))
    log.write(tmp_path / "__cluster_metadata-0")
    s = open_session(tmp_path)
    assert problems(s.engine) == []
    p5 = s.root.child("topics").child("a").child("5")
    assert p5.last_change() == (49, TS0 + 5)   # stamped with the snapshot's last offset and time
    history = s.changes("/topics/a/1")
    assert [h["offset"] for h in history] == [49, 50, 53, 56, 59]   # the log from offset 50 on
    assert s.root.child("topics").child("a").child("1").child("data").value()["leader"] == 2


def test_a_bad_deferred_body_is_reported_once(tmp_path):
    tid = uid(1)
    good = record("PartitionRecord", 0, partitionId=0, topicId=tid, replicas=[1], isr=[1], leader=1,
                  leaderEpoch=0, partitionEpoch=0)
    value = bytes([1, 3, 0]) + (1).to_bytes(4, "big") + bytes.fromhex(
        "5eed0000000000000000000000000001") + b"\xff\xff\xff\xff\x7f\x00"   # replicas: -1 elements
    log = Log()
    log.add(topic("t", tid), good, Out(value=value))
    s = open_session(log.write(tmp_path))
    t = s.root.child("topics").child("t")
    assert t.children() == ["0", "id", "name"]
    t.children()
    bad = [p for p in problems(s.engine) if "undecodable PartitionRecord" in p]
    assert len(bad) == 1 and "offset 2" in bad[0]


@needs_corpora
def test_every_corpus_file_replays_the_same_deferred():
    files = sorted(p for p in CORPORA.rglob("*") if p.suffix in (".log", ".checkpoint"))
    assert files
    for path in files:
        compare_file(path)
        same_replay([path])


def test_topic_records_the_fast_path_does_not_take(tmp_path):
    """TopicRecords read in place (reader: name and id) next to the ones that
    take the general path: a name of 2-byte length, a UTF-8 name, a name that
    is not UTF-8, a tagged field, an id seen again under another name, a name
    given to another id, a topic removed; both ways build the same image,
    problems, counts and histories."""
    from metashell.kraft.primitives import uuid_from_str
    a, b, c, d = uid(11), uid(12), uid(13), uid(14)

    def raw_topic(name: bytes, tid: str, tags: bytes = b"\x00") -> Out:
        return Out(value=bytes([1, 2, 0, len(name) + 1]) + name + uuid_from_str(tid) + tags)

    log = Log()
    log.add(topic("x" * 200, a), partition(a, 0), topic("tópico-ü", b), partition(b, 0))
    log.add(raw_topic(b"bad\xff", c), partition(c, 0),
            raw_topic(b"tagged", d, tags=b"\x01\x05\x01\x00"), partition(d, 0))
    log.add(topic("renamed", a), topic("tópico-ü", uid(15)), partition(uid(15), 3))
    log.add(record("RemoveTopicRecord", topicId=b), change(b, 0, leader=2))
    path = log.write(tmp_path)
    read_in_place = [e[2] for e in entries_of(*opened(path))
                     if type(e) is tuple and len(e) == 7]
    assert read_in_place == ["tópico-ü", "renamed", "tópico-ü"]   # "renamed": the engine declines
    eng = same_replay([path])
    assert any("undecodable TopicRecord" in str(p) for p in eng.problems)
    plain = engine_over(path)
    for key in [("topic", t) for t in (a, b, c, d, uid(15))]:
        got, want = eng.image.records(key), plain.image.records(key)
        assert [(r.offset, r.name, r.data) for r in got or []] == \
               [(r.offset, r.name, r.data) for r in want or []], key
    s = open_session(path)
    assert s.root.child("topics").children() == sorted(["renamed", "tagged", "tópico-ü"])
    assert [h["type"] for h in s.changes("/topicIds/" + b)] == [
        "TopicRecord", "PartitionRecord", "RemoveTopicRecord"]   # the change after it: not applied


def test_changes_around_runs_replay_as_record_by_record(tmp_path):
    """Changes of partitions a topic still keeps in runs, a change of a
    partition the runs do not hold, partitions added by a later run and
    changed again, a topic re-created with the same id: the same partitions,
    histories and problems as record by record, at every point of the log."""
    a, b = uid(1), uid(2)
    log = Log()
    log.add(topic("a", a), *[partition(a, p) for p in range(4)],
            topic("b", b), *[partition(b, p) for p in range(3)])
    log.add(change(a, 1, leader=2), change(a, 7, leader=2), change(b, 0, isr=[1, 2]), change(a, 1, isr=[2]))
    log.add(*[partition(a, p) for p in range(4, 8)])          # a later run: 4-7 (7 exists now)
    log.add(change(a, 7, leader=3), change(a, 1, leader=1), change(a, 5, isr=[1]))
    log.add(topic("b", b))                                     # the same id again (general path)
    log.add(change(b, 0, leader=3), change(b, 2, leader=1))
    path = log.write(tmp_path)
    for cut in range(log.next_offset + 1):
        eng = same_replay([path], until_offset=cut)
    # a TopicRecord again makes the topic anew, without partitions (as the general path does)
    assert [str(p) for p in eng.problems] == [
        f"offset {o}: PartitionChangeRecord: unable to find partition {t}"
        for o, t in ((10, f"{a}:7"), (21, f"{b}:0"), (22, f"{b}:2"))]
    part = eng.image.topics[a].partition(1)
    assert (part.leader, part.isr, part.partition_epoch) == (1, [2], 3)


def test_a_topic_keeps_its_own_history_until_it_changes(tmp_path):
    """A topic made on the fast path keeps its TopicRecord's ref itself (no
    history entry); removed, or made again with the same id, its history is
    every record, as when each record is applied as it comes."""
    a, b = uid(21), uid(22)
    log = Log()
    log.add(topic("a", a), *[partition(a, p) for p in range(3)])
    log.add(topic("b", b), *[partition(b, p) for p in range(3)])
    log.add(record("RemoveTopicRecord", topicId=a))
    log.add(topic("a2", a), *[partition(a, p) for p in range(2)])   # the same id again
    path = log.write(tmp_path)
    eng, plain = same_replay([path]), engine_over(path)
    assert ("topic", b) not in eng.image.history and eng.image.topics[b].created is not None
    for tid in (a, b):
        got, want = eng.image.records(("topic", tid)), plain.image.records(("topic", tid))
        assert [(r.offset, r.name) for r in got] == [(r.offset, r.name) for r in want]
    assert [r.name for r in eng.image.records(("topic", a))] == [
        "TopicRecord", "RemoveTopicRecord", "TopicRecord"]
    assert sorted(k for k, _ in eng.image.history_items() if k[0] == "topic") == sorted(
        k for k in plain.image.history if k[0] == "topic")
