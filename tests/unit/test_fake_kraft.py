"""The fake controller quorum (``fake_kraft``) against the reference.

Raw sockets send the golden request bytes of kraft-live-protocol.md
section 1.9 and kafka-python's encodings of other requests; the answers
are checked field by field and, where the reference gives them, byte for
byte. One test per rule of the leader's check order (section 1.3), so a
fake that drifts from Kafka fails here before it misleads the observer
tests.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
import uuid

import pytest
from kafka.net.sasl.scram import ScramClient
from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.sasl import (SaslAuthenticateRequest, SaslAuthenticateResponse,
                                 SaslHandshakeRequest, SaslHandshakeResponse)

from tests.support.fake_kraft import (FakeQuorum, Fault, Listener, METADATA_TOPIC_ID, PROFILES, noop_records,
                        split_batches)
from tests.support.fake_kraft_security import TlsCertificates
from tests.support.fake_kraft_wire import (I16, I32, Closed, encode_fetch_snapshot_request, read_compact_string,
                             read_frame, read_tags, read_uvarint)
from metashell.errors import CorruptDataError
from metashell.kraft.batch import BatchScanner
from metashell.kraft.writer import snapshot_bytes
from tests.support.records import config, noop

GOLDEN = {
    "fetch13": "0000005e0001000d0000000700036b6d7300ffffffff000001f400000000008000000000000000ffffffff02"
               "00000000000000000000000000000001020000000000000005000000000000006400000005ffffffffffffffff"
               "008000000000010100",
    "fetch17": "0000005a000100110000000700036b6d7300000001f400000000008000000000000000ffffffff0200000000"
               "000000000000000000000001020000000000000005000000000000006400000005ffffffffffffffff00800000"
               "0000010100",
    "fetch18": "00000064000100120000000700036b6d7300000001f400000000008000000000000000ffffffff0200000000"
               "000000000000000000000001020000000000000005000000000000006400000005ffffffffffffffff00800000"
               "010108000000000000005a00010100",
    "fetch12": "000000610001000c0000000700036b6d7300ffffffff000001f400000000008000000000000000ffffffff02"
               "135f5f636c75737465725f6d65746164617461020000000000000005000000000000006400000005ffffffff"
               "ffffffff008000000000010100",
    "fetch_snapshot1": "0000004b003b00010000000900036b6d7300ffffffff0010000002135f5f636c75737465725f6d6574"
                       "616461746102000000000000000500000000000003e800000004000000000000000000000000",
    "describe_quorum2": "0000002a003700020000000800036b6d730002135f5f636c75737465725f6d657461646174610200"
                        "000000000000",
    "api_versions4": "00000017001200040000000100036b6d7300046b6d7304302e3100",
    "fetch_response17_not_leader":
        "00000063000000070000000000000000000000020000000000000000000000000000000102000000000006ffff"
        "ffffffffffffffffffffffffffffffffffffffffffff00ffffffff000101090000000200000007000001000e0200"
        "000002036332000023850000",
}


OPEN: list = []     # Raw connections of the running test, closed by the fixture


@pytest.fixture
def make_quorum():
    made = []

    def make(*args, **kw):
        q = FakeQuorum(*args, **kw)
        made.append(q)
        return q

    yield make
    while OPEN:
        OPEN.pop().close()
    for q in made:
        q.stop()
        assert not [e for n in q.nodes.values() for e in n.errors]
    assert not [t for t in threading.enumerate() if t.name.startswith("fake-kraft")]


class Raw:
    """A bare client connection: frames out, frames in."""

    def __init__(self, node, *, tls: ssl.SSLContext | None = None, timeout: float = 5):
        sock = socket.create_connection(("127.0.0.1", node.port), timeout=timeout)
        self.sock = sock
        if tls:
            try:
                self.sock = tls.wrap_socket(sock, server_hostname="127.0.0.1")
            except BaseException:
                sock.close()
                raise
        OPEN.append(self.sock)
        self.corr = 0

    def close(self):
        self.sock.close()

    def send_raw(self, data: bytes) -> bytes:
        self.sock.sendall(data)
        return read_frame(self.sock)

    def call(self, request, version: int, response_class):
        self.corr += 1
        request.with_header(self.corr, "kms")
        raw = self.send_raw(request.encode(version=version, header=True, framed=True))
        resp = response_class.decode(raw, version=version, header=True)
        assert resp.header.correlation_id == self.corr
        return resp

    def closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except OSError:
            return True


def fetch_request(version, *, epoch=1, offset=0, last_epoch=0, max_wait=0, cluster_id=None,
                  topic_id=METADATA_TOPIC_ID, partition=0, hwm=None):
    P = FetchRequest.FetchTopic.FetchPartition
    part = P(partition=partition, current_leader_epoch=epoch, fetch_offset=offset,
             last_fetched_epoch=last_epoch, log_start_offset=-1, partition_max_bytes=8 << 20)
    if hwm is not None:
        part.high_watermark = hwm
    topic = FetchRequest.FetchTopic(partitions=[part])
    if version >= 13:
        topic.topic_id = topic_id
    else:
        topic.topic = "__cluster_metadata"
    kw = {"replica_id": -1} if version <= 14 else {}
    return FetchRequest(version=version, max_wait_ms=max_wait, min_bytes=0, max_bytes=8 << 20,
                        isolation_level=0, session_id=0, session_epoch=-1, topics=[topic],
                        forgotten_topics_data=[], rack_id="", cluster_id=cluster_id, **kw)


def fetch(conn, version=17, **kw):
    resp = conn.call(fetch_request(version, **kw), version, FetchResponse)
    part = resp.responses[0].partitions[0] if resp.responses else None
    return resp, part


def a_log(q, batches=3):
    for i in range(batches):
        q.append([noop()] * (i + 1))
    return q


# ------------------------------------------------------------------ golden bytes (section 1.9)

@pytest.mark.parametrize("name,profile,version", [("fetch12", "3.0", 12), ("fetch13", "3.3", 13),
                                                  ("fetch17", "3.9", 17), ("fetch18", "4.1", 18)])
def test_golden_fetch_requests_are_understood(make_quorum, name, profile, version):
    # the golden request asks for offset 100 with epoch 5; the leader is at epoch 5
    q = make_quorum(1, profile=profile, epoch=5).start()
    for _ in range(120):
        q.append([noop()], epoch=5)
    q.commit()
    conn = Raw(q.nodes[1])
    raw = conn.send_raw(bytes.fromhex(GOLDEN[name]))
    resp = FetchResponse.decode(raw, version=version, header=True)
    assert resp.header.correlation_id == 7 and resp.error_code == 0
    part = resp.responses[0].partitions[0]
    assert part.error_code == 0 and part.high_watermark == 120
    batches = split_batches(bytes(part.records))
    assert int.from_bytes(batches[0][:8], "big") == 100 and len(batches) == 20
    assert (resp.responses[0].topic_id == METADATA_TOPIC_ID if version >= 13
            else resp.responses[0].topic == "__cluster_metadata")
    if version <= 14:
        assert q.nodes[1].fetches[-1].replica_id == -1


def test_golden_non_leader_fetch_response_bytes(make_quorum):
    q = make_quorum(2, profile="3.9", epoch=7, leader_id=2).start()
    q.nodes[2].advertised = ("c2", 9093)
    conn = Raw(q.nodes[1])
    req = fetch_request(17, epoch=7, offset=100, last_epoch=5, max_wait=500)
    req.with_header(7, "kms")
    raw = conn.send_raw(req.encode(version=17, header=True, framed=True))
    assert (len(raw).to_bytes(4, "big") + raw).hex() == GOLDEN["fetch_response17_not_leader"]


def test_golden_api_versions_request(make_quorum):
    q = make_quorum(1, profile="4.1").start()
    raw = Raw(q.nodes[1]).send_raw(bytes.fromhex(GOLDEN["api_versions4"]))
    resp = ApiVersionsResponse.decode(raw, version=4, header=True)
    assert resp.header.correlation_id == 1 and resp.error_code == 0
    assert {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys} == PROFILES["4.1"]
    # response header v0 even for v4: the body starts right after the correlation id
    assert raw[4:6] == b"\0\0"


def test_golden_describe_quorum_request(make_quorum):
    q = make_quorum(3, profile="4.1", leader_id=2).start()
    raw = Raw(q.nodes[2]).send_raw(bytes.fromhex(GOLDEN["describe_quorum2"]))
    resp = DescribeQuorumResponse.decode(raw, version=2, header=True)
    assert resp.header.correlation_id == 8
    part = resp.topics[0].partitions[0]
    assert part.error_code == 0 and part.leader_id == 2 and part.leader_epoch == 1
    assert [v.replica_id for v in part.current_voters] == [1, 2, 3]
    assert [n.listeners[0].port for n in resp.nodes] == [q.nodes[i].port for i in (1, 2, 3)]


def test_golden_fetch_snapshot_request(make_quorum):
    assert encode_fetch_snapshot_request(1, 9, "kms", snapshot_id=(1000, 4), position=0,
                                         leader_epoch=5).hex() == GOLDEN["fetch_snapshot1"]
    q = make_quorum(1, profile="4.1", epoch=5).start()
    snap = snapshot_bytes([noop()], epoch=4)
    q.truncate_to_snapshot(snap, 1000, 4)
    raw = Raw(q.nodes[1]).send_raw(bytes.fromhex(GOLDEN["fetch_snapshot1"]))
    answer = decode_snapshot_answer(raw)
    assert answer["error"] == 0 and answer["size"] == len(snap) and answer["records"] == snap


def decode_snapshot_answer(raw: bytes) -> dict:
    """FetchSnapshotResponse v1 (section 1.8), read independently of the fake's encoder."""
    pos = 4 + 1 + 4                      # correlation id, header tags, throttle
    (top_error,) = I16.unpack_from(raw, pos)
    pos += 2
    n, pos = read_uvarint(raw, pos)
    if n <= 1:
        return {"top_error": top_error}
    name, pos = read_compact_string(raw, pos)
    _n, pos = read_uvarint(raw, pos)
    index, error = I32.unpack_from(raw, pos)[0], I16.unpack_from(raw, pos + 4)[0]
    end, epoch = int.from_bytes(raw[pos + 6:pos + 14], "big", signed=True), I32.unpack_from(raw, pos + 14)[0]
    pos += 18 + 1
    size = int.from_bytes(raw[pos:pos + 8], "big", signed=True)
    position = int.from_bytes(raw[pos + 8:pos + 16], "big", signed=True)
    pos += 16
    length, pos = read_uvarint(raw, pos)
    records = raw[pos:pos + length - 1]
    ptags, _ = read_tags(raw, pos + length - 1)
    leader = (I32.unpack_from(ptags[0], 0)[0], I32.unpack_from(ptags[0], 4)[0]) if 0 in ptags else None
    return {"top_error": top_error, "name": name, "index": index, "error": error,
            "snapshot_id": (end, epoch), "size": size, "position": position, "records": records,
            "leader": leader}


