"""The fixed binary layouts of the metadata log, declared with ``construct``.

These are the layouts whose every field sits at a fixed place: the record
batch header, the entries of a segment's ``.index`` and ``.timeindex``,
and the values of the snapshot header and footer control records
(kraft-format.md sections 2.1, 16.2, 16.3 and 7). They are declared here
once, declaratively, for what shows them field by field (``log
--batches``) and as the reference the hot paths are checked against: the
loader reads them with precompiled ``struct.Struct`` formats (one C call
per header), which ``construct`` is too slow for, and a test checks each
such format against the declaration here (:func:`struct_format`).
"""

from __future__ import annotations

from functools import cache

from construct import Const, Int8sb, Int16sb, Int32sb, Int32ub, Int64sb, Struct

#: record batch v2 header, 61 bytes, big-endian (section 2.1)
BATCH_HEADER = Struct(
    "baseOffset" / Int64sb,            # 0  offset of the first record
    "batchLength" / Int32sb,           # 8  bytes after this field (batch size = batchLength + 12)
    "partitionLeaderEpoch" / Int32sb,  # 12 epoch of the leader that wrote it (snapshot: its epoch)
    "magic" / Int8sb,                  # 16 2 for every batch of the metadata log
    "crc" / Int32ub,                   # 17 CRC-32C of bytes [21, end of batch)
    "attributes" / Int16sb,            # 21 codec bits 0-2, timestamp type 3, transactional 4, control 5
    "lastOffsetDelta" / Int32sb,       # 23 last offset - baseOffset
    "baseTimestamp" / Int64sb,         # 27 timestamp of the first record (ms)
    "maxTimestamp" / Int64sb,          # 35 greatest record timestamp (ms): the append time in KRaft
    "producerId" / Int64sb,            # 43 -1 in KRaft
    "producerEpoch" / Int16sb,         # 51 -1 in KRaft
    "baseSequence" / Int32sb,          # 53 -1 in KRaft
    "recordsCount" / Int32sb,          # 57 records in the batch (before compression)
)

#: one entry of ``<base>.index``, 8 bytes (section 16.2)
OFFSET_INDEX_ENTRY = Struct(
    "relativeOffset" / Int32sb,        # offset - the segment's base offset
    "position" / Int32sb,              # byte position of a batch in the .log
)

#: one entry of ``<base>.timeindex``, 12 bytes (section 16.3)
TIME_INDEX_ENTRY = Struct(
    "timestamp" / Int64sb,             # greatest timestamp up to the entry's offset (ms)
    "relativeOffset" / Int32sb,        # offset - the segment's base offset
)

#: the value of a SnapshotHeaderRecord (control type 3), version 0 (section 7)
SNAPSHOT_HEADER_VALUE = Struct(
    "version" / Int16sb,                    # 0
    "lastContainedLogTimestamp" / Int64sb,  # append time of the last record covered (0: bootstrap)
    "taggedFields" / Const(b"\x00"),        # no tagged fields (an unsigned varint 0)
)

#: the value of a SnapshotFooterRecord (control type 4), version 0 (section 7)
SNAPSHOT_FOOTER_VALUE = Struct(
    "version" / Int16sb,                    # 0
    "taggedFields" / Const(b"\x00"),        # no tagged fields
)

@cache
def compiled(layout: Struct):
    """``layout`` compiled by construct (about 5x faster to parse than the
    declaration; compiled once, on first use)."""
    return layout.compile()


# the struct code of each fixed-width construct field
_CODES = {Int8sb: "b", Int16sb: "h", Int32sb: "i", Int32ub: "I", Int64sb: "q"}


def struct_format(layout: Struct) -> str:
    """The big-endian ``struct`` format of ``layout``'s numeric fields, in
    order (constant bytes, such as an empty tagged-field section, are not
    part of it): what a precompiled ``struct.Struct`` reading the layout
    must spell."""
    codes = []
    for sub in layout.subcons:
        code = _CODES.get(sub.subcon)
        if code is not None:
            codes.append(code)
    return ">" + "".join(codes)


def field_names(layout: Struct) -> list[str]:
    """The names of ``layout``'s numeric fields, in order."""
    return [sub.name for sub in layout.subcons if sub.subcon in _CODES]
