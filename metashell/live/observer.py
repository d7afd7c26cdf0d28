"""Following a controller quorum as a Raft observer: the I/O around
:class:`~.state.Follower`.

:meth:`Observer.events` connects (ApiVersions, SASL), long-polls Fetch as
ReplicaId -1 on the leader, downloads a snapshot when the leader points to
one, and yields what the state machine releases. Leader discovery goes
through any voter (CurrentLeader and, from 3.9, NodeEndpoints); failures
back off (50 ms doubling to 2 s, +-20 % jitter) and rotate over the
addresses given, and a controller that keeps pointing elsewhere is backed
off from too. Before catch-up, ``timeout`` seconds without a successful
Fetch is fatal; after it, losing the quorum is a status (an election is
one too), and fatal only when the config is not ``persistent`` (one-shot
commands).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator

from ..errors import CorruptDataError, LiveError
from ..kraft.batch import BatchScanner
from ..kraft.primitives import uuid_to_str
from . import protocol as p
from .addresses import Controller
from .events import LiveConfig, NoticeEvent, StatusEvent
from .state import FetchAnswer, Follower, Step, check_top_level, error_name
from .transport import Connection, Unreachable

SNAPSHOT_CHUNK = 8 << 20
DEFAULT_REQUEST_TIMEOUT = 5.0
PENDING_WAIT_MS = 25            # the first wait while uncommitted records are held (Fetch < v18)
_ZERO_UUID = bytes(16)


class Backoff:
    """50 ms doubling to 2 s, each delay +-20 % so observers do not march in step."""

    def __init__(self, first: float = 0.05, cap: float = 2.0):
        self.first, self.cap = first, cap
        self.next = first

    def delay(self) -> float:
        d = self.next * random.uniform(0.8, 1.2)
        self.next = min(self.cap, self.next * 2)
        return d

    def reset(self) -> None:
        self.next = self.first


class Observer:
    """Reads a running quorum's ``__cluster_metadata`` log (see the package
    docstring for the events); ``close()`` and ``describe_quorum()`` may be
    called from other threads."""

    def __init__(self, config: LiveConfig):
        if not config.controllers:
            raise LiveError("no controller given")
        self.config = config
        self._follower = Follower(config.controllers)
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._open: set[Connection] = set()
        self._conn: Connection | None = None
        self._rotation = 0
        self._use_leader = False
        self._tried: dict[str, str] = {}
        self._pending_wait = PENDING_WAIT_MS
        self._answers = 0                      # follower.answers when last accounted for
        self._unreachable = False              # the last step reached no controller
        self._backoff = Backoff()
        self._request_timeout = config.request_timeout or DEFAULT_REQUEST_TIMEOUT
        self._last_ok = time.monotonic()
        self.status: StatusEvent = self._follower.status()

    # -- the loop ----------------------------------------------------------

    def events(self) -> Iterator:
        follower = self._follower
        self._last_ok = self.config.started or time.monotonic()
        try:
            while not self._closed.is_set():
                node = self._target()
                if self._conn is None or self._conn.controller.hostport != node.hostport:
                    follower.connecting(str(node))
                    yield from self._status()
                action, events = self._step(node)
                while events:
                    yield events.pop(0)
                while follower.warnings:
                    yield NoticeEvent(follower.warnings.pop(0))
                self._account(node, action)
                yield from self._status()
                self._move(action)
                if action != "fetch":
                    self._check_deadline()
                if action == "rotate" or (action == "leader" and follower.redirects > 1):
                    self._pause()
        finally:
            self._drop()

    def _account(self, node: Controller, action: str) -> None:
        """After a step: a good answer starts the wait and the back-off
        again; a failure is remembered for the error that gives up."""
        follower = self._follower
        if follower.answers != self._answers:
            self._answers = follower.answers
            self._last_ok = time.monotonic()
            self._backoff.reset()
            self._tried.clear()
        elif action != "fetch":
            self._tried[str(node)] = follower.detail or "no answer"
            if follower.unanswered == 0 and self._unreachable:
                self._backoff.reset()   # answering again (an election): look often
        self._unreachable = follower.unanswered > 0

    def _step(self, node: Controller) -> tuple[str, list]:
        """One request to ``node`` (a snapshot download counts as one):
        what to do next and the events it released."""
        follower = self._follower
        try:
            conn = self._connection(node)
            step = follower.on_fetch(self._fetch(conn), conn.controller)
            leader = follower.leader
            if leader is not None and leader.hostport == conn.controller.hostport:
                conn.controller = leader        # name it as the quorum does
            if step.action == "snapshot":
                step = self._download(conn, *step.snapshot)
        except Unreachable as e:
            self._drop()
            if not self._closed.is_set():
                follower.on_no_connection(str(node), str(e))
            return "rotate", []
        return step.action, step.events   # a snapshot's buffer is the consumer's once yielded

    def _status(self):
        status = self._follower.status()
        if status != self.status:
            self.status = status
            yield status

    def _move(self, action: str) -> None:
        """Where the next request goes: the leader when it is known and
        reachable, else the next address given (the rotation)."""
        if action == "fetch":
            self._use_leader = True
            return
        self._use_leader = action == "leader" and self._follower.leader is not None
        if not self._use_leader:
            self._rotation += 1

    def _target(self) -> Controller:
        leader = self._follower.leader
        if self._use_leader and leader is not None:
            return leader
        controllers = self.config.controllers
        return controllers[self._rotation % len(controllers)]

    def _give_up_at(self) -> float:
        """When to stop trying: ``timeout`` after the last good answer while
        catching up, or, unless ``persistent``, after catch-up too."""
        if self._follower.caught_up and self.config.persistent:
            return float("inf")
        return self._last_ok + self.config.timeout

    def _pause(self) -> None:
        """Back off before the next attempt, never past the time to give up."""
        left = self._give_up_at() - time.monotonic()
        self._closed.wait(max(0.0, min(self._backoff.delay(), left)))
        self._check_deadline()

    def _check_deadline(self) -> None:
        if self._closed.is_set() or time.monotonic() < self._give_up_at():
            return
        tried = "; ".join(dict.fromkeys(self._tried.values()))
        follower = self._follower
        what = "answered a Fetch" if not follower.answers else "answered a Fetch again"
        lost = ("lost the quorum" + (" (an election without a winner)" if follower.electing else "")
                + ": " if follower.caught_up else "")
        raise LiveError(f"{lost}no controller {what} within {self.config.timeout:g} s "
                        f"(tried {tried or follower.detail or 'nothing'})")

    def _deadline(self, wait: float = 0.0) -> float:
        """A request's deadline: its wait and the request timeout, but never
        past the time to give up."""
        now = time.monotonic()
        return min(now + wait + self._request_timeout, max(self._give_up_at(), now + 0.05))

    # -- connections -------------------------------------------------------

    def _connection(self, node: Controller) -> Connection:
        conn = self._conn
        if conn is not None and conn.controller.hostport == node.hostport:
            return conn
        self._drop()
        conn = self._register(Connection(node, self.config.security))
        self._conn = conn
        conn.open(self._deadline())
        return conn

    def _register(self, conn: Connection) -> Connection:
        with self._lock:
            self._open.add(conn)
        if self._closed.is_set():
            conn.close()
        return conn

    def _release(self, conn: Connection) -> None:
        with self._lock:
            self._open.discard(conn)
        conn.close()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._release(conn)

    def close(self) -> None:
        """Ends :meth:`events` (it returns within about a second) and any
        request in flight."""
        self._closed.set()
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            conn.close()

    # -- requests ----------------------------------------------------------

    def _fetch(self, conn: Connection) -> FetchAnswer:
        version = conn.versions[p.FETCH]
        wait = self._wait_ms(version)
        request = p.fetch_request(version, **self._follower.fetch_fields(), max_wait_ms=wait,
                                  cluster_id=self.config.cluster_id)
        response = conn.request(p.FETCH, request, self._deadline(wait / 1000))
        return FetchAnswer.of(response)

    def _wait_ms(self, version: int) -> int:
        """The long poll's wait. Before Fetch v18 (Kafka 4.1, KIP-1166) a
        leader answers a parked Fetch only for new records or at the end of
        the wait, not when the high watermark moves: records held but not yet
        committed would wait up to the whole 500 ms to be shown. So while some
        are held, ask again sooner (25 ms, doubling up to the full wait, so a
        tail that stays uncommitted costs few requests)."""
        full = self.config.max_wait_ms
        if version >= 18 or not self._follower.pending:
            self._pending_wait = PENDING_WAIT_MS
            return full
        wait = min(self._pending_wait, full)
        self._pending_wait = min(self._pending_wait * 2, full)
        return wait

    def _download(self, conn: Connection, end_offset: int, epoch: int) -> Step:
        """FetchSnapshot in chunks into one buffer of the announced size; a
        leader change or a vanished snapshot drops it (Fetch then names the
        snapshot to get, from the new leader)."""
        follower, addr = self._follower, conn.controller
        version = conn.versions.get(p.FETCH_SNAPSHOT)
        buf: bytearray | None = None
        position = 0
        while True:
            request = p.fetch_snapshot_request(
                version, leader_epoch=follower.epoch, end_offset=end_offset, epoch=epoch,
                position=position, max_bytes=SNAPSHOT_CHUNK, cluster_id=self.config.cluster_id)
            correlation, frame = conn.request_frame(p.FETCH_SNAPSHOT, request, self._deadline())
            chunk = p.snapshot_chunk(frame)
            if chunk is None:
                return self._snapshot_refused(conn.decode(p.FETCH_SNAPSHOT, correlation, frame), addr)
            got, size, at, records = chunk
            conn.check_correlation(correlation, got)
            if buf is None:
                buf = bytearray(size)
            if at != position or size != len(buf) or position + len(records) > size:
                raise LiveError(f"{addr}: FetchSnapshot answer for snapshot {end_offset}-{epoch} at byte "
                                f"{position} holds {len(records)} bytes at position {at} "
                                f"of a {size}-byte snapshot ({len(buf)} bytes announced first)")
            buf[position:position + len(records)] = records
            position += len(records)
            self._last_ok = time.monotonic()      # a chunk is an answer: the wait starts again
            del records, chunk, frame
            if position == len(buf):
                break
        source = f"snapshot {end_offset:020d}-{epoch:010d} from controller {addr}"
        _check_batches(buf, source)
        return Step("fetch", follower.on_snapshot(end_offset, epoch, buf, source))

    def _snapshot_refused(self, response, addr: Controller) -> Step:
        """A FetchSnapshot answer with an error (or without records): give
        up this download; a leader change is handled as for Fetch."""
        follower = self._follower
        if response.error_code != p.NONE or not response.topics or not response.topics[0].partitions:
            check_top_level(response.error_code, addr, "FetchSnapshot")
            return follower.on_fetch(FetchAnswer(error=response.error_code or p.UNKNOWN_SERVER_ERROR,
                                                 top_level=True), addr)
        part = response.topics[0].partitions[0]
        if part.error_code in (p.NONE, p.SNAPSHOT_NOT_FOUND, p.POSITION_OUT_OF_RANGE):
            # the snapshot is gone (or the answer is odd): back off; the next
            # Fetch names the snapshot to get now
            what = error_name(part.error_code) if part.error_code else "an empty chunk"
            follower.on_unreachable(f"{addr}: FetchSnapshot: {what}")
            return Step("rotate")
        leader = part.current_leader
        endpoints = {e.node_id: (e.host, e.port) for e in (getattr(response, "node_endpoints", None) or ())}
        return follower.on_fetch(FetchAnswer(
            error=part.error_code, endpoints=endpoints,
            leader=(leader.leader_id, leader.leader_epoch) if leader is not None else None), addr)

    # -- the quorum's own view ---------------------------------------------

    def describe_quorum(self) -> dict:
        """DescribeQuorum on a connection of its own to the leader."""
        leader = self._follower.leader
        candidates = ([leader] if leader is not None else []) + [
            c for c in self.config.controllers if leader is None or c.hostport != leader.hostport]
        tried = []
        for node in candidates:
            deadline = time.monotonic() + self._request_timeout
            conn = self._register(Connection(node, self.config.security))
            try:
                conn.open(deadline)
                version = conn.versions.get(p.DESCRIBE_QUORUM)
                if version is None:
                    tried.append(f"{node}: no DescribeQuorum API")
                    continue
                response = conn.request(p.DESCRIBE_QUORUM, p.describe_quorum_request(version), deadline)
                cluster_id = _cluster_id(conn, deadline)
            except Unreachable as e:
                tried.append(f"{node}: {e}")
                continue
            finally:
                self._release(conn)
            if response.error_code == p.CLUSTER_AUTHORIZATION_FAILED:
                raise LiveError(f"{node}: DescribeQuorum refused with CLUSTER_AUTHORIZATION_FAILED: the "
                                "principal needs Describe on the Cluster resource")
            part = (response.topics[0].partitions[0]
                    if response.error_code == p.NONE and response.topics and response.topics[0].partitions
                    else None)
            if part is None or part.error_code != p.NONE:
                code = part.error_code if part is not None else response.error_code
                tried.append(f"{node}: {error_name(code)}")
                continue
            return dict(_quorum_view(response, part, node), clusterId=cluster_id)
        raise LiveError("DescribeQuorum: no controller answered as leader (" + "; ".join(tried) + ")")


def _cluster_id(conn: Connection, deadline: float) -> "str | None":
    """The cluster id a controller gives in DescribeCluster (3.7+; None where
    it has no such API or refuses: the quorum's view does not need it)."""
    if conn.versions.get(p.DESCRIBE_CLUSTER) is None:
        return None
    answer = conn.request(p.DESCRIBE_CLUSTER,
                          p.describe_cluster_request(conn.versions[p.DESCRIBE_CLUSTER]), deadline)
    return answer.cluster_id if answer.error_code == p.NONE else None


def _check_batches(buf, source: str) -> None:
    """A downloaded snapshot is whole batches with good CRCs, or an error
    worded as for a file."""
    scanner = BatchScanner(buf, source)
    try:
        for _ in scanner:
            pass
    except CorruptDataError as e:
        raise LiveError(str(e)) from None
    if scanner.end_reason != "end":
        raise LiveError(f"{source} (byte {scanner.end_position}): whole record batches up to the end "
                        f"of the snapshot, found a {scanner.end_reason} end")


def _replica(state) -> dict:
    directory = getattr(state, "replica_directory_id", None)
    raw = directory.bytes if directory is not None else _ZERO_UUID
    return {"replicaId": state.replica_id,
            "replicaDirectoryId": uuid_to_str(raw) if raw != _ZERO_UUID else None,
            "logEndOffset": state.log_end_offset,
            "lastFetchTimestamp": getattr(state, "last_fetch_timestamp", -1),
            "lastCaughtUpTimestamp": getattr(state, "last_caught_up_timestamp", -1)}


def _quorum_view(response, part, node: Controller) -> dict:
    answered = node if node.id is not None else Controller(part.leader_id, node.host, node.port)
    return {
        "leaderId": part.leader_id, "leaderEpoch": part.leader_epoch, "highWatermark": part.high_watermark,
        "answeredBy": str(answered),
        "voters": [_replica(v) for v in part.current_voters],
        "observers": [_replica(o) for o in part.observers],
        "nodes": [{"nodeId": n.node_id,
                   "listeners": [{"name": lst.name, "host": lst.host, "port": lst.port} for lst in n.listeners]}
                  for n in (getattr(response, "nodes", None) or ())],
    }
