"""Wire helpers of the fake controller: frames, request headers, and the
FetchSnapshot codec.

kafka-python 3.x generates every other message the fake speaks from
Kafka's JSON (kraft-live-protocol.md section 3.2), but it has no
FetchSnapshot class; the project must not ship Kafka's JSON files, so the
fake encodes and decodes FetchSnapshot v0/v1 by hand from the layout in
section 1.8 (header v2 request, header v1 response, flexible everywhere).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

I16, I32, I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
HEADER = struct.Struct(">hhi")   # request_api_key, request_api_version, correlation_id


class Closed(Exception):
    """The peer closed the connection (or the fake is stopping)."""


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise Closed()
        buf += chunk
    return bytes(buf)


def read_frame(sock: socket.socket) -> bytes:
    """One size-prefixed message (section 1.7: int32 length, not counting itself)."""
    (size,) = I32.unpack(recv_exact(sock, 4))
    if size < HEADER.size or size > 100 << 20:
        raise Closed()
    return recv_exact(sock, size)


def frame(payload: bytes) -> bytes:
    return I32.pack(len(payload)) + payload


@dataclass
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_start: int      # offset of the body, when the header's flexibility is known


def parse_header(msg: bytes, flexible: bool) -> RequestHeader:
    """Header v1, or v2 (``flexible``): client_id keeps its int16 length even
    in v2 (section 1.7), then v2 adds a tagged-field section."""
    key, version, corr = HEADER.unpack_from(msg, 0)
    (n,) = I16.unpack_from(msg, HEADER.size)
    pos = HEADER.size + 2
    client = None if n < 0 else msg[pos:pos + n].decode("utf-8", "replace")
    pos += max(n, 0)
    if flexible:
        pos = skip_tags(msg, pos)
    return RequestHeader(key, version, corr, client, pos)


# ---------------------------------------------------------------- flexible primitives

def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_compact_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        return None, pos
    return buf[pos:pos + n - 1].decode("utf-8"), pos + n - 1


def compact_string(text: str | None) -> bytes:
    if text is None:
        return b"\0"
    raw = text.encode("utf-8")
    return uvarint(len(raw) + 1) + raw


def read_tags(buf: bytes, pos: int) -> tuple[dict[int, bytes], int]:
    count, pos = read_uvarint(buf, pos)
    tags = {}
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        tags[tag] = buf[pos:pos + size]
        pos += size
    return tags, pos


def skip_tags(buf: bytes, pos: int) -> int:
    return read_tags(buf, pos)[1]


def tags(fields: dict[int, bytes]) -> bytes:
    out = uvarint(len(fields))
    for tag in sorted(fields):
        out += uvarint(tag) + uvarint(len(fields[tag])) + fields[tag]
    return out


# ---------------------------------------------------------------- FetchSnapshot

@dataclass
class FetchSnapshotRequest:
    replica_id: int
    max_bytes: int
    cluster_id: str | None
    topics: list          # [(name, [partition dicts])]


def decode_fetch_snapshot_request(msg: bytes, pos: int, version: int) -> FetchSnapshotRequest:
    replica_id, max_bytes = I32.unpack_from(msg, pos)[0], I32.unpack_from(msg, pos + 4)[0]
    pos += 8
    topics = []
    n_topics, pos = read_uvarint(msg, pos)
    for _ in range(max(n_topics - 1, 0)):
        name, pos = read_compact_string(msg, pos)
        parts = []
        n_parts, pos = read_uvarint(msg, pos)
        for _ in range(max(n_parts - 1, 0)):
            partition, leader_epoch = struct.unpack_from(">ii", msg, pos)
            end_offset, epoch = struct.unpack_from(">qi", msg, pos + 8)
            pos = skip_tags(msg, pos + 20)
            (position,) = I64.unpack_from(msg, pos)
            ptags, pos = read_tags(msg, pos + 8)
            parts.append({"partition": partition, "current_leader_epoch": leader_epoch,
                          "snapshot_id": (end_offset, epoch), "position": position,
                          "replica_directory_id": ptags.get(0) if version >= 1 else None})
        pos = skip_tags(msg, pos)
        topics.append((name, parts))
    top, pos = read_tags(msg, pos)
    cluster_id = read_compact_string(top[0], 0)[0] if 0 in top else None
    return FetchSnapshotRequest(replica_id, max_bytes, cluster_id, topics)


def encode_fetch_snapshot_request(version: int, correlation_id: int, client_id: str, *,
                                  snapshot_id: tuple[int, int], position: int,
                                  leader_epoch: int, max_bytes: int = 1 << 20,
                                  cluster_id: str | None = None,
                                  topic: str = "__cluster_metadata", partition: int = 0,
                                  replica_id: int = -1) -> bytes:
    """A whole FetchSnapshot request frame (used by the fake's own tests)."""
    raw_client = client_id.encode()
    out = HEADER.pack(59, version, correlation_id) + I16.pack(len(raw_client)) + raw_client + b"\0"
    out += I32.pack(replica_id) + I32.pack(max_bytes) + uvarint(2) + compact_string(topic)
    out += uvarint(2) + struct.pack(">ii", partition, leader_epoch)
    out += struct.pack(">qi", *snapshot_id) + b"\0" + I64.pack(position) + b"\0" + b"\0"
    out += tags({0: compact_string(cluster_id)} if cluster_id is not None else {})
    return frame(out)


def encode_fetch_snapshot_response(version: int, correlation_id: int, *, error: int = 0,
                                   topic: str = "__cluster_metadata",
                                   partition: dict | None = None,
                                   endpoints: list | None = None) -> bytes:
    """Response header v1, then the body; ``partition`` has ``index``,
    ``error``, ``snapshot_id``, ``size``, ``position``, ``records``,
    ``current_leader`` ((id, epoch) or None); ``endpoints`` (v1+) is a list of
    (node id, host, port)."""
    out = I32.pack(correlation_id) + b"\0" + I32.pack(0) + I16.pack(error)
    if partition is None:
        out += uvarint(1)
    else:
        p = partition
        out += uvarint(2) + compact_string(topic) + uvarint(2)
        out += I32.pack(p["index"]) + I16.pack(p["error"])
        out += struct.pack(">qi", *p["snapshot_id"]) + b"\0"
        out += I64.pack(p["size"]) + I64.pack(p["position"])
        records = p["records"]
        out += uvarint(len(records) + 1) + records
        leader = p.get("current_leader")
        # CurrentLeader has no -1 defaults in the schema: omitted only when {0, 0} (section 1.8)
        ptags = {} if leader is None or leader == (0, 0) else {0: struct.pack(">ii", *leader) + b"\0"}
        out += tags(ptags) + b"\0"
    top = {}
    if version >= 1 and endpoints:
        body = uvarint(len(endpoints) + 1)
        for node_id, host, port in endpoints:
            body += I32.pack(node_id) + compact_string(host) + struct.pack(">H", port) + b"\0"
        top[0] = body
    out += tags(top)
    return frame(out)
