"""The cluster at a glance, for the ``summary`` command: a JSON-able dict.

Counting under-replicated and offline partitions looks at every partition:
a snapshot's runs of PartitionRecords are counted from their bytes
(loader/partition_layout.py), a log's pending changes are read from
theirs (loader/change_effects.py) and added, and only what neither can
read is folded (see :func:`partition_health`).
"""

from __future__ import annotations

from functools import cache
from itertools import compress, repeat
from operator import getitem, is_, itemgetter, not_

from ..loader import enums
from ..loader.primitives import uuid_from_str
from ..timefmt import iso_time
from .registration import started

DEFAULT_MIN_ISR = 1
# topics some pending change names whose partitions are folded (their changes
# filed one topic at a time, a search of the pending batches each) beyond which
# all pending changes are filed at once
MAX_FOLDED_NAMED = 16

_PID, _RAW = itemgetter(slice(0, 4)), itemgetter(slice(4, 20))   # of a key
_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)
_ROWS: dict[tuple, tuple] = {}   # see _row


def _min_isrs(image, cluster_default: int) -> dict:
    """Topic name -> its min.insync.replicas, where a config sets one that reads."""
    out = {}
    for (kind, name), keys in image.configs.items():
        ent = keys.get("min.insync.replicas") if kind == "topic" else None
        if ent is not None:
            try:
                out[name] = int(ent.value)
            except (TypeError, ValueError):
                pass
    return out


def summarize(image, engine, times=None) -> dict:
    """``times`` gives batch append times by offset for the brokers' start
    (see :mod:`.registration`); without it, only replayed registrations have one."""
    brokers = image.brokers
    partitions, under_replicated, offline, under_min_isr = partition_health(image, engine)
    mv = image.features.get("metadata.version")
    level = mv.value if mv is not None else None
    return {
        "brokers": {
            "ids": sorted(brokers),
            "fenced": sorted(b for b, s in brokers.items() if s.fenced),
            "inControlledShutdown": sorted(b for b, s in brokers.items() if s.in_controlled_shutdown),
            "started": started(image, times),
        },
        "controllers": sorted(image.controllers),
        "topics": len(image.topics),
        "partitions": partitions,
        "underReplicatedPartitions": under_replicated,
        "offlinePartitions": offline,
        "underMinIsrPartitions": under_min_isr,
        "metadataVersion": {"level": level,
                            "release": enums.METADATA_VERSIONS.get(level) if level is not None else None},
        "features": {k: v.value for k, v in sorted(image.features.items())},
        "quorum": {"leaderId": image.quorum.leader_id, "leaderEpoch": image.quorum.leader_epoch},
        "lastOffset": image.last_offset,
        "lastTime": iso_time(image.last_time),
        "records": engine.record_counts(),
        "recordsSkippedWithErrors": engine.skipped,
    }


def partition_health(image, engine) -> list[int]:
    """``[partitions, under-replicated, offline, under min ISR]``.

    A topic still in its snapshot's runs is counted run by run from their
    bytes; one whose partitions were looked at (filed) from its runs too,
    but for the partitions changed since, which are folded. The log's pending changes
    (replay/pending.py) are not filed: what they do is read from their
    bytes (:meth:`ReplayEngine.pending_effects`) and added to the counts of
    the topics they name (``_add_effects``): with one row per topic where
    its partitions are alike, one per partition where they differ (in
    replica or ISR count, or a leader) but are all still in runs; only
    where a change reassigns a topic, or its partitions were filed, are
    its changes filed first and the partitions folded."""
    effects = engine.pending_effects()
    try:
        cluster_min_isr = int(image.configs.get(("broker", ""), {})["min.insync.replicas"].value)
    except (KeyError, TypeError, ValueError):
        cluster_min_isr = DEFAULT_MIN_ISR
    min_isrs = _min_isrs(image, cluster_min_isr)
    health = [0, 0, 0, 0]
    rows = {}     # raw topic id -> _row, of the topics pending changes may name
    mixed = {}    # raw topic id -> counting row per partition id, of those whose partitions differ
    folded = []   # (topic, min ISR) of those they name that must fold after filing them
    run_counts, filed_counts = engine.run_counts, engine.filed_counts
    for topic in image.topics.values():
        min_isr = min_isrs.get(topic.name, cluster_min_isr)
        in_runs = run_counts(topic)
        runs, raw, dense = in_runs or filed_counts(topic)
        if effects is None:
            _add_runs(health, runs, min_isr)
            continue
        row = _row(runs, min_isr) if dense and raw not in effects.reassigned else None
        if row is None and dense and in_runs is not None and raw in effects.named \
                and raw not in effects.reassigned:
            # partitions that differ (a lagging replica, one offline), all still in runs
            mixed[raw] = _partition_rows(topic.pending_runs(), runs, min_isr)
            row = (_MIXED, _bound(len(mixed[raw])))
        if row is not None:
            rows[raw] = row
        elif raw in effects.named:
            folded.append((topic, min_isr))
            continue
        _add_runs(health, runs, min_isr)
    if effects is None:
        return health
    if len(folded) > MAX_FOLDED_NAMED:
        engine.settle()
    for topic, min_isr in folded:
        topic.partition_records   # its pending changes filed
        rows[uuid_from_str(topic.topic_id)] = _FOLDED
        _add_runs(health, engine.filed_counts(topic)[0], min_isr)
    if not _add_effects(health, effects, rows, mixed):
        engine.settle()   # a change names a partition that is not there: reported
        return partition_health(image, engine)
    return health


