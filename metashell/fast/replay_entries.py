"""Replaying deferred entries: the fast path's side of the replay.

A reader deferring to the store hands the replay, in place of records,
deferred entries (:mod:`metashell.fast.deferred`): a TopicRecord with or
without the run of its partitions, a run of partition records, one
partition record, a snapshot's kept run. :class:`EntryReplay` applies them
as the general path's rules would (:mod:`metashell.replay.entities.topics`),
keeping refs (ints) where the general path keeps records: a TopicRecord
makes its ``TopicState`` (its ref is its history), a run is kept by its
topic and filed when its partitions are looked at, a single record is
filed under its partition. Anything it cannot take (a transaction, a topic
that exists, a partition that does not) goes back to the general path as
records.

A log's batches of nothing but partition changes are not filed at all
until needed (:class:`~metashell.fast.pending.PendingChanges`, filed by
:class:`~.change_filing.ChangeFiler`).

It is the replay's one door to the fast path's data: the batch loader asks
it what a batch's entries are (:meth:`EntryReplay.only_changes`,
:meth:`~EntryReplay.as_records`) and the delta reads a partition record's
key through it (:attr:`EntryReplay.partition_key`), so that no replay
module reads an entry's layout or a record's bytes.
"""

from __future__ import annotations

from ..gcpause import no_cyclic_gc
from ..kraft.catalog import METADATA
from ..kraft.primitives import UUID_TEXT
from . import deferred
from .deferred import (API_KEY, KEPT_COUNT, KEPT_RUN, PARTITION, PARTITION_RUN, RAW_TOPIC_ID,
                               REF, RUN_PARTITION_IDS, TOPIC, TOPIC_ID, TOPIC_NAME, TOPIC_OFFSET,
                               TOPIC_RAW_ID, TOPIC_RUN, TOPIC_TIMESTAMP, TOPIC_WITH_RUN)
from .change_batches import ChangeBatch
from .change_effects import ChangeEffects
from .change_filing import ChangeFiler
from .partition_change import record_key
from .refs import Refs


