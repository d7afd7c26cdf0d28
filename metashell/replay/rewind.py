"""The image as it was at an earlier offset, taken from a replay that went past it.

``diff --from-offset N`` compares the cluster at N with the cluster now. A
second replay up to N would double the work; instead the engine that
replayed up to now already knows, for every entity, which records changed
it: ``Image.history`` for brokers, topics, configs and the rest, and the
records filed under each partition (oldest first). An entity whose newest
record is at or before N is the very same object on both sides (``diff``
skips it without decoding); only the others are rebuilt as of N:

* partitions named by the log's records after N (read again from the
  store: the work grows with what changed, not with the cluster): their
  records up to N, a prefix of what is filed under them (refs are told
  apart by :meth:`RecordStore.refs_after`, without decoding);
* every other entity: its records up to N, replayed into a fresh engine.

Some replays cannot be rewound this way (None is returned and the caller
replays the source again up to N): N before the snapshot the replay started
from, N inside a metadata transaction, or a topic that existed at N and was
deleted since (its partitions left the image with it).
"""

from __future__ import annotations

from dataclasses import replace

from ..fast.door import Store
from .engine import ReplayEngine
from .image import Image, TopicState

# history key kind -> (Image attribute, key in that mapping from the history key's rest)
_KEYED = {
    "broker": ("brokers", lambda rest: rest[0]),
    "controller": ("controllers", lambda rest: rest[0]),
    "config": ("configs", tuple),
    "quota": ("quotas", lambda rest: rest[0]),
    "acl": ("acls", lambda rest: rest[0]),
    "feature": ("features", lambda rest: rest[0]),
    "scram": ("scram", tuple),
    "token": ("tokens", lambda rest: rest[0]),
}


def rewind(engine: ReplayEngine, offset: int, log_files, snapshot_end: int | None) -> Image | None:
    """The image of ``engine`` as of ``offset`` (records with offsets up to it
    applied), or None when it cannot be told from this replay.
    ``log_files``: the store file numbers of the log segments replayed;
    ``snapshot_end``: the end offset of the snapshot the replay began with."""
    image = engine.image
    if snapshot_end is not None and offset < snapshot_end - 1:
        return None
    if any(begin <= offset < end for begin, end in engine.transactions):
        return None
    ref_after = engine.store.refs_after(offset, log_files)
    changed = {key: engine.partition_history(recs) for key, recs in image.history_items()
               if _after(recs[-1] if type(recs) is list else recs, ref_after, offset)}
    changed.pop(("quorum",), None)   # shown only with --include-quorum, which replays again
    before = _replay_before(changed, offset, snapshot_end)
    old = replace(image, brokers=dict(image.brokers), controllers=dict(image.controllers),
                  topics=dict(image.topics), _configs=dict(image.configs()),
                  _quotas=dict(image.quotas()), _acls=dict(image.acls()),
                  features=dict(image.features), _scram=dict(image.scram()),
                  _tokens=dict(image.tokens()), kept_runs={}, kept_checked=set(), history={},
                  last_offset=min(offset, image.last_offset))   # what depends on the log's end (brokers' registeredAtOffset)
    for key in changed:
        kind, rest = key[0], key[1:]
        if kind == "topic":
            tid = rest[0]
            if tid in before.topics and tid not in image.topics:
                return None   # deleted since: its partitions are gone
            if tid not in before.topics:
                old.topics.pop(tid, None)
        elif kind == "producerIds":
            old.producer_ids = before.producer_ids
        elif kind in _KEYED:
            attr, make_key = _KEYED[kind]
            k = make_key(rest)
            value = _part(before, attr).get(k)
            target = _part(old, attr)
            if value is None:
                target.pop(k, None)
            else:
                target[k] = value
    if any(k[0] == "topic" for k in changed):
        old.topic_names = {t.name: tid for tid, t in old.topics.items()}
    _rewind_partitions(old, engine.store, log_files, offset)
    return old


def _replay_before(changed: dict, offset: int, snapshot_end: int | None) -> Image:
    """The changed entities as of ``offset``: their records up to it, in
    offset order, replayed into a fresh engine (those the snapshot held as a
    snapshot, so that, for example, a broker's registration time stays
    unknown as it is in the full replay)."""
    records = sorted((r for recs in changed.values() for r in recs if r.offset <= offset),
                     key=lambda r: r.offset)
    mini = ReplayEngine()
    border = -1 if snapshot_end is None else snapshot_end - 1
    in_snapshot = bool(records) and records[0].offset <= border
    if in_snapshot:
        mini.begin_snapshot(None, None)
    for rec in records:
        if in_snapshot and rec.offset > border:
            mini.end_snapshot()
            in_snapshot = False
        mini.apply(rec)
    if in_snapshot:
        mini.end_snapshot()
    return mini.image


def _rewind_partitions(old: Image, store: Store, log_files, offset: int) -> None:
    """Cut, in ``old``'s topics, the records of every partition that the log
    changed after ``offset`` back to those up to it; a topic with such a
    partition gets its own copy. Which partitions: those the log's records
    after ``offset`` name (read again from the store: as many as changed,
    not as many as there are), or, after a ClearElrRecord for all topics,
    every one."""
    touched: dict[str, set | None] = {}   # topic id -> partition ids (None: all of them)
    for rec in store.records_after(offset, log_files):
        name = rec.name
        if name in ("PartitionRecord", "PartitionChangeRecord"):
            d = rec.data
            if d is not None:
                pids = touched.setdefault(d["topicId"], set())
                if pids is not None:
                    pids.add(d["partitionId"])
        elif name == "ClearElrRecord" and rec.data is not None:
            t = old.topic_by_name(rec.data["topicName"]) if rec.data["topicName"] else None
            for tid in [t.topic_id] if t is not None else old.topics:
                touched[tid] = None
    ref_after = store.refs_after(offset, log_files)

    def after(r) -> bool:
        return ref_after(r) if type(r) is int else r.offset > offset

    topics = old.topics
    for tid, pids in touched.items():
        t = topics.get(tid)
        if t is None:
            continue
        partitions = t.partition_records
        cut = dict(partitions)
        for pid in (partitions if pids is None else pids):
            recs = cut.get(pid)
            if recs is None:
                continue
            kept = [r for r in (recs if type(recs) is list else [recs]) if not after(r)]
            if kept:
                cut[pid] = kept
            else:
                del cut[pid]
        topics[tid] = TopicState(t.name, t.topic_id, t.change, cut, source=t.source)


def _part(image: Image, attr: str) -> dict:
    """The part of ``image`` named ``attr`` (a dict, or a method giving it)."""
    part = getattr(image, attr)
    return part if type(part) is dict else part()


def _after(rec, ref_after, offset: int) -> bool:
    """Whether a history's record (or deferred ref) comes after ``offset``."""
    return ref_after(rec) if type(rec) is int else rec.offset > offset
