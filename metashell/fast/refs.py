"""Deferred refs read back as records, stamped as their snapshot's.

A reader deferring to the :class:`~metashell.fast.store.RecordStore`
hands the replay refs (ints) instead of records; whoever needs one as a
:class:`Record` (folding, a history, the general path) asks :class:`Refs`.
A snapshot's records show its last offset and time (Kafka's shell shows a
snapshot's provenance so), which the batch loader notes per file
(:meth:`Refs.stamp_file`) as it reads the snapshot's batches.
"""

from __future__ import annotations

from ..kraft.records import Record
from .store import RecordStore, ref_file


class Refs:
    """The store of one load, and each snapshot file's stamp."""

    def __init__(self, store: RecordStore):
        self.store = store
        self.stamps: dict[int, tuple] = {}   # store file number -> snapshot (offset, time)

    def stamp_file(self, file_no: int, stamp: tuple) -> None:
        """The records of file ``file_no`` (a snapshot) show ``(offset, time)``."""
        self.stamps[file_no] = stamp

    def stamp(self, ref: int) -> "tuple | None":
        """The ``(offset, time)`` a deferred ref's snapshot stamps its records
        with, None for a log's ref (the replay asks it once per run)."""
        return self.stamps.get(ref_file(ref))

    def record(self, ref: int) -> Record:
        """The record a deferred ref names, stamped as its snapshot's records are."""
        rec = self.store.record(ref)
        rec.offset, rec.timestamp = self.stamped(ref, rec.offset, rec.timestamp)
        return rec

    def stamped(self, ref: int, offset: int, timestamp: int) -> tuple[int, int]:
        """The offset and time a deferred record shows: a snapshot's records
        are stamped with its last offset and time."""
        stamp = self.stamps.get(ref_file(ref))
        if stamp is None:
            return offset, timestamp
        return stamp[0], stamp[1] or timestamp

    def records(self, recs) -> list[Record]:
        """A partition's or an entity's records (as filed: a bare ref, or a
        list of refs and records), as :class:`Record` objects."""
        if type(recs) is not list:
            recs = [recs]
        record = self.record
        return [record(r) if type(r) is int else r for r in recs]
