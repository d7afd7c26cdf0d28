"""Reading records: record-level damage, odd records that must not stop a
load (unknown apiKey, version, frame or control type), Kafka 2.8 files,
superseded same-version layouts, lazy decoding, and a fuzz test that random
input only ever raises the tool's own errors. Every fixture is made with the
project's writer."""

from __future__ import annotations

import signal
import struct
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metashell.errors import CorruptDataError, InputError
from metashell.kraft import catalog
from metashell.kraft.batch import ATTR_CONTROL, crc32c
from metashell.kraft.compression import GZIP, LZ4, SNAPPY, ZSTD
from metashell.loader.reader import read_file, read_records
from tests.support.loader import fix_crcs
from metashell.kraft.writer import (
    LogWriter, Out, build_batch, control, encode_batch, encode_records, record,
)

TS = 1_700_000_000_000
TOPIC = "X5HJ16TOTVq6t4OyiVmQOw"
DIR = "XHhkr4tkSsD900pOQ8pPfg"


def batch(outs, base=0, *, epoch=1, is_control=False, codec=0) -> bytes:
    payload, n = encode_records(outs)
    return build_batch(base, payload, n, epoch=epoch, base_timestamp=TS,
                       attributes=(ATTR_CONTROL if is_control else 0) | codec)


def raw_batch(base: int, payload: bytes, count: int, *, attributes: int = 0) -> bytes:
    """A batch around ``payload`` exactly as given (no compression), valid CRC."""
    out = bytearray(build_batch(base, payload, count))
    struct.pack_into(">h", out, 21, attributes)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def write(tmp_path, data: bytes, name="00000000000000000000.log") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def records(path, **kw):
    return [r for b in read_file(path, **kw) for r in b.records]


def noop_record_bytes(offset_delta: int = 0) -> bytes:
    payload, _ = encode_records([Out(spec=catalog.METADATA[20], offset_delta=offset_delta)])
    return payload


def assert_one_line(err, path, position, offset):
    text = str(err)
    assert "\n" not in text and text.startswith(f"{path} (byte {position}, offset {offset}): ")


# --------------------------------------------------------------------------- record-level damage

def damaged_log(middle: bytes) -> tuple[bytes, int]:
    """NoOp batch at 0, ``middle`` (a batch at offset 1), NoOp batch at 5."""
    first = batch([record("NoOpRecord")], 0)
    return first + middle + batch([record("NoOpRecord")], 5), len(first)


def test_record_length_inconsistent_with_its_fields(tmp_path):
    # length 11 (zigzag 0x16) but the fields take 10 bytes; one stray byte after
    rec = bytes.fromhex("16 00 00 00 01 08 01 14 00 00 00 ff")
    data, pos = damaged_log(raw_batch(1, rec, 1))
    path = write(tmp_path, data)
    with pytest.raises(CorruptDataError) as e:
        records(path)
    assert_one_line(e.value, path, pos, 1)
    assert "declares 11 bytes but its fields take 10" in str(e.value)
    reader = read_file(path, skip_damage=True)
    assert [r.offset for b in reader for r in b.records] == [0, 5]
    (problem,) = reader.summary.problems
    assert_one_line(problem, path, pos, 1)


@pytest.mark.parametrize("payload, why", [
    (bytes.fromhex("ff ff ff ff ff ff 01"), "illegal varint"),              # record length: 7-byte varint
    (bytes.fromhex("14 00 00 00 01 ff ff ff ff ff 7f 01 14 00 00 00"), "illegal varint"),  # value length
    (noop_record_bytes() + b"\x80", None),                                  # varint cut by the batch end
    (bytes.fromhex("40 00 00 00 01 08 01 14 00 00 00"), "declares length 32"),   # runs past the batch
    (bytes.fromhex("04 00 00"), "declares length 2"),                        # shorter than any record
])
def test_garbage_and_truncated_varints_inside_a_batch(tmp_path, payload, why):
    count = 2 if payload.endswith(b"\x80") else 1
    data, pos = damaged_log(raw_batch(1, payload, count))
    path = write(tmp_path, data)
    with pytest.raises(CorruptDataError, match=why) as e:
        records(path)
    assert_one_line(e.value, path, pos, 1)
    reader = read_file(path, skip_damage=True)
    assert [r.offset for b in reader for r in b.records] == [0, 5] and len(reader.summary.problems) == 1


