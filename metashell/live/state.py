"""The observer's state machine: what it knows of the quorum and the log,
moved on by each answer, with no I/O (so it can be driven by scripted
answers in tests).

It mirrors Kafka's ``KafkaRaftClient`` as an observer (reference 1.4):
leader and epoch (adopted in one place, :meth:`Follower._adopt_leader`),
the next offset to fetch and the epoch of the last batch held, the high
watermark (trusted only upwards: a new leader may not know it yet), and the
uncommitted tail: batches fetched but not yet below the HWM, kept aside
until they are committed or a DivergingEpoch truncates them. Only batches
whose last offset is below the HWM leave as :class:`CommittedEvent`, in
log order, each exactly once.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..errors import CorruptDataError, LiveError
from ..kraft.batch import LOG_OVERHEAD, BatchScanner
from . import protocol as p
from .addressbook import AddressBook
from .addresses import Controller
from .events import CommittedEvent, SnapshotEvent, StatusEvent

_ERROR_NAMES = {
    p.UNKNOWN_SERVER_ERROR: "UNKNOWN_SERVER_ERROR", p.NOT_LEADER_OR_FOLLOWER: "NOT_LEADER_OR_FOLLOWER",
    p.BROKER_NOT_AVAILABLE: "BROKER_NOT_AVAILABLE", p.FENCED_LEADER_EPOCH: "FENCED_LEADER_EPOCH",
    p.UNKNOWN_LEADER_EPOCH: "UNKNOWN_LEADER_EPOCH", p.SNAPSHOT_NOT_FOUND: "SNAPSHOT_NOT_FOUND",
    p.POSITION_OUT_OF_RANGE: "POSITION_OUT_OF_RANGE", p.INVALID_REQUEST: "INVALID_REQUEST",
    p.UNSUPPORTED_VERSION: "UNSUPPORTED_VERSION",
}


def error_name(code: int) -> str:
    return _ERROR_NAMES.get(code, f"error {code}")


def check_top_level(error: int, where: Controller, request: str) -> None:
    """The top-level errors no retry fixes, as one-line LiveErrors."""
    if error == p.CLUSTER_AUTHORIZATION_FAILED:
        raise LiveError(f"{where}: {request} refused with CLUSTER_AUTHORIZATION_FAILED: the principal "
                        "needs ClusterAction on the Cluster resource (an ACL, or super.users)")
    if error == p.INCONSISTENT_CLUSTER_ID:
        raise LiveError(f"{where}: {request} refused with INCONSISTENT_CLUSTER_ID: this quorum has "
                        "another cluster id (wrong --cluster-id, or the wrong cluster)")
    if error == p.INVALID_REQUEST:
        raise LiveError(f"{where}: {request} refused with INVALID_REQUEST (a metashell bug: please report it)")


@dataclass
class FetchAnswer:
    """The parts of a Fetch (or FetchSnapshot) answer the state reads."""

    error: int = p.NONE                          # the top-level error, else the partition's
    top_level: bool = False
    high_watermark: int = -1
    records: bytes | None = None
    diverging: tuple[int, int] | None = None     # (epoch, end offset)
    snapshot: tuple[int, int] | None = None      # (end offset, epoch)
    leader: tuple[int, int] | None = None        # (leader id, leader epoch)
    endpoints: dict[int, tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, response) -> "FetchAnswer":
        if response.error_code != p.NONE or not response.responses or not response.responses[0].partitions:
            return cls(error=response.error_code or p.UNKNOWN_SERVER_ERROR, top_level=True)
        part = response.responses[0].partitions[0]
        return cls(
            error=part.error_code, high_watermark=part.high_watermark, records=part.records,
            diverging=(part.diverging_epoch.epoch, part.diverging_epoch.end_offset)
            if part.diverging_epoch is not None and part.diverging_epoch.epoch >= 0 else None,
            snapshot=(part.snapshot_id.end_offset, part.snapshot_id.epoch)
            if part.snapshot_id is not None and part.snapshot_id.end_offset >= 0 else None,
            leader=(part.current_leader.leader_id, part.current_leader.leader_epoch)
            if part.current_leader is not None and part.current_leader.leader_epoch >= 0 else None,
            endpoints={e.node_id: (e.host, e.port) for e in (getattr(response, "node_endpoints", None) or ())})


@dataclass(frozen=True)
class Step:
    """What the driver does next: ``"fetch"`` again from the same node,
    download ``snapshot``, go to the ``"leader"``, or back off and
    ``"rotate"`` to another node."""

    action: str
    events: list = field(default_factory=list)
    snapshot: tuple[int, int] | None = None


@dataclass(slots=True)
class _Pending:
    buf: bytes
    start: int
    end: int
    base: int
    last: int
    epoch: int


class Follower:
    """Leader, epoch, offsets, HWM and the uncommitted tail of one observer."""

    def __init__(self, controllers: list[Controller]):
        self.book = AddressBook(controllers)
        self.voters_given = len(controllers)
        self.leader_id = -1
        self.epoch = 0
        self.next_offset = 0
        self.last_fetched_epoch = 0
        self.high_watermark = -1
        self.committed = 0
        self.committed_epoch = 0
        self.pending: deque[_Pending] = deque()
        self.target: int | None = None       # the HWM of the first successful Fetch
        self.caught_up = False
        self.answers = 0                      # successful answers so far (Fetch, snapshots)
        self.lost = False
        self.electing = False                 # a controller said: no leader in this epoch yet
        self.unanswered = 0                   # addresses unreachable in a row
        self.redirects = 0                    # "the leader is elsewhere" answers since the last success
        self.detail: str | None = None
        self.trying: str | None = None        # the address being connected to, before any answer
        self.warnings: list[str] = []         # for the user, once each (NoticeEvent)

    # -- the one place leadership changes ---------------------------------

    def _adopt_leader(self, leader_id: int, epoch: int) -> None:
        self.leader_id = leader_id
        self.epoch = epoch
        self.electing = leader_id < 0

    @property
    def leader(self) -> Controller | None:
        return self.book.get(self.leader_id)

    def _warn(self, warning: str | None) -> None:
        if warning is not None:
            self.warnings.append(warning)

    # -- requests ------------------------------------------------------------

    def fetch_fields(self) -> dict:
        return {"leader_epoch": self.epoch, "fetch_offset": self.next_offset,
                "last_fetched_epoch": self.last_fetched_epoch, "high_watermark": self.high_watermark}

    # -- answers -------------------------------------------------------------

    def on_fetch(self, answer: FetchAnswer, source: Controller) -> Step:
        self.unanswered = 0
        if answer.top_level:
            check_top_level(answer.error, source, "Fetch")
            return self._failed(f"{source}: Fetch failed with {error_name(answer.error)}")
        for warning in self.book.endpoints(answer.endpoints):
            self._warn(warning)
        if answer.leader is not None:
            leader_id, epoch = answer.leader
            if epoch < self.epoch:
                return self._failed(f"{source}: stale (epoch {epoch} < {self.epoch})")
            if epoch > self.epoch or (leader_id != self.leader_id and leader_id >= 0):
                self._adopt_leader(leader_id, epoch)
            elif leader_id < 0 and self.lost:
                # the leader we knew is gone and a voter of its epoch knows none:
                # the quorum is between leaders (a restarted voter, an election coming)
                self._adopt_leader(leader_id, epoch)
        error = answer.error
        if error == p.INVALID_REQUEST:
            check_top_level(error, source, "Fetch")
        if error in (p.FENCED_LEADER_EPOCH, p.NOT_LEADER_OR_FOLLOWER):
            return self._redirected(error, source)
        if error != p.NONE:
            return self._failed(f"{source}: Fetch failed with {error_name(error)}")
        if answer.leader is not None and answer.leader[0] >= 0:
            self._warn(self.book.answered_as_leader(source, answer.leader[0]))
        return self._on_leader_answer(answer, source)

    def _redirected(self, error: int, source: Controller) -> Step:
        """A controller that is not the leader (of our epoch) named the
        leader, or said there is none yet: go there, or wait for the election."""
        if self.leader_id < 0:
            return self._failed(f"{source}: no leader yet (election of epoch {self.epoch} in progress)")
        if error == p.NOT_LEADER_OR_FOLLOWER:
            warning = self.book.not_the_leader(source, self.leader_id, self.epoch)
            if warning is not None:
                self._warn(warning)
                return self._failed(warning)
        self.redirects += 1
        if self.leader is None:
            return self._failed(f"{source}: the leader is node {self.leader_id} (epoch {self.epoch}), "
                                "whose address is not known yet")
        return Step("leader")

    def _failed(self, detail: str) -> Step:
        self.on_unreachable(detail)
        return Step("rotate")

    def _on_leader_answer(self, answer: FetchAnswer, source: Controller) -> Step:
        self.answers += 1
        self.lost = False
        self.redirects = 0
        self.detail = None
        self.trying = None
        if self.target is None and answer.high_watermark >= 0:
            self.target = answer.high_watermark
        if answer.snapshot is not None:
            if answer.snapshot[0] < self.committed:
                raise _older_log(source, f"it offers a snapshot ending at offset {answer.snapshot[0]}",
                                 self.committed)
            return Step("snapshot", snapshot=answer.snapshot)
        if answer.diverging is not None:
            self._truncate(*answer.diverging, source)
            return Step("fetch")
        self._append(answer.records, source)
        if answer.high_watermark > self.high_watermark:
            self.high_watermark = answer.high_watermark
        events = self._release(source)
        self._check_caught_up()
        return Step("fetch", events)

    def _append(self, records, source: Controller) -> None:
        """The answer's whole batches not held yet join the uncommitted tail
        (a cut-off last batch is left for the next Fetch)."""
        if not records:
            return
        pending = self.pending
        held = len(pending)
        next_offset = self.next_offset
        try:
            for h in BatchScanner(records, f"controller {source} (Fetch from offset {next_offset})"):
                last = h.base_offset + h.last_offset_delta
                if last >= next_offset:
                    pending.append(_Pending(records, h.position, h.position + LOG_OVERHEAD + h.length,
                                            h.base_offset, last, h.epoch))
                    next_offset = last + 1
        except CorruptDataError as e:
            raise LiveError(str(e)) from None
        if len(pending) > held:
            self.next_offset = next_offset
            self.last_fetched_epoch = pending[-1].epoch

    def _release(self, source: Controller) -> list:
        """Committed batches leave the tail, a run from one answer per event."""
        events = []
        pending, hwm = self.pending, self.high_watermark
        while pending and pending[0].last < hwm:
            first = last = pending.popleft()
            while pending and pending[0].last < hwm and pending[0].buf is first.buf:
                last = pending.popleft()
            buf = first.buf
            data = buf if first.start == 0 and last.end == len(buf) else buf[first.start:last.end]
            events.append(CommittedEvent(data, first.base, last.last, f"controller {source}"))
            self.committed = last.last + 1
            self.committed_epoch = last.epoch
        return events

    def _truncate(self, epoch: int, end_offset: int, source: Controller) -> None:
        """DivergingEpoch: the tail at and after ``end_offset`` is not on the
        leader's log. Committed data never diverges: if it seems to, the
        leader's log is not the one this image was read from."""
        if end_offset < self.committed:
            raise _older_log(source, f"its log of epoch {epoch} ends at offset {end_offset}",
                             self.committed)
        while self.pending and self.pending[-1].last >= end_offset:
            self.pending.pop()
        if self.pending:
            self.next_offset = self.pending[-1].last + 1
            self.last_fetched_epoch = self.pending[-1].epoch
        else:
            self.next_offset = self.committed
            self.last_fetched_epoch = self.committed_epoch

    def on_snapshot(self, end_offset: int, epoch: int, data, source: str) -> list:
        """A whole snapshot arrived: it replaces everything; Fetch resumes at its end."""
        self.answers += 1
        self.pending.clear()
        self.next_offset = self.committed = end_offset
        self.last_fetched_epoch = self.committed_epoch = epoch
        if end_offset > self.high_watermark:
            self.high_watermark = end_offset
        self._check_caught_up()
        return [SnapshotEvent(end_offset, epoch, data, source)]

    def _check_caught_up(self) -> None:
        if not self.caught_up and self.target is not None and self.committed >= self.target:
            self.caught_up = True

    def on_unreachable(self, detail: str) -> None:
        """A controller failed us; after catch-up that makes the quorum lost
        until the next good answer."""
        self.detail = detail
        if self.caught_up:
            self.lost = True

    def on_no_connection(self, address: str, detail: str) -> None:
        """``address`` could not be reached at all. Once every address given
        failed in a row, an election seen before is no longer news: the
        quorum is gone."""
        self.unanswered += 1
        if self.unanswered >= self.voters_given:
            self.electing = False
        self.on_unreachable(f"{address}: {detail}")

    def connecting(self, address: str) -> None:
        """About to connect to ``address`` (shown until the first answer)."""
        if not self.answers:
            self.trying = address

    # -- status --------------------------------------------------------------

    def status(self) -> StatusEvent:
        return StatusEvent(self._state(), self.leader_id, self.epoch, self.high_watermark,
                           self.committed, str(self.leader) if self.leader is not None else None,
                           self.detail, self.trying)

    def _state(self) -> str:
        if self.electing:
            return "election"
        if self.lost:
            return "lost"
        if self.caught_up:
            return "catching-up" if self.committed < self.high_watermark else "following"
        return "catching-up" if self.answers else "connecting"


def _older_log(source: Controller, what: str, committed: int) -> LiveError:
    """The leader's log ends before what this image already holds: a
    quorum restored from an older copy of its data (or another cluster at
    the same addresses). Reading it from the start would silently take the
    image back in time, so it is reported instead."""
    return LiveError(f"{source}: the leader's log is behind this image: {what}, before offset "
                     f"{committed} already applied (was the quorum restored from an older copy, or "
                     "is this another cluster?); start again to read it as it is now")
