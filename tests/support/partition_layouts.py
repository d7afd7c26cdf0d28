"""Snapshots of partitions in every layout the fast path reads (no tests
here): the cases the summary's byte counts (fast/summary_counts.py) and a
topic's one-pass fold (``PartitionFolder.fold_topic``) are both checked on
against folding each partition on its own.

A topic is ``topic-<t>`` with id ``uid(t)``; its partitions are listed as
``(replicas, isr, extra fields)`` shapes, partition ``p`` the ``p``-th shape.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from metashell.kraft.catalog import METADATA
from metashell.kraft.writer import LogWriter, Out, snapshot_bytes
from tests.support.catalog_checks import scalar
from tests.support.corpora import corpus_cases
from tests.support.paths import CORPORA, EXAMPLE
from tests.support.records import change, feature, partition, topic, uid

TS = 1_700_000_000_000
DIRS = ["AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw",
        "AAAAAAAAAAAAAAAAAAAABA"]

# every case: partitions of one topic as (replicas, isr, extra fields)
CASES = {
    "uniform": [((1, 2, 3), (1, 2, 3), {})] * 6,
    "under-replicated": [((1, 2, 3), (1, 2), {})] * 5,
    "offline": [((1, 2, 3), (1, 2, 3), {"leader": -1})] * 2 + [((1, 2, 3), (1, 2, 3), {})] * 3,
    # same size, other layout: isr one shorter, one more adding replica
    "mixed layouts": [((1, 2, 3), (1, 2, 3), {}), ((1, 2, 3), (1, 2), {"adding": (4,)})] * 3,
    "removing": [((1, 2, 3, 4), (1, 2, 3, 4), {"removing": (4,)})] * 4,
    "recovering": [((1, 2, 3), (1,), {"leaderRecoveryState": 1})] * 3,
    "no replicas": [((), (), {"leader": -1})] * 3,
}

# the fields of a PartitionChangeRecord, any of them set or not
CHANGES = st.fixed_dictionaries({}, optional={
    "isr": st.one_of(st.none(), st.lists(st.integers(1, 4), max_size=4, unique=True)),
    "leader": st.sampled_from([-2, -1, 1, 3]),
    "leaderRecoveryState": st.sampled_from([-1, 0, 1]),
    "removingReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
    "addingReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
    "replicas": st.lists(st.integers(1, 4), min_size=1, max_size=4, unique=True),
    "directories": st.lists(st.sampled_from(DIRS), max_size=4),
    "eligibleLeaderReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
})

#: the versions of a PartitionChangeRecord the catalog has
CHANGE_VERSIONS = [v for v in range(64) if v in METADATA[5].valid_range]


def change_fields_of(version: int, values: dict) -> dict:
    """``values`` less the fields a PartitionChangeRecord of ``version`` lacks."""
    have = {f.json for f in METADATA[5].fields if version in f.versions_range}
    return {k: v for k, v in values.items() if k in have}


def _with_every_catalog_field(strategies: dict) -> dict:
    """``strategies`` and, for every other field of a PartitionChangeRecord
    the catalog has (its keys aside), one drawn from its type: a field the
    catalog gains is set in these changes with no edit here."""
    keys = ("partitionId", "topicId")
    return {**strategies, **{
        f.json: st.lists(scalar(f.element_type), max_size=4) if f.is_array else scalar(f.type)
        for f in METADATA[5].fields if f.json not in strategies and f.json not in keys}}


# every field of a PartitionChangeRecord, set or not, out to the edges of its values
CHANGE_FIELDS = st.fixed_dictionaries({}, optional=_with_every_catalog_field({
    "isr": st.one_of(st.none(), st.lists(st.integers(0, 40), max_size=40, unique=True)),
    "leader": st.sampled_from([-2, -1, 0, 1, 3, 2**31 - 1]),
    "leaderRecoveryState": st.sampled_from([-1, 0, 1]),
    "removingReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
    "addingReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
    "replicas": st.one_of(st.none(), st.lists(st.integers(1, 4), min_size=1, max_size=4, unique=True)),
    "directories": st.lists(st.sampled_from(DIRS[:3]), max_size=9),
    "eligibleLeaderReplicas": st.lists(st.integers(1, 4), max_size=2, unique=True),
    "lastKnownElr": st.lists(st.integers(1, 4), max_size=2, unique=True),
}))


def shaped(t: int, p: int, version: int, replicas, isr, leader=None, adding=(), removing=(),
           dirs=None, **extra) -> Out:
    """Partition ``p`` of topic ``uid(t)`` at ``version``, its epochs varying
    with ``p``, its replicas on ``DIRS`` (from version 1) unless ``dirs``."""
    kw = {} if version < 1 else {"directories": DIRS[:len(replicas)] if dirs is None else dirs}
    if leader is not None:
        kw["leader"] = leader
    return partition(uid(t), p, replicas, version=version, isr=list(isr), addingReplicas=list(adding),
                     removingReplicas=list(removing), leaderEpoch=p % 5, partitionEpoch=p % 3, **kw, **extra)


def topic_of(t: int, version: int, shapes: list) -> list[Out]:
    """The partitions of topic ``t``, one per ``(replicas, isr, extra)`` shape."""
    return [shaped(t, p, version, *shape[:2], **shape[2]) for p, shape in enumerate(shapes)]


def snapshot(path: Path, topics: list[list[Out]], configs=()) -> Path:
    """A snapshot at ``path``: metadata.version 21, ``configs``, then each
    topic ``topic-<t>`` followed by its partitions, all in one batch."""
    outs = [feature("metadata.version", 21), *configs]
    for t, parts in enumerate(topics):
        outs.append(topic(f"topic-{t}", uid(t)))
        outs += parts
    path.write_bytes(snapshot_bytes(outs, epoch=3, timestamp=TS, per_batch=len(outs)))
    return path


def changed(root: Path, version: int, log: list) -> Path:
    """A log dir under ``root``: a snapshot of two uniform topics (PartitionRecord
    ``version``), then one batch per change ``(partition, version, fields)``."""
    part = root / "__cluster_metadata-0"
    part.mkdir()
    snapshot(part / "00000000000000000100-0000000003.checkpoint",
             [topic_of(t, version, CASES["uniform"]) for t in range(2)])
    w = LogWriter(100, 3, TS)
    for p, v, fields in log:
        if v < 1:
            fields.pop("directories", None)
        if v < 2:
            fields.pop("eligibleLeaderReplicas", None)
        w.batch([change(uid(p % 2), p, version=v, **fields)])
    w.write(part / "00000000000000000100.log")
    return root


def _corpus_folders_and_snapshots() -> list[Path]:
    out = []
    for folder in sorted(p for p in CORPORA.iterdir() if p.is_dir()):
        out.append(folder)
        out.extend(sorted(folder.rglob("*.checkpoint")))
    return out


def corpus_inputs() -> list:
    """The example cluster, every corpus folder and every snapshot in them."""
    return [EXAMPLE] + corpus_cases(_corpus_folders_and_snapshots)
