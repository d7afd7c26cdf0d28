"""``summary``'s counts of a topic's partitions, from their bytes where it can.

A topic whose partitions are all still the PartitionRecords of the runs
the reader deferred is counted from the runs' bytes
(:func:`~metashell.fast.summary_counts.run_counts`, through the
store); one whose runs were filed, from the bytes of its partitions that
hold their run's record alone or with changes of ISR and leader only; the
rest are folded.
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter

from ..kraft.primitives import uuid_from_str
from . import deferred
from .deferred import RAW_TOPIC_ID, RUN_PARTITION_IDS, run_fields

_PIDS = itemgetter(RUN_PARTITION_IDS)   # of a run entry: its partition ids
_RANGES: dict[int, tuple] = {}   # n -> (0, ..., n - 1): a run's partition ids, mostly


def _range(n: int) -> tuple:
    if len(_RANGES) >= 4096:
        _RANGES.clear()
    r = _RANGES[n] = tuple(range(n))
    return r


class TopicCounts:
    """Counts of topics' partitions: from the store's bytes, else folded."""

    def __init__(self, store, folder):
        self.store = store
        self.folder = folder

    def run_counts(self, topic) -> "tuple[list, bytes, bool] | None":
        """For a topic whose partitions are all still in deferred runs of
        PartitionRecords (a snapshot's, untouched since, the log's pending
        changes aside), each run's ``(partitions, replicas, isr, leaders)``
        read from the bytes, as folding would give them, the topic's raw
        id, and whether its partition ids are 0 to n - 1; None if it must
        fold."""
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

    def filed_counts(self, topic) -> "tuple[list, bytes, bool]":
        """For a topic whose partitions were filed (looked at, or changed),
        what :meth:`run_counts` gives for one in runs: ``(partition
        counts, raw id, whether its partition ids are 0 to n - 1)``, its
        runs' untouched partitions read from the bytes, the others folded
        (one count per partition), as filed so far (the log's pending
        changes left pending). A partition none of whose records decode is
        not there, and leaves its topic not dense."""
        partitions = topic.filed_records()
        counts, others = self.filed_run_counts(topic, partitions)
        fold = self.folder.fold_partition
        for pid in others:
            p = fold(partitions[pid])
            if p is not None:
                # the replicas less those being added: the replication factor
                counts.append((1, len(p.replicas) - len(p.adding_replicas or ()), len(p.isr),
                               (p.leader,)))
        n = sum(c[0] for c in counts)
        dense = n == len(partitions) and n > 0 and min(partitions) == 0 and max(partitions) == n - 1
        return counts, uuid_from_str(topic.topic_id), dense

    def filed_run_counts(self, topic, partitions: dict) -> tuple[list, list]:
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