# ------------------------------------------------------------------ ApiVersions and versions

def test_too_new_api_versions_gets_error_35_with_the_v0_body(make_quorum):
    q = make_quorum(1, profile="3.7").start()     # ApiVersions 0-3
    conn = Raw(q.nodes[1])
    req = ApiVersionsRequest(version=4, client_software_name="kms", client_software_version="0.1")
    req.with_header(3, "kms")
    raw = conn.send_raw(req.encode(version=4, header=True, framed=True))
    assert raw == bytes.fromhex("00000003" "0023" "00000001" "0012" "0000" "0003")
    resp = ApiVersionsResponse.decode(raw, version=4, header=True)
    assert resp.error_code == 35 and resp.api_keys[0].max_version == 3


def test_unsupported_request_version_closes_the_connection(make_quorum):
    q = make_quorum(1, profile="3.7").start()     # Fetch up to 16
    conn = Raw(q.nodes[1])
    req = fetch_request(17)
    req.with_header(1, "kms")
    conn.sock.sendall(req.encode(version=17, header=True, framed=True))
    assert conn.closed_by_peer()


def test_broker_listener_profile_has_no_fetch_snapshot(make_quorum):
    q = make_quorum(1, profile="broker").start()
    resp = Raw(q.nodes[1]).call(ApiVersionsRequest(version=3, client_software_name="kms",
                                                   client_software_version="1"), 3,
                                ApiVersionsResponse)
    keys = {k.api_key for k in resp.api_keys}
    assert 1 in keys and 59 not in keys and 52 not in keys


