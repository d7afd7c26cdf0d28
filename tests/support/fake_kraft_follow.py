"""Running the live observer against the fake quorum in the tests.

:class:`Follow` runs ``Observer.events()`` in a thread and records every
event, so a test can wait (always with a timeout) for a moment, act on the
fake, and wait again; ``close()`` must stop the thread within a second or
two, which the tests check too. :func:`rebuild` replays the events the way
the live session does (a snapshot replaces the image, committed batches
are applied in order) so the result can be compared with loading files.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from metashell.fs.root import build_root
from metashell.kraft.batch import BatchScanner
from metashell.live import (CommittedEvent, LiveConfig, Observer, SnapshotEvent,
                                   StatusEvent, parse_controllers)
from metashell.loader.reader import FileReader
from metashell.replay.engine import ReplayEngine
from tests.support.fake_kraft import FakeQuorum
from tests.support.records import feature, partition, topic, uid
from tests.support.replay import leaves

TOPS = ["brokers", "controllers", "topics", "topicIds", "configs", "clientQuotas", "acls",
        "features", "producerIds", "scram", "delegationTokens"]


def live_config(q, ids=None, *, with_ids: bool = True, timeout: float = 5.0, **kw) -> LiveConfig:
    return LiveConfig(parse_controllers(q.bootstrap(ids, with_ids=with_ids)), timeout=timeout, **kw)


class Follow:
    """``Observer(config).events()`` in a background thread."""

    def __init__(self, config: LiveConfig):
        self.observer = Observer(config)
        self.events: list = []
        self.error: BaseException | None = None
        self.finished = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, name="observer-under-test", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for event in self.observer.events():
                with self.cond:
                    self.events.append(event)
                    self.cond.notify_all()
        except BaseException as e:   # the test inspects it
            self.error = e
        finally:
            with self.cond:
                self.finished = True
                self.cond.notify_all()

    def wait(self, predicate, timeout: float = 10.0) -> bool:
        """Until ``predicate(self)`` holds, the observer stops, or ``timeout``."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0 or self.finished:
                    return predicate(self)
                self.cond.wait(min(left, 0.05))
        return True

    def close(self) -> float:
        """Close the observer; returns how long ``events()`` took to return."""
        start = time.monotonic()
        self.observer.close()
        self.thread.join(10)
        assert not self.thread.is_alive(), "events() did not return after close()"
        return time.monotonic() - start

    # ---------------------------------------------------------------- views of the events

    def of(self, kind) -> list:
        with self.cond:
            return [e for e in self.events if isinstance(e, kind)]

    @property
    def statuses(self) -> list[StatusEvent]:
        return self.of(StatusEvent)

    @property
    def committed_offset(self) -> int:
        s = self.statuses
        return s[-1].committed_offset if s else -1

    def following(self) -> bool:
        return any(s.state == "following" for s in self.statuses)

    def offsets(self) -> list[int]:
        """The offsets of every record yielded after the last snapshot, in order."""
        out: list[int] = []
        for e in self.events:
            if isinstance(e, SnapshotEvent):
                out = []
            elif isinstance(e, CommittedEvent):
                out.extend(record_offsets(e.data))
        return out


def batches_of(data: bytes) -> list:
    scanner = BatchScanner(data, "wire")
    return list(scanner)


def record_offsets(data: bytes) -> list[int]:
    out = []
    for h in batches_of(data):
        out.extend(range(h.base_offset, h.base_offset + h.last_offset_delta + 1))
    return out


def check_contiguous(events) -> None:
    """Committed events continue exactly where the last snapshot or batch ended."""
    expected = None
    for e in events:
        if isinstance(e, SnapshotEvent):
            expected = e.end_offset
        elif isinstance(e, CommittedEvent):
            hs = batches_of(e.data)
            assert hs and hs[0].base_offset == e.base_offset
            assert hs[-1].base_offset + hs[-1].last_offset_delta == e.last_offset
            for h in hs:
                if expected is not None:
                    assert h.base_offset == expected, f"gap or overlap at {h.base_offset}, wanted {expected}"
                expected = h.base_offset + h.last_offset_delta + 1


def rebuild(events) -> ReplayEngine:
    """An engine holding what the events say, applied as the live session does."""
    engine = ReplayEngine()
    for e in events:
        if isinstance(e, SnapshotEvent):
            engine = ReplayEngine()
            engine.begin_snapshot(e.end_offset, None, e.epoch)
            for batch in engine.store.open(e.source, buf=e.data, lazy=False):
                engine.apply_batch(batch)
            engine.end_snapshot()
        elif isinstance(e, CommittedEvent):
            for batch in FileReader(e.source, buf=e.data, lazy=True):
                engine.apply_batch(batch)
    engine.finish()
    return engine


def image_json(image) -> str:
    return json.dumps(leaves(build_root(image), TOPS), sort_keys=True, default=str)


def parked_at_the_log_end(q) -> bool:
    """Whether an observer has asked a node of ``q`` for the records after
    the log's end: it caught up and its Fetch is parked in a long poll."""
    return any(r.topics[0].partitions[0].fetch_offset >= q.log.end_offset
               for n in q.nodes.values() for r in list(n.fetches))


@pytest.fixture
def quorums():
    """A maker of fake quorums (``quorums(3, profile=...)``) and, as
    ``quorums.follow(config)``, of observers following them; at the end each
    observer must close within seconds and each quorum stop without errors.
    Imported by the test modules that use it."""
    made, follows = [], []

    def make(*args, **kw):
        q = FakeQuorum(*args, **kw)
        made.append(q)
        return q

    def follow(config):
        f = Follow(config)
        follows.append(f)
        return f

    make.follow = follow
    yield make
    for f in follows:
        assert f.close() < 3, "close() must stop events() within about a second"
    for q in made:
        q.stop()
        assert not [e for n in q.nodes.values() for e in n.errors]


def a_cluster_log(q, topics=3, commit=True):
    """A few batches of real metadata records at the current epoch: topics
    ``t0``... (``uid(10)``...) of three partitions each (version 0)."""
    q.append([feature("metadata.version", 7)])
    for t in range(topics):
        q.append([topic(f"t{t}", uid(10 + t))] + [partition(uid(10 + t), p, version=0) for p in range(3)])
    if commit:
        q.commit()
    return q


def caught_up(f) -> bool:
    """A ``Follow.wait`` predicate: the observer follows the leader's log end."""
    return f.following()
