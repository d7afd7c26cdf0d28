"""The fast path's side of one file's reader: the shortcuts a
:class:`~metashell.loader.reader.FileReader` asks through its one plug-in
point (:class:`~metashell.loader.reader.Shortcuts`).

A deferring reader (one of a :class:`~.store.RecordStore`'s) asks
:meth:`FastReading.batch` at each batch header (heartbeat runs,
:mod:`.noop_runs`; a log's small batches, :mod:`.batch_runs`; batches of
changes of shapes seen, :mod:`.change_batches`) and
:meth:`FastReading.records` for a data batch's records (deferred entries,
:mod:`.deferred`: topics, runs of partitions, :mod:`.partition_runs`; a
snapshot's kept runs, :mod:`.kept_runs`; single partition records by their
ids); any reader decoding eagerly asks :meth:`FastReading.eager_run` after a
topic or partition record (a run decoded by one compiled decoder call per
record). What no shortcut takes goes back to the reader's general path.
Under ``METASHELL_FAST_PATH=0`` :func:`shortcuts` gives None: the reader
then runs none of this.
"""

from __future__ import annotations

import crc32c as _crc32c

from ..kraft.batch import (ATTR_CODEC, ATTR_CONTROL, CRC_START, HEADER_SIZE, LOG_OVERHEAD, MIN_BATCH_LENGTH,
                           BatchHeader, BatchScanner)
from ..kraft.framing import frame
from ..kraft.primitives import URLSAFE, UUID_TEXT, b2a_base64, uuid_text
from ..kraft.records import DECODE_ERRORS, METADATA, RESOLVED, Record
from ..loader.reader import REF_BATCH_BITS, REF_MAX_BATCHES, REF_POSITION_BITS, Batch, FileReader
from . import deferred, enabled
from .batch_runs import HEADER_FIELDS, MAX_BATCHES, MAX_LENGTH, BatchRun
from .change_batches import ChangeBatch, ChangeShapes
from .kept_runs import KEPT, kept_run
from .noop_runs import BATCH_LENGTH as NOOP_BATCH_LENGTH
from .noop_runs import BATCH_SIZE as NOOP_BATCH_SIZE
from .noop_runs import NOOP_RECORD, NoOpRun
from .noop_runs import match as noop_run
from .partition_change import PARTITION_KEY
from .partition_runs import (OFFSET_DELTAS, PARTITION_LAST_VERSION, TIMESTAMP_DELTAS, TOPIC_LAST_VERSION,
                             TopicRun, run_after)
from .topic_runs import LearnedTopicRuns


def shortcuts(reader: FileReader) -> "FastReading | None":
    """The shortcuts of ``reader`` (what a reader's ``shortcuts`` option
    takes), None under ``METASHELL_FAST_PATH=0``."""
    return FastReading(reader) if enabled() else None