def test_truncated_varint_at_the_very_end_of_the_file(tmp_path):
    first = batch([record("NoOpRecord")], 0)
    path = write(tmp_path, first + raw_batch(1, noop_record_bytes() + b"\x80", 2))
    with pytest.raises(CorruptDataError, match="runs past the end of the batch") as e:
        records(path)
    assert_one_line(e.value, path, len(first), 1)
    reader = read_file(path, skip_damage=True)
    assert [r.offset for b in reader for r in b.records] == [0] and len(reader.summary.problems) == 1


def test_records_count_disagrees_with_the_payload(tmp_path):
    two = noop_record_bytes(0) + noop_record_bytes(1)
    path = write(tmp_path, raw_batch(0, two, 1))
    with pytest.raises(CorruptDataError, match="left after the 1 records"):
        records(path)
    path = write(tmp_path, raw_batch(0, two, 3) + batch([record("NoOpRecord")], 3))
    with pytest.raises(CorruptDataError):
        records(path)


def test_header_key_that_is_not_utf8_is_damage(tmp_path):
    o = record("NoOpRecord")
    o.headers = (("k", b"v"),)
    payload, n = encode_records([o])
    path = write(tmp_path, raw_batch(0, payload.replace(b"\x02k", b"\x02\xff"), n))
    with pytest.raises(CorruptDataError):
        records(path)


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD, 5, 7])
def test_corrupt_compressed_payload(tmp_path, codec):
    data, pos = damaged_log(raw_batch(1, b"\x00\x01garbage, not a compressed stream", 1, attributes=codec))
    path = write(tmp_path, data)
    with pytest.raises(CorruptDataError, match="compress") as e:
        records(path)
    assert_one_line(e.value, path, pos, 1)
    assert [r.offset for r in records(path, skip_damage=True)] == [0, 5]


# --------------------------------------------------------------------------- odd records, load goes on

def test_unknown_api_key_and_version_are_undecodable_records(tmp_path):
    cluster_id = b"\x01\x1e\x00" + b"\x07abcdef" + b"\x00"      # apiKey 30 (in no release)
    outs = [record("NoOpRecord"), Out(value=cluster_id),
            Out(value=b"\x01\x03\x07" + bytes(30)),                # PartitionRecord v7
            Out(value=b"\x02\x14\x00\x00"),                        # frame version 2
            Out(value=b"\x01\x94"),                                # frame header cut short
            Out(value=None),                                       # null value
            record("TopicRecord", name="t", topicId=TOPIC)]
    path = write(tmp_path, batch(outs, 40))
    recs = records(path)
    assert [r.kind for r in recs] == ["metadata"] + ["undecodable"] * 5 + ["metadata"]
    assert [r.offset for r in recs] == list(range(40, 47))
    odd = recs[1:6]
    assert [r.api_key for r in odd[:3]] == [30, 3, 20]
    assert [r.version for r in odd[:3]] == [0, 7, 0]
    assert all(r.name == "UnknownRecord" and r.data is None and r.error and "\n" not in r.error for r in odd)
    assert "apiKey 30" in odd[0].error and odd[0].raw == cluster_id
    assert "no version 7" in odd[1].error and odd[1].raw[:3] == b"\x01\x03\x07"
    assert "frame version 2" in odd[2].error
    assert "frame header" in odd[3].error
    assert "null value" in odd[4].error and odd[4].raw is None
    assert recs[-1].data == {"name": "t", "topicId": TOPIC}
    # undecodable records keep their bytes: re-encoding is exact
    assert b"".join(encode_batch(b) for b in read_file(path)) == path.read_bytes()


