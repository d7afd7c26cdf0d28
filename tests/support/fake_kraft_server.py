"""The fake controller's request handling: one :class:`Connection` per
client socket, requests served one at a time (kraft-live-protocol.md
section 1.1), each answered as Kafka's controller answers it: ApiVersions
with the node's release profile, SASL, Fetch in ``KafkaRaftClient``'s check
order, FetchSnapshot, DescribeQuorum. Messages go through kafka-python
3.x's JSON-generated classes (section 3.2), FetchSnapshot through
``fake_kraft_wire``; the observer under test shares none of this code."""

from __future__ import annotations

import re
import socket
import ssl
import struct
import time
import uuid
from dataclasses import dataclass, field

from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse
from kafka.protocol.admin.cluster import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.sasl import (SaslAuthenticateRequest, SaslAuthenticateResponse,
                                 SaslHandshakeRequest, SaslHandshakeResponse)

from tests.support.fake_kraft_log import corrupt_first_batch
from tests.support.fake_kraft_security import MECHANISMS, AuthFailed, sasl_server
from tests.support.fake_kraft_wire import (HEADER, decode_fetch_snapshot_request,
                             encode_fetch_snapshot_response, frame, parse_header, read_frame)

METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = uuid.UUID(int=1)          # Uuid.METADATA_TOPIC_ID (section 0)

# error codes (sections 1.3, 1.5, 4.3)
NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_LEADER_OR_FOLLOWER = 6
BROKER_NOT_AVAILABLE = 8
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
UNSUPPORTED_VERSION = 35
INVALID_REQUEST = 42
SASL_AUTHENTICATION_FAILED = 58
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
SNAPSHOT_NOT_FOUND = 98
POSITION_OUT_OF_RANGE = 99
UNKNOWN_TOPIC_ID = 100
INCONSISTENT_CLUSTER_ID = 104
UNSUPPORTED_ENDPOINT_TYPE = 120

API_VERSIONS, FETCH, FETCH_SNAPSHOT, DESCRIBE_QUORUM = 18, 1, 59, 55
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
VOTE, BEGIN_EPOCH, END_EPOCH, DESCRIBE_CLUSTER = 52, 53, 54, 60


def _controller_profile(api_versions, fetch, fetch_snapshot, describe_quorum, describe_cluster,
                        vote, epochs):
    profile = {API_VERSIONS: api_versions, FETCH: fetch, FETCH_SNAPSHOT: fetch_snapshot,
               DESCRIBE_QUORUM: describe_quorum, VOTE: vote, BEGIN_EPOCH: epochs,
               END_EPOCH: epochs, SASL_HANDSHAKE: (0, 1), SASL_AUTHENTICATE: (0, 2)}
    if describe_cluster:
        profile[DESCRIBE_CLUSTER] = describe_cluster
    return profile


# API version ranges a controller listener advertises, by release (section 1.1 table)
PROFILES: dict[str, dict[int, tuple[int, int]]] = {
    "3.0": _controller_profile((0, 3), (0, 12), (0, 0), (0, 0), None, (0, 0), (0, 0)),
    "3.3": _controller_profile((0, 3), (0, 13), (0, 0), (0, 1), None, (0, 0), (0, 0)),
    "3.7": _controller_profile((0, 3), (0, 16), (0, 0), (0, 1), (0, 1), (0, 0), (0, 0)),
    "3.9": _controller_profile((0, 4), (0, 17), (0, 1), (0, 2), (0, 1), (0, 1), (0, 1)),
    "4.0": _controller_profile((0, 4), (4, 17), (0, 1), (0, 2), (0, 2), (0, 2), (0, 1)),
    "4.1": _controller_profile((0, 4), (4, 18), (0, 1), (0, 2), (0, 2), (0, 2), (0, 1)),
    # a 4.1 *broker* listener: serves Fetch and DescribeQuorum (forwarded) but never
    # FetchSnapshot (59) or Vote (52), which is how a client tells it apart (section 1.1)
    "broker": {API_VERSIONS: (0, 4), FETCH: (4, 18), DESCRIBE_QUORUM: (0, 2),
               DESCRIBE_CLUSTER: (0, 2), SASL_HANDSHAKE: (0, 1), SASL_AUTHENTICATE: (0, 2),
               0: (3, 12), 3: (0, 13)},
}


