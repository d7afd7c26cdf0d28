"""The records and batches of the metadata log as they are in its files.

What ``log`` shows (and ``kafka-dump-log --cluster-metadata-decoder``
before it): every batch of every file in file order, each record with the
offset written in it (a snapshot's offsets are its own, from 0), damaged
batches listed where they are instead of skipped. Replay never runs here:
nothing is merged, dropped or reordered.

:class:`LogWalk` walks one file: :class:`BatchScanner` with the CRC left to
it (a batch whose CRC does not match is still framed, and listed with
``crc_valid`` false), records decoded by :class:`FileReader` as they are
read (every one is printed: eager decoding takes a topic's partitions in
one pass, 2x faster than one lazy record at a time), batches outside the
offset or time window passed over unread. Memory is one batch at a time.

A controller's log is mostly small batches (a topic created, a few
partition changes, a NoOpRecord), where the reader's setup per batch costs
more than its records: :func:`quick_records` reads the records of a plain
batch (uncompressed data, every record framed as Kafka writes it and taken
whole by its compiled decoder) into :class:`LogRecord` s in one short
loop, and anything else, or any doubt, goes to the reader (which then says
what is wrong). With it, and the lines made a batch at a time (``log``'s
formats), ``log`` of the bench's ``log-mixed`` segment (1 M records in
210,000 batches) takes 5.0 s of CPU instead of 7.9 s, the load not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import CorruptDataError
from ..kraft.batch import (ATTR_CODEC, ATTR_CONTROL, CRC_START, HEADER_SIZE, BatchHeader,
                           BatchScanner, crc32c)
from ..kraft.primitives import ZIGZAG1, ZIGZAG2
from ..kraft.records import DECODE_ERRORS, METADATA, RESOLVED
from .inputs import LoadPlan
from .file_kind import not_kafka_file
from .reader import FileReader


@dataclass(frozen=True)
class LogWindow:
    """The records asked for: offsets and record times, both ends inclusive,
    None for open."""

    from_offset: "int | None" = None
    to_offset: "int | None" = None
    from_time: "int | None" = None
    to_time: "int | None" = None

    def holds_batch(self, h: BatchHeader) -> bool:
        """Whether any record of ``h`` may be in the window (its offsets and
        times lie between its base and last, its first and max timestamps)."""
        return not ((self.from_offset is not None and h.last_offset < self.from_offset)
                    or (self.to_offset is not None and h.base_offset > self.to_offset)
                    or (self.from_time is not None and h.max_timestamp < self.from_time)
                    or (self.to_time is not None and min(h.base_timestamp, h.max_timestamp)
                        > self.to_time))

    def holds(self, offset: int, timestamp: int) -> bool:
        return not ((self.from_offset is not None and offset < self.from_offset)
                    or (self.to_offset is not None and offset > self.to_offset)
                    or (self.from_time is not None and timestamp < self.from_time)
                    or (self.to_time is not None and timestamp > self.to_time))

    @property
    def everything(self) -> bool:
        return self == _EVERYTHING


_EVERYTHING = LogWindow()


class LogRecord:
    """A data record as ``log`` reads it (:func:`quick_records`): what
    ``log`` shows of a :class:`~metashell.kraft.records.Record`, decoded.

    Why a second shape: ``log`` formats both (``commands/log_format``) by
    the attributes they share, ``offset``, ``timestamp``, ``epoch``,
    ``kind``, ``name``, ``api_key``, ``version``, ``data`` and ``error``,
    and this one holds nothing else: no buffer, position or lazy decoding,
    as a record read, shown and dropped needs none. Records the quick
    reader does not take come from the reader as ``Record``s."""

    __slots__ = ("offset", "timestamp", "epoch", "name", "api_key", "version", "data")
    kind = METADATA
    error = None

    def __init__(self, offset, timestamp, epoch, name, api_key, version, data):
        self.offset = offset
        self.timestamp = timestamp
        self.epoch = epoch
        self.name = name
        self.api_key = api_key
        self.version = version
        self.data = data


def quick_records(buf, h: BatchHeader) -> "list | None":
    """The records of the plain data batch ``h`` of ``buf`` (see the module
    docstring), or None when the batch is not plain: compressed, control,
    framing wider than a controller's small batches need (a length or value
    length past 8 KiB, a timestamp delta past 63 ms, an offset delta past
    8,191), a record with a key or headers, frame version 0 or a body its
    compiled decoder does not take whole, or damage. The reader reads those."""
    if h.attributes & (ATTR_CODEC | ATTR_CONTROL):
        return None
    pos = h.position + HEADER_SIZE
    end = h.position + 12 + h.length
    base, base_ts, epoch = h.base_offset, h.base_timestamp, h.epoch
    append_ts = h.max_timestamp if h.log_append_time else None
    get, out, z1, z2 = RESOLVED.get, [], ZIGZAG1, ZIGZAG2
    add = out.append
    try:
        for _ in range(h.count):
            # the framing (kraft.framing.frame) inline, for its narrow varints only
            b = buf[pos]
            if b < 0x80:
                rend = pos + 1 + z1[b]
                p = pos + 2          # past the attributes
            else:
                c = buf[pos + 1]
                if c >= 0x80:
                    return None
                rend = pos + 2 + z2[b][c]
                p = pos + 3
            if rend > end:
                return None
            b = buf[p]
            if b >= 0x80:
                return None
            ts_delta = z1[b]
            b = buf[p + 1]
            if b < 0x80:
                offset_delta = z1[b]
                p += 2
            else:
                c = buf[p + 2]
                if c >= 0x80:
                    return None
                offset_delta = z2[b][c]
                p += 3
            if buf[p] != 1:          # a key (null: varint -1)
                return None
            b = buf[p + 1]
            if b < 0x80:
                vlen, vstart = z1[b], p + 2
            else:
                c = buf[p + 2]
                if c >= 0x80:
                    return None
                vlen, vstart = z2[b][c], p + 3
            if vlen < 3 or vstart + vlen + 1 != rend or buf[rend - 1] or buf[vstart] != 1:
                return None          # headers, a null or short value, frame version 0
            api, version = buf[vstart + 1], buf[vstart + 2]
            hit = get((1, api, version))
            if hit is None:
                return None
            data, p = hit[1](buf[vstart:vstart + vlen], 3, vlen)
            if p != vlen:
                return None
            add(LogRecord(base + offset_delta, base_ts + ts_delta if append_ts is None else append_ts,
                          epoch, hit[0].name, api, version, data))
            pos = rend
    except DECODE_ERRORS:
        return None
    return out if pos == end else None


@dataclass(frozen=True)
class Fetched:
    """Batches fetched from a live quorum, as ``log`` reads them: whole
    batches in log order (a snapshot, or the log after it), named by
    ``name`` where a file would be named by its path."""

    name: str
    data: bytes


@dataclass(slots=True)
class LogBatch:
    """One batch of a file as written: its header (None when even its
    framing is damaged), whether its CRC-32C matches, its records (lazy
    :class:`~.records.Record` s, empty when not read) and what is wrong
    with it, if anything."""

    file: Path
    position: int
    header: "BatchHeader | None"
    crc_valid: bool
    records: list
    damage: "CorruptDataError | None" = None
    header_bytes: bytes = b""   # the header as written (batch listings)


class LogWalk:
    """The batches of one file in order (see the module docstring). After
    iteration, ``notes`` says how the data ended when that is worth a word
    (a torn last batch, zero padding)."""

    def __init__(self, path, window: LogWindow = _EVERYTHING, *, records: bool = True,
                 shortcuts=None):
        """``path``: a file, or :class:`Fetched` batches of a live quorum;
        ``shortcuts``: the reader's (``FileReader``'s option), and with them
        a plain batch is read by :func:`quick_records`; without them (under
        ``METASHELL_FAST_PATH=0``) every batch goes through the reader."""
        if isinstance(path, Fetched):
            self.reader = FileReader(path.name, skip_damage=True, buf=path.data, shortcuts=shortcuts)
            self.path = path.name
        else:
            self.reader = FileReader(path, skip_damage=True, shortcuts=shortcuts)
            self.path = self.reader.path
        self.window = window
        self.read_records = records
        self.everything = window.everything
        self.quick = self.reader.shortcuts is not None
        self.notes: list[str] = []

    def __iter__(self) -> Iterator[LogBatch]:
        reader, window = self.reader, self.window
        buf = reader.buf
        foreign = not_kafka_file(buf, self.path) if reader._from_file else None
        if foreign is not None:
            raise foreign
        view = memoryview(buf) if len(buf) else b""
        scanner = BatchScanner(buf, self.path, verify_crc=False, skip=True)
        problems = scanner.problems
        told = 0
        everything, path = self.everything, self.path
        quick = self.quick and self.read_records and everything
        for h in scanner:
            while told < len(problems):          # damage found before this batch
                yield self._damaged(problems[told])
                told += 1
            if not everything and not window.holds_batch(h):
                if window.to_offset is not None and h.base_offset > window.to_offset:
                    break                            # offsets only grow within a file
                continue
            position = h.position
            valid = crc32c(view[position + CRC_START:position + 12 + h.length]) == h.crc
            if valid and quick:                  # the common case, _read inline
                records = quick_records(buf, h)
                if records is not None:
                    yield LogBatch(path, position, h, True, records)
                    continue
            if not valid:
                yield LogBatch(self.path, h.position, h, False, [], CorruptDataError(
                    self.path, h.position, f"batch CRC-32C {h.crc:#010x}, computed "
                    f"{crc32c(view[h.position + CRC_START:h.end]):#010x}", h.base_offset),
                    self._header_bytes(h))
                continue
            yield self._read(h)
        while told < len(problems):
            yield self._damaged(problems[told])
            told += 1
        reader.summary.end_reason = scanner.end_reason or "end"
        reader.summary.end_position = scanner.end_position
        self.notes = reader.summary.notes()

    def _read(self, h: BatchHeader) -> LogBatch:
        if not self.read_records:
            return LogBatch(self.path, h.position, h, True, [], None, self._header_bytes(h))
        records = quick_records(self.reader.buf, h) if self.quick else None
        if records is None:
            try:
                records = self.reader.records_of(h)
            except CorruptDataError as err:
                return LogBatch(self.path, h.position, h, True, [], err)
        if not self.everything:
            holds = self.window.holds
            records = [r for r in records if holds(r.offset, r.timestamp)]
        return LogBatch(self.path, h.position, h, True, records)

    def _header_bytes(self, h: BatchHeader) -> bytes:
        return bytes(self.reader.buf[h.position:h.position + HEADER_SIZE])

    def _damaged(self, err: CorruptDataError) -> LogBatch:
        return LogBatch(self.path, err.position, None, False, [], err)


@dataclass(frozen=True)
class Extent:
    """The first and last record of some files, by offset and by time
    (batch append times: the oldest base and the newest max timestamp)."""

    first_offset: int
    last_offset: int
    first_time: int
    last_time: int


def extent(files) -> "Extent | None":
    """Where the records of ``files`` (paths or :class:`Fetched`) begin and
    end, from their batch headers (None: no batch). For ``log`` to say why
    a window showed nothing: read only then, so the walk itself stays as
    it is."""
    found = None
    for path in files:
        for batch in LogWalk(path, records=False):
            h = batch.header
            if h is None:
                continue
            here = Extent(h.base_offset, h.last_offset, min(h.base_timestamp, h.max_timestamp),
                          h.max_timestamp)
            found = here if found is None else Extent(
                min(found.first_offset, here.first_offset), max(found.last_offset, here.last_offset),
                min(found.first_time, here.first_time), max(found.last_time, here.last_time))
    return found


def log_files(plan: LoadPlan, snapshots: bool = False) -> list[Path]:
    """The files ``log`` reads from a load plan: a lone file itself; for a
    log dir every segment in offset order, after (with ``snapshots``) its
    ``bootstrap.checkpoint`` and every snapshot, oldest first."""
    if plan.kind not in ("logdir", "partition-dir"):
        return list(plan.files)
    out: list[Path] = []
    if snapshots:
        if plan.bootstrap is not None:
            out.append(plan.bootstrap)
        out += [s.path for s in sorted(plan.snapshot_candidates,
                                       key=lambda s: (s.end_offset, s.epoch))
                if not s.bootstrap]
    return out + [s.path for s in plan.all_segments]
