"""Every fast path gives exactly what the plain decoder gives, on the shapes
Kafka writes (bench/shapes.py): batches of tens of thousands of records
(offset deltas of three bytes and more), PartitionRecord v0, v1 and v2, a
controller's log of small batches, CreateTopics batches, and on every file
of ``../shared/corpora``.

The reference is independent of the project's framing code: kafka-python
(``MemoryRecords``) frames every batch and record, and each data value is
decoded on its own by :func:`~metashell.kraft.records.decode_value`. The
project's readers are compared with it in all their modes: eager (runs of
partition records decoded together), lazy, deferred to a
:class:`~metashell.fast.store.RecordStore` (refs read back).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kafka.record import MemoryRecords

from tests.support.paths import CORPORA
from tests.support.corpora import corpus_cases
from metashell.kraft.primitives import UUID_TEXT
from metashell.loader.reader import FileReader
from metashell.kraft.records import decode_value
from metashell.fast.store import RecordStore
from metashell.kraft.writer import LogWriter, Out, build_batch, encode_records, write_file
from tests.support.deferred_reads import KeptRecord, entries_of
from tests.support.records import change, noop, partition, topic, uid
from metashell.fast.deferred import (API_KEY, PARTITION, PARTITION_ID, RAW_TOPIC_ID, REF, TOPIC, TOPIC_ID,
                                       TOPIC_NAME, TOPIC_OFFSET, TOPIC_RAW_ID, TOPIC_TIMESTAMP, kind)

TS = 1_700_000_000_000
DIRS = ["AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw"]


def varied(t: int, p: int, version: int = 2, replicas=(1, 2, 3)) -> Out:
    """Partition ``p`` of topic ``uid(t)``, its epochs varying with ``p``,
    its replicas on ``DIRS`` (from version 1)."""
    dirs = {"directories": DIRS[:len(replicas)]} if version else {}
    return partition(uid(t), p, replicas, version=version, leaderEpoch=p % 7, partitionEpoch=p % 5, **dirs)


def topics(n: int, parts: int, version: int = 2, first: int = 0) -> list[Out]:
    out = []
    for t in range(first, first + n):
        out.append(topic(f"topic-{t}", uid(t)))
        out += [varied(t, p, version) for p in range(parts)]
    return out


# --------------------------------------------------------------------------- the reference

def reference(path: Path) -> list[tuple]:
    """(control?, offset, timestamp, key, headers, value) of every record, as
    kafka-python frames them."""
    out = []
    buf = path.read_bytes()
    records = MemoryRecords(buf)
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        for r in batch:
            out.append((batch.is_control_batch, r.offset, r.timestamp, r.key,
                        tuple((k, v) for k, v in r.headers), r.value))
    return out


def same(rec, ref: tuple) -> None:
    control, offset, timestamp, key, headers, value = ref
    assert (rec.offset, rec.timestamp, rec.key, rec.headers) == (offset, timestamp, key, headers)
    if control:
        assert rec.kind in ("control", "undecodable")
        return
    plain = decode_value(value)
    data = rec.data   # first: a lazy record learns here whether its body decodes
    assert (rec.kind, rec.name, rec.api_key, rec.version, rec.frame, rec.layout) == (
        plain.kind, plain.name, plain.api_key, plain.version, plain.frame, plain.layout)
    assert data == plain.data


def check(path: Path) -> dict:
    """Every mode of reading ``path`` against the reference; returns counts."""
    ref = reference(path)
    eager = [r for b in FileReader(path) for r in b.records]
    lazy = [r for b in FileReader(path, lazy=True) for r in b.records]
    store = RecordStore()
    entries = entries_of(store.open(path), store)
    assert len(eager) == len(lazy) == len(entries) == len(ref)
    deferred_count = 0
    for r, a, b, e in zip(ref, eager, lazy, entries):
        same(a, r)
        same(b, r)
        if isinstance(e, tuple):
            deferred_count += 1
            back = store.record(e[REF])
            same(back, r)
            assert e[API_KEY] == back.api_key
            if type(e) is KeptRecord:   # a record of a snapshot's kept run (configs, ACLs, ...)
                pass
            elif kind(e) == TOPIC:   # a TopicRecord on the fast path
                assert (e[TOPIC_NAME], UUID_TEXT[e[TOPIC_RAW_ID]], e[TOPIC_OFFSET], e[TOPIC_TIMESTAMP],
                        e[TOPIC_ID]) == (back.data["name"], back.data["topicId"], back.offset,
                                         back.timestamp, back.data["topicId"])
            else:
                assert kind(e) == PARTITION
                assert back.data is None or e[PARTITION_ID] == back.data["partitionId"]   # None: undecodable
                assert back.data is None or UUID_TEXT[e[RAW_TOPIC_ID]] == back.data["topicId"]
        else:
            same(e, r)
    return {"records": len(ref), "deferred": deferred_count}


# --------------------------------------------------------------------------- Kafka's shapes

def test_an_8_mib_snapshot_batch(tmp_path):
    """A snapshot batch as Kafka fills it: 20,000 records in one batch, so
    offset deltas of one, two and three bytes, and every PartitionRecord
    version; all of them deferred (the TopicRecords too)."""
    outs = topics(700, 10, 0) + topics(700, 10, 1, 700) + topics(600, 10, 2, 1400)
    w = LogWriter(0, 3, TS)
    w.batch(outs)
    path = tmp_path / "00000000000000090000-0000000003.checkpoint"
    w.write(path)
    got = check(path)
    assert got == {"records": 22_000, "deferred": 22_000}


@pytest.mark.parametrize("width", [3, 4, 5])
def test_offset_deltas_of_every_width(tmp_path, width):
    """Offset deltas past 65,535 (where refs used to end) and of up to five
    bytes, in the middle of runs of partition records."""
    start = {3: 70_000, 4: 1_100_000, 5: 300_000_000}[width]
    outs = topics(3, 12)
    for i, o in enumerate(outs):
        o.offset_delta = i if i < 14 else start + i
    payload, n = encode_records(outs)
    path = tmp_path / "00000000000000000000.log"
    write_file(path, build_batch(0, payload, n, base_timestamp=TS, last_offset_delta=start + n - 1))
    got = check(path)
    assert got == {"records": 39, "deferred": 39}


def test_a_controller_log(tmp_path):
    """Small batches as a controller writes them: NoOps alone, partition
    changes of every kind a few at a time, a CreateTopics batch of 5,000
    partitions, keyed and headed and timestamped records among them."""
    w = LogWriter(5000, 4, TS)
    w.batch(topics(500, 10))
    for i in range(300):
        t, p = i % 500, i % 10
        if i % 3 == 0:
            w.batch([noop()], timestamp=TS + i)
        else:
            w.batch([change(uid(t), p, version=0, isr=[1, 2]),
                     change(uid(t), p, version=0, leader=2),
                     change(uid(t), p, version=0, isr=[1, 2, 3])], timestamp=TS + i)
    odd = varied(3, 3)
    w.batch([Out(spec=odd.spec, version=odd.version, data=odd.data, key=b"k"),
             Out(spec=odd.spec, version=odd.version, data=odd.data, headers=(("h", b"v"),)),
             Out(spec=odd.spec, version=odd.version, data=odd.data, attributes=1, timestamp_delta=9)])
    w.leader_change(1, [1, 2, 3])
    path = tmp_path / "00000000000000005000.log"
    w.write(path)
    got = check(path)
    # deferred: every topic and partition record but the keyed and the headed one
    assert got == {"records": 5500 + 100 + 600 + 3 + 1, "deferred": 5500 + 600 + 1}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_layout(tmp_path, data):
    """Any mix of topics (any partition count, version and replica count),
    partition changes and NoOps, cut into batches of any size, at any
    starting offset delta."""
    outs = []
    for t in range(data.draw(st.integers(1, 6))):
        outs.append(topic(f"t{t}", uid(t)))
        version = data.draw(st.integers(0, 2))
        replicas = data.draw(st.sampled_from([(1,), (1, 2), (1, 2, 3)]))
        outs += [varied(t, p, version, replicas) for p in range(data.draw(st.integers(0, 40)))]
        for _ in range(data.draw(st.integers(0, 3))):
            outs.append(data.draw(st.sampled_from([
                noop(),
                change(uid(t), 0, version=0, leader=2),
                change(uid(t), 1, version=2, isr=[1]),
            ])))
    skip = data.draw(st.sampled_from([0, 60, 8_000, 70_000, 2_000_000]))
    w = LogWriter(0, 1, TS)
    pos = 0
    while pos < len(outs):
        n = data.draw(st.integers(1, 80))
        chunk = outs[pos:pos + n]
        for i, o in enumerate(chunk):
            o.offset_delta = skip + i
        payload, count = encode_records(chunk)
        w.parts.append(build_batch(w.next_offset, payload, count, base_timestamp=TS,
                                   last_offset_delta=skip + count - 1))
        w.next_offset += skip + count
        pos += n
    path = tmp_path / "00000000000000000000.log"
    w.write(path)
    check(path)


@pytest.mark.parametrize("path", corpus_cases(lambda: sorted(p for p in CORPORA.rglob("*")
                                                          if p.suffix in (".log", ".checkpoint")
                                                          and p.stat().st_size)),
                         ids=lambda p: str(p.relative_to(CORPORA)))
def test_every_corpus_file(path):
    got = check(path)
    assert got["records"] > 0
