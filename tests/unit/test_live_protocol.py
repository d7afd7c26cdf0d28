"""The observer's requests against the golden bytes of the live-protocol
reference (section 1.9: full frames, correlation id 7, client id "kms"), and
decode/encode round trips for every version the observer speaks."""

from __future__ import annotations

import uuid

import pytest

from metashell.live import protocol as p
from metashell.live.state import FetchAnswer

GOLDEN_FETCH = {
    13: "0000005e0001000d0000000700036b6d7300ffffffff000001f400000000008000000000000000ffffffff02"
        "00000000000000000000000000000001 02 00000000 00000005 0000000000000064 00000005 "
        "ffffffffffffffff 00800000 00 00 01 01 00",
    17: "0000005a000100110000000700036b6d7300000001f400000000008000000000000000ffffffff020000000000"
        "0000000000000000000001020000000000000005000000000000006400000005ffffffffffffffff00800000"
        "0000010100",
    12: "000000610001000c0000000700036b6d7300ffffffff000001f400000000008000000000000000ffffffff0213"
        "5f5f636c75737465725f6d65746164617461020000000000000005000000000000006400000005ffffffffffff"
        "ffff008000000000010100",
}
GOLDEN_FETCH_V18_HWM90 = (
    "00000064000100120000000700036b6d7300000001f400000000008000000000000000ffffffff020000000000000000"
    "0000000000000001020000000000000005000000000000006400000005ffffffffffffffff00800000010108000000"
    "000000005a00010100")
GOLDEN_FETCH_SNAPSHOT = (
    "0000004b003b00010000000900036b6d7300ffffffff0010000002135f5f636c75737465725f6d6574616461746102"
    "000000000000000500000000000003e800000004000000000000000000000000")
GOLDEN_DESCRIBE_QUORUM = "0000002a003700020000000800036b6d730002135f5f636c75737465725f6d657461646174610200000000000000"
GOLDEN_API_VERSIONS = "00000017001200040000000100036b6d7300046b6d7304302e3100"
GOLDEN_NOT_LEADER_V17 = (
    "00000063000000070000000000000000000000020000000000000000000000000000000102000000000006ffffffffff"
    "ffffffffffffffffffffffffffffffffffffff00ffffffff000101090000000200000007000001000e020000000203"
    "6332000023850000")


def _hex(text: str) -> str:
    return text.replace(" ", "")


def _fetch(version: int, **kw) -> bytes:
    fields = dict(leader_epoch=5, fetch_offset=100, last_fetched_epoch=5, high_watermark=90,
                  max_wait_ms=500, cluster_id=None)
    fields.update(kw)
    return p.encode_request(p.fetch_request(version, **fields), version, 7, "kms")


@pytest.mark.parametrize("version", sorted(GOLDEN_FETCH))
def test_fetch_matches_golden_bytes(version):
    assert _fetch(version).hex() == _hex(GOLDEN_FETCH[version])


def test_fetch_v18_sends_the_high_watermark():
    assert _fetch(18, high_watermark=90).hex() == GOLDEN_FETCH_V18_HWM90


def test_fetch_snapshot_matches_golden_bytes():
    request = p.fetch_snapshot_request(1, leader_epoch=5, end_offset=1000, epoch=4, position=0,
                                       max_bytes=1 << 20, cluster_id=None)
    assert p.encode_request(request, 1, 9, "kms").hex() == GOLDEN_FETCH_SNAPSHOT


def test_describe_quorum_matches_golden_bytes():
    assert p.encode_request(p.describe_quorum_request(2), 2, 8, "kms").hex() == GOLDEN_DESCRIBE_QUORUM


def test_api_versions_matches_golden_bytes():
    request = p.ApiVersionsRequest(client_software_name="kms", client_software_version="0.1", version=4)
    assert p.encode_request(request, 4, 1, "kms").hex() == GOLDEN_API_VERSIONS


def test_api_versions_software_name_is_valid_for_kafka():
    import re
    request = p.api_versions_request(4)
    pattern = r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?"
    assert re.fullmatch(pattern, request.client_software_name)
    assert re.fullmatch(pattern, request.client_software_version)


def test_non_leader_answer_decodes_to_leader_and_endpoint():
    frame = bytes.fromhex(GOLDEN_NOT_LEADER_V17)[4:]
    correlation, response = p.decode_response(p.FETCH, 17, frame)
    assert correlation == 7
    answer = FetchAnswer.of(response)
    assert answer.error == p.NOT_LEADER_OR_FOLLOWER and not answer.top_level
    assert answer.leader == (2, 7)
    assert answer.endpoints == {2: ("c2", 9093)}
    assert answer.snapshot is None and answer.diverging is None and answer.records is None


def _response_frame(response, version: int, correlation: int) -> bytes:
    response.with_header(correlation)
    assert response.API_VERSION == version
    return response.encode(header=True, framed=True)[4:]


