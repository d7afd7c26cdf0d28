"""The metadata image: the cluster state the replay engine builds.

Shapes follow Kafka's ``MetadataImage`` (brokers, controllers, topics,
configs, quotas, ACLs, features, producer ids, SCRAM, delegation tokens)
plus what Kafka's 3.5+ shell dropped: the quorum (leader, epoch, voters,
kraft.version) and counts. Every entity remembers ``change``: the
``(offset, timestamp)`` of the record that last changed it. ``history``
maps an entity key (see :func:`entity_key`) to the records that created or
changed it, and outlives the entity, so ``changes`` can explain a removal.

Partitions are the one entity a cluster has millions of, so a topic keeps,
per partition, only the (lazy, undecoded) records that touched it;
:meth:`TopicState.partition` folds them into a :class:`PartitionState`
when someone looks. Nothing is cached, so a full walk of a million
partitions never holds a million decoded partitions at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from ..fast import deferred
from ..fast.deferred import RUN_PARTITION_IDS
from .partition_model import PartitionState, run_texts  # noqa: F401  (made from the catalog there)

Change = tuple  # (offset, timestamp ms)


@dataclass
class BrokerState:
    broker_id: int
    epoch: int
    registration: dict            # the RegisterBrokerRecord fields (JSON names)
    fenced: bool
    in_controlled_shutdown: bool
    registered_at: int | None     # append time (ms) of the registering record (None from a snapshot)
    log_dirs: list
    change: Change
    cordoned_log_dirs: "list | None" = None   # 4.4+; None = never reported


@dataclass
class ControllerState:
    controller_id: int
    registration: dict
    change: Change


class TopicState:
    """A topic and, per partition, the records that created or changed it."""

    __slots__ = ("name", "topic_id", "change", "created", "_partitions", "_runs", "filed_runs",
                 "folder", "resolver", "pending")

    def __init__(self, name: str, topic_id: str, change: Change, partition_records=None,
                 folder: Callable | None = None, resolver: Callable | None = None,
                 pending=None, run: tuple | None = None, created: int | None = None):
        self.name = name
        self.topic_id = topic_id
        self.change = change
        # the deferred ref of the TopicRecord that made it on the fast path, its
        # history until anything else is added to it (see Image.history)
        self.created = created
        # made when first filed into: a snapshot's topic needs none until someone looks
        self._partitions = partition_records
        # deferred runs of PartitionRecords (reader.Batch), filed on first look: a
        # snapshot's topic costs one append until someone lists its partitions (-10%
        # instructions per record loading a snapshot, and no million-entry dicts)
        self._runs: list | None = None if run is None else [run]
        self.filed_runs: list | None = None   # the runs, once filed (summary reads their bytes)
        # set by the engine: folds a partition's records (reports undecodable ones)
        self.folder = folder
        # set by the engine: a partition's records as Record objects
        self.resolver = resolver
        # set by the engine: its log's partition changes not yet filed
        # (fast/pending.py), some of which may be this topic's
        self.pending = pending

    @property
    def partition_records(self) -> dict:
        """Partition id -> its records (PartitionRecord, PartitionChangeRecord,
        ClearElrRecord), oldest first: a list of records and deferred refs
        (ints), or one bare ref."""
        self._file_pending()
        return self.filed_records()

    def filed_records(self) -> dict:
        """:attr:`partition_records` as filed so far: its log's pending
        changes left pending (``summary`` reads what they do from their bytes)."""
        if self._runs is not None:
            self._file_runs()
        partitions = self._partitions
        if partitions is None:
            partitions = self._partitions = {}
        return partitions

    def add_run(self, entry: tuple) -> None:
        """Keep a deferred run of this topic's PartitionRecords, the reader's
        ``deferred.PARTITION_RUN`` entry, to
        file later, in order."""
        if self._runs is None:
            self._runs = [entry]
        else:
            self._runs.append(entry)

    def pending_runs(self) -> list | None:
        """The runs kept since the topic was created, when they are all its
        partition records (nobody has looked yet, nothing else was filed);
        its log's pending changes are not filed (``summary`` reads what
        they do from their bytes)."""
        return self._runs if not self._partitions else None

    def _file_pending(self) -> None:
        """File this topic's changes still pending in its log, if any may be."""
        pending = self.pending
        if pending is not None and pending.batches and self.topic_id not in pending.searched:
            pending.file_topic(self)

    def _file_runs(self) -> None:
        runs, self._runs = self._runs, None
        if self.filed_runs is None:
            self.filed_runs = runs
        else:
            self.filed_runs += runs
        partitions = self._partitions
        if partitions is None:
            partitions = self._partitions = {}
        for entry in runs:
            pids, refs = entry[RUN_PARTITION_IDS], deferred.refs(entry)
            new = dict(zip(pids, refs))
            if len(new) == len(pids) and partitions.keys().isdisjoint(new):
                partitions.update(new)   # the usual case: new partitions, one C call
                continue
            for pid, ref in zip(pids, refs):
                cur = partitions.get(pid)
                if cur is None:
                    partitions[pid] = ref
                elif type(cur) is list:
                    cur.append(ref)
                else:
                    partitions[pid] = [cur, ref]

    def __eq__(self, other) -> bool:
        if not isinstance(other, TopicState):
            return NotImplemented
        return (self.name, self.topic_id, self.change, self.partition_records) == (
            other.name, other.topic_id, other.change, other.partition_records)

    def __repr__(self) -> str:
        return (f"TopicState(name={self.name!r}, topic_id={self.topic_id!r}, "
                f"change={self.change!r}, partitions={len(self.partition_records)})")

    def partition_ids(self) -> list[int]:
        """Partitions that exist: a partition whose every PartitionRecord is
        undecodable was never created (Kafka skips such records), in id
        order: the keys of :meth:`partitions`, without making their states."""
        recs = self.partition_records
        if self.folder is None:
            return []
        return self.folder.__self__.existing_partitions(recs, self.filed_runs)

    def partitions(self) -> dict:
        """Partition id -> :class:`PartitionState` of each partition that
        exists, in id order (a listing folds them all: the engine decodes
        its runs' untouched partitions together)."""
        recs = self.partition_records
        if self.folder is None:
            return {}
        # the folder is its engine's fold_partition; the engine folds a topic at once
        return self.folder.__self__.fold_topic(recs, self.filed_runs)

    def partition_texts(self, nl: "str | None" = "\n") -> dict:
        """Partition id -> the text of each partition that exists, or its
        :class:`PartitionState` where the engine must fold it
        (``Engine.topic_texts``; ``nl``: each newline and the indentation
        after it, None for compact JSON), in id order: what ``cat`` and
        ``tree`` show of every partition of a topic."""
        return self.texts_made_by(partial(run_texts, nl=nl))

    def texts_made_by(self, make: Callable) -> dict:
        """:meth:`partition_texts` in another format: ``make`` writes the
        texts of a run's partitions from the values read of its bytes, as
        ``Engine.topic_texts`` says (``tree /image/topics``: Kafka's
        ``PartitionRegistration`` text)."""
        recs = self.partition_records
        if self.folder is None:
            return {}
        return self.folder.__self__.topic_texts(recs, self.filed_runs, make)

    def partition(self, pid: int) -> PartitionState | None:
        recs = self.partition_records.get(pid)
        if recs is None or self.folder is None:
            return None
        return self.folder(recs)

    @property
    def fingerprinter(self) -> Callable | None:
        """``(partition_records, pids) -> {pid: fingerprint}``: the records of
        partitions in a form equal for equal records (their undecoded bytes
        when it can), to compare partitions without folding them. The engine
        whose ``folder`` this is provides it (a property, so that loading a
        topic costs nothing more for it)."""
        return getattr(getattr(self.folder, "__self__", None), "partition_fingerprints", None)

    def partition_history(self, pid: int) -> list | None:
        """The records that created or changed a partition, oldest first."""
        recs = self.partition_records.get(pid)
        if recs is None:
            return None
        if self.resolver is None:
            return list(recs) if type(recs) is list else [recs]
        return self.resolver(recs)


