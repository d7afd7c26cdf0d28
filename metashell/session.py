"""Opening a source: plan the files, read them, replay them, build the tree.

This is the one place that wires the layers together for the shell and the
CLI: ``loader.inputs`` decides what to read, ``loader.reader`` reads it,
``replay.engine`` applies it, ``fs.tree`` shows it. Damaged batches are
skipped with a warning so that one bad byte does not hide a whole cluster;
a file with nothing readable at all is an error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from . import __version__
from .errors import CorruptDataError, InputError, MetashellError
from .fs import paths
from .fs.entities import entity_records
from .fs.tree import build_root
from .gcpause import no_cyclic_gc
from .loader import inputs
from .loader.append_times import SegmentAppendTimes
from .loader.reader import FileReader
from .replay.describe import describe
from .replay.engine import ReplayEngine
from .replay.summary import summarize
from .timefmt import iso_time

PROGRESS_STEP = 1 << 20  # report progress every MiB


class ImageSession:
    """What the commands use of a session: the engine, its image and tree,
    the counts and the ``summary``/``changes`` answers. Shared by the file
    :class:`Session` and the live one (``metashell.live_session``)."""

    #: batch append times by offset (brokers' start times); None: no log to ask
    times = None

    def __init__(self, source: str, engine: ReplayEngine, warnings: list[str],
                 show_secrets: bool):
        self.source = source
        self.engine = engine
        self.warnings = warnings
        self.show_secrets = show_secrets

    @property
    def image(self):
        return self.engine.image

    def counts(self) -> dict:
        self.engine.settle()   # every pending partition change counted (replay/pending.py)
        return self.engine.record_counts()

    def new_problems(self, since: int) -> list[str]:
        """Problems found after ``since`` (lazy partitions are decoded on demand)."""
        return [str(p) for p in self.engine.problems[since:]]

    def summary(self) -> dict:
        return summarize(self.image, self.engine, self.times)

    def baseline(self, **which):
        """The image ``diff`` compares this one with, and the warnings its
        loading gave: see :func:`metashell.baseline.open_baseline`."""
        from .baseline import open_baseline   # it opens sessions itself
        return open_baseline(self, **which)

    def changes(self, path: str) -> list[dict]:
        """The records that created or changed the entity at ``path``."""
        records = entity_records(self.image, paths.split(path))
        if records is None:
            raise KeyError(path)
        return [{"offset": r.offset, "time": iso_time(r.timestamp), "type": r.name,
                 "summary": describe(r)} for r in records]


class Session(ImageSession):
    """A loaded source: the image, its tree and what loading had to say."""

    def __init__(self, source: str, plan, engine: ReplayEngine, warnings: list[str],
                 show_secrets: bool, times=None):
        super().__init__(source, engine, warnings, show_secrets)
        self.plan = plan
        # batch append times by offset (brokers' start times): the plan's segments,
        # those before the snapshot included, unless the caller has its own source
        self.times = times if times is not None else SegmentAppendTimes(plan.all_segments)
        self.root = build_root(self.image, show_secrets=show_secrets, local=self._local(),
                               times=self.times)

    def close(self) -> None:
        """Free the loaded cluster now (see :meth:`ReplayEngine.close`): for a
        program that loads many, such as a Spark worker. The session is not
        used again."""
        self.root = None
        self.engine.close()

    def _local(self) -> dict:
        plan = self.plan
        meta = plan.meta_properties or {}
        local = {
            "version": __version__,
            "source": self.source,
            "loaded": {
                "snapshot": plan.snapshot.path.name if plan.snapshot else None,
                "segments": [s.path.name for s in plan.segments],
            },
            "counts": self.counts,
        }
        if plan.kind in ("logdir", "partition-dir"):
            local["clusterId"] = meta.get("cluster.id")
            node = meta.get("node.id", meta.get("broker.id"))
            local["nodeId"] = int(node) if node is not None and str(node).lstrip("-").isdigit() else node
            if meta.get("directory.id"):
                local["directoryId"] = meta["directory.id"]
        return local


def open_session(path, *, until_offset: int | None = None, until_time: int | None = None,
                 show_secrets: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> Session:
    """Load ``path`` (file or directory) and return its :class:`Session`.
    Raises :class:`MetashellError` (one-line message) if nothing can be read."""
    with no_cyclic_gc():
        return _open(path, until_offset, until_time, show_secrets, progress)


def _open(path, until_offset, until_time, show_secrets, progress) -> Session:
    plan = inputs.plan(path, until_offset=until_offset)
    warnings: list[str] = list(plan.notes)
    if until_time is not None and plan.snapshot is not None and plan.kind in ("logdir", "partition-dir"):
        plan = _plan_for_time(plan, until_time, warnings)
    total = sum(_size(f) for f in plan.files) or 1
    loader = _Loader(total, progress)
    while True:
        engine = ReplayEngine(until_offset=until_offset, until_time=until_time)
        snap = plan.snapshot
        try:
            if snap is not None:
                _check_until(plan, snap, until_offset)
                loader.snapshot(engine, snap, warnings,
                                strict=plan.kind in ("logdir", "partition-dir"))
            break
        except CorruptDataError as e:
            if plan.kind not in ("logdir", "partition-dir"):
                raise
            older = [c for c in plan.snapshot_candidates if c.end_offset < (snap.end_offset or 0)]
            warnings.append(f"{e}; snapshot {snap.path.name} is unusable, "
                            + (f"falling back to {older[0].path.name}" if older else
                               "replaying the log from its start"))
            plan = plan.with_snapshot(older[0] if older else None)
            loader = _Loader(total, progress)
    for seg in plan.segments:
        if engine.reached_limit:
            break
        loader.segment(engine, seg.path, warnings)
    engine.finish()
    _find_leader(engine.image.quorum, plan, time_travel=until_offset is not None or until_time is not None)
    if plan.kind == "snapshot" and plan.snapshot is None and not plan.segments:
        raise InputError(path, "nothing to load")
    source = str(Path(path))
    return Session(source, plan, engine, warnings + [str(p) for p in engine.problems], show_secrets)


def _find_leader(q, plan, time_travel: bool) -> None:
    """The leader when the records replayed name none (the epoch began before
    the snapshot loaded): the LeaderChangeMessage that opened the epoch, in an
    older segment of the directory; else the node's own quorum-state file,
    which tells whom it last knew as leader: now, so when travelling in time
    only if that is still the epoch the replay reached."""
    if q.leader_id >= 0:
        return
    change = _leader_change_of_epoch(plan, q.leader_epoch)
    if change is not None:
        q.leader_id = change["leaderId"]
        if not q.voters:
            q.voters = {v["voterId"]: {} for v in change.get("voters", ())}
            q.voters_from = "LeaderChangeMessage"
        return
    _quorum_fallback(q, plan.quorum_state, time_travel)


def _quorum_fallback(q, state: "dict | None", time_travel: bool = False) -> None:
    """Without a LeaderChange record, a node's quorum-state (or a live
    quorum's answer) says whom it knows as leader now: when travelling in
    time, only if that is still the epoch the replay reached."""
    if not state or q.leader_id >= 0:
        return
    if time_travel and state.get("leaderEpoch") != q.leader_epoch:
        return
    q.leader_id = state.get("leaderId", -1)
    q.leader_epoch = max(q.leader_epoch, state.get("leaderEpoch", -1))
    if not q.voters and state.get("currentVoters"):
        q.voters = {v["voterId"]: {} for v in state["currentVoters"]}
        q.voters_from = "quorum-state"


# How many batches into an epoch its LeaderChangeMessage may come (3.4 writes
# bootstrap records before it; it is normally first).
LEADER_CHANGE_WITHIN = 64


def _leader_change_of_epoch(plan, epoch: int) -> "dict | None":
    """``epoch``'s LeaderChangeMessage, among the epoch's first batches (from
    the start offset ``leader-epoch-checkpoint`` gives), if a segment of the
    directory still holds it."""
    if epoch < 0 or plan.snapshot is None or not plan.all_segments:
        return None
    start = inputs.read_epoch_starts(plan.all_segments[0].path.parent).get(epoch)
    holders = [s for s in plan.all_segments if start is not None and s.base_offset <= start]
    if not holders:
        return None
    looked = 0
    try:
        for batch in FileReader(holders[-1].path, lazy=True):
            if batch.header.base_offset < start:
                continue
            looked += 1
            if batch.header.epoch != epoch or looked > LEADER_CHANGE_WITHIN:
                return None
            first = batch.records[0] if batch.is_control and batch.records else None
            if first is not None and first.name == "LeaderChangeMessage" and first.data is not None:
                return first.data
    except MetashellError:
        return None
    return None


def _check_until(plan, snap, until_offset) -> None:
    if until_offset is None or snap.end_offset is None or snap.bootstrap:
        return
    if plan.kind == "snapshot" and until_offset < snap.end_offset - 1:
        raise MetashellError(f"{snap.path}: --until-offset {until_offset} is before this snapshot's "
                             f"last offset {snap.end_offset - 1}; a snapshot loads whole (pass the "
                             "log directory to travel further back)")


def _plan_for_time(plan, until_time: int, warnings: list[str]):
    """For time travel in a directory: the newest snapshot whose last contained
    record was appended at or before ``until_time``."""
    for cand in plan.snapshot_candidates:
        ts = snapshot_timestamp(cand.path)
        if ts is not None and ts <= until_time:
            return plan if cand == plan.snapshot else plan.with_snapshot(cand)
    return plan.with_snapshot(None)


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


def _size(p: Path) -> int:
    try:
        return os.stat(p).st_size
    except OSError:
        return 0


class _Loader:
    """Reads files into an engine, reporting progress and damage."""

    def __init__(self, total: int, progress):
        self.total = total
        self.done = 0
        self.progress = progress
        self.next_report = 0

    def _batches(self, engine: ReplayEngine, path: Path, warnings: list[str], strict: bool = False,
                 lazy: bool = True, buf=None):
        # partition records are deferred to the engine's store; a snapshot's other
        # records are all applied, so they are decoded as they are read (one call
        # less each), a segment's lazily (the part a snapshot covers is skipped)
        reader = engine.store.open(path, skip_damage=True, lazy=lazy, buf=buf)
        read = 0
        progress = self.progress
        for batch in reader:
            read += 1
            if progress is not None:
                at = self.done + batch.header.end
                if at >= self.next_report:
                    progress(at, self.total)
                    self.next_report = at + PROGRESS_STEP
            yield batch
        summary = reader.summary
        if summary.problems and (read == 0 or strict):
            raise summary.problems[0]
        if read == 0 and summary.end_reason == "tail":
            raise CorruptDataError(path, 0, f"a record batch, found only {summary.size} bytes; "
                                            "this is not a KRaft metadata file")
        warnings.extend(str(p) + "; batch skipped" for p in summary.problems)
        warnings.extend(summary.notes())
        self.done += summary.size
        if progress is not None:
            progress(self.done, self.total)

    def snapshot(self, engine: ReplayEngine, snap, warnings: list[str], strict: bool) -> None:
        """Apply a snapshot; with ``strict`` any damage makes it unusable (the
        caller falls back to an older snapshot or to the log)."""
        engine.source = snap.path.name
        self.apply_snapshot(engine, snap.path, None if snap.bootstrap else snap.end_offset,
                            -1 if snap.epoch is None else snap.epoch, warnings, strict)

    def apply_snapshot(self, engine: ReplayEngine, path, end_offset: int | None, epoch: int,
                       warnings: list[str], strict: bool, buf=None) -> None:
        """Apply the snapshot in file ``path`` (or in ``buf``, which ``path``
        then only names): all state is replaced by what it holds."""
        engine.begin_snapshot(end_offset, None, epoch)
        for batch in self._batches(engine, path, warnings, strict, lazy=False, buf=buf):
            engine.apply_batch(batch)
        engine.end_snapshot()

    def segment(self, engine: ReplayEngine, path: Path, warnings: list[str]) -> None:
        engine.source = path.name
        for batch in self._batches(engine, path, warnings):
            if not engine.apply_batch(batch):
                break
