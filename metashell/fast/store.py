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
(:func:`~metashell.kraft.framing.frame`, as the reader did) and decodes its
value. A compressed batch's record
section is decompressed again (the last few are kept: a topic's partitions
sit together).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Iterator

from ..errors import CorruptDataError, RecordDecodeError
from ..kraft.batch import HEADER, HEADER_SIZE, LOG_OVERHEAD, BatchHeader
from ..kraft.compression import decompress
from ..kraft.framing import frame
from .deferred import run_fields
from .kept_runs import acls_decode, config_fields, config_values, record_starts
from .run_values import run_values
from .partition_change import change_counts
from .summary_counts import run_counts
from .reading import shortcuts
from ..loader.reader import REF_BATCH_BITS, REF_POSITION_BITS, FileReader
from ..kraft.records import DECODE_ERRORS, METADATA, RESOLVED, Record, fill_metadata

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
        reader = FileReader(path, defer=len(self._readers), shortcuts=shortcuts, **options)
        self._readers.append(reader)
        return reader

    def buffer(self, file_no: int):
        """The bytes file ``file_no`` was read from."""
        return self._readers[file_no].buf

    def searchable(self, file_no: int) -> bool:
        """Whether file ``file_no``'s bytes can be searched (``find``)."""
        return hasattr(self._readers[file_no].buf, "find")

    def file_numbers(self, paths) -> list[int]:
        """The numbers of the files opened from ``paths``."""
        wanted = {str(p) for p in paths}
        return [i for i, r in enumerate(self._readers) if str(r.path) in wanted]

    def record(self, ref: int) -> Record:
        """The record ``ref`` names, decoded (``kind == "undecodable"`` if its
        body is bad). Its framing was checked when it was read, so damage
        here means the file changed since: :class:`CorruptDataError`."""
        h, buf, vstart, vend, offset_delta, timestamp, attributes = self._value(ref)
        rec = Record(h.base_offset + offset_delta, timestamp,
                     h.epoch, METADATA, "", None, None, None, h.position)
        if attributes:
            rec.attributes = attributes
        fill_metadata(rec, buf, vstart, vend, lazy=False)
        return rec

    def data(self, ref: int, api: int = 3) -> "tuple[dict, int, int] | None":
        """``(fields, offset, timestamp)`` of the record ``ref`` names,
        decoded straight from its value (no :class:`Record`: a full walk
        folds every partition, -6% of its time), or None if it is not a
        metadata record of apiKey ``api`` (a PartitionRecord) that decodes
        whole (:meth:`record` then says why)."""
        h, buf, vstart, vend, offset_delta, timestamp, _ = self._value(ref)
        hit = RESOLVED.get((buf[vstart], buf[vstart + 1], buf[vstart + 2]))
        if hit is None or buf[vstart] != 1 or buf[vstart + 1] != api:
            return None
        n = vend - vstart
        try:
            data, p = hit[1](buf[vstart:vend], 3, n)
        except DECODE_ERRORS:
            return None
        return (data, h.base_offset + offset_delta, timestamp) if p == n else None

    def run_data(self, ref: int, shape, n: int) -> "list | None":
        """:meth:`data` of each of the ``n`` PartitionRecords of the
        run ``shape`` whose first is ``ref`` (None for one that does not
        decode whole), decoded in one pass over the run, their offsets and
        times read in one call; None if the bytes no longer match the run."""
        h, buf, start, end, append_ts = self._batch(ref >> REF_POSITION_BITS)
        pos = start + (ref & _POSITION_MASK)
        hit = RESOLVED.get((1, 3, shape.version))
        m = shape.pattern.match(buf, pos, end) if hit is not None and shape.api == 3 else None
        if m is None or m.end() - pos < n * shape.size:
            return None
        _, ts_deltas, deltas, _, _ = shape.read(buf, pos, n)
        decoder, vlen, size = hit[1], shape.value_length, shape.size
        base, base_ts = h.base_offset, h.base_timestamp
        out = []
        first = pos + shape.value
        for vstart, d, td in zip(range(first, first + n * size, size), deltas, ts_deltas):
            try:
                data, p = decoder(buf[vstart:vstart + vlen], 3, vlen)
            except DECODE_ERRORS:
                p = -1
            out.append((data, base + d, base_ts + td if append_ts is None else append_ts)
                       if p == vlen else None)
        return out

    def run_values(self, ref: int, shape, n: int) -> "tuple[bytes, tuple, tuple, tuple] | None":
        """``(raw topic id, layout, ints, uuids)`` of the run of ``n``
        PartitionRecords of ``shape`` whose first is ``ref``, read from
        their bytes (:func:`~.fast.run_values.run_values`); None if they
        must be decoded, or the bytes no longer match the run."""
        buf, start, end = self._batch(ref >> REF_POSITION_BITS)[1:4]
        pos = start + (ref & _POSITION_MASK)
        m = shape.pattern.match(buf, pos, end) if shape.api == 3 else None
        if m is None or m.end() - pos < n * shape.size:
            return None
        got = run_values(buf, pos, shape, n)
        if got is None:
            return None
        return (bytes(buf[pos + shape.topic_at:pos + shape.topic_at + 16]),) + got

    def run_changes(self, ref: int, shape, n: int) -> "tuple[list, list] | None":
        """``(offsets, timestamps)`` of the run of ``n`` PartitionRecords of
        ``shape`` whose first is ``ref``, read from their framing in one
        call (as :meth:`run_data` reads them); None if the bytes no longer
        match the run."""
        h, buf, start, end, append_ts = self._batch(ref >> REF_POSITION_BITS)
        pos = start + (ref & _POSITION_MASK)
        m = shape.pattern.match(buf, pos, end) if shape.api == 3 else None
        if m is None or m.end() - pos < n * shape.size:
            return None
        _, ts_deltas, deltas, _, _ = shape.read(buf, pos, n)
        base, base_ts = h.base_offset, h.base_timestamp
        times = [append_ts] * n if append_ts is not None else [base_ts + d for d in ts_deltas]
        return [base + d for d in deltas], times

    def value_bytes(self, ref: int) -> bytes:
        """The undecoded value of the record ``ref`` names: two records with
        the same bytes hold the same fields (``diff`` compares partitions of
        two sources this way before decoding any)."""
        buf, vstart, vend = self._value(ref)[1:4]
        return bytes(buf[vstart:vend])

    def run_counts(self, ref: int, shape, n: int) -> "tuple[int, int, tuple] | None":
        """``(replicas, isr, leaders)`` of the run of ``n`` PartitionRecords
        of ``shape`` whose first is ``ref``, read from their bytes
        (:func:`~.summary_counts.run_counts`); None if they must be folded."""
        _, buf, start, _, _ = self._batch(ref >> REF_POSITION_BITS)
        return run_counts(buf, start + (ref & _POSITION_MASK), shape, n)

    def _at(self, ref: int) -> tuple:
        """``(batch, where the record starts in its buffer, ref base)`` for a
        kept run's first ref (the batch as :meth:`_batch` gives it; a record
        of the batch at ``p`` has the ref base + ``p``)."""
        batch = self._batch(ref >> REF_POSITION_BITS)
        pos = batch[2] + (ref & _POSITION_MASK)
        return batch, pos, ref - pos

    def run_refs(self, ref: int, n: int) -> list[int]:
        """The refs of a snapshot's run of ``n`` records kept unread whose
        first is ``ref`` (:mod:`.fast.kept_runs`)."""
        batch, pos, base = self._at(ref)
        return [base + start for start in record_starts(batch[1], pos, n)]

    def config_fields(self, ref: int, n: int) -> tuple:
        """For the run of ``n`` ConfigRecords whose first is ``ref``: ``(ref
        base, batch header, append time)`` (a record's ref is the base plus
        its start; the append time None unless the batch has one) and
        :func:`~.fast.kept_runs.config_fields` of each."""
        (h, buf, _, _, append_ts), pos, base = self._at(ref)
        return base, h, append_ts, config_fields(buf, pos, n)

    def config_values(self, ref: int, n: int, name: bytes) -> "dict | None":
        """:func:`~.fast.kept_runs.config_values` of the run of ``n`` ConfigRecords
        whose first is ``ref``."""
        batch, pos, _ = self._at(ref)
        return config_values(batch[1], pos, n, name)

    def acls_decode(self, ref: int, n: int) -> bool:
        """Whether each of the run of ``n`` AccessControlEntryRecords whose
        first is ``ref`` is known to decode (:func:`~.fast.kept_runs.acls_decode`)."""
        batch, pos, _ = self._at(ref)
        return acls_decode(batch[1], pos, n)

    def runs_counts(self, runs: list) -> "list | None":
        """``(n, replicas, isr, leaders)`` of each of a topic's runs (entries
        ``deferred.PARTITION_RUN``), as :meth:`run_counts` gives
        them; None if one must be folded. One call for all (a mixed
        cluster's topics have a few runs each: -0.03 s `summary` on its
        log dir)."""
        out = []
        batch = self._batch
        for entry in runs:
            ref, shape, pids, _ = run_fields(entry)
            n = len(pids)
            _, buf, start, _, _ = batch(ref >> REF_POSITION_BITS)
            counts = run_counts(buf, start + (ref & _POSITION_MASK), shape, n)
            if counts is None:
                return None
            out.append((n, *counts))
        return out

    def change_counts(self, refs, isr: int, leader: int) -> "tuple[int, int] | None":
        """``(isr, leader)`` after the PartitionChangeRecords ``refs`` (ints)
        applied in turn to a partition with ``isr`` in-sync replicas and
        ``leader``, read from their bytes (:func:`~.partition_change.change_counts`);
        None if they must be folded."""
        for ref in refs:
            if type(ref) is not int:
                return None
            _, buf, vstart, vend = self._value(ref)[:4]
            counts = change_counts(buf, vstart, vend, isr, leader)
            if counts is None:
                return None
            isr, leader = counts
        return isr, leader

    def refs_after(self, offset: int, files) -> "Callable[[int], bool]":
        """A test for whether a ref of one of ``files`` (store file numbers of
        log segments, whose offsets are absolute) names a record with an
        offset above ``offset``. Refs grow in reading order (file, batch,
        position, offset delta), so one batch, the first one to end past
        ``offset``, is the border; refs of earlier files (a snapshot) are
        never after it. Within the border batch a record's offset delta is
        read from its framing."""
        border = self._border(offset, files)
        if border is None:
            return lambda ref: False
        file_no, batch_no, base = border
        first = ((file_no << REF_BATCH_BITS) | batch_no) << REF_POSITION_BITS   # the border batch's first ref
        last = first + (1 << REF_POSITION_BITS) - 1
        within = offset - base              # its records with a larger delta are after

        def after(ref: int) -> bool:
            return ref > last or (ref >= first and self._value(ref)[4] > within)
        return after

    def records_after(self, offset: int, files) -> Iterator[Record]:
        """The records of ``files`` (as for :meth:`refs_after`) with offsets
        above ``offset``, read again, lazily, from the first batch that ends
        past it: what a replay applied after that point."""
        border = self._border(offset, files)
        if border is None:
            return
        for file_no in sorted(f for f in files if f >= border[0]):
            reader = self._readers[file_no]
            start = reader.batch_positions[border[1]] if file_no == border[0] else 0
            tail = FileReader(reader.path, buf=memoryview(reader.buf)[start:], lazy=True,
                              skip_damage=True)
            for batch in tail:
                for rec in batch.records:
                    if rec.offset > offset:
                        yield rec

    def offset_before_time(self, time: int, files) -> "int | None":
        """The last offset a replay of ``files`` (as for :meth:`refs_after`)
        applies when it stops at ``time`` (as ``until_time`` does: before the
        first batch appended after it); None if no batch read was."""
        for file_no in sorted(files):
            reader = self._readers[file_no]
            buf = reader.buf
            for pos in reader.batch_positions:
                h = HEADER.unpack_from(buf, pos)
                if h[8] > time:   # max timestamp
                    return h[0] - 1
        return None

    def _border(self, offset: int, files) -> "tuple[int, int, int] | None":
        """(file, batch number, base offset) of the first batch of ``files``
        whose last offset is above ``offset``; None if there is none."""
        for file_no in sorted(files):
            reader = self._readers[file_no]
            positions = reader.batch_positions
            lo, hi = 0, len(positions)
            while lo < hi:
                mid = (lo + hi) // 2
                h = HEADER.unpack_from(reader.buf, positions[mid])
                if h[0] + h[6] > offset:   # base offset + last offset delta
                    hi = mid
                else:
                    lo = mid + 1
            if lo < len(positions):
                return file_no, lo, HEADER.unpack_from(reader.buf, positions[lo])[0]
        return None

    def _value(self, ref: int) -> tuple:
        """(batch header, buffer, value start, value end, offset delta,
        timestamp, attributes) of ``ref``'s record."""
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
        return (h, buf, vstart, vstart + vlen, offset_delta,
                h.base_timestamp + ts_delta if append_ts is None else append_ts, attributes)

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
