"""The Kafka requests an observer sends, and decoding their answers.

Codecs come from kafka-python 3.x (``kafka.protocol``): its message classes
are generated from Kafka's own message declarations, so ApiVersions, Fetch
(v12 by topic name, v13+ by topic id, v17 NodeEndpoints, v18
HighWatermark), DescribeQuorum and the SASL messages are Kafka's layouts by
construction. kafka-python has no FetchSnapshot; it is declared here the way
kafka-python declares its messages, from the declaration embedded below
(written from the protocol reference; nothing is read from disk at run time).

Frames are built and parsed here, not by kafka-python's header helpers:
decoding a response header with them copies the whole frame, and a Fetch
frame carries up to 8 MiB of records. :func:`decode_response` reads the
header itself and hands kafka-python a ``memoryview``, so the records field
is copied exactly once (into the ``bytes`` the events carry).
"""

from __future__ import annotations

import struct
import uuid

from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse
from kafka.protocol.admin.cluster import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.api_data import JsonSchemaData
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.sasl import (SaslAuthenticateRequest, SaslAuthenticateResponse,
                                 SaslHandshakeRequest, SaslHandshakeResponse)
from kafka.protocol.schemas import StructField

from .. import __version__
from ..kraft.primitives import INT32, INT64_PAIR

METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = uuid.UUID(int=1)          # Uuid.METADATA_TOPIC_ID, "AAAAAAAAAAAAAAAAAAAAAQ"
CLIENT_ID = "metashell"
MAX_FETCH_BYTES = 8 << 20                      # what a raft leader reads per Fetch anyway

# Kafka error codes the observer acts on (kafka-python's names are not needed:
# the state machine speaks in these numbers, as the reference tables do).
NONE = 0
UNKNOWN_SERVER_ERROR = -1
NOT_LEADER_OR_FOLLOWER = 6
BROKER_NOT_AVAILABLE = 8
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_VERSION = 35
INVALID_REQUEST = 42
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
SNAPSHOT_NOT_FOUND = 98
POSITION_OUT_OF_RANGE = 99
INCONSISTENT_CLUSTER_ID = 104


class _DeclaredMessage(type(ApiMessage)):
    """kafka-python's message metaclass, given the declaration as a class
    attribute ``DECLARATION`` instead of a JSON resource to load."""

    def __new__(metacls, name, bases, attrs, **kw):
        declaration = attrs.pop("DECLARATION")
        attrs["_json"] = declaration
        attrs["_struct"] = StructField(declaration)
        # skip JsonSchemaData.__new__ (it would load a resource file)
        return super(JsonSchemaData, metacls).__new__(metacls, name, bases, attrs, **kw)


def _f(name, type_, versions="0+", **extra):
    return {"name": name, "type": type_, "versions": versions, **extra}


_CURRENT_LEADER = _f("CurrentLeader", "LeaderIdAndEpoch", taggedVersions="0+", tag=0, fields=[
    _f("LeaderId", "int32", default=-1), _f("LeaderEpoch", "int32", default=-1)])
_SNAPSHOT_ID = [_f("EndOffset", "int64"), _f("Epoch", "int32")]


class FetchSnapshotRequest(ApiMessage, metaclass=_DeclaredMessage):
    DECLARATION = {
        "apiKey": 59, "type": "request", "name": "FetchSnapshotRequest",
        "validVersions": "0-1", "flexibleVersions": "0+",
        "fields": [
            _f("ClusterId", "string", nullableVersions="0+", default="null", taggedVersions="0+", tag=0),
            _f("ReplicaId", "int32", default="-1"),
            _f("MaxBytes", "int32", default="0x7fffffff"),
            _f("Topics", "[]TopicSnapshot", fields=[
                _f("Name", "string"),
                _f("Partitions", "[]PartitionSnapshot", fields=[
                    _f("Partition", "int32"),
                    _f("CurrentLeaderEpoch", "int32"),
                    _f("SnapshotId", "SnapshotId", fields=_SNAPSHOT_ID),
                    _f("Position", "int64"),
                    _f("ReplicaDirectoryId", "uuid", "1+", taggedVersions="1+", tag=0),
                ]),
            ]),
        ],
    }


