"""Batches into the delta (Kafka's ``MetadataBatchLoader``): snapshot
boundaries, metadata transactions, time-travel limits and provenance.

A snapshot replaces all state (:meth:`BatchLoader.begin_snapshot` starts a
new image; its records show the snapshot's last offset and time).
Metadata transactions (Begin/End/AbortTransactionRecord, KIP-868) buffer
records and apply them at End; Abort, or the end of input, drops them.
``until_offset`` / ``until_time`` stop the replay at a point in the log
(time travel). After each batch the image's provenance (last offset, time
and epoch) moves on.

A record goes to the :class:`~.delta.Delta`, which applies it by its type;
the fast path's deferred entries go to
:class:`~metashell.fast.replay_entries.EntryReplay`, the one object the
loader asks about them. A batch the fast path took whole is no list: its
``records`` say what they are (:meth:`BatchLoader.apply_batch`). A run of
heartbeats or of small batches is taken whole where nothing (a limit, a
transaction, a snapshot's end) falls inside it.
"""

from __future__ import annotations

from typing import Callable

from ..fast.door import Entries
from ..kraft.batch import ATTR_CODEC
from ..kraft.records import CONTROL, UNDECODABLE, Record
from .delta import Delta
from .entities.quorum import replay_control
from .problems import Problem

TRANSACTION_RECORDS = frozenset(("BeginTransactionRecord", "EndTransactionRecord",
                                 "AbortTransactionRecord"))