def test_invalid_client_software_name_is_invalid_request(make_quorum):
    q = make_quorum(1).start()
    req = ApiVersionsRequest(version=3, client_software_name="bad name!", client_software_version="1")
    req.with_header(4, "kms")
    raw = Raw(q.nodes[1]).send_raw(req.encode(version=3, header=True, framed=True))
    assert I32.unpack_from(raw, 0)[0] == 4 and I16.unpack_from(raw, 4)[0] == 42


def test_requests_on_one_connection_are_served_in_order(make_quorum):
    q = make_quorum(1).start()
    conn = Raw(q.nodes[1])
    frames = b""
    for corr in (11, 12):
        req = fetch_request(17, max_wait=300 if corr == 11 else 0)
        req.with_header(corr, "kms")
        frames += req.encode(version=17, header=True, framed=True)
    start = time.monotonic()
    conn.sock.sendall(frames)     # pipelined: the second waits for the parked first (section 1.1)
    first, second = read_frame(conn.sock), read_frame(conn.sock)
    assert int.from_bytes(first[:4], "big") == 11 and int.from_bytes(second[:4], "big") == 12
    assert time.monotonic() - start >= 0.25


# ------------------------------------------------------------------ Fetch check order (section 1.3)

def test_check_1_cluster_id_comes_first(make_quorum):
    q = make_quorum(1).start()
    resp, part = fetch(Raw(q.nodes[1]), cluster_id="wrong", topic_id=uuid.UUID(int=9), offset=-5)
    assert resp.error_code == 104 and part is None


