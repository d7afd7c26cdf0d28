"""Runs of a controller's heartbeat batches, read as one.

An active controller with nothing to write appends a NoOpRecord every
``metadata.max.idle.interval.ms`` (500 ms by default, KIP-835), each in a
batch of its own: a quiet day is 170,000 such batches, most of the batches of
a controller's log. They are alike byte for byte but for the base offset,
the epoch, the CRC and the timestamps, so one regex match finds how many
follow one another, one ``struct`` pass reads those fields, and each batch's
CRC is checked by one C call: no object per batch. The reader hands the
engine the run as one :class:`~.reader.Batch` whose header spans it and
whose records are a :class:`NoOpRun`; the engine counts its NoOps, or, where
one batch of the run matters on its own (a time-travel limit inside it, a
metadata transaction, the part a snapshot covers), asks for the batches one
by one (:meth:`NoOpRun.batches`), read as any other batch.
"""

from __future__ import annotations

import re
import struct
from typing import Callable, Iterator

import crc32c as _crc32c

from ..kraft.batch import CRC_START, HEADER, HEADER_SIZE, LOG_OVERHEAD, BatchHeader
from ..kraft.primitives import INT32
from . import Decided

# the one layout NOOP_RECORD spells out, version byte included
VERSIONS = {"NoOpRecord": Decided(reads=range(0, 1))}

# The one record of a heartbeat batch, as Kafka writes it (kraft-format.md section 3):
NOOP_RECORD = bytes((
    0x14,                     # length: 10 bytes follow (zigzag varint)
    0x00,                     # attributes: none
    0x00,                     # timestampDelta 0: the batch's only record
    0x00,                     # offsetDelta 0
    0x01,                     # key length -1: null
    0x08,                     # value length 4
    0x01, 0x14, 0x00, 0x00,   # value: frame version 1, apiKey 20 (NoOpRecord), version 0, no tags
    0x00,                     # no headers
))
BATCH_SIZE = HEADER_SIZE + len(NOOP_RECORD)   # 72
BATCH_LENGTH = BATCH_SIZE - LOG_OVERHEAD      # 60: the batchLength field
# One batch alone is a run too: a controller writes most heartbeats between
# two data batches, and a run of one is counted by the engine as any run:
# -9% instructions per record for `ls` of bench/shapes.py's ctrl-log.
MIN_RUN = 1

# Consecutive heartbeat batches; the parts that differ from batch to batch are "any byte":
_RUN = re.compile(b"(?:"
                  b".{8}"                                        # baseOffset
                  + re.escape(INT32.pack(BATCH_LENGTH))          # batchLength
                  + b".{4}"                                      # partitionLeaderEpoch
                  + b"\x02"                                      # magic
                  + b".{4}"                                      # crc, checked below
                  + re.escape(bytes(6))                          # attributes 0, lastOffsetDelta 0
                  + b".{16}"                                     # baseTimestamp, maxTimestamp
                  + re.escape(b"\xff" * 14)                      # producerId, producerEpoch, baseSequence -1
                  + re.escape(INT32.pack(1))                     # recordsCount 1
                  + re.escape(NOOP_RECORD)
                  + b")+", re.DOTALL)

# What differs, from one heartbeat batch of BATCH_SIZE bytes:
_FIELDS = struct.Struct(
    ">q"    # 0  baseOffset
    "4x"    # 8  batchLength
    "i"     # 12 partitionLeaderEpoch
    "x"     # 16 magic
    "I"     # 17 crc
    "6x"    # 21 attributes, lastOffsetDelta
    "8x"    # 27 baseTimestamp (the maxTimestamp again: one record)
    "q"     # 35 maxTimestamp
    "29x"   # 43 producerId, producerEpoch, baseSequence, recordsCount, the record
)
assert _FIELDS.size == BATCH_SIZE


class NoOpRun:
    """``noops`` heartbeat batches from byte ``position`` to ``end`` of
    ``buf``, their CRCs checked. :meth:`batches` reads them again one by one
    with ``batch_of``, the reader's function from a
    :class:`~.batch.BatchHeader` to its :class:`~.reader.Batch`. To the
    replay's batch loader it is a run of batches as a
    :class:`~.batch_runs.BatchRun` is, one of heartbeats only."""

    __slots__ = ("buf", "position", "end", "noops", "batch_of")

    spans_batches = True   # a run of batches, taken whole by the replay where it can be
    entries = ()           # no deferred entries: heartbeats only
    changes_only = False

    def __init__(self, buf, position: int, end: int, batch_of: Callable):
        self.buf, self.position, self.end = buf, position, end
        self.noops = (end - position) // BATCH_SIZE
        self.batch_of = batch_of

    def batches(self) -> Iterator:
        """The run's batches, as the reader reads any batch."""
        buf = self.buf
        for pos in range(self.position, self.end, BATCH_SIZE):
            yield self.batch_of(BatchHeader(*HEADER.unpack_from(buf, pos), pos))


def match(buf, view: memoryview, pos: int, stop: int, verify_crc: bool) -> "tuple | None":
    """The heartbeat batches at ``buf[pos:stop]``, at least :data:`MIN_RUN`
    of them, up to the first whose CRC is wrong (read, and reported, as any
    other batch): ``(end, header spanning them)``; None if there are fewer.
    The spanning header has the lowest base offset, the highest offset and
    timestamp of the run, its first batch's epoch and CRC, and the run's
    record count."""
    m = _RUN.match(buf, pos, stop)
    if m is None:
        return None
    end = m.end()
    fields = list(_FIELDS.iter_unpack(view[pos:end]))
    if verify_crc:
        crc, span = _crc32c.crc32c, BATCH_SIZE - CRC_START
        computed = [crc(view[p:p + span]) for p in range(pos + CRC_START, end, BATCH_SIZE)]
        stored = [f[2] for f in fields]
        if computed != stored:
            bad = next(i for i, (a, b) in enumerate(zip(computed, stored)) if a != b)
            end = pos + bad * BATCH_SIZE
            del fields[bad:]
    n = len(fields)
    if n < MIN_RUN:
        return None
    offsets = [f[0] for f in fields]
    first_offset, last_offset = min(offsets), max(offsets)
    first = fields[0]
    header = BatchHeader(first_offset, end - pos - LOG_OVERHEAD, first[1], 2, first[2], 0,
                         last_offset - first_offset, first[3], max(f[3] for f in fields),
                         -1, -1, -1, n, pos)
    return end, header