def test_unknown_control_types_are_undecodable_control_records(tmp_path):
    outs = [Out(control_type=9, key=b"\x00\x00\x00\x09", value=b"\x00\x00\x05"),
            Out(control_type=1, key=b"\x00\x00\x00\x01", value=b"\x00\x00\x00\x00\x00\x07"),  # COMMIT marker
            Out(control_type=2, key=b"\xff\xff\x00\x02", value=b"\x00"),           # negative key version
            Out(control_type=2, key=b"\x00\x02", value=b"\x00"),                   # key too short
            control("LeaderChangeMessage", leaderId=1, voters=[{"voterId": 1}], grantingVoters=[]),
            control("SnapshotHeaderRecord", lastContainedLogTimestamp=5)]
    path = write(tmp_path, batch(outs, is_control=True))
    recs = records(path)
    assert [r.kind for r in recs] == ["undecodable"] * 4 + ["control"] * 2
    assert [r.name for r in recs[:2]] == ["ControlRecord(9)", "ControlRecord(COMMIT)"]
    assert recs[0].api_key == 9 and recs[0].raw == b"\x00\x00\x05"
    assert "unknown control record type 9" in recs[0].error
    assert "negative control key version" in recs[2].error
    assert "shorter than 4 bytes" in recs[3].error
    assert recs[4].data["leaderId"] == 1 and recs[5].data["lastContainedLogTimestamp"] == 5
    assert b"".join(encode_batch(b) for b in read_file(path)) == path.read_bytes()


def test_control_record_with_a_bad_body_is_undecodable(tmp_path):
    bad = Out(control_type=3, key=b"\x00\x00\x00\x03", value=b"\x00\x00\x01")   # header cut short
    path = write(tmp_path, batch([bad], is_control=True))
    (r,) = records(path)
    assert r.kind == "undecodable" and r.name == "SnapshotHeaderRecord" and r.raw == b"\x00\x00\x01"


def test_body_that_does_not_match_the_layout(tmp_path):
    good = record("PartitionRecord", 1, partitionId=0, topicId=TOPIC, replicas=[1], isr=[1], leader=1,
                  directories=[DIR]).encoded_value()
    outs = [Out(value=good[:-5]), Out(value=good + b"\x00"), Out(value=good)]
    path = write(tmp_path, batch(outs))
    recs = records(path)
    assert [r.kind for r in recs] == ["undecodable", "undecodable", "metadata"]
    assert all(r.name == "PartitionRecord" and r.api_key == 3 and r.version == 1 for r in recs)
    assert "garbage" in recs[1].error and recs[1].raw == good + b"\x00"
    assert recs[2].data["directories"] == [DIR]


# --------------------------------------------------------------------------- Kafka 2.8 (frame 0)

def old(api_key: int, **data) -> Out:
    return Out(spec=catalog.METADATA_2_8[api_key], version=0, data=data)


LC_2_8 = Out(spec=catalog.LEADER_CHANGE_2_8, control_type=2,
             data={"leaderId": 1, "voters": [{"voterId": 1}, {"voterId": 2}], "grantingVoters": [{"voterId": 1}]})

LOG_2_8 = [
    old(0, brokerId=1, incarnationId=DIR, brokerEpoch=10,
        endPoints=[{"name": "PLAINTEXT", "host": "b1", "port": 9092, "securityProtocol": 0}],
        features=[], rack=None),
    old(2, name="orders", topicId=TOPIC),
    old(3, partitionId=0, topicId=TOPIC, replicas=[1], isr=[1], removingReplicas=None,
        addingReplicas=None, leader=1, leaderEpoch=0, partitionEpoch=0),
    old(4, resourceType=2, resourceName="orders", name="cleanup.policy", value="compact"),
    old(5, partitionId=0, topicId=TOPIC, isr=[1], leader=1),
    old(7, id=1, epoch=10), old(8, id=1, epoch=10),
    old(14, entity=[{"entityType": "user", "entityName": None}], key="producer_byte_rate", value=10.0,
        remove=False),
    old(9, topicId=TOPIC), old(1, brokerId=1, brokerEpoch=10),
]


