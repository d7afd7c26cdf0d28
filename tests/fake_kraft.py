"""An in-process fake KRaft controller quorum on loopback, for live-mode tests.

The fake follows what ``shared/reference/kraft-live-protocol.md`` documents
of Kafka's controllers (section numbers below refer to it) so that the
observer under test meets the behaviour of a real quorum: per-release API
ranges, the leader's Fetch check order, snapshots, long polls, failovers.
It shares no code with the observer: messages are encoded and decoded with
kafka-python 3.x's JSON-generated ``kafka.protocol`` classes (section 3.2)
and, for FetchSnapshot, by ``fake_kraft_wire``.

One :class:`FakeQuorum` holds the leader's log (whole record batches with
their offsets and epochs), its snapshots, the high watermark, the epoch and
the leader; each :class:`FakeNode` listens on 127.0.0.1 (port 0) and
answers from its own view of the quorum. Tests drive it precisely:
``append`` batches, ``commit`` (advance the high watermark), ``failover``,
``truncate_to_snapshot``, and per-node fault knobs. Every connection runs in
its own thread and handles one request at a time, like Kafka's muted
channels (section 1.1).
"""

from __future__ import annotations

import bisect
import re
import socket
import ssl
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.sasl import (SaslAuthenticateRequest, SaslAuthenticateResponse,
                                 SaslHandshakeRequest, SaslHandshakeResponse)

from fake_kraft_security import MECHANISMS, AuthFailed, sasl_server
from fake_kraft_wire import (HEADER, Closed, decode_fetch_snapshot_request,
                             encode_fetch_snapshot_response, frame, parse_header, read_frame)
from metashell.loader.batch import HEADER as BATCH_HEADER
from metashell.loader.batch import HEADER_SIZE, LOG_OVERHEAD
from metashell.loader.writer import LogWriter, Out, record

METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = uuid.UUID(int=1)          # Uuid.METADATA_TOPIC_ID (section 0)
MAX_FETCH_BYTES = 8 * 1024 * 1024             # KafkaMetadataLog: maxFetchSizeInBytes (section 1.2)

# error codes (sections 1.3, 1.5, 4.3)
NONE = 0
UNKNOWN_SERVER_ERROR = -1
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
    any). ``action``: "drop-before" (close without reading the request),
    "drop-after" (read it, close without an answer), "delay" (answer after
    ``seconds``), "corrupt" (flip a byte inside the first record batch of a
    Fetch answer with records)."""

    action: str
    api_key: int | None = None
    seconds: float = 0.0

    def matches(self, api_key: int) -> bool:
        return self.api_key is None or self.api_key == api_key


class Batch:
    """A whole record batch of the leader's log and what the leader knows of it."""

    __slots__ = ("base", "last", "epoch", "data")

    def __init__(self, data: bytes):
        base, _length, epoch, _magic, _crc, _attrs, last_delta = BATCH_HEADER.unpack_from(data, 0)[:7]
        self.base, self.last, self.epoch, self.data = base, base + last_delta, epoch, data


def split_batches(data: bytes) -> list[bytes]:
    """Whole batches of a segment or snapshot file, by their length fields."""
    out, pos = [], 0
    while pos + HEADER_SIZE <= len(data):
        length = struct.unpack_from(">i", data, pos + 8)[0]
        end = pos + LOG_OVERHEAD + length
        if length <= 0 or end > len(data):
            break
        out.append(data[pos:end])
        pos = end
    return out


def rebase(data: bytes, base_offset: int, epoch: int) -> bytes:
    """The same batch at another base offset and leader epoch; neither is
    covered by the CRC (kraft-format.md), so nothing else changes."""
    out = bytearray(data)
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, epoch)
    return bytes(out)