def _add_runs(health: list, runs: list, min_isr: int) -> None:
    """Count runs of partitions ``(n, replicas, isr, leaders)``."""
    for n, replicas, isr, leaders in runs:
        health[0] += n
        if isr < replicas:
            health[1] += n
        if isr < min_isr:
            health[3] += n
        if min(leaders) < 0:
            health[2] += sum(map((0).__gt__, leaders))


def _row(runs: list, min_isr: int) -> "tuple | None":
    """For a topic whose runs all have the same replica and ISR counts and
    a leader each: ``(counting, bound)``, ``counting`` a :func:`_counting`
    row, ``bound`` its partition count as 4 big-endian bytes and 16 zero
    bytes (a change's key, partitionId then topicId, below it names a
    partition); shared by topics alike. None if the runs differ, or a
    partition has no leader."""
    n, replicas, isr = 0, runs[0][1], runs[0][2]
    for run in runs:
        if run[1] != replicas or run[2] != isr or min(run[3]) < 0:
            return None
        n += run[0]
    key = (n, replicas, isr, min_isr)
    row = _ROWS.get(key)
    if row is None:
        if len(_ROWS) >= 4096:
            _ROWS.clear()
        row = _ROWS[key] = (_counting(replicas, isr, min_isr), _bound(n))
    return row


def _bound(n: int) -> bytes:
    """The partition bound of a topic of partitions 0 to ``n`` - 1: a
    change's key (partitionId, then topicId) below it names one of them."""
    return n.to_bytes(4, "big") + bytes(16)


def _partition_rows(entries: list, runs: list, min_isr: int) -> list:
    """Per partition id, the :func:`_counting` row of each partition of a
    topic in runs whose partitions differ (``entries``: its run entries;
    ``runs``: their counts, as ``run_counts`` gives them; ids 0 to n - 1)."""
    by_pid = [None] * sum(run[0] for run in runs)
    for entry, (_, replicas, isr, leaders) in zip(entries, runs):
        led = _counting(replicas, isr, min_isr)
        if min(leaders) >= 0:
            for pid in entry[3]:
                by_pid[pid] = led
        else:
            offline = _counting(replicas, isr, min_isr, False)
            for pid, leader in zip(entry[3], leaders):
                by_pid[pid] = led if leader >= 0 else offline
    return by_pid


@cache
def _counting(replicas: int, isr: int, min_isr: int, led: bool = True) -> tuple:
    """What a change does to the counts of a partition with ``replicas``
    replicas, ``isr`` in sync and a leader (or, ``led`` False, none): how
    it changes the under-replicated and the under-min-ISR counts per ISR
    count + 1 it sets, and the offline count per first byte of the leader
    it sets (three tuples, indexed by those bytes); shared by all such
    partitions (a cluster has a few)."""
    return (tuple((c - 1 < replicas) - (isr < replicas) for c in range(256)),
            tuple((c - 1 < min_isr) - (isr < min_isr) for c in range(256)),
            tuple(int(b >= 0x80) - (not led) for b in range(256)))   # 0x80 and up: a negative id


# a topic counted after its pending changes were filed: they change nothing more
_FOLDED = (((0,) * 256,) * 3, b"\xff" * 21)
# the counting row of a topic whose partitions each have their own (_partition_rows):
# a distinct object (made at run time, never a shared constant), never the common row
_MIXED = tuple([(0,) * 256] * 3)


