"""The metadata image: the cluster state the replay engine builds.

Shapes follow Kafka's ``MetadataImage`` (brokers, controllers, topics,
configs, quotas, ACLs, features, producer ids, SCRAM, delegation tokens)
plus what Kafka's 3.5+ shell dropped: the quorum (leader, epoch, voters,
kraft.version) and counts. Every entity remembers ``change``: the
``(offset, timestamp)`` of the record that last changed it. ``history``
maps an entity key (``replay/entity_keys.py``: ``("broker", 1)``,
``("topic", topic_id)``, ``("config", "topic", "foo")`` ...) to the records
that created or changed it, and outlives the entity, so ``changes`` can
explain a removal.

Partitions are the one entity a cluster has millions of, so a topic keeps,
per partition, only the (lazy, undecoded) records that touched it;
:meth:`TopicState.partition` folds them into a :class:`PartitionState`
when someone looks. Nothing is cached, so a full walk of a million
partitions never holds a million decoded partitions at once.

The image holds no engine: what is left lazy is asked of the fast path's
objects through small interfaces, each holding no image in turn: a topic's
``source`` (folding, refs read back, pending changes filed on first look),
``Image.refs`` (a history's refs read back) and ``Image.kept_reader`` (a
snapshot's kept configs, quotas, ACLs, SCRAM users and tokens, applied by
:meth:`Image.configs` and its kin, asked with the image itself).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from ..fast.door import RUN_PARTITION_IDS, entry_refs
from .partition_model import RUN_TEXTS, PartitionState  # noqa: F401  (made from the catalog there)

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
    """A topic and, per partition, the records that created or changed it.

    Its partitions are folded, listed and shown by its ``source`` (the
    load's :class:`~metashell.replay.folding.PartitionFolder`: the folder,
    deferred refs read back, the log's pending changes filed on first
    look), which holds no image; None for a topic with no load behind it
    (its partitions' records are then as filed)."""

    __slots__ = ("name", "topic_id", "change", "created", "_partitions", "_runs", "filed_runs",
                 "source")

    def __init__(self, name: str, topic_id: str, change: Change, partition_records=None,
                 source=None, run: tuple | None = None, created: int | None = None):
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
        self.source = source

    @property
    def partition_records(self) -> dict:
        """Partition id -> its records (PartitionRecord, PartitionChangeRecord,
        ClearElrRecord), oldest first: a list of records and deferred refs
        (ints), or one bare ref."""
        source = self.source
        if source is not None:
            source.file_pending(self)
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
            pids, refs = entry[RUN_PARTITION_IDS], entry_refs(entry)
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
        if self.source is None:
            return []
        return self.source.existing_partitions(recs, self.filed_runs)

    def partitions(self) -> dict:
        """Partition id -> :class:`PartitionState` of each partition that
        exists, in id order (a listing folds them all: its runs' untouched
        partitions are decoded together)."""
        recs = self.partition_records
        if self.source is None:
            return {}
        return self.source.fold_topic(recs, self.filed_runs)

    def partition_texts(self, nl: "str | None" = "\n") -> dict:
        """Partition id -> the text of each partition that exists, or its
        :class:`PartitionState` where it must be folded
        (``PartitionFolder.topic_texts``; ``nl``: each newline and the indentation
        after it, None for compact JSON), in id order: what ``cat`` and
        ``tree`` show of every partition of a topic."""
        return self.texts_made_by(partial(RUN_TEXTS, nl=nl))

    def texts_made_by(self, make: Callable) -> dict:
        """:meth:`partition_texts` in another format: ``make`` writes the
        texts of a run's partitions from the values read of its bytes, as
        ``PartitionFolder.topic_texts`` says (``tree /image/topics``: Kafka's
        ``PartitionRegistration`` text)."""
        recs = self.partition_records
        if self.source is None:
            return {}
        return self.source.topic_texts(recs, self.filed_runs, make)

    def partition_values(self) -> "tuple[list, dict]":
        """What exists of the topic's partitions for a column-wise reader (the
        Spark ``partitions`` table): the values of its runs read from their
        bytes where ``cat`` reads them, the states of the others
        (``PartitionFolder.topic_values``)."""
        if self.source is None:
            return [], {}
        return self.source.topic_values(self.partition_records, self.filed_runs)

    def partition(self, pid: int) -> PartitionState | None:
        recs = self.partition_records.get(pid)
        if recs is None or self.source is None:
            return None
        return self.source.fold_partition(recs)

    @property
    def fingerprinter(self) -> Callable | None:
        """``(partition_records, pids) -> {pid: fingerprint}``: the records of
        partitions in a form equal for equal records (their undecoded bytes
        when it can), to compare partitions without folding them: its
        ``source``'s."""
        return None if self.source is None else self.source.partition_fingerprints

    def partition_history(self, pid: int) -> list | None:
        """The records that created or changed a partition, oldest first."""
        recs = self.partition_records.get(pid)
        if recs is None:
            return None
        if self.source is None:
            return list(recs) if type(recs) is list else [recs]
        return self.source.records(recs)


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


@dataclass
class Image:
    brokers: dict = field(default_factory=dict)             # id -> BrokerState
    controllers: dict = field(default_factory=dict)         # id -> ControllerState
    topics: dict = field(default_factory=dict)              # topic id -> TopicState
    topic_names: dict = field(default_factory=dict)         # name -> topic id
    # topic id -> TopicState of a topic removed since the snapshot (its partitions'
    # records with it): ``changes`` shows a deleted topic's history up to its removal
    removed_topics: dict = field(default_factory=dict)
    # read through the methods of the same name below (a snapshot's records of
    # them kept unread are applied first):
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
    # the load's deferred refs read back as records (fast/refs.py's Refs); None
    # where the image holds records only
    refs: Any = field(default=None, repr=False, compare=False)
    # apiKey -> runs of a snapshot's records of it not read yet (fast/kept_runs.py),
    # and what applies them when that part of the image is read (replay/kept.py's
    # KeptReplay, asked with this image: it holds none)
    kept_runs: dict = field(default_factory=dict, repr=False, compare=False)
    # the apiKeys whose kept records were all seen to apply (KeptReplay.check)
    kept_checked: set = field(default_factory=set, repr=False, compare=False)
    kept_reader: Any = field(default=None, repr=False, compare=False)

    # each of these applies a snapshot's records of its part kept unread first
    # (reading or changing that part of the image)

    def configs(self) -> dict:
        """(type name, resource name) -> {key: Entity}."""
        if 4 in self.kept_runs:
            self.kept_reader.settle(self, 4)
        return self._configs

    def configs_so_far(self) -> dict:
        """:meth:`configs` without a snapshot's ConfigRecords still kept."""
        return self._configs

    def tokens(self) -> dict:
        """Token id -> Entity(value=dict)."""
        if 10 in self.kept_runs:
            self.kept_reader.settle(self, 10)
        return self._tokens

    def scram(self) -> dict:
        """(mechanism name, user) -> Entity(value=dict)."""
        if 11 in self.kept_runs:
            self.kept_reader.settle(self, 11)
        return self._scram

    def quotas(self) -> dict:
        """((type, name|None), ...) sorted -> {key: Entity}."""
        if 14 in self.kept_runs:
            self.kept_reader.settle(self, 14)
        return self._quotas

    def acls(self) -> dict:
        """ACL id -> Entity(value=dict)."""
        if 18 in self.kept_runs:
            self.kept_reader.settle(self, 18)
        return self._acls

    def settle(self) -> None:
        """Apply every record kept unread (a snapshot's configs, ACLs, ...):
        before histories or problems are read."""
        if self.kept_runs:
            self.kept_reader.settle(self, None)

    def records(self, key: tuple) -> list | None:
        """The records in ``history`` under ``key``, refs read back, or None."""
        self.settle()
        recs = self.history.get(key)
        if recs is None and key[0] == "topic":
            t = self.topics.get(key[1])
            recs = t.created if t is not None else None
        if recs is None or self.refs is None:
            return recs if recs is None or type(recs) is list else [recs]
        return self.refs.records(recs)

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
