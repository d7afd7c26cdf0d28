"""``summary`` reads what a log's pending partition changes do from their
bytes (fast/partition_change.py, fast/change_effects.py) instead of filing them: the one pattern
reads a change as its plain decoder does, the reader leaves a batch unread
only when that pattern reads it right, and the summary (counts, problems)
is the one of filing every change and folding every partition, whatever
the topics, the changes and what was looked at before."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metashell.fast.change_batches import ChangeBatch, ChangeShapes
from metashell.fast.change_effects import ChangeEffects
from metashell.fast.partition_change import EFFECT, VERSIONS, agrees, of_fields, skeleton
from metashell.kraft.framing import frame
from metashell.fast import deferred
from metashell.fast.deferred import PARTITION_ID, RAW_TOPIC_ID, REF
from metashell.kraft.records import RESOLVED
from metashell.fast.store import RecordStore
from metashell.kraft.writer import encode_records
from metashell.fast import pending
from metashell.queries import summary
from metashell.session.files import open_session
from tests.support.partition_layouts import CHANGE_FIELDS, change_fields_of
from tests.support.replay import Log, write_snapshot
from tests.support.records import change, config, partition, topic, uid

EFFECT_READS = VERSIONS["PartitionChangeRecord"].reads   # the versions the pattern is for


def one_change(version: int, pid: int, values: dict):
    return change(uid(7), pid, version=version, **change_fields_of(version, values))


@settings(max_examples=300, deadline=None)
@given(version=st.sampled_from(sorted(EFFECT_READS)), pid=st.sampled_from([0, 5, 2**31 - 1, -1]),
       values=CHANGE_FIELDS)
def test_the_pattern_reads_a_change_as_its_decoder_does(version, pid, values):
    payload, _ = encode_records([one_change(version, pid, values)])
    rend, _, _, _, _, _, vstart, vlen, _ = frame(payload, 0, len(payload), 0)
    d, p = RESOLVED.get((1, 5, version))[1](payload[vstart:vstart + vlen], 3, vlen)
    assert p == vlen
    m = EFFECT.fullmatch(payload, 0, rend)
    arrays = [values.get(k) or () for k in ("isr", "replicas", "removingReplicas", "addingReplicas")]
    if all(len(a) <= 31 for a in arrays) and len(values.get("directories") or ()) <= 7:
        assert m is not None             # every change Kafka writes, short of 32 replicas
    if m is not None:
        assert agrees(m.groups(b""), d)
        assert m.groups(b"") == of_fields(pid, m.group(2), d)
    # learned only if read right; a record that is learned is read by the batch pattern
    shapes = ChangeShapes()
    shapes.learn(payload, 0, vstart, rend, RESOLVED.get((1, 5, version))[1])
    learned = bool(shapes._alternatives)
    assert learned == (m is not None and skeleton(payload, vstart + 23, rend - 1) is not None)
    if learned:
        assert shapes.match(payload, 0, rend, 1)


def test_a_record_the_pattern_would_misread_is_never_learned():
    """A tagged-field count that says less than is there: the decoder
    rejects the value, so the shape is not learned (and the batch is read
    record by record)."""
    payload, _ = encode_records([change(uid(7), 1, version=0, isr=[1, 2], leader=2)])
    payload = bytearray(payload)
    rend, _, _, _, _, _, vstart, vlen, _ = frame(payload, 0, len(payload), 0)
    assert payload[vstart + 23] == 2
    payload[vstart + 23] = 1                          # one tagged field, two written
    shapes = ChangeShapes()
    shapes.learn(bytes(payload), 0, vstart, rend, RESOLVED.get((1, 5, 0))[1])
    assert not shapes._alternatives and len(shapes.keys) == 1


def test_last_change_of_each_field_wins():
    a, b = uid(1), uid(2)
    records = [change(a, 0, isr=[1, 2]), change(a, 0, leader=3), change(a, 0, isr=[1]),
               change(a, 0, leader=-2), change(b, 0, leaderRecoveryState=1),
               change(a, 1, isr=None, leader=-1), change(b, 1, replicas=[1, 2], isr=[1, 2])]
    payload, _ = encode_records(records)
    effects = ChangeEffects(EFFECT.findall(payload))
    key = (0).to_bytes(4, "big") + bytes.fromhex(a_hex(a))
    key1 = (1).to_bytes(4, "big") + bytes.fromhex(a_hex(a))
    assert effects.changes == 7
    assert effects.isr == {key: b"\x02", (1).to_bytes(4, "big") + bytes.fromhex(a_hex(b)): b"\x03"}
    assert effects.leaders == {key: b"\x00", key1: b"\xff"}
    # a leader of -2 changes nothing: the partition must be there all the same
    assert effects.others == {key, (0).to_bytes(4, "big") + bytes.fromhex(a_hex(b))}
    assert effects.reassigned == {bytes.fromhex(a_hex(b))}
    assert effects.named == {bytes.fromhex(a_hex(a)), bytes.fromhex(a_hex(b))}
    assert effects.greatest[:4] == (1).to_bytes(4, "big")
    # reduced a few at a time, as a long log's are: the same
    for size in (1, 2, 3):
        chunked = ChangeEffects()
        found = EFFECT.findall(payload)
        for i in range(0, len(found), size):
            chunked.add(found[i:i + size])
        assert vars(chunked) == vars(effects), size


def test_a_change_of_nothing_is_read_to_its_end():
    """No tagged fields: the headers' count that follows is not taken for an ISR field."""
    a = uid(1)
    records = [change(a, 0), change(a, 1, isr=[1, 2]), change(a, 2)]
    payload, _ = encode_records(records)
    found = EFFECT.findall(payload)
    assert [f[2:4] for f in found] == [(b"", b""), (b"\x03", b""), (b"", b"")]
    assert ChangeEffects(found).others == {p.to_bytes(4, "big") + bytes.fromhex(a_hex(a)) for p in (0, 2)}