def test_check_2_topic_id_before_sanity(make_quorum):
    q = make_quorum(1).start()
    resp, part = fetch(Raw(q.nodes[1]), topic_id=uuid.UUID(int=9), offset=-5)
    assert resp.error_code == 42 and part is None


def test_check_2_v12_by_name_and_v13_needs_the_topic_id(make_quorum):
    q = make_quorum(1, profile="3.3").start()
    conn = Raw(q.nodes[1])
    # a v12 request to a 3.1+ controller: the topic id defaults to zero -> INVALID_REQUEST
    resp, _ = fetch(conn, 13, topic_id=uuid.UUID(int=0))
    assert resp.error_code == 42
    resp, part = fetch(conn, 12)
    assert resp.error_code == 0 and part.error_code == 0


def test_check_2_partition_must_be_zero(make_quorum):
    q = make_quorum(1).start()
    resp, part = fetch(Raw(q.nodes[1]), partition=1)
    assert resp.error_code == 42 and part is None


@pytest.mark.parametrize("kw", [{"offset": -1}, {"last_epoch": -1}, {"last_epoch": 2, "epoch": 1},
                                {"max_wait": -1}])
def test_check_3_sanity_before_leadership(make_quorum, kw):
    q = make_quorum(2, leader_id=2).start()        # node 1 is not the leader: sanity still first
    resp, part = fetch(Raw(q.nodes[1]), **kw)
    assert resp.error_code == 0 and part.error_code == 42


@pytest.mark.parametrize("request_epoch,error", [(2, 74), (4, 75), (3, 6)])
def test_check_4_leader_only_validation(make_quorum, request_epoch, error):
    q = make_quorum(2, leader_id=2, epoch=3).start()
    resp, part = fetch(Raw(q.nodes[1]), epoch=request_epoch)
    assert part.error_code == error
    assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (2, 3)
    assert part.records is None


def test_check_4_leader_shutting_down(make_quorum):
    q = make_quorum(1).start()
    q.nodes[1].resigning = True
    _resp, part = fetch(Raw(q.nodes[1]))
    assert part.error_code == 8


def test_election_in_progress_answers_leader_minus_one(make_quorum):
    q = make_quorum(2).start()
    q.begin_election()
    _resp, part = fetch(Raw(q.nodes[2]), epoch=1)
    assert part.error_code == 74 and part.current_leader.leader_id == -1
    assert part.current_leader.leader_epoch == 2


def test_stale_node_answers_unknown_leader_epoch(make_quorum):
    q = make_quorum(3, epoch=5).start()
    q.nodes[3].stale_view = (4, 2)
    _resp, part = fetch(Raw(q.nodes[3]), epoch=5)
    assert part.error_code == 75


@pytest.mark.parametrize("profile,version,endpoints", [("3.7", 16, 0), ("3.9", 16, 0), ("3.9", 17, 1),
                                                       ("4.1", 18, 1)])
def test_node_endpoints_only_from_v17(make_quorum, profile, version, endpoints):
    q = make_quorum(2, profile=profile, leader_id=2).start()
    resp, part = fetch(Raw(q.nodes[1]), version)
    assert part.error_code == 6
    assert [(e.node_id, e.port) for e in (resp.node_endpoints or [])] == [(2, q.nodes[2].port)] * endpoints


