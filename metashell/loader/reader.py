"""Reading one file: batches of decoded records.

``read_file`` maps the file read-only (nothing is ever written, created or
locked next to it), walks its batches with :class:`BatchScanner`, inflates
compressed payloads and parses the records of each batch (kraft-format.md
section 3). The per-record loop below is the decoder's hot path: varints
are read inline for their common one-byte form.
"""

from __future__ import annotations

import errno
import gc
import mmap
import os

from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from ..errors import CorruptDataError, InputError, MetashellError, RecordDecodeError
from .file_kind import not_kafka_file
from ..kraft import catalog
from ..kraft.batch import HEADER, HEADER_SIZE, LOG_OVERHEAD, BatchHeader, BatchScanner
from ..kraft.compression import decompress
from ..kraft.framing import frame, headers
from ..kraft.primitives import INT16
from ..kraft.records import CONTROL, DECODE_ERRORS, METADATA, RESOLVED, Record, fill_metadata


@dataclass(slots=True)
class Batch:
    """A batch header and its records.

    From a reader opened with ``defer`` (see :class:`FileReader`), ``records``
    may also hold *deferred entries* (:mod:`metashell.fast.deferred`: a TopicRecord, a
    partition record, a run of a topic's partitions framed alike, a run of a
    snapshot's records ``ls`` does not need), each naming its records by
    refs into its :class:`~metashell.fast.store.RecordStore`. Consecutive
    batches of one NoOpRecord each (a controller's heartbeats,
    :mod:`metashell.fast.noop_runs`) come as one batch whose header spans them and
    whose ``records`` is a :class:`~metashell.fast.noop_runs.NoOpRun`; a batch of
    nothing but PartitionChangeRecords of shapes seen before, a
    :class:`~metashell.fast.change_batches.ChangeBatch`, unread; a log's consecutive
    small batches (one CreateTopics, one change or one heartbeat each) as
    one batch spanning them, whose ``records`` is a
    :class:`~metashell.fast.batch_runs.BatchRun`.
    """

    header: BatchHeader
    records: list
    file_no: int = -1   # the reader's number in its RecordStore, -1 if none

    @property
    def is_control(self) -> bool:
        return self.header.is_control

    @property
    def base_offset(self) -> int:
        return self.header.base_offset

    @property
    def last_offset(self) -> int:
        return self.header.last_offset

    @property
    def append_time(self) -> int:
        return self.header.max_timestamp

    @property
    def epoch(self) -> int:
        return self.header.epoch


@dataclass
class FileSummary:
    """What reading a file found besides records: how it ended and what was skipped."""

    path: str
    size: int
    end_reason: str = "end"
    end_position: int = 0
    problems: list[CorruptDataError] = field(default_factory=list)

    def notes(self) -> list[str]:
        """One-line, human notes about the end of the data."""
        out = []
        if self.end_reason == "torn":
            out.append(f"{self.path} (byte {self.end_position}): the last batch is incomplete "
                       f"({self.size - self.end_position} bytes, a partly written batch); "
                       "treated as the end of the data")
        elif self.end_reason == "zeros":
            out.append(f"{self.path} (byte {self.end_position}): zero padding to the end of the "
                       "file; treated as the end of the data")
        elif self.end_reason == "tail":
            out.append(f"{self.path} (byte {self.end_position}): {self.size - self.end_position} "
                       "trailing bytes too short to be a batch; ignored")
        return out