def a_hex(text_id: str) -> str:
    from metashell.kraft.primitives import uuid_from_str
    return uuid_from_str(text_id).hex()


# --------------------------------------------------------------------------- summaries

cluster = st.lists(st.tuples(st.integers(1, 12),             # partitions
                             st.integers(1, 4),              # replicas
                             st.integers(0, 4),              # ISR shrunk by
                             st.booleans(),                  # one partition without leader
                             st.sampled_from([None, 1, 2, 3])),   # min.insync.replicas
                   min_size=1, max_size=5)


def write_cluster(directory, topics, seed: int, cluster_min_isr) -> None:
    """A snapshot of ``topics`` and a log of batches of changes after it."""
    rng = random.Random(seed)
    part = directory / "__cluster_metadata-0"
    records = []
    if cluster_min_isr is not None:
        records.append(config(4, "", "min.insync.replicas", str(cluster_min_isr)))
    for t, (n, rf, shrink, offline, min_isr) in enumerate(topics):
        tid = uid(t + 1)
        records.append(topic(f"t{t}", tid))
        if min_isr is not None:
            records.append(config(2, f"t{t}", "min.insync.replicas", str(min_isr)))
        replicas = list(range(1, rf + 1))
        for p in range(n):
            isr = replicas[:max(0, rf - shrink)] if p % 3 == 0 else replicas
            leader = -1 if offline and p == n - 1 else replicas[0]
            records.append(partition(tid, p, replicas, isr=isr, leader=leader))
    write_snapshot(part, 100, records, per_batch=rng.choice((7, 1000)))

    faulty = rng.random() < 0.25   # changes to partitions that are not there, now and then

    def one():
        t = rng.randrange(len(topics))
        tid = uid(99) if faulty and rng.random() < 0.02 else uid(t + 1)    # uid(99): no such topic
        pid = rng.randrange(topics[t][0] + (faulty and rng.random() < 0.03))   # one past the last
        what = rng.random()
        if what < 0.4:
            return change(tid, pid, isr=rng.sample(range(1, 5), rng.randint(0, 4)))
        if what < 0.7:
            return change(tid, pid, leader=rng.choice((-1, -2, 1, 2, 3, -2**31)))
        if what < 0.8:
            return change(tid, pid, leader=rng.choice((-1, 2)), isr=[rng.randint(1, 4)])
        if what < 0.9:
            return change(tid, pid, leaderRecoveryState=rng.choice((0, 1)))
        if what < 0.95:
            return change(tid, pid, replicas=[1, 2], isr=[1])
        return change(tid, pid, version=2, eligibleLeaderReplicas=[2], isr=[1])

    log = Log(100)
    for _ in range(rng.randint(1, 40)):
        log.add(*[one() for _ in range(rng.randint(1, 9))])
    log.write(part)


