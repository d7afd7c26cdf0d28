"""The cluster at a glance, for the ``summary`` command: a JSON-able dict.

Counting under-replicated and offline partitions folds every partition,
so this is the one place that decodes all of them.
"""

from __future__ import annotations

from ..loader import enums
from ..timefmt import iso_time
from .registration import started

DEFAULT_MIN_ISR = 1




def _min_isr(image, topic_name: str, cluster_default: int) -> int:
    keys = image.configs.get(("topic", topic_name))
    ent = keys.get("min.insync.replicas") if keys else None
    try:
        return int(ent.value) if ent is not None else cluster_default
    except (TypeError, ValueError):
        return cluster_default


def summarize(image, engine, counts: dict, times=None) -> dict:
    """``times`` gives batch append times by offset for the brokers' start
    (see :mod:`.registration`); without it, only replayed registrations have one."""
    brokers = image.brokers
    default_keys = image.configs.get(("broker", ""), {})
    try:
        cluster_min_isr = int(default_keys["min.insync.replicas"].value)
    except (KeyError, TypeError, ValueError):
        cluster_min_isr = DEFAULT_MIN_ISR
    partitions = under_replicated = offline = under_min_isr = 0
    negative = (0).__gt__
    for topic in image.topics.values():
        min_isr = _min_isr(image, topic.name, cluster_min_isr)
        runs = engine.run_counts(topic)
        if runs is None:   # some partitions changed: the others still counted from runs
            runs, others = engine.filed_run_counts(topic)
        else:              # a snapshot's topic: counted from the bytes, run by run
            others = ()
        for n, replicas, isr, leaders in runs:
            partitions += n
            if isr < replicas:
                under_replicated += n
            offline += sum(map(negative, leaders))
            if isr < min_isr:
                under_min_isr += n
        for pid in others:
            p = topic.partition(pid)
            if p is None:
                continue
            partitions += 1
            if len(p.isr) < len(p.replicas):
                under_replicated += 1
            if p.leader < 0:
                offline += 1
            if len(p.isr) < min_isr:
                under_min_isr += 1
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
        "records": counts,
        "recordsSkippedWithErrors": engine.skipped,
    }
