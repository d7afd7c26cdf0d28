"""The indexing pass (metashell.loader.index): offsets, types and entity keys
without decoding bodies must agree with what full decoding finds."""

from __future__ import annotations

import struct
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from metashell.errors import CorruptDataError
from metashell.kraft import catalog
from metashell.kraft.batch import crc32c
from metashell.kraft.compression import LZ4
from metashell.loader.index import index_file, key_from_data
from metashell.loader.reader import read_file
from metashell.kraft.writer import LogWriter, Out, control, record, snapshot_bytes
from test_loader_support import fix_crcs

TS = 1_700_000_000_000
T1, T2 = "X5HJ16TOTVq6t4OyiVmQOw", "JiPG0GbKRRqpJrShexbMfw"
DIR = "XHhkr4tkSsD900pOQ8pPfg"
ACL = "AAAAAAAAAAAAAAAAAAAAAg"
LONG = "x" * 200    # names this long take the slow path (two-byte length)

EVERY_TYPE = [
    record("FeatureLevelRecord", name="metadata.version", featureLevel=29),
    record("RegisterControllerRecord", controllerId=3000, incarnationId=DIR),
    record("RegisterBrokerRecord", brokerId=1, incarnationId=DIR, brokerEpoch=5),
    record("BrokerRegistrationChangeRecord", brokerId=1, brokerEpoch=5, fenced=-1),
    record("FenceBrokerRecord", id=2, epoch=6), record("UnfenceBrokerRecord", id=2, epoch=6),
    record("UnregisterBrokerRecord", brokerId=2, brokerEpoch=6),
    record("TopicRecord", name="orders", topicId=T1),
    record("PartitionRecord", 2, partitionId=0, topicId=T1, replicas=[1], isr=[1], leader=1, directories=[DIR]),
    record("PartitionRecord", 0, partitionId=1, topicId=T1, replicas=[1], isr=[1], leader=1),
    record("PartitionChangeRecord", 1, partitionId=0, topicId=T1, isr=[1]),
    record("TopicRecord", name=LONG, topicId=T2),
    record("PartitionRecord", 1, partitionId=0, topicId=T2, replicas=[1], isr=[1], leader=1, directories=[DIR]),
    record("ConfigRecord", resourceType=2, resourceName="orders", name="retention.ms", value="1"),
    record("ConfigRecord", resourceType=4, resourceName="", name="log.retention.ms", value="2"),
    record("ConfigRecord", resourceType=2, resourceName=LONG, name="retention.ms", value="3"),
    record("ConfigRecord", resourceType=99, resourceName="odd", name="k", value=None),
    record("ClientQuotaRecord", entity=[{"entityType": "user", "entityName": "u"},
                                        {"entityType": "client-id", "entityName": None}],
           key="producer_byte_rate", value=1.0),
    record("ProducerIdsRecord", brokerId=1, brokerEpoch=5, nextProducerId=1000),
    record("AccessControlEntryRecord", id=ACL, resourceType=2, resourceName="orders", patternType=3,
           principal="User:a", host="*", operation=3, permissionType=3),
    record("RemoveAccessControlEntryRecord", id=ACL),
    record("UserScramCredentialRecord", name="alice", mechanism=1, salt=b"s", storedKey=b"k",
           serverKey=b"v", iterations=4096),
    record("RemoveUserScramCredentialRecord", name="alice", mechanism=1),
    record("DelegationTokenRecord", owner="User:a", requester="User:a", tokenId="tok"),
    record("RemoveDelegationTokenRecord", tokenId="tok"),
    record("ZkMigrationStateRecord", zkMigrationState=0),
    record("BeginTransactionRecord", name="x"), record("EndTransactionRecord"),
    record("AbortTransactionRecord"), record("NoOpRecord"),
    record("ClearElrRecord", topicName="orders"),
    record("RemoveTopicRecord", topicId=T1),
    Out(spec=catalog.SUPERSEDED[12][0], version=0, data={"name": "group.version", "minFeatureLevel": 0,
                                                          "maxFeatureLevel": 1}),
    Out(spec=catalog.METADATA_2_8[2], version=0, data={"name": "old", "topicId": T2}),
    Out(spec=catalog.METADATA_2_8[3], version=0, data={"partitionId": 5, "topicId": T2, "replicas": [1],
                                                        "isr": [1], "removingReplicas": None,
                                                        "addingReplicas": None, "leader": 1}),
]


