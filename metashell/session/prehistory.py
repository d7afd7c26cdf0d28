"""The log before a directory's snapshot: the real records behind its stand-ins.

A snapshot holds each entity as one record, which the replay stamps with the
snapshot's last offset and time: "topic orders created" at 17:00, when it
was created at 08:10. Kafka keeps the segments before its newest snapshot a
while, so a log dir often still holds the records themselves. ``changes``
asks :class:`OlderLog` for them: it replays those segments (once, on the
first question, up to the snapshot's last offset) and finds the entity's
records there, with their own offsets and times.

Kafka also deletes old segments: a long-running cluster's log starts at an
older snapshot's end offset, not at 0. The replay then starts from the
oldest snapshot the log continues (its base), so the records since it are
real and only what happened before it is a stand-in, of that older
snapshot. Where nothing reaches back, the loaded snapshot's stand-ins stay;
every stand-in is marked as coming from a snapshot.
"""

from __future__ import annotations

from ..errors import MetashellError
from ..fs.entities import entity_records
from ..fs.node import lookup
from ..fs.root import build_root
from ..replay.engine import ReplayEngine


class OlderLog:
    """The segments of ``plan`` that hold records before its snapshot, and
    the snapshot to replay them from (``base``, None when the log starts at
    offset 0 or no snapshot fits). ``apply_snapshot(engine, path, end_offset,
    epoch, strict=True)`` loads that snapshot as the session loads one (passed
    in by the session: this module is imported by it)."""

    def __init__(self, plan, apply_snapshot):
        self._apply_snapshot = apply_snapshot
        snap = plan.snapshot
        self.end = (snap.end_offset if snap is not None and not snap.bootstrap
                    and snap.end_offset is not None else 0)
        self.segments = [s for s in plan.all_segments
                         if s.base_offset is not None and s.base_offset < self.end]
        first = self.segments[0].base_offset if self.segments else None
        older = [c for c in plan.snapshot_candidates
                 if c.end_offset is not None and first is not None and first <= c.end_offset < self.end]
        self.base = None if first == 0 or not older else min(older, key=lambda c: c.end_offset)
        #: the offset from which the replay's records are the log's own
        self.start = self.base.end_offset if self.base is not None else (first or 0)
        #: whether the replay rebuilds every entity: from offset 0, or from a snapshot
        self.grounded = first == 0 or self.base is not None
        self._engine: ReplayEngine | None = None
        self._root = None   # the tree over its image (ls -l's last changes)

    def covers(self, offset: int) -> bool:
        """Whether a record at ``offset`` is one of the loaded snapshot's stand-ins."""
        return 0 <= offset < self.end

    def records(self, parts: list[str]) -> list[tuple]:
        """``(record, from_snapshot)`` of the entity at ``parts`` as of the
        loaded snapshot, from the log before it (empty when it is not
        there, or that log cannot be read)."""
        if not self.segments:
            return []
        try:
            engine = self._replayed()
        except MetashellError:
            return []
        return [(r, r.offset < self.start) for r in entity_records(engine.image, parts) or []]

    def last_change(self, parts: list[str]) -> "tuple | None":
        """``((offset, time), from_snapshot)`` of the node at ``parts`` as
        the log before the loaded snapshot left it (None when that log does
        not have it)."""
        if not self.segments:
            return None
        try:
            if self._root is None:
                self._root = build_root(self._replayed().image, show_secrets=True)
            node = lookup(self._root, parts)
        except MetashellError:
            return None
        change = node.last_change() if node is not None else None
        return None if change is None else (change, change[0] < self.start)

    def close(self) -> None:
        """Let go of the replay of the older log, its files with it (the
        session is closed: :meth:`~metashell.replay.engine.ReplayEngine.close`)."""
        if self._engine is not None:
            self._engine.close()
        self._engine = self._root = None

    def _replayed(self) -> ReplayEngine:
        if self._engine is None:
            engine = ReplayEngine(until_offset=self.end - 1)
            if self.base is not None:
                base = self.base
                whole = self._apply_snapshot(
                    engine, base.path, base.end_offset, -1 if base.epoch is None else base.epoch,
                    strict=True)
                if not whole:
                    raise MetashellError(f"{base.path}: incomplete snapshot")
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
    """``(record, from_snapshot)`` for an entity's ``records``: the loaded
    snapshot's stand-ins replaced by the entity's history in the log
    before it, where that log rebuilds it; else that log's records
    followed by the stand-ins, marked."""
    stand_ins = [r for r in records if older.covers(r.offset)]
    if not stand_ins:
        return [(r, False) for r in records]
    later = [(r, False) for r in records if not older.covers(r.offset)]
    before = older.records(parts)
    if before and older.grounded:
        return before + later
    return before + [(r, True) for r in stand_ins] + later