def settled_summary(directory):
    s = open_session(directory)
    s.engine.settle()
    return s, s.summary()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(topics=cluster, seed=st.integers(0, 2**32 - 1), look=st.one_of(st.none(), st.integers(0, 4)),
       cluster_min_isr=st.sampled_from([None, 2]), at_once=st.sampled_from([1, 3, pending.EFFECTS_AT_ONCE]))
def test_a_summary_without_filing_is_the_summary_of_filing(tmp_path_factory, topics, seed, look,
                                                          cluster_min_isr, at_once):
    """(The effects reduced batch by batch, a few batches at a time, or all at once.)"""
    default, pending.EFFECTS_AT_ONCE = pending.EFFECTS_AT_ONCE, at_once
    try:
        check_summary(tmp_path_factory, topics, seed, look, cluster_min_isr)
    finally:
        pending.EFFECTS_AT_ONCE = default


def check_summary(tmp_path_factory, topics, seed, look, cluster_min_isr) -> None:
    directory = tmp_path_factory.mktemp("c")
    write_cluster(directory, topics, seed, cluster_min_isr)
    s = open_session(directory)
    if look is not None and look < len(topics):   # a topic looked at first: its changes filed
        s.image.topics[uid(look + 1)].partition_records
    fast = s.summary()
    settled, slow = settled_summary(directory)
    assert json.dumps(fast, default=str) == json.dumps(slow, default=str)
    assert sorted(map(str, s.engine.problems)) == sorted(map(str, settled.engine.problems))
    assert s.summary() == fast                    # again, with whatever is still pending
    s.engine.settle()
    assert s.counts() == settled.counts()


def test_summary_leaves_the_changes_pending(tmp_path):
    """On a clean cluster nothing is filed: a later look still sees every change."""
    write_cluster(tmp_path, [(10, 3, 1, False, 2), (10, 3, 0, False, None)], 5, None)
    s = open_session(tmp_path)
    before = len(s.engine._changes.batches)
    fast = s.summary()
    _, slow = settled_summary(tmp_path)
    assert fast == slow and slow["recordsSkippedWithErrors"] == 0
    assert len(s.engine._changes.batches) == before


def test_summary_counts_a_clean_log_without_filing(tmp_path, monkeypatch):
    """Changes that all name partitions there are: counted from their
    bytes, none filed, none folded."""
    part = tmp_path / "__cluster_metadata-0"
    write_snapshot(part, 100, [topic("a", uid(1)), *[partition(uid(1), p) for p in range(8)],
                               topic("b", uid(2)), *[partition(uid(2), p) for p in range(8)]])
    log = Log(100)
    for p in range(8):
        log.add(change(uid(1), p, isr=[1, 2]), change(uid(2), p, leader=-1), change(uid(1), p, leader=2))
    log.add(change(uid(1), 0, isr=[1, 2, 3]))
    log.write(part)
    s = open_session(tmp_path)
    assert any(type(b) is ChangeBatch for b in s.engine._changes.batches)
    monkeypatch.setattr(s.engine, "settle", lambda: (_ for _ in ()).throw(AssertionError("filed")))
    got = s.summary()
    assert (got["partitions"], got["underReplicatedPartitions"], got["offlinePartitions"]) == (16, 7, 8)
    assert got["records"]["byType"]["PartitionChangeRecord"] == 25


