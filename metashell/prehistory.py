"""The log before a directory's snapshot: the real records behind its stand-ins.

A snapshot holds each entity as one record, which the replay stamps with the
snapshot's last offset and time: "topic orders created" at 17:00, when it
was created at 08:10. Kafka keeps the segments before its newest snapshot a
while, so a log dir often still holds the records themselves. ``changes``
asks :class:`OlderLog` for them: it replays those segments (once, on the
first question, up to the snapshot's last offset) and finds the entity's
records there, with their own offsets and times. Where the log does not
reach back, the snapshot's stand-ins stay, marked as coming from it.
"""

from __future__ import annotations

from .errors import MetashellError
from .fs.entities import entity_records
from .replay.engine import ReplayEngine


class OlderLog:
    """The segments of ``plan`` that hold records before its snapshot."""

    def __init__(self, plan):
        snap = plan.snapshot
        self.end = (snap.end_offset if snap is not None and not snap.bootstrap
                    and snap.end_offset is not None else 0)
        segments = plan.all_segments
        self.segments = [s for s in segments
                         if s.base_offset is not None and s.base_offset < self.end]
        #: whether they start at offset 0: every record before the snapshot is there
        self.complete = bool(self.segments) and self.segments[0].base_offset == 0
        self._engine: ReplayEngine | None = None

    def covers(self, offset: int) -> bool:
        """Whether a record at ``offset`` is one of the snapshot's stand-ins."""
        return 0 <= offset < self.end

    def records(self, parts: list[str]) -> list:
        """The records of the entity at ``parts`` in the log before the
        snapshot (empty when none, or when that log cannot be read)."""
        if not self.segments:
            return []
        try:
            engine = self._replayed()
        except MetashellError:
            return []
        return list(entity_records(engine.image, parts) or [])

    def _replayed(self) -> ReplayEngine:
        if self._engine is None:
            engine = ReplayEngine(until_offset=self.end - 1)
            for seg in self.segments:
                for batch in engine.store.open(seg.path, skip_damage=True, lazy=True):
                    if not engine.apply_batch(batch):
                        break
                if engine.reached_limit:
                    break
            engine.finish()
            self._engine = engine
        return self._engine


def honest_history(records: list, older: OlderLog, parts: list[str]) -> list[tuple]:
    """``(record, from_snapshot)`` for an entity's ``records``: the
    snapshot's stand-ins replaced by the log's own records where the log
    before the snapshot is whole, else those records followed by the
    stand-ins, marked."""
    stand_ins = [r for r in records if older.covers(r.offset)]
    if not stand_ins:
        return [(r, False) for r in records]
    later = [(r, False) for r in records if not older.covers(r.offset)]
    real = [(r, False) for r in older.records(parts)]
    if real and older.complete:
        return real + later
    return real + [(r, True) for r in stand_ins] + later
