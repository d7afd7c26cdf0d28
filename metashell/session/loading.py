"""Reading files into a replay engine: progress reported as the bytes go
by, damage skipped and reported, a snapshot's completeness checked. Used
by the file session and by the live one (for the snapshots it fetches)."""

from __future__ import annotations

from pathlib import Path

from ..errors import CorruptDataError
from ..replay.engine import ReplayEngine
from .findings import Findings

PROGRESS_STEP = 1 << 20  # report progress every MiB


class Loader:
    """Reads files into an engine, reporting progress and damage.
    ``log_end`` is the end offset (exclusive) of the segments read, as far
    as they were read (None before any)."""

    def __init__(self, total: int, progress):
        self.total = total
        self.done = 0
        self.progress = progress
        self.next_report = 0
        self.log_end: int | None = None

    def _batches(self, engine: ReplayEngine, path: Path, strict: bool = False,
                 lazy: bool = True, buf=None):
        """The file's batches; afterwards ``self.read`` holds how many and
        ``self.ended`` the reader's :class:`FileSummary` (its damage skipped
        and how it ended), for the caller to report."""
        # partition records are deferred to the engine's store; a snapshot's other
        # records are all applied, so they are decoded as they are read (one call
        # less each), a segment's lazily (the part a snapshot covers is skipped)
        reader = engine.store.open(path, skip_damage=True, lazy=lazy, buf=buf)
        self.read, self.ended = 0, None
        progress = self.progress
        for batch in reader:
            self.read += 1
            if progress is not None:
                at = self.done + batch.header.end
                if at >= self.next_report:
                    progress(at, self.total)
                    self.next_report = at + PROGRESS_STEP
            yield batch
        summary = self.ended = reader.summary
        if summary.problems and (self.read == 0 or strict):
            raise summary.problems[0]
        if self.read == 0 and summary.end_reason == "tail":
            raise CorruptDataError(path, 0, f"a record batch, found only {summary.size} bytes; "
                                            "this is not a KRaft metadata file")
        self.done += summary.size
        if progress is not None:
            progress(self.done, self.total)

    def _report(self, findings: Findings, end_is_note: bool) -> None:
        """The damage skipped in the file just read (problems) and how it
        ended (a note only where ``end_is_note``: the newest segment)."""
        summary = self.ended
        if summary is None:   # left at the time-travel limit: its end was not read
            return
        findings.extend((str(p) + "; batch skipped" for p in summary.problems), problems=True)
        findings.extend(summary.notes(), problems=not end_is_note)

    def snapshot(self, engine: ReplayEngine, snap, findings: Findings, strict: bool) -> None:
        """Apply a snapshot; with ``strict`` any damage makes it unusable,
        and so does its end before its SnapshotFooterRecord (the caller falls
        back to an older snapshot or to the log). Without, an incomplete
        snapshot loads what it holds, with a warning."""
        engine.source = snap.path.name
        complete = self.apply_snapshot(engine, snap.path, None if snap.bootstrap else snap.end_offset,
                                       -1 if snap.epoch is None else snap.epoch, strict)
        if complete:
            self._report(findings, end_is_note=False)
            return
        missing = self._incomplete(snap.path)
        if strict:
            raise missing
        findings.extend((str(p) + "; batch skipped" for p in self.ended.problems), problems=True)
        findings.problem(f"{missing}; loaded what it holds")

    def _incomplete(self, path: Path) -> CorruptDataError:
        """The error of a snapshot read to its end without a footer."""
        summary = self.ended
        if summary.end_reason == "torn":
            how = (f"its last batch is cut after {summary.size - summary.end_position} bytes, "
                   "as a snapshot still being written is")
        elif self.read == 1:
            how = "it holds only its header batch"
        else:
            how = f"it ends after {self.read} batches"
        return CorruptDataError(path, summary.end_position,
                                f"incomplete snapshot: no SnapshotFooterRecord ({how}); Kafka "
                                "gives a snapshot its name only once it is whole")

    def apply_snapshot(self, engine: ReplayEngine, path, end_offset: int | None, epoch: int,
                       strict: bool, buf=None) -> bool:
        """Apply the snapshot in file ``path`` (or in ``buf``, which ``path``
        then only names): all state is replaced by what it holds. Returns
        whether it ended with its SnapshotFooterRecord (whole)."""
        engine.begin_snapshot(end_offset, None, epoch)
        footer = False
        written, epoch = -1, -1   # when and in which epoch its records were appended
        for batch in self._batches(engine, path, strict, lazy=False, buf=buf):
            if batch.is_control and not footer:
                footer = any(getattr(r, "name", None) == "SnapshotFooterRecord"
                             for r in batch.records)
            engine.apply_batch(batch)
            if not batch.is_control:
                written, epoch = max(written, batch.header.max_timestamp), batch.header.epoch
        engine.end_snapshot()
        image = engine.image
        image.snapshot_offset, image.snapshot_written = image.last_offset, written
        if engine.image.last_time < 0:
            engine.image.last_time = written
        if engine.image.data_time < 0:
            engine.image.data_time = engine.image.last_time
        if engine.image.last_epoch < 0:
            engine.image.last_epoch = epoch
        return footer

    def segment(self, engine: ReplayEngine, seg, findings: Findings, newest: bool) -> None:
        """Apply a log segment's batches (up to the time-travel limit); a
        torn end of the ``newest`` one is a note, not a problem."""
        engine.source = seg.path.name
        end = seg.base_offset if seg.base_offset is not None else -1
        for batch in self._batches(engine, seg.path):
            end = batch.header.last_offset + 1
            if not engine.apply_batch(batch):
                break
        if end >= 0:
            self.log_end = max(end, self.log_end or 0)
        self._report(findings, end_is_note=newest)
