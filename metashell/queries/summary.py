"""The cluster at a glance, for the ``summary`` command: a JSON-able dict.

The partition states counted are those of ``partitions``
(:mod:`.partition_states`, Kafka's definitions): under-replicated compares
the ISR with the replicas less those being added, under min ISR is no
leader or fewer in sync than min.insync.replicas (:mod:`.min_isr`).

Counting under-replicated and offline partitions looks at every partition:
a snapshot's runs of PartitionRecords are counted from their bytes
(fast/summary_counts.py), a log's pending changes are read from
theirs (fast/partition_change.py, fast/change_effects.py) and added, and only what neither can
read is folded (see :func:`partition_health`).
"""

from __future__ import annotations

from functools import cache
from itertools import compress
from operator import getitem, itemgetter, lt

from ..gcpause import no_cyclic_gc
from ..kraft import enums
from ..kraft.primitives import UUID_TEXT, uuid_from_str
from ..fast.door import RUN_PARTITION_IDS
from ..timefmt import iso_time
from .min_isr import NAME as MIN_ISR, MinIsr
from .partition_states import live_brokers, partition_rows
from .registration import started
# topics some pending change names whose partitions are folded (their changes
# filed one topic at a time, a search of the pending batches each) beyond which
# all pending changes are filed at once
MAX_FOLDED_NAMED = 16

_RAW = itemgetter(slice(4, 20))   # of a key: its topic id
_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)
_ROWS: dict[tuple, tuple] = {}   # see _row


def summarize(image, engine, times=None, static_min_isr=None) -> dict:
    """``times`` gives batch append times by offset for the brokers' start
    (see :mod:`.registration`); without it, only replayed registrations have
    one. ``static_min_isr``: the brokers' static min.insync.replicas where
    the user gave one (a :class:`~.min_isr.MinIsrValue`)."""
    brokers = image.brokers
    min_isr = MinIsr(engine.config_values(MIN_ISR), static_min_isr)
    # what it reads (a snapshot's min ISR configs, a tuple per run) is many objects:
    # collections would walk the image's heap again (snap-configs summary -0.1 s, -10%)
    with no_cyclic_gc():
        partitions, under_replicated, offline, under_min_isr = partition_health(image, engine,
                                                                                min_isr)
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
        "minIsr": min_isr_sources(image, min_isr),
        "metadataVersion": {"level": level,
                            "release": enums.METADATA_VERSIONS.get(level) if level is not None else None},
        "features": {k: v.value for k, v in sorted(image.features.items())},
        "quorum": {"leaderId": image.quorum.leader_id, "leaderEpoch": image.quorum.leader_epoch},
        "lastOffset": image.last_offset,
        "lastTime": iso_time(image.last_time),
        "records": engine.record_counts(),
        "recordsSkippedWithErrors": engine.skipped,
    }


def partition_health(image, engine, min_isr: MinIsr) -> list[int]:
    """``[partitions, under-replicated, offline, under min ISR]``.

    A topic still in its snapshot's runs is counted run by run from their
    bytes; one whose partitions were looked at (filed) from its runs too,
    but for the partitions changed since, which are folded. The log's pending changes
    (fast/pending.py) are not filed: what they do is read from their
    bytes (:meth:`ReplayEngine.pending_effects`) and added to the counts of
    the topics they name (``_add_effects``): with one row per topic, and
    one per partition that differs from most of its topic's (in replica or
    ISR count, or a leader) where they are all still in runs; only
    where a change reassigns a topic, or its partitions were filed, are
    its changes filed first and the partitions folded. A partition with no
    leader is under min ISR whatever its ISR: where changes set its ISR
    and leader apart, its topic is folded to count it
    (:func:`_leaderless_in_sync`); where a broker sets its own min ISR, the
    partitions are walked for it (:func:`_under_min_isr_by_leader`)."""
    effects = engine.pending_effects()
    own = {name: v.value for name, v in min_isr.topics.items()}
    fallback = min_isr.fallback.value
    named = effects.named if effects is not None else ()
    health = [0, 0, 0, 0]
    rows = {}         # raw topic id -> _row, of the topics pending changes may name
    exceptions = {}   # a change's key -> counting row, of partitions unlike their topic's row
    folded = []       # (topic, min ISR) of those they name that must fold after filing them
    leaderless = []   # raw ids of those they name, counted by rows, with a partition with no leader
    run_counts, filed_counts = engine.run_counts, engine.filed_counts
    for topic in image.topics.values():
        topic_min_isr = own.get(topic.name, fallback)
        in_runs = run_counts(topic)
        runs, raw, dense = in_runs or filed_counts(topic)
        if effects is None:
            _add_runs(health, runs, topic_min_isr)
            continue
        row = _row(runs, topic_min_isr) if dense and raw not in effects.reassigned else None
        if row is None and dense and in_runs is not None and raw in named \
                and raw not in effects.reassigned:
            # partitions that differ (a lagging replica, one offline), all still in runs
            row = _row_with_exceptions(topic.pending_runs(), runs, raw, topic_min_isr, exceptions)
        if row is not None:
            rows[raw] = row
        elif raw in named:
            folded.append((topic, topic_min_isr))
            continue
        settled = raw not in named
        if _add_runs(health, runs, topic_min_isr, settled) and not settled:
            leaderless.append(raw)
    if effects is not None:
        if len(folded) > MAX_FOLDED_NAMED:
            engine.settle()
        for topic, topic_min_isr in folded:
            topic.partition_records   # its pending changes filed
            rows[uuid_from_str(topic.topic_id)] = _FOLDED
            _add_runs(health, engine.filed_counts(topic)[0], topic_min_isr)
        if not _add_effects(health, effects, rows, exceptions):
            engine.settle()   # a change names a partition that is not there: reported
            return partition_health(image, engine, min_isr)
        if health[2]:
            health[3] += _leaderless_in_sync(image, effects, rows, leaderless,
                                             lambda name: own.get(name, fallback))
    if min_isr.brokers:
        health[3] = _under_min_isr_by_leader(image, min_isr)
    return health


