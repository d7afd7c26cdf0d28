"""A session that follows a live KRaft controller quorum (``-C``).

The same surface as the file :class:`~metashell.session.files.Session` (root,
image, engine, counts, summary, changes), fed by
:class:`metashell.live.Observer` in one background thread, the
follower:

* a ``SnapshotEvent`` is replayed into a new engine outside the lock (the
  shell keeps answering from the old image meanwhile), then swapped in;
* a ``CommittedEvent`` (whole batches, all committed) is applied to the
  current engine under the lock;
* a ``StatusEvent`` updates the state the prompt and ``summary`` show; the
  first ``following`` state means caught up (one-shot mode runs then).

Consistency: the follower holds :attr:`LiveSession.lock` for each event it
applies and each command holds it while it runs (``consistent()``), so a
command sees whole batches and whole transactions (the engine applies a
transaction at its End record), never half of a change. ``watch`` does not
hold it: it gets the changes through a queue (:meth:`subscribe`).

``--until-offset`` / ``--until-time``: once the engine reaches the limit,
following stops (the observer is closed); what was applied stays.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import replace
from contextlib import contextmanager
from typing import Callable

from ..buildinfo import local_entries
from ..errors import MetashellError
from ..fs.entities import entity_path
from ..fs.root import build_root
from ..gcpause import no_cyclic_gc
from ..live import CommittedEvent, NoticeEvent, SnapshotEvent
from ..loader.log_walk import Fetched
from ..loader.reader import FileReader
from ..queries.describe import describe
from ..replay.engine import ReplayEngine
from ..timefmt import iso_time
from .files import ImageSession
from .findings import Findings
from .loading import Loader

BACKLOG = 10_000     # changes kept between catch-up and the first `watch`
LOG_KEPT = 256 << 20   # bytes of the fetched log kept for `log` (the oldest batches go first)
DESCRIBE_TTL = 1.0   # seconds a DescribeQuorum answer is reused (one `tree /` asks once)
STATES = {"connecting": "connecting", "catching-up": "catching up", "election": "election",
          "lost": "quorum lost"}


class LiveSession(ImageSession):
    """The image of a live quorum, kept up to date by the follower thread."""

    def __init__(self, config, observer, *, until_offset: int | None = None,
                 until_time: int | None = None, show_secrets: bool = False,
                 progress: Callable[[int, int], None] | None = None,
                 notify: Callable[[str], None] | None = None, observer_factory=None,
                 limit_option: str = "--until-offset"):
        source = "controllers " + ",".join(str(c) for c in config.controllers)
        super().__init__(source, ReplayEngine(until_offset=until_offset, until_time=until_time),
                         [], show_secrets)
        self.engine.on_change = self._on_change
        self.config = config
        self.observer = observer
        self.until_offset, self.until_time = until_offset, until_time
        self.progress = progress
        self.notify = notify            # one-line notes on the state after catch-up (one-shot mode)
        self.observer_factory = observer_factory   # for a second session (diff --from-offset)
        self.limit_option = limit_option           # the option named when until_offset is out of reach
        self.lock = threading.RLock()
        self.caught_up = threading.Event()
        self.status = None              # the latest StatusEvent
        self.error: MetashellError | None = None   # why following stopped, if it failed
        self.stopped = False            # the follower ended (error, limit or close)
        self._subscribers: list[queue.SimpleQueue] = []
        # (key, record) of the changes applied after catch-up, until the first
        # command ends or a `watch` takes them: a one-shot `watch` must not miss
        # what came before it ran
        self._backlog: deque | None = None
        self._problems: list[str] = []  # problems of every image so far, as reported
        self._engine_problems = 0       # how many of the current engine's were taken
        self._described = (0.0, None)   # (monotonic time, quorum view)
        # what was fetched, for `log`: the latest snapshot, the log's batches since
        # (each event's whole batches, oldest first), and what was let go of them
        self._fetched_snapshot: SnapshotEvent | None = None
        self._fetched: deque = deque()
        self._fetched_bytes = 0
        self._dropped = (0, 0)          # (events, bytes) no longer kept
        self.root = build_root(self.image, show_secrets=show_secrets, local=self._local(),
                               live=self.quorum_view)
        self._thread = threading.Thread(target=self._follow, name="metashell-follower",
                                        daemon=True)

    def _local(self) -> dict:
        return {**local_entries(), "source": self.source,
                "clusterId": self.config.cluster_id, "counts": self.counts}

    # -- life cycle ------------------------------------------------------------------

    def start(self) -> "LiveSession":
        self._thread.start()
        return self

    def wait_caught_up(self, poll: float = 0.1) -> None:
        """Block until the follower caught up (or reached the time-travel
        limit); raises the error that stopped it. Ctrl-C interrupts (the
        wait polls)."""
        while not self.caught_up.wait(poll):
            pass
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        """Stop following: the observer's events() returns within ~1 s; the
        thread is waited for that long at most (it is a daemon). Once it
        has ended, the tree and the engine's hook (``on_change``) are let
        go of: both hold this session, which holds them, and such a cycle
        would keep the image, its store and the bytes fetched alive until a
        full collection (loading leaves them in the oldest generation). A
        closed session is not used again; its image stays readable."""
        self.observer.close()
        self._thread.join(1.5)
        if not self._thread.is_alive():
            self.engine.on_change = None
            self.root = None

    @contextmanager
    def consistent(self):
        """Hold the image still for one command. After it, a `watch` starts
        from when it runs (the backlog since catch-up is dropped)."""
        with self.lock:
            try:
                yield
            finally:
                self._backlog = None

    def state(self) -> str | None:
        """What the prompt shows when the image is not following the quorum
        (None when it is)."""
        if self.error is not None:
            return "stopped"
        if self.stopped:
            return "stopped at the limit" if self.engine.reached_limit else "stopped"
        status = self.status
        if status is None:
            return "connecting"
        return STATES.get(status.state)

    # -- the follower thread -----------------------------------------------------------

    def _follow(self) -> None:
        try:
            for event in self.observer.events():
                if isinstance(event, CommittedEvent):
                    self._committed(event)
                elif isinstance(event, SnapshotEvent):
                    self._snapshot(event)
                elif isinstance(event, NoticeEvent):
                    with self.lock:
                        self._problems.append(event.text)
                else:
                    self._status(event)
                if self.engine.reached_limit:
                    break
        except MetashellError as e:      # LiveError included: one line
            self.error = e
        except Exception as e:           # a bug: still one line, and never a partial catch-up
            self.error = MetashellError(f"following the quorum stopped: {type(e).__name__}: {e}")
        finally:
            with self.lock:
                self.stopped = True
            for q in list(self._subscribers):
                q.put(None)
            self.caught_up.set()
            self.observer.close()

    def _snapshot(self, event) -> None:
        if self.until_offset is not None and event.end_offset - 1 > self.until_offset:
            raise MetashellError(
                f"{event.source}: {self.limit_option} {self.until_offset} is before the quorum's "
                f"snapshot, which ends at offset {event.end_offset - 1}; the leader no longer "
                "serves the log before it")
        # a new image, built while commands still see the old one (no on_change
        # hook: a snapshot is no list of changes, watch lists none of it)
        engine = ReplayEngine(until_offset=self.until_offset, until_time=self.until_time)
        engine.source = event.source
        # the progress bar counts offsets: a snapshot's bytes stand for its offsets
        progress = None if self.progress is None else \
            (lambda done, total: self._report(event.end_offset * done // max(total, 1)))
        with no_cyclic_gc():
            loader = Loader(len(event.data), progress)
            loader.apply_snapshot(engine, event.source, event.end_offset, event.epoch, True,
                                  buf=event.data)
        warnings = loader.ended.notes()
        engine.on_change = self._on_change
        with self.lock:
            self._take_problems()
            self._problems.extend(warnings)
            self._fetched_snapshot = event
            self.engine, self._engine_problems = engine, 0
            self.root.view.image = engine.image
            self._leader_fallback()
        self._report(event.end_offset)

    def _committed(self, event) -> None:
        # the observer checked every batch's CRC when it framed the Fetch answer
        reader = FileReader(event.source, buf=event.data, lazy=True, verify_crc=False)
        with self.lock:
            engine = self.engine
            engine.source = event.source
            for batch in reader:
                if not engine.apply_batch(batch):
                    break
            self._keep(event.data)
        self._report(event.last_offset + 1)

    # -- log ---------------------------------------------------------------------------

    def _keep(self, data: bytes) -> None:
        """Keep a committed event's batches for ``log`` (under the lock), the
        oldest let go past :data:`LOG_KEPT` bytes."""
        self._fetched.append(data)
        self._fetched_bytes += len(data)
        while self._fetched_bytes > LOG_KEPT and len(self._fetched) > 1:
            old = self._fetched.popleft()
            self._fetched_bytes -= len(old)
            self._dropped = (self._dropped[0] + 1, self._dropped[1] + len(old))

    def fetched_log(self, snapshots: bool = False) -> tuple[list, list[str]]:
        """What ``log`` reads of a live quorum: the log's batches fetched so
        far, in log order (after, with ``snapshots``, the snapshot the
        leader sent, if it sent one), as
        :class:`~metashell.loader.log_walk.Fetched`; and notes on what is
        no longer kept."""
        with self.lock:
            snap, chunks, dropped = self._fetched_snapshot, list(self._fetched), self._dropped
        out, notes = [], []
        if snapshots and snap is not None:
            out.append(Fetched(snap.source, bytes(snap.data)))
        out.append(Fetched(f"log fetched from {self.source}", b"".join(chunks)))
        if dropped[0]:
            notes.append(f"the first {dropped[1]:,} bytes of the log fetched are no longer kept "
                         f"(log keeps the last {LOG_KEPT >> 20} MiB)")
        return out, notes

    def _status(self, event) -> None:
        before = self.state()
        self.status = event
        with self.lock:
            self._leader_fallback()
        if event.state == "following" and not self.caught_up.is_set():
            with self.lock:
                self._backlog = deque(maxlen=BACKLOG)
            self.caught_up.set()
        elif self.caught_up.is_set() and self.notify is not None and self.state() != before:
            self.notify(self._state_note(event))
        connecting = getattr(self.progress, "connecting", None)
        if event.state == "connecting" and event.trying and connecting is not None:
            connecting(event.trying)     # "connecting to ..." until the first answer
        elif event.state != "connecting":
            self._report(event.committed_offset)

    def _state_note(self, event) -> str:
        """What a one-shot command says on stderr when the quorum goes away
        or comes back after catch-up."""
        if event.state == "election":
            return (f"election in progress (epoch {event.leader_epoch}, no leader yet); "
                    f"giving up after {self.config.timeout:g} s without one")
        if event.state == "lost":
            return (f"quorum lost ({event.detail}); giving up after {self.config.timeout:g} s "
                    "without an answer")
        return f"{STATES.get(event.state, event.state)}: leader {event.endpoint or event.leader_id}, " \
               f"epoch {event.leader_epoch}"

    def _leader_fallback(self) -> None:
        """While the log names no leader (no LeaderChange record since the
        snapshot), show the one the quorum named, as a file load shows the
        node's quorum-state."""
        s, q = self.status, self.engine.image.quorum
        if s is not None and s.leader_id >= 0 and q.leader_id < 0:
            q.leader_id = s.leader_id
            q.leader_epoch = max(q.leader_epoch, s.leader_epoch)

    def _report(self, committed: int) -> None:
        """Catching-up progress: offsets applied of the high watermark."""
        if self.progress is None or self.caught_up.is_set():
            return
        status = self.status
        hwm = status.high_watermark if status is not None else -1
        self.progress(max(committed, 0), max(hwm, committed, 0))

    # -- watch -------------------------------------------------------------------------

    def subscribe(self, backlog: bool = False) -> queue.SimpleQueue:
        """A queue that receives each change applied from now on, as a dict
        (offset, time, type, path, summary), and None when following stops.
        With ``backlog``, the first subscriber also gets the changes applied
        since catch-up (the last BACKLOG of them)."""
        q: queue.SimpleQueue = queue.SimpleQueue()
        with self.lock:
            if backlog and self._backlog:
                for key, rec in self._backlog:
                    q.put(self._change(key, rec))
            self._backlog = None
            self._subscribers.append(q)
            if self.stopped:
                q.put(None)
        return q

    def unsubscribe(self, q: queue.SimpleQueue) -> None:
        with self.lock:
            if q in self._subscribers:
                self._subscribers.remove(q)

    def _on_change(self, key: tuple, rec) -> None:
        """The engine's hook: runs in the follower, under the lock."""
        if self._backlog is not None:
            self._backlog.append((key, rec))
        if self._subscribers:
            change = self._change(key, rec)
            for q in self._subscribers:
                q.put(change)

    def _change(self, key: tuple, rec) -> dict:
        return {"offset": rec.offset, "time": iso_time(rec.timestamp), "type": rec.name,
                "path": entity_path(self.engine.image, key),
                "summary": describe(rec, self.show_secrets)}

    # -- diff -------------------------------------------------------------------------

    def baseline(self, *, from_offset: int | None = None, from_time: int | None = None,
                 against=None, rewinding: bool = True):
        """``diff``'s other side. ``--against`` opens files as for ``-s``;
        ``--from-offset`` / ``--from-time`` follow the same quorum again, in
        a session of their own, up to that point (the leader serves the
        log from its newest snapshot on, so an earlier point is an error
        naming where the snapshot ends)."""
        if against is not None:
            return super().baseline(against=against)
        other = open_live_session(
            replace(self.config, persistent=False), until_offset=from_offset, until_time=from_time,
            show_secrets=self.show_secrets, observer_factory=self.observer_factory,
            limit_option="--from-offset")
        try:
            other.engine.settle()
            findings = Findings()
            findings.extend(other.warnings, problems=False)
            findings.extend(other.new_problems(len(other.warnings)), problems=True)
            return other.image, findings
        finally:
            other.close()

    # -- problems ----------------------------------------------------------------------

    def _take_problems(self) -> None:
        """Move the current engine's new problems to the session's list (the
        engine is replaced by the next snapshot, the list stays)."""
        problems = self.engine.problems
        if len(problems) > self._engine_problems:
            self._problems.extend(str(p) for p in problems[self._engine_problems:])
            self._engine_problems = len(problems)

    def new_problems(self, since: int) -> list[str]:
        with self.lock:
            self._take_problems()
            return self._problems[since:]

    # -- the quorum's view -------------------------------------------------------------

    def status_fields(self) -> dict:
        """The observer's own view: state, high watermark, what was applied."""
        s = self.status
        if s is None:
            return {"state": "connecting"}
        return {"state": self.state() or s.state, "highWatermark": s.high_watermark,
                "committedOffset": s.committed_offset, "endpoint": s.endpoint}

    def summary(self, static_min_isr=None) -> dict:
        data = super().summary(static_min_isr)
        data["quorum"].update(self.status_fields())
        return data

    def quorum_view(self) -> dict:
        """``/metadataQuorum/live``: DescribeQuorum's answer (asked at most
        once a second) with lags and ISO-8601 times, and the observer's own
        state. A failed DescribeQuorum shows as ``error``."""
        at, view = self._described
        if view is None or time.monotonic() - at > DESCRIBE_TTL:
            view = dict(self.status_fields())
            try:
                view.update(quorum_fields(self.observer.describe_quorum()))
            except MetashellError as e:
                # no leader to ask (an election) or no answer: what the observer knows;
                # once the quorum is lost, no leader (-1, as DescribeQuorum says of none),
                # not the last one it had
                s = self.status
                if s is not None:
                    lost = self.state() in ("quorum lost", "stopped")
                    view.update(leaderId=-1 if lost else s.leader_id, leaderEpoch=s.leader_epoch)
                view["error"] = str(e)
            self._described = (time.monotonic(), view)
        return view


