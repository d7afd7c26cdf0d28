"""Runs of a controller's small batches, read in one loop and handed over as one.

A controller writes its log one batch per write: a CreateTopics is a batch
of a TopicRecord and its partitions, an ISR change a batch of one
PartitionChangeRecord, a heartbeat a batch of one NoOpRecord. Read one by
one, each such batch costs a header object, a batch object and a trip
through the reader's, the loader's and the engine's loops: more than its
records. So the reader reads consecutive batches of these three shapes in
one loop (:meth:`~.reading.FastReading._batch_run`), each header by one
``struct`` call (:data:`HEADER`), each CRC checked by one C call, each
batch recognised by its bytes:

* a heartbeat: the one NoOpRecord v0 of :data:`.noop_runs.NOOP_RECORD`;
* a change: one PartitionChangeRecord of a shape the reader deferred
  before (:class:`.change_batches.ChangeShapes`, whose ``VERSIONS`` it
  keeps), as one ``deferred.PARTITION`` entry;
* a CreateTopics: a TopicRecord v0 and its PartitionRecords, the whole
  batch matched by one of the reader's TopicRuns
  (:mod:`.partition_runs`, whose ``VERSIONS`` it keeps), as one
  ``deferred.TOPIC_WITH_RUN`` entry.

The run is the deferred entries of its batches, in order, and the count of
its heartbeats: the engine applies the entries as those of one batch whose
header spans the run (:class:`BatchRun`), or, where something falls inside
the run (a time-travel limit, a transaction, a snapshot's end), reads the
batches again one by one, as the reader reads any batch. Any other batch
(another record, another version, a compressed, control or transactional
batch, a damaged one, one whose epoch or timestamp goes back) ends the run
and is read as before.
"""

from __future__ import annotations

import struct
from typing import Callable, Iterator

from ..kraft.batch import HEADER
from . import Decided
from .change_batches import VERSIONS as CHANGE_VERSIONS
from .noop_runs import VERSIONS as NOOP_VERSIONS
from .partition_runs import VERSIONS as RUN_VERSIONS

# the shortcuts it takes each batch by, and so their versions
VERSIONS: dict[str, Decided] = {**NOOP_VERSIONS, **CHANGE_VERSIONS, "TopicRecord": RUN_VERSIONS["TopicRecord"],
                                "PartitionRecord": RUN_VERSIONS["PartitionRecord"]}

# batches in one run at most: where a time-travel limit falls inside a run its
# batches are read again one by one, so a run stays short
MAX_BATCHES = 64
# a batch longer than this is no controller's single write of these shapes
MAX_LENGTH = 4096

# What the run loop reads of each batch header (kraft-format.md section 2.1):
HEADER_FIELDS = struct.Struct(
    ">q"    # 0  baseOffset
    "i"     # 8  batchLength: bytes after this field
    "i"     # 12 partitionLeaderEpoch: the same through a run
    "b"     # 16 magic: 2
    "I"     # 17 crc: CRC-32C of bytes [21, end of batch)
    "h"     # 21 attributes: 0 (uncompressed, create time, not transactional, not control)
    "i"     # 23 lastOffsetDelta
    "q"     # 27 baseTimestamp
    "q"     # 35 maxTimestamp: never less than the batch before's in a run
    "14x"   # 43 producerId, producerEpoch, baseSequence: not read
    "i"     # 57 recordsCount
)
assert HEADER_FIELDS.size == HEADER.size


class BatchRun:
    """The deferred ``entries`` of a run of small batches and its ``noops``
    (heartbeats); ``changes_only`` when every entry is a change.
    :meth:`batches` reads them again one by one with ``batch_at(position,
    batch number)``, the reader's; ``positions`` lists where each starts,
    ``first_batch`` is the number of the first in the reader's list."""

    __slots__ = ("entries", "noops", "changes_only", "positions", "first_batch", "batch_at")

    spans_batches = True   # a run of batches, taken whole by the replay where it can be

    def __init__(self, entries: list, noops: int, changes_only: bool, positions: list,
                 first_batch: int, batch_at: Callable):
        self.entries, self.noops, self.changes_only = entries, noops, changes_only
        self.positions, self.first_batch, self.batch_at = positions, first_batch, batch_at

    def __len__(self) -> int:
        return len(self.positions)

    def batches(self) -> Iterator:
        """The run's batches, as the reader reads any batch."""
        for i, pos in enumerate(self.positions):
            yield self.batch_at(pos, self.first_batch + i)