class RaftLog:
    """The leader's replicated log: batches, an epoch cache, snapshots.

    ``validate(offset, epoch)`` is ``ReplicatedLog.validateOffsetAndEpoch``
    and ``end_offset_for_epoch`` is ``KafkaMetadataLog.endOffsetForEpoch``
    (section 1.3)."""

    def __init__(self):
        self.batches: list[Batch] = []
        self.bases: list[int] = []
        self.start_offset = 0
        self.snapshots: dict[tuple[int, int], bytes] = {}    # (end offset, epoch) -> file bytes

    @property
    def end_offset(self) -> int:
        return self.batches[-1].last + 1 if self.batches else self.start_offset

    def last_epoch(self) -> int:
        if self.batches:
            return self.batches[-1].epoch
        latest = self.latest_snapshot()
        return latest[1] if latest else 0

    def append(self, data: bytes) -> Batch:
        b = Batch(data)
        if b.base != self.end_offset:
            raise ValueError(f"batch at {b.base} does not follow the log end {self.end_offset}")
        self.batches.append(b)
        self.bases.append(b.base)
        return b

    def truncate(self, end_offset: int) -> None:
        """Drop every batch at or after ``end_offset`` (a batch boundary)."""
        i = bisect.bisect_left(self.bases, end_offset)
        if i < len(self.batches) and self.batches[i].base != end_offset or (
                i and self.batches[i - 1].last >= end_offset):
            raise ValueError(f"{end_offset} is not a batch boundary")
        del self.batches[i:], self.bases[i:]

    def earliest_snapshot(self):
        return min(self.snapshots) if self.snapshots else None

    def latest_snapshot(self, exclude_bootstrap: bool = False):
        ids = [s for s in self.snapshots if not (exclude_bootstrap and s == (0, 0))]
        return max(ids) if ids else None

    def epoch_entries(self) -> list[tuple[int, int]]:
        """(epoch, start offset) pairs: Kafka's leader-epoch checkpoint."""
        entries: list[tuple[int, int]] = []
        for b in self.batches:
            if not entries or b.epoch > entries[-1][0]:
                entries.append((b.epoch, b.base))
        return entries

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(end offset, epoch): ``LeaderEpochFileCache.endOffsetFor`` (the
        latest epoch ends at the log end; an older one where the next higher
        epoch starts, reported as the floor epoch, or as itself when it is
        older than every known epoch), then ``KafkaMetadataLog``'s fallback
        (log end, last fetched epoch) and its snapshot-epoch correction."""
        entries = self.epoch_entries()
        found = None
        if entries and entries[-1][0] == epoch:
            found = (self.end_offset, epoch)
        elif entries:
            higher = next((e for e in entries if e[0] > epoch), None)
            floor = [e for e in entries if e[0] <= epoch]
            if higher is not None:
                found = (higher[1], floor[-1][0] if floor else epoch)
        if found is None:
            return self.end_offset, self.last_epoch()
        earliest = self.earliest_snapshot()
        if earliest and found[0] == earliest[0] and found[1] < earliest[1]:
            return found[0], earliest[1]
        return found

    def validate(self, offset: int, epoch: int):
        """("valid", None) | ("snapshot", (end, epoch)) | ("diverging", (end, epoch))."""
        if self.start_offset == 0 and offset == 0:
            return "valid", None
        earliest = self.earliest_snapshot()
        if earliest and (offset < self.start_offset
                         or (offset == self.start_offset and epoch != earliest[1])
                         or epoch < earliest[1]):
            return "snapshot", self.latest_snapshot()
        end, end_epoch = self.end_offset_for_epoch(epoch)
        if end_epoch != epoch or end < offset:
            return "diverging", (end, end_epoch)
        return "valid", None

    def read(self, offset: int, max_bytes: int = MAX_FETCH_BYTES) -> bytes:
        """Bytes from the batch holding ``offset``, at most ``max_bytes``
        (the first batch always whole, ``minOneMessage``); the last batch
        may be cut off, as a Kafka log read cuts it (section 1.3)."""
        i = bisect.bisect_right(self.bases, offset) - 1
        if i < 0 or offset >= self.end_offset:
            return b""
        parts, size = [], 0
        for b in self.batches[i:]:
            if parts and size + len(b.data) > max_bytes:
                parts.append(b.data[:max_bytes - size])
                break
            parts.append(b.data)
            size += len(b.data)
            if size >= max_bytes:
                break
        return b"".join(parts)


class FakeQuorum:
    """Several fake controllers sharing one log; see the module docstring.

    ``profiles``: one release name for all nodes or one per node id.
    ``listener``: the security of every node's listener."""

    def __init__(self, voters: int = 3, *, profile="4.1", cluster_id: str = "MkU3OEVBNTcwNTJENDM2Qg",
                 listener: Listener | None = None, leader_id: int = 1, epoch: int = 1,
                 first_id: int = 1):
        ids = list(range(first_id, first_id + voters))
        profiles = profile if isinstance(profile, dict) else {i: profile for i in ids}
        self.cluster_id = cluster_id
        self.log = RaftLog()
        self.hwm = 0              # what the current leader reports (-1: it does not know yet)
        self.committed = 0        # the quorum's real commit point: never goes back
        self.epoch = epoch
        self.leader_id = leader_id
        self.cond = threading.Condition()
        self.listener = listener or Listener()
        self.nodes = {i: FakeNode(self, i, profiles[i], self.listener) for i in ids}
        self.observers = [{"replicaId": 100 + i, "logEndOffset": -1} for i in range(1)]
        self.fetch_count = 0
        self.started = False

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> "FakeQuorum":
        for n in self.nodes.values():
            n.start()
        self.started = True
        return self

    def stop(self) -> None:
        with self.cond:
            self.started = False
            self.cond.notify_all()
        for n in self.nodes.values():
            n.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def bootstrap(self, ids=None, *, with_ids: bool = True) -> str:
        """``1@127.0.0.1:p1,2@...`` (controller.quorum.voters) or, without
        ids, ``127.0.0.1:p1,...`` (controller.quorum.bootstrap.servers)."""
        ids = list(self.nodes) if ids is None else ids
        return ",".join((f"{i}@" if with_ids else "") + f"127.0.0.1:{self.nodes[i].port}" for i in ids)

    # ---------------------------------------------------------------- content

    @classmethod
    def from_logdir(cls, path, **kw) -> "FakeQuorum":
        """A quorum whose leader serves a real metadata log dir: its newest
        snapshot's bytes as the snapshot, its segments' batches as the log,
        everything committed. A bootstrap checkpoint alone (no partition
        data yet) is served the way a controller writes it on first start:
        its records as the first batches of the log."""
        path = Path(path)
        part = path / "__cluster_metadata-0"
        part = part if part.is_dir() else path
        snapshots = sorted(p for p in part.glob("*-*.checkpoint"))
        segments = sorted(part.glob("*.log"))
        epochs = [0]
        q = cls(**kw)
        for s in snapshots:
            end, epoch = (int(x) for x in s.name.split(".")[0].split("-"))
            q.log.snapshots[(end, epoch)] = s.read_bytes()
            epochs.append(epoch)
        if segments:
            q.log.start_offset = int(segments[0].name.split(".")[0])
            for seg in segments:
                for data in split_batches(seg.read_bytes()):
                    b = q.log.append(data)
                    epochs.append(b.epoch)
        elif snapshots:
            q.log.start_offset = max(q.log.snapshots)[0]
        elif (path / "bootstrap.checkpoint").exists():
            q.log.start_offset = 0
            for data in split_batches((path / "bootstrap.checkpoint").read_bytes()):
                if not BATCH_HEADER.unpack_from(data, 0)[5] & 0x20:  # skip header/footer control batches
                    q.log.append(rebase(data, q.log.end_offset, 1))
            epochs.append(1)
        if q.log.start_offset > 0 and not any(e == q.log.start_offset for e, _ in q.log.snapshots):
            raise ValueError(f"{path}: the log starts at {q.log.start_offset} with no snapshot there")
        q.epoch = max(max(epochs), 1)
        q._set_hwm(q.log.end_offset)
        return q

    def append(self, records: list[Out] | bytes, *, epoch: int | None = None, commit: bool = False,
               control_batch: bool = False, timestamp: int | None = None) -> tuple[int, int]:
        """Append one batch (writer records, or whole batch bytes re-based to
        the log end) at ``epoch`` (default: the current one); wake parked
        fetches (section 1.3: a long poll completes once the log end passes
        its offset). Returns (base offset, last offset)."""
        with self.cond:
            epoch = self.epoch if epoch is None else epoch
            if isinstance(records, (bytes, bytearray)):
                datas = split_batches(bytes(records))
            else:
                w = LogWriter(0, epoch, timestamp or int(time.time() * 1000))
                w.batch(records, control=control_batch)
                datas = [w.getvalue()]
            first = self.log.end_offset
            for d in datas:
                self.log.append(rebase(d, self.log.end_offset, epoch))
            last = self.log.end_offset - 1
            if commit:
                self._set_hwm(self.log.end_offset)
            self.cond.notify_all()
            return first, last

    def _set_hwm(self, hwm: int) -> None:
        self.hwm = hwm
        self.committed = max(self.committed, hwm)

    def commit(self, upto: int | None = None) -> int:
        """Advance the high watermark to ``upto`` (default: the log end)."""
        with self.cond:
            self._set_hwm(self.log.end_offset if upto is None else upto)
            self.cond.notify_all()
            return self.hwm

    def begin_election(self) -> None:
        """The leader is gone and no one won yet: a new epoch with no leader;
        every node answers with CurrentLeader{-1, epoch} (section 1.3)."""
        with self.cond:
            self.epoch += 1
            self.leader_id = -1
            self.cond.notify_all()

    def failover(self, new_leader: int, *, truncate_to: int | None = None,
                 tail: list[list[Out]] = (), hwm: int = -1, leader_change: bool = True) -> None:
        """A new leader at a new epoch. Its log keeps the committed prefix; an
        uncommitted tail of the old leader is cut at ``truncate_to`` (never
        below the high watermark: committed data cannot diverge, section 1.4)
        and ``tail`` batches are written at the new epoch, so a client holding
        the old tail gets DivergingEpoch. A new leader starts with its high
        watermark unknown (-1) unless ``hwm`` is given (section 1.4); it
        writes a LeaderChange control batch first, as KRaft does. Parked
        fetches on the old leader complete with NOT_LEADER_OR_FOLLOWER."""
        with self.cond:
            if truncate_to is not None:
                if truncate_to < self.committed:
                    raise ValueError(f"cannot truncate committed data (below {self.committed})")
                self.log.truncate(truncate_to)
            self.epoch += 1
            self.leader_id = new_leader
            if leader_change:
                w = LogWriter(self.log.end_offset, self.epoch, int(time.time() * 1000))
                w.leader_change(new_leader, sorted(self.nodes))
                self.log.append(w.getvalue())
            for records in tail:
                w = LogWriter(self.log.end_offset, self.epoch, int(time.time() * 1000))
                w.batch(records)
                self.log.append(w.getvalue())
            self._set_hwm(hwm)
            self.cond.notify_all()

    def truncate_to_snapshot(self, snapshot: bytes, end_offset: int, epoch: int | None = None,
                             keep_older: bool = False) -> None:
        """The leader wrote a snapshot at ``end_offset`` and deleted the log
        below it (log start = end offset): an observer behind it now gets
        SnapshotId (section 1.3)."""
        with self.cond:
            if epoch is None:
                below = [b.epoch for b in self.log.batches if b.last < end_offset]
                epoch = below[-1] if below else self.log.last_epoch()
            if not keep_older:
                self.log.snapshots.clear()
            self.log.snapshots[(end_offset, epoch)] = bytes(snapshot)
            i = bisect.bisect_left(self.log.bases, end_offset)
            del self.log.batches[:i], self.log.bases[:i]
            self.log.start_offset = end_offset
            self.cond.notify_all()

    def corrupt_batch(self, offset: int) -> None:
        """Damage the stored batch holding ``offset`` (its CRC no longer
        matches): every Fetch that reaches it serves the damage."""
        with self.cond:
            b = self.log.batches[bisect.bisect_right(self.log.bases, offset) - 1]
            b.data = corrupt_first_batch(b.data)

    # ---------------------------------------------------------------- views

    def view_of(self, node_id: int) -> tuple[int, int]:
        """(epoch, leader id) as ``node_id`` knows them."""
        stale = self.nodes[node_id].stale_view
        return stale if stale is not None else (self.epoch, self.leader_id)