@dataclass
class Entity:
    """A keyed value with provenance (configs, quotas, ACLs, SCRAM, tokens...)."""

    value: Any
    change: Change


@dataclass
class QuorumState:
    leader_id: int = -1
    leader_epoch: int = -1
    kraft_version: int = 0
    voters: dict = field(default_factory=dict)   # voter id -> {directoryId, endpoints, kRaftVersionFeature}
    voters_from: str = ""                        # "VotersRecord", "LeaderChangeMessage" or "quorum-state"
    change: Change = (-1, -1)


class _Kept:
    """A part of the image (the ``Image`` field named after it with a
    leading underscore) that a snapshot's records of ``api`` may still be
    kept unread for (fast/kept_runs.py): they are applied first."""

    def __init__(self, api: int):
        self.api = api
        self.field = ""

    def __set_name__(self, owner, name: str) -> None:
        self.field = "_" + name

    def __get__(self, image, owner=None):
        if image is None:
            return self
        if self.api in image.kept_runs:
            image.settle_kept(self.api)
        return getattr(image, self.field)


@dataclass
class Image:
    brokers: dict = field(default_factory=dict)             # id -> BrokerState
    controllers: dict = field(default_factory=dict)         # id -> ControllerState
    topics: dict = field(default_factory=dict)              # topic id -> TopicState
    topic_names: dict = field(default_factory=dict)         # name -> topic id
    # read through the properties below (a snapshot's records of them kept unread
    # are applied first):
    _configs: dict = field(default_factory=dict)   # (type name, resource name) -> {key: Entity}
    _quotas: dict = field(default_factory=dict)    # ((type, name|None), ...) sorted -> {key: Entity}
    _acls: dict = field(default_factory=dict)      # acl id -> Entity(value=dict)
    features: dict = field(default_factory=dict)            # name -> Entity(value=level)
    producer_ids: Entity | None = None                      # Entity(value={nextProducerId, lastBrokerId, lastBrokerEpoch})
    _scram: dict = field(default_factory=dict)     # (mechanism name, user) -> Entity(value=dict)
    _tokens: dict = field(default_factory=dict)    # token id -> Entity(value=dict)
    zk_migration_state: int | None = None
    quorum: QuorumState = field(default_factory=QuorumState)
    last_offset: int = -1                                   # last applied record offset (log offsets)
    last_time: int = -1                                     # append time of the last applied batch
    last_epoch: int = -1                                    # leader epoch of the last applied data batch
    # the last applied data batch's last offset and its own append time: Kafka's image
    # provenance, which control batches (LeaderChange, KRaftVersion, Voters) do not
    # advance (a new leader's batches may carry an earlier time than the last ones)
    data_offset: int = -1
    data_time: int = -1
    # the snapshot loaded: its last offset, and when its batches were appended (Kafka's
    # shell shows that time as a snapshot's provenance; last_time is its last record's)
    snapshot_offset: int = -1
    snapshot_written: int = -1
    # entity key -> [records], oldest first; a TopicRecord read on the loader's fast
    # path is there as its deferred ref (an int), alone bare: see records(). A topic
    # made on the fast path and not changed since has no entry: its TopicState's
    # ``created`` is its history (no entry per topic: -6.5% `ls` on a snapshot); see
    # keep_history() and history_items()
    history: dict = field(default_factory=dict)
    # set by the engine: a list of records and refs as records
    resolver: Callable | None = field(default=None, repr=False, compare=False)
    # apiKey -> runs of a snapshot's records of it not read yet (fast/kept_runs.py),
    # and the engine's call that applies those of one apiKey (None: all)
    kept_runs: dict = field(default_factory=dict, repr=False, compare=False)
    # the apiKeys whose kept records were all seen to apply (ReplayEngine._check_kept)
    kept_checked: set = field(default_factory=set, repr=False, compare=False)
    settle_kept: Callable | None = field(default=None, repr=False, compare=False)

    # reading or changing one of these applies the kept records of its apiKey first
    configs = _Kept(4)
    tokens = _Kept(10)
    scram = _Kept(11)
    quotas = _Kept(14)
    acls = _Kept(18)

    def settle(self) -> None:
        """Apply every record the engine kept unread (a snapshot's configs,
        ACLs, ...): before histories or problems are read."""
        if self.kept_runs:
            self.settle_kept(None)

    def records(self, key: tuple) -> list | None:
        """The records in ``history`` under ``key``, refs read back, or None."""
        self.settle()
        recs = self.history.get(key)
        if recs is None and key[0] == "topic":
            t = self.topics.get(key[1])
            recs = t.created if t is not None else None
        if recs is None or self.resolver is None:
            return recs if recs is None or type(recs) is list else [recs]
        return self.resolver(recs)

    def keep_history(self, tid: str) -> None:
        """Put the history a topic's TopicState keeps into ``history`` (before
        a record is added to it, or the topic goes)."""
        key = ("topic", tid)
        if key not in self.history:
            t = self.topics.get(tid)
            if t is not None and t.created is not None:
                self.history[key] = t.created

    def history_items(self):
        """Every entity's ``(key, records)``: ``history``'s, and those that
        topics keep themselves."""
        self.settle()
        history = self.history
        yield from history.items()
        for tid, t in self.topics.items():
            if t.created is not None and ("topic", tid) not in history:
                yield ("topic", tid), t.created

    def topic_by_name(self, name: str) -> TopicState | None:
        tid = self.topic_names.get(name)
        return self.topics.get(tid) if tid is not None else None


def entity_key(kind: str, *parts) -> tuple:
    """The key of an entity in ``Image.history``: ``("broker", 1)``,
    ``("topic", topic_id)``, ``("config", "topic", "foo")``,
    ``("quota", ((type, name), ...))``, ``("acl", id)``, ``("feature", name)``,
    ``("producerIds",)``, ``("scram", mechanism, user)``, ``("token", id)``,
    ``("controller", id)``, ``("quorum",)``. Partitions keep their records in
    their topic (``TopicState.partition_records``)."""
    return (kind, *parts)