def _add_runs(health: list, runs: list, min_isr: int, settled: bool = True) -> bool:
    """Count runs of partitions ``(n, replicas, isr, leaders)`` (``replicas``:
    the replication factor); whether a partition has no leader. Such a
    partition is under min ISR whatever its ISR: counted so where the runs
    are its final state (``settled``), else by :func:`_leaderless_in_sync`."""
    leaderless = False
    for n, replicas, isr, leaders in runs:
        health[0] += n
        if isr < replicas:
            health[1] += n
        if isr < min_isr:
            health[3] += n
        if min(leaders) < 0:
            offline = sum(map((0).__gt__, leaders))
            health[2] += offline
            leaderless = True
            if settled and isr >= min_isr:
                health[3] += offline
    return leaderless


def _leaderless_in_sync(image, effects, rows: dict, leaderless: list, min_isr_of) -> int:
    """The partitions that end with no leader but at least min ISR in sync,
    of the topics counted by rows of pending changes' effects (which set
    ISR and leader apart, so cannot tell): those topics that had a
    partition with no leader (``leaderless``, raw ids) or that a change
    leaves one without are folded (few: a cluster has few offline
    partitions, and this runs only when it has any)."""
    raws = set(leaderless)
    raws.update(key[4:20] for key, lead in effects.leaders.items() if lead >= b"\x80")
    found = 0
    for raw in raws:
        topic = image.topics.get(UUID_TEXT[raw])
        if topic is None or rows.get(raw) is _FOLDED:   # folded: counted as it is
            continue
        least = min_isr_of(topic.name)
        found += sum(1 for p in topic.partitions().values() if p.leader < 0 and len(p.isr) >= least)
    return found


def _under_min_isr_by_leader(image, min_isr: MinIsr) -> int:
    """Partitions under min ISR, each judged by the min ISR of its topic,
    else of the broker leading it, else the fallback: every partition
    folded (a broker's own min.insync.replicas is rare, and not allowed
    with eligible leader replicas, 4.0+)."""
    return sum(1 for _ in partition_rows(image.topics.values(), min_isr, live_brokers(image),
                                         ["under-min-isr"]))


def min_isr_sources(image, min_isr: MinIsr) -> dict:
    """Where the min.insync.replicas counted came from: the value below the
    topics' and brokers' own and its source, the topics and brokers that set
    their own, and for how many topics the value was assumed."""
    fallback = min_isr.fallback
    own = sum(1 for t in image.topics.values() if t.name in min_isr.topics)
    if min_isr.brokers:
        assumed = len(min_isr.assumed_topics)   # the partitions were walked
    else:
        assumed = len(image.topics) - own if fallback.assumed else 0
    return {"value": fallback.value, "source": fallback.source, "topicsWithOwn": own,
            "brokersWithOwn": sorted(min_isr.brokers), "topicsAssumed": assumed}


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