def release_at_least(profile: str, release: str) -> bool:
    order = ["3.0", "3.3", "3.7", "3.9", "4.0", "4.1"]
    return profile in order and order.index(profile) >= order.index(release)


@dataclass
class Listener:
    """A node's controller listener: ``security.protocol`` and its settings.
    ``users`` are the SASL credentials; ``tls`` a server ``ssl.SSLContext``."""

    protocol: str = "PLAINTEXT"
    mechanisms: tuple = MECHANISMS
    users: dict = field(default_factory=dict)
    tls: ssl.SSLContext | None = None
    name: str = "CONTROLLER"
    # connections.max.reauth.ms (KIP-368): an authenticated connection that
    # outlives it is closed at its next request unless it re-authenticated
    session_lifetime_ms: int = 0

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")


@dataclass
class Fault:
    """One fault for the next matching request on a node (``api_key`` None:
    any). ``action``: "drop-before" (close the connection as the request
    arrives, before it is handled), "drop-after" (handle it, then close
    without the answer), "delay" (answer after ``seconds``, e.g. beyond the
    client's request timeout), "corrupt" (flip a byte inside the first record
    batch of a Fetch answer with records: a CRC mismatch on the wire)."""

    action: str
    api_key: int | None = None
    seconds: float = 0.0

    def matches(self, api_key: int) -> bool:
        return self.api_key is None or self.api_key == api_key