def test_authorization_denied_is_top_level_31_without_partitions(make_quorum):
    q = make_quorum(1).start()
    q.nodes[1].deny_cluster_action = True
    resp, part = fetch(Raw(q.nodes[1]))
    assert resp.error_code == 31 and part is None


# ------------------------------------------------------------------ validateOffsetAndEpoch

def test_records_from_the_offset_uncommitted_included_with_the_hwm(make_quorum):
    q = a_log(make_quorum(1)).start()            # offsets 0 | 1-2 | 3-5
    q.commit(3)
    _resp, part = fetch(Raw(q.nodes[1]), offset=1, last_epoch=1)
    assert part.high_watermark == 3
    assert [int.from_bytes(b[:8], "big") for b in split_batches(bytes(part.records))] == [1, 3]


def test_a_batch_holding_the_offset_comes_whole(make_quorum):
    q = a_log(make_quorum(1)).start()
    _resp, part = fetch(Raw(q.nodes[1]), offset=4, last_epoch=1)
    assert int.from_bytes(bytes(part.records)[:8], "big") == 3


def test_8_mib_read_cuts_the_last_batch(make_quorum):
    q = make_quorum(1).start()
    big = [config(2, "t", "k", "v" * 1000)] * 1000
    for _ in range(10):
        q.append(big)
    _resp, part = fetch(Raw(q.nodes[1]))
    records = bytes(part.records)
    assert len(records) == 8 * 1024 * 1024
    whole = split_batches(records)
    assert sum(len(b) for b in whole) < len(records)      # a torn batch at the end


def test_snapshot_id_when_behind_the_log_start(make_quorum):
    q = a_log(make_quorum(1, profile="3.3")).start()
    q.truncate_to_snapshot(snapshot_bytes([noop()]), 3, 1)
    _resp, part = fetch(Raw(q.nodes[1]), 13, offset=1, last_epoch=1)
    assert (part.snapshot_id.end_offset, part.snapshot_id.epoch) == (3, 1) and not part.records


def test_snapshot_id_at_the_log_start_with_another_epoch(make_quorum):
    q = a_log(make_quorum(1, epoch=2), 3).start()
    q.truncate_to_snapshot(snapshot_bytes([noop()]), 3, 1)
    _resp, part = fetch(Raw(q.nodes[1]), offset=3, last_epoch=0, epoch=2)
    assert part.snapshot_id.end_offset == 3


def test_fetch_offset_zero_shortcut_from_3_7(make_quorum):
    for profile, shortcut in (("3.3", False), ("3.7", True)):
        q = a_log(make_quorum(1, profile=profile)).start()
        q.log.snapshots[(3, 1)] = snapshot_bytes([noop()])   # log still from 0
        _resp, part = fetch(Raw(q.nodes[1]), 13)
        assert (part.snapshot_id is not None) == shortcut
        assert bool(part.records) != shortcut


def test_bootstrap_snapshot_is_not_a_shortcut_from_3_9(make_quorum):
    q = a_log(make_quorum(1, profile="3.9")).start()
    q.log.snapshots[(0, 0)] = snapshot_bytes([], epoch=0)
    _resp, part = fetch(Raw(q.nodes[1]))
    assert part.snapshot_id is None and part.records


def test_diverging_epoch_after_failover(make_quorum):
    q = make_quorum(2).start()
    q.append(noop_records(2))
    q.commit()
    q.append(noop_records(3))                    # uncommitted tail 2-4 at epoch 1
    q.failover(2, truncate_to=2, tail=[noop_records(1)], hwm=-1)
    _resp, part = fetch(Raw(q.nodes[2]), epoch=2, offset=5, last_epoch=1)
    assert (part.diverging_epoch.epoch, part.diverging_epoch.end_offset) == (1, 2)
    assert not part.records


# ------------------------------------------------------------------ long poll

def test_long_poll_waits_for_max_wait_then_answers_empty(make_quorum):
    q = a_log(make_quorum(1)).start()
    start = time.monotonic()
    _resp, part = fetch(Raw(q.nodes[1]), offset=6, last_epoch=1, max_wait=300)
    assert 0.25 <= time.monotonic() - start < 2 and part.records == b""