def _row_with_exceptions(entries: list, runs: list, raw: bytes, min_isr: int,
                         exceptions: dict) -> tuple:
    """The :func:`_row` of a topic in runs whose partitions differ
    (``entries``: its run entries, ``runs``: their counts as ``run_counts``
    gives them; ids 0 to n - 1), counting as most of its partitions do; the
    others' own rows put in ``exceptions`` under their keys (a cluster's
    lagging and offline partitions are few: a row per partition of such
    topics, and finding it per change, cost the mixed log dir's `summary`
    0.1 s)."""
    weights = {}   # (replicas, isr) -> partitions
    for n, replicas, isr, _ in runs:
        weights[replicas, isr] = weights.get((replicas, isr), 0) + n
    most = max(weights, key=weights.__getitem__)
    for entry, (_, replicas, isr, leaders) in zip(entries, runs):
        alike = (replicas, isr) == most
        if alike and min(leaders) >= 0:
            continue
        led = None if alike else _counting(replicas, isr, min_isr)
        offline = _counting(replicas, isr, min_isr, False)
        for pid, leader in zip(entry[RUN_PARTITION_IDS], leaders):
            if leader < 0 or not alike:
                exceptions[pid.to_bytes(4, "big") + raw] = led if leader >= 0 else offline
    return _counting(*most, min_isr), _bound(sum(weights.values()))


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


def _add_effects(health: list, effects, rows: dict, exceptions: dict) -> bool:
    """Add what the pending changes do to the counts of the topics they
    name (``rows``: raw id -> :func:`_row`; ``exceptions``: a partition's
    key -> its own counting row, where it differs from its topic's); False
    (nothing added) if a change names a topic or a partition that is not
    there.

    Each step is one C call over all the changes' effects: an effect's ISR
    count (+ 1) or its leader's first byte is an index into the counting
    row of its partition, its key (partitionId first) compared with its
    topic's bound. No row is looked up per effect (a random memory access
    each in a million-partition heap: 0.3 s for the bench's log dir): all
    effects are counted with the row most topics named share (a cluster's
    topics mostly have the same replication and min ISR), then those of the
    other topics, picked out by a lookup in a small set, are taken back and
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
        if not all(all(map(lt, keys, map(_SECOND, key_rows))) for keys, key_rows in (
                (isr_keys, isr_rows), (leader_keys, leader_rows), (effects.others, other_rows))):
            return False   # a partition past its topic's last (`lt`: a direct call, -40% time for the check)
        _add_own(health, isr_keys, list(map(ord, isr.values())), isr_rows,
                 leader_keys, list(map(ord, leaders.values())), leader_rows, exceptions)
        return True
    counting = list(map(_FIRST, named_rows))
    ids = list(map(id, counting))
    most = max(set(ids), key=ids.count)
    common = counting[ids.index(most)]
    _count(health, common, list(map(ord, isr.values())), list(map(ord, leaders.values())), 1)
    others = set(compress(named, map(most.__ne__, ids)))
    others.update(map(_RAW, exceptions))   # topics with partitions of their own rows
    if others:   # their effects: taken back, counted with their own rows
        isr_keys, leader_keys = (list(compress(keys, map(others.__contains__, map(_RAW, keys))))
                                 for keys in (isr, leaders))
        isr_values = list(map(ord, map(isr.__getitem__, isr_keys)))
        leader_values = list(map(ord, map(leaders.__getitem__, leader_keys)))
        _count(health, common, isr_values, leader_values, -1)
        _add_own(health, isr_keys, isr_values, list(map(rows.__getitem__, map(_RAW, isr_keys))),
                 leader_keys, leader_values, list(map(rows.__getitem__, map(_RAW, leader_keys))),
                 exceptions)
    return True


def _add_own(health: list, isr_keys: list, isr_values: list, isr_rows: list,
             leader_keys: list, leader_values: list, leader_rows: list, exceptions: dict) -> None:
    """Count the changes setting ISR counts (+ 1) ``isr_values`` and
    leaders' first bytes ``leader_values`` on the partitions ``*_keys``
    with their own counting rows: their topics' (``*_rows``: their
    :func:`_row`), or, in ``exceptions``, the partition's (one C call)."""
    own_isr, own_leaders = (list(map(exceptions.get, keys, map(_FIRST, key_rows))) if exceptions
                            else list(map(_FIRST, key_rows))
                            for keys, key_rows in ((isr_keys, isr_rows), (leader_keys, leader_rows)))
    health[1] += sum(map(getitem, map(_FIRST, own_isr), isr_values))
    health[2] += sum(map(getitem, map(_THIRD, own_leaders), leader_values))
    health[3] += sum(map(getitem, map(_SECOND, own_isr), isr_values))


def _count(health: list, counting: tuple, isr: list, leaders: list, sign: int) -> None:
    """Add (``sign`` 1) or take back (-1) the effects whose ISR counts + 1
    and leaders' first bytes are ``isr`` and ``leaders`` on partitions of
    the :func:`_counting` row ``counting``."""
    under, under_min, offline = counting
    health[1] += sign * sum(map(under.__getitem__, isr))
    health[2] += sign * sum(map(offline.__getitem__, leaders))
    health[3] += sign * sum(map(under_min.__getitem__, isr))