class FakeNode:
    """One controller: a listening socket and a thread per connection."""

    def __init__(self, quorum: FakeQuorum, node_id: int, profile: str, listener: Listener):
        self.quorum = quorum
        self.id = node_id
        self.profile = profile
        self.apis = PROFILES[profile]
        self.listener = listener
        self.faults: list[Fault] = []
        self.deny_cluster_action = False      # authorizer denies ClusterAction on Cluster
        self.deny_describe = False            # authorizer denies Describe on Cluster
        self.knows_endpoints = True           # it can put the leader's address in NodeEndpoints
        self.advertised: tuple[str, int] | None = None     # (host, port) others give for it
        self.stale_view: tuple[int, int] | None = None    # (epoch, leader) of a lagging node
        self.resigning = False                # leader shutting down: BROKER_NOT_AVAILABLE
        self.requests: list[tuple[int, int]] = []          # (api key, version) received
        self.fetches: list = []                            # decoded Fetch requests received
        self.errors: list[str] = []                        # the fake's own failures (should stay empty)
        self.sock: socket.socket | None = None
        self.port = 0
        self.conns: set[socket.socket] = set()
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()
        self.stopping = False

    def __repr__(self):
        return f"FakeNode({self.id}@127.0.0.1:{self.port}, {self.profile})"

    @property
    def address(self) -> str:
        return f"{self.id}@127.0.0.1:{self.port}"

    # ---------------------------------------------------------------- sockets

    def start(self) -> None:
        self.stopping = False
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(16)
        sock.settimeout(0.1)
        self.sock, self.port = sock, sock.getsockname()[1]
        t = threading.Thread(target=self._accept_loop, name=f"fake-kraft-{self.id}", daemon=True)
        t.start()
        self.threads.append(t)

    def stop(self) -> None:
        """Close the listener and every connection; join the threads (the
        port stays known so ``start()`` can bring the node back)."""
        self.stopping = True
        if self.sock is not None:
            self.sock.close()
        self.drop_connections()
        with self.quorum.cond:
            self.quorum.cond.notify_all()
        for t in self.threads:
            t.join(timeout=5)
        self.threads = [t for t in self.threads if t.is_alive()]

    def drop_connections(self) -> None:
        """Close every open client connection now (even one parked in a long poll)."""
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _accept_loop(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True,
                                 name=f"fake-kraft-{self.id}-conn")
            with self.lock:
                self.conns.add(conn)
                self.threads = [x for x in self.threads if x.is_alive()]
                self.threads.append(t)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        sock = conn
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(None)
            if self.listener.tls is not None:
                conn.settimeout(5)
                sock = self.listener.tls.wrap_socket(conn, server_side=True)
                sock.settimeout(None)
                with self.lock:
                    self.conns.add(sock)
            Connection(self, sock).run()
        except (Closed, OSError, ssl.SSLError):
            pass
        except Exception as e:    # a bug in the fake: recorded for the test, never a hang
            self.errors.append(repr(e))
        finally:
            with self.lock:
                self.conns.discard(conn)
                self.conns.discard(sock)
            try:
                sock.close()
            except OSError:
                pass

    def take_fault(self, api_key: int) -> Fault | None:
        with self.lock:
            for i, f in enumerate(self.faults):
                if f.matches(api_key):
                    return self.faults.pop(i)
        return None