class BatchLoader:
    """Feeds one load's batches, in order, to its delta."""

    def __init__(self, delta: Delta, entries: Entries, make_image: Callable, *,
                 until_offset: int | None = None, until_time: int | None = None):
        self.delta = delta
        self.tally = delta.tally
        self.entries = entries          # the fast path's EntryReplay
        self.refs = entries.refs
        self.store = entries.store
        self.make_image = make_image    # a new, empty image wired to the fast path (a snapshot begins)
        self.until_offset = until_offset
        self.until_time = until_time
        self.reached_limit = False
        self.aborted = 0                # records dropped by AbortTransaction / end of input
        self.txn: list | None = None    # the open transaction's records
        self._txn_start = -1
        self.transactions: list[tuple[int, int]] = []   # (begin, end) offsets of those applied
        self._snapshot = None     # (end_offset - 1, timestamp) while applying a snapshot
        self._skip_before = -1    # log records with offset < this are covered by the snapshot
        self._batch_last = None   # the last record of the batch applied so far

    # -- snapshots ------------------------------------------------------------------

    def begin_snapshot(self, end_offset: int | None, timestamp: int | None, epoch: int = -1) -> None:
        """Start applying a snapshot: all state is replaced by what it holds.
        ``end_offset`` (exclusive, from the file name) and ``timestamp``
        (SnapshotHeader.LastContainedLogTimestamp) stamp its entities."""
        self.entries.filer.settle()   # counted and reported, as everything before the snapshot
        image = self.delta.image = self.make_image()
        self.delta.in_snapshot = True
        self.txn = None
        self._snapshot = (end_offset - 1 if end_offset is not None else None, timestamp)
        if end_offset is not None:
            image.last_offset = image.data_offset = end_offset - 1
            self._skip_before = end_offset
        if timestamp is not None:
            image.last_time = image.data_time = timestamp
        if epoch >= 0:
            image.quorum.leader_epoch = epoch
            image.last_epoch = epoch

    def end_snapshot(self) -> None:
        if self.txn is not None:
            self._drop_transaction("the snapshot ended inside a metadata transaction")
        self._snapshot = None
        self.delta.in_snapshot = False

    def finish(self) -> None:
        """End of input: an open transaction is dropped, as Kafka does."""
        if self.txn is not None:
            self._drop_transaction("the input ended inside a metadata transaction "
                                   f"(begun at offset {self._txn_start})")

    # -- batches --------------------------------------------------------------------

    def apply_batch(self, batch) -> bool:
        """Apply one batch; returns False once the time-travel limit is passed
        (the caller can stop reading). Its ``records`` are a list (records
        and deferred entries), or what the fast path took whole: a run of
        batches (``spans_batches``: ``noops``, ``entries``, ``changes_only``,
        ``batches()``), or a batch of partition changes checked but not read
        (``changes_only``; ``entries()`` reads them)."""
        records = batch.records
        if type(records) is not list and records.spans_batches:
            return self._apply_run(batch)
        if self._snapshot is not None:
            if type(records) is not list:
                records = records.entries()
            return self._apply_entries(batch.header, records, self._stamp(batch), True)
        records = self._log_records(batch)
        if type(records) is bool:
            return records
        return self._apply_entries(batch.header, records, None, False)

    def _log_records(self, batch) -> "list | bool":
        """What to apply of a log's batch: its records, as deferred entries
        only where the fast path may apply them; or the batch's whole
        outcome (True: nothing to apply, or kept as pending changes; False:
        the time limit is passed)."""
        h, records = batch.header, batch.records
        if self.until_time is not None and h.max_timestamp > self.until_time:
            self.reached_limit = True
            return False
        if h.last_offset < self._skip_before and not batch.is_control:
            return True
        unread = type(records) is not list   # partition changes, checked but not read
        entries = self.entries
        if (self.txn is None and h.base_offset >= self._skip_before and records
                and (unread or entries.only_changes(records))
                and not h.attributes & ATTR_CODEC and self.delta.on_change is None
                and self.store.searchable(batch.file_no)):
            # only partition changes, as read from the file: kept, not filed
            return self._defer_changes(h, records, batch.file_no)
        if unread:
            records = records.entries()
        if entries.changes.batches:
            entries.settle_before(records)
        if h.base_offset < self._skip_before or (self.until_offset is not None
                                                and h.last_offset > self.until_offset):
            # the batch is cut: every record needs its own offset
            records = entries.as_records(records)
        return records

    def _stamp(self, batch) -> "tuple | None":
        """The ``(offset, time)`` a snapshot's records are stamped with (its
        last offset and time); only a control record (SnapshotHeader) can
        change them inside a batch."""
        stamp = self._snapshot
        if batch.is_control or stamp[0] is None:
            return None
        if batch.file_no >= 0:
            self.refs.stamp_file(batch.file_no, stamp)
        return stamp

    def _apply_entries(self, h, records: list, stamp: "tuple | None", in_snapshot: bool) -> bool:
        """Apply a batch's records and entries; then the image's provenance."""
        self._batch_last = None
        if not self.entries.apply(h, records, stamp, in_snapshot, self):
            return False
        if not in_snapshot and records:
            image = self.delta.image
            image.last_offset = max(image.last_offset, h.last_offset)
            image.last_time = max(image.last_time, h.max_timestamp)
            if not h.is_control:
                image.last_epoch = h.epoch
                image.data_offset = image.last_offset
                image.data_time = h.max_timestamp   # its own: Kafka's, not a running max
        return True

    def apply_records(self, h, recs, stamp: "tuple | None", in_snapshot: bool) -> bool:
        """Apply records through the general path: a snapshot's stamped with
        its offset and time, a log's from the snapshot's end up to the
        time-travel limit (False once past it)."""
        for rec in recs:
            if in_snapshot:
                if stamp is not None:
                    rec.offset = stamp[0]
                    if stamp[1]:
                        rec.timestamp = stamp[1]
                elif self._snapshot[0] is not None:
                    rec.offset, rec.timestamp = self._snapshot[0], self._snapshot[1] or rec.timestamp
            else:
                if rec.offset < self._skip_before:
                    # covered by the snapshot; but a snapshot holds no leader, so the
                    # log's quorum control records still tell who leads
                    if rec.kind == CONTROL:
                        self._apply_control(rec, h)
                    continue
                if self.until_offset is not None and rec.offset > self.until_offset:
                    # stopped inside the batch: the image is as of the last record applied
                    self.reached_limit = True
                    if self._batch_last is not None:
                        self._ended_at(h, self._batch_last)
                    return False
            self._batch_last = rec
            self.apply(rec, h)
        return True

    def _ended_at(self, h, last: Record) -> None:
        """The image's provenance when a limit stops the replay inside a batch,
        after ``last``, the last record applied."""
        image = self.delta.image
        image.last_time = max(image.last_time, last.timestamp)
        image.data_time = last.timestamp
        image.last_offset = image.data_offset = max(image.last_offset, last.offset)
        image.last_epoch = h.epoch

    def _apply_run(self, batch) -> bool:
        """A run of batches the fast path took whole (heartbeats,
        ``fast/noop_runs``; a log's small batches, ``fast/batch_runs``; the
        header spans them): its heartbeats counted and its entries applied
        as one batch's, or kept as pending changes if they are all changes,
        where nothing can stop or hold them on the way; else batch by
        batch, as read one at a time."""
        h, run = batch.header, batch.records
        if self._snapshot is None:
            if h.last_offset < self._skip_before:
                return True   # what the snapshot covers
            if (self.txn is None and self._within_limits(h)
                    and (self.delta.on_change is None or not run.entries)):
                if run.noops:
                    self.tally.count("NoOpRecord", run.noops)
                entries = run.entries
                if run.changes_only and self.store.searchable(batch.file_no):
                    self.entries.changes.add(batch.file_no, h.position, h.end, entries)
                elif entries:
                    if self.entries.changes.batches:
                        self.entries.filer.settle()   # topic records follow the pending changes
                    self._apply_entries(h, entries, None, False)
                self._ended_data_batches(h)
                return True
        for one in run.batches():
            if not self.apply_batch(one):
                return False
        return True

    def _within_limits(self, h) -> bool:
        """Whether the batches ``h`` spans are wholly inside what is loaded:
        after what a snapshot already gave, up to the time-travel limits."""
        return (h.base_offset >= self._skip_before
                and (self.until_offset is None or h.last_offset <= self.until_offset)
                and (self.until_time is None or h.max_timestamp <= self.until_time))

    def _ended_data_batches(self, h) -> None:
        """The image's provenance after data batches that ``h`` spans, taken
        whole (its last batch's offset, epoch and time: ``/image/provenance``)."""
        image = self.delta.image
        image.last_time = max(image.last_time, h.max_timestamp)
        image.data_time = h.max_timestamp
        image.last_offset = image.data_offset = max(image.last_offset, h.last_offset)
        image.last_epoch = h.epoch

    def _defer_changes(self, h, entries: list, file_no: int) -> bool:
        """Keep a batch of deferred partition changes unfiled (see
        fast/pending.py); where the time-travel limit falls inside it, only
        those up to the limit, and stop."""
        last = self.entries.defer_changes(h, entries, file_no, self.until_offset)
        if last is True:
            self._ended_data_batches(h)
            return True
        self.reached_limit = True
        if last is not None:
            self._ended_at(h, last)
        return False

    # -- one record -----------------------------------------------------------------

    def apply(self, rec: Record, header=None, in_snapshot: bool = False) -> None:
        """One record: a control record to the quorum, a transaction's
        markers here, a metadata record to the delta (held while a
        transaction is open)."""
        if in_snapshot and self._snapshot[0] is not None:
            rec.offset, rec.timestamp = self._snapshot[0], self._snapshot[1] or rec.timestamp
        if rec.kind == CONTROL:
            self._apply_control(rec, header)
            return
        if rec.kind == UNDECODABLE:
            self.tally.undecodable(rec)
            return
        if rec.name in TRANSACTION_RECORDS:
            self._transaction(rec)
            return
        if self.txn is not None:
            self.txn.append(rec)
            return
        self.delta.replay(rec)

    def _apply_control(self, rec: Record, header) -> None:
        """A control record: a snapshot's header stamps its records with its
        time; the others are the quorum's."""
        if rec.name == "SnapshotHeaderRecord" and self._snapshot is not None and rec.data is not None:
            if self._snapshot[1] is None:
                self._snapshot = (self._snapshot[0], rec.data["lastContainedLogTimestamp"])
                if self._snapshot[0] is not None:   # the image is as of the snapshot's last record
                    image = self.delta.image
                    image.last_time = max(image.last_time, self._snapshot[1])
                    image.data_time = image.last_time
            return
        replay_control(self.delta, rec, header)

    # -- transactions (KIP-868) -------------------------------------------------------

    def _transaction(self, rec: Record) -> None:
        name = rec.name
        delta, tally = self.delta, self.tally
        if name == "BeginTransactionRecord":
            if self.txn is not None:
                tally.problem(rec.offset, "BeginTransactionRecord while already in a transaction "
                                          f"(begun at offset {self._txn_start})")
                return
            self.txn = []
            self._txn_start = rec.offset
        elif self.txn is None:
            tally.problem(rec.offset, f"{name} without having seen a BeginTransactionRecord")
            return
        elif name == "EndTransactionRecord":
            self.transactions.append((self._txn_start, rec.offset))
            pending, self.txn = self.txn, None
            for r in pending:
                delta.replay(r)
        else:
            self._drop_transaction(None)
        tally.count(name, 1)

    def _drop_transaction(self, why: str | None) -> None:
        pending, self.txn = self.txn or [], None
        self.aborted += len(pending)
        if why:
            self.tally.problems.append(Problem(self._txn_start, f"{why}: {len(pending)} record(s) dropped",
                                               self.tally.source))