class Connection:
    """One client connection: requests handled serially (section 1.1)."""

    def __init__(self, node, sock: socket.socket):
        self.node = node
        self.quorum = node.quorum
        self.sock = sock
        self.authenticated = not node.listener.sasl
        self.sasl = None
        self.corrupt = False
        self.close_after_reply = False
        self.expires: float | None = None

    def run(self) -> None:
        while not self.node.stopping:
            msg = read_frame(self.sock)
            key, version, _corr = HEADER.unpack_from(msg, 0)
            self.node.requests.append((key, version))
            if (self.expires is not None and time.monotonic() > self.expires
                    and key not in (SASL_HANDSHAKE, SASL_AUTHENTICATE)):
                return          # SocketServer closes an expired SASL channel (section 2.3, KIP-368)
            fault = self.node.take_fault(key)
            action = fault.action if fault else None
            if action == "drop-before":
                return          # closed as the request arrives: nothing was done
            if action == "delay":
                time.sleep(fault.seconds)
            self.corrupt = action == "corrupt"
            reply = self.handle(msg, key, version)
            if reply is None or action == "drop-after":
                # unsupported version or a request out of turn: closed (section 1.1);
                # "drop-after": handled, then the connection died with the answer
                return
            self.sock.sendall(reply)
            if self.close_after_reply:
                return          # Kafka closes the connection after a failed authentication

    def handle(self, msg: bytes, key: int, version: int) -> bytes | None:
        node = self.node
        supported = node.apis.get(key)
        if key == API_VERSIONS:
            if supported is None or not supported[0] <= version <= supported[1]:
                return self.unsupported_api_versions(msg)
            return self.api_versions(msg, version)
        if supported is None or not supported[0] <= version <= supported[1]:
            return None
        if not self.authenticated and key not in (SASL_HANDSHAKE, SASL_AUTHENTICATE):
            return None   # "Unexpected Kafka request ... during SASL handshake": closed
        handler = {FETCH: self.fetch, FETCH_SNAPSHOT: self.fetch_snapshot,
                   DESCRIBE_QUORUM: self.describe_quorum, DESCRIBE_CLUSTER: self.describe_cluster,
                   SASL_HANDSHAKE: self.sasl_handshake,
                   SASL_AUTHENTICATE: self.sasl_authenticate}.get(key)
        if handler is None:
            return None
        return handler(msg, version)

    # ---------------------------------------------------------------- ApiVersions

    def unsupported_api_versions(self, msg: bytes) -> bytes:
        """A too-new ApiVersions: error 35 in the v0 body with the supported
        ApiVersions range, response header v0 (section 1.1, KIP-511)."""
        _key, _version, corr = HEADER.unpack_from(msg, 0)
        lo, hi = self.node.apis[API_VERSIONS]
        body = struct.pack(">ihi", corr, UNSUPPORTED_VERSION, 1) + struct.pack(">hhh", API_VERSIONS, lo, hi)
        return frame(body)

    def api_versions(self, msg: bytes, version: int) -> bytes:
        """The node's release profile (section 1.1); v3+ software names must
        match Kafka's pattern or the answer is INVALID_REQUEST (section 1.7);
        answered before authentication (section 1.8, SASL)."""
        req = ApiVersionsRequest.decode(msg, version=version, header=True)
        error = NONE
        if version >= 3 and not all(_valid_software(x) for x in
                                    (req.client_software_name, req.client_software_version)):
            error = INVALID_REQUEST
        keys = [ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in sorted(self.node.apis.items()) if error == NONE]
        kw = {}
        if version >= 3 and error == NONE:
            # finalized features in tags 1 and 2 (section 1.1)
            kw = dict(finalized_features_epoch=self.quorum.log.end_offset,
                      finalized_features=[ApiVersionsResponse.FinalizedFeatureKey(
                          name="metadata.version", max_version_level=27, min_version_level=27)],
                      supported_features=[ApiVersionsResponse.SupportedFeatureKey(
                          name="metadata.version", min_version=1, max_version=27)])
        resp = ApiVersionsResponse(version=version, error_code=error, api_keys=keys,
                                   throttle_time_ms=0, **kw)
        resp.with_header(req.header.correlation_id)
        return resp.encode(header=True, framed=True)

    # ---------------------------------------------------------------- SASL

    def sasl_handshake(self, msg: bytes, version: int) -> bytes:
        """SaslHandshake v0/v1 (section 1.8): the enabled mechanisms, 33 for
        another one, 34 out of turn."""
        req = SaslHandshakeRequest.decode(msg, version=version, header=True)
        mechanisms = list(self.node.listener.mechanisms)
        error = NONE
        if not self.node.listener.sasl or self.authenticated:
            error = ILLEGAL_SASL_STATE
        elif req.mechanism not in mechanisms:
            error = UNSUPPORTED_SASL_MECHANISM
        else:
            self.sasl = sasl_server(req.mechanism, self.node.listener.users)
        resp = SaslHandshakeResponse(version=version, error_code=error, mechanisms=mechanisms)
        resp.with_header(req.header.correlation_id)
        return resp.encode(header=True, framed=True)

    def sasl_authenticate(self, msg: bytes, version: int) -> bytes:
        req = SaslAuthenticateRequest.decode(msg, version=version, header=True)
        error, message, out = NONE, None, b""
        if self.sasl is None or self.authenticated:
            error, message = ILLEGAL_SASL_STATE, "SaslAuthenticate out of turn"
        else:
            try:
                out = self.sasl.step(bytes(req.auth_bytes))
                self.authenticated = self.sasl.done
                lifetime = self.node.listener.session_lifetime_ms
                if self.sasl.done and lifetime:
                    self.expires = time.monotonic() + lifetime / 1000
            except AuthFailed as e:
                error, message = SASL_AUTHENTICATION_FAILED, str(e)
                self.close_after_reply = True
        kw = {"session_lifetime_ms": self.node.listener.session_lifetime_ms} if version >= 1 else {}
        resp = SaslAuthenticateResponse(version=version, error_code=error, error_message=message,
                                        auth_bytes=out, **kw)
        resp.with_header(req.header.correlation_id)
        return resp.encode(header=True, framed=True)

    # ---------------------------------------------------------------- Fetch

    def leader_error(self, request_epoch: int) -> int:
        """``KafkaRaftClient.validateLeaderOnlyRequest`` (section 1.3)."""
        epoch, leader = self.quorum.view_of(self.node.id)
        if request_epoch < epoch:
            return FENCED_LEADER_EPOCH
        if request_epoch > epoch:
            return UNKNOWN_LEADER_EPOCH
        if leader != self.node.id:
            return NOT_LEADER_OR_FOLLOWER
        if self.node.resigning:
            return BROKER_NOT_AVAILABLE
        return NONE

    def endpoints(self, version: int, min_version: int) -> list:
        """The leader's address on this listener, when the responder knows it
        (NodeEndpoints: only for v >= 17 of Fetch, v1 of FetchSnapshot)."""
        _epoch, leader = self.quorum.view_of(self.node.id)
        if version < min_version or leader < 0 or not self.node.knows_endpoints:
            return []
        target = self.quorum.nodes[leader]
        return [(leader, *(target.advertised or (target.host, target.port)))]

    def fetch(self, msg: bytes, version: int) -> bytes:
        req = FetchRequest.decode(msg, version=version, header=True)
        node, q = self.node, self.quorum
        node.fetches.append(req)
        corr = req.header.correlation_id
        if node.deny_cluster_action:
            # ControllerApis authorizes before the raft client sees the request (section 0)
            return self.fetch_response(version, corr, top_error=CLUSTER_AUTHORIZATION_FAILED)
        if node.profile == "broker":
            return self.fetch_response(version, corr, error=UNKNOWN_TOPIC_ID)
        # 1. cluster id (hasValidClusterId: null skips the check)
        if req.cluster_id is not None and req.cluster_id != q.cluster_id:
            return self.fetch_response(version, corr, top_error=INCONSISTENT_CLUSTER_ID)
        # 2. exactly one topic (by id from v13, by name before) and partition 0
        topics = req.topics
        if (len(topics) != 1 or len(topics[0].partitions) != 1
                or (version >= 13 and topics[0].topic_id != METADATA_TOPIC_ID)
                or (version < 13 and topics[0].topic != METADATA_TOPIC)
                or topics[0].partitions[0].partition != 0):
            return self.fetch_response(version, corr, top_error=INVALID_REQUEST)
        p = topics[0].partitions[0]
        # 3. sanity: offsets, epochs and wait are never negative, lastFetchedEpoch <= current
        if (p.fetch_offset < 0 or p.last_fetched_epoch < 0
                or p.last_fetched_epoch > p.current_leader_epoch or req.max_wait_ms < 0):
            return self.fetch_response(version, corr, error=INVALID_REQUEST)
        requester_hwm = getattr(p, "high_watermark", None) if version >= 18 else None
        deadline = time.monotonic() + req.max_wait_ms / 1000
        with q.cond:
            parked_epoch = None
            while True:
                # 4. leader-only validation, then the log's answer (tryCompleteFetchRequest)
                if parked_epoch is not None and (q.epoch != parked_epoch or q.leader_id != node.id):
                    # the leader resigned with this fetch parked (section 1.3)
                    return self.fetch_response(version, corr, error=NOT_LEADER_OR_FOLLOWER)
                error = self.leader_error(p.current_leader_epoch)
                if error:
                    return self.fetch_response(version, corr, error=error)
                answer = self.fetch_answer(p.fetch_offset, p.last_fetched_epoch)
                hwm_news = requester_hwm is not None and requester_hwm < q.hwm
                remaining = deadline - time.monotonic()
                if (answer.get("records") or "snapshot_id" in answer or "diverging" in answer
                        or req.max_wait_ms == 0 or remaining <= 0 or hwm_news or not q.started
                        or node.stopping):
                    return self.fetch_response(version, corr, **answer)
                # park in the purgatory: woken by an append (or, for v18, a HWM change)
                parked_epoch = q.epoch
                q.cond.wait(remaining)

    def fetch_answer(self, offset: int, last_epoch: int) -> dict:
        log = self.quorum.log
        if (offset == 0 and release_at_least(self.node.profile, "3.7")
                and log.latest_snapshot(exclude_bootstrap=release_at_least(self.node.profile, "3.9"))):
            # fetchOffset == 0 and a snapshot exists: SnapshotId right away (3.7+)
            return {"snapshot_id": log.latest_snapshot(exclude_bootstrap=True)}
        kind, where = log.validate(offset, last_epoch)
        if kind == "snapshot":
            return {"snapshot_id": where}
        if kind == "diverging":
            return {"diverging": where}
        return {"records": log.read(offset, self.quorum.max_fetch_bytes)}

    def fetch_response(self, version: int, corr: int, *, top_error: int = NONE, error: int = NONE,
                       records: bytes | None = None, snapshot_id=None, diverging=None) -> bytes:
        """``buildFetchResponse``: CurrentLeader, HighWatermark and
        LogStartOffset always; NodeEndpoints for v >= 17 (section 1.3)."""
        q = self.quorum
        epoch, leader = q.view_of(self.node.id)
        if records and self.corrupt:
            records = corrupt_first_batch(records)
        P = FetchResponse.FetchableTopicResponse.PartitionData
        responses = []
        if top_error == NONE:   # a top-level error comes with no partitions
            known = error == NONE   # an error answer carries no log position
            part = P(partition_index=0, error_code=error,
                     high_watermark=q.hwm if known else -1,
                     last_stable_offset=-1, log_start_offset=q.log.start_offset if known else -1,
                     aborted_transactions=None, preferred_read_replica=-1,
                     records=b"" if records is None and error == NONE else records,
                     current_leader=P.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch))
            if snapshot_id is not None:
                part.snapshot_id = P.SnapshotId(end_offset=snapshot_id[0], epoch=snapshot_id[1])
            if diverging is not None:
                part.diverging_epoch = P.EpochEndOffset(epoch=diverging[1], end_offset=diverging[0])
            topic = FetchResponse.FetchableTopicResponse(partitions=[part])
            if version >= 13:
                topic.topic_id = METADATA_TOPIC_ID
            else:
                topic.topic = METADATA_TOPIC
            responses.append(topic)
        kw = {}
        if version >= 16:
            kw["node_endpoints"] = [FetchResponse.NodeEndpoint(node_id=i, host=h, port=port, rack=None)
                                    for i, h, port in self.endpoints(version, 17)]
        resp = FetchResponse(version=version, throttle_time_ms=0, error_code=top_error,
                             session_id=0, responses=responses, **kw)
        resp.with_header(corr)
        return resp.encode(header=True, framed=True)

    # ---------------------------------------------------------------- FetchSnapshot

    def fetch_snapshot(self, msg: bytes, version: int) -> bytes:
        """``handleFetchSnapshotRequest`` (section 1.5)."""
        header = parse_header(msg, flexible=True)
        req = decode_fetch_snapshot_request(msg, header.body_start, version)
        q, corr = self.quorum, header.correlation_id
        if self.node.deny_cluster_action:
            return encode_fetch_snapshot_response(version, corr, error=CLUSTER_AUTHORIZATION_FAILED)
        if req.cluster_id is not None and req.cluster_id != q.cluster_id:
            return encode_fetch_snapshot_response(version, corr, error=INCONSISTENT_CLUSTER_ID)
        if len(req.topics) != 1 or len(req.topics[0][1]) != 1:
            return encode_fetch_snapshot_response(version, corr, error=INVALID_REQUEST)
        name, (p,) = req.topics[0]
        with q.cond:
            epoch, leader = q.view_of(self.node.id)

            def answer(error, *, size=-1, position=-1, records=b"", snapshot_id=(-1, -1)):
                part = {"index": p["partition"], "error": error, "snapshot_id": snapshot_id,
                        "size": size, "position": position, "records": records,
                        "current_leader": (leader, epoch)}
                return encode_fetch_snapshot_response(version, corr, topic=name, partition=part,
                                                      endpoints=self.endpoints(version, 1))

            if name != METADATA_TOPIC or p["partition"] != 0:
                return answer(UNKNOWN_TOPIC_OR_PARTITION)
            error = self.leader_error(p["current_leader_epoch"])
            if error:
                return answer(error)
            sid = p["snapshot_id"]
            data = q.log.snapshots.get(sid)
            if data is None or (sid == (0, 0) and release_at_least(self.node.profile, "3.9")):
                return answer(SNAPSHOT_NOT_FOUND, snapshot_id=sid)
            position = p["position"]
            if position < 0 or position >= len(data):
                return answer(POSITION_OUT_OF_RANGE, snapshot_id=sid)
            chunk = data[position:position + min(req.max_bytes, len(data))]
            return answer(NONE, size=len(data), position=position, records=chunk, snapshot_id=sid)

    # ---------------------------------------------------------------- DescribeQuorum

    def describe_quorum(self, msg: bytes, version: int) -> bytes:
        """Leader only (sections 0 and 1.8): voters with their log end offsets
        and fetch times, observers with an id (never ReplicaId -1), and the
        voters' listeners (v2). DESCRIBE on Cluster is needed (section 0)."""
        req = DescribeQuorumRequest.decode(msg, version=version, header=True)
        q, node = self.quorum, self.node
        R = DescribeQuorumResponse.TopicData.PartitionData
        corr = req.header.correlation_id
        if node.deny_describe:
            resp = DescribeQuorumResponse(version=version, error_code=CLUSTER_AUTHORIZATION_FAILED,
                                          topics=[], nodes=[])
            resp.with_header(corr)
            return resp.encode(header=True, framed=True)
        topics = req.topics
        now = int(time.time() * 1000)
        with q.cond:
            epoch, leader = q.view_of(node.id)
            if (len(topics) != 1 or topics[0].topic_name != METADATA_TOPIC
                    or len(topics[0].partitions) != 1 or topics[0].partitions[0].partition_index != 0):
                part = R(partition_index=0, error_code=UNKNOWN_TOPIC_OR_PARTITION)
            elif leader != node.id:
                # a non-leader answers NOT_LEADER_OR_FOLLOWER with no leader data (section 1.8)
                part = R(partition_index=0, error_code=NOT_LEADER_OR_FOLLOWER, leader_id=0,
                         leader_epoch=0, high_watermark=0, current_voters=[], observers=[])
            else:
                S = R.ReplicaState
                voters = [S(replica_id=i, replica_directory_id=uuid.UUID(int=i << 64 | 7),
                            log_end_offset=q.log.end_offset if i == leader else max(q.hwm, 0),
                            last_fetch_timestamp=now if i == leader else now - 17,
                            last_caught_up_timestamp=now if i == leader else now - 17)
                          for i in sorted(q.nodes)]
                observers = [S(replica_id=o["replicaId"], replica_directory_id=uuid.UUID(int=0),
                               log_end_offset=o["logEndOffset"], last_fetch_timestamp=-1,
                               last_caught_up_timestamp=-1) for o in q.observers]
                part = R(partition_index=0, error_code=NONE, leader_id=leader, leader_epoch=epoch,
                         high_watermark=q.hwm, current_voters=voters, observers=observers)
            nodes = [DescribeQuorumResponse.Node(node_id=i, listeners=[
                DescribeQuorumResponse.Node.Listener(name=node.listener.name, host=n.host,
                                                     port=n.port)]) for i, n in sorted(q.nodes.items())]
        topic = DescribeQuorumResponse.TopicData(topic_name=METADATA_TOPIC, partitions=[part])
        resp = DescribeQuorumResponse(version=version, error_code=NONE, topics=[topic], nodes=nodes)
        resp.with_header(corr)
        return resp.encode(header=True, framed=True)

    def describe_cluster(self, msg: bytes, version: int) -> bytes:
        """The cluster id and the controllers (3.7+, KIP-919: endpoint type 2
        asked; a controller refuses brokers' endpoints, type 1)."""
        req = DescribeClusterRequest.decode(msg, version=version, header=True)
        q = self.quorum
        wanted = getattr(req, "endpoint_type", 1)
        error = NONE if wanted == 2 else UNSUPPORTED_ENDPOINT_TYPE
        brokers = [DescribeClusterResponse.DescribeClusterBroker(
            broker_id=i, host=n.host, port=n.port, rack=None) for i, n in sorted(q.nodes.items())]
        resp = DescribeClusterResponse(
            version=version, throttle_time_ms=0, error_code=error, error_message=None,
            endpoint_type=wanted, cluster_id=q.cluster_id, controller_id=-1,
            brokers=brokers if error == NONE else [])
        resp.with_header(req.header.correlation_id)
        return resp.encode(header=True, framed=True)


def _valid_software(text: str | None) -> bool:
    return bool(text) and re.fullmatch(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?", text) is not None