class Shortcuts(Protocol):
    """What a reader asks its fast path (the one door between them; the
    fast path's side is ``metashell.fast.reading.FastReading``). Each
    method takes what its shapes hold and hands the rest back to the
    general path; a reader without shortcuts never calls them.

    The reader holds its shortcuts, never the other way round: a method
    that calls back into the reader is given it with each call. A
    reference from the shortcuts to the reader would be a cycle that only
    a full collection frees (loading leaves its objects in the oldest
    generation, :mod:`metashell.gcpause`), keeping the file's map, and its
    descriptor, open long after the reader is dropped."""

    def batch(self, reader: "FileReader", header: BatchHeader, scanner: BatchScanner) -> "Batch | None":
        """Batch ``header`` (of ``reader``, a deferring one), with the batches
        after it that a shortcut takes together, as one :class:`Batch` (the
        scanner resumes after them); None to read it as any batch."""

    def records(self, reader: "FileReader", h: BatchHeader, buf, pos: int, end: int, refs: int,
                out: list) -> int:
        """Data batch ``h``'s records (of ``reader``) from ``buf[pos:end]`` into ``out``,
        deferred entries where a shortcut holds (``refs``: a ref less its
        position in ``buf``), :meth:`FileReader.general_records` for the
        rest; where they end."""

    def eager_run(self, last, h: BatchHeader, buf, at: int, vstart: int, vlen: int, rend: int,
                  pos: int, end: int, limit: int, hit: tuple, out: list) -> tuple:
        """After the topic or partition record at ``at`` (its value at
        ``vstart``, ending at ``rend``; ``hit``: its (spec, decoder)), the
        records at ``pos`` framed as one run decoded into ``out``, at most
        ``limit``: ``(where they end, how many, the run for the next call)``
        (``last``: the previous call's)."""


