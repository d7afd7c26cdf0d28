"""Runs of partition records (fast/partition_runs.py) in the reader: records taken
as a run are exactly the records the per-record path reads. The lazy reader
never takes runs, so it is the reference here."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metashell.fast.deferred import (API_KEY, PARTITION_RUN, RAW_TOPIC_ID, REF, RUN_PARTITION_IDS, TOPIC,
                                       TOPIC_ID, TOPIC_NAME, TOPIC_OFFSET, TOPIC_RAW_ID, TOPIC_WITH_RUN, count,
                                       kind, topic_run)
from metashell.fast import reading as reader
from metashell.fast import topic_runs
from metashell.fast.reading import shortcuts
from metashell.kraft.compression import LZ4, ZSTD
from metashell.kraft.framing import frame
from metashell.kraft.primitives import uuid_from_str
from metashell.loader.reader import FileReader
from metashell.fast.store import RecordStore
from metashell.kraft.writer import LogWriter, Out, build_batch, encode_records, record, write_file
from tests.support.deferred_reads import compare_file, plain_records, same_record
from tests.support.records import partition, reframed, uid
from tests.support.replay import engine_over, problems, shown

TS = 1_700_000_000_000
DIR = "XHhkr4tkSsD900pOQ8pPfg"


def placed(t: int, p: int, replicas=(1, 2, 3), **kw) -> Out:
    """Partition ``p`` of topic ``uid(t)`` at the newest version, every replica on ``DIR``."""
    return partition(uid(t), p, replicas, directories=[DIR] * len(replicas), **kw)


def mixed_records() -> list[Out]:
    """Runs of every kind and everything that ends one early."""
    outs = [record("TopicRecord", name=f"t{t}", topicId=uid(t)) for t in range(5)]
    for p in range(150):                                    # two-byte offset deltas past 64
        outs.append(placed(0, p))
        if p == 30:
            outs.append(reframed(placed(0, 900), key=b"k"))             # same size, a key
        if p == 40:
            outs.append(reframed(placed(0, 901), headers=(("h", b"v"),)))
        if p == 50:
            outs.append(reframed(placed(0, 902), attributes=1))         # attributes: still a run
        if p == 60:
            outs.append(reframed(placed(0, 903), timestamp_delta=7))    # timestamp delta
        if p == 70:
            outs.append(placed(1, p, replicas=(1, 2)))              # another size
        if p == 80:
            outs.append(record("PartitionRecord", 1, partitionId=p, topicId=uid(2), replicas=[1, 2, 3],
                               isr=[1, 2, 3], leader=1, directories=[DIR] * 3))   # another version
        if p == 90:                                     # same size, but undecodable
            body = bytearray(reframed(placed(0, 904)).encoded_value())
            body[23] = 0x7F                             # 126 replicas: more than the body holds
            outs.append(Out(value=bytes(body)))
        if p == 100:                                    # same size: two replicas and 24 bytes too many
            short = reframed(placed(0, 905, replicas=(1, 2))).encoded_value()
            outs.append(Out(value=short + bytes(24)))
    outs += [record("PartitionChangeRecord", partitionId=p, topicId=uid(3), leader=2, isr=[2, 3])
             for p in range(40)]
    outs += [placed(t % 5, t) for t in range(20)]       # a run across topics
    return outs


@pytest.fixture(params=[0, LZ4, ZSTD], ids=["none", "lz4", "zstd"])
def path(tmp_path, request):
    w = LogWriter(5000, 3, TS, codec=request.param)
    w.records(mixed_records(), per_batch=173)
    p = tmp_path / "00000000000000005000.log"
    p.write_bytes(w.getvalue())
    return p


def test_eager_reading_with_runs_is_record_by_record_reading(path):
    ref = plain_records(path)
    got = [r for b in FileReader(path, shortcuts=shortcuts) for r in b.records]
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        same_record(a, b)
    assert sum(r.kind == "undecodable" for r in got) == 2


def test_deferred_runs_name_the_records(path):
    ref = plain_records(path)
    # every partition record but the keyed and headed ones (the store reads a
    # record's framing again, so attributes and timestamp deltas are kept)
    assert compare_file(path) == sum(r.api_key in (3, 5) and r.kind != "control" for r in ref) - 2


def test_log_append_time_runs(tmp_path):
    payload, n = encode_records([placed(0, p) for p in range(10)])
    p = tmp_path / "00000000000000000000.log"
    write_file(p, build_batch(0, payload, n, base_timestamp=TS, max_timestamp=TS + 9, attributes=0x08))
    got = [r for b in FileReader(p, shortcuts=shortcuts) for r in b.records]
    assert [r.timestamp for r in got] == [TS + 9] * 10
    for a, b in zip(got, plain_records(p)):
        same_record(a, b)


def test_a_run_matches_exactly_the_records_of_its_shape():
    """PartitionRun on its own: which records it takes, and what it reads."""
    from metashell.fast.partition_runs import run_after
    plain = [placed(0, p) for p in range(12)]
    odd = [reframed(placed(0, 50), key=b"k"), reframed(placed(0, 51), timestamp_delta=100),
           reframed(placed(0, 52), attributes=4)]
    payload, n = encode_records(plain[:6] + [odd[2]] + plain[6:9] + [odd[1]] + plain[9:] + [odd[0]])
    # records of 116 bytes: the value starts after length (2 bytes), attributes,
    # timestamp delta, offset delta, null key and value length (2 bytes)
    size = 2 + ((payload[0] & 0x7F) | (payload[1] << 7)) // 2
    k = 2 + 1 + 1 + 1 + 1 + 2
    run = run_after({}, payload, 0, k, size)
    assert run.match(payload, size, len(payload), 100) == 9      # up to the 2-byte timestamp delta
    assert run.match(payload, size, len(payload), 3) == 3        # never past the limit
    assert run.match(payload, 9 * size, len(payload), 100) == 0  # one record left: not a run
    attributes, ts, deltas, pids, raw = run.read(payload, size, 9)
    assert list(deltas) == list(range(1, 10)) and list(pids) == [1, 2, 3, 4, 5, 52, 6, 7, 8]
    assert raw == uuid_from_str(uid(0))
    assert list(attributes) == [0, 0, 0, 0, 0, 4, 0, 0, 0] and set(ts) == {0}
    after = 11 * size + 1                                          # past the 2-byte timestamp delta
    assert run.match(payload, after, len(payload), 100) == 3     # the rest, not the keyed one


def test_a_run_is_one_topic():
    """Records of the same shape but of another topic end a run: a run's
    records all name the topic of its first."""
    from metashell.fast.partition_runs import run_after
    outs = [placed(0, p) for p in range(4)] + [placed(1, p) for p in range(3)] + [placed(0, 9)]
    payload, _ = encode_records(outs)
    size = 2 + ((payload[0] & 0x7F) | (payload[1] << 7)) // 2
    run = run_after({}, payload, 0, 2 + 1 + 1 + 1 + 1 + 2, size)
    assert run.match(payload, 0, len(payload), 100) == 4
    assert run.match(payload, 4 * size, len(payload), 100) == 3
    assert run.match(payload, 6 * size, len(payload), 100) == 0   # one of topic 1, one of topic 0
    assert run.read(payload, 4 * size, 3)[4] == uuid_from_str(uid(1))


def test_deferred_reading_takes_a_topics_partitions_as_one_entry(tmp_path):
    """What the deferred reader hands the engine for a snapshot-like batch:
    per topic its TopicRecord and one run entry for all its partitions, as
    tuples."""
    from metashell.fast.store import RecordStore
    outs = []
    for t in range(3):
        outs.append(record("TopicRecord", name=f"t{t}", topicId=uid(t)))
        outs += [placed(t, p) for p in range(7)]
    w = LogWriter(0, 3, TS)
    w.records(outs, per_batch=len(outs))
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(w.getvalue())
    entries = [e for b in RecordStore().open(p) for e in b.records]
    # the first topic record by record; the next ones, framed as it was, each in one
    # match with its partitions (partition_runs.TopicRun), as one entry
    assert [kind(e) for e in entries] == [TOPIC, PARTITION_RUN, TOPIC_WITH_RUN, TOPIC_WITH_RUN]
    pairs = [(entries[0], entries[1])] + [(e, topic_run(e)) for e in entries[2:]]
    for t, (topic, run) in enumerate(pairs):
        assert (topic[API_KEY], topic[TOPIC_NAME], topic[TOPIC_RAW_ID], topic[TOPIC_ID]) == (
            2, f"t{t}", uuid_from_str(uid(t)), uid(t))
        assert (run[API_KEY], run[RUN_PARTITION_IDS], run[RAW_TOPIC_ID]) == (
            3, tuple(range(7)), uuid_from_str(uid(t)))
        assert topic[TOPIC_OFFSET] == 8 * t and run[REF] - topic[REF] == len(f"t{t}") + 28   # record size


# -- a TopicRecord and its partitions in one match (partition_runs.TopicRun) --------------------------

def topic_outs(plan: list, filler: int) -> list[Out]:
    """``filler`` ConfigRecords (so that the topics' offset deltas take one,
    two or three bytes), then per ``(name, partitions, how)`` of ``plan`` a
    TopicRecord and its partitions, ``how`` spoiling the usual shape (or
    giving its partitions another: ``two-replicas``, or one of them:
    ``lagging``)."""
    outs = [record("ConfigRecord", resourceType=2, resourceName="x", name="k", value="v")] * filler
    for t, (name, count, how) in enumerate(plan):
        owner = t - 1 if how == "an-id-again" and t else t
        topic = record("TopicRecord", name=name, topicId=uid(owner))
        if how == "keyed":
            topic = reframed(topic, key=b"k")
        elif how == "later":
            topic = reframed(topic, timestamp_delta=1000)       # a two-byte timestamp delta
        elif how == "undecodable-name":                     # the same length, not UTF-8
            body = bytearray(topic.encoded_value())
            body[4:6] = b"\xff\xfe"
            topic = Out(value=bytes(body))
        outs.append(topic)
        if how == "another-topic":                          # partitions that name another id
            owner = t + 50
        replicas = (4, 5) if how == "two-replicas" else (1, 2, 3)
        outs += [placed(owner, p, replicas) for p in range(count)]
        if how == "lagging" and count:                      # one follower out of the ISR
            lagging = outs[-(count // 2) - 1].data
            outs[-(count // 2) - 1] = record("PartitionRecord", **{**lagging, "isr": lagging["isr"][:1]})
    return outs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(st.tuples(st.sampled_from(["ab", "cd", "e", "f\u00e9", "g" * 60]), st.integers(0, 4),
                               st.sampled_from(["plain"] * 4 + ["keyed", "later", "undecodable-name",
                                                                "another-topic", "an-id-again",
                                                                "lagging", "two-replicas"])),
                     min_size=1, max_size=25),
       filler=st.sampled_from([0, 40, 8200]))
@pytest.mark.parametrize("topic_run_after", [1, topic_runs.TOPIC_RUN_AFTER])
def test_a_topic_with_its_partitions_in_one_match_is_read_as_record_by_record(
        tmp_path, monkeypatch, topic_run_after, plan, filler):
    """(A TopicRun made after the first topic of its shape, or only after
    as many as the reader waits for.)"""
    monkeypatch.setattr(topic_runs, "TOPIC_RUN_AFTER", topic_run_after)
    w = LogWriter(0, 3, TS)
    w.batch(topic_outs(plan, filler))
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(w.getvalue())
    compare_file(p)
    # and the engine files them as it applies records one by one
    a, b = engine_over(p, deferred=True), engine_over(p)
    assert (shown(a), problems(a)) == (shown(b), problems(b))


@pytest.mark.parametrize("topic_run_after", [1, topic_runs.TOPIC_RUN_AFTER])
def test_topics_after_the_first_are_each_one_entry(tmp_path, monkeypatch, topic_run_after):
    """Topics past the first: one entry each (one of one partition too), but
    for a topic whose partitions name another id; one match each once a
    TopicRun of their shape is made (the first topic of a new name length
    is one entry too, made record by record)."""
    monkeypatch.setattr(topic_runs, "TOPIC_RUN_AFTER", topic_run_after)
    plan = [("ab", 3, "plain"), ("cd", 3, "plain"), ("ef", 1, "plain"), ("gh", 3, "plain"),
            ("ij", 3, "another-topic"), ("kl", 3, "plain"), ("mnop", 3, "plain"), ("qrst", 3, "plain")]
    w = LogWriter(0, 3, TS)
    w.batch(topic_outs(plan, 9000))
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(w.getvalue())
    file = RecordStore().open(p)
    entries = [e for b in file for e in b.records if type(e) is tuple]
    assert [kind(e) for e in entries] == [TOPIC, PARTITION_RUN] + [TOPIC_WITH_RUN] * 3 + [
        TOPIC, PARTITION_RUN] + [TOPIC_WITH_RUN] * 3
    assert [count(e) - 1 for e in entries if kind(e) == TOPIC_WITH_RUN] == [3, 1, 3, 3, 3, 3]
    assert bool(file.shortcuts._topics.by_key) == (topic_run_after == 1)
    assert compare_file(p) == 7 * 3 + 1


def test_partitions_of_other_shapes_stay_runs(tmp_path):
    """A lagging partition (a shorter ISR) is a run of one, and the topic's
    partitions after it one run of the shape seen before; a topic whose
    partitions have another replication factor finds theirs by their first
    byte once seen, even with one partition: the topic stays in runs."""
    plan = [("ab", 4, "plain"), ("cd", 4, "plain"), ("ef", 4, "lagging"), ("gh", 4, "plain"),
            ("ij", 4, "two-replicas"), ("kl", 1, "two-replicas"), ("mn", 4, "plain")]
    w = LogWriter(0, 3, TS)
    w.batch(topic_outs(plan, 0))
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(w.getvalue())
    entries = [e for b in RecordStore().open(p) for e in b.records if type(e) is tuple]
    run = {TOPIC: None, PARTITION_RUN: lambda e: e, TOPIC_WITH_RUN: topic_run}
    assert [(kind(e), run[kind(e)] and run[kind(e)](e)[RUN_PARTITION_IDS]) for e in entries] == [
        (TOPIC, None), (PARTITION_RUN, (0, 1, 2, 3)), (TOPIC_WITH_RUN, (0, 1, 2, 3)),
        (TOPIC_WITH_RUN, (0,)), (PARTITION_RUN, (1,)), (PARTITION_RUN, (2, 3)),   # ef: partition 1 lags
        (TOPIC_WITH_RUN, (0, 1, 2, 3)), (TOPIC, None),
        (PARTITION_RUN, (0, 1, 2, 3)),                                          # ij: a shape not seen before
        (TOPIC_WITH_RUN, (0,)), (TOPIC_WITH_RUN, (0, 1, 2, 3))]
    assert compare_file(p) == 4 * 6 + 1   # every partition deferred
    a, b = engine_over(p, deferred=True), engine_over(p)
    assert (shown(a), problems(a)) == (shown(b), problems(b))


def test_partitions_written_after_every_topic_are_runs(tmp_path, monkeypatch):
    """A writer that puts every TopicRecord first and the partitions after,
    topic by topic: each topic's partitions are one run entry, found by
    their first byte once the first topic's were seen (its records' framing
    is not read one by one), and the engine files them under their topics
    as the record-by-record path does."""
    topics = [record("TopicRecord", name=f"t{t}", topicId=uid(t)) for t in range(6)]
    parts = [placed(t, p) for t in range(6) for p in range(5)]
    parts += [placed(2, 5), placed(0, 5, replicas=(1, 2))]   # a topic's straggler; another shape
    w = LogWriter(0, 3, TS)
    w.batch(topics + parts)
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(w.getvalue())
    framed = []
    monkeypatch.setattr(reader, "frame", lambda buf, pos, *a: framed.append(pos) or frame(buf, pos, *a))
    entries = [e for b in RecordStore().open(p) for e in b.records if type(e) is tuple]
    assert len(framed) == 6 + 2   # the topics, the first partition, the one of another shape
    assert [kind(e) for e in entries] == [TOPIC] * 6 + [PARTITION_RUN] * 8
    for t, e in enumerate(entries[6:12]):   # partitions 0-4 of each topic, in turn
        assert e[RUN_PARTITION_IDS] == (0, 1, 2, 3, 4) and e[RAW_TOPIC_ID] == uuid_from_str(uid(t))
    assert [e[RUN_PARTITION_IDS] for e in entries[12:]] == [(5,), (5,)]
    assert compare_file(p) == len(parts)
    a, b = engine_over(p, deferred=True), engine_over(p)
    assert (shown(a), problems(a)) == (shown(b), problems(b))


def test_changes_right_after_a_topic_record_stay_changes(tmp_path):
    """After a TopicRecord the reader tries the last run's shape on what
    follows; when that shape is a run of PartitionChangeRecords (the topic's
    changes come next), they are an entry of changes of their own, never
    the topic's partitions."""
    change = [record("PartitionChangeRecord", partitionId=p, topicId=uid(t), leader=2)
              for t in (0, 1) for p in (0, 1)]
    outs = ([record("TopicRecord", name="t0", topicId=uid(0)), placed(0, 0), placed(0, 1)]
            + change[:2] + [record("TopicRecord", name="t1", topicId=uid(1))] + change[2:])
    w = LogWriter(0, 3, TS)
    w.records(outs, per_batch=len(outs))
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(w.getvalue())
    entries = [e for b in RecordStore().open(p) for e in b.records]
    assert [(kind(e), e[API_KEY]) for e in entries] == [
        (TOPIC, 2), (PARTITION_RUN, 3), (PARTITION_RUN, 5), (TOPIC, 2), (PARTITION_RUN, 5)]
    a, b = engine_over(p, deferred=True), engine_over(p)
    assert (shown(a), problems(a)) == (shown(b), problems(b))
    assert len(problems(a)) == 2   # t1 has no partitions 0 and 1 to change
