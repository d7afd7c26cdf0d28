"""A run of PartitionRecords counted straight from its bytes, for ``summary``.

``summary`` needs of each partition only its replication factor (its
replicas less those being added: what Kafka compares the ISR with), how
many in-sync replicas it has and whether it has a leader. A snapshot's partitions come in
runs (:mod:`.partition_runs`: framed alike, one topic, one size); their values are
(kraft-format.md, PartitionRecord v0-v2)::

    frame, apiKey, version          3 bytes
    partitionId, topicId            4 + 16
    replicas, isr, removing, adding compact arrays of int32: a uvarint count + 1, then 4 bytes each
    leader, leaderEpoch, partitionEpoch   3 x int32
    directories (v1+)               compact array of uuid: a uvarint count + 1, then 16 bytes each
    tagged fields                   uvarint count

The first record's count bytes give a layout; one ``struct`` call reads, for
every record of the run, each count byte where that layout puts it, the
leader, and the byte that ends the value. If every record repeats the
first's counts (read as one-byte uvarints, none null), its directories
count is 0 or the replica count, and it has no tagged fields, every record
decodes exactly as the plain decoder reads it and folds to a partition with
those counts: anything else returns None and the caller folds record by
record.
"""

from __future__ import annotations

import struct

from . import Decided

# the layouts above (a PartitionChangeRecord's are read by .partition_change)
VERSIONS = {"PartitionRecord": Decided(reads=range(0, 3))}
_RECORD_LAST = VERSIONS["PartitionRecord"].last

def run_counts(buf, pos: int, shape, n: int) -> "tuple[int, int, tuple] | None":
    """``(replicas, isr, leaders)`` of the ``n`` PartitionRecords of the run
    ``shape`` at ``buf[pos:]`` (their replication factor, the replicas less
    those being added, and ISR count, the same for all, and each one's
    leader), or None when they do not all share the
    first one's simple layout, or are of a version not read here."""
    if shape.version > _RECORD_LAST:
        return None
    # a topic's runs mostly have the layout of the last topic's of the same shape:
    # checked on every record, it needs no reading of the first (-40% for `summary`)
    if shape.counts_layout is not None:
        counts = _check(buf, pos, n, shape)
        if counts is not None:
            return counts
    layout = _layout(buf, pos, shape)
    if layout is None:
        return None
    shape.counts_layout = layout
    shape.counts_readers = {}
    return _check(buf, pos, n, shape)


def _check(buf, pos: int, n: int, shape) -> "tuple[int, int, tuple] | None":
    """The counts of the ``n`` records at ``pos`` if every one has the
    shape's layout: one call reads every count byte and one comparison
    checks them all, one call reads the leaders (the readers kept on the
    shape per ``n``: a cluster's topics have a few partition counts)."""
    readers = shape.counts_readers.get(n)
    if readers is None:
        counts_row, leader_row, expected = shape.counts_layout
        if len(shape.counts_readers) >= 256:
            shape.counts_readers.clear()
        readers = shape.counts_readers[n] = (
            struct.Struct(">" + counts_row * n).unpack_from, expected * n,
            struct.Struct(">" + leader_row * n).unpack_from,
            expected[0] - expected[3], expected[1] - 1)   # replicas less adding (count bytes + 1)
    if readers[0](buf, pos) != readers[1]:
        return None
    return readers[3], readers[4], readers[2](buf, pos)


def _layout(buf, pos: int, shape) -> "tuple[str, tuple] | None":
    """The first record's layout: a struct row reading its count bytes (its
    four arrays', its directories' (v1+), its tagged fields'), one reading
    its leader, and the count bytes every record must have."""
    body = pos + shape.value + 3            # after frame, apiKey, version
    end = pos + shape.value + shape.value_length   # the end of the value
    at = body + 20                          # after partitionId and topicId
    fields = []                             # (position, value the others repeat)
    for _ in range(4):                      # replicas, isr, removingReplicas, addingReplicas
        c = buf[at]
        if not 0 < c < 0x80:                # null, or a wider uvarint: not this path
            return None
        fields.append((at, c))
        at += 1 + 4 * (c - 1)
        if at >= end:
            return None
    replicas = fields[0][1] - 1
    leader = at
    at += 12                                # leader, leaderEpoch, partitionEpoch
    if at >= end:
        return None
    if shape.version >= 1:                  # directories
        c = buf[at]
        if not 0 < c < 0x80 or c - 1 not in (0, replicas):
            return None
        fields.append((at, c))
        at += 1 + 16 * (c - 1)
    if at >= end:
        return None
    if at != end - 1 or buf[at] != 0:       # no tagged fields, and nothing after them
        return None
    fields.append((at, 0))
    # two rows: the count bytes (the arrays', the directories' (v1+), the tagged
    # fields'), and the leader
    return (_row([p for p, _ in fields], "B", pos, shape.size), _row([leader], "i", pos, shape.size),
            tuple(v for _, v in fields))


def _row(positions: list, code: str, pos: int, size: int) -> str:
    """A struct row reading ``code`` at each of ``positions`` of a record of
    ``size`` bytes at ``pos``."""
    row, cursor = [], pos
    for p in positions:
        row.append(f"{p - cursor}x{code}" if p > cursor else code)
        cursor = p + struct.calcsize(code)
    row.append(f"{pos + size - cursor}x")
    return "".join(row)