class FileReader:
    """Iterates the :class:`Batch` es of one file.

    ``skip_damage``: skip a damaged batch (recorded in ``summary.problems``)
    instead of raising :class:`CorruptDataError`. ``lazy``: decode metadata
    bodies only when ``record.data`` is used. ``frame_hint``: the frame
    version of the file's data records, when known, to pick the 2.8
    LeaderChangeMessage layout.

    ``defer``: the reader's number in a
    :class:`~metashell.fast.store.RecordStore` (which passes it). The
    PartitionRecords and PartitionChangeRecords of data batches are then
    not made into :class:`Record` objects at all: each becomes a small
    tuple (see :class:`Batch`) whose ``ref`` the store turns back into a
    record when it is needed. A million-partition snapshot loads without a
    million objects; ``batch_positions`` lists where each batch starts, for
    the store.

    ``shortcuts``: the plug-in point of the fast path, a callable making
    this reader's :class:`Shortcuts` (``metashell.fast.reading.shortcuts``,
    which gives None under ``METASHELL_FAST_PATH=0``). Without them nothing
    is deferred and no shortcut is taken: every record is a :class:`Record`
    read through the general path, and no code of the fast path runs.

    ``buf``: read these bytes instead of mapping ``path`` (records fetched
    from a live quorum); ``path`` then only names them in messages.
    """

    def __init__(self, path, *, verify_crc: bool = True, skip_damage: bool = False,
                 lazy: bool = False, defer: int | None = None, buf=None,
                 shortcuts: "Callable[[FileReader], Shortcuts | None] | None" = None):
        self.path = Path(path)
        self.verify_crc = verify_crc
        self.skip_damage = skip_damage
        self.lazy = lazy
        self.defer = defer
        self.buf = _map(self.path) if buf is None else buf
        self._from_file = buf is None
        self.summary = FileSummary(str(self.path), len(self.buf))
        self.batch_positions = array("q")
        self._saw_frame0 = False
        self.shortcuts = None if shortcuts is None else shortcuts(self)

    def __iter__(self):
        foreign = not_kafka_file(self.buf, self.path) if self._from_file else None
        if foreign is not None:
            if not self.skip_damage:
                raise foreign
            self.summary.problems = [foreign]   # nothing in it can be read
            return
        scanner = BatchScanner(self.buf, self.path, verify_crc=self.verify_crc,
                               skip=self.skip_damage)
        try:
            file_no = -1 if self.defer is None else self.defer
            # a deferring reader's shortcuts may take a batch, or several, whole
            shortcut = None if self.defer is None or self.shortcuts is None else self.shortcuts.batch
            for header in scanner:
                if shortcut is not None:
                    taken = shortcut(self, header, scanner)
                    if taken is not None:
                        yield taken
                        continue
                try:
                    records = self._records(header)
                except CorruptDataError as err:
                    if not self.skip_damage:
                        raise
                    scanner.problems.append(err)
                    continue
                yield Batch(header, records, file_no)
        finally:
            self.summary.end_reason = scanner.end_reason or "end"
            self.summary.end_position = scanner.end_position
            self.summary.problems = scanner.problems

    # -- records of one batch ------------------------------------------------------

    def ref_base_of(self, h: BatchHeader) -> int | None:
        """List the batch's position (deferring reader); the ref of its
        records section's first byte, None if its refs would not fit."""
        batch_no = len(self.batch_positions)
        self.batch_positions.append(h.position)
        if batch_no < REF_MAX_BATCHES and h.length < REF_MAX_POSITION:
            return ((self.defer << REF_BATCH_BITS) | batch_no) << REF_POSITION_BITS
        return None

    def _records(self, h: BatchHeader) -> list:
        return self.read_batch(h, None if self.defer is None else self.ref_base_of(h))

    def records_of(self, h: BatchHeader) -> list:
        """The records of batch ``h`` of this file, read on their own (a
        walk of the batches that chooses which to read: ``log``); raises
        :class:`CorruptDataError` when they do not parse."""
        return self.read_batch(h, None)

    def read_batch(self, h: BatchHeader, ref_base: int | None) -> list:
        """The records of batch ``h`` (deferred with refs from ``ref_base``, if not None)."""
        buf = self.buf
        pos = h.position + HEADER_SIZE
        end = h.position + LOG_OVERHEAD + h.length
        if h.codec:
            try:
                buf = decompress(h.codec, bytes(buf[pos:end]))
            except ValueError as e:
                raise CorruptDataError(self.path, h.position, f"a valid compressed payload ({e})",
                                       h.base_offset) from None
            pos, end = 0, len(buf)
            if len(buf) >= REF_MAX_POSITION:
                ref_base = None
        # The cyclic GC is paused while one batch is parsed. A batch makes
        # thousands of containers (records, dicts, lists) that all stay alive,
        # so every young collection during the parse would traverse them and
        # promote them, and the older generations' collections traverse them
        # again: that was a third of the time of full decoding. Nothing
        # parsed here can form a cycle. Afterwards, freeze + unfreeze (two
        # list splices, unless someone else uses gc.freeze) moves the batch's
        # objects straight to the oldest generation, so that the young
        # collection the next allocation would trigger does not walk them.
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            return self._parse(h, buf, pos, end, ref_base=ref_base)
        except (IndexError, RecordDecodeError, UnicodeDecodeError) as e:
            raise CorruptDataError(self.path, h.position,
                                   f"well-formed records in the batch ({_why(e)})", h.base_offset) from None
        finally:
            if paused:
                if gc.get_freeze_count() == 0:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()

    def batch_at(self, pos: int, batch_no: int) -> Batch:
        """The batch at ``pos`` of a :class:`~metashell.fast.batch_runs.BatchRun`,
        read again as any batch (it is number ``batch_no`` in the list of
        positions already)."""
        h = BatchHeader(*HEADER.unpack_from(self.buf, pos), pos)
        return Batch(h, self.read_batch(h, ((self.defer << REF_BATCH_BITS) | batch_no) << REF_POSITION_BITS),
                     self.defer)

    def batch_of(self, h: BatchHeader) -> Batch:
        """One batch of a :class:`~metashell.fast.noop_runs.NoOpRun`, read again (its
        position is already listed)."""
        return Batch(h, self._parse(h, self.buf, h.position + HEADER_SIZE, h.end),
                     -1 if self.defer is None else self.defer)

    def _parse(self, h: BatchHeader, buf, pos: int, end: int, ref_base: int | None = None) -> list:
        """The records of batch ``h``, whose record section is ``buf[pos:end]``.

        With ``ref_base`` (a deferring reader's data batch) the shortcuts,
        if any, take what they can (:meth:`Shortcuts.records`), as deferred
        entries whose refs count from ``ref_base``; otherwise every record is
        a :class:`Record` (:meth:`general_records`). Raises
        :class:`RecordDecodeError` when the records do not fill the section."""
        out = []
        if ref_base is not None and not h.is_control and self.shortcuts is not None:
            pos = self.shortcuts.records(self, h, buf, pos, end, ref_base - pos, out)
        else:
            pos = self.general_records(h, buf, pos, end, pos, h.count, out)
        if pos != end:
            raise RecordDecodeError(f"{end - pos} byte(s) left after the {h.count} records the batch declares")
        return out

    # -- the general path: every record a Record ------------------------------------

    def general_records(self, h: BatchHeader, buf, pos: int, end: int, payload: int, count: int,
                      out: list) -> int:
        """The general path: ``count`` records from ``buf[pos:]`` (of a record
        section from ``payload`` to ``end``) into ``out`` as :class:`Record` s;
        where they end. A data record as Kafka writes them goes by one lookup
        to its compiled decoder (or is kept for later, ``lazy``), anything
        else by :meth:`_other_record`; with shortcuts a topic's partitions
        framed alike are decoded as one run (:meth:`Shortcuts.eager_run`)."""
        base, base_ts, epoch, bpos = h.base_offset, h.base_timestamp, h.epoch, h.position
        append_ts = h.max_timestamp if h.log_append_time else None
        control, lazy, resolved = h.is_control, self.lazy, RESOLVED
        runs = None if lazy or self.shortcuts is None else self.shortcuts.eager_run
        last = None   # the last run the shortcuts decoded (theirs to read)
        i = 0
        while i < count:
            at = pos
            rend, attributes, ts_delta, offset_delta, _, klen, vstart, vlen, hpos = frame(buf, pos, end, payload)
            pos = rend
            i += 1
            hit = None
            if not control and klen < 0 and vlen >= 3 and (
                    hpos + 1 == rend and buf[hpos] == 0 or not headers(buf, hpos, rend, at, payload)):
                fv, api, version = buf[vstart], buf[vstart + 1], buf[vstart + 2]
                hit = resolved.get((fv, api, version))
            if hit is None:
                out.append(self._other_record(h, buf, at, end, payload))
                continue
            spec, decoder = hit
            ts = base_ts + ts_delta if append_ts is None else append_ts
            if lazy:
                rec = Record(base + offset_delta, ts, epoch, METADATA, spec.name, api, version, None, bpos)
                rec._buf = buf
                rec._vstart = vstart
                rec._body = vstart + 3
                rec._end = vstart + vlen
            else:
                try:   # the value on its own: positions in it are small ints, added without allocating
                    data, p = decoder(buf[vstart:vstart + vlen], 3, vlen)
                except DECODE_ERRORS:
                    p = -1
                if p != vlen:   # the general reading says why
                    out.append(self._other_record(h, buf, at, end, payload))
                    continue
                rec = Record(base + offset_delta, ts, epoch, METADATA, spec.name, api, version, data, bpos)
            rec._spec = spec
            if attributes:
                rec.attributes = attributes
            if fv == 0:
                rec.frame = 0
                self._saw_frame0 = True
            out.append(rec)
            if runs is not None and i < count and (api == 2 or api == 3 or api == 5):
                pos, n, last = runs(last, h, buf, at, vstart, vlen, rend, pos, end, count - i, hit, out)
                i += n
        return pos

    def _other_record(self, h: BatchHeader, buf, at: int, end: int, payload: int) -> Record:
        """The record at ``buf[at:]`` read field by field: a control record, a
        record with a key, headers or a null value, a metadata record the
        catalog does not know or whose body its decoder does not take whole
        (the record then says why it is undecodable)."""
        rend, attributes, ts_delta, offset_delta, kpos, klen, vstart, vlen, hpos = frame(
            buf, at, end, payload)
        hdrs = () if hpos + 1 == rend and buf[hpos] == 0 else headers(buf, hpos, rend, at, payload)
        ts = h.max_timestamp if h.log_append_time else h.base_timestamp + ts_delta
        rec = Record(h.base_offset + offset_delta, ts, h.epoch, METADATA, "", None, None, None, h.position)
        if attributes:
            rec.attributes = attributes
        if hdrs:
            rec.headers = hdrs
        key = None if klen < 0 else bytes(buf[kpos:kpos + klen])
        if h.is_control:
            rec.key = key
            self._control(rec, key, buf, vstart, vstart + max(vlen, 0), vlen)
            return rec
        if key is not None:
            rec.key = key
        if vlen < 0:
            rec.name = "UnknownRecord"
            rec.make_undecodable("data record has a null value")
        else:
            fill_metadata(rec, buf, vstart, vstart + vlen, self.lazy)
            if rec.frame == 0:
                self._saw_frame0 = True
        return rec

    def _control(self, rec: Record, key, buf, vstart: int, vend: int, vlen: int) -> None:
        rec.kind = CONTROL
        rec.version = 0
        if key is None or len(key) < 4:
            rec.name = "UnknownControlRecord"
            rec._raw = bytes(buf[vstart:vend])
            rec.make_undecodable("control record key shorter than 4 bytes")
            return
        key_version, ctype = INT16.unpack_from(key, 0)[0], INT16.unpack_from(key, 2)[0]
        rec.api_key = ctype
        spec = catalog.CONTROL.get(ctype)
        if key_version < 0 or spec is None or vlen < 0:
            rec.name = f"ControlRecord({catalog.CONTROL_NAMES.get(ctype, ctype)})"
            rec._raw = bytes(buf[vstart:vend]) if vlen > 0 else b""
            rec.make_undecodable("negative control key version" if key_version < 0 else
                                 "null control value" if vlen < 0 else f"unknown control record type {ctype}")
            return
        rec.name = spec.name
        candidates = [spec]
        if ctype == 2:  # LeaderChangeMessage: 2.8 wrote it without the leading Version field
            alt = catalog.LEADER_CHANGE_2_8
            candidates = [alt, spec] if self._saw_frame0 else [spec, alt]
        reason = None
        for cand in candidates:
            try:
                rec._data, _ = cand.decode(0, buf, vstart, vend)
                rec._spec = cand
                rec.layout = cand.layout
                return
            except RecordDecodeError as e:
                reason = reason or str(e)
        rec._raw = bytes(buf[vstart:vend])
        rec.make_undecodable(reason)