def test_long_poll_is_woken_by_an_append(make_quorum):
    q = a_log(make_quorum(1)).start()
    threading.Timer(0.2, lambda: q.append(noop_records(1))).start()
    start = time.monotonic()
    _resp, part = fetch(Raw(q.nodes[1]), offset=6, last_epoch=1, max_wait=3000)
    assert time.monotonic() - start < 2
    assert int.from_bytes(bytes(part.records)[:8], "big") == 6


@pytest.mark.parametrize("version,early", [(17, False), (18, True)])
def test_hwm_advance_wakes_only_v18(make_quorum, version, early):
    q = a_log(make_quorum(1)).start()
    q.commit(3)
    threading.Timer(0.2, lambda: q.commit()).start()
    start = time.monotonic()
    kw = {"hwm": 3} if version == 18 else {}
    _resp, part = fetch(Raw(q.nodes[1]), version, offset=6, last_epoch=1, max_wait=1500, **kw)
    assert part.high_watermark == 6
    assert (time.monotonic() - start < 1.0) == early


def test_v18_requester_behind_the_hwm_is_answered_at_once(make_quorum):
    q = a_log(make_quorum(1)).start()
    q.commit()
    start = time.monotonic()
    _resp, part = fetch(Raw(q.nodes[1]), 18, offset=6, last_epoch=1, max_wait=3000, hwm=2)
    assert time.monotonic() - start < 1 and part.high_watermark == 6


def test_parked_fetch_completes_not_leader_on_failover(make_quorum):
    q = a_log(make_quorum(2)).start()
    threading.Timer(0.2, lambda: q.failover(2)).start()
    _resp, part = fetch(Raw(q.nodes[1]), offset=6, last_epoch=1, max_wait=3000)
    assert part.error_code == 6
    assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (2, 2)


# ------------------------------------------------------------------ FetchSnapshot (section 1.5)

def snapshot_call(conn, version=1, **kw):
    kw.setdefault("leader_epoch", 1)
    conn.corr += 1
    return decode_snapshot_answer(conn.send_raw(encode_fetch_snapshot_request(version, conn.corr,
                                                                              "kms", **kw)))


def test_fetch_snapshot_in_chunks(make_quorum):
    q = make_quorum(1).start()
    snap = snapshot_bytes([noop()] * 100)
    q.truncate_to_snapshot(snap, 100, 1)
    conn, got = Raw(q.nodes[1]), b""
    while len(got) < len(snap):
        a = snapshot_call(conn, snapshot_id=(100, 1), position=len(got), max_bytes=1000)
        assert a["error"] == 0 and a["size"] == len(snap) and a["position"] == len(got)
        assert len(a["records"]) == min(1000, len(snap) - len(got))
        got += a["records"]
    assert got == snap


@pytest.mark.parametrize("kw,error", [({"snapshot_id": (7, 1), "position": 0}, 98),
                                      ({"snapshot_id": (100, 1), "position": -1}, 99),
                                      ({"snapshot_id": (100, 1), "position": 10_000}, 99),
                                      ({"snapshot_id": (100, 1), "position": 0, "leader_epoch": 0}, 74)])
def test_fetch_snapshot_errors(make_quorum, kw, error):
    q = make_quorum(1).start()
    q.truncate_to_snapshot(snapshot_bytes([noop()]), 100, 1)
    a = snapshot_call(Raw(q.nodes[1]), **kw)
    assert a["error"] == error and a["leader"] == (1, 1)


def test_fetch_snapshot_is_leader_only(make_quorum):
    q = make_quorum(2, leader_id=2).start()
    q.truncate_to_snapshot(snapshot_bytes([noop()]), 100, 1)
    a = snapshot_call(Raw(q.nodes[1]), snapshot_id=(100, 1), position=0)
    assert a["error"] == 6 and a["leader"] == (2, 1) and a["records"] == b""


def test_fetch_snapshot_wrong_cluster(make_quorum):
    q = make_quorum(1).start()
    a = snapshot_call(Raw(q.nodes[1]), snapshot_id=(100, 1), position=0, cluster_id="nope")
    assert a["top_error"] == 104


# ------------------------------------------------------------------ DescribeQuorum

