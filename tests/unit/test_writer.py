"""The writer: kraft-format.md's worked examples byte for byte, every codec,
control batches, headers, transactions, snapshots; writer -> reader round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import CORPORA
from tests.support.corpora import needs_corpora
from metashell.kraft import catalog
from metashell.kraft.batch import ATTR_CONTROL, ATTR_TRANSACTIONAL, HEADER, crc32c
from metashell.kraft.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from metashell.loader.reader import read_file
from metashell.kraft.records import encode_value
from metashell.kraft.writer import (
    LogWriter, Out, build_batch, control, encode_batch, encode_records, record, segment_name,
    snapshot_bytes, snapshot_name, spec_named, write_file,
)

TS = 1_700_000_000_000


def h(text: str) -> bytes:
    return bytes.fromhex("".join(text.split()))


def batches_of(path):
    return list(read_file(path))


def write(tmp_path, data: bytes, name="00000000000000000000.log") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


# --------------------------------------------------------------------------- section 18 examples

def test_18_2_noop_value():
    assert record("NoOpRecord").encoded_value() == h("01 14 00 00")


def test_18_3_topic_value():
    topic_id = "AQIDBAUGBwgJCgsMDQ4PEA"   # bytes 01 02 .. 10
    assert record("TopicRecord", name="foo", topicId=topic_id).encoded_value() == h(
        "01 02 00  04 66 6f 6f  01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10  00")


NOOP_BATCH_18_4 = h("""
    00 00 00 00 00 00 00 05   00 00 00 3c   00 00 00 03   02   b0 3b fe 3d
    00 00   00 00 00 00   00 00 01 8b cf e5 68 00   00 00 01 8b cf e5 68 00
    ff ff ff ff ff ff ff ff   ff ff   ff ff ff ff   00 00 00 01
    14 00 00 00 01 08 01 14 00 00 00""")


def test_18_4_noop_batch_is_byte_identical():
    payload, count = encode_records([record("NoOpRecord")])
    assert build_batch(5, payload, count, epoch=3, base_timestamp=TS) == NOOP_BATCH_18_4
    w = LogWriter(base_offset=5, epoch=3, timestamp=TS)
    assert w.batch([record("NoOpRecord")]) == 5
    assert w.getvalue() == NOOP_BATCH_18_4
    assert w.next_offset == 6
    assert len(NOOP_BATCH_18_4) == 72


def test_18_4_noop_batch_reads_back(tmp_path):
    (batch,) = batches_of(write(tmp_path, NOOP_BATCH_18_4))
    hd = batch.header
    assert (hd.base_offset, hd.length, hd.epoch, hd.magic, hd.crc) == (5, 60, 3, 2, 0xB03BFE3D)
    assert (hd.attributes, hd.last_offset_delta, hd.base_timestamp, hd.max_timestamp) == (0, 0, TS, TS)
    assert (hd.producer_id, hd.producer_epoch, hd.base_sequence, hd.count) == (-1, -1, -1, 1)
    (rec,) = batch.records
    assert (rec.offset, rec.timestamp, rec.epoch, rec.kind, rec.name, rec.api_key, rec.version) == (
        5, TS, 3, "metadata", "NoOpRecord", 20, 0)
    assert rec.data == {} and rec.position == 0 and rec.key is None and rec.headers == ()
    assert encode_batch(batch) == NOOP_BATCH_18_4


def test_18_5_leader_change_record():
    out = control("LeaderChangeMessage", leaderId=1, voters=[{"voterId": 1}], grantingVoters=[{"voterId": 1}])
    assert out.encoded_key() == h("00 00 00 02")
    assert out.encoded_value() == h("00 00  00 00 00 01  02 00 00 00 01 00  02 00 00 00 01 00  00")
    w = LogWriter(0, 1, TS)
    w.leader_change(1, [1])
    data = w.getvalue()
    assert HEADER.unpack_from(data)[5] == ATTR_CONTROL   # attributes 00 20


# the three batch timestamps of the section 18.6 dump (a 3.7 bootstrap.checkpoint)
T0, T1, T2 = 0x19C0FCA2128, 0x19C0FCA2154, 0x19C0FCA2155


def bootstrap_18_6() -> bytes:
    w = LogWriter(0, 0, T0)
    w.batch([control("SnapshotHeaderRecord", lastContainedLogTimestamp=0)], control=True)
    w.batch([record("FeatureLevelRecord", name="metadata.version", featureLevel=19)], timestamp=T1)
    w.batch([control("SnapshotFooterRecord")], control=True, timestamp=T2)
    return w.getvalue()


def test_18_6_bootstrap_checkpoint_structure():
    data = bootstrap_18_6()
    assert len(data) == 249
    # batch 0: base 0, length 71, epoch 0, magic 2, control
    b0 = HEADER.unpack_from(data, 0)
    assert b0[:4] == (0, 71, 0, 2) and b0[5] == 0x20 and b0[7:9] == (T0, T0) and b0[12] == 1
    # record: length 21, attributes, deltas, key (0, 3), value: Version 0, LastContained.. 0, tags
    assert data[61:83] == h("2a 00 00 00 08 00 00 00 03 16  00 00  00 00 00 00 00 00 00 00  00  00")
    # batch 1 at byte 83: base 1, length 79, data batch with FeatureLevelRecord metadata.version=19
    b1 = HEADER.unpack_from(data, 83)
    assert b1[:4] == (1, 79, 0, 2) and b1[5] == 0 and b1[7] == T1 and b1[12] == 1
    assert data[83 + 61:83 + 91] == h("3a 00 00 00 01 2e 01 0c 00 11") + b"metadata.version" + h("00 13 00 00")
    # batch 2 at byte 174: base 2, length 63, control, SnapshotFooterRecord
    b2 = HEADER.unpack_from(data, 174)
    assert b2[:4] == (2, 63, 0, 2) and b2[5] == 0x20 and b2[7] == T2
    assert data[174 + 61:] == h("1a 00 00 00 08 00 00 00 04 06 00 00 00 00")
    for pos, length in ((0, 71), (83, 79), (174, 63)):
        assert int.from_bytes(data[pos + 17:pos + 21], "big") == crc32c(data[pos + 21:pos + 12 + length])
    # the CRCs the dump shows
    assert [data[p + 17:p + 21].hex() for p in (0, 83, 174)] == ["5fce4ded", "fd1096d8", "419b3cbe"]


@needs_corpora
def test_18_6_matches_the_real_file():
    real = CORPORA / "kafka-3.7-logdir" / "bootstrap.checkpoint"
    assert bootstrap_18_6() == real.read_bytes()


def test_bootstrap_via_snapshot_bytes(tmp_path):
    data = snapshot_bytes([record("FeatureLevelRecord", name="metadata.version", featureLevel=19)],
                          epoch=0, timestamp=T0, last_contained_timestamp=0)
    assert len(data) == 249
    bs = batches_of(write(tmp_path, data, "bootstrap.checkpoint"))
    assert [b.is_control for b in bs] == [True, False, True]
    assert [r.name for b in bs for r in b.records] == [
        "SnapshotHeaderRecord", "FeatureLevelRecord", "SnapshotFooterRecord"]
    assert [r.offset for b in bs for r in b.records] == [0, 1, 2]
    assert bs[0].records[0].data == {"version": 0, "lastContainedLogTimestamp": 0}


# --------------------------------------------------------------------------- codecs

CLUSTER = [
    record("FeatureLevelRecord", name="metadata.version", featureLevel=29),
    record("RegisterBrokerRecord", brokerId=1, incarnationId="J8aAPcfLQt2bqs1JT_rMgQ", brokerEpoch=7,
           endPoints=[{"name": "PLAINTEXT", "host": "localhost", "port": 9092, "securityProtocol": 0}],
           rack=None, fenced=False, logDirs=["XHhkr4tkSsD900pOQ8pPfg"]),
    record("TopicRecord", name="orders", topicId="X5HJ16TOTVq6t4OyiVmQOw"),
    *[record("PartitionRecord", 2, partitionId=p, topicId="X5HJ16TOTVq6t4OyiVmQOw", replicas=[1],
             isr=[1], leader=1, leaderEpoch=p, partitionEpoch=p, directories=["XHhkr4tkSsD900pOQ8pPfg"])
      for p in range(50)],
    record("ConfigRecord", resourceType=2, resourceName="orders", name="retention.ms", value="1000"),
    record("ConfigRecord", resourceType=2, resourceName="orders", name="retention.ms", value=None),
    record("ClientQuotaRecord", entity=[{"entityType": "user", "entityName": None}],
           key="producer_byte_rate", value=1024.0, remove=False),
    record("UserScramCredentialRecord", name="alice", mechanism=1, salt=b"s" * 16, storedKey=b"k" * 32,
           serverKey=b"v" * 32, iterations=4096),
    record("PartitionChangeRecord", 2, partitionId=3, topicId="X5HJ16TOTVq6t4OyiVmQOw", isr=[1], leader=-1,
           eligibleLeaderReplicas=[1], lastKnownElr=[]),
]


@pytest.mark.parametrize("codec", [NONE, GZIP, SNAPPY, LZ4, ZSTD], ids=["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_round_trips(tmp_path, codec):
    w = LogWriter(100, 4, TS, codec=codec)
    w.leader_change(1, [1, 2, 3])
    w.records(CLUSTER, per_batch=20)
    path = write(tmp_path, w.getvalue())
    bs = batches_of(path)
    data_batches = [b for b in bs if not b.is_control]
    assert [b.header.codec for b in data_batches] == [codec] * len(data_batches)
    recs = [r for b in data_batches for r in b.records]
    assert [r.offset for b in bs for r in b.records] == list(range(100, 100 + 1 + len(CLUSTER)))
    for out, rec in zip(CLUSTER, recs):
        assert rec.kind == "metadata" and rec.name == out.spec.name and rec.version == out.version
        assert encode_value(rec.spec, rec.version, rec.data) == out.encoded_value()
    assert recs[1].data["rack"] is None and recs[-1].data["eligibleLeaderReplicas"] == [1]
    # the same payload compresses to the same bytes, so re-encoding is exact
    assert b"".join(encode_batch(b) for b in bs) == path.read_bytes()


def test_compressed_batch_is_smaller_and_crc_covers_compressed_bytes():
    plain = LogWriter(codec=NONE)
    plain.records(CLUSTER)
    packed = LogWriter(codec=ZSTD)
    packed.records(CLUSTER)
    a, b = plain.getvalue(), packed.getvalue()
    assert len(b) < len(a)
    assert int.from_bytes(b[17:21], "big") == crc32c(b[21:])


# --------------------------------------------------------------------------- control, headers, transactions

def test_control_batches_and_snapshot_with_voters(tmp_path):
    voters = [{"voterId": 1, "voterDirectoryId": "J8aAPcfLQt2bqs1JT_rMgQ",
               "endpoints": [{"name": "CONTROLLER", "host": "c1", "port": 9093}],
               "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}]
    data = snapshot_bytes(CLUSTER[:3], epoch=5, timestamp=TS, kraft_version=1, voters=voters)
    path = write(tmp_path, data, snapshot_name(1234, 5))
    bs = batches_of(path)
    assert [b.is_control for b in bs] == [True, False, True]
    head = bs[0].records
    assert [r.name for r in head] == ["SnapshotHeaderRecord", "KRaftVersionRecord", "VotersRecord"]
    assert [r.api_key for r in head] == [3, 5, 6]
    assert all(r.kind == "control" and r.version == 0 and r.epoch == 5 for r in head)
    assert head[0].key == b"\x00\x00\x00\x03"
    assert head[1].data["kRaftVersion"] == 1
    assert head[2].data["voters"][0]["endpoints"][0]["port"] == 9093
    assert bs[-1].records[0].name == "SnapshotFooterRecord"
    assert [r.offset for b in bs for r in b.records] == list(range(7))
    assert b"".join(encode_batch(b) for b in bs) == data


def test_leader_change_batch(tmp_path):
    w = LogWriter(0, 0, TS)
    w.leader_change(2, [1, 2, 3], epoch=9, timestamp=TS + 5)
    (b,) = batches_of(write(tmp_path, w.getvalue()))
    assert b.is_control and b.epoch == 9 and b.append_time == TS + 5
    (r,) = b.records
    assert r.name == "LeaderChangeMessage" and r.layout is None
    # schema version 0: VoterDirectoryId (1+) is absent on the wire and takes its default
    voters = [{"voterId": v, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA"} for v in (1, 2, 3)]
    assert r.data == {"version": 0, "leaderId": 2, "voters": voters, "grantingVoters": voters}


def test_records_with_headers_keys_attributes_and_deltas(tmp_path):
    a = record("NoOpRecord")
    a.headers = (("trace", b"abc"), ("empty", b""), ("null", None))
    b = record("NoOpRecord")
    b.key = b"k1"
    b.attributes = 0
    b.timestamp_delta = 250
    b.offset_delta = 5
    payload, n = encode_records([a, b])
    data = build_batch(10, payload, n, epoch=1, base_timestamp=TS, max_timestamp=TS + 250, last_offset_delta=5)
    path = write(tmp_path, data)
    (batch,) = batches_of(path)
    r0, r1 = batch.records
    assert r0.headers == (("trace", b"abc"), ("empty", b""), ("null", None)) and r0.key is None
    assert (r1.key, r1.offset, r1.timestamp) == (b"k1", 15, TS + 250)
    assert batch.last_offset == 15
    assert encode_batch(batch) == data


def test_transactions(tmp_path):
    w = LogWriter(0, 2, TS)
    w.batch([record("BeginTransactionRecord", name="Bootstrap records"),
             record("FeatureLevelRecord", name="metadata.version", featureLevel=21),
             record("EndTransactionRecord")])
    w.batch([record("BeginTransactionRecord"), record("AbortTransactionRecord", reason="controller failover")])
    # a producer-transaction style batch (never written by KRaft): the attributes and producer
    # fields survive reading and re-encoding
    payload, n = encode_records([record("NoOpRecord"), record("NoOpRecord")])
    w.parts.append(build_batch(5, payload, n, epoch=2, base_timestamp=TS, attributes=ATTR_TRANSACTIONAL,
                               producer_id=4000, producer_epoch=3, base_sequence=17))
    path = write(tmp_path, w.getvalue())
    bs = batches_of(path)
    recs = [r for b in bs for r in b.records]
    assert [r.name for r in recs] == ["BeginTransactionRecord", "FeatureLevelRecord", "EndTransactionRecord",
                                      "BeginTransactionRecord", "AbortTransactionRecord", "NoOpRecord",
                                      "NoOpRecord"]
    assert recs[0].data == {"name": "Bootstrap records"}
    assert recs[3].data == {"name": None}
    assert recs[4].data == {"reason": "controller failover"}
    t = bs[2].header
    assert t.is_transactional and (t.producer_id, t.producer_epoch, t.base_sequence) == (4000, 3, 17)
    assert b"".join(encode_batch(b) for b in bs) == path.read_bytes()


# --------------------------------------------------------------------------- helpers

def test_record_defaults_to_newest_version_and_accepts_name_fields():
    assert record("PartitionRecord").version == 2
    assert record("RegisterBrokerRecord").version == 4   # Kafka 4.4: cordoned log dirs
    assert record("RegisterBrokerRecord", 1).version == 1
    assert record("TopicRecord", name="x").data == {"name": "x"}
    assert control("SnapshotFooterRecord").data == {"version": 0}
    assert spec_named("LeaderChangeMessage") is catalog.CONTROL[2]
    with pytest.raises(KeyError, match="NoSuchRecord"):
        spec_named("NoSuchRecord")


def test_raw_value_out():
    out = Out(value=b"\x01\x14\x00\x00")
    payload, n = encode_records([out, Out(value=None)])
    assert n == 2 and payload == h("14 00 00 00 01 08 01 14 00 00 00") + h("0c 00 00 02 01 01 00")


def test_names_and_write_file(tmp_path):
    assert segment_name(99329) == "00000000000000099329.log"
    assert snapshot_name(7268, 1) == "00000000000000007268-0000000001.checkpoint"
    p = tmp_path / "f.log"
    write_file(p, b"abc")
    assert p.read_bytes() == b"abc" and not (tmp_path / "f.log.tmp").exists()
    w = LogWriter()
    w.batch([record("NoOpRecord")])
    w.write(tmp_path / "g.log")
    assert (tmp_path / "g.log").read_bytes() == w.getvalue()