class FastReading:
    """The shortcuts of one reader and what they learn while it reads: the
    shapes of its partition runs, TopicRuns and change records.

    The reader owns them (``reader.shortcuts``); they keep only its plain
    values (its bytes, its list of batch positions) and are given the
    reader with each call that calls back into it (the general path, a
    batch read again): no cycle, which would keep the file mapped until a
    full collection (:class:`~metashell.loader.reader.Shortcuts`)."""

    def __init__(self, reader: FileReader):
        self.buf, self.verify_crc = reader.buf, reader.verify_crc
        self.file_no = -1 if reader.defer is None else reader.defer
        self.batch_positions = reader.batch_positions
        self.view = memoryview(reader.buf)
        self._runs: dict = {}   # run shapes of partition records (.partition_runs)
        self._by_length: dict = {}   # the last (shape, spec, decoder) of PartitionRecords by first byte
        self._topics = LearnedTopicRuns()   # the TopicRuns it has learned (.topic_runs)
        self._last = None               # the last run's (shape, spec, decoder) in a batch
        self._changes = ChangeShapes()  # shapes of the change records deferred (.change_batches)
        # a snapshot's configs, quotas, ACLs, SCRAM users and tokens are deferred in runs (.kept_runs)
        self._keeps = reader.path.suffix == ".checkpoint"
        self._small = not self._keeps   # a log's small batches in runs (.batch_runs)

    # -- whole batches -----------------------------------------------------------------------

    def batch(self, reader: FileReader, header: BatchHeader, scanner: BatchScanner) -> "Batch | None":
        """Batch ``header`` of a deferring reader (``reader``, whose shortcuts
        these are), and the batches after it a shortcut takes with it, as one
        :class:`Batch` (``scanner`` resumes after them); None: the reader
        reads it as any batch."""
        buf, view, file_no = self.buf, self.view, self.file_no
        # a controller's heartbeats, consecutive one-NoOp batches, as one batch
        # (.noop_runs): -20% for `ls` on the log dir (3.25 s -> 2.60 s)
        if header.length == NOOP_BATCH_LENGTH and header.count == 1:
            found = noop_run(buf, view, header.position, scanner.stop, self.verify_crc)
            # in a log, a lone one goes with the batches around it (below)
            if found is not None and (not self._small or found[1].count > 1):
                end, spanning = found
                scanner.resume = end
                self.batch_positions.extend(range(header.position, end, NOOP_BATCH_SIZE))
                return Batch(spanning, NoOpRun(buf, header.position, end, reader.batch_of), file_no)
        # a log's small batches, one write each, as one batch (.batch_runs):
        # `ls` on the bench's ctrl-log 17,500 -> 11,700 instructions per record
        if self._small and not header.attributes and header.length <= MAX_LENGTH:
            run = self._batch_run(reader, header, view, scanner.stop, file_no)
            if run is not None:
                scanner.resume = run.header.end
                return run
        # a batch of nothing but partition changes, checked, not read
        # (.change_batches): -60% reader time on the log dir's segment, `ls` 1.30 s -> 0.79 s
        if (not header.attributes & (ATTR_CODEC | ATTR_CONTROL)
                and self._changes.match(buf, header.position + HEADER_SIZE, header.end, header.count)):
            ref_base = reader.ref_base_of(header)
            if ref_base is not None:
                return Batch(header, ChangeBatch(header, ref_base, reader.read_batch, buf), file_no)
        return None

    # -- runs of small batches (.batch_runs) -------------------------------------------------

    def _batch_run(self, reader: FileReader, first: BatchHeader, view, stop: int,
                   file_no: int) -> "Batch | None":
        """The small batches from ``first`` (its CRC checked by the scanner)
        that :mod:`.batch_runs` reads, as one :class:`Batch` of a
        :class:`~.batch_runs.BatchRun` whose header spans them; None if
        ``first`` is not one of them."""
        batch_no = len(self.batch_positions)
        if batch_no + MAX_BATCHES >= REF_MAX_BATCHES:
            return None
        buf, fields = self.buf, HEADER_FIELDS.unpack_from
        crc = _crc32c.crc32c if self.verify_crc else None
        changes, take_topic = self._changes, self._topics.batch_entry
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
        refs, next_batch = ((self.file_no << REF_BATCH_BITS) | batch_no) << REF_POSITION_BITS, 1 << REF_POSITION_BITS
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
        return Batch(header, BatchRun(entries, noops, changes_only, positions, batch_no, reader.batch_at),
                     file_no)

    # -- runs decoded eagerly ------------------------------------------------------------------

    def eager_run(self, last, h: BatchHeader, buf, at: int, vstart: int, vlen: int, rend: int,
                  pos: int, end: int, limit: int, hit: tuple, out: list) -> tuple:
        """After the TopicRecord or partition record at ``at`` (its value at
        ``vstart``, ``hit`` its (spec, decoder)), decoded by the general
        path: the records at ``pos`` framed as one run into ``out``, at most
        ``limit``, as :class:`~metashell.kraft.records.Record` s: ``(where they
        end, how many, the run to try after the next TopicRecord)``. After a
        TopicRecord its partitions are most likely shaped as the last
        topic's (``last``); a partition record of a declared version
        (frame 1, :data:`.partition_runs.PARTITION_LAST_VERSION`) followed
        by one of the same first byte starts a run of its shape."""
        api = buf[vstart + 1]
        if api == 2:
            take = last
        elif (buf[vstart] == 1 and vlen >= 23 and buf[vstart + 2] <= PARTITION_LAST_VERSION[api]
              and buf[pos] == buf[at]):
            take = last = (run_after(self._runs, buf, at, vstart - at, rend - at), *hit)
        else:
            return pos, 0, last
        if take is None:
            return pos, 0, last
        pos, n = self._decode_run(take, h, buf, pos, end, limit, out)
        return pos, n, last

    def _decode_run(self, take: tuple, h: BatchHeader, buf, pos: int, end: int, limit: int,
                    out: list) -> tuple[int, int]:
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

    # -- deferred entries (.deferred) --------------------------------------------------------

    def records(self, reader: FileReader, h: BatchHeader, buf, pos: int, end: int, refs: int,
                out: list) -> int:
        """Data batch ``h``'s records (of ``reader``) from ``buf[pos:end]`` into ``out``, as deferred
        entries where a shortcut's shape holds (``refs``: a ref less its position in
        ``buf``); where they end. Each step takes the first that holds, in this order,
        else one record by the general path; most steps of a snapshot take a topic and
        its partitions, so finding a step's shape is inline, taking it a call."""
        payload, total, resolved, i = pos, h.count, RESOLVED, 0   # i: records read so far
        append_ts = h.max_timestamp if h.log_append_time else None
        topics = self._topics
        by_length, topic_runs, by_width = self._by_length, topics.by_key, topics.name_at_by_width
        name_ats, self._last = topics.name_ats, None
        general = reader.general_records   # the general path, for what no shortcut takes
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
                    tr, m = topics.run_at(buf, pos, end, name_at)
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
                            name_ats = topics.name_ats   # it may have made a TopicRun
                            continue
            pos = general(h, buf, at, end, payload, 1, out)
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
                    self._topics.learn(buf, at, vstart, end, run)
                else:
                    out.append(deferred.topic(refs + at, name, raw, offset, ts, tid))
                    out.append(entry)
                return rend + n * run.size, n + 1
        # its partitions come later (a writer that puts every topic first):
        # the engine looks it up by this id then
        UUID_TEXT[raw] = tid
        out.append(deferred.topic(refs + at, name, raw, offset, ts, tid))
        return rend, 1
