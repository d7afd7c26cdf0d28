"""Deferred entries: what a deferring reader hands the replay instead of a
:class:`~metashell.kraft.records.Record`.

A million-partition snapshot must load without a Python object per
partition, so a reader opened with ``defer`` (see
:class:`~metashell.loader.reader.FileReader`) puts small tuples into a
batch's ``records`` for the records the fast path recognises; the store
(:class:`~metashell.fast.store.RecordStore`) turns any ``ref`` back into
its record when someone looks. Tuples stay tuples (a NamedTuple costs about
15% on ``ls``); this module is the one place that knows their layouts. An
entry's kind is its length (:func:`kind`), and these are all of them:

====================  =======================================================================
kind                  layout
====================  =======================================================================
``KEPT_RUN`` (3)      ``(first ref, apiKey, count)``: ``count`` records of one kind that ``ls``
                      does not need, one after another in a snapshot's batch
                      (:mod:`.fast.kept_runs`)
``PARTITION`` (4)     ``(ref, apiKey, partitionId, raw topic id)``: one PartitionRecord (3) or
                      PartitionChangeRecord (5)
``PARTITION_RUN`` (5) ``(first ref, apiKey, run shape, partition ids, raw topic id)``: records
                      of one topic framed alike (:mod:`.fast.partition_runs`); the shape, a
                      :class:`~.fast.partition_runs.PartitionRun`, gives their size
``TOPIC`` (7)         ``(ref, 2, name, raw topic id, offset, timestamp, topic id)``: a
                      TopicRecord v0, its name and id read in place
``TOPIC_WITH_RUN``    ``(ref, 2, name, raw topic id, offset, timestamp, topic id, run)``: the
(8)                   same, with the ``PARTITION_RUN`` entry of its partitions that follow it
====================  =======================================================================

A ref is an int naming the file, the batch and where the record starts in
the batch's record section (:data:`~metashell.loader.reader.REF_POSITION_BITS`).
Read entries through the index constants and helpers below, never by
counting fields; dispatch on :func:`kind` ends in :func:`unknown`.
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import itemgetter
from typing import Iterator

KEPT_RUN = 3
PARTITION = 4
PARTITION_RUN = 5
TOPIC = 7
TOPIC_WITH_RUN = 8

KeptRun = tuple          # (first ref, apiKey, count)
Partition = tuple        # (ref, apiKey, partitionId, raw topic id)
PartitionRun = tuple     # (first ref, apiKey, run shape, partition ids, raw topic id)
Topic = tuple            # (ref, 2, name, raw topic id, offset, timestamp, topic id[, run])
Entry = tuple            # any of the above

# every kind
REF = 0
API_KEY = 1
# KEPT_RUN
KEPT_COUNT = 2
# PARTITION
PARTITION_ID = 2
# PARTITION_RUN
RUN_SHAPE = 2
RUN_PARTITION_IDS = 3
# PARTITION and PARTITION_RUN: the raw (16-byte) topic id is the last field of both
RAW_TOPIC_ID = -1
# TOPIC and TOPIC_WITH_RUN
TOPIC_NAME = 2
TOPIC_RAW_ID = 3
TOPIC_OFFSET = 4
TOPIC_TIMESTAMP = 5
TOPIC_ID = 6
TOPIC_RUN = 7

PARTITION_CHANGE_API = 5


class UnknownEntryError(TypeError):
    """A tuple in a batch's records that is no deferred entry: a reader and
    the replay disagree on the layouts above, a defect."""


def unknown(entry) -> UnknownEntryError:
    """The error that ends every dispatch on :func:`kind`."""
    return UnknownEntryError(f"not a deferred entry (kind {len(entry)}): {entry!r:.200}")


def kind(entry: Entry) -> int:
    """The entry's kind: one of the constants above."""
    return len(entry)


def kept_run(ref: int, api: int, count: int) -> KeptRun:
    return (ref, api, count)


def partition(ref: int, api: int, partition_id: int, raw_topic_id: bytes) -> Partition:
    return (ref, api, partition_id, raw_topic_id)


def partition_run(ref: int, api: int, shape, partition_ids, raw_topic_id: bytes) -> PartitionRun:
    return (ref, api, shape, partition_ids, raw_topic_id)


def topic(ref: int, name: str, raw_id: bytes, offset: int, timestamp: int, topic_id: str,
          run: PartitionRun | None = None) -> Topic:
    """A TopicRecord's entry, with the run of its partitions if they came with it."""
    if run is None:
        return (ref, 2, name, raw_id, offset, timestamp, topic_id)
    return (ref, 2, name, raw_id, offset, timestamp, topic_id, run)


def topic_with_run(ref: int, name: str, raw_id: bytes, offset: int, timestamp: int, topic_id: str,
                   run_ref: int, shape, partition_ids) -> Topic:
    """A TopicRecord's entry with the run of its PartitionRecords (of the
    same topic id) in one call: the reader's hottest constructor."""
    return (ref, 2, name, raw_id, offset, timestamp, topic_id, (run_ref, 3, shape, partition_ids, raw_id))


def topic_run(entry: Topic) -> PartitionRun | None:
    """The run of partitions that came with a TopicRecord's entry, if any."""
    return entry[TOPIC_RUN] if len(entry) == TOPIC_WITH_RUN else None


#: a PARTITION_RUN's ``(first ref, run shape, partition ids, raw topic id)``, in one C call
run_fields = itemgetter(REF, RUN_SHAPE, RUN_PARTITION_IDS, RAW_TOPIC_ID)


def refs(entry: Entry) -> "range | list | tuple":
    """The refs of the records an entry stands for, in order."""
    n = len(entry)
    if n == PARTITION_RUN:
        size = entry[RUN_SHAPE].size
        return range(entry[REF], entry[REF] + len(entry[RUN_PARTITION_IDS]) * size, size)
    if n == TOPIC_WITH_RUN:
        return [entry[REF], *refs(entry[TOPIC_RUN])]
    if n == PARTITION or n == TOPIC:
        return entry[:1]
    if n == KEPT_RUN:
        raise TypeError("a kept run's refs are found by the store (RecordStore.run_refs)")
    raise unknown(entry)


def records(entry: Entry) -> Iterator[tuple]:
    """An entry as one entry per record: a run as ``PARTITION`` entries, a
    TopicRecord with its run as its ``TOPIC`` entry, then the run's."""
    n = len(entry)
    if n == PARTITION_RUN:
        return zip(refs(entry), repeat(entry[API_KEY]), entry[RUN_PARTITION_IDS],
                   repeat(entry[RAW_TOPIC_ID]))
    if n == TOPIC_WITH_RUN:
        return chain((entry[:TOPIC_WITH_RUN - 1],), records(entry[TOPIC_RUN]))
    if n == PARTITION or n == TOPIC:
        return iter((entry,))
    raise unknown(entry)


def count(entry: Entry) -> int:
    """How many records an entry stands for."""
    n = len(entry)
    if n == PARTITION or n == TOPIC:
        return 1
    if n == PARTITION_RUN:
        return len(entry[RUN_PARTITION_IDS])
    if n == TOPIC_WITH_RUN:
        return 1 + len(entry[TOPIC_RUN][RUN_PARTITION_IDS])
    if n == KEPT_RUN:
        return entry[KEPT_COUNT]
    raise unknown(entry)


def only_changes(batch_records: list) -> bool:
    """Whether a batch's records are all deferred PartitionChangeRecords."""
    return all(type(r) is tuple and r[API_KEY] == PARTITION_CHANGE_API
               and (len(r) == PARTITION or len(r) == PARTITION_RUN) for r in batch_records)