def expected_key(rec):
    if rec.kind == "metadata":
        return key_from_data(rec.api_key, rec.data)
    if rec.kind == "control" and rec.api_key in (2, 5, 6):
        return ("quorum",)
    return None


@pytest.fixture
def log(tmp_path):
    w = LogWriter(100, 2, TS)
    w.leader_change(1, [1, 2])
    w.records(EVERY_TYPE, per_batch=7)
    w.batch(EVERY_TYPE[7:11], codec=LZ4)
    voters = [{"voterId": 1, "voterDirectoryId": DIR, "endpoints": [],
               "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}]
    w.batch([control("KRaftVersionRecord", kRaftVersion=1), control("VotersRecord", voters=voters)],
            control=True)
    path = tmp_path / "00000000000000000100.log"
    path.write_bytes(w.getvalue())
    return path


def test_index_agrees_with_full_decoding(log):
    recs = [r for b in read_file(log) for r in b.records]
    idx = index_file(log)
    assert len(idx) == len(recs)
    assert list(idx.offsets) == [r.offset for r in recs]
    assert list(idx.types) == [r.api_key for r in recs]
    assert [idx.entity(i) for i in range(len(idx))] == [expected_key(r) for r in recs]
    assert [idx.kind(i) for i in range(len(idx))] == [r.kind for r in recs]
    assert idx.counts() == Counter(catalog.METADATA[r.api_key].name if r.kind == "metadata" else r.name
                                   for r in recs)
    assert idx.unknown == {} and idx.saw_frame0
    assert idx.summary.end_reason == "end"


def test_entity_keys(log):
    idx = index_file(log)
    keys = set(idx.entity_keys)
    assert {("broker", 1), ("broker", 2), ("controller", 3000), ("topic", T1), ("topic", T2),
            ("config", "topic", "orders"), ("config", "broker", ""), ("config", "topic", LONG),
            ("config", "type_99", "odd"), ("feature", "metadata.version"), ("feature", "group.version"),
            ("quota", (("client-id", None), ("user", "u"))), ("producerIds",), ("acl", ACL),
            ("scram", "SCRAM-SHA-256", "alice"), ("token", "tok"), ("zkMigrationState",),
            ("clearElr", "orders"), ("quorum",)} <= keys
    assert len(idx.entity_keys) == len(keys)    # each key once
    assert idx.topic_names == {T1: "orders", T2: "old"}   # the 2.8 TopicRecord renamed T2 last


def test_find_by_entity(log):
    idx = index_file(log)
    recs = [r for b in read_file(log) for r in b.records]
    for key in [("partition", T1, 0), ("partition", T2, 0), ("topic", T1), ("broker", 2), ("acl", ACL),
                ("quorum",), ("config", "topic", "orders")]:
        want = [i for i, r in enumerate(recs) if expected_key(r) == key]
        assert want and idx.find(key) == want, key
        assert idx.offsets_of(key) == [recs[i].offset for i in want]
    assert idx.find(("partition", T1, 9)) == [] and idx.find(("broker", 77)) == []
    assert idx.partitions_of(T1) == [0, 1] and idx.partitions_of(T2) == [0, 5]


def test_record_decodes_one_record(log):
    recs = [r for b in read_file(log) for r in b.records]
    idx = index_file(log)
    for i in (0, 1, 9, 40, len(recs) - 6, len(recs) - 1):     # control, data, compressed batch
        got = idx.record(i)
        assert (got.offset, got.name, got.kind, got.data, got.timestamp, got.epoch) == (
            recs[i].offset, recs[i].name, recs[i].kind, recs[i].data, recs[i].timestamp, recs[i].epoch)
    lazy = idx.record(9, lazy=True)
    assert lazy.data == recs[9].data


def test_snapshot_of_partitions(tmp_path):
    outs = []
    for t in range(30):
        tid = f"{t:02d}".ljust(21, "A") + "A"
        outs.append(record("TopicRecord", name=f"t{t}", topicId=tid))
        outs += [record("PartitionRecord", partitionId=p, topicId=tid, replicas=[1, 2, 3], isr=[1, 2, 3],
                        leader=1, directories=[DIR] * 3) for p in range(8)]
    path = tmp_path / "00000000000000000300-0000000001.checkpoint"
    path.write_bytes(snapshot_bytes(outs, per_batch=50))
    idx = index_file(path)
    assert len(idx) == len(outs) + 2
    assert len(idx.entity_keys) == 30 and len(idx.topic_names) == 30
    tid = idx.entity_keys[5][1]
    assert idx.partitions_of(tid) == list(range(8))
    assert [idx.record(i).data["partitionId"] for i in idx.find(("partition", tid, 3))] == [3]


def test_partition_runs_agree_with_full_decoding(tmp_path):
    """Runs of same-size partition records (indexed together): one- and
    two-byte offset deltas, runs cut by the batch's end, by a record with a
    key or headers, by another size; runs across topics, topics seen first
    in a run, runs of PartitionChangeRecords, a compressed batch."""
    tids = [f"{t:02d}".ljust(21, "B") + "A" for t in range(6)]
    plain = dict(replicas=[1, 2, 3], isr=[1, 2, 3], leader=1, directories=[DIR] * 3)
    outs = []
    for p in range(40):                        # partitions before their TopicRecord
        outs.append(record("PartitionRecord", partitionId=p, topicId=tids[p % 3], **plain))
    outs += [record("TopicRecord", name=f"t{t}", topicId=tid) for t, tid in enumerate(tids)]
    for p in range(150):                       # past 64 records a batch: two-byte deltas
        outs.append(record("PartitionRecord", partitionId=p, topicId=tids[3], **plain))
        if p == 70:                            # same size, but a key: not part of a run
            keyed = record("PartitionRecord", partitionId=999, topicId=tids[3], **plain)
            outs.append(Out(spec=keyed.spec, version=keyed.version, data=keyed.data, key=b"k"))
        if p == 90:
            outs.append(Out(spec=keyed.spec, version=keyed.version, data=keyed.data,
                            headers=(("h", None),)))
        if p == 100:                           # another size
            outs.append(record("PartitionRecord", partitionId=p, topicId=tids[4], replicas=[1],
                               isr=[1], leader=1, directories=[DIR]))
    outs += [record("PartitionChangeRecord", partitionId=p, topicId=tids[5], leader=2) for p in range(30)]
    # topics as a snapshot has them: a TopicRecord, then its partitions (a run taken
    # right after the TopicRecord when shaped as the last run), in other shapes too
    more = [f"{t:02d}".ljust(21, "D") + "A" for t in range(8)]
    for t, mid in enumerate(more):
        outs.append(record("TopicRecord", name=f"m{t}", topicId=mid))
        replicas = [1, 2, 3] if t % 3 else [1, 2]
        outs += [record("PartitionRecord", partitionId=p, topicId=mid, replicas=replicas, isr=replicas,
                        leader=1, directories=[DIR] * len(replicas)) for p in range(1 + t % 4 * 3)]
    tids += more
    w = LogWriter(1000, 2, TS)
    w.records(outs, per_batch=130)
    w.batch(outs[:45], codec=LZ4)
    path = tmp_path / "00000000000000001000.log"
    path.write_bytes(w.getvalue())
    recs = [r for b in read_file(path) for r in b.records]
    idx = index_file(path)
    assert len(idx) == len(recs)
    assert list(idx.offsets) == [r.offset for r in recs]
    assert list(idx.types) == [r.api_key for r in recs]
    assert [idx.entity(i) for i in range(len(idx))] == [expected_key(r) for r in recs]
    assert [idx.record(i).offset for i in range(len(idx))] == [r.offset for r in recs]   # positions
    assert [k[1] for k in idx.entity_keys] == tids   # ids in first-seen order


def test_damage_and_end_of_data(tmp_path, log):
    data = log.read_bytes()
    first_len = struct.unpack_from(">i", data, 8)[0] + 12
    bad = bytearray(data)
    bad[first_len + 70] ^= 1
    path = tmp_path / "bad.log"
    path.write_bytes(bytes(bad))
    with pytest.raises(CorruptDataError, match="CRC") as e:
        index_file(path)
    assert e.value.position == first_len and e.value.offset == 101
    idx = index_file(path, skip_damage=True)
    good = index_file(log)
    assert len(idx) == len(good) - 7 and idx.offsets[1] == 108
    assert len(idx.summary.problems) == 1

    torn = tmp_path / "torn.log"
    torn.write_bytes(data[:-3])
    t = index_file(torn)
    assert t.summary.end_reason == "torn" and len(t) == len(good) - 2
    padded = tmp_path / "padded.log"
    padded.write_bytes(data + bytes(100))
    assert index_file(padded).summary.end_reason == "zeros"


def test_record_level_damage_is_reported_like_the_reader(tmp_path):
    w = LogWriter(0, 1, TS)
    w.batch([record("NoOpRecord")])
    w.batch([Out(value=b"\x01\x14\x00\x00", key=b"\xff")])
    data = bytearray(w.getvalue())
    # declare the second batch's only record one byte longer (and fix the CRC)
    second = len(w.parts[0])
    assert data[second + 61] == 0x16      # length 11
    data[second + 61] = 0x18              # length 12
    data += b"\x00"
    struct.pack_into(">i", data, second + 8, struct.unpack_from(">i", data, second + 8)[0] + 1)
    struct.pack_into(">I", data, second + 17, crc32c(bytes(data[second + 21:])))
    path = tmp_path / "r.log"
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptDataError) as reader_err:
        list(read_file(path))
    with pytest.raises(CorruptDataError) as index_err:
        index_file(path)
    assert str(index_err.value) == str(reader_err.value)
    assert list(index_file(path, skip_damage=True).offsets) == [0]


# --------------------------------------------------------------------------- agrees under damage

def _small_log() -> bytes:
    w = LogWriter(0, 1, TS)
    w.leader_change(1, [1])
    w.records(EVERY_TYPE[:14], per_batch=5)
    o = record("NoOpRecord")
    o.headers = (("h", b"v"),)
    w.batch([o, Out(value=b"\x01\x14\x00\x00", key=b"key")])
    return w.getvalue()


SMALL = _small_log()


def _unknown_type(rec) -> bool:
    """What the index, which reads no bodies, can tell is undecodable: a record
    of an unknown type, or a control record whose key is not a control key."""
    return rec.name in ("UnknownRecord", "UnknownControlRecord") or rec.name.startswith("ControlRecord(")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(flips=[(602, 32)], skip=False)   # a data batch flipped to control: keys too short
@given(st.lists(st.tuples(st.integers(0, len(SMALL) - 1), st.integers(0, 255)), min_size=1, max_size=4),
       st.booleans())
def test_index_and_reader_agree_on_damaged_input(tmp_path_factory, flips, skip):
    data = bytearray(SMALL)
    for pos, value in flips:
        data[pos] = value
    path = tmp_path_factory.mktemp("fz") / "x.log"
    path.write_bytes(fix_crcs(bytes(data)))
    reader = read_file(path, skip_damage=skip)
    try:
        recs = [r for b in reader for r in b.records]
    except CorruptDataError as reader_err:
        with pytest.raises(CorruptDataError) as index_err:
            index_file(path, skip_damage=skip)
        assert str(index_err.value) == str(reader_err)
        return
    idx = index_file(path, skip_damage=skip)
    assert list(idx.offsets) == [r.offset for r in recs]
    assert [idx.kind(i) == "undecodable" for i in range(len(idx))] == \
        [_unknown_type(r) for r in recs]
    assert [idx.types[i] for i in range(len(idx)) if i not in idx.unknown] == \
        [r.api_key for r in recs if r.kind != "undecodable" or not _unknown_type(r)]
    assert [str(p) for p in idx.summary.problems] == [str(p) for p in reader.summary.problems]
    assert (idx.summary.end_reason, idx.summary.end_position) == (reader.summary.end_reason,
                                                                  reader.summary.end_position)