def quorum_fields(d: dict) -> dict:
    """DescribeQuorum's answer as the tree shows it: voters by id and
    observers as a list, each with its lag behind the leader's log end and
    its last fetch / caught-up times in ISO-8601."""
    leader = d.get("leaderId", -1)
    voters = d.get("voters", [])
    leader_end = next((v["logEndOffset"] for v in voters if v["replicaId"] == leader), -1)
    if leader_end < 0:
        leader_end = d.get("highWatermark", -1)

    listeners = {n["nodeId"]: n["listeners"] for n in d.get("nodes") or ()}

    def endpoints(node_id: int) -> dict:
        """A voter's listeners where DescribeQuorum v2+ (Kafka 3.9+) names them."""
        return {"endpoints": listeners[node_id]} if node_id in listeners else {}

    def replica(r: dict) -> dict:
        end = r.get("logEndOffset", -1)
        return {"directoryId": r.get("replicaDirectoryId"), "logEndOffset": end,
                "lag": leader_end - end if end >= 0 and leader_end >= 0 else None,
                "lastFetchTime": iso_time(r.get("lastFetchTimestamp", -1)),
                "lastCaughtUpTime": iso_time(r.get("lastCaughtUpTimestamp", -1))}

    return {
        "clusterId": d.get("clusterId"),
        "leaderId": leader, "leaderEpoch": d.get("leaderEpoch", -1),
        "highWatermark": d.get("highWatermark", -1), "answeredBy": d.get("answeredBy"),
        **follower_lag(leader, voters),
        "voters": {str(v["replicaId"]): dict(replica(v), **endpoints(v["replicaId"])) for v in voters},
        "observers": [{"replicaId": o["replicaId"], **replica(o)} for o in d.get("observers", [])],
    }