def _add_effects(health: list, effects, rows: dict, mixed: dict) -> bool:
    """Add what the pending changes do to the counts of the topics they
    name (``rows``: raw id -> :func:`_row`; ``mixed``: raw id -> a row per
    partition, for those whose row is ``_MIXED``); False (nothing added) if
    a change names a topic or a partition that is not there.

    Each step is one C call over all the changes' effects: an effect's ISR
    count (+ 1) or its leader's first byte is an index into the counting
    row of its topic, its key (partitionId first) compared with the topic's
    bound. No row is looked up per effect (a random memory access each in
    a million-partition heap: 0.3 s for the bench's log dir): all effects
    are counted with the row most topics named share (a cluster's topics
    mostly have the same replication and min ISR), then those of the other
    topics, picked out by a lookup in a small set, are taken back and
    counted with theirs. Where the greatest key is below the smallest
    bound, no bound is looked up either (0.13 s); where it is not (topics
    of a few partitions), each key's topic row is looked up for its bound
    and the change counted with it, with no picking (on the log dir of a
    mixed cluster 0.55 s -> 0.29 s)."""
    named = list(effects.named)
    try:
        named_rows = list(map(rows.__getitem__, named))
    except KeyError:   # no such topic
        return False
    if not named:
        return True
    isr, leaders = effects.isr, effects.leaders
    if effects.greatest >= min(map(_SECOND, named_rows)):
        # each key's topic row looked up for its bound, and counted with it
        isr_keys, leader_keys = list(isr), list(leaders)
        isr_rows, leader_rows, other_rows = (list(map(rows.__getitem__, map(_RAW, keys)))
                                             for keys in (isr_keys, leader_keys, effects.others))
        if not all(all(map(bytes.__lt__, keys, map(_SECOND, key_rows))) for keys, key_rows in (
                (isr_keys, isr_rows), (leader_keys, leader_rows), (effects.others, other_rows))):
            return False   # a partition past its topic's last
        _add_own(health, isr_keys, list(map(ord, isr.values())), isr_rows,
                 leader_keys, list(map(ord, leaders.values())), leader_rows, mixed)
        return True
    counting = list(map(_FIRST, named_rows))
    ids = list(map(id, counting))
    alike = set(ids) - {id(_MIXED)}
    most = max(alike, key=ids.count) if alike else id(_FOLDED[0])
    common = counting[ids.index(most)] if alike else _FOLDED[0]
    _count(health, common, list(map(ord, isr.values())), list(map(ord, leaders.values())), 1)
    others = set(compress(named, map(most.__ne__, ids)))
    if others:   # their effects: taken back, counted with their own rows
        isr_keys, leader_keys = (list(compress(keys, map(others.__contains__, map(_RAW, keys))))
                                 for keys in (isr, leaders))
        isr_values = list(map(ord, map(isr.__getitem__, isr_keys)))
        leader_values = list(map(ord, map(leaders.__getitem__, leader_keys)))
        _count(health, common, isr_values, leader_values, -1)
        _add_own(health, isr_keys, isr_values, list(map(rows.__getitem__, map(_RAW, isr_keys))),
                 leader_keys, leader_values, list(map(rows.__getitem__, map(_RAW, leader_keys))), mixed)
    return True


def _add_own(health: list, isr_keys: list, isr_values: list, isr_rows: list,
             leader_keys: list, leader_values: list, leader_rows: list, mixed: dict) -> None:
    """Count the changes setting ISR counts (+ 1) ``isr_values`` and
    leaders' first bytes ``leader_values`` on the partitions ``*_keys``
    with their own counting rows (``*_rows``: their topics' :func:`_row`)."""
    own_isr, isr_values = _own(isr_keys, isr_values, isr_rows, mixed)
    own_leaders, leader_values = _own(leader_keys, leader_values, leader_rows, mixed)
    health[1] += sum(map(getitem, map(_FIRST, own_isr), isr_values))
    health[2] += sum(map(getitem, map(_THIRD, own_leaders), leader_values))
    health[3] += sum(map(getitem, map(_SECOND, own_isr), isr_values))


def _own(keys: list, values: list, key_rows: list, mixed: dict) -> tuple[list, list]:
    """The counting row of each change's partition (``keys``: theirs,
    ``values``: what they set, ``key_rows``: their topics' rows) and the
    values, reordered alike: its topic's, or, a topic in ``mixed``, the
    partition's own (each in C calls: a loop over half a million keys
    would cost 0.3 s)."""
    counting = list(map(_FIRST, key_rows))
    if not mixed:
        return counting, values
    own_row = list(map(is_, counting, repeat(_MIXED)))
    topic_row = list(map(not_, own_row))
    found = list(compress(counting, topic_row))
    found += map(getitem, map(mixed.__getitem__, map(_RAW, compress(keys, own_row))),
                 map(int.from_bytes, map(_PID, compress(keys, own_row)), repeat("big")))
    return found, list(compress(values, topic_row)) + list(compress(values, own_row))


def _count(health: list, counting: tuple, isr: list, leaders: list, sign: int) -> None:
    """Add (``sign`` 1) or take back (-1) the effects whose ISR counts + 1
    and leaders' first bytes are ``isr`` and ``leaders`` on partitions of
    the :func:`_counting` row ``counting``."""
    under, under_min, offline = counting
    health[1] += sign * sum(map(under.__getitem__, isr))
    health[2] += sign * sum(map(offline.__getitem__, leaders))
    health[3] += sign * sum(map(under_min.__getitem__, isr))