def summary_as_filing(directory) -> dict:
    """The summary of ``directory``, checked against filing every change:
    the same, and the same problems reported."""
    s = open_session(directory)
    got = s.summary()
    settled, want = settled_summary(directory)
    assert got == want
    assert sorted(map(str, s.engine.problems)) == sorted(map(str, settled.engine.problems))
    return got


def test_a_change_to_a_missing_partition_is_reported_as_filing_reports_it(tmp_path):
    part = tmp_path / "__cluster_metadata-0"
    write_snapshot(part, 100, [topic("a", uid(1)), *[partition(uid(1), p) for p in range(4)]])
    log = Log(100)
    log.add(change(uid(1), 1, isr=[1]), change(uid(1), 2, isr=[1]))
    log.add(change(uid(1), 1, isr=[1]), change(uid(1), 4, isr=[1]))   # partition 4: none
    log.add(change(uid(9), 0, isr=[1]))                                  # no such topic
    log.write(part)
    assert summary_as_filing(tmp_path)["recordsSkippedWithErrors"] == 2


def test_a_partition_past_a_small_topic_but_not_a_large_one(tmp_path):
    """Topics of different sizes: each change's partition id is checked
    against its own topic's count."""
    part = tmp_path / "__cluster_metadata-0"
    write_snapshot(part, 100, [topic("a", uid(1)), *[partition(uid(1), p) for p in range(3)],
                               topic("b", uid(2)), *[partition(uid(2), p) for p in range(12)]])
    log = Log(100)
    log.add(change(uid(2), 11, isr=[1]), change(uid(1), 2, leader=-1))
    log.add(change(uid(2), 7, isr=[1, 2]), change(uid(1), 5, isr=[1]))   # a has no partition 5
    log.write(part)
    assert summary_as_filing(tmp_path)["recordsSkippedWithErrors"] == 1
    log = Log(100)
    log.add(change(uid(2), 11, isr=[1]), change(uid(1), 2, leader=-1))
    log.write(part)                                                       # now all there
    s = open_session(tmp_path)
    _, want = settled_summary(tmp_path)
    assert s.summary() == want and s.engine._changes.batches


def test_past_a_few_topics_to_fold_every_change_is_filed(tmp_path, monkeypatch):
    """Topics a change reassigns (or whose partitions are no longer all in
    runs) have their changes filed one topic at a time; past a few, all at
    once."""
    topics = [(6, 3, 1, True, None), (6, 3, 0, True, 2), (5, 2, 0, False, None)]
    write_cluster(tmp_path, topics, 9, None)
    _, want = settled_summary(tmp_path)
    assert open_session(tmp_path).summary() == want
    monkeypatch.setattr(summary, "MAX_FOLDED_NAMED", 0)
    s = open_session(tmp_path)
    assert s.summary() == want and not s.engine._changes.batches


@pytest.mark.parametrize("least", [1, 8])
def test_topics_whose_partitions_differ_are_counted_partition_by_partition(tmp_path, monkeypatch, least):
    """Many topics with a lagging replica's partition and one offline (a
    mixed cluster; a few with most partitions lagging or offline), changed
    in ISR and leader only: each partition counted with its own row (its
    topic's, or, unlike most of its topic's, its own), nothing filed, as filing everything counts (``least``
    partitions a topic: 8, and every change is below every topic's count,
    so no key's topic is looked up but those of unlike topics)."""
    part = tmp_path / "__cluster_metadata-0"
    records = [config(4, "", "min.insync.replicas", "2")]
    for t in range(40):
        records.append(topic(f"t{t}", uid(t + 1)))
        for p in range(least + t % 7):
            replicas = [1, 2, 3][:1 + t % 3]
            # the last topics' partitions mostly lagging, or mostly offline
            lagging, offline = (p == 1, p == 2) if t < 30 else (p % 3 > 0, p % 2 == 1 or t % 2)
            records.append(partition(uid(t + 1), p, replicas, isr=replicas[:1] if lagging else replicas,
                                     leader=-1 if offline else replicas[0]))
    write_snapshot(part, 100, records)
    rng = random.Random(3)
    log = Log(100)
    for _ in range(60):
        t = rng.randrange(40)
        pid = rng.randrange(min(8, least + t % 7))
        log.add(change(uid(t + 1), pid, isr=[1, 2, 3][:rng.randint(1, 3)]),
                change(uid(t + 1), pid, leader=rng.choice((-1, 1, 2))))
    log.write(part)
    _, want = settled_summary(tmp_path)
    s = open_session(tmp_path)
    monkeypatch.setattr(s.engine, "settle", lambda: (_ for _ in ()).throw(AssertionError("filed")))
    assert s.summary() == want and s.engine._changes.batches
    assert want["underReplicatedPartitions"] and want["offlinePartitions"] and want["underMinIsrPartitions"]