def follower_lag(leader_id: int, voters: list) -> dict:
    """``maxFollowerLag`` and ``maxFollowerLagTimeMs`` as kafka-metadata-quorum
    describe --status says them: the voter with the smallest log end offset
    (the first such in the quorum's order), its offsets behind the leader's
    and the ms between the leader's and its last caught-up times (0 when
    that voter is the leader, -1 when a time is unknown)."""
    leader = next((v for v in voters if v["replicaId"] == leader_id), None)
    if leader is None or not voters:
        return {"maxFollowerLag": None, "maxFollowerLagTimeMs": None}
    behind = min(voters, key=lambda v: v.get("logEndOffset", -1))
    lag = leader.get("logEndOffset", -1) - behind.get("logEndOffset", -1)
    if behind is leader:
        lag_ms = 0
    else:
        times = leader.get("lastCaughtUpTimestamp", -1), behind.get("lastCaughtUpTimestamp", -1)
        lag_ms = times[0] - times[1] if min(times) >= 0 else -1
    return {"maxFollowerLag": lag, "maxFollowerLagTimeMs": lag_ms}


def open_live_session(config, *, until_offset: int | None = None, until_time: int | None = None,
                      show_secrets: bool = False, progress=None, notify=None,
                      observer_factory=None, limit_option: str = "--until-offset") -> LiveSession:
    """Start following the quorum of ``config`` (a ``LiveConfig``) and wait
    until caught up. Raises ``LiveError`` (one line) when that fails."""
    if observer_factory is None:
        from ..live import Observer as observer_factory
    session = LiveSession(config, observer_factory(config), until_offset=until_offset,
                          until_time=until_time, show_secrets=show_secrets,
                          progress=progress, notify=notify, observer_factory=observer_factory,
                          limit_option=limit_option).start()
    try:
        session.wait_caught_up()
    except BaseException:
        session.close()
        raise
    session.warnings = session.new_problems(0)   # printed once by the shell, as a load's are
    return session