@pytest.mark.parametrize("version", range(12, 19))
def test_fetch_response_round_trip_every_version(version):
    R = p.FetchResponse
    part = R.FetchableTopicResponse.PartitionData(
        partition_index=0, error_code=0, high_watermark=42, last_stable_offset=-1, log_start_offset=0,
        aborted_transactions=None, preferred_read_replica=-1, records=b"\x01\x02\x03" * 10,
        diverging_epoch=R.FetchableTopicResponse.PartitionData.EpochEndOffset(epoch=3, end_offset=17),
        current_leader=R.FetchableTopicResponse.PartitionData.LeaderIdAndEpoch(leader_id=2, leader_epoch=4),
        snapshot_id=R.FetchableTopicResponse.PartitionData.SnapshotId(end_offset=99, epoch=2),
        version=version)
    topic = (R.FetchableTopicResponse(topic_id=p.METADATA_TOPIC_ID, partitions=[part], version=version)
             if version >= 13 else
             R.FetchableTopicResponse(topic=p.METADATA_TOPIC, partitions=[part], version=version))
    extra = {"node_endpoints": [R.NodeEndpoint(node_id=2, host="h2", port=9094, rack=None)]} if version >= 16 else {}
    response = R(throttle_time_ms=0, error_code=0, session_id=0, responses=[topic], version=version, **extra)
    correlation, decoded = p.decode_response(p.FETCH, version, _response_frame(response, version, 11))
    assert correlation == 11
    answer = FetchAnswer.of(decoded)
    assert (answer.high_watermark, answer.records) == (42, b"\x01\x02\x03" * 10)
    assert answer.diverging == (3, 17) and answer.leader == (2, 4) and answer.snapshot == (99, 2)
    assert answer.endpoints == ({2: ("h2", 9094)} if version >= 16 else {})


@pytest.mark.parametrize("version", range(12, 19))
def test_fetch_request_round_trip_every_version(version):
    frame = _fetch(version, cluster_id="MkU3OEVBNTcwNTJENDM2Qg", fetch_offset=1234)
    decoded = p.FetchRequest.decode(frame, version=version, header=True, framed=True)
    part = decoded.topics[0].partitions[0]
    assert (part.fetch_offset, part.current_leader_epoch, part.last_fetched_epoch) == (1234, 5, 5)
    assert decoded.cluster_id == "MkU3OEVBNTcwNTJENDM2Qg"
    assert decoded.max_wait_ms == 500
    if version >= 13:
        assert decoded.topics[0].topic_id == uuid.UUID(int=1)
    else:
        assert decoded.topics[0].topic == "__cluster_metadata"
    if version <= 14:
        assert decoded.replica_id == -1
    if version >= 18:
        assert part.high_watermark == 90


@pytest.mark.parametrize("version", [0, 1])
def test_fetch_snapshot_round_trips(version):
    request = p.fetch_snapshot_request(version, leader_epoch=3, end_offset=500, epoch=2, position=4096,
                                       max_bytes=1 << 23, cluster_id="abc")
    frame = p.encode_request(request, version, 5)
    decoded = p.FetchSnapshotRequest.decode(frame, version=version, header=True, framed=True)
    part = decoded.topics[0].partitions[0]
    assert (part.snapshot_id.end_offset, part.snapshot_id.epoch, part.position) == (500, 2, 4096)
    assert decoded.cluster_id == "abc" and decoded.replica_id == -1

    R = p.FetchSnapshotResponse
    rpart = R.TopicSnapshot.PartitionSnapshot(
        index=0, error_code=0, snapshot_id=R.TopicSnapshot.PartitionSnapshot.SnapshotId(end_offset=500, epoch=2),
        current_leader=R.TopicSnapshot.PartitionSnapshot.LeaderIdAndEpoch(leader_id=1, leader_epoch=3),
        size=10_000, position=4096, unaligned_records=b"x" * 100, version=version)
    extra = {"node_endpoints": [R.NodeEndpoint(node_id=1, host="c1", port=9093)]} if version >= 1 else {}
    response = R(throttle_time_ms=0, error_code=0, topics=[R.TopicSnapshot(name=p.METADATA_TOPIC,
                                                                           partitions=[rpart])],
                 version=version, **extra)
    correlation, got = p.decode_response(p.FETCH_SNAPSHOT, version, _response_frame(response, version, 6))
    gpart = got.topics[0].partitions[0]
    assert correlation == 6
    assert (gpart.size, gpart.position, gpart.unaligned_records) == (10_000, 4096, b"x" * 100)
    assert (gpart.current_leader.leader_id, gpart.current_leader.leader_epoch) == (1, 3)
    if version >= 1:
        assert [(e.node_id, e.host, e.port) for e in got.node_endpoints] == [(1, "c1", 9093)]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum_round_trips(version):
    R = p.DescribeQuorumResponse
    voter = R.TopicData.PartitionData.ReplicaState(replica_id=1, log_end_offset=77, version=version)
    part = R.TopicData.PartitionData(partition_index=0, error_code=0, leader_id=1, leader_epoch=4,
                                     high_watermark=70, current_voters=[voter], observers=[], version=version)
    response = R(error_code=0, topics=[R.TopicData(topic_name=p.METADATA_TOPIC, partitions=[part])],
                 version=version)
    _, got = p.decode_response(p.DESCRIBE_QUORUM, version, _response_frame(response, version, 3))
    gpart = got.topics[0].partitions[0]
    assert (gpart.leader_id, gpart.leader_epoch, gpart.high_watermark) == (1, 4, 70)
    assert [(v.replica_id, v.log_end_offset) for v in gpart.current_voters] == [(1, 77)]
    request = p.describe_quorum_request(version)
    back = p.DescribeQuorumRequest.decode(p.encode_request(request, version, 1), version=version,
                                          header=True, framed=True)
    assert back.topics[0].topic_name == p.METADATA_TOPIC


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_round_trip_and_unsupported_version_body(version):
    R = p.ApiVersionsResponse
    keys = [R.ApiVersion(api_key=1, min_version=0, max_version=17), R.ApiVersion(api_key=59, min_version=0,
                                                                               max_version=1)]
    response = R(error_code=0, api_keys=keys, throttle_time_ms=0, version=version)
    _, got = p.decode_response(p.API_VERSIONS, version, _response_frame(response, version, 1))
    assert p.supported_ranges(got) == {1: (0, 17), 59: (0, 1)}
    # error 35 comes with the v0 body (KIP-511), whatever version was asked
    old = R(error_code=35, api_keys=[R.ApiVersion(api_key=18, min_version=0, max_version=3)], version=0)
    _, got = p.decode_response(p.API_VERSIONS, 4, _response_frame(old, 0, 1))
    assert got.error_code == 35 and p.supported_ranges(got) == {18: (0, 3)}


