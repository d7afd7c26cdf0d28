"""The fixed layouts declared with construct (``metashell.kraft.layouts``)
against the precompiled ``struct`` formats the hot paths read them with,
and against bytes the project's writer makes."""

from __future__ import annotations

import re
import struct

from metashell.kraft import batch, catalog, layouts
from metashell.loader import append_times
from metashell.fast import batch_runs, noop_runs
from metashell.kraft.writer import LogWriter, record


def _offsets(layout) -> dict:
    """Each field's byte offset in ``layout``."""
    out, at = {}, 0
    for sub in layout.subcons:
        out[sub.name] = at
        at += sub.sizeof()
    return out


def test_the_batch_header_struct_is_the_declared_layout():
    assert batch.HEADER.format == layouts.struct_format(layouts.BATCH_HEADER)
    assert batch.HEADER.size == layouts.BATCH_HEADER.sizeof() == batch.HEADER_SIZE
    # PEEK reads the first four fields
    assert layouts.struct_format(layouts.BATCH_HEADER).startswith(batch.PEEK.format)
    assert _offsets(layouts.BATCH_HEADER)["crc"] + 4 == batch.CRC_START
    # BatchHeader's fields are the declaration's, in order
    names = [f for f in batch.BatchHeader.__dataclass_fields__][:13]
    assert len(names) == len(layouts.field_names(layouts.BATCH_HEADER))


def _read_places(fields: struct.Struct) -> list[int]:
    """The byte offsets at which a big-endian ``struct`` reads a value (its
    pad bytes, ``x``, skipped)."""
    read_at, pos = [], 0
    for count, code in re.findall(r"(\d*)([a-zA-Z])", fields.format[1:]):
        if code != "x":
            read_at.append(pos)
        pos += struct.calcsize(">" + (count or "") + code)
    return read_at


def test_the_heartbeat_struct_reads_the_declared_places():
    """noop_runs._FIELDS skips what heartbeats share and reads baseOffset,
    the epoch, the CRC and maxTimestamp: at the declared offsets."""
    at = _offsets(layouts.BATCH_HEADER)
    assert _read_places(noop_runs._FIELDS) == [at["baseOffset"], at["partitionLeaderEpoch"],
                                                at["crc"], at["maxTimestamp"]]


def test_the_run_header_struct_reads_the_declared_places():
    """batch_runs.HEADER_FIELDS reads every field of the header but the
    producer's three, at the declared offsets."""
    at = _offsets(layouts.BATCH_HEADER)
    read_at = _read_places(batch_runs.HEADER_FIELDS)
    skipped = ("producerId", "producerEpoch", "baseSequence")
    assert read_at == [at[name] for name in layouts.field_names(layouts.BATCH_HEADER) if name not in skipped]


def test_the_index_entry_struct_is_the_declared_layout():
    assert append_times._INDEX_ENTRY.format == layouts.struct_format(layouts.OFFSET_INDEX_ENTRY)
    assert layouts.TIME_INDEX_ENTRY.sizeof() == 12
    entry = layouts.TIME_INDEX_ENTRY.build({"timestamp": 1_700_000_000_000, "relativeOffset": 42})
    assert struct.unpack(">qi", entry) == (1_700_000_000_000, 42)


def test_declarations_read_what_the_writer_writes():
    w = LogWriter(100, 3, 1_700_000_000_000)
    w.batch([record("NoOpRecord"), record("NoOpRecord")], timestamp=1_700_000_000_500)
    data = b"".join(w.parts)
    parsed = layouts.BATCH_HEADER.parse(data)
    assert (parsed.baseOffset, parsed.partitionLeaderEpoch, parsed.magic, parsed.lastOffsetDelta,
            parsed.recordsCount, parsed.producerId) == (100, 3, 2, 1, 2, -1)
    assert tuple(parsed[n] for n in layouts.field_names(layouts.BATCH_HEADER)) == \
        batch.HEADER.unpack_from(data)


def test_snapshot_header_and_footer_values():
    value = catalog.SNAPSHOT_HEADER.encode(0, {"version": 0,
                                               "lastContainedLogTimestamp": 1_700_000_000_123})
    parsed = layouts.SNAPSHOT_HEADER_VALUE.parse(value)
    assert (parsed.version, parsed.lastContainedLogTimestamp) == (0, 1_700_000_000_123)
    assert len(value) == layouts.SNAPSHOT_HEADER_VALUE.sizeof()
    footer = catalog.SNAPSHOT_FOOTER.encode(0, {"version": 0})
    assert footer == layouts.SNAPSHOT_FOOTER_VALUE.build({"version": 0})