def test_a_limit_inside_the_changes(tmp_path):
    """``--until-offset`` anywhere in the log: the changes kept up to it
    (a batch cut by it is kept as entries, decoded one by one)."""
    write_cluster(tmp_path, [(8, 3, 1, False, 2), (5, 2, 0, False, None)], 17, None)
    last = open_session(tmp_path).image.last_offset
    for until in range(100, last + 1, max(1, (last - 100) // 12)):
        s = open_session(tmp_path, until_offset=until)
        settled = open_session(tmp_path, until_offset=until)
        settled.engine.settle()
        assert s.summary() == settled.summary(), until


def test_changes_in_batches_read_record_by_record_are_decoded(tmp_path, monkeypatch):
    """Batches the reader read record by record (none left unread here) are
    decoded one change at a time; past the limit, filed."""
    write_cluster(tmp_path, [(6, 3, 0, False, None)], 11, None)
    s = open_session(tmp_path)
    batches = s.engine._changes.batches
    s.engine._changes.batches = [b.entries() if type(b) is ChangeBatch else b for b in batches]
    _, want = settled_summary(tmp_path)
    assert s.summary() == want
    monkeypatch.setattr("metashell.fast.pending.MAX_DECODED_EFFECTS", 0)
    again = open_session(tmp_path)
    assert again.summary() == want and not again.engine._changes.batches


def test_topics_unlike_are_counted_with_their_own_rows(tmp_path, monkeypatch):
    """Topics of different replica counts, partition counts and min ISR:
    their changes are taken back and counted again with their rows, still
    nothing is filed."""
    part = tmp_path / "__cluster_metadata-0"
    write_snapshot(part, 100, [topic("a", uid(1)), *[partition(uid(1), p) for p in range(8)],
                               topic("b", uid(2)), *[partition(uid(2), p, [1, 2]) for p in range(3)],
                               config(2, "b", "min.insync.replicas", "2")])
    log = Log(100)
    for p in range(3):
        log.add(change(uid(1), p, isr=[1]), change(uid(2), p, isr=[2]), change(uid(1), p + 5, leader=-1))
    log.add(change(uid(2), 2, isr=[1, 2]), change(uid(1), 7, leader=3))
    log.write(part)
    _, want = settled_summary(tmp_path)
    s = open_session(tmp_path)
    monkeypatch.setattr(s.engine, "settle", lambda: (_ for _ in ()).throw(AssertionError("filed")))
    got = s.summary()
    assert got == want
    # under min ISR: b/0 and b/1 (1 in sync of 2), a/5 and a/6 (no leader: kafka-topics' rule)
    assert (got["underReplicatedPartitions"], got["offlinePartitions"], got["underMinIsrPartitions"]) == (
        5, 2, 4)


def test_a_batch_left_unread_has_the_effects_of_its_records(tmp_path):
    """A ChangeBatch's effects are its records' as decoded."""
    write_cluster(tmp_path, [(12, 3, 0, False, None)], 21, None)
    store = RecordStore()
    segments = sorted((tmp_path / "__cluster_metadata-0").glob("*.log"))
    for batch in store.open(segments[0]):
        if type(batch.records) is ChangeBatch:
            effects = batch.records.effects()
            decoded = [of_fields(one[PARTITION_ID], one[RAW_TOPIC_ID], store.record(one[REF]).peek())
                       for entry in batch.records.entries()
                       for one in deferred.records(entry)]
            assert effects == decoded
