"""An in-process fake KRaft controller quorum on loopback, for live-mode tests.

The fake follows what ``shared/reference/kraft-live-protocol.md`` documents
of Kafka's controllers (section numbers below refer to it) so that the
observer under test meets the behaviour of a real quorum: per-release API
ranges, the leader's Fetch check order, snapshots, long polls, failovers.
It shares no code with the observer: messages are encoded and decoded with
kafka-python 3.x's JSON-generated ``kafka.protocol`` classes (section 3.2)
and, for FetchSnapshot, by ``fake_kraft_wire``.

Modules: ``fake_kraft`` (this one: the quorum, its nodes and the knobs),
``fake_kraft_server`` (answering requests), ``fake_kraft_log`` (the log,
its epoch cache and snapshots), ``fake_kraft_wire`` (frames, headers,
FetchSnapshot), ``fake_kraft_security`` (SASL and TLS), and
``fake_kraft_follow`` (running the observer under test against it).

One :class:`FakeQuorum` holds the leader's log (whole record batches with
their offsets and epochs), its snapshots, the high watermark, the epoch and
the leader; each :class:`FakeNode` listens on 127.0.0.1 or ::1 (port 0) and
answers from its own view of the quorum. Tests drive it precisely:
``append`` batches, ``commit`` (advance the high watermark), ``failover``,
``truncate_to_snapshot``, and per-node fault knobs. Every connection runs in
its own thread and handles one request at a time, like Kafka's muted
channels (section 1.1).
"""

from __future__ import annotations

import bisect
import socket
import ssl
import threading
import time
from pathlib import Path

from tests.support.fake_kraft_log import MAX_FETCH_BYTES, RaftLog, corrupt_first_batch, rebase, split_batches
from tests.support.fake_kraft_server import (METADATA_TOPIC, METADATA_TOPIC_ID, PROFILES, Connection, Fault,
                               Listener)
from tests.support.fake_kraft_wire import Closed
from metashell.kraft.batch import HEADER as BATCH_HEADER
from metashell.kraft.writer import LogWriter, Out
from tests.support.records import noop

__all__ = ["FakeQuorum", "FakeNode", "Listener", "Fault", "PROFILES", "METADATA_TOPIC",
           "METADATA_TOPIC_ID", "split_batches", "noop_records"]


class FakeQuorum:
    """Several fake controllers sharing one log; see the module docstring.

    ``profile``: one release name (``PROFILES``) for all nodes, or a dict
    of one per node id. ``listener``: the security of every node's listener.
    ``host``: 127.0.0.1, or ::1 for IPv6."""

    def __init__(self, voters: int = 3, *, profile="4.1", cluster_id: str = "MkU3OEVBNTcwNTJENDM2Qg",
                 listener: Listener | None = None, leader_id: int = 1, epoch: int = 1,
                 first_id: int = 1, host: str = "127.0.0.1"):
        ids = list(range(first_id, first_id + voters))
        profiles = profile if isinstance(profile, dict) else {i: profile for i in ids}
        self.cluster_id = cluster_id
        self.log = RaftLog()
        self.hwm = 0              # what the current leader reports (-1: it does not know yet)
        self.committed = 0        # the quorum's real commit point: never goes back
        # bytes a Fetch answer reads: 8 MiB up to at least 4.0; newer leaders may honour
        # the request's MaxBytes (section 1.2), so tests may make answers small
        self.max_fetch_bytes = MAX_FETCH_BYTES
        self.epoch = epoch
        self.leader_id = leader_id
        self.cond = threading.Condition()
        self.listener = listener or Listener()
        self.nodes = {i: FakeNode(self, i, profiles[i], self.listener, host) for i in ids}
        # a broker following the log: DescribeQuorum lists observers that have an id
        self.observers = [{"replicaId": 100, "logEndOffset": -1}]
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
        return ",".join((f"{i}@" if with_ids else "") + self.nodes[i].hostport for i in ids)

    # ---------------------------------------------------------------- content

    @classmethod
    def from_logdir(cls, path, **kw) -> "FakeQuorum":
        """A quorum whose leader serves a real metadata log dir: its
        snapshot files' bytes as its snapshots (the newest is the one
        SnapshotId names), its segments' batches as the log, everything
        committed. A bootstrap checkpoint alone (no partition
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

    def forget_leader(self) -> None:
        """Every voter restarted: they are back at the same epoch but none
        knows its leader until the next election; a Fetch gets
        NOT_LEADER_OR_FOLLOWER with CurrentLeader{-1, epoch}, as a real
        controller restarted at an epoch whose leader it cannot reach answers."""
        with self.cond:
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

    def __init__(self, quorum: FakeQuorum, node_id: int, profile: str, listener: Listener,
                 host: str = "127.0.0.1"):
        self.quorum = quorum
        self.host = host
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
        return f"FakeNode({self.address}, {self.profile})"

    @property
    def address(self) -> str:
        return f"{self.id}@{self.hostport}"

    @property
    def hostport(self) -> str:
        """``127.0.0.1:9093`` or ``[::1]:9093``."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    # ---------------------------------------------------------------- sockets

    def start(self) -> None:
        self.stopping = False
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
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


def noop_records(n: int = 1) -> list[Out]:
    """``n`` NoOpRecords (what an idle KRaft leader appends every 500 ms)."""
    return [noop() for _ in range(n)]
