"""Reading one file: batches of decoded records.

``read_file`` maps the file read-only (nothing is ever written, created or
locked next to it), walks its batches with :class:`BatchScanner`, inflates
compressed payloads and parses the records of each batch (kraft-format.md
section 3). The per-record loop below is the decoder's hot path: varints
are read inline for their common one-byte form.
"""

from __future__ import annotations

import gc
import mmap
import os
import struct
from array import array
from dataclasses import dataclass, field
from itertools import islice, repeat
from pathlib import Path

from ..errors import CorruptDataError, InputError, RecordDecodeError
from . import catalog
from .batch import HEADER_SIZE, LOG_OVERHEAD, BatchHeader, BatchScanner
from .compression import decompress
from .primitives import INT16, ZIGZAG1, ZIGZAG2, read_varint, read_varlong
from .records import CONTROL, METADATA, RESOLVED, Record, fill_metadata
from .runs import PartitionRun, run_after


@dataclass(slots=True)
class Batch:
    """A batch header and its records.

    From a reader opened with ``defer`` (see :class:`FileReader`), ``records``
    may also hold *deferred partition records*: tuples ``(ref, apiKey,
    partitionId, raw 16-byte topic id)``, where ``ref`` names the record in
    its :class:`~metashell.loader.store.RecordStore`.
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


class FileReader:
    """Iterates the :class:`Batch` es of one file.

    ``skip_damage``: skip a damaged batch (recorded in ``summary.problems``)
    instead of raising :class:`CorruptDataError`. ``lazy``: decode metadata
    bodies only when ``record.data`` is used. ``frame_hint``: the frame
    version of the file's data records, when known, to pick the 2.8
    LeaderChangeMessage layout.

    ``defer``: the reader's number in a
    :class:`~metashell.loader.store.RecordStore` (which passes it). The
    PartitionRecords and PartitionChangeRecords of data batches are then
    not made into :class:`Record` objects at all: each becomes a small
    tuple (see :class:`Batch`) whose ``ref`` the store turns back into a
    record when it is needed. A million-partition snapshot loads without a
    million objects; ``batch_positions`` lists where each batch starts, for
    the store.

    ``buf``: read these bytes instead of mapping ``path`` (records fetched
    from a live quorum); ``path`` then only names them in messages.
    """

    def __init__(self, path, *, verify_crc: bool = True, skip_damage: bool = False,
                 lazy: bool = False, defer: int | None = None, buf=None):
        self.path = Path(path)
        self.verify_crc = verify_crc
        self.skip_damage = skip_damage
        self.lazy = lazy
        self.defer = defer
        self.buf = _map(self.path) if buf is None else buf
        self.summary = FileSummary(str(self.path), len(self.buf))
        self.batch_positions = array("q")
        self._saw_frame0 = False
        self._runs: dict = {}   # run shapes of partition records (loader/runs.py)

    def __iter__(self):
        scanner = BatchScanner(self.buf, self.path, verify_crc=self.verify_crc,
                               skip=self.skip_damage)
        try:
            file_no = -1 if self.defer is None else self.defer
            for header in scanner:
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

    def _records(self, h: BatchHeader) -> list:
        buf = self.buf
        pos = h.position + HEADER_SIZE
        end = h.position + LOG_OVERHEAD + h.length
        ref_base = None
        if self.defer is not None:
            batch_no = len(self.batch_positions)
            self.batch_positions.append(h.position)
            if batch_no < REF_MAX_BATCHES and h.length < REF_MAX_POSITION:
                ref_base = ((self.defer << REF_BATCH_BITS) | batch_no) << (REF_POSITION_BITS
                                                                         + REF_DELTA_BITS)
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

    def record_at(self, h: BatchHeader, buf, start: int, pos: int, end: int, *,
                  lazy: bool = False) -> Record:
        """The one record at ``buf[pos:]`` of the batch ``h`` whose record
        section is ``buf[start:end]`` (how an index decodes the records it is
        asked for)."""
        try:
            length, p = read_varint(buf, pos)
            if length < 6 or p + length > end:
                raise RecordDecodeError(f"record at payload byte {pos - start} declares length {length}")
            return self._parse(h, buf, pos, p + length, count=1, lazy=lazy, start=start)[0]
        except (IndexError, RecordDecodeError, UnicodeDecodeError) as e:
            raise CorruptDataError(self.path, h.position,
                                   f"well-formed records in the batch ({_why(e)})", h.base_offset) from None

    def _parse(self, h: BatchHeader, buf, pos: int, end: int, *, count: int | None = None,
               lazy: bool | None = None, ref_base: int | None = None,
               start: int | None = None) -> list:
        base, base_ts, epoch, bpos = h.base_offset, h.base_timestamp, h.epoch, h.position
        append_ts = h.max_timestamp if h.log_append_time else None
        control = h.is_control
        if lazy is None:
            lazy = self.lazy
        out = []
        payload = pos if start is None else start
        zigzag1, zigzag2 = ZIGZAG1, ZIGZAG2
        # Fast path for the data records Kafka writes: the first 12 bytes
        # (framing and the value's frame header) in one struct call, then the
        # body straight to its compiled decoder (eager), kept for later
        # (lazy), or not even a Record (deferred partition records). Anything
        # else, and any doubt, takes the general path below from the start of
        # the record.
        fast = not control
        deferring = ref_base is not None and not control
        prefix, resolved, safe = _PREFIX, RESOLVED, min(end, len(buf)) - 12
        partition_key = _PARTITION_KEY
        total = h.count if count is None else count
        records = iter(range(total))
        runs = self._runs
        for _ in records:
            at = pos  # where the record starts, for messages
            if fast and pos <= safe:
                t = prefix(buf, pos)
                # length (1-2 bytes), attributes, timestampDelta (1), offsetDelta (1-2),
                # null key, value length (1-2), then frame, apiKey, version
                b = t[0]
                if b < 0x80:
                    length, k = zigzag1[b], 1
                elif t[1] < 0x80:
                    length, k = zigzag2[b][t[1]], 2
                else:
                    length, k = 0, 0
                rend = pos + k + length
                if k and t[k + 1] < 0x80 and length >= 6 and rend <= end:
                    attributes = t[k]
                    ts_delta = zigzag1[t[k + 1]]
                    b = t[k + 2]
                    if b < 0x80:
                        offset_delta = zigzag1[b]
                        k += 3
                    elif t[k + 3] < 0x80:
                        offset_delta = zigzag2[b][t[k + 3]]
                        k += 4
                    else:
                        k = 0
                    if k and t[k] == 1:
                        vk = k + 1   # the value length
                        b = t[vk]
                        if b < 0x80:
                            vlen = zigzag1[b]
                            k += 2
                        elif t[k + 2] < 0x80:
                            vlen = zigzag2[b][t[k + 2]]
                            k += 3
                        else:
                            k = 0
                        # the value ends one byte before the record: the header count, 0
                        if k and k + vlen + 1 == rend - pos and buf[rend - 1] == 0:
                            hit = resolved.get((t[k], t[k + 1], t[k + 2])) if vlen >= 3 else None
                            if hit is not None:
                                spec, decoder = hit
                                vstart = pos + k
                                api = t[k + 1]
                                if (deferring and (api == 3 or api == 5) and t[k] == 1 and vlen >= 23
                                        and not attributes and not ts_delta
                                        and offset_delta < REF_MAX_DELTA):
                                    # int32 partitionId and uuid topicId open the body
                                    out.append((ref_base + ((at + vk - payload) << REF_DELTA_BITS
                                                            | offset_delta),
                                                api, *partition_key(buf, vstart + 3)))
                                    pos = rend
                                    if total - len(out) > 1:   # a topic's next partitions, alike
                                        run = run_after(runs, buf, at, k, rend - at)
                                        n = self._deferred_run(run, buf, pos, end, total - len(out),
                                                               api, ref_base, payload, out)
                                        if n:
                                            pos += n * run.size
                                            next(islice(records, n - 1, None), None)
                                    continue
                                if lazy:
                                    rec = Record(base + offset_delta, base_ts + ts_delta if append_ts is None else append_ts,
                                                 epoch, METADATA, spec.name, api, t[k + 2], None, bpos)
                                    rec._spec = spec
                                    rec._buf = buf
                                    rec._vstart = vstart
                                    rec._body = vstart + 3
                                    rec._end = vstart + vlen
                                    p = vlen
                                else:
                                    # the value on its own: positions inside it are small
                                    # ints, which CPython adds without allocating
                                    try:
                                        data, p = decoder(buf[vstart:vstart + vlen], 3, vlen)
                                    except (RecordDecodeError, IndexError, struct.error,
                                            UnicodeDecodeError, ValueError, OverflowError):
                                        p = -1
                                    if p == vlen:
                                        rec = Record(base + offset_delta, base_ts + ts_delta if append_ts is None else append_ts,
                                                     epoch, METADATA, spec.name, api, t[k + 2], data, bpos)
                                        rec._spec = spec
                                if p == vlen:
                                    if attributes:
                                        rec.attributes = attributes
                                    if t[k] == 0:
                                        rec.frame = 0
                                        self._saw_frame0 = True
                                    out.append(rec)
                                    pos = rend
                                    if ((api == 3 or api == 5) and not lazy and vlen >= 23
                                            and t[k] == 1 and total - len(out) > 1):
                                        run = run_after(runs, buf, at, k, rend - at)
                                        if deferring:
                                            n = self._deferred_run(run, buf, pos, end, total - len(out),
                                                                   api, ref_base, payload, out)
                                        else:
                                            n = self._eager_run(run, h, buf, pos, end, total - len(out),
                                                                spec, decoder, t[k + 2], out)
                                        if n:
                                            pos += n * run.size
                                            next(islice(records, n - 1, None), None)
                                    continue
            # length: zigzag varint (one or two bytes inline, decoded by table lookup)
            b = buf[pos]
            if b < 0x80:
                length = zigzag1[b]
                pos += 1
            elif (c := buf[pos + 1]) < 0x80:
                length = zigzag2[b][c]
                pos += 2
            else:
                length, pos = read_varint(buf, pos)
            rstart = pos
            rend = pos + length
            if length < 6 or rend > end:
                raise RecordDecodeError(f"record at payload byte {at - payload} declares length {length}")
            attributes = buf[pos]
            # timestampDelta: zigzag varlong (0 in everything KRaft writes)
            b = buf[pos + 1]
            if b < 0x80:
                ts_delta = zigzag1[b]
                pos += 2
            else:
                ts_delta, pos = read_varlong(buf, pos + 1)
            # offsetDelta: zigzag varint
            b = buf[pos]
            if b < 0x80:
                offset_delta = zigzag1[b]
                pos += 1
            elif (c := buf[pos + 1]) < 0x80:
                offset_delta = zigzag2[b][c]
                pos += 2
            else:
                offset_delta, pos = read_varint(buf, pos)
            # key: zigzag varint length, -1 = null
            b = buf[pos]
            if b == 1:
                key = None
                pos += 1
            else:
                klen, pos = read_varint(buf, pos)
                if klen < 0:
                    raise RecordDecodeError(f"negative key length {klen}")
                key = bytes(buf[pos:pos + klen])
                pos += klen
            # value: zigzag varint length, -1 = null
            b = buf[pos]
            if b < 0x80:
                vlen = zigzag1[b]
                pos += 1
            elif (c := buf[pos + 1]) < 0x80:
                vlen = zigzag2[b][c]
                pos += 2
            else:
                vlen, pos = read_varint(buf, pos)
            vstart = pos
            if vlen > 0:
                pos += vlen
            # headers: count, then (key, value) pairs
            b = buf[pos]
            if b == 0:
                headers = ()
                pos += 1
            else:
                headers, pos = _headers(buf, pos)
            if pos != rend:
                raise RecordDecodeError(f"record at payload byte {at - payload} declares {length} bytes "
                                        f"but its fields take {pos - rstart}")
            offset = base + offset_delta
            ts = append_ts if append_ts is not None else base_ts + ts_delta
            rec = Record(offset, ts, epoch, METADATA, "", None, None, None, bpos)
            if attributes:
                rec.attributes = attributes
            if headers:
                rec.headers = headers
            if control:
                rec.key = key
                self._control(rec, key, buf, vstart, vstart + max(vlen, 0), vlen)
            else:
                if key is not None:
                    rec.key = key
                if vlen < 0:
                    rec.name = "UnknownRecord"
                    rec.make_undecodable("data record has a null value")
                else:
                    fill_metadata(rec, buf, vstart, vstart + vlen, lazy)
                    if rec.frame == 0:
                        self._saw_frame0 = True
            out.append(rec)
        if pos != end:
            raise RecordDecodeError(f"{end - pos} byte(s) left after the {h.count} records the batch declares")
        return out

    # -- runs of partition records (loader/runs.py) ----------------------------------

    def _deferred_run(self, run: PartitionRun, buf, pos: int, end: int, limit: int, api: int,
                      ref_base: int, payload: int, out: list) -> int:
        """Defer the run of partition records at ``pos``; returns how many it took."""
        n = run.match(buf, pos, end, limit)
        if not n:
            return 0
        attributes, ts_deltas, deltas, pids, raws = run.read(buf, pos, n)
        if any(attributes) or any(ts_deltas):   # not as Kafka writes them: one by one
            return 0
        size = run.size
        first = pos - payload + run.value_length_at
        refs = [ref_base + (at << REF_DELTA_BITS | d)
                for at, d in zip(range(first, first + n * size, size), deltas)]
        out.extend(zip(refs, repeat(api, n), pids, raws))
        return n

    def _eager_run(self, run: PartitionRun, h: BatchHeader, buf, pos: int, end: int, limit: int,
                   spec, decoder, version: int, out: list) -> int:
        """Decode the run of partition records at ``pos``; returns how many it
        took (it stops before a body the compiled decoder does not take whole,
        which the per-record path then reads)."""
        n = run.match(buf, pos, end, limit)
        if not n:
            return 0
        attributes, ts_deltas, deltas, _, _ = run.read(buf, pos, n)
        base, base_ts, epoch, bpos = h.base_offset, h.base_timestamp, h.epoch, h.position
        append_ts = h.max_timestamp if h.log_append_time else None
        name, api, vlen, size, zigzag1 = spec.name, spec.api_key, run.value_length, run.size, ZIGZAG1
        first = pos + run.value
        taken = 0
        for vstart, d, a, tb in zip(range(first, first + n * size, size), deltas, attributes, ts_deltas):
            try:
                data, p = decoder(buf[vstart:vstart + vlen], 3, vlen)
            except (RecordDecodeError, IndexError, struct.error, UnicodeDecodeError, ValueError,
                    OverflowError):
                break
            if p != vlen:
                break
            rec = Record(base + d, base_ts + zigzag1[tb] if append_ts is None else append_ts,
                         epoch, METADATA, name, api, version, data, bpos)
            rec._spec = spec
            if a:
                rec.attributes = a
            out.append(rec)
            taken += 1
        return taken

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


_PREFIX = struct.Struct(">12B").unpack_from   # the first 12 bytes of a record
_PARTITION_KEY = struct.Struct(">i16s").unpack_from   # int32 partitionId, uuid topicId

# A deferred record's ref, from the high bits down: the file's number in its
# store, the batch's number in its file (28 bits), where the record's value
# length is in the batch's record section (32 bits), the record's offset
# delta (16 bits). Python ints have no upper bound, so the file number has
# none; a record that does not fit the other fields is simply not deferred.
# Deferred records have no key, no headers, attributes 0 and timestamp delta
# 0 (as Kafka writes them), so these are all it takes to rebuild one.
REF_DELTA_BITS = 16
REF_POSITION_BITS = 32
REF_BATCH_BITS = 28
REF_MAX_DELTA = 1 << REF_DELTA_BITS
REF_MAX_POSITION = 1 << REF_POSITION_BITS
REF_MAX_BATCHES = 1 << REF_BATCH_BITS


def _headers(buf, pos: int):
    count, pos = read_varint(buf, pos)
    if count < 0:
        raise RecordDecodeError(f"negative header count {count}")
    headers = []
    for _ in range(count):
        klen, pos = read_varint(buf, pos)
        if klen < 0:
            raise RecordDecodeError("null header key")
        hkey = str(buf[pos:pos + klen], "utf-8")
        pos += klen
        vlen, pos = read_varint(buf, pos)
        if vlen < 0:
            hval = None
        else:
            hval = bytes(buf[pos:pos + vlen])
            pos += vlen
        headers.append((hkey, hval))
    return tuple(headers), pos


def _why(e: Exception) -> str:
    if isinstance(e, IndexError):
        return "a record runs past the end of the batch"
    return str(e)


def _map(path: Path):
    """Map a file read-only; an empty file maps to ``b""``."""
    try:
        if path.is_dir():
            raise InputError(path, "is a directory, expected a metadata file")
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return b""
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, expected a metadata file") from None
    except OSError as e:
        raise InputError(path, e.strerror or str(e)) from None


def read_file(path, **options):
    """Iterate the batches of one file (see :class:`FileReader` for options)."""
    return FileReader(path, **options)


def read_records(path, **options):
    """Every record of one file, in order (convenience for tools and tests)."""
    for batch in FileReader(path, **options):
        yield from batch.records
