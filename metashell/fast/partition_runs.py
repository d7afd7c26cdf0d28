"""Runs of partition records: a topic's partitions, framed alike, read together.

Kafka writes a topic's partitions one after another, and inside a batch
they differ only in their offset delta and body: the same size, the same
framing bytes, the same topic id. The per-record fast paths of the reader
and the index read one such record; a :class:`PartitionRun` made from it
then takes as many of the following records as repeat its framing exactly,
in two C calls:

* a regular expression matches them: the same length bytes, any
  attributes, a timestamp delta and an offset delta of the same widths
  (any widths: a record's position in its batch does not matter), a null
  key, the same value length, frame, apiKey and version, the topic id of
  the first (a backreference), a body of the same size, a header count of
  0. Each record it matches is one the per-record fast path would accept
  the same way;
* one ``struct`` call reads, for each of them, the partition id (and for
  the eager reader and the index also attributes, timestamp delta and
  offset delta).
"""

from __future__ import annotations

import re
import struct
import sys
from typing import Callable

from ..kraft.primitives import read_varint, read_varlong
from . import Decided

# What a run reads of a partition record's value is its opening, partitionId
# (int32) then topicId (uuid), in every version so far; a TopicRun reads a
# TopicRecord v0's name and id. The reader defers (and so runs) no other
# version: it checks the first record of a shape, whose frame header (version
# included) the shape's pattern then repeats.
VERSIONS = {
    "TopicRecord": Decided(reads=range(0, 1)),
    "PartitionRecord": Decided(reads=range(0, 3)),
    "PartitionChangeRecord": Decided(reads=range(0, 3)),
}
TOPIC_LAST_VERSION = VERSIONS["TopicRecord"].last
# the newest version deferred, by apiKey (3: PartitionRecord, 5: PartitionChangeRecord)
PARTITION_LAST_VERSION = (-1, -1, -1, VERSIONS["PartitionRecord"].last,
                          -1, VERSIONS["PartitionChangeRecord"].last)

MIN_RUN = 2   # fewer records are not worth the two calls
# Repetitions that never give back what they took (possessive, Python 3.11+): a
# run's pattern ends where its repetition does, so nothing is lost, and the
# regex engine keeps no state to backtrack to (-32% time per TopicRun match)
POSSESSIVE = b"+" if sys.version_info >= (3, 11) else b""


class _Varints(dict):
    """Varint bytes -> value, memoised, so that ``map`` decodes a run's
    offset deltas (or timestamp deltas) of any width in C: a batch's deltas
    are the next batch's deltas again. Starts over past a million entries."""

    def __init__(self, read):
        super().__init__()
        self.read = read

    def __missing__(self, raw: bytes) -> int:
        if len(self) >= 1 << 20:
            self.clear()
        value = self[raw] = self.read(raw, 0)[0]
        return value


OFFSET_DELTAS = _Varints(read_varint)
TIMESTAMP_DELTAS = _Varints(read_varlong)


def _width(head: bytes, at: int) -> int:
    """Bytes of the varint at ``head[at:]``."""
    n = 1
    while head[at + n - 1] >= 0x80:
        n += 1
    return n


def framing_widths(buf, at: int) -> tuple[int, int, int]:
    """Bytes of the length, timestamp delta and offset delta varints of the
    record at ``buf[at:]`` (its attributes byte between the first two)."""
    lb = _width(buf, at)
    tw = _width(buf, at + lb + 1)
    return lb, tw, _width(buf, at + lb + 1 + tw)


def varint_pattern(width: int) -> bytes:
    """A regex for any varint of ``width`` bytes."""
    return rb"[\x80-\xff]{%d}[\x00-\x7f]" % (width - 1) if width > 1 else rb"[\x00-\x7f]"