# A deferred record's ref, from the high bits down: the file's number in its
# store, the batch's number in its file (28 bits), where the record starts in
# the batch's record section (32 bits). Python ints have no upper bound, so
# the file number has none; a record in a batch that does not fit the other
# fields is simply not deferred. The store reads the record's framing again,
# so the ref holds nothing else, and any record can be deferred wherever it
# sits in its batch.
REF_POSITION_BITS = 32
REF_BATCH_BITS = 28
REF_MAX_POSITION = 1 << REF_POSITION_BITS
REF_MAX_BATCHES = 1 << REF_BATCH_BITS


def _why(e: Exception) -> str:
    if isinstance(e, IndexError):
        return "a record runs past the end of the batch"
    return str(e)


def _map(path: Path):
    """Map a file read-only; an empty file maps to ``b""``."""
    try:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return b""
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise InputError.unreadable(path, e) from None


def snapshot_timestamp(path: Path) -> int | None:
    """The append time of the last record a snapshot contains (its header
    says), or None."""
    try:
        for batch in FileReader(path):
            for rec in batch.records:
                if rec.name == "SnapshotHeaderRecord" and rec.data is not None:
                    return rec.data["lastContainedLogTimestamp"]
            return None
    except MetashellError:
        return None
    return None


def read_file(path, **options):
    """Iterate the batches of one file (see :class:`FileReader` for options)."""
    return FileReader(path, **options)


def read_records(path, **options):
    """Every record of one file, in order (convenience for tools and tests)."""
    for batch in FileReader(path, **options):
        yield from batch.records