class Connection:
    """One client connection: requests handled serially (section 1.1)."""

    def __init__(self, node: FakeNode, sock: socket.socket):
        self.node = node
        self.quorum = node.quorum
        self.sock = sock
        self.authenticated = not node.listener.sasl
        self.mechanism: str | None = None
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
            if fault and fault.action in ("drop-before", "drop-after"):
                # "before": the request never reaches the handler; "after": it is read and lost
                return
            if fault and fault.action == "delay":
                time.sleep(fault.seconds)
            self.corrupt = bool(fault and fault.action == "corrupt")
            reply = self.handle(msg, key, version)
            if reply is None:   # unsupported version or a request out of turn: close (section 1.1)
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
                   DESCRIBE_QUORUM: self.describe_quorum, SASL_HANDSHAKE: self.sasl_handshake,
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
        req = SaslHandshakeRequest.decode(msg, version=version, header=True)
        mechanisms = list(self.node.listener.mechanisms)
        error = NONE
        if not self.node.listener.sasl or self.authenticated:
            error = ILLEGAL_SASL_STATE
        elif req.mechanism not in mechanisms:
            error = UNSUPPORTED_SASL_MECHANISM
        else:
            self.mechanism = req.mechanism
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
        return [(leader, *(target.advertised or ("127.0.0.1", target.port)))]

    def fetch(self, msg: bytes, version: int) -> bytes:
        req = FetchRequest.decode(msg, version=version, header=True)
        node, q = self.node, self.quorum
        node.fetches.append(req)
        q.fetch_count += 1
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
        return {"records": log.read(offset)}

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
                DescribeQuorumResponse.Node.Listener(name=node.listener.name, host="127.0.0.1",
                                                     port=n.port)]) for i, n in sorted(q.nodes.items())]
        topic = DescribeQuorumResponse.TopicData(topic_name=METADATA_TOPIC, partitions=[part])
        resp = DescribeQuorumResponse(version=version, error_code=NONE, topics=[topic], nodes=nodes)
        resp.with_header(corr)
        return resp.encode(header=True, framed=True)


def _valid_software(text: str | None) -> bool:
    return bool(text) and re.fullmatch(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?", text) is not None


def corrupt_first_batch(records: bytes) -> bytes:
    """Flip one byte in the middle of the first record batch: a CRC
    mismatch on the wire, the framing left intact."""
    if len(records) < HEADER_SIZE:
        return records
    length = struct.unpack_from(">i", records, 8)[0]
    out = bytearray(records)
    out[min(len(out), LOG_OVERHEAD + length) - 1 - max(0, (length - HEADER_SIZE) // 2)] ^= 0xFF
    return bytes(out)


def noop_records(n: int = 1) -> list[Out]:
    """``n`` NoOpRecords (what an idle KRaft leader appends every 500 ms)."""
    return [record("NoOpRecord") for _ in range(n)]
