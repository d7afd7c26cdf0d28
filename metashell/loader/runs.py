"""Runs of partition records: a topic's partitions, framed alike, read together.

Kafka writes a topic's partitions one after another, and inside a batch
they differ only in their offset delta and body: the same size, the same
framing bytes. The per-record fast paths of the reader and the index read
one such record; a :class:`PartitionRun` made from it then takes as many
of the following records as repeat its framing exactly, in two C calls:

* a regular expression matches them: the same length bytes, any
  attributes, a one-byte timestamp delta, an offset delta of the same
  width, a null key, the same value length, frame, apiKey and version, a
  body of the same size, a header count of 0. Each record it matches is one
  the per-record fast path would accept the same way;
* one ``struct`` call reads, for each of them, its attributes, timestamp
  delta, offset delta, and the partition id and topic id that open a
  PartitionRecord or PartitionChangeRecord body.
"""

from __future__ import annotations

import re
import struct
from typing import Callable

from .primitives import ZIGZAG1, ZIGZAG2

MIN_RUN = 2   # fewer records are not worth the two calls

_WORDS: list = []   # see _two_byte_zigzag


def _two_byte_zigzag() -> list:
    """A two-byte zigzag varint read as one big-endian 16-bit word -> its
    value (``None`` where the word is no such varint): lets ``map`` decode a
    run's offset deltas in C. Made on first use (65,536 entries)."""
    if not _WORDS:
        _WORDS.extend([None] * 0x8000)
        for b0 in range(0x80, 0x100):
            row = ZIGZAG2[b0]
            _WORDS.extend(row + [None] * 0x80)
    return _WORDS


class PartitionRun:
    """The run shape of one record: ``head`` is its bytes up to and including
    the value's frame header, ``k`` where its value starts, ``size`` its
    size in bytes (length varint included)."""

    def __init__(self, head: bytes, k: int, size: int):
        lb = 1 if head[0] < 0x80 else 2                 # length varint
        db = 1 if head[lb + 2] < 0x80 else 2            # offset delta varint
        vlen_and_frame = head[lb + 3 + db:]             # value length varint, frame, apiKey, version
        body = size - k - 4                             # after the frame header, before the header count
        delta = rb"[\x00-\x7f]" if db == 1 else rb"[\x80-\xff][\x00-\x7f]"
        self.size = size
        self.api = head[k + 1]
        self.value = k                                  # where the value starts
        self.value_length = size - k - 1
        self.value_length_at = k - (len(vlen_and_frame) - 3)
        self.delta_table = ZIGZAG1 if db == 1 else _two_byte_zigzag()
        self.pattern = re.compile(
            rb"(?:" + re.escape(head[:lb]) + rb".[\x00-\x7f]" + delta + rb"\x01"
            + re.escape(vlen_and_frame) + rb".{%d}\x00)*" % body, re.DOTALL)
        # per record: attributes, timestamp delta, offset delta (one byte, or two as
        # one word), partitionId, topicId; for n records the same n times over, one
        # struct per n (kept: a cluster's topics have a few partition counts)
        self.row = f"{lb}xBB{'B' if db == 1 else 'H'}{1 + len(vlen_and_frame)}xi16s{body - 20 + 1}x"
        self.structs: dict[int, Callable] = {}

    @staticmethod
    def key(buf, rstart: int, k: int, size: int) -> tuple:
        """What tells run shapes apart, cheaply; the pattern itself checks every record."""
        return size, k, bytes(buf[rstart + k - 2:rstart + k + 3])

    def match(self, buf, pos: int, end: int, limit: int) -> int:
        """How many records of this shape start at ``pos`` (at most ``limit``;
        0 if fewer than :data:`MIN_RUN`)."""
        n = min((self.pattern.match(buf, pos, end).end() - pos) // self.size, limit)
        return n if n >= MIN_RUN else 0

    def read(self, buf, pos: int, n: int) -> tuple:
        """``(attributes, timestamp delta bytes, offset deltas, partition ids,
        raw topic ids)`` of the ``n`` records at ``pos`` (a one-byte
        timestamp delta is 0 when its byte is)."""
        unpack = self.structs.get(n)
        if unpack is None:
            unpack = self.structs[n] = struct.Struct(">" + self.row * n).unpack_from
        t = unpack(buf, pos)
        return t[0::5], t[1::5], list(map(self.delta_table.__getitem__, t[2::5])), t[3::5], t[4::5]


def run_after(cache: dict, buf, rstart: int, k: int, size: int) -> PartitionRun:
    """The run shape of the record at ``rstart`` (made once per shape)."""
    key = PartitionRun.key(buf, rstart, k, size)
    run = cache.get(key)
    if run is None:
        run = cache[key] = PartitionRun(bytes(buf[rstart:rstart + k + 3]), k, size)
    return run