def test_kafka_2_8_log(tmp_path):
    w = LogWriter(0, 1, TS)
    w.batch([LC_2_8], control=True)
    w.batch(LOG_2_8)
    w.batch([LC_2_8], control=True, epoch=2)
    path = write(tmp_path, w.getvalue())
    recs = records(path)
    assert all(r.kind != "undecodable" for r in recs)
    lcs = [recs[0], recs[-1]]
    assert all(r.name == "LeaderChangeMessage" and r.layout == "2.8" for r in lcs)
    assert lcs[0].data == LC_2_8.data and "version" not in lcs[0].data
    data_recs = recs[1:-1]
    assert [r.frame for r in data_recs] == [0] * len(LOG_2_8)
    assert [r.name for r in data_recs] == [o.spec.name for o in LOG_2_8]
    assert "QuotaRecord" in [r.name for r in data_recs]
    assert data_recs[0].data["rack"] is None and "fenced" not in data_recs[0].data
    assert data_recs[2].data["removingReplicas"] is None
    assert data_recs[4].data == {"partitionId": 0, "topicId": TOPIC, "isr": [1], "leader": 1}
    assert b"".join(encode_batch(b) for b in read_file(path)) == path.read_bytes()


def test_leader_change_2_8_layout_alone(tmp_path):
    """A 2.8 LeaderChangeMessage first in a file, before any frame-0 record
    has been seen: the 3.0+ layout does not fit, the 2.8 one does."""
    path = write(tmp_path, batch([LC_2_8], is_control=True))
    (r,) = records(path)
    assert r.kind == "control" and r.layout == "2.8" and r.data == LC_2_8.data


# --------------------------------------------------------------------------- superseded layouts

