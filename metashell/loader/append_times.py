"""Batch append times by offset, read from a log's segment files.

A KRaft controller gives a broker the log offset of the write that
registers it as its epoch, so a broker's start time is the append time of
the batch at that offset. A snapshot keeps the epoch but not the time;
the segments before the snapshot, while retention keeps them, still have it
in their batch headers. This module finds it from headers alone, never
decoding a record, and only when asked, so loading costs nothing more.

The controller counts only its own writes: a Raft control batch it did not
count (a LeaderChangeMessage written as a leader took over) can sit at the
offset it handed out, with the registration in the next batch. So the time
of an offset is that of the first metadata (non-control) batch from the
batch holding the offset on, with no offset missing in between.

A source answers ``write_time(offset) -> (ms, None)`` or ``(None, why)``:
:class:`SegmentAppendTimes` over the segment files of a load plan (none for
a snapshot file alone: every answer is then :data:`NO_LOG`). A live session
provides its own object with the same method for what it fetched.

Finding the batch: the segment whose base offset is the greatest at or
below the offset, then a walk of its batch headers
(:class:`~metashell.kraft.batch.BatchScanner`) from the nearest known
position: the segment's ``.index`` (kraft-format.md 16.2) when it is
there and agrees with the log, and the marks earlier walks left. The batch
found has its CRC checked; damage on the way is the answer's reason.
"""

from __future__ import annotations

import bisect
import mmap
from contextlib import nullcontext
from pathlib import Path

from ..errors import CorruptDataError
from ..kraft.batch import CRC_START, HEADER, HEADER_SIZE, BatchHeader, BatchScanner, crc32c
from ..kraft.primitives import INT32_PAIR

Answer = tuple  # (append time ms | None, reason | None)

_INDEX_ENTRY = INT32_PAIR   # relative offset, byte position
#: why a source without segments (a snapshot file alone) has no times
NO_LOG = "no log segment was loaded; load the metadata log directory to look it up"
#: a walk leaves a mark (last offset, position) about this often, so the next
#: lookup in the same segment starts near its offset
MARK_BYTES = 64 * 1024


class SegmentAppendTimes:
    """Append times from segment files (``SegmentFile``s of a load plan,
    sorted by base offset). Answers are cached; files are mapped only while
    a lookup reads them."""

    def __init__(self, segments):
        self._segments = [s for s in segments if s.base_offset is not None]
        self._bases = [s.base_offset for s in self._segments]
        self._marks: dict[int, list] = {}   # segment number -> sorted [(last offset, position)]
        self._cache: dict[int, Answer] = {}

    def write_time(self, offset: int) -> Answer:
        answer = self._cache.get(offset)
        if answer is None:
            answer = self._cache[offset] = self._find(offset)
        return answer

    def _find(self, offset: int) -> Answer:
        segs = self._segments
        if not segs:
            return None, NO_LOG
        i = bisect.bisect_right(self._bases, offset) - 1
        if i < 0:
            return None, (f"offset {offset} is before the first segment, {segs[0].path.name}, "
                          f"which starts at {segs[0].base_offset}; the segments holding it were "
                          "deleted once a snapshot covered them")
        try:
            return self._walk(i, offset)
        except CorruptDataError as e:
            return None, f"the log is damaged before the batch was found: {e}"
        except OSError as e:   # a segment deleted (or made unreadable) since loading
            return None, f"{e.filename}: cannot read it ({e.strerror or e})"

    def _walk(self, i: int, offset: int) -> Answer:
        segs = self._segments
        holder = None   # the last offset of the batch holding ``offset``, once found
        for seg, h in self._headers(i, offset):
            if h.last_offset < offset:
                continue
            if holder is None:
                if h.base_offset > offset:
                    return None, (f"no batch holds offset {offset}: the log goes on at offset "
                                  f"{h.base_offset} ({seg.path.name})")
            elif h.base_offset != holder + 1:
                return None, (f"offsets {holder + 1}-{h.base_offset - 1} are missing after the "
                              f"control batch at offset {offset} ({seg.path.name})")
            holder = h.last_offset
            if not h.is_control:
                return _checked(seg.path, h)
        if holder is None:
            return None, f"offset {offset} is past the end of the log ({segs[-1].path.name})"
        return None, f"the log ends after the control batch at offset {offset}"

    def _headers(self, i: int, offset: int):
        """``(segment, header)`` from near ``offset`` in segment ``i`` on, into
        the following segments (a control batch can end a segment), leaving
        marks on the way. Damage is raised as :class:`CorruptDataError`, an
        unreadable file as ``OSError``."""
        segs = self._segments
        start = self._start(i, offset)
        for j in range(i, len(segs)):
            seg = segs[j]
            marks = self._marks.setdefault(j, [])
            with open(seg.path, "rb") as f, _mapped(f) as buf:
                if start >= len(buf):
                    start = 0
                next_mark = start + MARK_BYTES
                for h in BatchScanner(buf, seg.path, verify_crc=False, start=start):
                    if h.position >= next_mark:
                        _add_mark(marks, (h.last_offset, h.position))
                        next_mark = h.position + MARK_BYTES
                    yield seg, h
            start = 0

    def _start(self, i: int, offset: int) -> int:
        """The byte position in segment ``i`` to walk from: the nearest batch
        known to end before ``offset`` (from the ``.index`` or earlier walks)."""
        marks = self._marks.get(i, ())
        k = bisect.bisect_left(marks, (offset, -1)) - 1
        return max(marks[k][1] if k >= 0 else 0, _index_position(self._segments[i], offset))


