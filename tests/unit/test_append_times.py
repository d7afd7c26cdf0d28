"""Batch append times by offset from segment files (loader/append_times.py):
the batch holding an offset in the first, middle or last batch of a
segment, across segments, before the first one, in a gap, past the end;
compressed batches; a control batch at the offset (the time is the next
metadata batch's, as a KRaft controller does not count it); the ``.index``
jump, a pre-allocated index, an index that disagrees with the log; damage;
the marks a walk leaves. Every segment is written by the project's writer
with a distinct append time per batch, so a wrong batch gives a wrong time.
"""

from __future__ import annotations

import os
import struct

import pytest

from metashell.loader.append_times import MARK_BYTES, NO_LOG, SegmentAppendTimes
from metashell.loader.inputs import SegmentFile
from metashell.kraft.writer import LogWriter, control, segment_name
from tests.support.records import noop

TS = 1_700_000_000_000


class Segment:
    """A segment of NoOp batches (``sizes``: records per batch); batch ``k``
    is appended at ``TS + base + k``, so every batch of a test has its own
    time. ``controls``: batch numbers written as LeaderChange control batches."""

    def __init__(self, directory, base: int, sizes, *, codec: int = 0, controls=()):
        w = LogWriter(base, epoch=1, timestamp=TS, codec=codec)
        self.batches = []   # (base offset, last offset, position, time, is control)
        pos = 0
        for k, n in enumerate(sizes):
            ts = TS + base + k
            if k in controls:
                vs = [{"voterId": 1}]
                first = w.batch([control("LeaderChangeMessage", leaderId=1, voters=vs,
                                         grantingVoters=vs)] * n, control=True, codec=0,
                                timestamp=ts)
            else:
                first = w.batch([noop() for _ in range(n)], timestamp=ts)
            self.batches.append((first, w.next_offset - 1, pos, ts, k in controls))
            pos += len(w.parts[-1])
        self.path = directory / segment_name(base)
        self.path.write_bytes(w.getvalue())
        self.file = SegmentFile(self.path, base)

    def time_of(self, offset: int) -> int:
        return next(ts for first, last, _, ts, _ in self.batches if first <= offset <= last)

    def write_index(self, every: int = 1, *, zeros: int = 0, entries=None) -> None:
        """Kafka's ``.index``: (last offset - base, position) of every
        ``every``-th batch, then ``zeros`` pre-allocated zero entries."""
        base = self.batches[0][0]
        if entries is None:
            entries = [(last - base, pos) for _, last, pos, _, _ in self.batches[::every]]
        data = b"".join(struct.pack(">ii", rel, pos) for rel, pos in entries)
        self.path.with_suffix(".index").write_bytes(data + bytes(8 * zeros))


def times(*segments) -> SegmentAppendTimes:
    return SegmentAppendTimes([s.file for s in segments])


# --------------------------------------------------------------------------- where the offset is

def test_first_middle_and_last_batch_of_a_segment(tmp_path):
    seg = Segment(tmp_path, 100, [3, 1, 5, 2])
    t = times(seg)
    for offset in (100, 102, 103, 104, 106, 108, 109, 110):
        assert t.write_time(offset) == (seg.time_of(offset), None), offset


def test_offsets_across_segments(tmp_path):
    a = Segment(tmp_path, 0, [2, 2])
    b = Segment(tmp_path, 4, [3, 3])
    t = times(a, b)
    assert t.write_time(3) == (a.time_of(3), None)
    assert t.write_time(4) == (b.time_of(4), None)
    assert t.write_time(9) == (b.time_of(9), None)


def test_before_the_first_segment(tmp_path):
    seg = Segment(tmp_path, 500, [2])
    ms, why = times(seg).write_time(42)
    assert ms is None
    assert why == (f"offset 42 is before the first segment, {segment_name(500)}, which starts at "
                   "500; the segments holding it were deleted once a snapshot covered them")


def test_in_a_gap_between_segments(tmp_path):
    a = Segment(tmp_path, 0, [2, 2])       # 0-3
    b = Segment(tmp_path, 10, [2])         # 10-11: 4-9 are missing
    ms, why = times(a, b).write_time(6)
    assert ms is None
    assert why == f"no batch holds offset 6: the log goes on at offset 10 ({segment_name(10)})"


def test_past_the_end_of_the_log(tmp_path):
    seg = Segment(tmp_path, 0, [2, 2])
    assert times(seg).write_time(4) == (None, f"offset 4 is past the end of the log "
                                              f"({segment_name(0)})")


def test_no_segments():
    assert SegmentAppendTimes([]).write_time(7) == (None, NO_LOG)


def test_an_empty_segment(tmp_path):
    (tmp_path / segment_name(0)).write_bytes(b"")
    t = SegmentAppendTimes([SegmentFile(tmp_path / segment_name(0), 0)])
    assert t.write_time(0)[0] is None