def test_decode_copies_the_records_once_from_a_bytearray_frame():
    version = 17
    R = p.FetchResponse
    payload = bytes(range(256)) * 64
    part = R.FetchableTopicResponse.PartitionData(partition_index=0, error_code=0, high_watermark=1,
                                                  records=payload, version=version)
    response = R(responses=[R.FetchableTopicResponse(topic_id=p.METADATA_TOPIC_ID, partitions=[part])],
                 version=version)
    frame = bytearray(_response_frame(response, version, 2))
    _, got = p.decode_response(p.FETCH, version, frame)
    records = got.responses[0].partitions[0].records
    assert type(records) is bytes and records == payload
    frame[-len(payload) - 1:] = bytes(len(payload) + 1)   # the frame buffer can be reused at once
    assert records == payload


@pytest.mark.parametrize("version", [0, 1])
def test_snapshot_chunk_reads_the_records_in_place(version):
    R = p.FetchSnapshotResponse
    P = R.TopicSnapshot.PartitionSnapshot

    def frame(error=0, records=b"", top_error=0):
        part = P(index=0, error_code=error, snapshot_id=P.SnapshotId(end_offset=500, epoch=2),
                 current_leader=P.LeaderIdAndEpoch(leader_id=3, leader_epoch=9),
                 size=1 << 20, position=4096, unaligned_records=records, version=version)
        extra = {"node_endpoints": [R.NodeEndpoint(node_id=3, host="c3", port=9093)]} if version >= 1 else {}
        response = R(throttle_time_ms=0, error_code=top_error, version=version,
                     topics=[R.TopicSnapshot(name=p.METADATA_TOPIC, partitions=[part])], **extra)
        return bytearray(_response_frame(response, version, 12))

    payload = bytes(range(256)) * 300
    buf = frame(records=payload)
    correlation, size, position, records = p.snapshot_chunk(buf)
    assert (correlation, size, position) == (12, 1 << 20, 4096)
    assert isinstance(records, memoryview) and records.obj is buf and bytes(records) == payload
    # answers with an error go to the full decoder
    assert p.snapshot_chunk(frame(error=p.NOT_LEADER_OR_FOLLOWER)) is None
    assert p.snapshot_chunk(frame(top_error=p.CLUSTER_AUTHORIZATION_FAILED)) is None


@pytest.mark.parametrize("version", [0, 1])
def test_sasl_handshake_round_trips(version):
    request = p.SaslHandshakeRequest(mechanism="SCRAM-SHA-512", version=version)
    back = p.SaslHandshakeRequest.decode(p.encode_request(request, version, 4), version=version,
                                         header=True, framed=True)
    assert back.mechanism == "SCRAM-SHA-512"
    response = p.SaslHandshakeResponse(error_code=33, mechanisms=["PLAIN"], version=version)
    correlation, got = p.decode_response(p.SASL_HANDSHAKE, version, _response_frame(response, version, 4))
    assert (correlation, got.error_code, got.mechanisms) == (4, 33, ["PLAIN"])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_authenticate_round_trips(version):
    request = p.SaslAuthenticateRequest(auth_bytes=b"n,,n=u,r=abc", version=version)
    back = p.SaslAuthenticateRequest.decode(p.encode_request(request, version, 5), version=version,
                                            header=True, framed=True)
    assert back.auth_bytes == b"n,,n=u,r=abc"
    response = p.SaslAuthenticateResponse(error_code=58, error_message="bad", auth_bytes=b"", version=version)
    correlation, got = p.decode_response(p.SASL_AUTHENTICATE, version, _response_frame(response, version, 5))
    assert (correlation, got.error_code, got.error_message) == (5, 58, "bad")
