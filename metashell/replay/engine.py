"""Replaying records into the image with Kafka's ``MetadataDelta`` semantics.

One ``_apply_<RecordName>`` method per record type, in apiKey order, each
following what Kafka's image deltas do (kafka-metadata-shell-reference.md
section 4.2). A record that cannot be applied is reported as a
:class:`Problem` with its offset and skipped; the rest still loads.

Partition records are not decoded here. From a reader of the engine's
:class:`~metashell.fast.store.RecordStore` they arrive as deferred entries
(:mod:`metashell.fast.deferred`: one partition record, or a topic's
partitions as one run, a TopicRecord with or without that run), and only
their refs (ints) are filed under each partition (a run is kept by its topic
until someone looks); a lazy :class:`Record` is filed as it is.
:meth:`ReplayEngine.fold_partition` decodes and merges a partition's records
when the partition is looked at. A TopicRecord's topic keeps its ref as its
history (``Image.records`` reads it back).

Metadata transactions (Begin/End/AbortTransactionRecord) buffer records and
apply them at End; Abort, or the end of input, drops them. A snapshot
replaces all state. ``until_offset`` / ``until_time`` stop the replay at a
point in the log (time travel).

``on_change`` (None unless set) is called as ``on_change(key, rec)`` with the
entity key (as in ``Image.history``; ``("partition", topic id, partition id)``
for partition records) of each record applied through the general path, for
``watch`` in live mode. Deferred records (the fast path of a file load) do
not call it: a live session reads fetched batches without deferral.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

from ..gcpause import no_cyclic_gc
from ..kraft.batch import ATTR_CODEC
from ..kraft.catalog import METADATA
from ..fast.batch_runs import BatchRun
from ..fast.change_batches import ChangeBatch
from ..fast.change_effects import ChangeEffects
from ..fast.noop_runs import NoOpRun
from ..kraft.primitives import UUID_TEXT, uuid_from_str
from ..fast import deferred
from ..fast.deferred import (API_KEY, KEPT_COUNT, KEPT_RUN, PARTITION, PARTITION_ID, PARTITION_RUN,
                               RAW_TOPIC_ID, REF, RUN_PARTITION_IDS, TOPIC, TOPIC_ID,
                               TOPIC_NAME, TOPIC_OFFSET, TOPIC_RAW_ID, TOPIC_RUN, TOPIC_TIMESTAMP,
                               TOPIC_WITH_RUN, run_fields)
from ..kraft.records import CONTROL, PARTITION_KEY, UNDECODABLE, Record
from ..fast.store import RecordStore, ref_file
from .image import (BrokerState, ControllerState, Entity, Image, PartitionState,
                    TopicState)
from .partition_model import merge_change, partition_state  # noqa: F401  (also used from here)
from ..fast.pending import PendingChanges

CONFIG_TYPES = {0: "unknown", 2: "topic", 4: "broker", 8: "broker_logger",
                16: "client_metrics", 32: "group"}
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
TRANSACTION_RECORDS = frozenset(("BeginTransactionRecord", "EndTransactionRecord",
                                 "AbortTransactionRecord"))
# records whose replay creates, changes or removes topics or partitions: pending
# changes (fast/pending.py) are filed before any of them
PARTITION_RECORDS = frozenset(("TopicRecord", "PartitionRecord", "PartitionChangeRecord",
                               "RemoveTopicRecord", "ClearElrRecord"))
# the start of a PartitionRecord / PartitionChangeRecord body: int32 partitionId, uuid topicId
_PIDS = itemgetter(RUN_PARTITION_IDS)   # of a run entry: its partition ids


@dataclass
class Problem:
    """A record that could not be decoded or applied."""

    offset: int
    message: str
    source: str = ""

    def __str__(self) -> str:
        where = f"{self.source} " if self.source else ""
        return f"{where}offset {self.offset}: {self.message}"


class ApplyError(Exception):
    """Raised inside an ``_apply_*`` method: the record is skipped and reported."""


class ReplayEngine:
    on_change = None   # optional callable(entity key, record): see the module docstring

    def __init__(self, *, until_offset: int | None = None, until_time: int | None = None,
                 store: RecordStore | None = None):
        self.store = store if store is not None else RecordStore()
        self._stamps: dict[int, tuple] = {}   # store file number -> snapshot (offset, time)
        self._fold, self._resolve = self.fold_partition, self.partition_history   # bound once
        self.image = Image(resolver=self._resolve, settle_kept=self._settle_kept)
        self.until_offset = until_offset
        self.until_time = until_time
        self.problems: list[Problem] = []
        self.applied = 0          # metadata records applied
        self.skipped = 0          # records reported as problems
        self.aborted = 0          # records dropped by AbortTransaction / end of input
        self.by_type: dict[str, int] = {}
        self.reached_limit = False
        self.source = ""          # label for problems (file name)
        self._txn: list | None = None
        self._txn_start = -1
        self.transactions: list[tuple[int, int]] = []   # (begin, end) offsets of those applied
        self._reported: set[int] = set()   # keys of partition records already reported while folding
        self._snapshot = None     # (end_offset - 1, timestamp) while applying a snapshot
        self._skip_before = -1    # log records with offset < this are covered by the snapshot
        self._rules: dict = {}    # record name -> bound _apply_<name> method (None: no rule)
        # a log's partition changes, not yet filed (fast/pending.py)
        self._changes = PendingChanges(self._file_topic, self.store.buffer)

    # -- feeding ------------------------------------------------------------------

    def begin_snapshot(self, end_offset: int | None, timestamp: int | None, epoch: int = -1) -> None:
        """Start applying a snapshot: all state is replaced by what it holds.
        ``end_offset`` (exclusive, from the file name) and ``timestamp``
        (SnapshotHeader.LastContainedLogTimestamp) stamp its entities."""
        self.settle()   # counted and reported, as everything before the snapshot
        self.image = Image(resolver=self._resolve, settle_kept=self._settle_kept)
        self._txn = None
        self._snapshot = (end_offset - 1 if end_offset is not None else None, timestamp)
        if end_offset is not None:
            self.image.last_offset = self.image.data_offset = end_offset - 1
            self._skip_before = end_offset
        if timestamp is not None:
            self.image.last_time = self.image.data_time = timestamp
        if epoch >= 0:
            self.image.quorum.leader_epoch = epoch
            self.image.last_epoch = epoch

    def end_snapshot(self) -> None:
        if self._txn is not None:
            self._drop_transaction("the snapshot ended inside a metadata transaction")
        self._snapshot = None

    def apply_batch(self, batch) -> bool:
        """Apply one batch; returns False once the time-travel limit is passed
        (the caller can stop reading)."""
        h, records = batch.header, batch.records
        if type(records) is NoOpRun:
            return self._apply_noops(h, records)
        if type(records) is BatchRun:
            return self._apply_run(batch)
        in_snapshot = self._snapshot is not None
        if in_snapshot:
            if type(records) is ChangeBatch:
                records = records.entries()
            return self._apply_entries(h, records, self._stamp(batch), True)
        records = self._log_records(batch)
        if type(records) is bool:
            return records
        return self._apply_entries(h, records, None, False)

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
        unread = type(records) is ChangeBatch
        if (self._txn is None and h.base_offset >= self._skip_before and records
                and (unread or deferred.only_changes(records))
                and not h.attributes & ATTR_CODEC and self.on_change is None
                and self.store.searchable(batch.file_no)):
            # only partition changes, as read from the file: kept, not filed
            return self._defer_changes(h, records, batch.file_no)
        if unread:
            records = records.entries()
        if self._changes.batches and any(type(r) is tuple for r in records):
            self.settle()   # topic or partition records follow the pending changes
        if h.base_offset < self._skip_before or (self.until_offset is not None
                                                and h.last_offset > self.until_offset):
            # the batch is cut: every record needs its own offset
            records = [rec for r in records for rec in (
                map(self._materialize, deferred.refs(r)) if type(r) is tuple else (r,))]
        return records

    def _stamp(self, batch) -> "tuple | None":
        """The ``(offset, time)`` a snapshot's records are stamped with (its
        last offset and time); only a control record (SnapshotHeader) can
        change them inside a batch."""
        stamp = self._snapshot
        if batch.is_control or stamp[0] is None:
            return None
        if batch.file_no >= 0:
            self._stamps[batch.file_no] = stamp
        return stamp

    def _apply_entries(self, h, records: list, stamp: "tuple | None", in_snapshot: bool) -> bool:
        """Apply a batch's records: deferred entries (:mod:`..fast.deferred`)
        outside a transaction as _apply_TopicRecord, _apply_PartitionRecord and
        _apply_PartitionChangeRecord would, anything else through the general
        path. The counts are added once per batch, and the topic last created
        or filed under is not looked up again for its partitions (-23% engine
        time per snapshot topic)."""
        new_topics = new_partitions = 0
        last_raw = last_topic = None
        topics = self.image.topics
        self._batch_last = None
        for rec in records:
            if type(rec) is not tuple:
                pending = (rec,)
            else:
                kind = len(rec)
                if kind == KEPT_RUN:
                    pending = self._kept_run(rec, in_snapshot)
                    if pending is None:
                        continue
                elif self._txn is not None:
                    pending = [self._materialize(ref) for ref in deferred.refs(rec)]
                elif kind == TOPIC_WITH_RUN or kind == TOPIC:
                    t = self._new_topic(rec, stamp)
                    if t is not None:
                        new_topics += 1
                        if kind == TOPIC_WITH_RUN:   # its run, kept by _new_topic
                            new_partitions += len(rec[TOPIC_RUN][RUN_PARTITION_IDS])
                        last_raw, last_topic = rec[TOPIC_RAW_ID], t
                        continue
                    # the topic exists: its record (reported) and its partitions'
                    pending = [self._materialize(ref) for ref in deferred.refs(rec)]
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
            if not self._apply_records(h, pending, stamp, in_snapshot):
                self._count_fast(new_topics, new_partitions)
                return False
        self._count_fast(new_topics, new_partitions)
        if not in_snapshot and records:
            self.image.last_offset = max(self.image.last_offset, h.last_offset)
            self.image.last_time = max(self.image.last_time, h.max_timestamp)
            if not h.is_control:
                self.image.last_epoch = h.epoch
                self.image.data_offset = self.image.last_offset
                self.image.data_time = h.max_timestamp   # its own: Kafka's, not a running max
        return True

    def _kept_run(self, rec: deferred.KeptRun, in_snapshot: bool) -> "list | None":
        """A run of a snapshot's records ``ls`` does not need: kept unread in
        the image, counted now (None); outside a snapshot, its records."""
        api, n = rec[API_KEY], rec[KEPT_COUNT]
        if in_snapshot:   # read when they are first looked at (fast/kept_runs.py)
            self.image.kept_runs.setdefault(api, []).append(rec)
            self.image.kept_checked.discard(api)
            self._count(METADATA[api].name, n)
            return None
        return [self._materialize(ref) for ref in self.store.run_refs(rec[REF], n)]

    def _file_partitions(self, rec: "deferred.Partition | deferred.PartitionRun",
                         t: TopicState | None) -> list:
        """File a deferred partition record, or a run of them record by record,
        under topic ``t``; the records that could not be (no such topic or
        partition, which the general path reports, so they may come after the
        others)."""
        file_one, materialize = self._file_one, self._materialize
        return [materialize(one[REF]) for one in deferred.records(rec)
                if t is None or not file_one(one, t)]

    def _apply_records(self, h, recs, stamp: "tuple | None", in_snapshot: bool) -> bool:
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
                    last = self._batch_last
                    if last is not None:
                        self.image.last_offset = max(self.image.last_offset, last.offset)
                        self.image.last_time = max(self.image.last_time, last.timestamp)
                        self.image.last_epoch = h.epoch
                        self.image.data_offset = self.image.last_offset
                        self.image.data_time = last.timestamp
                    return False
            self._batch_last = rec
            self.apply(rec, h)
        return True

    def _apply_noops(self, h, run: NoOpRun) -> bool:
        """A run of heartbeat batches (one NoOpRecord each; ``h`` spans them):
        counted at once, where nothing can stop or hold them on the way; else
        batch by batch, as read one at a time."""
        if self._snapshot is None and self._txn is None:
            if h.last_offset < self._skip_before:
                return True
            if self._within_limits(h):
                self._count("NoOpRecord", run.count)
                self._ended_data_batches(h)
                return True
        for batch in run.batches():
            if not self.apply_batch(batch):
                return False
        return True

    def _apply_run(self, batch) -> bool:
        """A run of small batches (``fast/batch_runs``; the header
        spans them): its heartbeats counted and its entries applied as one
        batch's, or kept as pending changes if they are all changes, where
        nothing can stop or hold them on the way; else batch by batch, as
        read one at a time."""
        h, run = batch.header, batch.records
        if (self._snapshot is None and self._txn is None and self.on_change is None
                and self._within_limits(h)):
            if run.noops:
                self._count("NoOpRecord", run.noops)
            entries = run.entries
            if run.changes_only and self.store.searchable(batch.file_no):
                self._changes.add(batch.file_no, h.position, h.end, entries)
            elif entries:
                if self._changes.batches:
                    self.settle()   # topic records follow the pending changes
                self._apply_entries(h, entries, None, False)
            self._ended_data_batches(h)
            return True
        if self._snapshot is None and h.last_offset < self._skip_before:
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
        image = self.image
        image.last_time = max(image.last_time, h.max_timestamp)
        image.data_time = h.max_timestamp
        image.last_offset = image.data_offset = max(image.last_offset, h.last_offset)
        image.last_epoch = h.epoch

    def _defer_changes(self, h, entries: list, file_no: int) -> bool:
        """Keep a batch of deferred partition changes unfiled (see
        fast/pending.py); where the time-travel limit falls inside it, only
        those up to the limit, and stop."""
        if self.until_offset is None or h.last_offset <= self.until_offset:
            self._changes.add(file_no, h.position, h.end, entries)
            self._ended_data_batches(h)
            return True
        kept, last = [], None
        if type(entries) is ChangeBatch:
            entries = entries.entries()
        for entry in entries:
            for one in deferred.records(entry):
                rec = self.store.record(one[REF])
                if rec.offset > self.until_offset:
                    break
                kept.append(one)
                last = rec
        self.reached_limit = True
        if last is not None:
            self._changes.add(file_no, h.position, h.end, kept)
            image = self.image
            image.last_time = max(image.last_time, last.timestamp)
            image.data_time = last.timestamp
            image.last_offset = image.data_offset = max(image.last_offset, last.offset)
            image.last_epoch = h.epoch
        return False

    def settle(self) -> None:
        """File every pending partition change, in log order."""
        if self._changes.batches:
            with no_cyclic_gc():
                for entries in self._changes.take_all():
                    self._file_changes(entries, None)

    def _file_topic(self, t: TopicState) -> None:
        """File the pending changes of topic ``t`` (its partitions are being
        looked at); all of them once searching costs more than that."""
        changes = self._changes
        changes.searched.add(t.topic_id)
        self._file_changes(changes.take_topic(uuid_from_str(t.topic_id)), t)
        if changes.over_budget():
            self.settle()

    def _file_changes(self, entries: list, topic: TopicState | None) -> None:
        """File deferred change entries (None: taken already) as the fast
        path of :meth:`apply_batch` would, under ``topic`` if given (they all
        name it) or under the topic each names."""
        topics, file_one = self.image.topics, self._file_one
        last_raw = None
        t = topic
        for entry in entries:
            if entry is None:
                continue
            if topic is None and entry[RAW_TOPIC_ID] != last_raw:
                last_raw = entry[RAW_TOPIC_ID]
                t = topics.get(UUID_TEXT[last_raw])
            for one in deferred.records(entry):
                if t is None or not file_one(one, t):
                    # no such partition: reported (in its turn, not after the others)
                    self._dispatch(self._materialize(one[REF]), settle=False)

    def _new_topic(self, rec: tuple, stamp) -> TopicState | None:
        """Create a topic from a TopicRecord read on the fast path (a
        ``deferred.TOPIC`` or ``TOPIC_WITH_RUN`` entry) as
        _apply_TopicRecord would, if its id is new (None, nothing done,
        otherwise), with the run of its partitions that came with it. It
        keeps the ref as its history. Not counted here (the caller counts a
        batch's at once)."""
        if self.on_change is not None:
            return None
        ref, name, offset, ts, tid = (rec[REF], rec[TOPIC_NAME], rec[TOPIC_OFFSET],
                                      rec[TOPIC_TIMESTAMP], rec[TOPIC_ID])
        image = self.image
        # as the general path stamps a snapshot's records: all its topics share
        # one change (-5% memory per topic)
        change = (offset, ts) if stamp is None else stamp if stamp[1] else (stamp[0], ts)
        t = TopicState(name, tid, change, None, self._fold, self._resolve, self._changes,
                       rec[TOPIC_RUN] if len(rec) == TOPIC_WITH_RUN else None,   # as deferred.topic_run, inline
                       ref)
        if image.topics.setdefault(tid, t) is not t:
            return None   # not new
        image.topic_names[name] = tid
        key = ("topic", tid)
        if key in image.history:   # made and removed before: its history goes on
            t.created = None
            _history_add(image.history, key, image.history[key], ref)
        return t

    def _count_fast(self, topics: int, partitions: int) -> None:
        if topics:
            self._count("TopicRecord", topics)
        if partitions:
            self._count("PartitionRecord", partitions)

    def _file_one(self, rec: tuple, t: TopicState) -> bool:
        """File one deferred partition record (``deferred.PARTITION``) under
        its topic ``t`` (for a change, a known partition); False (nothing
        filed) otherwise."""
        ref, api, pid = rec[REF], rec[API_KEY], rec[PARTITION_ID]
        partitions = t.partition_records
        cur = partitions.get(pid)
        if cur is None:
            if api != 3:
                return False
            partitions[pid] = ref
        elif type(cur) is list:
            cur.append(ref)
        else:
            partitions[pid] = [cur, ref]
        self._count("PartitionRecord" if api == 3 else "PartitionChangeRecord", 1)
        return True

    def _count(self, name: str, n: int) -> None:
        self.applied += n
        by_type = self.by_type
        by_type[name] = by_type.get(name, 0) + n

    def _settle_kept(self, api: int | None) -> None:
        """Read and apply the runs of records of apiKey ``api`` (None: all) a
        snapshot's batches left unread (:mod:`..fast.kept_runs`), in order:
        that part of the image is being looked at, or changed by what
        follows. They were counted as applied when kept (see
        :meth:`_check_kept`): one that fails is taken back."""
        kept = self.image.kept_runs
        with no_cyclic_gc():
            for a in list(kept) if api is None else [api]:
                name = METADATA[a].name
                for run in kept.pop(a):
                    ref, n = run[REF], run[KEPT_COUNT]
                    if a == 4 and self.on_change is None:
                        self._apply_configs(ref, n)
                        continue
                    for one in self.store.run_refs(ref, n):
                        self._apply_kept(one, name)

    def config_values(self, name: str) -> dict:
        """``{(type name, resource name): value}`` of config ``name`` as
        ``Image.configs`` holds it, without applying the ConfigRecords a
        snapshot kept unread where their bytes say it (``summary``: every
        topic's ``min.insync.replicas``; 0.50x -> 0.39x the walk on a snapshot
        with three overrides per topic); they are applied where they do not."""
        image = self.image
        runs = image.kept_runs.get(4)
        found = [] if runs is None else [self.store.config_values(run[REF], run[KEPT_COUNT], name.encode())
                                         for run in runs]
        if None in found:
            found = []
        configs = image._configs if found else image.configs   # none kept, or applied now
        out = {key: ent.value for key, keys in configs.items() if (ent := keys.get(name)) is not None}
        for values in found:
            for (rtype, rname), value in values.items():
                key = (CONFIG_TYPES.get(rtype) or f"type_{rtype}", rname)
                if value is None:
                    out.pop(key, None)
                else:
                    out[key] = value
        if found:
            image.kept_checked.add(4)   # they decode: counted as they are
        return out

    def _check_kept(self) -> None:
        """Make sure every record kept unread applies (they were counted
        when kept) by decoding it, nothing applied (`summary` on a snapshot
        with two ACLs per topic: 0.66x -> 0.59x the walk, and no entity
        made); a kind with one that would not is applied now, so that it is
        reported and taken back."""
        image, data, run_refs = self.image, self.store.data, self.store.run_refs
        for api in [a for a in image.kept_runs if a not in image.kept_checked]:
            for run in image.kept_runs[api]:
                ref, n = run[REF], run[KEPT_COUNT]
                if api == 18 and self.store.acls_decode(ref, n):   # ACLs: 4 -> 1 us each
                    continue
                got = [data(one, api) for one in run_refs(ref, n)]
                if None in got or (api == 11 and any("credentialInfos" in g[0] for g in got)):
                    self._settle_kept(api)   # the pre-3.5 SCRAM layout is not replayed either
                    break
            else:
                image.kept_checked.add(api)

    def _apply_configs(self, ref: int, n: int) -> None:
        """A run of ConfigRecords read straight from its bytes, each ref its
        history (no Record: 3.7 -> 1.8 us per record), as _apply_ConfigRecord
        applies one; one laid out otherwise as the general path reads it."""
        base, h, append_ts, found = self.store.config_fields(ref, n)
        stamp = self._stamps.get(ref_file(ref))
        ts = h.base_timestamp if append_ts is None else append_ts
        for f in found:
            if len(f) == 1:
                self._apply_kept(base + f[0], "ConfigRecord")
                continue
            change = (stamp[0], stamp[1] or ts) if stamp else (h.base_offset + f[1], ts)
            self._set_config(f[2], f[3], f[4], f[5], change, base + f[0])

    def _apply_kept(self, ref: int, name: str) -> None:
        """A kept record applied as the general path applies one (counted
        once already: taken back, counted again if it applies)."""
        rec = self._materialize(ref)
        if rec.kind == UNDECODABLE:
            self._undecodable(rec)
        else:
            self._dispatch(rec)
        self._count(name, -1)

    def _materialize(self, ref: int) -> Record:
        """The record a deferred ref names, stamped as its snapshot's records are."""
        rec = self.store.record(ref)
        rec.offset, rec.timestamp = self._stamped(ref, rec.offset, rec.timestamp)
        return rec

    def _stamped(self, ref: int, offset: int, timestamp: int) -> tuple[int, int]:
        """The offset and time a deferred record shows: a snapshot's records
        are stamped with its last offset and time."""
        stamp = self._stamps.get(ref_file(ref))
        if stamp is None:
            return offset, timestamp
        return stamp[0], stamp[1] or timestamp

    def partition_history(self, recs) -> list[Record]:
        """A partition's records (as filed under it), as :class:`Record` objects."""
        if type(recs) is not list:
            recs = [recs]
        return [self._materialize(r) if type(r) is int else r for r in recs]

    def run_counts(self, topic: TopicState) -> "tuple[list, bytes, bool] | None":
        """For a topic whose partitions are all still in deferred runs of
        PartitionRecords (a snapshot's, untouched since, the log's pending
        changes aside), each run's ``(partitions, replicas, isr, leaders)``
        read from the bytes, as :meth:`fold_partition` would give them, the
        topic's raw id, and whether its partition ids are 0 to n - 1; None
        if it must fold."""
        runs = topic.pending_runs()
        if runs is None:
            return None
        if len(runs) == 1:   # most topics: one run, ids 0 to n - 1 (-13% `summary` on a snapshot)
            run = runs[0]
            ref, shape, pids, raw = deferred.run_fields(run)
            n = len(pids)
            counts = self.store.run_counts(ref, shape, n)
            if counts is None:
                return None
            dense = pids == (_RANGES.get(n) or _range(n))
            if not dense and len(set(pids)) != n:
                return None
            return [(n, *counts)], raw, dense
        out = self.store.runs_counts(runs)
        if out is None:
            return None
        pids = tuple(chain.from_iterable(map(_PIDS, runs)))
        n = len(pids)
        if pids == (_RANGES.get(n) or _range(n)):   # ids 0 to n - 1 in order, as a controller writes them
            return out, runs[0][RAW_TOPIC_ID], True
        if len(set(pids)) != n:   # a partition twice: fold it
            return None
        return out, runs[0][RAW_TOPIC_ID], min(pids) == 0 and max(pids) == n - 1

    def pending_effects(self) -> "ChangeEffects | None":
        """What the pending partition changes do (fast/pending.py), read
        from their bytes without filing them, for ``summary``; None if none
        are pending, or if they had to be filed (see
        :meth:`PendingChanges.effects`)."""
        if not self._changes.batches:
            return None
        with no_cyclic_gc():   # an effect per change: half a million tuples
            effects = self._changes.effects(self.store.record)
        if effects is None:
            self.settle()
        return effects

    def record_counts(self) -> dict:
        """How many records were applied, skipped and dropped, by type; the
        pending partition changes counted as applied (``summary`` makes
        sure each names a partition that exists) and a snapshot's records
        kept unread (each checked to apply)."""
        self._check_kept()
        by_type = dict(self.by_type)
        pending = self._changes.count() if self._changes.batches else 0
        if pending:
            by_type["PartitionChangeRecord"] = by_type.get("PartitionChangeRecord", 0) + pending
        return {"recordsApplied": self.applied + pending, "recordsSkipped": self.skipped,
                "recordsDropped": self.aborted, "byType": dict(sorted(by_type.items()))}

    def filed_counts(self, topic: TopicState) -> "tuple[list, bytes, bool]":
        """For a topic whose partitions were filed (looked at, or changed),
        what :meth:`run_counts` gives for one in runs: ``(partition
        counts, raw id, whether its partition ids are 0 to n - 1)``, its
        runs' untouched partitions read from the bytes, the others folded
        (one count per partition), as filed so far (the log's pending
        changes left pending). A partition none of whose records decode is
        not there, and leaves its topic not dense."""
        partitions = topic.filed_records()
        counts, others = self.filed_run_counts(topic, partitions)
        fold = self.fold_partition
        for pid in others:
            p = fold(partitions[pid])
            if p is not None:
                counts.append((1, len(p.replicas), len(p.isr), (p.leader,)))
        n = sum(c[0] for c in counts)
        dense = n == len(partitions) and n > 0 and min(partitions) == 0 and max(partitions) == n - 1
        return counts, uuid_from_str(topic.topic_id), dense

    def filed_run_counts(self, topic: TopicState, partitions: dict) -> tuple[list, list]:
        """For a topic whose runs were filed, with its partition records
        ``partitions``: ``(counts, others)``, per run the ``(partitions,
        replicas, isr, leaders)`` of its partitions that hold its record and
        nothing else, read from the bytes as :meth:`run_counts` does, and
        the ids of the other partitions, to fold (a controller's log changes
        some partitions of most topics: -60% ``summary`` time on the bench's
        log dir)."""
        counts, seen = [], set()
        change_counts = self.store.change_counts
        for entry in topic.filed_runs or ():
            ref, shape, pids, _ = run_fields(entry)
            run = self.store.run_counts(ref, shape, len(pids))
            if run is None:
                continue
            replicas, isr, leaders = run
            get, size = partitions.get, shape.size
            by_isr: dict[int, list] = {}   # ISR count -> leaders of the partitions counted
            for pid, leader, r in zip(pids, leaders, range(ref, ref + len(pids) * size, size)):
                cur = get(pid)
                if cur == r:               # the run's record alone
                    n = isr
                elif type(cur) is list and cur[0] == r:   # changed since: ISR and leader only?
                    after = change_counts(cur[1:], isr, leader)
                    if after is None:
                        continue
                    n, leader = after
                else:
                    continue
                by_isr.setdefault(n, []).append(leader)
                seen.add(pid)
            counts.extend((len(lead), replicas, n, lead) for n, lead in by_isr.items())
        return counts, [pid for pid in partitions if pid not in seen]

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

    def close(self) -> None:
        """Let go of the image and the files. The image's topics call back into
        the engine (folding), so engine and image hold each other: dropping
        them here frees a whole cluster at once by reference counting, where a
        cyclic collection would walk millions of objects first. A closed
        engine is not used again."""
        self.image = None
        self.store = None
        self._changes = None
        self._rules = {}
        self._fold = self._resolve = None

    def finish(self) -> None:
        """End of input: an open transaction is dropped, as Kafka does."""
        if self._txn is not None:
            self._drop_transaction("the input ended inside a metadata transaction "
                                   f"(begun at offset {self._txn_start})")

    # -- one record ----------------------------------------------------------------

    def apply(self, rec: Record, header=None, in_snapshot: bool = False) -> None:
        if in_snapshot and self._snapshot[0] is not None:
            rec.offset, rec.timestamp = self._snapshot[0], self._snapshot[1] or rec.timestamp
        if rec.kind == CONTROL:
            self._apply_control(rec, header)
            return
        if rec.kind == UNDECODABLE:
            self._undecodable(rec)
            return
        if rec.name in TRANSACTION_RECORDS:
            self._transaction(rec)
            return
        if self._txn is not None:
            self._txn.append(rec)
            return
        self._dispatch(rec)

    def _undecodable(self, rec: Record) -> None:
        self._problem(rec.offset, f"undecodable {rec.name}"
                      f"{'' if rec.version is None else ' v' + str(rec.version)}: {rec.error}")

    def _dispatch(self, rec: Record, settle: bool = True) -> None:
        name = rec.name
        if settle and self._changes.batches and name in PARTITION_RECORDS:
            self.settle()
        try:
            method = self._rules[name]
        except KeyError:
            method = self._rules[name] = getattr(self, "_apply_" + name, None)
        if method is None:
            self._problem(rec.offset, f"no replay rule for {rec.name}")
            return
        try:
            method(rec)
        except ApplyError as e:
            self._problem(rec.offset, f"{rec.name}: {e}")
            return
        if rec.kind == UNDECODABLE:   # a lazy body turned out bad
            self._problem(rec.offset, f"undecodable {rec.name} v{rec.version}: {rec.error}")
            return
        self.applied += 1
        by_type = self.by_type
        by_type[name] = by_type.get(name, 0) + 1

    def _problem(self, offset: int, message: str) -> None:
        self.skipped += 1
        if len(self.problems) < 10_000:
            self.problems.append(Problem(offset, message, self.source))

    # -- transactions (KIP-868) -------------------------------------------------------

    def _transaction(self, rec: Record) -> None:
        name = rec.name
        if name == "BeginTransactionRecord":
            if self._txn is not None:
                self._problem(rec.offset, "BeginTransactionRecord while already in a transaction "
                                          f"(begun at offset {self._txn_start})")
                return
            self._txn = []
            self._txn_start = rec.offset
        elif self._txn is None:
            self._problem(rec.offset, f"{name} without having seen a BeginTransactionRecord")
            return
        elif name == "EndTransactionRecord":
            self.transactions.append((self._txn_start, rec.offset))
            pending, self._txn = self._txn, None
            for r in pending:
                self._dispatch(r)
        else:
            self._drop_transaction(None)
        self.applied += 1
        self.by_type[name] = self.by_type.get(name, 0) + 1

    def _drop_transaction(self, why: str | None) -> None:
        pending, self._txn = self._txn or [], None
        self.aborted += len(pending)
        if why:
            self.problems.append(Problem(self._txn_start, f"{why}: {len(pending)} record(s) dropped",
                                         self.source))

    # -- control records: the quorum ------------------------------------------------

    def _apply_control(self, rec: Record, header) -> None:
        q = self.image.quorum
        d = rec.data
        if d is None:
            self._problem(rec.offset, f"undecodable {rec.name}: {rec.error}")
            return
        name = rec.name
        if name == "LeaderChangeMessage":
            q.leader_id = d["leaderId"]
            if header is not None:
                q.leader_epoch = header.epoch
            if q.voters_from != "VotersRecord":
                q.voters = {v["voterId"]: {} for v in d.get("voters", ())}
                q.voters_from = "LeaderChangeMessage"
        elif name == "KRaftVersionRecord":
            q.kraft_version = d["kRaftVersion"]
        elif name == "VotersRecord":
            q.voters = {v["voterId"]: {
                "directoryId": v["voterDirectoryId"],
                "endpoints": [{"name": e["name"], "host": e["host"], "port": e["port"]}
                              for e in v["endpoints"]],
                "kraftVersion": {"min": v["kRaftVersionFeature"]["minSupportedVersion"],
                                 "max": v["kRaftVersionFeature"]["maxSupportedVersion"]},
            } for v in d["voters"]}
            q.voters_from = "VotersRecord"
        elif name == "SnapshotHeaderRecord" and self._snapshot is not None:
            if self._snapshot[1] is None:
                self._snapshot = (self._snapshot[0], d["lastContainedLogTimestamp"])
                if self._snapshot[0] is not None:   # the image is as of the snapshot's last record
                    self.image.last_time = max(self.image.last_time, self._snapshot[1])
                    self.image.data_time = self.image.last_time
            return
        else:
            return
        q.change = (rec.offset, rec.timestamp)
        self._history(("quorum",), rec)

    # -- brokers and controllers ----------------------------------------------------

    def _apply_RegisterBrokerRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        bid = d["brokerId"]
        self.image.brokers[bid] = BrokerState(
            broker_id=bid, epoch=d["brokerEpoch"], registration=d,
            fenced=d.get("fenced", True), in_controlled_shutdown=d.get("inControlledShutdown", False),
            # a snapshot does not say when a broker registered
            registered_at=None if self._snapshot is not None else rec.timestamp, log_dirs=list(d.get("logDirs", [])),
            change=(rec.offset, rec.timestamp), cordoned_log_dirs=d.get("cordonedLogDirs"))
        self._history(("broker", bid), rec)

    def _apply_UnregisterBrokerRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        self.image.brokers.pop(d["brokerId"], None)
        self._history(("broker", d["brokerId"]), rec)

    def _broker(self, bid: int, epoch: int, action: str) -> BrokerState:
        b = self.image.brokers.get(bid)
        if b is None:
            raise ApplyError(f"tried to {action} broker {bid}, but that broker was not registered")
        if b.epoch != epoch:
            raise ApplyError(f"tried to {action} broker {bid}, but the given epoch, {epoch}, did not "
                             f"match the current broker epoch, {b.epoch}")
        return b

    def _apply_FenceBrokerRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        b = self._broker(d["id"], d["epoch"], "fence")
        b.fenced = True
        self._touch(b, ("broker", b.broker_id), rec)

    def _apply_UnfenceBrokerRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        b = self._broker(d["id"], d["epoch"], "unfence")
        b.fenced = False
        self._touch(b, ("broker", b.broker_id), rec)

    def _apply_BrokerRegistrationChangeRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        b = self._broker(d["brokerId"], d["brokerEpoch"], "change")
        fenced, ics = d.get("fenced", 0), d.get("inControlledShutdown", 0)
        if fenced not in (-1, 0, 1):
            raise ApplyError(f"unknown value for fenced field: {fenced}")
        if ics not in (0, 1):
            raise ApplyError(f"unknown value for inControlledShutdown field: {ics}")
        if fenced:
            b.fenced = fenced == 1
        if ics:
            b.in_controlled_shutdown = True
        if d.get("logDirs"):
            b.log_dirs = list(d["logDirs"])
        if d.get("cordonedLogDirs") is not None:
            b.cordoned_log_dirs = list(d["cordonedLogDirs"])
        self._touch(b, ("broker", b.broker_id), rec)

    def _apply_RegisterControllerRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        cid = d["controllerId"]
        self.image.controllers[cid] = ControllerState(cid, d, (rec.offset, rec.timestamp))
        self._history(("controller", cid), rec)

    def _apply_UnregisterControllerRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        self.image.controllers.pop(d["controllerId"], None)
        self._history(("controller", d["controllerId"]), rec)

    # -- topics and partitions --------------------------------------------------------

    def _apply_TopicRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        tid, name = d["topicId"], d["name"]
        self.image.keep_history(tid)
        old = self.image.topics.get(tid)
        t = TopicState(name, tid, (rec.offset, rec.timestamp), folder=self._fold,
                       resolver=self._resolve, pending=self._changes)
        self._history(("topic", tid), rec)
        if old is not None and old.name != name and self.image.topic_names.get(old.name) == tid:
            del self.image.topic_names[old.name]
        self.image.topics[tid] = t
        self.image.topic_names[name] = tid

    def _partition_key(self, rec: Record) -> tuple[str, int]:
        """(topic id, partition id), read from the raw body of a lazy record."""
        buf = rec._buf
        if buf is not None:
            b = rec._body
            if rec._end - b >= 20:
                pid, raw = PARTITION_KEY(buf, b)
                return UUID_TEXT[raw], pid
        d = rec.data
        if d is None:
            raise ApplyError("undecodable")
        return d["topicId"], d["partitionId"]

    def _apply_PartitionRecord(self, rec: Record) -> None:
        tid, pid = self._partition_key(rec)
        t = self.image.topics.get(tid)
        if t is None:
            raise ApplyError(f"unable to replay a PartitionRecord for topic id {tid}: no such topic")
        _file(t.partition_records, pid, rec)
        if self.on_change is not None:
            self.on_change(("partition", tid, pid), rec)

    def _apply_PartitionChangeRecord(self, rec: Record) -> None:
        tid, pid = self._partition_key(rec)
        t = self.image.topics.get(tid)
        if t is None or pid not in t.partition_records:
            raise ApplyError(f"unable to find partition {tid}:{pid}")
        _file(t.partition_records, pid, rec)
        if self.on_change is not None:
            self.on_change(("partition", tid, pid), rec)

    def _apply_RemoveTopicRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        tid = d["topicId"]
        self.image.keep_history(tid)
        t = self.image.topics.pop(tid, None)
        self._history(("topic", tid), rec)
        if t is None:
            raise ApplyError(f"unable to delete topic with id {tid}: no such topic found")
        if self.image.topic_names.get(t.name) == tid:
            del self.image.topic_names[t.name]
        self.image.configs.pop(("topic", t.name), None)

    def _apply_ClearElrRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        name = d["topicName"]
        if name:
            t = self.image.topic_by_name(name)
            if t is None:
                raise ApplyError(f"unable to clear elr for topic with name {name}: no such topic found")
            topics = [t]
        else:
            topics = list(self.image.topics.values())
        for t in topics:
            partitions = t.partition_records
            for pid in partitions:
                _file(partitions, pid, rec)
        if self.on_change is not None:
            self.on_change(("topic", topics[0].topic_id) if name else ("topics",), rec)

    def fold_topic(self, partitions: dict, runs: "list | None") -> dict:
        """Partition id -> state of each of a topic's partitions that exists
        (``partitions``: its :attr:`~.image.TopicState.partition_records`),
        in id order, as :meth:`fold_partition` gives them; a partition whose
        only record is still the PartitionRecord of one of ``runs`` (the
        topic's filed runs) is decoded with the rest of its run (no framing
        read per record: -8% time for a full walk, ``find /``)."""
        from_runs = {}
        stamps = self._stamps
        for entry in runs or ():
            ref, shape, pids, _ = run_fields(entry)
            got = self.store.run_data(ref, shape, len(pids))
            if got is None:
                continue
            stamp = stamps.get(ref_file(ref))
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
        or gives None for a layout it does not write
        (:func:`~.partition_model.run_texts`, the native tree's;
        ``fs.kafka_text.run_registrations``, Kafka's shell's)."""
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
                    return partition_state(d, self._stamped(recs, offset, ts))
            recs = [recs]
        # each record with the key it is reported under (a problem found while
        # folding is found again at every look, but reported once)
        entries = [(~r, self._materialize(r)) if type(r) is int else (id(r), r) for r in recs]
        # Start from the newest PartitionRecord that decodes: Kafka skips an
        # undecodable one, so the changes after it apply to the older registration.
        start, state = 0, None
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
            state = partition_from_record(d, rec)
            start = i + 1
            break
        for key, rec in entries[start:]:
            name = rec.name
            # every PartitionRecord was weighed by the backward scan above
            if name == "PartitionRecord":
                continue
            d = rec.peek() if rec.kind != UNDECODABLE else None
            if d is None:
                self._report_once(key, rec, f"undecodable {rec.name} v{rec.version}: {rec.error}")
                continue
            if state is None:
                if name == "PartitionChangeRecord":
                    self._report_once(key, rec, f"PartitionChangeRecord: unable to find partition "
                                                f"{d['topicId']}:{d['partitionId']}")
                continue
            elif name == "PartitionChangeRecord":
                error = merge_change(state, d)
                if error:   # Kafka rejects the change: the partition stays as it was
                    self._report_once(key, rec, f"PartitionChangeRecord: {error}")
                    continue
            elif name == "ClearElrRecord":
                if not (state.elr or state.last_known_elr):
                    continue
                state.elr, state.last_known_elr = [], []
                state.partition_epoch += 1
            state.change = (rec.offset, rec.timestamp)
        return state

    def _report_once(self, key: int, rec: Record, message: str) -> None:
        """A problem found while folding, which happens on every look."""
        if key not in self._reported:
            self._reported.add(key)
            self._problem(rec.offset, message)

    # -- configs, quotas, features, producer ids -------------------------------------

    def _apply_ConfigRecord(self, rec: Record) -> None:
        d = rec.data
        if d is not None:
            self._set_config(d["resourceType"], d["resourceName"], d["name"], d["value"],
                             (rec.offset, rec.timestamp), rec)

    def _set_config(self, rtype: int, rname: str, name: str, value, change: tuple, rec) -> None:
        """A ConfigRecord's fields applied (``rec``: it, or its ref, for the history)."""
        configs = self.image.configs   # a snapshot's kept ones applied first: history in order
        key = (CONFIG_TYPES.get(rtype) or f"type_{rtype}", rname)
        self._history(("config", *key), rec)
        res = configs.get(key)
        if value is None:
            if res is not None:
                res.pop(name, None)
                if not res:
                    del configs[key]
            return
        if res is None:
            res = configs[key] = {}
        res[name] = Entity(value, change)

    def _apply_ClientQuotaRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        quotas = self.image.quotas   # a snapshot's kept ones applied first: history in order
        entity = tuple(sorted((e["entityType"], e["entityName"]) for e in d["entity"]))
        self._history(("quota", entity), rec)
        quota = quotas.get(entity)
        if d["remove"]:
            if quota is not None:
                quota.pop(d["key"], None)
                if not quota:
                    del quotas[entity]
            return
        if quota is None:
            quota = quotas[entity] = {}
        quota[d["key"]] = Entity(d["value"], (rec.offset, rec.timestamp))

    _apply_QuotaRecord = _apply_ClientQuotaRecord  # Kafka 2.8 name of apiKey 14

    def _apply_ProducerIdsRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        value = {"nextProducerId": d.get("nextProducerId", d.get("producerIdsEnd"))}
        if d["brokerId"] >= 0:   # a snapshot writes -1 for both: not known
            value["lastBrokerId"] = d["brokerId"]
            value["lastBrokerEpoch"] = d["brokerEpoch"]
        self.image.producer_ids = Entity(value, (rec.offset, rec.timestamp))
        self._history(("producerIds",), rec)

    def _apply_FeatureLevelRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        name = d["name"]
        level = d.get("featureLevel", d.get("maxFeatureLevel"))
        self._history(("feature", name), rec)
        if level == 0 and name != "metadata.version":
            self.image.features.pop(name, None)
            return
        self.image.features[name] = Entity(level, (rec.offset, rec.timestamp))

    def _apply_RemoveFeatureLevelRecord(self, rec: Record) -> None:
        d = rec.data
        if d is not None:
            self.image.features.pop(d["name"], None)
            self._history(("feature", d["name"]), rec)

    def _apply_ZkMigrationStateRecord(self, rec: Record) -> None:
        d = rec.data
        if d is not None:
            self.image.zk_migration_state = d["zkMigrationState"]

    def _apply_NoOpRecord(self, rec: Record) -> None:
        pass

    # -- ACLs, SCRAM, delegation tokens -------------------------------------------------

    def _apply_AccessControlEntryRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        self.image.acls[d["id"]] = Entity(d, (rec.offset, rec.timestamp))
        self._history(("acl", d["id"]), rec)

    def _apply_RemoveAccessControlEntryRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        acls = self.image.acls   # a snapshot's kept ones applied first: history in order
        self._history(("acl", d["id"]), rec)
        if acls.pop(d["id"], None) is None:
            raise ApplyError(f"failed to find existing ACL with ID {d['id']}")

    def _apply_AccessControlRecord(self, rec: Record) -> None:
        raise ApplyError("AccessControlRecord (apiKey 6) was removed before any release wrote it; ignored")

    def _apply_UserScramCredentialRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        if "credentialInfos" in d:   # the never-written 3.0-3.4 layout
            raise ApplyError("UserScramCredentialRecord in the pre-3.5 layout is not replayed")
        mech = SCRAM_MECHANISMS.get(d["mechanism"], f"UNKNOWN({d['mechanism']})")
        key = (mech, d["name"])
        self.image.scram[key] = Entity(d, (rec.offset, rec.timestamp))
        self._history(("scram", *key), rec)

    def _apply_RemoveUserScramCredentialRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        mech = SCRAM_MECHANISMS.get(d["mechanism"], f"UNKNOWN({d['mechanism']})")
        self.image.scram.pop((mech, d["name"]), None)
        self._history(("scram", mech, d["name"]), rec)

    def _apply_DelegationTokenRecord(self, rec: Record) -> None:
        d = rec.data
        if d is None:
            return
        self.image.tokens[d["tokenId"]] = Entity(d, (rec.offset, rec.timestamp))
        self._history(("token", d["tokenId"]), rec)

    def _apply_RemoveDelegationTokenRecord(self, rec: Record) -> None:
        d = rec.data
        if d is not None:
            self.image.tokens.pop(d["tokenId"], None)
            self._history(("token", d["tokenId"]), rec)

    # -- helpers ----------------------------------------------------------------------

    def _history(self, key: tuple, rec: Record) -> None:
        history = self.image.history
        recs = history.get(key)
        if recs is None:
            history[key] = [rec]
        else:
            _history_add(history, key, recs, rec)
        if self.on_change is not None:
            self.on_change(key, rec)

    def _touch(self, entity, key: tuple, rec: Record) -> None:
        entity.change = (rec.offset, rec.timestamp)
        self._history(key, rec)


def _history_add(history: dict, key: tuple, recs, rec) -> None:
    """Add a record to an entity's history ``recs``: a list, or the bare ref
    of the TopicRecord that created a topic on the fast path (no list per
    topic until it changes)."""
    if type(recs) is list:
        recs.append(rec)
    else:
        history[key] = [recs, rec]


def _file(partitions: dict, pid: int, rec) -> None:
    """File a record (or a deferred ref) under a partition: a lone ref is
    kept bare, anything more as a list, oldest first."""
    cur = partitions.get(pid)
    if cur is None:
        partitions[pid] = [rec]
    elif type(cur) is list:
        cur.append(rec)
    else:
        partitions[pid] = [cur, rec]


def partition_from_record(d: dict, rec: Record) -> PartitionState:
    """A partition's state from a PartitionRecord's fields (also used by the Spark
    ``partition_changes`` table, which folds the same records)."""
    return partition_state(d, (rec.offset, rec.timestamp))


_RANGES: dict[int, tuple] = {}   # n -> (0, ..., n - 1): a run's partition ids, mostly


def _range(n: int) -> tuple:
    if len(_RANGES) >= 4096:
        _RANGES.clear()
    r = _RANGES[n] = tuple(range(n))
    return r


