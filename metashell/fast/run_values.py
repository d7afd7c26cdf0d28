"""A run of PartitionRecords read field by field straight from its bytes.

``cat`` of every partition's data and ``tree /topics`` show every field of
every partition: decoding a million records into dicts and folding each
into a state costs more than the rest of such a command. A run whose
records all share the first's simple layout (:func:`.summary_counts.run_counts`
checks it: the same array counts, one-byte uvarints, none null,
directories none or one per replica, no tagged fields) has every field at
the same place in every record, so two ``struct`` calls read them all: one
the integers, one the directories' raw UUIDs. Such a record decodes
exactly as the plain decoder reads it, and a partition whose only record
it is folds to exactly those fields, its tagged fields at their defaults
(``tests/unit/test_fold_topic.py`` compares what they show with the fold).
"""

from __future__ import annotations

import struct

from . import Decided
from .summary_counts import run_counts   # checks the layouts read here

# PartitionRecord v0-v2 as the module's docstring and _layout read them; run_counts
# (which checks them first) reads at least these
VERSIONS = {"PartitionRecord": Decided(reads=range(0, 3))}
_LAST = VERSIONS["PartitionRecord"].last

# the fields of a PartitionRecord v0-v2 before its tagged fields (kraft-format.md)
_ARRAYS = ("replicas", "isr", "removingReplicas", "addingReplicas")
_AFTER = ("leader", "leaderEpoch", "partitionEpoch")


def run_values(buf, pos: int, shape, n: int) -> "tuple[tuple, tuple, tuple] | None":
    """``(layout, ints, uuids)`` of the ``n`` PartitionRecords of the run
    ``shape`` at ``buf[pos:]``, or None when :func:`run_counts` refuses
    them. ``layout`` names, in the record's order, the fields read and how
    many values each has, ``(JSON name, "int" or "uuid", count)`` (an
    array's count may be 0), the same for every record; ``ints`` holds
    each record's integers in that order, record after record, ``uuids``
    each record's directories (raw bytes), record after record. The
    topic id is the run's (``shape.read``)."""
    if shape.version > _LAST or run_counts(buf, pos, shape, n) is None:
        return None
    expected = shape.counts_layout[2]   # the count bytes every record of the run has
    readers = shape.values_readers.get((expected, n))
    if readers is None:
        if len(shape.values_readers) >= 256:
            shape.values_readers.clear()
        layout, int_row, uuid_row = _layout(expected, shape)
        readers = shape.values_readers[(expected, n)] = (
            layout, struct.Struct(">" + int_row * n).unpack_from,
            struct.Struct(">" + uuid_row * n).unpack_from)
    return readers[0], readers[1](buf, pos), readers[2](buf, pos)


def _layout(expected: tuple, shape) -> "tuple[tuple, str, str]":
    """The layout and the two struct rows of a record of ``shape`` whose
    count bytes are ``expected`` (:func:`run_counts`' layout: the four
    arrays', the directories' (v1+), then the tagged fields')."""
    layout = [("partitionId", "int", 1)]
    ints, uuids = [f"{shape.value + 3}x", "i", "16x"], [f"{shape.value + 3 + 20}x"]
    for name, c in zip(_ARRAYS, expected):
        layout.append((name, "int", c - 1))
        ints.append("x" + "i" * (c - 1))
        uuids.append(f"{1 + 4 * (c - 1)}x")
    layout += [(name, "int", 1) for name in _AFTER]
    ints.append("iii")
    uuids.append("12x")
    rest = shape.size - shape.value - 3 - 20 - sum(1 + 4 * (c - 1) for c in expected[:4]) - 12
    if shape.version >= 1:   # directories
        d = expected[4] - 1
        layout.append(("directories", "uuid", d))
        ints.append(f"{1 + 16 * d}x")
        uuids.append("x" + "16s" * d)
        rest -= 1 + 16 * d
    ints.append(f"{rest}x")
    uuids.append(f"{rest}x")
    return tuple(layout), "".join(ints), "".join(uuids)
