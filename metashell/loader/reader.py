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

import crc32c as _crc32c
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CorruptDataError, InputError, MetashellError, RecordDecodeError
from ..fast import deferred
from ..kraft import catalog
from ..kraft.batch import (ATTR_CODEC, ATTR_CONTROL, CRC_START, HEADER, HEADER_SIZE, LOG_OVERHEAD, MIN_BATCH_LENGTH,
                           BatchHeader, BatchScanner)
from ..fast.batch_runs import HEADER_FIELDS, MAX_BATCHES, MAX_LENGTH, BatchRun
from ..fast.change_batches import ChangeBatch, ChangeShapes
from ..kraft.compression import decompress
from ..fast.kept_runs import KEPT, kept_run
from ..kraft.framing import frame, headers
from ..fast.noop_runs import BATCH_LENGTH as NOOP_BATCH_LENGTH
from ..fast.noop_runs import BATCH_SIZE as NOOP_BATCH_SIZE
from ..fast.noop_runs import NOOP_RECORD, NoOpRun
from ..fast.noop_runs import match as noop_run
from ..kraft.primitives import INT16, URLSAFE, UUID_TEXT, b2a_base64, uuid_text
from ..kraft.records import CONTROL, DECODE_ERRORS, METADATA, PARTITION_KEY, RESOLVED, Record, fill_metadata
from .. import fast
from ..fast.partition_runs import (OFFSET_DELTAS, PARTITION_LAST_VERSION, TIMESTAMP_DELTAS, TOPIC_LAST_VERSION,
                                  PartitionRun, TopicRun, run_after, topic_run_after)
from ..fast.partition_runs import key as topic_key