def _add_mark(marks: list, mark: tuple) -> None:
    k = bisect.bisect_left(marks, mark)
    if k == len(marks) or marks[k] != mark:
        marks.insert(k, mark)


def _checked(path: Path, h) -> Answer:
    """The batch's append time, once its CRC says the header is the one written."""
    with open(path, "rb") as f, _mapped(f) as buf:
        actual = crc32c(buf[h.position + CRC_START:h.end])
    if actual != h.crc:
        return None, str(CorruptDataError(path, h.position, f"batch CRC-32C {h.crc:#010x}, "
                                          f"computed {actual:#010x}", h.base_offset))
    return h.max_timestamp, None


def _mapped(f):
    """A read-only mapping of an open file, as a context manager (an empty
    file cannot be mapped: it reads as no bytes)."""
    try:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:
        return nullcontext(b"")


def _index_position(seg, offset: int) -> int:
    """Where the segment's ``.index`` says to look for ``offset``: the
    position of the last indexed batch ending at or before it (an entry names
    the last offset of the batch at its position); 0 without an index, or
    when no such batch is at that position. Kafka pre-allocates the
    active segment's index with zeros past the last entry, so the entries are
    the first one and those after it with a relative offset above 0."""
    target = offset - seg.base_offset
    try:
        with open(seg.path.with_suffix(".index"), "rb") as f, _mapped(f) as idx:
            entry = _INDEX_ENTRY.unpack_from
            size = _INDEX_ENTRY.size
            lo, hi = 1, len(idx) // size      # entries [0, count): find count
            while lo < hi:
                mid = (lo + hi) // 2
                if entry(idx, mid * size)[0] > 0:
                    lo = mid + 1
                else:
                    hi = mid
            lo, hi = 0, min(lo, len(idx) // size)   # the last entry with rel <= target
            while lo < hi:
                mid = (lo + hi) // 2
                if entry(idx, mid * size)[0] <= target:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == 0:
                return 0
            rel, pos = entry(idx, (lo - 1) * size)
        with open(seg.path, "rb") as g, _mapped(g) as log:
            return pos if _batch_at(log, pos, seg.base_offset + rel) else 0
    except OSError:
        return 0


def _batch_at(log, pos: int, last_offset: int) -> bool:
    """Whether a whole batch, ending at or before ``last_offset``, starts at
    ``pos`` (its CRC checked: an index left from before a crash can point
    anywhere)."""
    if pos < 0 or pos + HEADER_SIZE > len(log):
        return False
    h = BatchHeader(*HEADER.unpack_from(log, pos), pos)
    return (h.magic == 2 and h.last_offset <= last_offset and h.end <= len(log)
            and crc32c(log[pos + CRC_START:h.end]) == h.crc)
