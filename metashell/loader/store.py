"""Records left in their files until they are needed.

A million-partition snapshot is a million PartitionRecords, and a Python
object per record is most of the time and memory of loading it. A
:class:`RecordStore` opens files with ``defer`` on (see
:class:`~metashell.loader.reader.FileReader`): their partition records come
out as small ``(ref, apiKey, partitionId, raw topic id)`` tuples, the replay
engine keeps only the ``ref`` (an int) under its partition, and
:meth:`RecordStore.record` decodes the record again, from the still-mapped
file, when someone looks at that partition.

A ref names the file, the batch and where the record starts in the batch's
record section (``reader.REF_*``); with the batch header (read once, then
kept) the store reads the record's framing again
(:func:`~metashell.loader.framing.frame`, as the reader did) and decodes its
value. A compressed batch's record
section is decompressed again (the last few are kept: a topic's partitions
sit together).
"""

from __future__ import annotations

from collections import OrderedDict

from ..errors import CorruptDataError, RecordDecodeError
from .batch import HEADER, HEADER_SIZE, LOG_OVERHEAD, BatchHeader
from .compression import decompress
from .framing import frame
from .reader import REF_BATCH_BITS, REF_POSITION_BITS, FileReader
from .records import METADATA, Record, fill_metadata

_FILE_SHIFT = REF_BATCH_BITS + REF_POSITION_BITS
_BATCH_MASK = (1 << REF_BATCH_BITS) - 1
_POSITION_MASK = (1 << REF_POSITION_BITS) - 1
_SECTIONS_KEPT = 4          # decompressed record sections kept
_HEADERS_KEPT = 1 << 16     # batch headers kept


def ref_file(ref: int) -> int:
    """The file number of a ref."""
    return ref >> _FILE_SHIFT


class RecordStore:
    """The files of one load, and the way back from a ref to its record."""

    def __init__(self):
        self._readers: list[FileReader] = []
        # ref >> REF_POSITION_BITS (file and batch) -> (header, buffer, record section
        # start, end, the append time for a log-append-time batch or None)
        self._batches: dict[int, tuple] = {}
        self._sections: OrderedDict = OrderedDict()   # same key -> decompressed records

    def open(self, path, **options) -> FileReader:
        """A reader of ``path`` whose partition records are deferred to this store."""
        reader = FileReader(path, defer=len(self._readers), **options)
        self._readers.append(reader)
        return reader

    def record(self, ref: int) -> Record:
        """The record ``ref`` names, decoded (``kind == "undecodable"`` if its
        body is bad). Its framing was checked when it was read, so damage
        here means the file changed since: :class:`CorruptDataError`."""
        key = ref >> REF_POSITION_BITS
        batch = self._batches.get(key)
        if batch is None or batch[1] is None:
            batch = self._batch(key)
        h, buf, start, end, append_ts = batch
        pos = start + (ref & _POSITION_MASK)
        try:   # the framing, read as the reader read it (deferred: no key, no headers)
            rend, attributes, ts_delta, offset_delta, _, klen, vstart, vlen, hpos = frame(
                buf, pos, end, start)
            plain = klen < 0 and vlen >= 3 and hpos + 1 == rend and buf[hpos] == 0
        except (IndexError, RecordDecodeError):
            plain = False
        if not plain:
            raise CorruptDataError(self._readers[ref_file(ref)].path, h.position,
                                   f"the record at byte {pos - start} of the batch to be as it was "
                                   "when the file was read", h.base_offset)
        rec = Record(h.base_offset + offset_delta,
                     h.base_timestamp + ts_delta if append_ts is None else append_ts,
                     h.epoch, METADATA, "", None, None, None, h.position)
        if attributes:
            rec.attributes = attributes
        fill_metadata(rec, buf, vstart, vstart + vlen, lazy=False)
        return rec

    def _batch(self, key: int) -> tuple:
        reader = self._readers[key >> REF_BATCH_BITS]
        batch = self._batches.get(key)
        if batch is None:
            bpos = reader.batch_positions[key & _BATCH_MASK]
            h = BatchHeader(*HEADER.unpack_from(reader.buf, bpos), bpos)
            batch = (h, None if h.codec else reader.buf, bpos + HEADER_SIZE,
                     bpos + LOG_OVERHEAD + h.length, h.max_timestamp if h.log_append_time else None)
            if len(self._batches) >= _HEADERS_KEPT:   # a log of millions of small batches
                self._batches.clear()
            self._batches[key] = batch
        if batch[1] is None:   # compressed
            section = self._section(key, batch[0], reader)
            return batch[0], section, 0, len(section), batch[4]
        return batch

    def _section(self, key, h: BatchHeader, reader: FileReader) -> bytes:
        data = self._sections.get(key)
        if data is not None:
            self._sections.move_to_end(key)
            return data
        start = h.position + HEADER_SIZE
        try:
            data = decompress(h.codec, bytes(reader.buf[start:h.position + LOG_OVERHEAD + h.length]))
        except ValueError as e:
            raise CorruptDataError(reader.path, h.position, f"a valid compressed payload ({e})",
                                   h.base_offset) from None
        self._sections[key] = data
        if len(self._sections) > _SECTIONS_KEPT:
            self._sections.popitem(last=False)
        return data
