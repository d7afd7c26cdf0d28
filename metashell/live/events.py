"""What the observer is given (:class:`LiveConfig`) and what it yields.

The events are the whole interface between following a quorum and the
shell: a :class:`SnapshotEvent` replaces the image, a
:class:`CommittedEvent` carries whole committed batches in log order, a
:class:`StatusEvent` says where the observer stands and a
:class:`NoticeEvent` carries a warning. Their ``data`` is the
batch format of files, so the file readers take it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .addresses import Controller
from .clientconfig import SecurityConfig


@dataclass(frozen=True)
class LiveConfig:
    controllers: list[Controller]
    security: SecurityConfig = field(default_factory=SecurityConfig)
    timeout: float = 30.0                  # give up when no Fetch succeeds this long before catch-up
    persistent: bool = True                # after catch-up, keep trying however long the quorum is gone
    started: float | None = None           # time.monotonic() the timeout counts from (default: events())
    cluster_id: str | None = None          # sent in Fetch so a wrong cluster is refused
    max_wait_ms: int = 500                 # the long poll, as Kafka's raft client does
    request_timeout: float | None = None   # beyond max_wait; default 5 s


@dataclass(frozen=True)
class SnapshotEvent:
    end_offset: int
    epoch: int
    data: bytes | bytearray   # the whole snapshot, header batch to footer batch
    source: str


@dataclass(frozen=True)
class CommittedEvent:
    data: bytes               # whole batches, CRC checked, every lastOffset below the HWM
    base_offset: int
    last_offset: int
    source: str


@dataclass(frozen=True)
class StatusEvent:
    state: str                # "connecting" | "catching-up" | "following" | "election" | "lost"
    leader_id: int            # -1: none known (during an election: none yet)
    leader_epoch: int
    high_watermark: int       # never goes back; -1 unknown
    committed_offset: int     # everything below it was yielded
    endpoint: str | None
    detail: str | None
    trying: str | None = None  # the address being connected to, before the first answer


@dataclass(frozen=True)
class NoticeEvent:
    """Something the user should know that stops nothing (a ``-C`` id that
    does not match the quorum's), said once."""

    text: str