def describe_request():
    T = DescribeQuorumRequest.TopicData
    return DescribeQuorumRequest(topics=[T(topic_name="__cluster_metadata",
                                           partitions=[T.PartitionData(partition_index=0)])])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum_on_the_leader(make_quorum, version):
    q = a_log(make_quorum(3, profile="4.1")).start()
    q.commit(3)
    resp = Raw(q.nodes[1]).call(describe_request(), version, DescribeQuorumResponse)
    part = resp.topics[0].partitions[0]
    assert (part.leader_id, part.high_watermark) == (1, 3)
    assert [(v.replica_id, v.log_end_offset) for v in part.current_voters] == [(1, 6), (2, 3), (3, 3)]
    assert [o.replica_id for o in part.observers] == [100]


def test_describe_quorum_on_a_follower(make_quorum):
    q = make_quorum(2).start()
    resp = Raw(q.nodes[2]).call(describe_request(), 2, DescribeQuorumResponse)
    assert resp.topics[0].partitions[0].error_code == 6


# ------------------------------------------------------------------ SASL and TLS

def sasl_listener(protocol="SASL_PLAINTEXT", tls=None):
    return Listener(protocol=protocol, users={"alice": "s3cret"}, tls=tls)


def handshake(conn, mechanism):
    resp = conn.call(SaslHandshakeRequest(mechanism=mechanism), 1, SaslHandshakeResponse)
    return resp.error_code


def authenticate(conn, token: bytes):
    return conn.call(SaslAuthenticateRequest(auth_bytes=token), 2, SaslAuthenticateResponse)


@pytest.mark.parametrize("password,ok", [("s3cret", True), ("wrong", False)])
def test_sasl_plain(make_quorum, password, ok):
    q = make_quorum(1, listener=sasl_listener()).start()
    conn = Raw(q.nodes[1])
    assert handshake(conn, "PLAIN") == 0
    resp = authenticate(conn, b"\0alice\0" + password.encode())
    assert (resp.error_code == 0) == ok
    if ok:
        assert fetch(conn)[1].error_code == 0
    else:
        assert resp.error_code == 58
        assert conn.closed_by_peer()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("password,ok", [("s3cret", True), ("wrong", False)])
def test_sasl_scram_against_kafka_pythons_client(make_quorum, mechanism, password, ok):
    q = make_quorum(1, listener=sasl_listener()).start()
    conn = Raw(q.nodes[1])
    assert handshake(conn, mechanism) == 0
    client = ScramClient("alice", password, mechanism)
    first = authenticate(conn, client.first_message())
    assert first.error_code == 0
    client.process_server_first_message(bytes(first.auth_bytes))
    final = authenticate(conn, client.final_message())
    assert (final.error_code == 0) == ok
    if ok:
        client.process_server_final_message(bytes(final.auth_bytes))   # checks the server's proof
        assert fetch(conn)[1].error_code == 0
    else:
        assert final.error_code == 58 and mechanism in final.error_message


def test_sasl_unsupported_mechanism_and_requests_before_auth(make_quorum):
    q = make_quorum(1, listener=sasl_listener()).start()
    conn = Raw(q.nodes[1])
    assert handshake(conn, "GSSAPI") == 33
    req = fetch_request(17)
    req.with_header(5, "kms")
    conn.sock.sendall(req.encode(version=17, header=True, framed=True))
    assert conn.closed_by_peer()


def test_sasl_session_expiry_closes_at_the_next_request(make_quorum):
    listener = Listener("SASL_PLAINTEXT", users={"alice": "s3cret"}, session_lifetime_ms=200)
    q = make_quorum(1, listener=listener).start()
    conn = Raw(q.nodes[1])
    assert handshake(conn, "PLAIN") == 0
    assert authenticate(conn, b"\0alice\0s3cret").session_lifetime_ms == 200
    assert fetch(conn)[1].error_code == 0
    time.sleep(0.3)                  # the behaviour: the 200 ms session lifetime passes
    with pytest.raises((Closed, OSError)):
        fetch(conn)


def test_tls_with_test_certificates(make_quorum, tmp_path):
    certs = TlsCertificates(str(tmp_path))
    q = make_quorum(1, listener=Listener(protocol="SSL", tls=certs.server_context())).start()
    ctx = ssl.create_default_context(cafile=certs.ca_pem)
    conn = Raw(q.nodes[1], tls=ctx)
    assert fetch(conn)[1].error_code == 0
    with pytest.raises(ssl.SSLCertVerificationError):
        Raw(q.nodes[1], tls=ssl.create_default_context())       # not trusted


