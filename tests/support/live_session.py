"""A scripted stand-in for ``metashell.live.Observer`` (no tests here).

It yields the interface's events in the order a test gives them, made with
the project's writer, and can stop between steps until the test releases a
gate, so a test controls exactly what the session has applied when it
looks. The real observer against the fake quorum is exercised in
``test_live_cli_e2e.py``; this stand-in tests the session's own logic
(snapshot swap, consistency, following, limits, watch).
"""

from __future__ import annotations

import threading

from tests.support.replay import TS0, Log

from metashell.live import (CommittedEvent, Controller, LiveConfig, LiveError,
                                   SnapshotEvent, StatusEvent)
from metashell.kraft.writer import snapshot_bytes

CONFIG = LiveConfig([Controller(1, "127.0.0.1", 9093)], timeout=2)


def snapshot_event(end_offset: int, records, epoch: int = 1) -> SnapshotEvent:
    return SnapshotEvent(end_offset, epoch, snapshot_bytes(records, epoch=epoch, timestamp=TS0),
                         f"snapshot {end_offset:020d}-{epoch:010d} from controller 1@127.0.0.1:9093")


def committed_event(base_offset: int, *batches) -> CommittedEvent:
    """One event of ``batches`` (each a list of records) from ``base_offset``."""
    log = Log(base_offset)
    for records in batches:
        log.add(*records)
    return CommittedEvent(log.w.getvalue(), base_offset, log.next_offset - 1,
                          "controller 1@127.0.0.1:9093")


def status(state: str, hwm: int, committed: int, detail: str | None = None) -> StatusEvent:
    return StatusEvent(state, 1, 3, hwm, committed, "1@127.0.0.1:9093", detail)


class ScriptedObserver:
    """Yields ``steps`` in order: an event is yielded, a ``threading.Event``
    is a gate waited for, an exception is raised. After the last step it
    waits, as a following observer does, until ``close()``."""

    def __init__(self, steps, describe=None):
        self.steps = list(steps)
        self.describe = describe
        self.closed = threading.Event()
        self.status = None
        self.done = threading.Event()     # every step was taken

    def __call__(self, config):           # the observer factory
        return self

    def events(self):
        for step in self.steps:
            if isinstance(step, threading.Event):
                while not step.wait(0.02):
                    if self.closed.is_set():
                        return
                continue
            if self.closed.is_set():
                return
            if isinstance(step, BaseException):
                raise step
            if isinstance(step, StatusEvent):
                self.status = step
            yield step
        self.done.set()
        self.closed.wait()

    def close(self):
        self.closed.set()

    def describe_quorum(self) -> dict:
        if self.describe is None:
            raise LiveError("127.0.0.1:9093: DescribeQuorum: connection refused")
        return self.describe