@dataclass(slots=True)
class Batch:
    """A batch header and its records.

    From a reader opened with ``defer`` (see :class:`FileReader`), ``records``
    may also hold *deferred entries* (:mod:`.deferred`: a TopicRecord, a
    partition record, a run of a topic's partitions framed alike, a run of a
    snapshot's records ``ls`` does not need), each naming its records by
    refs into its :class:`~metashell.fast.store.RecordStore`. Consecutive
    batches of one NoOpRecord each (a controller's heartbeats,
    :mod:`.fast.noop_runs`) come as one batch whose header spans them and
    whose ``records`` is a :class:`~.fast.noop_runs.NoOpRun`; a batch of
    nothing but PartitionChangeRecords of shapes seen before, a
    :class:`~.fast.change_batches.ChangeBatch`, unread; a log's consecutive
    small batches (one CreateTopics, one change or one heartbeat each) as
    one batch spanning them, whose ``records`` is a
    :class:`~.fast.batch_runs.BatchRun`.
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
    :class:`~metashell.fast.store.RecordStore` (which passes it). The
    PartitionRecords and PartitionChangeRecords of data batches are then
    not made into :class:`Record` objects at all: each becomes a small
    tuple (see :class:`Batch`) whose ``ref`` the store turns back into a
    record when it is needed. A million-partition snapshot loads without a
    million objects; ``batch_positions`` lists where each batch starts, for
    the store.

    With ``METASHELL_FAST_PATH=0`` in the environment (:func:`.fast.enabled`)
    nothing is deferred and no shortcut is taken: every record is a
    :class:`Record` read through the general path.

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
        self.fast = fast.enabled()   # METASHELL_FAST_PATH=0: every record through the general path
        self.buf = _map(self.path) if buf is None else buf
        self.summary = FileSummary(str(self.path), len(self.buf))
        self.batch_positions = array("q")
        self._saw_frame0 = False
        self._runs: dict = {}   # run shapes of partition records (fast/partition_runs.py)
        self._by_length: dict = {}   # the last (shape, spec, decoder) of PartitionRecords by first byte
        self._topic_shapes: dict = {}   # TopicRuns by their shape (fast/partition_runs.py)
        self._topic_runs: dict = {}     # TopicRuns by partition_runs.key: the last of each
        self._topic_seen: dict = {}     # partition_runs.key -> topics read record by record
        self._name_ats: tuple = ()      # partition_runs.key's name_at of TopicRuns (a few)
        self._name_at_by_width = [0, 0]  # the last one matched, per record length width (1, 2+)
        self._changes = ChangeShapes()  # shapes of the change records deferred (.fast.change_batches)
        # a snapshot's configs, quotas, ACLs, SCRAM users and tokens are deferred in runs (.fast.kept_runs)
        self._keeps = self.path.suffix == ".checkpoint"

    def __iter__(self):
        scanner = BatchScanner(self.buf, self.path, verify_crc=self.verify_crc,
                               skip=self.skip_damage)
        try:
            file_no = -1 if self.defer is None else self.defer
            buf, deferring = self.buf, self.defer is not None and self.fast
            view = memoryview(buf) if deferring else None
            small = deferring and not self._keeps   # a log's small batches in runs (.fast.batch_runs)
            for header in scanner:
                # a controller's heartbeats, consecutive one-NoOp batches, as one batch
                # (.fast.noop_runs): -20% for `ls` on the log dir (3.25 s -> 2.60 s)
                if deferring and header.length == NOOP_BATCH_LENGTH and header.count == 1:
                    found = noop_run(buf, view, header.position, scanner.stop, self.verify_crc)
                    # in a log, a lone one goes with the batches around it (below)
                    if found is not None and (not small or found[1].count > 1):
                        end, spanning = found
                        scanner.resume = end
                        self.batch_positions.extend(range(header.position, end, NOOP_BATCH_SIZE))
                        yield Batch(spanning, NoOpRun(buf, header.position, end, self._batch_of),
                                    file_no)
                        continue
                # a log's small batches, one write each, as one batch (.fast.batch_runs):
                # `ls` on the bench's ctrl-log 17,500 -> 11,700 instructions per record
                if small and not header.attributes and header.length <= MAX_LENGTH:
                    run = self._batch_run(header, view, scanner.stop, file_no)
                    if run is not None:
                        scanner.resume = run.header.end
                        yield run
                        continue
                # a batch of nothing but partition changes, checked, not read
                # (.fast.change_batches): -60% reader time on the log dir's segment, `ls` 1.30 s -> 0.79 s
                if (deferring and not header.attributes & (ATTR_CODEC | ATTR_CONTROL)
                        and self._changes.match(buf, header.position + HEADER_SIZE, header.end,
                                                header.count)):
                    ref_base = self._ref_base(header)
                    if ref_base is not None:
                        yield Batch(header, ChangeBatch(header, ref_base, self._read, buf), file_no)
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

    def _ref_base(self, h: BatchHeader) -> int | None:
        """List the batch's position (deferring reader); the ref of its
        records section's first byte, None if its refs would not fit."""
        batch_no = len(self.batch_positions)
        self.batch_positions.append(h.position)
        if batch_no < REF_MAX_BATCHES and h.length < REF_MAX_POSITION:
            return ((self.defer << REF_BATCH_BITS) | batch_no) << REF_POSITION_BITS
        return None

    def _records(self, h: BatchHeader) -> list:
        return self._read(h, None if self.defer is None else self._ref_base(h))

    def records_of(self, h: BatchHeader) -> list:
        """The records of batch ``h`` of this file, read on their own (a
        walk of the batches that chooses which to read: ``log``); raises
        :class:`CorruptDataError` when they do not parse."""
        return self._read(h, None)

    def _read(self, h: BatchHeader, ref_base: int | None) -> list:
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

    # -- runs of small batches (.fast.batch_runs) -------------------------------------

    def _batch_run(self, first: BatchHeader, view, stop: int, file_no: int) -> "Batch | None":
        """The small batches from ``first`` (its CRC checked by the scanner)
        that :mod:`.fast.batch_runs` reads, as one :class:`Batch` of a
        :class:`~.fast.batch_runs.BatchRun` whose header spans them; None if
        ``first`` is not one of them."""
        batch_no = len(self.batch_positions)
        if batch_no + MAX_BATCHES >= REF_MAX_BATCHES:
            return None
        buf, fields = self.buf, HEADER_FIELDS.unpack_from
        crc = _crc32c.crc32c if self.verify_crc else None
        changes, take_topic = self._changes, self._topic_batch
        ids_at = changes.ids_at
        single = changes.single()   # a change batch's pattern, once compiled
        # constants as locals: the loop runs once per batch
        noop_length, noop, overhead, size, crc_start = (NOOP_BATCH_LENGTH, NOOP_RECORD, LOG_OVERHEAD,
                                                        HEADER_SIZE, CRC_START)
        entries, positions = [], []
        noops = records = topics = 0
        pos, epoch, last_offset = first.position, first.epoch, first.base_offset - 1
        base, length, lod, ts, mts, count = (first.base_offset, first.length, first.last_offset_delta,
                                             first.base_timestamp, first.max_timestamp, first.count)
        refs, next_batch = ((self.defer << REF_BATCH_BITS) | batch_no) << REF_POSITION_BITS, 1 << REF_POSITION_BITS
        while True:
            end, p = pos + overhead + length, pos + size
            if count != 1:
                entry = take_topic(buf, p, end, count, base, ts, refs - p)
                if entry is None:
                    break
                entries.append(entry)
                topics += 1
            elif length == noop_length and buf[p:end] == noop:
                noops += 1
            else:   # a change, of a shape learned
                if single is None:
                    if not changes.match(buf, p, end, 1):
                        break
                    single = changes.single()
                elif single(buf, p, end) is None:
                    break
                ids = ids_at.get(end - p)   # a shape's length tells where its ids lie
                ids = frame(buf, p, end, p)[6] + 3 if ids is None else p + ids
                entries.append(deferred.partition(refs, 5, *PARTITION_KEY(buf, ids)))
            positions.append(pos)
            records += count
            last_offset, last_mts, taken_end = base + lod, mts, end
            pos, refs = end, refs + next_batch
            if len(positions) == MAX_BATCHES or stop - pos < size:
                break
            base, length, e, magic, stored, attributes, lod, ts, mts, count = fields(buf, pos)
            if (magic != 2 or attributes or e != epoch or not MIN_BATCH_LENGTH <= length <= MAX_LENGTH
                    or mts < last_mts or base <= last_offset or pos + overhead + length > stop
                    or crc is not None and crc(view[pos + crc_start:pos + overhead + length]) != stored):
                break   # read by the scanner, as any batch
        if not positions:
            return None
        self.batch_positions.extend(positions)
        header = BatchHeader(first.base_offset, taken_end - first.position - overhead, epoch, 2,
                             first.crc, 0, last_offset - first.base_offset, first.base_timestamp,
                             last_mts, -1, -1, -1, records, first.position)
        changes_only = topics == 0 and len(entries) > 0
        return Batch(header, BatchRun(entries, noops, changes_only, positions, batch_no, self._batch_at),
                     file_no)

    def _topic_batch(self, buf, p: int, end: int, count: int, base: int, ts: int, refs: int):
        """The records section ``buf[p:end]`` of a batch of ``count`` records
        as one ``TOPIC_WITH_RUN`` entry, if one of the reader's TopicRuns
        matches it whole (a TopicRecord v0 and its partitions,
        :mod:`.fast.partition_runs`), as :meth:`_defer_topic_runs` would
        read it; else None. ``base``, ``ts``: the batch's base offset and
        timestamp; ``refs``: a ref less its position in ``buf``."""
        name_at = self._name_at_by_width[buf[p] >> 7]
        if not name_at or p + name_at >= end:
            return None
        nb = buf[p + name_at]
        if p + name_at + nb + 18 >= end:
            return None
        tr = self._topic_runs.get(name_at << 16 | nb << 8 | buf[p + name_at + nb + 18])
        m = None if tr is None else tr.pattern.match(buf, p, end)
        if m is None or m.end() != end:
            return None
        run, start, n = tr.run, p + tr.size, count - 1
        if start + n * run.size != end:
            return None
        tsd, od, name, raw = m.groups()
        try:
            name = str(name, "utf-8")
        except UnicodeDecodeError:
            return None
        return deferred.topic_with_run(
            refs + p, name, raw, base + OFFSET_DELTAS[od], ts + TIMESTAMP_DELTAS[tsd],
            b2a_base64(raw, newline=False)[:22].translate(URLSAFE).decode(),
            refs + start, run, (run.pid_structs.get(n) or run.pid_unpacker(n))(buf, start))

    def _batch_at(self, pos: int, batch_no: int) -> Batch:
        """The batch at ``pos`` of a :class:`~.fast.batch_runs.BatchRun`,
        read again as any batch (it is number ``batch_no`` in the list of
        positions already)."""
        h = BatchHeader(*HEADER.unpack_from(self.buf, pos), pos)
        return Batch(h, self._read(h, ((self.defer << REF_BATCH_BITS) | batch_no) << REF_POSITION_BITS),
                     self.defer)

    def _batch_of(self, h: BatchHeader) -> Batch:
        """One batch of a :class:`~.fast.noop_runs.NoOpRun`, read again (its
        position is already listed)."""
        return Batch(h, self._parse(h, self.buf, h.position + HEADER_SIZE, h.end),
                     -1 if self.defer is None else self.defer)

    def _parse(self, h: BatchHeader, buf, pos: int, end: int, ref_base: int | None = None) -> list:
        """The records of batch ``h``, whose record section is ``buf[pos:end]``.

        With ``ref_base`` (a deferring reader's data batch, the fast path on)
        the shortcuts take what they can (:meth:`_defer`), as deferred
        entries whose refs count from ``ref_base``; otherwise every record is
        a :class:`Record` (:meth:`_read_records`). Raises
        :class:`RecordDecodeError` when the records do not fill the section."""
        out = []
        if ref_base is not None and not h.is_control and self.fast:
            pos = self._defer(h, buf, pos, end, ref_base - pos, out)
        else:
            pos = self._read_records(h, buf, pos, end, pos, h.count, out)
        if pos != end:
            raise RecordDecodeError(f"{end - pos} byte(s) left after the {h.count} records the batch declares")
        return out

    # -- the general path: every record a Record ------------------------------------

    def _read_records(self, h: BatchHeader, buf, pos: int, end: int, payload: int, count: int,
                      out: list) -> int:
        """The general path: ``count`` records from ``buf[pos:]`` (of a record
        section from ``payload`` to ``end``) into ``out`` as :class:`Record` s;
        where they end. A data record as Kafka writes them goes by one lookup
        to its compiled decoder (or is kept for later, ``lazy``), anything
        else by :meth:`_other_record`; on the fast path a topic's partitions
        framed alike are decoded as one run (:meth:`_eager_run`)."""
        base, base_ts, epoch, bpos = h.base_offset, h.base_timestamp, h.epoch, h.position
        append_ts = h.max_timestamp if h.log_append_time else None
        control, lazy, resolved = h.is_control, self.lazy, RESOLVED
        runs_on = not lazy and self.fast
        last = None   # the last run's (shape, spec, decoder)
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
            if runs_on and i < count:
                take = None
                if api == 2:   # after a TopicRecord its partitions, most likely shaped as the last topic's
                    take = last
                elif ((api == 3 or api == 5) and fv == 1 and vlen >= 23
                      and version <= PARTITION_LAST_VERSION[api] and buf[pos] == buf[at]):
                    take = last = (run_after(self._runs, buf, at, vstart - at, rend - at), spec, decoder)
                if take is not None:
                    pos, n = self._eager_run(take, h, buf, pos, end, count - i, out)
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

    def _eager_run(self, take: tuple, h: BatchHeader, buf, pos: int, end: int, limit: int,
                   out: list) -> int:
        """Decode the run of partition records shaped as ``take`` (shape,
        spec, decoder) at ``pos``: ``(where it ends, how many it took)`` (it
        stops before a body the compiled decoder does not take whole, which
        the per-record path then reads)."""
        run, spec, decoder = take
        n = run.match(buf, pos, end, limit)
        if not n:
            return pos, 0
        attributes, ts_deltas, deltas, _, _ = run.read(buf, pos, n)
        base, base_ts, epoch, bpos = h.base_offset, h.base_timestamp, h.epoch, h.position
        append_ts = h.max_timestamp if h.log_append_time else None
        name, api, vlen, size = spec.name, spec.api_key, run.value_length, run.size
        first = pos + run.value
        taken = 0
        for vstart, d, a, td in zip(range(first, first + n * size, size), deltas, attributes, ts_deltas):
            try:
                data, p = decoder(buf[vstart:vstart + vlen], 3, vlen)
            except DECODE_ERRORS:
                break
            if p != vlen:
                break
            rec = Record(base + d, base_ts + td if append_ts is None else append_ts,
                         epoch, METADATA, name, api, run.version, data, bpos)
            rec._spec = spec
            if a:
                rec.attributes = a
            out.append(rec)
            taken += 1
        return pos + taken * size, taken

    # -- the fast path: deferred entries (fast/deferred.py, fast/) -------------

    def _defer(self, h: BatchHeader, buf, pos: int, end: int, refs: int, out: list) -> int:
        """Data batch ``h``'s records from ``buf[pos:end]`` into ``out``, as deferred
        entries where a shortcut's shape holds (``refs``: a ref less its position in
        ``buf``); where they end. Each step takes the first that holds, in this order,
        else one record by the general path; most steps of a snapshot take a topic and
        its partitions, so finding a step's shape is inline, taking it a call."""
        payload, total, resolved, i = pos, h.count, RESOLVED, 0   # i: records read so far
        append_ts = h.max_timestamp if h.log_append_time else None
        by_length, topic_runs, by_width = self._by_length, self._topic_runs, self._name_at_by_width
        name_ats, self._last = self._name_ats, None
        while i < total:
            m = None
            if name_ats:
                # a topic and its partitions framed as a topic's before them: the TopicRun by
                # partition_runs.key where the name's length was in the last of as wide a length
                name_at = by_width[buf[pos] >> 7]
                q = pos + name_at
                try:   # past the batch: a key whose pattern, if any, does not match there
                    nb = buf[q]
                    tr = topic_runs.get(name_at << 16 | nb << 8 | buf[q + nb + 18]) if name_at else None
                except IndexError:   # past the file
                    tr = None
                m = None if tr is None else tr.pattern.match(buf, pos, end)
            if m is None and by_length:
                again = by_length.get(buf[pos])
                if again is not None:
                    pos, n = self._defer_run_again(again, buf, pos, end, total - i, refs, out)
                    if n:
                        i += n
                        continue
                if len(name_ats) > 1:   # or where another topic's was
                    tr, m = self._topic_run_at(buf, pos, end, name_at)
            if m is not None:
                pos, n = self._defer_topic_runs(tr, m, h, buf, pos, end, total - i, refs, out)
                if n:
                    i += n
                    continue
            at = pos
            rend, _, ts_delta, offset_delta, _, klen, vstart, vlen, hpos = frame(buf, pos, end, payload)
            if klen < 0 and vlen >= 3 and buf[vstart] == 1 and hpos + 1 == rend and buf[hpos] == 0:
                api, version = buf[vstart + 1], buf[vstart + 2]
                hit = resolved.get((1, api, version))
                if hit is not None:
                    if (api == 3 or api == 5) and vlen >= 23 and version <= PARTITION_LAST_VERSION[api]:
                        pos, n = self._defer_partition(api, hit, buf, at, vstart, rend, end, total - i,
                                                       refs, out)
                        i += n
                        continue
                    if api in KEPT and self._keeps and version <= KEPT[api]:   # .fast.kept_runs
                        n, pos = kept_run(buf, rend, end, total - i - 1, api)
                        out.append(deferred.kept_run(refs + at, api, n + 1))
                        i += n + 1
                        continue
                    if api == 2 and version <= TOPIC_LAST_VERSION:
                        pos, n = self._defer_topic(
                            buf, at, vstart, vlen, rend, end, h.base_offset + offset_delta,
                            h.base_timestamp + ts_delta if append_ts is None else append_ts,
                            total - i, refs, out)
                        if n:
                            i += n
                            name_ats = self._name_ats   # it may have made a TopicRun
                            continue
            pos = self._read_records(h, buf, at, end, payload, 1, out)
            i += 1
        return pos

    def _defer_topic_runs(self, tr: TopicRun, m, h: BatchHeader, buf, pos: int, end: int, limit: int,
                          refs: int, out: list) -> tuple[int, int]:
        """The TopicRecord and its partitions that ``tr``'s pattern matched at
        ``pos`` (``m``), as one entry, and the topics after it that the same
        pattern matches (a snapshot's topics are mostly alike, one after
        another: one call takes them all), at most ``limit`` records:
        ``(where they end, how many)``, ``(pos, 0)`` if the first is not
        taken (a name that is not UTF-8, which the general path reports; no
        partition within the batch)."""
        run, size, taken = tr.run, tr.size, 0
        base, pid_structs = h.base_offset, run.pid_structs
        append_ts = h.max_timestamp if h.log_append_time else None
        # `while True`, not `while m is not None`: CPython 3.11 specializes the code
        # of a function called a few times only if its loops jump back unconditionally
        while True:
            start = pos + size
            n = (m.end() - start) // run.size
            if n >= limit - taken:
                n = limit - taken - 1
            ts, od, name, raw = m.groups()
            try:
                name = str(name, "utf-8")
            except UnicodeDecodeError:
                break
            if n <= 0:
                break
            # the offset delta: most of an 8 MiB batch's are 3 bytes, and each is
            # new, so read here rather than through a memo
            if len(od) == 3:
                u = (od[0] & 0x7F) | ((od[1] & 0x7F) << 7) | (od[2] << 14)
                offset = base + ((u >> 1) ^ -(u & 1))
            else:
                offset = base + OFFSET_DELTAS[od]
            out.append(deferred.topic_with_run(
                refs + pos, name, raw, offset,
                h.base_timestamp + TIMESTAMP_DELTAS[ts] if append_ts is None else append_ts,
                # uuid_text(raw), inline: one call fewer per topic
                b2a_base64(raw, newline=False)[:22].translate(URLSAFE).decode(),
                refs + start, run, (pid_structs.get(n) or run.pid_unpacker(n))(buf, start)))
            pos = start + n * run.size
            taken += n + 1
            m = tr.pattern.match(buf, pos, end) if taken < limit else None
            if m is None:
                break
        return pos, taken

    def _defer_run_again(self, again: tuple, buf, pos: int, end: int, limit: int, refs: int,
                         out: list) -> tuple[int, int]:
        """Partitions shaped as ``again`` (a run's (shape, spec, decoder),
        the last one seen with the first byte at ``pos``: a lagging replica's
        shorter ISR, then the topic's usual shape; a topic's partitions
        written after all the topics) as one run entry, at most ``limit``:
        ``(where they end, how many)``, or ``(pos, 0)`` (-10% reader
        instructions on the bench's mixed snapshot)."""
        run = again[0]
        m = run.pattern.match(buf, pos, end)
        if m is None:
            return pos, 0
        n = (m.end() - pos) // run.size
        if n > limit:
            n = limit
        out.append(deferred.partition_run(refs + pos, run.api, run,
                                          (run.pid_structs.get(n) or run.pid_unpacker(n))(buf, pos),
                                          m.group(1)))
        self._last = again
        return pos + n * run.size, n

    def _defer_partition(self, api: int, hit: tuple, buf, at: int, vstart: int, rend: int, end: int,
                         limit: int, refs: int, out: list) -> tuple[int, int]:
        """The PartitionRecord or PartitionChangeRecord at ``at`` (its value
        at ``vstart``, ending at ``rend``) and, as one run entry, those alike
        after it (a topic's next partitions), at most ``limit``: ``(where
        they end, how many)``.

        A run is tried only if the next record opens with the same length
        byte and names the same topic (a controller's changes rarely come two
        alike; the test saves failed matches, -9% instructions per batch of a
        controller's log). A PartitionRecord not followed by others alike (a
        topic's only partition, or one shaped unlike the next: a lagging
        replica's shorter ISR) is a run of one, so that its topic stays in
        runs (``summary`` counts them from their bytes) and its shape is kept
        by its first byte for the partitions to come (the mixed snapshot's
        engine time -47%). Anything else is one entry of its ids."""
        n = 0
        if (limit > 1 and buf[rend] == buf[at]
                and buf[rend + vstart - at + 7:rend + vstart - at + 23] == buf[vstart + 7:vstart + 23]):
            run = run_after(self._runs, buf, at, vstart - at, rend - at)
            self._last = last = (run, *hit)
            if api == 3:
                self._by_length[buf[at]] = last
            n = run.match(buf, at, end, limit)
        if api == 5:   # its shape, for batches of changes to leave unread
            self._changes.learn(buf, at, vstart, rend, hit[1])
        if not n:
            if api != 3:   # int32 partitionId and uuid topicId open its body
                out.append(deferred.partition(refs + at, api, *PARTITION_KEY(buf, vstart + 3)))
                return rend, 1
            run = run_after(self._runs, buf, at, vstart - at, rend - at)
            self._last = self._by_length[buf[at]] = (run, *hit)
            n = 1
        out.append(deferred.partition_run(refs + at, api, run, run.pid_unpacker(n)(buf, at),
                                          bytes(buf[vstart + 7:vstart + 23])))
        return at + n * run.size, n

    def _defer_topic(self, buf, at: int, vstart: int, vlen: int, rend: int, end: int, offset: int,
                     ts: int, limit: int, refs: int, out: list) -> tuple[int, int]:
        """The TopicRecord at ``at`` (its ``offset`` and timestamp ``ts``) as
        an entry of its name and id, not a :class:`Record` (-9% instructions
        per record loading a snapshot), with its partitions right after it as
        one run if they are shaped as the last topic's (-7% reader time per
        topic): ``(where they end, how many records)``, ``(at, 0)`` if it
        holds more than a name of one-byte length (UTF-8) and an id, as v0
        does (the general path reads it)."""
        nb = buf[vstart + 3]
        if not (0 < nb < 0x80 and vlen == nb + 20 and buf[vstart + vlen - 1] == 0):
            return at, 0
        try:
            name = str(buf[vstart + 4:vstart + 3 + nb], "utf-8")
        except UnicodeDecodeError:
            return at, 0
        raw = bytes(buf[vstart + 3 + nb:vstart + 19 + nb])
        tid = uuid_text(raw)   # not kept in UUID_TEXT: -6% `ls` on a snapshot
        # its partitions' shape: the one last seen with their first byte
        cand = (self._by_length.get(buf[rend]) or self._last) if limit > 1 else None
        if cand is not None:
            self._last = cand
            run = cand[0]
            m = run.pattern.match(buf, rend, end)
            n = 0 if m is None else (m.end() - rend) // run.size
            if n >= limit:
                n = limit - 1
            if n:
                rid = m.group(1)
                entry = deferred.partition_run(refs + rend, run.api, run,
                                               (run.pid_structs.get(n) or run.pid_unpacker(n))(buf, rend),
                                               raw if rid == raw else rid)
                if rid == raw and run.api == 3:   # the topic and its run as one entry
                    out.append(deferred.topic(refs + at, name, raw, offset, ts, tid, entry))
                    self._learn_topic_run(buf, at, vstart, end, run)
                else:
                    out.append(deferred.topic(refs + at, name, raw, offset, ts, tid))
                    out.append(entry)
                return rend + n * run.size, n + 1
        # its partitions come later (a writer that puts every topic first):
        # the engine looks it up by this id then
        UUID_TEXT[raw] = tid
        out.append(deferred.topic(refs + at, name, raw, offset, ts, tid))
        return rend, 1

    # -- runs of partition records (fast/partition_runs.py) ----------------------------------

    def _learn_topic_run(self, buf, at: int, vstart: int, end: int, run: PartitionRun) -> None:
        """After the TopicRecord at ``at`` (its value at ``vstart``) and its
        partitions of shape ``run``: the next topics alike are looked for at
        the top of :meth:`_defer`, by their TopicRun's key. The TopicRun is
        made (a compile, ~0.15 ms) once :data:`TOPIC_RUN_AFTER` topics like
        it were read record by record, so that a shape few topics have costs
        no compile (a snapshot of mixed topics has hundreds of shapes)."""
        k = topic_key(buf, at, vstart - at + 3, end)
        tr = self._topic_runs.get(k)
        if tr is None or tr.run is not run:
            seen = self._topic_seen[k] = self._topic_seen.get(k, 0) + 1
            if seen < TOPIC_RUN_AFTER:
                return
            tr = self._topic_runs[k] = topic_run_after(self._topic_shapes, buf, at, vstart, run)
        self._name_at_by_width[buf[at] >> 7] = tr.name_at
        if tr.name_at not in self._name_ats:
            self._name_ats = (tr.name_at, *self._name_ats[:5])

    def _topic_run_at(self, buf, pos: int, end: int, tried: int) -> tuple:
        """``(TopicRun, match)`` at ``pos`` for a TopicRecord whose name's
        length is at another of the places seen than ``tried`` (see :meth:`_defer`),
        or ``(None, None)``; the place found is tried first from now on for
        records whose length is as wide."""
        for name_at in self._name_ats:
            if name_at == tried or pos + name_at >= end or buf[pos + name_at - 2] != 2:   # apiKey
                continue
            tr = self._topic_runs.get(topic_key(buf, pos, name_at, end))
            m = None if tr is None else tr.pattern.match(buf, pos, end)
            if m is not None:
                self._name_at_by_width[buf[pos] >> 7] = name_at
                return tr, m
        return None, None

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


# topics of one shape read record by record before its TopicRun is made: a
# shape few topics have costs no compile (-34% reader instructions on the
# bench's mixed snapshot at 100,000 partitions, the same time at 1 M)
TOPIC_RUN_AFTER = 16


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