SUPERSEDED = [
    (12, "3.0-3.2", {"name": "metadata.version", "minFeatureLevel": 1, "maxFeatureLevel": 3}),
    (11, "3.0-3.4", {"name": "alice", "credentialInfos": [
        {"mechanism": 1, "salt": b"salt" * 4, "saltedPassword": b"p" * 32, "iterations": 4096},
        {"mechanism": 2, "salt": b"pepper" * 3, "saltedPassword": b"q" * 64, "iterations": 8192}]}),
    (10, "3.0-3.5", {"owner": "User:alice", "renewers": ["User:bob"], "issueTimestamp": TS,
                     "maxTimestamp": TS + 7, "expirationTimestamp": TS + 3, "tokenId": "token-1"}),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("api_key, layout, data", SUPERSEDED, ids=[s[1] for s in SUPERSEDED])
def test_superseded_layouts_decode_through_the_fallback(tmp_path, api_key, layout, data, lazy):
    (old_spec,) = catalog.SUPERSEDED[api_key]
    current = record(catalog.METADATA[api_key].name)
    outs = [Out(spec=old_spec, version=0, data=data), current]
    path = write(tmp_path, batch(outs))
    old_rec, cur_rec = records(path, lazy=lazy)
    assert old_rec.data == data
    assert old_rec.kind == "metadata" and old_rec.name == catalog.METADATA[api_key].name
    assert old_rec.layout == layout and old_rec.spec is old_spec
    assert cur_rec.data is not None and cur_rec.layout is None
    assert b"".join(encode_batch(b) for b in read_file(path)) == path.read_bytes()


# --------------------------------------------------------------------------- lazy

def test_lazy_records_decode_on_access(tmp_path):
    part = record("PartitionRecord", 2, partitionId=7, topicId=TOPIC, replicas=[1, 2], isr=[1, 2],
                  leader=1, directories=[DIR, DIR])
    path = write(tmp_path, batch([record("TopicRecord", name="t", topicId=TOPIC), part]))
    topic, p = records(path, lazy=True)
    assert p.kind == "metadata" and p.name == "PartitionRecord" and p.version == 2
    assert p.raw == part.encoded_value()              # the value is at hand before decoding
    peeked = p.peek()
    assert peeked["partitionId"] == 7
    assert p.data == peeked and p.data is p.data      # decoded once, then kept
    assert topic.data == {"name": "t", "topicId": TOPIC}


def test_lazy_bad_body_becomes_undecodable_on_access_and_never_raises(tmp_path):
    good = record("PartitionRecord", 2, partitionId=7, topicId=TOPIC, replicas=[1], isr=[1],
                  leader=1, directories=[DIR]).encoded_value()
    bad = good[:20]
    path = write(tmp_path, batch([Out(value=bad), Out(value=bad), record("NoOpRecord")]))
    a, b, noop = records(path, lazy=True)            # reading does not decode bodies: no error yet
    assert a.kind == b.kind == "metadata"
    assert a.data is None                             # decoding fails: no exception
    assert a.kind == "undecodable" and a.raw == bad and "PartitionRecord" in a.error
    assert b.peek() is None and b.kind == "undecodable" and b.raw == bad
    assert noop.data == {}
    eager = records(path)
    assert [r.kind for r in eager] == ["undecodable", "undecodable", "metadata"]
    assert eager[0].error == a.error


# --------------------------------------------------------------------------- inputs

def test_missing_file_and_directory_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(read_file(tmp_path / "nope.log"))
    with pytest.raises(InputError, match="directory"):
        list(read_file(tmp_path))


@pytest.mark.parametrize("name", ["nope", "a-directory"])
def test_an_unreadable_file_is_worded_alike_by_every_reader(tmp_path, name):
    """One wording of a file that cannot be read, whichever reader meets it:
    the record reader (segments, snapshots) and the side files' reader."""
    from metashell.loader.side_files import read_meta_properties, read_quorum_state

    path = tmp_path / name
    if name == "a-directory":
        path.mkdir()
    said = []
    for read in (lambda p: list(read_file(p)), read_meta_properties, read_quorum_state):
        with pytest.raises(InputError) as info:
            read(path)
        said.append(str(info.value))
    expected = {"nope": "no such file or directory", "a-directory": "is a directory, expected a file"}
    assert said == [f"{path}: {expected[name]}"] * 3


def test_read_records_and_empty_file(tmp_path):
    w = LogWriter(3, 1, TS)
    w.records([record("NoOpRecord")] * 5, per_batch=2)
    path = write(tmp_path, w.getvalue())
    assert [r.offset for r in read_records(path)] == [3, 4, 5, 6, 7]
    empty = write(tmp_path, b"", "empty.log")
    reader = read_file(empty)
    assert list(reader) == [] and reader.summary.end_reason == "end"


# --------------------------------------------------------------------------- fuzz

@contextmanager
def time_limit(seconds: int):
    def expired(signum, frame):
        raise TimeoutError(f"reader still busy after {seconds} s")
    old_handler = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old_handler)


def read_everything(data: bytes) -> None:
    """Read ``data`` as a file every way there is: only the tool's own errors
    may come out when stopping at damage, and nothing when skipping it."""
    with tempfile.TemporaryDirectory() as d, time_limit(10):
        path = Path(d) / "00000000000000000000.log"
        path.write_bytes(data)
        for lazy in (False, True):
            try:
                for b in read_file(path, lazy=lazy):
                    for r in b.records:
                        r.data
            except (CorruptDataError, InputError) as e:
                assert "\n" not in str(e)
            reader = read_file(path, skip_damage=True, lazy=lazy)
            for b in reader:
                for r in b.records:
                    r.data
                    r.raw
            assert all(isinstance(p, CorruptDataError) for p in reader.summary.problems)