def test_tls_client_certificate_required(make_quorum, tmp_path):
    certs = TlsCertificates(str(tmp_path))
    q = make_quorum(1, listener=Listener(protocol="SSL", tls=certs.server_context(True))).start()
    ctx = ssl.create_default_context(cafile=certs.ca_pem)
    ctx.load_cert_chain(certs.client_cert_pem, certs.client_key_pem)
    assert fetch(Raw(q.nodes[1], tls=ctx))[1].error_code == 0
    bare = Raw(q.nodes[1], tls=ssl.create_default_context(cafile=certs.ca_pem))
    with pytest.raises((ssl.SSLError, OSError, Closed)):
        fetch(bare)


# ------------------------------------------------------------------ fault knobs

@pytest.mark.parametrize("action", ["drop-before", "drop-after"])
def test_drop_faults_close_without_an_answer(make_quorum, action):
    q = make_quorum(1).start()
    q.nodes[1].faults.append(Fault(action, api_key=1))
    conn = Raw(q.nodes[1])
    with pytest.raises((Closed, OSError)):
        fetch(conn)
    assert fetch(Raw(q.nodes[1]))[1].error_code == 0     # one fault, then normal again


def test_delay_fault(make_quorum):
    q = make_quorum(1).start()
    q.nodes[1].faults.append(Fault("delay", api_key=1, seconds=0.5))
    start = time.monotonic()
    fetch(Raw(q.nodes[1]))
    assert time.monotonic() - start >= 0.45


def test_drop_connections_during_a_long_poll(make_quorum):
    q = a_log(make_quorum(1)).start()
    conn = Raw(q.nodes[1])
    threading.Timer(0.2, q.nodes[1].drop_connections).start()
    with pytest.raises((Closed, OSError)):
        fetch(conn, offset=6, last_epoch=1, max_wait=3000)


def test_corrupt_fault_breaks_the_crc_only(make_quorum):
    q = a_log(make_quorum(1)).start()
    q.nodes[1].faults.append(Fault("corrupt", api_key=1))
    _resp, part = fetch(Raw(q.nodes[1]))
    data = bytes(part.records)
    assert len(data) == sum(len(b.data) for b in q.log.batches)
    with pytest.raises(CorruptDataError, match="CRC"):
        for _ in BatchScanner(data, "wire"):
            pass


def test_stop_leaves_no_threads_and_a_restart_keeps_the_port(make_quorum):
    q = make_quorum(1).start()
    port = q.nodes[1].port
    q.nodes[1].stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1)
    q.nodes[1].start()
    assert q.nodes[1].port == port and fetch(Raw(q.nodes[1]))[1].error_code == 0


def test_from_logdir_refuses_a_log_that_starts_without_a_snapshot(tmp_path):
    from metashell.kraft.writer import LogWriter
    w = LogWriter(50, 1)
    w.batch([noop()])
    w.write(tmp_path / "00000000000000000050.log")
    with pytest.raises(ValueError, match="no snapshot"):
        FakeQuorum.from_logdir(tmp_path)


def test_fetch_right_after_a_snapshot_and_a_new_epoch_is_valid(make_quorum):
    # endOffsetFor(an epoch older than every entry) = (that epoch, start of the first entry)
    q = make_quorum(1).start()
    q.truncate_to_snapshot(snapshot_bytes([noop()]), 10, 1)
    q.failover(1)                                  # epoch 2 starts at 10 with a LeaderChange
    _resp, part = fetch(Raw(q.nodes[1]), epoch=2, offset=10, last_epoch=1)
    assert part.diverging_epoch is None and part.snapshot_id is None
    assert int.from_bytes(bytes(part.records)[:8], "big") == 10


def test_fetch_with_an_epoch_the_leader_never_had_diverges(make_quorum):
    q = make_quorum(1, epoch=1).start()
    q.append(noop_records(2))                      # epoch 1: 0-1
    q.failover(1)                                  # epoch 2: 2 (LeaderChange)
    q.failover(1)                                  # epoch 3: 3
    _resp, part = fetch(Raw(q.nodes[1]), epoch=3, offset=3, last_epoch=2)
    assert part.diverging_epoch is None
    _resp, part = fetch(Raw(q.nodes[1]), epoch=3, offset=5, last_epoch=2)
    assert (part.diverging_epoch.epoch, part.diverging_epoch.end_offset) == (2, 3)