class FetchSnapshotResponse(ApiMessage, metaclass=_DeclaredMessage):
    DECLARATION = {
        "apiKey": 59, "type": "response", "name": "FetchSnapshotResponse",
        "validVersions": "0-1", "flexibleVersions": "0+",
        "fields": [
            _f("ThrottleTimeMs", "int32"),
            _f("ErrorCode", "int16"),
            _f("Topics", "[]TopicSnapshot", fields=[
                _f("Name", "string"),
                _f("Partitions", "[]PartitionSnapshot", fields=[
                    _f("Index", "int32"),
                    _f("ErrorCode", "int16"),
                    _f("SnapshotId", "SnapshotId", fields=_SNAPSHOT_ID),
                    _CURRENT_LEADER,
                    _f("Size", "int64"),
                    _f("Position", "int64"),
                    _f("UnalignedRecords", "records"),
                ]),
            ]),
            _f("NodeEndpoints", "[]NodeEndpoint", "1+", taggedVersions="1+", tag=0, fields=[
                _f("NodeId", "int32", "1+"), _f("Host", "string", "1+"), _f("Port", "uint16", "1+")]),
        ],
    }


# api key -> (request class, response class, the highest version we speak, the lowest we accept)
APIS = {
    18: (ApiVersionsRequest, ApiVersionsResponse, 4, 0),
    17: (SaslHandshakeRequest, SaslHandshakeResponse, 1, 1),
    36: (SaslAuthenticateRequest, SaslAuthenticateResponse, 2, 0),
    1: (FetchRequest, FetchResponse, 18, 12),
    59: (FetchSnapshotRequest, FetchSnapshotResponse, 1, 0),
    55: (DescribeQuorumRequest, DescribeQuorumResponse, 2, 0),
    # v1+ names the endpoints asked for: controllers answer for theirs (3.7+, KIP-919)
    60: (DescribeClusterRequest, DescribeClusterResponse, 2, 1),
}
API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE, FETCH, FETCH_SNAPSHOT, DESCRIBE_QUORUM = 18, 17, 36, 1, 59, 55
DESCRIBE_CLUSTER = 60
CONTROLLER_ENDPOINTS = 2        # DescribeCluster's EndpointType of controllers



def encode_request(message, version: int, correlation_id: int, client_id: str = CLIENT_ID) -> bytes:
    """A whole frame: length, request header (v2 for flexible versions, else
    v1; client id always with an int16 length), body."""
    message.with_header(correlation_id, client_id)
    return message.encode(version, header=True, framed=True)


def decode_response(api_key: int, version: int, frame) -> tuple[int, object]:
    """``(correlation id, message)`` from a response frame without its length
    prefix. The body is decoded from a ``memoryview`` of ``frame``."""
    response = APIS[api_key][1]
    view = memoryview(frame)
    (correlation_id,) = INT32.unpack_from(view, 0)
    pos = 4
    # ApiVersions answers always carry header v0, whatever the version
    if api_key != API_VERSIONS and response.flexible_version_q(version):
        pos = _skip_tagged_fields(view, pos)
    return correlation_id, response.decode(view[pos:], version=version)


_SNAPSHOT_HEAD = struct.Struct(">ih")           # ThrottleTimeMs, ErrorCode
_SNAPSHOT_PART = struct.Struct(">ihqi")         # Index, ErrorCode, SnapshotId.EndOffset, SnapshotId.Epoch
_SNAPSHOT_POS = INT64_PAIR                       # Size, Position


