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
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import CorruptDataError
from ..kraft.batch import CRC_START, HEADER_SIZE, BatchHeader, BatchScanner, crc32c
from .inputs import LoadPlan
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

    def __init__(self, path, window: LogWindow = _EVERYTHING, *, records: bool = True):
        self.reader = FileReader(path, skip_damage=True)
        self.path = self.reader.path
        self.window = window
        self.read_records = records
        self.notes: list[str] = []

    def __iter__(self) -> Iterator[LogBatch]:
        reader, window = self.reader, self.window
        buf = reader.buf
        view = memoryview(buf) if len(buf) else b""
        scanner = BatchScanner(buf, self.path, verify_crc=False, skip=True)
        problems = scanner.problems
        told = 0
        for h in scanner:
            while told < len(problems):          # damage found before this batch
                yield self._damaged(problems[told])
                told += 1
            if not window.holds_batch(h):
                if window.to_offset is not None and h.base_offset > window.to_offset:
                    break                            # offsets only grow within a file
                continue
            valid = crc32c(view[h.position + CRC_START:h.end]) == h.crc
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
        try:
            records = self.reader.records_of(h)
        except CorruptDataError as err:
            return LogBatch(self.path, h.position, h, True, [], err)
        if not self.window.everything:
            holds = self.window.holds
            records = [r for r in records if holds(r.offset, r.timestamp)]
        return LogBatch(self.path, h.position, h, True, records)

    def _header_bytes(self, h: BatchHeader) -> bytes:
        return bytes(self.reader.buf[h.position:h.position + HEADER_SIZE])

    def _damaged(self, err: CorruptDataError) -> LogBatch:
        return LogBatch(self.path, err.position, None, False, [], err)


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