@pytest.mark.parametrize("codec", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches(tmp_path, codec):
    seg = Segment(tmp_path, 0, [4, 7, 3], codec=codec)
    t = times(seg)
    for offset in (0, 3, 4, 10, 11, 13):
        assert t.write_time(offset) == (seg.time_of(offset), None), offset


# --------------------------------------------------------------------------- control batches

def test_a_control_batch_at_the_offset_gives_the_next_metadata_batch(tmp_path):
    # as in Kafka 3.2 logs: the epoch names the LeaderChange batch before the registration
    seg = Segment(tmp_path, 0, [1, 1, 2, 1], controls=(1, 2))
    t = times(seg)
    assert t.write_time(1) == (seg.time_of(4), None)
    assert t.write_time(3) == (seg.time_of(4), None)
    assert t.write_time(0) == (seg.time_of(0), None)


def test_a_control_batch_ending_a_segment_goes_on_into_the_next(tmp_path):
    a = Segment(tmp_path, 0, [1, 1], controls=(1,))
    b = Segment(tmp_path, 2, [1])
    assert times(a, b).write_time(1) == (b.time_of(2), None)


def test_a_control_batch_at_the_end_of_the_log(tmp_path):
    seg = Segment(tmp_path, 0, [1, 1], controls=(1,))
    assert times(seg).write_time(1) == (None, "the log ends after the control batch at offset 1")


def test_a_gap_after_a_control_batch(tmp_path):
    a = Segment(tmp_path, 0, [1, 1], controls=(1,))
    b = Segment(tmp_path, 5, [1])
    ms, why = times(a, b).write_time(1)
    assert ms is None and why.startswith("offsets 2-4 are missing after the control batch")


# --------------------------------------------------------------------------- the .index and marks

def garble_before(seg: Segment, position: int) -> None:
    """Overwrite the segment's bytes before ``position``: a walk from the
    start would now fail, so a right answer proves the walk started later."""
    data = bytearray(seg.path.read_bytes())
    data[:position] = b"\xff" * position
    seg.path.write_bytes(bytes(data))


def test_the_index_lets_the_walk_start_near_the_offset(tmp_path):
    seg = Segment(tmp_path, 1000, [2] * 200)
    seg.write_index(every=16, zeros=50)          # an active segment's pre-allocated index
    first, last, pos, _, _ = seg.batches[160]     # batch 160 is indexed
    garble_before(seg, pos)
    t = times(seg)
    assert t.write_time(last + 1) == (seg.time_of(last + 1), None)
    assert t.write_time(last + 20) == (seg.time_of(last + 20), None)
    # before the indexed batch the log is damaged: the answer says so
    ms, why = t.write_time(1001)
    assert ms is None and "damaged" in why and str(seg.path) in why


def test_an_index_that_disagrees_with_the_log_is_not_used(tmp_path):
    seg = Segment(tmp_path, 0, [2] * 50)
    # entries naming offsets the log has further on: the walk starts from 0
    seg.write_index(entries=[(0, 0), (10, seg.batches[40][2])])
    t = times(seg)
    for offset in (11, 12, 85, 99):
        assert t.write_time(offset) == (seg.time_of(offset), None), offset
    # an entry pointing past the end of the log, or inside a batch
    for wrong in (10 ** 6, seg.batches[5][2] + 3):
        seg.write_index(entries=[(0, 0), (30, wrong)])
        assert times(seg).write_time(31) == (seg.time_of(31), None)


def test_a_walk_leaves_marks_for_the_next_lookup(tmp_path):
    seg = Segment(tmp_path, 0, [50] * 300)       # over 2 * MARK_BYTES
    assert os.path.getsize(seg.path) > 2 * MARK_BYTES
    t = times(seg)
    late = seg.batches[-1][0]
    assert t.write_time(late) == (seg.time_of(late), None)
    mid = next(b for b in seg.batches if b[2] > MARK_BYTES + 1000)
    garble_before(seg, seg.batches[seg.batches.index(mid) - 1][2])
    # no index: only a mark left by the first walk lets this one start past the damage
    assert t.write_time(mid[1]) == (mid[3], None)


# --------------------------------------------------------------------------- damage

def test_a_damaged_batch_is_the_reason(tmp_path):
    seg = Segment(tmp_path, 0, [2, 2, 2])
    data = bytearray(seg.path.read_bytes())
    data[seg.batches[1][2] + 70] ^= 0xFF                      # a byte of batch 1's records
    seg.path.write_bytes(bytes(data))
    t = times(seg)
    ms, why = t.write_time(2)
    assert ms is None and "CRC-32C" in why and "byte " + str(seg.batches[1][2]) in why
    assert t.write_time(4) == (seg.time_of(4), None)          # the others still answer


def test_a_missing_segment_file_is_the_reason(tmp_path):
    seg = Segment(tmp_path, 0, [2])
    seg.path.unlink()
    ms, why = times(seg).write_time(1)
    assert ms is None and why == f"{seg.path}: cannot read it (No such file or directory)"


def test_nothing_is_written_in_the_directory(tmp_path):
    seg = Segment(tmp_path, 0, [2] * 30)
    seg.write_index(every=4)
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    t = times(seg)
    for offset in range(0, 60, 7):
        t.write_time(offset)
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == before
