"""Folding a partition's records into its state when someone looks (Kafka's
``PartitionRegistration.merge``, applied per change).

A topic keeps, per partition, the records that created or changed it,
undecoded (``TopicState.partition_records``: deferred refs into the
store, or lazy records). :class:`PartitionFolder` decodes and merges them:
the newest PartitionRecord that decodes, then each PartitionChangeRecord
(:func:`~.partition_model.merge_change`) and ClearElrRecord after it. A
whole topic is folded at once where its partitions are still the
PartitionRecords of a run the reader deferred (:meth:`fold_topic` decodes
the run together; :meth:`topic_texts` writes their text from the run's
bytes; :meth:`existing_partitions` needs only their ids). A problem found
while folding (found again at every look) is reported once.

It is what the image's topics ask about their partitions (their
``source``): besides folding, deferred refs read back as records
(:meth:`PartitionFolder.records`) and the log's partition changes still
pending filed on first look (:meth:`PartitionFolder.file_pending`), from
the fast path's :class:`~metashell.fast.refs.Refs` and
:class:`~metashell.fast.change_filing.ChangeFiler`. It holds no image and
no engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..fast.door import Filer, StoreRefs, run_fields
from ..kraft.primitives import UUID_TEXT
from ..kraft.records import UNDECODABLE, Record
from .partition_model import (LayoutPlan, PartitionState, layout_plan, merge_change,
                              partition_from_record, partition_state)


@dataclass(frozen=True)
class RunValues:
    """A run of a topic's PartitionRecords, its values read from its bytes
    (``store.run_values``) for a column-wise reader: each record's values
    as ``plan`` places them (``ints``: each record's integers, record after
    record, ``plan.ints`` each; ``uuids``: its directories, raw, ``plan.uuids``
    each), each record's last change (``offsets``, ``times``: as a folded
    state's ``change``) and which records are still their partition's only
    record (``kept``; None: all are), the others folded instead."""

    topic_id: str
    plan: LayoutPlan
    ints: tuple
    uuids: tuple
    offsets: list
    times: list
    kept: "list[bool] | None"


class PartitionFolder:
    """Folds partitions from the records filed under them: what a topic asks."""

    def __init__(self, refs: StoreRefs, filer: Filer):
        self.refs = refs
        self.store = refs.store
        self.records = refs.records     # a partition's records (as filed) as Records
        self.report = filer.tally.problem   # report(offset, message): a problem of the load
        self.pending = filer.changes
        self._filer = filer
        self._reported: set[int] = set()   # keys of partition records already reported

    def file_pending(self, topic) -> None:
        """File the changes to ``topic`` still pending in its log, if any may be."""
        pending = self.pending
        if pending.batches and topic.topic_id not in pending.searched:
            self._filer.file_topic(topic)

    def fold_partition(self, recs) -> PartitionState | None:
        """Decode and merge a partition's records (PartitionRegistration
        semantics): the newest PartitionRecord, then each change after it.
        ``recs`` is what is filed under the partition: a deferred ref, or a
        list of refs and records."""
        if type(recs) is int:   # the common case: one PartitionRecord, deferred
            got = self.store.data(recs)
            if got is not None:
                d, offset, ts = got
                dirs = d.get("directories")
                if not dirs or len(dirs) == len(d["replicas"]):
                    return partition_state(d, self.refs.stamped(recs, offset, ts))
            recs = [recs]
        # each record with the key it is reported under (a problem found while
        # folding is found again at every look, but reported once)
        record = self.refs.record
        entries = [(~r, record(r)) if type(r) is int else (id(r), r) for r in recs]
        start, state = self._registration(entries)
        for key, rec in entries[start:]:
            self._merge(state, key, rec)
        return state

    def _registration(self, entries: list) -> "tuple[int, PartitionState | None]":
        """Where the changes to merge start, and the state made of the newest
        PartitionRecord that decodes: Kafka skips an undecodable one, so the
        changes after it apply to the older registration."""
        for i in range(len(entries) - 1, -1, -1):
            key, rec = entries[i]
            if rec.name != "PartitionRecord":
                continue
            d = rec.peek() if rec.kind != UNDECODABLE else None
            if d is None:   # Kafka skips it
                self._report_once(key, rec, f"undecodable {rec.name} v{rec.version}: {rec.error}")
                continue
            dirs = d.get("directories")
            if dirs and len(dirs) != len(d["replicas"]):   # Kafka rejects it: skipped
                self._report_once(key, rec, f"PartitionRecord: {len(dirs)} directories for "
                                            f"{len(d['replicas'])} replicas")
                continue
            return i + 1, partition_from_record(d, rec)
        return 0, None

    def _merge(self, state: "PartitionState | None", key: int, rec: Record) -> None:
        """One record after the registration merged into ``state``."""
        name = rec.name
        # every PartitionRecord was weighed by the backward scan
        if name == "PartitionRecord":
            return
        d = rec.peek() if rec.kind != UNDECODABLE else None
        if d is None:
            self._report_once(key, rec, f"undecodable {rec.name} v{rec.version}: {rec.error}")
            return
        if state is None:
            if name == "PartitionChangeRecord":
                self._report_once(key, rec, f"PartitionChangeRecord: unable to find partition "
                                            f"{d['topicId']}:{d['partitionId']}")
            return
        if name == "PartitionChangeRecord":
            error = merge_change(state, d)
            if error:   # Kafka rejects the change: the partition stays as it was
                self._report_once(key, rec, f"PartitionChangeRecord: {error}")
                return
        elif name == "ClearElrRecord":
            if not (state.elr or state.last_known_elr):
                return
            state.elr, state.last_known_elr = [], []
            state.partition_epoch += 1
        state.change = (rec.offset, rec.timestamp)

    def _report_once(self, key: int, rec: Record, message: str) -> None:
        """A problem found while folding, which happens on every look."""
        if key not in self._reported:
            self._reported.add(key)
            self.report(rec.offset, message)

    def fold_topic(self, partitions: dict, runs: "list | None") -> dict:
        """Partition id -> state of each of a topic's partitions that exists
        (``partitions``: its :attr:`~.image.TopicState.partition_records`),
        in id order, as :meth:`fold_partition` gives them; a partition whose
        only record is still the PartitionRecord of one of ``runs`` (the
        topic's filed runs) is decoded with the rest of its run (no framing
        read per record: -8% time for a full walk, ``find /``)."""
        from_runs = {}
        stamp_of = self.refs.stamp
        for entry in runs or ():
            ref, shape, pids, _ = run_fields(entry)
            got = self.store.run_data(ref, shape, len(pids))
            if got is None:
                continue
            stamp = stamp_of(ref)
            for pid, r, g in zip(pids, range(ref, ref + len(pids) * shape.size, shape.size), got):
                if g is None or partitions.get(pid) != r:   # changed since, or not as read
                    continue
                d, offset, ts = g
                dirs = d.get("directories")
                if not dirs or len(dirs) == len(d["replicas"]):
                    from_runs[pid] = partition_state(
                        d, (offset, ts) if stamp is None else (stamp[0], stamp[1] or ts))
        states = {}
        fold = self.fold_partition
        for pid in sorted(partitions):
            state = from_runs.get(pid)
            if state is None:
                state = fold(partitions[pid])
                if state is None:
                    continue
            states[pid] = state
        return states

    def topic_texts(self, partitions: dict, runs: "list | None", make) -> dict:
        """Partition id -> what shows each of a topic's partitions that
        exists, in id order (the keys :meth:`fold_topic` gives): its text
        when its only record is still the PartitionRecord of a run whose
        values are read from its bytes (``store.run_values``), its state
        (:meth:`fold_topic`) otherwise. ``make(topic id text, layout, ints,
        uuids)`` writes the texts of a run's partitions from those values,
        or gives None for a layout it does not write (a
        :class:`~metashell.fast.run_texts.RunTexts`:
        :data:`~.partition_model.RUN_TEXTS`, the native tree's;
        ``fs.kafka_text.RUN_REGISTRATIONS``, Kafka's shell's)."""
        texts, others = {}, []
        for entry in runs or ():
            ref, shape, pids, _ = run_fields(entry)
            got = self.store.run_values(ref, shape, len(pids))
            made = None if got is None else make(UUID_TEXT[got[0]], *got[1:])
            if made is None:
                others.append(entry)
                continue
            for pid, r, text in zip(pids, range(ref, ref + len(pids) * shape.size, shape.size),
                                    made):
                if partitions.get(pid) == r:   # not changed since
                    texts[pid] = text
        if len(texts) == len(partitions):
            return dict(sorted(texts.items()))
        states = self.fold_topic({pid: recs for pid, recs in partitions.items()
                                  if pid not in texts}, others)
        return {pid: texts.get(pid) or states[pid] for pid in sorted(partitions)
                if pid in texts or pid in states}

    def topic_values(self, partitions: dict, runs: "list | None") -> "tuple[list, dict]":
        """A topic's partitions that exist for a column-wise reader:
        :class:`RunValues` of each run whose values are read from its bytes
        (as :meth:`topic_texts` reads them for ``cat``), and partition id ->
        state (:meth:`fold_topic`) of every other partition, each partition
        in one of the two: no dict decoded, no state folded for a partition
        whose only record is still its run's."""
        taken, others, done = [], [], set()
        for entry in runs or ():
            ref, shape, pids, _ = run_fields(entry)
            got = self._run_values(ref, shape, len(pids))
            if got is None:
                others.append(entry)
                continue
            refs = range(ref, ref + len(pids) * shape.size, shape.size)
            kept = [partitions.get(pid) == r for pid, r in zip(pids, refs)]
            done.update(pid for pid, k in zip(pids, kept) if k)
            taken.append(RunValues(*got, None if all(kept) else kept))
        states = self.fold_topic({pid: recs for pid, recs in partitions.items()
                                  if pid not in done}, others)
        return taken, states

    def _run_values(self, ref: int, shape, n: int) -> "tuple | None":
        """The fields of :class:`RunValues` but ``kept`` for the run of ``n``
        records of ``shape`` whose first is ``ref``; None when it must be
        folded (its bytes, or a layout the model does not place)."""
        got = self.store.run_values(ref, shape, n)
        plan = None if got is None else layout_plan(got[1])
        if plan is None:
            return None
        stamp = self.refs.stamp(ref)
        if stamp is not None and stamp[1]:   # a snapshot's: its last offset and time
            changes = [stamp[0]] * n, [stamp[1]] * n
        else:
            changes = self.store.run_changes(ref, shape, n)
            if changes is None:
                return None
            if stamp is not None:
                changes = [stamp[0]] * n, changes[1]
        return (UUID_TEXT[got[0]], plan, got[2], got[3]) + changes

    def existing_partitions(self, partitions: dict, runs: "list | None") -> list:
        """The ids of a topic's partitions that exist, in id order: the keys
        :meth:`fold_topic` gives, by the same tests (a run's PartitionRecord
        that decodes whole, is still the partition's only record and has as
        many directories as replicas, or else :meth:`fold_partition` is not
        None), without making a state of a run's partition (``find``, which
        needs names only: -35% of its folding time). A run whose records
        :meth:`~metashell.fast.store.RecordStore.run_counts` reads from
        their bytes (what ``summary`` counts) is not decoded at all: its
        records all decode whole, with no directories or one per replica
        (summary_counts), so those still the partition's only record exist."""
        from_runs = set()
        store = self.store
        for entry in runs or ():
            ref, shape, pids, _ = run_fields(entry)
            refs = range(ref, ref + len(pids) * shape.size, shape.size)
            if store.run_counts(ref, shape, len(pids)) is not None:
                from_runs.update(pid for pid, r in zip(pids, refs) if partitions.get(pid) == r)
                continue
            got = store.run_data(ref, shape, len(pids))
            if got is None:
                continue
            for pid, r, g in zip(pids, refs, got):
                if g is None or partitions.get(pid) != r:   # changed since, or not as read
                    continue
                dirs = g[0].get("directories")
                if not dirs or len(dirs) == len(g[0]["replicas"]):
                    from_runs.add(pid)
        fold = self.fold_partition
        return [pid for pid in sorted(partitions)
                if pid in from_runs or fold(partitions[pid]) is not None]

    def partition_fingerprints(self, partitions: dict, pids) -> dict:
        """Partition id -> its records (as filed under it in ``partitions``),
        for the ``pids`` given, in a form that is equal for equal records and
        cheap to get: the undecoded value of a deferred or lazy record, the
        name, version and fields of one already decoded (a tuple of those for
        several records)."""
        value_bytes = self.store.value_bytes
        out = {}
        for pid in pids:
            recs = partitions[pid]
            if type(recs) is int:
                out[pid] = value_bytes(recs)
            elif len(recs) == 1 and type(recs[0]) is not int:
                r = recs[0]
                raw = r.raw
                out[pid] = raw if raw is not None else (r.name, r.version, r.data)
            else:
                out[pid] = tuple(value_bytes(r) if type(r) is int else
                                 raw if (raw := r.raw) is not None else (r.name, r.version, r.data)
                                 for r in recs)
        return out