class PartitionRun:
    """The run shape of one record: ``head`` is its bytes up to and including
    the value's frame header, ``k`` where its value starts, ``size`` its
    size in bytes (length varint included). Every varint of the framing may
    have any width; the records of a run have the widths of the first."""

    def __init__(self, head: bytes, k: int, size: int):
        lb, tw, db = framing_widths(head, 0)            # length, timestamp and offset deltas
        vlen_and_frame = head[lb + 2 + tw + db:]        # value length varint, frame, apiKey, version
        body = size - k - 4                             # after the frame header, before the header count
        self.size = size
        self.api = head[k + 1]
        self.version = head[k + 2]
        self.value = k                                  # where the value starts
        self.value_length = size - k - 1
        before = (re.escape(head[:lb]) + rb"." + varint_pattern(tw) + varint_pattern(db)
                  + rb"\x01" + re.escape(vlen_and_frame) + rb".{4}")   # ... partitionId
        after = rb".{%d}\x00" % (body - 20)                              # the rest, no headers
        # the first record names the topic, the others repeat it
        self.pattern = re.compile(before + rb"(.{16})" + after
                                  + rb"(?:" + before + rb"\1" + after + rb")*" + POSSESSIVE, re.DOTALL)
        self.before, self.after = before, after   # one record, around its topic id (TopicRun)
        self.topic_at = k + 7                           # where the topic id starts in a record
        # per record: attributes, timestamp delta, offset delta, partitionId; for n
        # records the same n times over, one struct per n (kept: a cluster's topics
        # have a few partition counts)
        self.row = f"{lb}xB{tw}s{db}s{1 + len(vlen_and_frame)}xi{body - 4 + 1}x"
        self.structs: dict[int, Callable] = {}
        # per record only partitionId: what a deferred run keeps
        self.pid_row = f"{k + 3}xi{size - k - 7}x"
        self.pid_structs: dict[int, Callable] = {}
        # the layout summary_counts.run_counts last found in runs of this shape,
        # and its readers per record count
        self.counts_layout: tuple | None = None
        self.counts_readers: dict[int, tuple] = {}
        # run_values' layouts and readers, per count bytes and record count
        self.values_readers: dict[tuple, tuple] = {}

    @staticmethod
    def key(buf, rstart: int, k: int, size: int) -> tuple:
        """What tells run shapes apart, cheaply; the pattern itself checks every record."""
        return size, k, bytes(buf[rstart + k - 2:rstart + k + 3])

    def match(self, buf, pos: int, end: int, limit: int) -> int:
        """How many records of this shape, of one topic, start at ``pos`` (at
        most ``limit``; 0 if fewer than :data:`MIN_RUN`)."""
        m = self.pattern.match(buf, pos, end)
        n = 0 if m is None else min((m.end() - pos) // self.size, limit)
        return n if n >= MIN_RUN else 0

    def pid_unpacker(self, n: int) -> Callable:
        """``unpack_from`` of the partition ids of ``n`` records."""
        unpack = self.pid_structs.get(n)
        if unpack is None:
            unpack = self.pid_structs[n] = struct.Struct(">" + self.pid_row * n).unpack_from
        return unpack

    def read(self, buf, pos: int, n: int) -> tuple:
        """``(attributes, timestamp deltas, offset deltas, partition ids, raw
        topic id)`` of the ``n`` records at ``pos``."""
        unpack = self.structs.get(n)
        if unpack is None:
            unpack = self.structs[n] = struct.Struct(">" + self.row * n).unpack_from
        t = unpack(buf, pos)
        return (t[0::4], list(map(TIMESTAMP_DELTAS.__getitem__, t[1::4])),
                list(map(OFFSET_DELTAS.__getitem__, t[2::4])), t[3::4],
                bytes(buf[pos + self.topic_at:pos + self.topic_at + 16]))


def run_after(cache: dict, buf, rstart: int, k: int, size: int) -> PartitionRun:
    """The run shape of the record at ``rstart`` (made once per shape)."""
    key = PartitionRun.key(buf, rstart, k, size)
    run = cache.get(key)
    if run is None:
        run = cache[key] = PartitionRun(bytes(buf[rstart:rstart + k + 3]), k, size)
    return run


class TopicRun:
    """A TopicRecord and the run of its partitions after it, as one match.

    A snapshot is topic after topic: a TopicRecord, then its partitions. Its
    TopicRecords differ from one another in their offset delta, their name
    and id, and little else: made from one that the reader's per-record path
    took (``buf[at:]``, its value at ``vstart``) and the run shape of its
    partitions, a TopicRun's pattern matches the next topic whose framing has
    the same widths and whose name has the same length (so the same record
    and value lengths, byte for byte), with a run of partitions (one or
    more: one match reads a topic of one partition too) shaped as ``run``
    that name the same topic id.
    Each topic it matches is one the per-record path would read the same way.
    """

    def __init__(self, buf, at: int, vstart: int, run: PartitionRun):
        head = bytes(buf[at:vstart + 4])              # up to the name's length byte
        lb, tw, ow = framing_widths(head, 0)          # length, timestamp and offset deltas
        k = vstart - at                               # where the value starts
        name = head[-1] - 1                           # the name's bytes
        self.run = run
        self.name_at = k + 3                          # where the name's length byte is
        self.size = k + 3 + 1 + name + 16 + 1 + 1     # value: ... name, id, tagged fields; headers
        self.pattern = re.compile(
            re.escape(head[:lb]) + rb"."                               # length, any attributes
            + rb"(" + varint_pattern(tw) + rb")(" + varint_pattern(ow) + rb")"   # deltas
            + rb"\x01" + re.escape(head[lb + 1 + tw + ow + 1:])         # null key, value length,
            + rb"(.{%d})(.{16})\x00\x00" % name                         # frame header, name; id
            + rb"(?:" + run.before + rb"\4" + run.after + rb")+" + POSSESSIVE,   # partitions
            re.DOTALL)


def topic_run_after(cache: dict, buf, at: int, vstart: int, run: PartitionRun) -> TopicRun:
    """The :class:`TopicRun` of the TopicRecord at ``buf[at:]`` followed by
    partitions shaped as ``run`` (made once per shape)."""
    lb, tw, ow = framing_widths(buf, at)
    shape = (bytes(buf[at:at + lb]), tw, ow, bytes(buf[at + lb + 1 + tw + ow:vstart + 4]), run)
    found = cache.get(shape)
    if found is None:
        if len(cache) >= 4096:
            cache.clear()
        found = cache[shape] = TopicRun(buf, at, vstart, run)
    return found


def key(buf, pos: int, name_at: int, end: int) -> int:
    """What the :class:`TopicRun` of a TopicRecord at ``buf[pos:end]`` (its
    name's length byte at ``pos + name_at``) is found by: that byte, and the
    first byte of the next record (its length), which tells the shapes of a
    topic's partitions apart (another replication factor, other
    directories); 0 if the next record is not in ``buf[:end]``. Topics of
    one name length but other partition shapes, mixed in a snapshot, each
    find theirs (-26% reader time on the bench's mixed snapshot)."""
    if pos + name_at >= end:
        return 0
    nb = buf[pos + name_at]
    after = pos + name_at + nb + 18   # name, id, tagged fields and headers: the next record
    return (name_at << 16 | nb << 8 | buf[after]) if after < end else 0