def valid_log() -> bytes:
    w = LogWriter(0, 3, TS)
    w.leader_change(1, [1, 2])
    w.batch(LOG_2_8[:3])
    w.records([record("TopicRecord", name="t", topicId=TOPIC),
               record("PartitionRecord", 2, partitionId=0, topicId=TOPIC, replicas=[1], isr=[1],
                      leader=1, directories=[DIR]),
               record("ConfigRecord", resourceType=2, resourceName="t", name="a", value="b"),
               record("PartitionChangeRecord", 1, partitionId=0, topicId=TOPIC, isr=[1, 2]),
               record("RegisterBrokerRecord", brokerId=1, incarnationId=DIR, brokerEpoch=2),
               record("NoOpRecord")], per_batch=3)
    w.batch([record("NoOpRecord"), record("UserScramCredentialRecord", name="u", mechanism=1)], codec=GZIP)
    w.batch([record("FeatureLevelRecord", name="metadata.version", featureLevel=20)], codec=ZSTD)
    return w.getvalue()


VALID = valid_log()


FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=400))
def test_fuzz_random_bytes(data):
    read_everything(data)


@FUZZ
@given(st.lists(st.tuples(st.binary(max_size=120), st.integers(-2, 12), st.integers(0, 0x7F)),
                min_size=1, max_size=4))
def test_fuzz_random_payloads_in_valid_batches(parts):
    """Batch framing and CRC are right, so the damage reaches record parsing
    (and decompression, when the codec bits are set)."""
    read_everything(b"".join(raw_batch(i * 10, payload, count, attributes=attrs)
                             for i, (payload, count, attrs) in enumerate(parts)))


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(0, len(VALID)), st.booleans())
def test_fuzz_mutated_valid_log(flips, cut, crcs):
    data = bytearray(VALID)
    for pos, value in flips:
        data[pos] = value
    data = bytes(data[:cut]) if cut < len(VALID) // 2 else bytes(data)
    read_everything(fix_crcs(data) if crcs else data)


def test_valid_fuzz_seed_reads_cleanly():
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.log"
        path.write_bytes(VALID)
        recs = records(path)
        assert all(r.kind != "undecodable" for r in recs) and len(recs) == 13


def test_big_records_with_long_varints(tmp_path):
    """Records over 8 KiB have three-byte lengths: the general path reads them."""
    big = "v" * 20_000
    outs = [record("ConfigRecord", resourceType=2, resourceName="t", name="big", value=big),
            record("NoOpRecord"),
            record("ConfigRecord", resourceType=2, resourceName="t", name="big2", value=big * 2)]
    for lazy in (False, True):
        path = write(tmp_path, batch(outs, 7) + batch(outs[::-1], 10))
        recs = records(path, lazy=lazy)
        assert [r.offset for r in recs] == [7, 8, 9, 10, 11, 12]
        assert [r.data["value"] for r in recs if r.name == "ConfigRecord"] == [big, big * 2, big * 2, big]


def test_reader_reads_a_buffer_named_by_path(tmp_path):
    """Bytes from elsewhere (a live fetch) read exactly like the same bytes in a
    file, and damage in them is reported under the name given."""
    data = batch([record("TopicRecord", name="t", topicId=TOPIC)], 0) + batch(
        [record("PartitionRecord", partitionId=0, topicId=TOPIC, replicas=[1], isr=[1],
                leader=1)], 1)
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(data)
    from_file = [(r.offset, r.name, r.data) for r in read_records(f)]
    from_buf = [(r.offset, r.name, r.data)
                for r in read_records("controller 1@[::1]:9093", buf=data)]
    assert from_buf == from_file and len(from_buf) == 2
    bad = bytearray(data)
    bad[-1] ^= 0xFF
    with pytest.raises(CorruptDataError, match=r"^controller 1@\[::1\]:9093 \(byte \d+"):
        list(read_records("controller 1@[::1]:9093", buf=bytes(bad)))