class EntryReplay:
    """Deferred entries into the image, and the log's pending changes."""

    # (topic id, partition id) of a partition record, its bytes read where it is
    # lazy (.partition_change): the key the delta files it by
    partition_key = staticmethod(record_key)

    def __init__(self, delta, refs: Refs, filer: ChangeFiler, topic_type: type):
        self.delta = delta              # the replay's Delta: its image, tally and history
        self.topic_type = topic_type    # the replay's TopicState
        self.tally = delta.tally
        self.refs = refs
        self.store = refs.store
        self.filer = filer
        self.changes = filer.changes

    def apply(self, h, records: list, stamp: "tuple | None", in_snapshot: bool, loader) -> bool:
        """Apply a batch's records: deferred entries outside a transaction
        (``loader.txn``) as the rules of TopicRecord, PartitionRecord and
        PartitionChangeRecord would, anything else through the general path
        (``loader.apply_records(h, records, stamp, in_snapshot)``: False once
        past the time-travel limit, which this returns too). The counts are
        added once per batch, and the topic last created or filed under is
        not looked up again for its partitions (-23% engine time per
        snapshot topic)."""
        new_topics = new_partitions = 0
        last_raw = last_topic = None
        topics = self.delta.image.topics
        record = self.refs.record
        for rec in records:
            if type(rec) is not tuple:
                pending = (rec,)
            else:
                kind = len(rec)
                if kind == KEPT_RUN:
                    pending = self._kept_run(rec, in_snapshot)
                    if pending is None:
                        continue
                elif loader.txn is not None:
                    pending = [record(ref) for ref in deferred.refs(rec)]
                elif kind == TOPIC_WITH_RUN or kind == TOPIC:
                    t = self.new_topic(rec, stamp)
                    if t is not None:
                        new_topics += 1
                        if kind == TOPIC_WITH_RUN:   # its run, kept by new_topic
                            new_partitions += len(rec[TOPIC_RUN][RUN_PARTITION_IDS])
                        last_raw, last_topic = rec[TOPIC_RAW_ID], t
                        continue
                    # the topic exists: its record (reported) and its partitions'
                    pending = [record(ref) for ref in deferred.refs(rec)]
                elif kind == PARTITION_RUN or kind == PARTITION:
                    raw = rec[RAW_TOPIC_ID]
                    t = last_topic if raw == last_raw else topics.get(UUID_TEXT[raw])
                    if t is not None and kind == PARTITION_RUN and rec[API_KEY] == 3:
                        t.add_run(rec)   # filed when the topic's partitions are looked at
                        new_partitions += len(rec[RUN_PARTITION_IDS])
                        pending = None
                    else:
                        pending = self._file_partitions(rec, t)
                    if not pending:
                        last_raw, last_topic = raw, t
                        continue
                else:
                    raise deferred.unknown(rec)
            last_raw = None   # the general path may create or remove topics
            if not loader.apply_records(h, pending, stamp, in_snapshot):
                self._count(new_topics, new_partitions)
                return False
        self._count(new_topics, new_partitions)
        return True

    def only_changes(self, batch_records: list) -> bool:
        """Whether a batch's records are all deferred PartitionChangeRecords
        (kept as pending changes where nothing else needs them filed)."""
        return deferred.only_changes(batch_records)

    def settle_before(self, batch_records: list) -> None:
        """File the pending changes before a batch holding topic or partition
        entries (they follow the changes in the log). Asked only while
        changes are pending."""
        if any(type(r) is tuple for r in batch_records):
            self.filer.settle()

    def as_records(self, batch_records: list) -> list:
        """A batch's records with every deferred entry read back as its
        records: each record with its own offset, for a batch a snapshot or
        a time-travel limit cuts."""
        record = self.refs.record
        return [rec for r in batch_records for rec in (
            map(record, deferred.refs(r)) if type(r) is tuple else (r,))]

    def _kept_run(self, rec: deferred.KeptRun, in_snapshot: bool) -> "list | None":
        """A run of a snapshot's records ``ls`` does not need: kept unread in
        the image, counted now (None); outside a snapshot, its records."""
        api, n = rec[API_KEY], rec[KEPT_COUNT]
        if in_snapshot:   # read when they are first looked at (fast/kept_runs.py)
            image = self.delta.image
            image.kept_runs.setdefault(api, []).append(rec)
            image.kept_checked.discard(api)
            self.tally.count(METADATA[api].name, n)
            return None
        return [self.refs.record(ref) for ref in self.store.run_refs(rec[REF], n)]

    def _file_partitions(self, rec: "deferred.Partition | deferred.PartitionRun",
                         t) -> list:
        """File a deferred partition record, or a run of them record by record,
        under topic ``t``; the records that could not be (no such topic or
        partition, which the general path reports, so they may come after the
        others)."""
        file_one, record = self.filer.file_one, self.refs.record
        return [record(one[REF]) for one in deferred.records(rec)
                if t is None or not file_one(one, t)]

    def new_topic(self, rec: tuple, stamp):
        """Create a topic from a TopicRecord read on the fast path (a
        ``deferred.TOPIC`` or ``TOPIC_WITH_RUN`` entry) as the general
        path's rule would, if its id is new (None, nothing done, otherwise),
        with the run of its partitions that came with it. It keeps the ref
        as its history. Not counted here (the caller counts a batch's at
        once)."""
        delta = self.delta
        if delta.on_change is not None:
            return None
        ref, name, offset, ts, tid = (rec[REF], rec[TOPIC_NAME], rec[TOPIC_OFFSET],
                                      rec[TOPIC_TIMESTAMP], rec[TOPIC_ID])
        image = delta.image
        # as the general path stamps a snapshot's records: all its topics share
        # one change (-5% memory per topic)
        change = (offset, ts) if stamp is None else stamp if stamp[1] else (stamp[0], ts)
        t = self.topic_type(name, tid, change, None, delta.topic_source,
                       rec[TOPIC_RUN] if len(rec) == TOPIC_WITH_RUN else None,   # as deferred.topic_run, inline
                       ref)
        if image.topics.setdefault(tid, t) is not t:
            return None   # not new
        image.topic_names[name] = tid
        key = ("topic", tid)
        if key in image.history:   # made and removed before: its history goes on
            t.created = None
            delta.history(key, ref)
        return t

    def _count(self, topics: int, partitions: int) -> None:
        if topics:
            self.tally.count("TopicRecord", topics)
        if partitions:
            self.tally.count("PartitionRecord", partitions)

    # -- the log's pending changes ---------------------------------------------------

    def defer_changes(self, h, entries, file_no: int, until_offset: "int | None"):
        """Keep a batch of deferred partition changes unfiled (see
        fast/pending.py); where the time-travel limit ``until_offset``
        falls inside it, only those up to the limit. The last record kept
        where the limit cut the batch (None if none was), else True."""
        if until_offset is None or h.last_offset <= until_offset:
            self.changes.add(file_no, h.position, h.end, entries)
            return True
        kept, last = [], None
        if type(entries) is ChangeBatch:
            entries = entries.entries()
        for entry in entries:
            for one in deferred.records(entry):
                rec = self.store.record(one[REF])
                if rec.offset > until_offset:
                    break
                kept.append(one)
                last = rec
        if last is not None:
            self.changes.add(file_no, h.position, h.end, kept)
        return last

    def pending_effects(self) -> "ChangeEffects | None":
        """What the pending partition changes do (fast/pending.py), read
        from their bytes without filing them, for ``summary``; None if none
        are pending, or if they had to be filed (see
        :meth:`PendingChanges.effects`)."""
        if not self.changes.batches:
            return None
        with no_cyclic_gc():   # an effect per change: half a million tuples
            effects = self.changes.effects(self.store.record)
        if effects is None:
            self.filer.settle()
        return effects

    def pending_count(self) -> int:
        """How many partition changes are pending."""
        return self.changes.count() if self.changes.batches else 0