def snapshot_chunk(frame) -> tuple[int, int, int, memoryview] | None:
    """``(correlation id, size, position, records)`` of a successful
    FetchSnapshot answer (any version: the layout up to the records is the
    same), the records a view into ``frame``, so they are copied once, into
    the snapshot buffer. ``None`` for any answer with an error: those are
    small, and :func:`decode_response` reads them whole."""
    view = memoryview(frame)
    (correlation,) = INT32.unpack_from(view, 0)
    pos = _skip_tagged_fields(view, 4)
    _throttle, error = _SNAPSHOT_HEAD.unpack_from(view, pos)
    topics, pos = _read_uvarint(view, pos + _SNAPSHOT_HEAD.size)
    if error != NONE or topics != 2:
        return None
    name_length, pos = _read_uvarint(view, pos)
    partitions, pos = _read_uvarint(view, pos + name_length - 1)
    if partitions != 2:
        return None
    _index, error, _end, _epoch = _SNAPSHOT_PART.unpack_from(view, pos)
    if error != NONE:
        return None
    pos = _skip_tagged_fields(view, pos + _SNAPSHOT_PART.size)   # SnapshotId's own tagged fields
    size, position = _SNAPSHOT_POS.unpack_from(view, pos)
    length, pos = _read_uvarint(view, pos + _SNAPSHOT_POS.size)
    if length == 0 or pos + length - 1 > len(view):
        return None
    return correlation, size, position, view[pos:pos + length - 1]


def _read_uvarint(view, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = view[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _skip_tagged_fields(view, pos: int) -> int:
    count, pos = _read_uvarint(view, pos)
    for _ in range(count):
        _tag, pos = _read_uvarint(view, pos)
        size, pos = _read_uvarint(view, pos)
        pos += size
    return pos


def api_versions_request(version: int):
    return ApiVersionsRequest(client_software_name="metashell",
                              client_software_version=__version__, version=version)


def supported_ranges(response) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def fetch_request(version: int, *, leader_epoch: int, fetch_offset: int, last_fetched_epoch: int,
                  high_watermark: int, max_wait_ms: int, cluster_id: str | None):
    """An observer's Fetch for ``__cluster_metadata-0`` (reference 1.2):
    ReplicaId -1 (v12-14; from v15 the absent ReplicaState says the same),
    v12 names the topic, v13+ gives its fixed id, v18 sends the HWM known."""
    part = {}
    if version >= 18:
        part["high_watermark"] = high_watermark
    partition = FetchRequest.FetchTopic.FetchPartition(
        partition=0, current_leader_epoch=leader_epoch, fetch_offset=fetch_offset,
        last_fetched_epoch=last_fetched_epoch, log_start_offset=-1,
        partition_max_bytes=MAX_FETCH_BYTES, version=version, **part)
    topic = (FetchRequest.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[partition], version=version)
             if version >= 13 else
             FetchRequest.FetchTopic(topic=METADATA_TOPIC, partitions=[partition], version=version))
    extra = {"cluster_id": cluster_id} if cluster_id is not None else {}
    return FetchRequest(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=0, max_bytes=MAX_FETCH_BYTES,
                        isolation_level=0, session_id=0, session_epoch=-1, topics=[topic],
                        forgotten_topics_data=[], rack_id="", version=version, **extra)


def fetch_snapshot_request(version: int, *, leader_epoch: int, end_offset: int, epoch: int,
                           position: int, max_bytes: int, cluster_id: str | None):
    part = FetchSnapshotRequest.TopicSnapshot.PartitionSnapshot(
        partition=0, current_leader_epoch=leader_epoch,
        snapshot_id=FetchSnapshotRequest.TopicSnapshot.PartitionSnapshot.SnapshotId(
            end_offset=end_offset, epoch=epoch, version=version),
        position=position, version=version)
    topic = FetchSnapshotRequest.TopicSnapshot(name=METADATA_TOPIC, partitions=[part], version=version)
    extra = {"cluster_id": cluster_id} if cluster_id is not None else {}
    return FetchSnapshotRequest(replica_id=-1, max_bytes=max_bytes, topics=[topic], version=version, **extra)


def describe_cluster_request(version: int):
    """DescribeCluster of the controllers (its answer carries the cluster id)."""
    return DescribeClusterRequest(include_cluster_authorized_operations=False,
                                  endpoint_type=CONTROLLER_ENDPOINTS, version=version)


def describe_quorum_request(version: int):
    part = DescribeQuorumRequest.TopicData.PartitionData(partition_index=0, version=version)
    return DescribeQuorumRequest(
        topics=[DescribeQuorumRequest.TopicData(topic_name=METADATA_TOPIC, partitions=[part],
                                                version=version)],
        version=version)
